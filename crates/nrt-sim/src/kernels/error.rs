//! Typed errors of the numerical kernels.
//!
//! Every kernel validates its operands before touching memory, so a malformed
//! instruction surfaces as one of these values (naming what was wrong and
//! what was expected) instead of a panic inside the simulated engine.

use thiserror::Error;

/// Why a kernel refused its operands.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum KernelError {
    /// Two operands (or an operand and its destination) disagree on shape.
    #[error("shape mismatch in {op}: expected {expected}, got {got}")]
    ShapeMismatch {
        /// The kernel or operand that noticed the mismatch.
        op: &'static str,
        /// The shape that was required, e.g. `128x64`.
        expected: String,
        /// The shape that was supplied.
        got: String,
    },
    /// An access pattern reaches outside the memory it addresses.
    #[error("access pattern out of bounds: {detail}")]
    OutOfBounds {
        /// Which bound was crossed, with the offending numbers.
        detail: String,
    },
    /// An access pattern is malformed (too many axes, zero element size...).
    #[error("invalid access pattern: {detail}")]
    InvalidPattern {
        /// What is wrong with the pattern.
        detail: String,
    },
    /// A buffer passed to a kernel is too small for the shape it claims.
    #[error("buffer too small for {what}: need {needed} elements, have {have}")]
    BufferTooSmall {
        /// The buffer's role.
        what: &'static str,
        /// Elements the shape needs.
        needed: usize,
        /// Elements actually present.
        have: usize,
    },
    /// A memory region's size is not a whole number of partitions.
    #[error("memory of {len} bytes is not a whole number of {partition_bytes}-byte partitions")]
    RaggedMemory {
        /// Total byte length of the region.
        len: usize,
        /// Bytes per partition the caller declared.
        partition_bytes: usize,
    },
    /// The element conversion at the gather/scatter boundary failed.
    #[error("dtype conversion failed: {0}")]
    Convert(#[from] nrt_isa::dtype::ConvertError),
    /// A dtype the kernels cannot convert (e.g. the 0 "invalid" code).
    #[error("unsupported dtype {dtype} for {op}")]
    UnsupportedDtype {
        /// The offending dtype, printed by name.
        dtype: String,
        /// What was being attempted.
        op: &'static str,
    },
}

/// Shorthand used by every kernel module.
pub type KernelResult<T> = Result<T, KernelError>;

/// Formats a `rows x cols` shape for error messages.
pub(crate) fn shape(rows: usize, cols: usize) -> String {
    format!("{rows}x{cols}")
}
