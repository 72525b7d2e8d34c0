//! NQ ring arithmetic: power-of-two rings of 16-byte records with a phase
//! bit, as pure logic over a byte slice.
//!
//! Positions are free-running `u64` counters (producer tail, consumer head);
//! the slot is `position % entries`. Ring memory starts zeroed. A record
//! written on pass `p = position / entries` carries phase `p` even -> 1,
//! odd -> 0, so the first pass writes phase 1 over the zeroed memory and
//! every wrap flips it. A consumer knows a slot holds a new record when its
//! phase bit equals the phase expected for the consumer's own position;
//! it needs no producer register.
//!
//! Overflow: a lossless ring refuses a record when `tail - head` equals the
//! capacity (back-pressure). A lossy ring overwrites the oldest slot, sets
//! the record's software-overflow bit and reports [`PushOutcome::Overwrote`];
//! the consumer cannot see that from phase bits alone (a stale slot and an
//! overwritten one have the same parity), which is why the hardware raises
//! the "software notification queue overflowed" interrupt instead.

use super::{NQ_RECORD_SIZE, NotificationRecord, NqError};

/// Geometry of one NQ ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NqRing {
    entries: u64,
}

impl NqRing {
    /// A ring of `size_bytes` bytes: a power of two, at least one record.
    pub fn new(size_bytes: usize) -> Result<Self, NqError> {
        if size_bytes < NQ_RECORD_SIZE || !size_bytes.is_power_of_two() {
            return Err(NqError::BadRingSize(size_bytes));
        }
        Ok(NqRing { entries: (size_bytes / NQ_RECORD_SIZE) as u64 })
    }

    /// Capacity in records.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.entries as usize * NQ_RECORD_SIZE
    }

    /// Byte offset of the slot for free-running `position`.
    pub fn offset(&self, position: u64) -> usize {
        (position & (self.entries - 1)) as usize * NQ_RECORD_SIZE
    }

    /// Phase bit of records written at `position` (1 on the first pass).
    pub fn phase(&self, position: u64) -> bool {
        (position / self.entries).is_multiple_of(2)
    }

    /// Records pending between consumer `head` and producer `tail`.
    pub fn used(&self, head: u64, tail: u64) -> u64 {
        tail.wrapping_sub(head)
    }

    fn check_memory(&self, len: usize) -> Result<(), NqError> {
        if len == self.size_bytes() {
            Ok(())
        } else {
            Err(NqError::RingMemorySize { expected: self.size_bytes(), got: len })
        }
    }
}

/// What the producer does when the ring is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum OverflowPolicy {
    /// Refuse the record ([`NqError::RingFull`]); the engine stalls.
    #[default]
    Lossless,
    /// Overwrite the oldest record and flag the overflow.
    Lossy,
}

/// Result of a successful push.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PushOutcome {
    /// Written into a free slot.
    Written,
    /// The ring was full; the oldest unread record was overwritten.
    Overwrote,
}

/// The device side of an NQ ring: writes records at its tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NqProducer {
    ring: NqRing,
    tail: u64,
}

impl NqProducer {
    /// A producer at position 0 of `ring`.
    pub fn new(ring: NqRing) -> Self {
        NqProducer { ring, tail: 0 }
    }

    /// Free-running count of records written.
    pub fn tail(&self) -> u64 {
        self.tail
    }

    /// Write `record` at the tail with this pass's phase bit. `head` is the
    /// consumer's position (the ring's head register).
    pub fn push(
        &mut self,
        mem: &mut [u8],
        head: u64,
        mut record: NotificationRecord,
        policy: OverflowPolicy,
    ) -> Result<PushOutcome, NqError> {
        self.ring.check_memory(mem.len())?;
        let full = self.ring.used(head, self.tail) >= self.ring.entries;
        if full && policy == OverflowPolicy::Lossless {
            return Err(NqError::RingFull { entries: self.ring.entries });
        }
        record.phase = self.ring.phase(self.tail);
        record.sw_overflow |= full;
        let bytes = record.to_bytes()?;
        let at = self.ring.offset(self.tail);
        mem[at..at + NQ_RECORD_SIZE].copy_from_slice(&bytes);
        self.tail = self.tail.wrapping_add(1);
        Ok(if full { PushOutcome::Overwrote } else { PushOutcome::Written })
    }
}

/// The host side of an NQ ring: reads records at its head by phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NqConsumer {
    ring: NqRing,
    head: u64,
}

impl NqConsumer {
    /// A consumer at position 0 of `ring`.
    pub fn new(ring: NqRing) -> Self {
        NqConsumer { ring, head: 0 }
    }

    /// Free-running count of records consumed (what the host writes back as
    /// the drain acknowledgement).
    pub fn head(&self) -> u64 {
        self.head
    }

    /// The next record if its phase says it is new; advances the head.
    pub fn poll(&mut self, mem: &[u8]) -> Result<Option<NotificationRecord>, NqError> {
        self.ring.check_memory(mem.len())?;
        let at = self.ring.offset(self.head);
        let record = NotificationRecord::from_slice(&mem[at..at + NQ_RECORD_SIZE])?;
        if record.phase != self.ring.phase(self.head) {
            return Ok(None);
        }
        self.head = self.head.wrapping_add(1);
        Ok(Some(record))
    }

    /// Up to `max` new records, oldest first (the runtime reads at most 16
    /// per engine per sweep).
    pub fn drain(&mut self, mem: &[u8], max: usize) -> Result<Vec<NotificationRecord>, NqError> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.poll(mem)? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }
}
