//! `nrt bench`: a neuron-bench-style latency run of one model on the
//! simulated device, with the figures the runtime's design is judged by:
//! host latency, device time from the system trace (nrtpy's device vs
//! host split, [`crate::bench_device`]), the cost of a traced execute,
//! heap allocations and doorbells per execute, and (with `--spin`) the
//! machine's spin hand-off round trip so latency can be read as a ratio.

use crate::alloc_count;
use crate::model_io::{self, Loaded};
use anyhow::{Result, anyhow, bail};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Latency percentiles of a run, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percentiles {
    /// Fastest execution.
    pub p0: f64,
    /// 1st percentile.
    pub p1: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest execution.
    pub p100: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `samples` (any order; must not be empty).
    pub fn of(samples: &mut [Duration]) -> Option<Percentiles> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let at = |p: f64| {
            let rank = ((p / 100.0) * samples.len() as f64).ceil() as usize;
            samples[rank.clamp(1, samples.len()) - 1].as_secs_f64() * 1e6
        };
        Some(Percentiles { p0: at(0.0), p1: at(1.0), p50: at(50.0), p99: at(99.0), p100: at(100.0) })
    }
}

/// A second thread that answers spin hand-offs on demand: the bench takes
/// its round-trip batches between blocks of executions, so the round trip
/// and the latency it is compared with see the same machine (on a shared
/// host both swing by 5x within seconds as other tenants come and go and
/// the hypervisor moves the two vCPUs). Between batches the peer is parked:
/// it never competes with the executions for a CPU.
pub struct SpinPeer {
    shared: Arc<PeerShared>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Hand-off values used so far (both sides count the same way).
    base: u64,
}

/// What the bench thread and its peer share.
struct PeerShared {
    /// The ping-pong word: odd values are pings, even values pongs.
    flag: AtomicU64,
    /// Round trips the peer owes (0: none, park).
    owed: AtomicU64,
    /// Set once, when the peer is to exit.
    stop: AtomicBool,
}

impl SpinPeer {
    /// Starts the (parked) peer thread.
    pub fn start() -> Result<SpinPeer> {
        let shared = Arc::new(PeerShared { flag: AtomicU64::new(0), owed: AtomicU64::new(0), stop: AtomicBool::new(false) });
        let peer = shared.clone();
        let thread = std::thread::Builder::new()
            .name("spin-peer".into())
            .spawn(move || {
                let mut base = 0u64;
                loop {
                    let n = loop {
                        let n = peer.owed.swap(0, Ordering::Acquire);
                        if n > 0 {
                            break n;
                        }
                        if peer.stop.load(Ordering::Acquire) {
                            return;
                        }
                        std::thread::park();
                    };
                    for i in 0..n {
                        while peer.flag.load(Ordering::Acquire) != base + 2 * i + 1 {
                            if peer.stop.load(Ordering::Relaxed) {
                                return;
                            }
                            std::hint::spin_loop();
                        }
                        peer.flag.store(base + 2 * i + 2, Ordering::Release);
                    }
                    base += 2 * n;
                }
            })
            .map_err(|e| anyhow!("cannot start the spin round-trip thread: {e}"))?;
        Ok(SpinPeer { shared, thread: Some(thread), base: 0 })
    }

    /// Mean round trip, in microseconds, of `round_trips` hand-offs of a
    /// value between this thread and the peer spinning on one atomic: the
    /// floor any hand-off to a device worker (or a spinning waiter) pays on
    /// this machine. One untimed round trip first wakes the peer. Each
    /// hand-off waits for the peer's answer while the peer thread lives
    /// (looked at every [`PEER_LOOK`] polls): an error if it ended.
    pub fn round_trip_us(&mut self, round_trips: u64) -> Result<f64> {
        let n = round_trips.max(1) + 1;
        self.shared.owed.store(n, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
        let mut start = Instant::now();
        for i in 0..n {
            self.shared.flag.store(self.base + 2 * i + 1, Ordering::Release);
            let mut polls = 0u32;
            while self.shared.flag.load(Ordering::Acquire) != self.base + 2 * i + 2 {
                std::hint::spin_loop();
                polls = polls.wrapping_add(1);
                if polls.is_multiple_of(PEER_LOOK) && self.thread.as_ref().is_none_or(|t| t.is_finished()) {
                    bail!("the spin round-trip thread ended without answering hand-off {i}");
                }
            }
            if i == 0 {
                start = Instant::now();
            }
        }
        let elapsed = start.elapsed();
        self.base += 2 * n;
        Ok(elapsed.as_secs_f64() * 1e6 / (n - 1) as f64)
    }
}

/// Polls between two looks at whether the spin peer's thread still lives.
const PEER_LOOK: u32 = 1 << 16;

impl Drop for SpinPeer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Median of `batches` (sorted in place; NaN if there are none).
pub fn median_us(batches: &mut [f64]) -> f64 {
    if batches.is_empty() {
        return f64::NAN;
    }
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

/// Executions timed between two spin round-trip batches.
const EXECUTIONS_PER_BATCH: u64 = 1000;
/// Round trips per interleaved batch (tens of microseconds).
const ROUND_TRIPS_PER_BATCH: u64 = 200;

/// The figures of one bench run.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    /// Timed executions.
    pub iterations: u64,
    /// Untimed executions before them.
    pub warmup: u64,
    /// Latency percentiles (us).
    pub latency_us: Percentiles,
    /// Executions per second over the timed loop.
    pub executions_per_s: f64,
    /// Heap allocations of the executing thread (the runtime's hot path:
    /// bind, stage, doorbell, harvest) during the timed loop / iterations.
    /// Simulator slices the thread runs while it waits (lent to the device)
    /// are the device's work and count only in the process figure.
    pub heap_allocations_per_execute: f64,
    /// Heap allocations of the whole process (including the simulator's
    /// worker threads) during the timed loop / iterations.
    pub process_heap_allocations_per_execute: f64,
    /// Doorbells rung during the timed loop / iterations (runtime counters).
    pub doorbells_per_execute: f64,
    /// Two-thread spin hand-off round trip (us, `--spin` only): the
    /// median of batches taken between blocks of the timed executions, so
    /// it sees the same machine the latencies do.
    pub spin_roundtrip_us: Option<f64>,
    /// Spin round-trip batches behind `spin_roundtrip_us`.
    pub spin_batches: u64,
    /// Device time per execution from the trace's `nc_exec_running` pairs
    /// (none with `--host-only`).
    pub device: Option<crate::bench_device::DeviceStats>,
    /// Host latency of the traced executions (same count as timed ones).
    pub traced_latency_us: Option<Percentiles>,
    /// What the sample clock reads for an empty interval (us, median): the
    /// part of every latency sample that is the measurement itself, not
    /// subtracted from the latencies.
    pub timer_floor_us: f64,
}

impl BenchReport {
    /// The report as the JSON object `--json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        let l = &self.latency_us;
        let mut v = serde_json::json!({
            "iterations": self.iterations,
            "warmup": self.warmup,
            "latency_us": {"p0": l.p0, "p1": l.p1, "p50": l.p50, "p99": l.p99, "p100": l.p100},
            "host_latency_us": {"p0": l.p0, "p1": l.p1, "p50": l.p50, "p99": l.p99, "p100": l.p100},
            "executions_per_s": self.executions_per_s,
            "heap_allocations_per_execute": self.heap_allocations_per_execute,
            "process_heap_allocations_per_execute": self.process_heap_allocations_per_execute,
            "doorbells_per_execute": self.doorbells_per_execute,
            "timer_floor_us": self.timer_floor_us,
        });
        if let (Some(d), Some(t)) = (&self.device, &self.traced_latency_us) {
            v["device_us"] = serde_json::json!({"iterations": d.iterations, "mean": d.mean_us, "min": d.min_us, "max": d.max_us, "std_dev": d.std_dev_us, "p50": d.p50_us, "p99": d.p99_us});
            v["traced_latency_us"] = serde_json::json!({"p0": t.p0, "p1": t.p1, "p50": t.p50, "p99": t.p99, "p100": t.p100});
            v["traced_over_untraced_p50"] = (t.p50 / l.p50).into();
        }
        if let Some(rt) = self.spin_roundtrip_us {
            v["spin_roundtrip_us"] = rt.into();
            v["spin_batches"] = self.spin_batches.into();
            v["p50_over_spin_roundtrip"] = (l.p50 / rt).into();
        }
        v
    }
}

/// Median of what `clock` reads for an empty interval, in microseconds.
fn timer_floor_us(clock: &quanta::Clock) -> f64 {
    let mut empty: Vec<f64> = (0..10_001)
        .map(|_| {
            let t = clock.raw();
            clock.delta(t, clock.raw()).as_secs_f64() * 1e6
        })
        .collect();
    median_us(&mut empty)
}

/// Loads `path` and measures `iterations` synchronous executions after
/// `warmup` untimed ones, on device-resident input and output tensors (the
/// steady state: no host staging).
pub fn measure(path: &Path, iterations: u64, warmup: u64, with_spin: bool, with_device: bool) -> Result<(BenchReport, Loaded)> {
    if iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    let bytes = model_io::neff_bytes(path)?;
    let loaded = Loaded::new(&bytes, path)?;
    let cores: Vec<_> = loaded.host().vcores().iter().flatten().copied().collect();
    let (ins, outs) = crate::bench_async::device_io(&loaded, 0)?;
    // The model handle, held as a libnrt client holds its `nrt_model_t *`:
    // each execute dereferences it, with no lookup by id (dropped before
    // the model is unloaded, which waits for every handle).
    let model = loaded.host().models().get(loaded.id).ok_or_else(|| anyhow!("the loaded model vanished"))?;
    let exec = |what: &str| nrt::exec::execute(&model, &ins, &outs).map_err(|e| anyhow!("{what} execute: {e}"));
    for _ in 0..warmup {
        exec("warm-up")?;
    }
    let doorbells = || -> u64 { cores.iter().filter_map(|c| loaded.host().cores().get(*c)).map(|d| d.doorbells()).sum() };
    let mut samples = nrt::host_memory::with_capacity(iterations, format_args!("samples of {iterations} iterations")).map_err(|e| anyhow!("{}", e.message))?;
    let mut spin = if with_spin { Some(SpinPeer::start()?) } else { None };
    let mut spin_batches = Vec::with_capacity((iterations / EXECUTIONS_PER_BATCH + 2) as usize);
    if let Some(p) = spin.as_mut() {
        spin_batches.push(p.round_trip_us(ROUND_TRIPS_PER_BATCH)?);
    }
    let rung = doorbells();
    let allocs = alloc_count::allocations();
    let thread_allocs = alloc_count::thread_allocations();
    let mut spinning = Duration::ZERO;
    // Samples are read from the TSC (`quanta`'s raw counter, scaled after
    // the read): an empty interval reads ~10 ns here against ~30 ns for
    // two `Instant::now()`, and that floor is in every sample.
    let clock = quanta::Clock::new();
    let start = Instant::now();
    for i in 0..iterations {
        let t = clock.raw();
        exec("timed")?;
        let end = clock.raw();
        samples.push(clock.delta(t, end));
        if let Some(p) = spin.as_mut()
            && (i + 1) % EXECUTIONS_PER_BATCH == 0
            && i + 1 < iterations
        {
            let s = Instant::now();
            spin_batches.push(p.round_trip_us(ROUND_TRIPS_PER_BATCH)?);
            spinning += s.elapsed();
        }
    }
    let total = start.elapsed() - spinning;
    if let Some(p) = spin.as_mut() {
        spin_batches.push(p.round_trip_us(ROUND_TRIPS_PER_BATCH)?);
    }
    drop(spin);
    let thread_allocations = alloc_count::thread_allocations() - thread_allocs;
    let allocations = alloc_count::allocations() - allocs;
    let rung = doorbells() - rung;
    // The device vs host split: the same number of executions again, in a
    // system-trace session on the model's logical core.
    let (device, traced_latency_us) = if with_device {
        let nc = loaded.rt.rt.vnc_of(loaded.device, model.vnc).map_err(|e| anyhow!("{e}"))?;
        let (device, mut traced) = crate::bench_device::measure(nc, loaded.rt.rt.trace_core_map(), iterations, || exec("traced"))?;
        (Some(device), Some(Percentiles::of(&mut traced).ok_or_else(|| anyhow!("no traced samples"))?))
    } else {
        (None, None)
    };
    let latency_us = Percentiles::of(&mut samples).ok_or_else(|| anyhow!("no samples"))?;
    let timer_floor_us = timer_floor_us(&clock);
    let report = BenchReport {
        iterations,
        warmup,
        latency_us,
        executions_per_s: iterations as f64 / total.as_secs_f64(),
        heap_allocations_per_execute: thread_allocations as f64 / iterations as f64,
        process_heap_allocations_per_execute: allocations as f64 / iterations as f64,
        doorbells_per_execute: rung as f64 / iterations as f64,
        spin_roundtrip_us: with_spin.then(|| median_us(&mut spin_batches)),
        spin_batches: spin_batches.len() as u64,
        device,
        traced_latency_us,
        timer_floor_us,
    };
    Ok((report, loaded))
}

/// `nrt bench FILE|DIR`: prints the table, or the JSON object with `json`.
pub fn bench(path: &Path, iterations: u64, warmup: u64, json: bool, with_spin: bool, with_device: bool) -> Result<()> {
    let (r, loaded) = measure(path, iterations, warmup, with_spin, with_device)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r.to_json())?);
    } else {
        let l = &r.latency_us;
        println!("nrt bench {} ({} inputs, {} outputs), simulated device, sync execute", path.display(), loaded.inputs.len(), loaded.outputs.len());
        println!("model on {}", loaded.placement()?);
        println!("iterations {}, warm-up {}", r.iterations, r.warmup);
        println!();
        println!("{:<14} {:>10} {:>10} {:>10} {:>10} {:>10}", "latency (us)", "p0", "p1", "p50", "p99", "p100");
        println!("{:<14} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}", "host", l.p0, l.p1, l.p50, l.p99, l.p100);
        if let Some(t) = &r.traced_latency_us {
            println!("{:<14} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}", "host, traced", t.p0, t.p1, t.p50, t.p99, t.p100);
        }
        println!();
        if let Some(d) = &r.device {
            println!("{:<14} {:>10} {:>10} {:>10} {:>10} {:>10}", "device (us)", "mean", "min", "p50", "max", "std dev");
            println!("{:<14} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}", "", d.mean_us, d.min_us, d.p50_us, d.max_us, d.std_dev_us);
            println!("{:<14} {} device executions from the trace's nc_exec_running pairs", "", d.iterations);
            println!();
        }
        println!("{:<34} {:>12.1}", "executions/s", r.executions_per_s);
        println!("{:<34} {:>12.2}", "heap allocations per execute", r.heap_allocations_per_execute);
        println!("{:<34} {:>12.2}", "  (whole process, with simulator)", r.process_heap_allocations_per_execute);
        println!("{:<34} {:>12.2}", "doorbells per execute", r.doorbells_per_execute);
        if let Some(t) = &r.traced_latency_us {
            println!("{:<34} {:>12.2}", "traced / untraced host p50", t.p50 / l.p50);
        }
        if let Some(rt) = r.spin_roundtrip_us {
            println!("{:<34} {:>12.3}", "spin round trip (us)", rt);
            println!("{:<34} {:>12.1}", "p50 / spin round trip", l.p50 / rt);
        }
        println!("{:<34} {:>12.3}", "timer floor (us, in every sample)", r.timer_floor_us);
    }
    loaded.close()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut s: Vec<Duration> = (1..=100).rev().map(Duration::from_micros).collect();
        let p = Percentiles::of(&mut s).unwrap();
        assert_eq!((p.p0, p.p1, p.p50, p.p99, p.p100), (1.0, 1.0, 50.0, 99.0, 100.0));
        assert_eq!(Percentiles::of(&mut []), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Percentiles are ordered and drawn from the samples.
        #[test]
        fn percentiles_are_ordered_samples(v in proptest::collection::vec(0u64..1_000_000, 1..200)) {
            let mut s: Vec<Duration> = v.iter().map(|n| Duration::from_nanos(*n)).collect();
            let p = Percentiles::of(&mut s).unwrap();
            proptest::prop_assert!(p.p0 <= p.p1 && p.p1 <= p.p50 && p.p50 <= p.p99 && p.p99 <= p.p100);
            let us: Vec<f64> = v.iter().map(|n| *n as f64 / 1000.0).collect();
            for x in [p.p0, p.p1, p.p50, p.p99, p.p100] {
                proptest::prop_assert!(us.iter().any(|u| (u - x).abs() < 1e-9));
            }
        }
    }

    #[test]
    fn one_peer_answers_every_batch_and_exits_on_drop() {
        let mut peer = SpinPeer::start().unwrap();
        let mut batches: Vec<f64> = (0..5).map(|i| peer.round_trip_us(50 + i).unwrap()).collect();
        assert!(batches.iter().all(|us| *us > 0.0 && us.is_finite()), "{batches:?}");
        assert_eq!(peer.base, 2 * (51 + 52 + 53 + 54 + 55));
        assert_eq!(peer.shared.flag.load(Ordering::Acquire), peer.base);
        let m = median_us(&mut batches);
        assert!(batches.contains(&m));
        drop(peer);
    }

    /// A hand-off to a peer whose thread ended is an error, not a spin
    /// for ever.
    #[test]
    fn a_round_trip_to_an_ended_peer_fails() {
        let mut peer = SpinPeer::start().unwrap();
        peer.shared.stop.store(true, Ordering::Release);
        let t = peer.thread.as_ref().unwrap();
        t.thread().unpark();
        while !t.is_finished() {
            std::thread::yield_now();
        }
        let e = peer.round_trip_us(3).unwrap_err().to_string();
        assert!(e.contains("ended without answering hand-off 0"), "{e}");
    }

    #[test]
    fn median_of_nothing_is_nan() {
        assert!(median_us(&mut []).is_nan());
        assert_eq!(median_us(&mut [3.0, 1.0, 2.0]), 2.0);
    }
}
