//! GPSIMD custom-op layouts shared by the runtime and the simulated Q7
//! cluster (`docs/gpsimd.md`): the library image (UCPL header, WebAssembly
//! code segment, `kernel_info_table`), the 576-byte argument block, the
//! library-set rows, the stdio rings, the cluster CSRs and the exception
//! causes. Every decoder of device bytes returns a typed error.

pub mod args;
pub mod csr;
pub mod exception;
pub mod image;
pub mod libset;
pub mod stdio;

pub use args::{ARG_BLOCK_BYTES, ARG_DST, ARG_TENSOR_BYTES, ArgBlock, ArgKind, ArgLocation, ArgTensor, ArgsError, MAX_ARGS, isa_dtype};
pub use exception::GpsimdCause;
pub use image::{EXTENDED_INST_OPCODE, ImageError, KernelRow, LibraryImage, UCPL_HEADER_BYTES, UcplHeader, stock_library};
pub use libset::{LIBSET_ROW_BYTES, LibSetError, LibSetRow, MAX_LIBSET_ROWS};
pub use stdio::{STDIO_ENTRY_BYTES, STDIO_TABLE_BYTES, STDIO_TEXT_BYTES, StdioEntryHeader, StdioQueueDesc};
