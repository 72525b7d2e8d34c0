//! The device-memory ledger: bytes in use per usage type, per device, per
//! physical core and per model, and per HBM channel against its size
//! (libnrt's `memory_usage_nc[8][23]` plus the per-model view the OOM
//! report prints).
//!
//! Snapshots compare by value, so a test can take one before a load and
//! assert the ledger is back to it after the unload.

use super::usage::{MEM_USAGE_COUNT, MemUsage, ReportColumn};
use crate::model::ModelId;
use nrt_hal::{CoreId, MemoryLocation};
use std::collections::BTreeMap;

/// Bytes per usage type (one row of the ledger).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct UsageTotals {
    bytes: [u64; MEM_USAGE_COUNT],
}

impl UsageTotals {
    /// Bytes booked under `usage`.
    pub fn get(&self, usage: MemUsage) -> u64 {
        self.bytes[usage.index()]
    }

    /// Sum over every usage type.
    pub fn total(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// Sum over the usage types folded into an OOM-report column.
    pub fn column(&self, column: ReportColumn) -> u64 {
        MemUsage::ALL.iter().filter(|u| u.column() == column).map(|&u| self.get(u)).sum()
    }

    /// Whether nothing is booked.
    pub fn is_empty(&self) -> bool {
        self.bytes.iter().all(|&b| b == 0)
    }

    pub(crate) fn add(&mut self, usage: MemUsage, bytes: u64) {
        let slot = &mut self.bytes[usage.index()];
        *slot = slot.saturating_add(bytes);
    }

    pub(crate) fn sub(&mut self, usage: MemUsage, bytes: u64) {
        let slot = &mut self.bytes[usage.index()];
        *slot = slot.saturating_sub(bytes);
    }
}

/// Who an allocation belongs to: the runtime's global per-core tier, or
/// one model's tier (freed in one call at unload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemOwner {
    /// The global tier (shared scratchpad, notification rings, tensors...).
    Runtime,
    /// A model's private tier.
    Model(ModelId),
}

/// Bytes used on one HBM channel against what it offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelUsage {
    /// Bytes booked on the channel.
    pub used: u64,
    /// The channel's usable size.
    pub capacity: u64,
}

/// A copy of one device's ledger at one moment. Empty rows are omitted, so
/// two snapshots are equal exactly when the same bytes are booked in the
/// same places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerSnapshot {
    /// Device index.
    pub device: u32,
    /// Totals over the whole device.
    pub device_totals: UsageTotals,
    /// Totals per physical core (cores with nothing booked are absent).
    pub cores: BTreeMap<CoreId, UsageTotals>,
    /// Totals per model (models with nothing booked are absent).
    pub models: BTreeMap<ModelId, UsageTotals>,
    /// Per-HBM-channel use, in channel order.
    pub channels: Vec<ChannelUsage>,
    /// Host-DMA memory booked through this device, by usage (not part of
    /// the device, core or model rows, which describe HBM).
    pub host_totals: UsageTotals,
    /// Host-DMA memory per model (models with none are absent).
    pub model_host: BTreeMap<ModelId, UsageTotals>,
    /// Host-DMA window use.
    pub host: ChannelUsage,
    /// Live allocations (HBM and host).
    pub allocations: usize,
}

impl LedgerSnapshot {
    /// Bytes in use on the device.
    pub fn total(&self) -> u64 {
        self.device_totals.total()
    }

    /// HBM bytes the device offers (sum of its channels).
    pub fn capacity(&self) -> u64 {
        self.channels.iter().map(|c| c.capacity).sum()
    }

    /// Totals of one core (zero if nothing is booked there).
    pub fn core(&self, core: CoreId) -> UsageTotals {
        self.cores.get(&core).copied().unwrap_or_default()
    }

    /// Totals of one model (zero if nothing is booked for it).
    pub fn model(&self, model: ModelId) -> UsageTotals {
        self.models.get(&model).copied().unwrap_or_default()
    }

    /// Host-DMA totals of one model (zero if it holds none).
    pub fn model_host(&self, model: ModelId) -> UsageTotals {
        self.model_host.get(&model).copied().unwrap_or_default()
    }
}

/// The mutable ledger behind [`super::DeviceMemory`].
#[derive(Debug)]
pub(crate) struct Ledger {
    device: u32,
    device_totals: UsageTotals,
    cores: BTreeMap<CoreId, UsageTotals>,
    models: BTreeMap<ModelId, UsageTotals>,
    channels: Vec<ChannelUsage>,
    host_totals: UsageTotals,
    model_host: BTreeMap<ModelId, UsageTotals>,
    host: ChannelUsage,
    allocations: usize,
}

impl Ledger {
    pub(crate) fn new(device: u32, capacities: impl IntoIterator<Item = u64>, host_capacity: u64) -> Ledger {
        Ledger {
            device,
            device_totals: UsageTotals::default(),
            cores: BTreeMap::new(),
            models: BTreeMap::new(),
            channels: capacities.into_iter().map(|capacity| ChannelUsage { used: 0, capacity }).collect(),
            host_totals: UsageTotals::default(),
            model_host: BTreeMap::new(),
            host: ChannelUsage { used: 0, capacity: host_capacity },
            allocations: 0,
        }
    }

    /// Use of the pool an allocation at `location` comes from.
    pub(crate) fn pool(&self, location: MemoryLocation) -> Option<ChannelUsage> {
        match location {
            MemoryLocation::Hbm { channel } => self.channels.get(channel as usize).copied(),
            MemoryLocation::Host => Some(self.host),
        }
    }

    pub(crate) fn book(&mut self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, bytes: u64) {
        self.allocations += 1;
        self.add_bytes(core, owner, usage, location, bytes);
    }

    pub(crate) fn release(&mut self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, bytes: u64) {
        self.allocations = self.allocations.saturating_sub(1);
        self.sub_bytes(core, owner, usage, location, bytes);
    }

    /// Moves bytes of one allocation between owners / usages (the live
    /// allocation count does not change).
    pub(crate) fn rebook(&mut self, core: CoreId, from: (MemOwner, MemUsage), to: (MemOwner, MemUsage), location: MemoryLocation, bytes: u64) {
        self.sub_bytes(core, from.0, from.1, location, bytes);
        self.add_bytes(core, to.0, to.1, location, bytes);
    }

    /// Takes bytes off the books without counting a freed allocation (the
    /// remainder of an allocation freed earlier).
    pub(crate) fn drop_bytes(&mut self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, bytes: u64) {
        self.sub_bytes(core, owner, usage, location, bytes);
    }

    fn add_bytes(&mut self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, bytes: u64) {
        let channel = match location {
            MemoryLocation::Host => {
                self.host_totals.add(usage, bytes);
                self.host.used = self.host.used.saturating_add(bytes);
                if let MemOwner::Model(id) = owner {
                    self.model_host.entry(id).or_default().add(usage, bytes);
                }
                return;
            }
            MemoryLocation::Hbm { channel } => channel as usize,
        };
        self.device_totals.add(usage, bytes);
        self.cores.entry(core).or_default().add(usage, bytes);
        if let MemOwner::Model(id) = owner {
            self.models.entry(id).or_default().add(usage, bytes);
        }
        if let Some(c) = self.channels.get_mut(channel) {
            c.used = c.used.saturating_add(bytes);
        }
    }

    fn sub_bytes(&mut self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, bytes: u64) {
        let channel = match location {
            MemoryLocation::Host => {
                self.host_totals.sub(usage, bytes);
                self.host.used = self.host.used.saturating_sub(bytes);
                if let MemOwner::Model(id) = owner
                    && let Some(t) = self.model_host.get_mut(&id)
                {
                    t.sub(usage, bytes);
                    if t.is_empty() {
                        self.model_host.remove(&id);
                    }
                }
                return;
            }
            MemoryLocation::Hbm { channel } => channel as usize,
        };
        self.device_totals.sub(usage, bytes);
        if let Some(t) = self.cores.get_mut(&core) {
            t.sub(usage, bytes);
            if t.is_empty() {
                self.cores.remove(&core);
            }
        }
        if let MemOwner::Model(id) = owner
            && let Some(t) = self.models.get_mut(&id)
        {
            t.sub(usage, bytes);
            if t.is_empty() {
                self.models.remove(&id);
            }
        }
        if let Some(c) = self.channels.get_mut(channel) {
            c.used = c.used.saturating_sub(bytes);
        }
    }

    pub(crate) fn snapshot(&self) -> LedgerSnapshot {
        LedgerSnapshot {
            device: self.device,
            device_totals: self.device_totals,
            cores: self.cores.clone(),
            models: self.models.clone(),
            channels: self.channels.clone(),
            host_totals: self.host_totals,
            model_host: self.model_host.clone(),
            host: self.host,
            allocations: self.allocations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn book_and_release_return_to_empty() {
        let mut l = Ledger::new(0, [100, 100], 50);
        let empty = l.snapshot();
        let ch1 = MemoryLocation::Hbm { channel: 1 };
        l.book(CoreId(1), MemOwner::Model(7), MemUsage::Weight, ch1, 40);
        l.book(CoreId(1), MemOwner::Runtime, MemUsage::Tensor, ch1, 10);
        l.book(CoreId(1), MemOwner::Model(7), MemUsage::Notification, MemoryLocation::Host, 16);
        let s = l.snapshot();
        assert_eq!(s.total(), 50);
        assert_eq!(s.core(CoreId(1)).get(MemUsage::Weight), 40);
        assert_eq!(s.model(7).total(), 40);
        assert_eq!(s.channels[1].used, 50);
        assert_eq!(s.device_totals.column(ReportColumn::Constants), 40);
        assert_eq!((s.host.used, s.host_totals.get(MemUsage::Notification), s.allocations), (16, 16, 3));
        assert_eq!(s.capacity(), 200);
        l.release(CoreId(1), MemOwner::Model(7), MemUsage::Weight, ch1, 40);
        l.release(CoreId(1), MemOwner::Runtime, MemUsage::Tensor, ch1, 10);
        l.release(CoreId(1), MemOwner::Model(7), MemUsage::Notification, MemoryLocation::Host, 16);
        assert_eq!(l.snapshot(), empty);
    }
}
