//! Runtime configuration from NEURON_RT_* variables, read once at init.
//!
//! This module is the only reader of the runtime's variables: every
//! `NEURON_RT_*` value (and `NEURON_LOGICAL_NC_CONFIG`,
//! `NEURON_FAIL_ON_NAN`) is parsed here, with one rule, and the layers
//! take typed values from [`Config`]; the crates below the runtime
//! (`nrt-net`, `nrt-sim`) read none of them (a test scans the sources).
//! [`Config::from_env`] validates every value it knows: an invalid value
//! is an init error (NRT_INVALID) naming the variable, the value and what
//! is accepted. Unknown NEURON_RT_* names are ignored (libnrt accepts the
//! many undocumented knobs launch scripts set) and listed in
//! [`Config::ignored`] for a debug line. Every variable is documented in
//! `docs/configuration.md`.

mod collectives;
mod env;
mod inspect;
mod parse;

pub use collectives::{CcConfig, DEFAULT_CC_TIMEOUT, RootComm};
pub use env::Env;
pub use inspect::{DEVICE_PROFILE_ACCEPTED, InspectSession, parse_device_profile};
pub use parse::{
    BOOL_ACCEPTED, CORE_LIST_ACCEPTED, ConfigError, SECONDS_ACCEPTED, parse_bool, parse_core_list, parse_seconds, parse_u64_in, parse_u64_min,
};

use crate::log::{Level, Location, LogConfig, Module};
use nrt_hal::Arch;
use std::time::Duration;

/// Default NEURON_RT_EXEC_TIMEOUT: the developer guide's value for
/// trn1, inf2 and later (600 s; inf1 had 30). The simulator runs a
/// compiler NEFF at the CPU's speed, far below the hardware's, so a large
/// one legitimately takes tens of seconds; a hang still ends.
pub const DEFAULT_EXEC_TIMEOUT: Duration = Duration::from_secs(600);
/// Default depth of the explicit-async compute queue.
pub const DEFAULT_XU_QUEUED_REQUESTS: u32 = 8;
/// Largest allocation log the runtime keeps per device.
pub const MAX_MEMLOG_ENTRIES: u32 = 1 << 24;
/// The queue depth the runtime supports; larger requests are clamped.
pub const MAX_QUEUED_REQUESTS: u32 = 63;

/// Whether NaN results are reported as numerical errors (status 1003).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumericalErrors {
    /// Not reported (libnrt's default since NRT 2.27).
    Off,
    /// Reported: executions that produce NaN return 1003.
    Critical,
}

/// libnrt's no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE): an instance the
/// runtime pretends to run on, without touching devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeInstance {
    /// The value given (an EC2 instance type or a bare family).
    pub name: String,
    /// Chip generation.
    pub arch: Arch,
    /// Devices on the instance.
    pub devices: u32,
}

/// Default NEURON_RT_INSPECT_OUTPUT_DIR.
pub const DEFAULT_INSPECT_OUTPUT_DIR: &str = "./output";

/// Which executions the runtime records a device instruction trace of
/// (NEURON_RT_INSPECT_DEVICE_PROFILE, effective with NEURON_RT_INSPECT_ENABLE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceProfile {
    /// No device profile.
    Off,
    /// The first execution of each model (`1` or `model`).
    Model,
    /// Every execution (`session`).
    Session,
}

/// Every NEURON_RT_* setting the runtime acts on, typed and validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// NEURON_RT_VISIBLE_CORES: logical core indices, sorted, deduplicated.
    pub visible_cores: Option<Vec<u32>>,
    /// NEURON_RT_NUM_CORES: how many logical cores to reserve (None = all).
    pub num_cores: Option<u32>,
    /// NEURON_LOGICAL_NC_CONFIG or NEURON_RT_VIRTUAL_CORE_SIZE (the former
    /// wins): physical cores per logical core; None = the device default.
    pub lnc: Option<u32>,
    /// NEURON_RT_EXEC_TIMEOUT: whole seconds, 0 allowed (libnrt's
    /// documented range, `1000 × seconds` ms in its harvest); the bound of
    /// an execution and of a collective's wait for its device.
    pub exec_timeout: Duration,
    /// NEURON_RT_VALIDATE_HASH.
    pub validate_hash: bool,
    /// `NEURON_RT_LOG_LEVEL[_MOD]` and `NEURON_RT_LOG_LOCATION[_MOD]`.
    pub log: LogConfig,
    /// NEURON_RT_STOCHASTIC_ROUNDING_EN.
    pub stochastic_rounding: bool,
    /// NEURON_RT_STOCHASTIC_ROUNDING_SEED.
    pub stochastic_rounding_seed: u32,
    /// NEURON_RT_RESET_CORES.
    pub reset_cores: bool,
    /// NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS (1..=63).
    pub xu_compute_max_queued_requests: u32,
    /// NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS (0 = implicit async off; ≤ 63).
    pub async_exec_max_inflight_requests: u32,
    /// NEURON_RT_NUMERICAL_ERRORS_VERBOSITY / NEURON_FAIL_ON_NAN.
    pub numerical_errors: NumericalErrors,
    /// NEURON_RT_FAKE_INSTANCE_TYPE.
    pub fake_instance: Option<FakeInstance>,
    /// NEURON_RT_ALLOW_LEGACY_NEFF.
    pub allow_legacy_neff: bool,
    /// NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG.
    pub oom_log: bool,
    /// NEURON_RT_MULTI_INSTANCE_SHARED_WEIGHTS.
    pub shared_weights: bool,
    /// NEURON_RT_DEBUG_MEMLOG_MAX_SIZE: entries kept in each device's
    /// allocation log (0 = off).
    pub memlog_entries: u32,
    /// NEURON_RT_IO_RING_CACHE_SIZE.
    pub io_ring_cache_size: u32,
    /// NEURON_RT_DBG_DMA_PACKETIZATION_SIZE (bytes per compute DMA packet).
    pub dma_packetization_size: u32,
    /// NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES (0 = POOL printf off).
    pub gpsimd_stdout_queue_bytes: u32,
    /// NEURON_RT_ENABLE_DGE_NOTIFICATIONS.
    pub dge_notifications: bool,
    /// NEURON_RT_MAP_HBM: map every device's HBM into the process at init
    /// (device tensors get a VA; `nrt_get_hbm_mmap_va`, `nrt_get_dmabuf_fd`
    /// and `nrt_memcpy_to_device` work on it).
    pub map_hbm: bool,
    /// NEURON_RT_INSPECT_ENABLE + NEURON_RT_INSPECT_DEVICE_PROFILE: which
    /// executions get an instruction trace (Off unless inspect is enabled).
    pub device_profile: DeviceProfile,
    /// NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP: in `model` mode the
    /// device profile skips each model's first N executions and records
    /// execution N (libnrt 2.35); 0 by default.
    pub device_profile_warmup: u32,
    /// The `NEURON_RT_INSPECT_*` settings: where profiles are written
    /// (`inspect.output_dir`) and what an `nrt_inspect_begin` session
    /// captures.
    pub inspect: InspectSession,
    /// The collectives' and async send/recv variables.
    pub collectives: CcConfig,
    /// NEURON_RT_DEBUG_STREAM_BUFFER_SIZE: events a debug-stream
    /// connection holds unread before it drops (1..=2^24, default 64 K).
    pub debug_stream_buffer_events: u32,
    /// NEURON_RT_DEBUG_OUTPUT_DIR: where the runtime's own debug-stream
    /// consumer writes device prints of cores without a client (None: off).
    pub debug_output_dir: Option<std::path::PathBuf>,
    /// Warnings found while reading (clamped values, deprecated knobs),
    /// logged by init.
    pub warnings: Vec<String>,
    /// NEURON_RT_* names that were set but are not acted on.
    pub ignored: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            visible_cores: None,
            num_cores: None,
            lnc: None,
            exec_timeout: DEFAULT_EXEC_TIMEOUT,
            validate_hash: false,
            log: LogConfig::default(),
            stochastic_rounding: false,
            stochastic_rounding_seed: 0,
            reset_cores: true,
            xu_compute_max_queued_requests: DEFAULT_XU_QUEUED_REQUESTS,
            async_exec_max_inflight_requests: 0,
            numerical_errors: NumericalErrors::Off,
            fake_instance: None,
            allow_legacy_neff: false,
            oom_log: true,
            shared_weights: false,
            memlog_entries: crate::memory::DEFAULT_MEMLOG_ENTRIES as u32,
            io_ring_cache_size: 1,
            dma_packetization_size: 0x1000,
            gpsimd_stdout_queue_bytes: 0,
            dge_notifications: false,
            map_hbm: false,
            device_profile: DeviceProfile::Off,
            device_profile_warmup: 0,
            inspect: InspectSession::default(),
            collectives: CcConfig::default(),
            debug_stream_buffer_events: crate::debug_stream::DEFAULT_BUFFER_EVENTS,
            debug_output_dir: None,
            warnings: Vec::new(),
            ignored: Vec::new(),
        }
    }
}

/// The variables this runtime reads (besides the per-module log forms).
pub const KNOWN_VARIABLES: &[&str] = &[
    "NEURON_RT_VISIBLE_CORES",
    "NEURON_RT_NUM_CORES",
    "NEURON_RT_VIRTUAL_CORE_SIZE",
    "NEURON_LOGICAL_NC_CONFIG",
    "NEURON_RT_EXEC_TIMEOUT",
    "NEURON_RT_VALIDATE_HASH",
    "NEURON_RT_LOG_LEVEL",
    "NEURON_RT_LOG_LOCATION",
    "NEURON_RT_STOCHASTIC_ROUNDING_EN",
    "NEURON_RT_STOCHASTIC_ROUNDING_SEED",
    "NEURON_RT_RESET_CORES",
    "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS",
    "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS",
    "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY",
    "NEURON_FAIL_ON_NAN",
    "NEURON_RT_FAKE_INSTANCE_TYPE",
    "NEURON_RT_ALLOW_LEGACY_NEFF",
    "NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG",
    "NEURON_RT_MULTI_INSTANCE_SHARED_WEIGHTS",
    "NEURON_RT_DEBUG_MEMLOG_MAX_SIZE",
    "NEURON_RT_IO_RING_CACHE_SIZE",
    "NEURON_RT_DBG_DMA_PACKETIZATION_SIZE",
    "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES",
    "NEURON_RT_ENABLE_DGE_NOTIFICATIONS",
    "NEURON_RT_MAP_HBM",
    "NEURON_RT_INSPECT_ENABLE",
    "NEURON_RT_INSPECT_DEVICE_PROFILE",
    "NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP",
    "NEURON_RT_INSPECT_OUTPUT_DIR",
    "NEURON_RT_INSPECT_SYSTEM_PROFILE",
    "NEURON_RT_INSPECT_ON_FAIL",
    "NEURON_RT_INSPECT_HOST_MEMORY",
    "NEURON_RT_INSPECT_CPU_UTIL",
    "NEURON_RT_INSPECT_EVENT_FILTER_NC",
    "NEURON_RT_INSPECT_EVENT_FILTER_TYPE",
    "NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC",
    "NEURON_RT_ROOT_COMM_ID",
    "NEURON_RT_CC_NET_TIMEOUT",
    "NEURON_RT_RANKS_PER_NETWORK_PROXY",
    "NEURON_RT_ONE_THREAD_PER_CORE",
    "NEURON_RT_CC_CHUNK_SIZE",
    "NEURON_RT_CC_BOOTSTRAP_TIMEOUT",
    "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED",
    "NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT",
    "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE",
    "NEURON_RT_DEBUG_OUTPUT_DIR",
];

/// Largest NEURON_RT_DEBUG_STREAM_BUFFER_SIZE (events per connection).
pub const MAX_DEBUG_STREAM_BUFFER_EVENTS: u32 = 1 << 24;

struct Reader<'a> {
    env: &'a Env,
}

impl Reader<'_> {
    /// The value of `var`, treating an empty value as unset.
    fn get(&self, var: &str) -> Option<&str> {
        self.env.get(var).filter(|v| !v.trim().is_empty())
    }

    fn bool(&self, var: &str, default: bool) -> Result<bool, ConfigError> {
        self.get(var).map_or(Ok(default), |v| parse_bool(var, v))
    }

    fn u32_in(&self, var: &str, default: u32, min: u32, max: u32) -> Result<u32, ConfigError> {
        self.get(var)
            .map_or(Ok(u64::from(default)), |v| parse_u64_in(var, v, u64::from(min), u64::from(max)))
            .map(|v| v as u32)
    }

    /// A queue depth: at least `min`, clamped to 63 with a warning.
    fn clamped_depth(&self, var: &str, default: u32, min: u64, warnings: &mut Vec<String>) -> Result<u32, ConfigError> {
        let Some(v) = self.get(var) else { return Ok(default) };
        let n = parse_u64_min(var, v, min)?;
        if n > u64::from(MAX_QUEUED_REQUESTS) {
            warnings.push(format!("{var}={n} exceeds the maximum of {MAX_QUEUED_REQUESTS}; using {MAX_QUEUED_REQUESTS}"));
            return Ok(MAX_QUEUED_REQUESTS);
        }
        Ok(n as u32)
    }

    fn lnc(&self, var: &str) -> Result<Option<u32>, ConfigError> {
        match self.get(var) {
            None => Ok(None),
            Some(v) => match v.trim() {
                "1" => Ok(Some(1)),
                "2" => Ok(Some(2)),
                _ => Err(ConfigError::new(var, v, "1 or 2 (physical cores per logical core)")),
            },
        }
    }

    fn level(&self, var: &str) -> Result<Option<Level>, ConfigError> {
        self.get(var)
            .map(|v| v.parse::<Level>().map_err(|()| ConfigError::new(var, v, Level::ACCEPTED)))
            .transpose()
    }

    fn location(&self, var: &str) -> Option<Location> {
        self.get(var).and_then(Location::parse)
    }

    fn log(&self) -> Result<LogConfig, ConfigError> {
        let default_level = self.level("NEURON_RT_LOG_LEVEL")?.unwrap_or(Level::Error);
        let default_location = self.location("NEURON_RT_LOG_LOCATION").unwrap_or(Location::Console);
        let mut log = LogConfig {
            levels: [default_level; crate::log::MODULE_COUNT],
            locations: std::array::from_fn(|_| default_location.clone()),
        };
        for m in Module::ALL {
            let own = [Some(m), m.alias()];
            for candidate in own.into_iter().flatten() {
                if let Some(l) = self.level(&format!("NEURON_RT_LOG_LEVEL_{}", candidate.tag()))? {
                    log.levels[m as usize] = l;
                    break;
                }
            }
            for candidate in own.into_iter().flatten() {
                if let Some(l) = self.location(&format!("NEURON_RT_LOG_LOCATION_{}", candidate.tag())) {
                    log.locations[m as usize] = l;
                    break;
                }
            }
        }
        Ok(log)
    }

    /// NEURON_RT_INSPECT_DEVICE_PROFILE, effective only when inspect is on
    /// (validated either way). Unset means `model`: the system profile
    /// (libnrt's other inspect output) is not produced here, so inspect
    /// without a device profile would write nothing.
    fn device_profile(&self) -> Result<DeviceProfile, ConfigError> {
        let var = "NEURON_RT_INSPECT_DEVICE_PROFILE";
        let profile = self.get(var).map_or(Ok(DeviceProfile::Model), |v| parse_device_profile(var, v))?;
        Ok(if self.bool("NEURON_RT_INSPECT_ENABLE", false)? { profile } else { DeviceProfile::Off })
    }

    /// NEURON_RT_MAP_HBM: a boolean, or a count where any positive value
    /// turns mapping on (frameworks set `true` or `1`).
    fn map_hbm(&self) -> Result<bool, ConfigError> {
        let var = "NEURON_RT_MAP_HBM";
        let Some(v) = self.get(var) else { return Ok(false) };
        if let Ok(on) = parse_bool(var, v) {
            return Ok(on);
        }
        v.trim().parse::<u64>().map(|n| n > 0).map_err(|_| ConfigError::new(var, v, format!("{BOOL_ACCEPTED}, or a count (positive: on)")))
    }

    fn fake_instance(&self) -> Result<Option<FakeInstance>, ConfigError> {
        let var = "NEURON_RT_FAKE_INSTANCE_TYPE";
        let Some(v) = self.get(var) else { return Ok(None) };
        if let Some(t) = nrt_hal::arch::instance_type(v) {
            return Ok(Some(FakeInstance { name: t.name.to_string(), arch: t.arch, devices: t.devices }));
        }
        let arch = match v.trim().to_ascii_lowercase().as_str() {
            "trn1" => Arch::Trn1,
            "inf2" => Arch::Inf2,
            "trn2" => Arch::Trn2,
            "trn3" => Arch::Trn3,
            _ => {
                let names: Vec<&str> = nrt_hal::arch::INSTANCE_TYPES.iter().map(|t| t.name).collect();
                return Err(ConfigError::new(
                    var,
                    v,
                    format!("an instance type ({}) or a family (trn1, inf2, trn2, trn3)", names.join(", ")),
                ));
            }
        };
        Ok(Some(FakeInstance { name: v.trim().to_ascii_lowercase(), arch, devices: 1 }))
    }
}

fn is_known(name: &str) -> bool {
    KNOWN_VARIABLES.contains(&name)
        || ["NEURON_RT_LOG_LEVEL_", "NEURON_RT_LOG_LOCATION_"]
            .iter()
            .any(|p| name.strip_prefix(p).is_some_and(|m| Module::from_tag(m).is_some()))
}

/// The logical-core size `env` asks for: NEURON_LOGICAL_NC_CONFIG, else
/// NEURON_RT_VIRTUAL_CORE_SIZE (both validated); None when neither is
/// set. [`Config::from_env`] reads it so; the tools that describe an
/// instance without starting a runtime, and the commands that default it
/// from a NEFF, read it here too.
pub fn lnc_of(env: &Env) -> Result<Option<u32>, ConfigError> {
    let r = Reader { env };
    match r.lnc("NEURON_LOGICAL_NC_CONFIG")? {
        Some(l) => {
            // Validate the other one too, so a typo there is not silent.
            r.lnc("NEURON_RT_VIRTUAL_CORE_SIZE")?;
            Ok(Some(l))
        }
        None => r.lnc("NEURON_RT_VIRTUAL_CORE_SIZE"),
    }
}

/// NRT_DEVICE: which device backend the bring-up builds its devices
/// with (`sim`, the default; `emulated-driver`; `neuron`). Read once, by
/// the bring-up that builds the device list, before the runtime starts;
/// a `/dev/neuron0` on the machine does not change it.
pub fn device_backend(env: &Env) -> Result<nrt_hal::DeviceBackend, ConfigError> {
    let var = "NRT_DEVICE";
    match env.get(var) {
        None => Ok(nrt_hal::DeviceBackend::default()),
        Some(v) => nrt_hal::DeviceBackend::from_name(v.trim()).ok_or_else(|| {
            let names: Vec<&str> = nrt_hal::DeviceBackend::ALL.iter().map(|(_, n)| *n).collect();
            ConfigError::new(var, v, format!("one of {}", names.join(", ")))
        }),
    }
}

impl Config {
    /// Reads and validates the configuration from `env`.
    pub fn from_env(env: &Env) -> Result<Config, ConfigError> {
        let r = Reader { env };
        let mut warnings = Vec::new();
        let visible_cores = r
            .get("NEURON_RT_VISIBLE_CORES")
            .map(|v| parse_core_list("NEURON_RT_VISIBLE_CORES", v))
            .transpose()?;
        let num_cores = match r.u32_in("NEURON_RT_NUM_CORES", 0, 0, parse::MAX_CORE_INDEX + 1)? {
            0 => None,
            n => Some(n),
        };
        if visible_cores.is_some() && num_cores.is_some() {
            warnings.push("NEURON_RT_VISIBLE_CORES and NEURON_RT_NUM_CORES are both set; NEURON_RT_VISIBLE_CORES takes precedence".into());
        }
        let lnc = lnc_of(env)?;
        let exec_timeout = Duration::from_secs(u64::from(r.u32_in(
            "NEURON_RT_EXEC_TIMEOUT",
            DEFAULT_EXEC_TIMEOUT.as_secs() as u32,
            0,
            i32::MAX as u32,
        )?));
        let async_inflight = r.clamped_depth("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", 0, 0, &mut warnings)?;
        if async_inflight > 0 {
            warnings.push(
                "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS (implicit async execution) is deprecated; use the explicit nrta_* API"
                    .into(),
            );
        }
        let verbosity_var = "NEURON_RT_NUMERICAL_ERRORS_VERBOSITY";
        let mut numerical_errors = match r.get(verbosity_var) {
            None => NumericalErrors::Off,
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "critical" => NumericalErrors::Critical,
                "none" | "off" => NumericalErrors::Off,
                _ => return Err(ConfigError::new(verbosity_var, v, "critical or none (case-insensitive)")),
            },
        };
        if r.bool("NEURON_FAIL_ON_NAN", false)? {
            numerical_errors = NumericalErrors::Critical;
        }
        let stdout_var = "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES";
        let gpsimd_stdout_queue_bytes = r.u32_in(stdout_var, 0, 0, 131_072)?;
        if gpsimd_stdout_queue_bytes != 0 && !gpsimd_stdout_queue_bytes.is_power_of_two() {
            return Err(ConfigError::new(
                stdout_var,
                r.get(stdout_var).unwrap_or_default(),
                "0 (off) or a power of two up to 131072",
            ));
        }
        let collectives = CcConfig::read(|var| r.get(var).map(str::to_string), &mut warnings)?;
        let inspect = InspectSession::from_env(env)?;
        let ignored = env
            .with_prefix("NEURON_RT_")
            .map(|(k, _)| k)
            .filter(|k| !is_known(k))
            .map(str::to_string)
            .collect();
        Ok(Config {
            visible_cores,
            num_cores,
            lnc,
            exec_timeout,
            validate_hash: r.bool("NEURON_RT_VALIDATE_HASH", false)?,
            log: r.log()?,
            stochastic_rounding: r.bool("NEURON_RT_STOCHASTIC_ROUNDING_EN", false)?,
            stochastic_rounding_seed: r.u32_in("NEURON_RT_STOCHASTIC_ROUNDING_SEED", 0, 0, u32::MAX)?,
            reset_cores: r.bool("NEURON_RT_RESET_CORES", true)?,
            xu_compute_max_queued_requests: r.clamped_depth(
                "NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS",
                DEFAULT_XU_QUEUED_REQUESTS,
                1,
                &mut warnings,
            )?,
            async_exec_max_inflight_requests: async_inflight,
            numerical_errors,
            fake_instance: r.fake_instance()?,
            allow_legacy_neff: r.bool("NEURON_RT_ALLOW_LEGACY_NEFF", false)?,
            oom_log: r.bool("NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG", true)?,
            shared_weights: r.bool("NEURON_RT_MULTI_INSTANCE_SHARED_WEIGHTS", false)?,
            memlog_entries: r.u32_in(
                "NEURON_RT_DEBUG_MEMLOG_MAX_SIZE",
                crate::memory::DEFAULT_MEMLOG_ENTRIES as u32,
                0,
                MAX_MEMLOG_ENTRIES,
            )?,
            io_ring_cache_size: r.u32_in("NEURON_RT_IO_RING_CACHE_SIZE", 1, 0, 1024)?,
            dma_packetization_size: r.u32_in("NEURON_RT_DBG_DMA_PACKETIZATION_SIZE", 0x1000, 0x1000, 0xF_FFFF)?,
            gpsimd_stdout_queue_bytes,
            dge_notifications: r.bool("NEURON_RT_ENABLE_DGE_NOTIFICATIONS", false)?,
            map_hbm: r.map_hbm()?,
            device_profile: r.device_profile()?,
            device_profile_warmup: r.u32_in("NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", 0, 0, i32::MAX as u32)?,
            inspect,
            collectives,
            debug_stream_buffer_events: r.u32_in(
                "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE",
                crate::debug_stream::DEFAULT_BUFFER_EVENTS,
                1,
                MAX_DEBUG_STREAM_BUFFER_EVENTS,
            )?,
            debug_output_dir: r.get("NEURON_RT_DEBUG_OUTPUT_DIR").map(|v| std::path::PathBuf::from(v.trim())),
            warnings,
            ignored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_profile_follows_inspect() {
        let cfg = |pairs: &[(&str, &str)]| Config::from_env(&Env::from_pairs(pairs.iter().copied()));
        assert_eq!(cfg(&[("NEURON_RT_INSPECT_DEVICE_PROFILE", "session")]).unwrap().device_profile, DeviceProfile::Off);
        assert_eq!(cfg(&[("NEURON_RT_INSPECT_ENABLE", "1")]).unwrap().device_profile, DeviceProfile::Model);
        let on = |v| cfg(&[("NEURON_RT_INSPECT_ENABLE", "1"), ("NEURON_RT_INSPECT_DEVICE_PROFILE", v)]);
        assert_eq!(on("0").unwrap().device_profile, DeviceProfile::Off);
        assert_eq!(on("1").unwrap().device_profile, DeviceProfile::Model);
        assert_eq!(on("Model").unwrap().device_profile, DeviceProfile::Model);
        assert_eq!(on("session").unwrap().device_profile, DeviceProfile::Session);
        let e = on("always").unwrap_err().to_string();
        assert!(e.contains("NEURON_RT_INSPECT_DEVICE_PROFILE") && e.contains("always") && e.contains("session"), "{e}");
        let c = cfg(&[("NEURON_RT_INSPECT_OUTPUT_DIR", "/tmp/p")]).unwrap();
        assert_eq!(c.inspect.output_dir, std::path::PathBuf::from("/tmp/p"));
        assert!(c.ignored.is_empty());
    }

    #[test]
    fn defaults_from_empty_env() {
        let c = Config::from_env(&Env::new()).unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.exec_timeout, Duration::from_secs(600));
        assert_eq!(c.xu_compute_max_queued_requests, 8);
        assert!(c.reset_cores && c.oom_log && !c.validate_hash);
    }

    #[test]
    fn nrt_device_names_the_backend_and_defaults_to_the_simulator() {
        use nrt_hal::DeviceBackend;
        let of = |v: &str| device_backend(&Env::new().with("NRT_DEVICE", v));
        assert_eq!(device_backend(&Env::new()).unwrap(), DeviceBackend::Sim);
        assert_eq!(of("emulated-driver").unwrap(), DeviceBackend::EmulatedDriver);
        assert_eq!(of("neuron").unwrap(), DeviceBackend::Neuron);
        assert_eq!(of("sim").unwrap(), DeviceBackend::Sim);
        let e = of("hardware").unwrap_err().to_string();
        assert!(e.contains("NRT_DEVICE") && e.contains("hardware") && e.contains("emulated-driver"), "{e}");
    }

    #[test]
    fn map_hbm_takes_a_boolean_or_a_positive_count() {
        let map = |v: &str| Config::from_env(&Env::new().with("NEURON_RT_MAP_HBM", v)).map(|c| c.map_hbm);
        assert!(!Config::default().map_hbm);
        for on in ["1", "true", "TRUE", "yes", "4"] {
            assert_eq!(map(on), Ok(true), "{on}");
        }
        for off in ["0", "false", "off"] {
            assert_eq!(map(off), Ok(false), "{off}");
        }
        let e = map("maybe").unwrap_err().to_string();
        assert!(e.contains("NEURON_RT_MAP_HBM") && e.contains("maybe") && e.contains("positive"), "{e}");
    }

    #[test]
    fn empty_values_count_as_unset() {
        let c = Config::from_env(&Env::new().with("NEURON_RT_NUM_CORES", "").with("NEURON_RT_VISIBLE_CORES", " ")).unwrap();
        assert_eq!((c.num_cores, c.visible_cores), (None, None));
    }

    #[test]
    fn logical_nc_config_wins_over_virtual_core_size() {
        let env = Env::new().with("NEURON_LOGICAL_NC_CONFIG", "1").with("NEURON_RT_VIRTUAL_CORE_SIZE", "2");
        assert_eq!(Config::from_env(&env).unwrap().lnc, Some(1));
        let env = Env::new().with("NEURON_RT_VIRTUAL_CORE_SIZE", "2");
        assert_eq!(Config::from_env(&env).unwrap().lnc, Some(2));
        let env = Env::new().with("NEURON_LOGICAL_NC_CONFIG", "2").with("NEURON_RT_VIRTUAL_CORE_SIZE", "3");
        assert_eq!(Config::from_env(&env).unwrap_err().var, "NEURON_RT_VIRTUAL_CORE_SIZE");
    }

    #[test]
    fn per_module_log_forms_and_aliases() {
        let env = Env::new()
            .with("NEURON_RT_LOG_LEVEL", "info")
            .with("NEURON_RT_LOG_LEVEL_TDRV", "DEBUG")
            .with("NEURON_RT_LOG_LEVEL_NMGR", "warn")
            .with("NEURON_RT_LOG_LOCATION", "syslog")
            .with("NEURON_RT_LOG_LOCATION_TDRV", "/tmp/tdrv.log");
        let c = Config::from_env(&env).unwrap();
        assert_eq!(c.log.level(Module::Nrt), Level::Info);
        assert_eq!(c.log.level(Module::Tdrv), Level::Debug);
        assert_eq!(c.log.level(Module::Nmgr), Level::Warn);
        assert_eq!(c.log.level(Module::Kmgr), Level::Warn);
        assert_eq!(c.log.location(Module::Nrt), &Location::Syslog);
        assert_eq!(c.log.location(Module::Tdrv), &Location::File("/tmp/tdrv.log".into()));
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
    }

    #[test]
    fn unknown_names_are_listed_not_rejected() {
        let env = Env::new().with("NEURON_RT_NUM_SOFTWARE_NQS", "host:1234").with("NEURON_RT_LOG_LEVEL_CCOM", "bogus");
        let c = Config::from_env(&env).unwrap();
        assert_eq!(c.ignored, vec!["NEURON_RT_LOG_LEVEL_CCOM", "NEURON_RT_NUM_SOFTWARE_NQS"]);
    }

    #[test]
    fn queue_depths_clamp_with_a_warning() {
        let c = Config::from_env(&Env::new().with("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "100")).unwrap();
        assert_eq!(c.xu_compute_max_queued_requests, 63);
        assert!(c.warnings.iter().any(|w| w.contains("exceeds the maximum of 63")), "{:?}", c.warnings);
        let c = Config::from_env(&Env::new().with("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "3")).unwrap();
        assert_eq!(c.async_exec_max_inflight_requests, 3);
        assert!(c.warnings.iter().any(|w| w.contains("deprecated")));
    }

    #[test]
    fn fake_instance_types() {
        let c = Config::from_env(&Env::new().with("NEURON_RT_FAKE_INSTANCE_TYPE", "trn1.32xlarge")).unwrap();
        assert_eq!(c.fake_instance, Some(FakeInstance { name: "trn1.32xlarge".into(), arch: Arch::Trn1, devices: 16 }));
        let c = Config::from_env(&Env::new().with("NEURON_RT_FAKE_INSTANCE_TYPE", "TRN2")).unwrap();
        assert_eq!(c.fake_instance.map(|f| (f.arch, f.devices)), Some((Arch::Trn2, 1)));
    }

    #[test]
    fn debug_stream_variables() {
        let c = Config::from_env(&Env::new().with("NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", "16").with("NEURON_RT_DEBUG_OUTPUT_DIR", "/tmp/prints")).unwrap();
        assert_eq!((c.debug_stream_buffer_events, c.debug_output_dir), (16, Some("/tmp/prints".into())));
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
        for bad in ["0", "lots", "16777217"] {
            let e = Config::from_env(&Env::new().with("NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", bad)).unwrap_err();
            assert_eq!(e.var, "NEURON_RT_DEBUG_STREAM_BUFFER_SIZE", "{bad}");
        }
        assert_eq!(Config::default().debug_stream_buffer_events, 65536);
    }

    #[test]
    fn fail_on_nan_enables_numerical_errors() {
        let c = Config::from_env(&Env::new().with("NEURON_FAIL_ON_NAN", "1")).unwrap();
        assert_eq!(c.numerical_errors, NumericalErrors::Critical);
    }
}
