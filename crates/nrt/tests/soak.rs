//! Soak (ignored: a long run, not a check of each commit): threads each
//! running thousands of synchronous executions over three models on one
//! simulated device, with a fault injected into the device every few
//! hundred executions (each kind of `FaultKind` in turn); a model a fault
//! poisoned is unloaded and loaded again. Checked: every execution
//! returns once (success with its output equal to its input, or a status),
//! the memory ledger is back to its baseline at the end, and the resident
//! set stays within 5% after warm-up. Prints the counts and the RSS curve.
//!
//! `cargo test --release -p nrt --test soak -- --ignored --nocapture`
//! (`SOAK_THREADS`, `SOAK_EXECS` per thread, `SOAK_FAULT_EVERY`).

mod exec_support;

use exec_support::*;
use nrt::load::LoadSettings;
use nrt_sim::{FaultKind, FaultSpec};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Resident set size in bytes (`/proc/self/statm`, second field, pages).
fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = s.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("statm's resident field");
    pages * 4096
}

/// The three models: the copy example at three sizes (rows of 128 floats).
fn models() -> Vec<(Vec<u8>, usize)> {
    [8u64, 16, 32]
        .iter()
        .map(|&rows| {
            let contents = nrt_neff::read_dir(&examples_dir().join("copy")).expect("examples/copy");
            let mut m = contents.members;
            resize_copy_io(&mut m, rows, 128);
            (pack_members(&contents.header.unwrap_or_default(), m), (rows * 128 * 4) as usize)
        })
        .collect()
}

const KINDS: [FaultKind; 8] = [FaultKind::HbmUe, FaultKind::HbmUeRepairable, FaultKind::SramParity, FaultKind::DmaAbort, FaultKind::NqOverflow, FaultKind::Hang, FaultKind::Nan, FaultKind::Oob];

#[test]
#[ignore = "a soak run: cargo test --release -p nrt --test soak -- --ignored --nocapture"]
fn soak_mixed_faults_reloads_and_flat_memory() {
    let threads = env_or("SOAK_THREADS", 4);
    let execs = env_or("SOAK_EXECS", 10_000);
    let every = env_or("SOAK_FAULT_EVERY", 300);
    let settings = LoadSettings { exec_timeout: Duration::from_millis(200), ..LoadSettings::default() };
    let (dev, host) = host_with(settings);
    let host = Arc::new(host);
    let neffs = Arc::new(models());
    // Each core's own buffers come with its first load: the baseline is
    // taken after as many models as the run holds at once were loaded
    // (spreading over the same cores) and unloaded.
    let warm: Vec<_> = (0..threads).flat_map(|_| neffs.iter()).map(|(n, _)| host.load(n, -1, -1).expect("warm-up load")).collect();
    for id in warm {
        host.unload(id).unwrap();
    }
    let baseline = host.memory().ledger().total();
    let (done, ok, failed, reloads, injected) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let nan_outputs = AtomicU64::new(0);
    let statuses = Mutex::new(BTreeMap::<String, u64>::new());
    let curve = Mutex::new(Vec::<(u64, u64)>::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..threads {
            let (host, neffs, dev) = (host.clone(), neffs.clone(), dev.clone());
            let (done, ok, failed, reloads, injected, statuses, curve, nan_outputs) = (&done, &ok, &failed, &reloads, &injected, &statuses, &curve, &nan_outputs);
            s.spawn(move || {
                let mut ids: Vec<_> = neffs.iter().map(|(n, _)| host.load(n, -1, -1).expect("load")).collect();
                for i in 0..execs {
                    let m = (i as usize + t as usize) % ids.len();
                    let size = neffs[m].1;
                    let input = data(size, i ^ (t << 32));
                    let (ins, outs, out) = host_io(input.clone(), size);
                    match host.execute(ids[m], &ins, &outs) {
                        Ok(()) => {
                            let got = read_all(&out);
                            if got != input {
                                // An injected NaN fault completes as success
                                // (numerical errors are not reported by
                                // default, as in libnrt); the only change it
                                // may make is NaN words.
                                let nan_only = got.chunks(4).zip(input.chunks(4)).all(|(g, i)| g == i || f32::from_le_bytes(g.try_into().unwrap()).is_nan());
                                assert!(nan_only, "thread {t} execution {i}: wrong output");
                                nan_outputs.fetch_add(1, Ordering::Relaxed);
                            }
                            ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            *statuses.lock().unwrap().entry(format!("{:?}", e.status)).or_default() += 1;
                            let poisoned = host.models().get(ids[m]).and_then(|model| model.poisoned());
                            if poisoned.is_some() {
                                host.unload(ids[m]).expect("unload a poisoned model");
                                ids[m] = host.load(&neffs[m].0, -1, -1).expect("reload");
                                reloads.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % every == 0 {
                        let k = injected.fetch_add(1, Ordering::Relaxed);
                        dev.inject(FaultSpec::new(KINDS[k as usize % KINDS.len()]));
                    }
                    if n % 1000 == 0 {
                        curve.lock().unwrap().push((n, rss()));
                    }
                }
                for id in ids {
                    host.unload(id).expect("unload");
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let total = threads * execs;
    let (ok, failed) = (ok.into_inner(), failed.into_inner());
    println!("soak: {threads} threads x {execs} executions in {:.1} s: {ok} ok ({} with NaN output), {failed} failed, {} reloads, {} faults injected", elapsed.as_secs_f64(), nan_outputs.into_inner(), reloads.into_inner(), injected.into_inner());
    println!("soak: statuses {:?}", statuses.into_inner().unwrap());
    let curve = curve.into_inner().unwrap();
    for (n, r) in &curve {
        println!("soak: rss after {n:>6} executions: {:.1} MiB", *r as f64 / (1 << 20) as f64);
    }
    assert_eq!(ok + failed, total, "executions lost or counted twice");
    assert!(failed < total / 10, "most executions must succeed");
    let ledger = host.memory().ledger();
    println!("soak: ledger {} bytes at the end, baseline {baseline}", ledger.total());
    assert!(ledger.models.is_empty(), "memory still booked to models: {:?}", ledger.models);
    assert_eq!(ledger.total(), baseline, "the memory ledger is back to its baseline");
    let warm: Vec<u64> = curve.iter().skip(curve.len() / 5).map(|c| c.1).collect();
    if let (Some(lo), Some(hi)) = (warm.iter().min(), warm.iter().max()) {
        println!("soak: rss after warm-up {:.1}..{:.1} MiB ({:+.1}%)", *lo as f64 / (1 << 20) as f64, *hi as f64 / (1 << 20) as f64, (*hi as f64 / *lo as f64 - 1.0) * 100.0);
        assert!(*hi as f64 <= *lo as f64 * 1.05, "RSS grew by more than 5% after warm-up");
    }
}
