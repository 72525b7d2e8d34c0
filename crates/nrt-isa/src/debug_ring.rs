//! The debug ring: where an engine's DEBUG_TENSOR_READ records (what NKI's
//! `device_print` becomes) leave their tiles for the host. The layout is
//! ours (docs/isa.md §9): the compiler's and libnrt's are not public.
//!
//! One ring per engine per core and model, in memory the runtime
//! allocates at load: a 64-byte header, then `capacity` bytes of entries
//! written one after another modulo `capacity` (an entry may wrap). The
//! engine is the only producer and the runtime the only consumer; both
//! counters are free-running byte counts.
//!
//! | Offset | Width | Field | Written by |
//! |---|---|---|---|
//! | +0x00 | 8 | `capacity`: bytes of the entry area | the runtime, at load |
//! | +0x08 | 8 | `produced`: bytes of entries written | the engine, after each entry's bytes |
//! | +0x10 | 8 | `consumed`: bytes of entries read | the runtime |
//! | +0x18 | 8 | `dropped`: entries the engine had no room for | the engine |
//!
//! An entry is a 64-byte [`EntryHead`] followed by the tile's bytes,
//! partition by partition, each partition's elements in the pattern's
//! order (dimension 0 innermost), padded to a multiple of 8 bytes.

/// Bytes of the ring header; the entry area follows.
pub const HEADER_BYTES: u64 = 64;
/// Offset of `capacity` in the header.
pub const CAPACITY: u64 = 0x00;
/// Offset of `produced` in the header.
pub const PRODUCED: u64 = 0x08;
/// Offset of `consumed` in the header.
pub const CONSUMED: u64 = 0x10;
/// Offset of `dropped` in the header.
pub const DROPPED: u64 = 0x18;
/// Bytes of an entry's head.
pub const ENTRY_HEAD_BYTES: usize = 64;
/// Bytes of a prefix (the record's `prefix` field).
pub const PREFIX_BYTES: usize = 24;

/// The four header words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Bytes of the entry area.
    pub capacity: u64,
    /// Bytes of entries written (free-running).
    pub produced: u64,
    /// Bytes of entries read (free-running).
    pub consumed: u64,
    /// Entries dropped for lack of room.
    pub dropped: u64,
}

impl Header {
    /// Reads the header from its first 32 bytes.
    pub fn read(b: &[u8; 32]) -> Header {
        let w = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        Header { capacity: w(0), produced: w(8), consumed: w(16), dropped: w(24) }
    }

    /// The header's first 32 bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut b = [0u8; 32];
        for (i, v) in [self.capacity, self.produced, self.consumed, self.dropped].into_iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Whether an entry of `bytes` bytes fits beside the unread ones.
    pub fn fits(&self, bytes: u64) -> bool {
        self.produced.wrapping_sub(self.consumed).checked_add(bytes).is_some_and(|used| used <= self.capacity)
    }
}

/// The head of one entry: `entry_bytes` u32 +0x00, `dtype` +0x04,
/// `engine` +0x05, `partitions` u16 +0x06, `num` 3 × u16 +0x08, `data_bytes`
/// u64 +0x10, `prefix` +0x20 (NUL-padded); other bytes zero.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryHead {
    /// Bytes of the whole entry: head, data and padding (a multiple of 8).
    pub entry_bytes: u32,
    /// `nrt_dtype_t` code of the elements.
    pub dtype: u8,
    /// Engine index (PE 0, ACT 1, POOL 2, DVE 3, SP 4) that wrote it.
    pub engine: u8,
    /// Partitions of the tile.
    pub partitions: u16,
    /// Counts of the pattern's dimensions (0 innermost).
    pub num: [u16; 3],
    /// Bytes of tile data that follow the head.
    pub data_bytes: u64,
    /// The record's prefix (at most [`PREFIX_BYTES`] ASCII bytes).
    pub prefix: String,
}

impl EntryHead {
    /// Entry size for `data_bytes` of tile data: head plus data, padded to 8.
    pub fn entry_bytes_for(data_bytes: u64) -> u64 {
        (ENTRY_HEAD_BYTES as u64 + data_bytes).div_ceil(8) * 8
    }

    /// The 64 head bytes.
    pub fn to_bytes(&self) -> [u8; ENTRY_HEAD_BYTES] {
        let mut b = [0u8; ENTRY_HEAD_BYTES];
        b[0..4].copy_from_slice(&self.entry_bytes.to_le_bytes());
        b[4] = self.dtype;
        b[5] = self.engine;
        b[6..8].copy_from_slice(&self.partitions.to_le_bytes());
        for (i, n) in self.num.iter().enumerate() {
            b[8 + 2 * i..10 + 2 * i].copy_from_slice(&n.to_le_bytes());
        }
        b[0x10..0x18].copy_from_slice(&self.data_bytes.to_le_bytes());
        let p = self.prefix.as_bytes();
        let n = p.len().min(PREFIX_BYTES);
        b[0x20..0x20 + n].copy_from_slice(&p[..n]);
        b
    }

    /// Parses 64 head bytes; `None` when the sizes are inconsistent (an
    /// entry shorter than its head and data).
    pub fn read(b: &[u8; ENTRY_HEAD_BYTES]) -> Option<EntryHead> {
        let u16_at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let prefix_bytes = &b[0x20..0x20 + PREFIX_BYTES];
        let len = prefix_bytes.iter().position(|&c| c == 0).unwrap_or(PREFIX_BYTES);
        let head = EntryHead {
            entry_bytes: u32::from_le_bytes(b[0..4].try_into().unwrap_or_default()),
            dtype: b[4],
            engine: b[5],
            partitions: u16_at(6),
            num: [u16_at(8), u16_at(10), u16_at(12)],
            data_bytes: u64_at(0x10),
            prefix: String::from_utf8_lossy(&prefix_bytes[..len]).into_owned(),
        };
        (u64::from(head.entry_bytes) >= EntryHead::entry_bytes_for(head.data_bytes) && head.entry_bytes % 8 == 0).then_some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_heads_round_trip_and_reject_short_entries() {
        let h = EntryHead { entry_bytes: 64 + 16, dtype: 10, engine: 1, partitions: 2, num: [2, 1, 1], data_bytes: 16, prefix: "x_tile".into() };
        assert_eq!(EntryHead::read(&h.to_bytes()), Some(h.clone()));
        assert_eq!(EntryHead::entry_bytes_for(13), 80);
        let short = EntryHead { entry_bytes: 72, ..h };
        assert_eq!(EntryHead::read(&short.to_bytes()), None);
    }

    #[test]
    fn room_counts_unread_bytes() {
        let h = Header { capacity: 256, produced: 1000, consumed: 900, dropped: 0 };
        assert!(h.fits(156) && !h.fits(157));
        assert!(!Header::default().fits(8));
        assert_eq!(Header::read(&h.to_bytes()), h);
    }
}
