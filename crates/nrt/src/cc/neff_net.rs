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
//! - The chain of a NEFF's cross-process collectives is one
//!   [`NeffNet`]. Each execution is one proxy operation over all of them
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

use super::compose::RankImage;
use super::net::{Link, NetWorld};
use super::proxy::{Injected, Job, Proxy, ProxyState, RecvLink, SendLane, SubmitLane};
use super::split::Split;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueId};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One cross-process collective of a rank: what its proxy does for it.
pub struct OpNet {
    /// The op and its group, for headers and messages.
    what: String,
    /// The op's signature (what every rank of the NEFF runs, whatever
    /// its group).
    signature: String,
    sends: Vec<SendLane>,
    out_links: Vec<Link>,
    recvs: Vec<RecvLink>,
    submits: Vec<SubmitLane>,
    /// Post words, zeroed before each execution.
    post_words: Vec<u64>,
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
    /// The whole chain's proxy work (the [`OpNet`]s merged).
    sends: Vec<SendLane>,
    out_links: Vec<Link>,
    recvs: Vec<RecvLink>,
    submits: Vec<SubmitLane>,
    /// Post words, zeroed before each execution.
    post_words: Vec<u64>,
    /// The gate word (4 bytes), zeroed before each execution: the number
    /// of the chain's collectives the rank reached.
    gate: u64,
    inject: Injected,
    executions: AtomicU64,
    regions: Vec<(usize, Arc<nrt_net::queue::Region>)>,
}

impl std::fmt::Debug for NeffNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NeffNet").field("gid", &self.gid).field("what", &self.what).field("out_links", &self.out_links).finish()
    }
}

/// Where rank `me`'s pieces are: its proxy area, image, core.
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
}

impl OpNet {
    /// The proxy work of rank `at.me` of `group` in split `sp`, the
    /// `ordinal`-th cross-process collective of its NEFF: its sending
    /// lanes, the connections it sends and receives on, and the landing
    /// steps the proxy rings on its queues.
    pub fn new(world: &Arc<NetWorld>, device: &Arc<dyn nrt_hal::Device>, sp: &Split, group: &[u32], at: &RankPlace<'_>, signature: String, ordinal: u32) -> OpNet {
        let what = format!("{signature} on replica group {group:?}");
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
            submits.push(SubmitLane { core: at.core, queue: at.queues[lane], op: ordinal, steps: steps.iter().map(|&s| at.image.lanes[lane].step_pairs[s]).collect() });
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
            .map(|(&(r, l), pl)| SendLane { gid: group[r], lane: l, op: ordinal, post_word: at.area + pl.word, posts: pl.posts.iter().map(|msgs| msgs.iter().map(|m| (group[m.dst], at.area + m.offset, m.bytes)).collect()).collect() })
            .collect();
        let out_links = sp.outbound.iter().filter(|o| o.1 == me).map(|&(q, r, l)| (group[r], group[q], l)).collect();
        let post_words = sp.areas[me].post_words.iter().map(|o| at.area + o).collect();
        let regions = world.register_areas(device, &[(at.area, sp.areas[me].bytes)]);
        OpNet { what, signature, sends, out_links, recvs, submits, post_words, regions }
    }

    /// The load-time meeting with the peers in other processes: every
    /// connection of this collective carries one header naming its
    /// signature; a peer with another one fails both loads
    /// (NRT_INVALID), one that never loads fails this one within
    /// `NEURON_RT_CC_NET_TIMEOUT`.
    pub fn meet_peers(&self, world: &Arc<NetWorld>, device: &Arc<dyn nrt_hal::Device>) -> NrtResult<()> {
        let job = Job {
            world: world.clone(),
            device: Box::new(device.clone()),
            op: self.signature.clone(),
            sends: Vec::new(),
            out_links: self.out_links.clone(),
            recvs: self.recvs.iter().map(|r| RecvLink { link: r.link, msgs: Vec::new() }).collect(),
            submits: Vec::new(),
            inject: Injected::default(),
            gate: None,
            regions: Vec::new(),
        };
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
            _ => format!("{} collectives ({})", ops.len(), ops.iter().map(|o| o.signature.as_str()).collect::<Vec<_>>().join("; ")),
        };
        let position = world.local.keys().position(|&g| g == gid).unwrap_or(0);
        let mut net = NeffNet { world, device, gid, position, what, sends: Vec::new(), out_links: Vec::new(), recvs: Vec::new(), submits: Vec::new(), post_words: Vec::new(), gate, inject, executions: AtomicU64::new(0), regions: Vec::new() };
        for op in ops {
            // The op's landings name its submit lanes: offset them past
            // the earlier ops'.
            let base = net.submits.len();
            for r in op.recvs {
                let msgs = r.msgs.into_iter().map(|(a, b, k, i)| (a, b, base + k, i));
                match net.recvs.iter_mut().find(|x| x.link == r.link) {
                    Some(x) => x.msgs.extend(msgs),
                    None => net.recvs.push(RecvLink { link: r.link, msgs: msgs.collect() }),
                }
            }
            net.submits.extend(op.submits);
            net.sends.extend(op.sends);
            for l in op.out_links {
                if !net.out_links.contains(&l) {
                    net.out_links.push(l);
                }
            }
            net.post_words.extend(op.post_words);
            net.regions.extend(op.regions);
        }
        net
    }

    /// Starts this execution's proxy operation: zeroes the post and gate
    /// words the device sets during the execution, then hands the
    /// operation to the rank's proxy thread. Call before the doorbell.
    pub fn begin(&self) -> NrtResult<Arc<Proxy>> {
        self.world.check()?;
        let hal = |e: nrt_hal::HalError| NrtError::failure(format!("collectives proxy words: {e}"));
        for &w in &self.post_words {
            self.device.write(DeviceAddr(w), &0u64.to_le_bytes()).map_err(hal)?;
        }
        self.device.write(DeviceAddr(self.gate), &0u32.to_le_bytes()).map_err(hal)?;
        let k = self.executions.fetch_add(1, Ordering::Relaxed);
        self.world.proxies.start(self.position, Job {
            world: self.world.clone(),
            device: Box::new(self.device.clone()),
            op: format!("execution {k} of {}", self.what),
            sends: self.sends.clone(),
            out_links: self.out_links.clone(),
            recvs: self.recvs.clone(),
            submits: self.submits.clone(),
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
