//! The device pages a Q7 core's tensor copies go through, resolved once
//! and kept, across ops, for as long as they stay in their region.
//!
//! A kernel moves a tensor in chunks (`tensor_to_tcm` / `tcm_to_tensor`,
//! 8 KiB in the examples): 128 host calls per core for 1M fp32 in and
//! out. Through [`Bus::read`] / [`Bus::write_at`] every one decodes
//! the address, read-locks the page table and looks the page up before it
//! copies. Here a chunk that lands in a page the core used before goes
//! straight to that page: one page lock, one copy between the page and
//! the kernel's memory, no intermediate buffer. Anything else (on-chip
//! memory, an untouched page on a read, a page dropped since) takes the
//! ordinary path, which also reports bad addresses.
//!
//! Keeping pins from one op to the next is sound because a page belongs
//! to its address until its region drops it, and a dropped page refuses
//! pinned accesses (they fail, the cache is emptied and the ordinary path
//! answers). A freed and reallocated tensor reuses the same pages, as the
//! ordinary path would.

use crate::port::Bus;
use crate::memory::pages::{PAGE_SIZE, PinnedRange};
use nrt_hal::{DeviceAddr, HalResult};

/// Pins checked first: the pages of the streams a chunk loop is moving
/// (a source, a destination, plus one).
const RECENT: usize = 3;

/// Pins kept across ops, direct-mapped by page index: enough for a core's
/// share of a few MiB of tensors (a 1M-element fp32 op on eight cores
/// uses sixteen pages per core).
const TABLE: usize = 64;

/// A pinned page: its first device address and the range.
type Pin = (u64, PinnedRange);

/// One core's pinned pages.
#[derive(Debug)]
pub(crate) struct PinCache {
    recent: [Option<Pin>; RECENT],
    /// The recent slot the next miss replaces (round robin).
    next: usize,
    /// Every page pinned so far, by a hash of its index; a collision
    /// replaces the older pin (which is pinned again when next used).
    table: Box<[Option<Pin>]>,
}

impl Default for PinCache {
    fn default() -> PinCache {
        PinCache { recent: Default::default(), next: 0, table: vec![None; TABLE].into_boxed_slice() }
    }
}

/// The table slot of the page holding `addr` (Fibonacci hashing of the
/// page index: neighbouring pages, and tensors a whole number of pages
/// apart, spread over the table).
fn slot(addr: u64) -> usize {
    ((addr / PAGE_SIZE).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TABLE.trailing_zeros())) as usize
}

/// Whether `pin` holds device address `addr`.
fn holds(pin: &Pin, addr: u64) -> bool {
    addr >= pin.0 && addr - pin.0 < pin.1.len() as u64
}

impl PinCache {
    /// Drops every pin (a pinned page went away: start over).
    pub(crate) fn clear(&mut self) {
        self.recent = Default::default();
        self.table.fill(None);
    }

    /// The pin holding `addr`: a recent one, else one kept from before
    /// (made recent), else a new one (materialising the page only for a
    /// write); `None` where no page can be pinned.
    #[inline]
    fn find(&mut self, dev: &(impl Bus + ?Sized), addr: u64, write: bool) -> Option<&Pin> {
        if let Some(i) = self.recent.iter().position(|p| p.as_ref().is_some_and(|p| holds(p, addr))) {
            return self.recent[i].as_ref();
        }
        self.find_slow(dev, addr, write)
    }

    #[inline(never)]
    fn find_slow(&mut self, dev: &(impl Bus + ?Sized), addr: u64, write: bool) -> Option<&Pin> {
        let s = slot(addr);
        let kept = self.table[s].as_ref().filter(|p| holds(p, addr)).cloned();
        let pin = match kept {
            Some(p) => p,
            None => {
                let at = DeviceAddr(addr);
                let (base, range) = if write { dev.pin_page(at, 1)? } else { dev.pin_resident_page(at, 1)? };
                let p = (base.get(), range);
                self.table[s] = Some(p.clone());
                p
            }
        };
        let k = self.next;
        self.next = (k + 1) % RECENT;
        Some(self.recent[k].insert(pin))
    }

    /// Copies device bytes at `addr` into `buf`.
    pub(crate) fn read(&mut self, dev: &(impl Bus + ?Sized), addr: u64, buf: &mut [u8]) -> HalResult<()> {
        let mut done = 0;
        while done < buf.len() {
            let a = addr + done as u64;
            // No page to pin (on-chip memory, an untouched page, a bad
            // address): the ordinary path reads it, or says what is wrong.
            let Some((base, pin)) = self.find(dev, a, false) else { return dev.read(DeviceAddr(a), &mut buf[done..]) };
            let within = (a - base) as usize;
            let n = (pin.len() - within).min(buf.len() - done);
            if !pin.read(within, &mut buf[done..done + n]) {
                // The page left its region: no pin can be trusted.
                self.clear();
                return dev.read(DeviceAddr(a), &mut buf[done..]);
            }
            done += n;
        }
        Ok(())
    }

    /// Copies `data` to device address `addr` (stamped `now`).
    pub(crate) fn write(&mut self, dev: &(impl Bus + ?Sized), addr: u64, data: &[u8], now: u64) -> HalResult<()> {
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let Some((base, pin)) = self.find(dev, a, true) else { return dev.write_at(DeviceAddr(a), &data[done..], now) };
            let within = (a - base) as usize;
            let n = (pin.len() - within).min(data.len() - done);
            if !pin.write(within, &data[done..done + n]) {
                self.clear();
                return dev.write_at(DeviceAddr(a), &data[done..], now);
            }
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimConfig, SimDevice};
    use nrt_hal::{Device, MemoryLocation};

    fn device() -> SimDevice {
        SimDevice::new(&SimConfig::builder().deterministic(true).build(), 0)
    }

    #[test]
    fn kept_pins_see_ordinary_writes_and_are_seen_by_ordinary_reads() {
        let dev = device();
        let a = dev.alloc(MemoryLocation::Hbm { channel: 0 }, 3 * PAGE_SIZE, PAGE_SIZE).unwrap().get();
        let sh = &**dev.shared();
        let mut pins = PinCache::default();
        // A write spanning two pages goes through two pins.
        let data: Vec<u8> = (0..12_000u32).map(|i| (i % 251) as u8).collect();
        let at = a + PAGE_SIZE - 5000;
        pins.write(sh, at, &data, 0).unwrap();
        let mut back = vec![0u8; data.len()];
        dev.read(DeviceAddr(at), &mut back).unwrap();
        assert_eq!(back, data, "pinned writes land in the pages");
        // "Next op": the pins are still there and see ordinary writes.
        dev.write(DeviceAddr(at + 100), &[7; 50]).unwrap();
        let mut got = vec![0u8; 200];
        pins.read(sh, at + 50, &mut got).unwrap();
        assert_eq!(&got[..50], &data[50..100]);
        assert_eq!(&got[50..100], &[7; 50]);
        assert_eq!(&got[100..], &data[150..250]);
    }

    #[test]
    fn reads_of_untouched_pages_pin_nothing_and_keep_the_other_pins() {
        let dev = device();
        let a = dev.alloc(MemoryLocation::Hbm { channel: 0 }, 4 * PAGE_SIZE, PAGE_SIZE).unwrap().get();
        let sh = &**dev.shared();
        let mut pins = PinCache::default();
        pins.write(sh, a, &[1; 64], 0).unwrap();
        let resident = dev.resident_pages();
        let mut z = [9u8; 64];
        pins.read(sh, a + 2 * PAGE_SIZE, &mut z).unwrap();
        assert_eq!(z, [0; 64], "untouched memory reads as zero");
        assert_eq!(dev.resident_pages(), resident, "and stays untouched");
        assert!(pins.recent.iter().flatten().any(|p| p.0 == a), "the written page is still pinned");
        // A bad address is reported by the ordinary path.
        assert!(pins.read(sh, u64::MAX - 8, &mut z).is_err());
        assert!(pins.write(sh, u64::MAX - 8, &z, 0).is_err());
    }

    #[test]
    fn colliding_pages_are_pinned_again_and_stay_correct() {
        let dev = device();
        let pages = 2 * TABLE as u64;
        let a = dev.alloc(MemoryLocation::Hbm { channel: 0 }, pages * PAGE_SIZE, PAGE_SIZE).unwrap().get();
        let sh = &**dev.shared();
        let mut pins = PinCache::default();
        // More pages than table slots: some share a slot.
        for round in 0..2u8 {
            for p in 0..pages {
                pins.write(sh, a + p * PAGE_SIZE + 8, &[round ^ p as u8; 8], 0).unwrap();
            }
            for p in 0..pages {
                let mut b = [0u8; 8];
                pins.read(sh, a + p * PAGE_SIZE + 8, &mut b).unwrap();
                assert_eq!(b, [round ^ p as u8; 8], "page {p}, round {round}");
            }
        }
        for (i, p) in pins.table.iter().enumerate() {
            assert!(p.as_ref().is_none_or(|p| slot(p.0) == i), "every kept pin sits in its page's slot");
        }
    }
}
