//! Device time per execution from a system trace: nrtpy's device-mode
//! benchmark algorithm, in one place for every tool (`nrt bench`,
//! Python's `benchmark(mode="device")`).
//!
//! Each physical core of an execution records an `nc_exec_running`
//! start/stop pair (matched on `tracking_id`) stamped with the device
//! clock. A logical core of several physical cores (LNC 2) records one
//! pair per physical core for the same execution, so the pairs are merged
//! by `exec_id`: latest stop minus earliest start. One duration per
//! execution, in execution order.

use super::{Event, EventType, Phase};
use std::collections::BTreeMap;

/// Device time of each execution in `events`, in picoseconds, in
/// execution order. Pairs without both ends are dropped.
pub fn device_durations_ps(events: &[Event]) -> Vec<u64> {
    // tracking_id -> (exec_id, start, stop)
    let mut pairs: BTreeMap<u64, (u64, Option<u64>, Option<u64>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e.ty == EventType::NcExecRunning) {
        let (Some(ts), Some(exec)) = (e.data.nc_timestamp_ps, e.data.exec_id) else { continue };
        let p = pairs.entry(e.tracking_id).or_insert((exec, None, None));
        match e.phase {
            Phase::Start => p.1 = Some(ts),
            Phase::Stop => p.2 = Some(ts),
            Phase::Instant => {}
        }
    }
    let mut by_exec: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for (exec, s, e) in pairs.into_values() {
        let (Some(s), Some(e)) = (s, e) else { continue };
        let span = by_exec.entry(exec).or_insert((u64::MAX, 0));
        span.0 = span.0.min(s);
        span.1 = span.1.max(e);
    }
    by_exec.into_values().map(|(s, e)| e.saturating_sub(s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::EventData;

    fn ev(id: u64, exec: u64, phase: Phase, ps: u64) -> Event {
        Event { ty: EventType::NcExecRunning, phase, tracking_id: id, nc_idx: 0, timestamp_ns: 0, data: EventData { nc_timestamp_ps: Some(ps), exec_id: Some(exec), ..Default::default() } }
    }

    #[test]
    fn pairs_merge_per_execution() {
        // Execution 1 on two physical cores (LNC 2), execution 2 on one.
        let events = [
            ev(10, 1, Phase::Start, 1_000_000),
            ev(11, 1, Phase::Start, 1_500_000),
            ev(10, 1, Phase::Stop, 3_000_000),
            ev(11, 1, Phase::Stop, 4_000_000),
            ev(12, 2, Phase::Start, 5_000_000),
            ev(12, 2, Phase::Stop, 6_000_000),
            ev(13, 3, Phase::Start, 7_000_000), // no stop: dropped
        ];
        assert_eq!(device_durations_ps(&events), vec![3_000_000, 1_000_000]);
        assert!(device_durations_ps(&[]).is_empty());
    }
}
