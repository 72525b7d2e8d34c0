//! Simulator configuration: from the environment or built in code.
//!
//! | Variable | Meaning | Default |
//! |---|---|---|
//! | `NEURON_SIM_INSTANCE` | EC2 instance type to impersonate (`trn1.2xlarge`, `trn2.48xlarge`, ...) or a bare family (`trn1`, `inf2`, `trn2`, `trn3`) for one device | one trn2 device (8 physical cores, LNC 2) |
//! | `NEURON_SIM_DETERMINISTIC` | `1`/`true`: single-threaded, fixed-order stepping, bit-identical runs | off |
//! | `NEURON_SIM_THREADS` | worker threads in the non-deterministic pool (1..=64) | 2 |
//! | `NEURON_SIM_INJECT` | faults to inject, see [`crate::fault`] | none |
//! | `NEURON_SIM_STATUS_DIR` | directory of the datastores the tools read (`docs/status-file.md`); `off` publishes none | `$XDG_RUNTIME_DIR/nrt-sim`, else `/dev/shm/nrt-sim-<uid>` |

use crate::fault::{FaultParseError, FaultSpec, parse_faults};
use nrt_hal::arch::{Arch, instance_type, INSTANCE_TYPES};
use nrt_hal::reservation::default_lock_dir;
use std::path::PathBuf;

/// Everything that shapes a simulated instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Instance name (an EC2 type, or `<family>-1` for a bare family).
    pub instance: String,
    /// Chip generation.
    pub arch: Arch,
    /// Devices on the instance.
    pub devices: u32,
    /// Override of the usable bytes per HBM channel (tests use small
    /// devices); `None` = the architecture's size.
    pub hbm_bytes_per_channel: Option<u64>,
    /// Size of the host-DMA window.
    pub host_memory_bytes: u64,
    /// Single-threaded fixed-order stepping.
    pub deterministic: bool,
    /// Worker threads when not deterministic.
    pub threads: usize,
    /// Deterministic mode: task slices one drain may run on the host's
    /// thread before a runaway program is handed to a background worker.
    pub deterministic_drain_limit: u64,
    /// Faults armed at device creation.
    pub faults: Vec<FaultSpec>,
    /// Directory of the core-reservation lock files.
    pub lock_dir: PathBuf,
    /// Namespace of the lock files (separates unrelated simulated
    /// instances; tests use a unique one). Also names the datastores.
    pub lock_namespace: String,
    /// Directory of the datastores the tools read (`NEURON_SIM_STATUS_DIR`,
    /// see [`nrt_hal::status::status_dir`]); `None` publishes nothing.
    pub status_dir: Option<PathBuf>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            instance: "trn2-1".into(),
            arch: Arch::Trn2,
            devices: 1,
            hbm_bytes_per_channel: None,
            host_memory_bytes: 16 << 30,
            deterministic: false,
            threads: 2,
            deterministic_drain_limit: crate::scheduler::DETERMINISTIC_DRAIN_LIMIT,
            faults: Vec::new(),
            lock_dir: default_lock_dir(),
            lock_namespace: "sim-trn2-1".into(),
            status_dir: None,
        }
    }
}

/// A bad simulator environment variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A variable has a value the simulator does not accept.
    #[error("{var}={value:?} is not accepted: {expected}")]
    BadValue {
        /// Variable name.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// `NEURON_SIM_INJECT` could not be parsed.
    #[error("NEURON_SIM_INJECT: {0}")]
    Inject(#[from] FaultParseError),
}

impl SimConfig {
    /// Starts a builder from the defaults.
    pub fn builder() -> SimConfigBuilder {
        SimConfigBuilder(SimConfig::default())
    }

    /// Reads the `NEURON_SIM_*` variables of the process environment.
    pub fn from_env() -> Result<SimConfig, ConfigError> {
        SimConfig::from_vars(|k| std::env::var(k).ok())
    }

    /// Reads configuration through `get` (a variable lookup), so parsing is
    /// testable without touching the process environment.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<SimConfig, ConfigError> {
        let mut b = SimConfig::builder();
        if let Some(v) = get("NEURON_SIM_INSTANCE").filter(|v| !v.trim().is_empty()) {
            b = b.instance(&v)?;
        }
        if let Some(v) = get("NEURON_SIM_DETERMINISTIC") {
            let on = match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" | "" => false,
                _ => {
                    return Err(ConfigError::BadValue {
                        var: "NEURON_SIM_DETERMINISTIC",
                        value: v,
                        expected: "1/true/yes/on or 0/false/no/off".into(),
                    });
                }
            };
            b = b.deterministic(on);
        }
        if let Some(v) = get("NEURON_SIM_THREADS").filter(|v| !v.trim().is_empty()) {
            let n = v.trim().parse::<usize>().ok().filter(|n| (1..=64).contains(n)).ok_or_else(|| {
                ConfigError::BadValue {
                    var: "NEURON_SIM_THREADS",
                    value: v.clone(),
                    expected: "a thread count from 1 to 64".into(),
                }
            })?;
            b = b.threads(n);
        }
        if let Some(v) = get("NEURON_SIM_INJECT") {
            for f in parse_faults(&v)? {
                b = b.fault(f);
            }
        }
        b = b.status_dir(nrt_hal::status::status_dir_from(
            get("NEURON_SIM_STATUS_DIR").map(PathBuf::from),
            get("XDG_RUNTIME_DIR").map(PathBuf::from),
        ));
        Ok(b.build())
    }
}

/// Builder of a [`SimConfig`], for tests and embedders.
#[derive(Clone, Debug)]
pub struct SimConfigBuilder(SimConfig);

impl SimConfigBuilder {
    /// Impersonates an instance type or a bare family (one device).
    pub fn instance(mut self, name: &str) -> Result<SimConfigBuilder, ConfigError> {
        let name = name.trim();
        let family = match name.to_ascii_lowercase().as_str() {
            "trn1" => Some(Arch::Trn1),
            "inf2" => Some(Arch::Inf2),
            "trn2" => Some(Arch::Trn2),
            "trn3" => Some(Arch::Trn3),
            _ => None,
        };
        let (label, arch, devices) = match (family, instance_type(name)) {
            (Some(a), _) => (format!("{}-1", a.name()), a, 1),
            (None, Some(t)) => (t.name.to_string(), t.arch, t.devices),
            (None, None) => {
                return Err(ConfigError::BadValue {
                    var: "NEURON_SIM_INSTANCE",
                    value: name.to_string(),
                    expected: format!(
                        "one of {} or a family (trn1, inf2, trn2, trn3)",
                        INSTANCE_TYPES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        };
        self.0.lock_namespace = format!("sim-{label}");
        self.0.instance = label;
        self.0.arch = arch;
        self.0.devices = devices;
        Ok(self)
    }

    /// Sets the architecture directly, one device.
    pub fn arch(mut self, arch: Arch) -> SimConfigBuilder {
        self.0.arch = arch;
        self.0.devices = 1;
        self.0.instance = format!("{}-1", arch.name());
        self
    }

    /// Number of devices.
    pub fn devices(mut self, n: u32) -> SimConfigBuilder {
        self.0.devices = n;
        self
    }

    /// Usable bytes per HBM channel (rounded down to 64 KiB).
    pub fn hbm_bytes_per_channel(mut self, bytes: u64) -> SimConfigBuilder {
        self.0.hbm_bytes_per_channel = Some(bytes & !0xFFFF);
        self
    }

    /// Host-DMA window size.
    pub fn host_memory_bytes(mut self, bytes: u64) -> SimConfigBuilder {
        self.0.host_memory_bytes = bytes;
        self
    }

    /// Deterministic mode.
    pub fn deterministic(mut self, on: bool) -> SimConfigBuilder {
        self.0.deterministic = on;
        self
    }

    /// Worker threads (at least 1).
    pub fn threads(mut self, n: usize) -> SimConfigBuilder {
        self.0.threads = n.max(1);
        self
    }

    /// Slices a deterministic drain may run before handing off (see
    /// [`crate::scheduler`]).
    pub fn deterministic_drain_limit(mut self, slices: u64) -> SimConfigBuilder {
        self.0.deterministic_drain_limit = slices.max(1);
        self
    }

    /// Arms a fault.
    pub fn fault(mut self, f: FaultSpec) -> SimConfigBuilder {
        self.0.faults.push(f);
        self
    }

    /// Lock directory and namespace for core reservation.
    pub fn locks(mut self, dir: impl Into<PathBuf>, namespace: &str) -> SimConfigBuilder {
        self.0.lock_dir = dir.into();
        self.0.lock_namespace = namespace.to_string();
        self
    }

    /// Directory of the datastores (`None`: publish nothing).
    pub fn status_dir(mut self, dir: Option<PathBuf>) -> SimConfigBuilder {
        self.0.status_dir = dir;
        self
    }

    /// The finished configuration.
    pub fn build(self) -> SimConfig {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultKind;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn defaults_are_one_trn2_device() {
        let c = SimConfig::from_vars(vars(&[])).unwrap();
        assert_eq!((c.arch, c.devices, c.deterministic, c.threads), (Arch::Trn2, 1, false, 2));
        assert_eq!(c.arch.desc().cores_per_device, 8);
        assert_eq!(c.arch.desc().default_lnc, 2);
    }

    #[test]
    fn reads_every_variable() {
        let c = SimConfig::from_vars(vars(&[
            ("NEURON_SIM_INSTANCE", "trn1.32xlarge"),
            ("NEURON_SIM_DETERMINISTIC", "1"),
            ("NEURON_SIM_THREADS", "1"),
            ("NEURON_SIM_INJECT", "hang@core=1,nan:after=3"),
        ]))
        .unwrap();
        assert_eq!((c.arch, c.devices, c.deterministic, c.threads), (Arch::Trn1, 16, true, 1));
        assert_eq!(c.faults.len(), 2);
        assert_eq!(c.faults[0].kind, FaultKind::Hang);
        let c = SimConfig::from_vars(vars(&[("NEURON_SIM_INSTANCE", "inf2")])).unwrap();
        assert_eq!((c.arch, c.devices), (Arch::Inf2, 1));
    }

    #[test]
    fn errors_name_variable_value_and_choices() {
        let e = SimConfig::from_vars(vars(&[("NEURON_SIM_INSTANCE", "p5.48xlarge")])).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("NEURON_SIM_INSTANCE") && m.contains("p5.48xlarge") && m.contains("trn2.48xlarge"), "{m}");
        let e = SimConfig::from_vars(vars(&[("NEURON_SIM_DETERMINISTIC", "maybe")])).unwrap_err();
        assert!(e.to_string().contains("NEURON_SIM_DETERMINISTIC=\"maybe\""), "{e}");
        let e = SimConfig::from_vars(vars(&[("NEURON_SIM_THREADS", "0")])).unwrap_err();
        assert!(e.to_string().contains("1 to 64"), "{e}");
        let e = SimConfig::from_vars(vars(&[("NEURON_SIM_INJECT", "explode")])).unwrap_err();
        assert!(e.to_string().starts_with("NEURON_SIM_INJECT"), "{e}");
    }
}
