//! Contiguous DMA bandwidth of the simulated device against a plain
//! memcpy of the same bytes, in the same run (issue target: >= 0.7x).
//!
//! Run: `cargo bench -p nrt-sim --bench dma`.

use nrt_hal::conformance::{udma_copy_pair, wait_until};
use nrt_hal::{CoreId, Device, DmaQueueId, DmaRingConfig, MemoryLocation};
use nrt_sim::{SimConfig, SimDevice};
use std::time::{Duration, Instant};

const TOTAL: u64 = 64 << 20;
const CHUNK: u64 = 64 << 10;
const ROUNDS: usize = 5;

fn best(mut f: impl FnMut() -> Duration) -> Duration {
    (0..ROUNDS).map(|_| f()).min().unwrap_or_default()
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn main() {
    let hbm = MemoryLocation::Hbm { channel: 0 };
    for deterministic in [false, true] {
        let cfg = SimConfig::builder().deterministic(deterministic).build();
        let dev = SimDevice::new(&cfg, 0);
        let c = CoreId(0);
        let q = DmaQueueId { engine: 0, queue: 0 };
        let n = (TOTAL / CHUNK) as u32;
        let src = dev.alloc(hbm, TOTAL, 0).unwrap();
        let dst = dev.alloc(hbm, TOTAL, 0).unwrap();
        let data: Vec<u8> = (0..TOTAL).map(|i| ((i * 13) >> 3) as u8).collect();
        dev.write(src, &data).unwrap();
        dev.write(dst, &data).unwrap();
        let ring_len = n.next_multiple_of(16).max(32);
        let tx = dev.alloc(hbm, u64::from(ring_len) * 16, 256).unwrap();
        let rx = dev.alloc(hbm, u64::from(ring_len) * 16, 256).unwrap();
        for i in 0..n {
            let off = u64::from(i) * CHUNK;
            let (t, r) = udma_copy_pair(src.offset(off), dst.offset(off), CHUNK as u32);
            dev.write(tx.offset(u64::from(i) * 16), &t).unwrap();
            dev.write(rx.offset(u64::from(i) * 16), &r).unwrap();
        }
        let mut rounds = 0i32;
        let dma = best(|| {
            dev.dma_queue_init(c, q, DmaRingConfig {
                tx_ring: tx, rx_ring: rx, descriptors: ring_len,
                completion_semaphore: Some(1), completion_event: None,
            })
            .unwrap();
            rounds += 1;
            let want = rounds * n as i32;
            let t = Instant::now();
            dev.dma_tail_increment(c, q, n, n).unwrap();
            wait_until("DMA bench completion", || dev.semaphore_read(c, 1).unwrap() >= want);
            t.elapsed()
        });
        let mut a = data.clone();
        let b = data.clone();
        let memcpy = best(|| {
            let t = Instant::now();
            a.copy_from_slice(std::hint::black_box(&b));
            std::hint::black_box(&a);
            t.elapsed()
        });
        let (d, m) = (gbps(TOTAL, dma), gbps(TOTAL, memcpy));
        println!(
            "dma contiguous {} MiB in {} KiB packets ({}): {d:.2} GB/s; memcpy {m:.2} GB/s; ratio {:.2}",
            TOTAL >> 20,
            CHUNK >> 10,
            if deterministic { "deterministic" } else { "pool" },
            d / m
        );
    }
}
