//! The in-process world: ranks (logical cores of this runtime) meet per
//! replica group and per operation, the last to arrive composes the
//! schedule for all of them and rings the first doorbells, and every rank
//! then waits for its own core's collectives semaphore.
//!
//! Every wait is bounded: peers by `NEURON_RT_CC_NET_TIMEOUT` (a rank
//! that never arrives: NRT_TIMEOUT naming it), the device by
//! `NEURON_RT_EXEC_TIMEOUT` (a missing "done" signal:
//! NRT_EXEC_HW_ERR_COLLECTIVES, as libnrt reports a collectives hang).
//! A peer that arrives with another op, dtype, count or reduction fails
//! every rank of that operation with a message naming both sides.

use super::compose::{self, CC_QUEUES, CC_SEM, RankImage, RankSide};
use super::plan::{self, CcKind};
use crate::log::{Level, Module};
use crate::memory::{MemOwner, MemUsage};
use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::tensor::{Placement, Tensor};
use nrt_hal::{CoreId, DeviceAddr, DmaRingConfig};
use nrt_isa::dma_desc::DmaOp;
use nrt_isa::dtype::Dtype;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The variable bounding the wait for peers (messages; the value is the
/// configuration's `collectives.net_timeout`).
pub const PEER_TIMEOUT_VAR: &str = "NEURON_RT_CC_NET_TIMEOUT";
/// Its default.
pub const DEFAULT_PEER_TIMEOUT: Duration = crate::config::DEFAULT_CC_TIMEOUT;
/// How long a rank waits for its peers before each warning: libnrt 2.31's
/// collectives-unit wait (2.29 raised it from 100 ms to 30 s for rank
/// skew, 2.31 made it a warning instead of a timeout).
pub const PEER_WARNING_PERIOD: Duration = Duration::from_secs(30);

/// The period between warnings of a rank waiting for peers up to `bound`:
/// [`PEER_WARNING_PERIOD`], or a quarter of a shorter bound so a rank warns
/// before it gives up.
pub fn peer_warning_period(bound: Duration) -> Duration {
    (bound / 4).min(PEER_WARNING_PERIOD)
}

/// How long a rank waits for its peers before its first warning: a few
/// seconds, so a rank whose peers can never come (they load in other
/// processes and nothing says where to meet them) hears why long before
/// the bound.
pub const FIRST_PEER_WARNING: Duration = Duration::from_secs(5);

/// How long after it started waiting up to `bound` a rank waiting for
/// its peers gives its `n`-th warning (0: the first): at
/// [`FIRST_PEER_WARNING`] (or the shorter [`peer_warning_period`]), then
/// every [`peer_warning_period`].
pub fn peer_warning_due(bound: Duration, n: u32) -> Duration {
    let period = peer_warning_period(bound);
    FIRST_PEER_WARNING.min(period) + period * n
}

/// What the waits for peers add when `NEURON_RT_ROOT_COMM_ID` is unset
/// and the world has ranks this process did not register: without it the
/// ranks of other processes can never join, and this process waits for
/// every rank to load here.
pub const ROOT_COMM_UNSET_HINT: &str =
    "NEURON_RT_ROOT_COMM_ID is unset, so every rank of the world must load in this process; ranks loading in other processes need it set to the same host:port in every process";

/// The variable bounding the wait for the device (messages; the value is
/// the configuration's `exec_timeout`, the one an execution has).
pub const EXEC_TIMEOUT_VAR: &str = "NEURON_RT_EXEC_TIMEOUT";

/// The reduction of `nrt_op_type_t` (the in-DMA CCE opcodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// NRT_OP_ADD = 0.
    Add = 0,
    /// NRT_OP_FMA = 1 (scale 1: `src * 1 + dst`).
    Fma = 1,
    /// NRT_OP_MAX = 2.
    Max = 2,
    /// NRT_OP_MIN = 3.
    Min = 3,
}

impl ReduceOp {
    /// The op of `nrt_op_type_t` code `code`.
    pub fn from_code(code: u32) -> Option<ReduceOp> {
        [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Max, ReduceOp::Min].get(code as usize).copied()
    }

    /// The DMA engine's op.
    pub fn dma(self) -> DmaOp {
        match self {
            ReduceOp::Add => DmaOp::Add,
            ReduceOp::Fma => DmaOp::Fma,
            ReduceOp::Max => DmaOp::Max,
            ReduceOp::Min => DmaOp::Min,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        self.dma().name()
    }
}

/// Dtypes a collective moves; reductions need arithmetic (not `unknown`).
pub fn check_dtype(dtype: Dtype, reduces: bool) -> NrtResult<()> {
    if dtype == Dtype::Unknown && reduces {
        return Err(NrtError::invalid("dtype NRT_DTYPE_UNKNOWN cannot be reduced: expected an integer or floating-point nrt_dtype_t"));
    }
    Ok(())
}

/// One rank's part in one operation.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// The replica group: participants' ids, in ring order.
    pub group: Vec<u32>,
    /// This rank's index in `group`.
    pub rank: usize,
    /// Its logical core.
    pub vnc: u32,
    /// The operation.
    pub kind: CcKind,
    /// Element type.
    pub dtype: Dtype,
    /// Reduction (ignored by ops that do not reduce).
    pub op: ReduceOp,
    /// The op's per-rank unit of elements ([`CcKind::sizes`]).
    pub count: u64,
    /// The input: one tensor, or one per chunk.
    pub input: Vec<Arc<Tensor>>,
    /// The output: one tensor, or one per chunk.
    pub output: Vec<Arc<Tensor>>,
}

impl Arrival {
    /// The op in words: `all_reduce of 16 float32 (add)`.
    pub(super) fn describe(&self) -> String {
        let op = if self.kind.reduces() { format!(" ({})", self.op.name()) } else { String::new() };
        format!("{} of {} {}{op}", self.kind, self.count, self.dtype.name())
    }
}

/// Where a launched operation's pieces are, and who is still in it.
#[derive(Debug)]
struct Launched {
    /// Per rank: device position, core, expected done count.
    ranks: Vec<(usize, CoreId, u32)>,
    /// Device memory to free when the last rank leaves.
    memory: Vec<(usize, DeviceAddr)>,
    left: usize,
    /// The network proxy of an operation whose group spans processes.
    proxy: Option<Arc<super::proxy::Proxy>>,
}

#[derive(Debug, Default)]
struct Gathering {
    arrivals: BTreeMap<usize, Arrival>,
    outcome: Option<Result<Arc<Mutex<Launched>>, NrtError>>,
}

#[derive(Debug, Default)]
struct Group {
    next_seq: BTreeMap<usize, u64>,
    pending: BTreeMap<u64, Gathering>,
}

#[derive(Debug, Default)]
struct State {
    groups: BTreeMap<Vec<u32>, Group>,
    /// Cores with an operation in flight (one at a time per core: the
    /// collectives queues and semaphore are per core).
    busy: BTreeSet<(usize, u32)>,
}

/// A global communicator's context: libnrt keeps one world per context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommContext {
    /// In-NEFF collectives (`nrt_build_global_comm`, and
    /// `nrt_load_collectives` when no world exists yet).
    Neff = 0,
    /// Host-driven collectives (`nrt_cc_global_comm_init`).
    Host = 1,
}

/// The rendezvous of a runtime's ranks (see the module docs).
#[derive(Debug, Default)]
pub struct Collectives {
    state: Mutex<State>,
    changed: Condvar,
    /// The cross-process world (ranks registered by the global
    /// communicator, the bootstrap, the connections).
    net: super::net::NetSlot,
    /// The world size of each [`CommContext`], once set up.
    contexts: Mutex<[Option<u32>; 2]>,
    /// `nrt_barrier`'s barrier models, by logical core.
    pub(super) barriers: super::barrier::Barriers,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn names(ranks: &[usize]) -> String {
    ranks.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
}

/// Chunk addresses of a buffer given as one tensor or as `chunks`
/// tensors, checking sizes and placement.
pub(super) fn chunk_addrs(rt: &Runtime, device: usize, tensors: &[Arc<Tensor>], chunks: usize, chunk_bytes: u64, what: &str) -> NrtResult<Vec<u64>> {
    let want_dev = rt.memory(device)?.device_index();
    let addr = |t: &Tensor, need: u64| -> NrtResult<u64> {
        let Placement::Device { addr, .. } = t.placement() else {
            return Err(NrtError::invalid(format!("{what} tensor {:?} is in host memory: collectives need device tensors", t.name())));
        };
        if t.device_index() != Some(want_dev) {
            return Err(NrtError::invalid(format!("{what} tensor {:?} is on another Neuron device than its rank's logical core", t.name())));
        }
        if t.size() < need {
            return Err(NrtError::invalid(format!("{what} tensor {:?} has {} bytes; the operation needs {need}", t.name(), t.size())));
        }
        Ok(addr.get())
    };
    match tensors.len() {
        1 => {
            let base = addr(&tensors[0], chunk_bytes * chunks as u64)?;
            Ok((0..chunks as u64).map(|c| base + c * chunk_bytes).collect())
        }
        n if n == chunks => tensors.iter().map(|t| addr(t, chunk_bytes)).collect(),
        n => Err(NrtError::invalid(format!("{n} {what} tensors: expected 1 or {chunks}"))),
    }
}

impl Collectives {
    /// Records that global rank `g_device_id` of a world of
    /// `g_device_count` ranks is logical core `vnc` of this process (the
    /// global communicator calls this). A replica group naming ranks this
    /// process did not register runs across processes when
    /// `NEURON_RT_ROOT_COMM_ID` is set: the world is bootstrapped there at
    /// its first operation.
    pub fn register_rank(&self, g_device_id: u32, vnc: u32, g_device_count: u32) -> NrtResult<()> {
        check_member(g_device_id, g_device_count)?;
        self.net.register(g_device_id, vnc, g_device_count)
    }

    /// Sets up the world of context `ctx` as global rank `g_device_id` of
    /// `g_device_count`, on logical core `vnc` (validated by the caller):
    /// the same world size again succeeds, another is NRT_INVALID (spec
    /// §3.2).
    pub fn global_comm(&self, ctx: CommContext, g_device_id: u32, vnc: u32, g_device_count: u32) -> NrtResult<()> {
        check_member(g_device_id, g_device_count)?;
        let mut c = self.contexts.lock().unwrap_or_else(|e| e.into_inner());
        match c[ctx as usize] {
            Some(n) if n != g_device_count => Err(NrtError::invalid(format!(
                "NRT has already been setup with a collectives world size of {n}; it cannot change to {g_device_count} (g_device_id {g_device_id})"
            ))),
            _ => {
                // The rank is this process's; the others, if any, are
                // found through NEURON_RT_ROOT_COMM_ID at the first
                // collective.
                self.register_rank(g_device_id, vnc, g_device_count)?;
                c[ctx as usize] = Some(g_device_count);
                Ok(())
            }
        }
    }

    /// The world size context `ctx` was set up with, if any.
    pub(super) fn context_size(&self, ctx: CommContext) -> Option<u32> {
        self.contexts.lock().unwrap_or_else(|e| e.into_inner())[ctx as usize]
    }

    /// The world of the in-NEFF collectives' context a load as rank `id`
    /// of `count` joins (`nrt_load_collectives`): the existing one (the
    /// load then checks the NEFF's own world against it, spec §3.1), or
    /// one of `count` set up here with the rank on logical core `vnc`
    /// ("If global NCCL communicator was not previously created, we will
    /// create it inside this API").
    pub fn neff_world(&self, id: u32, vnc: u32, count: u32) -> NrtResult<u32> {
        check_member(id, count)?;
        let existing = self.contexts.lock().unwrap_or_else(|e| e.into_inner())[CommContext::Neff as usize];
        match existing {
            Some(n) if id >= n => Err(NrtError::invalid(format!("g_device_id {id} is not in the global communicator's world of {n} (expected 0..{n})"))),
            Some(n) => Ok(n),
            None => {
                self.global_comm(CommContext::Neff, id, vnc, count)?;
                Ok(count)
            }
        }
    }

    /// Whether every rank of `group` is registered in this process.
    pub fn registered_all(&self, group: &[u32]) -> bool {
        self.net.registered_all(group)
    }

    /// The cross-process world a replica group of global ranks needs
    /// (bootstrapping it on first use), or `None` when it runs in this
    /// process ([`super::net::NetSlot::world_for`]).
    pub fn world_for(&self, rt: &Runtime, group: &[u32]) -> NrtResult<Option<Arc<super::net::NetWorld>>> {
        self.net.world_for(rt, group)
    }

    /// Runs this rank's part of one operation: meets the peers, launches
    /// (when last), waits for the device. Returns when this rank's output
    /// is complete and its inputs are no longer read.
    pub fn run(&self, rt: &Runtime, me: Arrival) -> NrtResult<()> {
        let n = me.group.len();
        if n == 0 || me.rank >= n {
            return Err(NrtError::invalid(format!("rank {} is not in a replica group of {n} participants", me.rank)));
        }
        if me.group.iter().collect::<BTreeSet<_>>().len() != n {
            return Err(NrtError::invalid(format!("replica group {:?} names a participant twice", me.group)));
        }
        check_dtype(me.dtype, me.kind.reduces())?;
        if let CcKind::Permute(pairs) = &me.kind {
            let mut targets = BTreeSet::new();
            for &(s, t) in pairs {
                if s >= n || t >= n || !targets.insert(t) {
                    return Err(NrtError::invalid(format!("source-target pair ({s}, {t}): ranks must be below {n} and each target receive from one source")));
                }
            }
        }
        rt.vcore(me.vnc)?;
        let peers = rt.config().collectives.net_timeout;
        let exec = rt.config().exec_timeout;
        let world = self.net.world_for(rt, &me.group)?;
        let local: Vec<bool> = match &world {
            Some(w) => {
                w.check()?;
                match w.local.get(&me.group[me.rank]) {
                    Some(&v) if v == me.vnc => {}
                    Some(&v) => return Err(NrtError::invalid(format!("rank {} of the collectives world is logical core {v} of this process, not {}", me.group[me.rank], me.vnc))),
                    None => return Err(NrtError::invalid(format!("rank {} of the collectives world runs in another process ({}), not on logical core {} here", me.group[me.rank], w.who(me.group[me.rank]), me.vnc))),
                }
                me.group.iter().map(|g| w.local.contains_key(g)).collect()
            }
            None => vec![true; n],
        };
        let local_n = local.iter().filter(|l| **l).count();
        let key = me.group.clone();
        let rank = me.rank;
        let started = Instant::now();
        let mut st = lock(&self.state);
        let group = st.groups.entry(key.clone()).or_default();
        let seq = {
            let s = group.next_seq.entry(rank).or_insert(0);
            *s += 1;
            *s - 1
        };
        let g = group.pending.entry(seq).or_default();
        if let Some(Err(e)) = &g.outcome {
            return Err(e.clone());
        }
        g.arrivals.insert(rank, me);
        if g.arrivals.len() == local_n {
            let arrivals: Vec<Arrival> = g.arrivals.values().cloned().collect();
            // One operation per core at a time: wait (bounded) for the
            // cores' previous collective to end.
            let cores: Vec<(usize, u32)> = arrivals.iter().filter_map(|a| rt.vcore(a.vnc).ok().map(|v| (v.device, v.physical[0].0))).collect();
            while cores.iter().any(|c| st.busy.contains(c)) && Instant::now() < started + peers {
                st = self.changed.wait_timeout(st, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
            }
            let outcome = if cores.iter().any(|c| st.busy.contains(c)) {
                Err(NrtError::new(NrtStatus::Timeout, format!("collective on replica group {key:?}: its cores stayed busy with another collective for {:.1} sec ({PEER_TIMEOUT_VAR})", peers.as_secs_f64())))
            } else if let Some(w) = &world {
                // A panic while launching fails every rank of the
                // operation (they wait for this outcome), not only this one.
                crate::worker::guarded("launching a collective", NrtStatus::Failure, || super::remote::launch(rt, w, &local, &arrivals, seq)).map(|l| {
                    for c in &cores {
                        st.busy.insert(*c);
                    }
                    Launched { ranks: l.ranks, memory: l.memory, left: local_n, proxy: Some(l.proxy) }
                })
            } else {
                crate::worker::guarded("launching a collective", NrtStatus::Failure, || self.launch(rt, &mut st, &arrivals))
            };
            let outcome = outcome.map(|l| Arc::new(Mutex::new(l)));
            let g = st.groups.get_mut(&key).and_then(|g| g.pending.get_mut(&seq)).expect("gathering");
            g.arrivals.clear();
            g.outcome = Some(outcome);
            self.changed.notify_all();
        }
        // WAIT_BARRIER_PROXY: for the peers (and the launch).
        let mut warnings = 0;
        let launched = loop {
            let g = st.groups.get_mut(&key).and_then(|g| g.pending.get_mut(&seq)).expect("gathering");
            if let Some(o) = &g.outcome {
                break o.clone()?;
            }
            let now = Instant::now();
            if now >= started + peers {
                let missing: Vec<usize> = (0..n).filter(|r| local[*r] && !g.arrivals.contains_key(r)).collect();
                let e = NrtError::new(
                    NrtStatus::Timeout,
                    format!(
                        "collective {} on replica group {key:?}: rank(s) {} never arrived within {:.1} sec ({PEER_TIMEOUT_VAR}); ranks in other processes need their global communicator (nrt_cc_global_comm_init) and NEURON_RT_ROOT_COMM_ID",
                        g.arrivals.values().next().map_or_else(String::new, Arrival::describe),
                        names(&missing),
                        peers.as_secs_f64()
                    ),
                );
                g.arrivals.clear();
                g.outcome = Some(Err(e.clone()));
                return Err(e);
            }
            let due = started + peer_warning_due(peers, warnings);
            if now >= due {
                warnings += 1;
                let missing: Vec<usize> = (0..n).filter(|r| local[*r] && !g.arrivals.contains_key(r)).collect();
                crate::log::write(Level::Warn, Module::Nrt, "nrta_cc_schedule", format_args!("Timeout exceeded: Waiting on barrier proxy task: {} sec (replica group {key:?}, missing rank(s) {}) - retrying; giving up after {:.1} sec ({PEER_TIMEOUT_VAR})", now.duration_since(started).as_secs(), names(&missing), peers.as_secs_f64()));
            }
            let next = (started + peer_warning_due(peers, warnings)).min(started + peers);
            st = self.changed.wait_timeout(st, next.saturating_duration_since(now).max(Duration::from_millis(1))).unwrap_or_else(|e| e.into_inner()).0;
        };
        drop(st);
        // WAIT_BARRIER_PROXY: the network part (bounded by the proxy's
        // own NEURON_RT_CC_NET_TIMEOUT, and by its thread's liveness:
        // `Proxy::outcome`); warn at 120 s, then at every doubling, as
        // libnrt's harvest does.
        let proxy = launched.lock().unwrap_or_else(|e| e.into_inner()).proxy.clone();
        if let Some(p) = proxy {
            let mut threshold = Duration::from_secs(120);
            let outcome = p.outcome(|waited| {
                if waited >= threshold {
                    crate::log::write(Level::Warn, Module::Nrt, "nrta_cc_schedule", format_args!("Timeout exceeded: Waiting on barrier proxy task: {} sec (replica group {key:?})", waited.as_secs()));
                    threshold *= 2;
                }
            });
            if let Err(e) = outcome {
                self.leave(rt, &key, seq, &launched);
                return Err(e);
            }
        }
        // WAIT_CORE: for this rank's done count.
        let (dev, core, expected) = launched.lock().unwrap_or_else(|e| e.into_inner()).ranks[rank];
        let device = rt.device(dev)?.clone();
        let t0 = Instant::now();
        let mut spins = 0u32;
        let result = loop {
            let v = device.semaphore_read(core, CC_SEM).map_err(|e| NrtError::failure(format!("collectives semaphore of core {}: {e}", core.0)))?;
            if v >= expected as i32 {
                break Ok(());
            }
            if t0.elapsed() >= exec {
                break Err(NrtError::new(
                    NrtStatus::ExecHwErrCollectives,
                    format!(
                        "(FATAL-RT-UNDEFINED-STATE) missing collectives status on Neuron Device {dev} NC {}, replica group {key:?} rank {rank}: {v} of {expected} notifications within {:.1} sec ({EXEC_TIMEOUT_VAR}) - suspected hang in collectives operation 0 out of 1. Possibly caused by a hardware error on another worker.",
                        core.0,
                        exec.as_secs_f64()
                    ),
                ));
            }
            // Lend the waiting thread to the device (a simulator runs a
            // slice of the collective's DMA walks here, where sleeping
            // ranks left two workers to do all of it and woke thousands
            // of times per operation for nothing; hardware lends nothing
            // and falls through). One bounded slice, so the bound above is
            // checked between slices.
            if device.assist() {
                spins = 0;
                continue;
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        };
        self.leave(rt, &key, seq, &launched);
        result
    }

    /// This rank is done with a launched operation; the last one frees
    /// its device memory and the cores.
    fn leave(&self, rt: &Runtime, key: &[u32], seq: u64, launched: &Arc<Mutex<Launched>>) {
        let mut l = launched.lock().unwrap_or_else(|e| e.into_inner());
        l.left -= 1;
        if l.left > 0 {
            return;
        }
        for (d, a) in l.memory.drain(..) {
            if let Ok(m) = rt.memory(d) {
                let _ = m.free(a);
            }
        }
        let cores: Vec<(usize, u32)> = l.ranks.iter().map(|&(d, c, _)| (d, c.0)).collect();
        drop(l);
        let mut st = lock(&self.state);
        for c in cores {
            st.busy.remove(&c);
        }
        if let Some(g) = st.groups.get_mut(key) {
            g.pending.remove(&seq);
        }
        self.changed.notify_all();
    }

    /// Checks the peers agree, composes every rank's descriptors, programs
    /// the queues and rings the first doorbells (called by the last
    /// arrival, holding the state lock).
    fn launch(&self, rt: &Runtime, st: &mut State, arrivals: &[Arrival]) -> NrtResult<Launched> {
        let first = &arrivals[0];
        let n = arrivals.len();
        for a in &arrivals[1..] {
            if a.kind != first.kind || a.dtype != first.dtype || a.count != first.count || (a.kind.reduces() && a.op != first.op) {
                return Err(NrtError::invalid(format!(
                    "mismatched collectives between the peers: rank {} (vnc {}) runs {} but rank {} (vnc {}) runs {}",
                    first.rank,
                    first.vnc,
                    first.describe(),
                    a.rank,
                    a.vnc,
                    a.describe()
                )));
            }
        }
        let kind = &first.kind;
        let esize = first.dtype.size_bytes() as u64;
        let locate: Vec<(usize, CoreId)> = arrivals.iter().map(|a| rt.vcore(a.vnc).map(|v| (v.device, v.physical[0]))).collect::<NrtResult<_>>()?;
        if locate.iter().collect::<BTreeSet<_>>().len() != n {
            return Err(NrtError::invalid(format!("two ranks of replica group {:?} run on the same logical core", first.group)));
        }
        let cores: Vec<(usize, u32)> = locate.iter().map(|&(d, c)| (d, c.0)).collect();
        // Each rank's device (ranks of one instance may sit on several:
        // their steps between devices go through the peer window).
        let devices: Vec<Arc<dyn nrt_hal::Device>> = locate.iter().map(|&(d, _)| rt.device(d).cloned()).collect::<NrtResult<_>>()?;
        let memories: Vec<_> = locate.iter().map(|&(d, _)| rt.memory(d).cloned()).collect::<NrtResult<Vec<_>>>()?;
        let arch = devices[0].info().arch;
        let (in_elems, out_elems) = kind.sizes(n, first.count);
        let mut allocated: Vec<(usize, DeviceAddr)> = Vec::new();
        let fail = |allocated: &mut Vec<(usize, DeviceAddr)>, e: NrtError| {
            for (d, a) in allocated.drain(..) {
                if let Ok(m) = rt.memory(d) {
                    let _ = m.free(a);
                }
            }
            e
        };
        // Where each rank's chunks are.
        let (in_chunks, out_chunks) = match kind {
            CcKind::AllReduce => (n, n),
            CcKind::AllGather => (1, n),
            CcKind::ReduceScatter => (n, 1),
            CcKind::AllToAll => (n, n),
            CcKind::Permute(_) => (1, 1),
        };
        let mut sides = Vec::with_capacity(n);
        let mut in_place = Vec::with_capacity(n);
        for ((a, &(dev, core)), device) in arrivals.iter().zip(&locate).zip(&devices) {
            let side = (|| -> NrtResult<RankSide> {
                let split = |tensors: &[Arc<Tensor>], chunks: usize, elems: u64, what: &str| -> NrtResult<Vec<u64>> {
                    if matches!(kind, CcKind::AllReduce) && tensors.len() == 1 {
                        // Uneven chunks of one buffer.
                        let base = chunk_addrs(rt, dev, tensors, 1, elems * esize, what)?[0];
                        return Ok((0..chunks).map(|c| base + (0..c).map(|k| plan::chunk_len(kind, n, elems, k)).sum::<u64>() * esize).collect());
                    }
                    chunk_addrs(rt, dev, tensors, chunks, elems / chunks as u64 * esize, what)
                };
                let input = split(&a.input, in_chunks, in_elems, "input")?;
                let output = split(&a.output, out_chunks, out_elems, "output")?;
                Ok(RankSide { device: device.info().device_index, core, queues: CC_QUEUES.to_vec(), input, output, scratch: Vec::new() })
            })()
            .map_err(|e| NrtError::new(e.status, format!("rank {} (vnc {}): {}", a.rank, a.vnc, e.message)))?;
            in_place.push(side.input[0] == side.output[0] && side.input.len() == side.output.len());
            sides.push(side);
        }
        if matches!(kind, CcKind::ReduceScatter) && n > 1 {
            for (r, side) in sides.iter_mut().enumerate() {
                let bytes = (in_elems * esize).max(64);
                let a = memories[r].alloc(locate[r].1, MemOwner::Runtime, MemUsage::Cc, bytes, 64).map_err(|e| fail(&mut allocated, e))?;
                allocated.push((locate[r].0, a));
                side.scratch = (0..n as u64).map(|c| a.get() + c * first.count * esize).collect();
            }
        }
        let p = plan::plan(kind, n, first.count, &in_place);
        let sizes = compose::compose(&p, &sides, first.dtype, first.op.dma(), arch, &vec![0; n]).map_err(|e| fail(&mut allocated, NrtError::invalid(e)))?;
        let mut bases = Vec::with_capacity(n);
        for (r, img) in sizes.iter().enumerate() {
            let a = memories[r].alloc(locate[r].1, MemOwner::Runtime, MemUsage::DmaRingCollectives, img.bytes(), 256).map_err(|e| fail(&mut allocated, e))?;
            allocated.push((locate[r].0, a));
            bases.push(a.get());
        }
        let images: Vec<RankImage> = compose::compose(&p, &sides, first.dtype, first.op.dma(), arch, &bases).map_err(|e| fail(&mut allocated, NrtError::invalid(e)))?;
        let hal = |what: &str, e: nrt_hal::HalError| NrtError::failure(format!("collectives {what}: {e}"));
        let program = || -> NrtResult<()> {
            for ((img, &(_, core)), device) in images.iter().zip(&locate).zip(&devices) {
                for (off, bytes) in img.pieces() {
                    if !bytes.is_empty() {
                        device.write(DeviceAddr(img.base + off), &bytes).map_err(|e| hal("descriptor write", e))?;
                    }
                }
                for (l, lane) in img.lanes.iter().enumerate() {
                    let (tx, rx) = img.rings(l);
                    let config = DmaRingConfig { tx_ring: DeviceAddr(tx), rx_ring: DeviceAddr(rx), descriptors: lane.capacity, completion_semaphore: None, completion_event: None };
                    device.dma_queue_init(core, CC_QUEUES[l], config).map_err(|e| hal("queue init", e))?;
                }
                device.semaphore_set(core, CC_SEM, 0).map_err(|e| hal("semaphore reset", e))?;
            }
            for &(r, l, s) in &p.host_submits {
                let k = images[r].lanes[l].step_pairs[s];
                devices[r].dma_tail_increment(locate[r].1, CC_QUEUES[l], k, k).map_err(|e| hal("doorbell", e))?;
            }
            Ok(())
        };
        program().map_err(|e| fail(&mut allocated, e))?;
        for c in &cores {
            st.busy.insert(*c);
        }
        Ok(Launched { ranks: (0..n).map(|r| (locate[r].0, locate[r].1, p.expected_done(r))).collect(), memory: allocated, left: n, proxy: None })
    }
}

/// Checks that `g_device_id` is a rank of a world of `g_device_count`
/// ranks, and that the world is no larger than a NEFF may name
/// ([`nrt_neff::cc::MAX_WORLD`]): every per-rank table of a collective is
/// sized by it, so a caller's count is bounded before anything is
/// allocated for it.
pub fn check_member(g_device_id: u32, g_device_count: u32) -> NrtResult<()> {
    if g_device_count == 0 {
        return Err(NrtError::invalid("g_device_count is 0: a collectives world has at least one participant"));
    }
    if u64::from(g_device_count) > nrt_neff::cc::MAX_WORLD {
        return Err(NrtError::invalid(format!("g_device_count {g_device_count}: a collectives world has at most {} participants", nrt_neff::cc::MAX_WORLD)));
    }
    if g_device_id >= g_device_count {
        return Err(NrtError::invalid(format!("g_device_id {g_device_id} is not in a world of {g_device_count} participants (expected 0..{g_device_count})")));
    }
    Ok(())
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rank_waiting_for_peers_warns_every_30_s_or_before_a_shorter_bound() {
        assert_eq!(peer_warning_period(DEFAULT_PEER_TIMEOUT), Duration::from_secs(30));
        assert_eq!(peer_warning_period(Duration::from_secs(60)), Duration::from_secs(15));
        assert_eq!(peer_warning_period(Duration::from_secs(120)), Duration::from_secs(30));
    }

    #[test]
    fn the_first_warning_for_peers_comes_within_seconds_then_every_period() {
        assert_eq!(peer_warning_due(DEFAULT_PEER_TIMEOUT, 0), Duration::from_secs(5));
        assert_eq!(peer_warning_due(DEFAULT_PEER_TIMEOUT, 1), Duration::from_secs(35));
        assert_eq!(peer_warning_due(DEFAULT_PEER_TIMEOUT, 2), Duration::from_secs(65));
        assert_eq!(peer_warning_due(Duration::from_secs(8), 0), Duration::from_secs(2));
        assert_eq!(peer_warning_due(Duration::from_secs(8), 1), Duration::from_secs(4));
    }
}
