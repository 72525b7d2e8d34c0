//! Notification queues: the rings the device writes and the runtime polls.
//!
//! Records are the 16-byte hardware notification of `seed-siblings` §6.8
//! (laid out by [`record`]); the ring is caller-allocated device or host
//! memory. The producer writes a record's bytes into ring memory first and
//! then publishes the advanced tail with `Release`; the consumer loads the
//! tail with `Acquire` (see [`nrt_hal::NqRing`]). The ring is lossy: a
//! producer that laps the consumer overwrites the oldest record and raises
//! the software-overflow flag (the INTC bit-29 probe), and every later
//! record carries the overflow bit in its header byte.

use nrt_hal::{DeviceAddr, HalResult, NqRing, NqSpec, NQ_RECORD_BYTES};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Byte-level access to ring memory, implemented by the device.
pub trait RingMemory: Send + Sync {
    /// Reads device bytes.
    fn read_ring(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()>;
    /// Writes device bytes (plain memory, no register side effects).
    fn write_ring(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()>;
}

/// Encoding of the 16-byte notification record.
pub mod record {
    /// `notific_type`: a DMA record.
    pub const TYPE_DMA: u8 = 0x02;
    /// `notific_type`: an error record.
    pub const TYPE_ERROR: u8 = 0x03;
    /// `notific_type` of engine `e`'s INST_START records; +1 END, +2
    /// EXPLICIT (NOTIFY), +3 EVT_SEM.
    pub const fn engine_type_base(engine: u8) -> u8 {
        0x04 + 4 * engine
    }
    /// Runtime subtype (u16 at +6): execution start.
    pub const SUBTYPE_START: u16 = 2;
    /// Runtime subtype: execution end.
    pub const SUBTYPE_END: u16 = 3;
    /// Runtime subtype: custom notification (sub-id at +4).
    pub const SUBTYPE_CUSTOM: u16 = 6;
    /// Error subtype (u16 at +6 of an error record): NaN / Inf produced.
    pub const ERR_NUMERICAL: u16 = 1;
    /// Error subtype: transient error.
    pub const ERR_TRANSIENT: u16 = 2;
    /// Error subtype: sequencer fault (bad fetch, unsupported wait/update
    /// mode or instruction).
    pub const ERR_SW_SEQUENCER: u16 = 8;
    /// Error subtype (ours): uncorrectable HBM error.
    pub const ERR_HBM_UE: u16 = 16;
    /// Error subtype (ours): uncorrectable HBM error, repairable.
    pub const ERR_HBM_UE_REPAIRABLE: u16 = 17;
    /// Error subtype (ours): on-chip SRAM parity error.
    pub const ERR_SRAM_PARITY: u16 = 18;
    /// Error subtype (ours): DMA queue aborted (meta = queue index).
    pub const ERR_DMA_ABORT: u16 = 19;
    /// Error subtype (ours): unsupported instruction (meta = opcode).
    pub const ERR_UNSUPPORTED_INSTRUCTION: u16 = 20;
    /// Custom sub-id of an out-of-bounds indirect copy (runtime table §6.4).
    pub const CUSTOM_OOB_INDIRECT: u16 = 2;
    /// Header-byte bit: software queue overflowed.
    pub const SW_OVERFLOW_BIT: u8 = 1 << 5;
    /// Header-byte bit: phase.
    pub const PHASE_BIT: u8 = 1 << 7;

    /// Builds a record: 20-bit program counter (instruction index) in bits
    /// 19:0, debug hint in bits 23:20, `notific_type` in byte 3 bits 4:0,
    /// `meta` (custom sub-id / error detail) at +4, `subtype` at +6 and the
    /// timestamp in picoseconds at +8. Phase and overflow bits are added by
    /// the ring.
    pub fn build(notific_type: u8, pc: u64, debug_hint: u8, meta: u16, subtype: u16, timestamp_ps: u64) -> [u8; 16] {
        let mut r = [0u8; 16];
        let pc = (pc & 0xF_FFFF) as u32;
        let word0 = pc | (u32::from(debug_hint & 0xF) << 20) | (u32::from(notific_type & 0x1F) << 24);
        r[0..4].copy_from_slice(&word0.to_le_bytes());
        r[4..6].copy_from_slice(&meta.to_le_bytes());
        r[6..8].copy_from_slice(&subtype.to_le_bytes());
        r[8..16].copy_from_slice(&timestamp_ps.to_le_bytes());
        r
    }

    /// The `notific_type` of a record.
    pub fn notific_type(r: &[u8; 16]) -> u8 {
        r[3] & 0x1F
    }
    /// The program counter of a record.
    pub fn pc(r: &[u8; 16]) -> u32 {
        u32::from_le_bytes([r[0], r[1], r[2], 0]) & 0xF_FFFF
    }
    /// The custom sub-id / error detail.
    pub fn meta(r: &[u8; 16]) -> u16 {
        u16::from_le_bytes([r[4], r[5]])
    }
    /// The runtime subtype.
    pub fn subtype(r: &[u8; 16]) -> u16 {
        u16::from_le_bytes([r[6], r[7]])
    }
    /// The timestamp in picoseconds.
    pub fn timestamp(r: &[u8; 16]) -> u64 {
        u64::from_le_bytes([r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]])
    }
    /// The phase bit.
    pub fn phase(r: &[u8; 16]) -> bool {
        r[3] & PHASE_BIT != 0
    }
}

/// Producer-side state of one ring.
#[derive(Debug)]
pub struct NqState {
    spec: NqSpec,
    capacity: u32,
    produced: AtomicU64,
    consumed: AtomicU64,
    overflow: AtomicBool,
    /// Set by fault injection: drop the next record and flag overflow.
    force_overflow: AtomicBool,
    /// Cleared when the queue is destroyed; records are then dropped.
    enabled: AtomicBool,
    producer: Mutex<()>,
}

impl NqState {
    /// A ring for `spec` (the caller checked that the size is a power of
    /// two and a multiple of 16).
    pub fn new(spec: NqSpec) -> NqState {
        NqState {
            spec,
            capacity: spec.size_bytes / NQ_RECORD_BYTES as u32,
            produced: AtomicU64::new(0),
            consumed: AtomicU64::new(0),
            overflow: AtomicBool::new(false),
            force_overflow: AtomicBool::new(false),
            enabled: AtomicBool::new(true),
            producer: Mutex::new(()),
        }
    }

    /// The queue's identity.
    pub fn spec(&self) -> NqSpec {
        self.spec
    }

    /// Stops accepting records.
    pub fn disable(&self) {
        self.enabled.store(false, Ordering::Release);
    }

    /// Makes the next record overflow (dropped, flag raised).
    pub fn inject_overflow(&self) {
        self.force_overflow.store(true, Ordering::Release);
    }

    /// Writes one record (adding phase and overflow bits) and publishes it.
    /// Returns `false` if the record was dropped.
    pub fn push(&self, mem: &dyn RingMemory, mut rec: [u8; 16]) -> bool {
        if !self.enabled.load(Ordering::Acquire) || self.capacity == 0 {
            return false;
        }
        let _guard = self.producer.lock().unwrap_or_else(|e| e.into_inner());
        if self.force_overflow.swap(false, Ordering::AcqRel) {
            self.overflow.store(true, Ordering::Release);
            return false;
        }
        let idx = self.produced.load(Ordering::Relaxed);
        let cap = u64::from(self.capacity);
        if idx - self.consumed.load(Ordering::Acquire).min(idx) >= cap {
            self.overflow.store(true, Ordering::Release);
        }
        if self.overflow.load(Ordering::Acquire) {
            rec[3] |= record::SW_OVERFLOW_BIT;
        }
        if (idx / cap + 1) & 1 == 1 {
            rec[3] |= record::PHASE_BIT;
        } else {
            rec[3] &= !record::PHASE_BIT;
        }
        let slot = self.spec.ring.offset((idx % cap) * NQ_RECORD_BYTES as u64);
        if mem.write_ring(slot, &rec).is_err() {
            // The ring memory vanished under us: the hardware would raise an
            // AXI write error; we drop the record and flag the queue.
            self.overflow.store(true, Ordering::Release);
            return false;
        }
        self.produced.store(idx + 1, Ordering::Release);
        true
    }
}

/// The runtime's mapped view of a ring.
pub struct NqView {
    state: Arc<NqState>,
    mem: Arc<dyn RingMemory>,
}

impl NqView {
    /// A view of `state` reading ring bytes through `mem`.
    pub fn new(state: Arc<NqState>, mem: Arc<dyn RingMemory>) -> NqView {
        NqView { state, mem }
    }
}

impl NqRing for NqView {
    fn spec(&self) -> NqSpec {
        self.state.spec
    }
    fn capacity(&self) -> u32 {
        self.state.capacity
    }
    fn produced(&self) -> u64 {
        self.state.produced.load(Ordering::Acquire)
    }
    fn consumed(&self) -> u64 {
        self.state.consumed.load(Ordering::Acquire)
    }
    fn set_consumed(&self, count: u64) {
        self.state.consumed.store(count, Ordering::Release);
    }
    fn read(&self, from: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let produced = self.produced();
        let cap = u64::from(self.state.capacity);
        let start = from.max(produced.saturating_sub(cap));
        let end = produced.min(start + out.len() as u64);
        let mut n = 0;
        for idx in start..end {
            let slot = self.state.spec.ring.offset((idx % cap) * NQ_RECORD_BYTES as u64);
            if self.mem.read_ring(slot, &mut out[n]).is_err() {
                break;
            }
            n += 1;
        }
        n
    }
    fn overflowed(&self) -> bool {
        self.state.overflow.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::{CoreId, NqType};
    use proptest::prelude::*;

    struct Flat(Mutex<Vec<u8>>);
    impl RingMemory for Flat {
        fn read_ring(&self, a: DeviceAddr, b: &mut [u8]) -> HalResult<()> {
            let m = self.0.lock().unwrap();
            b.copy_from_slice(&m[a.get() as usize..a.get() as usize + b.len()]);
            Ok(())
        }
        fn write_ring(&self, a: DeviceAddr, d: &[u8]) -> HalResult<()> {
            self.0.lock().unwrap()[a.get() as usize..a.get() as usize + d.len()].copy_from_slice(d);
            Ok(())
        }
    }

    fn spec(cap: u32) -> NqSpec {
        NqSpec { core: CoreId(0), engine_index: 0, nq_type: NqType::Notify, ring: DeviceAddr(0), size_bytes: cap * 16 }
    }

    #[test]
    fn record_fields_roundtrip() {
        let r = record::build(0x15, 0xABCDE, 1, 7, record::SUBTYPE_END, 123_456);
        assert_eq!(record::notific_type(&r), 0x15);
        assert_eq!(record::pc(&r), 0xABCDE);
        assert_eq!(r[2] >> 4, 1);
        assert_eq!(record::meta(&r), 7);
        assert_eq!(record::subtype(&r), 3);
        assert_eq!(record::timestamp(&r), 123_456);
    }

    #[test]
    fn forced_overflow_drops_one_record() {
        let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; 64])));
        let s = Arc::new(NqState::new(spec(4)));
        s.inject_overflow();
        assert!(!s.push(&*mem, record::build(4, 0, 0, 0, 2, 0)));
        assert!(s.push(&*mem, record::build(4, 1, 0, 0, 2, 0)));
        let v = NqView::new(s, mem);
        assert!(v.overflowed());
        let mut out = [[0u8; 16]; 4];
        assert_eq!(v.read(0, &mut out), 1);
        assert_ne!(out[0][3] & record::SW_OVERFLOW_BIT, 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn consumer_sees_every_record_in_order_with_phase(cap_log in 0u32..5, batches in prop::collection::vec(1usize..6, 1..20)) {
            let cap = 1u32 << cap_log;
            let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; cap as usize * 16])));
            let st = Arc::new(NqState::new(spec(cap)));
            let view = NqView::new(st.clone(), mem.clone());
            let mut next = 0u64;
            let mut seen = 0u64;
            for b in batches {
                let b = b.min(cap as usize);
                for _ in 0..b {
                    prop_assert!(st.push(&*mem, record::build(4, next, 0, 0, 2, next)));
                    next += 1;
                }
                let mut out = vec![[0u8; 16]; 8];
                let n = view.read(seen, &mut out);
                prop_assert_eq!(n, b);
                for (k, r) in out[..n].iter().enumerate() {
                    let idx = seen + k as u64;
                    prop_assert_eq!(record::timestamp(r), idx);
                    prop_assert_eq!(record::phase(r), (idx / u64::from(cap)).is_multiple_of(2));
                }
                seen += n as u64;
                view.set_consumed(seen);
            }
            prop_assert!(!view.overflowed());
        }
    }
}
