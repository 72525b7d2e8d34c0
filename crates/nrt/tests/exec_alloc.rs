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

/// The counter is process-wide: the tests take turns, so one's set-up is
/// never counted in the other's steady state.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn steady_state_execute_allocates_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// Through the driver portal (nrt-ndl over the emulated driver), the
/// steady-state execute crosses the kernel boundary exactly as the seeds
/// say libnrt does: one SEMAPHORE_INCREMENT ioctl per physical core the
/// model runs on (its doorbell), and no other ioctl (completion is read
/// from the mapped notification rings); and it still allocates nothing.
#[test]
fn through_the_driver_portal_an_execute_is_one_semaphore_increment_per_core() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dev = Arc::new(nrt_ndl::emulated(sim(), 0, 1).expect("the emulated driver opens"));
    let host = nrt::load::ModelHost::with_lnc(dev.clone(), 2, nrt::load::LoadSettings::default()).expect("host");
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "output").unwrap());
    din.write(0, &data(BYTES, 13)).unwrap();
    let mut ins = TensorSet::new();
    ins.add("input", din);
    let mut outs = TensorSet::new();
    outs.add("output", dout.clone());
    for _ in 0..5 {
        host.execute(id, &ins, &outs).unwrap();
    }
    const RUNS: u64 = 50;
    let dispatch = host.cores().get(core).unwrap();
    let rang = dispatch.doorbells();
    let doorbells = dev.ioctl_count(nrt_ndl::abi::cmd::SEMAPHORE_INCREMENT);
    let total = dev.ioctl_total();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..RUNS {
        host.execute(id, &ins, &outs).unwrap();
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let rung = dev.ioctl_count(nrt_ndl::abi::cmd::SEMAPHORE_INCREMENT) - doorbells;
    let all = dev.ioctl_total() - total;
    // The copy model's program sits on one physical core of its logical core.
    assert_eq!(dispatch.doorbells() - rang, RUNS, "one doorbell per execute");
    assert_eq!(rung, RUNS, "SEMAPHORE_INCREMENT ioctls: one per doorbell, i.e. per physical core the model runs on ({:?})", dev.ioctl_counts());
    assert_eq!(all, rung, "no other ioctl on the execute path ({:?})", dev.ioctl_counts());
    assert_eq!(allocations, 0, "{allocations} heap allocations over {RUNS} executions through the portal");
    assert_eq!(read_all(&dout), data(BYTES, 13));
}

#[test]
fn executing_a_neff_of_many_collectives_allocates_nothing() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use nrt_gen::cc_chain::{ChainOp, ChainSpec, chain_neff, chain_reference};
    use nrt_isa::instr::{AluOp, CollectiveType};
    // Two ranks on the host's logical cores (LNC 2: a ring per physical
    // core), eight collectives per subgraph; each rank executes from its
    // own thread, in lock step with the other.
    let (_dev, host) = host();
    let op = |kind, op| ChainOp { kind, op, set: 0 };
    let spec = ChainSpec {
        world: 2,
        cols: 8,
        lnc: 2,
        sets: vec![vec![vec![0, 1]]],
        pairs: vec![vec![(0, 1), (1, 0)]],
        ops: vec![
            op(CollectiveType::AllReduce, AluOp::Add),
            op(CollectiveType::ReduceScatter, AluOp::Add),
            op(CollectiveType::AllGather, AluOp::Bypass),
            op(CollectiveType::Permute, AluOp::Bypass),
            op(CollectiveType::AllToAll, AluOp::Bypass),
            op(CollectiveType::AllReduce, AluOp::Max),
            op(CollectiveType::AllReduce, AluOp::Min),
            op(CollectiveType::Permute, AluOp::Bypass),
        ],
    };
    let neff = chain_neff(&spec).unwrap();
    let models: Vec<u32> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2u32)
            .map(|r| {
                let (host, neff) = (&host, &neff);
                s.spawn(move || host.load_collectives(neff, r as i32, -1, &nrt::cc::neff::CcRank::local(r, 2, std::time::Duration::from_secs(30))).unwrap())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let bytes = spec.elements() * 4;
    let inputs: Vec<Vec<f32>> = (0..2).map(|r| (0..spec.elements()).map(|i| ((i * 3 + r * 5) % 11) as f32).collect()).collect();
    let memory = host.memory().clone();
    let sets: Vec<(TensorSet, TensorSet, Arc<Tensor>)> = (0..2)
        .map(|r| {
            let core = host.vcores()[r][0];
            let din = Arc::new(Tensor::allocate_device(&memory, core, bytes as u64, "input").unwrap());
            let dout = Arc::new(Tensor::allocate_device(&memory, core, bytes as u64, "output").unwrap());
            din.write(0, &inputs[r].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
            let mut ins = TensorSet::new();
            ins.add("input", din);
            let mut outs = TensorSet::new();
            outs.add("output", dout.clone());
            (ins, outs, dout)
        })
        .collect();
    // Each rank's waiting thread walks the device's queues alongside its
    // workers (`Device::assist`), so which thread first runs which piece
    // of work varies: rounds go on until one reads 0, as for the threaded
    // device (`steady_allocations`).
    let step = std::sync::Barrier::new(3);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let rounds = std::thread::scope(|s| {
        for (r, (ins, outs, _)) in sets.iter().enumerate() {
            let (host, step, stop, m) = (&host, &step, &stop, models[r]);
            s.spawn(move || {
                loop {
                    step.wait();
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    host.execute(m, ins, outs).unwrap();
                    step.wait();
                }
            });
        }
        let execute = || {
            step.wait();
            step.wait();
        };
        (0..WARMUP).for_each(|_| execute());
        let mut rounds = Vec::new();
        while rounds.len() < MAX_ROUNDS && rounds.last() != Some(&0) {
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            (0..ROUND).for_each(|_| execute());
            rounds.push(ALLOCATIONS.load(Ordering::Relaxed) - before);
        }
        stop.store(true, Ordering::Relaxed);
        step.wait();
        rounds
    });
    assert_eq!(rounds.last(), Some(&0), "heap allocations per round of {ROUND} executions of two ranks: {rounds:?}");
    let want = chain_reference(&spec, &inputs);
    for (r, (_, _, dout)) in sets.iter().enumerate() {
        let got: Vec<f32> = read_all(dout).chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, want[r], "rank {r}");
    }
    for m in models {
        host.unload(m).unwrap();
    }
}
