//! The simulated device from Python: the settings the next runtime start
//! builds its devices with (deterministic mode, thread count, instance,
//! faults armed from the start) and fault injection into the running
//! devices. `NEURON_SIM_*` variables are read first; what is set here
//! overrides them.

use crate::errors::{nrtpy_error, value_error};
use nrt_sim::{SimConfig, SimDevice};
use pyo3::prelude::*;
use std::sync::Mutex;

/// Overrides of the `NEURON_SIM_*` environment for the next start.
#[derive(Clone, Debug, Default)]
pub struct SimOverrides {
    /// Deterministic single-threaded stepping.
    pub deterministic: Option<bool>,
    /// Worker threads.
    pub threads: Option<usize>,
    /// Instance type or family.
    pub instance: Option<String>,
}

static OVERRIDES: Mutex<SimOverrides> = Mutex::new(SimOverrides { deterministic: None, threads: None, instance: None });

/// The simulator configuration for the next start: the environment, then
/// the overrides.
pub fn config() -> Result<SimConfig, String> {
    let o = OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let get = |k: &str| -> Option<String> {
        match k {
            "NEURON_SIM_DETERMINISTIC" if o.deterministic.is_some() => o.deterministic.map(|d| if d { "1".into() } else { "0".into() }),
            "NEURON_SIM_THREADS" if o.threads.is_some() => o.threads.map(|t| t.to_string()),
            "NEURON_SIM_INSTANCE" if o.instance.is_some() => o.instance.clone(),
            _ => std::env::var(k).ok(),
        }
    };
    SimConfig::from_vars(get).map_err(|e| format!("simulated device configuration: {e}"))
}

/// The devices of the next start.
pub fn devices() -> Result<Vec<SimDevice>, String> {
    Ok(SimDevice::all(&config()?))
}

/// The runtime's devices over `sims` for the backend `NRT_DEVICE` names:
/// the simulator itself, the simulator behind the emulated driver, or
/// `/dev/neuronN` (where `sims` go unused; fault injection then reaches
/// nothing the runtime runs on).
pub fn backend_devices(sims: &[std::sync::Arc<SimDevice>]) -> Result<Vec<std::sync::Arc<dyn nrt_hal::Device>>, String> {
    let backend = nrt::config::device_backend(&nrt::config::Env::from_process()).map_err(|e| e.to_string())?;
    nrt_ndl::devices(backend, || Ok(sims.iter().map(|d| std::sync::Arc::clone(d) as std::sync::Arc<dyn nrt_hal::Device>).collect()))
}

/// `nrt.simulator.configure(deterministic=None, threads=None,
/// instance=None)`: settings for the next runtime start (the runtime must
/// not be running; `reset()` first). `None` keeps the current value.
#[pyfunction]
#[pyo3(signature = (deterministic=None, threads=None, instance=None))]
pub fn sim_configure(deterministic: Option<bool>, threads: Option<usize>, instance: Option<String>) -> PyResult<()> {
    if crate::session::is_active() {
        return Err(nrtpy_error("the simulator cannot be reconfigured while the runtime is active; call nrt.reset() first"));
    }
    let mut next = OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if deterministic.is_some() {
        next.deterministic = deterministic;
    }
    if let Some(t) = threads {
        if !(1..=64).contains(&t) {
            return Err(value_error(format!("threads={t}: expected a thread count from 1 to 64")));
        }
        next.threads = Some(t);
    }
    if instance.is_some() {
        next.instance = instance;
    }
    // Check the whole configuration now, not at the next start.
    let saved = std::mem::replace(&mut *OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()), next);
    if let Err(e) = config() {
        *OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()) = saved;
        return Err(value_error(e));
    }
    Ok(())
}

/// `nrt.simulator.settings()`: what the next (or current) start uses, as
/// a dict (`deterministic`, `threads`, `arch`, `devices`).
#[pyfunction]
pub fn sim_settings(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let c = config().map_err(value_error)?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("deterministic", c.deterministic)?;
    d.set_item("threads", c.threads)?;
    d.set_item("arch", format!("{:?}", c.arch).to_lowercase())?;
    d.set_item("devices", c.devices)?;
    Ok(d)
}

/// `nrt.simulator.inject(spec)`: arms faults on the running simulated
/// devices, in `NEURON_SIM_INJECT` syntax (`kind[@core=N][:after=N|:at=INSTR]`,
/// comma separated). `ValueError` for a spec that does not parse.
#[pyfunction]
pub fn sim_inject(spec: &str) -> PyResult<()> {
    let faults = nrt_sim::fault::parse_faults(spec).map_err(|e| value_error(format!("fault spec {spec:?}: {e}")))?;
    let s = crate::session::get()?;
    for d in s.sims() {
        for f in &faults {
            d.inject(f.clone());
        }
    }
    Ok(())
}
