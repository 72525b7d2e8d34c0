//! One captured event and its JSON form (the object users parse out of
//! `nrt_sys_trace_fetch_events`' `{"events": [...]}`).

use super::types::EventType;
use std::fmt::Write as _;

/// Start, stop, or a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Opens a pair (same `tracking_id` as its stop).
    Start,
    /// Closes a pair.
    Stop,
    /// A single point (errors, notifications, model switches).
    Instant,
}

impl Phase {
    /// The JSON spelling.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::Stop => "stop",
            Phase::Instant => "instant",
        }
    }
}

/// Per-type payload (`data` in the JSON); fields left `None` are omitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventData {
    /// Device timestamp in picoseconds (hardware events): written as
    /// `nc_timestamp_ns` (truncated) and `nc_timestamp_ps` (exact).
    pub nc_timestamp_ps: Option<u64>,
    /// The execution this event belongs to (one id per execute call).
    pub exec_id: Option<u64>,
    /// Physical core index on the device.
    pub device_core_idx: Option<u32>,
    /// Device index.
    pub device_idx: Option<u32>,
    /// Model id.
    pub model_id: Option<u32>,
    /// Bytes moved or allocated.
    pub size: Option<u64>,
    /// `nrta_seq_t` of the asynchronous request.
    pub seq_id: Option<u64>,
    /// NRT_STATUS the operation ended with (stop events).
    pub status: Option<i32>,
    /// Engine index (PE 0, ACT 1, POOL 2, DVE 3, SP 4) of a record.
    pub engine: Option<u8>,
    /// Program counter field of a record.
    pub pc: Option<u32>,
    /// Record detail: custom sub-id of a notification, error detail.
    pub detail: Option<u32>,
}

/// One event in a core's ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub ty: EventType,
    /// Start, stop or instant.
    pub phase: Phase,
    /// Pairs a start with its stop (unique per pair in the process).
    pub tracking_id: u64,
    /// Process-local logical core.
    pub nc_idx: u32,
    /// Host clock (ns since the Unix epoch). For hardware events: the host
    /// time of the execution's doorbell plus the device time elapsed since
    /// the execution's first START record.
    pub timestamp_ns: u64,
    /// Payload.
    pub data: EventData,
}

impl Event {
    /// Appends the event as one JSON object. `pid` and `rank_id` are the
    /// process's (every event carries them).
    pub fn write_json(&self, out: &mut String, pid: u32, rank_id: u32) {
        let _ = write!(
            out,
            "{{\"event_type\":\"{}\",\"phase\":\"{}\",\"tracking_id\":{},\"nc_idx\":{},\"timestamp_ns\":{},\"rank_id\":{rank_id},\"pid\":{pid},\"data\":{{",
            self.ty.name(),
            self.phase.name(),
            self.tracking_id,
            self.nc_idx,
            self.timestamp_ns
        );
        let d = &self.data;
        let mut first = true;
        let mut field = |out: &mut String, key: &str, v: Option<u64>| {
            if let Some(v) = v {
                if !first {
                    out.push(',');
                }
                first = false;
                let _ = write!(out, "\"{key}\":{v}");
            }
        };
        field(out, "nc_timestamp_ns", d.nc_timestamp_ps.map(|p| p / 1000));
        field(out, "nc_timestamp_ps", d.nc_timestamp_ps);
        field(out, "exec_id", d.exec_id);
        field(out, "device_core_idx", d.device_core_idx.map(u64::from));
        field(out, "device_idx", d.device_idx.map(u64::from));
        field(out, "model_id", d.model_id.map(u64::from));
        field(out, "size", d.size);
        field(out, "seq_id", d.seq_id);
        field(out, "engine", d.engine.map(u64::from));
        field(out, "pc", d.pc.map(u64::from));
        field(out, "detail", d.detail.map(u64::from));
        if let Some(s) = d.status {
            if !first {
                out.push(',');
            }
            let _ = write!(out, "\"status\":{s}");
        }
        out.push_str("}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_carries_the_fields_users_parse() {
        let e = Event {
            ty: EventType::NcExecRunning,
            phase: Phase::Stop,
            tracking_id: 7,
            nc_idx: 1,
            timestamp_ns: 99,
            data: EventData { nc_timestamp_ps: Some(12_345), exec_id: Some(3), device_core_idx: Some(2), status: Some(0), ..Default::default() },
        };
        let mut s = String::new();
        e.write_json(&mut s, 42, 0);
        assert_eq!(
            s,
            "{\"event_type\":\"nc_exec_running\",\"phase\":\"stop\",\"tracking_id\":7,\"nc_idx\":1,\"timestamp_ns\":99,\"rank_id\":0,\"pid\":42,\"data\":{\"nc_timestamp_ns\":12,\"nc_timestamp_ps\":12345,\"exec_id\":3,\"device_core_idx\":2,\"status\":0}}"
        );
        let mut s = String::new();
        Event { data: EventData::default(), ..e }.write_json(&mut s, 1, 0);
        assert!(s.ends_with("\"data\":{}}"), "{s}");
    }
}
