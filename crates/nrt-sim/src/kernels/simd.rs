//! Run-time SIMD dispatch for the elementwise loops, and scalar operands.
//!
//! The crate is compiled for the baseline x86-64 target (SSE2), so loops
//! vectorise 4 lanes wide by default. The `multiversion!` macro compiles a
//! loop body a second time inside a function built for AVX2 + FMA and picks
//! it when the CPU has them, so the same generic code vectorises 8 lanes
//! wide. Loop helpers are `#[inline(always)]` so they inherit the wider
//! target when inlined there.

use super::error::{KernelError, KernelResult};

/// Whether this CPU runs the AVX2 + FMA paths.
#[inline]
pub fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines a function whose body is compiled twice, for AVX2 + FMA and for
/// the baseline target, and picks one at run time. The body is expanded
/// lexically inside a `#[target_feature]` function, so the
/// `#[inline(always)]` loop helpers it calls are compiled 8 lanes wide.
/// Results are identical on both paths: the loops use no fused operations.
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn wide($($arg: $ty),*) $body
                if $crate::kernels::simd::avx2_available() {
                    // SAFETY: the features `wide` is compiled for were detected.
                    return unsafe { wide($($arg),*) };
                }
            }
            fn narrow($($arg: $ty),*) $body
            narrow($($arg),*)
        }
    };
}
pub(crate) use multiversion;

/// A scalar operand of ACT / DVE instructions: an immediate broadcast to
/// every element, or one value per partition (an SBUF/PSUM `[P x 1]` vector)
/// broadcast along the free dimension.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarOperand<'a> {
    /// The same value for every partition.
    Imm(f32),
    /// `values[p]` for partition `p`; length must equal the partition count.
    PerPartition(&'a [f32]),
}

impl ScalarOperand<'_> {
    /// The value applied to partition `p` (after [`Self::check`] passed).
    #[inline]
    pub fn at(&self, p: usize) -> f32 {
        match self {
            ScalarOperand::Imm(v) => *v,
            ScalarOperand::PerPartition(vs) => vs[p],
        }
    }

    /// Fails unless a per-partition operand has exactly `partitions` values.
    pub fn check(&self, op: &'static str, partitions: usize) -> KernelResult<()> {
        match self {
            ScalarOperand::PerPartition(vs) if vs.len() != partitions => Err(KernelError::ShapeMismatch {
                op,
                expected: format!("{partitions}x1 per-partition operand"),
                got: format!("{}x1", vs.len()),
            }),
            _ => Ok(()),
        }
    }
}

/// Sums a row with 8 independent partial sums (vectorisable, deterministic
/// order: lane `i` takes elements `i, i+8, ...`, then lanes are added in order).
#[inline(always)]
pub(crate) fn sum_row(row: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let chunks = row.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            lanes[i] += c[i];
        }
    }
    let mut s = 0.0;
    for l in lanes {
        s += l;
    }
    for &t in tail {
        s += t;
    }
    s
}
