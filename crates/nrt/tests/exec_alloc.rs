//! The steady state of execute allocates nothing on the heap: a counting
//! global allocator sees zero allocations across many executions on
//! device tensors (after a warm-up), and each execute rings exactly one
//! doorbell.

mod exec_support;

use exec_support::*;
use nrt::tensor::{Tensor, TensorSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

const BYTES: usize = 8 * 128 * 4;

#[test]
fn steady_state_execute_allocates_nothing() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "output").unwrap());
    din.write(0, &data(BYTES, 11)).unwrap();
    let mut ins = TensorSet::new();
    ins.add("input", din);
    let mut outs = TensorSet::new();
    outs.add("output", dout.clone());
    for _ in 0..5 {
        host.execute(id, &ins, &outs).unwrap();
    }
    let dispatch = host.cores().get(core).unwrap();
    let rung = dispatch.doorbells();
    const RUNS: u64 = 200;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..RUNS {
        host.execute(id, &ins, &outs).unwrap();
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    assert_eq!(allocations, 0, "{allocations} heap allocations over {RUNS} executions");
    assert_eq!(dispatch.doorbells() - rung, RUNS, "one doorbell per execute");
    assert_eq!(read_all(&dout), data(BYTES, 11));
}
