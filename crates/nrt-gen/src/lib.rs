//! Model generators: NEFFs written in the compiler's own encoding (the
//! record shapes and memory layout of real neuronx-cc output, described in
//! docs/isa.md), so users and tests can make models of any size without
//! the compiler.
//!
//! [`matmul::matmul_neff`] builds `output0 = x @ y` the way the compiler
//! tiles it: x transposed on the PE against an identity constant, the
//! transposes spilled to `virtual` vars and reloaded, K in accumulation
//! groups of 32 PE steps whose PSUM partials DVE adds into an fp32
//! accumulator, the result cast and written out, LNC 2 splitting the work
//! across the two cores.
//!
//! [`cc::collective_neff`] builds a NEFF carrying one collective
//! (PSEUDO_TRIGGER_COLLECTIVE over a def.json replica group), for
//! `nrt_load_collectives` on every rank.
//!
//! [`cc_chain::chain_neff`] builds a NEFF carrying a chain of collectives
//! on several replica groups interleaved with ACT compute, on one or two
//! physical cores (LNC 1 or 2).
//!
//! [`tp_mlp::tp_mlp_neff`] builds one rank's NEFF of a tensor-parallel
//! two-layer mlp: the hidden units split over the ranks, the partial
//! outputs summed by an in-NEFF all-reduce.
//!
//! [`tp_decoder`] builds the two NEFFs of a tensor-parallel Llama-style
//! decoder (a prefill and a decode NEFF sharing weight and KV-cache
//! inputs), with an f64 reference of the unsharded model and a derived
//! worst-case bound on its fp32 evaluation.

pub mod cc;
pub mod cc_chain;
mod dma_side;
pub mod matmul;
mod sched;
pub mod tp_decoder;
pub mod tp_mlp;

pub use matmul::{MatmulSpec, Prints, Split, matmul_neff, print_prefix};

/// The kelf `target` the generators write unless told otherwise: trn2's
/// code name (the simulator's default device). The collectives
/// generators also write NEFFs for another generation
/// ([`cc::collective_neff_for`], [`cc_chain::chain_neff_for`]: `"sunda"`
/// for trn1 and inf2), since their records are the same on both.
pub const DEFAULT_TARGET: &str = "cayman";

/// Why a model cannot be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// A parameter is out of range.
    #[error("{0}")]
    Param(String),
    /// The generated program did not assemble or pack (a generator bug).
    #[error("internal: {0}")]
    Internal(String),
}
