//! Launching an operation whose replica group spans processes: this
//! process composes the steps of its own ranks ([`super::split`]), lays
//! out each local rank's proxy area (outbox, inbox, post and index
//! words), programs its queues, rings the first doorbells and starts the
//! [`super::proxy`] thread that moves the cross-process bytes.

use super::compose::{self, CC_QUEUES, CC_SEM, RankImage, RankSide};
use super::net::NetWorld;
use super::plan::{self, CcKind};
use super::proxy::{Injected, Job, Proxy};
use super::proxy_work::{RankPlace, Work};
use super::split::{self, Split};
use super::world::{Arrival, chunk_addrs};
use crate::memory::{MemOwner, MemUsage};
use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult};
use crate::tensor::Tensor;
use nrt_hal::{CoreId, DeviceAddr, DmaRingConfig};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a launched cross-process operation holds.
pub(super) struct Launch {
    /// Per rank of the group: device, core, expected done count (remote
    /// ranks: zeros).
    pub ranks: Vec<(usize, CoreId, u32)>,
    /// Device memory to free when the last local rank leaves.
    pub memory: Vec<(usize, DeviceAddr)>,
    /// The proxy thread's outcome.
    pub proxy: Arc<Proxy>,
}

/// Composes, programs and starts this process's part of the operation of
/// `arrivals` (the local ranks, in rank order; `local[r]`: rank `r` of the
/// group runs here).
pub(super) fn launch(rt: &Runtime, world: &Arc<NetWorld>, local: &[bool], arrivals: &[Arrival], seq: u64) -> NrtResult<Launch> {
    let first = &arrivals[0];
    for a in &arrivals[1..] {
        if a.kind != first.kind || a.dtype != first.dtype || a.count != first.count || (a.kind.reduces() && a.op != first.op) {
            return Err(NrtError::invalid(format!("mismatched collectives between the peers: rank {} (vnc {}) runs {} but rank {} (vnc {}) runs {}", first.rank, first.vnc, first.describe(), a.rank, a.vnc, a.describe())));
        }
    }
    let group = &first.group;
    let n = group.len();
    let kind = &first.kind;
    let esize = first.dtype.size_bytes() as u64;
    let locate: Vec<(usize, CoreId)> = arrivals.iter().map(|a| rt.vcore(a.vnc).map(|v| (v.device, v.physical[0]))).collect::<NrtResult<_>>()?;
    if locate.iter().any(|l| l.0 != locate[0].0) {
        return Err(NrtError::invalid(format!("the ranks of replica group {group:?} in this process span several Neuron devices; this release runs them on the cores of one device")));
    }
    let dev = locate[0].0;
    let device = rt.device(dev)?.clone();
    let memory = rt.memory(dev)?.clone();
    let arch = device.info().arch;
    let (in_elems, out_elems) = kind.sizes(n, first.count);
    let (in_chunks, out_chunks) = match kind {
        CcKind::AllReduce | CcKind::AllToAll => (n, n),
        CcKind::AllGather => (1, n),
        CcKind::ReduceScatter => (n, 1),
        CcKind::Permute(_) => (1, 1),
    };
    let mut allocated: Vec<(usize, DeviceAddr)> = Vec::new();
    let r = (|| -> NrtResult<Launch> {
        let mut sides: Vec<RankSide> = (0..n).map(|_| RankSide { device: dev as u32, core: CoreId(0), queues: Vec::new(), input: Vec::new(), output: Vec::new(), scratch: Vec::new() }).collect();
        let mut in_place = vec![false; n];
        let mut core_of: BTreeMap<usize, CoreId> = BTreeMap::new();
        for (a, &(_, core)) in arrivals.iter().zip(&locate) {
            let split_buf = |tensors: &[Arc<Tensor>], chunks: usize, elems: u64, what: &str| -> NrtResult<Vec<u64>> {
                if matches!(kind, CcKind::AllReduce) && tensors.len() == 1 {
                    let base = chunk_addrs(rt, dev, tensors, 1, elems * esize, what)?[0];
                    return Ok((0..chunks).map(|c| base + (0..c).map(|k| plan::chunk_len(kind, n, elems, k)).sum::<u64>() * esize).collect());
                }
                chunk_addrs(rt, dev, tensors, chunks, elems / chunks as u64 * esize, what)
            };
            let with_rank = |e: NrtError| NrtError::new(e.status, format!("rank {} (vnc {}): {}", a.rank, a.vnc, e.message));
            let input = split_buf(&a.input, in_chunks, in_elems, "input").map_err(with_rank)?;
            let output = split_buf(&a.output, out_chunks, out_elems, "output").map_err(with_rank)?;
            in_place[a.rank] = input[0] == output[0] && input.len() == output.len();
            sides[a.rank] = RankSide { device: device.info().device_index, core, queues: CC_QUEUES.to_vec(), input, output, scratch: Vec::new() };
            core_of.insert(a.rank, core);
        }
        if matches!(kind, CcKind::ReduceScatter) && n > 1 {
            for (&r, &core) in &core_of {
                let a = memory.alloc(core, MemOwner::Runtime, MemUsage::Cc, (in_elems * esize).max(64), 64)?;
                allocated.push((dev, a));
                sides[r].scratch = (0..n as u64).map(|c| a.get() + c * first.count * esize).collect();
            }
        }
        let p = plan::plan_passes(kind, n, first.count, &in_place, split::net_pass(world.chunk_bytes, esize));
        let sp: Split = split::split(&p, local, esize).map_err(NrtError::invalid)?;
        let mut area_base = vec![0u64; n];
        for (&r, &core) in &core_of {
            let area = &sp.areas[r];
            let a = memory.alloc(core, MemOwner::Runtime, MemUsage::Cc, area.bytes, 64)?;
            allocated.push((dev, a));
            area_base[r] = a.get();
            sides[r].scratch.resize(n, 0);
            sides[r].scratch.extend(area.chunks.iter().map(|o| a.get() + o));
        }
        let sizes = compose::compose(&sp.plan, &sides, first.dtype, first.op.dma(), arch, &vec![0; n]).map_err(NrtError::invalid)?;
        let mut bases = vec![0u64; n];
        for (&r, &core) in &core_of {
            let a = memory.alloc(core, MemOwner::Runtime, MemUsage::DmaRingCollectives, sizes[r].bytes(), 256)?;
            allocated.push((dev, a));
            bases[r] = a.get();
        }
        let images: Vec<RankImage> = compose::compose(&sp.plan, &sides, first.dtype, first.op.dma(), arch, &bases).map_err(NrtError::invalid)?;
        let hal = |what: &str, e: nrt_hal::HalError| NrtError::failure(format!("collectives {what}: {e}"));
        for (&r, &core) in &core_of {
            let img = &images[r];
            for (off, bytes) in img.pieces() {
                if !bytes.is_empty() {
                    device.write(DeviceAddr(img.base + off), &bytes).map_err(|e| hal("descriptor write", e))?;
                }
            }
            for (off, v) in &sp.areas[r].words {
                device.write(DeviceAddr(area_base[r] + off), &v.to_le_bytes()).map_err(|e| hal("proxy word write", e))?;
            }
            for off in &sp.areas[r].reset_words {
                device.write(DeviceAddr(area_base[r] + off), &0u64.to_le_bytes()).map_err(|e| hal("proxy word reset", e))?;
            }
            for (l, lane) in img.lanes.iter().enumerate() {
                let (tx, rx) = img.rings(l);
                let config = DmaRingConfig { tx_ring: DeviceAddr(tx), rx_ring: DeviceAddr(rx), descriptors: lane.capacity, completion_semaphore: None, completion_event: None };
                device.dma_queue_init(core, CC_QUEUES[l], config).map_err(|e| hal("queue init", e))?;
            }
            device.semaphore_set(core, CC_SEM, 0).map_err(|e| hal("semaphore reset", e))?;
        }
        let places: Vec<RankPlace<'_>> = core_of.iter().map(|(&r, &core)| RankPlace { me: r, area: area_base[r], image: &images[r], core, queues: &CC_QUEUES }).collect();
        let work = Arc::new(Work::of_split(&sp, group, &places, 0, 0));
        let op = format!("operation {seq} on replica group {group:?}: {}", first.describe());
        let areas: Vec<(u64, u64)> = core_of.keys().map(|&r| (area_base[r], sp.areas[r].bytes)).collect();
        let regions = world.register_areas(&device, &areas);
        let job = Job { world: world.clone(), device: Box::new(device.clone()), op, work, inject: Injected::from_env(rt.env()), gate: None, regions };
        for &(r, l, s) in &sp.plan.host_submits {
            let k = images[r].lanes[l].step_pairs[s];
            device.dma_tail_increment(core_of[&r], CC_QUEUES[l], k, k).map_err(|e| hal("doorbell", e))?;
        }
        let proxy = Proxy::start(job)?;
        let ranks = (0..n).map(|r| match core_of.get(&r) {
            Some(&c) => (dev, c, sp.plan.expected_done(r)),
            None => (dev, CoreId(u32::MAX), 0),
        }).collect();
        Ok(Launch { ranks, memory: std::mem::take(&mut allocated), proxy })
    })();
    if r.is_err() {
        for (_, a) in allocated.drain(..) {
            let _ = memory.free(a);
        }
    }
    r
}
