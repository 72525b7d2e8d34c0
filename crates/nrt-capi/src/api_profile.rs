//! `nrt_profile.h` (device profiles, continuous profiling, inspect) and
//! `nrt_trace_start/stop` of `nrt_experimental.h`, over the runtime
//! core's profile captures ([`nrt_core::profile::capture`]) and system
//! trace ([`nrt_core::trace`]).
//!
//! Files are our documented formats (docs/trace-formats.md): a device
//! profile is Chrome trace-event JSON at exactly the path the caller
//! names (`.ntff` included) plus `<path>.summary.json`; an inspect
//! session writes under `<output_dir>/<instance>_pid_<pid>/`.

use crate::api_sys_trace::write_list;
use crate::global::{self, MODELS};
use crate::handles::Registry;
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::model::{LoadedModel, ModelId};
use nrt_core::profile::capture::{self, Keep};
use nrt_core::trace::{EventType, FetchOptions, TraceConfig};
use nrt_core::{NrtError, NrtResult};
use std::ffi::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// Default output directory of continuous profiling and inspect.
pub const DEFAULT_OUTPUT_DIR: &str = nrt_core::config::DEFAULT_INSPECT_OUTPUT_DIR;

/// The inspect activities, in `nrt_inspect_config_get_all_activity_types` order.
pub const ACTIVITIES: [&str; 4] = ["system_profile", "device_profile", "host_memory", "cpu_util"];

/// What `nrt_inspect_config_t` holds (defaults: session 1, `./output`,
/// every activity, every core and event type, inspect and inspect-on-fail
/// off).
#[derive(Clone, Debug)]
pub struct InspectConfig {
    /// Session id (in file names).
    pub session_id: i32,
    /// Output root.
    pub output_dir: PathBuf,
    /// Enabled activities (bit i = `ACTIVITIES[i]`).
    pub activities: u8,
    /// The system-trace part (cores, event types, ring size).
    pub trace: TraceConfig,
    /// Capture everything.
    pub enable_inspect: bool,
    /// Keep device profiles of failed executions.
    pub enable_inspect_on_fail: bool,
}

impl Default for InspectConfig {
    fn default() -> InspectConfig {
        InspectConfig {
            session_id: 1,
            output_dir: PathBuf::from(DEFAULT_OUTPUT_DIR),
            activities: 0b1111,
            trace: TraceConfig::default(),
            enable_inspect: false,
            enable_inspect_on_fail: false,
        }
    }
}

impl InspectConfig {
    fn has(&self, activity: &str) -> bool {
        ACTIVITIES.iter().position(|a| *a == activity).is_some_and(|i| self.activities & (1 << i) != 0)
    }

    /// The configuration the NEURON_RT_INSPECT_* variables describe (what
    /// `nrt_inspect_begin` uses), as the runtime's configuration reads
    /// them: inspect on, the output dir, the activities' switches, inspect
    /// on fail, the event filters.
    pub fn from_session(s: &nrt_core::config::InspectSession) -> InspectConfig {
        let on = [s.system_profile, s.device_profile, s.host_memory, s.cpu_util];
        InspectConfig {
            output_dir: s.output_dir.clone(),
            activities: on.iter().enumerate().filter(|(_, on)| **on).fold(0, |m, (i, _)| m | (1 << i)),
            trace: s.trace.clone(),
            enable_inspect: true,
            enable_inspect_on_fail: s.on_fail,
            ..Default::default()
        }
    }
}

/// A running inspect session.
struct Inspect {
    config: InspectConfig,
    dir: PathBuf,
    /// Models whose device profile this session captures.
    models: Vec<ModelId>,
    /// Whether this session started the system trace.
    system: bool,
    /// Host samples at begin.
    host_begin: HostSample,
}

/// Profiles in progress in the process.
#[derive(Default)]
struct Profiles {
    /// `nrt_profile_start` captures: (model, the file name given at start).
    single: Vec<(ModelId, Option<String>)>,
    /// Continuous profiling: the models kept instrumented, the output dir.
    continuous: Option<(Vec<ModelId>, PathBuf)>,
    inspect: Option<Inspect>,
    /// `nrt_trace_start`: whether it started the system trace.
    api_trace: bool,
}

static PROFILES: LazyLock<Mutex<Profiles>> = LazyLock::new(Mutex::default);
/// Live `nrt_profile_continuous_options_t` handles (the output dir).
static CONTINUOUS_OPTIONS: LazyLock<Registry<Mutex<PathBuf>>> = LazyLock::new(|| Registry::new("nrt_profile_continuous_options_t"));
/// Live `nrt_inspect_config_t` handles.
static INSPECT_CONFIGS: LazyLock<Registry<Mutex<InspectConfig>>> = LazyLock::new(|| Registry::new("nrt_inspect_config_t"));

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends every profile and capture (runtime close, before the models are
/// unloaded): nothing is written.
pub fn forget_all(h: &global::Hosts) {
    let mut p = lock(&PROFILES);
    let mut ids: Vec<ModelId> = p.single.drain(..).map(|(m, _)| m).collect();
    ids.extend(p.continuous.take().map(|(m, _)| m).unwrap_or_default());
    ids.extend(p.inspect.take().map(|i| i.models).unwrap_or_default());
    for id in ids {
        if let Some(m) = h.rt.shared_models().get(id) {
            let _ = capture::stop(&m);
        }
    }
    p.api_trace = false;
    nrt_core::trace::stop();
}

/// The loaded model `id` (NRT_INVALID_HANDLE once unloaded).
fn loaded(h: &global::Hosts, id: ModelId) -> NrtResult<Arc<LoadedModel>> {
    h.rt.shared_models().get(id).ok_or_else(|| NrtError::new(nrt_core::NrtStatus::InvalidHandle, format!("model {id} was unloaded while it was being profiled")))
}

fn model_of(h: &global::Hosts, handle: *mut c_void) -> NrtResult<Arc<LoadedModel>> {
    let m = MODELS.get(handle as usize)?;
    h.model(&m)
}

/// Every loaded model with a device program.
fn device_models(h: &global::Hosts) -> Vec<Arc<LoadedModel>> {
    let db = h.rt.shared_models();
    db.ids().into_iter().filter_map(|id| db.get(id)).filter(|m| m.program.is_some()).collect()
}

/// Starts a capture on every model of `models`; undoes them all on the
/// first failure.
fn start_all(models: &[Arc<LoadedModel>], keep: Keep) -> NrtResult<()> {
    for (i, m) in models.iter().enumerate() {
        if let Err(e) = capture::start(m, keep) {
            for done in &models[..i] {
                let _ = capture::stop(done);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// `nrt_profile_start`: instruments `model` so its executions until
/// `nrt_profile_stop` are profiled. NRT_INVALID when it is already
/// profiled (by any of the profile calls).
///
/// # Safety
/// `filename` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_profile_start(model: *mut c_void, filename: *const c_char) -> NRT_STATUS {
    call("nrt_profile_start", || {
        let h = global::hosts()?;
        let m = model_of(&h, model)?;
        // SAFETY: per the caller.
        let name = (!filename.is_null()).then(|| unsafe { ptr::string_or_empty(filename) });
        let mut p = lock(&PROFILES);
        capture::start(&m, Keep::All)?;
        p.single.push((m.id, name));
        Ok(())
    })
}

/// `nrt_profile_stop`: writes the profile of the executions since
/// `nrt_profile_start` to `filename` (plus `<filename>.summary.json`) and
/// restores the model's images. The profile is the one started with the
/// same file name, else the only one running.
///
/// # Safety
/// `filename` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_profile_stop(filename: *const c_char) -> NRT_STATUS {
    call("nrt_profile_stop", || {
        let h = global::hosts()?;
        // SAFETY: per the caller.
        let path = unsafe { ptr::string(filename, "filename") }?;
        if path.is_empty() {
            return Err(NrtError::invalid("filename is empty; expected the path of the profile to write"));
        }
        let mut p = lock(&PROFILES);
        let i = match p.single.iter().rposition(|(_, n)| n.as_deref() == Some(path.as_str())) {
            Some(i) => i,
            None if p.single.len() == 1 => 0,
            None => return Err(NrtError::invalid(format!("no device profile was started for {path:?} (nrt_profile_start); {} running", p.single.len()))),
        };
        let (id, _) = p.single.remove(i);
        let m = loaded(&h, id)?;
        let c = capture::stop(&m)?;
        let w = capture::write_profile(Path::new(&path), &m, c.executions())?;
        nrt_core::log_info!(
            nrt_core::log::Module::Nrt,
            "device profile of model {} \"{}\": {} executions, {} instructions written to {}",
            m.id,
            m.name,
            c.executions().len(),
            w.instructions,
            w.trace.display()
        );
        Ok(())
    })
}

/// `nrt_profile_continuous_options_allocate`: output dir `./output`.
///
/// # Safety
/// `options` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_profile_continuous_options_allocate(options: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_profile_continuous_options_allocate", || {
        non_null(options, "options")?;
        let h = CONTINUOUS_OPTIONS.insert(Mutex::new(PathBuf::from(DEFAULT_OUTPUT_DIR)));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(options, h as *mut c_void) };
        Ok(())
    })
}

/// `nrt_profile_continuous_options_free`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_continuous_options_free(options: *mut c_void) -> NRT_STATUS {
    call("nrt_profile_continuous_options_free", || CONTINUOUS_OPTIONS.remove(options as usize).map(drop))
}

/// `nrt_profile_continuous_options_set_output_dir` (copied; empty is NRT_INVALID).
///
/// # Safety
/// `output_dir` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_profile_continuous_options_set_output_dir(options: *mut c_void, output_dir: *const c_char) -> NRT_STATUS {
    call("nrt_profile_continuous_options_set_output_dir", || {
        let o = CONTINUOUS_OPTIONS.get(options as usize)?;
        // SAFETY: per the caller.
        let dir = unsafe { ptr::string(output_dir, "output_dir") }?;
        if dir.is_empty() {
            return Err(NrtError::invalid("output_dir is empty; expected a directory path"));
        }
        *lock(&o) = PathBuf::from(dir);
        Ok(())
    })
}

fn continuous_dir(options: *mut c_void) -> NrtResult<PathBuf> {
    if options.is_null() {
        return Ok(PathBuf::from(DEFAULT_OUTPUT_DIR));
    }
    let o = CONTINUOUS_OPTIONS.get(options as usize)?;
    let dir = lock(&o).clone();
    Ok(dir)
}

/// `nrt_profile_continuous_start`: keeps every loaded model instrumented
/// and its latest execution's trace in memory. Refused (NRT_INVALID)
/// while inspect device profiling runs, in implicit async mode, or when
/// continuous profiling already runs. `options` NULL means defaults.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_continuous_start(options: *mut c_void) -> NRT_STATUS {
    call("nrt_profile_continuous_start", || {
        let h = global::hosts()?;
        let dir = continuous_dir(options)?;
        let mut p = lock(&PROFILES);
        if p.continuous.is_some() {
            return Err(NrtError::invalid("continuous profiling is already running"));
        }
        if p.inspect.as_ref().is_some_and(|i| i.config.has("device_profile")) {
            return Err(NrtError::invalid("continuous profiling cannot run while an inspect session captures device profiles"));
        }
        if h.rt.config().async_exec_max_inflight_requests > 0 {
            return Err(NrtError::invalid("continuous profiling is not supported in async execution mode (NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0)"));
        }
        let models = device_models(&h);
        start_all(&models, Keep::Last)?;
        p.continuous = Some((models.iter().map(|m| m.id).collect(), dir));
        Ok(())
    })
}

/// `nrt_profile_continuous_save`: writes the latest profiled execution on
/// logical core `vnc` to `<output_dir>/profile_vnc<vnc>_model<id>_exec<n>.ntff`
/// (plus its summary); profiling continues. `options` NULL means the
/// directory given at start.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_continuous_save(vnc: u32, options: *mut c_void) -> NRT_STATUS {
    call("nrt_profile_continuous_save", || {
        let h = global::hosts()?;
        let (d, local) = h.rt.locate_vnc(vnc)?;
        let device_index = h.rt.device(d)?.info().device_index;
        let p = lock(&PROFILES);
        let (models, start_dir) = p.continuous.as_ref().ok_or_else(|| NrtError::invalid("continuous profiling is not running (nrt_profile_continuous_start)"))?;
        let dir = if options.is_null() { start_dir.clone() } else { continuous_dir(options)? };
        let mut best: Option<(u64, Arc<LoadedModel>, capture::CapturedExecution)> = None;
        let models: Vec<Arc<LoadedModel>> = models.iter().filter_map(|id| h.rt.shared_models().get(*id)).collect();
        for m in models.into_iter().filter(|m| m.vnc == local) {
            let on_device = m.program.as_ref().is_some_and(|pr| pr.cores[0].core.device().info().device_index == device_index);
            if !on_device {
                continue;
            }
            if let Ok(Some(last)) = capture::with_capture(&m, |c| c.executions().last().cloned())
                && best.as_ref().is_none_or(|(o, _, _)| last.order > *o)
            {
                best = Some((last.order, m, last));
            }
        }
        let (_, m, last) = best.ok_or_else(|| NrtError::invalid(format!("no profiled execution on logical core {vnc} since continuous profiling started")))?;
        let path = dir.join(format!("profile_vnc{vnc}_model{}_exec{}.ntff", m.id, last.index));
        capture::write_profile(&path, &m, std::slice::from_ref(&last))?;
        Ok(())
    })
}

/// `nrt_profile_continuous_stop`: ends continuous profiling without
/// saving (images restored).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_profile_continuous_stop() -> NRT_STATUS {
    call("nrt_profile_continuous_stop", || {
        let h = global::hosts()?;
        let (models, _) = lock(&PROFILES).continuous.take().ok_or_else(|| NrtError::invalid("continuous profiling is not running"))?;
        // A model unloaded meanwhile took its capture with it.
        for m in models.iter().filter_map(|id| h.rt.shared_models().get(*id)) {
            let _ = capture::stop(&m);
        }
        Ok(())
    })
}

/// Host samples an inspect session writes (`host_memory`, `cpu_util`).
#[derive(Clone, Debug, Default)]
struct HostSample {
    /// ns since the epoch.
    at_ns: u64,
    /// Resident set of the process (bytes), from /proc/self/statm.
    rss_bytes: Option<u64>,
    /// Per CPU (busy, total) jiffies, from /proc/stat.
    cpus: Vec<(String, u64, u64)>,
}

fn sample_host() -> HostSample {
    let page = 4096u64;
    let rss_bytes = std::fs::read_to_string("/proc/self/statm").ok().and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok()).map(|p| p * page);
    let cpus = std::fs::read_to_string("/proc/stat")
        .map(|s| {
            s.lines()
                .filter(|l| l.starts_with("cpu"))
                .filter_map(|l| {
                    let mut it = l.split_whitespace();
                    let name = it.next()?.to_string();
                    let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
                    let total: u64 = v.iter().sum();
                    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
                    Some((name, total.saturating_sub(idle), total))
                })
                .collect()
        })
        .unwrap_or_default();
    HostSample { at_ns: nrt_core::trace::now_ns(), rss_bytes, cpus }
}

fn instance_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = nrt_core::profile::sanitize(host.trim());
    if host == "model" { "localhost".to_string() } else { host }
}

fn begin(h: &global::Hosts, config: InspectConfig) -> NrtResult<()> {
    let mut p = lock(&PROFILES);
    if p.inspect.is_some() {
        return Err(NrtError::invalid("an inspect session is already running; call nrt_inspect_stop first"));
    }
    if !config.enable_inspect && !config.enable_inspect_on_fail {
        // Nothing to capture: both switches are off.
        nrt_core::log_info!(nrt_core::log::Module::Nrt, "inspect: enable_inspect and enable_inspect_on_fail are both off; nothing is captured");
        return Ok(());
    }
    let dir = config.output_dir.join(format!("{}_pid_{}", instance_id(), std::process::id()));
    let system = config.enable_inspect && config.has("system_profile");
    let device = config.has("device_profile");
    if device && p.continuous.is_some() {
        return Err(NrtError::invalid("inspect device profiling cannot run while continuous profiling runs"));
    }
    if system {
        nrt_core::trace::start(&config.trace, h.rt.trace_core_map())?;
    }
    let models = if device { device_models(h) } else { Vec::new() };
    let keep = if config.enable_inspect { Keep::All } else { Keep::Failed };
    let models = models.into_iter().filter(|m| config.trace.core_enabled(h_vnc(h, m))).collect::<Vec<_>>();
    if let Err(e) = start_all(&models, keep) {
        if system {
            nrt_core::trace::stop();
        }
        return Err(e);
    }
    p.inspect = Some(Inspect { config, dir, models: models.iter().map(|m| m.id).collect(), system, host_begin: sample_host() });
    Ok(())
}

/// The process-local logical core of a loaded model.
fn h_vnc(h: &global::Hosts, m: &LoadedModel) -> u32 {
    match &m.program {
        Some(p) => {
            let c = &p.cores[0].core;
            h.rt.trace_core_map().iter().find(|(d, pc, _)| *d == c.device().info().device_index && *pc == c.core().0).map_or(m.vnc, |x| x.2)
        }
        None => m.vnc,
    }
}

/// `nrt_inspect_begin`: an inspect session configured by the
/// NEURON_RT_INSPECT_* variables.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_begin() -> NRT_STATUS {
    call("nrt_inspect_begin", || {
        let h = global::hosts()?;
        // Read again here: launchers set NEURON_RT_INSPECT_* after nrt_init.
        let session = nrt_core::config::InspectSession::from_env(&nrt_core::config::Env::from_process())?;
        let cfg = InspectConfig::from_session(&session);
        begin(&h, cfg)
    })
}

/// `nrt_inspect_begin_with_options`: an inspect session as `options`
/// says (NULL: the defaults, which capture nothing); environment
/// variables are ignored.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_begin_with_options(options: *mut c_void) -> NRT_STATUS {
    call("nrt_inspect_begin_with_options", || {
        let h = global::hosts()?;
        let cfg = if options.is_null() {
            InspectConfig::default()
        } else {
            let c = INSPECT_CONFIGS.get(options as usize)?;
            lock(&c).clone()
        };
        begin(&h, cfg)
    })
}

/// `nrt_inspect_stop`: ends the inspect session and writes what it
/// captured under `<output_dir>/<instance>_pid_<pid>/`: `ntrace.json`
/// (the fetched-events document) and `ntrace.perfetto.json` (the same as
/// Chrome trace JSON), one `profile_nc<vnc>_model<id>_session<k>.ntff`
/// (plus summary) per profiled model that executed, `host_mem.json`,
/// `cpu_util.json`. NRT_INVALID when no session runs.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_stop() -> NRT_STATUS {
    call("nrt_inspect_stop", || {
        let h = global::hosts()?;
        let i = lock(&PROFILES).inspect.take().ok_or_else(|| NrtError::invalid("no inspect session is running (nrt_inspect_begin)"))?;
        let io = |p: &Path, e: std::io::Error| NrtError::failure(format!("writing {}: {e}", p.display()));
        std::fs::create_dir_all(&i.dir).map_err(|e| io(&i.dir, e))?;
        let mut first_err = None;
        if i.system {
            let (events, lost) = nrt_core::trace::take(&FetchOptions::default())?;
            nrt_core::trace::stop();
            for (name, text) in [("ntrace.json", nrt_core::trace::events_json(&events, &lost)), ("ntrace.perfetto.json", nrt_core::trace::chrome::chrome_json(&events))] {
                let p = i.dir.join(name);
                if let Err(e) = std::fs::write(&p, text) {
                    first_err.get_or_insert(io(&p, e));
                }
            }
        }
        for m in i.models.iter().filter_map(|id| h.rt.shared_models().get(*id)) {
            let Ok(c) = capture::stop(&m) else { continue };
            if c.executions().is_empty() {
                continue;
            }
            let p = i.dir.join(format!("profile_nc{}_model{}_session{}.ntff", h_vnc(&h, &m), m.id, i.config.session_id));
            if let Err(e) = capture::write_profile(&p, &m, c.executions()) {
                first_err.get_or_insert(e);
            }
        }
        let end = sample_host();
        if i.config.enable_inspect && i.config.has("host_memory") {
            let rss = |s: &HostSample| s.rss_bytes.map_or("null".to_string(), |b| b.to_string());
            let text = format!(
                "{{\"host_mem\":[{{\"timestamp\":{},\"usage\":{}}},{{\"timestamp\":{},\"usage\":{}}}]}}\n",
                i.host_begin.at_ns,
                rss(&i.host_begin),
                end.at_ns,
                rss(&end)
            );
            let p = i.dir.join("host_mem.json");
            if let Err(e) = std::fs::write(&p, text) {
                first_err.get_or_insert(io(&p, e));
            }
        }
        if i.config.enable_inspect && i.config.has("cpu_util") {
            let mut rows = Vec::new();
            for (name, busy, total) in &end.cpus {
                if let Some((_, b0, t0)) = i.host_begin.cpus.iter().find(|(n, _, _)| n == name) {
                    let util = if total > t0 { 100.0 * busy.saturating_sub(*b0) as f64 / (total - t0) as f64 } else { 0.0 };
                    rows.push(format!("{{\"cpu_id\":\"{name}\",\"timestamp\":{},\"duration\":{},\"util\":{util:.2}}}", i.host_begin.at_ns, end.at_ns.saturating_sub(i.host_begin.at_ns)));
                }
            }
            let p = i.dir.join("cpu_util.json");
            if let Err(e) = std::fs::write(&p, format!("{{\"cpu_util\":[{}]}}\n", rows.join(","))) {
                first_err.get_or_insert(io(&p, e));
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })
}

/// `nrt_inspect_config_allocate`: the defaults (see [`InspectConfig`]).
///
/// # Safety
/// `options` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_allocate(options: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_inspect_config_allocate", || {
        non_null(options, "options")?;
        let h = INSPECT_CONFIGS.insert(Mutex::new(InspectConfig::default()));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(options, h as *mut c_void) };
        Ok(())
    })
}

fn with_inspect(options: *mut c_void, f: impl FnOnce(&mut InspectConfig) -> NrtResult<()>) -> NrtResult<()> {
    let c = INSPECT_CONFIGS.get(options as usize)?;
    let mut g = lock(&c);
    f(&mut g)
}

/// `nrt_inspect_config_set_defaults`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_defaults(options: *mut c_void) -> NRT_STATUS {
    call("nrt_inspect_config_set_defaults", || {
        with_inspect(options, |c| {
            *c = InspectConfig::default();
            Ok(())
        })
    })
}

/// `nrt_inspect_config_free`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_free(options: *mut c_void) -> NRT_STATUS {
    call("nrt_inspect_config_free", || INSPECT_CONFIGS.remove(options as usize).map(drop))
}

/// `nrt_inspect_config_set_session_id`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_session_id(options: *mut c_void, session_id: i32) -> NRT_STATUS {
    call("nrt_inspect_config_set_session_id", || {
        with_inspect(options, |c| {
            c.session_id = session_id;
            Ok(())
        })
    })
}

/// `nrt_inspect_config_set_output_dir`: copies the string; NULL or empty
/// is NRT_INVALID.
///
/// # Safety
/// `output_dir` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_set_output_dir(options: *mut c_void, output_dir: *const c_char) -> NRT_STATUS {
    call("nrt_inspect_config_set_output_dir", || {
        // SAFETY: per the caller.
        let dir = unsafe { ptr::string(output_dir, "output_dir") }?;
        if dir.is_empty() {
            return Err(NrtError::invalid("output_dir is empty; expected a directory path"));
        }
        with_inspect(options, |c| {
            c.output_dir = PathBuf::from(dir);
            Ok(())
        })
    })
}

/// `nrt_inspect_config_set_sys_trace_max_events_per_nc`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_sys_trace_max_events_per_nc(options: *mut c_void, max_events: u64) -> NRT_STATUS {
    call("nrt_inspect_config_set_sys_trace_max_events_per_nc", || {
        with_inspect(options, |c| {
            c.trace.max_events_per_nc = max_events;
            Ok(())
        })
    })
}

/// `nrt_inspect_config_set_capture_enabled_for_nc`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_capture_enabled_for_nc(options: *mut c_void, nc_idx: u32, enabled: bool) -> NRT_STATUS {
    call("nrt_inspect_config_set_capture_enabled_for_nc", || {
        with_inspect(options, |c| {
            c.trace.set_core(nc_idx, enabled);
            Ok(())
        })
    })
}

/// `nrt_inspect_config_set_capture_enabled_for_event_type_string`:
/// NRT_INVALID for an unknown type.
///
/// # Safety
/// `event_type` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_set_capture_enabled_for_event_type_string(options: *mut c_void, event_type: *const c_char, enabled: bool) -> NRT_STATUS {
    call("nrt_inspect_config_set_capture_enabled_for_event_type_string", || {
        // SAFETY: per the caller.
        let name = unsafe { ptr::string(event_type, "event_type") }?;
        with_inspect(options, |c| c.trace.set_type(&name, enabled))
    })
}

/// `nrt_inspect_config_set_enable_inspect`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_enable_inspect(options: *mut c_void, enabled: bool) -> NRT_STATUS {
    call("nrt_inspect_config_set_enable_inspect", || {
        with_inspect(options, |c| {
            c.enable_inspect = enabled;
            Ok(())
        })
    })
}

/// `nrt_inspect_config_set_enable_inspect_on_fail`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_inspect_config_set_enable_inspect_on_fail(options: *mut c_void, enabled: bool) -> NRT_STATUS {
    call("nrt_inspect_config_set_enable_inspect_on_fail", || {
        with_inspect(options, |c| {
            c.enable_inspect_on_fail = enabled;
            Ok(())
        })
    })
}

/// `nrt_inspect_config_get_all_activity_types`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_get_all_activity_types(activity_types: *mut *mut *const c_char, count: *mut usize) -> NRT_STATUS {
    // SAFETY: per the caller.
    call("nrt_inspect_config_get_all_activity_types", || unsafe { write_list(&ACTIVITIES, activity_types, count, "the activity list") })
}

/// `nrt_inspect_config_get_enabled_activity_types`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_get_enabled_activity_types(options: *mut c_void, activity_types: *mut *mut *const c_char, count: *mut usize) -> NRT_STATUS {
    call("nrt_inspect_config_get_enabled_activity_types", || {
        let c = INSPECT_CONFIGS.get(options as usize)?;
        let on: Vec<&str> = ACTIVITIES.iter().copied().filter(|a| lock(&c).has(a)).collect();
        // SAFETY: per the caller.
        unsafe { write_list(&on, activity_types, count, "the activity list") }
    })
}

/// `nrt_inspect_config_free_activity_types`.
///
/// # Safety
/// `activity_types` must be NULL or a list from this library of `count` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_free_activity_types(activity_types: *mut *const c_char, count: usize) {
    // SAFETY: per the caller.
    unsafe { crate::cmem::free_list(activity_types, count) };
}

/// `nrt_inspect_config_set_activity`: one of the activities or `all`;
/// anything else is NRT_INVALID.
///
/// # Safety
/// `activity_type` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_inspect_config_set_activity(options: *mut c_void, activity_type: *const c_char, enabled: bool) -> NRT_STATUS {
    call("nrt_inspect_config_set_activity", || {
        // SAFETY: per the caller.
        let name = unsafe { ptr::string(activity_type, "activity_type") }?;
        let mask = if name == "all" {
            0b1111
        } else {
            let i = ACTIVITIES
                .iter()
                .position(|a| *a == name)
                .ok_or_else(|| NrtError::invalid(format!("unknown inspect activity {name:?}; expected one of {} or \"all\"", ACTIVITIES.join(", "))))?;
            1u8 << i
        };
        with_inspect(options, |c| {
            if enabled {
                c.activities |= mask;
            } else {
                c.activities &= !mask;
            }
            Ok(())
        })
    })
}

/// `nrt_trace_start`: starts a system trace of the runtime's software
/// events (plus tensor allocations and frees when `trace_mem`), written
/// by `nrt_trace_stop`. NRT_INVALID while a system trace runs.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_trace_start(trace_mem: bool) -> NRT_STATUS {
    call("nrt_trace_start", || {
        let h = global::hosts()?;
        let mut p = lock(&PROFILES);
        let mut cfg = TraceConfig::default();
        if !trace_mem {
            cfg.types &= !(EventType::NrtTensorAllocate.bit() | EventType::NrtTensorFree.bit());
        }
        nrt_core::trace::start(&cfg, h.rt.trace_core_map())?;
        p.api_trace = true;
        Ok(())
    })
}

/// `nrt_trace_stop`: writes what `nrt_trace_start` captured to `filename`
/// as Chrome trace-event JSON (Perfetto) and stops the trace.
///
/// # Safety
/// `filename` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_trace_stop(filename: *const c_char) -> NRT_STATUS {
    call("nrt_trace_stop", || {
        global::hosts()?;
        // SAFETY: per the caller.
        let path = unsafe { ptr::string(filename, "filename") }?;
        let mut p = lock(&PROFILES);
        if !p.api_trace {
            return Err(NrtError::invalid("nrt_trace_start was not called"));
        }
        let (events, _) = nrt_core::trace::take(&FetchOptions::default())?;
        nrt_core::trace::stop();
        p.api_trace = false;
        std::fs::write(&path, nrt_core::trace::chrome::chrome_json(&events)).map_err(|e| NrtError::failure(format!("writing {path}: {e}")))
    })
}

/// Model ids currently profiled through `nrt_profile_start` (tests).
pub fn profiled_models() -> Vec<ModelId> {
    lock(&PROFILES).single.iter().map(|(m, _)| *m).collect()
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_trace_start,
    nrt_trace_stop,
    nrt_profile_start,
    nrt_profile_stop,
    nrt_profile_continuous_options_allocate,
    nrt_profile_continuous_options_free,
    nrt_profile_continuous_options_set_output_dir,
    nrt_profile_continuous_start,
    nrt_profile_continuous_save,
    nrt_profile_continuous_stop,
    nrt_inspect_begin,
    nrt_inspect_stop,
    nrt_inspect_config_allocate,
    nrt_inspect_config_set_defaults,
    nrt_inspect_config_free,
    nrt_inspect_config_set_session_id,
    nrt_inspect_config_set_output_dir,
    nrt_inspect_config_set_sys_trace_max_events_per_nc,
    nrt_inspect_config_set_capture_enabled_for_nc,
    nrt_inspect_config_set_capture_enabled_for_event_type_string,
    nrt_inspect_config_set_enable_inspect,
    nrt_inspect_config_set_enable_inspect_on_fail,
    nrt_inspect_begin_with_options,
    nrt_inspect_config_get_all_activity_types,
    nrt_inspect_config_get_enabled_activity_types,
    nrt_inspect_config_free_activity_types,
    nrt_inspect_config_set_activity,
);
