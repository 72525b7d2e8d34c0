//! Appending kernel output to the stdio rings (`docs/gpsimd.md` §7). The
//! device never waits for the host: a full ring overwrites its oldest
//! entries.

use crate::port::Bus;
use nrt_hal::DeviceAddr;
use nrt_isa::ucode::stdio::{STDIO_DESC_BYTES, TAG_STDERR, TAG_STDOUT};
use nrt_isa::ucode::{STDIO_ENTRY_BYTES, STDIO_TEXT_BYTES, StdioEntryHeader, StdioQueueDesc};

/// Appends `text` to Q7 core `q7`'s stdout (or stderr) ring of the stdio
/// table at `table` (the cluster's STDIO CSR); returns the bytes taken (0
/// when there is no table or the queue is off).
pub fn append(dev: &(impl Bus + ?Sized), table: u64, q7: u32, stderr: bool, text: &[u8], ts: u64) -> usize {
    if table == 0 || text.is_empty() {
        return 0;
    }
    let at = table + (StdioQueueDesc::table_index(q7, stderr) * STDIO_DESC_BYTES) as u64;
    let mut raw = [0u8; STDIO_DESC_BYTES];
    if dev.read(DeviceAddr(at), &mut raw).is_err() {
        return 0;
    }
    let Some(q) = StdioQueueDesc::decode(&raw) else { return 0 };
    let mut w = [0u8; 4];
    if dev.read(DeviceAddr(q.write_counter_addr()), &mut w).is_err() {
        return 0;
    }
    let mut count = u32::from_le_bytes(w);
    let tag = if stderr { TAG_STDERR } else { TAG_STDOUT } as u16;
    let mut taken = 0;
    for chunk in text.chunks(STDIO_TEXT_BYTES) {
        let mut entry = [0u8; STDIO_ENTRY_BYTES as usize];
        let h = StdioEntryHeader { len: chunk.len() as u32, q7: q7 as u16, tag, timestamp_ps: ts };
        entry[..16].copy_from_slice(&h.encode());
        entry[16..16 + chunk.len()].copy_from_slice(chunk);
        let slot = u64::from(count % q.capacity);
        if dev.write_at(DeviceAddr(q.data_addr + slot * STDIO_ENTRY_BYTES), &entry, ts).is_err() {
            break;
        }
        count = count.wrapping_add(1);
        taken += chunk.len();
    }
    let _ = dev.write_at(DeviceAddr(q.write_counter_addr()), &count.to_le_bytes(), ts);
    taken
}
