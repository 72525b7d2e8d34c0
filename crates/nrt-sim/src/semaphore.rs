//! The per-core EVT_SEM unit: 256 semaphores and 256 events.
//!
//! Semaphores are signed 32-bit registers; events are 0/1. Each register
//! also remembers the virtual time of its last update, so an engine whose
//! wait is satisfied by it can advance its clock to that moment.
//! Registers are atomics; the caller (the device) wakes waiting engines
//! after every change.

use crate::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use nrt_hal::arch::{
    EVT_SEM_EVENTS, EVT_SEM_SEM_DEC, EVT_SEM_SEM_INC, EVT_SEM_SEM_READ, EVT_SEM_SEM_SET,
};

/// What a 32-bit write to the EVT_SEM block does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowOp {
    /// Write an event register (non-zero sets, zero clears).
    Event(u32),
    /// Assign a semaphore (the SET alias, and writes to the READ alias).
    Set(u32),
    /// Add to a semaphore.
    Inc(u32),
    /// Subtract from a semaphore.
    Dec(u32),
}

/// Decodes an EVT_SEM block offset (4-byte aligned) into the register it
/// names. `None` for offsets past the last register of a window.
pub fn window_op(offset: u64, semaphores: u32, events: u32) -> Option<WindowOp> {
    let idx = |base: u64, count: u32| -> Option<u32> {
        let i = (offset.checked_sub(base)? / 4) as u32;
        (i < count).then_some(i)
    };
    match offset {
        o if o < EVT_SEM_SEM_READ => idx(EVT_SEM_EVENTS, events).map(WindowOp::Event),
        o if o < EVT_SEM_SEM_SET => idx(EVT_SEM_SEM_READ, semaphores).map(WindowOp::Set),
        o if o < EVT_SEM_SEM_INC => idx(EVT_SEM_SEM_SET, semaphores).map(WindowOp::Set),
        o if o < EVT_SEM_SEM_DEC => idx(EVT_SEM_SEM_INC, semaphores).map(WindowOp::Inc),
        _ => idx(EVT_SEM_SEM_DEC, semaphores).map(WindowOp::Dec),
    }
}

/// Which registers of a bank may be non-zero: one bit per register, set
/// after every write and cleared by a range reset, so CTRL_ER's reset of
/// 248 semaphores visits the few a model used instead of all of them.
///
/// Why a reset never misses a non-zero register: a writer changes the
/// register and then sets its bit; a reset clears the bits of its range
/// and then reads the registers whose bit was set. All four steps are
/// sequentially consistent, so a writer that found its bit still set
/// (and skipped the read-modify-write) did so before the reset cleared
/// it, and the reset's read of the register comes after the write.
#[derive(Debug)]
struct DirtySet {
    words: Box<[AtomicU64]>,
}

impl DirtySet {
    fn new(registers: u32) -> DirtySet {
        DirtySet {
            words: (0..registers.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// Notes that register `i` was written (called after the write).
    fn mark(&self, i: u32) {
        let (word, bit) = (&self.words[(i / 64) as usize], 1u64 << (i % 64));
        if word.load(Ordering::SeqCst) & bit == 0 {
            word.fetch_or(bit, Ordering::SeqCst);
        }
    }

    /// Clears the bits of `first..=last` and calls `f` for each register
    /// whose bit was set, in index order.
    fn take_range(&self, first: u32, last: u32, mut f: impl FnMut(u32)) {
        let (fw, lw) = ((first / 64) as usize, (last / 64) as usize);
        if first > last || fw >= self.words.len() {
            return;
        }
        // The range's words as one slice (no bounds check per word); the
        // edge words' masks are only worked out for a dirty word.
        let words = &self.words[fw..=lw.min(self.words.len() - 1)];
        for (w, word) in (fw..).zip(words) {
            // Most words of a reset's range are clean: one load, no mask.
            let seen = word.load(Ordering::SeqCst);
            if seen == 0 {
                continue;
            }
            let mut mask = u64::MAX;
            if w == fw {
                mask &= u64::MAX << (first % 64);
            }
            if w == lw {
                mask &= u64::MAX >> (63 - last % 64);
            }
            if seen & mask == 0 {
                continue;
            }
            // A word wholly inside the range is taken with one exchange
            // (a `fetch_and` whose old value is used is a compare-and-swap
            // loop on x86).
            let mut taken = if mask == u64::MAX {
                word.swap(0, Ordering::SeqCst)
            } else {
                word.fetch_and(!mask, Ordering::SeqCst) & mask
            };
            while taken != 0 {
                f(w as u32 * 64 + taken.trailing_zeros());
                taken &= taken - 1;
            }
        }
    }

    /// Clears every bit (core reset).
    fn clear(&self) {
        for w in self.words.iter() {
            w.store(0, Ordering::SeqCst);
        }
    }
}

/// The reset both register kinds share: visits the registers of
/// `first..=last` marked in `dirty` and, for each that reads non-zero
/// (`nonzero`), moves its last-change time to `now` and then zeroes it
/// (`clear`), so a reader that sees the zero sees its time too. Returns
/// whether any changed.
///
/// The zeroing store is a `Release` store, not a locked exchange: a reset
/// that changed a register is followed by its wake, whose sequentially
/// consistent fence ([`crate::wake::publish_change`]) orders the store
/// before the reads of the waiting engines' keys, as the wake protocol
/// needs; a reset that changed nothing stores nothing.
fn reset_dirty<'a>(
    dirty: &DirtySet,
    first: u32,
    last: u32,
    now: u64,
    nonzero: impl Fn(usize) -> bool,
    time: impl Fn(usize) -> &'a AtomicU64,
    clear: impl Fn(usize),
) -> bool {
    let mut changed = false;
    dirty.take_range(first, last, |i| {
        let i = i as usize;
        if nonzero(i) {
            raise_time(time(i), now);
            clear(i);
            changed = true;
        }
    });
    changed
}

/// Moves a register's last-change time up to `now`; a change at a time
/// no later than the stored one (an engine behind another) is settled by
/// a load, without the atomic read-modify-write.
fn raise_time(t: &AtomicU64, now: u64) {
    if t.load(Ordering::Acquire) < now {
        t.fetch_max(now, Ordering::AcqRel);
    }
}

/// One semaphore: its value and the virtual time of its last change side
/// by side, so a wait's check and its time are one bounds check and one
/// cache line.
#[derive(Debug, Default)]
struct SemRegister {
    value: AtomicI32,
    time: AtomicU64,
}

/// The semaphore and event registers of one core.
#[derive(Debug)]
pub struct SyncBlock {
    sems: Box<[SemRegister]>,
    events: Box<[AtomicU32]>,
    event_time: Box<[AtomicU64]>,
    dirty_sems: DirtySet,
    dirty_events: DirtySet,
}

impl SyncBlock {
    /// All registers zero.
    pub fn new(semaphores: u32, events: u32) -> SyncBlock {
        let zu = |n: u32| (0..n).map(|_| AtomicU32::new(0)).collect();
        let z64 = |n: u32| (0..n).map(|_| AtomicU64::new(0)).collect();
        SyncBlock {
            sems: (0..semaphores).map(|_| SemRegister::default()).collect(),
            events: zu(events),
            event_time: z64(events),
            dirty_sems: DirtySet::new(semaphores),
            dirty_events: DirtySet::new(events),
        }
    }

    /// Number of semaphores.
    pub fn semaphores(&self) -> u32 {
        self.sems.len() as u32
    }

    /// Number of events.
    pub fn events(&self) -> u32 {
        self.events.len() as u32
    }

    /// Semaphore value (caller checked the index).
    pub fn sem(&self, i: u32) -> i32 {
        self.sems[i as usize].value.load(Ordering::Acquire)
    }

    /// Virtual time (ps) of the semaphore's last update.
    pub fn sem_time(&self, i: u32) -> u64 {
        self.sems[i as usize].time.load(Ordering::Acquire)
    }

    /// Assigns a semaphore at virtual time `now`.
    pub fn set_sem(&self, i: u32, v: i32, now: u64) {
        let s = &self.sems[i as usize];
        raise_time(&s.time, now);
        s.value.store(v, Ordering::SeqCst);
        self.dirty_sems.mark(i);
    }

    /// Adds (wrapping, as the 32-bit register does) and returns the new value.
    pub fn add_sem(&self, i: u32, delta: i32, now: u64) -> i32 {
        let s = &self.sems[i as usize];
        raise_time(&s.time, now);
        let v = s
            .value
            .fetch_add(delta, Ordering::SeqCst)
            .wrapping_add(delta);
        self.dirty_sems.mark(i);
        v
    }

    /// The atomic cell of a semaphore (for compare-and-swap updates).
    pub(crate) fn sem_cell(&self, i: u32) -> &AtomicI32 {
        &self.sems[i as usize].value
    }

    /// Semaphore `i`'s value cell (for compare-and-swap updates) and the
    /// cell of its last-change time, `None` past the block: a claim's
    /// index check and both accesses with one bounds check.
    #[inline(always)]
    pub(crate) fn sem_register(&self, i: u32) -> Option<(&AtomicI32, &AtomicU64)> {
        self.sems.get(i as usize).map(|s| (&s.value, &s.time))
    }

    /// Records an update of semaphore `i` at virtual time `now` (made
    /// through [`SyncBlock::sem_cell`]).
    #[inline]
    pub(crate) fn touch_sem(&self, i: u32, now: u64) {
        raise_time(&self.sems[i as usize].time, now);
        self.dirty_sems.mark(i);
    }

    /// Event state.
    pub fn event(&self, i: u32) -> bool {
        self.events[i as usize].load(Ordering::Acquire) != 0
    }

    /// Virtual time (ps) of the event's last change.
    pub fn event_time(&self, i: u32) -> u64 {
        self.event_time[i as usize].load(Ordering::Acquire)
    }

    /// Sets or clears an event at virtual time `now`.
    pub fn set_event(&self, i: u32, on: bool, now: u64) {
        raise_time(&self.event_time[i as usize], now);
        self.events[i as usize].store(u32::from(on), Ordering::SeqCst);
        self.dirty_events.mark(i);
    }

    /// Resets semaphores `first..=last` (clamped to the block) to zero at
    /// virtual time `now`, as CTRL_ER does; returns whether any of them
    /// changed. Only semaphores written since the last reset of their
    /// index are visited (see `DirtySet`), and one that already reads zero
    /// is left alone: its value does not change, so neither does the time
    /// of its last change.
    pub fn reset_sems(&self, first: u32, last: u32, now: u64) -> bool {
        let end = last.min(self.semaphores().saturating_sub(1));
        let regs = &self.sems;
        reset_dirty(
            &self.dirty_sems,
            first,
            end,
            now,
            |i| regs[i].value.load(Ordering::SeqCst) != 0,
            |i| &regs[i].time,
            |i| regs[i].value.store(0, Ordering::Release),
        )
    }

    /// Clears events `first..=last` (clamped to the block) at virtual time
    /// `now`, as in [`SyncBlock::reset_sems`]; returns whether any changed.
    pub fn reset_events(&self, first: u32, last: u32, now: u64) -> bool {
        let end = last.min(self.events().saturating_sub(1));
        let (regs, times) = (&self.events, &self.event_time);
        reset_dirty(
            &self.dirty_events,
            first,
            end,
            now,
            |i| regs[i].load(Ordering::SeqCst) != 0,
            |i| &times[i],
            |i| regs[i].store(0, Ordering::Release),
        )
    }

    /// Applies a window write of `value`.
    pub fn apply(&self, op: WindowOp, value: u32, now: u64) {
        match op {
            WindowOp::Event(i) => self.set_event(i, value != 0, now),
            WindowOp::Set(i) => self.set_sem(i, value as i32, now),
            WindowOp::Inc(i) => {
                self.add_sem(i, value as i32, now);
            }
            WindowOp::Dec(i) => {
                self.add_sem(i, (value as i32).wrapping_neg(), now);
            }
        }
    }

    /// The value a 32-bit read of a window register returns.
    pub fn read_window(&self, op: WindowOp) -> u32 {
        match op {
            WindowOp::Event(i) => u32::from(self.event(i)),
            WindowOp::Set(i) | WindowOp::Inc(i) | WindowOp::Dec(i) => self.sem(i) as u32,
        }
    }

    /// Zeroes every register (core reset).
    pub fn reset(&self) {
        for s in self.sems.iter() {
            s.value.store(0, Ordering::Release);
            s.time.store(0, Ordering::Release);
        }
        for e in self.events.iter() {
            e.store(0, Ordering::Release);
        }
        for t in self.event_time.iter() {
            t.store(0, Ordering::Release);
        }
        self.dirty_sems.clear();
        self.dirty_events.clear();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn range_resets_zero_and_stamp_only_what_changes() {
        let s = SyncBlock::new(8, 8);
        s.set_sem(2, 5, 10);
        s.set_sem(7, -1, 10);
        s.set_event(3, true, 10);
        s.reset_sems(1, 200, 50);
        s.reset_events(0, 5, 60);
        assert_eq!((0..8).map(|i| s.sem(i)).collect::<Vec<_>>(), vec![0; 8]);
        assert_eq!(
            (s.sem_time(2), s.sem_time(7), s.sem_time(4)),
            (50, 50, 0),
            "unchanged registers keep their time"
        );
        assert!(!s.event(3));
        assert_eq!((s.event_time(3), s.event_time(1)), (60, 0));
        s.set_sem(0, 3, 70);
        s.reset_sems(1, 7, 80);
        assert_eq!(s.sem(0), 3, "outside the range");
    }

    #[test]
    fn reset_reports_whether_anything_changed() {
        let s = SyncBlock::new(256, 256);
        assert!(!s.reset_sems(0, 247, 5), "nothing written yet");
        s.add_sem(1, 1, 10);
        s.set_sem(200, 0, 10);
        s.set_sem(250, 4, 10);
        assert!(s.reset_sems(0, 247, 20));
        assert_eq!((s.sem(1), s.sem(200), s.sem(250)), (0, 0, 4));
        assert!(
            !s.reset_sems(0, 247, 30),
            "the second reset finds nothing to do"
        );
        assert_eq!(s.sem_time(1), 20);
        assert!(s.reset_sems(250, 255, 40));
        assert_eq!(s.sem(250), 0);
        assert!(s.update_sem_if(63, |_| true, |x| x + 2, 50));
        assert!(
            s.reset_sems(63, 64, 60),
            "a compare-and-swap update marks its register"
        );
        assert!(!s.reset_sems(9, 3, 70), "an empty range");
        s.set_event(64, true, 0);
        assert!(!s.reset_events(0, 63, 80));
        assert!(s.reset_events(64, 64, 80));
        assert!(!s.event(64));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Range resets through the dirty bits leave exactly the registers
        /// a reset of every register of the range would.
        #[test]
        fn dirty_resets_match_full_resets(ops in proptest::collection::vec((0u8..4, proptest::prelude::any::<u8>(), proptest::prelude::any::<u8>(), -3i32..4), 1..64)) {
            let s = SyncBlock::new(256, 256);
            let mut sems = [0i32; 256];
            let mut events = [false; 256];
            for (kind, a, b, v) in ops {
                let (a32, b32) = (u32::from(a), u32::from(b));
                match kind {
                    0 => {
                        s.add_sem(a32, v, 1);
                        sems[usize::from(a)] = sems[usize::from(a)].wrapping_add(v);
                    }
                    1 => {
                        s.set_event(a32, v > 0, 1);
                        events[usize::from(a)] = v > 0;
                    }
                    2 => {
                        let changed = (a..=b).any(|i| sems[usize::from(i)] != 0);
                        proptest::prop_assert_eq!(s.reset_sems(a32, b32, 2), changed);
                        for i in a..=b {
                            sems[usize::from(i)] = 0;
                        }
                    }
                    _ => {
                        let changed = (a..=b).any(|i| events[usize::from(i)]);
                        proptest::prop_assert_eq!(s.reset_events(a32, b32, 2), changed);
                        for i in a..=b {
                            events[usize::from(i)] = false;
                        }
                    }
                }
            }
            for i in 0..256u32 {
                proptest::prop_assert_eq!(s.sem(i), sems[i as usize]);
                proptest::prop_assert_eq!(s.event(i), events[i as usize]);
            }
        }
    }

    #[test]
    fn window_decode() {
        assert_eq!(window_op(0x0, 256, 256), Some(WindowOp::Event(0)));
        assert_eq!(window_op(0x3FC, 256, 256), Some(WindowOp::Event(255)));
        assert_eq!(window_op(0x400, 256, 256), None);
        assert_eq!(window_op(0x1004, 256, 256), Some(WindowOp::Set(1)));
        assert_eq!(window_op(0x1400, 256, 256), Some(WindowOp::Set(0)));
        assert_eq!(window_op(0x1808, 256, 256), Some(WindowOp::Inc(2)));
        assert_eq!(
            window_op(0x1C00 + 4 * 255, 256, 256),
            Some(WindowOp::Dec(255))
        );
        assert_eq!(window_op(0x2000, 256, 256), None);
    }

    #[test]
    fn arithmetic_is_signed_and_wrapping() {
        let s = SyncBlock::new(4, 4);
        s.apply(WindowOp::Dec(1), 5, 10);
        assert_eq!(s.sem(1), -5);
        assert_eq!(s.sem_time(1), 10);
        s.set_sem(2, i32::MAX, 0);
        s.apply(WindowOp::Inc(2), 1, 0);
        assert_eq!(s.sem(2), i32::MIN);
        s.apply(WindowOp::Event(3), 7, 0);
        assert!(s.event(3));
        assert_eq!(s.read_window(WindowOp::Event(3)), 1);
        s.reset();
        assert_eq!(s.sem(1), 0);
        assert!(!s.event(3));
    }
}
