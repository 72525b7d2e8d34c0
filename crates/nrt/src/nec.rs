//! The runtime side of Neuron Elastic Collectives (`nec.h`): what the
//! collectives library asks libnrt about the instance's devices and links,
//! the semaphore doorbells its proxy thread rings, and the per-rank sizes
//! of a collective whose message sizes are known only at execution time.
//!
//! nec.h gives the signatures and one-line purposes, not the data
//! layouts; what each function does here, over the instance's topology
//! table ([`nrt_hal::Topology`]) and the simulated semaphores, is ours and
//! said in docs/collectives.md ("nec.h").
//!
//! - MLA indexes: the collectives library's numbering of the instance's
//!   devices. A device sees the identity (MLA index = host device id)
//!   until `nec_build_port_and_rid_map` gives it another ([`MlaMap`]);
//!   ports are a device's links in the topology's order.
//! - Pods (multi-node NeuronLink domains): the simulated instances are
//!   single nodes outside any pod, so no node reaches another node's
//!   devices and no pod peer exists ([`pod_can_access`], [`pod_peer_node`]).
//! - Doorbells: a semaphore's increment register as the host sees it is a
//!   word of the runtime's doorbell window ([`Doorbells`]); a store of `v`
//!   there adds `v` to that semaphore of the device.
//! - Dynamic sizes: [`DynamicSizes`] reads and writes the per-rank table a
//!   collective with data-dependent sizes keeps in host memory.

use crate::status::{NrtError, NrtResult};
use nrt_hal::{CoreId, Device, Topology};
use std::sync::Arc;

/// `nec_pod_type_t`: how the nodes of a pod are linked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodType {
    /// No pod (`NEC_POD_TYPE_NONE`).
    None = 0,
    /// Nodes linked point to point (`NEC_POD_TYPE_P2P`).
    P2p = 1,
    /// Nodes linked through a switch (`NEC_POD_TYPE_SWITCH`).
    Switch = 2,
}

impl PodType {
    /// The pod type with C value `code`; NRT_INVALID for
    /// `NEC_POD_TYPE_INVALID` and anything past it.
    pub fn from_code(code: u32) -> NrtResult<PodType> {
        match code {
            0 => Ok(PodType::None),
            1 => Ok(PodType::P2p),
            2 => Ok(PodType::Switch),
            _ => Err(NrtError::invalid(format!("pod type {code} is not one of NONE (0), P2P (1), SWITCH (2)"))),
        }
    }
}

/// Whether device `local_rid` of node `local_node` reaches device
/// `remote_rid` of node `remote_node` directly: on this instance every
/// device of the node does (through NeuronLink or the host), and no
/// device of another node does (the instance belongs to no pod, whatever
/// pod type the caller assumes). A routing id past the instance's devices
/// is NRT_INVALID.
pub fn pod_can_access(topology: &Topology, pod: PodType, local_rid: u32, local_node: u32, remote_rid: u32, remote_node: u32) -> NrtResult<bool> {
    let _ = pod;
    for rid in [local_rid, remote_rid] {
        if rid >= topology.devices {
            return Err(NrtError::invalid(format!("routing id {rid} is past the instance's {} devices", topology.devices)));
        }
    }
    Ok(local_node == remote_node)
}

/// The node `port_distance` ports away from `node` in a point-to-point
/// pod, as seen from device `device`: `node` itself at distance 0, and
/// none otherwise, since the instance belongs to no pod. A device the
/// instance does not have is NRT_INVALID.
pub fn pod_peer_node(topology: &Topology, device: u32, node: i32, port_distance: u32) -> NrtResult<Option<i32>> {
    if device >= topology.devices {
        return Err(NrtError::invalid(format!("device {device} is past the instance's {} devices", topology.devices)));
    }
    if node < 0 {
        return Err(NrtError::invalid(format!("node {node} is negative")));
    }
    Ok((port_distance == 0).then_some(node))
}

/// One device's numbering of the instance's devices by MLA index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MlaMap {
    /// Host device id of each MLA index (`None`: no device has it).
    devices: Vec<Option<u32>>,
}

impl MlaMap {
    /// MLA index `i` is host device `i`, for every device.
    pub fn identity(topology: &Topology) -> MlaMap {
        MlaMap { devices: (0..topology.devices).map(Some).collect() }
    }

    /// The map `nec_build_port_and_rid_map` gives: `pairs` of (MLA index,
    /// host device id). NRT_INVALID for an empty list, a negative or
    /// repeated MLA index, or a device the instance does not have or that
    /// is named twice; nothing is changed then.
    pub fn build(topology: &Topology, pairs: &[(i32, i32)]) -> NrtResult<MlaMap> {
        if pairs.is_empty() {
            return Err(NrtError::invalid("an MLA map needs at least one (MLA index, host device id) pair"));
        }
        let n = topology.devices;
        let mut devices: Vec<Option<u32>> = Vec::new();
        for &(mla, dev) in pairs {
            let m = usize::try_from(mla).map_err(|_| NrtError::invalid(format!("MLA index {mla} is negative")))?;
            let d = u32::try_from(dev).ok().filter(|d| *d < n).ok_or_else(|| NrtError::invalid(format!("host device id {dev} is not a device of this instance (0..{n})")))?;
            if m >= n as usize {
                return Err(NrtError::invalid(format!("MLA index {mla} is past the instance's {n} devices")));
            }
            if devices.len() <= m {
                devices.resize(m + 1, None);
            }
            if devices[m].is_some() {
                return Err(NrtError::invalid(format!("MLA index {mla} is given twice")));
            }
            if devices.contains(&Some(d)) {
                return Err(NrtError::invalid(format!("host device id {dev} is given twice")));
            }
            devices[m] = Some(d);
        }
        Ok(MlaMap { devices })
    }

    /// The host device id of MLA index `mla`, if one has it.
    pub fn device(&self, mla: i32) -> Option<u32> {
        usize::try_from(mla).ok().and_then(|m| self.devices.get(m).copied().flatten())
    }

    /// The MLA index of host device `device`, if it has one.
    pub fn index_of(&self, device: u32) -> Option<i32> {
        self.devices.iter().position(|d| *d == Some(device)).map(|m| m as i32)
    }

    /// `nec_mla_idx_to_rid`: the routing id of MLA index `mla`.
    pub fn to_rid(&self, topology: &Topology, mla: i32) -> Option<u32> {
        self.device(mla).and_then(|d| topology.routing_id(d))
    }

    /// `nec_rid_to_mla_idx`: the MLA index of routing id `rid`.
    pub fn from_rid(&self, topology: &Topology, rid: i32) -> Option<i32> {
        let rid = u32::try_from(rid).ok()?;
        (0..topology.devices).find(|d| topology.routing_id(*d) == Some(rid)).and_then(|d| self.index_of(d))
    }

    /// `nec_get_peer_mla_idx`: the MLA index of the device at the other
    /// end of link `port` of MLA index `mla` (ports in the topology's
    /// order of a device's links).
    pub fn peer(&self, topology: &Topology, mla: i32, port: i32) -> Option<i32> {
        let d = self.device(mla)?;
        let port = usize::try_from(port).ok()?;
        topology.connected_to(d).get(port).and_then(|p| self.index_of(*p))
    }
}

/// The host's view of every core's semaphore increment registers: one
/// 32-bit word per (device, core, semaphore) in a buffer the runtime owns,
/// so the address of a word names the semaphore. The words themselves are
/// never read or written; a doorbell store goes to the device.
pub struct Doorbells {
    window: Box<[u32]>,
    devices: Vec<Arc<dyn Device>>,
    cores: u32,
    semaphores: u32,
}

impl std::fmt::Debug for Doorbells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doorbells").field("devices", &self.devices.len()).field("cores", &self.cores).field("semaphores", &self.semaphores).finish()
    }
}

impl Doorbells {
    /// The window over `devices` (all of one shape).
    pub fn new(devices: &[Arc<dyn Device>]) -> Doorbells {
        let (cores, semaphores) = devices.first().map_or((0, 0), |d| (d.info().physical_cores, d.info().semaphores()));
        let words = devices.len() * cores as usize * semaphores as usize;
        Doorbells { window: vec![0u32; words.max(1)].into_boxed_slice(), devices: devices.to_vec(), cores, semaphores }
    }

    /// The address of semaphore `index` of `core` of the device at
    /// position `device`: what the proxy thread stores to.
    pub fn address(&self, device: usize, core: CoreId, index: u32) -> NrtResult<usize> {
        if device >= self.devices.len() || core.0 >= self.cores || index >= self.semaphores {
            return Err(NrtError::invalid(format!(
                "semaphore {index} of NC {} of device {device} does not exist ({} devices, {} cores, {} semaphores)",
                core.0,
                self.devices.len(),
                self.cores,
                self.semaphores
            )));
        }
        let word = (device * self.cores as usize + core.0 as usize) * self.semaphores as usize + index as usize;
        Ok(self.window.as_ptr() as usize + 4 * word)
    }

    /// Rings the doorbell at `addr` with `value` when `addr` is one
    /// (adds `value` to that semaphore; `Ok(true)`), or says it is not
    /// (`Ok(false)`). A misaligned address inside the window is NRT_INVALID.
    pub fn ring(&self, addr: usize, value: u32) -> NrtResult<bool> {
        let base = self.window.as_ptr() as usize;
        let words = if self.cores == 0 { 0 } else { self.devices.len() * self.cores as usize * self.semaphores as usize };
        if addr < base || addr >= base + 4 * words {
            return Ok(false);
        }
        if (addr - base) % 4 != 0 {
            return Err(NrtError::invalid(format!("semaphore doorbell address {addr:#x} is not 4-byte aligned")));
        }
        let word = (addr - base) / 4;
        let per_device = self.cores as usize * self.semaphores as usize;
        let (d, rest) = (word / per_device, word % per_device);
        let (core, index) = (rest / self.semaphores as usize, rest % self.semaphores as usize);
        self.devices[d]
            .semaphore_increment(CoreId(core as u32), index as u32, value)
            .map_err(|e| NrtError::failure(format!("incrementing semaphore {index} of NC {core} of device {d}: {e}")))?;
        Ok(true)
    }
}

/// The per-rank table of a collective whose message sizes are known only
/// at execution time (nec.h's `dyn_input`): `4 * rank_n` little-endian
/// `u64` element counts in host memory (any alignment), in four rows of `rank_n`: the
/// elements sent to each rank, the element offset each send starts at,
/// the element offset each receive lands at, and the elements received
/// from each rank. The layout is ours (libnrt's is not published).
pub struct DynamicSizes<'a> {
    bytes: &'a mut [u8],
    rank_n: usize,
}

/// The rows of a [`DynamicSizes`] table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynRow {
    /// Elements sent to each rank.
    SendCount = 0,
    /// Element offset of each send in the send buffer.
    SendOffset = 1,
    /// Element offset of each receive in the receive buffer.
    RecvOffset = 2,
    /// Elements received from each rank.
    RecvCount = 3,
}

impl<'a> DynamicSizes<'a> {
    /// Bytes a table of `rank_n` ranks takes.
    pub fn bytes(rank_n: usize) -> usize {
        4 * rank_n * 8
    }

    /// The table over `bytes` (at least [`DynamicSizes::bytes`] of them).
    /// NRT_INVALID for `rank_n` 0 or a table too small.
    pub fn new(bytes: &'a mut [u8], rank_n: i32) -> NrtResult<DynamicSizes<'a>> {
        let n = usize::try_from(rank_n).ok().filter(|n| *n > 0 && *n <= 1 << 24).ok_or_else(|| NrtError::invalid(format!("rank_n {rank_n} is not a rank count (1..=16777216)")))?;
        if bytes.len() < Self::bytes(n) {
            return Err(NrtError::invalid(format!("a dynamic size table of {n} ranks needs {} bytes; it has {}", Self::bytes(n), bytes.len())));
        }
        Ok(DynamicSizes { bytes, rank_n: n })
    }

    fn word(&self, at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.bytes[8 * at..8 * at + 8]);
        u64::from_le_bytes(w)
    }

    fn slot(&self, row: DynRow, rank: i32) -> NrtResult<usize> {
        let r = usize::try_from(rank).ok().filter(|r| *r < self.rank_n).ok_or_else(|| NrtError::invalid(format!("rank {rank} is not in 0..{}", self.rank_n)))?;
        Ok(row as usize * self.rank_n + r)
    }

    /// `row`'s entry for `rank` in bytes of `elem` bytes each.
    pub fn bytes_of(&self, row: DynRow, rank: i32, elem: usize) -> NrtResult<usize> {
        let v = self.word(self.slot(row, rank)?);
        usize::try_from(v).ok().and_then(|v| v.checked_mul(elem)).ok_or_else(|| NrtError::invalid(format!("{v} elements of {elem} bytes overflow a size")))
    }

    /// Sets `row`'s entry for `rank` to `bytes` of `elem`-byte elements
    /// (NRT_INVALID unless whole elements).
    pub fn set_bytes(&mut self, row: DynRow, rank: i32, bytes: usize, elem: usize) -> NrtResult<()> {
        if elem == 0 || bytes % elem != 0 {
            return Err(NrtError::invalid(format!("{bytes} bytes are not a whole number of {elem}-byte elements")));
        }
        let at = self.slot(row, rank)?;
        self.bytes[8 * at..8 * at + 8].copy_from_slice(&((bytes / elem) as u64).to_le_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::topology::instance_type;

    #[test]
    fn mla_maps_follow_the_routing_ids_and_links() {
        let t = Topology::of_type(instance_type("trn2.48xlarge").unwrap());
        let id = MlaMap::identity(&t);
        // Host device 3 has routing id 1 (the driver's trn2 order).
        assert_eq!(id.to_rid(&t, 3), Some(1));
        assert_eq!(id.from_rid(&t, 1), Some(3));
        assert_eq!(id.to_rid(&t, 16), None);
        // Device 0's links in the 4x4 torus: 12, 3, 4, 1.
        assert_eq!((0..4).map(|p| id.peer(&t, 0, p).unwrap()).collect::<Vec<_>>(), t.connected_to(0).iter().map(|d| *d as i32).collect::<Vec<_>>());
        assert_eq!(id.peer(&t, 0, 4), None);
        let m = MlaMap::build(&t, &[(0, 5), (1, 3)]).unwrap();
        assert_eq!((m.device(0), m.device(1), m.device(2)), (Some(5), Some(3), None));
        assert_eq!(m.to_rid(&t, 1), Some(1));
        assert!(MlaMap::build(&t, &[(0, 5), (0, 3)]).is_err() && MlaMap::build(&t, &[(0, 5), (1, 5)]).is_err());
        assert!(MlaMap::build(&t, &[(0, 16)]).is_err() && MlaMap::build(&t, &[(-1, 0)]).is_err() && MlaMap::build(&t, &[]).is_err());
    }

    #[test]
    fn the_instance_is_a_node_outside_any_pod() {
        let t = Topology::of_type(instance_type("trn2.48xlarge").unwrap());
        assert!(pod_can_access(&t, PodType::P2p, 0, 0, 5, 0).unwrap());
        assert!(!pod_can_access(&t, PodType::Switch, 0, 0, 5, 1).unwrap());
        assert!(pod_can_access(&t, PodType::None, 0, 0, 16, 0).is_err());
        assert_eq!(pod_peer_node(&t, 2, 3, 0).unwrap(), Some(3));
        assert_eq!(pod_peer_node(&t, 2, 3, 1).unwrap(), None);
        assert!(pod_peer_node(&t, 16, 0, 1).is_err() && PodType::from_code(3).is_err());
    }

    #[test]
    fn a_doorbell_store_adds_to_its_semaphore() {
        let cfg = nrt_sim::SimConfig::builder().deterministic(true).devices(2).hbm_bytes_per_channel(64 << 20).build();
        let devs: Vec<Arc<dyn Device>> = nrt_sim::SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
        let bells = Doorbells::new(&devs);
        let at = bells.address(1, CoreId(1), 7).unwrap();
        devs[1].semaphore_set(CoreId(1), 7, 3).unwrap();
        assert!(bells.ring(at, 4).unwrap());
        assert_eq!(devs[1].semaphore_read(CoreId(1), 7).unwrap(), 7);
        assert_eq!(devs[0].semaphore_read(CoreId(1), 7).unwrap(), 0, "the other device's semaphore is untouched");
        assert!(!bells.ring(&at as *const usize as usize, 1).unwrap(), "an address outside the window is no doorbell");
        assert!(bells.ring(at + 1, 1).is_err());
        assert!(bells.address(2, CoreId(0), 0).is_err() && bells.address(0, CoreId(0), devs[0].info().semaphores()).is_err());
    }

    #[test]
    fn dynamic_size_tables_read_and_write_their_rows() {
        let mut words = vec![0u8; 64];
        words[8] = 7; // send count to rank 1
        words[24] = 2; // send offset of rank 1
        let mut t = DynamicSizes::new(&mut words, 2).unwrap();
        assert_eq!(t.bytes_of(DynRow::SendCount, 1, 4).unwrap(), 28);
        assert_eq!(t.bytes_of(DynRow::SendOffset, 1, 4).unwrap(), 8);
        t.set_bytes(DynRow::RecvCount, 0, 40, 4).unwrap();
        assert_eq!(t.bytes_of(DynRow::RecvCount, 0, 4).unwrap(), 40);
        assert!(t.set_bytes(DynRow::RecvCount, 0, 6, 4).is_err() && t.bytes_of(DynRow::SendCount, 2, 4).is_err());
        assert_eq!(words[48], 10);
        assert!(DynamicSizes::new(&mut [0u8; 63], 2).is_err() && DynamicSizes::new(&mut [0u8; 64], 0).is_err());
    }
}
