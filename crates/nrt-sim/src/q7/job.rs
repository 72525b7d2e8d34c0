//! What one dispatched Q7 op is and how an invocation of it ends: shared by
//! the wasmtime-backed [`super::invoke`] and the build without the `q7`
//! feature, so the dispatch path is the same in both.

use super::wasm::CompiledLib;
use nrt_isa::ucode::{ARG_DST, ArgBlock, ArgTensor, GpsimdCause};
use std::sync::Arc;

/// What LOAD_POOL_ARGUMENT latched for the next EXTENDED_INST.
#[derive(Clone, Debug)]
pub struct Latched {
    /// The decoded argument block.
    pub args: Arc<ArgBlock>,
    /// The op's SBUF base (SBUF-located tensors are relative to it).
    pub sbuf_base: u64,
    /// Address of the word handed to kernels as `one_value`.
    pub one_value_addr: u64,
    /// Where completion writes `1` (0 = nowhere).
    pub completion_addr: u64,
    /// The word read from `one_value_addr` when the block was latched.
    pub one_value: u32,
}

/// How one invocation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Returned 0.
    Ok,
    /// Trapped or returned nonzero.
    Fault(GpsimdCause),
    /// Stopped by the watchdog (or abandoned by a reset).
    Hung,
}

/// One dispatched op, shared by its invocations.
#[derive(Debug)]
pub struct Job {
    /// The op id ([`Cluster`] ignores stale ones).
    pub op_id: u64,
    /// Instruction index of the EXTENDED_INST (for error records).
    pub pc: u64,
    /// Cores running the op (1 or 8).
    pub total: u32,
    /// Per invoked core: the library and the kernel's export name.
    pub kernels: Vec<(Arc<CompiledLib>, String)>,
    /// What LOAD_POOL_ARGUMENT latched.
    pub latched: Latched,
    /// The word read from `one_value_read_addr`.
    pub one_value: u32,
    /// Virtual time of the dispatch.
    pub start_clock: u64,
    /// Byte size of each tensor argument, by argument index (the
    /// destination at [`ARG_DST`]), computed once per op instead of on
    /// every chunk a kernel moves (see [`tensor_sizes`]).
    pub tensor_bytes: [u64; ARG_DST as usize + 1],
}

/// [`Job::tensor_bytes`] for the argument block `args` (0 where there is
/// no tensor).
pub fn tensor_sizes(args: &ArgBlock) -> [u64; ARG_DST as usize + 1] {
    std::array::from_fn(|i| args.tensor(i as u32).map_or(0, ArgTensor::bytes))
}
