//! System trace: the runtime's event capture behind `nrt_sys_trace.h`
//! (and the Python module's `SystemTraceSession`).
//!
//! A session ([`start`] .. [`stop`]) captures events into one ring per
//! logical core of the configured capacity; the oldest events are
//! overwritten and counted. [`fetch`] hands them out once, as the JSON
//! users parse (`{"events": [...]}`, see [`event::Event::write_json`] and
//! docs/trace-formats.md).
//!
//! - Hardware-group events come from what the device wrote: the harvest
//!   keeps, for an observed execution, each physical core's first START
//!   and last END record timestamps and its notable records
//!   ([`hw::HwObservation`]); the execute path turns them into
//!   `nc_exec_running` pairs (one per physical core), `nrt_model_switch`,
//!   `cc_running`, `numerical_err` and `hw_notify`.
//! - Software events come from the runtime's own hooks: load, unload,
//!   execute, tensor reads / writes / allocations / frees, async submits
//!   and waits.
//!
//! Off by default: each hook tests one relaxed atomic load ([`wants`])
//! and does nothing else, so the untraced execute path is unchanged and
//! allocation-free.

pub mod chrome;
pub mod device_time;
pub mod event;
pub mod hw;
pub mod options;
pub mod session;
pub mod types;

pub use device_time::device_durations_ps;
pub use event::{Event, EventData, Phase};
pub use options::{DEFAULT_MAX_EVENTS_PER_NC, FetchOptions, TraceConfig};
pub use session::{CoreMap, events_json, fetch, take, is_active, nc_of, next_exec_id, next_tracking_id, now_ns, record, record_instant, record_span, start, stop, wants, wants_any, wants_group, HARDWARE_MASK};
pub use types::{EventType, Group};

thread_local! {
    /// The `nrta_seq_t` of the request this thread is running (an
    /// execution unit's worker sets it around each request while tracing),
    /// 0 outside one. Const-initialised: reading it never allocates.
    static CURRENT_SEQ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Marks the calling thread as running request `seq` (0: none).
pub fn set_current_seq(seq: u64) {
    let _ = CURRENT_SEQ.try_with(|c| c.set(seq));
}

/// The request the calling thread runs, if it is an execution unit's
/// worker inside one.
pub fn current_seq() -> Option<u64> {
    CURRENT_SEQ.try_with(|c| c.get()).ok().filter(|s| *s != 0)
}
