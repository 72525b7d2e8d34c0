//! Compute models execute without heap allocation in the steady state,
//! simulator included: a counting global allocator sees zero allocations
//! in the whole process (the runtime's thread and every simulator worker)
//! across executions of the mlp examples and all-engines, on the
//! deterministic device and on the threaded one (the compiler's sample
//! NEFF: exec_alloc_sample.rs).
//!
//! One test function runs every case in turn: the counter is process-wide,
//! so cases running in parallel would count each other's set-up.

mod exec_support;

#[allow(dead_code)]
#[path = "../../nrt-pack/src/example_data.rs"]
mod example_data;

use exec_support::*;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Packs an example directory with its generated constants (mlp's W, b).
fn example(name: &str) -> Vec<u8> {
    let dir = examples_dir().join(name);
    let contents = nrt_neff::read_dir(&dir).expect("read example dir");
    let mut members = contents.members;
    for (path, bytes) in example_data::constants_for(&dir).unwrap_or_default() {
        members.insert(path.to_string(), bytes);
    }
    pack_members(&contents.header.unwrap_or_default(), members)
}

#[test]
fn compute_models_execute_without_allocating() {
    let models = [
        ("mlp", example("mlp")),
        ("mlp-bf16", example("mlp-bf16")),
        ("all-engines", example("all-engines")),
    ];
    let mut failures = Vec::new();
    for (name, neff) in &models {
        for deterministic in [true, false] {
            let rounds = steady_allocations(neff, deterministic);
            if rounds.last() != Some(&0) {
                failures.push(format!("{name} (deterministic {deterministic}): allocations per {ROUND} executions {rounds:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "steady-state allocations:\n{}", failures.join("\n"));
}
