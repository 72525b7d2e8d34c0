//! The two-tier device-memory allocator and its ledger on a simulated device.

use nrt::log::{self, Level};
use nrt::memory::{DeviceMemory, MemOwner, MemUsage, ReportColumn};
use nrt::NrtStatus;
use nrt_hal::{Arch, CoreId, Device, DeviceAddr};
use nrt_sim::{SimConfig, SimDevice};
use proptest::prelude::*;
use std::sync::Arc;

const MIB: u64 = 1 << 20;

/// A trn2 device with `hbm` bytes per channel (cores 2c and 2c+1 share channel c).
fn memory(hbm: u64) -> Arc<DeviceMemory> {
    let cfg = SimConfig::builder().arch(Arch::Trn2).hbm_bytes_per_channel(hbm).build();
    let dev: Arc<dyn Device> = Arc::new(SimDevice::new(&cfg, 0));
    Arc::new(DeviceMemory::new(dev))
}

#[test]
fn allocations_are_booked_by_core_owner_usage_and_channel() {
    let mem = memory(4 * MIB);
    let base = mem.ledger();
    let a = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 4096, 64).unwrap();
    let b = mem.alloc(CoreId(3), MemOwner::Model(9), MemUsage::Weight, 8192, 0).unwrap();
    assert!(a.is_aligned(64));
    let s = mem.ledger();
    assert_eq!(s.total(), 12288);
    assert_eq!(s.core(CoreId(0)).get(MemUsage::Tensor), 4096);
    assert_eq!(s.core(CoreId(3)).get(MemUsage::Weight), 8192);
    assert_eq!(s.model(9).column(ReportColumn::Constants), 8192);
    assert_eq!((s.channels[0].used, s.channels[1].used), (4096, 8192));
    assert_eq!(s.channels[0].capacity, 4 * MIB);
    assert_eq!(s.allocations, 2);
    let info = mem.allocation(b).unwrap();
    assert_eq!((info.location, info.owner), (nrt_hal::MemoryLocation::Hbm { channel: 1 }, MemOwner::Model(9)));
    mem.free(a).unwrap();
    mem.free(b).unwrap();
    assert_eq!(mem.ledger(), base);
    let e = mem.free(b).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("not the start of a live allocation"), "{e}");
}

#[test]
fn bad_requests_are_invalid() {
    let mem = memory(MIB);
    let e = mem.alloc(CoreId(8), MemOwner::Runtime, MemUsage::Tensor, 16, 0).unwrap_err();
    assert!(e.message.contains("physical cores 0..8"), "{e}");
    let e = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 0, 0).unwrap_err();
    assert!(e.message.contains("size must be at least 1"), "{e}");
    let e = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 16, 48).unwrap_err();
    assert!(e.message.contains("not a power of two"), "{e}");
    assert_eq!(mem.ledger().allocations, 0);
}

#[test]
fn allocation_that_does_not_fit_is_resource_with_the_oom_report() {
    let mem = memory(MIB);
    mem.set_model_name(5, "mlp.neff");
    let tier = mem.model_tier(CoreId(1), 5);
    tier.alloc(MemUsage::Weight, 512 << 10, 0).unwrap();
    mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 256 << 10, 0).unwrap();
    let before = mem.ledger();
    let cap = log::capture(Level::Error);
    let e = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 512 << 10, 0).unwrap_err();
    assert_eq!(e.status, NrtStatus::Resource);
    assert_eq!(e.message, "Failed to allocate 512.000KB (alignment: none, usage: tensors) on ND 0:NC 0");
    let text = cap.text();
    assert!(text.contains("TDRV:") && text.contains("Failed to allocate 512.000KB"), "{text}");
    // The table: device row, one row per core, one per model, category columns.
    let table_start = cap.lines().iter().position(|l| l.starts_with("| owner")).expect(&text);
    let lines = cap.lines();
    assert!(lines[table_start].contains(" tensors |") && lines[table_start].contains("model constants"), "{text}");
    assert!(lines[table_start + 2].starts_with("| ND 0 ") && lines[table_start + 2].contains("768.000KB"), "{text}");
    assert!(lines[table_start + 3].starts_with("| NC 0 ") && lines[table_start + 3].contains("256.000KB"), "{text}");
    assert!(lines[table_start + 4].starts_with("| NC 1 ") && lines[table_start + 4].contains("512.000KB"), "{text}");
    assert!(lines[table_start + 5].starts_with("| NEFF 5 "), "{text}");
    assert!(text.contains("HBM 0: 768.000KB used of 1.000MB"), "{text}");
    assert!(text.contains("  5: mlp.neff"), "{text}");
    // The failed request changed nothing.
    assert_eq!(mem.ledger(), before);
    // Other channels still have room.
    mem.alloc(CoreId(2), MemOwner::Runtime, MemUsage::Tensor, 512 << 10, 0).unwrap();
    // The on-demand report is the same table.
    assert!(mem.oom_report().contains("| NEFF 5 "));
}

#[test]
fn oom_log_can_be_turned_off() {
    let mem = memory(MIB);
    mem.set_oom_log(false);
    let cap = log::capture(Level::Trace);
    let e = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 2 * MIB, 0).unwrap_err();
    assert_eq!(e.status, NrtStatus::Resource);
    assert!(cap.lines().is_empty(), "{}", cap.text());
}

#[test]
fn model_tier_frees_everything_and_the_ledger_returns_to_baseline() {
    let mem = memory(8 * MIB);
    let global = mem.alloc(CoreId(4), MemOwner::Runtime, MemUsage::Scratchpad, 64 << 10, 0).unwrap();
    let baseline = mem.ledger();
    for round in 0..20u32 {
        let tier = mem.model_tier(CoreId(4), 100 + round);
        tier.alloc(MemUsage::Weight, 100_000, 0).unwrap();
        tier.alloc(MemUsage::InstrPe, 4096, 0x8000).unwrap();
        tier.alloc_on(CoreId(5), MemUsage::DmaRingIo, 2048, 0).unwrap();
        assert_eq!(tier.total(), 106_144);
        let s = mem.ledger();
        assert_eq!(s.model(100 + round).total(), 106_144);
        assert_eq!(s.core(CoreId(5)).get(MemUsage::DmaRingIo), 2048);
        if round % 2 == 0 {
            tier.free_all().unwrap();
            assert_eq!(tier.total(), 0);
        }
        drop(tier);
        assert_eq!(mem.ledger(), baseline, "round {round}");
    }
    mem.free(global).unwrap();
    assert_eq!(mem.ledger().total(), 0);
}

#[test]
fn free_everything_clears_the_device() {
    let mem = memory(MIB);
    for c in 0..8 {
        mem.alloc(CoreId(c), MemOwner::Runtime, MemUsage::Notification, 4096, 0).unwrap();
    }
    mem.free_everything().unwrap();
    let s = mem.ledger();
    assert_eq!((s.total(), s.allocations, s.cores.len()), (0, 0, 0));
}

#[derive(Clone, Debug)]
enum Op {
    Alloc { core: u32, size: u64, align_log2: u32, usage: u8 },
    Free(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..8, 1u64..200_000, 0u32..16, 0u8..22).prop_map(|(core, size, align_log2, usage)| Op::Alloc { core, size, align_log2, usage }),
        2 => any::<usize>().prop_map(Op::Free),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Live allocations never overlap, respect their alignment, the
    /// ledger always equals the sum of live sizes per core and channel,
    /// and freeing everything returns the ledger to empty.
    #[test]
    fn allocator_keeps_its_books(ops in proptest::collection::vec(op(), 1..60)) {
        let mem = memory(MIB);
        let empty = mem.ledger();
        let mut live: Vec<(DeviceAddr, u64, u32)> = Vec::new();
        for op in ops {
            match op {
                Op::Alloc { core, size, align_log2, usage } => {
                    let align = 1u64 << align_log2;
                    let usage = MemUsage::from_code(usage).unwrap();
                    match mem.alloc(CoreId(core), MemOwner::Runtime, usage, size, align) {
                        Ok(addr) => {
                            prop_assert!(addr.is_aligned(align));
                            for &(other, len, _) in &live {
                                prop_assert!(addr.get() + size <= other.get() || other.get() + len <= addr.get(),
                                    "{addr} +{size} overlaps {other} +{len}");
                            }
                            live.push((addr, size, core));
                        }
                        Err(e) => prop_assert_eq!(e.status, NrtStatus::Resource),
                    }
                }
                Op::Free(i) if !live.is_empty() => {
                    let (addr, _, _) = live.swap_remove(i % live.len());
                    mem.free(addr).unwrap();
                }
                Op::Free(_) => {}
            }
            let s = mem.ledger();
            prop_assert_eq!(s.total(), live.iter().map(|l| l.1).sum::<u64>());
            for c in 0..8u32 {
                let want: u64 = live.iter().filter(|l| l.2 == c).map(|l| l.1).sum();
                prop_assert_eq!(s.core(CoreId(c)).total(), want);
            }
            for (ch, usage) in s.channels.iter().enumerate() {
                let want: u64 = live.iter().filter(|l| l.2 / 2 == ch as u32).map(|l| l.1).sum();
                prop_assert_eq!(usage.used, want);
                prop_assert!(usage.used <= usage.capacity);
            }
        }
        for (addr, _, _) in live.drain(..) {
            mem.free(addr).unwrap();
        }
        prop_assert_eq!(mem.ledger(), empty);
        // Frees returned the memory: a channel-sized block fits again.
        let whole = mem.ledger().channels[0].capacity;
        let a = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Generic, whole, 0);
        prop_assert!(a.is_ok(), "{:?}", a);
    }
}

#[test]
fn host_dma_memory_is_booked_apart_from_hbm() {
    let cfg = SimConfig::builder().arch(Arch::Trn2).host_memory_bytes(MIB).build();
    let dev: Arc<dyn Device> = Arc::new(SimDevice::new(&cfg, 0));
    let mem = Arc::new(DeviceMemory::new(dev));
    let base = mem.ledger();
    let tier = mem.model_tier(CoreId(0), 4);
    let a = tier.alloc_host(MemUsage::Notification, 4096, 4096).unwrap();
    assert!(a.is_aligned(4096));
    let s = mem.ledger();
    assert_eq!((s.host.used, s.host.capacity, s.total()), (4096, MIB, 0));
    assert_eq!(s.host_totals.get(MemUsage::Notification), 4096);
    let e = mem.alloc_host(CoreId(0), MemOwner::Runtime, MemUsage::Scratchpad, 64, 0).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.starts_with("Invalid mem_usage_type 11 (SCRATCHPAD) for host memory"), "{e}");
    let e = mem.alloc_host(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 2 * MIB, 0).unwrap_err();
    assert_eq!(e.status, NrtStatus::Resource);
    assert!(e.message.ends_with("on ND 0:NC 0 (host-DMA memory)"), "{e}");
    drop(tier);
    assert_eq!(mem.ledger(), base);
}
