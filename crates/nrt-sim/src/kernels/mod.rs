//! Numerical kernels of the simulated engines.
//!
//! The engine executors decode an instruction, [`pattern::gather`] its
//! operands out of SBUF/PSUM into dense f32 [`Tile`]s, run one of the kernels
//! below, and [`pattern::scatter`] the result back with conversion to the
//! destination dtype (RNE or seeded stochastic rounding). The one exception
//! is the PE matmul, which takes bf16 / fp16 / fp8 operands raw
//! ([`pattern::gather_raw`]) and widens them inside the GEMM's packing
//! ([`lowp`]), bit-identically but without a widened copy. Semantics follow
//! the public NKI ISA descriptions; layouts follow spec/real-isa-observed.md.
//!
//! - [`pattern`]: operand access patterns, memory views, gather / scatter
//!   (the only place dtypes are handled), bit-exact raw moves.
//! - [`tile`]: the dense `[partitions x free]` f32 working tile.
//! - [`gemm`]: cache-blocked fp32 GEMM with an AVX2/FMA micro-kernel.
//! - [`lowp`]: bf16 / fp16 / fp8 GEMM operands widened while packing.
//! - [`pe`]: matmul as the PE does it (LDWEIGHTS order, PSUM accumulation
//!   groups, bit-exact transpose).
//! - [`activation`]: ACT `func(in * scale + bias)` with reduce registers.
//! - [`elementwise`]: tensor-tensor, tensor-scalar, select, memset.
//! - [`reduce`]: free-dim and cross-partition reductions.
//! - [`transpose`]: partition <-> free transposes.
//! - [`iota`]: index generation.
//! - [`copy`]: COPY / CAST between patterns.
//! - [`math`]: vectorisable exp / tanh / erfc with documented accuracy.
//! - [`simd`]: run-time AVX2 dispatch and scalar operands.
//! - [`scratch`]: per-thread pools recycling tile and byte buffers.
//! - [`split`]: fork-join of one large kernel call across the cores.

pub mod activation;
pub mod copy;
#[cfg(test)]
mod dtype_sweep;
pub mod elementwise;
pub mod error;
pub mod gemm;
pub mod iota;
pub mod lowp;
pub mod math;
pub mod pattern;
pub mod pe;
pub mod reduce;
pub mod scratch;
pub mod simd;
pub mod split;
pub mod tile;
pub mod transpose;

pub use error::{KernelError, KernelResult};
pub use tile::Tile;
