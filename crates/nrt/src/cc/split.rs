//! One process's share of a [`Plan`] whose ranks live in several
//! processes: the steps of this process's ranks, with every transfer that
//! crosses to another process cut in two at the network.
//!
//! - Sending side (a step of a local rank that writes into a remote rank):
//!   the transfer becomes a DMA copy of the source bytes into an *outbox*
//!   slot of the rank's proxy area; after the step's transfers the DMA
//!   writes the step's post index (1, 2, ...) into the lane's *post word*.
//!   The proxy polls that word and sends the outbox slots of the step, one
//!   message per remote destination rank and lane.
//! - Receiving side (a step of a remote rank that writes into a local
//!   rank): the proxy lands the message in an *inbox* slot and rings the
//!   doorbell of a *landing step* on the local rank's own queue, whose
//!   DMA moves (or reduces, in-DMA) the inbox into place and raises the
//!   signals the remote step would have raised. The landing goes in front
//!   of the step the remote step submitted, or, when it submitted none, is
//!   appended to the lane.
//!
//! Pure: no device. The proxy area's layout is given as extra scratch
//! chunks of each local rank (indices `ranks..`), so `compose` needs no
//! new encoding.

use super::plan::{Buf, Loc, Plan, Signal, Step, Transfer};
use std::collections::BTreeMap;

/// Bytes of a post word and of each index word.
pub const WORD_BYTES: u64 = 8;

/// One message of a posting step: the outbox slot bytes for one remote
/// rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutMsg {
    /// Destination rank (group index).
    pub dst: usize,
    /// Offset of the bytes in the sender's proxy area.
    pub offset: u64,
    /// Length in bytes (0 for a message that only carries signals).
    pub bytes: u64,
}

/// A local lane's steps that post to the proxy, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PostLane {
    /// Offset of the lane's post word in the rank's proxy area.
    pub word: u64,
    /// Per posting step (post index `i + 1`), its messages.
    pub posts: Vec<Vec<OutMsg>>,
}

/// A message a local rank receives and where it lands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InMsg {
    /// Offset of the inbox slot in the receiver's proxy area.
    pub offset: u64,
    /// Length in bytes.
    pub bytes: u64,
    /// The receiver's lane and step the landing is part of.
    pub lane: usize,
    /// Step index in that lane.
    pub step: usize,
}

/// What one process does for one operation.
#[derive(Clone, Debug)]
pub struct Split {
    /// The local ranks' steps (remote ranks have no lanes).
    pub plan: Plan,
    /// Per rank: its proxy area's chunk offsets (appended to the rank's
    /// scratch at index `ranks`), bytes the area needs, and the initial
    /// contents (index words) as (offset, bytes).
    pub areas: Vec<Area>,
    /// `(rank, lane)` -> the lane's posts (local ranks only).
    pub posts: BTreeMap<(usize, usize), PostLane>,
    /// `(src rank, dst rank, src lane)` -> the messages of that
    /// connection, in order (local destinations only).
    pub inbound: BTreeMap<(usize, usize, usize), Vec<InMsg>>,
    /// `(dst rank, src rank, src lane)` of every connection a local rank
    /// sends on.
    pub outbound: Vec<(usize, usize, usize)>,
}

/// One local rank's proxy area.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Area {
    /// Offsets of the extra scratch chunks.
    pub chunks: Vec<u64>,
    /// Bytes the area needs.
    pub bytes: u64,
    /// Index words to write before the op starts: (offset, value).
    pub words: Vec<(u64, u64)>,
    /// Post words to zero before the op starts.
    pub post_words: Vec<u64>,
}

struct AreaBuilder {
    /// Scratch chunks before the area's (the plan's own scratch).
    first: usize,
    chunks: Vec<u64>,
    at: u64,
}

impl AreaBuilder {
    /// A new chunk of `bytes`: its scratch chunk index and area offset.
    fn slot(&mut self, bytes: u64) -> (usize, u64) {
        let off = self.at;
        self.at += bytes.max(1).next_multiple_of(64);
        self.chunks.push(off);
        (self.first + self.chunks.len() - 1, off)
    }
}

/// An appended landing whose step index is fixed at the end: (its
/// connection, its message index there, the lane, its place among the
/// lane's appended steps).
type PendingIn = ((usize, usize, usize), usize, usize, usize);

#[derive(Default)]
struct Landing {
    transfers: Vec<Transfer>,
    then: Vec<Signal>,
}

/// Splits `plan` for the process holding the ranks with `local[r]` set.
/// `esize` is the element size (1, 2, 4 or 8 bytes).
pub fn split(plan: &Plan, local: &[bool], esize: u64) -> Result<Split, String> {
    let n = plan.ranks;
    if local.len() != n || !(1..=WORD_BYTES).contains(&esize) || !WORD_BYTES.is_multiple_of(esize) {
        return Err(format!("cannot split a plan of {n} ranks for {} flags and {esize}-byte elements", local.len()));
    }
    let cross = |a: usize, b: usize| local[a] != local[b];
    let mut areas: Vec<AreaBuilder> = (0..n).map(|_| AreaBuilder { first: n, chunks: Vec::new(), at: 0 }).collect();
    let mut out_areas: Vec<Area> = vec![Area::default(); n];
    // Index words and post words first: chunk ids n + 0..K-1 are index
    // words 1..=K, then one post word per lane.
    for r in (0..n).filter(|&r| local[r]) {
        let k = plan.lanes[r].iter().map(|l| l.len()).max().unwrap_or(0);
        for i in 0..k {
            let (_, off) = areas[r].slot(WORD_BYTES);
            out_areas[r].words.push((off, i as u64 + 1));
        }
        for _ in 0..plan.lanes[r].len() {
            let (_, off) = areas[r].slot(WORD_BYTES);
            out_areas[r].post_words.push(off);
        }
    }
    let word_chunk = |i: u64| n + i as usize - 1;
    let post_chunk = |r: usize, l: usize| n + plan.lanes[r].iter().map(|x| x.len()).max().unwrap_or(0) + l;
    let mut sender: BTreeMap<(usize, usize, usize), Step> = BTreeMap::new();
    let mut prepend: BTreeMap<(usize, usize, usize), Landing> = BTreeMap::new();
    let mut appended: BTreeMap<(usize, usize), Vec<Landing>> = BTreeMap::new();
    let mut posts: BTreeMap<(usize, usize), PostLane> = BTreeMap::new();
    let mut inbound: BTreeMap<(usize, usize, usize), Vec<InMsg>> = BTreeMap::new();
    let mut outbound: Vec<(usize, usize, usize)> = Vec::new();
    // (dst rank, src rank, src lane, step) of appended landings, to fix
    // their step index once the lanes' lengths are known.
    let mut pending_in: Vec<PendingIn> = Vec::new();
    for r in 0..n {
        for (l, steps) in plan.lanes[r].iter().enumerate() {
            for (k, s) in steps.iter().enumerate() {
                for t in &s.transfers {
                    if t.src.rank != r && t.src.rank != t.dst.rank {
                        return Err(format!("step {k} of lane {l} of rank {r} reads rank {}'s buffer for rank {}", t.src.rank, t.dst.rank));
                    }
                }
                // Remote ranks this step talks to, in first-mention order.
                let mut peers: Vec<usize> = Vec::new();
                let mention = |q: usize, peers: &mut Vec<usize>| {
                    if cross(r, q) && !peers.contains(&q) {
                        peers.push(q);
                    }
                };
                for t in &s.transfers {
                    mention(t.dst.rank, &mut peers);
                }
                for sig in &s.then {
                    match *sig {
                        Signal::Submit { rank, .. } | Signal::Done { rank } => mention(rank, &mut peers),
                    }
                }
                if local[r] {
                    let mut st = Step::default();
                    let mut msgs = Vec::new();
                    for &q in &peers {
                        let mut start = None;
                        let mut bytes = 0;
                        for t in s.transfers.iter().filter(|t| t.dst.rank == q && t.src.rank == r) {
                            let (c, off) = areas[r].slot(t.len * esize);
                            start.get_or_insert(off);
                            // Slots of one message are contiguous: each is
                            // padded to 64 bytes, so count the padded size.
                            bytes = off + t.len * esize - start.unwrap_or(off);
                            st.transfers.push(Transfer { src: t.src, dst: Loc { rank: r, buf: Buf::Scratch, chunk: c, offset: 0 }, len: t.len, reduce: false });
                        }
                        msgs.push(OutMsg { dst: q, offset: start.unwrap_or(0), bytes });
                        if !outbound.contains(&(q, r, l)) {
                            outbound.push((q, r, l));
                        }
                    }
                    for t in s.transfers.iter().filter(|t| !cross(r, t.dst.rank)) {
                        st.transfers.push(*t);
                    }
                    if !msgs.is_empty() {
                        let pl = posts.entry((r, l)).or_insert_with(|| PostLane { word: out_areas[r].post_words[l], posts: Vec::new() });
                        pl.posts.push(msgs);
                        let idx = pl.posts.len() as u64;
                        st.transfers.push(Transfer {
                            src: Loc { rank: r, buf: Buf::Scratch, chunk: word_chunk(idx), offset: 0 },
                            dst: Loc { rank: r, buf: Buf::Scratch, chunk: post_chunk(r, l), offset: 0 },
                            len: WORD_BYTES / esize,
                            reduce: false,
                        });
                    }
                    st.then = s.then.iter().copied().filter(|sig| match *sig {
                        Signal::Submit { rank, .. } | Signal::Done { rank } => !cross(r, rank),
                    }).collect();
                    sender.insert((r, l, k), st);
                } else {
                    for &q in peers.iter().filter(|&&q| local[q]) {
                        let mut land = Landing::default();
                        let mut start = None;
                        let mut end = 0;
                        for t in s.transfers.iter().filter(|t| t.dst.rank == q) {
                            if t.src.rank == q {
                                land.transfers.push(*t);
                            } else {
                                let (c, off) = areas[q].slot(t.len * esize);
                                start.get_or_insert(off);
                                end = off + t.len * esize;
                                land.transfers.push(Transfer { src: Loc { rank: q, buf: Buf::Scratch, chunk: c, offset: 0 }, dst: t.dst, len: t.len, reduce: t.reduce });
                            }
                        }
                        let start = start.unwrap_or(0);
                        let bytes = end.saturating_sub(start);
                        let mut submit = None;
                        for sig in &s.then {
                            match *sig {
                                Signal::Submit { rank, lane, step } if rank == q && submit.replace((lane, step)).is_some() => {
                                    return Err(format!("step {k} of lane {l} of rank {r} submits two steps of rank {q}"));
                                }
                                Signal::Done { rank } if rank == q => land.then.push(*sig),
                                _ => {}
                            }
                        }
                        let conn = (r, q, l);
                        match submit {
                            Some((lane, step)) => {
                                inbound.entry(conn).or_default().push(InMsg { offset: start, bytes, lane, step });
                                if prepend.insert((q, lane, step), land).is_some() {
                                    return Err(format!("step {step} of lane {lane} of rank {q} is submitted twice"));
                                }
                            }
                            None => {
                                let lane = if l < plan.lanes[q].len() { l } else { 0 };
                                let list = appended.entry((q, lane)).or_default();
                                let idx = list.len();
                                list.push(land);
                                let at = inbound.entry(conn).or_default();
                                at.push(InMsg { offset: start, bytes, lane, step: usize::MAX });
                                pending_in.push((conn, at.len() - 1, lane, idx));
                            }
                        }
                    }
                }
            }
        }
    }
    // Assemble the local lanes.
    let mut lanes: Vec<Vec<Vec<Step>>> = vec![Vec::new(); n];
    for r in (0..n).filter(|&r| local[r]) {
        for l in 0..plan.lanes[r].len() {
            let mut steps = Vec::new();
            for k in 0..plan.lanes[r][l].len() {
                let mut st = Step::default();
                if let Some(p) = prepend.remove(&(r, l, k)) {
                    st.transfers.extend(p.transfers);
                    st.then.extend(p.then);
                }
                let own = sender.remove(&(r, l, k)).unwrap_or_default();
                st.transfers.extend(own.transfers);
                st.then.extend(own.then);
                steps.push(st);
            }
            for land in appended.remove(&(r, l)).unwrap_or_default() {
                steps.push(Step { transfers: land.transfers, then: land.then });
            }
            lanes[r].push(steps);
        }
    }
    if let Some(((q, l, k), _)) = prepend.into_iter().next() {
        return Err(format!("a remote step submits step {k} of lane {l} of rank {q}, which does not exist"));
    }
    for (conn, at, lane, idx) in pending_in {
        let q = conn.1;
        inbound.get_mut(&conn).expect("recorded")[at].step = plan.lanes[q][lane].len() + idx;
    }
    // Every lane is fed by one kind of source: the host (step 0), then
    // either local DMA signals or the proxy, never both (the queue's tail
    // increments must come in step order).
    let fed_by_proxy: std::collections::BTreeSet<(usize, usize)> = inbound.iter().flat_map(|(&(_, q, _), msgs)| msgs.iter().map(move |m| (q, m.lane))).collect();
    for s in lanes.iter().flatten().flatten() {
        for sig in &s.then {
            if let Signal::Submit { rank, lane, .. } = *sig
                && fed_by_proxy.contains(&(rank, lane))
            {
                return Err(format!("lane {lane} of rank {rank} would be fed by both the proxy and a local DMA queue"));
            }
        }
    }
    let host_submits = plan.host_submits.iter().copied().filter(|&(r, _, _)| local[r]).collect();
    let split_plan = Plan { ranks: n, lanes, host_submits };
    for r in (0..n).filter(|&r| local[r]) {
        debug_assert_eq!(split_plan.expected_done(r), plan.expected_done(r), "rank {r} keeps its done count");
        out_areas[r].chunks = std::mem::take(&mut areas[r].chunks);
        out_areas[r].bytes = areas[r].at.max(64);
    }
    Ok(Split { plan: split_plan, areas: out_areas, posts, inbound, outbound })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::plan::{CcKind, plan};

    #[test]
    fn every_sent_message_has_a_receiver_of_the_same_size() {
        for (kind, n) in [(CcKind::AllReduce, 2usize), (CcKind::AllReduce, 4), (CcKind::AllGather, 3), (CcKind::ReduceScatter, 4), (CcKind::AllToAll, 4)] {
            let count = 1000;
            let p = plan(&kind, n, count, &vec![false; n]);
            // Ranks alternate between two processes.
            let a: Vec<bool> = (0..n).map(|r| r % 2 == 0).collect();
            let b: Vec<bool> = a.iter().map(|x| !x).collect();
            let sa = split(&p, &a, 4).unwrap();
            let sb = split(&p, &b, 4).unwrap();
            for (s_send, s_recv) in [(&sa, &sb), (&sb, &sa)] {
                let mut sent: BTreeMap<(usize, usize, usize), Vec<u64>> = BTreeMap::new();
                for (&(r, l), pl) in &s_send.posts {
                    for post in &pl.posts {
                        for m in post {
                            sent.entry((r, m.dst, l)).or_default().push(m.bytes);
                        }
                    }
                }
                let recv: BTreeMap<(usize, usize, usize), Vec<u64>> = s_recv.inbound.iter().map(|(k, v)| (*k, v.iter().map(|m| m.bytes).collect())).collect();
                assert_eq!(sent, recv, "{kind} n={n}");
            }
            for (r, &in_a) in a.iter().enumerate() {
                let s = if in_a { &sa } else { &sb };
                assert_eq!(s.plan.expected_done(r), p.expected_done(r));
            }
        }
    }
}
