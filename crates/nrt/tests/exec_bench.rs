//! Figures for the closing note (run with `--ignored --nocapture`):
//! the machine's spin hand-off round trip, sync execute latency of the
//! copy example (deterministic and threaded simulator), heap allocations
//! per execute, and the load time of a NEFF with 256 MiB of constants
//! against decompress + hash + copy of the same bytes.

mod exec_support;

use exec_support::*;
use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const BYTES: usize = 8 * 128 * 4;

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Median round trip of a value bounced between two spinning threads.
fn spin_roundtrip() -> Duration {
    let flag = Arc::new(AtomicU64::new(0));
    let f2 = flag.clone();
    const N: u64 = 20_000;
    let peer = std::thread::spawn(move || {
        for i in 0..N {
            while f2.load(Ordering::Acquire) != 2 * i + 1 {
                std::hint::spin_loop();
            }
            f2.store(2 * i + 2, Ordering::Release);
        }
    });
    let mut times = Vec::with_capacity(N as usize);
    for i in 0..N {
        let t = Instant::now();
        flag.store(2 * i + 1, Ordering::Release);
        while flag.load(Ordering::Acquire) != 2 * i + 2 {
            std::hint::spin_loop();
        }
        times.push(t.elapsed());
    }
    peer.join().unwrap();
    percentile(&mut times, 0.5)
}

/// The copy example reshaped to `bytes` (one row), to see how the
/// runtime's overhead depends on the transfer size.
fn small_copy(bytes: usize) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut members = contents.members;
    let text = String::from_utf8(members["sg00/def.json"].clone()).unwrap().replace("4096", &bytes.to_string()).replace("[8, 128]", &format!("[1, {}]", bytes / 4));
    members.insert("sg00/def.json".into(), text.into_bytes());
    let text = String::from_utf8(members["sg00/SP.json"].clone()).unwrap().replace("[512, 8]", &format!("[{bytes}, 1]"));
    members.insert("sg00/SP.json".into(), text.into_bytes());
    let text = String::from_utf8(members["neff.json"].clone()).unwrap().replace("[8, 128]", &format!("[1, {}]", bytes / 4));
    members.insert("neff.json".into(), text.into_bytes());
    pack_members(&contents.header.unwrap(), members)
}

fn copy_latency(host: &ModelHost, runs: usize) -> (Duration, Duration) {
    latency(host, &copy_neff(), BYTES, runs)
}

fn latency(host: &ModelHost, neff: &[u8], bytes: usize, runs: usize) -> (Duration, Duration) {
    let id = host.load(neff, 0, -1).unwrap();
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(host.memory(), core, bytes as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(host.memory(), core, bytes as u64, "output").unwrap());
    let mut ins = TensorSet::new();
    ins.add("input", din);
    let mut outs = TensorSet::new();
    outs.add("output", dout);
    for _ in 0..20 {
        host.execute(id, &ins, &outs).unwrap();
    }
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            host.execute(id, &ins, &outs).unwrap();
            s.elapsed()
        })
        .collect();
    (percentile(&mut t, 0.5), percentile(&mut t, 0.99))
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn figures() {
    let rt = spin_roundtrip();
    println!("spin hand-off round trip p50: {:.2} us", rt.as_secs_f64() * 1e6);
    let (_dev, det) = host();
    let (p50, p99) = copy_latency(&det, 2000);
    println!("copy sync execute, deterministic sim: p50 {:.2} us, p99 {:.2} us ({:.1}x the round trip)", p50.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6, p50.as_secs_f64() / rt.as_secs_f64());
    let (_dev, small) = host();
    let (p50, p99) = latency(&small, &small_copy(64), 64, 2000);
    println!("64-byte copy sync execute, deterministic sim: p50 {:.2} us, p99 {:.2} us ({:.1}x the round trip)", p50.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6, p50.as_secs_f64() / rt.as_secs_f64());
    let t = Instant::now();
    let v = data(BYTES, 1);
    let mut dst = vec![0u8; BYTES];
    for _ in 0..100 {
        dst.copy_from_slice(std::hint::black_box(&v));
    }
    println!("host memcpy of {BYTES} bytes: {:.2} us", t.elapsed().as_secs_f64() * 1e6 / 100.0);
    let cfg = nrt_sim::SimConfig::builder().threads(2).build();
    let pooled = ModelHost::with_lnc(Arc::new(nrt_sim::SimDevice::new(&cfg, 0)), 2, LoadSettings::default()).unwrap();
    let (p50, p99) = copy_latency(&pooled, 2000);
    println!("copy sync execute, threaded sim: p50 {:.2} us, p99 {:.2} us ({:.1}x the round trip)", p50.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6, p50.as_secs_f64() / rt.as_secs_f64());

    // 256 MiB of constants.
    const CONST: usize = 256 << 20;
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut members = contents.members;
    let values = data(CONST, 99);
    members.insert("sg00/w.npy".into(), nrt_neff::npy::encode_npy("<f4", &[(CONST / 4) as u64], &values));
    let mut def: serde_json::Value = serde_json::from_slice(&members["sg00/def.json"]).unwrap();
    def["var"]["w"] = serde_json::json!({"type": "file", "var_id": 2, "size": CONST, "file_name": "w.npy"});
    members.insert("sg00/def.json".into(), serde_json::to_vec(&def).unwrap());
    let neff = pack_members(&contents.header.unwrap(), members);
    let (_dev, strict) = host_with(LoadSettings { validate_hash: true, ..LoadSettings::default() });
    strict.install_vcore(0).unwrap();
    let t = Instant::now();
    let id = strict.load(&neff, 0, -1).unwrap();
    let load = t.elapsed();
    let mut check = vec![0u8; 4096];
    // Baseline: gunzip the payload, MD5 it, copy the constant into device memory.
    let t = Instant::now();
    let payload = &neff[1024..];
    let digest = <md5::Md5 as md5::Digest>::digest(payload);
    let mut tar = Vec::with_capacity(CONST + (1 << 20));
    flate2::read::GzDecoder::new(payload).read_to_end(&mut tar).unwrap();
    let dev = strict.device().clone();
    let at = dev.alloc(nrt_hal::MemoryLocation::Hbm { channel: 0 }, CONST as u64, 4096).unwrap();
    dev.write(at, &values).unwrap();
    let base = t.elapsed();
    dev.read(at, &mut check).unwrap();
    assert_eq!(&check[..], &values[..4096]);
    assert!(!digest.is_empty() && tar.len() > CONST);
    println!(
        "load of a NEFF with 256 MiB of constants: {:.0} ms; gunzip + md5 + copy of the same bytes: {:.0} ms ({:.2}x)",
        load.as_secs_f64() * 1e3,
        base.as_secs_f64() * 1e3,
        load.as_secs_f64() / base.as_secs_f64()
    );
    strict.unload(id).unwrap();
}
