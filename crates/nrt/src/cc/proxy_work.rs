//! What a network proxy does for one operation, in device addresses and
//! global ranks: the lanes whose posts it sends, the connections it sends
//! and receives on (data and credits), and the steps it submits on the
//! local ranks' queues with what each waits for. Built from a
//! [`Split`] for the local ranks of a standalone collective
//! ([`super::remote`]) or for one rank's in-NEFF collective
//! ([`super::neff_net`]), where a NEFF's collectives are chained into one
//! [`Work`] per execution ([`Work::then`]).

use super::compose::RankImage;
use super::net::{Link, credit_link, data_conn};
use super::split::{SLOTS, Split};
use nrt_hal::{CoreId, DmaQueueId};

/// A message the device posts on a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutPost {
    /// Destination global rank.
    pub dst: u32,
    /// Outbox address.
    pub addr: u64,
    /// Bytes.
    pub bytes: u64,
    /// Credits counted on the connection (over the whole work) before it
    /// may be sent; 0: it needs none (one of the first [`SLOTS`]).
    pub credit: u64,
}

/// A local lane that posts messages.
#[derive(Clone, Debug)]
pub struct SendLane {
    /// Its rank (global id), for messages.
    pub gid: u32,
    /// The connection index of its lane ([`super::net::data_conn`]: the
    /// lane of its ring channel).
    pub lane: usize,
    /// The ordinal of its collective in the job (see `Job::gate`): its
    /// posts are read once every earlier collective's are queued, so a
    /// connection carries the collectives in order.
    pub op: u32,
    /// Address of the post word.
    pub post_word: u64,
    /// Per post, its messages.
    pub posts: Vec<Vec<OutPost>>,
}

/// A message this process receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPost {
    /// Inbox address (unused for a credit).
    pub addr: u64,
    /// Bytes.
    pub bytes: u64,
    /// Index of the submit lane whose step lands it, and of the step there.
    pub lane: usize,
    /// See `lane`.
    pub step: usize,
    /// Its inbox slot is free once the word at `.0` reached `.1` (the
    /// earlier message of the slot landed): only then is its receive
    /// posted, and a credit sent back to the sender.
    pub free: Option<(u64, u64)>,
}

/// A connection this process receives on: data (its messages land in
/// inboxes) or, on a credit channel ([`super::net::data_link`]), the
/// credits of a data connection this process sends on.
#[derive(Clone, Debug)]
pub struct RecvLink {
    /// (source, destination, lane or credit channel) in global ranks.
    pub link: Link,
    /// The messages, in order.
    pub msgs: Vec<InPost>,
}

/// A step the proxy submits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitStep {
    /// Descriptor pairs the doorbell adds.
    pub pairs: u32,
    /// It lands a message: rung once the message arrived.
    pub landing: bool,
    /// It is relayed: rung once the lane's relay word reached this value.
    pub relay: Option<u64>,
    /// It writes outbox slots: rung once this many data messages (over
    /// the whole work) completed on each of these connections.
    pub outbox: Vec<(Link, u64)>,
}

/// A local queue whose steps the proxy submits, in order.
#[derive(Clone, Debug)]
pub struct SubmitLane {
    /// Its core.
    pub core: CoreId,
    /// Its queue.
    pub queue: DmaQueueId,
    /// The ordinal of its collective in the job: rung once the gate
    /// reached it.
    pub op: u32,
    /// The relay word, when a local rank's DMA relays its steps.
    pub relay_word: Option<u64>,
    /// The steps, in step order.
    pub steps: Vec<SubmitStep>,
}

/// One operation's proxy work.
#[derive(Clone, Debug, Default)]
pub struct Work {
    /// Lanes whose posts are sent.
    pub sends: Vec<SendLane>,
    /// Connections sent on (data, then credits back).
    pub out_links: Vec<Link>,
    /// Connections received on.
    pub recvs: Vec<RecvLink>,
    /// Queues fed.
    pub submits: Vec<SubmitLane>,
    /// Device words (post, relay, free) to zero before the operation.
    pub reset_words: Vec<u64>,
}

/// Where a local rank's pieces are: its proxy area, image, core.
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

/// A credit message's length (a credit link's receives are staged).
pub const CREDIT_LEN: u64 = 16;

impl Work {
    /// The proxy work of the local ranks `places` of `group` in split
    /// `sp`, the `op`-th collective of its job, on ring channel `channel`
    /// (the physical core of the logical core it runs on: each channel's
    /// lanes have connections of their own).
    pub fn of_split(sp: &Split, group: &[u32], places: &[RankPlace<'_>], op: u32, channel: usize) -> Work {
        let conn = |l: usize| data_conn(channel, l);
        let mut w = Work::default();
        for at in places {
            let me = at.me;
            let mut where_of = std::collections::BTreeMap::new();
            for (&(_, l), f) in sp.fed.range((me, 0)..(me + 1, 0)) {
                let k = w.submits.len();
                for (i, s) in f.steps.iter().enumerate() {
                    where_of.insert((l, s.step), (k, i));
                }
                let steps = f
                    .steps
                    .iter()
                    .map(|s| SubmitStep {
                        pairs: at.image.lanes[l].step_pairs[s.step],
                        landing: s.landing,
                        relay: s.relay.then_some(s.step as u64),
                        outbox: s.outbox.iter().map(|&(q, m)| ((group[me], group[q], conn(l)), m + 1 - SLOTS)).collect(),
                    })
                    .collect();
                w.submits.push(SubmitLane { core: at.core, queue: at.queues[l], op, relay_word: f.relay_word.map(|o| at.area + o), steps });
            }
            for (&(r, q, l), link) in sp.inbound.iter().filter(|(c, _)| c.1 == me) {
                let data = (group[r], group[q], conn(l));
                let msgs = link
                    .msgs
                    .iter()
                    .enumerate()
                    .map(|(m, x)| {
                        let (lane, step) = where_of[&(x.lane, x.step)];
                        let free = link.free_word.filter(|_| m as u64 >= SLOTS).map(|f| (at.area + f, m as u64 + 1 - SLOTS));
                        InPost { addr: at.area + x.offset, bytes: x.bytes, lane, step, free }
                    })
                    .collect();
                if link.free_word.is_some() {
                    w.out_links.push(credit_link(data));
                }
                w.recvs.push(RecvLink { link: data, msgs });
            }
            for (&(r, l), pl) in sp.posts.range((me, 0)..(me + 1, 0)) {
                let posts = pl.posts.iter().map(|msgs| msgs.iter().map(|m| OutPost { dst: group[m.dst], addr: at.area + m.offset, bytes: m.bytes, credit: (m.index + 1).saturating_sub(SLOTS) }).collect()).collect();
                w.sends.push(SendLane { gid: group[r], lane: conn(l), op, post_word: at.area + pl.word, posts });
            }
            for &(q, r, l) in sp.outbound.iter().filter(|o| o.1 == me) {
                let data = (group[r], group[q], conn(l));
                w.out_links.push(data);
                let total = sp.posts.get(&(r, l)).map_or(0, |pl| pl.posts.iter().flatten().filter(|m| m.dst == q).count() as u64);
                if total > SLOTS {
                    let credit = InPost { addr: 0, bytes: CREDIT_LEN, lane: usize::MAX, step: usize::MAX, free: None };
                    w.recvs.push(RecvLink { link: credit_link(data), msgs: vec![credit; (total - SLOTS) as usize] });
                }
            }
            w.reset_words.extend(sp.areas[me].reset_words.iter().map(|o| at.area + o));
        }
        w
    }

    /// Data messages this work sends on `link`.
    fn sent_on(&self, link: Link) -> u64 {
        self.sends.iter().filter(|s| (s.gid, s.lane) == (link.0, link.2)).flat_map(|s| s.posts.iter().flatten()).filter(|p| p.dst == link.1).count() as u64
    }

    /// Credits this work receives for data connection `link`.
    fn credits_on(&self, link: Link) -> u64 {
        self.recvs.iter().find(|r| r.link == credit_link(link)).map_or(0, |r| r.msgs.len() as u64)
    }

    /// Appends `next`, the following collective of a chain: its counts on
    /// connections this work already uses continue this work's (messages
    /// of a connection go in program order), its landings name its submit
    /// lanes after this work's.
    pub fn then(&mut self, mut next: Work) {
        for s in next.sends.iter_mut() {
            for p in s.posts.iter_mut().flatten() {
                if p.credit > 0 {
                    p.credit += self.credits_on((s.gid, p.dst, s.lane));
                }
            }
        }
        for s in next.submits.iter_mut() {
            for st in s.steps.iter_mut() {
                for (link, need) in st.outbox.iter_mut() {
                    *need += self.sent_on(*link);
                }
            }
        }
        let base = self.submits.len();
        for r in next.recvs {
            let msgs = r.msgs.into_iter().map(|m| if m.lane == usize::MAX { m } else { InPost { lane: base + m.lane, ..m } });
            match self.recvs.iter_mut().find(|x| x.link == r.link) {
                Some(x) => x.msgs.extend(msgs),
                None => self.recvs.push(RecvLink { link: r.link, msgs: msgs.collect() }),
            }
        }
        self.submits.extend(next.submits);
        self.sends.extend(next.sends);
        for l in next.out_links {
            if !self.out_links.contains(&l) {
                self.out_links.push(l);
            }
        }
        self.reset_words.extend(next.reset_words);
    }

    /// The connections only (the load-time meeting: a header on each).
    pub fn links_only(&self) -> Work {
        Work { out_links: self.out_links.clone(), recvs: self.recvs.iter().map(|r| RecvLink { link: r.link, msgs: Vec::new() }).collect(), ..Work::default() }
    }
}

#[cfg(test)]
mod tests {
    //! The protocol as a model: two processes' splits of one plan, each
    //! with its [`Work`], run over host memory by a device that walks
    //! whatever was submitted, proxies that act only on what the work
    //! says (posts, credits, free and relay words, outbox completions)
    //! and a network that delivers each connection's messages in order,
    //! reading the sender's outbox only at delivery (the latest a NIC
    //! reads it), all interleaved at random. A slot reused too early, a
    //! missing relay or credit, shows as a wrong result or a deadlock.
    use super::*;
    use crate::cc::compose::LaneImage;
    use crate::cc::net::data_link;
    use crate::cc::plan::tests::reference;
    use crate::cc::plan::{Buf, CcKind, Loc, plan_passes};
    use crate::cc::split::split;
    use std::collections::{BTreeMap, VecDeque};

    const E: u64 = 8;

    fn base(r: usize) -> u64 {
        (r as u64 + 1) << 32
    }

    fn unbase(addr: u64) -> (usize, usize) {
        ((addr >> 32) as usize - 1, ((addr & 0xffff_ffff) / E) as usize)
    }

    struct Mem {
        bufs: [Vec<i64>; 4],
    }

    struct Model<'a> {
        kind: &'a CcKind,
        n: usize,
        count: u64,
        mem: Vec<Mem>,
        chunks: Vec<Vec<u64>>,
    }

    impl Model<'_> {
        fn at(&self, l: &Loc) -> (usize, usize) {
            let per = self.count.div_ceil(self.n as u64);
            let chunk_base = |buf: Buf, c: usize| -> u64 {
                match (self.kind, buf) {
                    (CcKind::AllReduce, Buf::In | Buf::Out) => c as u64 * per,
                    (CcKind::AllGather, Buf::In) | (CcKind::ReduceScatter, Buf::Out) | (CcKind::Permute(_), _) => 0,
                    _ => c as u64 * self.count,
                }
            };
            match l.buf {
                Buf::In => (0, (chunk_base(Buf::In, l.chunk) + l.offset) as usize),
                Buf::Out => (1, (chunk_base(Buf::Out, l.chunk) + l.offset) as usize),
                Buf::Scratch if l.chunk < self.n => (2, (l.chunk as u64 * self.count + l.offset) as usize),
                Buf::Scratch => (3, (self.chunks[l.rank][l.chunk - self.n] / E + l.offset) as usize),
            }
        }
    }

    #[derive(Default)]
    struct ProxyState {
        posted: Vec<usize>,
        submitted: Vec<usize>,
        landed: Vec<Vec<bool>>,
        /// Per out link: queued messages (addr, bytes, credit), credits,
        /// completed data sends.
        queued: BTreeMap<Link, VecDeque<(u64, u64, u64)>>,
        credits: BTreeMap<Link, u64>,
        completed: BTreeMap<Link, u64>,
        /// Per in link: receives posted, messages delivered.
        next_post: BTreeMap<Link, usize>,
        delivered: BTreeMap<Link, usize>,
    }

    /// Runs `kind` over `n` ranks of `count` elements, passes of `pass`,
    /// the ranks with `local[r]` in one process and the others in another,
    /// on ring channel `channel`, interleaving every enabled action by
    /// `seed`. Returns the outputs and how often a sender waited for a
    /// credit or a slot.
    fn run(kind: &CcKind, n: usize, count: u64, pass: u64, local: &[bool], seed: u64, channel: usize) -> (Vec<Vec<i64>>, u64) {
        let p = plan_passes(kind, n, count, &vec![false; n], pass);
        let other: Vec<bool> = local.iter().map(|l| !l).collect();
        let splits = [split(&p, local, E).unwrap(), split(&p, &other, E).unwrap()];
        let here = |r: usize| usize::from(!local[r]);
        let (isz, osz) = kind.sizes(n, count);
        let mut m = Model { kind, n, count, mem: Vec::new(), chunks: vec![Vec::new(); n] };
        for r in 0..n {
            let area = &splits[here(r)].areas[r];
            let mut a = vec![0i64; (area.bytes / E) as usize];
            for &(off, v) in &area.words {
                a[(off / E) as usize] = v as i64;
            }
            m.chunks[r] = area.chunks.clone();
            m.mem.push(Mem { bufs: [(0..isz as i64).map(|i| i * 7 + r as i64 * 1000 + 1).collect(), vec![-999; osz as usize], vec![-777; isz as usize], a] });
        }
        let images: Vec<RankImage> = (0..n)
            .map(|r| RankImage { lanes: splits[here(r)].plan.lanes[r].iter().map(|l| LaneImage { step_pairs: vec![1; l.len()], ..Default::default() }).collect(), ..Default::default() })
            .collect();
        let queues: Vec<DmaQueueId> = (0..4).map(|q| DmaQueueId { engine: 0, queue: q }).collect();
        let group: Vec<u32> = (0..n as u32).collect();
        let works: Vec<Work> = (0..2)
            .map(|pi| {
                let places: Vec<RankPlace<'_>> = (0..n).filter(|&r| here(r) == pi).map(|r| RankPlace { me: r, area: base(r), image: &images[r], core: CoreId(r as u32), queues: &queues }).collect();
                Work::of_split(&splits[pi], &group, &places, 0, channel)
            })
            .collect();
        for w in &works {
            let links = w.out_links.iter().chain(w.recvs.iter().map(|r| &r.link));
            for l in links.chain(w.submits.iter().flat_map(|s| s.steps.iter().flat_map(|st| st.outbox.iter().map(|o| &o.0)))) {
                assert_eq!((l.2 % crate::cc::net::DATA_CONNS) / crate::cc::net::LANES, channel, "{l:?} is a connection of channel {channel}");
            }
        }
        let mut ps: Vec<ProxyState> = works.iter().map(|w| ProxyState { posted: vec![0; w.sends.len()], submitted: vec![0; w.submits.len()], landed: w.submits.iter().map(|s| s.steps.iter().map(|st| !st.landing).collect()).collect(), ..Default::default() }).collect();
        // The device: per rank and lane, steps submitted and run.
        let lanes = |r: usize| &splits[here(r)].plan.lanes[r];
        let mut submitted: Vec<Vec<usize>> = (0..n).map(|r| vec![0; lanes(r).len()]).collect();
        let mut ran: Vec<Vec<usize>> = submitted.clone();
        for (pi, sp) in splits.iter().enumerate() {
            for &(r, l, s) in &sp.plan.host_submits {
                assert_eq!(here(r), pi);
                assert_eq!(submitted[r][l], s);
                submitted[r][l] += 1;
            }
        }
        let mut net: BTreeMap<Link, VecDeque<(u64, u64)>> = BTreeMap::new();
        let mut credits_net: BTreeMap<Link, u64> = BTreeMap::new();
        let word = |m: &Model, addr: u64| {
            let (r, i) = unbase(addr);
            m.mem[r].bufs[3][i] as u64
        };
        let mut held = 0u64;
        let mut rng = seed | 1;
        let mut pick = move |k: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % k as u64) as usize
        };
        #[derive(Clone, Copy, Debug)]
        enum Act {
            Step(usize, usize),
            Post(usize, usize),
            Send(usize, Link),
            Receive(usize, Link),
            Deliver(Link),
            Credit(Link),
            Ring(usize, usize),
        }
        loop {
            let mut acts = Vec::new();
            for r in 0..n {
                for l in 0..submitted[r].len() {
                    if ran[r][l] < submitted[r][l] {
                        acts.push(Act::Step(r, l));
                    }
                }
            }
            for (pi, w) in works.iter().enumerate() {
                let st = &ps[pi];
                for (k, s) in w.sends.iter().enumerate() {
                    if st.posted[k] < s.posts.len() && word(&m, s.post_word) as usize > st.posted[k] {
                        acts.push(Act::Post(pi, k));
                    }
                }
                for (&link, q) in &st.queued {
                    if q.front().is_some_and(|f| f.2 <= st.credits.get(&link).copied().unwrap_or(0)) {
                        acts.push(Act::Send(pi, link));
                    } else if !q.is_empty() {
                        held += 1;
                    }
                }
                for rl in w.recvs.iter().filter(|r| data_link(r.link).is_none()) {
                    let i = st.next_post.get(&rl.link).copied().unwrap_or(0);
                    if rl.msgs.get(i).is_some_and(|x| x.free.is_none_or(|(a, v)| word(&m, a) >= v)) {
                        acts.push(Act::Receive(pi, rl.link));
                    }
                }
                for (k, s) in w.submits.iter().enumerate() {
                    let Some(x) = s.steps.get(st.submitted[k]) else { continue };
                    let relay_ok = x.relay.is_none_or(|v| word(&m, s.relay_word.unwrap()) >= v);
                    let outbox_ok = x.outbox.iter().all(|&(link, need)| st.completed.get(&link).copied().unwrap_or(0) >= need);
                    if st.landed[k][st.submitted[k]] && relay_ok && outbox_ok {
                        acts.push(Act::Ring(pi, k));
                    }
                }
            }
            for (&link, q) in &net {
                let rx = here(link.1 as usize);
                if !q.is_empty() && ps[rx].next_post.get(&link).copied().unwrap_or(0) > ps[rx].delivered.get(&link).copied().unwrap_or(0) {
                    acts.push(Act::Deliver(link));
                }
            }
            for (&link, &c) in &credits_net {
                if c > 0 {
                    acts.push(Act::Credit(link));
                }
            }
            if acts.is_empty() {
                break;
            }
            match acts[pick(acts.len())] {
                Act::Step(r, l) => {
                    let step = lanes(r)[l][ran[r][l]].clone();
                    ran[r][l] += 1;
                    for t in &step.transfers {
                        let ((sb, si), (db, di)) = (m.at(&t.src), m.at(&t.dst));
                        let src: Vec<i64> = m.mem[t.src.rank].bufs[sb][si..si + t.len as usize].to_vec();
                        for (d, s) in m.mem[t.dst.rank].bufs[db][di..di + t.len as usize].iter_mut().zip(src) {
                            *d = if t.reduce { d.wrapping_add(s) } else { s };
                        }
                    }
                    for sig in &step.then {
                        if let crate::cc::plan::Signal::Submit { rank, lane, step } = *sig {
                            assert_eq!(submitted[rank][lane], step, "a local signal submits in order");
                            submitted[rank][lane] += 1;
                        }
                    }
                }
                Act::Post(pi, k) => {
                    let s = &works[pi].sends[k];
                    for post in &s.posts[ps[pi].posted[k]] {
                        ps[pi].queued.entry((s.gid, post.dst, s.lane)).or_default().push_back((post.addr, post.bytes, post.credit));
                    }
                    ps[pi].posted[k] += 1;
                }
                Act::Send(pi, link) => {
                    let (addr, bytes, _) = ps[pi].queued.get_mut(&link).unwrap().pop_front().unwrap();
                    net.entry(link).or_default().push_back((addr, bytes));
                }
                Act::Receive(pi, link) => {
                    let rl = works[pi].recvs.iter().find(|r| r.link == link).unwrap();
                    let i = ps[pi].next_post.entry(link).or_insert(0);
                    if rl.msgs[*i].free.is_some() {
                        *credits_net.entry(credit_link(link)).or_insert(0) += 1;
                    }
                    *i += 1;
                }
                Act::Deliver(link) => {
                    let (addr, bytes) = net.get_mut(&link).unwrap().pop_front().unwrap();
                    let rx = here(link.1 as usize);
                    let i = ps[rx].delivered.entry(link).or_insert(0);
                    let into = works[rx].recvs.iter().find(|r| r.link == link).unwrap().msgs[*i];
                    *i += 1;
                    assert_eq!(into.bytes, bytes, "message sizes agree");
                    let ((sr, si), (dr, di)) = (unbase(addr), unbase(into.addr));
                    let k = (bytes / E) as usize;
                    let b: Vec<i64> = m.mem[sr].bufs[3][si..si + k].to_vec();
                    m.mem[dr].bufs[3][di..di + k].copy_from_slice(&b);
                    ps[rx].landed[into.lane][into.step] = true;
                    *ps[here(link.0 as usize)].completed.entry(link).or_insert(0) += 1;
                }
                Act::Credit(link) => {
                    *credits_net.get_mut(&link).unwrap() -= 1;
                    let data = data_link(link).unwrap();
                    let tx = here(data.0 as usize);
                    assert!(works[tx].recvs.iter().any(|r| r.link == link), "the sender expects credits on {link:?}");
                    *ps[tx].credits.entry(data).or_insert(0) += 1;
                }
                Act::Ring(pi, k) => {
                    let s = &works[pi].submits[k];
                    let (r, l) = (s.core.0 as usize, usize::from(s.queue.queue));
                    ps[pi].submitted[k] += 1;
                    submitted[r][l] += 1;
                }
            }
        }
        for (r, lanes_ran) in ran.iter().enumerate() {
            for (l, &k) in lanes_ran.iter().enumerate() {
                assert_eq!(k, lanes(r)[l].len(), "{kind} n={n}: rank {r} lane {l} ran every step (a deadlock otherwise)");
            }
        }
        (m.mem.iter().map(|x| x.bufs[1].clone()).collect(), held)
    }

    #[test]
    fn slots_credits_and_relays_keep_every_op_right_in_any_order() {
        let cases: [(CcKind, usize, &[bool]); 7] = [
            (CcKind::AllReduce, 2, &[true, false]),
            (CcKind::AllReduce, 4, &[true, true, false, false]),
            (CcKind::AllReduce, 5, &[true, true, true, true, false]),
            (CcKind::AllReduce, 3, &[true, false, true]),
            (CcKind::AllGather, 4, &[true, false, true, false]),
            (CcKind::ReduceScatter, 4, &[false, true, true, false]),
            (CcKind::AllToAll, 3, &[true, false, false]),
        ];
        let mut held = 0;
        for (kind, n, local) in &cases {
            let count = 12 * *n as u64 + 3;
            for seed in 1..12u64 {
                let inputs: Vec<Vec<i64>> = (0..*n).map(|r| (0..kind.sizes(*n, count).0 as i64).map(|i| i * 7 + r as i64 * 1000 + 1).collect()).collect();
                let (out, h) = run(kind, *n, count, 4, local, seed * 0x9E37_79B9, 0);
                assert_eq!(out, reference(kind, *n, count, &inputs), "{kind} n={n} local={local:?} seed={seed}");
                held += h;
            }
        }
        assert!(held > 0, "somewhere a sender waited for its receiver");
    }

    /// The second physical core's ring channel (LNC 2) runs the same
    /// protocol on connections of its own: every link of its work is one
    /// of channel 1's, and the results are right in any order.
    #[test]
    fn the_second_channel_runs_the_protocol_on_its_own_connections() {
        for (kind, n, local) in [(CcKind::AllReduce, 3usize, [true, false, true].as_slice()), (CcKind::ReduceScatter, 4, &[false, true, true, false])] {
            let count = 12 * n as u64 + 3;
            let inputs: Vec<Vec<i64>> = (0..n).map(|r| (0..kind.sizes(n, count).0 as i64).map(|i| i * 7 + r as i64 * 1000 + 1).collect()).collect();
            for seed in 1..4u64 {
                let (out, _) = run(&kind, n, count, 4, local, seed * 0x9E37_79B9, 1);
                assert_eq!(out, reference(&kind, n, count, &inputs), "{kind} n={n} channel 1 seed={seed}");
            }
        }
    }
}
