/*
 * nrt-rs: nec.h, the runtime side of Neuron Elastic Collectives: what the
 * collectives library (aws-neuronx-collectives) asks libnrt about devices
 * and links, the semaphore doorbells its proxy thread rings, and the sizes
 * of collectives whose message sizes are known only at execution time.
 *
 * The 17 functions of the SDK 2.28 header with their signatures. The
 * vendor header also carries the collectives library's shared structures
 * (enc_comm, enc_channel, net_ops_info_t, ...) and does not compile (it
 * defines nec_pod_type three times); this one declares only what the
 * functions take. What each does on nrt-rs is in docs/collectives.md
 * ("nec.h"). Functions returning int give -1 on bad arguments, those
 * returning size_t give 0, NRT_STATUS ones the documented status.
 */
#ifndef NRT_RS_NEC_H
#define NRT_RS_NEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NEC_NET_MLA_DEV -1
#define NEC_POD_MLA_DEV -2
#define NEC_UNKNOWN_MLA_DEV -3

typedef uint64_t dma_addr_t;

typedef enum nec_pod_type {
    NEC_POD_TYPE_NONE,
    NEC_POD_TYPE_P2P,
    NEC_POD_TYPE_SWITCH,
    NEC_POD_TYPE_INVALID
} nec_pod_type_t;

/* Host memory the runtime shares with the proxy thread. For the dynamic
 * size helpers `va` holds 4 * rank_n little-endian uint64_t element counts
 * in four rows of rank_n: sent to each rank, send offsets, receive
 * offsets, received from each rank (nrt-rs's layout; libnrt's is not
 * published); `size` is its byte size. */
typedef struct enc_host_mem {
    void *mem_handle;
    void *va;
    dma_addr_t pa;
    size_t size;
} enc_host_mem_t;

/* Adds `val` to the semaphore whose increment register is at
 * `sem_inc_addr` (a plain store of `val` to any other address). */
void nec_inc_semaphore(volatile uint32_t *sem_inc_addr, uint32_t val);

size_t nec_get_dynamic_send_size_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int dst_rank, int rank_n);
size_t nec_get_dynamic_send_offset_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int dst_rank, int rank_n);
size_t nec_get_dynamic_recv_offset_bytes(enc_host_mem_t *dyn_input, size_t data_type_sz, int src_rank, int rank_n);
void nec_set_recv_size_bytes(enc_host_mem_t *dyn_input, size_t recv_size_bytes, size_t data_type_sz, int src_rank, int rank_n);

/* The instance's device count; the first min(count, array_size) host
 * device ids go to available_devices_array (may be NULL with size 0). */
int nec_get_device_count(int *available_devices_array, uint32_t array_size);
/* Device `neuron_dev`'s PCI address; 0 on success, -1 otherwise. */
int nec_get_device_pci_bdf(int neuron_dev, uint32_t *domain, uint32_t *bus_num, uint8_t *pci_slot, uint8_t *dev_func);

/* Physical cores per logical core (the LNC size). */
NRT_STATUS nec_get_virtual_core_size(uint32_t *virtual_core_size);

typedef struct nec_version_info {
    uint64_t major;
    uint64_t minor;
    uint64_t patch;
    uint64_t maintenance;
    char git_hash[16];
    uint64_t compatibility_version;
    uint8_t future_fields[];
} nec_version_info_t;

NRT_STATUS nec_get_version_info(nec_version_info_t *version_info);

/* MLA indexes number the instance's devices for the collectives library
 * (the identity until this call maps mla_indexes[i] to host_device_ids[i]
 * for device local_nec_dev_id). */
NRT_STATUS nec_build_port_and_rid_map(int local_nec_dev_id, int *mla_indexes, int *host_device_ids, int count);
bool nec_is_mla_available(int local_nec_dev_id, int mla_idx);
/* The routing id of an MLA index; -1 when it names no device. */
int nec_mla_idx_to_rid(int local_nec_dev_id, int mla_idx);
/* The MLA index of a routing id; NEC_UNKNOWN_MLA_DEV when none. */
int nec_rid_to_mla_idx(int local_nec_dev_id, int rid);
/* The MLA index at the other end of link `port` of `mla_idx`;
 * NEC_UNKNOWN_MLA_DEV when there is none. */
int nec_get_peer_mla_idx(int local_nec_dev_id, int mla_idx, int port);

/* Pods: the simulated instance is one node outside any pod. */
int nec_get_p2p_pod_peer_node(uint32_t nec_dev_id, int node, uint32_t port_distance, int *peer_node);
NRT_STATUS nec_pod_node_can_access_peer_node(nec_pod_type_t pod_type, uint32_t local_rid, uint32_t local_node_id,
                                             uint32_t remote_rid, uint32_t remote_node_id, int *can_access_peer);

/* Writes `size` bytes of `str` (up to a NUL) to the driver's log; on
 * nrt-rs the runtime log at INFO, `action` named with it. */
void nec_ndl_printk(char *str, uint32_t size, uint32_t action);

#ifdef __cplusplus
}
#endif

#endif
