//! Numerical kernels of the simulated engines.
//!
//! The engine executors decode an instruction, [`pattern::gather`] its
//! operands out of SBUF/PSUM into dense f32 [`tile::Tile`]s, run one of the
//! kernels below, and [`pattern::scatter`] the result back with conversion to
//! the destination dtype. Semantics follow the public NKI ISA descriptions.
//!
//! - [`gemm`]: cache-blocked fp32 GEMM (the PE's arithmetic).
//! - [`pe`]: matmul as the PE does it (stationary/moving, PSUM accumulation
//!   groups, transpose pass-through).

pub mod activation;
pub mod elementwise;
pub mod error;
pub mod gemm;
pub mod iota;
pub mod math;
pub mod pattern;
pub mod reduce;
pub mod simd;
pub mod tile;
pub mod transpose;

pub use error::{KernelError, KernelResult};
pub use tile::Tile;
