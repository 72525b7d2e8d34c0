//! In-NEFF collectives (`nrt_load_collectives`): at load, each rank's
//! PSEUDO_TRIGGER_COLLECTIVE records are checked against its def.json
//! declarations; for each, in program order, the ranks of its replica
//! group meet ([`meet`]), agree on the op and compose the ring schedule of
//! the whole group; each rank then writes one ring per lane holding its
//! part of every op, concatenated in program order, and each record is
//! lowered into the engine records that run it inside `nrt_execute`
//! (docs/collectives.md, "NEFF encoding" and "In-NEFF collectives").
//!
//! The lowered sequence of one op, on the engine that issued the record:
//! 1. a NOP with the record's wait; the core's done semaphore
//!    [`DONE_SEM`] := 0;
//! 2. the doorbell of the model's ready queue for this op's raises: its
//!    DMA raises the ready semaphore of every rank of the group in this
//!    process (the device-side barrier: a peer's buffers are ready once it
//!    reaches the trigger). Each model holds one ready semaphore per
//!    replica group set it uses, from the core's collectives block
//!    ([`READY_SEMS`]), so a raise for another group's op never completes
//!    this op's barrier;
//! 3. a NOP waiting for `ready >= n`, subtracting `n`; then a NOTIFY
//!    CC_START (subtype 7) on the engine's queue;
//! 4. this rank's doorbells: a WRITE of each lane's first step of the op
//!    to the M2S and S2M tail-increment registers of its queue; with ranks
//!    in other processes, then a WRITE of `j + 1` into the rank's gate
//!    word, `j` the op's place among the NEFF's cross-process ops (the
//!    proxy rings the op's landings only from there on);
//! 5. a NOP waiting for `DONE_SEM >= done`, subtracting `done` (the
//!    schedule's "done" signals, raised by the DMA engines), then a
//!    NOTIFY CC_END (subtype 8);
//! 6. a NOP with the record's update (SEM_INC_COMPLETE), so the engine's
//!    next instruction sees the output complete.
//!
//! When a rank passes op k's done wait, its lanes have walked all of op k's
//! descriptors, and no peer rings its op k + 1 steps before its op k + 1
//! barrier, which needs this rank's raise: so the concatenated rings stay
//! in step. The rings hold a whole number of copies of one execution's
//! descriptors, so every execution starts at the top.
//!
//! A logical core of several physical cores (LNC 2) runs one subgraph per
//! physical core; each subgraph's collectives form their own rings over
//! the same subgraph of every rank of the group (a channel per physical
//! core), moving the data that subgraph names. Across processes each
//! channel has its own connections, gate word and proxy chain.
//!
//! A replica group with ranks in other processes (the world bootstrapped
//! by [`CcRank::of`]): the barrier and the meeting cover this process's
//! ranks, the schedule is cut at the network ([`super::split`]) and the
//! rest is [`super::neff_net`]'s: the peers meet at load through a
//! data-less proxy operation per op, and each execution runs one proxy
//! operation over all of the NEFF's cross-process ops.

use super::compose::{self, RankImage, RankSide};
use super::neff_net::{NeffNet, OpNet};
use super::proxy_work::RankPlace;
use super::net::NetWorld;
use super::plan::{self, CcKind};
use super::split;
use crate::exec::cores::CoreDispatch;
use crate::log::{Level, Module};
use crate::memory::{MemUsage, ModelMemory};
use crate::program::{MemRefKind, SubgraphProgram};
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::arch::{DMA_M2S_GROUP, DMA_S2M_GROUP, EVT_SEM_SEM_INC};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueId, DmaRingConfig, EngineId};
use nrt_isa::collective::{CollectiveTrigger, Reduction};
use nrt_isa::dma_desc::DmaOp;
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{CollectiveType, Head, Nop, Notify};
use nrt_isa::notification::RuntimeSubtype;
use nrt_isa::record::{Events, RecordBytes, UpdateMode, WaitMode};
use nrt_neff::cc::CcConfig;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The DMA engine whose queues `0..POOL_QUEUES` are each core's pool of
/// in-NEFF collectives queues (its queues 14 and 15 are the standalone
/// collectives' [`compose::CC_QUEUES`]); the models' queue pool never
/// hands them out.
pub const POOL_ENGINE: u8 = 7;
/// Queues in each core's collectives pool.
pub const POOL_QUEUES: u8 = 14;
/// Queues a loaded NEFF with collectives takes on each core that runs
/// them: one per lane and the ready queue.
pub const QUEUES_PER_MODEL: usize = plan::RING_LANES + 1;
/// The semaphore of each core counting an in-NEFF collective's "done"
/// signals. One per core serves every op of every loaded model in turn:
/// an op starts it from 0, and the peers' done signals for an op come only
/// after that op's barrier, which needs this rank to have reached it.
pub const DONE_SEM: u32 = 247;
/// The semaphores of each core that loaded models take as ready counters
/// (one per replica group set a model's collectives use): the collectives
/// block between the models' range, which the postamble resets, and the
/// runtime's.
pub const READY_SEMS: std::ops::Range<u32> = crate::exec::dispatch::MODEL_SEMAPHORES..DONE_SEM;
/// The longest ring a lane may take, in descriptors.
pub const MAX_RING: u64 = 1 << 16;

/// Whether `(engine, queue)` is in the cores' collectives queue pool.
pub fn is_neff_cc_queue(engine: u32, queue: u32) -> bool {
    engine == u32::from(POOL_ENGINE) && queue < u32::from(POOL_QUEUES)
}

/// The queues of each core's collectives pool.
pub fn pool_queues() -> impl Iterator<Item = DmaQueueId> {
    (0..POOL_QUEUES).map(|queue| DmaQueueId { engine: POOL_ENGINE, queue })
}

/// Who the loading rank is: `nrt_load_collectives`' `g_device_id` /
/// `g_device_count`, the bound on waiting for the peers and, when the
/// communicator's world spans processes, that world.
#[derive(Clone, Debug)]
pub struct CcRank {
    /// This rank's global id.
    pub rank: u32,
    /// The world size of the global communicator.
    pub world: u32,
    /// How long the load waits for the peers (NEURON_RT_CC_NET_TIMEOUT).
    pub peer_timeout: Duration,
    /// The cross-process world (bootstrapped at `NEURON_RT_ROOT_COMM_ID`
    /// by [`CcRank::of`] when the communicator names ranks this process
    /// did not register); `None`: every rank is in this process.
    pub net: Option<Arc<NetWorld>>,
    /// The world has ranks this process had not registered when the rank
    /// joined and `NEURON_RT_ROOT_COMM_ID` is unset: if those ranks load
    /// in other processes they can never meet this one, so the load's
    /// warnings and timeout say so ([`super::world::ROOT_COMM_UNSET_HINT`]).
    pub root_comm_unset: bool,
    /// `NEURON_SIM_INJECT=proxy_fail` / `proxy_panic`: the executions'
    /// proxy fails or panics after N messages sent.
    pub inject_proxy: super::proxy::Injected,
}

impl CcRank {
    /// Rank 0 of a world of one (what a plain `nrt_load` is).
    pub fn single() -> CcRank {
        CcRank::local(0, 1, super::world::DEFAULT_PEER_TIMEOUT)
    }

    /// Rank `rank` of a world of `world` whose ranks all load in this
    /// process, waiting at most `peer_timeout` for them.
    pub fn local(rank: u32, world: u32, peer_timeout: Duration) -> CcRank {
        CcRank { rank, world, peer_timeout, net: None, root_comm_unset: false, inject_proxy: super::proxy::Injected::default() }
    }

    /// What `nrt_load_collectives` does before it loads: joins the world
    /// of the in-NEFF collectives' context as rank `rank` (creating it as
    /// `world` ranks with the rank on logical core `vnc` when there is
    /// none, [`super::Collectives::neff_world`]) and returns the rank of
    /// that world the load stages as.
    pub fn joining(rt: &crate::runtime::Runtime, vnc: u32, rank: u32, world: u32) -> NrtResult<CcRank> {
        let world = rt.collectives().neff_world(rank, vnc, world)?;
        CcRank::of(rt, rank, world)
    }

    /// Rank `rank` of a world of `world`, waiting for peers as long as
    /// the runtime's NEURON_RT_CC_NET_TIMEOUT says. When the runtime's
    /// collectives world names ranks this process did not register and
    /// `NEURON_RT_ROOT_COMM_ID` is set, the world is bootstrapped here
    /// (libnrt builds the global communicator inside
    /// `nrt_load_collectives` too); ranks of this process register first.
    pub fn of(rt: &crate::runtime::Runtime, rank: u32, world: u32) -> NrtResult<CcRank> {
        if world == 0 || rank >= world {
            return Err(NrtError::invalid(format!("g_device_id {rank} is not in a world of {world} participants (expected 0..{world})")));
        }
        let peer_timeout = rt.config().collectives.net_timeout;
        let everyone: Vec<u32> = (0..world).collect();
        let net = rt.collectives().world_for(rt, &everyone)?;
        let root_comm_unset = world > 1 && rt.config().collectives.root_comm_id.is_none() && !rt.collectives().registered_all(&everyone);
        Ok(CcRank { rank, world, peer_timeout, net, root_comm_unset, inject_proxy: super::proxy::Injected::from_env(rt.env()) })
    }
}

/// A loaded model's share of one core's collectives resources: its lane
/// queues and ready queue (from the core's pool) and its ready semaphores
/// (from the core's collectives block, [`READY_SEMS`]); given back when
/// dropped (unload, or a failed load's rollback). Several NEFFs with
/// collectives can so be loaded on the same cores and run in any order.
#[derive(Debug)]
pub struct CcClaim {
    core: Arc<CoreDispatch>,
    queues: Vec<DmaQueueId>,
    sems: Vec<u32>,
}

impl CcClaim {
    /// A claim of `queues` and `sems` of `core` (taken from its pool by
    /// [`CoreDispatch::claim_collectives`]).
    pub(crate) fn new(core: Arc<CoreDispatch>, queues: Vec<DmaQueueId>, sems: Vec<u32>) -> CcClaim {
        CcClaim { core, queues, sems }
    }

    /// The DMA queues held: the lanes' first, then the ready queue.
    pub fn queues(&self) -> &[DmaQueueId] {
        &self.queues
    }

    /// The ready semaphores held, one per replica group set.
    pub fn semaphores(&self) -> &[u32] {
        &self.sems
    }

    fn lanes(&self) -> &[DmaQueueId] {
        &self.queues[..plan::RING_LANES]
    }

    fn ready_queue(&self) -> DmaQueueId {
        self.queues[plan::RING_LANES]
    }
}

impl Drop for CcClaim {
    fn drop(&mut self) {
        self.core.release_collectives(&self.queues, &self.sems);
    }
}

/// The identity of an instance for the meeting: the model database its
/// hosts share (one per runtime, over all its devices; separate runtimes
/// in one process are separate instances). Ranks of one instance meet
/// whichever of its devices their cores are on.
pub fn instance_key<T>(models: &Arc<T>) -> usize {
    Arc::as_ptr(models) as *const u8 as usize
}

/// What staging a subgraph's collectives gives the lowering: the records
/// each collective record becomes, by (engine, index), and the core's
/// claim.
#[derive(Debug, Default)]
pub struct Staged {
    /// Lowered records.
    pub records: BTreeMap<(EngineId, usize), Vec<RecordBytes>>,
    /// The core's collectives resources, while the model is loaded.
    pub claim: Option<CcClaim>,
    /// The proxy work of the collectives whose replica groups have ranks
    /// in other processes.
    pub net: Option<Arc<NeffNet>>,
    /// Collectives the subgraph runs per execution.
    pub ops: u32,
}

/// What staging needs of the load.
pub struct StageCtx<'a> {
    /// The instance the load runs on (all the runtime's devices): its
    /// ranks meet each other; see [`instance_key`].
    pub instance: usize,
    /// The device.
    pub device: &'a Arc<dyn nrt_hal::Device>,
    /// The model's memory.
    pub memory: &'a ModelMemory,
    /// The subgraph's core.
    pub core: CoreId,
    /// The core's execution resources (its collectives pool).
    pub dispatch: &'a Arc<CoreDispatch>,
    /// The subgraph.
    pub sg: &'a SubgraphProgram,
    /// Its def.json.
    pub def: &'a nrt_neff::DefJson,
    /// The device address of each var with a fixed one.
    pub fixed: &'a dyn Fn(u64) -> Option<u64>,
    /// The subgraph's index in the program (its physical core's place in
    /// the logical core: the channel its collectives run on).
    pub subgraph: usize,
    /// Subgraphs of the program.
    pub subgraphs: usize,
    /// The loading rank.
    pub rank: CcRank,
}

fn bad(sg: &str, what: impl std::fmt::Display) -> NrtError {
    NrtError::invalid(format!("{sg}: {what}"))
}

/// One collective of a subgraph, resolved for this rank.
#[derive(Clone, Debug)]
struct Op {
    /// Its place among the subgraph's collectives (program order).
    number: usize,
    engine: EngineId,
    index: usize,
    trigger: CollectiveTrigger,
    /// Global ranks of the group, in ring order.
    group: Vec<u32>,
    /// This rank's index in it.
    me: usize,
    kind: CcKind,
    dma: DmaOp,
}

impl Op {
    /// The replica group set (or, for permute, source/target pair set) the
    /// op names: one ready counter each.
    fn set_key(&self) -> (bool, u16) {
        (matches!(self.kind, CcKind::Permute(_)), self.trigger.group_set)
    }
}

/// The collective records of a subgraph, checked (no context needed).
fn triggers(sg: &SubgraphProgram) -> NrtResult<Vec<(EngineId, usize, CollectiveTrigger)>> {
    let mut out = Vec::new();
    for s in &sg.streams {
        for (index, rec) in s.records.iter().enumerate() {
            if rec[0] == crate::program::opcodes::TRIGGER_COLLECTIVE_OPCODE {
                let t = CollectiveTrigger::decode(rec).map_err(|e| bad(&sg.name, format!("{} instruction {index}: {e}", s.engine.name())))?;
                out.push((s.engine, index, t));
            }
        }
    }
    Ok(out)
}

fn resolve(sg: &str, cfg: &CcConfig, rank: &CcRank, number: usize, (engine, index, t): (EngineId, usize, CollectiveTrigger)) -> NrtResult<Op> {
    let at = |e: String| bad(sg, format!("{} instruction {index} ({:?}): {e}", engine.name(), t.kind));
    let set = usize::from(t.group_set);
    let (group, me, kind) = if t.kind == CollectiveType::Permute {
        let (ranks, me) = cfg.my_pairs(set, rank.rank).map_err(at)?;
        let local = |g: u32| ranks.iter().position(|&r| r == g).expect("a pair's rank is among the set's ranks");
        let pairs = cfg.src_target_pairs[set].iter().map(|&(s, d)| (local(s), local(d))).collect();
        (ranks, me, CcKind::Permute(pairs))
    } else {
        let (g, me) = cfg.my_group(set, rank.rank).map_err(at)?;
        let kind = match t.kind {
            CollectiveType::AllGather => CcKind::AllGather,
            CollectiveType::AllReduce => CcKind::AllReduce,
            CollectiveType::ReduceScatter => CcKind::ReduceScatter,
            _ => CcKind::AllToAll,
        };
        (g.to_vec(), me, kind)
    };
    let dma = match t.reduction {
        None | Some(Reduction::Add) => DmaOp::Add,
        Some(Reduction::Max) => DmaOp::Max,
        Some(Reduction::Min) => DmaOp::Min,
        Some(Reduction::Mult) => {
            return Err(at("reduction mult: the DMA engines reduce with add, max and min (fma); a product reduction is not supported by this runtime".to_string()));
        }
    };
    Ok(Op { number, engine, index, trigger: t, group, me, kind, dma })
}

/// The device address of `elems` elements at element `offset` of var
/// `id`, checked (an internal var with a fixed address, large enough).
fn var_span(ctx: &StageCtx<'_>, what: &str, id: u32, offset: u64, elems: u64, esize: u64) -> NrtResult<u64> {
    let sg = &ctx.sg.name;
    let v = ctx.sg.var_by_id(u64::from(id)).ok_or_else(|| bad(sg, format!("the collective's {what} tensor {id} is no var_id of def.json")))?;
    if !matches!(v.kind, MemRefKind::TmpBuf | MemRefKind::CrossCore) {
        return Err(bad(sg, format!("the collective's {what} var {:?} is a {:?} var: expected a tmp-buf, remote, shared or sharded var (a buffer with a fixed device address the peers' DMA can reach)", v.name, v.kind)));
    }
    let need = offset.checked_add(elems).and_then(|e| e.checked_mul(esize)).ok_or_else(|| bad(sg, format!("the collective's {what} span overflows")))?;
    if need > v.size {
        return Err(bad(sg, format!("the collective's {what} var {:?} has {} bytes; elements {offset}..{} need {need}", v.name, v.size, offset + elems)));
    }
    let base = (ctx.fixed)(v.var_id).ok_or_else(|| bad(sg, format!("the collective's {what} var {:?} has no device memory", v.name)))?;
    Ok(base + offset * esize)
}

/// Chunk addresses of one buffer, as the world cuts them.
fn chunks(kind: &CcKind, n: usize, elems: u64, count: u64, esize: u64, base: u64, chunks: usize) -> Vec<u64> {
    if matches!(kind, CcKind::AllReduce) {
        return (0..chunks).map(|c| base + (0..c).map(|k| plan::chunk_len(kind, n, elems, k)).sum::<u64>() * esize).collect();
    }
    (0..chunks as u64).map(|c| base + c * count * esize).collect()
}

/// A whole number of copies of `t` descriptors, at least 32 and a
/// multiple of 16.
fn ring_len(t: u64) -> u64 {
    let step = t / gcd(t, 16) * 16;
    step * 32u64.div_ceil(step).max(1)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn hal(what: &str, e: nrt_hal::HalError) -> NrtError {
    NrtError::failure(format!("collectives {what}: {e}"))
}

/// Stages the subgraph's collectives for this rank: checks them, claims
/// the core's collectives resources, meets the peers op by op, writes
/// this rank's rings and programs its queues; returns the records each
/// collective record becomes. Nothing when it has none.
pub fn stage(ctx: &StageCtx<'_>) -> NrtResult<Staged> {
    let sg = &ctx.sg.name;
    let found = triggers(ctx.sg)?;
    if found.is_empty() {
        return Ok(Staged::default());
    }
    let cfg = CcConfig::from_def(ctx.def).map_err(|e| bad(sg, format!("def.json: {e}")))?;
    if cfg.world_size == 0 {
        return Err(bad(sg, format!("{} PSEUDO_TRIGGER_COLLECTIVE record(s) but def.json's {} is 0: expected the NEFF's world size", found.len(), nrt_neff::cc::WORLD_SIZE_KEY)));
    }
    if cfg.world_size > ctx.rank.world {
        return Err(NrtError::invalid(format!("World size of neff {} is greater than world size of global communicator {}", cfg.world_size, ctx.rank.world)));
    }
    if cfg.streams != 1 {
        return Err(bad(sg, format!("cc_streams.num_streams is {}: PSEUDO_TRIGGER_COLLECTIVE instructions only support a single stream (expected 1)", cfg.streams)));
    }
    if let Some(other) = found.iter().find(|f| f.0 != found[0].0) {
        return Err(bad(
            sg,
            format!(
                "collectives on {} (instruction {}) and {} (instruction {}): the collectives stream is issued by one engine, whose program order is the order of its operations",
                found[0].0.name(),
                found[0].1,
                other.0.name(),
                other.1
            ),
        ));
    }
    let ops: Vec<Op> = found.into_iter().enumerate().map(|(k, f)| resolve(sg, &cfg, &ctx.rank, k, f)).collect::<NrtResult<_>>()?;
    let mut sets: Vec<(bool, u16)> = ops.iter().map(Op::set_key).collect();
    sets.sort_unstable();
    sets.dedup();
    let claim = ctx.dispatch.claim_collectives(QUEUES_PER_MODEL, sets.len())?;
    let mut met = Vec::with_capacity(ops.len());
    for op in &ops {
        let ready = claim.semaphores()[sets.binary_search(&op.set_key()).expect("the op's set is listed")];
        met.push(prepare(ctx, op, claim.lanes(), ready)?);
    }
    write_lanes(ctx, &claim, &met)?;
    write_ready(ctx, &claim, &met)?;
    let mut staged = Staged { ops: ops.len() as u32, ..Default::default() };
    // The cross-process ops share one gate word, which counts those the
    // rank reached.
    let world = met.iter().find_map(|m| m.net.as_ref()).map(|n| n.world.clone());
    let gate = match world {
        Some(_) => Some(ctx.memory.alloc_on(ctx.core, MemUsage::Cc, 64, 64)?.get()),
        None => None,
    };
    let mut chain = Vec::new();
    for (op, m) in ops.iter().zip(&met) {
        let gated = match (&m.net, gate) {
            (Some(n), Some(at)) => {
                chain.push(join_network(ctx, op, m, n, &claim, chain.len() as u32)?);
                Some((at, chain.len() as u32))
            }
            _ => None,
        };
        staged.records.insert((op.engine, op.index), lower(ctx, op, m, &claim, gated));
    }
    if let (Some(w), Some(at)) = (world, gate) {
        staged.net = Some(Arc::new(NeffNet::chain(w, ctx.device.clone(), ctx.rank.rank, chain, at, ctx.rank.inject_proxy)));
    }
    staged.claim = Some(claim);
    Ok(staged)
}

/// The cross-process part of an op being staged: its split and proxy
/// area.
struct NetPart {
    world: Arc<NetWorld>,
    split: split::Split,
    area: u64,
}

/// One op of this rank after the meeting: the group's composed images and
/// what this rank's lowering needs.
struct Prepared {
    met: Arc<Met>,
    me: usize,
    /// Ranks of the group in this process (the ready barrier's count).
    n_local: usize,
    /// The steps this rank submits itself: (lane, step).
    host_submits: Vec<(usize, usize)>,
    /// "Done" signals this rank counts.
    done: u32,
    ready_sem: u32,
    net: Option<NetPart>,
}

/// Checks one op's buffers, composes its size, allocates its image and
/// meets the group's ranks of this process (which compose every local
/// rank's image with the real addresses).
fn prepare(ctx: &StageCtx<'_>, op: &Op, lanes: &[DmaQueueId], ready_sem: u32) -> NrtResult<Prepared> {
    let t = &op.trigger;
    let n = op.group.len();
    let esize = t.dtype.size_bytes() as u64;
    let (in_elems, out_elems) = op.kind.sizes(n, t.num_elements);
    let input = var_span(ctx, "input", t.input_var, t.src_offset, in_elems, esize)?;
    let output = var_span(ctx, "output", t.output_var, t.dst_offset, out_elems, esize)?;
    let in_place = input == output && in_elems == out_elems;
    if !in_place && input < output + out_elems * esize && output < input + in_elems * esize {
        return Err(bad(&ctx.sg.name, "the collective's input and output overlap without being the same span"));
    }
    let (in_chunks, out_chunks) = match op.kind {
        CcKind::AllReduce | CcKind::AllToAll => (n, n),
        CcKind::AllGather => (1, n),
        CcKind::ReduceScatter => (n, 1),
        CcKind::Permute(_) => (1, 1),
    };
    let mut side = RankSide {
        device: ctx.device.info().device_index,
        core: ctx.core,
        queues: lanes.to_vec(),
        input: chunks(&op.kind, n, in_elems, t.num_elements, esize, input, in_chunks),
        output: chunks(&op.kind, n, out_elems, t.num_elements, esize, output, out_chunks),
        scratch: Vec::new(),
    };
    if matches!(op.kind, CcKind::ReduceScatter) && n > 1 {
        let a = ctx.memory.alloc_on(ctx.core, MemUsage::Cc, (in_elems * esize).max(64), 64)?;
        side.scratch = (0..n as u64).map(|c| a.get() + c * t.num_elements * esize).collect();
    }
    let arch = ctx.device.info().arch;
    // Ranks of other processes: this process keeps its ranks' steps, cut
    // at the network, with a proxy area (outbox, inbox, post and index
    // words) and a gate word per rank.
    let local: Vec<bool> = match &ctx.rank.net {
        Some(w) => op.group.iter().map(|g| w.local.contains_key(g)).collect(),
        None => vec![true; n],
    };
    let world = ctx.rank.net.as_ref().filter(|_| local.iter().any(|l| !l));
    if let Some(w) = world {
        w.check()?;
        if !local[op.me] {
            return Err(NrtError::invalid(format!("rank {} of the collectives world runs in another process ({}), not here", ctx.rank.rank, w.who(ctx.rank.rank))));
        }
        if ctx.subgraph >= super::net::MAX_CHANNELS {
            return Err(bad(&ctx.sg.name, format!("collectives on physical core {} of the logical core: a logical core has at most {} ring channels", ctx.subgraph, super::net::MAX_CHANNELS)));
        }
    }
    // Across processes a pass is NEURON_RT_CC_CHUNK_SIZE (a message is
    // half of it: the proxy's slots are sized by it).
    let pass = world.map_or(plan::PASS_ELEMENTS, |w| split::net_pass(w.chunk_bytes, esize));
    let p = plan::plan_passes(&op.kind, n, t.num_elements, &vec![in_place; n], pass);
    let mut net = None;
    if let Some(w) = world {
        let sp = split::split(&p, &local, esize).map_err(NrtError::invalid)?;
        let area = ctx.memory.alloc_on(ctx.core, MemUsage::Cc, sp.areas[op.me].bytes, 64)?.get();
        side.scratch.resize(n, 0);
        side.scratch.extend(sp.areas[op.me].chunks.iter().map(|o| area + o));
        net = Some(NetPart { world: w.clone(), split: sp, area });
    }
    let p = match &net {
        Some(np) => np.split.plan.clone(),
        None => p,
    };
    let n_local = local.iter().filter(|l| **l).count();
    // Sizes do not depend on addresses: compose with this rank's side
    // everywhere to learn its image's (with room for every local rank's
    // proxy area chunks: a relay writes into the relayed rank's).
    let mut probe_side = side.clone();
    if let Some(np) = &net {
        probe_side.scratch.resize(n + np.split.areas.iter().map(|a| a.chunks.len()).max().unwrap_or(0), 0);
    }
    let probe = compose::compose_on(&p, &vec![probe_side; n], t.dtype, op.dma, arch, &vec![0; n], DONE_SEM).map_err(NrtError::invalid)?;
    let base = ctx.memory.alloc_on(ctx.core, MemUsage::DmaRingCollectives, probe[op.me].bytes().max(64), 256)?;
    let sig = Signature { kind: op.kind.clone(), reduction: t.reduction, dtype: t.dtype, count: t.num_elements, in_place };
    let arrival = Arrival { rank: ctx.rank.rank, op: op.number, sig, side, ready_sem, base: base.get() };
    let met = meet((ctx.instance, ctx.subgraph), &op.group, &local, op.me, arrival, &ctx.rank, &p, arch)?;
    let img = &met.images[op.me];
    for (off, bytes) in img.pieces() {
        if !bytes.is_empty() {
            ctx.device.write(DeviceAddr(img.base + off), &bytes).map_err(|e| hal("image write", e))?;
        }
    }
    let host_submits = p.host_submits.iter().filter(|s| s.0 == op.me).map(|&(_, l, s)| (l, s)).collect();
    Ok(Prepared { done: p.expected_done(op.me), met, me: op.me, n_local, host_submits, ready_sem, net })
}

/// Writes each lane's ring (the ops' descriptors of that lane,
/// concatenated in program order, as whole copies) and programs its queue.
fn write_lanes(ctx: &StageCtx<'_>, claim: &CcClaim, ops: &[Prepared]) -> NrtResult<()> {
    for (l, &queue) in claim.lanes().iter().enumerate() {
        let lane = |m: &Prepared| m.met.images[m.me].lanes.get(l).cloned().unwrap_or_default();
        let (tx, rx): (Vec<[u8; 16]>, Vec<[u8; 16]>) = ops.iter().map(lane).fold((Vec::new(), Vec::new()), |(mut tx, mut rx), x| {
            tx.extend(x.tx);
            rx.extend(x.rx);
            (tx, rx)
        });
        let len = ring_len(tx.len().max(1) as u64);
        if len > MAX_RING {
            return Err(bad(&ctx.sg.name, format!("the collectives need {len} descriptors on lane {l}; a ring holds at most {MAX_RING}")));
        }
        let at = ctx.memory.alloc_on(ctx.core, MemUsage::DmaRingCollectives, 2 * 16 * len, 256)?.get();
        let copies = if tx.is_empty() { 0 } else { (len / tx.len() as u64) as usize };
        ctx.device.write(DeviceAddr(at), &tx.concat().repeat(copies)).map_err(|e| hal("ring write", e))?;
        ctx.device.write(DeviceAddr(at + 16 * len), &rx.concat().repeat(copies)).map_err(|e| hal("ring write", e))?;
        let config = DmaRingConfig { tx_ring: DeviceAddr(at), rx_ring: DeviceAddr(at + 16 * len), descriptors: len as u32, completion_semaphore: None, completion_event: None };
        ctx.dispatch.program_queue(queue, config)?;
    }
    Ok(())
}

/// Writes the ready queue's ring (per op, one 4-byte copy of the word 1
/// into the ready semaphore of each of the group's ranks in this process,
/// through the peer window for a rank on another device of the instance)
/// and programs it.
fn write_ready(ctx: &StageCtx<'_>, claim: &CcClaim, ops: &[Prepared]) -> NrtResult<()> {
    let arch = ctx.device.info().arch;
    let here = ctx.device.info().device_index;
    let total: usize = ops.iter().map(|m| m.met.ready.len()).sum();
    let len = ring_len(total as u64);
    if len > MAX_RING {
        return Err(bad(&ctx.sg.name, format!("the collectives' barriers need {len} descriptors; a ring holds at most {MAX_RING}")));
    }
    let at = ctx.memory.alloc_on(ctx.core, MemUsage::DmaRingCollectives, 2 * 16 * len + 64, 256)?.get();
    let one_at = at + 2 * 16 * len;
    ctx.device.write(DeviceAddr(one_at), &1u32.to_le_bytes()).map_err(|e| hal("ready word write", e))?;
    let (mut tx, mut rx) = (Vec::with_capacity(16 * total), Vec::with_capacity(16 * total));
    let desc = |e: nrt_isa::dma_desc::DmaDescError| NrtError::invalid(e.to_string());
    for m in ops {
        for &(device, core, sem) in &m.met.ready {
            let raise = compose::reach_device(arch, here, device, arch.semaphore_addr(core, EVT_SEM_SEM_INC, sem).get()).map_err(|e| bad(&ctx.sg.name, e))?;
            for (t, r) in nrt_isa::dma_desc::plain_copy_pairs(one_at, raise, 4, 1).map_err(desc)? {
                tx.extend(nrt_isa::dma_desc::DmaDescriptor::Tx(t).to_bytes().map_err(desc)?);
                rx.extend(nrt_isa::dma_desc::DmaDescriptor::Rx(r).to_bytes().map_err(desc)?);
            }
        }
    }
    let copies = (len / total as u64) as usize;
    ctx.device.write(DeviceAddr(at), &tx.repeat(copies)).map_err(|e| hal("ring write", e))?;
    ctx.device.write(DeviceAddr(at + 16 * len), &rx.repeat(copies)).map_err(|e| hal("ring write", e))?;
    let config = DmaRingConfig { tx_ring: DeviceAddr(at), rx_ring: DeviceAddr(at + 16 * len), descriptors: len as u32, completion_semaphore: None, completion_event: None };
    ctx.dispatch.program_queue(claim.ready_queue(), config)
}

/// Across processes: the op's index words, then the load-time meeting
/// with the peers there (signatures, connections). `ordinal`: the op's
/// place among the subgraph's cross-process ops; the subgraph's index is
/// its ring channel (connections of its own).
fn join_network(ctx: &StageCtx<'_>, op: &Op, m: &Prepared, np: &NetPart, claim: &CcClaim, ordinal: u32) -> NrtResult<OpNet> {
    for (off, v) in &np.split.areas[m.me].words {
        ctx.device.write(DeviceAddr(np.area + off), &v.to_le_bytes()).map_err(|e| hal("proxy word write", e))?;
    }
    let place = RankPlace { me: m.me, area: np.area, image: &m.met.images[m.me], core: ctx.core, queues: claim.lanes() };
    let sig = &m.met.sig;
    let net = OpNet::new(&np.world, ctx.device, &np.split, &op.group, &place, sig.to_string(), ordinal, ctx.subgraph);
    net.meet_peers(&np.world, ctx.device)?;
    Ok(net)
}

/// The records op `op`'s collective record becomes (see the module doc).
/// `gated`: across processes, the gate word and the value to write into
/// it once the rank reached the op.
fn lower(ctx: &StageCtx<'_>, op: &Op, m: &Prepared, claim: &CcClaim, gated: Option<(u64, u32)>) -> Vec<RecordBytes> {
    let arch = ctx.device.info().arch;
    let img = &m.met.images[m.me];
    let rec = ctx.sg.stream(op.engine).map(|s| s.records[op.index]).expect("the trigger's stream");
    let ev = Events::read_at(&rec, nrt_isa::record::EVENTS_OFFSET);
    let nop = |e: Events| Nop { head: Head::with_events(e) }.encode();
    let sem = |s: u32| s as u8;
    let write = crate::load::lower::write_record;
    let ready_pairs = m.met.ready.len() as u32;
    let mut out = vec![
        nop(Events { update_mode: UpdateMode::None, update_idx: 0, ..ev }),
        nop(Events { update_mode: UpdateMode::SemWrImmRead, update_idx: sem(DONE_SEM), ..Events::NONE }),
        write(arch.dma_tail_inc_addr(ctx.core, claim.ready_queue(), DMA_M2S_GROUP).get(), ready_pairs, Events::NONE),
        write(arch.dma_tail_inc_addr(ctx.core, claim.ready_queue(), DMA_S2M_GROUP).get(), ready_pairs, Events::NONE),
        nop(Events { wait_mode: WaitMode::SemGeImm, wait_idx: sem(m.ready_sem), update_mode: UpdateMode::SemSubImmComplete, update_idx: sem(m.ready_sem), value: m.n_local as u32 }),
    ];
    let notify = |subtype: RuntimeSubtype| Notify { head: Head::default(), queue: op.engine.index() as u8, subtype: subtype as u16, sub_id: 0, payload: 0 }.encode();
    out.push(notify(RuntimeSubtype::CcStart));
    for &(l, s) in &m.host_submits {
        let k = img.lanes[l].step_pairs[s];
        out.push(write(arch.dma_tail_inc_addr(ctx.core, claim.lanes()[l], DMA_M2S_GROUP).get(), k, Events::NONE));
        out.push(write(arch.dma_tail_inc_addr(ctx.core, claim.lanes()[l], DMA_S2M_GROUP).get(), k, Events::NONE));
    }
    if let Some((gate, reached)) = gated {
        // The proxy rings this op's landings on this rank only from here
        // on (after its own first doorbells, so each queue's tail moves
        // in step order).
        out.push(write(gate, reached, Events::NONE));
    }
    out.push(nop(Events { wait_mode: WaitMode::SemGeImm, wait_idx: sem(DONE_SEM), update_mode: UpdateMode::SemSubImmComplete, update_idx: sem(DONE_SEM), value: m.done }));
    out.push(notify(RuntimeSubtype::CcEnd));
    out.push(nop(Events { wait_mode: WaitMode::None, wait_idx: 0, ..ev }));
    out
}

/// What a rank's op must agree on with its peers.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Signature {
    kind: CcKind,
    reduction: Option<Reduction>,
    dtype: Dtype,
    count: u64,
    in_place: bool,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of {} {}", self.kind, self.count, self.dtype.name())?;
        if let Some(r) = self.reduction {
            write!(f, " ({})", r.name())?;
        }
        if let CcKind::Permute(p) = &self.kind {
            write!(f, " pairs {p:?}")?;
        }
        if self.in_place {
            f.write_str(" in place")?;
        }
        Ok(())
    }
}

/// One rank's part at the meeting.
#[derive(Clone, Debug)]
struct Arrival {
    rank: u32,
    /// The op's place among its subgraph's collectives.
    op: usize,
    sig: Signature,
    side: RankSide,
    /// The rank's ready semaphore for this op's group.
    ready_sem: u32,
    base: u64,
}

/// What the meeting gives every rank: every rank's image (only its own
/// is written by it; ranks of other processes have empty ones), the
/// (device, core, ready semaphore) of each of this process's ranks and
/// the agreed signature.
#[derive(Debug)]
struct Met {
    images: Vec<RankImage>,
    ready: Vec<(u32, CoreId, u32)>,
    sig: Signature,
}

#[derive(Debug, Default)]
struct Gathering {
    id: u64,
    arrivals: Vec<Option<Arrival>>,
    outcome: Option<Result<Arc<Met>, NrtError>>,
    left: usize,
}

/// (instance, subgraph) and the group's ranks.
type Key = ((usize, usize), Vec<u32>);

#[derive(Default)]
struct Meeting {
    state: Mutex<BTreeMap<Key, Vec<Gathering>>>,
    changed: Condvar,
}

static NEXT_GATHERING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

static MEETING: LazyLock<Meeting> = LazyLock::new(Meeting::default);

fn lock(m: &Mutex<BTreeMap<Key, Vec<Gathering>>>) -> MutexGuard<'_, BTreeMap<Key, Vec<Gathering>>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn list(ranks: impl IntoIterator<Item = u32>) -> String {
    ranks.into_iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
}

/// The load-time meeting of a replica group's ranks of this process (on
/// the instance and subgraph `at`, [`instance_key`]: each physical core
/// of a logical core meets the same one of its peers; `local[i]`: rank
/// `i` of the group loads here):
/// the k-th load of each rank meets the k-th of the others; the last to
/// arrive checks the signatures and composes every local rank's image.
/// Bounded by the rank's `peer_timeout`, warning while it waits (first
/// within seconds: [`super::world::peer_warning_due`]). (Ranks of other
/// processes meet through their proxies: [`OpNet::meet_peers`].)
#[allow(clippy::too_many_arguments)]
fn meet(at: (usize, usize), group: &[u32], local: &[bool], me: usize, arrival: Arrival, rank: &CcRank, p: &plan::Plan, arch: &'static nrt_hal::arch::ArchDesc) -> NrtResult<Arc<Met>> {
    let timeout = rank.peer_timeout;
    let hint = if rank.root_comm_unset { format!("; {}", super::world::ROOT_COMM_UNSET_HINT) } else { String::new() };
    let n = group.len();
    let key: Key = (at, group.to_vec());
    let m = &*MEETING;
    let mut st = lock(&m.state);
    let rounds = st.entry(key.clone()).or_default();
    let slot = match rounds.iter().position(|g| g.outcome.is_none() && g.arrivals[me].is_none()) {
        Some(i) => i,
        None => {
            let id = NEXT_GATHERING.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            rounds.push(Gathering { id, arrivals: vec![None; n], outcome: None, left: n });
            rounds.len() - 1
        }
    };
    let g = &mut rounds[slot];
    let id = g.id;
    g.arrivals[me] = Some(arrival);
    if g.arrivals.iter().zip(local).all(|(a, l)| a.is_some() || !l) {
        g.outcome = Some(compose_all(&g.arrivals, p, arch).map(Arc::new));
        m.changed.notify_all();
    }
    let started = Instant::now();
    let mut warnings = 0;
    loop {
        let rounds = st.get_mut(&key).expect("our gathering stays until we leave it");
        let i = rounds.iter().position(|g| g.id == id).expect("our gathering stays until we leave it");
        if let Some(o) = rounds[i].outcome.clone() {
            rounds[i].left -= 1;
            if rounds[i].left == 0 {
                rounds.remove(i);
            }
            if rounds.is_empty() {
                st.remove(&key);
            }
            return o;
        }
        let now = Instant::now();
        let missing: Vec<u32> = rounds[i].arrivals.iter().zip(group).zip(local).filter(|((a, _), l)| a.is_none() && **l).map(|((_, r), _)| *r).collect();
        if now >= started + timeout {
            rounds[i].arrivals[me] = None;
            if rounds[i].arrivals.iter().all(Option::is_none) {
                rounds.remove(i);
            }
            if rounds.is_empty() {
                st.remove(&key);
            }
            return Err(NrtError::new(
                NrtStatus::Timeout,
                format!(
                    "nrt_load_collectives: replica group [{}]: rank(s) {} never loaded their NEFF within {:.1} sec ({}); every rank of the group must call nrt_load_collectives{hint}",
                    list(group.iter().copied()),
                    list(missing),
                    timeout.as_secs_f64(),
                    super::world::PEER_TIMEOUT_VAR
                ),
            ));
        }
        if now >= started + super::world::peer_warning_due(timeout, warnings) {
            warnings += 1;
            crate::log::write(
                Level::Warn,
                Module::Nrt,
                "nrt_load_collectives",
                format_args!(
                    "Timeout exceeded: waiting for rank(s) {} of replica group [{}] to load: {} sec - retrying; giving up after {:.1} sec ({}){hint}",
                    list(missing),
                    list(group.iter().copied()),
                    now.duration_since(started).as_secs(),
                    timeout.as_secs_f64(),
                    super::world::PEER_TIMEOUT_VAR
                ),
            );
        }
        let next = (started + super::world::peer_warning_due(timeout, warnings)).min(started + timeout);
        let wait = next.saturating_duration_since(now).max(Duration::from_millis(1));
        st = m.changed.wait_timeout(st, wait).unwrap_or_else(|e| e.into_inner()).0;
    }
}

/// Checks the group agrees and composes every rank's image (the last
/// arrival, holding the meeting's lock); `None`: a rank of another
/// process (no lanes in the plan).
fn compose_all(arrivals: &[Option<Arrival>], p: &plan::Plan, arch: &'static nrt_hal::arch::ArchDesc) -> NrtResult<Met> {
    let here: Vec<(usize, &Arrival)> = arrivals.iter().enumerate().filter_map(|(i, a)| a.as_ref().map(|a| (i, a))).collect();
    let (i0, first) = here[0];
    for &(i, a) in &here[1..] {
        if a.sig != first.sig {
            return Err(NrtError::invalid(format!(
                "mismatched collectives between the peers: rank {} (replica group index {i0}, collective {} of its NEFF) runs {} but rank {} (replica group index {i}, collective {} of its NEFF) runs {}",
                first.rank, first.op, first.sig, a.rank, a.op, a.sig
            )));
        }
    }
    let ready: Vec<(u32, CoreId, u32)> = here.iter().map(|(_, a)| (a.side.device, a.side.core, a.ready_sem)).collect();
    if ready.iter().map(|r| (r.0, r.1)).collect::<BTreeSet<_>>().len() != ready.len() {
        return Err(NrtError::invalid(format!("ranks {} load their collectives onto the same Neuron core; each rank needs its own logical core", list(here.iter().map(|(_, a)| a.rank)))));
    }
    let elsewhere = RankSide { device: 0, core: CoreId(0), queues: Vec::new(), input: Vec::new(), output: Vec::new(), scratch: Vec::new() };
    let sides: Vec<RankSide> = arrivals.iter().map(|a| a.as_ref().map_or_else(|| elsewhere.clone(), |a| a.side.clone())).collect();
    let bases: Vec<u64> = arrivals.iter().map(|a| a.as_ref().map_or(0, |a| a.base)).collect();
    let dma = match first.sig.reduction {
        Some(Reduction::Max) => DmaOp::Max,
        Some(Reduction::Min) => DmaOp::Min,
        _ => DmaOp::Add,
    };
    let images = compose::compose_on(p, &sides, first.sig.dtype, dma, arch, &bases, DONE_SEM).map_err(NrtError::invalid)?;
    Ok(Met { images, ready, sig: first.sig.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_hold_whole_copies_of_the_schedule() {
        for t in 1..200u64 {
            let l = ring_len(t);
            assert!(l >= 32 && l.is_multiple_of(16) && l.is_multiple_of(t), "{t} -> {l}");
        }
        assert_eq!(ring_len(16), 32);
        assert_eq!(ring_len(48), 48);
    }

    #[test]
    fn the_neff_queues_and_semaphores_are_nobody_elses() {
        for q in pool_queues() {
            assert!(!crate::custom_ops::is_custom_op_dma(u32::from(q.engine), u32::from(q.queue)));
            assert!(!compose::is_cc_queue(u32::from(q.engine), u32::from(q.queue)));
            assert!(!crate::transfer::is_transfer_queue(u32::from(q.engine), u32::from(q.queue)));
            assert!(is_neff_cc_queue(u32::from(q.engine), u32::from(q.queue)));
        }
        assert_eq!(pool_queues().count(), usize::from(POOL_QUEUES));
        use crate::exec::dispatch::{MODEL_SEMAPHORES, SWITCH_COUNT_SEM};
        const { assert!(READY_SEMS.start >= MODEL_SEMAPHORES && READY_SEMS.end <= DONE_SEM && DONE_SEM < SWITCH_COUNT_SEM) };
        const { assert!(compose::CC_SEM > SWITCH_COUNT_SEM, "the standalone collectives' semaphore is the runtime's") };
    }
}
