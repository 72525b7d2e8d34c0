//! The memory door's one implementation: [`Bus`] (and the notification
//! rings' [`RingMemory`]) for [`Shared`], routing every device address to
//! its pool, on-chip memory or register window, and a peer-window address
//! ([`Target::Peer`]) to the device of the instance it names, whose own
//! routing takes it from there (so a DMA engine of one device writes
//! another's memory and rings its semaphores and queues; a copy between
//! two devices' pages is as direct as one inside a device).

use super::Shared;
use crate::core::Core;
use crate::dma;
use crate::memory::Target;
use crate::memory::pages::{PinnedRange, Stamp};
use crate::nq::RingMemory;
use crate::port::{Bus, StoreRoute};
use crate::semaphore::{WindowOp, window_op};
use crate::wake::Change;
use nrt_hal::{DeviceAddr, HalError, HalResult};
use std::sync::Arc;


impl RingMemory for Shared {
    fn read_ring(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        self.read(addr, buf)
    }
    fn write_ring(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        match self.target(addr, data.len() as u64)? {
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) | Target::Peer(..) => {
                Err(HalError::invalid(addr, data.len() as u64, "notification rings must be in this device's memory, not registers or a peer device"))
            }
            Target::Pool(ch, off) => {
                self.pool(ch).bytes.write(off, data);
                Ok(())
            }
            _ => self.write_at(addr, data, 0),
        }
    }
}

impl Bus for Shared {
    #[inline]
    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        Shared::read(self, addr, buf)
    }
    #[inline]
    fn write_at(&self, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()> {
        Shared::write_at(self, addr, data, now)
    }
    #[inline]
    fn read_stamped(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<Option<Stamp>> {
        Shared::read_stamped(self, addr, buf)
    }
    #[inline]
    fn pin_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)> {
        Shared::pin_page(self, addr, len)
    }
    #[inline]
    fn pin_resident_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)> {
        Shared::pin_resident_page(self, addr, len)
    }
    #[inline]
    fn copy_at(&self, src: DeviceAddr, dst: DeviceAddr, len: u64, now: u64) -> HalResult<()> {
        Shared::copy_at(self, src, dst, len, now)
    }
    #[inline]
    fn copy_direct(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<bool> {
        Shared::copy_direct(self, src, dst, len)
    }
    #[inline]
    fn store_route(&self, addr: DeviceAddr) -> HalResult<StoreRoute> {
        Shared::store_route(self, addr)
    }
    fn memory_route(&self, addr: DeviceAddr, len: u64) -> Option<Target> {
        match self.target(addr, len) {
            Ok(t @ Target::Pool(..)) => Some(t),
            Ok(t @ (Target::Sbuf(c, _) | Target::Psum(c, _))) => self.core_ref(c).map(|_| t),
            _ => None,
        }
    }
    #[inline]
    fn copy_routed(&self, src: Target, dst: Target, len: u64) -> HalResult<()> {
        if Shared::copy_between(self, src, self, dst, len)? {
            Ok(())
        } else {
            Err(HalError::invalid(DeviceAddr(0), len, "a routed copy met a register window"))
        }
    }
    fn lands_in_semaphores(&self, addr: DeviceAddr) -> bool {
        Shared::lands_in_semaphores(self, addr)
    }
}

impl Shared {
    /// Reads device bytes from any window.
    pub fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        let len = buf.len() as u64;
        match self.target(addr, len)? {
            Target::Pool(ch, off) => self.pool(ch).bytes.read(off, buf),
            Target::Sbuf(c, off) => match self.started_core(c) {
                Some(core) => core.sbuf.read(off, buf),
                None => buf.fill(0),
            },
            Target::Psum(c, off) => match self.started_core(c) {
                Some(core) => core.psum.read(off, buf),
                None => buf.fill(0),
            },
            Target::EvtSem(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                for (k, word) in buf.chunks_exact_mut(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let op = window_op(o, core.sync.semaphores(), core.sync.events())
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no register at EVT_SEM offset {o:#x}")))?;
                    word.copy_from_slice(&core.sync.read_window(op).to_le_bytes());
                }
            }
            Target::Q7(c, off) => {
                let t = self.q7_target(addr, off, len)?;
                self.core(c)?.q7.read(t, addr, buf)?;
            }
            Target::DmaRegs(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                for (k, word) in buf.chunks_exact_mut(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let r = dma::reg_ref(o)
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no DMA register at offset {o:#x}")))?;
                    word.copy_from_slice(&dma::read_reg(&core.dma[r.queue], r).to_le_bytes());
                }
            }
            Target::Peer(d, local) => self.peer(d, addr, len)?.read(local, buf)?,
        }
        Ok(())
    }

    /// Whether a write at `addr` lands in a semaphore or event register
    /// (of this device or, through the peer window, another's): what a
    /// lost notification (`sem_lost`) drops.
    pub fn lands_in_semaphores(&self, addr: DeviceAddr) -> bool {
        match self.target(addr, 4) {
            Ok(Target::EvtSem(..)) => true,
            Ok(Target::Peer(d, local)) => self.peer(d, addr, 4).is_ok_and(|p| matches!(p.target(local, 4), Ok(Target::EvtSem(..)))),
            _ => false,
        }
    }

    /// The whole backing page around `addr..addr+len` when that range is
    /// HBM or host memory inside one page: the page's first device address
    /// and its pin (see [`crate::memory::pages::PinnedRange`]). `None` for
    /// on-chip memory, register windows, ranges across pages and bad
    /// addresses.
    pub fn pin_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)> {
        self.pin_page_with(addr, len, true)
    }

    /// [`Shared::pin_page`] for a page that is already backed; `None` for
    /// an untouched one (a reader pins only what exists, so reading
    /// untouched memory still costs no page).
    pub fn pin_resident_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)> {
        self.pin_page_with(addr, len, false)
    }

    pub(super) fn pin_page_with(&self, addr: DeviceAddr, len: u64, materialise: bool) -> Option<(DeviceAddr, PinnedRange)> {
        use crate::memory::pages::PAGE_SIZE;
        let (ch, off) = match self.target(addr, len) {
            Ok(Target::Pool(ch, off)) => (ch, off),
            Ok(Target::Peer(d, local)) => {
                // The peer's page, named by its peer-window address.
                let (base, pin) = self.peer(d, addr, len).ok()?.pin_page_with(local, len, materialise)?;
                return Some((DeviceAddr(addr.get() - (local.get() - base.get())), pin));
            }
            _ => return None,
        };
        let bytes = &self.pool(ch).bytes;
        let start = off - off % PAGE_SIZE;
        let span = PAGE_SIZE.min(bytes.len() - start);
        if off + len > start + span {
            return None;
        }
        let pin = if materialise { bytes.pin(start, span)? } else { bytes.pin_resident(start, span)? };
        Some((DeviceAddr(addr.get() - (off - start)), pin))
    }

    /// Reads device bytes like [`Shared::read`] and, for HBM and host
    /// memory reads of at most one page (64 KiB), returns the stamp of the
    /// pages they came from, for callers that cache something derived from
    /// the bytes (instruction fetch). `Ok(None)` (bytes read, no stamp) for
    /// on-chip memory, register windows and longer reads.
    pub fn read_stamped(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<Option<Stamp>> {
        match self.target(addr, buf.len() as u64)? {
            Target::Pool(ch, off) => {
                if let Some(stamp) = self.pool(ch).bytes.read_stamped(off, buf) {
                    return Ok(Some(stamp));
                }
            }
            Target::Peer(d, local) => return self.peer(d, addr, buf.len() as u64)?.read_stamped(local, buf),
            _ => {}
        }
        self.read(addr, buf)?;
        Ok(None)
    }

    /// Writes device bytes; register windows take effect, stamped with
    /// virtual time `now` (0 = the core's current time).
    pub fn write_at(&self, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()> {
        let target = self.target(addr, data.len() as u64)?;
        self.write_routed(target, addr, data, now)
    }

    /// Where a 32-bit store to `addr` lands, resolved once for a caller
    /// that stores there again and again (a WRITE record, decoded once per
    /// fetch): a DMA queue register (a doorbell, mostly) directly, anything
    /// else as its [`Target`].
    pub fn store_route(&self, addr: DeviceAddr) -> HalResult<StoreRoute> {
        let t = self.target(addr, 4)?;
        if let Target::DmaRegs(c, off) = t
            && addr.is_aligned(4)
            && let Some(r) = dma::reg_ref(off)
            && r.queue < self.arch.dma_queues_per_core() as usize
        {
            return Ok(StoreRoute::DmaReg(c, r));
        }
        Ok(StoreRoute::Other(t))
    }

    /// [`Shared::write_at`] to an address already routed: `target` is what
    /// the address decode ([`Shared::target`]) answered for `addr` and
    /// `data.len()`.
    pub fn write_routed(&self, target: Target, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()> {
        let len = data.len() as u64;
        match target {
            Target::Pool(ch, off) => self.pool(ch).bytes.write(off, data),
            Target::Sbuf(c, off) => self.core(c)?.sbuf.write(off, data),
            Target::Psum(c, off) => self.core(c)?.psum.write(off, data),
            Target::EvtSem(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                let now = if now == 0 { core.now() } else { now };
                for (k, word) in data.chunks_exact(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let op = window_op(o, core.sync.semaphores(), core.sync.events())
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no register at EVT_SEM offset {o:#x}")))?;
                    let v = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    core.sync.apply(op, v, now);
                    self.wake(&core, window_change(op));
                }
            }
            Target::Q7(c, off) => {
                let t = self.q7_target(addr, off, len)?;
                self.core(c)?.q7.write(t, addr, data)?;
            }
            Target::DmaRegs(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core_borrowed(c)?;
                for (k, word) in data.chunks_exact(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let r = dma::reg_ref(o)
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no DMA register at offset {o:#x}")))?;
                    let v = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    if dma::write_reg(&core.dma[r.queue], r, v) {
                        self.schedule_dma(core, r.queue);
                    }
                }
            }
            Target::Peer(d, local) => self.peer(d, addr, len)?.write_at(local, data, now)?,
        }
        Ok(())
    }

    /// The backing pages of a memory target (not a register window), with
    /// the core that owns them (borrowed: a created core lives as long as
    /// the device, so a copy costs no reference-count traffic).
    pub(super) fn pages_of(&self, t: Target) -> HalResult<Option<PagesOf<'_>>> {
        Ok(match t {
            Target::Pool(_, off) => Some((None, off)),
            Target::Sbuf(c, off) | Target::Psum(c, off) => Some((Some(self.core_borrowed(c)?), off)),
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) | Target::Peer(..) => None,
        })
    }

    /// Copies memory to memory without a bounce buffer when neither side
    /// is a register window; returns false (nothing done) otherwise.
    pub fn copy_direct(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<bool> {
        let (ts, td) = (self.target(src, len)?, self.target(dst, len)?);
        if matches!(ts, Target::Peer(..)) || matches!(td, Target::Peer(..)) {
            return self.copy_direct_peer((src, ts), (dst, td), len);
        }
        Shared::copy_between(self, ts, self, td, len)
    }

    /// [`Shared::copy_direct`] with a peer-window side: each side on the
    /// device that holds it, then the same direct copy between their
    /// pages.
    #[inline(never)]
    fn copy_direct_peer(&self, (src, ts): (DeviceAddr, Target), (dst, td): (DeviceAddr, Target), len: u64) -> HalResult<bool> {
        let side = |addr: DeviceAddr, t: Target| -> HalResult<(Arc<Shared>, Target)> {
            match t {
                Target::Peer(d, local) => {
                    let p = self.peer(d, addr, len)?;
                    let t = p.target(local, len)?;
                    Ok((p, t))
                }
                t => Ok((self.arc(), t)),
            }
        };
        let (sd, ts) = side(src, ts)?;
        let (dd, td) = side(dst, td)?;
        Shared::copy_between(&sd, ts, &dd, td, len)
    }

    /// A copy from target `ts` of device `s` to target `td` of device `d`
    /// (the same device, or two of the instance) without a bounce buffer
    /// when neither is a register window; false (nothing done) otherwise.
    fn copy_between(s: &Shared, ts: Target, d: &Shared, td: Target, len: u64) -> HalResult<bool> {
        let (Some((sc, so)), Some((dc, doff))) = (s.pages_of(ts)?, d.pages_of(td)?) else {
            return Ok(false);
        };
        use crate::memory::onchip::{Region, copy};
        fn region<'a>(shared: &'a Shared, t: Target, c: Option<&'a Arc<Core>>) -> Option<Region<'a>> {
            match (t, c) {
                (Target::Pool(ch, _), _) => Some(Region::Paged(&shared.pool(ch).bytes)),
                (Target::Sbuf(..), Some(c)) => Some(Region::OnChip(&c.sbuf)),
                (_, Some(c)) => Some(Region::OnChip(&c.psum)),
                (_, None) => None,
            }
        }
        let (Some(sp), Some(dp)) = (region(s, ts, sc), region(d, td, dc)) else {
            return Ok(false);
        };
        copy(sp, so, dp, doff, len);
        Ok(true)
    }

    /// Device-to-device copy in 1 MiB chunks, register writes stamped at
    /// `now` (0 = the core's current time).
    pub fn copy_at(&self, src: DeviceAddr, dst: DeviceAddr, len: u64, now: u64) -> HalResult<()> {
        if self.copy_direct(src, dst, len)? {
            return Ok(());
        }
        let mut buf = vec![0u8; len.min(1 << 20) as usize];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(buf.len() as u64) as usize;
            self.read(src.offset(done), &mut buf[..n])?;
            self.write_at(dst.offset(done), &buf[..n], now)?;
            done += n as u64;
        }
        Ok(())
    }
}

/// What [`Shared::pages_of`] answers: the core holding on-chip pages
/// (`None` for HBM and host memory) and the offset in them.
type PagesOf<'a> = (Option<&'a Arc<Core>>, u64);

/// The register an EVT_SEM window write changed.
fn window_change(op: WindowOp) -> Change {
    match op {
        WindowOp::Event(i) => Change::Event(i),
        WindowOp::Set(i) | WindowOp::Inc(i) | WindowOp::Dec(i) => Change::Sem(i),
    }
}
