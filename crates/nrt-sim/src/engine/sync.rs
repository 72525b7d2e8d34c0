//! The per-instruction semaphore / event handshake.
//!
//! Wait modes (events block byte +4): NONE 0, SEM_EQ_IMM 1, SEM_LT_IMM 2,
//! SEM_LE_IMM 3, SEM_GT_IMM 4, SEM_GE_IMM 5, EVT_SET 6, EVT_SET_THEN_CLEAR
//! 7, EVT_CLEAR 14, EVT_CLEAR_THEN_SET 15. Update modes (byte +6): NONE 0,
//! EVT_SET 1, EVT_CLR 2, SEM_INC 3, SEM_DEC 4, SEM_ADD_IMM 5, SEM_SUB_IMM
//! 7, SEM_WR_IMM 9, each applied when the instruction issues (the `_READ`
//! forms) or, +16, when it completes (the `_COMPLETE` forms). The
//! register-sourced variants are not supported and raise a sequencer
//! fault.
//!
//! A wait and an issue-time update of the same semaphore (e.g. "wait S >= 1,
//! then take one") are applied as one compare-and-swap, so two engines
//! can never both take the same unit.

use crate::engine::record::{Record, Update, Wait};
use crate::semaphore::SyncBlock;
use crate::wake::{Change, WaitKey};
use std::sync::atomic::Ordering;

/// Outcome of the wait check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitCheck {
    /// All waits hold; the value is the virtual time at which the last
    /// register they depend on changed.
    Met(u64),
    /// Some wait does not hold yet; the key names the register whose
    /// condition failed (only a change of it can let the record issue).
    Unmet(WaitKey),
    /// A wait mode the device does not implement.
    Unsupported(u8),
}

#[derive(Clone, Copy)]
enum Cond {
    None,
    /// Semaphore compare: (index, mode 1..=5, value).
    Sem(u8, u8, i32),
    /// Event wait: (index, wanted state, state to leave behind).
    Evt(u8, bool, Option<bool>),
}

fn holds(mode: u8, v: i32, x: i32) -> bool {
    match mode {
        1 => x == v,
        2 => x < v,
        3 => x <= v,
        4 => x > v,
        _ => x >= v,
    }
}

fn cond(w: &Wait) -> Result<Cond, u8> {
    Ok(match w.mode {
        0 => Cond::None,
        1..=5 => Cond::Sem(w.index, w.mode, w.value as i32),
        6 => Cond::Evt(w.index, true, None),
        7 => Cond::Evt(w.index, true, Some(false)),
        14 => Cond::Evt(w.index, false, None),
        15 => Cond::Evt(w.index, false, Some(true)),
        m => return Err(m),
    })
}

/// What an update does to a semaphore value, or to an event.
#[derive(Clone, Copy)]
enum Effect {
    None,
    /// Semaphore: (index, base mode 3/4/5/7/9, immediate).
    Sem(u8, u8, i32),
    Evt(u8, bool),
}

fn apply(mode: u8, imm: i32, x: i32) -> i32 {
    match mode {
        3 => x.wrapping_add(1),
        4 => x.wrapping_sub(1),
        5 => x.wrapping_add(imm),
        7 => x.wrapping_sub(imm),
        _ => imm,
    }
}

fn effect(u: &Update) -> Result<Effect, u8> {
    Ok(match u.mode {
        0 => Effect::None,
        1 => Effect::Evt(u.index, true),
        2 => Effect::Evt(u.index, false),
        3 | 4 | 5 | 7 | 9 => Effect::Sem(u.index, u.mode, u.value as i32),
        _ => return Err(u.mode),
    })
}

fn sem_ok(sync: &SyncBlock, i: u8) -> bool {
    u32::from(i) < sync.semaphores()
}
fn evt_ok(sync: &SyncBlock, i: u8) -> bool {
    u32::from(i) < sync.events()
}

/// A record's handshake worked out once, when the record is decoded: its
/// waits, its issue-time and completion-time effects, and the first mode
/// the device does not implement, so issuing the record re-parses
/// nothing ([`claim_plan`], [`complete_plan`] behave exactly like
/// [`claim`] and [`complete`] on the record).
#[derive(Clone, Copy)]
pub struct Plan {
    /// The handshake's shape when it is one of the common ones, which
    /// [`claim_plan`] then runs without walking the general lists.
    shape: Shape,
    /// Whether any completion-time step exists ([`complete_plan`] is a
    /// no-op otherwise).
    completes: bool,
    conds: [Cond; 2],
    take: [Effect; 2],
    /// The first unsupported wait or issue-time update mode ([`claim`]
    /// reports it before touching any register).
    claim_error: Option<u8>,
    /// Completion-time steps, in update order.
    done: [Done; 2],
    /// The events block's wait mode (reported for an event index out of range).
    first_wait_mode: u8,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan").field("claim_error", &self.claim_error).finish_non_exhaustive()
    }
}

/// The common handshakes, worked out once: a record's claim is then one
/// compare (and one compare-and-swap for a take) with no list walks.
/// Each behaves exactly as the general claim of the same plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// No wait, no issue-time update, nothing unsupported.
    Nothing,
    /// One semaphore compare (index, mode 1..=5, the compare as a range),
    /// no issue-time update, the index in range or not (checked when it
    /// runs).
    SemWait(u8, u8, SemRange),
    /// One semaphore compare and an issue-time update of the same
    /// semaphore (index, compare mode, the compare as a range, the
    /// update): "wait S >= 1 and take one", the dispatchers' doorbell take.
    SemTake(u8, u8, SemRange, TakeOp),
    /// Anything else.
    General,
}

/// A semaphore compare (modes 1..=5 against a value) as the one range of
/// values it holds for, tested with one subtraction and one unsigned
/// compare instead of a dispatch on the mode ([`holds`] agrees on every
/// value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SemRange {
    /// The smallest value the compare holds for.
    lo: i32,
    /// The largest minus the smallest (as unsigned).
    span: u32,
}

impl SemRange {
    /// The range of compare `mode` against `v`; `None` for a compare
    /// that holds for no value (below `i32::MIN`, above `i32::MAX`).
    fn of(mode: u8, v: i32) -> Option<SemRange> {
        let (lo, hi) = match mode {
            1 => (v, v),
            2 => (i32::MIN, v.checked_sub(1)?),
            3 => (i32::MIN, v),
            4 => (v.checked_add(1)?, i32::MAX),
            _ => (v, i32::MAX),
        };
        Some(SemRange { lo, span: hi.wrapping_sub(lo) as u32 })
    }

    /// Whether the compare holds for `x`: `x - lo`, wrapped to unsigned,
    /// is at most `span` exactly when `lo <= x <= lo + span`.
    #[inline(always)]
    fn holds(self, x: i32) -> bool {
        (x.wrapping_sub(self.lo) as u32) <= self.span
    }
}

/// An issue-time semaphore update (base modes 3, 4, 5, 7, 9) as an
/// addition or an assignment, worked out once ([`apply`] agrees on every
/// value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TakeOp {
    /// What is added (the increments and decrements).
    add: i32,
    /// The value assigned instead, for SEM_WR_IMM.
    set: Option<i32>,
}

impl TakeOp {
    fn of(mode: u8, imm: i32) -> TakeOp {
        match mode {
            3 => TakeOp { add: 1, set: None },
            4 => TakeOp { add: -1, set: None },
            5 => TakeOp { add: imm, set: None },
            7 => TakeOp { add: imm.wrapping_neg(), set: None },
            _ => TakeOp { add: 0, set: Some(imm) },
        }
    }

    /// The semaphore's value after the update of `x`.
    #[inline(always)]
    fn apply(self, x: i32) -> i32 {
        match self.set {
            Some(v) => v,
            None => x.wrapping_add(self.add),
        }
    }
}

/// One completion-time update: nothing, an effect (with the record's mode,
/// reported if its register index is out of range), or an unsupported mode.
#[derive(Clone, Copy)]
enum Done {
    None,
    Apply(Effect, u8),
    Bad(u8),
}

impl Plan {
    /// The plan of `rec`'s events blocks.
    pub fn of(rec: &Record) -> Plan {
        let mut plan = Plan {
            shape: Shape::General,
            completes: false,
            conds: [Cond::None; 2],
            take: [Effect::None; 2],
            claim_error: None,
            done: [Done::None; 2],
            first_wait_mode: rec.waits[0].mode,
        };
        for (c, w) in plan.conds.iter_mut().zip(&rec.waits) {
            match cond(w) {
                Ok(x) => *c = x,
                Err(m) => {
                    plan.claim_error.get_or_insert(m);
                }
            }
        }
        for (e, u) in plan.take.iter_mut().zip(&rec.updates) {
            if u.mode >= 16 || u.mode == 0 {
                continue; // completion-time or none
            }
            match effect(u) {
                Ok(x) => *e = x,
                Err(m) => {
                    plan.claim_error.get_or_insert(m);
                }
            }
        }
        for (d, u) in plan.done.iter_mut().zip(&rec.updates) {
            if u.mode < 16 {
                continue;
            }
            let base = Update { mode: u.mode - 16, ..*u };
            *d = match effect(&base) {
                Ok(x) => Done::Apply(x, u.mode),
                Err(_) => Done::Bad(u.mode),
            };
        }
        plan.completes = plan.done.iter().any(|d| !matches!(d, Done::None | Done::Apply(Effect::None, _)));
        plan.shape = plan.shape();
        plan
    }

    /// Whether the handshake is one of the common shapes (nothing, one
    /// semaphore wait, a wait-and-take of one semaphore) with no
    /// completion-time step: [`claim_plan`] settles it without the general
    /// lists and [`complete_plan`] has nothing to do, so the sequencer's
    /// quick issue path can run it.
    pub fn claims_simply(&self) -> bool {
        !self.completes && !matches!(self.shape, Shape::General)
    }

    /// Which [`Shape`] the waits and issue-time effects have.
    fn shape(&self) -> Shape {
        if self.claim_error.is_some() {
            return Shape::General;
        }
        let one = |pair: &[Cond; 2]| match *pair {
            [Cond::None, Cond::None] => Some(None),
            [Cond::Sem(i, m, v), Cond::None] | [Cond::None, Cond::Sem(i, m, v)] => Some(Some((i, m, v))),
            _ => None,
        };
        let Some(wait) = one(&self.conds) else { return Shape::General };
        let take = match self.take {
            [Effect::None, Effect::None] => None,
            [Effect::Sem(i, m, imm), Effect::None] | [Effect::None, Effect::Sem(i, m, imm)] => Some((i, m, imm)),
            _ => return Shape::General,
        };
        match (wait, take) {
            (None, None) => Shape::Nothing,
            (Some((i, m, v)), None) => SemRange::of(m, v).map_or(Shape::General, |r| Shape::SemWait(i, m, r)),
            (Some((i, m, v)), Some((j, op, imm))) if i == j => {
                SemRange::of(m, v).map_or(Shape::General, |r| Shape::SemTake(i, m, r, TakeOp::of(op, imm)))
            }
            _ => Shape::General,
        }
    }
}

/// Checks the waits and, if they hold, applies the issue-time updates
/// (atomically with the wait when both name the same semaphore).
pub fn claim(rec: &Record, sync: &SyncBlock, now: u64) -> WaitCheck {
    claim_plan(&Plan::of(rec), sync, now)
}

/// [`claim`] from a record's precomputed [`Plan`]: a common shape (no
/// handshake, one semaphore wait, a wait-and-take of one semaphore)
/// directly, anything else through the general lists.
#[inline(always)]
pub fn claim_plan(plan: &Plan, sync: &SyncBlock, now: u64) -> WaitCheck {
    // The two semaphore shapes first, each behind its own compare of the
    // shape's tag (the quick path's synchronised records are all one of
    // them), not a jump through a table.
    if let Shape::SemWait(i, mode, range) = plan.shape {
        let i = u32::from(i);
        let Some((cell, time)) = sync.sem_register(i) else {
            return WaitCheck::Unsupported(mode);
        };
        if !range.holds(cell.load(Ordering::Acquire)) {
            return WaitCheck::Unmet(WaitKey::Sem(i));
        }
        return WaitCheck::Met(time.load(Ordering::Acquire));
    }
    if let Shape::SemTake(i, mode, range, op) = plan.shape {
        let i = u32::from(i);
        let Some((cell, time)) = sync.sem_register(i) else {
            return WaitCheck::Unsupported(mode);
        };
        let mut cur = cell.load(Ordering::Acquire);
        if !range.holds(cur) {
            return WaitCheck::Unmet(WaitKey::Sem(i));
        }
        let ready = time.load(Ordering::Acquire);
        // `update_sem_if` inline, from the value the wait was checked
        // on: the compare-and-swap re-validates the wait, and is
        // sequentially consistent for the same reason.
        while let Err(actual) = cell.compare_exchange_weak(cur, op.apply(cur), Ordering::SeqCst, Ordering::Acquire) {
            cur = actual;
            if !range.holds(cur) {
                return WaitCheck::Unmet(WaitKey::Sem(i));
            }
        }
        sync.touch_sem(i, now);
        return WaitCheck::Met(ready);
    }
    if plan.shape == Shape::Nothing {
        return WaitCheck::Met(0);
    }
    claim_general(plan, sync, now)
}

/// [`claim_plan`] through the general lists (any handshake).
fn claim_general(plan: &Plan, sync: &SyncBlock, now: u64) -> WaitCheck {
    if let Some(m) = plan.claim_error {
        return WaitCheck::Unsupported(m);
    }
    let conds = &plan.conds;
    // Check every wait first, without side effects.
    let mut ready = 0u64;
    for c in conds {
        match *c {
            Cond::None => {}
            Cond::Sem(i, mode, v) => {
                if !sem_ok(sync, i) {
                    return WaitCheck::Unsupported(mode);
                }
                if !holds(mode, v, sync.sem(u32::from(i))) {
                    return WaitCheck::Unmet(WaitKey::Sem(u32::from(i)));
                }
                ready = ready.max(sync.sem_time(u32::from(i)));
            }
            Cond::Evt(i, want, _) => {
                if !evt_ok(sync, i) {
                    // Reported with the events block's wait mode, as ever.
                    return WaitCheck::Unsupported(plan.first_wait_mode);
                }
                if sync.event(u32::from(i)) != want {
                    return WaitCheck::Unmet(WaitKey::Event(u32::from(i)));
                }
                ready = ready.max(sync.event_time(u32::from(i)));
            }
        }
    }
    // Take: the compare-and-swap of each issue-time semaphore update
    // re-validates the waits on that semaphore.
    for e in &plan.take {
        if let Effect::Sem(i, mode, imm) = *e {
            if !sem_ok(sync, i) {
                return WaitCheck::Unsupported(mode);
            }
            let guard = |x: i32| {
                conds.iter().all(|c| match *c {
                    Cond::Sem(j, m, v) if j == i => holds(m, v, x),
                    _ => true,
                })
            };
            if !sync.update_sem_if(u32::from(i), guard, |x| apply(mode, imm, x), now) {
                return WaitCheck::Unmet(WaitKey::Sem(u32::from(i)));
            }
        }
    }
    for c in conds {
        if let Cond::Evt(i, _, Some(after)) = *c {
            sync.set_event(u32::from(i), after, now);
        }
    }
    for e in &plan.take {
        if let Effect::Evt(i, on) = *e {
            if !evt_ok(sync, i) {
                return WaitCheck::Unsupported(0);
            }
            sync.set_event(u32::from(i), on, now);
        }
    }
    WaitCheck::Met(ready)
}

/// Applies the completion-time updates (modes 17..=25).
pub fn complete(rec: &Record, sync: &SyncBlock, now: u64) -> Result<(), u8> {
    complete_plan(&Plan::of(rec), sync, now)
}

/// [`complete`] from a record's precomputed [`Plan`].
#[inline]
pub fn complete_plan(plan: &Plan, sync: &SyncBlock, now: u64) -> Result<(), u8> {
    if !plan.completes {
        return Ok(());
    }
    complete_steps(plan, sync, now)
}

/// The completion-time steps of a plan that has some.
fn complete_steps(plan: &Plan, sync: &SyncBlock, now: u64) -> Result<(), u8> {
    for d in &plan.done {
        match *d {
            Done::None | Done::Apply(Effect::None, _) => {}
            Done::Bad(mode) => return Err(mode),
            Done::Apply(Effect::Sem(i, mode, imm), rec_mode) => {
                if !sem_ok(sync, i) {
                    return Err(rec_mode);
                }
                sync.update_sem_if(u32::from(i), |_| true, |x| apply(mode, imm, x), now);
            }
            Done::Apply(Effect::Evt(i, on), rec_mode) => {
                if !evt_ok(sync, i) {
                    return Err(rec_mode);
                }
                sync.set_event(u32::from(i), on, now);
            }
        }
    }
    Ok(())
}

/// The registers a record that issued and completed has changed (its
/// updates, at issue or completion, and the events its
/// `EVT_SET_THEN_CLEAR` / `EVT_CLEAR_THEN_SET` waits flipped), at most
/// four; `None` entries are unused. The sequencer wakes exactly the
/// engines waiting on these.
pub fn changes(rec: &Record) -> [Option<Change>; 4] {
    let mut out = [None; 4];
    for (slot, u) in out.iter_mut().zip(&rec.updates) {
        let base = if u.mode >= 16 { u.mode - 16 } else { u.mode };
        *slot = match base {
            0 => None,
            1 | 2 => Some(Change::Event(u32::from(u.index))),
            _ => Some(Change::Sem(u32::from(u.index))),
        };
    }
    for (slot, w) in out[2..].iter_mut().zip(&rec.waits) {
        if matches!(w.mode, 7 | 15) {
            *slot = Some(Change::Event(u32::from(w.index)));
        }
    }
    out
}

impl SyncBlock {
    /// Compare-and-swap loop: if `pred(value)` holds, replace the value by
    /// `f(value)` and return true; otherwise leave it and return false.
    pub fn update_sem_if(&self, i: u32, pred: impl Fn(i32) -> bool, f: impl Fn(i32) -> i32, now: u64) -> bool {
        let cell = self.sem_cell(i);
        let mut cur = cell.load(Ordering::Acquire);
        loop {
            if !pred(cur) {
                return false;
            }
            // Sequentially consistent: a waker may then read the
            // engines' published keys without a fence (see
            // `wake::publish_change` and the quick path's
            // `engine::others_may_wait`); on x86 the same instruction.
            match cell.compare_exchange_weak(cur, f(cur), Ordering::SeqCst, Ordering::Acquire) {
                Ok(_) => {
                    self.touch_sem(i, now);
                    return true;
                }
                Err(actual) => cur = actual,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::build;

    #[test]
    fn wait_then_take_is_atomic_and_exact() {
        let s = SyncBlock::new(8, 8);
        let r = Record::decode(&build::record(0xA0, (5, 2), (7, 2), 3));
        assert_eq!(claim(&r, &s, 0), WaitCheck::Unmet(WaitKey::Sem(2)));
        s.set_sem(2, 4, 100);
        assert_eq!(claim(&r, &s, 0), WaitCheck::Met(100));
        assert_eq!(s.sem(2), 1);
        assert_eq!(claim(&r, &s, 0), WaitCheck::Unmet(WaitKey::Sem(2)));
    }

    #[test]
    fn common_shapes_are_recognised() {
        let take = Plan::of(&Record::decode(&build::record(0xA4, (5, 2), (4, 2), 1)));
        assert_eq!(take.shape, Shape::SemTake(2, 5, SemRange::of(5, 1).unwrap(), TakeOp { add: -1, set: None }));
        let wait = Plan::of(&Record::decode(&build::record(0xA0, (5, 1), (0, 0), 1)));
        assert_eq!(wait.shape, Shape::SemWait(1, 5, SemRange::of(5, 1).unwrap()));
        let never = Plan::of(&Record::decode(&build::record(0xA0, (2, 1), (0, 0), i32::MIN as u32)));
        assert_eq!(never.shape, Shape::General, "a compare that holds for no value is not a range");
        assert!(!wait.completes);
        let none = Plan::of(&Record::decode(&build::record(0xA4, (0, 0), (0, 0), 0)));
        assert_eq!(none.shape, Shape::Nothing);
        let other_sem = Plan::of(&Record::decode(&build::record(0xA4, (5, 2), (4, 3), 1)));
        assert_eq!(other_sem.shape, Shape::General);
        let done = Plan::of(&Record::decode(&build::record(0xA4, (0, 0), (19, 3), 0)));
        assert_eq!(done.shape, Shape::Nothing);
        assert!(done.completes);
    }

    fn block_with(values: &[i32; 4], events: &[bool; 4]) -> SyncBlock {
        let s = SyncBlock::new(4, 4);
        for (i, v) in values.iter().enumerate() {
            s.set_sem(i as u32, *v, 10 + i as u64);
        }
        for (i, e) in events.iter().enumerate() {
            s.set_event(i as u32, *e, 20 + i as u64);
        }
        s
    }

    fn snapshot(s: &SyncBlock) -> Vec<(i32, u64, bool, u64)> {
        (0..4).map(|i| (s.sem(i), s.sem_time(i), s.event(i), s.event_time(i))).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The range form of a compare and the addition form of an update
        /// agree with the mode dispatch on every value.
        #[test]
        fn ranges_and_take_ops_agree_with_the_modes(mode in 1u8..=5, v in proptest::prelude::any::<i32>(), x in proptest::prelude::any::<i32>(), near in -2i32..3, op in proptest::prelude::any::<u8>()) {
            let x = if op % 2 == 0 { v.wrapping_add(near) } else { x };
            match SemRange::of(mode, v) {
                Some(r) => proptest::prop_assert_eq!(r.holds(x), holds(mode, v, x)),
                None => proptest::prop_assert!(!holds(mode, v, x)),
            }
            let base = [3u8, 4, 5, 7, 9][usize::from(op % 5)];
            proptest::prop_assert_eq!(TakeOp::of(base, v).apply(x), apply(base, v, x));
        }

        /// A record's claim through its recognised shape does exactly what
        /// the general claim does: the same answer, the same registers,
        /// the same times (indices past the block included).
        #[test]
        fn shapes_claim_like_the_general_lists(
            modes in proptest::prelude::any::<[u8; 4]>(),
            idx in proptest::prelude::any::<[u8; 4]>(),
            value in -3i32..4,
            ext_value in -3i32..4,
            values in proptest::prelude::any::<[i8; 4]>(),
            events in proptest::prelude::any::<[bool; 4]>(),
        ) {
            // Modes biased to the supported ones; indices mostly in range.
            let wait_mode = |m: u8| [0, 1, 2, 3, 4, 5, 6, 7, 14, 15, m][usize::from(m % 11)];
            let update_mode = |m: u8| [0, 1, 2, 3, 4, 5, 7, 9, 19, 20, m][usize::from(m % 11)];
            let index = |i: u8| if i < 200 { i % 4 } else { i };
            // NOP carries no extended block: the one-block shapes.
            let opcode = if idx[3] % 2 == 0 { 0xA4 } else { 0xA0 };
            let mut b = build::record(opcode, (wait_mode(modes[0]), index(idx[0])), (update_mode(modes[1]), index(idx[1])), value as u32);
            b[0x20] = wait_mode(modes[2]);
            b[0x21] = index(idx[2]);
            b[0x22] = update_mode(modes[3]);
            b[0x23] = index(idx[3]);
            b[0x24..0x28].copy_from_slice(&(ext_value as u32).to_le_bytes());
            b[0x28..0x2C].copy_from_slice(&(ext_value.wrapping_add(1) as u32).to_le_bytes());
            let plan = Plan::of(&Record::decode(&b));
            let values = values.map(|v| i32::from(v % 4));
            let (fast, general) = (block_with(&values, &events), block_with(&values, &events));
            proptest::prop_assert_eq!(claim_plan(&plan, &fast, 99), claim_general(&plan, &general, 99));
            proptest::prop_assert_eq!(snapshot(&fast), snapshot(&general));
        }
    }

    #[test]
    fn completion_updates_and_events() {
        let s = SyncBlock::new(8, 8);
        let r = Record::decode(&build::record(0xA4, (6, 1), (19, 3), 0));
        assert_eq!(claim(&r, &s, 0), WaitCheck::Unmet(WaitKey::Event(1)));
        assert_eq!(changes(&r), [Some(Change::Sem(3)), None, None, None]);
        s.set_event(1, true, 5);
        assert_eq!(claim(&r, &s, 0), WaitCheck::Met(5));
        assert_eq!(s.sem(3), 0, "completion update not yet applied");
        complete(&r, &s, 9).unwrap();
        assert_eq!(s.sem(3), 1);
        let clr = Record::decode(&build::record(0xA4, (7, 1), (0, 0), 0));
        assert_eq!(claim(&clr, &s, 0), WaitCheck::Met(5));
        assert!(!s.event(1), "EVT_SET_THEN_CLEAR clears");
        assert_eq!(changes(&clr), [None, None, Some(Change::Event(1)), None]);
        let bad = Record::decode(&build::record(0xA4, (0x33, 1), (0, 0), 0));
        assert_eq!(claim(&bad, &s, 0), WaitCheck::Unsupported(0x33));
        let badu = Record::decode(&build::record(0xA4, (0, 0), (0x1F, 0), 0));
        assert_eq!(complete(&badu, &s, 0), Err(0x1F));
    }
}
