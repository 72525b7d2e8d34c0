//! The runtime object and its lifecycle (`nrt_init` / `nrt_close`).
//!
//! [`Runtime::init`] reads the configuration, sets up logging, plans the
//! logical cores, reserves them exclusively (held until [`Runtime::close`]
//! or process exit), optionally resets them, and creates one
//! [`DeviceMemory`] per device. Every device-facing accessor checks the
//! state: after `close` they return NRT_CLOSED (14).
//!
//! [`Lifecycle`] is the process-wide state machine the C API keeps
//! (uninitialised -> init -> closed): calls before init get
//! NRT_UNINITIALIZED (13), after close NRT_CLOSED (14); `init` while
//! initialised returns the same runtime (libnrt's init is idempotent), and
//! a closed runtime may be initialised again (libnrt's close returns to
//! its start state, so a new `nrt_init` works).
//!
//! The queries libnrt allows before init (total and visible core counts,
//! version, instance info) are free functions here: [`total_vnc_count`],
//! [`visible_vnc_count`], [`version`], [`instance_info`].

use crate::config::{Config, Env};
use crate::custom_ops::ucode::{self, GuardState, ImageSource, Q7Image};
use crate::log::{self, Infodump, Level, Module};
use crate::memory::DeviceMemory;
use crate::model::ModelDb;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::topology::{DeviceShape, InstanceInfo, Topology, TopologyPlan, VcoreInfo, lnc_size};
use nrt_hal::{CoreId, CoreReservation, Device};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// `nrt_framework_type_t`: which framework drives the runtime (only
/// labels the process for tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum FrameworkType {
    /// Not a valid framework.
    Invalid = 0,
    /// No framework (a plain application).
    #[default]
    NoFw = 1,
    /// TensorFlow.
    Tensorflow = 2,
    /// PyTorch.
    Pytorch = 3,
    /// MXNet.
    Mxnet = 4,
    /// A pre-check tool.
    Precheck = 5,
}

/// What `nrt_init` is given: the devices (the backend is handed in; the
/// CLI and C ABI pass the simulator's devices), the environment, and the
/// framework labels.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Every device of the instance, in index order.
    pub devices: Vec<Arc<dyn Device>>,
    /// The environment to read NEURON_RT_* from.
    pub env: Env,
    /// Framework label.
    pub framework: FrameworkType,
    /// Framework version label.
    pub framework_version: String,
    /// Framework abstraction-layer version label.
    pub fal_version: String,
    /// The Q7 image registered with `nrt_set_pool_eng_ucode` before init;
    /// at init it silently replaces the stock image.
    pub pool_ucode: Option<Q7Image>,
    /// The caller prints a failed bring-up's error itself (the `nrt`
    /// command's one `nrt: error:` line), so the runtime does not log the
    /// same message; the infodump of a reportable failure is still logged.
    /// libnrt.so and Python leave it false.
    pub caller_reports_errors: bool,
}

impl RuntimeOptions {
    /// Options for these devices and the process environment, as a plain
    /// application (what the C ABI and the CLI use).
    pub fn from_process_env(devices: Vec<Arc<dyn Device>>) -> RuntimeOptions {
        RuntimeOptions::new(devices, Env::from_process())
    }

    /// Options for these devices and environment, as a plain application.
    pub fn new(devices: Vec<Arc<dyn Device>>, env: Env) -> RuntimeOptions {
        RuntimeOptions {
            devices,
            env,
            framework: FrameworkType::NoFw,
            framework_version: String::new(),
            fal_version: String::new(),
            pool_ucode: None,
            caller_reports_errors: false,
        }
    }
}

/// `nrt_vnc_memory_stats_t`: device memory of one logical core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VncMemoryStats {
    /// Bytes in use on the logical core's physical cores.
    pub bytes_used: u64,
    /// Bytes its HBM channels offer.
    pub bytes_limit: u64,
}

/// `nrt_get_version` data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
    /// Maintenance version (always 0 for this runtime).
    pub maintenance: u64,
    /// The version string (`nrt-rs 0.1.0.0`).
    pub version: String,
    /// 40-character git hash (`NRT_GIT_SHA` at build time, else zeros).
    pub git_sha: String,
}

/// The runtime's version, from the Cargo package version. Non-numeric
/// components read as 0, as libnrt does.
pub fn version() -> VersionInfo {
    let mut parts = env!("CARGO_PKG_VERSION").split(['.', '-', '+']).map(|p| p.parse::<u64>().unwrap_or(0));
    let (major, minor, patch) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    let sha = option_env!("NRT_GIT_SHA").unwrap_or("");
    let git_sha = if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) { sha.to_string() } else { "0".repeat(40) };
    VersionInfo { major, minor, patch, maintenance: 0, version: format!("nrt-rs {major}.{minor}.{patch}.0"), git_sha }
}

fn shapes_for(config: &Config, devices: &[Arc<dyn Device>]) -> NrtResult<Vec<DeviceShape>> {
    if let Some(fake) = &config.fake_instance {
        return Ok(DeviceShape::fake(fake.arch, fake.devices));
    }
    if devices.is_empty() {
        return Err(NrtError::invalid("Cannot find Neuron devices: no device was given to the runtime"));
    }
    Ok(devices.iter().map(|d| DeviceShape::of(d.info())).collect())
}

/// `nrt_get_total_vnc_count` before (or without) init: logical cores on
/// the instance, ignoring the visible-core settings.
pub fn total_vnc_count(env: &Env, devices: &[Arc<dyn Device>]) -> NrtResult<u32> {
    let config = Config::from_env(env)?;
    let shapes = shapes_for(&config, devices)?;
    let (lnc, _) = lnc_size(&config, &shapes)?;
    Ok(shapes.iter().map(|s| s.physical_cores / lnc).sum())
}

/// `nrt_get_visible_vnc_count` before init: what NEURON_RT_VISIBLE_CORES,
/// else NEURON_RT_NUM_CORES, else the total grants (nothing is reserved).
pub fn visible_vnc_count(env: &Env, devices: &[Arc<dyn Device>]) -> NrtResult<u32> {
    let config = Config::from_env(env)?;
    let shapes = shapes_for(&config, devices)?;
    Ok(TopologyPlan::new(&config, &shapes)?.visible_vnc())
}

/// `nrt_get_instance_info` (works before init).
pub fn instance_info(env: &Env, devices: &[Arc<dyn Device>]) -> NrtResult<InstanceInfo> {
    let config = Config::from_env(env)?;
    Ok(match &config.fake_instance {
        Some(f) => InstanceInfo::from_instance_name(&f.name, f.arch),
        None => InstanceInfo::from_devices(&shapes_for(&config, devices)?),
    })
}

fn neuron_env(env: &Env) -> Vec<(String, String)> {
    env.with_prefix("NEURON_").map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// Whether a failure with `status` is logged with the infodump block:
/// one a user would report ([`NrtStatus::is_reportable`]: device errors,
/// timeouts), or any failure while `NEURON_RT_LOG_LEVEL` (for NRT) is
/// DEBUG or more verbose. An argument error is one line (libnrt prints
/// the block on every failure; docs/configuration.md).
pub fn wants_infodump(status: NrtStatus) -> bool {
    status.is_reportable() || log::level_of(Module::Nrt) as u8 >= Level::Debug as u8
}

/// Logs a failure that happened before a runtime existed (an `nrt_init`
/// that failed): its error line (unless the caller prints it,
/// [`RuntimeOptions::caller_reports_errors`]) and the infodump when
/// [`wants_infodump`] says so.
pub fn report_init_failure(options: &RuntimeOptions, err: &NrtError) {
    if !options.caller_reports_errors {
        crate::log::write(Level::Error, Module::Nrt, "nrt_init", format_args!("{}", err.message));
    }
    let env = &options.env;
    if !wants_infodump(err.status) {
        return;
    }
    let v = version();
    let dump = Infodump {
        version: v.version,
        git_sha: v.git_sha,
        backend: "unknown".into(),
        instance: "unknown".into(),
        failure: Some((err.status, "nrt_init".into())),
        lnc: None,
        visible_cores: None,
        env: neuron_env(env),
    };
    log::emit_block(Level::Error, Module::Nrt, &dump.render());
}

/// Work to do at close, before device memory is torn down.
type CloseHook = Box<dyn FnOnce() -> NrtResult<()> + Send>;

/// An initialised runtime: configuration, logical cores, devices, their
/// memory allocators, the core reservation and the model database.
pub struct Runtime {
    config: Config,
    topology: Topology,
    devices: Vec<Arc<dyn Device>>,
    memories: Vec<Arc<DeviceMemory>>,
    reservation: Mutex<Vec<CoreReservation>>,
    /// Every loaded model (the load pipeline inserts, unload removes);
    /// shared with the per-device model hosts so ids are unique.
    pub(crate) models: Arc<ModelDb>,
    close_hooks: Mutex<Vec<CloseHook>>,
    instance: InstanceInfo,
    env: Env,
    framework: FrameworkType,
    closed: AtomicBool,
    q7_image: Q7Image,
    q7_image_source: ImageSource,
    /// The in-process collectives world (rendezvous of this runtime's ranks).
    cc: crate::cc::Collectives,
    /// The semaphore doorbell window of `nec_inc_semaphore`, made on first use.
    doorbells: std::sync::OnceLock<crate::nec::Doorbells>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("topology", &self.topology)
            .field("devices", &self.devices.len())
            .field("closed", &self.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// `nrt_init`: configure, reserve and prepare the devices. On failure
    /// nothing stays reserved, the error is logged ([`report_init_failure`]), and
    /// the status says why (NRT_INVALID for configuration, NRT_FAILURE for
    /// cores that are not available).
    pub fn init(options: RuntimeOptions) -> NrtResult<Runtime> {
        Runtime::init_inner(&options).inspect_err(|e| report_init_failure(&options, e))
    }

    fn init_inner(options: &RuntimeOptions) -> NrtResult<Runtime> {
        let config = Config::from_env(&options.env)?;
        if let Err(e) = log::configure(&config.log) {
            return Err(NrtError::invalid(format!(
                "NEURON_RT_LOG_LOCATION{}: {e}; expected {}",
                if e.module == Module::Nrt { String::new() } else { format!("_{}", e.module.tag()) },
                log::Location::ACCEPTED
            )));
        }
        log::write(
            Level::Debug,
            Module::Nrt,
            "nrt_init",
            format_args!(
                "API:IN: (framework={:?}, fw_version={}, fal_version={}, visible_cores={:?}, num_cores={}, reset_cores={})",
                options.framework,
                options.framework_version,
                options.fal_version,
                config.visible_cores,
                config.num_cores.unwrap_or(0),
                u8::from(config.reset_cores)
            ),
        );
        for w in &config.warnings {
            crate::log_warn!(Module::Nrt, "{w}");
        }
        for name in &config.ignored {
            crate::log_debug!(Module::Nrt, "ignoring unknown variable {name}");
        }
        let shapes = shapes_for(&config, &options.devices)?;
        let plan = TopologyPlan::new(&config, &shapes)?;
        for w in plan.warnings() {
            crate::log_warn!(Module::Nrt, "{w}");
        }
        let (topology, reservation, devices, instance) = match &config.fake_instance {
            Some(fake) => {
                crate::log_info!(Module::Nrt, "no-device mode: pretending to run on {}", fake.name);
                // Devices handed in are kept for their descriptions (the
                // load pipeline gates on the architecture) but nothing is
                // reserved, reset or written.
                (plan.assume(), Vec::new(), options.devices.clone(), InstanceInfo::from_instance_name(&fake.name, fake.arch))
            }
            None => {
                let (topology, reservation) = plan.reserve(&options.devices)?;
                if config.reset_cores {
                    for r in &reservation {
                        let device = options
                            .devices
                            .iter()
                            .find(|d| d.info().device_index == r.device())
                            .ok_or_else(|| NrtError::failure(format!("reserved cores of unknown device {}", r.device())))?;
                        for &core in r.cores() {
                            device.reset_core(core).map_err(|e| {
                                NrtError::new(NrtStatus::HwError, format!("Failed to reset ND {}:NC {}: {e}", r.device(), core.0))
                            })?;
                        }
                    }
                }
                (topology, reservation, options.devices.clone(), InstanceInfo::from_devices(&shapes))
            }
        };
        let memories: Vec<Arc<DeviceMemory>> = devices
            .iter()
            .map(|d| {
                let m = DeviceMemory::new(Arc::clone(d));
                m.set_oom_log(config.oom_log);
                m.set_memlog_capacity(config.memlog_entries as usize);
                Arc::new(m)
            })
            .collect();
        if config.fake_instance.is_none()
            && let Some(first) = devices.first()
        {
            // The process's host tensors show in the first device's slot.
            crate::memory::host::publish_to(first);
        }
        if config.map_hbm && config.fake_instance.is_none() {
            for m in &memories {
                match m.map_hbm() {
                    Ok(w) => crate::log_debug!(Module::Nrt, "ND {}: {} HBM channels mapped into the process", m.device_index(), w.len()),
                    Err(e) if e.status == NrtStatus::Invalid => crate::log_warn!(Module::Nrt, "NEURON_RT_MAP_HBM: {}", e.message),
                    Err(e) => return Err(e),
                }
            }
        }
        // The POOL engine's Q7 image: the stock one, silently replaced by a
        // registered one (libnrt's override has no check and no log line).
        let (q7_image, q7_image_source) = ucode::resolve_install_image(Q7Image::stock(), options.pool_ucode.as_ref());
        for d in &devices {
            crate::custom_ops::q7::check_image_fits(d.info().arch, &q7_image)?;
        }
        log::write(
            Level::Debug,
            Module::Tdrv,
            "tpb_eng_init_hals_v2",
            format_args!("pool engine Q7 image: IRAM {} bytes, DRAM {} bytes", q7_image.iram.len(), q7_image.dram.len()),
        );
        let v = version();
        crate::log_info!(Module::Nrt, "Neuron Runtime {} (git {})", v.version, v.git_sha);
        crate::log_info!(
            Module::Nrt,
            "instance: {instance}; LNC {}; visible logical cores {} of {}",
            topology.lnc(),
            topology.visible_range(),
            topology.total_vnc()
        );
        let rt = Runtime {
            config,
            topology,
            devices,
            memories,
            reservation: Mutex::new(reservation),
            models: Arc::new(ModelDb::default()),
            close_hooks: Mutex::new(Vec::new()),
            instance,
            env: options.env.clone(),
            framework: options.framework,
            closed: AtomicBool::new(false),
            cc: crate::cc::Collectives::default(),
            doorbells: std::sync::OnceLock::new(),
            q7_image,
            q7_image_source,
        };
        crate::debug_stream::configure(crate::debug_stream::Settings {
            buffer_events: rt.config.debug_stream_buffer_events,
            output_dir: rt.config.debug_output_dir.clone(),
            logical_cores: Some(rt.topology.visible_vnc()),
            cores: rt.trace_core_map(),
        });
        Ok(rt)
    }

    /// NRT_CLOSED once [`Runtime::close`] ran.
    pub fn check_open(&self) -> NrtResult<()> {
        if self.closed.load(Ordering::Acquire) {
            Err(NrtError::new(NrtStatus::Closed, "NRT already closed"))
        } else {
            Ok(())
        }
    }

    /// Whether the runtime was closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The Q7 image the POOL engine's cores run (stock or registered).
    pub fn q7_image(&self) -> &Q7Image {
        &self.q7_image
    }

    /// Whether [`Runtime::q7_image`] is the stock image or the registered one.
    pub fn q7_image_source(&self) -> ImageSource {
        self.q7_image_source
    }

    /// The configuration read at init.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The logical cores.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Whether this is libnrt's no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE).
    pub fn is_fake(&self) -> bool {
        self.config.fake_instance.is_some()
    }

    /// The device at position `d` of the device list.
    pub fn device(&self, d: usize) -> NrtResult<&Arc<dyn Device>> {
        self.check_open()?;
        self.devices.get(d).ok_or_else(|| self.no_device(d))
    }

    /// Every device.
    pub fn devices(&self) -> &[Arc<dyn Device>] {
        &self.devices
    }

    /// The memory allocator of the device at position `d`.
    pub fn memory(&self, d: usize) -> NrtResult<&Arc<DeviceMemory>> {
        self.check_open()?;
        self.memories.get(d).ok_or_else(|| self.no_device(d))
    }

    fn no_device(&self, d: usize) -> NrtError {
        if self.is_fake() {
            NrtError::invalid(format!(
                "device {d} is not available in no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE): {} devices were handed in",
                self.devices.len()
            ))
        } else {
            NrtError::invalid(format!("device {d} does not exist (the runtime has {} devices)", self.devices.len()))
        }
    }

    /// `nrt_get_model_vnc_count`: the visible logical cores a loaded
    /// model's programs occupy, those of device position `device` holding
    /// one of its physical cores (in no-device mode, which stages no
    /// program, the one it was registered on). A load stages one NEFF on
    /// one logical core (the load calls' `vnc_count` is deprecated and
    /// ignored), so this is 1 for every model the runtime accepts.
    pub fn model_vnc_count(&self, model: &crate::model::LoadedModel, device: Option<usize>) -> u32 {
        let (Some(program), Some(d)) = (&model.program, device) else { return 1 };
        let cores: std::collections::BTreeSet<u32> = program.cores.iter().map(|c| c.core.core().0).collect();
        self.topology.vcores().iter().filter(|v| v.device == d && v.physical.iter().any(|p| cores.contains(&p.0))).count() as u32
    }

    /// `nrt_get_model_instance_count`: how many threads can usefully call
    /// `nrt_execute` on the model at once, the copies of its program
    /// staged on the device. A load stages one program and its executions
    /// hold the model's execution state one at a time, so every model
    /// has one instance (libnrt's older loads staged one per core of
    /// `nc_count`; that parameter is deprecated and ignored).
    pub fn model_instance_count(&self, _model: &crate::model::LoadedModel) -> u32 {
        1
    }

    /// The host's semaphore increment registers of every device's cores
    /// (`nec_inc_semaphore`, [`crate::nec::Doorbells`]).
    pub fn doorbells(&self) -> &crate::nec::Doorbells {
        self.doorbells.get_or_init(|| crate::nec::Doorbells::new(&self.devices))
    }

    /// The collectives of this runtime's logical cores (`crate::cc`).
    pub fn collectives(&self) -> &crate::cc::Collectives {
        &self.cc
    }

    /// The environment the runtime was configured from.
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// A visible logical core by process-local index.
    pub fn vcore(&self, n: u32) -> NrtResult<&VcoreInfo> {
        self.check_open()?;
        self.topology.vcore(n)
    }

    /// The process-local logical core holding physical core `core` of the
    /// device at position `device` (where a device tensor booked there
    /// lives: `nrt_tensor_get_lnc_index`); NRT_INVALID when no visible
    /// logical core holds it.
    pub fn vnc_holding(&self, device: usize, core: CoreId) -> NrtResult<u32> {
        self.check_open()?;
        let found = self.topology.vcores().iter().position(|v| v.device == device && v.physical.contains(&core));
        found.map(|i| i as u32).ok_or_else(|| NrtError::invalid(format!("NC {} of device {device} belongs to no visible logical core", core.0)))
    }

    /// The physical core whose DMA queues move a device tensor's bytes
    /// when logical core `vnc` is asked to (the `lnc_idx` of
    /// `nrta_tensor_read` / `nrta_tensor_write`): the tensor's own core
    /// (`core` of device position `device`) when `vnc` holds it, else
    /// `vnc`'s first physical core, whose engines reach the whole device's
    /// memory as hardware's do. NRT_INVALID naming `vnc` when it is not
    /// visible, or lives on another device than the tensor (one device's
    /// engines cannot address another's memory).
    pub fn transfer_core(&self, vnc: u32, device: usize, core: CoreId) -> NrtResult<CoreId> {
        let v = self.vcore(vnc)?;
        if v.device != device {
            return Err(NrtError::invalid(format!(
                "lnc_idx {vnc} is on device {} and the tensor on device {device}: a logical core's DMA engines move only its own device's memory",
                v.device
            )));
        }
        Ok(if v.physical.contains(&core) { core } else { v.physical[0] })
    }

    /// Where process-local logical core `vnc` lives: the device position
    /// and its index among that device's visible logical cores (the index
    /// a per-device model host uses).
    pub fn locate_vnc(&self, vnc: u32) -> NrtResult<(usize, u32)> {
        let v = self.vcore(vnc)?;
        let local = self.topology.vcores()[..vnc as usize].iter().filter(|o| o.device == v.device).count();
        Ok((v.device, local as u32))
    }

    /// The process-local logical core that is logical core `local` of the
    /// device at position `d` (the inverse of [`Runtime::locate_vnc`]).
    pub fn vnc_of(&self, d: usize, local: u32) -> NrtResult<u32> {
        self.check_open()?;
        let mine = self.topology.vcores().iter().enumerate().filter(|(_, v)| v.device == d).nth(local as usize);
        mine.map(|(i, _)| i as u32).ok_or_else(|| NrtError::invalid(format!("logical core {local} of device {d} is not visible")))
    }

    /// The physical cores of each visible logical core on the device at
    /// position `d`, in vcore order (what a per-device model host needs).
    pub fn device_vcores(&self, d: usize) -> Vec<Vec<nrt_hal::CoreId>> {
        self.topology.vcores().iter().filter(|v| v.device == d).map(|v| v.physical.clone()).collect()
    }

    /// Where every visible physical core sits, for a system-trace session:
    /// (device index, physical core, process-local logical core).
    pub fn trace_core_map(&self) -> crate::trace::CoreMap {
        let mut out = Vec::new();
        for (nc, v) in self.topology.vcores().iter().enumerate() {
            let device = self.devices.get(v.device).map_or(v.device as u32, |d| d.info().device_index);
            out.extend(v.physical.iter().map(|p| (device, p.0, nc as u32)));
        }
        out
    }

    /// `nrt_get_vnc_memory_stats`: bytes booked on the physical cores of
    /// logical core `vnc`, and the capacity of the HBM channels serving
    /// them.
    pub fn vnc_memory_stats(&self, vnc: u32) -> NrtResult<VncMemoryStats> {
        let v = self.vcore(vnc)?;
        let memory = self.memory(v.device)?;
        let ledger = memory.ledger();
        let bytes_used = v.physical.iter().map(|&c| ledger.core(c).total()).sum();
        let mut channels: Vec<u32> = v.physical.iter().map(|&c| memory.channel_of(c)).collect();
        channels.dedup();
        let bytes_limit = channels.iter().filter_map(|&c| ledger.channels.get(c as usize)).map(|c| c.capacity).sum();
        Ok(VncMemoryStats { bytes_used, bytes_limit })
    }

    /// The model database.
    pub fn models(&self) -> &ModelDb {
        &self.models
    }

    /// The model database as a shared handle, for the per-device model
    /// hosts (one database per runtime keeps model ids unique).
    pub fn shared_models(&self) -> Arc<ModelDb> {
        Arc::clone(&self.models)
    }

    /// Registers work for [`Runtime::close`]: hooks run newest first,
    /// before any model is dropped or device memory freed, so whoever
    /// loaded models (the model hosts) unloads them while their memory is
    /// still valid. A hook must not hold the runtime itself strongly.
    /// After close this returns NRT_CLOSED and the hook is not kept.
    pub fn on_close(&self, hook: impl FnOnce() -> NrtResult<()> + Send + 'static) -> NrtResult<()> {
        let mut hooks = self.close_hooks.lock().unwrap_or_else(|e| e.into_inner());
        self.check_open()?;
        hooks.push(Box::new(hook));
        Ok(())
    }

    /// Instance information.
    pub fn instance_info(&self) -> &InstanceInfo {
        &self.instance
    }

    /// The framework label given at init.
    pub fn framework(&self) -> FrameworkType {
        self.framework
    }

    /// Logical cores on the instance.
    pub fn total_vnc_count(&self) -> u32 {
        self.topology.total_vnc()
    }

    /// Logical cores visible to the process.
    pub fn visible_vnc_count(&self) -> u32 {
        self.topology.visible_vnc()
    }

    /// The infodump block for a failure of `api` with `status` (or without
    /// a failure line).
    pub fn infodump(&self, failure: Option<(NrtStatus, &str)>) -> String {
        let v = version();
        let backend = match self.devices.first() {
            Some(d) if !self.is_fake() => d.info().backend,
            _ => "none (no-device mode)",
        };
        Infodump {
            version: v.version,
            git_sha: v.git_sha,
            backend: backend.to_string(),
            instance: self.instance.to_string(),
            failure: failure.map(|(s, api)| (s, api.to_string())),
            lnc: Some(self.topology.lnc()),
            visible_cores: Some(self.topology.visible_range()),
            env: neuron_env(&self.env),
        }
        .render()
    }

    /// The usage tables of every device (what libnrt 2.33's
    /// `nrt_debug_log_oom_report` logs; not exported, its signature is not
    /// published).
    pub fn oom_report(&self) -> String {
        self.memories
            .iter()
            .map(|m| format!("Device memory usage of ND {}:\n{}", m.device_index(), m.oom_report()))
            .collect()
    }

    /// Logs [`Runtime::oom_report`] (at ERROR, so it shows with the default
    /// level, as an explicitly requested report should).
    pub fn log_oom_report(&self) {
        log::emit_block(Level::Error, Module::Tdrv, &self.oom_report());
    }

    /// Logs an API failure: the error line, then the infodump block when
    /// [`wants_infodump`] says so. The C layer calls this for every
    /// failing call.
    pub fn report_failure(&self, api: &str, err: &NrtError) {
        log::write(Level::Error, Module::Nrt, api, format_args!("{}", err.message));
        if wants_infodump(err.status) {
            log::emit_block(Level::Error, Module::Nrt, &self.infodump(Some((err.status, api))));
        }
    }

    /// `nrt_close`: runs the close hooks (newest first; the model hosts
    /// unload their models there), drops whatever models remain in the
    /// database, frees what is left on the devices and releases the core
    /// reservation. Later calls return NRT_CLOSED. Every step runs even if
    /// an earlier one failed; the first failure is returned.
    pub fn close(&self) -> NrtResult<()> {
        let hooks = {
            let mut hooks = self.close_hooks.lock().unwrap_or_else(|e| e.into_inner());
            if self.closed.swap(true, Ordering::AcqRel) {
                return Err(NrtError::new(NrtStatus::Closed, "NRT already closed"));
            }
            std::mem::take(&mut *hooks)
        };
        crate::log_debug!(Module::Nrt, "closing: {} models loaded, {} close hooks", self.models.ids().len(), hooks.len());
        let mut result = Ok(());
        for hook in hooks.into_iter().rev() {
            if let Err(e) = hook() {
                crate::log_error!(Module::Nrt, "close: {e}");
                if result.is_ok() {
                    result = Err(e);
                }
            }
        }
        self.unload_all_models();
        crate::debug_stream::close_all();
        for m in &self.memories {
            if let Err(e) = m.free_everything() {
                crate::log_error!(Module::Tdrv, "device memory of ND {} not fully released at close: {e}", m.device_index());
                if result.is_ok() {
                    result = Err(e);
                }
            }
        }
        self.reservation.lock().unwrap_or_else(|e| e.into_inner()).clear();
        crate::log_info!(Module::Nrt, "runtime closed");
        result
    }

    /// Removes every model from the database (a snapshot of ids, as
    /// libnrt's close does); their model tiers release their memory when
    /// the last reference drops, and `free_everything` catches the rest.
    fn unload_all_models(&self) {
        for id in self.models.ids() {
            if let Some(model) = self.models.remove(id) {
                crate::log_debug!(Module::Nmgr, "Unloading {id}");
                drop(model);
            }
        }
    }

    /// Physical cores currently reserved by this runtime, per device index.
    pub fn reserved_cores(&self) -> Vec<(u32, Vec<nrt_hal::CoreId>)> {
        self.reservation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| (r.device(), r.cores().to_vec()))
            .collect()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !self.closed.load(Ordering::Acquire) {
            let _ = self.close();
        }
    }
}

/// Where the process-wide runtime is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeState {
    /// `nrt_init` not called yet (libnrt's START).
    Uninitialized,
    /// Initialised.
    Init,
    /// `nrt_close` was called.
    Closed,
}

#[derive(Default)]
enum Slot {
    #[default]
    Uninitialized,
    Init(Arc<Runtime>),
    Closed,
}

/// The process-wide lifecycle the C API drives: at most one runtime,
/// NRT_UNINITIALIZED before init and NRT_CLOSED after close.
#[derive(Default)]
pub struct Lifecycle {
    slot: Mutex<Slot>,
    pool_ucode: Mutex<Option<Q7Image>>,
}

impl Lifecycle {
    /// An uninitialised lifecycle (usable in a `static`).
    pub const fn new() -> Lifecycle {
        Lifecycle { slot: Mutex::new(Slot::Uninitialized), pool_ucode: Mutex::new(None) }
    }

    /// The current state.
    pub fn state(&self) -> RuntimeState {
        match *self.slot.lock().unwrap_or_else(|e| e.into_inner()) {
            Slot::Uninitialized => RuntimeState::Uninitialized,
            Slot::Init(_) => RuntimeState::Init,
            Slot::Closed => RuntimeState::Closed,
        }
    }

    /// `nrt_set_pool_eng_ucode`: stores the Q7 image for the next init.
    /// Accepted only before init: NRT_UNINITIALIZED (0xd) while
    /// initialised, NRT_CLOSED (0xe) after close, as libnrt's guard.
    pub fn set_pool_eng_ucode(&self, image: Q7Image) -> NrtResult<()> {
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let state = match &*slot {
            Slot::Uninitialized => GuardState::Start,
            Slot::Init(_) => GuardState::Init,
            Slot::Closed => GuardState::Closed,
        };
        ucode::check_registration(state)?;
        *self.pool_ucode.lock().unwrap_or_else(|e| e.into_inner()) = Some(image);
        Ok(())
    }

    /// The image registered with [`Lifecycle::set_pool_eng_ucode`], if any.
    pub fn registered_pool_ucode(&self) -> Option<Q7Image> {
        self.pool_ucode.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `nrt_init`: initialises (or re-initialises after a close); if
    /// already initialised, returns the running runtime unchanged. A Q7
    /// image registered before init replaces the stock one.
    pub fn init(&self, mut options: RuntimeOptions) -> NrtResult<Arc<Runtime>> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Slot::Init(rt) = &*slot {
            return Ok(Arc::clone(rt));
        }
        if options.pool_ucode.is_none() {
            options.pool_ucode = self.registered_pool_ucode();
        }
        let rt = Arc::new(Runtime::init(options)?);
        *slot = Slot::Init(Arc::clone(&rt));
        Ok(rt)
    }

    /// The running runtime, or NRT_UNINITIALIZED / NRT_CLOSED.
    pub fn runtime(&self) -> NrtResult<Arc<Runtime>> {
        match &*self.slot.lock().unwrap_or_else(|e| e.into_inner()) {
            Slot::Init(rt) => Ok(Arc::clone(rt)),
            Slot::Uninitialized => Err(NrtError::new(NrtStatus::Uninitialized, "nrt_init has not been called")),
            Slot::Closed => Err(NrtError::new(NrtStatus::Closed, "NRT already closed")),
        }
    }

    /// `nrt_close`: closes the runtime if initialised; in any other state
    /// logs "Unexpected runtime state" and returns its status.
    pub fn close(&self) -> NrtResult<()> {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *slot, Slot::Closed) {
            Slot::Init(rt) => rt.close(),
            Slot::Uninitialized => {
                *slot = Slot::Uninitialized;
                crate::log_error!(Module::Nrt, "Unexpected runtime state: NRT_STATE_START");
                Err(NrtError::new(NrtStatus::Uninitialized, "Unexpected runtime state: NRT_STATE_START"))
            }
            Slot::Closed => {
                crate::log_error!(Module::Nrt, "Unexpected runtime state: NRT_STATE_CLOSED");
                Err(NrtError::new(NrtStatus::Closed, "Unexpected runtime state: NRT_STATE_CLOSED"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_is_shareable_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Runtime>();
        assert_send_sync::<Lifecycle>();
        static GLOBAL: Lifecycle = Lifecycle::new();
        assert_eq!(GLOBAL.state(), RuntimeState::Uninitialized);
    }

    #[test]
    fn version_comes_from_the_package() {
        let v = version();
        let expected: Vec<u64> = env!("CARGO_PKG_VERSION").split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(vec![v.major, v.minor, v.patch], expected);
        assert_eq!(v.version, format!("nrt-rs {}.{}.{}.0", v.major, v.minor, v.patch));
        assert_eq!(v.git_sha.len(), 40);
    }

    #[test]
    fn lifecycle_before_init_and_double_close() {
        let l = Lifecycle::new();
        assert_eq!(l.state(), RuntimeState::Uninitialized);
        assert_eq!(l.runtime().unwrap_err().status, NrtStatus::Uninitialized);
        assert_eq!(l.close().unwrap_err().status, NrtStatus::Uninitialized);
        assert_eq!(l.state(), RuntimeState::Uninitialized);
    }

    #[test]
    fn init_without_devices_is_invalid() {
        let cap = log::capture(Level::Error);
        let e = Runtime::init(RuntimeOptions::new(Vec::new(), Env::new())).unwrap_err();
        assert_eq!(e.status, NrtStatus::Invalid);
        assert!(e.message.starts_with("Cannot find Neuron devices"), "{e}");
        // An argument error is one line: the support dump is for failures
        // a user would report (docs/configuration.md).
        assert!(cap.contains("Cannot find Neuron devices") && !cap.contains("Failure: NRT_INVALID in nrt_init()"), "{}", cap.text());
    }

    #[test]
    fn no_device_mode_needs_no_devices() {
        let env = Env::new().with("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge");
        assert_eq!(total_vnc_count(&env, &[]).unwrap(), 64);
        assert_eq!(visible_vnc_count(&env.clone().with("NEURON_RT_VISIBLE_CORES", "4-7"), &[]).unwrap(), 4);
        assert_eq!(instance_info(&env, &[]).unwrap().family.value(), 5);
        let rt = Runtime::init(RuntimeOptions::new(Vec::new(), env)).unwrap();
        assert!(rt.is_fake());
        assert_eq!(rt.visible_vnc_count(), 64);
        assert_eq!(rt.vcore(63).unwrap().device, 15);
        assert!(rt.memory(0).unwrap_err().message.contains("no-device mode"));
        rt.close().unwrap();
        assert_eq!(rt.vcore(0).unwrap_err().status, NrtStatus::Closed);
        assert_eq!(rt.close().unwrap_err().status, NrtStatus::Closed);
    }
}
