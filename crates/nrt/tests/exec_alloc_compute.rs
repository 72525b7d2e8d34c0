//! Compute models execute without heap allocation in the steady state,
//! simulator included: a counting global allocator sees zero allocations
//! in the whole process (the runtime's thread and every simulator worker)
//! across executions of the mlp examples, all-engines and the real
//! compiler NEFF (matmul_small: PE matmuls, ACT, patterned DMA), on the
//! deterministic device and on the threaded one.
//!
//! One test function runs every case in turn: the counter is process-wide,
//! so cases running in parallel would count each other's set-up.

mod exec_support;

#[allow(dead_code)]
#[path = "../../nrt-cli/src/example_data.rs"]
mod example_data;

use exec_support::*;
use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use nrt_sim::{SimConfig, SimDevice};
use std::sync::Arc;
use std::sync::atomic::Ordering;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Executions before counting (the first fill the buffer pools).
const WARMUP: u64 = 10;

const REAL_NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

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

/// Executions per counted round.
const ROUND: u64 = 30;
/// Rounds the threaded device may take to reach its steady state.
const MAX_ROUNDS: usize = 20;

/// Allocations counted over rounds of [`ROUND`] executions of `neff`, on
/// device-resident tensors filled with deterministic data, after a
/// warm-up: the deterministic device runs every engine on one thread, so
/// its first round must read 0; on the threaded device an engine's first
/// instruction on a worker that never ran it fills that worker's buffer
/// pools, so rounds go on until one reads 0 (a kernel that allocates per
/// instruction never gets there). Returns every round's count.
fn steady_allocations(neff: &[u8], deterministic: bool) -> Vec<u64> {
    let cfg = SimConfig::builder().deterministic(deterministic).build();
    let dev = Arc::new(SimDevice::new(&cfg, 0));
    let host = ModelHost::with_lnc(dev, 2, LoadSettings::default()).expect("host");
    let id = host.load(neff, -1, -1).expect("load");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let mut ins = TensorSet::new();
    for (i, sig) in inputs.iter().enumerate() {
        let size = sig.size_bytes().expect("sized input");
        let t = Arc::new(Tensor::allocate_device(&memory, core, size, &sig.name).unwrap());
        // Small values (high bytes below 0x3c in any 16-bit float format)
        // keep every dtype finite.
        let mut bytes = data(size as usize, 7 + i as u64);
        bytes.iter_mut().enumerate().for_each(|(k, b)| *b = if k % 2 == 1 { *b & 0x3b } else { *b });
        t.write(0, &bytes).unwrap();
        ins.add(&sig.name, t);
    }
    let mut outs = TensorSet::new();
    for sig in &outputs {
        let t = Arc::new(Tensor::allocate_device(&memory, core, sig.size_bytes().unwrap(), &sig.name).unwrap());
        outs.add(&sig.name, t);
    }
    for _ in 0..WARMUP {
        host.execute(id, &ins, &outs).unwrap();
    }
    let mut rounds = Vec::new();
    let max_rounds = if deterministic { 1 } else { MAX_ROUNDS };
    while rounds.len() < max_rounds && rounds.last() != Some(&0) {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..ROUND {
            host.execute(id, &ins, &outs).unwrap();
        }
        rounds.push(ALLOCATIONS.load(Ordering::Relaxed) - before);
    }
    host.unload(id).unwrap();
    host.close().unwrap();
    rounds
}

#[test]
fn compute_models_execute_without_allocating() {
    let mut models = vec![
        ("mlp", example("mlp")),
        ("mlp-bf16", example("mlp-bf16")),
        ("all-engines", example("all-engines")),
    ];
    match std::fs::read(REAL_NEFF) {
        Ok(b) => models.push(("matmul_small", b)),
        Err(e) => println!("matmul_small skipped: {REAL_NEFF} is not available ({e})"),
    }
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
