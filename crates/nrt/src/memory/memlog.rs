//! The allocation log: a bounded record of every device allocation and
//! free (libnrt's circular 64-byte event log, dumped as CSV when an
//! allocation fails), so an OOM can be traced back to what filled memory.

use super::ledger::MemOwner;
use super::usage::MemUsage;
use nrt_hal::{CoreId, DeviceAddr};
use std::collections::VecDeque;
use std::fmt::Write;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemEventKind {
    /// An allocation succeeded.
    Alloc,
    /// An allocation was freed.
    Free,
    /// An allocation did not fit.
    Failed,
}

impl MemEventKind {
    fn name(self) -> &'static str {
        match self {
            MemEventKind::Alloc => "alloc",
            MemEventKind::Free => "free",
            MemEventKind::Failed => "failed",
        }
    }
}

/// One entry of the allocation log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemEvent {
    /// Sequence number (counts dropped entries too).
    pub seq: u64,
    /// What happened.
    pub kind: MemEventKind,
    /// Address (0 for a failed allocation).
    pub addr: DeviceAddr,
    /// Bytes.
    pub size: u64,
    /// Usage type.
    pub usage: MemUsage,
    /// Physical core.
    pub core: CoreId,
    /// Owner.
    pub owner: MemOwner,
}

/// The bounded log.
#[derive(Debug)]
pub(crate) struct MemLog {
    capacity: usize,
    events: VecDeque<MemEvent>,
    next_seq: u64,
}

impl MemLog {
    pub(crate) fn new(capacity: usize) -> MemLog {
        MemLog { capacity, events: VecDeque::new(), next_seq: 0 }
    }

    pub(crate) fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.events.len() > capacity {
            self.events.pop_front();
        }
    }

    pub(crate) fn push(&mut self, kind: MemEventKind, addr: DeviceAddr, size: u64, usage: MemUsage, core: CoreId, owner: MemOwner) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.capacity == 0 {
            return;
        }
        if self.events.len() == self.capacity {
            self.events.pop_front();
        }
        self.events.push_back(MemEvent { seq, kind, addr, size, usage, core, owner });
    }

    /// Entries kept.
    pub(crate) fn len(&self) -> usize {
        self.events.len()
    }

    /// Entries that fell out of the log.
    pub(crate) fn dropped(&self) -> u64 {
        self.next_seq - self.events.len() as u64
    }

    pub(crate) fn events(&self) -> Vec<MemEvent> {
        self.events.iter().copied().collect()
    }

    /// The log as CSV (header line first).
    pub(crate) fn csv(&self) -> String {
        let mut s = String::from("seq,op,address,size,usage,nc,owner\n");
        for e in &self.events {
            let owner = match e.owner {
                MemOwner::Runtime => "runtime".to_string(),
                MemOwner::Model(id) => format!("model {id}"),
            };
            let _ = writeln!(s, "{},{},{},{},{},{},{owner}", e.seq, e.kind.name(), e.addr, e.size, e.usage.name(), e.core.0);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_counts_drops() {
        let mut l = MemLog::new(2);
        for i in 0..5u64 {
            l.push(MemEventKind::Alloc, DeviceAddr(i * 16), 16, MemUsage::Tensor, CoreId(0), MemOwner::Runtime);
        }
        assert_eq!(l.dropped(), 3);
        let seqs: Vec<u64> = l.events().iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![3, 4]);
        let csv = l.csv();
        assert_eq!(csv.lines().next(), Some("seq,op,address,size,usage,nc,owner"));
        assert_eq!(csv.lines().nth(1), Some("3,alloc,0x30,16,TENSOR,0,runtime"));
        l.set_capacity(0);
        l.push(MemEventKind::Free, DeviceAddr(0), 16, MemUsage::Tensor, CoreId(0), MemOwner::Model(2));
        assert!(l.events().is_empty());
        assert_eq!(l.dropped(), 6);
    }
}
