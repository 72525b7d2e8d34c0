//! `nrt bench --mode async --depth N`: throughput of the explicit async
//! path. Executions are scheduled on the model's compute execution unit
//! with `depth` of them kept queued; the unit's completion watcher stamps
//! every completion, and the report gives executions per second and the
//! mean gap between consecutive completions (libnrt's implicit-async gap
//! is ~13 us, users-and-tools §2.7).

use crate::model_io::{self, Loaded};
use anyhow::{Result, anyhow, bail};
use nrt::NrtStatus;
use nrt::tensor::{Tensor, TensorSet};
use nrt::xu::seq::XuKind;
use nrt::xu::{XuSettings, Xus};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The figures of one async bench run.
#[derive(Clone, Debug, PartialEq)]
pub struct AsyncReport {
    /// Timed executions.
    pub iterations: u64,
    /// Untimed executions before them.
    pub warmup: u64,
    /// Requests kept queued.
    pub depth: u64,
    /// Executions per second, first schedule to last completion.
    pub executions_per_s: f64,
    /// Mean gap between consecutive completions (us).
    pub gap_us: f64,
    /// Median gap between consecutive completions (us).
    pub gap_p50_us: f64,
    /// 90th and 99th percentile gaps (us): how far the tail pulls the mean.
    pub gap_p90_us: f64,
    /// See `gap_p90_us`.
    pub gap_p99_us: f64,
    /// Executions that did not end in NRT_SUCCESS.
    pub failures: u64,
}

impl AsyncReport {
    /// The report as the JSON object `--json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": "async",
            "iterations": self.iterations,
            "warmup": self.warmup,
            "depth": self.depth,
            "executions_per_s": self.executions_per_s,
            "gap_us": self.gap_us,
            "gap_p50_us": self.gap_p50_us,
            "gap_p90_us": self.gap_p90_us,
            "gap_p99_us": self.gap_p99_us,
            "failures": self.failures,
        })
    }
}

/// Device-resident inputs (generated data) and outputs on the first
/// core of logical core `vnc` (the steady state both bench modes measure).
pub(crate) fn device_io(loaded: &Loaded, vnc: u32) -> Result<(TensorSet, TensorSet)> {
    let core = *loaded.host().vcores().get(vnc as usize).and_then(|v| v.first()).ok_or_else(|| anyhow!("logical core {vnc} has no core"))?;
    let memory = loaded.host().memory().clone();
    let data = model_io::input_bytes(&loaded.inputs, &[])?;
    let mut ins = TensorSet::new();
    for (sig, d) in loaded.inputs.iter().zip(&data) {
        let t = Tensor::allocate_device(&memory, core, d.len() as u64, &sig.name).map_err(|e| anyhow!("input {:?}: {e}", sig.name))?;
        t.write(0, d).map_err(|e| anyhow!("input {:?}: {e}", sig.name))?;
        ins.add(&sig.name, Arc::new(t));
    }
    let mut outs = TensorSet::new();
    for sig in &loaded.outputs {
        let size = model_io::size_of(sig)? as u64;
        let t = Tensor::allocate_device(&memory, core, size, &sig.name).map_err(|e| anyhow!("output {:?}: {e}", sig.name))?;
        outs.add(&sig.name, Arc::new(t));
    }
    Ok((ins, outs))
}

/// Warm-up of an async run when none is given: at least this long...
pub const DEFAULT_WARMUP_TIME: Duration = Duration::from_millis(100);
/// ...and at least this many executions. The first ~100 ms after the
/// execution unit's worker starts run slower (README), and a figure that
/// includes them says little about the steady state.
pub const DEFAULT_WARMUP_MIN: u64 = 50;
/// Timed executions when none are given: at least this many...
pub const DEFAULT_ITERATIONS_MIN: u64 = 1000;
/// ...and about this long at the rate the warm-up ran.
pub const DEFAULT_TIMED: Duration = Duration::from_millis(200);

/// Runs a warm-up, then the timed executions, of the model at `path` with
/// `depth` queued. `warmup` and `iterations` default to the time-based
/// amounts above (`None`); the report gives the counts that ran.
pub fn measure(path: &Path, iterations: Option<u64>, warmup: Option<u64>, depth: u64) -> Result<(AsyncReport, Loaded)> {
    if iterations.is_some_and(|n| n < 2) {
        bail!("--iterations must be at least 2 in async mode (a gap needs two completions)");
    }
    if !(1..=nrt::xu::queue::MAX_CAPACITY).contains(&depth) {
        bail!("--depth must be between 1 and {}", nrt::xu::queue::MAX_CAPACITY);
    }
    let bytes = model_io::neff_bytes(path)?;
    let loaded = Loaded::new(&bytes, path)?;
    let model = loaded.host().models().get(loaded.id).ok_or_else(|| anyhow!("the loaded model vanished"))?;
    let vnc = model.vnc;
    let (ins, outs) = device_io(&loaded, vnc)?;
    let xus = Xus::new(XuSettings { compute_depth: depth, other_depth: depth, ..XuSettings::default() });
    let guess = warmup.unwrap_or(DEFAULT_WARMUP_MIN) + iterations.unwrap_or(DEFAULT_ITERATIONS_MIN);
    let stamps = Arc::new(Mutex::new(nrt::host_memory::with_capacity(guess, format_args!("completion times of {guess} executions")).map_err(|e| anyhow!("{}", e.message))?));
    let failures = Arc::new(AtomicU64::new(0));
    {
        let (stamps, failures) = (stamps.clone(), failures.clone());
        xus.watch_unit(vnc, XuKind::Compute, 0, Arc::new(move |_, st| {
            stamps.lock().unwrap_or_else(|e| e.into_inner()).push(Instant::now());
            if st != NrtStatus::Success {
                failures.fetch_add(1, Ordering::Relaxed);
            }
        }))
        .map_err(|e| anyhow!("{e}"))?;
    }
    let mut q = Pump { xus: &xus, vnc, model: &model, ins: &ins, outs: &outs, depth, outstanding: std::collections::VecDeque::with_capacity(depth as usize), issued: 0 };
    let t0 = Instant::now();
    q.run_until(|issued| match warmup {
        Some(n) => issued >= n,
        None => issued >= DEFAULT_WARMUP_MIN && t0.elapsed() >= DEFAULT_WARMUP_TIME,
    })?;
    let warmup = q.issued;
    let iterations = iterations.unwrap_or_else(|| {
        let rate = warmup as f64 / t0.elapsed().as_secs_f64().max(1e-9);
        ((rate * DEFAULT_TIMED.as_secs_f64()) as u64).clamp(DEFAULT_ITERATIONS_MIN, 50_000_000)
    });
    let total = warmup + iterations;
    {
        // Nothing is in flight here: the worker pushes no stamp meanwhile.
        let mut v = stamps.lock().unwrap_or_else(|e| e.into_inner());
        let more = (total as usize).saturating_sub(v.len());
        v.try_reserve_exact(more).map_err(|_| anyhow!("completion times of {total} executions: the allocator refused {} bytes", total.saturating_mul(size_of::<Instant>() as u64)))?;
    }
    let start = Instant::now();
    q.run_until(|issued| issued >= total)?;
    let elapsed = start.elapsed();
    let stamps = stamps.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let timed = stamps.get(warmup as usize..).unwrap_or(&[]);
    let mut gaps: Vec<f64> = timed.windows(2).map(|w| w[1].duration_since(w[0]).as_secs_f64() * 1e6).collect();
    let gap_us = match (timed.first(), timed.last()) {
        (Some(a), Some(b)) if timed.len() > 1 => b.duration_since(*a).as_secs_f64() * 1e6 / (timed.len() - 1) as f64,
        _ => 0.0,
    };
    gaps.sort_by(f64::total_cmp);
    let pct = |p: usize| gaps.get((gaps.len() * p / 100).min(gaps.len().saturating_sub(1))).copied().unwrap_or(0.0);
    let (gap_p50_us, gap_p90_us, gap_p99_us) = (pct(50), pct(90), pct(99));
    drop(xus);
    let report = AsyncReport {
        iterations,
        warmup,
        depth,
        executions_per_s: iterations as f64 / elapsed.as_secs_f64(),
        gap_us,
        gap_p50_us,
        gap_p90_us,
        gap_p99_us,
        failures: failures.load(Ordering::Relaxed),
    };
    Ok((report, loaded))
}

/// Keeps `depth` executions of one model queued on its compute unit.
struct Pump<'a> {
    xus: &'a Xus,
    vnc: u32,
    model: &'a Arc<nrt::model::LoadedModel>,
    ins: &'a TensorSet,
    outs: &'a TensorSet,
    depth: u64,
    outstanding: std::collections::VecDeque<u64>,
    issued: u64,
}

impl Pump<'_> {
    /// Schedules until `done(issued)` holds, then waits for everything
    /// scheduled to complete (so a timed phase starts with an idle unit).
    fn run_until(&mut self, mut done: impl FnMut(u64) -> bool) -> Result<()> {
        loop {
            let more = !done(self.issued);
            if !more && self.outstanding.is_empty() {
                return Ok(());
            }
            if more && (self.outstanding.len() as u64) < self.depth {
                match self.xus.schedule_execute(self.vnc, self.model.clone(), self.ins.clone(), self.outs.clone(), 0, None) {
                    Ok(seq) => {
                        self.outstanding.push_back(seq);
                        self.issued += 1;
                        continue;
                    }
                    Err(e) if e.status == NrtStatus::QueueFull => {}
                    Err(e) => bail!("schedule: {e}"),
                }
            }
            // Queue full (or draining): sleep until half of it has
            // completed, then refill (one wake-up per depth/2 executions
            // keeps the submitting thread off the CPU the worker and the
            // device need).
            let batch = (self.outstanding.len() / 2).max(1);
            if let Some(&target) = self.outstanding.get(batch - 1) {
                if !self.xus.wait(target, Duration::from_secs(600)).map_err(|e| anyhow!("{e}"))? {
                    bail!("execution {target:#x} did not complete in 600 s");
                }
                while let Some(&s) = self.outstanding.front() {
                    if !self.xus.is_completed(s).map_err(|e| anyhow!("{e}"))? {
                        break;
                    }
                    self.outstanding.pop_front();
                }
            }
        }
    }
}

/// `nrt bench --mode async`: prints the table, or the JSON object.
pub fn bench(path: &Path, iterations: Option<u64>, warmup: Option<u64>, depth: u64, json: bool) -> Result<()> {
    let (r, loaded) = measure(path, iterations, warmup, depth)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r.to_json())?);
    } else {
        println!("nrt bench {} ({} inputs, {} outputs), simulated device, async execute", path.display(), loaded.inputs.len(), loaded.outputs.len());
        println!("iterations {}, warm-up {}, depth {}", r.iterations, r.warmup, r.depth);
        println!();
        println!("{:<34} {:>12.1}", "executions/s", r.executions_per_s);
        println!("{:<34} {:>12.3}", "mean gap between completions (us)", r.gap_us);
        println!("{:<34} {:>12.3}", "median gap (us)", r.gap_p50_us);
        println!("{:<34} {:>12.3}", "p90 gap (us)", r.gap_p90_us);
        println!("{:<34} {:>12.3}", "p99 gap (us)", r.gap_p99_us);
        println!("{:<34} {:>12}", "failed executions", r.failures);
    }
    if r.failures > 0 {
        bail!("{} of {} executions failed", r.failures, r.iterations + r.warmup);
    }
    loaded.close()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_bench_of_the_copy_example_reports_rate_and_gap() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/copy");
        let (r, loaded) = measure(&dir, Some(40), Some(4), 8).unwrap();
        assert_eq!((r.iterations, r.warmup, r.depth, r.failures), (40, 4, 8, 0));
        assert!(r.executions_per_s > 0.0 && r.gap_us > 0.0 && r.gap_p50_us >= 0.0);
        let j = r.to_json();
        assert!(j["executions_per_s"].as_f64().is_some() && j["gap_us"].as_f64().is_some());
        loaded.close().unwrap();
        assert!(measure(&dir, Some(1), Some(0), 8).is_err());
        // Without counts: a warm-up of at least 100 ms and 50 executions,
        // then at least 1000 timed ones.
        let t = Instant::now();
        let (r, loaded) = measure(&dir, None, None, 8).unwrap();
        assert!(t.elapsed() >= DEFAULT_WARMUP_TIME);
        assert!(r.warmup >= DEFAULT_WARMUP_MIN && r.iterations >= DEFAULT_ITERATIONS_MIN, "{r:?}");
        assert_eq!(r.failures, 0);
        loaded.close().unwrap();
        assert!(measure(&dir, Some(10), Some(0), 64).is_err());
    }
}
