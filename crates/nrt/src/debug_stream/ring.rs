//! The device side of the debug stream: a debug ring
//! (`nrt_isa::debug_ring`) per engine whose image holds DEBUG_TENSOR_READ
//! records, staged at load, and drained into [`DebugEvent`]s after each
//! execution. The engine writes the ring; the runtime only reads it and
//! acknowledges what it read (`consumed`).

use super::event::DebugEvent;
use crate::memory::{MemUsage, ModelMemory};
use crate::status::{NrtError, NrtResult};
use nrt_hal::{Device, DeviceAddr, EngineId};
use nrt_isa::debug_ring::{self, ENTRY_HEAD_BYTES, EntryHead, Header};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::DebugTensorRead;
use nrt_isa::opcode::Opcode;
use nrt_isa::record::RecordBytes;
use std::sync::Mutex;

/// Smallest entry area of a ring.
pub const MIN_RING_BYTES: u64 = 64 << 10;
/// Largest entry area of a ring (a tile larger than this is always
/// dropped, and counted).
pub const MAX_RING_BYTES: u64 = 64 << 20;

/// One engine's staged debug ring.
#[derive(Debug)]
pub struct DebugRing {
    /// The engine whose records write it.
    pub engine: EngineId,
    /// Device address of the ring header.
    pub addr: DeviceAddr,
    /// Bytes of the entry area.
    pub capacity: u64,
    /// Entries the device reported dropped when last drained.
    seen_dropped: Mutex<u64>,
}

/// Entry area for a stream whose prints write `bytes` per pass: room for
/// two passes (a print in a loop still drops past that), a power of two
/// between [`MIN_RING_BYTES`] and [`MAX_RING_BYTES`].
fn ring_bytes(bytes: u64) -> u64 {
    bytes.saturating_mul(2).clamp(MIN_RING_BYTES, MAX_RING_BYTES).next_power_of_two().min(MAX_RING_BYTES)
}

/// Stages a debug ring for `engine` when its lowered `image` holds
/// DEBUG_TENSOR_READ records, and points every such record at it. `None`
/// when the image prints nothing.
pub fn stage(image: &mut [RecordBytes], engine: EngineId, memory: &ModelMemory, device: &dyn Device) -> NrtResult<Option<DebugRing>> {
    let op = Opcode::DebugTensorRead.to_u8();
    let mut bytes = 0u64;
    let mut any = false;
    for rec in image.iter().filter(|r| r[0] == op) {
        any = true;
        // A record that does not decode faults on the device; it sizes nothing.
        if let Ok(r) = DebugTensorRead::decode(rec) {
            let esize = Dtype::from_code(r.dtype.0).map_or(1, |d| d.size_bytes()) as u64;
            let elems = u64::from(r.partitions) * r.input.num.iter().map(|&n| u64::from(n)).product::<u64>();
            bytes = bytes.saturating_add(EntryHead::entry_bytes_for(elems * esize));
        }
    }
    if !any {
        return Ok(None);
    }
    let capacity = ring_bytes(bytes);
    let addr = memory.alloc_host(MemUsage::Notification, debug_ring::HEADER_BYTES + capacity, 64)?;
    let header = Header { capacity, ..Header::default() };
    device
        .write(addr, &header.to_bytes())
        .map_err(|e| NrtError::failure(format!("initialising the debug ring of {}: {e}", engine.name())))?;
    for rec in image.iter_mut().filter(|r| r[0] == op) {
        rec[0x20..0x28].copy_from_slice(&addr.get().to_le_bytes());
    }
    Ok(Some(DebugRing { engine, addr, capacity, seen_dropped: Mutex::new(0) }))
}

impl DebugRing {
    /// Reads the entries the device wrote since the last drain, as events
    /// of logical core `lnc`, and acknowledges them. Entries that make no
    /// sense (an unknown dtype, sizes that disagree) end the drain with a
    /// warning; the ring is acknowledged up to what the device wrote.
    /// Entries the device dropped since the last drain are logged.
    pub fn drain(&self, device: &dyn Device, lnc: u32, out: &mut Vec<DebugEvent>) {
        let mut words = [0u8; 32];
        if let Err(e) = device.read(self.addr, &mut words) {
            crate::log_warn!(crate::log::Module::Nrt, "debug ring of {} unreadable: {e}", self.engine.name());
            return;
        }
        let h = Header::read(&words);
        let mut seen = self.seen_dropped.lock().unwrap_or_else(|e| e.into_inner());
        if h.dropped > *seen {
            crate::log_warn!(
                crate::log::Module::Nrt,
                "logical core {lnc}: {} debug prints of {} dropped on the device: its debug ring ({} bytes) had no room",
                h.dropped - *seen,
                self.engine.name(),
                self.capacity
            );
            *seen = h.dropped;
        }
        let mut at = h.consumed;
        while at < h.produced {
            match self.entry(device, at, h.produced, lnc) {
                Ok((event, bytes)) => {
                    out.push(event);
                    at += bytes;
                }
                Err(why) => {
                    crate::log_warn!(crate::log::Module::Nrt, "debug ring of {} on logical core {lnc}: {why}; skipping what is left", self.engine.name());
                    break;
                }
            }
        }
        if let Err(e) = device.write(self.addr.offset(debug_ring::CONSUMED), &h.produced.to_le_bytes()) {
            crate::log_warn!(crate::log::Module::Nrt, "debug ring of {}: acknowledging failed: {e}", self.engine.name());
        }
    }

    /// The entry at byte count `at` (below `produced`) and its size.
    fn entry(&self, device: &dyn Device, at: u64, produced: u64, lnc: u32) -> Result<(DebugEvent, u64), String> {
        let mut head = [0u8; ENTRY_HEAD_BYTES];
        self.read_wrapped(device, at, &mut head)?;
        let h = EntryHead::read(&head).ok_or("an entry's sizes disagree")?;
        let bytes = u64::from(h.entry_bytes);
        if bytes > self.capacity {
            return Err(format!("an entry of {bytes} bytes is larger than the ring's {}", self.capacity));
        }
        if at + bytes > produced {
            return Err(format!("an entry of {bytes} bytes runs past the {} written", produced - at));
        }
        let dtype = Dtype::from_code(h.dtype).ok_or_else(|| format!("unknown dtype code {}", h.dtype))?;
        let mut data = vec![0u8; h.data_bytes as usize];
        self.read_wrapped(device, at + ENTRY_HEAD_BYTES as u64, &mut data)?;
        let event = DebugEvent { prefix: h.prefix, logical_nc_id: lnc, pipe: u32::from(h.engine), dtype, shape: DebugEvent::shape_of(h.partitions, h.num), data };
        Ok((event, bytes))
    }

    /// Reads `buf.len()` bytes of the entry area from byte count `at`, wrapping.
    fn read_wrapped(&self, device: &dyn Device, at: u64, buf: &mut [u8]) -> Result<(), String> {
        let area = self.addr.offset(debug_ring::HEADER_BYTES);
        let start = at % self.capacity;
        let first = ((self.capacity - start) as usize).min(buf.len());
        let (a, b) = buf.split_at_mut(first);
        device.read(area.offset(start), a).map_err(|e| e.to_string())?;
        if !b.is_empty() {
            device.read(area, b).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_hold_two_passes_within_bounds() {
        assert_eq!(ring_bytes(0), MIN_RING_BYTES);
        assert_eq!(ring_bytes(100 << 10), 256 << 10);
        assert_eq!(ring_bytes(u64::MAX), MAX_RING_BYTES);
    }
}
