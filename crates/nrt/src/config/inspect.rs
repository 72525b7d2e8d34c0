//! What an inspect session started by `nrt_inspect_begin` captures, from
//! the `NEURON_RT_INSPECT_*` variables. Init reads them with the rest of
//! the configuration; `nrt_inspect_begin` reads them again through the
//! same parser, since launchers set them after `nrt_init`.

use super::env::Env;
use super::parse::{ConfigError, parse_bool, parse_core_list, parse_u64_min};
use super::{DEFAULT_INSPECT_OUTPUT_DIR, DeviceProfile};
use crate::trace::TraceConfig;
use std::path::PathBuf;

/// What NEURON_RT_INSPECT_DEVICE_PROFILE accepts.
pub const DEVICE_PROFILE_ACCEPTED: &str = "0, 1, model (first execution of each model) or session (every execution)";

/// NEURON_RT_INSPECT_DEVICE_PROFILE's value.
pub fn parse_device_profile(var: &str, value: &str) -> Result<DeviceProfile, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "0" => Ok(DeviceProfile::Off),
        "1" | "model" => Ok(DeviceProfile::Model),
        "session" => Ok(DeviceProfile::Session),
        _ => Err(ConfigError::new(var, value, DEVICE_PROFILE_ACCEPTED)),
    }
}

/// An inspect session's settings: the output root, the four activities,
/// inspect-on-fail and the system trace's filters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectSession {
    /// NEURON_RT_INSPECT_OUTPUT_DIR.
    pub output_dir: PathBuf,
    /// NEURON_RT_INSPECT_SYSTEM_PROFILE (on unless turned off).
    pub system_profile: bool,
    /// NEURON_RT_INSPECT_DEVICE_PROFILE (on unless `0`).
    pub device_profile: bool,
    /// NEURON_RT_INSPECT_HOST_MEMORY (on unless turned off).
    pub host_memory: bool,
    /// NEURON_RT_INSPECT_CPU_UTIL (on unless turned off).
    pub cpu_util: bool,
    /// NEURON_RT_INSPECT_ON_FAIL (off unless turned on).
    pub on_fail: bool,
    /// NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC,
    /// NEURON_RT_INSPECT_EVENT_FILTER_NC and
    /// NEURON_RT_INSPECT_EVENT_FILTER_TYPE.
    pub trace: TraceConfig,
}

impl Default for InspectSession {
    fn default() -> InspectSession {
        InspectSession {
            output_dir: PathBuf::from(DEFAULT_INSPECT_OUTPUT_DIR),
            system_profile: true,
            device_profile: true,
            host_memory: true,
            cpu_util: true,
            on_fail: false,
            trace: TraceConfig::default(),
        }
    }
}

impl InspectSession {
    /// Reads the session's variables from `env` (empty values count as
    /// unset).
    pub fn from_env(env: &Env) -> Result<InspectSession, ConfigError> {
        let get = |var: &str| env.get(var).filter(|v| !v.trim().is_empty());
        let flag = |var: &str, default: bool| get(var).map_or(Ok(default), |v| parse_bool(var, v));
        let mut trace = TraceConfig::default();
        let var = "NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC";
        if let Some(v) = get(var) {
            trace.max_events_per_nc = parse_u64_min(var, v, 0)?;
        }
        if let Some(v) = get("NEURON_RT_INSPECT_EVENT_FILTER_NC") {
            trace.only_cores = Some(parse_core_list("NEURON_RT_INSPECT_EVENT_FILTER_NC", v)?.into_iter().collect());
        }
        let var = "NEURON_RT_INSPECT_EVENT_FILTER_TYPE";
        if let Some(v) = get(var) {
            trace.types = crate::trace::options::parse_type_filter(v).map_err(|e| {
                ConfigError::new(var, v, format!("event type names, the groups hardware and software, ^name to exclude ({})", e.message))
            })?;
        }
        let device_var = "NEURON_RT_INSPECT_DEVICE_PROFILE";
        Ok(InspectSession {
            output_dir: get("NEURON_RT_INSPECT_OUTPUT_DIR").map_or_else(|| PathBuf::from(DEFAULT_INSPECT_OUTPUT_DIR), |v| PathBuf::from(v.trim())),
            system_profile: flag("NEURON_RT_INSPECT_SYSTEM_PROFILE", true)?,
            device_profile: get(device_var).map_or(Ok(DeviceProfile::Model), |v| parse_device_profile(device_var, v))? != DeviceProfile::Off,
            host_memory: flag("NEURON_RT_INSPECT_HOST_MEMORY", true)?,
            cpu_util: flag("NEURON_RT_INSPECT_CPU_UTIL", true)?,
            on_fail: flag("NEURON_RT_INSPECT_ON_FAIL", false)?,
            trace,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::EventType;

    #[test]
    fn filters_and_switches_parse_as_documented() {
        let env = Env::new()
            .with("NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC", "10")
            .with("NEURON_RT_INSPECT_EVENT_FILTER_NC", "0-1,4")
            .with("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "hardware,^cc_running")
            .with("NEURON_RT_INSPECT_CPU_UTIL", "0")
            .with("NEURON_RT_INSPECT_ON_FAIL", "true");
        let s = InspectSession::from_env(&env).unwrap();
        assert_eq!(s.trace.max_events_per_nc, 10);
        assert!(s.trace.core_enabled(0) && s.trace.core_enabled(1) && !s.trace.core_enabled(2) && s.trace.core_enabled(4));
        let types = s.trace.enabled_types();
        assert!(types.contains(&EventType::NcExecRunning) && !types.contains(&EventType::CcRunning) && !types.contains(&EventType::NrtLoad));
        assert!(!s.cpu_util && s.on_fail && s.system_profile && s.device_profile && s.host_memory);
        assert_eq!(InspectSession::from_env(&Env::new()).unwrap(), InspectSession::default());
    }

    #[test]
    fn bad_values_name_the_variable() {
        for (var, value) in [
            ("NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC", "many"),
            ("NEURON_RT_INSPECT_EVENT_FILTER_NC", "3-1"),
            ("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "bogus_event"),
            ("NEURON_RT_INSPECT_DEVICE_PROFILE", "always"),
            ("NEURON_RT_INSPECT_ON_FAIL", "maybe"),
        ] {
            let e = InspectSession::from_env(&Env::new().with(var, value)).unwrap_err();
            assert_eq!((e.var.as_str(), e.value.as_str()), (var, value));
        }
        let e = InspectSession::from_env(&Env::new().with("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "bogus_event")).unwrap_err();
        assert!(e.accepted.contains("nc_exec_running"), "{e}");
    }
}
