/*
 * nrt-rs: runtime version query (size-versioned struct).
 */
#ifndef NRT_RS_NRT_VERSION_H
#define NRT_RS_NRT_VERSION_H

#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RT_VERSION_DETAIL_LEN 128
#define GIT_HASH_LEN 64

/* The libnrt release whose API nrt-rs implements (libnrt 2.32, Neuron SDK
 * 2.30: the 2.28 headers with the 2.29+ async form; docs/c-api.md lists
 * what has no published signature): nrt_get_version reports it in
 * rt_major / rt_minor, so clients that gate features on the runtime
 * version see that release; rt_detail names nrt-rs's own version
 * ("nrt-rs X.Y.Z.0 (libnrt 2.32 API)"). */
#define NRT_RS_LIBNRT_MAJOR 2
#define NRT_RS_LIBNRT_MINOR 32

typedef struct nrt_version {
    uint64_t rt_major;
    uint64_t rt_minor;
    uint64_t rt_patch;
    uint64_t rt_maintenance;
    char rt_detail[RT_VERSION_DETAIL_LEN];
    char git_hash[GIT_HASH_LEN];
} nrt_version_t;

/* Fills the first `size` bytes of *ver; callable before nrt_init. */
NRT_STATUS nrt_get_version(nrt_version_t *ver, size_t size);

#ifdef __cplusplus
}
#endif

#endif
