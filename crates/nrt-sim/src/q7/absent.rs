//! The Q7 cluster's kernel runner in a build without the `q7` feature
//! (no wasmtime, so the crate builds with only small dependencies, as
//! Miri's interpreter needs). The cluster, its CSRs, apertures and the
//! dispatch path are the same as in the default build; a library is
//! refused where it would be compiled, with a message naming the feature,
//! so a NEFF with custom ops fails its first EXTENDED_INST with a GPSIMD
//! `BadImage` error instead of running nothing.

/// Why every custom-op library is refused in this build.
pub const MISSING_FEATURE: &str = "custom ops (GPSIMD kernels) need nrt-sim's `q7` cargo feature (wasmtime), which this build was made without";

/// Stands in for the wasmtime engine and its library cache.
pub mod wasm {
    use crate::q7::absent::MISSING_FEATURE;
    use nrt_isa::ucode::{KernelRow, LibraryImage};
    use std::sync::Arc;

    /// Largest linear memory a kernel may grow to (same bound as the
    /// default build, for callers that size buffers by it).
    pub const MAX_GUEST_MEMORY: usize = 64 << 20;

    /// A compiled library; never constructed in this build (nothing can
    /// compile one), kept so the dispatch path type-checks unchanged.
    #[derive(Debug)]
    pub struct CompiledLib {
        /// Kernel names by index.
        pub kernels: Vec<String>,
        /// The library's `kernel_info_table`.
        pub table: Vec<KernelRow>,
        _never: std::convert::Infallible,
    }

    impl CompiledLib {
        /// The first table row for (spec, opcode), resolved to its kernel name.
        pub fn lookup(&self, _spec: u8, _opcode: u8) -> Option<Result<&str, String>> {
            match self._never {}
        }

        /// The kernel called `name`.
        pub fn by_name(&self, _name: &str) -> Option<&str> {
            match self._never {}
        }
    }

    /// Refuses `lib`: this build cannot run kernels.
    pub fn compiled(_lib: &LibraryImage) -> Result<Arc<CompiledLib>, String> {
        Err(MISSING_FEATURE.to_string())
    }

    /// Libraries compiled so far (always 0 here).
    pub fn compile_count() -> usize {
        0
    }

    /// Refuses to check a library file: that needs wasmtime.
    pub fn check_library(_file: &[u8]) -> Result<Vec<String>, String> {
        Err(MISSING_FEATURE.to_string())
    }
}

/// Stands in for the per-core kernel invocation.
pub mod invoke {
    pub use super::super::job::{Job, Outcome, tensor_sizes};
    use crate::port::Bus;
    use nrt_hal::ArchDesc;
    use nrt_isa::ucode::GpsimdCause;
    use std::sync::Arc;

    /// A core's live instance; never constructed in this build.
    #[derive(Debug)]
    pub(crate) enum CoreInstance {}

    /// Unreachable in practice (no [`Job`] can hold a compiled library);
    /// reports the op as a bad image if it is ever reached. The cluster's
    /// type is left open (it is unused) so this file needs nothing of
    /// `q7/mod.rs`.
    pub(crate) fn run<B: Bus + 'static, C>(_dev: &Arc<B>, _arch: &ArchDesc, _cluster: &Arc<C>, job: &Arc<Job>, _q: usize) -> (Outcome, u64) {
        (Outcome::Fault(GpsimdCause::BadImage), job.start_clock)
    }
}
