//! The process's one runtime (nrtpy's singleton): created on first use
//! over the simulated devices, closed by `reset()` (or at interpreter
//! exit). It owns the runtime, one model host per device, the execution
//! units of the async path and the simulator devices (for fault
//! injection).
//!
//! Python objects never own runtime state directly: each tensor and model
//! holds a [`Cell`] the session also knows, so `reset()` can free every
//! tensor and unload every model before the runtime closes, and later use
//! of them raises `NrtpyError` instead of touching a closed runtime.

use crate::errors::{nrt_error, nrtpy_error};
use nrt::config::Env;
use nrt::load::ModelHost;
use nrt::runtime::FrameworkType;
use nrt::{Runtime, RuntimeHosts, RuntimeOptions};
use nrt_sim::SimDevice;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// What a tensor's or model's handle currently refers to.
#[derive(Debug)]
pub enum Slot<T> {
    /// A live runtime object.
    Live(T),
    /// Freed (or unloaded) explicitly.
    Freed,
    /// The runtime was reset (or closed) while it was live.
    Reset,
}

/// A handle shared by a Python object and the session.
pub type Cell<T> = Mutex<Slot<T>>;

/// Locks a cell (a poisoned lock still holds a consistent slot).
pub fn lock<T>(c: &Cell<T>) -> MutexGuard<'_, Slot<T>> {
    c.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a loaded model lives.
#[derive(Clone, Copy, Debug)]
pub struct ModelRef {
    /// Id in the runtime's model database.
    pub id: nrt::model::ModelId,
    /// Position of the device whose host loaded it.
    pub device: usize,
}

/// Live handles the session frees at reset (weak: a handle Python
/// dropped is gone already).
struct Registry<T> {
    cells: Mutex<Vec<Weak<Cell<T>>>>,
}

impl<T> Registry<T> {
    fn new() -> Registry<T> {
        Registry { cells: Mutex::new(Vec::new()) }
    }

    fn add(&self, c: &Arc<Cell<T>>) {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        // Drop dead entries whenever the list doubles, so it stays
        // proportional to the live handles.
        if cells.len() >= 64 && cells.len().is_power_of_two() {
            cells.retain(|w| w.strong_count() > 0);
        }
        cells.push(Arc::downgrade(c));
    }

    fn reset_all(&self) -> Vec<T> {
        let cells = std::mem::take(&mut *self.cells.lock().unwrap_or_else(|e| e.into_inner()));
        let mut out = Vec::new();
        for c in cells.iter().filter_map(Weak::upgrade) {
            let mut s = lock(&c);
            if let Slot::Live(v) = std::mem::replace(&mut *s, Slot::Reset) {
                out.push(v);
            }
        }
        out
    }
}

/// The running runtime and everything built around it.
pub struct Session {
    /// The runtime.
    pub rt: Arc<Runtime>,
    /// One model host per device, by device position.
    pub hosts: Vec<ModelHost>,
    /// Execution units of the asynchronous path.
    pub xus: nrt::xu::Xus,
    sims: Vec<Arc<SimDevice>>,
    tensors: Registry<Arc<nrt::tensor::Tensor>>,
    models: Registry<ModelRef>,
}

impl Session {
    /// The simulated devices.
    pub fn sims(&self) -> &[Arc<SimDevice>] {
        &self.sims
    }

    /// A new live tensor handle.
    pub fn tensor_cell(&self, t: nrt::tensor::Tensor) -> Arc<Cell<Arc<nrt::tensor::Tensor>>> {
        let c = Arc::new(Mutex::new(Slot::Live(Arc::new(t))));
        self.tensors.add(&c);
        c
    }

    /// A new live model handle.
    pub fn model_cell(&self, m: ModelRef) -> Arc<Cell<ModelRef>> {
        let c = Arc::new(Mutex::new(Slot::Live(m)));
        self.models.add(&c);
        c
    }

    /// The host of device position `d`.
    pub fn host(&self, d: usize) -> nrt::NrtResult<&ModelHost> {
        nrt::hosts::host_of(&self.rt, &self.hosts, d)
    }

    /// Device memory and physical core of logical core `vnc` (where a
    /// tensor for a model on that core is booked).
    pub fn tensor_home(&self, vnc: u32) -> nrt::NrtResult<(Arc<nrt::memory::DeviceMemory>, nrt_hal::CoreId)> {
        let v = self.rt.vcore(vnc)?;
        let core = *v.physical.first().ok_or_else(|| nrt::NrtError::invalid(format!("logical core {vnc} has no physical cores")))?;
        Ok((Arc::clone(self.rt.memory(v.device)?), core))
    }

    fn close(&self) -> nrt::NrtResult<()> {
        self.xus.shutdown();
        // Tensors first (their memory goes back to the allocators), then
        // the models, then the runtime.
        drop(self.tensors.reset_all());
        let models = self.models.reset_all();
        let mut first = Ok(());
        for m in models {
            if let Ok(h) = self.host(m.device)
                && let Err(e) = h.unload(m.id)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        let hosts = nrt::hosts::close_hosts(&self.hosts);
        let closed = self.rt.close();
        first.and(hosts).and(closed)
    }
}

static SESSION: Mutex<Option<Arc<Session>>> = Mutex::new(None);

fn slot() -> MutexGuard<'static, Option<Arc<Session>>> {
    SESSION.lock().unwrap_or_else(|e| e.into_inner())
}

/// The running session, if any (never starts one).
pub fn current() -> Option<Arc<Session>> {
    slot().as_ref().map(Arc::clone)
}

/// Whether a runtime is running.
pub fn is_active() -> bool {
    slot().is_some()
}

fn start() -> Result<Session, (String, Option<nrt::NrtError>)> {
    let sims: Vec<Arc<SimDevice>> = crate::sim::devices().map_err(|e| (e, None))?.into_iter().map(Arc::new).collect();
    let devices = crate::sim::backend_devices(&sims).map_err(|e| (e, None))?;
    let mut options = RuntimeOptions::new(devices, Env::from_process());
    options.framework = FrameworkType::NoFw;
    options.framework_version = concat!("nrt-py ", env!("CARGO_PKG_VERSION")).to_string();
    // The bring-up libnrt.so's nrt_init and the nrt command use too.
    let RuntimeHosts { rt, hosts, xus } = RuntimeHosts::start(options).map_err(|e| ("Failed to initialize the runtime".to_string(), Some(e)))?;
    Ok(Session { rt, hosts, xus, sims, tensors: Registry::new(), models: Registry::new() })
}

/// The running session, started on first use (`nrt_init`), with the GIL
/// released while the runtime starts.
pub fn get() -> PyResult<Arc<Session>> {
    if let Some(s) = slot().as_ref() {
        return Ok(Arc::clone(s));
    }
    Python::attach(|py| {
        let started = py.detach(|| {
            let mut s = slot();
            if let Some(s) = s.as_ref() {
                return Ok(Arc::clone(s));
            }
            let new = Arc::new(start()?);
            *s = Some(Arc::clone(&new));
            Ok(new)
        });
        started.map_err(|(ctx, e): (String, Option<nrt::NrtError>)| match e {
            Some(e) => nrt_error(py, &ctx, &e),
            None => nrtpy_error(ctx),
        })
    })
}

/// Closes the running session, if any (`reset()`): frees every tensor,
/// unloads every model, closes the runtime and ends a system trace
/// session still open (as `nrt_close` does). Later use of old handles
/// raises `NrtpyError`.
pub fn reset(py: Python<'_>) -> PyResult<bool> {
    let Some(s) = slot().take() else {
        return Ok(false);
    };
    nrt::trace::stop();
    py.detach(|| s.close()).map_err(|e| nrt_error(py, "Failed to close the runtime", &e))?;
    Ok(true)
}

/// Logical cores visible to the process: the running runtime's, or
/// (before a start) what the configuration would give.
pub fn visible_cores() -> Result<u32, String> {
    if let Some(s) = slot().as_ref() {
        return Ok(s.rt.visible_vnc_count());
    }
    let sims: Vec<Arc<SimDevice>> = crate::sim::devices()?.into_iter().map(Arc::new).collect();
    let devices = crate::sim::backend_devices(&sims)?;
    nrt::runtime::visible_vnc_count(&Env::from_process(), &devices).map_err(|e| e.to_string())
}
