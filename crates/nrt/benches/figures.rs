//! The runtime's headline figures, printed (harness = false):
//!
//! 1. synchronous execute latency (p50, p99) of the copy example, against
//!    the two-thread spin round trip measured in the same run (target:
//!    p50 <= 5x the round trip);
//! 2. heap allocations per execute in the steady state (target 0), on the
//!    executing thread and over the whole process (simulator included);
//! 3. load time of a NEFF carrying 256 MiB of constants against gunzip +
//!    MD5 + copy of the same bytes (target <= 1.3x);
//! 4. tensor write and read of 256 MiB through the transfer queues (DMA
//!    through the bounce buffer, pool-mode simulator) against a plain
//!    memcpy of the same bytes, in GB/s.
//!
//! `cargo bench -p nrt --bench figures` runs the full sizes. Any other
//! invocation (`cargo test --all-targets` runs bench targets without
//! `--bench`) does a tiny quick pass so the test suite stays fast.

#[path = "../tests/exec_support/mod.rs"]
mod exec_support;

use exec_support::*;
use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

// The counting allocator is the `nrt` binary's own (one implementation for
// `nrt bench` and these figures).
#[path = "../../nrt-cli/src/alloc_count.rs"]
mod alloc_count;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

/// Sizes of one run: full under `cargo bench`, tiny otherwise.
struct Plan {
    executions: usize,
    spin_batches: usize,
    constant_bytes: usize,
    load_rounds: usize,
    transfer_bytes: usize,
    transfer_rounds: usize,
}

fn plan() -> Plan {
    if std::env::args().any(|a| a == "--bench") {
        Plan { executions: 3000, spin_batches: 31, constant_bytes: 256 << 20, load_rounds: 5, transfer_bytes: 256 << 20, transfer_rounds: 5 }
    } else {
        Plan { executions: 20, spin_batches: 3, constant_bytes: 1 << 20, load_rounds: 1, transfer_bytes: 3 << 20, transfer_rounds: 1 }
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Nearest-rank percentile (`p` in 0..=1) of sorted samples.
fn pct(sorted: &[Duration], p: f64) -> Duration {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median over batches of the mean round trip of 1000 hand-offs between
/// two threads spinning on one atomic.
fn spin_round_trip(batches: usize) -> Duration {
    let mut means: Vec<Duration> = (0..batches)
        .map(|_| {
            const N: u64 = 1000;
            let flag = Arc::new(AtomicU64::new(0));
            let peer_flag = flag.clone();
            let peer = std::thread::spawn(move || {
                for i in 0..N {
                    while peer_flag.load(Ordering::Acquire) != 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    peer_flag.store(2 * i + 2, Ordering::Release);
                }
            });
            let t = Instant::now();
            for i in 0..N {
                flag.store(2 * i + 1, Ordering::Release);
                while flag.load(Ordering::Acquire) != 2 * i + 2 {
                    std::hint::spin_loop();
                }
            }
            let d = t.elapsed() / N as u32;
            peer.join().expect("spin peer");
            d
        })
        .collect();
    means.sort();
    means[means.len() / 2]
}

/// Figures of `executions` sync executes of the copy example on device
/// tensors: sorted latencies and (thread, process) allocations per execute.
fn copy_executes(host: &ModelHost, executions: usize) -> (Vec<Duration>, f64, f64) {
    const BYTES: u64 = 8 * 128 * 4;
    let id = host.load(&copy_neff(), 0, -1).expect("load copy");
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(host.memory(), core, BYTES, "input").expect("input"));
    let dout = Arc::new(Tensor::allocate_device(host.memory(), core, BYTES, "output").expect("output"));
    din.write(0, &data(BYTES as usize, 5)).expect("write input");
    let mut ins = TensorSet::new();
    ins.add("input", din);
    let mut outs = TensorSet::new();
    outs.add("output", dout.clone());
    // Executed through the model handle, as a libnrt client passes its
    // `nrt_model_t *` (no lookup by id per execute); dropped before unload.
    let model = host.models().get(id).expect("the loaded model");
    for _ in 0..10 {
        nrt::exec::execute(&model, &ins, &outs).expect("warm-up");
    }
    let mut samples = Vec::with_capacity(executions);
    let (t0, p0) = (alloc_count::thread_allocations(), alloc_count::allocations());
    for _ in 0..executions {
        let t = Instant::now();
        nrt::exec::execute(&model, &ins, &outs).expect("execute");
        samples.push(t.elapsed());
    }
    drop(model);
    let (t1, p1) = (alloc_count::thread_allocations(), alloc_count::allocations());
    // Sanity: the measured executions did the work.
    assert_eq!(read_all(&dout), data(BYTES as usize, 5), "copy output");
    host.unload(id).expect("unload");
    samples.sort();
    let n = executions as f64;
    (samples, (t1 - t0) as f64 / n, (p1 - p0) as f64 / n)
}

fn latency_figures(plan: &Plan) {
    let rt = spin_round_trip(plan.spin_batches);
    println!("spin hand-off round trip (median of {} batches): {:.3} us", plan.spin_batches, us(rt));
    for (label, host) in [
        ("deterministic sim (engines run on the caller)", host().1),
        (
            "threaded sim (2 workers, caller spins then parks)",
            ModelHost::with_lnc(
                Arc::new(nrt_sim::SimDevice::new(&nrt_sim::SimConfig::builder().threads(2).build(), 0)),
                2,
                LoadSettings::default(),
            )
            .expect("host"),
        ),
    ] {
        let (s, thread_allocs, process_allocs) = copy_executes(&host, plan.executions);
        let p50 = pct(&s, 0.5);
        println!(
            "copy sync execute, {label}: p50 {:.1} us, p99 {:.1} us, p50 = {:.1}x the spin round trip (target <= 5x)",
            us(p50),
            us(pct(&s, 0.99)),
            p50.as_secs_f64() / rt.as_secs_f64()
        );
        println!("  heap allocations per execute: {thread_allocs:.2} on the executing thread (target 0), {process_allocs:.2} in the whole process");
        host.close().expect("close");
    }
}

fn load_figures(plan: &Plan) {
    let n = plan.constant_bytes;
    // The copy example plus one `file` var of n bytes.
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).expect("copy example");
    let mut members = contents.members;
    let values = data(n, 77);
    let npy = nrt_neff::npy::encode_npy("|u1", &[n as u64], &values);
    let npy_len = npy.len();
    members.insert("sg00/big.npy".into(), npy);
    let mut def: serde_json::Value = serde_json::from_slice(&members["sg00/def.json"]).expect("def.json");
    def["var"]["big"] = serde_json::json!({"type": "file", "var_id": 7, "size": n, "file_name": "big.npy"});
    members.insert("sg00/def.json".into(), serde_json::to_vec(&def).expect("def.json"));
    let neff = pack_members(&contents.header.expect("header"), members);

    let (_dev, host) = host_with(LoadSettings { validate_hash: true, ..LoadSettings::default() });
    host.install_vcore(0).expect("install");
    let dev = host.device().clone();
    // Interleaved rounds (load, then the baseline) so both see the same
    // machine; medians of each, and the ratio of the medians.
    let (mut loads, mut bases, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.load_rounds {
        let t = Instant::now();
        let id = host.load(&neff, 0, -1).expect("load");
        let load = t.elapsed();
        host.unload(id).expect("unload");

        // Baseline: what any loader must do with these bytes at least once.
        let at = dev.alloc(nrt_hal::MemoryLocation::Hbm { channel: 0 }, n as u64, 4096).expect("alloc");
        let t = Instant::now();
        let payload = &neff[nrt_neff::header::HEADER_SIZE..];
        let digest = <md5::Md5 as md5::Digest>::digest(payload);
        let mut tar = Vec::with_capacity(n + (1 << 20));
        flate2::read::GzDecoder::new(payload).read_to_end(&mut tar).expect("gunzip");
        let start = tar.windows(6).position(|w| w == b"\x93NUMPY").expect("npy in the tar");
        let header = nrt_neff::npy::parse_npy_header("big.npy", &tar[start..start + npy_len]).expect("npy header");
        let body = &tar[start + header.data_offset..][..n];
        dev.write(at, body).expect("copy to device");
        let base = t.elapsed();
        std::hint::black_box(digest);
        let mut check = vec![0u8; 64.min(n)];
        dev.read(at, &mut check).expect("read back");
        assert_eq!(&check[..], &values[..check.len()]);
        dev.free(at).expect("free");
        ratios.push(load.as_secs_f64() / base.as_secs_f64());
        loads.push(load);
        bases.push(base);
    }
    loads.sort();
    bases.sort();
    let (load, base) = (pct(&loads, 0.5), pct(&bases, 0.5));
    println!(
        "load of a NEFF with {} MiB of constants (hash checked), median of {} interleaved rounds: {:.1} ms; gunzip + md5 + copy of the same bytes: {:.1} ms; ratio {:.2}x (target <= 1.3x); per-round ratios {:?}",
        n >> 20,
        plan.load_rounds,
        load.as_secs_f64() * 1e3,
        base.as_secs_f64() * 1e3,
        load.as_secs_f64() / base.as_secs_f64(),
        ratios.iter().map(|r| (r * 100.0).round() / 100.0).collect::<Vec<_>>()
    );
    host.close().expect("close");
}

fn transfer_figures(plan: &Plan) {
    let n = plan.transfer_bytes;
    let dev = Arc::new(nrt_sim::SimDevice::new(&nrt_sim::SimConfig::builder().build(), 0));
    let host = ModelHost::with_lnc(dev, 2, LoadSettings::default()).expect("host");
    host.install_vcore(0).expect("install");
    let core = host.vcores()[0][0];
    let t = Tensor::allocate_device(host.memory(), core, n as u64, "big").expect("device tensor");
    let src = data(n, 91);
    let mut dst = vec![0u8; n];
    // Warm: the device's pages and the host buffers are touched once.
    t.write(0, &src).expect("write");
    t.read(0, &mut dst).expect("read");
    assert!(dst == src);
    // Interleaved rounds (memcpy, write, read) so all three see the same
    // machine; medians of each.
    let (mut copies, mut writes, mut reads) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.transfer_rounds {
        let c = Instant::now();
        dst.copy_from_slice(&src);
        copies.push(c.elapsed());
        std::hint::black_box(&dst);
        let w = Instant::now();
        t.write(0, &src).expect("write");
        writes.push(w.elapsed());
        let r = Instant::now();
        t.read(0, &mut dst).expect("read");
        reads.push(r.elapsed());
    }
    for v in [&mut copies, &mut writes, &mut reads] {
        v.sort();
    }
    let gbs = |d: Duration| n as f64 / d.as_secs_f64() / 1e9;
    let (copy, write, read) = (pct(&copies, 0.5), pct(&writes, 0.5), pct(&reads, 0.5));
    println!(
        "tensor transfers of {} MiB through the DMA queues, median of {} interleaved rounds: write {:.2} GB/s ({:.2}x memcpy), read {:.2} GB/s ({:.2}x memcpy); memcpy {:.2} GB/s",
        n >> 20,
        plan.transfer_rounds,
        gbs(write),
        copy.as_secs_f64() / write.as_secs_f64(),
        gbs(read),
        copy.as_secs_f64() / read.as_secs_f64(),
        gbs(copy)
    );
    drop(t);
    host.close().expect("close");
}

fn main() {
    let plan = plan();
    latency_figures(&plan);
    load_figures(&plan);
    transfer_figures(&plan);
}
