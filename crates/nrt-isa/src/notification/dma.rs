//! DMA trace records (NQ type TRACE_DMA, `notific_type` [`NotificType::Dma`]):
//! what a DMA engine writes into its trace ring when a packet completes.
//!
//! The layout of these records is not public; this one is ours. It keeps
//! the generic header word and timestamp and packs:
//!
//! | field | bits | meaning |
//! |---|---|---|
//! | `program_counter` | 0..20 | the queue's free-running TX descriptor index after the packet (low 20 bits) |
//! | `metadata_2` | 0..8 | the queue, core-relative (`engine * queues_per_engine + queue`; a core has 256) |
//! | `metadata_2` | 8..31 | bytes the packet moved, saturated at 0x7F_FFFF (a plain packet moves at most 64 KiB) |
//! | `metadata_2` | 31 | 1: the packet's start record, 0: its end record |
//! | timestamp | | device time (ps) at which the packet started (start record) or its last byte landed (end record) |
//!
//! A packet writes its start record, then its end record, both when it
//! completes. The simulator's DMA engines write them; the runtime reads
//! them back to account and trace its tensor transfers (`nrt::transfer`,
//! end records) and to draw each queue's transfers in device profiles
//! (`nrt::profile`, both).

use super::{NotificType, NotificationRecord};

/// Bytes a [`DmaCompletion`] can state; larger packets read as this.
pub const MAX_TRACED_BYTES: u64 = 0x7F_FFFF;

/// The bit of `metadata_2` that marks a start record.
const START_BIT: u32 = 1 << 31;

/// Which end of a packet a record stamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum DmaEdge {
    /// The packet's first descriptor began (its timestamp is the start).
    Start,
    /// The packet's last byte landed.
    #[default]
    End,
}

/// One packet completion on a DMA queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DmaCompletion {
    /// The queue, core-relative (`engine * queues_per_engine + queue`).
    pub queue: u8,
    /// The queue's free-running TX descriptor index after the packet, low
    /// 20 bits.
    pub descriptor: u32,
    /// Bytes the packet moved (saturated at [`MAX_TRACED_BYTES`]).
    pub bytes: u64,
    /// Device time (ps) the packet started ([`DmaEdge::Start`]) or
    /// finished ([`DmaEdge::End`]) at.
    pub timestamp_ps: u64,
    /// Which of the two.
    pub edge: DmaEdge,
}

impl DmaCompletion {
    /// The record a DMA engine writes.
    #[inline]
    pub fn to_record(&self) -> NotificationRecord {
        NotificationRecord {
            program_counter: self.descriptor & super::MAX_PROGRAM_COUNTER,
            notific_type: NotificType::Dma.code(),
            metadata_2: u32::from(self.queue) | (self.bytes.min(MAX_TRACED_BYTES) as u32) << 8 | if self.edge == DmaEdge::Start { START_BIT } else { 0 },
            timestamp_ps: self.timestamp_ps,
            ..Default::default()
        }
    }

    /// Reads a record back; `None` when it is not a DMA record.
    pub fn from_record(r: &NotificationRecord) -> Option<DmaCompletion> {
        (r.kind() == Some(NotificType::Dma)).then_some(DmaCompletion {
            queue: r.metadata_2 as u8,
            descriptor: r.program_counter,
            bytes: u64::from((r.metadata_2 & !START_BIT) >> 8),
            timestamp_ps: r.timestamp_ps,
            edge: if r.metadata_2 & START_BIT != 0 { DmaEdge::Start } else { DmaEdge::End },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every field survives the record bytes (bytes saturated, the
        /// descriptor index cut to 20 bits).
        #[test]
        fn completions_round_trip(queue: u8, descriptor: u32, bytes in 0u64..1 << 26, ts: u64, start: bool) {
            let edge = if start { DmaEdge::Start } else { DmaEdge::End };
            let c = DmaCompletion { queue, descriptor, bytes, timestamp_ps: ts, edge };
            let back = DmaCompletion::from_record(&NotificationRecord::from_bytes(&c.to_record().to_bytes_truncated())).unwrap();
            prop_assert_eq!(back, DmaCompletion { descriptor: descriptor & 0xF_FFFF, bytes: bytes.min(MAX_TRACED_BYTES), ..c });
        }
    }

    #[test]
    fn other_records_are_not_completions() {
        let r = NotificationRecord { notific_type: NotificType::Error.code(), ..Default::default() };
        assert_eq!(DmaCompletion::from_record(&r), None);
    }
}
