/* nrt-rs: asynchronous point-to-point tensor transfers between logical
 * neuron cores (LNCs) of this host and of other hosts.
 *
 * Experimental, as in libnrt: nrt_async_sendrecv_init() needs
 * NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED=1 and
 * NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT=<port> (the port of the per-host
 * rendezvous store). Bytes move over libfabric (FI_PROVIDER, default tcp);
 * waits are bounded by NEURON_RT_CC_BOOTSTRAP_TIMEOUT (connecting) and
 * NEURON_RT_CC_NET_TIMEOUT (a transfer), see docs/collectives.md.
 *
 * Usage: init each LNC; the sender calls connect(), the receiver accept(),
 * both poll test_comm() until *done; then send_tensor()/recv_tensor() post
 * transfers that test_request() polls; flush() before reading received
 * bytes through another path; close each LNC before nrt_close(). */
#ifndef NRT_RS_NRT_ASYNC_SENDRECV_H
#define NRT_RS_NRT_ASYNC_SENDRECV_H

#include <stdbool.h>
#include <stddef.h>
#include "nrt/nrt.h"
#include "nrt/nrt_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A connection from one LNC to another, in one direction. */
typedef struct nrt_async_sendrecv_comm nrt_async_sendrecv_comm_t;
/* One posted transfer. */
typedef struct nrt_async_sendrecv_request nrt_async_sendrecv_request_t;

/* Communicators one LNC may hold (connect plus accept); beyond it
 * connect/accept return NRT_RESOURCE. */
NRT_STATUS nrt_async_sendrecv_get_max_num_communicators_per_lnc(int *num);

/* Transfers one communicator may have in flight; beyond it
 * send_tensor/recv_tensor return NRT_RESOURCE. */
NRT_STATUS nrt_async_sendrecv_get_max_num_pending_request(int *num);

/* Brings up send/recv on LNC `lnc` (the host-wide LNC id, 0-127). Only
 * while the runtime is initialised; fails when the previous close of that
 * LNC failed. */
NRT_STATUS nrt_async_sendrecv_init(int lnc);

/* Ends every communicator and request of `lnc`. Fails (NRT_FAILURE) when a
 * communicator was not connected yet or a request was still in flight;
 * the LNC is torn down anyway and refuses a later init. */
NRT_STATUS nrt_async_sendrecv_close(int lnc);

/* A send communicator from `lnc` to LNC `peer_lnc` of the host at
 * `peer_ip` (an IPv4 or IPv6 literal). Returns at once; poll test_comm.
 * Thread-safe. NRT_RESOURCE over the communicator limit. */
NRT_STATUS nrt_async_sendrecv_connect(const char *peer_ip, int peer_lnc, int lnc,
                                      nrt_async_sendrecv_comm_t **send_comm);

/* The receive communicator on `lnc` for sender LNC `peer_lnc` of the host
 * at `peer_ip`. Returns at once; poll test_comm. Thread-safe. */
NRT_STATUS nrt_async_sendrecv_accept(const char *peer_ip, int peer_lnc, int lnc,
                                     nrt_async_sendrecv_comm_t **recv_comm);

/* *done = whether the communicator is connected. NRT_TIMEOUT when it did
 * not connect within the bound, NRT_INVALID_HANDLE for a handle that is
 * not a live communicator. */
NRT_STATUS nrt_async_sendrecv_test_comm(nrt_async_sendrecv_comm_t *comm, bool *done);

/* Posts a send of `length` bytes of `tensor` at `offset` (non-blocking,
 * thread-safe). NRT_INVALID_HANDLE before the communicator is connected,
 * NRT_RESOURCE over the pending-request limit, NRT_FAILURE for a transfer
 * outside the tensor or on a receive communicator. */
NRT_STATUS nrt_async_sendrecv_send_tensor(nrt_tensor_t *tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t *send_comm,
                                          nrt_async_sendrecv_request_t **request);

/* Posts a receive of at most `length` bytes into `tensor` at `offset`
 * (non-blocking, thread-safe); statuses as send_tensor. */
NRT_STATUS nrt_async_sendrecv_recv_tensor(nrt_tensor_t *tensor, size_t offset, size_t length,
                                          nrt_async_sendrecv_comm_t *recv_comm,
                                          nrt_async_sendrecv_request_t **request);

/* *done = whether the transfer finished; then *size is the bytes moved and
 * the request handle is gone (do not test it again). Thread-safe across
 * different requests. NRT_TIMEOUT past the transfer bound, NRT_FAILURE
 * when the transfer failed (a peer that went away), NRT_INVALID_HANDLE for
 * a request not in use. */
NRT_STATUS nrt_async_sendrecv_test_request(nrt_async_sendrecv_request_t *request, bool *done,
                                           size_t *size);

/* Makes the bytes of receives already tested done on `lnc` visible to
 * every other reader of that memory. */
NRT_STATUS nrt_async_sendrecv_flush(int lnc);

#ifdef __cplusplus
}
#endif

#endif
