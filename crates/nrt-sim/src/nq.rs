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

use crate::memory::pages::PinnedRange;
use nrt_hal::{DeviceAddr, HalResult, NqRing, NqSpec, NQ_RECORD_BYTES};
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The interrupt line of a core's notification queues: a counter every
/// record written to one of the core's rings advances, and a condition
/// variable host waiters block on (the driver's interrupt + `poll()`).
/// A producer only touches the lock when a waiter is registered, so
/// writing a record with nobody waiting costs two atomic operations.
#[derive(Debug, Default)]
pub struct NqSignal {
    count: AtomicU64,
    waiters: AtomicU32,
    lock: Mutex<()>,
    wake: Condvar,
}

impl NqSignal {
    /// The current count.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Advances the count and wakes the waiters (called after a record is
    /// published).
    pub fn raise(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        // Dekker pairing with `wait`: the waiter registers before it reads
        // the count, the producer advances the count before it reads the
        // waiter count, so at least one side sees the other.
        if self.waiters.load(Ordering::SeqCst) > 0 {
            drop(self.lock.lock().unwrap_or_else(|e| e.into_inner()));
            self.wake.notify_all();
        }
    }

    /// Blocks until the count differs from `seen` or `timeout` passes;
    /// returns the count. Allocation-free.
    pub fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = self.count.load(Ordering::SeqCst);
            let left = deadline.saturating_duration_since(Instant::now());
            if now != seen || left.is_zero() {
                drop(guard);
                self.waiters.fetch_sub(1, Ordering::SeqCst);
                return now;
            }
            guard = self.wake.wait_timeout(guard, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

/// Byte-level access to ring memory, implemented by the device.
pub trait RingMemory: Send + Sync {
    /// Reads device bytes.
    fn read_ring(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()>;
    /// Writes device bytes (plain memory, no register side effects).
    fn write_ring(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()>;
}

/// Building and reading the 16-byte records, on top of
/// `nrt_isa::notification` (one layout shared with the runtime's decoder).
pub mod record {
    use nrt_isa::notification::{
        CustomSubId, EngineEvent, ErrorRecord, InferErrorSubtype, NotificType, NotificationRecord, NqEngine,
        RuntimeSubtype,
    };

    /// Header-byte bit: software queue overflowed.
    pub const SW_OVERFLOW_BIT: u8 = 1 << 5;
    /// Header-byte bit: phase.
    pub const PHASE_BIT: u8 = 1 << 7;

    /// The record's bytes, the program counter cut to its 20 bits and the
    /// debug hint to its 4 (every `notific_type` here is a
    /// [`NotificType`] code, which fits its 5 bits).
    #[inline]
    fn bytes(r: NotificationRecord) -> [u8; 16] {
        r.to_bytes_truncated()
    }

    fn nq_engine(engine: u8) -> NqEngine {
        NqEngine::from_index(engine).unwrap_or(NqEngine::Sp)
    }

    /// The `notific_type` codes of one engine's START/END and explicit
    /// records, worked out once (a sequencer keeps them), so writing one
    /// of those records maps no engine or event.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct EngineKinds {
        /// INST_START of the engine.
        pub start: u8,
        /// INST_END of the engine.
        pub end: u8,
        /// The engine's explicit (NOTIFY) records.
        pub explicit: u8,
    }

    impl EngineKinds {
        /// The codes of the engine of NQ index `engine` (as
        /// [`infer_status`] and [`explicit`] map it).
        pub fn of(engine: u8) -> EngineKinds {
            let kind = |event| NotificType::for_engine(nq_engine(engine), event).code();
            EngineKinds { start: kind(EngineEvent::InstStart), end: kind(EngineEvent::InstEnd), explicit: kind(EngineEvent::Explicit) }
        }
    }

    /// A record of type code `kind` with `metadata_2` (subtype in the
    /// high half, custom sub-id in the low half for the infer-status and
    /// explicit records).
    #[inline]
    pub fn engine_record(kind: u8, metadata_2: u32, pc: u64, hint: u8, ts: u64) -> [u8; 16] {
        bytes(NotificationRecord {
            program_counter: (pc & 0xF_FFFF) as u32,
            debug_hint: hint,
            notific_type: kind,
            metadata_2,
            timestamp_ps: ts,
            ..Default::default()
        })
    }

    /// `metadata_2` of a record with runtime subtype `subtype` and custom
    /// sub-id `sub_id`.
    #[inline]
    pub fn subtype_word(subtype: u16, sub_id: u16) -> u32 {
        (u32::from(subtype) << 16) | u32::from(sub_id)
    }

    /// An infer-status record (START, END, CUSTOM) of an engine event.
    #[inline]
    pub fn infer_status(engine: u8, event: EngineEvent, subtype: RuntimeSubtype, sub_id: u16, pc: u64, hint: u8, ts: u64) -> [u8; 16] {
        let kind = NotificType::for_engine(nq_engine(engine), event);
        let mut r = NotificationRecord::infer_status(kind, subtype, sub_id, (pc & 0xF_FFFF) as u32, ts);
        r.debug_hint = hint;
        bytes(r)
    }

    /// An explicit (NOTIFY) record of `engine` with a raw runtime subtype
    /// and custom sub-id.
    #[inline]
    pub fn explicit(engine: u8, subtype: u16, sub_id: u16, pc: u64, hint: u8, ts: u64) -> [u8; 16] {
        let kind = NotificType::for_engine(nq_engine(engine), EngineEvent::Explicit);
        engine_record(kind.code(), subtype_word(subtype, sub_id), pc, hint, ts)
    }

    /// A per-instruction trace record (INST_START / INST_END of the
    /// engine) carrying the opcode in `metadata_2`.
    pub fn trace(engine: u8, event: EngineEvent, opcode: u8, pc: u64, hint: u8, ts: u64) -> [u8; 16] {
        let kind = NotificType::for_engine(nq_engine(engine), event);
        bytes(NotificationRecord {
            program_counter: (pc & 0xF_FFFF) as u32,
            debug_hint: hint,
            notific_type: kind.code(),
            metadata_2: u32::from(opcode),
            timestamp_ps: ts,
            ..Default::default()
        })
    }

    /// A DMA trace record (layout of `nrt_isa::notification::dma`):
    /// packet completion of queue `queue` (core-relative index) after
    /// `descriptor` (free-running TX index), `moved` bytes, at `ts`.
    pub fn dma(queue: u16, descriptor: u64, moved: u64, ts: u64) -> [u8; 16] {
        dma_edge(queue, descriptor, moved, ts, nrt_isa::notification::DmaEdge::End)
    }

    /// The start record of the same packet: it began at `ts`.
    pub fn dma_start(queue: u16, descriptor: u64, moved: u64, ts: u64) -> [u8; 16] {
        dma_edge(queue, descriptor, moved, ts, nrt_isa::notification::DmaEdge::Start)
    }

    fn dma_edge(queue: u16, descriptor: u64, moved: u64, ts: u64, edge: nrt_isa::notification::DmaEdge) -> [u8; 16] {
        let c = nrt_isa::notification::DmaCompletion { queue: queue as u8, descriptor: (descriptor & 0xF_FFFF) as u32, bytes: moved, timestamp_ps: ts, edge };
        bytes(c.to_record())
    }

    /// An error record (layout of `nrt_isa::notification::error`).
    pub fn error(engine: Option<u8>, pc: u64, subtype: InferErrorSubtype, detail: u16, ts: u64) -> [u8; 16] {
        let e = ErrorRecord {
            kind: NotificType::Error,
            program_counter: (pc & 0xF_FFFF) as u32,
            subtype,
            engine: engine.and_then(NqEngine::from_index),
            detail,
            timestamp_ps: ts,
        };
        bytes(e.to_record())
    }

    /// Decodes a record.
    pub fn decode(r: &[u8; 16]) -> NotificationRecord {
        NotificationRecord::from_bytes(r)
    }

    /// Decodes an error record (`None` if it is not one).
    pub fn decode_error(r: &[u8; 16]) -> Option<ErrorRecord> {
        ErrorRecord::from_record(&decode(r)).ok()
    }

    /// The custom sub-id the OOB fault reports.
    pub const OOB_SUB_ID: CustomSubId = CustomSubId::IndirectCopyOob;
}

/// Producer-side state of one ring.
#[derive(Debug)]
pub struct NqState {
    spec: NqSpec,
    capacity: u32,
    /// log2 of `capacity` when it is a power of two (every ring the
    /// device accepts): slot and pass of a record index by shift and mask
    /// instead of two 64-bit divisions per record.
    capacity_log2: Option<u32>,
    produced: AtomicU64,
    consumed: AtomicU64,
    /// The ring's rare conditions as one word ([`rare`] bits: destroyed,
    /// an injected overflow pending, overflowed), so an ordinary push
    /// tests one load for all of them.
    rare: AtomicU8,
    producer: Mutex<()>,
    signal: Arc<NqSignal>,
    /// The ring's bytes resolved once at init (the page-table lookup of
    /// every record write and read skipped); `None`: through [`RingMemory`].
    pinned: Option<PinnedRange>,
}

/// The bits of [`NqState`]'s `rare` word.
mod rare {
    /// The queue was destroyed: records are dropped.
    pub const DISABLED: u8 = 1;
    /// Set by fault injection: drop the next record and flag overflow.
    pub const FORCE_OVERFLOW: u8 = 2;
    /// The ring overflowed (lapped, forced, or its memory vanished):
    /// every later record carries the software-overflow bit.
    pub const OVERFLOWED: u8 = 4;
}

impl NqState {
    /// A ring for `spec` (the caller checked that the size is a power of
    /// two and a multiple of 16).
    pub fn new(spec: NqSpec) -> NqState {
        NqState::with_signal(spec, Arc::default())
    }

    /// A ring raising `signal` (its core's interrupt line) on every record.
    pub fn with_signal(spec: NqSpec, signal: Arc<NqSignal>) -> NqState {
        NqState {
            spec,
            capacity: spec.size_bytes / NQ_RECORD_BYTES as u32,
            capacity_log2: {
                let c = spec.size_bytes / NQ_RECORD_BYTES as u32;
                c.is_power_of_two().then(|| c.trailing_zeros())
            },
            produced: AtomicU64::new(0),
            consumed: AtomicU64::new(0),
            rare: AtomicU8::new(0),
            producer: Mutex::new(()),
            signal,
            pinned: None,
        }
    }

    /// The same ring with its bytes accessed through `ring` (the ring's
    /// whole memory, resolved by the device). A pin of the wrong length is
    /// ignored.
    pub fn pinned_to(mut self, ring: PinnedRange) -> NqState {
        if ring.len() == self.spec.size_bytes as usize {
            self.pinned = Some(ring);
        }
        self
    }

    /// The ring slot of record `idx` and the producer's pass over the
    /// ring it belongs to (`capacity` is not zero).
    #[inline]
    fn slot_and_pass(&self, idx: u64) -> (u64, u64) {
        match self.capacity_log2 {
            Some(s) => (idx & ((1u64 << s) - 1), idx >> s),
            None => (idx % u64::from(self.capacity), idx / u64::from(self.capacity)),
        }
    }

    fn read_slot(&self, mem: &dyn RingMemory, idx: u64, out: &mut [u8; 16]) -> bool {
        let off = self.slot_and_pass(idx).0 * NQ_RECORD_BYTES as u64;
        if let Some(p) = &self.pinned
            && p.read_array(off as usize, out).is_some()
        {
            return true;
        }
        mem.read_ring(self.spec.ring.offset(off), out).is_ok()
    }

    /// The queue's identity.
    pub fn spec(&self) -> NqSpec {
        self.spec
    }

    /// Stops accepting records.
    ///
    /// Taken with the producer lock and, for a pinned ring, the ring
    /// page's lock (which pinned pushes hold instead): once this returns
    /// no push is still writing into the ring (a producer may hold the
    /// queue past its unbinding, e.g. a sequencer's cached handle).
    pub fn disable(&self) {
        let _guard = self.producer.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = &self.pinned {
            p.with_locked(|_| self.rare.fetch_or(rare::DISABLED, Ordering::AcqRel));
        }
        self.rare.fetch_or(rare::DISABLED, Ordering::AcqRel);
    }

    /// Makes the next record overflow (dropped, flag raised).
    pub fn inject_overflow(&self) {
        self.rare.fetch_or(rare::FORCE_OVERFLOW, Ordering::AcqRel);
    }

    /// Whether the ring overflowed (the INTC bit-29 probe).
    pub fn overflowed(&self) -> bool {
        self.rare.load(Ordering::Acquire) & rare::OVERFLOWED != 0
    }

    /// Writes one record (adding phase and overflow bits) and publishes it.
    /// Returns `false` if the record was dropped.
    ///
    /// Producers are serialised by the ring page's lock for a pinned ring
    /// (taken for the slot write anyway, so a push costs one lock) and by
    /// the producer lock otherwise. A pinned ring whose page was dropped
    /// goes the second way for good: the drop waits for the page lock, so
    /// no push of the first kind is still running when the second starts.
    #[inline]
    pub fn push(&self, mem: &dyn RingMemory, rec: [u8; 16]) -> bool {
        let published = self.push_unsignalled(mem, rec);
        if published {
            self.signal.raise();
        }
        published
    }

    /// [`NqState::push`] without raising the ring's interrupt line: the
    /// caller raises it ([`NqState::signal`]) once for the records it
    /// pushed, no later than the end of its scheduling slice (a
    /// sequencer's own NOTIFY queue: once per execution, with its END; a
    /// waiter only needs waking once there is something new, and it then
    /// reads every record published).
    #[inline]
    pub fn push_unsignalled(&self, mem: &dyn RingMemory, rec: [u8; 16]) -> bool {
        // The rare word's DISABLED is tested under the lock `disable` takes.
        if self.capacity == 0 {
            return false;
        }
        let published = match &self.pinned {
            Some(p) => p.with_locked(|ring| self.publish(&rec, |idx, r| ring.write_array(self.slot_offset(idx), r))),
            None => None,
        };
        match published {
            Some(done) => done,
            None => self.publish_unpinned(mem, &rec),
        }
    }

    /// The interrupt line the ring raises (its core's, for every ring the
    /// device binds).
    pub fn signal(&self) -> &Arc<NqSignal> {
        &self.signal
    }

    /// [`NqState::push`] through the ring memory, under the producer lock
    /// (a ring without a pin, or whose page was dropped).
    #[inline(never)]
    fn publish_unpinned(&self, mem: &dyn RingMemory, rec: &[u8; 16]) -> bool {
        let _guard = self.producer.lock().unwrap_or_else(|e| e.into_inner());
        self.publish(rec, |idx, r| mem.write_ring(self.spec.ring.offset(self.slot_offset(idx) as u64), r).is_ok())
    }

    /// The byte offset in the ring of record `idx`'s slot.
    #[inline]
    fn slot_offset(&self, idx: u64) -> usize {
        self.slot_and_pass(idx).0 as usize * NQ_RECORD_BYTES
    }

    /// Publishes one record (the body of [`NqState::push`], run by the one
    /// producer allowed at a time): `write` stores record `idx`'s bytes in
    /// its slot. An ordinary record (no rare bit, the consumer less than a
    /// ring behind) costs one load of the rare word and of `consumed`.
    /// False if the record was dropped.
    #[inline(always)]
    fn publish(&self, rec: &[u8; 16], write: impl FnOnce(u64, &[u8; 16]) -> bool) -> bool {
        let idx = self.produced.load(Ordering::Relaxed);
        // The record as one 128-bit value: its header byte (byte 3) gets
        // the overflow and phase bits by masks on the low word, and the
        // slot is written from registers, not rebuilt byte by byte.
        let mut word = u128::from_le_bytes(*rec);
        let flags = self.rare.load(Ordering::Acquire);
        if flags != 0 || idx - self.consumed.load(Ordering::Acquire).min(idx) >= u64::from(self.capacity) {
            match self.rare_flags(flags, idx) {
                Some(bits) => word |= u128::from(bits) << 24,
                None => return false,
            }
        }
        // Phase: set on even passes over the ring, clear on odd ones.
        let even = u128::from(self.slot_and_pass(idx).1 & 1 == 0);
        word = (word & !(u128::from(record::PHASE_BIT) << 24)) | ((even * u128::from(record::PHASE_BIT)) << 24);
        if !write(idx, &word.to_le_bytes()) {
            // The ring memory vanished under us: the hardware would raise an
            // AXI write error; we drop the record and flag the queue.
            self.rare.fetch_or(rare::OVERFLOWED, Ordering::AcqRel);
            return false;
        }
        self.produced.store(idx + 1, Ordering::Release);
        true
    }

    /// The rare part of a publish of record `idx` whose rare word read
    /// `flags` or whose consumer is a ring behind: `None` drops the record
    /// (the queue is destroyed, or an injected overflow takes it),
    /// otherwise the header bits it carries (the overflow bit once the
    /// ring overflowed, including by this record lapping the consumer).
    #[inline(never)]
    fn rare_flags(&self, flags: u8, idx: u64) -> Option<u8> {
        if flags & rare::DISABLED != 0 {
            return None;
        }
        if flags & rare::FORCE_OVERFLOW != 0 && self.rare.fetch_and(!rare::FORCE_OVERFLOW, Ordering::AcqRel) & rare::FORCE_OVERFLOW != 0 {
            self.rare.fetch_or(rare::OVERFLOWED, Ordering::AcqRel);
            return None;
        }
        if idx - self.consumed.load(Ordering::Acquire).min(idx) >= u64::from(self.capacity) {
            self.rare.fetch_or(rare::OVERFLOWED, Ordering::AcqRel);
        }
        let overflowed = self.rare.load(Ordering::Acquire) & rare::OVERFLOWED != 0;
        Some(if overflowed { record::SW_OVERFLOW_BIT } else { 0 })
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

impl NqView {
    /// [`NqRing::read`] of records `from..produced` (at least one): the
    /// records up to the end of the ring in one locked copy of a pinned
    /// ring (a harvest reads an execution's few records at once), record
    /// by record as fixed-size moves ([`PinnedRange::read_records`], no
    /// `memcpy` call); one at a time otherwise, or if that fails.
    #[inline(never)]
    fn read_from(&self, from: u64, produced: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let cap = u64::from(self.state.capacity);
        let start = from.max(produced.saturating_sub(cap));
        let end = produced.min(start + out.len() as u64);
        if end <= start {
            return 0;
        }
        // The common harvest: the records sit before the ring's end.
        let first = self.state.slot_and_pass(start).0;
        let all = (end - start) as usize;
        if first + (all as u64) <= cap
            && let Some(p) = &self.state.pinned
            && let Some(dst) = out.get_mut(..all)
            && p.read_records(first as usize * NQ_RECORD_BYTES, dst)
        {
            return all;
        }
        self.read_runs(start, end, out)
    }

    /// [`NqView::read_from`] of records `start..end` past its common case
    /// (records across the ring's end, a ring without a pin or whose page
    /// was dropped): run by run, or one record at a time. Out of line, so
    /// the common read keeps a small frame.
    #[inline(never)]
    fn read_runs(&self, start: u64, end: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let cap = u64::from(self.state.capacity);
        let mut n = 0;
        while start + (n as u64) < end {
            let idx = start + n as u64;
            let slot = self.state.slot_and_pass(idx).0;
            let run = (end - idx).min(cap - slot) as usize;
            if run > 1
                && let Some(p) = &self.state.pinned
                && p.read(slot as usize * NQ_RECORD_BYTES, out[n..n + run].as_flattened_mut())
            {
                n += run;
                continue;
            }
            if !self.state.read_slot(&*self.mem, idx, &mut out[n]) {
                break;
            }
            n += 1;
        }
        n
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
    /// Nothing to read (the common poll of an ERROR or TRACE ring) costs
    /// one load and a compare; records are copied by [`NqView::read_from`].
    #[inline]
    fn read(&self, from: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let produced = self.produced();
        if from >= produced || out.is_empty() {
            return 0;
        }
        self.read_from(from, produced, out)
    }
    /// [`NqRing::read`] and the acknowledgement in one call: the store of
    /// the consumed count needs no second dynamic call.
    #[inline]
    fn read_and_consume(&self, from: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let n = self.read(from, out);
        if n > 0 {
            self.state.consumed.store(from + n as u64, Ordering::Release);
        }
        n
    }
    fn overflowed(&self) -> bool {
        self.state.overflowed()
    }
    fn signal_count(&self) -> u64 {
        self.state.signal.count()
    }
    fn wait_signal(&self, seen: u64, timeout: Duration) -> u64 {
        self.state.signal.wait(seen, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::{CoreId, NqType};
    use nrt_isa::notification::{EngineEvent, InferErrorSubtype, NotificType, RuntimeSubtype};
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

    /// Whether the first `len` bytes of a [`Flat`] ring memory were never
    /// written.
    fn mem_untouched(mem: &Arc<dyn RingMemory>, len: usize) -> bool {
        let mut b = vec![0u8; len];
        mem.read_ring(DeviceAddr(0), &mut b).is_ok() && b.iter().all(|&x| x == 0)
    }

    fn spec(cap: u32) -> NqSpec {
        NqSpec { core: CoreId(0), engine_index: 0, nq_type: NqType::Notify, ring: DeviceAddr(0), size_bytes: cap * 16 }
    }

    fn rec(pc: u64, ts: u64) -> [u8; 16] {
        record::infer_status(0, EngineEvent::InstStart, RuntimeSubtype::Start, 0, pc, 0, ts)
    }

    /// The kept type codes build the same bytes as the per-record mapping.
    #[test]
    fn engine_kinds_match_the_mapped_records() {
        for engine in 0..6u8 {
            let k = record::EngineKinds::of(engine);
            let start = record::engine_record(k.start, record::subtype_word(RuntimeSubtype::Start as u16, 0), 0x1_2345_6789, 9, 77);
            assert_eq!(start, record::infer_status(engine, EngineEvent::InstStart, RuntimeSubtype::Start, 0, 0x1_2345_6789, 9, 77));
            let end = record::engine_record(k.end, record::subtype_word(RuntimeSubtype::End as u16, 3), 5, 1, 8);
            assert_eq!(end, record::infer_status(engine, EngineEvent::InstEnd, RuntimeSubtype::End, 3, 5, 1, 8));
            let ex = record::engine_record(k.explicit, record::subtype_word(6, 7), 3, 2, 1);
            assert_eq!(ex, record::explicit(engine, 6, 7, 3, 2, 1));
        }
    }

    #[test]
    fn record_fields_roundtrip() {
        let r = record::infer_status(4, EngineEvent::InstEnd, RuntimeSubtype::End, 7, 0xABCDE, 1, 123_456);
        let d = record::decode(&r);
        assert_eq!(d.kind(), Some(NotificType::SpInstEnd));
        assert_eq!((d.program_counter, d.debug_hint, d.custom_sub_id_code()), (0xABCDE, 1, 7));
        assert_eq!((d.runtime_subtype(), d.timestamp_ps), (Some(RuntimeSubtype::End), 123_456));
        let e = record::error(Some(1), 5, InferErrorSubtype::DmaAbort, 16, 9);
        let de = record::decode_error(&e).unwrap();
        assert_eq!((de.subtype, de.detail, de.program_counter), (InferErrorSubtype::DmaAbort, 16, 5));
        assert!(record::decode_error(&r).is_none());
    }

    /// A pinned ring: pushes go through the page (under its lock), stop
    /// at `disable`, and go through the ring memory once the page is
    /// dropped, with the record index carrying on.
    #[test]
    fn pinned_ring_pushes_through_the_page_then_the_memory() {
        use crate::memory::pages::SparsePages;
        let pages = SparsePages::new(1 << 16);
        let pin = pages.pin(0, 64).unwrap();
        let q = NqState::new(spec(4)).pinned_to(pin);
        let flat = Flat(Mutex::new(vec![0u8; 64]));
        assert!(q.push(&flat, rec(1, 10)));
        let mut b = [0u8; 16];
        pages.read(0, &mut b);
        assert_eq!(record::decode(&b).program_counter, 1, "written through the pinned page");
        assert!(flat.0.lock().unwrap().iter().all(|&x| x == 0), "not through the memory");
        pages.clear();
        assert!(q.push(&flat, rec(2, 20)));
        let mut m = [0u8; 16];
        m.copy_from_slice(&flat.0.lock().unwrap()[16..32]);
        assert_eq!(record::decode(&m).program_counter, 2, "slot 1 through the memory once the page is gone");
        assert_eq!(q.produced.load(Ordering::Acquire), 2);
        let live = NqState::new(spec(4)).pinned_to(SparsePages::new(1 << 16).pin(0, 64).unwrap());
        live.disable();
        assert!(!live.push(&flat, rec(3, 30)), "a disabled ring takes nothing");
        assert_eq!(live.produced.load(Ordering::Acquire), 0);
    }

    /// A read that acknowledges copies what `read` copies and moves the
    /// consumed count past it; an empty read leaves the count alone.
    #[test]
    fn read_and_consume_acknowledges_what_it_read() {
        let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; 64])));
        let s = Arc::new(NqState::new(spec(4)));
        let v = NqView::new(s.clone(), mem.clone());
        let mut out = [[0u8; 16]; 4];
        assert_eq!(v.read_and_consume(0, &mut out), 0);
        assert_eq!(v.consumed(), 0, "nothing read, nothing acknowledged");
        for i in 0..3 {
            assert!(s.push(&*mem, rec(i, i)));
        }
        let mut expect = [[0u8; 16]; 4];
        assert_eq!(v.read(1, &mut expect), 2);
        assert_eq!(v.read_and_consume(1, &mut out), 2);
        assert_eq!(out[..2], expect[..2]);
        assert_eq!(v.consumed(), 3);
        assert_eq!(v.read_and_consume(3, &mut out), 0);
        assert_eq!(v.consumed(), 3);
    }

    #[test]
    fn forced_overflow_drops_one_record() {
        let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; 64])));
        let s = Arc::new(NqState::new(spec(4)));
        s.inject_overflow();
        assert!(!s.push(&*mem, rec(0, 0)));
        assert!(s.push(&*mem, rec(1, 0)));
        let v = NqView::new(s, mem);
        assert!(v.overflowed());
        let mut out = [[0u8; 16]; 4];
        assert_eq!(v.read(0, &mut out), 1);
        assert_ne!(out[0][3] & record::SW_OVERFLOW_BIT, 0);
    }

    #[test]
    fn a_record_wakes_a_waiter_on_the_shared_signal() {
        let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; 64])));
        let signal = Arc::new(NqSignal::default());
        let s = Arc::new(NqState::with_signal(spec(4), signal.clone()));
        let v = NqView::new(s.clone(), mem.clone());
        let seen = v.signal_count();
        // Nothing written: the wait times out with the count unchanged.
        assert_eq!(v.wait_signal(seen, Duration::from_millis(1)), seen);
        let waiter = std::thread::spawn(move || v.wait_signal(seen, Duration::from_secs(30)));
        std::thread::sleep(Duration::from_millis(5));
        let t0 = Instant::now();
        assert!(s.push(&*mem, rec(0, 0)));
        assert_eq!(waiter.join().unwrap(), seen + 1);
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert_eq!(signal.count(), seen + 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn consumer_sees_every_record_in_order_with_phase(cap_log in 0u32..5, batches in prop::collection::vec(1usize..6, 1..20), pinned in any::<bool>()) {
            let cap = 1u32 << cap_log;
            let mem: Arc<dyn RingMemory> = Arc::new(Flat(Mutex::new(vec![0; cap as usize * 16])));
            // A pinned ring is written and read through its page (several
            // records per locked copy, split where the ring wraps).
            let pages = crate::memory::pages::SparsePages::new(1 << 16);
            let st = if pinned {
                Arc::new(NqState::new(spec(cap)).pinned_to(pages.pin(0, u64::from(cap) * 16).unwrap()))
            } else {
                Arc::new(NqState::new(spec(cap)))
            };
            let view = NqView::new(st.clone(), mem.clone());
            let mut next = 0u64;
            let mut seen = 0u64;
            for b in batches {
                let b = b.min(cap as usize);
                for _ in 0..b {
                    prop_assert!(st.push(&*mem, rec(next, next)));
                    next += 1;
                }
                let mut out = vec![[0u8; 16]; 8];
                let n = view.read(seen, &mut out);
                prop_assert_eq!(n, b);
                for (k, r) in out[..n].iter().enumerate() {
                    let idx = seen + k as u64;
                    prop_assert_eq!(record::decode(r).timestamp_ps, idx);
                    prop_assert_eq!(record::decode(r).phase, (idx / u64::from(cap)).is_multiple_of(2));
                }
                seen += n as u64;
                view.set_consumed(seen);
            }
            if pinned {
                prop_assert!(mem_untouched(&mem, cap as usize * 16), "a pinned ring goes through its page only");
            }
            prop_assert!(!view.overflowed());
        }
    }
}
