//! The cross-process part of one rank's loaded in-NEFF collective: the
//! replica group names ranks of other processes, so the rank's schedule
//! was cut at the network ([`super::split`]) and a network proxy
//! ([`super::proxy`]) moves the cut transfers.
//!
//! - At load, [`NeffNet::meet_peers`] runs a proxy operation that carries
//!   no data: one header per connection naming the op signature, so peers
//!   that loaded different collectives fail (NRT_INVALID, naming both
//!   sides), and a peer that never loads fails the load within
//!   `NEURON_RT_CC_NET_TIMEOUT`. It also makes the connections, which the
//!   executions then reuse.
//! - Each execution is one proxy operation ([`NeffNet::begin`], then
//!   [`NeffNet::finish`]): the proxy starts before the doorbell, its header
//!   names the execution's sequence number (the k-th execution of each
//!   rank meets the k-th of the others), and it rings no landing on this
//!   rank's queues before the device wrote the rank's *gate* word, which
//!   the lowered 0xC8 sequence does once the rank reached the collective.
//!   The peers' headers arriving is the cross-process barrier the
//!   execution's harvest waits for in WAIT_BARRIER_PROXY.
//!
//! A proxy per execution keeps the proxy a one-operation machine (its
//! bounds, abort and header checks are those of standalone collectives)
//! and holds no thread while the model is idle; what it costs is a thread
//! start per execution, small next to a network round trip.

use super::compose::RankImage;
use super::net::{Link, NetWorld};
use super::proxy::{Injected, Job, Proxy, ProxyState, RecvLink, SendLane, SubmitLane};
use super::split::Split;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueId};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One rank's cross-process connections and what its proxy does on them
/// in every execution.
pub struct NeffNet {
    world: Arc<NetWorld>,
    device: Arc<dyn nrt_hal::Device>,
    /// This rank's global id.
    gid: u32,
    /// The op and its group, for headers and messages.
    what: String,
    sends: Vec<SendLane>,
    out_links: Vec<Link>,
    recvs: Vec<RecvLink>,
    submits: Vec<SubmitLane>,
    /// Post words, zeroed before each execution.
    post_words: Vec<u64>,
    /// The gate word (4 bytes), zeroed before each execution.
    gate: u64,
    inject: Injected,
    executions: AtomicU64,
    /// The proxy area registered with the world's transports (empty:
    /// messages staged through host buffers).
    regions: Vec<(usize, Arc<nrt_net::queue::Region>)>,
}

impl std::fmt::Debug for NeffNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeffNet").field("gid", &self.gid).field("what", &self.what).field("out_links", &self.out_links).finish()
    }
}

/// Where rank `me`'s pieces are: its proxy area, image, core and gate.
pub struct RankPlace<'a> {
    /// Index in the group.
    pub me: usize,
    /// Base of its proxy area.
    pub area: u64,
    /// Its composed image (step pair counts).
    pub image: &'a RankImage,
    /// Its core.
    pub core: CoreId,
    /// The queue of each lane.
    pub queues: &'a [DmaQueueId],
    /// The gate word's address.
    pub gate: u64,
}

impl NeffNet {
    /// The proxy work of rank `at.me` of `group` in split `sp`: its
    /// sending lanes, the connections it sends and receives on, and the
    /// landing steps the proxy rings on its queues.
    pub fn new(world: Arc<NetWorld>, device: Arc<dyn nrt_hal::Device>, sp: &Split, group: &[u32], at: &RankPlace<'_>, what: String, inject: Injected) -> NeffNet {
        let me = at.me;
        let mut steps_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (&(_, q, _), msgs) in &sp.inbound {
            if q == me {
                for m in msgs {
                    steps_of.entry(m.lane).or_default().push(m.step);
                }
            }
        }
        let mut submits = Vec::new();
        let mut where_of: BTreeMap<(usize, usize), (usize, usize)> = BTreeMap::new();
        for (&lane, steps) in steps_of.iter_mut() {
            steps.sort_unstable();
            for (i, &s) in steps.iter().enumerate() {
                where_of.insert((lane, s), (submits.len(), i));
            }
            submits.push(SubmitLane { core: at.core, queue: at.queues[lane], steps: steps.iter().map(|&s| at.image.lanes[lane].step_pairs[s]).collect() });
        }
        let recvs = sp
            .inbound
            .iter()
            .filter(|(k, _)| k.1 == me)
            .map(|(&(r, q, l), msgs)| RecvLink {
                link: (group[r], group[q], l),
                msgs: msgs.iter().map(|m| {
                    let (k, i) = where_of[&(m.lane, m.step)];
                    (at.area + m.offset, m.bytes, k, i)
                }).collect(),
            })
            .collect();
        let sends = sp
            .posts
            .iter()
            .filter(|(k, _)| k.0 == me)
            .map(|(&(r, l), pl)| SendLane { gid: group[r], lane: l, post_word: at.area + pl.word, posts: pl.posts.iter().map(|msgs| msgs.iter().map(|m| (group[m.dst], at.area + m.offset, m.bytes)).collect()).collect() })
            .collect();
        let out_links = sp.outbound.iter().filter(|o| o.1 == me).map(|&(q, r, l)| (group[r], group[q], l)).collect();
        let post_words = sp.areas[me].post_words.iter().map(|o| at.area + o).collect();
        let regions = world.register_areas(&device, &[(at.area, sp.areas[me].bytes)]);
        NeffNet { world, device, gid: group[me], what, sends, out_links, recvs, submits, post_words, gate: at.gate, inject, executions: AtomicU64::new(0), regions }
    }

    fn job(&self, op: String, data: bool) -> Job {
        let recvs = if data { self.recvs.clone() } else { self.recvs.iter().map(|r| RecvLink { link: r.link, msgs: Vec::new() }).collect() };
        Job {
            world: self.world.clone(),
            device: Box::new(self.device.clone()),
            op,
            sends: if data { self.sends.clone() } else { Vec::new() },
            out_links: self.out_links.clone(),
            recvs,
            submits: if data { self.submits.clone() } else { Vec::new() },
            inject: if data { self.inject } else { Injected::default() },
            gate: data.then_some(self.gate),
            regions: if data { self.regions.clone() } else { Vec::new() },
        }
    }

    /// The load-time meeting with the peers in other processes: every
    /// connection of this rank carries one header naming `signature`; a
    /// peer with another one fails both loads (NRT_INVALID), one that
    /// never loads fails this one within `NEURON_RT_CC_NET_TIMEOUT`.
    pub fn meet_peers(&self, signature: &str) -> NrtResult<()> {
        let p = Proxy::start(self.job(signature.to_string(), false))?;
        p.outcome(|_| {})
    }

    /// Starts this execution's proxy: zeroes the post and gate words the
    /// device sets during the execution, then starts the proxy thread.
    /// Call before the doorbell.
    pub fn begin(&self) -> NrtResult<Arc<Proxy>> {
        self.world.check()?;
        let hal = |e: nrt_hal::HalError| NrtError::failure(format!("collectives proxy words: {e}"));
        for &w in &self.post_words {
            self.device.write(DeviceAddr(w), &0u64.to_le_bytes()).map_err(hal)?;
        }
        self.device.write(DeviceAddr(self.gate), &0u32.to_le_bytes()).map_err(hal)?;
        let k = self.executions.fetch_add(1, Ordering::Relaxed);
        Proxy::start(self.job(format!("execution {k} of {}", self.what), true))
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
