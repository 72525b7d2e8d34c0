//! The Q7 stdio rings (libnrt's pool_stdio, `seed-siblings` §8.6): a table
//! of 16 queue descriptors (stdout of Q7 cores 0..8, then stderr), each
//! naming a ring of 256-byte entries followed by the device's write
//! counter.

/// Bytes of one queue descriptor.
pub const STDIO_DESC_BYTES: usize = 64;
/// Bytes of the whole table (16 descriptors).
pub const STDIO_TABLE_BYTES: usize = 16 * STDIO_DESC_BYTES;
/// Bytes of one ring entry.
pub const STDIO_ENTRY_BYTES: u64 = 0x100;
/// Text bytes one entry carries (the host copies these from +0x10).
pub const STDIO_TEXT_BYTES: usize = 0xF0;
/// Descriptor magic of a live queue.
pub const STDIO_MAGIC: u16 = 0x0201;
/// Tag of a stdout queue.
pub const TAG_STDOUT: u32 = 3;
/// Tag of a stderr queue.
pub const TAG_STDERR: u32 = 1;
/// Entries of a stderr queue (0x400 / 0x100).
pub const STDERR_ENTRIES: u32 = 4;

/// One queue descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StdioQueueDesc {
    /// Q7 core the queue belongs to.
    pub q7: u16,
    /// [`TAG_STDOUT`] or [`TAG_STDERR`].
    pub tag: u32,
    /// Entries (a power of two).
    pub capacity: u32,
    /// Device address of the entries; the u32 write counter follows them.
    pub data_addr: u64,
    /// Device address of the host's u32 read counter.
    pub read_counter_addr: u64,
}

impl StdioQueueDesc {
    /// Index of Q7 core `q7`'s stdout (`stderr` false) or stderr queue.
    pub fn table_index(q7: u32, stderr: bool) -> usize {
        q7 as usize + if stderr { 8 } else { 0 }
    }

    /// Device address of the write counter.
    pub fn write_counter_addr(&self) -> u64 {
        self.data_addr.wrapping_add(u64::from(self.capacity) * STDIO_ENTRY_BYTES)
    }

    /// Bytes of ring storage (entries plus the counter).
    pub fn storage_bytes(&self) -> u64 {
        u64::from(self.capacity) * STDIO_ENTRY_BYTES + 4
    }

    /// The 64 descriptor bytes.
    pub fn encode(&self) -> [u8; STDIO_DESC_BYTES] {
        let mut b = [0u8; STDIO_DESC_BYTES];
        b[0..2].copy_from_slice(&STDIO_MAGIC.to_le_bytes());
        b[2..4].copy_from_slice(&self.q7.to_le_bytes());
        b[4..8].copy_from_slice(&self.tag.to_le_bytes());
        b[0x0C..0x10].copy_from_slice(&self.capacity.to_le_bytes());
        b[0x10..0x18].copy_from_slice(&self.data_addr.to_le_bytes());
        b[0x18..0x20].copy_from_slice(&self.read_counter_addr.to_le_bytes());
        b
    }

    /// Decodes a descriptor: `None` for a queue that is off (wrong magic,
    /// capacity 0 or not a power of two).
    pub fn decode(b: &[u8; STDIO_DESC_BYTES]) -> Option<StdioQueueDesc> {
        if u16::from_le_bytes([b[0], b[1]]) != STDIO_MAGIC {
            return None;
        }
        let capacity = u32::from_le_bytes([b[0x0C], b[0x0D], b[0x0E], b[0x0F]]);
        if !capacity.is_power_of_two() {
            return None;
        }
        Some(StdioQueueDesc {
            q7: u16::from_le_bytes([b[2], b[3]]),
            tag: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            capacity,
            data_addr: u64::from_le_bytes(b[0x10..0x18].try_into().expect("8 bytes")),
            read_counter_addr: u64::from_le_bytes(b[0x18..0x20].try_into().expect("8 bytes")),
        })
    }
}

/// The 16-byte header of a ring entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StdioEntryHeader {
    /// Text bytes in the entry (1..=0xF0).
    pub len: u32,
    /// Q7 core that wrote it.
    pub q7: u16,
    /// Queue tag.
    pub tag: u16,
    /// Device timestamp (ps).
    pub timestamp_ps: u64,
}

impl StdioEntryHeader {
    /// The 16 header bytes.
    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.len.to_le_bytes());
        b[4..6].copy_from_slice(&self.q7.to_le_bytes());
        b[6..8].copy_from_slice(&self.tag.to_le_bytes());
        b[8..16].copy_from_slice(&self.timestamp_ps.to_le_bytes());
        b
    }

    /// Decodes a header; the length is clamped to 0xF0.
    pub fn decode(b: &[u8; 16]) -> StdioEntryHeader {
        StdioEntryHeader {
            len: u32::from_le_bytes([b[0], b[1], b[2], b[3]]).min(STDIO_TEXT_BYTES as u32),
            q7: u16::from_le_bytes([b[4], b[5]]),
            tag: u16::from_le_bytes([b[6], b[7]]),
            timestamp_ps: u64::from_le_bytes(b[8..16].try_into().expect("8 bytes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn descriptor_layout_is_byte_exact() {
        let d = StdioQueueDesc { q7: 3, tag: TAG_STDOUT, capacity: 16, data_addr: 0x1000, read_counter_addr: 0x2000 };
        let b = d.encode();
        assert_eq!(&b[..8], &[0x01, 0x02, 3, 0, 3, 0, 0, 0]);
        assert_eq!(StdioQueueDesc::decode(&b), Some(d));
        assert_eq!(d.write_counter_addr(), 0x1000 + 16 * 0x100);
        assert_eq!(d.storage_bytes(), 16 * 0x100 + 4);
        assert_eq!(StdioQueueDesc::table_index(3, true), 11);
        let mut off = b;
        off[0] = 0;
        assert_eq!(StdioQueueDesc::decode(&off), None);
        let h = StdioEntryHeader { len: 5, q7: 1, tag: 3, timestamp_ps: 99 };
        assert_eq!(StdioEntryHeader::decode(&h.encode()), h);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_descriptors_never_panic(b in any::<[u8; 32]>(), hdr in any::<[u8; 16]>()) {
            let mut d = [0u8; STDIO_DESC_BYTES];
            d[..32].copy_from_slice(&b);
            let _ = StdioQueueDesc::decode(&d);
            prop_assert!(StdioEntryHeader::decode(&hdr).len <= 0xF0);
        }
    }
}
