/*
 * nrt-rs: the explicit asynchronous API (nrta_*, symbol version NRT_3.0.0)
 * as libnrt 2.29+ clients call it: each schedule call takes an NRT_STATUS
 * pointer that is written when the request completes (before the sequence
 * counts as completed), the tensor read / write take the logical core
 * whose DMA engines move the bytes, and completions are observed through
 * eventfds registered per sequence or per execution unit.
 * Schedule calls return NRT_QUEUE_FULL when the execution unit's queue is
 * full (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS, default 8, at most 63)
 * and NRT_EXEC_UNIT_UNRECOVERABLE after a fatal fault on that unit; they
 * accept device tensors only. nrta_cc_* run collectives between the
 * logical cores of this process (see docs/collectives.md).
 */
#ifndef NRT_RS_NRT_ASYNC_H
#define NRT_RS_NRT_ASYNC_H

#include "nrt/nrt.h"
#include "nrt/nrt_experimental.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NRTA_XU_TENSOR_OP = 0,
    NRTA_XU_COMPUTE,
    NRTA_XU_COLLECTIVES,
    NRTA_XU_TYPE_NUM
} nrta_xu_t;

/* Top 16 bits: execution-unit id; low 48 bits: ordered sequence number. */
typedef uint64_t nrta_seq_t;
typedef uint16_t nrta_xu_id_t;

#define NRTA_SEQ_NUM_MAX ((1ull << 48) - 1)
#define NRTA_SEQ_NUM_MASK NRTA_SEQ_NUM_MAX
#define NRTA_SEQ_GET_SEQ_NUM(s) ((s) & NRTA_SEQ_NUM_MASK)
#define NRTA_SEQ_GET_XU_ID(s) ((s) >> 48)

typedef enum {
    NRT_OP_ADD = 0x0,
    NRT_OP_FMA = 0x1,
    NRT_OP_MAX = 0x2,
    NRT_OP_MIN = 0x3,
    NRT_OP_INVALID = 0xF,
} nrt_op_type_t;

typedef enum {
    NRT_CC_ALLGATHER = 0,
    NRT_CC_ALLREDUCE = 1,
    NRT_CC_REDUCESCATTER = 2,
} nrt_cc_op_type_t;

typedef struct nrt_cc_comm {
    uint32_t *replica_group;
    uint32_t rank;
    uint32_t rank_n;
    uint32_t ctx_device_id;
    uint32_t ctx_device_count;
    uint32_t vnc;
} nrt_cc_comm_t;

typedef struct nrt_tensor_list {
    nrt_tensor_t **tensors;
    size_t num_tensors;
} nrt_tensor_list_t;

typedef struct nrt_cc_context nrt_cc_context_t;

/* libnrt 2.29+: `lnc_idx` names the logical core whose DMA queues move the
 * bytes and whose TENSOR_OP unit (`queue` 0 or 1) runs the request; any
 * visible logical core of the tensor's device may (pass
 * nrt_tensor_get_lnc_index's for the tensor's own). Another device's core
 * or an index outside the visible cores is NRT_INVALID. This breaks
 * source compatibility with the seven-argument form of earlier headers. */
NRT_STATUS nrta_tensor_write(nrt_tensor_t *tensor, const void *buf, uint64_t offset, uint64_t size, int lnc_idx,
                             int queue, NRT_STATUS *ret, nrta_seq_t *req_sequence);
NRT_STATUS nrta_tensor_read(void *buf, nrt_tensor_t *tensor, uint64_t offset, uint64_t size, int lnc_idx, int queue,
                            NRT_STATUS *ret, nrta_seq_t *req_sequence);
/* No lnc_idx: the documented form (no source shows one here); both tensors
 * on one logical core, which runs the copy. */
NRT_STATUS nrta_tensor_copy(nrt_tensor_t *src, uint64_t src_offset, nrt_tensor_t *dst, uint64_t dst_offset,
                            uint64_t size, int queue, NRT_STATUS *ret, nrta_seq_t *req_sequence);
NRT_STATUS nrta_execute_schedule(nrt_model_t *model, const nrt_tensor_set_t *input, nrt_tensor_set_t *output,
                                 int queue, NRT_STATUS *ret, nrta_seq_t *req_sequence);
NRT_STATUS nrta_cc_prepare(nrt_cc_comm_t *comm, nrt_tensor_list_t *input, nrt_tensor_list_t *output,
                           nrt_dtype_t dtype, nrt_op_type_t op, nrt_cc_op_type_t cc_op, nrt_cc_context_t **cc_ctx);
NRT_STATUS nrta_cc_schedule(nrt_cc_context_t **cc_ctx, int queue, NRT_STATUS *ret, nrta_seq_t *req_sequence);
NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool *is_completed);
NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t *seq);
/* Adds 1 to the caller's eventfd `efd` when `seq` completes (at once if it
 * already has). The runtime keeps its own duplicate of the descriptor. */
NRT_STATUS nrta_event_register_seq_id_completion(nrta_seq_t seq, int efd);
/* Adds 1 to the caller's eventfd `efd` on every later completion of the
 * execution unit (lnc, xu, queue). */
NRT_STATUS nrta_event_register_xu_completion(int lnc, nrta_xu_t xu, int queue, int efd);

#ifdef __cplusplus
}
#endif

#endif
