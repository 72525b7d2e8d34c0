//! The memory door: what a worker may do with device memory, and nothing
//! else. [`Bus`] is implemented once, by the device's root
//! (`device/bus.rs`), and handed to the workers per call (`&impl Bus` on
//! every hot path, so each call compiles to the device's own routing with
//! no indirection).
//!
//! No signature here names a core or the device: state types (the DMA
//! rings, the instruction cache, the Q7 pin cache) may keep the answers
//! ([`StoreRoute`], pinned pages) and still sit below the core that holds
//! them. A register store with side effects (a doorbell, a semaphore) is
//! not a memory access: it is [`crate::signals::Signals::store_word`].

use crate::dma::regs::RegRef;
use crate::memory::Target;
use crate::memory::pages::{PinnedRange, Stamp};
use crate::nq::RingMemory;
use nrt_hal::{CoreId, DeviceAddr, HalResult};

/// Where a 32-bit store lands ([`Bus::store_route`]); the device's
/// address map never changes, so a caller may keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreRoute {
    /// A register of DMA queue `RegRef::queue` of the core (4-byte aligned).
    DmaReg(CoreId, RegRef),
    /// Anything else, stored through the device's routed write.
    Other(Target),
}

/// Device memory as a worker sees it: reads, stamped writes, page pins
/// and copies over the whole address map (HBM, host memory, SBUF / PSUM,
/// the register windows). Notification rings are reached through the
/// supertrait [`RingMemory`].
///
/// Ordering: a write is visible to every later read of any worker (the
/// pages are locked per page; register windows are atomics stored with
/// `SeqCst`); a pinned page sees every write made through the bus.
pub trait Bus: RingMemory {
    /// Reads device bytes from any window.
    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()>;

    /// Writes device bytes; register windows take effect, stamped with
    /// virtual time `now` (0 = the owning core's current time).
    fn write_at(&self, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()>;

    /// Reads like [`Bus::read`] and, for HBM and host memory reads of at
    /// most one page, returns the stamp of the pages they came from (for
    /// callers that cache something derived from the bytes). `Ok(None)`:
    /// bytes read, no stamp.
    fn read_stamped(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<Option<Stamp>>;

    /// The whole backing page around `addr..addr+len` when that range is
    /// HBM or host memory inside one page: the page's first device
    /// address and its pin, materialising the page. `None` for on-chip
    /// memory, register windows, ranges across pages and bad addresses.
    fn pin_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)>;

    /// [`Bus::pin_page`] of a page that is already backed; `None` for an
    /// untouched one (reading untouched memory still costs no page).
    fn pin_resident_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, PinnedRange)>;

    /// Device-to-device copy, register writes stamped at `now`.
    fn copy_at(&self, src: DeviceAddr, dst: DeviceAddr, len: u64, now: u64) -> HalResult<()>;

    /// Copies memory to memory without a bounce buffer when neither side
    /// is a register window; `Ok(false)` (nothing done) otherwise.
    fn copy_direct(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<bool>;

    /// Where `addr..addr+len` lies when it is memory of this device (HBM,
    /// host memory, SBUF or PSUM of an existing core), resolved once for
    /// a caller that copies there again and again (a kept copy plan);
    /// `None` for a register window, a peer device or a bad address. A
    /// copy between two such routes has no side effect but its bytes.
    fn memory_route(&self, addr: DeviceAddr, len: u64) -> Option<Target>;

    /// [`Bus::copy_direct`] between two routes [`Bus::memory_route`]
    /// answered (for the same `len`), with no address decode.
    fn copy_routed(&self, src: Target, dst: Target, len: u64) -> HalResult<()>;

    /// Where a 32-bit store to `addr` lands, resolved once for a caller
    /// that stores there again and again (a WRITE record, decoded once).
    fn store_route(&self, addr: DeviceAddr) -> HalResult<StoreRoute>;

    /// Whether a write at `addr` lands in a semaphore or event register,
    /// of this device or of a peer through the peer window (what a lost
    /// notification, `sem_lost`, drops).
    fn lands_in_semaphores(&self, addr: DeviceAddr) -> bool;
}
