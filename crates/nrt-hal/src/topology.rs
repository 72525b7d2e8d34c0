//! The instance's topology as data: which Neuron devices an EC2 instance
//! type carries, where they sit on PCI, the routing id the driver gives
//! each, which devices are linked, and the EFA NIC attached to each.
//!
//! One table ([`INSTANCE_TYPES`]) plus the per-generation routing orders
//! of the driver; the simulator builds its devices from it, the runtime
//! answers `nrt_host_device_id_rid_map_get` and
//! `nrt_get_attached_efa_bdf` from it, and the tools print its BDFs and
//! links. What the public record gives and what is ours is said row by
//! row ([`InstanceType::source`]) and in `docs/c-api.md`.

use crate::arch::Arch;
use std::fmt;

/// A PCI address (domain:bus:device.function).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciBdf {
    /// PCI domain (segment).
    pub domain: u16,
    /// Bus number.
    pub bus: u8,
    /// Device (slot) number, 0..32.
    pub device: u8,
    /// Function number, 0..8.
    pub function: u8,
}

impl PciBdf {
    /// The short form without the domain (`cc:00.0`), as neuron-ls
    /// prints it.
    pub fn short(&self) -> String {
        format!("{:02x}:{:02x}.{:x}", self.bus, self.device, self.function)
    }
}

impl fmt::Display for PciBdf {
    /// The full form (`0000:cc:00.0`), as sysfs and libnrt spell it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{}", self.domain, self.short())
    }
}

/// How the devices of an instance are linked to each other (NeuronLink).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Each device links to the previous and the next (two devices: each
    /// to the other).
    Ring,
    /// A two-dimensional torus `width` devices wide, in row-major device
    /// order, with wrap-around links.
    Torus {
        /// Devices per row.
        width: u32,
    },
}

/// An EC2 instance type and its Neuron topology: one row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstanceType {
    /// The EC2 name, e.g. `trn1.32xlarge`.
    pub name: &'static str,
    /// Chip generation of every device.
    pub arch: Arch,
    /// Number of Neuron devices.
    pub devices: u32,
    /// Whether the device count is a guess.
    pub guessed: bool,
    /// EFA NICs of the instance (0: none); NIC `n` serves devices
    /// `n * devices / nics ..` (an equal share each).
    pub efa_nics: u32,
    /// Device links.
    pub links: Links,
    /// Which of the row's facts are public and which are ours.
    pub source: &'static str,
}

/// The instance types the simulator can impersonate.
pub static INSTANCE_TYPES: &[InstanceType] = &[
    InstanceType { name: "trn1.2xlarge", arch: Arch::Trn1, devices: 1, guessed: false, efa_nics: 0, links: Links::Ring, source: "EFA: ours (none)" },
    InstanceType { name: "trn1.32xlarge", arch: Arch::Trn1, devices: 16, guessed: false, efa_nics: 8, links: Links::Ring, source: "EFA NIC count and links: ours" },
    InstanceType { name: "trn1n.32xlarge", arch: Arch::Trn1, devices: 16, guessed: false, efa_nics: 16, links: Links::Ring, source: "EFA NIC count and links: ours" },
    InstanceType { name: "inf2.xlarge", arch: Arch::Inf2, devices: 1, guessed: false, efa_nics: 0, links: Links::Ring, source: "EFA: ours (none)" },
    InstanceType { name: "inf2.8xlarge", arch: Arch::Inf2, devices: 1, guessed: false, efa_nics: 0, links: Links::Ring, source: "EFA: ours (none)" },
    InstanceType { name: "inf2.24xlarge", arch: Arch::Inf2, devices: 6, guessed: false, efa_nics: 0, links: Links::Ring, source: "EFA: ours (none); links: ours" },
    InstanceType { name: "inf2.48xlarge", arch: Arch::Inf2, devices: 12, guessed: false, efa_nics: 0, links: Links::Ring, source: "EFA: ours (none); links: ours" },
    InstanceType { name: "trn2.3xlarge", arch: Arch::Trn2, devices: 1, guessed: true, efa_nics: 1, links: Links::Ring, source: "device and EFA NIC count: ours" },
    InstanceType {
        name: "trn2.48xlarge",
        arch: Arch::Trn2,
        devices: 16,
        guessed: false,
        efa_nics: 16,
        links: Links::Torus { width: 4 },
        source: "one 200 Gbps EFA NIC per device (3.2 Tbps per server) and the 4x4 torus (neuron-ls) are public",
    },
    InstanceType {
        name: "trn2u.48xlarge",
        arch: Arch::Trn2,
        devices: 16,
        guessed: false,
        efa_nics: 16,
        links: Links::Torus { width: 4 },
        source: "as trn2.48xlarge; the UltraServer links between instances are not modelled",
    },
    InstanceType { name: "trn3.48xlarge", arch: Arch::Trn3, devices: 16, guessed: true, efa_nics: 16, links: Links::Torus { width: 4 }, source: "ours (as trn2.48xlarge)" },
];

/// Looks an instance type up by its EC2 name (case-insensitive).
pub fn instance_type(name: &str) -> Option<&'static InstanceType> {
    INSTANCE_TYPES.iter().find(|t| t.name.eq_ignore_ascii_case(name.trim()))
}

/// Host device id of each routing id on a full (16-device) instance, per
/// generation: the driver's renaming tables (`neuron_pci_routing_id_to_user_id`,
/// v2 for trn1, v3 torus for trn2, v4 torus for trn3); inf2 keeps the
/// routing order.
fn user_id_of_routing_id(arch: Arch) -> Option<&'static [u32; 16]> {
    const V2: [u32; 16] = [0, 4, 1, 5, 3, 7, 2, 6, 12, 8, 13, 9, 15, 11, 14, 10];
    const V3_TORUS: [u32; 16] = [0, 3, 4, 7, 12, 15, 8, 11, 1, 2, 5, 6, 13, 14, 9, 10];
    match arch {
        Arch::Trn1 => Some(&V2),
        Arch::Inf2 => None,
        Arch::Trn2 | Arch::Trn3 => Some(&V3_TORUS),
    }
}

/// The topology of one simulated (or real) instance: a row of the table,
/// or for an instance made up in code (a bare family, a device count no
/// row has) the same facts derived the way ours are ([`Topology::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Chip generation.
    pub arch: Arch,
    /// Devices on the instance.
    pub devices: u32,
    /// EFA NICs (0: none).
    pub efa_nics: u32,
    /// Device links.
    pub links: Links,
}

impl Topology {
    /// The topology of instance type `t`.
    pub fn of_type(t: &InstanceType) -> Topology {
        Topology { arch: t.arch, devices: t.devices, efa_nics: t.efa_nics, links: t.links }
    }

    /// The topology of an instance called `name` with `devices` devices of
    /// `arch`: the table's row when `name` is one with that many devices,
    /// otherwise ours: one EFA NIC per device, devices in a ring.
    pub fn of(name: &str, arch: Arch, devices: u32) -> Topology {
        match instance_type(name) {
            Some(t) if t.arch == arch && t.devices == devices => Topology::of_type(t),
            _ => Topology { arch, devices, efa_nics: devices, links: Links::Ring },
        }
    }

    /// The PCI address of device `d` (ours: bus 0x10 + d).
    pub fn device_bdf(&self, d: u32) -> PciBdf {
        PciBdf { domain: 0, bus: 0x10u8.wrapping_add(d as u8), device: 0, function: 0 }
    }

    /// The routing id of the device with host id `host_device_id`
    /// (`None` past the last device): the driver's routing order on a
    /// 16-device instance of its generation, the identity on a
    /// one-device instance and (ours) on any other device count.
    pub fn routing_id(&self, host_device_id: u32) -> Option<u32> {
        if host_device_id >= self.devices {
            return None;
        }
        match user_id_of_routing_id(self.arch) {
            Some(t) if self.devices == 16 => t.iter().position(|&u| u == host_device_id).map(|r| r as u32),
            _ => Some(host_device_id),
        }
    }

    /// Routing ids indexed by host device id, for every device (what the
    /// driver's HOST_DEVICE_ID_TO_RID_MAP returns).
    pub fn routing_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.devices).filter_map(|d| self.routing_id(d))
    }

    /// The EFA NIC attached to device `d` (`None`: the instance has no
    /// EFA, or `d` is not a device).
    pub fn efa_nic(&self, d: u32) -> Option<u32> {
        (self.efa_nics > 0 && d < self.devices).then(|| (u64::from(d) * u64::from(self.efa_nics) / u64::from(self.devices)) as u32)
    }

    /// The PCI address of EFA NIC `n` (ours: bus 0x80 + n).
    pub fn efa_bdf(&self, n: u32) -> PciBdf {
        PciBdf { domain: 0, bus: 0x80u8.wrapping_add(n as u8), device: 0, function: 0 }
    }

    /// The PCI address of the EFA NIC attached to device `d`, if any.
    pub fn attached_efa_bdf(&self, d: u32) -> Option<PciBdf> {
        self.efa_nic(d).map(|n| self.efa_bdf(n))
    }

    /// The devices device `d` links to, in neuron-ls order.
    pub fn connected_to(&self, d: u32) -> Vec<u32> {
        let n = self.devices;
        if d >= n {
            return Vec::new();
        }
        match self.links {
            Links::Torus { width } if width > 1 && n.is_multiple_of(width) && n / width > 1 => {
                let (rows, r, c) = (n / width, d / width, d % width);
                let at = |r: u32, c: u32| r * width + c;
                let mut v = vec![at((r + rows - 1) % rows, c), at(r, (c + width - 1) % width), at((r + 1) % rows, c), at(r, (c + 1) % width)];
                let mut seen = std::collections::BTreeSet::new();
                v.retain(|x| *x != d && seen.insert(*x));
                v
            }
            _ => match n {
                0 | 1 => Vec::new(),
                2 => vec![1 - d],
                _ => vec![(d + n - 1) % n, (d + 1) % n],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive_and_rows_are_consistent() {
        let t = instance_type("TRN1.32xlarge").unwrap();
        assert_eq!((t.arch, t.devices), (Arch::Trn1, 16));
        assert!(instance_type("p4d.24xlarge").is_none());
        for t in INSTANCE_TYPES {
            assert!(t.efa_nics == 0 || t.devices % t.efa_nics == 0, "{}: NICs share the devices equally", t.name);
            assert!(!t.source.is_empty(), "{}: the row says where its facts come from", t.name);
        }
    }

    #[test]
    fn routing_ids_follow_the_driver_tables() {
        // trn2.48xlarge: host device 3 has routing id 1 (v3 table: rid 1 -> user 3).
        let t = Topology::of_type(instance_type("trn2.48xlarge").unwrap());
        let map: Vec<u32> = t.routing_ids().collect();
        assert_eq!(map, vec![0, 8, 9, 1, 2, 10, 11, 3, 6, 14, 15, 7, 4, 12, 13, 5]);
        // trn1.32xlarge: v2 table (rid 1 -> user 4).
        let t1 = Topology::of_type(instance_type("trn1.32xlarge").unwrap());
        assert_eq!(t1.routing_id(4), Some(1));
        assert_eq!(t1.routing_id(16), None);
        // inf2 and one-device instances keep the order.
        let i = Topology::of_type(instance_type("inf2.48xlarge").unwrap());
        assert!(i.routing_ids().enumerate().all(|(h, r)| h as u32 == r));
        assert_eq!(Topology::of("trn2-1", Arch::Trn2, 1).routing_ids().collect::<Vec<_>>(), vec![0]);
        for t in INSTANCE_TYPES {
            let mut ids: Vec<u32> = Topology::of_type(t).routing_ids().collect();
            ids.sort();
            assert_eq!(ids, (0..t.devices).collect::<Vec<_>>(), "{}: a permutation", t.name);
        }
    }

    #[test]
    fn efa_nics_bdfs_and_links() {
        let t = Topology::of_type(instance_type("trn1.32xlarge").unwrap());
        assert_eq!((t.efa_nic(0), t.efa_nic(1), t.efa_nic(15)), (Some(0), Some(0), Some(7)));
        assert_eq!(t.attached_efa_bdf(3).unwrap().to_string(), "0000:81:00.0");
        assert_eq!(t.device_bdf(2).short(), "12:00.0");
        assert_eq!(Topology::of_type(instance_type("inf2.48xlarge").unwrap()).attached_efa_bdf(0), None);
        // neuron-ls on trn2.48xlarge: device 0 links to 12, 3, 4, 1.
        let t2 = Topology::of_type(instance_type("trn2.48xlarge").unwrap());
        assert_eq!(t2.connected_to(0), vec![12, 3, 4, 1]);
        assert_eq!(t2.connected_to(5), vec![1, 4, 9, 6]);
        let made_up = Topology::of("trn2-1", Arch::Trn2, 3);
        assert_eq!((made_up.efa_nics, made_up.connected_to(0)), (3, vec![2, 1]));
        assert_eq!(Topology::of("x", Arch::Trn2, 2).connected_to(1), vec![0]);
        assert!(Topology::of("x", Arch::Trn2, 1).connected_to(0).is_empty());
    }
}
