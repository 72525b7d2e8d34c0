//! Little-endian field access at byte offsets inside a record.
//!
//! Records are fixed 64-byte arrays and every offset used by the codecs is a
//! compile-time constant inside the record, so these helpers index directly;
//! an offset past the end is a programming error, not a data error.

use super::RecordBytes;

/// Reads the byte at `off`.
pub fn read_u8(rec: &RecordBytes, off: usize) -> u8 {
    rec[off]
}

/// Reads a little-endian u16 at `off`.
pub fn read_u16(rec: &RecordBytes, off: usize) -> u16 {
    u16::from_le_bytes([rec[off], rec[off + 1]])
}

/// Reads a little-endian u32 at `off`.
pub fn read_u32(rec: &RecordBytes, off: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&rec[off..off + 4]);
    u32::from_le_bytes(b)
}

/// Reads a little-endian u64 at `off`.
pub fn read_u64(rec: &RecordBytes, off: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&rec[off..off + 8]);
    u64::from_le_bytes(b)
}

/// Writes a byte at `off`.
pub fn write_u8(rec: &mut RecordBytes, off: usize, v: u8) {
    rec[off] = v;
}

/// Writes a little-endian u16 at `off`.
pub fn write_u16(rec: &mut RecordBytes, off: usize, v: u16) {
    rec[off..off + 2].copy_from_slice(&v.to_le_bytes());
}

/// Writes a little-endian u32 at `off`.
pub fn write_u32(rec: &mut RecordBytes, off: usize, v: u32) {
    rec[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes a little-endian u64 at `off`.
pub fn write_u64(rec: &mut RecordBytes, off: usize, v: u64) {
    rec[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_little_endian() {
        let mut rec = [0u8; 64];
        write_u32(&mut rec, 0x10, 0x0203_7cfe);
        assert_eq!(&rec[0x10..0x14], &[0xfe, 0x7c, 0x03, 0x02]);
        assert_eq!(read_u32(&rec, 0x10), 0x0203_7cfe);
        write_u16(&mut rec, 0x20, 0xffe0);
        assert_eq!(read_u16(&rec, 0x20), 0xffe0);
        write_u64(&mut rec, 0x38, 0x1122_3344_5566_7788);
        assert_eq!(rec[0x38], 0x88);
        assert_eq!(read_u64(&rec, 0x38), 0x1122_3344_5566_7788);
        write_u8(&mut rec, 3, 9);
        assert_eq!(read_u8(&rec, 3), 9);
    }
}
