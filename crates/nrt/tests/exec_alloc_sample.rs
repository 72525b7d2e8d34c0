//! The compiler's sample NEFF (matmul_small: PE matmuls, ACT, patterned
//! DMA) executes without heap allocation in the steady state, simulator
//! included, on the deterministic and on the threaded device. A test
//! binary of its own: the allocation counter is process-wide (see
//! exec_alloc_compute.rs, the examples' twin).

mod exec_support;

use exec_support::*;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const REAL_NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

#[test]
fn the_compiler_sample_executes_without_allocating() {
    let Ok(neff) = std::fs::read(REAL_NEFF) else {
        nrt_test_support::skip!("{REAL_NEFF} is absent (the compiler's sample lives beside the checkout)");
    };
    for deterministic in [true, false] {
        let rounds = steady_allocations(&neff, deterministic);
        assert_eq!(rounds.last(), Some(&0), "matmul_small (deterministic {deterministic}): allocations per {ROUND} executions {rounds:?}");
    }
}
