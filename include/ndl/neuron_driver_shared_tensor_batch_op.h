/*
 * nrt-rs: one operation of a batched tensor read or write
 * (nrt_tensor_read_batch / nrt_tensor_write_batch). The layout is shared
 * with the kernel driver, hence its place under ndl/.
 */
#ifndef NRT_RS_NDL_TENSOR_BATCH_OP_H
#define NRT_RS_NDL_TENSOR_BATCH_OP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 24 bytes: byte offset in the tensor, byte count, host buffer. */
typedef struct nrt_tensor_batch_op {
    uint64_t offset;
    uint64_t size;
    void *buffer;
} nrt_tensor_batch_op_t;

#ifdef __cplusplus
}
#endif

#endif
