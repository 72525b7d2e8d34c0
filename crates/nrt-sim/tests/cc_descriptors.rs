//! The device primitives a collective's schedule is made of, seen from
//! the HAL only (bytes in rings, doorbells, semaphores): a DMA on one core
//! reduces into another core's memory, rings that core's DMA queue, and
//! the second queue raises a semaphore of the first core; nothing on the
//! host moves the data.

use nrt_hal::arch::{DMA_M2S_GROUP, DMA_S2M_GROUP, EVT_SEM_SEM_INC};
use nrt_hal::{CoreId, Device, DeviceAddr, DmaQueueId, DmaRingConfig, MemoryLocation};
use nrt_isa::dma_desc::{DmaDescriptor, DmaOp, PatternBlock, PatternSide, pattern_pair, plain_copy_pairs};
use nrt_isa::dtype::Dtype;
use nrt_sim::{SimConfig, SimDevice};
use std::time::{Duration, Instant};

fn put_pair(dev: &SimDevice, tx: DeviceAddr, rx: DeviceAddr, slot: u64, pair: (nrt_isa::dma_desc::TxDescriptor, nrt_isa::dma_desc::RxDescriptor)) {
    dev.write(tx.offset(slot * 16), &DmaDescriptor::Tx(pair.0).to_bytes().unwrap()).unwrap();
    dev.write(rx.offset(slot * 16), &DmaDescriptor::Rx(pair.1).to_bytes().unwrap()).unwrap();
}

fn copy_pair(src: DeviceAddr, dst: DeviceAddr, len: u64) -> (nrt_isa::dma_desc::TxDescriptor, nrt_isa::dma_desc::RxDescriptor) {
    plain_copy_pairs(src.get(), dst.get(), len, 1).unwrap().remove(0)
}

#[test]
fn a_queue_reduces_into_another_core_rings_its_queue_and_that_queue_raises_a_semaphore_back() {
    let dev = SimDevice::new(&SimConfig::builder().hbm_bytes_per_channel(16 << 20).build(), 0);
    let arch = dev.info().arch;
    assert!(dev.info().physical_cores >= 2);
    let hbm = MemoryLocation::Hbm { channel: 0 };
    let (c0, c1) = (CoreId(0), CoreId(1));
    let n = 1000u32;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 1_000_000 * i).collect();
    let bytes = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let (src, dst) = (dev.alloc(hbm, 4 * u64::from(n), 64).unwrap(), dev.alloc(hbm, 4 * u64::from(n), 64).unwrap());
    dev.write(src, &bytes(&a)).unwrap();
    dev.write(dst, &bytes(&b)).unwrap();
    // Core 0, queue (3, 7): reduce src into dst, then ring core 1's queue
    // (5, 2) by one pair on each side (two 4-byte register writes).
    let q0 = DmaQueueId { engine: 3, queue: 7 };
    let q1 = DmaQueueId { engine: 5, queue: 2 };
    let ring = |k| (dev.alloc(hbm, 32 * 16, 256).unwrap(), dev.alloc(hbm, 32 * 16, 256).unwrap(), k);
    let (tx0, rx0, _) = ring(0);
    let (tx1, rx1, _) = ring(1);
    let block = dev.alloc(hbm, 128, 64).unwrap();
    let pb = PatternBlock {
        op: DmaOp::Add,
        src: PatternSide::contiguous(src.get(), Dtype::Int32, n),
        dst: PatternSide::contiguous(dst.get(), Dtype::Int32, n),
        scale: 1.0,
        constant: None,
        transpose: None,
    };
    dev.write(block, &pb.to_bytes().unwrap()).unwrap();
    let one = dev.alloc(hbm, 64, 64).unwrap();
    dev.write(one, &1u32.to_le_bytes()).unwrap();
    put_pair(&dev, tx0, rx0, 0, pattern_pair(block.get(), 1).unwrap());
    put_pair(&dev, tx0, rx0, 1, copy_pair(one, arch.dma_tail_inc_addr(c1, q1, DMA_M2S_GROUP), 4));
    put_pair(&dev, tx0, rx0, 2, copy_pair(one, arch.dma_tail_inc_addr(c1, q1, DMA_S2M_GROUP), 4));
    // Core 1's queue: raise semaphore 40 of core 0 by one.
    put_pair(&dev, tx1, rx1, 0, copy_pair(one, arch.semaphore_addr(c0, EVT_SEM_SEM_INC, 40), 4));
    dev.dma_queue_init(c0, q0, DmaRingConfig { tx_ring: tx0, rx_ring: rx0, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
    dev.dma_queue_init(c1, q1, DmaRingConfig { tx_ring: tx1, rx_ring: rx1, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
    dev.semaphore_set(c0, 40, 0).unwrap();
    dev.dma_tail_increment(c0, q0, 3, 3).unwrap();
    let t0 = Instant::now();
    while dev.semaphore_read(c0, 40).unwrap() < 1 {
        assert!(t0.elapsed() < Duration::from_secs(20), "core 1's queue never raised core 0's semaphore");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut got = vec![0u8; 4 * n as usize];
    dev.read(dst, &mut got).unwrap();
    let want: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
    assert_eq!(got, bytes(&want), "exact int32 sums landed in the destination");
    assert_eq!(dev.dma_queue_state(c1, q1).unwrap().tx_head, 1, "the ring from core 0 submitted one pair");
}

/// The same primitives between two devices of one instance, through the
/// peer window: device 0's queue copies 256 KiB into device 1's HBM and
/// reduces into it (a direct page copy and an in-DMA reduce across
/// devices), rings device 1's queue, which raises a semaphore of device
/// 0 back. The devices share one scheduler: the instance of four devices
/// never runs more workers than the configuration's threads. A peer
/// address naming a device the instance does not have aborts the queue.
#[test]
fn a_queue_writes_reduces_and_rings_a_peer_device_through_the_peer_window() {
    let devs = SimDevice::all(&SimConfig::builder().arch(nrt_hal::Arch::Trn1).devices(4).threads(2).hbm_bytes_per_channel(16 << 20).build());
    let (d0, d1) = (&devs[0], &devs[1]);
    let arch = d0.info().arch;
    let peer = |d: u32, a: DeviceAddr| arch.peer_addr(d, a).unwrap();
    let hbm = MemoryLocation::Hbm { channel: 0 };
    let c = CoreId(1);
    let n = 64 * 1024u32;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 1000 * i).collect();
    let bytes = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let len = 4 * u64::from(n);
    let src = d0.alloc(hbm, len, 64).unwrap();
    d0.write(src, &bytes(&a)).unwrap();
    // Device 1's destination: first a copy of `b` lands from device 0,
    // then device 0's engine reduces `a` into it.
    let staged = d0.alloc(hbm, len, 64).unwrap();
    d0.write(staged, &bytes(&b)).unwrap();
    let dst = d1.alloc(hbm, len, 64).unwrap();
    let q0 = DmaQueueId { engine: 3, queue: 7 };
    let q1 = DmaQueueId { engine: 5, queue: 2 };
    let (tx0, rx0) = (d0.alloc(hbm, 32 * 16, 256).unwrap(), d0.alloc(hbm, 32 * 16, 256).unwrap());
    let (tx1, rx1) = (d1.alloc(hbm, 32 * 16, 256).unwrap(), d1.alloc(hbm, 32 * 16, 256).unwrap());
    let block = d0.alloc(hbm, 128, 64).unwrap();
    let pb = PatternBlock {
        op: DmaOp::Add,
        src: PatternSide::contiguous(src.get(), Dtype::Int32, n),
        dst: PatternSide::contiguous(peer(1, dst).get(), Dtype::Int32, n),
        scale: 1.0,
        constant: None,
        transpose: None,
    };
    d0.write(block, &pb.to_bytes().unwrap()).unwrap();
    let one0 = d0.alloc(hbm, 64, 64).unwrap();
    d0.write(one0, &1u32.to_le_bytes()).unwrap();
    let one1 = d1.alloc(hbm, 64, 64).unwrap();
    d1.write(one1, &1u32.to_le_bytes()).unwrap();
    let mut slot = 0;
    for p in plain_copy_pairs(staged.get(), peer(1, dst).get(), len, 1).unwrap() {
        put_pair(d0, tx0, rx0, slot, p);
        slot += 1;
    }
    put_pair(d0, tx0, rx0, slot, pattern_pair(block.get(), 1).unwrap());
    put_pair(d0, tx0, rx0, slot + 1, copy_pair(one0, peer(1, arch.dma_tail_inc_addr(c, q1, DMA_M2S_GROUP)), 4));
    put_pair(d0, tx0, rx0, slot + 2, copy_pair(one0, peer(1, arch.dma_tail_inc_addr(c, q1, DMA_S2M_GROUP)), 4));
    let pairs0 = slot as u32 + 3;
    // Device 1's queue: raise semaphore 40 of device 0's core 1 by one.
    put_pair(d1, tx1, rx1, 0, copy_pair(one1, peer(0, arch.semaphore_addr(c, EVT_SEM_SEM_INC, 40)), 4));
    d0.dma_queue_init(c, q0, DmaRingConfig { tx_ring: tx0, rx_ring: rx0, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
    d1.dma_queue_init(c, q1, DmaRingConfig { tx_ring: tx1, rx_ring: rx1, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
    d0.semaphore_set(c, 40, 0).unwrap();
    d0.dma_tail_increment(c, q0, pairs0, pairs0).unwrap();
    let t0 = Instant::now();
    while d0.semaphore_read(c, 40).unwrap() < 1 {
        assert!(t0.elapsed() < Duration::from_secs(20), "device 1's queue never raised device 0's semaphore");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut got = vec![0u8; len as usize];
    d1.read(dst, &mut got).unwrap();
    let want: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
    assert_eq!(got, bytes(&want), "device 0's engines copied and reduced into device 1's memory");
    assert_eq!(d1.dma_queue_state(c, q1).unwrap().tx_head, 1, "device 0 rang device 1's queue");
    assert!(devs.iter().all(|d| d.worker_threads() == devs[0].worker_threads()), "one scheduler for the instance");
    assert!(devs[0].worker_threads() <= 2, "{} workers for an instance of four devices and two threads", devs[0].worker_threads());
    // A device the instance does not have: the queue aborts.
    d0.write(rx0, &DmaDescriptor::Rx(copy_pair(one0, peer(9, dst), 4).1).to_bytes().unwrap()).unwrap();
    d0.write(tx0, &DmaDescriptor::Tx(copy_pair(one0, peer(9, dst), 4).0).to_bytes().unwrap()).unwrap();
    let q2 = DmaQueueId { engine: 3, queue: 8 };
    d0.dma_queue_init(c, q2, DmaRingConfig { tx_ring: tx0, rx_ring: rx0, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
    d0.dma_tail_increment(c, q2, 1, 1).unwrap();
    let t0 = Instant::now();
    while d0.dma_queue_state(c, q2).unwrap().status != nrt_hal::DmaQueueStatus::Aborted {
        assert!(t0.elapsed() < Duration::from_secs(20), "a DMA into a device the instance lacks did not abort");
        std::thread::sleep(Duration::from_millis(1));
    }
}
