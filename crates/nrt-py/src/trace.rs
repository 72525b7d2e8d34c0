//! The system trace from Python (`SystemTraceSession`,
//! `benchmark(mode="device")`), over a small boundary: [`SystemTrace`].
//! The module installs [`RuntimeTrace`], the runtime's own system trace
//! (`nrt::trace`, what `nrt_sys_trace_*` drive), at import; without a
//! backend both raise `NrtpyError` saying so. Device time is never made
//! up from host clocks: it is the device's START/END timestamps.
//!
//! What device mode computes from the captured events is nrtpy's
//! algorithm, the runtime's one implementation
//! ([`nrt::trace::device_durations_ps`]): `nc_exec_running` start/stop
//! pairs matched on `tracking_id`, the pairs of one execution's physical
//! cores merged, one device time per execution.

use crate::bench::BenchmarkResult;
use crate::errors::{nrt_error, nrtpy_error};
use pyo3::prelude::*;
use std::sync::OnceLock;

/// What the Python layer needs from the runtime's system trace
/// (nrt_sys_trace.h): start capture on one logical core or all, fetch
/// (and consume) the captured events as the JSON document
/// `nrt_sys_trace_fetch_events` returns, stop.
pub trait SystemTrace: Send + Sync {
    /// `nrt_sys_trace_start` with capture enabled for `core` only (all
    /// visible cores for None), every event type.
    fn start(&self, rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<()>;
    /// `nrt_sys_trace_fetch_events` for `core` (all for None): the JSON
    /// document (`{"events": [...]}`), or "" when nothing was captured.
    fn fetch_json(&self, rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<String>;
    /// The captured events of `core` (all for None), consumed, as the
    /// runtime's typed events.
    fn take_events(&self, rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<Vec<nrt::trace::Event>>;
    /// `nrt_sys_trace_stop`.
    fn stop(&self, rt: &nrt::Runtime) -> nrt::NrtResult<()>;
}

/// The runtime's system trace: one process-wide session, as libnrt has.
/// A session on one core captures that logical core only (every event
/// type); fetches consume what they return.
pub struct RuntimeTrace;

impl SystemTrace for RuntimeTrace {
    fn start(&self, rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<()> {
        let mut config = nrt::trace::TraceConfig::default();
        if let Some(c) = core {
            let visible = rt.visible_vnc_count();
            if c >= visible {
                return Err(nrt::NrtError::invalid(format!("core_id {c} is not a visible logical core; expected 0..{visible}")));
            }
            config.only_cores = Some(std::collections::BTreeSet::from([c]));
        }
        nrt::trace::start(&config, rt.trace_core_map())
    }

    fn fetch_json(&self, _rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<String> {
        nrt::trace::fetch(&nrt::trace::FetchOptions { max_events_per_nc: 0, nc_idx: core })
    }

    fn take_events(&self, _rt: &nrt::Runtime, core: Option<u32>) -> nrt::NrtResult<Vec<nrt::trace::Event>> {
        nrt::trace::take(&nrt::trace::FetchOptions { max_events_per_nc: 0, nc_idx: core }).map(|(events, _)| events)
    }

    fn stop(&self, _rt: &nrt::Runtime) -> nrt::NrtResult<()> {
        nrt::trace::stop();
        Ok(())
    }
}

static BACKEND: OnceLock<Box<dyn SystemTrace>> = OnceLock::new();

/// Installs the system-trace backend (once per process).
pub fn install(backend: Box<dyn SystemTrace>) -> Result<(), Box<dyn SystemTrace>> {
    BACKEND.set(backend)
}

fn backend() -> PyResult<&'static dyn SystemTrace> {
    BACKEND.get().map(|b| &**b).ok_or_else(|| {
        nrtpy_error(
            "the system trace is not available in this build: the runtime's system trace (nrt_sys_trace_*) lands with the observability issue; use benchmark(mode=\"host\") meanwhile",
        )
    })
}

/// nrtpy's `SystemTraceSession(core_id=None)`: captures system trace
/// events while open. A context manager; `stop()` is idempotent.
#[pyclass(module = "nrt")]
pub struct SystemTraceSession {
    core_id: Option<u32>,
    active: bool,
}

#[pymethods]
impl SystemTraceSession {
    /// Starts capturing on `core_id` (all visible cores for None).
    #[new]
    #[pyo3(signature = (core_id=None))]
    fn py_new(py: Python<'_>, core_id: Option<u32>) -> PyResult<SystemTraceSession> {
        let b = backend()?;
        let s = crate::session::get()?;
        py.detach(|| b.start(&s.rt, core_id)).map_err(|e| nrt_error(py, "Failed to start system trace", &e))?;
        Ok(SystemTraceSession { core_id, active: true })
    }

    /// The captured events as JSON (consumed: each is returned once); ""
    /// when none were captured.
    fn fetch_events_json(&self, py: Python<'_>) -> PyResult<String> {
        if !self.active {
            return Err(nrtpy_error("the system trace session was stopped"));
        }
        let b = backend()?;
        let s = crate::session::get()?;
        py.detach(|| b.fetch_json(&s.rt, self.core_id)).map_err(|e| nrt_error(py, "Failed to fetch system trace events", &e))
    }

    /// Discards the events captured so far.
    fn drain_events(&self, py: Python<'_>) -> PyResult<()> {
        self.fetch_events_json(py).map(|_| ())
    }

    /// Stops capturing (idempotent).
    fn stop(&mut self, py: Python<'_>) -> PyResult<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let b = backend()?;
        let s = crate::session::get()?;
        py.detach(|| b.stop(&s.rt)).map_err(|e| nrt_error(py, "Failed to stop system trace", &e))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&mut self, py: Python<'_>, _t: &Bound<'_, PyAny>, _v: &Bound<'_, PyAny>, _tb: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.stop(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("SystemTraceSession(core_id={:?}, {})", self.core_id, if self.active { "capturing" } else { "stopped" })
    }
}

/// nrtpy's device-mode benchmark: a session on `core`, `warmup` runs then
/// drain, `iters` runs then take the events; one duration per execution
/// ([`nrt::trace::device_durations_ps`]).
pub fn device_benchmark(py: Python<'_>, core: u32, warmup: u32, iters: u32, run: impl Fn(u32) -> PyResult<()>) -> PyResult<BenchmarkResult> {
    let mut session = SystemTraceSession::py_new(py, Some(core))?;
    let result = (|| {
        run(warmup)?;
        session.drain_events(py)?;
        run(iters)?;
        let b = backend()?;
        let s = crate::session::get()?;
        let events = py.detach(|| b.take_events(&s.rt, Some(core))).map_err(|e| nrt_error(py, "Failed to fetch system trace events", &e))?;
        let d: Vec<f64> = nrt::trace::device_durations_ps(&events).iter().map(|ps| *ps as f64 / 1e9).collect();
        if d.is_empty() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err("No device execution events were captured by the system trace"));
        }
        Ok(BenchmarkResult::of(d, warmup))
    })();
    let stopped = session.stop(py);
    let r = result?;
    stopped?;
    Ok(r)
}
