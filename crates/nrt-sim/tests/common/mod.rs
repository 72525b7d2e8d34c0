//! Shared rig of the compute tests: a deterministic device, SBUF / PSUM
//! staging through device writes, programs started with `start_engine` and
//! released by a doorbell semaphore, and error-queue checks.

#![allow(dead_code)]

use nrt_hal::{ArchDesc, CoreId, Device, DeviceAddr, EngineId, MemoryLocation, NqRing, NqSpec, NqType};
use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};
use nrt_isa::instr::{EventSemaphore, Head, Instruction};
use nrt_isa::operand::{Addr4, Tensor3d, Tensor4d};
use nrt_isa::record::{Events, UpdateMode, WaitMode};
use nrt_sim::engine::RunState;
use nrt_sim::nq::record as nqr;
use nrt_sim::{FaultSpec, SimConfig, SimDevice};
use std::sync::Arc;

/// Core every test uses.
pub const C0: CoreId = CoreId(0);
/// Doorbell semaphore the host rings to release a program.
pub const DOORBELL: u8 = 1;
/// First PSUM operand address.
pub const PSUM: u32 = 0x200_0000;

/// A device with error queues on every engine.
pub struct Rig {
    /// The device.
    pub dev: SimDevice,
    /// Its architecture.
    pub arch: &'static ArchDesc,
    /// ERROR rings by engine index.
    pub errors: Vec<Arc<dyn NqRing>>,
    /// NOTIFY rings by engine index.
    pub notify: Vec<Arc<dyn NqRing>>,
}

const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };

impl Rig {
    /// A deterministic device with `faults` armed.
    pub fn new(faults: &[FaultSpec]) -> Rig {
        Rig::publishing(faults, None)
    }

    /// [`Rig::new`] publishing its status file (`docs/status-file.md`) in
    /// `status_dir`, under a namespace of its own.
    pub fn publishing(faults: &[FaultSpec], status_dir: Option<(std::path::PathBuf, &str)>) -> Rig {
        let mut b = SimConfig::builder().deterministic(true).hbm_bytes_per_channel(64 << 20);
        for f in faults {
            b = b.fault(f.clone());
        }
        if let Some((dir, ns)) = status_dir {
            b = b.status_dir(Some(dir.clone())).locks(dir, ns);
        }
        let dev = SimDevice::new(&b.build(), 0);
        let arch = dev.info().arch;
        let ring = |e: u8, ty| {
            let r = dev.alloc(HBM0, 64 * 16, 64 * 16).unwrap();
            dev.memset(r, 0, 64 * 16).unwrap();
            dev.nq_init(NqSpec { core: C0, engine_index: e, nq_type: ty, ring: r, size_bytes: 64 * 16 }).unwrap()
        };
        let errors = (0..5).map(|e| ring(e, NqType::Error)).collect();
        let notify = (0..5).map(|e| ring(e, NqType::Notify)).collect();
        Rig { dev, arch, errors, notify }
    }

    fn sbuf_at(&self, partition: usize, offset: usize) -> DeviceAddr {
        self.arch.sbuf_addr(C0).offset(partition as u64 * self.arch.sbuf_partition_bytes + offset as u64)
    }

    fn psum_at(&self, partition: usize, offset: usize) -> DeviceAddr {
        self.arch.psum_addr(C0).offset(partition as u64 * self.arch.psum_partition_bytes + offset as u64)
    }

    /// Writes `bytes` into SBUF partition `p` at `offset`.
    pub fn write_sbuf(&self, p: usize, offset: usize, bytes: &[u8]) {
        self.dev.write(self.sbuf_at(p, offset), bytes).unwrap();
    }

    /// Reads `len` bytes of SBUF partition `p` at `offset`.
    pub fn read_sbuf(&self, p: usize, offset: usize, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        self.dev.read(self.sbuf_at(p, offset), &mut b).unwrap();
        b
    }

    /// Writes `bytes` into PSUM partition `p` at `offset`.
    pub fn write_psum(&self, p: usize, offset: usize, bytes: &[u8]) {
        self.dev.write(self.psum_at(p, offset), bytes).unwrap();
    }

    /// Reads `len` bytes of PSUM partition `p` at `offset`.
    pub fn read_psum(&self, p: usize, offset: usize, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        self.dev.read(self.psum_at(p, offset), &mut b).unwrap();
        b
    }

    /// Stages the rows of `values` (one per partition) as `dt` at `offset`.
    pub fn stage(&self, offset: usize, dt: Dtype, values: &[Vec<f32>]) {
        for (p, row) in values.iter().enumerate() {
            self.write_sbuf(p, offset, &encode(row, dt));
        }
    }

    /// Reads `partitions x n` elements of `dt` from SBUF at `offset`.
    pub fn sbuf_values(&self, offset: usize, dt: Dtype, partitions: usize, n: usize) -> Vec<Vec<f32>> {
        (0..partitions).map(|p| decode(&self.read_sbuf(p, offset, n * dt.size_bytes()), dt)).collect()
    }

    /// Reads `partitions x n` elements of `dt` from PSUM at `offset`.
    pub fn psum_values(&self, offset: usize, dt: Dtype, partitions: usize, n: usize) -> Vec<Vec<f32>> {
        (0..partitions).map(|p| decode(&self.read_psum(p, offset, n * dt.size_bytes()), dt)).collect()
    }

    /// Loads `instrs` (behind a doorbell wait) on `engine` and starts it.
    pub fn load(&self, engine: EngineId, instrs: &[Instruction]) {
        let mut bytes = doorbell().encode().to_vec();
        for i in instrs {
            bytes.extend_from_slice(&i.encode());
        }
        self.load_bytes(engine, &bytes);
    }

    /// Loads raw records (no doorbell added) on `engine` and starts it.
    pub fn load_bytes(&self, engine: EngineId, bytes: &[u8]) {
        let a = self.dev.alloc(HBM0, bytes.len() as u64, 64).unwrap();
        self.dev.write(a, bytes).unwrap();
        self.dev.start_engine(C0, engine, a, bytes.len() as u64).unwrap();
    }

    /// Rings the doorbell (deterministic mode runs the engines to
    /// quiescence on this thread).
    pub fn ring(&self) {
        self.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    }

    /// Error records written so far, over all engines.
    pub fn error_records(&self) -> Vec<[u8; 16]> {
        let mut all = Vec::new();
        for r in &self.errors {
            let mut out = vec![[0u8; 16]; 64];
            let n = r.read(0, &mut out);
            out.truncate(n);
            all.extend(out);
        }
        all
    }

    /// Notification records of `engine`'s NOTIFY ring.
    pub fn notify_records(&self, engine: EngineId) -> Vec<[u8; 16]> {
        let mut out = vec![[0u8; 16]; 64];
        let n = self.notify[engine.index()].read(0, &mut out);
        out.truncate(n);
        out
    }

    /// Asserts `engine` ran off the end of its stream without any error record.
    pub fn assert_clean(&self, engine: EngineId) {
        let errs: Vec<_> = self.error_records().iter().filter_map(nqr::decode_error).collect();
        assert!(errs.is_empty(), "unexpected error records: {errs:?}");
        assert_eq!(self.dev.engine_state(C0, engine), Some(RunState::Idle), "{engine} did not finish");
    }

    /// Runs one program on `engine` and asserts it finished cleanly.
    pub fn run(&self, engine: EngineId, instrs: &[Instruction]) {
        self.load(engine, instrs);
        self.ring();
        self.assert_clean(engine);
    }
}

/// EVENT_SEMAPHORE: wait for the doorbell and take it (issue-time subtract).
pub fn doorbell() -> Instruction {
    let events = Events {
        wait_mode: WaitMode::SemGeImm,
        wait_idx: DOORBELL,
        update_mode: UpdateMode::from_u8(7),
        update_idx: DOORBELL,
        value: 1,
    };
    EventSemaphore { head: Head::with_events(events), ..Default::default() }.into()
}

/// `values` encoded as `dt` (round-to-nearest-even).
pub fn encode(values: &[f32], dt: Dtype) -> Vec<u8> {
    let mut b = vec![0u8; values.len() * dt.size_bytes()];
    f32_to_bytes(values, dt, &mut b, &mut Rounding::NearestEven).unwrap();
    b
}

/// Elements of `dt` decoded to f32.
pub fn decode(bytes: &[u8], dt: Dtype) -> Vec<f32> {
    let mut v = vec![0f32; bytes.len() / dt.size_bytes()];
    bytes_to_f32(bytes, dt, &mut v).unwrap();
    v
}

/// `v` rounded to `dt` and back (what storing it does).
pub fn quantize(v: f32, dt: Dtype) -> f32 {
    decode(&encode(&[v], dt), dt)[0]
}

/// Deterministic pseudo-random values in `[-range, range)`.
pub fn values(seed: u64, n: usize, range: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * range
        })
        .collect()
}

/// A `partitions x n` matrix of pseudo-random values quantized to `dt`.
pub fn matrix(seed: u64, partitions: usize, n: usize, range: f32, dt: Dtype) -> Vec<Vec<f32>> {
    (0..partitions).map(|p| values(seed * 1000 + p as u64, n, range).into_iter().map(|v| quantize(v, dt)).collect()).collect()
}

/// A unit-step TENSOR3D of `n` elements at `addr`.
pub fn t3(addr: u32, n: u16) -> Tensor3d {
    Tensor3d { start: Addr4(addr), step: [1, 0, 0], num: [n, 1, 1] }
}

/// A unit-step TENSOR4D of `n` elements at `addr`.
pub fn t4(addr: u32, n: u16) -> Tensor4d {
    Tensor4d { start: Addr4(addr), step: [1, 1, 1, 1], num: [n, 1, 1, 1] }
}

/// Asserts `got` and `want` agree within `tol` relative (plus `tol` absolute).
pub fn assert_close(got: &[Vec<f32>], want: &[Vec<f32>], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: partition count");
    for (p, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.len(), w.len(), "{what}: row {p} length");
        for (j, (a, b)) in g.iter().zip(w).enumerate() {
            let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs());
            assert!(ok, "{what}: [{p}][{j}] got {a}, expected {b}");
        }
    }
}
