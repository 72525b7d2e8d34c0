//! The request ring between submitters and an execution unit's worker
//! (`xu_queue_t`): a bounded single-producer / single-consumer queue.
//!
//! Two cursors, each on its own cache line, both starting at 1 (sequence
//! number 0 is "nothing yet"):
//! - `tail`: the next sequence number to hand out (producer-owned);
//! - `head`: the oldest request not yet completed (consumer-owned).
//!
//! The producer fills slot `tail % capacity` and then publishes
//! `tail + 1` (Release); the consumer reads `tail` (Acquire), takes the
//! item of slot `head % capacity`, runs it, and only when it has completed
//! publishes `head + 1` (Release), which frees the slot. So a slot is
//! owned by exactly one side at any time: `[head, tail)` by the consumer,
//! the rest by the producer. Full is `tail - head == capacity` (checked
//! before anything is written, so a full queue has no side effect).
//!
//! The crate forbids `unsafe`, so each slot is a `Mutex<Option<T>>`; by
//! the ownership rule above that mutex is never contended (one atomic
//! exchange to take, one to release) and the cursors carry the hand-off.
//! Cursors and slots each sit on their own [`CacheLine`]: the producer
//! filling slot `k + 1` must not pull the line of slot `k` (or of `head`)
//! away from the consumer working on it.
//! Several submitting threads serialise on the unit's submit lock before
//! they reach [`XuQueue::push`] (libnrt's `submit_work_lock`).

use crate::cache_line::CacheLine;
use crate::status::{NrtError, NrtResult, NrtStatus};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most requests a queue may hold (`NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS` cap).
pub const MAX_CAPACITY: u64 = 63;

type Cursor = CacheLine<AtomicU64>;

/// See the module docs.
#[derive(Debug)]
pub struct XuQueue<T> {
    slots: Box<[CacheLine<Mutex<Option<T>>>]>,
    capacity: u64,
    head: Cursor,
    tail: Cursor,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T> XuQueue<T> {
    /// A queue of `capacity` requests (1..=[`MAX_CAPACITY`]).
    pub fn new(capacity: u64) -> NrtResult<XuQueue<T>> {
        if capacity == 0 || capacity > MAX_CAPACITY {
            return Err(NrtError::invalid(format!("XU Queue size must be between 1 and {MAX_CAPACITY}, got {capacity}")));
        }
        Ok(XuQueue {
            slots: (0..capacity).map(|_| CacheLine(Mutex::new(None))).collect(),
            capacity,
            head: CacheLine(AtomicU64::new(1)),
            tail: CacheLine(AtomicU64::new(1)),
        })
    }

    /// Requests it can hold.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The oldest uncompleted sequence number (`exec_head`).
    pub fn head(&self) -> u64 {
        self.head.0.load(Ordering::Acquire)
    }

    /// The next sequence number to hand out (`scheduled_tail`).
    pub fn tail(&self) -> u64 {
        self.tail.0.load(Ordering::Acquire)
    }

    /// Producer: queues `item` and returns its sequence number, or hands
    /// it back with NRT_QUEUE_FULL (nothing changed). The caller holds the
    /// unit's submit lock.
    pub fn push(&self, item: T) -> Result<u64, (T, NrtError)> {
        let tail = self.tail.0.load(Ordering::Relaxed);
        let head = self.head.0.load(Ordering::Acquire);
        if tail - head >= self.capacity {
            let e = NrtError::new(NrtStatus::QueueFull, format!("execution unit queue is full ({} requests queued)", self.capacity));
            return Err((item, e));
        }
        *lock(&self.slots[(tail % self.capacity) as usize]) = Some(item);
        self.tail.0.store(tail + 1, Ordering::Release);
        Ok(tail)
    }

    /// Consumer: takes the request at `head` out of its slot (the slot
    /// stays owned by the consumer until [`XuQueue::complete_front`]).
    /// `None` when nothing is queued or it was already taken.
    pub fn take_front(&self) -> Option<(u64, T)> {
        let head = self.head.0.load(Ordering::Relaxed);
        if head == self.tail.0.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.slots[(head % self.capacity) as usize]).take().map(|t| (head, t))
    }

    /// Consumer: the request at `head` has completed; frees its slot and
    /// returns its sequence number.
    pub fn complete_front(&self) -> u64 {
        let head = self.head.0.load(Ordering::Relaxed);
        debug_assert!(head < self.tail.0.load(Ordering::Acquire), "complete_front on an empty queue");
        self.head.0.store(head + 1, Ordering::Release);
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    #[test]
    fn full_queue_refuses_without_side_effects_and_frees_on_completion() {
        let q = XuQueue::new(2).unwrap();
        assert_eq!(q.push(10).unwrap(), 1);
        assert_eq!(q.push(11).unwrap(), 2);
        let (back, e) = q.push(12).unwrap_err();
        assert_eq!((back, e.status), (12, NrtStatus::QueueFull));
        assert_eq!((q.head(), q.tail()), (1, 3));
        assert_eq!(q.take_front(), Some((1, 10)));
        // Taken but not completed: still full.
        assert!(q.push(12).is_err());
        assert_eq!(q.take_front(), None, "the front was already taken");
        assert_eq!(q.complete_front(), 1);
        assert_eq!(q.push(12).unwrap(), 3);
        assert!(XuQueue::<u8>::new(0).is_err());
        assert!(XuQueue::<u8>::new(64).is_err());
    }

    #[test]
    fn two_threads_hand_over_every_item_once_in_order() {
        let q = Arc::new(XuQueue::new(3).unwrap());
        let n = 20_000u64;
        let consumer = {
            let q = q.clone();
            std::thread::spawn(move || {
                let mut next = 1;
                while next <= n {
                    match q.take_front() {
                        Some((seq, v)) => {
                            assert_eq!((seq, v), (next, next * 7));
                            assert_eq!(q.complete_front(), next);
                            next += 1;
                        }
                        None => std::thread::yield_now(),
                    }
                }
            })
        };
        let mut i = 1;
        while i <= n {
            match q.push(i * 7) {
                Ok(seq) => {
                    assert_eq!(seq, i);
                    i += 1;
                }
                Err(_) => std::thread::yield_now(),
            }
        }
        consumer.join().unwrap();
        assert_eq!((q.head(), q.tail()), (n + 1, n + 1));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any single-threaded sequence of pushes, takes and completions
        /// behaves like a bounded FIFO with monotonic sequence numbers.
        #[test]
        fn behaves_like_a_bounded_fifo(cap in 1u64..6, ops in proptest::collection::vec(0u8..3, 0..80)) {
            let q = XuQueue::new(cap).unwrap();
            let mut model: std::collections::VecDeque<(u64, u32)> = Default::default();
            let mut taken = false;
            let mut next_seq = 1u64;
            for (k, op) in ops.into_iter().enumerate() {
                match op {
                    0 => match q.push(k as u32) {
                        Ok(s) => { prop_assert_eq!(s, next_seq); next_seq += 1; model.push_back((s, k as u32)); }
                        Err((v, e)) => { prop_assert_eq!(v, k as u32); prop_assert_eq!(e.status, NrtStatus::QueueFull); prop_assert_eq!(model.len() as u64, cap); }
                    },
                    1 => {
                        let got = q.take_front();
                        if taken || model.is_empty() { prop_assert_eq!(got, None); } else { prop_assert_eq!(got, model.front().copied()); taken = true; }
                    }
                    _ => if taken {
                        prop_assert_eq!(q.complete_front(), model.pop_front().unwrap().0);
                        taken = false;
                    },
                }
                prop_assert_eq!(q.tail() - q.head(), model.len() as u64);
            }
        }
    }
}
