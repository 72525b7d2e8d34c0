//! System-trace events as a Chrome trace-event JSON document (opens in
//! Perfetto and chrome://tracing): one process per logical core
//! (`NC n`), a `host` thread for software events and a `device` thread
//! per physical core for hardware events; pairs become `B`/`E` slices,
//! instants `i` events; times in microseconds on the host clock.

use super::event::{Event, Phase};
use super::types::Group;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Thread id of the host events of a core.
pub const HOST_TID: u64 = 0;

fn tid(e: &Event) -> u64 {
    match e.ty.group() {
        Group::Software => HOST_TID,
        Group::Hardware => 1 + u64::from(e.data.device_core_idx.unwrap_or(0)),
    }
}

/// The document.
pub fn chrome_json(events: &[Event]) -> String {
    let mut s = String::with_capacity(64 + events.len() * 160);
    s.push_str("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"nrt-rs system trace\"},\"traceEvents\":[");
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push(',');
        }
        first = false;
    };
    let mut threads = BTreeSet::new();
    for e in events {
        threads.insert((e.nc_idx, tid(e)));
    }
    let mut procs = BTreeSet::new();
    for &(nc, t) in &threads {
        if procs.insert(nc) {
            sep(&mut s);
            let _ = write!(s, "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{nc},\"args\":{{\"name\":\"NC {nc}\"}}}}");
        }
        let name = if t == HOST_TID { "host".to_string() } else { format!("device core {}", t - 1) };
        sep(&mut s);
        let _ = write!(s, "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{nc},\"tid\":{t},\"args\":{{\"name\":\"{name}\"}}}}");
    }
    for e in events {
        let ph = match e.phase {
            Phase::Start => "B",
            Phase::Stop => "E",
            Phase::Instant => "i",
        };
        sep(&mut s);
        let ts = e.timestamp_ns as f64 / 1000.0;
        let _ = write!(s, "{{\"ph\":\"{ph}\",\"name\":\"{}\",\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{ts:.3}", e.ty.name(), if e.ty.group() == Group::Hardware { "hardware" } else { "software" }, e.nc_idx, tid(e));
        if e.phase == Phase::Instant {
            s.push_str(",\"s\":\"t\"");
        }
        // The event's own JSON object carries every field as args.
        s.push_str(",\"args\":");
        e.write_json(&mut s, std::process::id(), 0);
        s.push('}');
    }
    s.push_str("]}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{EventData, EventType};

    #[test]
    fn pairs_become_slices_on_their_core() {
        let e = Event { ty: EventType::NrtExecute, phase: Phase::Start, tracking_id: 1, nc_idx: 2, timestamp_ns: 1500, data: EventData::default() };
        let j = chrome_json(&[e, Event { phase: Phase::Stop, timestamp_ns: 2500, ..e }]);
        assert!(j.contains("\"ph\":\"B\",\"name\":\"nrt_execute\",\"cat\":\"software\",\"pid\":2,\"tid\":0,\"ts\":1.500"), "{j}");
        assert!(j.contains("\"ph\":\"E\"") && j.contains("\"name\":\"NC 2\""), "{j}");
    }
}
