//! Which DMA queues carry custom-op traffic: the static queue-bundle table,
//! the (engine, queue) classifier over it, and the staging walk that picks
//! one queue per Q7 core (seed 000 §2).
//!
//! The table is 30 packed 16-byte tuples {marker, rel_queue_idx, eng_lo,
//! eng_hi}; marker is a `kbin_dma_ring_type`, the engine range is
//! `[eng_lo, eng_hi)`. A queue is a custom-op queue when some tuple has
//! marker 16 (CUSTOM_OP), its `rel_queue_idx` equals the queue and the
//! engine lies in its range. The walk visits engines 0..16 and queues
//! 0..16 in that order and keeps the first eight hits, one per Q7 core.
//!
//! Our table gives queue 15 of DMA engines 8..16 to custom ops; the model
//! queue pool never hands those out ([`is_custom_op_dma`] is the filter).

use nrt_hal::arch::{ArchDesc, DMA_M2S_GROUP, DMA_S2M_GROUP};
use nrt_hal::{CoreId, DmaQueueId};

/// `kbin_dma_ring_type` GENERIC: queues the model pool hands out.
pub const RING_TYPE_GENERIC: u32 = 17;
/// `kbin_dma_ring_type` EMBEDDING_UPDATE.
pub const RING_TYPE_EMBEDDING_UPDATE: u32 = 15;
/// `kbin_dma_ring_type` CUSTOM_OP (KBIN_DMA_RING_TYPE_CUSTOM_OP): the marker
/// the classifier looks for.
pub const KBIN_DMA_RING_TYPE_CUSTOM_OP: u32 = 16;
/// `kbin_dma_ring_type` LAST: an unused table row.
pub const RING_TYPE_LAST: u32 = 18;
/// Rows in the table (`v2_queue_bundle_alloc_table_len`).
pub const QUEUE_BUNDLE_TABLE_LEN: usize = 30;
/// Bytes per row.
pub const QUEUE_BUNDLE_ENTRY_BYTES: usize = 16;
/// DMA engines the staging walk visits.
pub const WALK_ENGINES: u32 = 16;
/// Queues per engine the staging walk visits.
pub const WALK_QUEUES: u32 = 16;
/// Queues the walk keeps: one per Q7 core of the POOL engine.
pub const MAX_CUSTOM_OP_QUEUES: usize = 8;

/// One row of the queue-bundle table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueBundleEntry {
    /// Ring type (`kbin_dma_ring_type`).
    pub marker: u32,
    /// Queue index within each engine of the range.
    pub rel_queue_idx: u32,
    /// First engine of the range (inclusive).
    pub eng_lo: u32,
    /// End of the engine range (exclusive).
    pub eng_hi: u32,
}

impl QueueBundleEntry {
    /// The packed little-endian 16-byte form.
    pub fn to_bytes(self) -> [u8; QUEUE_BUNDLE_ENTRY_BYTES] {
        let mut b = [0u8; QUEUE_BUNDLE_ENTRY_BYTES];
        for (i, v) in [self.marker, self.rel_queue_idx, self.eng_lo, self.eng_hi].into_iter().enumerate() {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Reads a packed row.
    pub fn from_bytes(b: &[u8; QUEUE_BUNDLE_ENTRY_BYTES]) -> QueueBundleEntry {
        let w = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        QueueBundleEntry { marker: w(0), rel_queue_idx: w(1), eng_lo: w(2), eng_hi: w(3) }
    }

    /// Whether this row makes (engine, queue) a custom-op queue: the four
    /// comparisons of the classifier.
    pub fn matches_custom_op(&self, engine: u32, queue: u32) -> bool {
        self.marker == KBIN_DMA_RING_TYPE_CUSTOM_OP && self.rel_queue_idx == queue && engine >= self.eng_lo && engine < self.eng_hi
    }
}

const fn row(marker: u32, rel_queue_idx: u32, eng_lo: u32, eng_hi: u32) -> QueueBundleEntry {
    QueueBundleEntry { marker, rel_queue_idx, eng_lo, eng_hi }
}

const UNUSED: QueueBundleEntry = row(RING_TYPE_LAST, 0, 0, 0);

/// The runtime's queue-bundle table: queues 0..14 of every engine are
/// generic, queue 14 of every engine is for embedding updates, queue 15 is
/// generic on engines 0..8 and custom-op on engines 8..16 (two rows); the
/// remaining rows are unused.
pub const QUEUE_BUNDLE_TABLE: [QueueBundleEntry; QUEUE_BUNDLE_TABLE_LEN] = [
    row(RING_TYPE_GENERIC, 0, 0, 16),
    row(RING_TYPE_GENERIC, 1, 0, 16),
    row(RING_TYPE_GENERIC, 2, 0, 16),
    row(RING_TYPE_GENERIC, 3, 0, 16),
    row(RING_TYPE_GENERIC, 4, 0, 16),
    row(RING_TYPE_GENERIC, 5, 0, 16),
    row(RING_TYPE_GENERIC, 6, 0, 16),
    row(RING_TYPE_GENERIC, 7, 0, 16),
    row(RING_TYPE_GENERIC, 8, 0, 16),
    row(RING_TYPE_GENERIC, 9, 0, 16),
    row(RING_TYPE_GENERIC, 10, 0, 16),
    row(RING_TYPE_GENERIC, 11, 0, 16),
    row(RING_TYPE_GENERIC, 12, 0, 16),
    row(RING_TYPE_GENERIC, 13, 0, 16),
    row(RING_TYPE_EMBEDDING_UPDATE, 14, 0, 16),
    row(RING_TYPE_GENERIC, 15, 0, 8),
    row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 15, 8, 12),
    row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 15, 12, 16),
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
    UNUSED,
];

/// The table as the device-visible bytes (30 x 16).
pub fn table_bytes(table: &[QueueBundleEntry]) -> Vec<u8> {
    table.iter().flat_map(|e| e.to_bytes()).collect()
}

/// The classifier over an explicit table (`dma_is_custom_op_dma_v2`).
pub fn is_custom_op_dma_in(table: &[QueueBundleEntry], engine: u32, queue: u32) -> bool {
    table.iter().any(|e| e.matches_custom_op(engine, queue))
}

/// Whether DMA queue `queue` of DMA engine `engine` is a custom-op queue.
pub fn is_custom_op_dma(engine: u32, queue: u32) -> bool {
    is_custom_op_dma_in(&QUEUE_BUNDLE_TABLE, engine, queue)
}

/// One staged custom-op queue: the DMA engine's register base and the
/// offsets of the queue's M2S and S2M tail registers from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomOpQueue {
    /// The hardware queue.
    pub queue: DmaQueueId,
    /// Device address of the DMA engine's register block.
    pub engine_pa: u64,
    /// M2S (read side) tail-increment register, relative to `engine_pa`.
    pub m2s: u64,
    /// S2M (write side) tail-increment register, relative to `engine_pa`.
    pub s2m: u64,
}

impl CustomOpQueue {
    /// Absolute address of the M2S tail-increment register.
    pub fn m2s_addr(&self) -> u64 {
        self.engine_pa + self.m2s
    }

    /// Absolute address of the S2M tail-increment register.
    pub fn s2m_addr(&self) -> u64 {
        self.engine_pa + self.s2m
    }
}

/// The staging walk (`ucode_stage_libs_table`) over an explicit table:
/// engines 0..16 x queues 0..16, recording (engine PA, m2s, s2m) for each
/// custom-op hit, at most eight.
pub fn stage_custom_op_queues_in(table: &[QueueBundleEntry], arch: &ArchDesc, core: CoreId) -> Vec<CustomOpQueue> {
    let mut out = Vec::with_capacity(MAX_CUSTOM_OP_QUEUES);
    'walk: for engine in 0..WALK_ENGINES.min(arch.dma_engines_per_core) {
        for queue in 0..WALK_QUEUES.min(arch.queues_per_dma_engine) {
            if !is_custom_op_dma_in(table, engine, queue) {
                continue;
            }
            let q = DmaQueueId { engine: engine as u8, queue: queue as u8 };
            let engine_pa = arch.dma_engine_regs(core, engine).get();
            let tail = |group| arch.dma_tail_inc_addr(core, q, group).get() - engine_pa;
            out.push(CustomOpQueue { queue: q, engine_pa, m2s: tail(DMA_M2S_GROUP), s2m: tail(DMA_S2M_GROUP) });
            if out.len() == MAX_CUSTOM_OP_QUEUES {
                break 'walk;
            }
        }
    }
    out
}

/// The eight custom-op queues of `core` (one per Q7 core, in walk order).
pub fn stage_custom_op_queues(arch: &ArchDesc, core: CoreId) -> Vec<CustomOpQueue> {
    stage_custom_op_queues_in(&QUEUE_BUNDLE_TABLE, arch, core)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::Arch;

    #[test]
    fn table_is_thirty_packed_sixteen_byte_rows() {
        let b = table_bytes(&QUEUE_BUNDLE_TABLE);
        assert_eq!(b.len(), 0x1E0);
        assert_eq!(&b[16 * 16..16 * 17], &[16, 0, 0, 0, 15, 0, 0, 0, 8, 0, 0, 0, 12, 0, 0, 0]);
        for (i, e) in QUEUE_BUNDLE_TABLE.iter().enumerate() {
            let raw: [u8; 16] = b[16 * i..16 * i + 16].try_into().unwrap();
            assert_eq!(QueueBundleEntry::from_bytes(&raw), *e);
        }
    }

    #[test]
    fn classifier_hits_and_misses_at_the_range_edges() {
        // Engine range [8, 16) on queue 15: lo inclusive, hi exclusive.
        assert!(!is_custom_op_dma(7, 15));
        assert!(is_custom_op_dma(8, 15));
        assert!(is_custom_op_dma(11, 15));
        assert!(is_custom_op_dma(12, 15));
        assert!(is_custom_op_dma(15, 15));
        assert!(!is_custom_op_dma(16, 15));
        // Right engine, wrong queue; generic and embedding rows never match.
        assert!(!is_custom_op_dma(8, 14));
        assert!(!is_custom_op_dma(8, 0));
        assert!(!is_custom_op_dma(0, 15));
        // A row with the right range but another marker does not match.
        let t = [row(RING_TYPE_GENERIC, 3, 0, 4)];
        assert!(!is_custom_op_dma_in(&t, 1, 3));
        let t = [row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 3, 0, 4)];
        assert!(is_custom_op_dma_in(&t, 0, 3) && is_custom_op_dma_in(&t, 3, 3) && !is_custom_op_dma_in(&t, 4, 3));
    }

    #[test]
    fn walk_records_eight_queues_in_engine_order() {
        let arch = Arch::Trn1.desc();
        let qs = stage_custom_op_queues(arch, CoreId(1));
        assert_eq!(qs.len(), MAX_CUSTOM_OP_QUEUES);
        for (i, q) in qs.iter().enumerate() {
            assert_eq!(q.queue, DmaQueueId { engine: 8 + i as u8, queue: 15 });
            assert_eq!(q.m2s_addr(), arch.dma_tail_inc_addr(CoreId(1), q.queue, DMA_M2S_GROUP).get());
            assert_eq!(q.s2m_addr(), arch.dma_tail_inc_addr(CoreId(1), q.queue, DMA_S2M_GROUP).get());
            // The engine's UDMA unit and the tail registers of m2s_q[15]
            // and s2m_q[15] in it (udma/udma_regs.h).
            assert_eq!(q.engine_pa, 0x0FFF_F070_0000 + 0x4_0000 * (8 + i as u64));
            assert_eq!((q.m2s, q.s2m), (0x1_0038, 0x3_0038));
        }
    }

    #[test]
    fn walk_stops_at_eight_hits() {
        // Every queue of every engine is custom-op: the walk still keeps 8,
        // the first eight queues of engine 0.
        let t = [row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 0, 0, 16), row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 1, 0, 16), row(KBIN_DMA_RING_TYPE_CUSTOM_OP, 5, 0, 2)];
        let qs = stage_custom_op_queues_in(&t, Arch::Trn1.desc(), CoreId(0));
        let got: Vec<(u8, u8)> = qs.iter().map(|q| (q.queue.engine, q.queue.queue)).collect();
        assert_eq!(got, [(0, 0), (0, 1), (0, 5), (1, 0), (1, 1), (1, 5), (2, 0), (2, 1)]);
        // No custom-op rows: nothing staged.
        assert!(stage_custom_op_queues_in(&[UNUSED], Arch::Trn1.desc(), CoreId(0)).is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Rows survive the packed form, and the classifier agrees with the
        /// row predicate for any (engine, queue).
        #[test]
        fn rows_round_trip_and_classify(m in 0u32..20, q in 0u32..20, lo in 0u32..20, hi in 0u32..20, e in 0u32..20, qq in 0u32..20) {
            let r = row(m, q, lo, hi);
            proptest::prop_assert_eq!(QueueBundleEntry::from_bytes(&r.to_bytes()), r);
            let expect = m == 16 && q == qq && e >= lo && e < hi;
            proptest::prop_assert_eq!(is_custom_op_dma_in(&[r], e, qq), expect);
        }
    }
}
