//! Tensor bytes move through the device's DMA queues (`nrt::transfer`):
//! reads, writes, fills and copies of device tensors, an execution's host
//! staging and the `nrta_*` tensor jobs all walk descriptors on the core's
//! transfer queues, appear in its DMA trace, take device time, meet
//! injected DMA faults with the documented status, and wait no longer
//! than their bound when the device never completes.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::memory::DeviceMemory;
use nrt::tensor::{Tensor, TensorSet};
use nrt::transfer::{CHUNK_BYTES, Direction, TRANSFER_ENGINE};
use nrt_hal::{
    CoreId, CoreReservation, Device, DeviceAddr, DeviceInfo, DmaQueueId, DmaQueueState, DmaRingConfig, EngineId, HalResult, MemoryLocation, NqRing,
    NqSpec,
};
use nrt_isa::notification::DmaCompletion;
use nrt_sim::{FaultKind, FaultSpec, SimConfig, SimDevice};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PIECE: u64 = 64 << 10;

fn memory_of(dev: &Arc<SimDevice>) -> Arc<DeviceMemory> {
    Arc::new(DeviceMemory::new(dev.clone()))
}

/// Pairs walked so far on `direction`'s queue of `core`.
fn walked(dev: &SimDevice, core: CoreId, direction: Direction) -> u64 {
    dev.dma_queue_state(core, direction.queue()).map_or(0, |s| s.tx_head)
}

/// Descriptor pairs a transfer of `len` bytes takes: 64 KiB pieces per
/// chunk, one completion marker per chunk.
fn pairs_for(len: u64) -> u64 {
    let chunks = len.div_ceil(CHUNK_BYTES);
    (0..chunks).map(|c| (len - c * CHUNK_BYTES).min(CHUNK_BYTES).div_ceil(PIECE) + 1).sum()
}

fn queue_index(direction: Direction) -> u8 {
    TRANSFER_ENGINE * 16 + direction.queue().queue
}

#[test]
fn reads_writes_fills_and_copies_walk_the_transfer_queues() {
    let dev = sim();
    let memory = memory_of(&dev);
    let core = CoreId(1);
    for len in [1u64, 4096, CHUNK_BYTES + 3, 3 * CHUNK_BYTES + 17] {
        let a = Tensor::allocate_device(&memory, core, len + 64, "a").unwrap();
        let b = Tensor::allocate_device(&memory, core, len + 64, "b").unwrap();
        let bytes = data(len as usize, len);
        let before = Direction::ALL.map(|d| walked(&dev, core, d));
        a.write(5, &bytes).unwrap();
        assert_eq!(walked(&dev, core, Direction::HostToDevice) - before[0], pairs_for(len), "write of {len}");
        let mut back = vec![0u8; len as usize];
        a.read(5, &mut back).unwrap();
        assert!(back == bytes, "read back {len} bytes");
        assert_eq!(walked(&dev, core, Direction::DeviceToHost) - before[1], pairs_for(len), "read of {len}");
        b.copy_from(1, &a, 5, len).unwrap();
        assert_eq!(walked(&dev, core, Direction::DeviceToDevice) - before[2], pairs_for(len), "copy of {len}");
        b.read(1, &mut back).unwrap();
        assert!(back == bytes, "copied {len} bytes");
        b.memset(0, 0xA5, len).unwrap();
        assert_eq!(walked(&dev, core, Direction::HostToDevice) - before[0], 2 * pairs_for(len), "fill of {len}");
        b.read(0, &mut back).unwrap();
        assert!(back.iter().all(|&x| x == 0xA5), "filled {len} bytes");
    }
    // The other cores' queues were never touched.
    assert_eq!(walked(&dev, CoreId(0), Direction::HostToDevice), 0);
}

#[test]
fn transfers_appear_in_the_dma_trace_and_take_device_time() {
    let dev = sim();
    let memory = memory_of(&dev);
    let core = CoreId(0);
    let t = Tensor::allocate_device(&memory, core, 2 * CHUNK_BYTES, "t").unwrap();
    let len = 2 * CHUNK_BYTES - 100;
    t.write(0, &data(len as usize, 3)).unwrap();
    let mut recs: Vec<DmaCompletion> = Vec::new();
    assert_eq!(memory.transfers().read_trace(core, &mut recs), 0, "nothing lost");
    assert_eq!(recs.len() as u64, pairs_for(len), "one record per packet");
    assert!(recs.iter().all(|r| r.queue == queue_index(Direction::HostToDevice)));
    let moved: u64 = recs.iter().map(|r| r.bytes).sum();
    assert_eq!(moved, len + 4 * 2, "the data and two 4-byte completion markers");
    // Packets follow each other on the queue's clock: the span from the
    // first packet's end to the last's covers the others' cost.
    let cost: u64 = recs[1..].iter().map(|r| nrt_sim::cost::dma(r.bytes)).sum();
    let span = recs.last().unwrap().timestamp_ps - recs[0].timestamp_ps;
    assert!(span >= cost, "device time {span} ps for packets costing {cost} ps");
    // A read shows up on its own queue, and nothing older comes back.
    let mut buf = vec![0u8; 4096];
    t.read(0, &mut buf).unwrap();
    recs.clear();
    memory.transfers().read_trace(core, &mut recs);
    assert_eq!(recs.iter().map(|r| (r.queue, r.bytes)).collect::<Vec<_>>(), [(queue_index(Direction::DeviceToHost), 4096), (queue_index(Direction::DeviceToHost), 4)]);
}

#[test]
fn an_injected_dma_abort_fails_the_transfer_it_hits_naming_its_queue_and_the_next_one_works() {
    let dev = sim();
    let memory = memory_of(&dev);
    let core = CoreId(2);
    let a = Tensor::allocate_device(&memory, core, 4096, "a").unwrap();
    let b = Tensor::allocate_device(&memory, core, 4096, "b").unwrap();
    let bytes = data(4096, 9);
    type Op<'a> = (&'a str, Box<dyn Fn() -> nrt::NrtResult<()> + 'a>);
    let ops: [Op; 4] = [
        ("dma6q0", Box::new(|| a.write(0, &bytes))),
        ("dma6q1", Box::new(|| a.read(0, &mut vec![0u8; 4096]))),
        ("dma6q2", Box::new(|| b.copy_from(0, &a, 0, 4096))),
        ("dma6q0", Box::new(|| b.memset(0, 1, 4096))),
    ];
    for (queue, op) in &ops {
        dev.inject(FaultSpec::new(FaultKind::DmaAbort).on_core(core.0));
        let e = op().unwrap_err();
        assert_eq!(e.status, NrtStatus::Failure, "{e}");
        assert!(e.message.contains("DMA abort") && e.message.contains(queue), "{e}");
        // The fault fired once: the same operation now completes.
        op().unwrap_or_else(|e| panic!("after the abort on {queue}: {e}"));
    }
    let mut back = vec![0u8; 4096];
    a.read(0, &mut back).unwrap();
    assert_eq!(back, bytes);
}

#[test]
fn a_transfer_abort_is_not_an_execution_error() {
    let (dev, host) = host_with(nrt::load::LoadSettings { numerical_errors: true, ..Default::default() });
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let core = host.vcores()[0][0];
    let memory = host.memory().clone();
    const BYTES: usize = 8 * 128 * 4;
    let din = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "output").unwrap());
    // An abort and a NaN on the core's transfers leave their error records
    // on the core's ERROR ring; the executions that follow are not theirs.
    dev.inject(FaultSpec::new(FaultKind::DmaAbort).on_core(core.0));
    assert!(din.write(0, &data(BYTES, 1)).is_err());
    dev.inject(FaultSpec::new(FaultKind::Nan).on_core(core.0));
    din.write(0, &data(BYTES, 2)).unwrap();
    din.write(0, &data(BYTES, 3)).unwrap();
    let (mut ins, mut outs) = (TensorSet::new(), TensorSet::new());
    ins.add("input", din);
    outs.add("output", dout.clone());
    host.execute(id, &ins, &outs).expect("the execution after a failed transfer");
    assert_eq!(read_all(&dout), data(BYTES, 3));
}

#[test]
fn host_tensors_are_staged_by_dma_and_a_staging_abort_leaves_the_model_healthy() {
    let (dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let core = host.vcores()[0][0];
    const BYTES: usize = 8 * 128 * 4;
    let before = [Direction::HostToDevice, Direction::DeviceToHost].map(|d| walked(&dev, core, d));
    let (ins, outs, out) = host_io(data(BYTES, 4), BYTES);
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(walked(&dev, core, Direction::HostToDevice) - before[0], pairs_for(BYTES as u64), "the input was staged by DMA");
    assert_eq!(walked(&dev, core, Direction::DeviceToHost) - before[1], pairs_for(BYTES as u64), "the output came back by DMA");
    assert_eq!(read_all(&out), data(BYTES, 4));
    dev.inject(FaultSpec::new(FaultKind::DmaAbort).on_core(core.0));
    let e = host.execute(id, &ins, &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::Failure, "{e}");
    assert!(e.message.contains("staging host input \"input\"") && e.message.contains("dma6q0"), "{e}");
    assert_eq!(host.models().get(id).unwrap().poisoned(), None, "the model's program never ran");
    let (ins, outs, out) = host_io(data(BYTES, 5), BYTES);
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(read_all(&out), data(BYTES, 5));
}

#[test]
fn async_tensor_jobs_take_the_same_queues() {
    use nrt::xu::unit::OnComplete;
    use nrt::xu::{XuSettings, Xus};
    use std::sync::atomic::{AtomicI32, Ordering};
    let dev = sim();
    let memory = memory_of(&dev);
    let core = CoreId(0);
    let t = Arc::new(Tensor::allocate_device(&memory, core, 4096, "t").unwrap());
    let xus = Xus::new(XuSettings::default());
    let before = walked(&dev, core, Direction::HostToDevice);
    let s = xus.tensor_write(0, t.clone(), 0, data(4096, 6), 0, None).unwrap();
    assert!(xus.wait(s, Duration::from_secs(30)).unwrap());
    assert_eq!(walked(&dev, core, Direction::HostToDevice) - before, pairs_for(4096));
    dev.inject(FaultSpec::new(FaultKind::DmaAbort).on_core(core.0));
    let status = Arc::new(AtomicI32::new(-1));
    let cell = status.clone();
    let done = OnComplete::Once(Box::new(move |_, s: NrtStatus| cell.store(s.code(), Ordering::SeqCst)));
    let s = xus.tensor_write(0, t.clone(), 0, data(4096, 7), 0, Some(done)).unwrap();
    assert!(xus.wait(s, Duration::from_secs(30)).unwrap());
    assert_eq!(status.load(Ordering::SeqCst), NrtStatus::Failure.code());
    let mut back = vec![0u8; 4096];
    t.read(0, &mut back).unwrap();
    assert_ne!(back, data(4096, 7), "the aborted write did not land");
}

#[test]
fn the_model_queue_pool_never_hands_out_the_transfer_engine() {
    let (_dev, host) = host();
    host.load(&copy_neff(), 0, -1).unwrap();
    let cores = host.cores().get(host.vcores()[0][0]).unwrap();
    let mut claimed = Vec::new();
    while let Ok(q) = cores.claim_queues(1) {
        claimed.extend(q);
    }
    assert!(claimed.len() > 200, "{} queues", claimed.len());
    assert!(claimed.iter().all(|q| q.engine != TRANSFER_ENGINE), "{claimed:?}");
    cores.release_queues(&claimed);
}

#[test]
fn closing_the_memory_releases_the_transfer_queues_and_refuses_more() {
    let dev = sim();
    let memory = memory_of(&dev);
    let t = Tensor::allocate_device(&memory, CoreId(0), 4096, "t").unwrap();
    t.write(0, &[1; 4096]).unwrap();
    assert!(memory.ledger().host.used > 0, "the queues' rings, bounce buffer and trace ring");
    drop(t);
    memory.free_everything().unwrap();
    let l = memory.ledger();
    assert_eq!((l.host.used, l.allocations), (0, 0));
    let t = Tensor::allocate_device(&memory, CoreId(0), 4096, "t").unwrap();
    assert_eq!(t.write(0, &[1; 16]).unwrap_err().status, NrtStatus::Closed);
    assert_eq!(memory.ledger().host.used, 0, "nothing was set up again");
}

/// A simulated device whose tensor-transfer doorbells never reach the DMA
/// engine: the device never completes those transfers.
struct LostDoorbells(SimDevice);

impl Device for LostDoorbells {
    fn info(&self) -> &DeviceInfo {
        self.0.info()
    }
    fn alloc(&self, location: MemoryLocation, size: u64, align: u64) -> HalResult<DeviceAddr> {
        self.0.alloc(location, size, align)
    }
    fn free(&self, addr: DeviceAddr) -> HalResult<()> {
        self.0.free(addr)
    }
    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        self.0.read(addr, buf)
    }
    fn write(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        self.0.write(addr, data)
    }
    fn memset(&self, addr: DeviceAddr, value: u8, len: u64) -> HalResult<()> {
        self.0.memset(addr, value, len)
    }
    fn copy(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<()> {
        self.0.copy(src, dst, len)
    }
    fn semaphore_read(&self, core: CoreId, index: u32) -> HalResult<i32> {
        self.0.semaphore_read(core, index)
    }
    fn semaphore_set(&self, core: CoreId, index: u32, value: i32) -> HalResult<()> {
        self.0.semaphore_set(core, index, value)
    }
    fn semaphore_increment(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.0.semaphore_increment(core, index, by)
    }
    fn semaphore_decrement(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.0.semaphore_decrement(core, index, by)
    }
    fn event_read(&self, core: CoreId, index: u32) -> HalResult<bool> {
        self.0.event_read(core, index)
    }
    fn event_set(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.0.event_set(core, index)
    }
    fn event_clear(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.0.event_clear(core, index)
    }
    fn dma_queue_init(&self, core: CoreId, queue: DmaQueueId, config: DmaRingConfig) -> HalResult<()> {
        self.0.dma_queue_init(core, queue, config)
    }
    fn dma_queue_state(&self, core: CoreId, queue: DmaQueueId) -> HalResult<DmaQueueState> {
        self.0.dma_queue_state(core, queue)
    }
    fn dma_tail_increment(&self, core: CoreId, queue: DmaQueueId, tx: u32, rx: u32) -> HalResult<()> {
        if queue.engine == TRANSFER_ENGINE {
            return Ok(());
        }
        self.0.dma_tail_increment(core, queue, tx, rx)
    }
    fn nq_init(&self, spec: NqSpec) -> HalResult<Arc<dyn NqRing>> {
        self.0.nq_init(spec)
    }
    fn nq_destroy(&self, spec: NqSpec) -> HalResult<()> {
        self.0.nq_destroy(spec)
    }
    fn reserve_cores(&self, cores: &[CoreId]) -> HalResult<CoreReservation> {
        self.0.reserve_cores(cores)
    }
    fn start_engine(&self, core: CoreId, engine: EngineId, addr: DeviceAddr, len: u64) -> HalResult<()> {
        self.0.start_engine(core, engine, addr, len)
    }
    fn reset_core(&self, core: CoreId) -> HalResult<()> {
        self.0.reset_core(core)
    }
}

#[test]
fn a_transfer_the_device_never_completes_fails_within_its_bound_naming_the_queue() {
    for deterministic in [true, false] {
        let sim = SimDevice::new(&SimConfig::builder().deterministic(deterministic).hbm_bytes_per_channel(64 << 20).build(), 0);
        let memory = Arc::new(DeviceMemory::new(Arc::new(LostDoorbells(sim))));
        let bound = Duration::from_millis(200);
        memory.transfers().set_timeout(bound);
        let t = Tensor::allocate_device(&memory, CoreId(0), 2 * CHUNK_BYTES, "t").unwrap();
        let t0 = Instant::now();
        let e = t.write(0, &vec![7u8; 2 * CHUNK_BYTES as usize]).unwrap_err();
        let took = t0.elapsed();
        assert_eq!(e.status, NrtStatus::Timeout, "{e}");
        assert!(e.message.contains("dma6q0") && e.message.contains("host-to-device") && e.message.contains("never came"), "{e}");
        assert!(took >= bound, "gave up after {took:?}, before the bound");
        let e = t.read(0, &mut [0u8; 64]).unwrap_err();
        assert!(e.status == NrtStatus::Timeout && e.message.contains("dma6q1"), "{e}");
    }
}

/// nrtpy's tensor_cast / tensor_compute (`nrt::tensor_ops`) are DMA work
/// on the core's device-to-device queue: the sum, minimum and maximum of
/// three sources and the casts come out as the element-wise reference,
/// each walking one pattern pair per block plus the marker; tensors on
/// another core, host tensors and counts past a tensor are refused
/// before anything runs.
#[test]
fn tensor_cast_and_compute_run_on_the_device_to_device_queue() {
    use nrt::tensor_ops::{self, ComputeOp, Typed};
    use nrt_isa::dtype::Dtype;
    let dev = sim();
    let memory = memory_of(&dev);
    let core = CoreId(0);
    let n = 3000usize;
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let device = |v: &[u8], name: &str| {
        let t = Tensor::allocate_device(&memory, core, v.len() as u64, name).unwrap();
        t.write(0, v).unwrap();
        t
    };
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 500.0).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 - 333.5).collect();
    let c: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 1.5).collect();
    let (ta, tb, tc) = (device(&f32s(&a), "a"), device(&f32s(&b), "b"), device(&f32s(&c), "c"));
    let out = device(&vec![0u8; 4 * n], "out");
    fn f(t: &Tensor) -> Typed<'_> {
        Typed { tensor: t, dtype: nrt_isa::dtype::Dtype::Float32 }
    }
    let read = |t: &Tensor| read_all(t).chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect::<Vec<f32>>();
    for (op, want) in [
        (ComputeOp::Add, (0..n).map(|i| a[i] + b[i] + c[i]).collect::<Vec<f32>>()),
        (ComputeOp::Min, (0..n).map(|i| a[i].min(b[i]).min(c[i])).collect()),
        (ComputeOp::Max, (0..n).map(|i| a[i].max(b[i]).max(c[i])).collect()),
    ] {
        let before = walked(&dev, core, Direction::DeviceToDevice);
        tensor_ops::compute(op, &[f(&ta), f(&tb), f(&tc)], f(&out), n as u64).unwrap();
        assert_eq!(walked(&dev, core, Direction::DeviceToDevice) - before, 3 + 1, "{op:?}: three pattern pairs and the marker");
        assert_eq!(read(&out), want, "{op:?}");
    }
    // A count below the tensors' sizes leaves the rest alone; the first
    // source may be the destination.
    tensor_ops::compute(ComputeOp::Add, &[f(&out), f(&tc)], f(&out), 10).unwrap();
    let got = read(&out);
    assert_eq!(got[..10], (0..10).map(|i| a[i].max(b[i]).max(c[i]) + c[i]).collect::<Vec<f32>>()[..]);
    assert_eq!(got[10], a[10].max(b[10]).max(c[10]));
    // Casts round to nearest even.
    let half = Tensor::allocate_device(&memory, core, 2 * n as u64, "half").unwrap();
    tensor_ops::cast(f(&ta), Typed { tensor: &half, dtype: Dtype::Bfloat16 }, n as u64).unwrap();
    let mut want = vec![0u8; 2 * n];
    nrt_isa::dtype::f32_to_bytes(&a, Dtype::Bfloat16, &mut want, &mut nrt_isa::dtype::Rounding::NearestEven).unwrap();
    assert!(read_all(&half) == want, "bfloat16 cast");
    // Refusals.
    let other = Tensor::allocate_device(&memory, CoreId(1), 4 * n as u64, "other").unwrap();
    let e = tensor_ops::compute(ComputeOp::Add, &[f(&ta), f(&other)], f(&out), n as u64).unwrap_err();
    assert!(e.status == NrtStatus::Invalid && e.message.contains("one logical core"), "{e}");
    let e = tensor_ops::cast(f(&ta), f(&out), n as u64 + 1).unwrap_err();
    assert!(e.status == NrtStatus::Invalid && e.message.contains("fewer than"), "{e}");
    let e = tensor_ops::compute(ComputeOp::Max, &[f(&ta), f(&out)], f(&out), 4).unwrap_err();
    assert!(e.message.contains("overlaps"), "{e}");
    let host = Tensor::from_host_bytes(f32s(&a), "host");
    assert!(tensor_ops::cast(f(&host), f(&out), 4).unwrap_err().message.contains("host tensor"));
}
