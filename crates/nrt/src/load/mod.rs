//! The load pipeline: NEFF bytes -> device-resident program, as separate
//! stages (seed 004, seed 001 §2.2):
//!
//! 1. admission ([`ModelHost::load`]): `vnc_count` must be -1, pick the
//!    logical core;
//! 2. parse (nrt-neff; version/feature gate -> NRT_UNSUPPORTED_NEFF_VERSION,
//!    hash check when configured);
//! 3. program IR ([`crate::program`]) and the gate ([`gate`]): target
//!    architecture and LNC size against the device;
//! 4. static memory plan ([`plan`]);
//! 5. stage + lower + relocate ([`stage`], [`lower`], [`rings`]): IO
//!    staging buffers, constants, scratch, pointer and DGE tables, DMA
//!    rings and queues, engine images in the core's instruction arena;
//! 6. ready: the model is registered (id minted before staging) in state
//!    RUNNING.
//!
//! Any failure rolls back everything the load allocated.

pub mod gate;
pub mod lower;
pub mod plan;
pub mod rings;
pub mod settings;
pub mod sites;
pub mod stage;

pub use settings::LoadSettings;

use crate::exec::cores::CoreTable;
use crate::exec::harvest::Harvest;
use crate::log::Module;
use crate::memory::DeviceMemory;
use crate::model::{ExecState, LoadedModel, ModelDb, ModelId, ModelState};
use crate::program::Program;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{CoreId, Device};
use nrt_neff::{Neff, ReadOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything load and execute need from the runtime for one device: the
/// device, its memory allocator, the installed cores, the model database,
/// the logical cores (each a list of physical cores) and the settings.
pub struct ModelHost {
    pub(crate) device: Arc<dyn Device>,
    pub(crate) memory: Arc<DeviceMemory>,
    pub(crate) cores: CoreTable,
    pub(crate) models: Arc<ModelDb>,
    pub(crate) vcores: Vec<Vec<CoreId>>,
    pub(crate) settings: LoadSettings,
    pub(crate) gpsimd: Arc<crate::custom_ops::LibStaging>,
}

impl std::fmt::Debug for ModelHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelHost").field("vcores", &self.vcores).field("settings", &self.settings).finish()
    }
}

impl ModelHost {
    /// A host over `memory`'s device with the given logical cores and its
    /// own model database.
    pub fn new(memory: Arc<DeviceMemory>, vcores: Vec<Vec<CoreId>>, settings: LoadSettings) -> ModelHost {
        ModelHost::with_models(memory, vcores, settings, Arc::new(ModelDb::default()))
    }

    /// A host sharing `models` with other hosts (one per device, so model
    /// ids stay unique across devices).
    pub fn with_models(memory: Arc<DeviceMemory>, vcores: Vec<Vec<CoreId>>, settings: LoadSettings, models: Arc<ModelDb>) -> ModelHost {
        ModelHost { device: memory.device().clone(), memory, cores: CoreTable::default(), models, vcores, settings, gpsimd: Arc::default() }
    }

    /// The host of device `d` of an initialised runtime: its allocator, its
    /// logical cores (per-device indices, see `Runtime::locate_vnc`) and the
    /// settings from the runtime's configuration.
    pub fn for_runtime_device(rt: &crate::Runtime, d: usize, models: Arc<ModelDb>) -> NrtResult<ModelHost> {
        let memory = rt.memory(d)?.clone();
        let q7 = crate::custom_ops::Q7Setup { image: rt.q7_image().clone(), stdout_bytes: rt.config().gpsimd_stdout_queue_bytes };
        Ok(ModelHost::with_models(memory, rt.device_vcores(d), LoadSettings::from_config(rt.config()), models).with_q7(q7))
    }

    /// A host whose logical cores are consecutive groups of `lnc` physical
    /// cores of the device.
    pub fn with_lnc(device: Arc<dyn Device>, lnc: u32, settings: LoadSettings) -> NrtResult<ModelHost> {
        ModelHost::with_lnc_sharing(device, lnc, settings, Arc::new(ModelDb::default()))
    }

    /// [`ModelHost::with_lnc`] sharing `models` with the hosts of the
    /// instance's other devices, as a runtime's hosts do: their models'
    /// collectives meet across the devices.
    pub fn with_lnc_sharing(device: Arc<dyn Device>, lnc: u32, settings: LoadSettings, models: Arc<ModelDb>) -> NrtResult<ModelHost> {
        let n = device.info().physical_cores;
        if lnc == 0 || !n.is_multiple_of(lnc) {
            return Err(NrtError::invalid(format!("LNC size {lnc} does not divide the device's {n} physical cores")));
        }
        let vcores = (0..n / lnc).map(|v| (0..lnc).map(|i| CoreId(v * lnc + i)).collect()).collect();
        Ok(ModelHost::with_models(Arc::new(DeviceMemory::new(device)), vcores, settings, models))
    }

    /// The host with every core's Q7 cluster brought up with `q7` (the
    /// image, the stdout ring size) instead of the stock image and no
    /// stdio. Cores already installed keep theirs.
    pub fn with_q7(mut self, q7: crate::custom_ops::Q7Setup) -> ModelHost {
        self.cores = CoreTable::with_q7(q7);
        self
    }

    /// The device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The device memory allocator (ledger, tensors).
    pub fn memory(&self) -> &Arc<DeviceMemory> {
        &self.memory
    }

    /// The model database.
    pub fn models(&self) -> &ModelDb {
        &self.models
    }

    /// The installed cores.
    pub fn cores(&self) -> &CoreTable {
        &self.cores
    }

    /// The logical cores.
    pub fn vcores(&self) -> &[Vec<CoreId>] {
        &self.vcores
    }

    /// The settings.
    pub fn settings(&self) -> &LoadSettings {
        &self.settings
    }

    /// The GPSIMD library staging (shared single-library sets per core).
    pub fn gpsimd_libs(&self) -> &crate::custom_ops::LibStaging {
        &self.gpsimd
    }

    /// Changes the execution timeout (NEURON_RT_EXEC_TIMEOUT) for later loads.
    pub fn set_exec_timeout(&mut self, t: Duration) {
        self.settings.exec_timeout = t;
    }

    /// Installs the dispatcher on every physical core of logical core `vnc`
    /// (libnrt starts its exec-ready program at init); loads do it lazily.
    pub fn install_vcore(&self, vnc: u32) -> NrtResult<()> {
        let cores = self.vcores.get(vnc as usize).ok_or_else(|| NrtError::invalid(format!("unknown logical core {vnc}")))?;
        for c in cores {
            self.cores.get_or_install(&self.memory, *c, self.settings.arena_bytes)?;
        }
        Ok(())
    }

    /// The process-local logical core system-trace events of this host's
    /// logical core `vnc` are filed under.
    pub fn trace_nc(&self, vnc: u32) -> u32 {
        match self.vcores.get(vnc as usize).and_then(|c| c.first()) {
            Some(core) => crate::trace::nc_of(self.device.info().device_index, core.0),
            None => vnc,
        }
    }

    fn select_vcore(&self, vnc: i32) -> NrtResult<u32> {
        let n = self.vcores.len() as u32;
        if vnc == -1 {
            return (0..n)
                .min_by_key(|v| (self.models.count_on(*v), *v))
                .ok_or_else(|| NrtError::new(NrtStatus::LoadNotEnoughNc, "no logical cores are visible"));
        }
        u32::try_from(vnc)
            .ok()
            .filter(|v| *v < n)
            .ok_or_else(|| NrtError::invalid(format!("unknown logical core {vnc}; visible logical cores are 0..{n} (or -1 for the first free)")))
    }

    /// Loads a NEFF onto logical core `vnc` (-1: the first free one).
    /// `vnc_count` must be -1, as in libnrt.
    pub fn load(&self, neff_bytes: &[u8], vnc: i32, vnc_count: i32) -> NrtResult<ModelId> {
        self.load_as("load", neff_bytes, vnc, vnc_count, &crate::cc::neff::CcRank::single(), None)
    }

    /// [`ModelHost::load`] of a NEFF read from `file`: the model is named
    /// as [`crate::model::model_name`] says (the file's stem where the
    /// header carries the compiler's placeholder), so the `nrt` command,
    /// Python and the tools show one name.
    pub fn load_file(&self, neff_bytes: &[u8], file: &std::path::Path, vnc: i32, vnc_count: i32) -> NrtResult<ModelId> {
        self.load_as("load", neff_bytes, vnc, vnc_count, &crate::cc::neff::CcRank::single(), Some(file))
    }

    /// [`ModelHost::load`] as rank `cc.rank` of a collectives world of
    /// `cc.world` (`nrt_load_collectives`): the NEFF's collectives meet
    /// their peers' loads and are composed into the group's rings.
    pub fn load_collectives(&self, neff_bytes: &[u8], vnc: i32, vnc_count: i32, cc: &crate::cc::neff::CcRank) -> NrtResult<ModelId> {
        self.load_as("load_collectives", neff_bytes, vnc, vnc_count, cc, None)
    }

    /// A load traced as one `nrt_load` span, a failure logged under `api`
    /// (the entry point's own tag: `NMGR:load`, `NMGR:load_collectives`).
    fn load_as(&self, api: &str, neff_bytes: &[u8], vnc: i32, vnc_count: i32, cc: &crate::cc::neff::CcRank, file: Option<&std::path::Path>) -> NrtResult<ModelId> {
        let t0 = crate::trace::wants(crate::trace::EventType::NrtLoad).then(crate::trace::now_ns);
        let r = self.load_inner(neff_bytes, vnc, vnc_count, cc, file);
        if let Some(t0) = t0 {
            let model = r.as_ref().ok().and_then(|id| self.models.get(*id));
            let v = model.as_ref().map_or(u32::try_from(vnc).unwrap_or(0), |m| m.vnc);
            let data = crate::trace::EventData {
                model_id: r.as_ref().ok().copied(),
                size: Some(neff_bytes.len() as u64),
                status: Some(r.as_ref().err().map_or(0, |e| e.status as i32)),
                ..Default::default()
            };
            crate::trace::record_span(crate::trace::EventType::NrtLoad, self.trace_nc(v), t0, data);
        }
        if let Err(e) = &r {
            crate::log::write(crate::log::Level::Error, Module::Nmgr, api, format_args!("Failed to load NEFF ({}): {}", e.status, e.message));
        }
        r
    }

    fn load_inner(&self, neff_bytes: &[u8], vnc: i32, vnc_count: i32, cc: &crate::cc::neff::CcRank, file: Option<&std::path::Path>) -> NrtResult<ModelId> {
        if vnc_count != -1 {
            return Err(NrtError::invalid("vnc_count is deprecated. only use -1."));
        }
        let vnc = self.select_vcore(vnc)?;
        let cores = self.vcores[vnc as usize].clone();
        let (neff, program) = prepare(neff_bytes, &self.settings, self.device.info().arch.arch, cores.len())?;
        let timeout = self.settings.exec_timeout;
        let numerical = self.settings.numerical_errors;
        let plans = plan::plan(&program);
        let id = self.models.mint_id();
        let device_program = if self.settings.fake_instance {
            None
        } else {
            Some(stage::stage(self, &neff, &program, &plans, id, &cores, cc)?)
        };
        let bound = device_program.as_ref().map(|p| p.io.iter().map(|s| s.staging.get()).collect()).unwrap_or_default();
        let ncores = device_program.as_ref().map_or(1, |p| p.cores.len());
        let collectives = device_program.as_ref().map_or(0, |p| p.cores.iter().map(|c| c.cc_ops).sum::<u32>());
        let mut harvest = Harvest::new(ncores, timeout, numerical);
        if collectives > 0 {
            harvest.expect_collectives(collectives, cc.peer_timeout);
        }
        let profile = if device_program.is_some() { crate::profile::ModelProfile::new(self.settings.device_profile, self.settings.device_profile_warmup, &self.settings.inspect_output_dir) } else { None };
        let name = crate::model::model_name(&program.name, file);
        let model = LoadedModel::new(
            id,
            name.clone(),
            vnc,
            program.inputs.clone(),
            program.outputs.clone(),
            device_program,
            ExecState {
                bound,
                last_sets: None,
                output_positions: Vec::new(),
                harvest,
                profile,
                capture: None,
            },
        );
        self.memory.set_model_name(id, &name);
        self.publish_model(id, vnc, &cores, &name, neff.header.uuid);
        self.models.insert(Arc::new(model));
        crate::log_info!(Module::Nmgr, "Loaded NN \"{name}\" ID: {id}");
        Ok(id)
    }

    /// Unloads a model: removed from lookup first, then waits for in-flight
    /// executions to drop their references, then frees everything it put on
    /// the device. The cores of a model a fatal fault stopped (poisoned:
    /// fail-stop, it never runs again) are reset and brought up again
    /// first, so the core can take the next model.
    pub fn unload(&self, id: ModelId) -> NrtResult<()> {
        let t0 = crate::trace::wants(crate::trace::EventType::NrtUnload).then(crate::trace::now_ns);
        let vnc = self.models.get(id).map(|m| m.vnc);
        let r = self.unload_inner(id);
        if let (Some(t0), Some(vnc)) = (t0, vnc) {
            let data = crate::trace::EventData { model_id: Some(id), status: Some(r.as_ref().err().map_or(0, |e| e.status as i32)), ..Default::default() };
            crate::trace::record_span(crate::trace::EventType::NrtUnload, self.trace_nc(vnc), t0, data);
        }
        r
    }

    /// Describes a loaded model in the device's datastore (the tools'
    /// `loaded_models`), with what the memory ledger booked to it.
    fn publish_model(&self, id: ModelId, vnc: u32, cores: &[nrt_hal::CoreId], name: &str, uuid: [u8; 16]) {
        let Some(s) = self.device.status() else { return };
        let ledger = self.memory.ledger();
        let (totals, host) = (ledger.model(id), ledger.model_host(id));
        let mut m = nrt_hal::status::ModelStatus { id: u64::from(id), vnc, core: cores.first().map_or(0, |c| c.0), uuid, name: name.to_string(), ..Default::default() };
        for u in crate::memory::MemUsage::ALL {
            m.memory[u.status_category() as usize] += totals.get(u);
            m.host_memory[u.status_category() as usize] += host.get(u);
        }
        s.model_loaded(&m);
    }

    fn unload_inner(&self, id: ModelId) -> NrtResult<()> {
        let model = self.models.remove(id).ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("Failed to find model: {id}")))?;
        if let Some(s) = self.device.status() {
            s.model_unloaded(u64::from(id));
        }
        crate::log_info!(Module::Nmgr, "Unloading {id}");
        model.set_state(ModelState::Stopping);
        // Executions in flight hold the model; each ends within the
        // request limit, so a count that does not drop for that long
        // belongs to something stuck: the unload gives up (the model's
        // memory stays booked) instead of waiting for ever.
        let limit = crate::xu::request_limit();
        let (mut held, mut since, mut spins) = (Arc::strong_count(&model), Instant::now(), 0u64);
        while Arc::strong_count(&model) > 1 {
            std::thread::sleep(Duration::from_millis(1));
            spins += 1;
            if spins.is_multiple_of(10_000) {
                crate::log_warn!(Module::Nmgr, "still waiting for model[{id}] ref count 0");
            }
            let now_held = Arc::strong_count(&model);
            if now_held < held {
                (held, since) = (now_held, Instant::now());
            } else if since.elapsed() >= limit {
                return Err(NrtError::new(
                    NrtStatus::Timeout,
                    format!(
                        "unloading model {id}: {} execution(s) or callback(s) still hold it and none ended within {:.1} sec (NEURON_RT_EXEC_TIMEOUT + NEURON_RT_CC_NET_TIMEOUT); its device memory stays booked",
                        now_held - 1,
                        limit.as_secs_f64()
                    ),
                ));
            }
        }
        // A model stopped by a fatal fault (fail-stop) left its cores in an
        // undefined state: reset and bring them up again before its memory
        // is given back, so the next model loaded there runs.
        let recovered = match (&model.program, model.poisoned()) {
            (Some(p), Some(status)) => recover_cores(p, id, status),
            _ => Ok(()),
        };
        let r = match &model.program {
            Some(p) => stage::release(p),
            None => Ok(()),
        };
        let r = recovered.and(r);
        self.memory.forget_model_name(id);
        crate::log_info!(Module::Nmgr, "Unloaded NN: {id}");
        r
    }

    /// The model's inputs and outputs (reported in fake-instance mode too).
    pub fn tensor_info(&self, id: ModelId) -> NrtResult<(Vec<nrt_neff::TensorSignature>, Vec<nrt_neff::TensorSignature>)> {
        let m = self.models.get(id).ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("Failed to find model: {id}")))?;
        Ok((m.inputs.clone(), m.outputs.clone()))
    }

    /// Unloads every model and stops every installed core (runtime close).
    pub fn close(&self) -> NrtResult<()> {
        let mut first = Ok(());
        for id in self.models.ids() {
            if let Err(e) = self.unload(id)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        if let Err(e) = self.gpsimd.teardown(&self.memory)
            && first.is_ok()
        {
            first = Err(e);
        }
        if let Err(e) = self.cores.teardown_all()
            && first.is_ok()
        {
            first = Err(e);
        }
        first
    }
}

/// Resets and re-arms every physical core of a poisoned model's program
/// ([`crate::exec::cores::CoreDispatch::recover`]), one core at a time.
fn recover_cores(p: &crate::model::DeviceProgram, id: ModelId, status: NrtStatus) -> NrtResult<()> {
    let mut first = Ok(());
    for c in &p.cores {
        let nc = c.core.core().0;
        crate::log_info!(Module::Nmgr, "NC {nc}: resetting the core after model {id} stopped with {status}");
        if let Err(e) = c.core.recover() {
            crate::log_error!(Module::Nmgr, "NC {nc}: recovery after model {id} failed: {}", e.message);
            if first.is_ok() {
                first = Err(e);
            }
        }
    }
    first
}

/// The device-independent stages: parse, program IR, the architecture /
/// LNC gate and (unless in fake-instance mode) the executable-opcode check.
pub fn prepare(neff_bytes: &[u8], settings: &LoadSettings, arch: nrt_hal::Arch, vcore_cores: usize) -> NrtResult<(Neff, Program)> {
    let neff = parse(neff_bytes, settings.validate_hash)?;
    let program = Program::from_neff(&neff).map_err(|e| NrtError::invalid(e.to_string()))?;
    let mismatches = gate::check(&program, arch, vcore_cores)?;
    if !mismatches.is_empty() {
        let text = mismatches.iter().map(|m| m.0.as_str()).collect::<Vec<_>>().join("; ");
        if settings.allow_legacy_neff {
            crate::log_warn!(Module::Nmgr, "{text} (loading anyway: NEURON_RT_ALLOW_LEGACY_NEFF)");
        } else {
            return Err(NrtError::invalid(text));
        }
    }
    for sg in &neff.subgraphs {
        nrt_neff::gpsimd::lib_set(&neff, sg).map_err(|e| NrtError::invalid(e.to_string()))?;
    }
    if !settings.fake_instance {
        if let Some(msg) = crate::program::support::refusal(&crate::program::support::unrunnable(&program)) {
            return Err(NrtError::invalid(msg));
        }
    }
    Ok((neff, program))
}

/// Load in libnrt's no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE, where the
/// runtime has no device at all): the NEFF is parsed, checked against the
/// pretended architecture and LNC size and registered without a device
/// program, so executes succeed at once and tensor info is reported.
pub fn load_without_device(models: &ModelDb, neff_bytes: &[u8], vnc: u32, arch: nrt_hal::Arch, lnc: usize, settings: &LoadSettings) -> NrtResult<ModelId> {
    let settings = LoadSettings { fake_instance: true, ..settings.clone() };
    let (_, program) = prepare(neff_bytes, &settings, arch, lnc)?;
    let id = models.mint_id();
    let exec = ExecState { bound: Vec::new(), last_sets: None, output_positions: Vec::new(), harvest: Harvest::new(1, settings.exec_timeout, settings.numerical_errors), profile: None, capture: None };
    models.insert(Arc::new(LoadedModel::new(id, program.name.clone(), vnc, program.inputs, program.outputs, None, exec)));
    crate::log_info!(Module::Nmgr, "Loaded NN \"{}\" ID: {id} (no-device mode)", program.name);
    Ok(id)
}

/// Parse stage: the container, with the version/feature gate and the
/// optional hash check.
pub fn parse(bytes: &[u8], validate_hash: bool) -> NrtResult<Neff> {
    let options = ReadOptions { verify_hash: validate_hash, ..ReadOptions::default() };
    Neff::parse_with(bytes, &options).map_err(|e| {
        let status = if e.is_unsupported_version() { NrtStatus::UnsupportedNeffVersion } else { NrtStatus::Invalid };
        NrtError::new(status, format!("NEFF load failed: {e}"))
    })
}
