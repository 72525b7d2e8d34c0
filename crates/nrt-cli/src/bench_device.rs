//! `nrt bench`'s device vs host split, as nrtpy's `benchmark(mode=
//! "device")` measures it: a system-trace session capturing only
//! `nc_exec_running` on the model's logical core, the executions, then
//! one device time per execution ([`nrt::trace::device_durations_ps`],
//! the algorithm Python's benchmark uses too). The same pass times each
//! call on the host, which is what a traced execute costs.

use anyhow::{Result, anyhow};
use nrt::trace::{self, EventType, FetchOptions, TraceConfig, device_durations_ps};
use std::time::Duration;

/// nrtpy's `BenchmarkResult` fields, in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceStats {
    /// Device executions measured (one per execution, after merging
    /// physical cores).
    pub iterations: u64,
    /// Mean device time.
    pub mean_us: f64,
    /// Fastest.
    pub min_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Population standard deviation (divided by n, as nrtpy).
    pub std_dev_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
}

/// Statistics of `durations_ps`; `None` when empty.
pub fn stats(durations_ps: &[u64]) -> Option<DeviceStats> {
    if durations_ps.is_empty() {
        return None;
    }
    let mut us: Vec<f64> = durations_ps.iter().map(|p| *p as f64 / 1e6).collect();
    let n = us.len() as f64;
    let mean = us.iter().sum::<f64>() / n;
    let var = us.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    us.sort_by(f64::total_cmp);
    // Summing can round the mean of equal samples past them.
    let mean = mean.clamp(us[0], us[us.len() - 1]);
    let rank = |p: f64| us[(((p / 100.0) * n).ceil() as usize).clamp(1, us.len()) - 1];
    Some(DeviceStats { iterations: us.len() as u64, mean_us: mean, min_us: us[0], max_us: us[us.len() - 1], std_dev_us: var.sqrt(), p50_us: rank(50.0), p99_us: rank(99.0) })
}

/// Runs `exec` `iterations` times inside a session capturing
/// `nc_exec_running` on logical core `nc`; returns the device statistics
/// and each call's host time.
pub fn measure(nc: u32, cores: trace::CoreMap, iterations: u64, mut exec: impl FnMut() -> Result<()>) -> Result<(DeviceStats, Vec<Duration>)> {
    let mut cfg = TraceConfig { types: EventType::NcExecRunning.bit(), max_events_per_nc: 2 * 4 * iterations.max(1), ..Default::default() };
    cfg.only_cores = Some([nc].into_iter().collect());
    trace::start(&cfg, cores).map_err(|e| anyhow!("starting the system trace: {e}"))?;
    let clock = quanta::Clock::new();
    let mut host = nrt::host_memory::with_capacity(iterations, format_args!("host times of {iterations} iterations")).map_err(|e| anyhow!("{}", e.message))?;
    let run = (|| {
        for _ in 0..iterations {
            let t = clock.raw();
            exec()?;
            host.push(clock.delta(t, clock.raw()));
        }
        let (events, lost) = trace::take(&FetchOptions { nc_idx: Some(nc), ..Default::default() }).map_err(|e| anyhow!("fetching the trace: {e}"))?;
        if !lost.is_empty() {
            return Err(anyhow!("the trace ring overwrote {lost:?} events"));
        }
        Ok(events)
    })();
    trace::stop();
    let events = run?;
    let stats = stats(&device_durations_ps(&events)).ok_or_else(|| anyhow!("no device execution events (nc_exec_running) were captured"))?;
    Ok((stats, host))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_nrtpys() {
        let s = stats(&[3_000_000, 1_000_000]).unwrap();
        assert_eq!((s.iterations, s.min_us, s.max_us, s.mean_us, s.std_dev_us), (2, 1.0, 3.0, 2.0, 1.0));
        assert_eq!(stats(&[]), None);
    }
}
