//! Kernel failures; each becomes the entry's nonzero status, which the
//! device reports as a KERNEL_STATUS GPSIMD exception.

use core::fmt;

/// Why a kernel gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelError {
    /// `customop_next_*` past the last argument.
    NoMoreArgs,
    /// The argument is a scalar where a tensor was pulled, or the reverse.
    WrongKind,
    /// The tensor's dtype is not the element type asked for.
    DtypeMismatch,
    /// An element range outside the tensor.
    OutOfRange,
    /// The op has no destination tensor.
    NoDst,
    /// The TCM pool cannot hold the request.
    TcmExhausted,
    /// The argument block the device handed over is malformed.
    BadArgs,
    /// Shapes that do not fit together.
    ShapeMismatch,
}

impl KernelError {
    /// The entry status (1..).
    pub fn code(self) -> i32 {
        match self {
            KernelError::NoMoreArgs => 1,
            KernelError::WrongKind => 2,
            KernelError::DtypeMismatch => 3,
            KernelError::OutOfRange => 4,
            KernelError::NoDst => 5,
            KernelError::TcmExhausted => 6,
            KernelError::BadArgs => 7,
            KernelError::ShapeMismatch => 8,
        }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            KernelError::NoMoreArgs => "no more arguments",
            KernelError::WrongKind => "argument kind differs from the accessor",
            KernelError::DtypeMismatch => "tensor dtype differs from the element type",
            KernelError::OutOfRange => "element range outside the tensor",
            KernelError::NoDst => "the op has no destination tensor",
            KernelError::TcmExhausted => "TCM pool exhausted",
            KernelError::BadArgs => "malformed argument block",
            KernelError::ShapeMismatch => "tensor shapes do not match",
        };
        f.write_str(s)
    }
}
