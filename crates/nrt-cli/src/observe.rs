//! What the observing tools (`nrt ls`, `nrt monitor`, `nrt top`) share:
//! the simulated instance the environment describes and the devices'
//! datastores (`docs/status-file.md`), read through the driver portal
//! (`nrt_ndl::nds`) as one sample.

use anyhow::{Context, Result};
use nrt_hal::status::{self, MemCategory};
use nrt_hal::status_read::{DeviceStatus, ProcessStatus};
use nrt_hal::ArchDesc;
use std::path::PathBuf;
use std::time::Instant;

/// The simulated instance as the `NEURON_SIM_*` variables describe it.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Instance type label (`trn2.48xlarge`, `trn2-1`).
    pub instance_type: String,
    /// A stable made-up instance id for this host.
    pub instance_id: String,
    /// Architecture.
    pub arch: &'static ArchDesc,
    /// Devices.
    pub devices: u32,
    /// Logical NeuronCore config (`NEURON_LOGICAL_NC_CONFIG`, else the
    /// architecture's default).
    pub lnc: u32,
    /// Device memory bytes.
    pub hbm_bytes: u64,
    /// Status directory (`None`: publishing is off).
    pub status_dir: Option<PathBuf>,
    /// File-name namespace.
    pub namespace: String,
    /// PCI addresses, links and NICs of the devices (`nrt_hal::topology`).
    pub topology: nrt_hal::Topology,
}

impl Instance {
    /// From the process environment.
    pub fn from_env() -> Result<Instance> {
        let cfg = nrt_sim::SimConfig::from_env().context("simulated instance")?;
        let arch = cfg.arch.desc();
        // The logical-core size as the runtime's configuration reads it
        // and its topology applies it (LNC 1 on trn1/inf2).
        let config = nrt::config::Config { lnc: nrt::config::lnc_of(&nrt::config::Env::from_process())?, ..Default::default() };
        let (lnc, _) = nrt::topology::lnc_size(&config, &nrt::topology::DeviceShape::fake(cfg.arch, cfg.devices.max(1)))?;
        let per_channel = |size: u64| cfg.hbm_bytes_per_channel.map_or(size, |s| s.min(size));
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let digest = host.trim().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Ok(Instance {
            instance_type: shown_instance_type(&cfg),
            instance_id: format!("i-{:017x}", digest >> 4),
            arch,
            devices: cfg.devices,
            lnc,
            hbm_bytes: arch.hbm.iter().map(|c| per_channel(c.size)).sum(),
            status_dir: cfg.status_dir.clone(),
            namespace: cfg.lock_namespace.clone(),
            topology: nrt_hal::Topology::of(&cfg.instance, cfg.arch, cfg.devices),
        })
    }

    /// Logical cores per device.
    pub fn nc_per_device(&self) -> u32 {
        self.arch.cores_per_device / self.lnc
    }

    /// The short PCI BDF of device `d` (`cc:00.0`).
    pub fn bdf(&self, d: u32) -> String {
        self.topology.device_bdf(d).short()
    }

    /// The devices device `d` links to.
    pub fn connected_to(&self, d: u32) -> Vec<u32> {
        self.topology.connected_to(d)
    }

    /// neuron-monitor's device type, device version and core version.
    pub fn hardware_names(&self) -> (&'static str, &'static str, &'static str) {
        match self.arch.arch {
            nrt_hal::Arch::Trn1 => ("trainium", "v3", "v2"),
            nrt_hal::Arch::Inf2 => ("inferentia2", "v3", "v2"),
            nrt_hal::Arch::Trn2 => ("trainium2", "v4", if self.lnc == 2 { "v3d" } else { "v3" }),
            nrt_hal::Arch::Trn3 => ("trainium3", "v5", "v4"),
        }
    }
}

/// The EC2 instance type the tools show: the one impersonated
/// (`NEURON_SIM_INSTANCE=trn2.48xlarge`), or for the default bare family
/// of one device (labelled `trn2-1`) the family's one-device type in
/// `nrt_hal::topology` (`trn2.3xlarge`); the label itself only where no
/// instance type has that shape.
fn shown_instance_type(cfg: &nrt_sim::SimConfig) -> String {
    if nrt_hal::topology::instance_type(&cfg.instance).is_some() {
        return cfg.instance.clone();
    }
    nrt_hal::topology::INSTANCE_TYPES
        .iter()
        .find(|t| t.arch == cfg.arch && t.devices == cfg.devices)
        .map_or_else(|| cfg.instance.clone(), |t| t.name.to_string())
}

/// One read of every device's datastore.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When it was read.
    pub at: Instant,
    /// Per device index: the decoded file, or why there is none.
    pub devices: Vec<Result<DeviceStatus, String>>,
}

impl Sample {
    /// Reads every device of `inst`; a missing store means no process has
    /// used the device yet (an empty status, not an error).
    pub fn read(inst: &Instance) -> Sample {
        let devices = (0..inst.devices)
            .map(|d| {
                let Some(dir) = &inst.status_dir else {
                    return Err("publishing is off (NEURON_SIM_STATUS_DIR=off)".to_string());
                };
                let path = status::status_file(dir, &inst.namespace, d);
                if !path.exists() {
                    return Ok(DeviceStatus {
                        device_index: d,
                        physical_cores: inst.arch.cores_per_device,
                        memory_bytes: inst.hbm_bytes,
                        host_memory_bytes: 0,
                        arch: inst.arch.name.to_string(),
                        processes: Vec::new(),
                        stale: Vec::new(),
                        hardware: Default::default(),
                    });
                }
                nrt_ndl::nds::read(&path)
            })
            .collect();
        Sample { at: Instant::now(), devices }
    }

    /// Every live process slot with its device index.
    pub fn processes(&self) -> impl Iterator<Item = (u32, &ProcessStatus)> {
        self.devices.iter().enumerate().filter_map(|(d, r)| r.as_ref().ok().map(|s| (d as u32, s))).flat_map(|(d, s)| s.processes.iter().map(move |p| (d, p)))
    }

    /// The slot of process `pid` on device `d` in this sample.
    pub fn find(&self, d: u32, pid: u32, start_time: u64) -> Option<&ProcessStatus> {
        self.devices.get(d as usize)?.as_ref().ok()?.processes.iter().find(|p| p.pid == pid && p.start_time == start_time)
    }
}

/// Sums of a process's memory into the columns the tools show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceColumns {
    /// Tensors.
    pub tensors: u64,
    /// Constants.
    pub constants: u64,
    /// Model code.
    pub model_code: u64,
    /// Runtime memory (runtime, DMA rings, notifications, collectives, other).
    pub runtime_memory: u64,
    /// Scratchpads.
    pub scratchpad: u64,
}

impl DeviceColumns {
    /// Folds per-category bytes.
    pub fn of(m: &[u64; MemCategory::COUNT]) -> DeviceColumns {
        let g = |c: MemCategory| m[c as usize];
        DeviceColumns {
            tensors: g(MemCategory::Tensors),
            constants: g(MemCategory::Constants),
            model_code: g(MemCategory::ModelCode),
            runtime_memory: g(MemCategory::RuntimeMemory)
                + g(MemCategory::DmaRings)
                + g(MemCategory::Notifications)
                + g(MemCategory::Collectives)
                + g(MemCategory::Uncategorized),
            scratchpad: g(MemCategory::Scratchpad),
        }
    }
    /// All of it.
    pub fn total(&self) -> u64 {
        self.tensors + self.constants + self.model_code + self.runtime_memory + self.scratchpad
    }
}

/// Host memory folded into neuron-monitor's four host fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostColumns {
    /// Application memory (everything not below).
    pub application_memory: u64,
    /// Constants.
    pub constants: u64,
    /// DMA buffers (rings, notification queues).
    pub dma_buffers: u64,
    /// Tensors.
    pub tensors: u64,
}

impl HostColumns {
    /// Folds per-category host bytes.
    pub fn of(m: &[u64; MemCategory::COUNT]) -> HostColumns {
        let g = |c: MemCategory| m[c as usize];
        let dma = g(MemCategory::DmaRings) + g(MemCategory::Notifications);
        let total: u64 = m.iter().sum();
        HostColumns {
            tensors: g(MemCategory::Tensors),
            constants: g(MemCategory::Constants),
            dma_buffers: dma,
            application_memory: total - g(MemCategory::Tensors) - g(MemCategory::Constants) - dma,
        }
    }
    /// All of it.
    pub fn total(&self) -> u64 {
        self.application_memory + self.constants + self.dma_buffers + self.tensors
    }
}

/// Utilisation (%) of physical core `core` of a process between two reads
/// of its slot over `secs` seconds.
pub fn utilization(before: Option<&ProcessStatus>, after: &ProcessStatus, core: usize, secs: f64) -> f64 {
    let b = before.and_then(|p| p.cores.get(core)).map_or(0, |c| c.busy_ns);
    let a = after.cores.get(core).map_or(0, |c| c.busy_ns);
    if secs <= 0.0 {
        return 0.0;
    }
    (a.saturating_sub(b) as f64 / 1e9 / secs * 100.0).clamp(0.0, 100.0)
}

/// Byte counts as neuron-top prints them (`17.5GB`, `256.0KB`, `0.0B`).
pub fn human_bytes(b: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1}{}", units[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_as_neuron_top_does() {
        assert_eq!(human_bytes(0), "0.0B");
        assert_eq!(human_bytes(256 * 1024), "256.0KB");
        assert_eq!(human_bytes(17 * (1 << 30) + (1 << 29)), "17.5GB");
    }

    #[test]
    fn columns_fold_every_category_once() {
        let mut m = [0u64; MemCategory::COUNT];
        for (i, v) in m.iter_mut().enumerate() {
            *v = 1 << i;
        }
        let total: u64 = m.iter().sum();
        assert_eq!(DeviceColumns::of(&m).total(), total);
        assert_eq!(HostColumns::of(&m).total(), total);
    }
}
