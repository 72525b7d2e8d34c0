//! A rig for the Q7 tests: a device whose core 0 has an installed image,
//! POOL notify/error rings, and helpers that build the micro-program the
//! runtime lowers a custom op into.
#![allow(dead_code)]

pub mod kernels;

use nrt_hal::arch::EVT_SEM_SEM_INC;
use nrt_hal::conformance::wait_until;
use nrt_hal::{CoreId, Device, DeviceAddr, EngineId, MemoryLocation, NqRing, NqSpec, NqType};
use nrt_isa::instr::slots::{drain_slot, load_pool_argument_slot};
use nrt_isa::instr::{ExtendedInst, Head};
use nrt_isa::notification::{ErrorRecord, NotificationRecord, RuntimeSubtype};
use nrt_isa::ucode::{ArgBlock, ArgKind, ArgTensor, LibraryImage, csr, isa_dtype};
use nrt_sim::engine::RunState;
use nrt_sim::{SimConfig, SimDevice};
use std::sync::Arc;

pub const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };
pub const C0: CoreId = CoreId(0);
/// Semaphore the op's completion increments.
pub const DONE_SEM: u32 = 7;

pub struct Rig {
    pub dev: SimDevice,
    pub notify: Arc<dyn NqRing>,
    pub errors: Arc<dyn NqRing>,
}

impl Rig {
    pub fn new(deterministic: bool) -> Rig {
        let cfg = SimConfig::builder().deterministic(deterministic).hbm_bytes_per_channel(256 << 20).build();
        let dev = SimDevice::new(&cfg, 0);
        let ring = |ty| {
            let r = dev.alloc(HBM0, 4096, 4096).unwrap();
            dev.nq_init(NqSpec { core: C0, engine_index: EngineId::Pool.index() as u8, nq_type: ty, ring: r, size_bytes: 4096 }).unwrap()
        };
        let notify = ring(NqType::Notify);
        let errors = ring(NqType::Error);
        Rig { dev, notify, errors }
    }

    pub fn arch(&self) -> &'static nrt_hal::ArchDesc {
        self.dev.info().arch
    }

    pub fn csr_addr(&self, off: u64) -> DeviceAddr {
        self.arch().q7_csr_addr(C0).offset(off)
    }

    pub fn csr(&self, off: u64) -> u32 {
        let mut w = [0u8; 4];
        self.dev.read(self.csr_addr(off), &mut w).unwrap();
        u32::from_le_bytes(w)
    }

    pub fn set_csr(&self, off: u64, v: u32) {
        self.dev.write(self.csr_addr(off), &v.to_le_bytes()).unwrap();
    }

    /// Writes `lib` to all 8 Q7 cores (DRAM before IRAM) and releases them.
    pub fn install(&self, lib: &LibraryImage) {
        for q in 0..8 {
            self.dev.write(self.arch().q7_dram_addr(C0, q), &lib.dram()).unwrap();
            self.dev.write(self.arch().q7_iram_addr(C0, q), &lib.iram()).unwrap();
        }
        self.set_csr(csr::RUN_STALL, 0);
    }

    /// Gives Q7 core 0 a zeroed stdout ring of `capacity` entries (the
    /// stdio table in HBM, its CSRs set) and returns the ring's data
    /// address, where the first printed entry lands.
    pub fn install_stdout_ring(&self, capacity: u32) -> DeviceAddr {
        use nrt_isa::ucode::stdio::{STDIO_DESC_BYTES, TAG_STDOUT};
        use nrt_isa::ucode::{STDIO_ENTRY_BYTES, StdioQueueDesc};
        let table = self.dev.alloc(HBM0, 1024, 64).unwrap();
        self.dev.memset(table, 0, 1024).unwrap();
        let bytes = u64::from(capacity) * STDIO_ENTRY_BYTES + 4;
        let data = self.dev.alloc(HBM0, bytes, 64).unwrap();
        self.dev.memset(data, 0, bytes).unwrap();
        let d = StdioQueueDesc { q7: 0, tag: TAG_STDOUT, capacity, data_addr: data.get(), read_counter_addr: self.put(&[0; 4]).get() };
        self.dev.write(table.offset(StdioQueueDesc::table_index(0, false) as u64 * STDIO_DESC_BYTES as u64), &d.encode()).unwrap();
        self.set_csr(csr::STDIO_LO, table.get() as u32);
        self.set_csr(csr::STDIO_HI, (table.get() >> 32) as u32);
        data
    }

    pub fn put(&self, bytes: &[u8]) -> DeviceAddr {
        let a = self.dev.alloc(HBM0, bytes.len().max(1) as u64, 64).unwrap();
        self.dev.write(a, bytes).unwrap();
        a
    }

    pub fn put_f32(&self, v: &[f32]) -> DeviceAddr {
        self.put(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
    }

    pub fn get(&self, at: DeviceAddr, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        self.dev.read(at, &mut b).unwrap();
        b
    }

    pub fn get_f32(&self, at: DeviceAddr, n: usize) -> Vec<f32> {
        self.get(at, 4 * n).chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    /// fp32 tensor descriptor.
    pub fn f32_tensor(at: DeviceAddr, dims: &[u32]) -> ArgTensor {
        ArgTensor::hbm(at.get(), isa_dtype::FP32, dims)
    }

    /// The POOL program of one custom op: LOAD_POOL_ARGUMENT (block at
    /// `sbuf_base`), EXTENDED_INST `spec`, DRAIN.
    pub fn op_program(&self, args: &ArgBlock, spec: u8, one_value: Option<u32>) -> Vec<[u8; 64]> {
        let block = self.put(&args.encode());
        let one = one_value.map_or(0, |v| self.put(&v.to_le_bytes()).get());
        let done = self.arch().semaphore_addr(C0, EVT_SEM_SEM_INC, DONE_SEM).get();
        let ext = ExtendedInst { head: Head::default(), spec, ..ExtendedInst::default() }.encode();
        vec![load_pool_argument_slot(0, block.get(), one, done, None), ext, drain_slot(None)]
    }

    /// Runs a POOL program and waits for the engine to stop (END or halt)
    /// or, with `expect_stuck`, returns while it is still waiting.
    pub fn run(&self, program: &[[u8; 64]]) {
        let bytes: Vec<u8> = program.iter().flatten().copied().collect();
        let at = self.put(&bytes);
        self.dev.start_engine(C0, EngineId::Pool, at, bytes.len() as u64).unwrap();
        wait_until("the POOL engine to stop", || self.pool_state() != RunState::Running);
    }

    /// Starts a POOL program without waiting.
    pub fn start(&self, program: &[[u8; 64]]) {
        let bytes: Vec<u8> = program.iter().flatten().copied().collect();
        let at = self.put(&bytes);
        self.dev.start_engine(C0, EngineId::Pool, at, bytes.len() as u64).unwrap();
    }

    pub fn pool_state(&self) -> RunState {
        self.dev.engine_state(C0, EngineId::Pool).unwrap()
    }

    pub fn done_count(&self) -> i32 {
        self.dev.semaphore_read(C0, DONE_SEM).unwrap()
    }

    /// Every record on the POOL error ring so far, decoded.
    pub fn error_records(&self) -> Vec<ErrorRecord> {
        let mut out = vec![[0u8; 16]; 64];
        let n = self.errors.read(0, &mut out);
        out[..n].iter().map(|r| ErrorRecord::from_record(&NotificationRecord::from_bytes(r)).unwrap()).collect()
    }

    /// Runtime subtypes on the POOL notify ring so far.
    pub fn notify_subtypes(&self) -> Vec<Option<RuntimeSubtype>> {
        let mut out = vec![[0u8; 16]; 64];
        let n = self.notify.read(0, &mut out);
        out[..n].iter().map(|r| NotificationRecord::from_bytes(r).runtime_subtype()).collect()
    }

    /// A block with positional tensors and a destination.
    pub fn block(args: Vec<ArgTensor>, dst: Option<ArgTensor>) -> ArgBlock {
        ArgBlock { args: args.into_iter().map(|t| (ArgKind::Tensor, t)).collect(), dst }
    }
}
