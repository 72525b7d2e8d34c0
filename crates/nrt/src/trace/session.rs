//! The process's system-trace session: per-core event rings of the
//! configured capacity (oldest overwritten, counted), the enable masks the
//! runtime's hooks test, and fetch (events returned once).
//!
//! There is one session per process, as in libnrt (the C API and the
//! Python module share it). While no session runs, the enabled-type mask
//! is 0 and every hook costs one relaxed atomic load.

use super::event::{Event, Phase};
use super::options::{FetchOptions, TraceConfig};
use super::types::{EventType, Group};
use crate::status::{NrtError, NrtResult};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// One logical core's events.
#[derive(Debug, Default)]
struct Ring {
    events: VecDeque<Event>,
    /// Events overwritten before they were fetched.
    overwritten: u64,
}

/// A running session.
#[derive(Debug)]
struct Session {
    config: TraceConfig,
    /// Ring capacity (events).
    capacity: usize,
    /// Rings by logical core, made on a core's first event (a disabled
    /// core never gets one).
    rings: BTreeMap<u32, Ring>,
    /// (device index, physical core) -> logical core.
    cores: HashMap<(u32, u32), u32>,
}

/// Where each physical core sits: (device index, physical core, logical
/// core) triples, as the runtime's topology lays them out.
pub type CoreMap = Vec<(u32, u32, u32)>;

/// The process-wide session state.
struct SysTrace {
    /// Enabled event types; 0 while no session runs.
    types: AtomicU32,
    session: Mutex<Option<Session>>,
}

static TRACE: SysTrace = SysTrace { types: AtomicU32::new(0), session: Mutex::new(None) };
static NEXT_TRACKING_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_EXEC_ID: AtomicU64 = AtomicU64::new(1);

fn session() -> std::sync::MutexGuard<'static, Option<Session>> {
    TRACE.session.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether events of type `ty` are being captured (one relaxed load: the
/// whole cost of a hook while tracing is off).
#[inline]
pub fn wants(ty: EventType) -> bool {
    TRACE.types.load(Ordering::Relaxed) & ty.bit() != 0
}

/// Whether any event type of `mask` ([`EventType::bit`]s) is being captured.
#[inline]
pub fn wants_any(mask: u32) -> bool {
    TRACE.types.load(Ordering::Relaxed) & mask != 0
}

/// Whether any event type of `group` is being captured.
#[inline]
pub fn wants_group(group: Group) -> bool {
    let mask = match group {
        Group::Hardware => HARDWARE_MASK,
        Group::Software => !HARDWARE_MASK,
    };
    TRACE.types.load(Ordering::Relaxed) & mask != 0
}

/// The hardware group's mask.
pub const HARDWARE_MASK: u32 = EventType::NcExecRunning.bit()
    | EventType::CcRunning.bit()
    | EventType::NrtModelSwitch.bit()
    | EventType::NumericalErr.bit()
    | EventType::HwNotify.bit();

/// Whether a session is running.
pub fn is_active() -> bool {
    session().is_some()
}

/// Host clock: nanoseconds since the Unix epoch.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// A fresh tracking id (pairs one start with its stop).
pub fn next_tracking_id() -> u64 {
    NEXT_TRACKING_ID.fetch_add(1, Ordering::Relaxed)
}

/// A fresh execution id.
pub fn next_exec_id() -> u64 {
    NEXT_EXEC_ID.fetch_add(1, Ordering::Relaxed)
}

/// Starts the session with a copy of `config`; `cores` maps physical
/// cores to logical ones (an unmapped core counts as its own index).
/// NRT_INVALID while a session runs.
pub fn start(config: &TraceConfig, cores: CoreMap) -> NrtResult<()> {
    let mut s = session();
    if s.is_some() {
        return Err(NrtError::invalid("a system trace session is already running; stop it (nrt_sys_trace_stop) before starting another"));
    }
    let capacity = usize::try_from(config.max_events_per_nc.max(1)).unwrap_or(usize::MAX);
    *s = Some(Session {
        config: config.clone(),
        capacity,
        rings: BTreeMap::new(),
        cores: cores.into_iter().map(|(d, p, nc)| ((d, p), nc)).collect(),
    });
    TRACE.types.store(config.types, Ordering::Release);
    Ok(())
}

/// Stops the session and frees its rings (and whatever they still held).
/// Stopping when nothing runs does nothing.
pub fn stop() {
    let mut s = session();
    TRACE.types.store(0, Ordering::Release);
    *s = None;
}

/// The logical core of physical core `core` of device `device` in the
/// running session (the core's own index when unmapped or none runs).
pub fn nc_of(device: u32, core: u32) -> u32 {
    session().as_ref().and_then(|s| s.cores.get(&(device, core)).copied()).unwrap_or(core)
}

/// Records `events` (already filtered by type by the caller's
/// [`wants`]), each into its core's ring: a disabled core's are dropped,
/// a full ring overwrites its oldest.
pub fn record(events: &[Event]) {
    let mut guard = session();
    let Some(s) = guard.as_mut() else { return };
    for e in events {
        if s.config.types & e.ty.bit() == 0 || !s.config.core_enabled(e.nc_idx) {
            continue;
        }
        let cap = s.capacity;
        let ring = s.rings.entry(e.nc_idx).or_default();
        if ring.events.len() >= cap {
            ring.events.pop_front();
            ring.overwritten += 1;
        }
        ring.events.push_back(*e);
    }
}

/// Records a start/stop pair of a software event on logical core `nc`.
pub fn record_span(ty: EventType, nc: u32, start_ns: u64, data: super::event::EventData) {
    if !wants(ty) {
        return;
    }
    let id = next_tracking_id();
    let start = Event { ty, phase: Phase::Start, tracking_id: id, nc_idx: nc, timestamp_ns: start_ns, data: Default::default() };
    let stop = Event { phase: Phase::Stop, timestamp_ns: now_ns(), data, ..start };
    let start = Event { data: super::event::EventData { exec_id: data.exec_id, model_id: data.model_id, seq_id: data.seq_id, ..Default::default() }, ..start };
    record(&[start, stop]);
}

/// Records one instant event on logical core `nc`.
pub fn record_instant(ty: EventType, nc: u32, data: super::event::EventData) {
    if !wants(ty) {
        return;
    }
    record(&[Event { ty, phase: Phase::Instant, tracking_id: next_tracking_id(), nc_idx: nc, timestamp_ns: now_ns(), data }]);
}

/// Per logical core, events its ring overwrote: (nc_idx, count).
pub type Overwritten = Vec<(u32, u64)>;

/// Takes the captured events (each is returned once): per core in
/// capture order, cores ascending, and how many each core's ring
/// overwrote since the last take. NRT_INVALID when no session runs.
pub fn take(options: &FetchOptions) -> NrtResult<(Vec<Event>, Overwritten)> {
    let mut guard = session();
    let s = guard.as_mut().ok_or_else(|| NrtError::invalid("no system trace session is running: call nrt_sys_trace_start before fetching events"))?;
    let mut events = Vec::new();
    let mut lost = Vec::new();
    for (&nc, ring) in s.rings.iter_mut() {
        if options.nc_idx.is_some_and(|want| want != nc) {
            continue;
        }
        let n = if options.max_events_per_nc == 0 { ring.events.len() } else { ring.events.len().min(usize::try_from(options.max_events_per_nc).unwrap_or(usize::MAX)) };
        events.extend(ring.events.drain(..n));
        if ring.overwritten > 0 {
            lost.push((nc, std::mem::take(&mut ring.overwritten)));
        }
    }
    Ok((events, lost))
}

/// The fetched-events document users parse: `{"events": [...],
/// "overwritten_events": [{"nc_idx", "count"}]}`.
pub fn events_json(events: &[Event], lost: &[(u32, u64)]) -> String {
    let pid = std::process::id();
    let mut out = String::with_capacity(32 + events.len() * 200);
    out.push_str("{\"events\":[");
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        e.write_json(&mut out, pid, 0);
    }
    out.push_str("],\"overwritten_events\":[");
    for (i, (nc, n)) in lost.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("{{\"nc_idx\":{nc},\"count\":{n}}}"));
    }
    out.push_str("]}");
    out
}

/// [`take`] as [`events_json`]: what `nrt_sys_trace_fetch_events` returns.
pub fn fetch(options: &FetchOptions) -> NrtResult<String> {
    let (events, lost) = take(options)?;
    Ok(events_json(&events, &lost))
}

/// Serialises tests that start the process-wide session.
#[doc(hidden)]
pub static TEST_LOCK: Mutex<()> = Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::EventData;

    fn ev(nc: u32, id: u64) -> Event {
        // A type no other unit test of this process produces (they run
        // concurrently and share the session).
        Event { ty: EventType::CcRunning, phase: Phase::Instant, tracking_id: id, nc_idx: nc, timestamp_ns: id, data: EventData::default() }
    }

    #[test]
    fn rings_overwrite_the_oldest_and_fetch_consumes() {
        let _g = TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        stop();
        assert!(fetch(&FetchOptions::default()).is_err(), "fetch before start");
        let mut c = TraceConfig { max_events_per_nc: 3, types: EventType::CcRunning.bit(), ..Default::default() };
        c.set_core(2, false);
        start(&c, Vec::new()).unwrap();
        assert!(start(&c, Vec::new()).is_err(), "a second start is refused");
        assert!(wants(EventType::CcRunning) && !wants(EventType::NrtExecute) && wants_group(Group::Hardware) && !wants_group(Group::Software));
        record(&(1..=5).map(|i| ev(0, i)).chain([ev(1, 10), ev(2, 20)]).collect::<Vec<_>>());
        let only1 = fetch(&FetchOptions { nc_idx: Some(1), ..Default::default() }).unwrap();
        assert!(only1.contains("\"tracking_id\":10") && !only1.contains("\"tracking_id\":3"), "{only1}");
        let capped = fetch(&FetchOptions { max_events_per_nc: 2, ..Default::default() }).unwrap();
        // Core 0 kept 3, 4, 5 (1 and 2 overwritten); the cap returns 3 and 4.
        assert!(capped.contains("\"tracking_id\":3") && capped.contains("\"tracking_id\":4") && !capped.contains("\"tracking_id\":5"), "{capped}");
        assert!(capped.contains("{\"nc_idx\":0,\"count\":2}"), "{capped}");
        assert!(!capped.contains("\"tracking_id\":20"), "disabled core 2 captured nothing");
        let rest = fetch(&FetchOptions::default()).unwrap();
        assert!(rest.contains("\"tracking_id\":5") && !rest.contains("\"tracking_id\":4"), "{rest}");
        assert_eq!(fetch(&FetchOptions::default()).unwrap(), "{\"events\":[],\"overwritten_events\":[]}");
        stop();
        assert!(!wants(EventType::CcRunning));
        stop();
    }
}
