//! The device pages a Q7 core's tensor copies go through, resolved once
//! and kept for the rest of the op.
//!
//! A kernel moves a tensor in chunks (`tensor_to_tcm` / `tcm_to_tensor`,
//! 8 KiB in the examples): 128 host calls per core for 1M fp32 in and
//! out. Through [`Shared::read`] / [`Shared::write_at`] every one decodes
//! the address, read-locks the page table and looks the page up before it
//! copies. Here a chunk that lands in a page the core used before goes
//! straight to that page: one page lock, one copy between the page and
//! the kernel's memory, no intermediate buffer. Anything else (on-chip
//! memory, an untouched page on a read, a page dropped since) takes the
//! ordinary path, which also reports bad addresses.

use crate::device::Shared;
use crate::memory::pages::PinnedRange;
use nrt_hal::{DeviceAddr, HalResult};

/// Pages kept per core: a source and a destination stream, plus one.
const SLOTS: usize = 3;

/// One core's pinned pages: (first device address, range).
#[derive(Debug, Default)]
pub(crate) struct PinCache {
    slots: [Option<(u64, PinnedRange)>; SLOTS],
    /// The slot the next miss replaces (round robin).
    next: usize,
}

impl PinCache {
    /// Drops every pin (an op ended; its pages may be freed or reused).
    pub(crate) fn clear(&mut self) {
        self.slots = Default::default();
    }

    /// The cached page holding device address `addr`.
    fn find(&self, addr: u64) -> Option<(u64, &PinnedRange)> {
        self.slots.iter().flatten().find(|(base, pin)| addr >= *base && addr - *base < pin.len() as u64).map(|(b, p)| (*b, p))
    }

    /// Resolves and keeps the page holding `addr` (materialising it only
    /// for a write); `None` where no page can be pinned.
    fn pin(&mut self, dev: &Shared, addr: u64, write: bool) -> Option<(u64, &PinnedRange)> {
        let at = DeviceAddr(addr);
        let (base, pin) = if write { dev.pin_page(at, 1)? } else { dev.pin_resident_page(at, 1)? };
        let k = self.next;
        self.next = (k + 1) % SLOTS;
        let slot = self.slots[k].insert((base.get(), pin));
        Some((slot.0, &slot.1))
    }

    /// Copies device bytes at `addr` into `buf`.
    pub(crate) fn read(&mut self, dev: &Shared, addr: u64, buf: &mut [u8]) -> HalResult<()> {
        let mut done = 0;
        while done < buf.len() {
            let a = addr + done as u64;
            let n = match self.find(a) {
                Some((base, pin)) => Self::read_pinned(pin, a - base, &mut buf[done..]),
                None => match self.pin(dev, a, false) {
                    Some((base, pin)) => Self::read_pinned(pin, a - base, &mut buf[done..]),
                    None => None,
                },
            };
            match n {
                Some(n) => done += n,
                None => {
                    self.clear();
                    return dev.read(DeviceAddr(a), &mut buf[done..]);
                }
            }
        }
        Ok(())
    }

    /// Copies `data` to device address `addr` (stamped `now`).
    pub(crate) fn write(&mut self, dev: &Shared, addr: u64, data: &[u8], now: u64) -> HalResult<()> {
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let n = match self.find(a) {
                Some((base, pin)) => Self::write_pinned(pin, a - base, &data[done..]),
                None => match self.pin(dev, a, true) {
                    Some((base, pin)) => Self::write_pinned(pin, a - base, &data[done..]),
                    None => None,
                },
            };
            match n {
                Some(n) => done += n,
                None => {
                    self.clear();
                    return dev.write_at(DeviceAddr(a), &data[done..], now);
                }
            }
        }
        Ok(())
    }

    /// Reads what of `buf` the page holds from byte `within` on; the bytes
    /// read, or `None` if the page was dropped.
    fn read_pinned(pin: &PinnedRange, within: u64, buf: &mut [u8]) -> Option<usize> {
        let n = (pin.len() - within as usize).min(buf.len());
        pin.read(within as usize, &mut buf[..n]).then_some(n)
    }

    /// The write counterpart of [`PinCache::read_pinned`].
    fn write_pinned(pin: &PinnedRange, within: u64, data: &[u8]) -> Option<usize> {
        let n = (pin.len() - within as usize).min(data.len());
        pin.write(within as usize, &data[..n]).then_some(n)
    }
}
