//! The configuration load and execute read (a subset of NEURON_RT_*),
//! resolved once; the runtime's config module fills it in.

use crate::exec::cores::DEFAULT_ARENA_BYTES;
use crate::status::{NrtError, NrtResult};
use std::time::Duration;

/// Load / execute settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadSettings {
    /// Verify the NEFF header hash (NEURON_RT_VALIDATE_HASH).
    pub validate_hash: bool,
    /// Downgrade architecture / LNC mismatches to warnings (NEURON_RT_ALLOW_LEGACY_NEFF).
    pub allow_legacy_neff: bool,
    /// No-device mode (NEURON_RT_FAKE_INSTANCE_TYPE set): loads keep no
    /// device program, executes succeed at once.
    pub fake_instance: bool,
    /// No END within this time is NRT_TIMEOUT (NEURON_RT_EXEC_TIMEOUT, seconds).
    pub exec_timeout: Duration,
    /// Numerical errors become NRT_EXEC_COMPLETED_WITH_NUM_ERR
    /// (NEURON_RT_NUMERICAL_ERRORS_VERBOSITY=critical or NEURON_FAIL_ON_NAN=1).
    pub numerical_errors: bool,
    /// Bytes of each core's instruction arena.
    pub arena_bytes: u64,
    /// Which executions get a device instruction profile (NEURON_RT_INSPECT_*).
    pub device_profile: crate::config::DeviceProfile,
    /// Where profiles are written (NEURON_RT_INSPECT_OUTPUT_DIR).
    pub inspect_output_dir: std::path::PathBuf,
}

impl Default for LoadSettings {
    fn default() -> Self {
        LoadSettings {
            validate_hash: false,
            allow_legacy_neff: false,
            fake_instance: false,
            exec_timeout: crate::config::DEFAULT_EXEC_TIMEOUT,
            numerical_errors: false,
            arena_bytes: DEFAULT_ARENA_BYTES,
            device_profile: crate::config::DeviceProfile::Off,
            inspect_output_dir: std::path::PathBuf::from(crate::config::DEFAULT_INSPECT_OUTPUT_DIR),
        }
    }
}

fn flag(name: &str, v: &str) -> NrtResult<bool> {
    match v.trim() {
        "1" | "true" | "TRUE" | "yes" => Ok(true),
        "0" | "false" | "FALSE" | "no" | "" => Ok(false),
        other => Err(NrtError::invalid(format!("{name}={other:?} is not valid; expected 0 or 1"))),
    }
}

impl LoadSettings {
    /// The settings the runtime's validated configuration implies.
    pub fn from_config(config: &crate::config::Config) -> LoadSettings {
        LoadSettings {
            validate_hash: config.validate_hash,
            allow_legacy_neff: config.allow_legacy_neff,
            fake_instance: config.fake_instance.is_some(),
            exec_timeout: config.exec_timeout,
            numerical_errors: config.numerical_errors == crate::config::NumericalErrors::Critical,
            arena_bytes: DEFAULT_ARENA_BYTES,
            device_profile: config.device_profile,
            inspect_output_dir: config.inspect_output_dir.clone(),
        }
    }

    /// Reads the settings from variables looked up by `get` (e.g. the
    /// process environment). Invalid values name the variable, the value
    /// and what is accepted.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> NrtResult<LoadSettings> {
        let mut s = LoadSettings::default();
        if let Some(v) = get("NEURON_RT_VALIDATE_HASH") {
            s.validate_hash = flag("NEURON_RT_VALIDATE_HASH", &v)?;
        }
        if let Some(v) = get("NEURON_RT_ALLOW_LEGACY_NEFF") {
            s.allow_legacy_neff = flag("NEURON_RT_ALLOW_LEGACY_NEFF", &v)?;
        }
        s.fake_instance = get("NEURON_RT_FAKE_INSTANCE_TYPE").is_some_and(|v| !v.trim().is_empty());
        if let Some(v) = get("NEURON_RT_EXEC_TIMEOUT") {
            let secs: f64 = v.trim().parse().ok().filter(|x: &f64| x.is_finite() && *x > 0.0).ok_or_else(|| {
                NrtError::invalid(format!("NEURON_RT_EXEC_TIMEOUT={v:?} is not valid; expected a positive number of seconds"))
            })?;
            s.exec_timeout = Duration::from_secs_f64(secs);
        }
        let verbosity = get("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY").is_some_and(|v| v.trim().eq_ignore_ascii_case("critical"));
        let fail_on_nan = match get("NEURON_FAIL_ON_NAN") {
            Some(v) => flag("NEURON_FAIL_ON_NAN", &v)?,
            None => false,
        };
        s.numerical_errors = verbosity || fail_on_nan;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> NrtResult<LoadSettings> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        LoadSettings::from_lookup(|n| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn reads_and_validates() {
        let s = with(&[("NEURON_RT_EXEC_TIMEOUT", "0.5"), ("NEURON_FAIL_ON_NAN", "1"), ("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge")]).unwrap();
        assert_eq!(s.exec_timeout, Duration::from_millis(500));
        assert!(s.numerical_errors && s.fake_instance);
        assert!(with(&[("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "critical")]).unwrap().numerical_errors);
        let e = with(&[("NEURON_RT_EXEC_TIMEOUT", "soon")]).unwrap_err();
        assert!(e.message.contains("NEURON_RT_EXEC_TIMEOUT=\"soon\""), "{}", e.message);
        assert_eq!(with(&[]).unwrap(), LoadSettings::default());
    }
}
