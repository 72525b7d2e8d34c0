//! The configuration load and execute read (a subset of NEURON_RT_*),
//! taken from the runtime's [`crate::config::Config`], which alone reads
//! the variables.

use crate::exec::cores::DEFAULT_ARENA_BYTES;
use std::time::Duration;

/// Load / execute settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadSettings {
    /// Verify the NEFF header hash (NEURON_RT_VALIDATE_HASH).
    pub validate_hash: bool,
    /// Load a NEFF built for an older architecture with a warning (NEURON_RT_ALLOW_LEGACY_NEFF).
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
    /// Executions of each model the `model` device profile skips
    /// (NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP).
    pub device_profile_warmup: u32,
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
            device_profile_warmup: 0,
            inspect_output_dir: std::path::PathBuf::from(crate::config::DEFAULT_INSPECT_OUTPUT_DIR),
        }
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
            device_profile_warmup: config.device_profile_warmup,
            inspect_output_dir: config.inspect.output_dir.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Env};

    #[test]
    fn settings_are_the_configurations() {
        let env = Env::new()
            .with("NEURON_RT_EXEC_TIMEOUT", "5")
            .with("NEURON_FAIL_ON_NAN", "1")
            .with("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge")
            .with("NEURON_RT_INSPECT_OUTPUT_DIR", "/tmp/p");
        let s = LoadSettings::from_config(&Config::from_env(&env).unwrap());
        assert_eq!(s.exec_timeout, Duration::from_secs(5));
        assert!(s.numerical_errors && s.fake_instance);
        assert_eq!(s.inspect_output_dir, std::path::PathBuf::from("/tmp/p"));
        assert_eq!(LoadSettings::from_config(&Config::default()), LoadSettings::default());
    }
}
