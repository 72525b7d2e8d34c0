//! One process's share of a [`Plan`] whose ranks live in several
//! processes: the steps of this process's ranks, with every transfer that
//! crosses to another process cut in two at the network, and a bounded
//! number of message slots per connection (credits).
//!
//! - Messages: a connection is (source rank, destination rank, source
//!   lane); each step of the source lane that writes into the destination
//!   is one message of it, numbered `m = 0, 1, ...` in step order. Message
//!   `m` goes through outbox slot `m % SLOTS` of the sender's proxy area
//!   and inbox slot `m % SLOTS` of the receiver's, so a connection takes
//!   `min(SLOTS, messages) x` its largest message of device memory on each
//!   side, whatever the operation moves.
//! - Sending side (a step of a local rank that writes into a remote rank):
//!   the transfer becomes a DMA copy of the source bytes into the outbox
//!   slot; after the step's transfers the DMA writes the step's post index
//!   (1, 2, ...) into the lane's *post word*. The proxy polls that word and
//!   sends the slot, one message per remote destination rank and lane.
//! - Receiving side (a step of a remote rank that writes into a local
//!   rank): the proxy lands the message in its inbox slot and rings the
//!   doorbell of a *landing step* on the local rank's own queue, whose
//!   DMA moves (or reduces, in-DMA) the inbox into place, then writes
//!   `m + 1` into the connection's *free word* (the slot may be reused)
//!   and raises the signals the remote step would have raised. The landing
//!   goes in front of the step the remote step submitted, or, when it
//!   submitted none, is appended to the lane.
//! - Credits: the receiver's proxy posts the receive of message `m` only
//!   once the free word says message `m - SLOTS` landed, and then sends the
//!   sender a credit; the sender's proxy sends message `m >= SLOTS` only
//!   with its credit, and rings a step that writes message `m >= SLOTS`
//!   into an outbox slot only once the send of message `m - SLOTS` from
//!   that slot completed. Every such step is therefore submitted by the
//!   proxy ([`FedLane`]): a step whose predecessor is a remote rank already
//!   is (its landing); a lane whose predecessor is a local rank is
//!   *relayed*: the predecessor's DMA writes the step index into the
//!   lane's *relay word* instead of ringing the doorbell, and the proxy
//!   rings it. So a slow receiver stalls its sender's device instead of
//!   growing a queue anywhere.
//!
//! Pure: no device. The proxy area's layout is given as extra scratch
//! chunks of each local rank (indices `ranks..`), so `compose` needs no
//! new encoding.

use super::plan::{Buf, Loc, PASS_ELEMENTS, Plan, Signal, Step, Transfer};
use std::collections::{BTreeMap, BTreeSet};

/// Bytes of a post word and of each index word.
pub const WORD_BYTES: u64 = 8;

/// Message slots per connection and side (see the module doc): double
/// buffering, so a device fills one while the proxy sends the other; a
/// ring of up to three ranks never waits for a credit (a rank runs at
/// most `ranks - 1` steps ahead of its successor), a longer one paces
/// each sender to its receiver.
pub const SLOTS: u64 = 2;

/// The pass (elements per chunk, see [`super::plan::plan_passes`]) of a
/// group that spans processes: chunks of `chunk_bytes`
/// (`NEURON_RT_CC_CHUNK_SIZE`) of `esize`-byte elements, so a message (a
/// lane's half) is at most half of it and a connection's slots take at
/// most `SLOTS x chunk_bytes / 2` bytes on each side.
pub fn net_pass(chunk_bytes: u64, esize: u64) -> u64 {
    (chunk_bytes / esize.max(1)).clamp(2, PASS_ELEMENTS)
}

/// A connection: (source rank, destination rank, source lane), group
/// indices.
pub type Conn = (usize, usize, usize);

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
    /// Its number on the connection (it needs a credit from `SLOTS` on).
    pub index: u64,
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

/// The messages of a connection into a local rank, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InLink {
    /// The messages (message `m` is `msgs[m]`).
    pub msgs: Vec<InMsg>,
    /// Offset of the connection's free word in the receiver's proxy area
    /// (the landings write `m + 1` there), when it has more messages than
    /// [`SLOTS`] (else no slot is reused and no credit flows).
    pub free_word: Option<u64>,
}

/// A step the proxy submits, and what it waits for besides the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FedStep {
    /// Step index in the lane.
    pub step: usize,
    /// It lands a message: rung once the message arrived.
    pub landing: bool,
    /// It is relayed: rung once the lane's relay word reached `step`.
    pub relay: bool,
    /// Messages it writes into outbox slots that earlier messages used:
    /// (destination rank, message number `m >= SLOTS`); rung once the
    /// send of message `m - SLOTS` of that connection completed.
    pub outbox: Vec<(usize, u64)>,
}

/// A local lane whose steps (but the host's) the proxy submits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FedLane {
    /// Offset of the lane's relay word in the rank's proxy area, when its
    /// predecessor is a local rank.
    pub relay_word: Option<u64>,
    /// The steps, in step order.
    pub steps: Vec<FedStep>,
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
    /// connection (local destinations only).
    pub inbound: BTreeMap<Conn, InLink>,
    /// `(dst rank, src rank, src lane)` of every connection a local rank
    /// sends on.
    pub outbound: Vec<(usize, usize, usize)>,
    /// `(rank, lane)` -> the steps of that local lane the proxy submits.
    pub fed: BTreeMap<(usize, usize), FedLane>,
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
    /// Post, relay and free words to zero before each operation.
    pub reset_words: Vec<u64>,
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
type PendingIn = (Conn, usize, usize, usize);

#[derive(Default)]
struct Landing {
    transfers: Vec<Transfer>,
    then: Vec<Signal>,
}

/// The remote ranks step `s` of rank `r` talks to, in first-mention order.
fn peers(s: &Step, r: usize, cross: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let targets = s.transfers.iter().map(|t| t.dst.rank).chain(s.then.iter().map(|sig| match *sig {
        Signal::Submit { rank, .. } | Signal::Done { rank } => rank,
    }));
    for q in targets {
        if cross(r, q) && !out.contains(&q) {
            out.push(q);
        }
    }
    out
}

/// The transfers of step `s` of rank `r` that cross into rank `q` (one
/// message), and their offsets in the message (each 64-byte aligned).
fn message(s: &Step, r: usize, q: usize, esize: u64) -> (Vec<(&Transfer, u64)>, u64) {
    let mut at = 0;
    let mut end = 0;
    let mut out = Vec::new();
    for t in s.transfers.iter().filter(|t| t.dst.rank == q && t.src.rank == r) {
        out.push((t, at));
        end = at + t.len * esize;
        at = end.next_multiple_of(64);
    }
    (out, end)
}

/// Splits `plan` for the process holding the ranks with `local[r]` set.
/// `esize` is the element size (1, 2, 4 or 8 bytes).
pub fn split(plan: &Plan, local: &[bool], esize: u64) -> Result<Split, String> {
    let n = plan.ranks;
    if local.len() != n || !(1..=WORD_BYTES).contains(&esize) || !WORD_BYTES.is_multiple_of(esize) {
        return Err(format!("cannot split a plan of {n} ranks for {} flags and {esize}-byte elements", local.len()));
    }
    let cross = |a: usize, b: usize| local[a] != local[b];
    // Every connection's messages: how many, and the largest.
    let mut sizes: BTreeMap<Conn, (u64, u64)> = BTreeMap::new();
    for r in 0..n {
        for (l, steps) in plan.lanes[r].iter().enumerate() {
            for (k, s) in steps.iter().enumerate() {
                for t in &s.transfers {
                    if t.src.rank != r && t.src.rank != t.dst.rank {
                        return Err(format!("step {k} of lane {l} of rank {r} reads rank {}'s buffer for rank {}", t.src.rank, t.dst.rank));
                    }
                }
                for q in peers(s, r, cross) {
                    let e = sizes.entry((r, q, l)).or_default();
                    e.0 += 1;
                    e.1 = e.1.max(message(s, r, q, esize).1);
                }
            }
        }
    }
    let slots_of = |c: &Conn| sizes[c].0.min(SLOTS);
    let credited = |c: &Conn| sizes[c].0 > SLOTS;
    // The index words hold 1..=K: post indices and relayed steps (at most
    // a lane's length with its appended landings) and landed counts.
    let longest = plan.lanes.iter().flatten().map(Vec::len).max().unwrap_or(0) as u64;
    let words = longest + n as u64 + sizes.values().map(|v| v.0).max().unwrap_or(0);
    let mut areas: Vec<AreaBuilder> = (0..n).map(|_| AreaBuilder { first: n, chunks: Vec::new(), at: 0 }).collect();
    let mut out_areas: Vec<Area> = vec![Area::default(); n];
    // The index words first (chunk n: word i at byte 8(i - 1)), then per
    // lane a post and a relay word, then per connection its free word and
    // slots.
    let mut post_chunk: BTreeMap<(usize, usize), (usize, u64)> = BTreeMap::new();
    let mut relay_chunk: BTreeMap<(usize, usize), (usize, u64)> = BTreeMap::new();
    let mut free_chunk: BTreeMap<Conn, (usize, u64)> = BTreeMap::new();
    let mut slot_chunk: BTreeMap<(Conn, u64), (usize, u64)> = BTreeMap::new();
    for r in (0..n).filter(|&r| local[r]) {
        let a = &mut areas[r];
        let (_, at) = a.slot(words * WORD_BYTES);
        out_areas[r].words.extend((0..words).map(|i| (at + i * WORD_BYTES, i + 1)));
        for l in 0..plan.lanes[r].len() {
            for map in [&mut post_chunk, &mut relay_chunk] {
                let at = a.slot(WORD_BYTES);
                out_areas[r].reset_words.push(at.1);
                map.insert((r, l), at);
            }
        }
        for (&c, &(_, largest)) in sizes.iter().filter(|(c, _)| c.0 == r || c.1 == r) {
            if c.1 == r && credited(&c) {
                let at = a.slot(WORD_BYTES);
                out_areas[r].reset_words.push(at.1);
                free_chunk.insert(c, at);
            }
            for m in 0..slots_of(&c) {
                slot_chunk.insert((c, m), a.slot(largest));
            }
        }
    }
    let word_move = |from: usize, i: u64, to: Loc| Transfer { src: Loc { rank: from, buf: Buf::Scratch, chunk: n, offset: (i - 1) * WORD_BYTES / esize }, dst: to, len: WORD_BYTES / esize, reduce: false };
    let scratch = |rank: usize, (chunk, _): (usize, u64), offset: u64| Loc { rank, buf: Buf::Scratch, chunk, offset: offset / esize };
    let mut sender: BTreeMap<(usize, usize, usize), Step> = BTreeMap::new();
    let mut prepend: BTreeMap<(usize, usize, usize), Landing> = BTreeMap::new();
    let mut appended: BTreeMap<(usize, usize), Vec<Landing>> = BTreeMap::new();
    let mut posts: BTreeMap<(usize, usize), PostLane> = BTreeMap::new();
    let mut inbound: BTreeMap<Conn, InLink> = BTreeMap::new();
    let mut outbound: Vec<(usize, usize, usize)> = Vec::new();
    // Per local (rank, lane, step): the messages it writes into outboxes.
    let mut writes: BTreeMap<(usize, usize, usize), Vec<(usize, u64)>> = BTreeMap::new();
    let mut sent: BTreeMap<Conn, u64> = BTreeMap::new();
    let mut pending_in: Vec<PendingIn> = Vec::new();
    for r in 0..n {
        for (l, steps) in plan.lanes[r].iter().enumerate() {
            for (k, s) in steps.iter().enumerate() {
                let peers = peers(s, r, cross);
                if local[r] {
                    let mut st = Step::default();
                    let mut msgs = Vec::new();
                    for &q in &peers {
                        let c = (r, q, l);
                        let m = *sent.entry(c).and_modify(|m| *m += 1).or_insert(0);
                        let slot = slot_chunk[&(c, m % SLOTS)];
                        let (parts, bytes) = message(s, r, q, esize);
                        for (t, off) in parts {
                            st.transfers.push(Transfer { src: t.src, dst: scratch(r, slot, off), len: t.len, reduce: false });
                        }
                        msgs.push(OutMsg { dst: q, offset: slot.1, bytes, index: m });
                        writes.entry((r, l, k)).or_default().push((q, m));
                        if !outbound.contains(&(q, r, l)) {
                            outbound.push((q, r, l));
                        }
                    }
                    for t in s.transfers.iter().filter(|t| !cross(r, t.dst.rank)) {
                        st.transfers.push(*t);
                    }
                    if !msgs.is_empty() {
                        let pl = posts.entry((r, l)).or_insert_with(|| PostLane { word: post_chunk[&(r, l)].1, posts: Vec::new() });
                        pl.posts.push(msgs);
                        st.transfers.push(word_move(r, pl.posts.len() as u64, scratch(r, post_chunk[&(r, l)], 0)));
                    }
                    st.then = s.then.iter().copied().filter(|sig| match *sig {
                        Signal::Submit { rank, .. } | Signal::Done { rank } => !cross(r, rank),
                    }).collect();
                    sender.insert((r, l, k), st);
                } else {
                    for &q in peers.iter().filter(|&&q| local[q]) {
                        let c = (r, q, l);
                        let link = inbound.entry(c).or_default();
                        let m = link.msgs.len() as u64;
                        let slot = slot_chunk[&(c, m % SLOTS)];
                        let mut land = Landing::default();
                        let (parts, bytes) = message(s, r, q, esize);
                        let mut parts = parts.into_iter();
                        for t in s.transfers.iter().filter(|t| t.dst.rank == q) {
                            if t.src.rank == q {
                                land.transfers.push(*t);
                            } else {
                                let (_, off) = parts.next().expect("the message's transfers");
                                land.transfers.push(Transfer { src: scratch(q, slot, off), dst: t.dst, len: t.len, reduce: t.reduce });
                            }
                        }
                        if let Some(&free) = free_chunk.get(&c) {
                            link.free_word = Some(free.1);
                            land.transfers.push(word_move(q, m + 1, scratch(q, free, 0)));
                        }
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
                        match submit {
                            Some((lane, step)) => {
                                link.msgs.push(InMsg { offset: slot.1, bytes, lane, step });
                                if prepend.insert((q, lane, step), land).is_some() {
                                    return Err(format!("step {step} of lane {lane} of rank {q} is submitted twice"));
                                }
                            }
                            None => {
                                let lane = if l < plan.lanes[q].len() { l } else { 0 };
                                let list = appended.entry((q, lane)).or_default();
                                let idx = list.len();
                                list.push(land);
                                link.msgs.push(InMsg { offset: slot.1, bytes, lane, step: usize::MAX });
                                pending_in.push((c, link.msgs.len() - 1, lane, idx));
                            }
                        }
                    }
                }
            }
        }
    }
    // Assemble the local lanes; the landings' steps are the proxy's.
    let mut fed: BTreeMap<(usize, usize), FedLane> = BTreeMap::new();
    let mut lanes: Vec<Vec<Vec<Step>>> = vec![Vec::new(); n];
    for r in (0..n).filter(|&r| local[r]) {
        for l in 0..plan.lanes[r].len() {
            let mut steps = Vec::new();
            for k in 0..plan.lanes[r][l].len() {
                let mut st = Step::default();
                if let Some(p) = prepend.remove(&(r, l, k)) {
                    st.transfers.extend(p.transfers);
                    st.then.extend(p.then);
                    fed.entry((r, l)).or_default().steps.push(FedStep { step: k, landing: true, relay: false, outbox: Vec::new() });
                }
                let own = sender.remove(&(r, l, k)).unwrap_or_default();
                st.transfers.extend(own.transfers);
                st.then.extend(own.then);
                steps.push(st);
            }
            for land in appended.remove(&(r, l)).unwrap_or_default() {
                fed.entry((r, l)).or_default().steps.push(FedStep { step: steps.len(), landing: true, relay: false, outbox: Vec::new() });
                steps.push(Step { transfers: land.transfers, then: land.then });
            }
            lanes[r].push(steps);
        }
    }
    if let Some(((q, l, k), _)) = prepend.into_iter().next() {
        return Err(format!("a remote step submits step {k} of lane {l} of rank {q}, which does not exist"));
    }
    for (c, at, lane, idx) in pending_in {
        let q = c.1;
        inbound.get_mut(&c).expect("recorded").msgs[at].step = plan.lanes[q][lane].len() + idx;
    }
    // A step that reuses an outbox slot waits for the slot's last send:
    // the proxy submits it. Its lane's local predecessor then relays.
    let reuses = |key: &(usize, usize, usize)| writes.get(key).is_some_and(|w| w.iter().any(|&(_, m)| m >= SLOTS));
    let mut relayed: BTreeSet<(usize, usize)> = BTreeSet::new();
    for s in lanes.iter().flatten().flatten() {
        for sig in &s.then {
            if let Signal::Submit { rank, lane, step } = *sig
                && reuses(&(rank, lane, step))
            {
                relayed.insert((rank, lane));
            }
        }
    }
    for (r, rank_lanes) in lanes.iter_mut().enumerate() {
        for steps in rank_lanes.iter_mut() {
            for s in steps.iter_mut() {
                let mut keep = Vec::with_capacity(s.then.len());
                for sig in s.then.drain(..) {
                    match sig {
                        Signal::Submit { rank, lane, step } if relayed.contains(&(rank, lane)) => {
                            s.transfers.push(word_move(r, step as u64, scratch(rank, relay_chunk[&(rank, lane)], 0)));
                            fed.entry((rank, lane)).or_default().steps.push(FedStep { step, landing: false, relay: true, outbox: Vec::new() });
                        }
                        _ => keep.push(sig),
                    }
                }
                s.then = keep;
            }
        }
    }
    for (&(r, l), f) in fed.iter_mut() {
        if relayed.contains(&(r, l)) {
            f.relay_word = Some(relay_chunk[&(r, l)].1);
        }
        f.steps.sort_by_key(|s| s.step);
        if let Some(w) = f.steps.windows(2).find(|w| w[0].step == w[1].step) {
            return Err(format!("step {} of lane {l} of rank {r} would be fed by both a landing and a local DMA queue", w[0].step));
        }
        for s in f.steps.iter_mut() {
            s.outbox = writes.get(&(r, l, s.step)).map(|w| w.iter().copied().filter(|&(_, m)| m >= SLOTS).collect()).unwrap_or_default();
        }
    }
    // Every lane is fed by one kind of source: the host (step 0), then
    // either local DMA signals or the proxy, never both (the queue's tail
    // increments must come in step order); and only the proxy rings a
    // step that reuses an outbox slot.
    for s in lanes.iter().flatten().flatten() {
        for sig in &s.then {
            if let Signal::Submit { rank, lane, .. } = *sig
                && fed.contains_key(&(rank, lane))
            {
                return Err(format!("lane {lane} of rank {rank} would be fed by both the proxy and a local DMA queue"));
            }
        }
    }
    for (&(r, l, k), _) in writes.iter().filter(|(key, _)| reuses(key)) {
        if !fed.get(&(r, l)).is_some_and(|f| f.steps.iter().any(|s| s.step == k)) {
            return Err(format!("step {k} of lane {l} of rank {r} reuses an outbox slot but the proxy does not submit it"));
        }
    }
    let host_submits = plan.host_submits.iter().copied().filter(|&(r, _, _)| local[r]).collect();
    let split_plan = Plan { ranks: n, lanes, host_submits };
    for r in (0..n).filter(|&r| local[r]) {
        debug_assert_eq!(split_plan.expected_done(r), plan.expected_done(r), "rank {r} keeps its done count");
        out_areas[r].chunks = std::mem::take(&mut areas[r].chunks);
        out_areas[r].bytes = areas[r].at.max(64);
    }
    Ok(Split { plan: split_plan, areas: out_areas, posts, inbound, outbound, fed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::plan::{CcKind, plan};

    /// A connection's slots are sized by the pass, not by the operation:
    /// sixteen times the bytes add only the index words of the extra
    /// steps (8 bytes each), and the slots are reused from the third
    /// message on.
    #[test]
    fn the_proxy_area_does_not_grow_with_the_operation() {
        use crate::cc::plan::plan_passes;
        let area = |count: u64| {
            let p = plan_passes(&CcKind::AllReduce, 2, count, &[false; 2], 1024);
            let s = split(&p, &[true, false], 4).unwrap();
            let steps = s.plan.lanes[0].iter().map(Vec::len).sum::<usize>() as u64;
            (s.areas[0].bytes, steps, s)
        };
        let (small, small_steps, s) = area(64 * 1024);
        let (big, big_steps, _) = area(16 * 64 * 1024);
        assert!(big <= small + (big_steps - small_steps) * 3 * WORD_BYTES, "{small} -> {big} bytes");
        // 2 lanes x (2 outbox + 2 inbox slots) of 2 KiB messages, plus words.
        assert!(small < 2 * 4 * 2048 + 4096, "{small}");
        let link = &s.inbound[&(1, 0, 0)];
        assert!(link.free_word.is_some() && link.msgs.len() as u64 > SLOTS);
        assert_eq!(link.msgs[0].offset, link.msgs[SLOTS as usize].offset, "message SLOTS reuses slot 0");
        assert!(s.fed[&(0, 0)].steps.iter().any(|f| !f.outbox.is_empty()), "steps that refill a slot are the proxy's");
    }

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
                let recv: BTreeMap<(usize, usize, usize), Vec<u64>> = s_recv.inbound.iter().map(|(k, v)| (*k, v.msgs.iter().map(|m| m.bytes).collect())).collect();
                assert_eq!(sent, recv, "{kind} n={n}");
            }
            for (r, &in_a) in a.iter().enumerate() {
                let s = if in_a { &sa } else { &sb };
                assert_eq!(s.plan.expected_done(r), p.expected_done(r));
            }
        }
    }
}
