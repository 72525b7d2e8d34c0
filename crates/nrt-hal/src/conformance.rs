//! The device conformance suite, written once against `&dyn Device`.
//!
//! Each case is a `pub fn` taking a [`Factory`] that builds a fresh device;
//! every backend registers the whole list with
//! [`device_conformance_tests!`](crate::device_conformance_tests), which
//! expands to one `#[test]` per case. A case panics (through `assert!`)
//! when the backend breaks the contract, with a message naming the
//! expectation.
//!
//! Cases that need the device to write notification records drive it with
//! tiny hand-assembled instruction streams (64-byte records laid out as in
//! `seed-siblings` §3.1), since producing records is the device's job.

use crate::addr::{CoreId, DeviceAddr, DmaQueueId, EngineId};
use crate::arch::{
    DMA_M2S_GROUP, DMA_REG_DRBP_HIGH, DMA_REG_DRBP_LOW, DMA_REG_DRHP, DMA_REG_DRL, DMA_REG_DRTP, DMA_REG_DRTP_INC, DMA_REG_STATUS, DMA_S2M_GROUP,
    EVT_SEM_SEM_INC, EVT_SEM_SEM_READ,
};
use crate::device::{Device, DmaQueueStatus, DmaRingConfig, MemoryLocation, NqSpec, NqType};
use crate::error::HalError;
use std::time::{Duration, Instant};

/// Builds a fresh device for one case.
pub type Factory<'a> = &'a dyn Fn() -> Box<dyn Device>;

/// One conformance case: a name and the function that runs it.
#[derive(Clone, Copy)]
pub struct Case {
    /// Test name.
    pub name: &'static str,
    /// The check.
    pub run: fn(Factory<'_>),
}

/// Every case of the suite.
pub const CASES: &[Case] = &[
    Case { name: "memory_roundtrip", run: memory_roundtrip },
    Case { name: "memory_every_channel_and_host", run: memory_every_channel_and_host },
    Case { name: "out_of_memory", run: out_of_memory },
    Case { name: "invalid_address", run: invalid_address },
    Case { name: "semaphores_and_events", run: semaphores_and_events },
    Case { name: "semaphore_windows", run: semaphore_windows },
    Case { name: "dma_ring_copy", run: dma_ring_copy },
    Case { name: "dma_doorbell_by_device_write", run: dma_doorbell_by_device_write },
    Case { name: "dma_queue_programmed_by_its_registers", run: dma_queue_programmed_by_its_registers },
    Case { name: "nq_wrap_and_phase", run: nq_wrap_and_phase },
    Case { name: "nq_overflow_flag", run: nq_overflow_flag },
    Case { name: "reservation_exclusive", run: reservation_exclusive },
];

/// Expands to one `#[test]` per conformance case for the given factory
/// expression (of type `fn() -> Box<dyn Device>` or a closure).
#[macro_export]
macro_rules! device_conformance_tests {
    ($factory:expr; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                let f = $factory;
                $crate::conformance::$name(&f);
            }
        )*
    };
    ($factory:expr) => {
        $crate::device_conformance_tests!($factory;
            memory_roundtrip, memory_every_channel_and_host, out_of_memory, invalid_address,
            semaphores_and_events, semaphore_windows, dma_ring_copy,
            dma_doorbell_by_device_write, dma_queue_programmed_by_its_registers, nq_wrap_and_phase,
            nq_overflow_flag, engine_state_names_the_wait, reservation_exclusive);
    };
}

const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };

/// Polls `cond` (spinning briefly, then sleeping) until it holds or 10 s
/// pass; panics naming `what` on timeout.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut spins = 0u32;
    while !cond() {
        if start.elapsed() > Duration::from_secs(10) {
            panic!("timed out waiting for {what}");
        }
        spins += 1;
        if spins < 1000 {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Alloc, write, read back, memset, copy, free.
pub fn memory_roundtrip(factory: Factory<'_>) {
    let dev = factory();
    let a = dev.alloc(HBM0, 10_000, 64).expect("alloc 10000 B in HBM 0");
    let b = dev.alloc(HBM0, 10_000, 4096).expect("alloc 10000 B in HBM 0, 4 KiB aligned");
    assert!(a.is_aligned(64) && b.is_aligned(4096), "alignment not honoured: {a} {b}");
    assert!(a.get() + 10_000 <= b.get() || b.get() + 10_000 <= a.get(), "allocations overlap");
    let data = pattern(10_000, 7);
    dev.write(a, &data).unwrap();
    let mut back = vec![0u8; 10_000];
    dev.read(a, &mut back).unwrap();
    assert_eq!(back, data, "read-back differs from written bytes");
    dev.memset(a.offset(100), 0xAB, 50).unwrap();
    dev.read(a, &mut back).unwrap();
    assert!(back[100..150].iter().all(|&x| x == 0xAB), "memset range not filled");
    assert_eq!(back[99], data[99], "memset wrote before its range");
    assert_eq!(back[150], data[150], "memset wrote past its range");
    dev.copy(a, b, 10_000).unwrap();
    let mut copied = vec![0u8; 10_000];
    dev.read(b, &mut copied).unwrap();
    assert_eq!(copied, back, "device copy differs from source");
    dev.free(a).unwrap();
    dev.free(b).unwrap();
    assert!(
        matches!(dev.free(a), Err(HalError::InvalidAddress { .. })),
        "double free must be InvalidAddress"
    );
}

/// Every HBM channel and host-DMA memory can be allocated and addressed.
pub fn memory_every_channel_and_host(factory: Factory<'_>) {
    let dev = factory();
    let channels = dev.info().hbm.clone();
    assert!(!channels.is_empty(), "device reports no HBM");
    for (i, ch) in channels.iter().enumerate() {
        let a = dev.alloc(MemoryLocation::Hbm { channel: i as u32 }, 256, 0).unwrap();
        assert!(
            a.get() >= ch.base.get() && a.get() + 256 <= ch.base.get() + ch.size,
            "HBM {i} allocation {a} outside its channel"
        );
        dev.write(a, &[i as u8; 256]).unwrap();
        let mut b = [0u8; 256];
        dev.read(a, &mut b).unwrap();
        assert_eq!(b, [i as u8; 256]);
        dev.free(a).unwrap();
    }
    let h = dev.alloc(MemoryLocation::Host, 4096, 0).unwrap();
    let host = dev.info().host_memory;
    assert!(h.get() >= host.base.get() && h.get() < host.base.get() + host.size, "host allocation {h} untagged");
    dev.write(h, b"host").unwrap();
    let mut b = [0u8; 4];
    dev.read(h, &mut b).unwrap();
    assert_eq!(&b, b"host");
    dev.free(h).unwrap();
    assert!(matches!(
        dev.alloc(MemoryLocation::Hbm { channel: channels.len() as u32 }, 16, 0),
        Err(HalError::InvalidAddress { .. })
    ), "alloc on a channel that does not exist must be InvalidAddress");
}

/// The configured HBM size is enforced; freeing makes room again.
pub fn out_of_memory(factory: Factory<'_>) {
    let dev = factory();
    let cap = dev.info().hbm[0].size;
    match dev.alloc(HBM0, cap + 1, 0) {
        Err(HalError::OutOfMemory { requested, .. }) => assert_eq!(requested, cap + 1),
        other => panic!("allocating more than the channel must fail with OutOfMemory, got {other:?}"),
    }
    let half = cap / 2;
    let a = dev.alloc(HBM0, half, 0).expect("first half");
    let b = dev.alloc(HBM0, half, 0).expect("second half");
    assert!(
        matches!(dev.alloc(HBM0, 1 << 20, 0), Err(HalError::OutOfMemory { .. })),
        "a full channel must refuse more"
    );
    dev.free(a).unwrap();
    let c = dev.alloc(HBM0, 1 << 20, 0).expect("room after free");
    dev.free(b).unwrap();
    dev.free(c).unwrap();
    let all = dev.alloc(HBM0, cap, 0).expect("whole channel after freeing everything (coalescing)");
    dev.free(all).unwrap();
}

/// Addresses and indices the device does not have are refused.
pub fn invalid_address(factory: Factory<'_>) {
    let dev = factory();
    let ch = dev.info().hbm[0];
    let past = ch.base.offset(ch.size);
    let mut b = [0u8; 8];
    assert!(matches!(dev.read(past, &mut b), Err(HalError::InvalidAddress { .. })), "read past HBM 0");
    assert!(matches!(dev.write(past, &b), Err(HalError::InvalidAddress { .. })), "write past HBM 0");
    assert!(
        matches!(dev.read(ch.base.offset(ch.size - 4), &mut b), Err(HalError::InvalidAddress { .. })),
        "read straddling the end of HBM 0"
    );
    assert!(matches!(dev.read(DeviceAddr(u64::MAX - 2), &mut b), Err(HalError::InvalidAddress { .. })));
    assert!(matches!(dev.free(ch.base.offset(12345)), Err(HalError::InvalidAddress { .. })));
    let sems = dev.info().semaphores();
    assert!(matches!(dev.semaphore_read(CoreId(0), sems), Err(HalError::InvalidAddress { .. })));
    let events = dev.info().events();
    assert!(matches!(dev.event_set(CoreId(0), events), Err(HalError::InvalidAddress { .. })));
    let cores = dev.info().physical_cores;
    assert!(matches!(dev.semaphore_read(CoreId(cores), 0), Err(HalError::InvalidAddress { .. })));
}

/// Semaphore read / set / increment / decrement and event set / clear.
pub fn semaphores_and_events(factory: Factory<'_>) {
    let dev = factory();
    let c = CoreId(0);
    assert_eq!(dev.semaphore_read(c, 5).unwrap(), 0, "semaphores start at zero");
    dev.semaphore_set(c, 5, 10).unwrap();
    dev.semaphore_increment(c, 5, 3).unwrap();
    assert_eq!(dev.semaphore_read(c, 5).unwrap(), 13);
    dev.semaphore_decrement(c, 5, 20).unwrap();
    assert_eq!(dev.semaphore_read(c, 5).unwrap(), -7, "semaphores are signed 32-bit");
    assert_eq!(dev.semaphore_read(c, 6).unwrap(), 0, "neighbour untouched");
    let last = dev.info().semaphores() - 1;
    dev.semaphore_set(c, last, 1).unwrap();
    assert_eq!(dev.semaphore_read(c, last).unwrap(), 1);
    assert!(!dev.event_read(c, 9).unwrap());
    dev.event_set(c, 9).unwrap();
    assert!(dev.event_read(c, 9).unwrap());
    dev.event_clear(c, 9).unwrap();
    assert!(!dev.event_read(c, 9).unwrap());
    if dev.info().physical_cores > 1 {
        assert_eq!(dev.semaphore_read(CoreId(1), 5).unwrap(), 0, "cores have separate semaphores");
    }
}

/// The EVT_SEM window aliases: a device write to INC adds, READ reads.
pub fn semaphore_windows(factory: Factory<'_>) {
    let dev = factory();
    let arch = dev.info().arch;
    let c = CoreId(0);
    dev.semaphore_set(c, 17, 4).unwrap();
    dev.write(arch.semaphore_addr(c, EVT_SEM_SEM_INC, 17), &5u32.to_le_bytes()).unwrap();
    assert_eq!(dev.semaphore_read(c, 17).unwrap(), 9, "INC alias write must add");
    let mut v = [0u8; 4];
    dev.read(arch.semaphore_addr(c, EVT_SEM_SEM_READ, 17), &mut v).unwrap();
    assert_eq!(i32::from_le_bytes(v), 9, "READ alias must return the value");
    dev.write(arch.event_addr(c, 3), &1u32.to_le_bytes()).unwrap();
    assert!(dev.event_read(c, 3).unwrap(), "event register write must set the event");
}

/// Encodes one UDMA plain-copy descriptor pair (TX source, RX destination)
/// as `neuron-facts` §3.7 lays them out.
pub fn udma_copy_pair(src: DeviceAddr, dst: DeviceAddr, len: u32) -> ([u8; 16], [u8; 16]) {
    assert!((1..=65536).contains(&len), "UDMA descriptors carry 1..=65536 bytes");
    let len_field = len & 0xFFFF; // 65536 encodes as 0
    let mut tx = [0u8; 16];
    let ctrl = len_field | (1 << 24) | (1 << 26) | (1 << 27);
    tx[0..4].copy_from_slice(&ctrl.to_le_bytes());
    tx[4..8].copy_from_slice(&0x0108_0003u32.to_le_bytes());
    tx[8..16].copy_from_slice(&src.get().to_le_bytes());
    let mut rx = [0u8; 16];
    let rctrl = len_field | (1 << 24);
    rx[0..4].copy_from_slice(&rctrl.to_le_bytes());
    rx[8..16].copy_from_slice(&dst.get().to_le_bytes());
    (tx, rx)
}

struct Rings {
    tx: DeviceAddr,
    rx: DeviceAddr,
    n: u32,
}

fn rings(dev: &dyn Device, n: u32) -> Rings {
    let bytes = u64::from(n) * 16;
    let tx = dev.alloc(HBM0, bytes, 256).unwrap();
    let rx = dev.alloc(HBM0, bytes, 256).unwrap();
    dev.memset(tx, 0, bytes).unwrap();
    dev.memset(rx, 0, bytes).unwrap();
    Rings { tx, rx, n }
}

/// A DMA queue walks its rings on a tail increment, copies, and bumps the
/// completion semaphore once per packet; the ring wraps.
pub fn dma_ring_copy(factory: Factory<'_>) {
    let dev = factory();
    let c = CoreId(0);
    let q = DmaQueueId { engine: 3, queue: 5 };
    let r = rings(&*dev, 32);
    dev.dma_queue_init(c, q, DmaRingConfig {
        tx_ring: r.tx, rx_ring: r.rx, descriptors: r.n,
        completion_semaphore: Some(40), completion_event: Some(41),
    }).unwrap();
    let st = dev.dma_queue_state(c, q).unwrap();
    assert_eq!(st.status, DmaQueueStatus::Enabled);
    let src = dev.alloc(HBM0, 1 << 20, 0).unwrap();
    let dst = dev.alloc(HBM0, 1 << 20, 0).unwrap();
    let data = pattern(1 << 20, 3);
    dev.write(src, &data).unwrap();
    // 40 packets of 4 KiB + 100 B: more than the ring holds, so it wraps.
    let chunk = 4096 + 100u64;
    let mut done = 0u64;
    for i in 0..40u64 {
        let slot = u64::from(i as u32 % r.n) * 16;
        let (tx, rx) = udma_copy_pair(src.offset(i * chunk), dst.offset(i * chunk), chunk as u32);
        dev.write(r.tx.offset(slot), &tx).unwrap();
        dev.write(r.rx.offset(slot), &rx).unwrap();
        dev.dma_tail_increment(c, q, 1, 1).unwrap();
        done += 1;
        let want = done as i32;
        wait_until("DMA completion semaphore", || dev.semaphore_read(c, 40).unwrap() >= want);
    }
    let mut back = vec![0u8; (40 * chunk) as usize];
    dev.read(dst, &mut back).unwrap();
    assert_eq!(back, data[..back.len()], "DMA copy produced different bytes");
    assert_eq!(dev.semaphore_read(c, 40).unwrap(), 40, "one completion increment per packet");
    assert!(dev.event_read(c, 41).unwrap(), "completion event set");
    let st = dev.dma_queue_state(c, q).unwrap();
    assert_eq!((st.tx_head, st.tx_tail, st.rx_head, st.rx_tail), (40, 40, 40, 40));
}

/// A DMA descriptor that writes a queue's tail-increment registers (the
/// trigger-descriptor doorbell) starts that queue.
pub fn dma_doorbell_by_device_write(factory: Factory<'_>) {
    let dev = factory();
    let arch = dev.info().arch;
    let c = CoreId(0);
    let target = DmaQueueId { engine: 1, queue: 0 };
    let r = rings(&*dev, 32);
    dev.dma_queue_init(c, target, DmaRingConfig {
        tx_ring: r.tx, rx_ring: r.rx, descriptors: r.n,
        completion_semaphore: Some(7), completion_event: None,
    }).unwrap();
    let src = dev.alloc(HBM0, 256, 0).unwrap();
    let dst = dev.alloc(HBM0, 256, 0).unwrap();
    dev.write(src, &pattern(256, 9)).unwrap();
    let (tx, rx) = udma_copy_pair(src, dst, 256);
    dev.write(r.tx, &tx).unwrap();
    dev.write(r.rx, &rx).unwrap();
    // Host writes the doorbell word straight into the register window.
    dev.write(arch.dma_tail_inc_addr(c, target, DMA_M2S_GROUP), &1u32.to_le_bytes()).unwrap();
    dev.write(arch.dma_tail_inc_addr(c, target, DMA_S2M_GROUP), &1u32.to_le_bytes()).unwrap();
    wait_until("doorbell-started DMA", || dev.semaphore_read(c, 7).unwrap() >= 1);
    let mut back = [0u8; 256];
    dev.read(dst, &mut back).unwrap();
    assert_eq!(back.to_vec(), pattern(256, 9));
}

/// A queue programmed only by 32-bit writes to its UDMA registers, where
/// the driver's `udma_regs.h` puts them in its engine's unit (ring base
/// low and high and length of `m2s_q[q]` and `s2m_q[q]`, then the two
/// tail increments), copies, and its registers read back the ring, the
/// heads and tails past the pair and the enabled status.
pub fn dma_queue_programmed_by_its_registers(factory: Factory<'_>) {
    let dev = factory();
    let arch = dev.info().arch;
    let c = CoreId(1);
    let q = DmaQueueId { engine: 6, queue: 11 };
    let r = rings(&*dev, 32);
    let src = dev.alloc(HBM0, 512, 0).unwrap();
    let dst = dev.alloc(HBM0, 512, 0).unwrap();
    dev.write(src, &pattern(512, 3)).unwrap();
    let (tx, rx) = udma_copy_pair(src, dst, 512);
    dev.write(r.tx, &tx).unwrap();
    dev.write(r.rx, &rx).unwrap();
    let reg = |group, off| arch.dma_queue_regs(c, q, group).offset(off);
    let write = |group, off, v: u32| dev.write(reg(group, off), &v.to_le_bytes()).unwrap();
    let read = |group, off| {
        let mut w = [0u8; 4];
        dev.read(reg(group, off), &mut w).unwrap();
        u32::from_le_bytes(w)
    };
    for (group, ring) in [(DMA_M2S_GROUP, r.tx), (DMA_S2M_GROUP, r.rx)] {
        write(group, DMA_REG_DRBP_LOW, ring.get() as u32);
        write(group, DMA_REG_DRBP_HIGH, (ring.get() >> 32) as u32);
        write(group, DMA_REG_DRL, r.n);
    }
    write(DMA_M2S_GROUP, DMA_REG_DRTP_INC, 1);
    write(DMA_S2M_GROUP, DMA_REG_DRTP_INC, 1);
    wait_until("the register-programmed queue's pair", || read(DMA_S2M_GROUP, DMA_REG_DRHP) == 1);
    let mut back = [0u8; 512];
    dev.read(dst, &mut back).unwrap();
    assert_eq!(back.to_vec(), pattern(512, 3), "the queue programmed by its registers copied other bytes");
    for (group, ring) in [(DMA_M2S_GROUP, r.tx), (DMA_S2M_GROUP, r.rx)] {
        let base = u64::from(read(group, DMA_REG_DRBP_HIGH)) << 32 | u64::from(read(group, DMA_REG_DRBP_LOW));
        assert_eq!(base, ring.get(), "ring base read back");
        assert_eq!((read(group, DMA_REG_DRL), read(group, DMA_REG_DRHP), read(group, DMA_REG_DRTP)), (r.n, 1, 1));
        assert_eq!(read(group, DMA_REG_STATUS), 2, "status ENABLED (udma_queue_status)");
    }
}

/// Raw 64-byte instruction records for the NQ cases (seed layout: opcode,
/// word length 0x10, debug fields, then the 8-byte events block at +4).
pub mod records {
    /// EVENT_SEMAPHORE (pure wait / update).
    pub const EVENT_SEMAPHORE: u8 = 0xA0;
    /// NOTIFY: write an explicit record into the NOTIFY queue of the
    /// engine index at +0x0C (subtype u16 at +0x0E, sub-id u16 at +0x10).
    pub const NOTIFY: u8 = 0xA6;
    /// PSEUDO_INST prefix; sub-op 1 at +12 = EXIT_EXECUTION.
    pub const PSEUDO_INST: u8 = 0xDF;
    /// Wait mode: semaphore >= immediate.
    pub const WAIT_SEM_GE_IMM: u8 = 5;
    /// Update mode: subtract the immediate when the instruction issues.
    pub const UPDATE_SEM_SUB_IMM_READ: u8 = 7;
    /// Update mode: increment by one when the instruction completes.
    pub const UPDATE_SEM_INC_COMPLETE: u8 = 19;

    /// A record with opcode and events block.
    pub fn record(opcode: u8, wait: (u8, u8), update: (u8, u8), value: u32) -> [u8; 64] {
        let mut r = [0u8; 64];
        r[0] = opcode;
        r[1] = 0x10;
        r[4] = wait.0;
        r[5] = wait.1;
        r[6] = update.0;
        r[7] = update.1;
        r[8..12].copy_from_slice(&value.to_le_bytes());
        r
    }

    /// A NOTIFY of a CUSTOM record (subtype 6, debug-value sub-id 6) into
    /// engine `engine`'s NOTIFY queue.
    pub fn notify(engine: u8) -> [u8; 64] {
        let mut r = record(NOTIFY, (0, 0), (0, 0), 0);
        r[0x0C] = engine;
        r[0x0E] = 6;
        r[0x10] = 6;
        r
    }

    /// The EXIT_EXECUTION terminator.
    pub fn exit() -> [u8; 64] {
        let mut r = record(PSEUDO_INST, (0, 0), (0, 0), 0);
        r[12] = 1;
        r
    }

    /// "Wait until semaphore `sem` >= 1, then take one": the doorbell wait
    /// at the top of a stream.
    pub fn doorbell_wait(sem: u8) -> [u8; 64] {
        record(EVENT_SEMAPHORE, (WAIT_SEM_GE_IMM, sem), (UPDATE_SEM_SUB_IMM_READ, sem), 1)
    }
}

fn nq_program(dev: &dyn Device, core: CoreId, engine: EngineId, doorbell: u8, notifies: usize) -> DeviceAddr {
    let mut stream = Vec::new();
    stream.extend_from_slice(&records::doorbell_wait(doorbell));
    for _ in 0..notifies {
        stream.extend_from_slice(&records::notify(engine.index() as u8));
    }
    stream.extend_from_slice(&records::exit());
    let addr = dev.alloc(HBM0, stream.len() as u64, 64).unwrap();
    dev.write(addr, &stream).unwrap();
    dev.start_engine(core, engine, addr, stream.len() as u64).unwrap();
    addr
}

/// NQ rings wrap, and the phase bit (bit 31 of the first word) toggles on
/// every wrap, starting at 1.
pub fn nq_wrap_and_phase(factory: Factory<'_>) {
    let dev = factory();
    let c = CoreId(0);
    let cap = 4u32;
    let ring = dev.alloc(HBM0, u64::from(cap) * 16, u64::from(cap) * 16).unwrap();
    dev.memset(ring, 0, u64::from(cap) * 16).unwrap();
    let nq = dev.nq_init(NqSpec {
        core: c, engine_index: EngineId::Sp.index() as u8, nq_type: NqType::Notify,
        ring, size_bytes: cap * 16,
    }).unwrap();
    assert_eq!(nq.capacity(), cap);
    // Each execution writes START, NOTIFY, END = 3 records.
    nq_program(&*dev, c, EngineId::Sp, 30, 1);
    let mut seen = 0u64;
    for exec in 1..=3u64 {
        dev.semaphore_increment(c, 30, 1).unwrap();
        wait_until("START/NOTIFY/END records", || nq.produced() >= exec * 3);
        let mut recs = [[0u8; 16]; 8];
        let n = nq.read(seen, &mut recs);
        assert_eq!(n, 3, "three records per execution");
        for (k, rec) in recs[..n].iter().enumerate() {
            let idx = seen + k as u64;
            let phase = rec[3] >> 7;
            let want = ((idx / u64::from(cap) + 1) & 1) as u8;
            assert_eq!(phase, want, "record {idx}: phase bit must toggle per wrap");
            // The same bytes sit in ring memory at the record's slot.
            let mut mem = [0u8; 16];
            dev.read(ring.offset((idx % u64::from(cap)) * 16), &mut mem).unwrap();
            assert_eq!(&mem, rec, "mapped view and ring memory disagree");
        }
        seen += n as u64;
        nq.set_consumed(seen);
    }
    assert!(!nq.overflowed(), "an acknowledged ring must not overflow");
    dev.reset_core(c).unwrap();
}

/// A sequencer's debug registers (where a device has them): an engine
/// blocked at its stream's doorbell wait reports that record and the
/// semaphore; once the doorbell rings and it passes, it reports a later
/// record; after a core reset it is idle.
pub fn engine_state_names_the_wait(factory: Factory<'_>) {
    use crate::device::{EngineRun, EngineWaitOn};
    let dev = factory();
    let c = CoreId(0);
    if dev.engine_state(c, EngineId::Act).unwrap().is_none() {
        return;
    }
    // DOORBELL(sem 29), DOORBELL(sem 28), EXIT.
    let mut stream = Vec::new();
    stream.extend_from_slice(&records::doorbell_wait(29));
    stream.extend_from_slice(&records::doorbell_wait(28));
    stream.extend_from_slice(&records::exit());
    let addr = dev.alloc(HBM0, stream.len() as u64, 64).unwrap();
    dev.write(addr, &stream).unwrap();
    dev.start_engine(c, EngineId::Act, addr, stream.len() as u64).unwrap();
    let state = || dev.engine_state(c, EngineId::Act).unwrap().unwrap();
    wait_until("the engine blocking on semaphore 29", || state().waiting_on == EngineWaitOn::Semaphore(29));
    let st = state();
    assert_eq!((st.run, st.pc), (EngineRun::Running, 0), "blocked at the first record: {st:?}");
    dev.semaphore_increment(c, 29, 1).unwrap();
    wait_until("the engine blocking on semaphore 28", || state().waiting_on == EngineWaitOn::Semaphore(28));
    assert_eq!(state().pc, 1, "blocked at the second record: {:?}", state());
    dev.reset_core(c).unwrap();
    assert_eq!(state().run, EngineRun::Idle, "a reset core's engines are idle: {:?}", state());
}

/// A producer lapping an unacknowledged ring sets the overflow flag.
pub fn nq_overflow_flag(factory: Factory<'_>) {
    let dev = factory();
    let c = CoreId(0);
    let ring = dev.alloc(HBM0, 64, 64).unwrap();
    let nq = dev.nq_init(NqSpec {
        core: c, engine_index: EngineId::Act.index() as u8, nq_type: NqType::Notify, ring, size_bytes: 64,
    }).unwrap();
    nq_program(&*dev, c, EngineId::Act, 31, 5);
    dev.semaphore_increment(c, 31, 1).unwrap();
    wait_until("seven records", || nq.produced() >= 7);
    assert!(nq.overflowed(), "7 records into a 4-record ring without acks must flag overflow");
    let mut recs = [[0u8; 16]; 8];
    let n = nq.read(0, &mut recs);
    assert!(n <= 4, "overwritten records must not be returned");
    dev.reset_core(c).unwrap();
}

/// Reserved cores cannot be reserved again until released.
pub fn reservation_exclusive(factory: Factory<'_>) {
    let dev = factory();
    let n = dev.info().physical_cores;
    let first = dev.reserve_cores(&[CoreId(0)]).expect("reserve core 0");
    match dev.reserve_cores(&[CoreId(0)]) {
        Err(HalError::Busy { cores, .. }) => assert_eq!(cores, vec![0], "Busy names the taken core"),
        other => panic!("second reservation of core 0 must be Busy, got {other:?}"),
    }
    if n > 1 {
        let other = dev.reserve_cores(&[CoreId(1)]).expect("core 1 is free");
        drop(other);
    }
    drop(first);
    let again = dev.reserve_cores(&[CoreId(0)]).expect("core 0 free after release");
    drop(again);
}
