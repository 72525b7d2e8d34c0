/*
 * nrt-rs: the debug stream. Per logical core, the tiles a model's
 * DEBUG_TENSOR_READ records (NKI's device_print) copied off the device,
 * read one event at a time by at most one client per core. The
 * descriptor a connection returns may be polled (readable while an event
 * waits); everything else goes through these calls. Events exist only
 * after a client connects; past NEURON_RT_DEBUG_STREAM_BUFFER_SIZE unread
 * events (default 65536) new ones are dropped and counted. The caller
 * frees each payload with free(). Layouts as libnrt 2.28 publishes them;
 * see docs/c-api.md, "The debug stream".
 */
#ifndef NRT_RS_NDEBUG_STREAM_H
#define NRT_RS_NDEBUG_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ndebug_stream_event_type {
    NDEBUG_STREAM_EVENT_TYPE_INVALID = 0,
    NDEBUG_STREAM_EVENT_TYPE_DEBUG_TENSOR_READ = 1,
} ndebug_stream_event_type_t;

/* 64 bytes: the payload's size and type. */
typedef struct ndebug_stream_event_header {
    uint64_t data_size;
    uint32_t type;
    char reserved[52];
} ndebug_stream_event_header_t;

/* 1024 bytes, then tensor_data_size bytes of tensor data. */
typedef struct ndebug_stream_payload_debug_tensor_read {
    char prefix[512];
    uint32_t logical_nc_id;
    uint32_t pipe;
    char tensor_dtype[16];
    uint64_t tensor_shape[8];
    uint64_t tensor_data_size;
    char reserved0[416];
    char tensor_data[];
} ndebug_stream_payload_debug_tensor_read_t;

/* Connects to logical core logical_nc_idx's stream; *stream_fd gets a
 * pollable descriptor. NRT_INVALID for a core that is not visible or
 * already has a client. */
NRT_STATUS nrt_debug_client_connect(int logical_nc_idx, int *stream_fd);

/* Ends a connection; its descriptor is closed. */
void nrt_debug_client_connect_close(int stream_fd);

/* The oldest waiting event: *header, and a malloc'd *payload the caller
 * frees. NRT_QUEUE_EMPTY when none waits. */
NRT_STATUS nrt_debug_client_read_one_event(int stream_fd, ndebug_stream_event_header_t *header, void **payload);

#ifdef __cplusplus
}
#endif

#endif
