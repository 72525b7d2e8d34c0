//! Logical (virtual) NeuronCores over physical ones, the visible set, core
//! reservation, and instance information.
//!
//! A logical core of LNC size `s` on device `d` covers physical cores
//! `[L*s, L*s+s-1]` of that device. Logical cores are numbered across
//! devices in device order; the process sees only its visible ones,
//! renumbered from 0 (NEURON_RT_VISIBLE_CORES `3,4` become vcores 0 and 1).
//!
//! [`TopologyPlan`] is computed from the configuration and device shapes
//! alone (the counts the C API offers before `nrt_init`);
//! [`TopologyPlan::reserve`] claims the cores exclusively through
//! `Device::reserve_cores` and yields the [`Topology`] the runtime uses.

use crate::config::Config;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{Arch, CoreId, CoreReservation, Device, DeviceInfo, HalError};
use std::fmt;
use std::sync::Arc;

/// What the topology needs to know about one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceShape {
    /// Device index (`/dev/neuronN`).
    pub index: u32,
    /// Chip generation.
    pub arch: Arch,
    /// Physical cores present.
    pub physical_cores: u32,
}

impl DeviceShape {
    /// The shape of a discovered device.
    pub fn of(info: &DeviceInfo) -> DeviceShape {
        DeviceShape { index: info.device_index, arch: info.arch.arch, physical_cores: info.physical_cores }
    }

    /// The shapes of a fake instance's devices (no-device mode).
    pub fn fake(arch: Arch, devices: u32) -> Vec<DeviceShape> {
        (0..devices)
            .map(|index| DeviceShape { index, arch, physical_cores: arch.desc().cores_per_device })
            .collect()
    }
}

/// One logical core visible to the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VcoreInfo {
    /// Process-local index (what `nrt_load`'s `vnc` names).
    pub index: u32,
    /// Instance-wide logical index (what NEURON_RT_VISIBLE_CORES names).
    pub global: u32,
    /// Position of the device in the runtime's device list.
    pub device: usize,
    /// The physical cores it covers, in order.
    pub physical: Vec<CoreId>,
    /// LNC size (physical cores per logical core).
    pub lnc: u32,
}

/// The logical core size for these devices: trn1/inf2 (NeuronCore-v2)
/// always use 1; otherwise the configured size, else the architecture's
/// default (1 when a device has a single core). Returns the size and a
/// warning when a configured size was overridden.
pub fn lnc_size(config: &Config, shapes: &[DeviceShape]) -> NrtResult<(u32, Option<String>)> {
    let Some(first) = shapes.first() else {
        return Err(NrtError::invalid("This instance has no neuron devices"));
    };
    if shapes.iter().any(|s| s.arch != first.arch) {
        return Err(NrtError::invalid("devices of different architectures cannot be used together"));
    }
    if matches!(first.arch, Arch::Trn1 | Arch::Inf2) {
        let warning = config.lnc.filter(|&l| l != 1).map(|l| {
            format!("Logical NeuronCore size {l} is not supported on {} (NeuronCore-v2); using 1", first.arch)
        });
        return Ok((1, warning));
    }
    let s = match config.lnc {
        Some(s) => s,
        None if first.physical_cores == 1 => 1,
        None => first.arch.desc().default_lnc,
    };
    if let Some(bad) = shapes.iter().find(|d| d.physical_cores == 0 || d.physical_cores % s != 0) {
        return Err(NrtError::invalid(format!(
            "Logical NeuronCore size {s} does not divide the {} physical cores of device {}",
            bad.physical_cores, bad.index
        )));
    }
    Ok((s, None))
}

/// Which logical cores the process asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoreRequest {
    /// NEURON_RT_VISIBLE_CORES: exactly these (global, contiguous, sorted).
    Exact(Vec<u32>),
    /// NEURON_RT_NUM_CORES: any this many contiguous free cores.
    Count(u32),
    /// Neither: every core.
    All,
}

/// The topology the configuration asks for, before anything is reserved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyPlan {
    lnc: u32,
    shapes: Vec<DeviceShape>,
    request: CoreRequest,
    warnings: Vec<String>,
}

fn not_available(lnc: u32, requested: &str, available: u32) -> String {
    if lnc == 1 {
        format!("NeuronCore(s) not available - Requested:{requested} Available:{available}")
    } else {
        format!("Logical Neuron Core(s) not available - Requested:{requested} Available:{available} Logical Core size {lnc}")
    }
}

impl TopologyPlan {
    /// Validates the core selection of `config` against `shapes`.
    pub fn new(config: &Config, shapes: &[DeviceShape]) -> NrtResult<TopologyPlan> {
        let (lnc, warning) = lnc_size(config, shapes)?;
        let mut plan = TopologyPlan { lnc, shapes: shapes.to_vec(), request: CoreRequest::All, warnings: warning.into_iter().collect() };
        let total = plan.total_vnc();
        plan.request = if let Some(list) = &config.visible_cores {
            if let Some(&bad) = list.iter().find(|&&g| g >= total) {
                let per = plan.vnc_of(0).max(1);
                return Err(NrtError::invalid(format!(
                    "Specified core not accessible! is /dev/neuron{} visible to process? \
                     (NEURON_RT_VISIBLE_CORES names logical core {bad}; this instance has logical cores 0-{})",
                    bad / per,
                    total.saturating_sub(1)
                )));
            }
            if list.windows(2).any(|w| w[1] != w[0] + 1) {
                return Err(NrtError::invalid(format!(
                    "Logical Neuron cores are not contiguous (NEURON_RT_VISIBLE_CORES={})",
                    list.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                )));
            }
            CoreRequest::Exact(list.clone())
        } else if let Some(n) = config.num_cores {
            let per = plan.vnc_of(0);
            if n > 1 && !matches!(plan.arch(), Arch::Trn1 | Arch::Inf2) && per > 0 && n % per != 0 {
                return Err(NrtError::invalid(format!(
                    "`NEURON_RT_NUM_CORES` must request one core, or the whole device (multiple of {per}); requested {n}"
                )));
            }
            if n > total {
                return Err(NrtError::failure(not_available(lnc, &n.to_string(), total)));
            }
            CoreRequest::Count(n)
        } else {
            CoreRequest::All
        };
        Ok(plan)
    }

    /// The LNC size.
    pub fn lnc(&self) -> u32 {
        self.lnc
    }

    /// The chip generation.
    pub fn arch(&self) -> Arch {
        self.shapes.first().map_or(Arch::Trn2, |s| s.arch)
    }

    /// Logical cores of the device at position `d`.
    pub fn vnc_of(&self, d: usize) -> u32 {
        self.shapes.get(d).map_or(0, |s| s.physical_cores / self.lnc)
    }

    /// Logical cores on the instance (`nrt_get_total_vnc_count`).
    pub fn total_vnc(&self) -> u32 {
        (0..self.shapes.len()).map(|d| self.vnc_of(d)).sum()
    }

    /// Logical cores the process will see (`nrt_get_visible_vnc_count`
    /// before init).
    pub fn visible_vnc(&self) -> u32 {
        match &self.request {
            CoreRequest::Exact(l) => l.len() as u32,
            CoreRequest::Count(n) => *n,
            CoreRequest::All => self.total_vnc(),
        }
    }

    /// What was asked for.
    pub fn request(&self) -> &CoreRequest {
        &self.request
    }

    /// Warnings to log at init (e.g. an overridden LNC size).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// (device position, physical cores) of a global logical core.
    fn locate(&self, global: u32) -> Option<(usize, Vec<CoreId>)> {
        let mut base = 0;
        for d in 0..self.shapes.len() {
            let n = self.vnc_of(d);
            if global < base + n {
                let l = global - base;
                return Some((d, (l * self.lnc..(l + 1) * self.lnc).map(CoreId).collect()));
            }
            base += n;
        }
        None
    }

    fn topology_of(&self, globals: &[u32]) -> Topology {
        let vcores = globals
            .iter()
            .enumerate()
            .filter_map(|(i, &g)| {
                self.locate(g).map(|(device, physical)| VcoreInfo { index: i as u32, global: g, device, physical, lnc: self.lnc })
            })
            .collect();
        Topology { lnc: self.lnc, arch: self.arch(), total_vnc: self.total_vnc(), vcores }
    }

    /// The topology without reserving anything (no-device mode, where
    /// libnrt skips reservation): the requested cores, or the first N.
    pub fn assume(&self) -> Topology {
        let globals: Vec<u32> = match &self.request {
            CoreRequest::Exact(l) => l.clone(),
            CoreRequest::Count(n) => (0..*n).collect(),
            CoreRequest::All => (0..self.total_vnc()).collect(),
        };
        self.topology_of(&globals)
    }

    /// Reserves the requested cores on `devices` (which must match the
    /// shapes the plan was made from) and returns the topology and the
    /// reservation guards (released when dropped, or at process exit).
    pub fn reserve(&self, devices: &[Arc<dyn Device>]) -> NrtResult<(Topology, Vec<CoreReservation>)> {
        if devices.len() != self.shapes.len() {
            return Err(NrtError::invalid(format!(
                "topology planned for {} devices but {} were given",
                self.shapes.len(),
                devices.len()
            )));
        }
        let total = self.total_vnc();
        match &self.request {
            CoreRequest::Exact(list) => match self.try_reserve(devices, list) {
                Ok(r) => Ok((self.topology_of(list), r)),
                Err(ReserveError::Busy(detail)) => {
                    let (a, b) = (list[0], list[list.len() - 1]);
                    let free = self.count_free(devices);
                    Err(NrtError::failure(format!("{}; {detail}", not_available(self.lnc, &format!("nc{a}-nc{b}"), free))))
                }
                Err(ReserveError::Other(e)) => Err(e),
            },
            CoreRequest::All => {
                let all: Vec<u32> = (0..total).collect();
                match self.try_reserve(devices, &all) {
                    Ok(r) => Ok((self.topology_of(&all), r)),
                    Err(ReserveError::Busy(detail)) => {
                        let free = self.count_free(devices);
                        Err(NrtError::failure(format!("{}; {detail}", not_available(self.lnc, &total.to_string(), free))))
                    }
                    Err(ReserveError::Other(e)) => Err(e),
                }
            }
            CoreRequest::Count(n) => {
                let n = *n;
                let mut last_busy = String::new();
                for start in 0..=total.saturating_sub(n) {
                    let window: Vec<u32> = (start..start + n).collect();
                    match self.try_reserve(devices, &window) {
                        Ok(r) => return Ok((self.topology_of(&window), r)),
                        Err(ReserveError::Busy(detail)) => last_busy = detail,
                        Err(ReserveError::Other(e)) => return Err(e),
                    }
                }
                let free = self.count_free(devices);
                Err(NrtError::failure(format!("{}; {last_busy}", not_available(self.lnc, &n.to_string(), free))))
            }
        }
    }

    /// Reserves the physical cores of `globals`, all or nothing.
    fn try_reserve(&self, devices: &[Arc<dyn Device>], globals: &[u32]) -> Result<Vec<CoreReservation>, ReserveError> {
        let mut per_device: Vec<Vec<CoreId>> = vec![Vec::new(); devices.len()];
        for &g in globals {
            let (d, cores) = self
                .locate(g)
                .ok_or_else(|| ReserveError::Other(NrtError::invalid(format!("logical core {g} does not exist"))))?;
            per_device[d].extend(cores);
        }
        let mut held = Vec::new();
        for (d, cores) in per_device.iter().enumerate() {
            if cores.is_empty() {
                continue;
            }
            match devices[d].reserve_cores(cores) {
                Ok(r) => {
                    // The tools read logical cores from the datastore.
                    if let Some(s) = devices[d].status() {
                        s.set_lnc(self.lnc);
                    }
                    held.push(r)
                }
                Err(HalError::Busy { device, cores, holder }) => {
                    let list = cores.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
                    return Err(ReserveError::Busy(format!("physical cores {list} of ND {device} are reserved ({holder})")));
                }
                Err(e) => {
                    return Err(ReserveError::Other(NrtError::new(
                        NrtStatus::Failure,
                        format!("cannot reserve cores of ND {}: {e}", devices[d].info().device_index),
                    )));
                }
            }
        }
        Ok(held)
    }

    /// How many logical cores could be reserved right now (probes each and
    /// releases it at once).
    fn count_free(&self, devices: &[Arc<dyn Device>]) -> u32 {
        (0..self.total_vnc()).filter(|&g| self.try_reserve(devices, &[g]).is_ok()).count() as u32
    }
}

enum ReserveError {
    Busy(String),
    Other(NrtError),
}

/// The process's logical cores after init.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    lnc: u32,
    arch: Arch,
    total_vnc: u32,
    vcores: Vec<VcoreInfo>,
}

impl Topology {
    /// LNC size.
    pub fn lnc(&self) -> u32 {
        self.lnc
    }

    /// Chip generation.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// Logical cores on the instance.
    pub fn total_vnc(&self) -> u32 {
        self.total_vnc
    }

    /// Logical cores visible to the process.
    pub fn visible_vnc(&self) -> u32 {
        self.vcores.len() as u32
    }

    /// Every visible logical core, by process-local index.
    pub fn vcores(&self) -> &[VcoreInfo] {
        &self.vcores
    }

    /// One visible logical core.
    pub fn vcore(&self, index: u32) -> NrtResult<&VcoreInfo> {
        self.vcores.get(index as usize).ok_or_else(|| {
            NrtError::invalid(format!(
                "logical NeuronCore {index} is not visible to this process (visible: {})",
                self.visible_range()
            ))
        })
    }

    /// The visible cores as `first-last` in instance numbering (or `none`).
    pub fn visible_range(&self) -> String {
        match (self.vcores.first(), self.vcores.last()) {
            (Some(a), Some(b)) => format!("{}-{}", a.global, b.global),
            _ => "none".into(),
        }
    }
}

macro_rules! enum_values {
    ($(#[$m:meta])* $name:ident { $( $(#[doc = $doc:literal])* $v:ident = $n:literal ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name { $( $(#[doc = $doc])* $v = $n, )* }
        impl $name {
            /// The C value.
            pub const fn value(self) -> u32 { self as u32 }
        }
    };
}

enum_values! {
    /// `NRT_INSTANCE_*` family values of `nrt_instance_info_t`.
    InstanceFamily {
        /// Unknown.
        Unknown = 0, /// inf1.
        Inf1 = 1, /// trn1.
        Trn1 = 2, /// trn1n.
        Trn1n = 3, /// inf2.
        Inf2 = 4, /// trn2.
        Trn2 = 5, /// trn2n.
        Trn2n = 6, /// inf2e.
        Inf2e = 7, /// trn2p.
        Trn2p = 8, /// trn2u.
        Trn2u = 9, /// trn2e.
        Trn2e = 10, /// trn2eu.
        Trn2eu = 11, /// trn2ac.
        Trn2ac = 12, /// trn2uac.
        Trn2uac = 13, /// trn3.
        Trn3 = 14, /// trn3pds98.
        Trn3pds98 = 15,
    }
}

enum_values! {
    /// `NRT_INSTANCE_SIZE_*` values of `nrt_instance_info_t`.
    InstanceSize {
        /// xlarge.
        Xl1 = 0, /// 2xlarge.
        Xl2 = 1, /// 4xlarge.
        Xl4 = 2, /// 6xlarge.
        Xl6 = 3, /// 8xlarge.
        Xl8 = 4, /// 24xlarge.
        Xl24 = 5, /// 32xlarge.
        Xl32 = 6, /// 48xlarge.
        Xl48 = 7, /// 3xlarge.
        Xl3 = 8, /// Unknown.
        Unknown = 9,
    }
}

/// What `nrt_get_instance_info` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceInfo {
    /// Instance family.
    pub family: InstanceFamily,
    /// Instance size.
    pub size: InstanceSize,
    /// Architecture name (at most 15 bytes in the C struct).
    pub arch_name: String,
    /// Device revision (at most 7 bytes in the C struct).
    pub device_revision: String,
}

impl InstanceInfo {
    /// From an EC2 instance type name (`trn2.48xlarge`) or a bare family.
    pub fn from_instance_name(name: &str, arch: Arch) -> InstanceInfo {
        let lower = name.trim().to_ascii_lowercase();
        let (fam, size) = lower.split_once('.').unwrap_or((lower.as_str(), ""));
        use InstanceFamily as F;
        let family = match fam {
            "inf1" => F::Inf1,
            "trn1" => F::Trn1,
            "trn1n" => F::Trn1n,
            "inf2" => F::Inf2,
            "trn2" => F::Trn2,
            "trn2n" => F::Trn2n,
            "inf2e" => F::Inf2e,
            "trn2p" => F::Trn2p,
            "trn2u" => F::Trn2u,
            "trn2e" => F::Trn2e,
            "trn2eu" => F::Trn2eu,
            "trn2ac" => F::Trn2ac,
            "trn2uac" => F::Trn2uac,
            "trn3" => F::Trn3,
            "trn3pds98" => F::Trn3pds98,
            _ => match arch {
                Arch::Trn1 => F::Trn1,
                Arch::Inf2 => F::Inf2,
                Arch::Trn2 => F::Trn2,
                Arch::Trn3 => F::Trn3,
            },
        };
        use InstanceSize as S;
        let size = match size {
            "xlarge" => S::Xl1,
            "2xlarge" => S::Xl2,
            "3xlarge" => S::Xl3,
            "4xlarge" => S::Xl4,
            "6xlarge" => S::Xl6,
            "8xlarge" => S::Xl8,
            "24xlarge" => S::Xl24,
            "32xlarge" => S::Xl32,
            "48xlarge" => S::Xl48,
            _ => S::Unknown,
        };
        InstanceInfo { family, size, arch_name: arch.name().to_string(), device_revision: revision_of(arch).into() }
    }

    /// From discovered devices: the instance type with this architecture
    /// and device count, if the table has one, else the family alone.
    pub fn from_devices(shapes: &[DeviceShape]) -> InstanceInfo {
        let arch = shapes.first().map_or(Arch::Trn2, |s| s.arch);
        let n = shapes.len() as u32;
        match nrt_hal::arch::INSTANCE_TYPES.iter().find(|t| t.arch == arch && t.devices == n) {
            Some(t) => InstanceInfo::from_instance_name(t.name, arch),
            None => InstanceInfo { size: InstanceSize::Unknown, ..InstanceInfo::from_instance_name(arch.name(), arch) },
        }
    }
}

/// Device revision text: libnrt treats a non-hardware platform as
/// revision A and reports "pre" for trn3 at revision A.
fn revision_of(arch: Arch) -> &'static str {
    match arch {
        Arch::Trn3 => "pre",
        _ => "A",
    }
}

impl fmt::Display for InstanceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "family {:?} ({}), size {:?} ({}), arch {}, revision {}", self.family, self.family.value(), self.size, self.size.value(), self.arch_name, self.device_revision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Env;

    fn cfg(pairs: &[(&str, &str)]) -> Config {
        Config::from_env(&Env::from_pairs(pairs.iter().copied())).unwrap()
    }

    fn trn2(n: u32) -> Vec<DeviceShape> {
        DeviceShape::fake(Arch::Trn2, n)
    }

    #[test]
    fn lnc_defaults_and_overrides() {
        assert_eq!(lnc_size(&cfg(&[]), &trn2(1)).unwrap(), (2, None));
        assert_eq!(lnc_size(&cfg(&[("NEURON_LOGICAL_NC_CONFIG", "1")]), &trn2(1)).unwrap(), (1, None));
        let trn1 = DeviceShape::fake(Arch::Trn1, 1);
        assert_eq!(lnc_size(&cfg(&[]), &trn1).unwrap(), (1, None));
        let (s, w) = lnc_size(&cfg(&[("NEURON_RT_VIRTUAL_CORE_SIZE", "2")]), &trn1).unwrap();
        assert_eq!(s, 1);
        assert!(w.unwrap().contains("not supported on trn1"));
        assert_eq!(lnc_size(&cfg(&[]), &[]).unwrap_err().message, "This instance has no neuron devices");
    }

    #[test]
    fn logical_cores_cover_physical_pairs() {
        let plan = TopologyPlan::new(&cfg(&[]), &trn2(2)).unwrap();
        assert_eq!((plan.total_vnc(), plan.visible_vnc()), (8, 8));
        let t = plan.assume();
        let v5 = t.vcore(5).unwrap();
        assert_eq!((v5.device, v5.physical.clone(), v5.global), (1, vec![CoreId(2), CoreId(3)], 5));
    }

    #[test]
    fn visible_cores_are_renumbered() {
        let plan = TopologyPlan::new(&cfg(&[("NEURON_RT_VISIBLE_CORES", "3-4")]), &trn2(2)).unwrap();
        let t = plan.assume();
        assert_eq!(t.visible_vnc(), 2);
        assert_eq!(t.vcore(0).unwrap().global, 3);
        assert_eq!(t.vcore(0).unwrap().physical, vec![CoreId(6), CoreId(7)]);
        assert_eq!((t.vcore(1).unwrap().device, t.vcore(1).unwrap().physical[0]), (1, CoreId(0)));
        assert!(t.vcore(2).is_err());
        assert_eq!(t.visible_range(), "3-4");
    }

    #[test]
    fn visible_core_errors() {
        let e = TopologyPlan::new(&cfg(&[("NEURON_RT_VISIBLE_CORES", "0,2")]), &trn2(1)).unwrap_err();
        assert_eq!(e.status, NrtStatus::Invalid);
        assert!(e.message.starts_with("Logical Neuron cores are not contiguous"), "{e}");
        let e = TopologyPlan::new(&cfg(&[("NEURON_RT_VISIBLE_CORES", "4")]), &trn2(1)).unwrap_err();
        assert!(e.message.starts_with("Specified core not accessible! is /dev/neuron1 visible to process?"), "{e}");
    }

    #[test]
    fn num_cores_rules() {
        let plan = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "1")]), &trn2(2)).unwrap();
        assert_eq!(plan.visible_vnc(), 1);
        let plan = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "4")]), &trn2(2)).unwrap();
        assert_eq!(plan.assume().visible_vnc(), 4);
        let e = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "3")]), &trn2(2)).unwrap_err();
        assert!(e.message.contains("must request one core, or the whole device (multiple of 4)"), "{e}");
        let e = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "12")]), &trn2(2)).unwrap_err();
        assert_eq!(e.status, NrtStatus::Failure);
        assert_eq!(e.message, "Logical Neuron Core(s) not available - Requested:12 Available:8 Logical Core size 2");
        // trn1 has no multiple rule.
        let trn1 = DeviceShape::fake(Arch::Trn1, 2);
        let plan = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "3")]), &trn1).unwrap();
        assert_eq!(plan.visible_vnc(), 3);
        let e = TopologyPlan::new(&cfg(&[("NEURON_RT_NUM_CORES", "5")]), &trn1).unwrap_err();
        assert_eq!(e.message, "NeuronCore(s) not available - Requested:5 Available:4");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the selection, visible cores are numbered from 0,
            /// cover `lnc` distinct physical cores of one existing device
            /// each, never overlap, and match the planned visible count.
            #[test]
            fn visible_cores_partition_physical_cores(
                arch in proptest::sample::select(&[Arch::Trn1, Arch::Inf2, Arch::Trn2, Arch::Trn3][..]),
                devices in 1u32..4,
                lnc in proptest::option::of(1u32..=2),
                visible in proptest::option::of((0u32..40, 0u32..8)),
                num in proptest::option::of(0u32..40),
            ) {
                let mut pairs: Vec<(String, String)> = Vec::new();
                if let Some(l) = lnc { pairs.push(("NEURON_LOGICAL_NC_CONFIG".into(), l.to_string())); }
                if let Some((a, len)) = visible { pairs.push(("NEURON_RT_VISIBLE_CORES".into(), format!("{a}-{}", a + len))); }
                if let Some(n) = num { pairs.push(("NEURON_RT_NUM_CORES".into(), n.to_string())); }
                let config = Config::from_env(&Env::from_pairs(pairs)).unwrap();
                let shapes = DeviceShape::fake(arch, devices);
                let Ok(plan) = TopologyPlan::new(&config, &shapes) else { return Ok(()) };
                let t = plan.assume();
                prop_assert_eq!(t.visible_vnc(), plan.visible_vnc());
                prop_assert!(t.visible_vnc() <= t.total_vnc());
                let mut seen = std::collections::BTreeSet::new();
                for (i, v) in t.vcores().iter().enumerate() {
                    prop_assert_eq!(v.index as usize, i);
                    prop_assert_eq!(v.physical.len() as u32, t.lnc());
                    prop_assert!(v.device < shapes.len());
                    for c in &v.physical {
                        prop_assert!(c.0 < shapes[v.device].physical_cores);
                        prop_assert!(seen.insert((v.device, c.0)));
                    }
                    prop_assert_eq!(v.physical[0].0 % t.lnc(), 0);
                }
            }
        }
    }

    #[test]
    fn instance_info_values() {
        let i = InstanceInfo::from_instance_name("trn2.48xlarge", Arch::Trn2);
        assert_eq!((i.family.value(), i.size.value(), i.arch_name.as_str()), (5, 7, "trn2"));
        let i = InstanceInfo::from_instance_name("trn1n.32xlarge", Arch::Trn1);
        assert_eq!((i.family, i.size), (InstanceFamily::Trn1n, InstanceSize::Xl32));
        let i = InstanceInfo::from_devices(&DeviceShape::fake(Arch::Inf2, 12));
        assert_eq!((i.family, i.size), (InstanceFamily::Inf2, InstanceSize::Xl48));
        let i = InstanceInfo::from_devices(&DeviceShape::fake(Arch::Trn3, 3));
        assert_eq!((i.family, i.size, i.device_revision.as_str()), (InstanceFamily::Trn3, InstanceSize::Unknown, "pre"));
    }
}
