//! The process-global runtime behind the C API: the runtime core's
//! [`Lifecycle`] (uninitialised -> init -> closed), one model host per
//! device sharing one model database, and the live-handle registries.
//!
//! `nrt_init` builds the runtime over the simulator's devices
//! (`nrt_sim::SimDevice::all_from_env()`, the embedded default backend)
//! and the process environment.

use crate::ctensor::CTensor;
use crate::handles::Registry;
use nrt_core::config::Env;
use nrt_core::load::ModelHost;
use nrt_core::model::ModelId;
use nrt_core::tensor::TensorSet;
use nrt_core::runtime::{FrameworkType, Lifecycle, RuntimeState};
use nrt_core::{NrtError, NrtResult, NrtStatus, Runtime, RuntimeHosts, RuntimeOptions};
use nrt_hal::Device;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// A loaded model as the C API knows it.
#[derive(Debug)]
pub struct CModel {
    /// Id in the shared model database.
    pub id: ModelId,
    /// Position of the device whose host loaded it (`None` in no-device
    /// mode).
    pub device: Option<usize>,
    /// Process-local logical core it runs on.
    pub vnc: u32,
}

/// A tensor set: names mapped to tensor handles (the tensors are owned by
/// the tensor registry; a set never frees them).
#[derive(Debug, Default)]
pub struct CTensorSet {
    /// (name, tensor handle) in insertion order.
    pub entries: Mutex<Vec<(String, usize)>>,
    /// The last resolution of `entries` to runtime tensors, when every
    /// entry was a whole runtime tensor (`api_core::bound_set`): executing
    /// the same set again reuses it instead of building a new runtime set,
    /// so an unchanged set costs no allocation and the runtime recognises
    /// it as the set it bound last time. Locked after `entries`.
    pub bound: Mutex<Option<Arc<BoundSet>>>,
}

impl CTensorSet {
    /// Drops the kept resolution if it holds `t`: a freed tensor's storage
    /// must not live on in a set that still names its dead handle.
    pub fn forget(&self, t: &Arc<CTensor>) {
        let mut bound = self.bound.lock().unwrap_or_else(|e| e.into_inner());
        if bound.as_ref().is_some_and(|b| b.tensors.iter().any(|x| Arc::ptr_eq(x, t))) {
            *bound = None;
        }
    }
}

/// A C tensor set resolved to runtime tensors (see [`CTensorSet::bound`]).
#[derive(Debug)]
pub struct BoundSet {
    /// The set's entries when it was resolved.
    pub entries: Vec<(String, usize)>,
    /// The C tensors behind the handles, in entry order.
    pub tensors: Vec<Arc<CTensor>>,
    /// The whole runtime tensor each C tensor held, in entry order.
    pub roots: Vec<Arc<nrt_core::tensor::Tensor>>,
    /// The runtime set (name -> root).
    pub set: TensorSet,
}

/// What `nrt_init` set up: the runtime and one model host per device.
pub struct Hosts {
    /// The runtime.
    pub rt: Arc<Runtime>,
    /// Model hosts by device position (none in no-device mode).
    pub devices: Vec<ModelHost>,
    /// The execution units of the async paths (explicit `nrta_*` and
    /// implicit async `nrt_execute`), keyed by process-local logical core.
    pub xus: nrt_core::xu::Xus,
}

impl Hosts {
    /// Loads a NEFF onto process-local logical core `vnc` (-1: first
    /// free): on the owning device's host, or in no-device mode
    /// (NEURON_RT_FAKE_INSTANCE_TYPE) parsed and registered without a
    /// device program, as libnrt does.
    pub fn load(&self, neff: &[u8], vnc: i32, vnc_count: i32) -> NrtResult<CModel> {
        self.load_cc(neff, vnc, vnc_count, &nrt_core::cc::neff::CcRank::single())
    }

    /// [`Hosts::load`] as a rank of a collectives world (`nrt_load_collectives`).
    pub fn load_cc(&self, neff: &[u8], vnc: i32, vnc_count: i32, cc: &nrt_core::cc::neff::CcRank) -> NrtResult<CModel> {
        if let Some(fake) = &self.rt.config().fake_instance {
            if vnc_count != -1 {
                return Err(NrtError::invalid("vnc_count is deprecated. only use -1."));
            }
            let n = self.rt.visible_vnc_count();
            let models = self.rt.shared_models();
            let v = if vnc == -1 {
                (0..n).min_by_key(|v| (models.count_on(*v), *v)).ok_or_else(|| NrtError::new(NrtStatus::LoadNotEnoughNc, "no logical cores are visible"))?
            } else {
                u32::try_from(vnc).ok().filter(|v| *v < n).ok_or_else(|| NrtError::invalid(format!("vnc {vnc} is not a visible logical core (0..{n}, or -1)")))?
            };
            let settings = nrt_core::load::LoadSettings::from_config(self.rt.config());
            let id = nrt_core::load::load_without_device(&models, neff, v, fake.arch, self.rt.topology().lnc() as usize, &settings)?;
            return Ok(CModel { id, device: None, vnc: v });
        }
        let (d, local) = if vnc == -1 {
            (nrt_core::hosts::first_visible_device(&self.devices)?, -1)
        } else {
            let v = u32::try_from(vnc).map_err(|_| NrtError::invalid(format!("vnc {vnc} is not valid; expected -1 or a visible logical core")))?;
            let (d, l) = self.rt.locate_vnc(v)?;
            (d, l as i32)
        };
        let host = self.host(d)?;
        let id = host.load_collectives(neff, local, vnc_count, cc)?;
        let local_vnc = host.models().get(id).map(|m| m.vnc).ok_or_else(|| NrtError::failure("loaded model vanished"))?;
        Ok(CModel { id, device: Some(d), vnc: self.rt.vnc_of(d, local_vnc)? })
    }

    /// The loaded model behind a handle.
    pub fn model(&self, m: &CModel) -> NrtResult<Arc<nrt_core::model::LoadedModel>> {
        self.lookup(m)
    }

    fn lookup(&self, m: &CModel) -> NrtResult<Arc<nrt_core::model::LoadedModel>> {
        self.rt.shared_models().get(m.id).ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("Failed to find model: {}", m.id)))
    }

    /// Runs a model (`repeat` must be 1, as the runtime core requires).
    pub fn execute(&self, m: &CModel, inputs: &TensorSet, outputs: &TensorSet, repeat: i32) -> NrtResult<()> {
        match m.device {
            Some(d) => self.host(d)?.execute_repeat(m.id, inputs, outputs, repeat),
            None => {
                if repeat != 1 {
                    return Err(NrtError::invalid(format!("Supports for loops on the host is deprecated (repeat count {repeat}; only 1 is accepted)")));
                }
                nrt_core::exec::execute(&*self.lookup(m)?, inputs, outputs)
            }
        }
    }

    /// Unloads a model.
    pub fn unload(&self, m: &CModel) -> NrtResult<()> {
        match m.device {
            Some(d) => self.host(d)?.unload(m.id),
            None => self.rt.shared_models().remove(m.id).map(|_| ()).ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("Failed to find model: {}", m.id))),
        }
    }

    /// The model's inputs and outputs.
    pub fn tensor_info(&self, m: &CModel) -> NrtResult<(Vec<nrt_neff::TensorSignature>, Vec<nrt_neff::TensorSignature>)> {
        match m.device {
            Some(d) => self.host(d)?.tensor_info(m.id),
            None => {
                let l = self.lookup(m)?;
                Ok((l.inputs.clone(), l.outputs.clone()))
            }
        }
    }

    /// The host of device position `d`.
    pub fn host(&self, d: usize) -> NrtResult<&ModelHost> {
        nrt_core::hosts::host_of(&self.rt, &self.devices, d)
    }
}

static LIFECYCLE: Lifecycle = Lifecycle::new();
static HOSTS: Mutex<Option<Arc<Hosts>>> = Mutex::new(None);

/// Live model handles.
pub static MODELS: LazyLock<Registry<CModel>> = LazyLock::new(|| Registry::new("model"));
/// Live tensor handles.
pub static TENSORS: LazyLock<Registry<CTensor>> = LazyLock::new(|| Registry::new("tensor"));
/// Live tensor-set handles.
pub static SETS: LazyLock<Registry<CTensorSet>> = LazyLock::new(|| Registry::new("tensor set"));

fn hosts_slot() -> MutexGuard<'static, Option<Arc<Hosts>>> {
    HOSTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The devices of the backend `NRT_DEVICE` names (the simulator as the
/// `NEURON_SIM_*` environment describes it by default).
pub fn devices() -> NrtResult<Vec<Arc<dyn Device>>> {
    let backend = nrt_core::config::device_backend(&Env::from_process())?;
    let sims = || {
        let devs = nrt_sim::SimDevice::all_from_env().map_err(|e| format!("simulated device configuration: {e}"))?;
        Ok(devs.into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect())
    };
    nrt_ndl::devices(backend, sims).map_err(|e| NrtError::new(NrtStatus::Failure, e))
}

/// `nrt_init`.
pub fn init(framework: FrameworkType, fw_version: String, fal_version: String) -> NrtResult<()> {
    let mut slot = hosts_slot();
    if LIFECYCLE.state() == RuntimeState::Init && slot.is_some() {
        return Ok(());
    }
    let mut options = RuntimeOptions::new(devices()?, Env::from_process());
    options.framework = framework;
    options.framework_version = fw_version;
    options.fal_version = fal_version;
    let rt = LIFECYCLE.init(options)?;
    // The bring-up every entry point shares: one host per device over the
    // runtime's own model database (so its infodump and close see our
    // models), and the execution units.
    match RuntimeHosts::around(rt) {
        Ok(RuntimeHosts { rt, hosts, xus }) => {
            *slot = Some(Arc::new(Hosts { rt, devices: hosts, xus }));
            Ok(())
        }
        Err(e) => {
            // Roll back: a runtime without its model hosts must not stay
            // initialised (a later nrt_init starts afresh).
            let _ = LIFECYCLE.close();
            Err(e)
        }
    }
}

/// `nrt_close`: unloads every model, frees every tensor still registered,
/// forgets every handle, then closes the runtime.
pub fn close() -> NrtResult<()> {
    let mut slot = hosts_slot();
    let mut hosts_closed: NrtResult<()> = Ok(());
    if let Some(h) = slot.take() {
        // Queued asynchronous work finishes before models go away.
        h.xus.shutdown();
        // Send/recv service threads stop before the tensors they stage go.
        crate::api_sendrecv::close_all();
        // Profiles and the system trace end with the runtime.
        crate::api_profile::forget_all(&h);
        MODELS.drain();
        SETS.drain();
        for t in TENSORS.drain() {
            t.release();
        }
        hosts_closed = nrt_core::hosts::close_hosts(&h.devices);
    }
    let closed = LIFECYCLE.close();
    hosts_closed.and(closed)
}

/// The running runtime and hosts, or NRT_UNINITIALIZED / NRT_CLOSED.
pub fn hosts() -> NrtResult<Arc<Hosts>> {
    let slot = hosts_slot();
    match &*slot {
        Some(h) if !h.rt.is_closed() => Ok(Arc::clone(h)),
        _ => LIFECYCLE.runtime().and_then(|_| Err(NrtError::new(NrtStatus::Closed, "NRT already closed"))),
    }
}

/// The running runtime, if any (for failure logging).
pub fn running() -> Option<Arc<Runtime>> {
    hosts_slot().as_ref().map(|h| Arc::clone(&h.rt))
}

/// `nrt_set_pool_eng_ucode`: stores the Q7 image for the next `nrt_init`
/// (NRT_UNINITIALIZED while initialised, NRT_CLOSED after close).
pub fn set_pool_eng_ucode(image: nrt_core::custom_ops::Q7Image) -> NrtResult<()> {
    LIFECYCLE.set_pool_eng_ucode(image)
}

/// The Q7 image the running runtime installed, and whether it is the
/// registered one (for tests and tools).
pub fn installed_pool_ucode() -> NrtResult<(nrt_core::custom_ops::Q7Image, bool)> {
    let h = hosts()?;
    Ok((h.rt.q7_image().clone(), h.rt.q7_image_source() == nrt_core::custom_ops::ucode::ImageSource::Registered))
}

/// The lifecycle state.
pub fn state() -> RuntimeState {
    LIFECYCLE.state()
}
