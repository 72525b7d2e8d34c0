//! The cross-process part of one rank's loaded in-NEFF collectives: the
//! replica groups of some of its collectives name ranks of other
//! processes, so those collectives' schedules were cut at the network
//! ([`super::split`]) and a network proxy ([`super::proxy`]) moves the cut
//! transfers.
//!
//! - At load, each such collective, in program order, is one
//!   [`OpNet`]: its sending lanes, its connections and the landing steps
//!   the proxy rings on this rank's queues. [`OpNet::meet_peers`] runs a
//!   proxy operation that carries no data: one header per connection
//!   naming the op signature, so peers that loaded different collectives
//!   fail (NRT_INVALID, naming both sides), and a peer that never loads
//!   fails the load within `NEURON_RT_CC_NET_TIMEOUT`. It also makes the
//!   connections, which every op and execution then reuse.
//! - The chain of a NEFF subgraph's cross-process collectives is one
//!   [`NeffNet`]; at LNC 2 each physical core's subgraph has its own (its
//!   ring channel, with its own gate word and connections), so the two
//!   chains run side by side as the two rings do, both on the rank's
//!   proxy thread. Each execution is one proxy operation per chain
//!   ([`NeffNet::begin`], then [`NeffNet::finish`]): the proxy starts
//!   before the doorbell, its header names the execution's sequence
//!   number (the k-th execution of each rank meets the k-th of the
//!   others), and each collective has its own gate: the lowered 0xC8
//!   sequence of the j-th cross-process collective writes `j + 1` into
//!   the rank's gate word once the rank reached it, and the proxy rings
//!   none of that collective's landings before. Messages of one
//!   connection go in program order (a collective's posts are read only
//!   once the previous one's are all queued), so a connection shared by
//!   several collectives carries them one after the other. The peers'
//!   headers arriving is the cross-process barrier the execution's
//!   harvest waits for in WAIT_BARRIER_PROXY.
//!
//! Each execution is one operation of the proxy (its bounds, abort and
//! header checks are those of standalone collectives), driven by the
//! rank's persistent proxy thread ([`super::proxy_threads`]), so an
//! execution starts no thread.

use super::net::NetWorld;
use super::proxy::{Injected, Job, Proxy, ProxyState};
use super::proxy_work::{RankPlace, Work};
use super::split::Split;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::DeviceAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One cross-process collective of a rank: what its proxy does for it.
pub struct OpNet {
    /// The op and its group, for headers and messages.
    what: String,
    /// The op's signature (what every rank of the NEFF runs, whatever
    /// its group).
    signature: String,
    /// Its ring channel: the physical core of the logical core it runs on.
    channel: usize,
    work: Work,
    /// The proxy area registered with the world's transports (empty:
    /// messages staged through host buffers).
    regions: Vec<(usize, Arc<nrt_net::queue::Region>)>,
}

/// One rank's cross-process collectives (in program order), their
/// connections and gate word, and what its proxy does on them in every
/// execution.
pub struct NeffNet {
    world: Arc<NetWorld>,
    device: Arc<dyn nrt_hal::Device>,
    /// This rank's global id.
    gid: u32,
    /// Its place among the process's ranks (which proxy thread serves it).
    position: usize,
    /// The chain, for headers and messages.
    what: String,
    /// The whole chain's proxy work (the [`OpNet`]s' in order).
    work: Arc<Work>,
    /// The gate word (4 bytes), zeroed before each execution: the number
    /// of the chain's collectives the rank reached.
    gate: u64,
    inject: Injected,
    executions: AtomicU64,
    regions: Vec<(usize, Arc<nrt_net::queue::Region>)>,
}

impl std::fmt::Debug for NeffNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeffNet").field("gid", &self.gid).field("what", &self.what).field("out_links", &self.work.out_links).finish()
    }
}

/// What names a ring channel in messages and headers: nothing for the
/// first physical core's, `, physical core 1` for the second's.
fn on_channel(channel: usize) -> String {
    match channel {
        0 => String::new(),
        c => format!(", physical core {c}"),
    }
}

impl OpNet {
    /// The proxy work of rank `at.me` of `group` in split `sp`, the
    /// `ordinal`-th cross-process collective of its NEFF's subgraph
    /// `channel` (the physical core of the logical core it runs on, whose
    /// ring channel has connections of its own): its sending lanes, the
    /// connections it sends and receives on, and the steps the proxy
    /// submits on its queues.
    #[allow(clippy::too_many_arguments)]
    pub fn new(world: &Arc<NetWorld>, device: &Arc<dyn nrt_hal::Device>, sp: &Split, group: &[u32], at: &RankPlace<'_>, signature: String, ordinal: u32, channel: usize) -> OpNet {
        let what = format!("{signature} on replica group {group:?}{}", on_channel(channel));
        let work = Work::of_split(sp, group, std::slice::from_ref(at), ordinal, channel);
        let regions = world.register_areas(device, &[(at.area, sp.areas[at.me].bytes)]);
        OpNet { what, signature, channel, work, regions }
    }

    /// The load-time meeting with the peers in other processes: every
    /// connection of this collective (data and credits) carries one header
    /// naming its signature; a peer with another one fails both loads
    /// (NRT_INVALID), one that never loads fails this one within
    /// `NEURON_RT_CC_NET_TIMEOUT`.
    pub fn meet_peers(&self, world: &Arc<NetWorld>, device: &Arc<dyn nrt_hal::Device>) -> NrtResult<()> {
        let job = Job { world: world.clone(), device: Box::new(device.clone()), op: format!("{}{}", self.signature, on_channel(self.channel)), work: Arc::new(self.work.links_only()), inject: Injected::default(), gate: None, regions: Vec::new() };
        Proxy::start(job)?.outcome(|_| {})
    }
}

impl NeffNet {
    /// The chain of a rank's cross-process collectives, `ops` in program
    /// order (each built with its ordinal), gated by the word at `gate`.
    pub fn chain(world: Arc<NetWorld>, device: Arc<dyn nrt_hal::Device>, gid: u32, ops: Vec<OpNet>, gate: u64, inject: Injected) -> NeffNet {
        // Two ranks of a connection may be in different groups of the
        // chain's other collectives: a chain names the signatures only.
        let what = match ops.as_slice() {
            [one] => one.what.clone(),
            _ => format!("{} collectives ({}){}", ops.len(), ops.iter().map(|o| o.signature.as_str()).collect::<Vec<_>>().join("; "), on_channel(ops.first().map_or(0, |o| o.channel))),
        };
        let position = world.local.keys().position(|&g| g == gid).unwrap_or(0);
        let mut work = Work::default();
        let mut regions = Vec::new();
        for op in ops {
            work.then(op.work);
            regions.extend(op.regions);
        }
        NeffNet { world, device, gid, position, what, work: Arc::new(work), gate, inject, executions: AtomicU64::new(0), regions }
    }

    /// Starts this execution's proxy operation: zeroes the post, relay,
    /// free and gate words the device sets during the execution, then hands the
    /// operation to the rank's proxy thread. Call before the doorbell.
    pub fn begin(&self) -> NrtResult<Arc<Proxy>> {
        self.world.check()?;
        let hal = |e: nrt_hal::HalError| NrtError::failure(format!("collectives proxy words: {e}"));
        for &w in &self.work.reset_words {
            self.device.write(DeviceAddr(w), &0u64.to_le_bytes()).map_err(hal)?;
        }
        self.device.write(DeviceAddr(self.gate), &0u32.to_le_bytes()).map_err(hal)?;
        let k = self.executions.fetch_add(1, Ordering::Relaxed);
        self.world.proxies.start(self.position, Job {
            world: self.world.clone(),
            device: Box::new(self.device.clone()),
            op: format!("execution {k} of {}", self.what),
            work: self.work.clone(),
            inject: self.inject,
            gate: Some(self.gate),
            regions: self.regions.clone(),
        })
    }

    /// Ends this execution's proxy after the harvest returned `status`:
    /// on success it finishes its last sends; on a failure it is stopped
    /// (its peers are told). Returns the proxy's error when the proxy
    /// failed (the root cause: a dead or mismatched peer, the network),
    /// `None` when the harvest's status stands.
    pub fn finish(&self, p: &Proxy, status: NrtStatus) -> Option<NrtError> {
        if status != NrtStatus::Success && !matches!(p.state(), ProxyState::Failed(_)) {
            p.stop(NrtError::new(status, format!("the execution of rank {} ended with {status}", self.gid)));
            let _ = p.outcome(|_| {});
            return None;
        }
        p.outcome(|_| {}).err()
    }
}
