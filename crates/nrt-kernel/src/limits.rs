//! Limits of the custom-op programming model (`neuron-facts` §6).

/// Positional arguments a kernel can take.
pub const MAX_ARGS: usize = 10;
/// Dimensions of a tensor.
pub const MAX_RANK: usize = 8;
/// Largest dimension of an 8-D (inline u16) shape.
pub const MAX_DIM_8D: u32 = 65535;
/// Dimensions of a 4-D (inline u32) shape.
pub const MAX_RANK_4D: usize = 4;
/// Largest dimension of a 4-D shape.
pub const MAX_DIM_4D: u32 = u32::MAX;
/// Bytes of the user TCM pool (shared with the stream accessors).
pub const TCM_POOL_BYTES: usize = 16 * 1024;
/// TCM bytes one stream accessor buffers.
pub const STREAM_BUFFER_BYTES: usize = 4096;
/// Kernels one library may declare (libnrt's limit is 0x8000 entries;
/// the public docs allow 10 functions per library).
pub const MAX_FUNCS: usize = 10;
/// Argument index of the destination tensor in the tensor imports.
pub const ARG_DST: u32 = 10;
/// Bytes of the device's argument block.
pub const ARG_BLOCK_BYTES: usize = 576;
