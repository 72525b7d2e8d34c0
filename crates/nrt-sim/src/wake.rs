//! Targeted wake-ups of blocked sequencers.
//!
//! A sequencer that cannot issue its next record says what it waits for
//! (a [`WaitKey`]: one semaphore, one event, the DMA queues going idle, the
//! Q7 cluster); every register change says what changed (a [`Change`]).
//! The device re-queues only the engines whose wait the change can
//! satisfy, instead of re-running every blocked engine of the core on
//! every semaphore update only to find its wait still unmet.
//!
//! Why this never loses a wake-up: an engine's wait can only start to hold
//! when the register its failed condition reads changes, and the key names
//! exactly that register. The key is published with the handshake of
//! [`EngineWait`]: the engine resets it to [`WaitKey::Any`] before it reads
//! any register, and a waker changes the register before it reads the key
//! (both separated by a sequentially consistent fence; a waker whose
//! change is itself a sequentially consistent atomic operation, such as a
//! take's compare-and-swap, may instead read the keys with sequentially
//! consistent loads, [`EngineWait::word_sc`], and issue no fence), so
//! either the engine sees the new value or the waker sees a key that
//! matches.

use crate::sync::atomic::{AtomicU32, Ordering, fence};

/// What a blocked sequencer waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitKey {
    /// Not blocked on anything specific: every change wakes it (the state
    /// while an engine runs, and the conservative default).
    Any,
    /// A semaphore compare (or the compare-and-swap of a take) on this index.
    Sem(u32),
    /// An event state on this index.
    Event(u32),
    /// DRAIN: the core's DMA queues going idle.
    DmaIdle,
    /// The Q7 cluster finishing its op in flight.
    Q7,
}

const KIND_SHIFT: u32 = 16;
const INDEX_MASK: u32 = (1 << KIND_SHIFT) - 1;

impl WaitKey {
    /// The key as one word (kind in the high half, index in the low half).
    pub fn encode(self) -> u32 {
        match self {
            WaitKey::Any => 0,
            WaitKey::Sem(i) => (1 << KIND_SHIFT) | (i & INDEX_MASK),
            WaitKey::Event(i) => (2 << KIND_SHIFT) | (i & INDEX_MASK),
            WaitKey::DmaIdle => 3 << KIND_SHIFT,
            WaitKey::Q7 => 4 << KIND_SHIFT,
        }
    }

    /// The key [`WaitKey::encode`] produced; unknown words read as `Any`
    /// (waking too often is safe, too rarely is not).
    pub fn decode(w: u32) -> WaitKey {
        let i = w & INDEX_MASK;
        match w >> KIND_SHIFT {
            1 => WaitKey::Sem(i),
            2 => WaitKey::Event(i),
            3 => WaitKey::DmaIdle,
            4 => WaitKey::Q7,
            _ => WaitKey::Any,
        }
    }
}

/// What a register change (or device progress) touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// One semaphore.
    Sem(u32),
    /// One event.
    Event(u32),
    /// Semaphores `first..=last` (CTRL_ER).
    Sems(u32, u32),
    /// Events `first..=last` (CTRL_ER).
    Events(u32, u32),
    /// A DMA queue made progress or went idle (DRAIN waiters).
    Dma,
    /// The Q7 cluster finished an op.
    Q7,
    /// Anything (core-wide changes): wakes every blocked engine.
    Everything,
}

impl Change {
    /// The encoded keys ([`WaitKey::encode`]) this change wakes, as one
    /// inclusive range (`lo > hi`: none besides [`WaitKey::Any`]), so a
    /// waker compares a published key word against it without decoding
    /// the key: [`key_woken`] agrees with [`Change::wakes`] on every key.
    pub fn key_range(self) -> (u32, u32) {
        let clamp = |i: u32| i.min(INDEX_MASK);
        match self {
            Change::Everything => (0, u32::MAX),
            Change::Sem(i) => {
                let k = WaitKey::Sem(i).encode();
                (k, k)
            }
            Change::Event(i) => {
                let k = WaitKey::Event(i).encode();
                (k, k)
            }
            Change::Sems(a, b) if a <= b => (
                WaitKey::Sem(clamp(a)).encode(),
                WaitKey::Sem(clamp(b)).encode(),
            ),
            Change::Events(a, b) if a <= b => (
                WaitKey::Event(clamp(a)).encode(),
                WaitKey::Event(clamp(b)).encode(),
            ),
            Change::Sems(..) | Change::Events(..) => (1, 0),
            // Their keys carry no index (any index bits decode the same).
            Change::Dma => (
                WaitKey::DmaIdle.encode(),
                WaitKey::DmaIdle.encode() | INDEX_MASK,
            ),
            Change::Q7 => (WaitKey::Q7.encode(), WaitKey::Q7.encode() | INDEX_MASK),
        }
    }

    /// Whether an engine waiting for `key` must re-check after this change.
    pub fn wakes(self, key: WaitKey) -> bool {
        match (self, key) {
            (Change::Everything, _) | (_, WaitKey::Any) => true,
            (Change::Sem(i), WaitKey::Sem(k)) | (Change::Event(i), WaitKey::Event(k)) => i == k,
            (Change::Sems(a, b), WaitKey::Sem(k)) | (Change::Events(a, b), WaitKey::Event(k)) => {
                (a..=b).contains(&k)
            }
            (Change::Dma, WaitKey::DmaIdle) | (Change::Q7, WaitKey::Q7) => true,
            _ => false,
        }
    }
}

/// The register changes of one record (at most five: four from its
/// updates and self-clearing waits, one CTRL_ER range), kept inline so a
/// record's list is worked out once when it is decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changes {
    items: [Change; 5],
    len: u8,
}

impl Default for Changes {
    fn default() -> Changes {
        Changes {
            items: [Change::Everything; 5],
            len: 0,
        }
    }
}

impl Changes {
    /// The changes among `list` that are `Some`, in order (at most five are kept:
    /// the rest would be dropped, so callers pass at most five).
    pub fn of(list: &[Option<Change>]) -> Changes {
        let mut out = Changes::default();
        for c in list.iter().flatten() {
            out.push(*c);
        }
        out
    }

    /// Adds a change; a sixth is folded into [`Change::Everything`] (waking
    /// too often is safe, too rarely is not).
    pub fn push(&mut self, c: Change) {
        match self.items.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = c;
                self.len += 1;
            }
            None => self.items[4] = Change::Everything,
        }
    }

    /// The changes, in order.
    pub fn as_slice(&self) -> &[Change] {
        &self.items[..usize::from(self.len)]
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The published wait of one engine (see the module docs for the
/// handshake).
#[derive(Debug, Default)]
pub struct EngineWait(AtomicU32);

impl EngineWait {
    /// Engine side, with the sequencer locked, before it reads any
    /// register: from now on every change wakes it.
    pub fn begin_step(&self) {
        self.0.store(WaitKey::Any.encode(), Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// Engine side, still with the sequencer locked: the step ended
    /// blocked on `key`.
    pub fn blocked_on(&self, key: WaitKey) {
        self.0.store(key.encode(), Ordering::Release);
    }

    /// Waker side, after the register change: whether `change` must
    /// re-queue this engine.
    pub fn woken_by(&self, change: Change) -> bool {
        change.wakes(self.key())
    }

    /// Waker side, after the register change: the published key.
    pub fn key(&self) -> WaitKey {
        WaitKey::decode(self.word())
    }

    /// Waker side: the published key as its encoded word (see
    /// [`key_woken`]).
    #[inline]
    pub fn word(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// [`EngineWait::word`] as a sequentially consistent load, for a
    /// waker whose change was itself a sequentially consistent atomic
    /// operation and that issues no fence: the engine's `begin_step`
    /// fence then orders its key before that change or the change before
    /// its register reads (free on x86, where every load is ordered so).
    #[inline]
    pub fn word_sc(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Whether an engine whose published key word is `word` must re-check
/// after changes whose [`Change::key_range`]s are `ranges`: a word that
/// reads as [`WaitKey::Any`] always, else when a range holds it. The
/// waker's per-engine test, one or two compares per change.
#[inline]
pub fn key_woken(word: u32, ranges: &[(u32, u32)]) -> bool {
    let kind = word >> KIND_SHIFT;
    if kind == 0 || kind > 4 {
        return true;
    }
    ranges.iter().any(|&(lo, hi)| lo <= word && word <= hi)
}

/// [`key_woken`] of one range given as its first key word `lo` and its
/// length minus one `span` (`lo = u32::MAX, span = 0` for an empty
/// range), branch-free: a word that reads as [`WaitKey::Any`] (kind 0 or
/// past 4) or lies in `lo..=lo + span`.
#[inline(always)]
pub fn key_in_range(word: u32, lo: u32, span: u32) -> bool {
    let any = word.wrapping_sub(1 << KIND_SHIFT) >= 4 << KIND_SHIFT;
    any | (word.wrapping_sub(lo) <= span)
}

/// The keys one DMA slice's wake satisfies: [`Change::Dma`] (DRAIN
/// waiters) and, when the slice completed a packet, [`Change::Sem`] of the
/// queue's completion semaphore and [`Change::Event`] of its completion
/// event. Worked out once per slice so the per-engine test is a few
/// compares of the published word, without building a range list
/// ([`key_woken`] of the same changes agrees on every word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaWake {
    /// The completion semaphore's key word, or 0 (a word of kind 0 is
    /// woken anyway).
    sem: u32,
    /// The completion event's key word, or 0.
    event: u32,
}

impl DmaWake {
    /// The wake of a slice that changed completion semaphore `sem` and
    /// completion event `event` (either or both may be `None`).
    #[inline]
    pub fn new(sem: Option<u32>, event: Option<u32>) -> DmaWake {
        DmaWake {
            sem: sem.map_or(0, |s| WaitKey::Sem(s).encode()),
            event: event.map_or(0, |e| WaitKey::Event(e).encode()),
        }
    }

    /// Whether an engine whose published key word is `word` must re-check:
    /// any word that reads as [`WaitKey::Any`], every DRAIN wait, and the
    /// waits on the completion semaphore or event.
    #[inline]
    pub fn wakes(&self, word: u32) -> bool {
        let kind = word >> KIND_SHIFT;
        kind == 0 || kind == 3 || kind > 4 || word == self.sem || word == self.event
    }
}

/// Waker side: orders the register change before the reads of the
/// engines' keys (once per wake, not once per engine).
///
/// A change made by a sequentially consistent atomic operation (the
/// semaphores' and events' stores and additions) needs no fence: its
/// write and the waker's sequentially consistent key loads
/// ([`EngineWait::word_sc`]) are ordered by the single total order of
/// such operations, and the engine's fence in [`EngineWait::begin_step`]
/// orders its key reset before its register reads, so either the engine
/// reads the change or the waker reads a key the change matches (C++20
/// `[atomics.order]` p4: the engine's register read is coherence-ordered
/// before the change and the waker's key read before the reset, which
/// would put the engine's fence before the change, the change before the
/// key read and the key read before the fence). A change made with
/// weaker stores (CTRL_ER's zeroing, a DMA slice's head counters) fences
/// here.
#[inline]
pub fn publish_change() {
    fence(Ordering::SeqCst);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn change_lists_keep_order_and_overflow_to_everything() {
        let c = Changes::of(&[None, Some(Change::Sem(1)), None, Some(Change::Event(2))]);
        assert_eq!(c.as_slice(), &[Change::Sem(1), Change::Event(2)]);
        assert!(Changes::of(&[None, None]).is_empty());
        let mut many = Changes::default();
        for i in 0..6 {
            many.push(Change::Sem(i));
        }
        assert_eq!(many.as_slice().len(), 5);
        assert_eq!(
            many.as_slice()[4],
            Change::Everything,
            "a sixth change wakes everyone"
        );
    }

    #[test]
    fn changes_wake_only_matching_waits() {
        assert!(Change::Sem(3).wakes(WaitKey::Sem(3)));
        assert!(!Change::Sem(3).wakes(WaitKey::Sem(4)));
        assert!(!Change::Sem(3).wakes(WaitKey::Event(3)));
        assert!(Change::Event(3).wakes(WaitKey::Event(3)));
        assert!(Change::Sems(0, 247).wakes(WaitKey::Sem(247)));
        assert!(!Change::Sems(0, 247).wakes(WaitKey::Sem(249)));
        assert!(Change::Events(2, 4).wakes(WaitKey::Event(2)));
        assert!(!Change::Sems(2, 4).wakes(WaitKey::Event(2)));
        assert!(Change::Dma.wakes(WaitKey::DmaIdle) && !Change::Dma.wakes(WaitKey::Sem(0)));
        assert!(Change::Q7.wakes(WaitKey::Q7) && !Change::Q7.wakes(WaitKey::DmaIdle));
        for k in [
            WaitKey::Sem(1),
            WaitKey::Event(9),
            WaitKey::DmaIdle,
            WaitKey::Q7,
            WaitKey::Any,
        ] {
            assert!(Change::Everything.wakes(k));
        }
        assert!(Change::Sem(77).wakes(WaitKey::Any) && Change::Dma.wakes(WaitKey::Any));
    }

    #[test]
    fn a_running_engine_is_woken_by_everything() {
        let w = EngineWait::default();
        w.blocked_on(WaitKey::Sem(5));
        assert!(!w.woken_by(Change::Sem(6)));
        w.begin_step();
        assert!(
            w.woken_by(Change::Sem(6)),
            "between begin_step and the next block every change counts"
        );
    }

    fn any_change() -> impl Strategy<Value = Change> {
        prop_oneof![
            (0u32..300).prop_map(Change::Sem),
            (0u32..300).prop_map(Change::Event),
            (0u32..300, 0u32..300).prop_map(|(a, b)| Change::Sems(a, b)),
            (0u32..300, 0u32..300).prop_map(|(a, b)| Change::Events(a, b)),
            Just(Change::Dma),
            Just(Change::Q7),
            Just(Change::Everything),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The waker's range test agrees with `Change::wakes` on every
        /// key, including words no encoder writes (those read as Any).
        #[test]
        fn key_ranges_agree_with_wakes(changes in prop::collection::vec(any_change(), 0..5), kind in 0u32..8, index in 0u32..300) {
            let word = (kind << KIND_SHIFT) | index;
            let ranges: Vec<(u32, u32)> = changes.iter().map(|c| c.key_range()).collect();
            let key = WaitKey::decode(word);
            prop_assert_eq!(key_woken(word, &ranges), changes.iter().any(|c| c.wakes(key)) || key == WaitKey::Any);
        }

        /// The branch-free one-range test agrees with `key_woken`.
        #[test]
        fn one_range_test_agrees(change in any_change(), kind in 0u32..8, index in 0u32..300, raw in any::<u32>(), use_raw in any::<bool>()) {
            let word = if use_raw { raw } else { (kind << KIND_SHIFT) | index };
            let (lo, hi) = change.key_range();
            let (l, span) = if lo <= hi { (lo, hi - lo) } else { (u32::MAX, 0) };
            prop_assert_eq!(key_in_range(word, l, span), key_woken(word, &[(lo, hi)]));
        }

        /// A DMA slice's wake agrees with the range test of its changes.
        #[test]
        fn dma_wakes_agree_with_key_ranges(sem in prop::option::of(0u32..300), event in prop::option::of(0u32..300), kind in 0u32..8, index in 0u32..300) {
            let word = (kind << KIND_SHIFT) | index;
            let changes: Vec<Change> = [Some(Change::Dma), sem.map(Change::Sem), event.map(Change::Event)].into_iter().flatten().collect();
            let ranges: Vec<(u32, u32)> = changes.iter().map(|c| c.key_range()).collect();
            prop_assert_eq!(DmaWake::new(sem, event).wakes(word), key_woken(word, &ranges));
        }

        #[test]
        fn keys_roundtrip(kind in 0u8..5, index in 0u32..256) {
            let k = match kind {
                0 => WaitKey::Any,
                1 => WaitKey::Sem(index),
                2 => WaitKey::Event(index),
                3 => WaitKey::DmaIdle,
                _ => WaitKey::Q7,
            };
            prop_assert_eq!(WaitKey::decode(k.encode()), k);
        }
    }
}
