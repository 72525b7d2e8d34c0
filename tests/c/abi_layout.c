/* Compile-time check of every public struct's size and field offsets
 * (x86-64 / LP64 values), plus enum values clients hard-code. */
#include <stddef.h>
#include <stdio.h>
#include "nrt/nrt.h"
#include "nrt/nrt_status.h"
#include "nrt/nrt_version.h"
#include "nrt/nrt_experimental.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_profile.h"
#include "nrt/nrt_sys_trace.h"
#include "nrt/ndebug_stream.h"
#include "ndl/neuron_driver_shared_tensor_batch_op.h"

_Static_assert(sizeof(nrt_instance_info_t) == 32, "nrt_instance_info_t size");
_Static_assert(_Alignof(nrt_instance_info_t) == 4, "nrt_instance_info_t align");
_Static_assert(offsetof(nrt_instance_info_t, family) == 0, "family");
_Static_assert(offsetof(nrt_instance_info_t, size) == 4, "size");
_Static_assert(offsetof(nrt_instance_info_t, arch_name) == 8, "arch_name");
_Static_assert(offsetof(nrt_instance_info_t, device_revision) == 24, "device_revision");

/* ndebug_stream.h: the 2.28 event layouts (64-byte header, 1024-byte fixed payload). */
_Static_assert(sizeof(ndebug_stream_event_header_t) == 64, "event header size");
_Static_assert(offsetof(ndebug_stream_event_header_t, type) == 8, "event type");
_Static_assert(sizeof(ndebug_stream_payload_debug_tensor_read_t) == 1024, "tensor read payload size");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, logical_nc_id) == 512, "logical_nc_id");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, pipe) == 516, "pipe");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_dtype) == 520, "tensor_dtype");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_shape) == 536, "tensor_shape");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_data_size) == 600, "tensor_data_size");
_Static_assert(offsetof(ndebug_stream_payload_debug_tensor_read_t, tensor_data) == 1024, "tensor_data");

_Static_assert(sizeof(nrt_tensor_batch_op_t) == 24, "nrt_tensor_batch_op_t size");
_Static_assert(offsetof(nrt_tensor_batch_op_t, offset) == 0, "op offset");
_Static_assert(offsetof(nrt_tensor_batch_op_t, size) == 8, "op size");
_Static_assert(offsetof(nrt_tensor_batch_op_t, buffer) == 16, "op buffer");

_Static_assert(sizeof(nrt_tensor_batch_t) == 24, "nrt_tensor_batch_t size");
_Static_assert(offsetof(nrt_tensor_batch_t, tensor) == 0, "batch tensor");
_Static_assert(offsetof(nrt_tensor_batch_t, ops) == 8, "batch ops");
_Static_assert(offsetof(nrt_tensor_batch_t, num_ops) == 16, "batch num_ops");

_Static_assert(sizeof(nrt_tensor_device_allocation_info_t) == 24, "alloc info size");
_Static_assert(offsetof(nrt_tensor_device_allocation_info_t, physical_address) == 0, "physical_address");
_Static_assert(offsetof(nrt_tensor_device_allocation_info_t, size) == 8, "alloc size");
_Static_assert(offsetof(nrt_tensor_device_allocation_info_t, hbm_index) == 16, "hbm_index");

_Static_assert(sizeof(nrt_vnc_memory_stats_t) == 16, "vnc stats size");
_Static_assert(offsetof(nrt_vnc_memory_stats_t, bytes_used) == 0, "bytes_used");
_Static_assert(offsetof(nrt_vnc_memory_stats_t, bytes_limit) == 8, "bytes_limit");

_Static_assert(sizeof(nrt_cc_comm_t) == 32, "nrt_cc_comm_t size");
_Static_assert(offsetof(nrt_cc_comm_t, replica_group) == 0, "replica_group");
_Static_assert(offsetof(nrt_cc_comm_t, rank) == 8, "rank");
_Static_assert(offsetof(nrt_cc_comm_t, rank_n) == 12, "rank_n");
_Static_assert(offsetof(nrt_cc_comm_t, ctx_device_id) == 16, "ctx_device_id");
_Static_assert(offsetof(nrt_cc_comm_t, ctx_device_count) == 20, "ctx_device_count");
_Static_assert(offsetof(nrt_cc_comm_t, vnc) == 24, "cc vnc");

_Static_assert(sizeof(nrt_tensor_list_t) == 16, "nrt_tensor_list_t size");
_Static_assert(offsetof(nrt_tensor_list_t, tensors) == 0, "tensors");
_Static_assert(offsetof(nrt_tensor_list_t, num_tensors) == 8, "num_tensors");

_Static_assert(sizeof(nrt_tensor_info_t) == 296, "nrt_tensor_info_t size");
_Static_assert(offsetof(nrt_tensor_info_t, name) == 0, "info name");
_Static_assert(offsetof(nrt_tensor_info_t, usage) == 256, "info usage");
_Static_assert(offsetof(nrt_tensor_info_t, size) == 264, "info size");
_Static_assert(offsetof(nrt_tensor_info_t, dtype) == 272, "info dtype");
_Static_assert(offsetof(nrt_tensor_info_t, shape) == 280, "info shape");
_Static_assert(offsetof(nrt_tensor_info_t, ndim) == 288, "info ndim");

_Static_assert(sizeof(nrt_tensor_info_array_t) == 8, "info array header");
_Static_assert(offsetof(nrt_tensor_info_array_t, tensor_count) == 0, "tensor_count");
_Static_assert(offsetof(nrt_tensor_info_array_t, tensor_array) == 8, "tensor_array");

_Static_assert(sizeof(nrt_ucode_img) == 16, "nrt_ucode_img size");
_Static_assert(offsetof(nrt_ucode_img, bin) == 0, "bin");
_Static_assert(offsetof(nrt_ucode_img, size) == 8, "img size");
_Static_assert(sizeof(nrt_ucode_info) == 32, "nrt_ucode_info size");
_Static_assert(offsetof(nrt_ucode_info, iram) == 0, "iram");
_Static_assert(offsetof(nrt_ucode_info, dram) == 16, "dram");

_Static_assert(sizeof(nrt_model_info_t) == 4, "nrt_model_info_t size");
_Static_assert(offsetof(nrt_model_info_t, vnc) == 0, "model vnc");

_Static_assert(sizeof(nrt_version_t) == 224, "nrt_version_t size");
_Static_assert(offsetof(nrt_version_t, rt_major) == 0, "rt_major");
_Static_assert(offsetof(nrt_version_t, rt_minor) == 8, "rt_minor");
_Static_assert(offsetof(nrt_version_t, rt_patch) == 16, "rt_patch");
_Static_assert(offsetof(nrt_version_t, rt_maintenance) == 24, "rt_maintenance");
_Static_assert(offsetof(nrt_version_t, rt_detail) == 32, "rt_detail");
_Static_assert(offsetof(nrt_version_t, git_hash) == 160, "git_hash");

_Static_assert(sizeof(NRT_STATUS) == 4, "NRT_STATUS is an int enum");
_Static_assert(NRT_EXEC_BAD_INPUT == 1002 && NRT_CLOSED == 14 && NRT_NETWORK_PROXY_FAILURE == 1206, "status values");
_Static_assert(NRT_DTYPE_FLOAT32 == 0xA && NRT_DTYPE_BFLOAT16 == 0x6 && NRT_DTYPE_FP8_E5 == 0xF, "dtype values");
_Static_assert(NRT_INSTANCE_TRN2 == 5 && NRT_INSTANCE_SIZE_UNKNOWN == 9, "instance values");
_Static_assert(NRT_TENSOR_PLACEMENT_VIRTUAL == 2 && NRT_FRAMEWORK_TYPE_PRECHECK == 5, "placement / framework");
_Static_assert(NRTA_SEQ_NUM_MAX == 0xFFFFFFFFFFFFull, "seq max");

int main(void) {
    printf("abi_layout: every struct size and offset matches\n");
    return 0;
}
