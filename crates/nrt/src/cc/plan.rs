//! The schedule of one collective as data: per rank, per lane (a DMA
//! queue of the rank's core), a list of steps; each step a list of
//! transfers (copy, or reduce into the destination) and the signals it
//! raises when its transfers are done (submit a step of another lane, or
//! count one "done" on a rank). Pure: no device, no addresses; `compose`
//! turns it into descriptors.
//!
//! Ring ops follow the seeds' schedule (collectives spec §5.3): ring order
//! is the replica group's order, rank `r` sends to `r + 1`; all-reduce is
//! reduce-scatter then all-gather, `2(N-1)` steps per pass; each chunk is
//! split into two halves that run on two lanes, so the second half's
//! transfer overlaps the first half's reduction; buffers larger than one
//! pass (`N` chunks of at most [`PASS_ELEMENTS`] elements) take several
//! passes. Step `k` of lane `(r, h)` is submitted by step `k - 1` of lane
//! `(r - 1, h)` (step 0 by the host), so each lane's queue is fed by one
//! source, in order, and a transfer starts only when the bytes it reads
//! have landed. The reduction order of every element is fixed by the
//! ring (chunk `c` is summed starting at rank `c + 1`, ending at rank
//! `c`), so results are bit-identical on every rank and on every run.

use std::fmt;

/// Largest chunk of one pass, in elements (the pattern-block limit is
/// 2^24; 2^20 keeps a half-chunk transfer at 2 MiB of fp32).
pub const PASS_ELEMENTS: u64 = 1 << 20;

/// Lanes (DMA queues per rank) a ring op uses: one per half-chunk.
pub const RING_LANES: usize = 2;

/// What the collective computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CcKind {
    /// Every rank gets the reduction of every rank's `count` elements.
    AllReduce,
    /// Every rank gets the `N` inputs of `count` elements, in rank order.
    AllGather,
    /// Rank `r` gets chunk `r` (of `count` elements) of the reduction of
    /// the `N`-chunk inputs.
    ReduceScatter,
    /// Rank `r` sends chunk `j` of its input to rank `j`'s output chunk `r`.
    AllToAll,
    /// Each (source, target) pair: the source's input lands in the
    /// target's output (a target receives from at most one source).
    Permute(Vec<(usize, usize)>),
}

impl CcKind {
    /// nccom-test's name of the op.
    pub fn name(&self) -> &'static str {
        match self {
            CcKind::AllReduce => "all_reduce",
            CcKind::AllGather => "all_gather",
            CcKind::ReduceScatter => "reduce_scatter",
            CcKind::AllToAll => "alltoall",
            CcKind::Permute(_) => "permute",
        }
    }

    /// Whether the op reduces.
    pub fn reduces(&self) -> bool {
        matches!(self, CcKind::AllReduce | CcKind::ReduceScatter)
    }

    /// Elements of each rank's input and output for `count` (the per-rank
    /// unit of the op, see the variants).
    pub fn sizes(&self, ranks: usize, count: u64) -> (u64, u64) {
        let n = ranks as u64;
        match self {
            CcKind::AllReduce | CcKind::Permute(_) => (count, count),
            CcKind::AllGather => (count, count * n),
            CcKind::ReduceScatter => (count * n, count),
            CcKind::AllToAll => (count * n, count * n),
        }
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rank's buffer a transfer names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    /// The input, viewed as the op's chunks.
    In,
    /// The output, viewed as the op's chunks.
    Out,
    /// The rank's scratch (reduce-scatter partial sums; the input's shape).
    Scratch,
}

/// Elements `offset..offset + len` of chunk `chunk` of buffer `buf` of
/// rank `rank`. For ops whose buffers are one chunk (permute, the
/// all-gather input, the reduce-scatter output) `chunk` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// Rank (index in the replica group).
    pub rank: usize,
    /// Which buffer.
    pub buf: Buf,
    /// Chunk index.
    pub chunk: usize,
    /// First element inside the chunk.
    pub offset: u64,
}

/// One data movement: `len` elements from `src` to `dst`, reducing into
/// `dst` when `reduce` is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Where the elements are read.
    pub src: Loc,
    /// Where they land.
    pub dst: Loc,
    /// Elements.
    pub len: u64,
    /// `dst = op(src, dst)` instead of `dst = src`.
    pub reduce: bool,
}

/// What a step raises once its transfers are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Submit step `step` of lane `lane` of rank `rank`.
    Submit {
        /// Rank.
        rank: usize,
        /// Lane.
        lane: usize,
        /// Step index in that lane.
        step: usize,
    },
    /// Count one "done" on rank `rank`'s collectives semaphore.
    Done {
        /// Rank.
        rank: usize,
    },
}

/// One step of a lane.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Transfers, in order.
    pub transfers: Vec<Transfer>,
    /// Signals raised after the transfers, in order.
    pub then: Vec<Signal>,
}

/// A whole schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Ranks.
    pub ranks: usize,
    /// `lanes[rank][lane]`: the steps that lane's queue walks.
    pub lanes: Vec<Vec<Vec<Step>>>,
    /// Steps the host submits when the op starts: (rank, lane, step).
    pub host_submits: Vec<(usize, usize, usize)>,
}

impl Plan {
    /// How many "done" signals rank `r` receives (what its wait counts to).
    pub fn expected_done(&self, r: usize) -> u32 {
        self.lanes.iter().flatten().flatten().flat_map(|s| &s.then).filter(|s| matches!(s, Signal::Done { rank } if *rank == r)).count() as u32
    }
}

/// Splits `len` elements into two halves (the first takes the odd one).
fn halves(start: u64, len: u64) -> [(u64, u64); 2] {
    let h0 = len.div_ceil(2);
    [(start, h0), (start + h0, len - h0)]
}

/// Chunk `c`'s length for a ring op over `count` total chunk elements: all
/// chunks of an all-reduce are `ceil(count / N)` but the last ones, which
/// take the remainder (possibly 0); the other ops' chunks are all `count`.
pub fn chunk_len(kind: &CcKind, ranks: usize, count: u64, c: usize) -> u64 {
    match kind {
        CcKind::AllReduce => {
            let per = count.div_ceil(ranks as u64);
            count.saturating_sub(per * c as u64).min(per)
        }
        _ => count,
    }
}

/// The schedule of `kind` over `ranks` ranks for `count` elements (the
/// per-rank unit of [`CcKind::sizes`]). `in_place[r]`: rank `r`'s output
/// is its input (all-reduce), so no copy of the input is needed.
pub fn plan(kind: &CcKind, ranks: usize, count: u64, in_place: &[bool]) -> Plan {
    plan_passes(kind, ranks, count, in_place, PASS_ELEMENTS)
}

/// [`plan`] with passes of at most `pass` elements per chunk (at least 2,
/// at most [`PASS_ELEMENTS`]): across processes a step's message is half
/// a pass, and the proxy's slots hold a few messages of a connection
/// (`split::net_pass`). The reduction order does not depend on it.
pub fn plan_passes(kind: &CcKind, ranks: usize, count: u64, in_place: &[bool], pass: u64) -> Plan {
    assert!(ranks >= 1 && in_place.len() == ranks);
    let pass = pass.clamp(2, PASS_ELEMENTS);
    match kind {
        CcKind::AllToAll => return direct(ranks, |r| (0..ranks).map(|j| (Loc { rank: r, buf: Buf::In, chunk: j, offset: 0 }, Loc { rank: j, buf: Buf::Out, chunk: r, offset: 0 })).collect(), count),
        CcKind::Permute(pairs) => {
            return direct(ranks, |r| pairs.iter().filter(|(s, _)| *s == r).map(|&(_, t)| (Loc { rank: r, buf: Buf::In, chunk: 0, offset: 0 }, Loc { rank: t, buf: Buf::Out, chunk: 0, offset: 0 })).collect(), count);
        }
        _ => {}
    }
    if ranks == 1 {
        return single(kind, count, in_place[0]);
    }
    let n = ranks;
    let per_chunk = (0..n).map(|c| chunk_len(kind, n, count, c)).max().unwrap_or(0);
    let passes = per_chunk.div_ceil(pass).max(1);
    let mut lanes = vec![vec![Vec::<Step>::new(); RING_LANES]; n];
    let next = |r: usize| (r + 1) % n;
    let rs_steps = if matches!(kind, CcKind::AllGather) { 0 } else { n - 1 };
    let ag_steps = if matches!(kind, CcKind::ReduceScatter) { 0 } else { n - 1 };
    for p in 0..passes {
        let window = |c: usize| {
            let len = chunk_len(kind, n, count, c);
            let start = (p * pass).min(len);
            (start, ((p + 1) * pass).min(len) - start)
        };
        for h in 0..RING_LANES {
            for r in 0..n {
                let nx = next(r);
                let mut steps = Vec::new();
                for t in 0..rs_steps {
                    let c = (r + n - 1 - t % n) % n;
                    let (start, len) = halves(window(c).0, window(c).1)[h];
                    let mut s = Step::default();
                    if len > 0 {
                        let src_buf = if t == 0 { Buf::In } else if matches!(kind, CcKind::ReduceScatter) { Buf::Scratch } else { Buf::Out };
                        let last = t == n - 2;
                        let (dst_buf, dst_chunk) = match kind {
                            CcKind::ReduceScatter if last => (Buf::Out, 0),
                            CcKind::ReduceScatter => (Buf::Scratch, c),
                            _ => (Buf::Out, c),
                        };
                        let dst = Loc { rank: nx, buf: dst_buf, chunk: dst_chunk, offset: start };
                        if !(in_place[nx] && matches!(kind, CcKind::AllReduce)) {
                            // The receiver's own contribution first.
                            s.transfers.push(Transfer { src: Loc { rank: nx, buf: Buf::In, chunk: c, offset: start }, dst, len, reduce: false });
                        }
                        s.transfers.push(Transfer { src: Loc { rank: r, buf: src_buf, chunk: c, offset: start }, dst, len, reduce: true });
                    }
                    steps.push(s);
                }
                for s_ in 0..ag_steps {
                    let c = (r + n - s_ % n) % n;
                    let (start, len) = halves(window(c).0, window(c).1)[h];
                    let mut s = Step::default();
                    if len > 0 {
                        let own_input = matches!(kind, CcKind::AllGather) && s_ == 0;
                        if own_input && !in_place[r] {
                            s.transfers.push(Transfer { src: Loc { rank: r, buf: Buf::In, chunk: 0, offset: start }, dst: Loc { rank: r, buf: Buf::Out, chunk: r, offset: start }, len, reduce: false });
                        }
                        let src = if own_input { Loc { rank: r, buf: Buf::In, chunk: 0, offset: start } } else { Loc { rank: r, buf: Buf::Out, chunk: c, offset: start } };
                        s.transfers.push(Transfer { src, dst: Loc { rank: nx, buf: Buf::Out, chunk: c, offset: start }, len, reduce: false });
                    }
                    steps.push(s);
                }
                lanes[r][h].extend(steps);
            }
        }
    }
    // The chain: step k of (r, h) submits step k + 1 of (r + 1, h); the
    // last step of each lane counts done on the rank it wrote into and
    // on its own rank (its reads are over).
    let mut host_submits = Vec::new();
    for r in 0..n {
        for h in 0..RING_LANES {
            let len = lanes[r][h].len();
            host_submits.push((r, h, 0));
            for k in 0..len {
                let step = &mut lanes[r][h][k];
                if k + 1 < len {
                    step.then.push(Signal::Submit { rank: next(r), lane: h, step: k + 1 });
                } else {
                    step.then.push(Signal::Done { rank: next(r) });
                    step.then.push(Signal::Done { rank: r });
                }
            }
        }
    }
    Plan { ranks: n, lanes, host_submits }
}

/// One rank: a local copy when the output is not the input.
fn single(kind: &CcKind, count: u64, in_place: bool) -> Plan {
    let mut s = Step::default();
    let (_, out) = kind.sizes(1, count);
    if !in_place && out > 0 {
        s.transfers.push(Transfer { src: Loc { rank: 0, buf: Buf::In, chunk: 0, offset: 0 }, dst: Loc { rank: 0, buf: Buf::Out, chunk: 0, offset: 0 }, len: out, reduce: false });
    }
    s.then.push(Signal::Done { rank: 0 });
    Plan { ranks: 1, lanes: vec![vec![vec![s]]], host_submits: vec![(0, 0, 0)] }
}

/// Ops without a ring: every rank's one lane moves its chunks straight to
/// their targets, then counts done on each target and on itself.
fn direct(ranks: usize, moves: impl Fn(usize) -> Vec<(Loc, Loc)>, count: u64) -> Plan {
    let mut lanes = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let mut s = Step::default();
        for (src, dst) in moves(r) {
            if count > 0 {
                s.transfers.push(Transfer { src, dst, len: count, reduce: false });
            }
            if dst.rank != r {
                s.then.push(Signal::Done { rank: dst.rank });
            }
        }
        s.then.push(Signal::Done { rank: r });
        lanes.push(vec![vec![s]]);
    }
    Plan { ranks, lanes, host_submits: (0..ranks).map(|r| (r, 0, 0)).collect() }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Runs a plan over host vectors of i64 (sum as the reduction), in an
    /// order a device could pick: any lane with a submitted step runs it,
    /// chosen by `pick`. Returns the outputs and the done counts.
    fn run(kind: &CcKind, plan: &Plan, count: u64, inputs: &[Vec<i64>], in_place: &[bool], pick: &mut impl FnMut(usize) -> usize) -> (Vec<Vec<i64>>, Vec<u32>) {
        let n = plan.ranks;
        let (isz, osz) = kind.sizes(n, count);
        let mut mem: Vec<[Vec<i64>; 3]> = (0..n).map(|r| [inputs[r].clone(), if in_place[r] { inputs[r].clone() } else { vec![-999; osz as usize] }, vec![-777; isz as usize]]).collect();
        let chunk_base = |buf: Buf, chunk: usize| -> u64 {
            match (kind, buf) {
                (CcKind::AllReduce, _) => chunk as u64 * count.div_ceil(n as u64),
                (CcKind::AllGather, Buf::In) | (CcKind::ReduceScatter, Buf::Out) | (CcKind::Permute(_), _) => 0,
                _ => chunk as u64 * count,
            }
        };
        let idx = |b: Buf| match b {
            Buf::In => 0,
            Buf::Out => 1,
            Buf::Scratch => 2,
        };
        let mut submitted: Vec<Vec<usize>> = vec![vec![0; RING_LANES]; n];
        let mut ran: Vec<Vec<usize>> = vec![vec![0; RING_LANES]; n];
        for &(r, l, s) in &plan.host_submits {
            assert_eq!(submitted[r][l], s, "host submits in order");
            submitted[r][l] += 1;
        }
        let mut done = vec![0u32; n];
        loop {
            let ready: Vec<(usize, usize)> = (0..n).flat_map(|r| (0..RING_LANES).map(move |l| (r, l))).filter(|&(r, l)| ran[r][l] < submitted[r][l]).collect();
            if ready.is_empty() {
                break;
            }
            let (r, l) = ready[pick(ready.len())];
            let step = &plan.lanes[r][l][ran[r][l]];
            ran[r][l] += 1;
            for t in &step.transfers {
                let s0 = (chunk_base(t.src.buf, t.src.chunk) + t.src.offset) as usize;
                let d0 = (chunk_base(t.dst.buf, t.dst.chunk) + t.dst.offset) as usize;
                let src: Vec<i64> = mem[t.src.rank][idx(t.src.buf)][s0..s0 + t.len as usize].to_vec();
                let dst = &mut mem[t.dst.rank][idx(t.dst.buf)][d0..d0 + t.len as usize];
                for (d, s) in dst.iter_mut().zip(src) {
                    *d = if t.reduce { *d + s } else { s };
                }
            }
            for sig in &step.then {
                match *sig {
                    Signal::Submit { rank, lane, step } => {
                        assert_eq!(submitted[rank][lane], step, "a lane is fed in order");
                        submitted[rank][lane] += 1;
                    }
                    Signal::Done { rank } => done[rank] += 1,
                }
            }
        }
        for r in 0..n {
            for l in 0..plan.lanes[r].len() {
                assert_eq!(ran[r][l], plan.lanes[r][l].len(), "every step of rank {r} lane {l} ran");
            }
        }
        (mem.into_iter().map(|[_, o, _]| o).collect(), done)
    }

    /// Every rank's output of `kind` over `inputs` (sums as the reduction).
    pub(crate) fn reference(kind: &CcKind, n: usize, count: u64, inputs: &[Vec<i64>]) -> Vec<Vec<i64>> {
        let c = count as usize;
        match kind {
            CcKind::AllReduce => vec![(0..c).map(|i| inputs.iter().map(|v| v[i]).sum()).collect(); n],
            CcKind::AllGather => vec![inputs.concat(); n],
            CcKind::ReduceScatter => (0..n).map(|r| (0..c).map(|i| inputs.iter().map(|v| v[r * c + i]).sum()).collect()).collect(),
            CcKind::AllToAll => (0..n).map(|r| (0..n).flat_map(|j| inputs[j][r * c..(r + 1) * c].to_vec()).collect()).collect(),
            CcKind::Permute(pairs) => (0..n).map(|r| pairs.iter().find(|p| p.1 == r).map_or(vec![-999; c], |p| inputs[p.0].clone())).collect(),
        }
    }

    #[test]
    fn every_op_matches_the_reference_in_any_device_order() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for n in [1usize, 2, 3, 4, 8] {
            let kinds = [CcKind::AllReduce, CcKind::AllGather, CcKind::ReduceScatter, CcKind::AllToAll, CcKind::Permute((0..n).map(|r| (r, (r + 1) % n)).collect())];
            for kind in kinds {
                for count in [0u64, 1, 5, 64, 1000, PASS_ELEMENTS + 17] {
                    if count > 1000 && n > 2 {
                        continue;
                    }
                    let (isz, _) = kind.sizes(n, count);
                    let inputs: Vec<Vec<i64>> = (0..n).map(|r| (0..isz as i64).map(|i| i * 7 + r as i64 * 1000 + 1).collect()).collect();
                    for in_place in [false, true] {
                        if in_place && kind != CcKind::AllReduce {
                            continue;
                        }
                        let ip = vec![in_place; n];
                        let p = plan(&kind, n, count, &ip);
                        let (out, done) = run(&kind, &p, count, &inputs, &ip, &mut rnd);
                        assert_eq!(out, reference(&kind, n, count, &inputs), "{kind} n={n} count={count} in_place={in_place}");
                        for r in 0..n {
                            assert_eq!(done[r], p.expected_done(r), "{kind} n={n}: rank {r}'s done count");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn all_reduce_takes_two_n_minus_one_steps_per_pass_on_two_lanes() {
        let p = plan(&CcKind::AllReduce, 4, 4096, &[false; 4]);
        for r in 0..4 {
            assert_eq!(p.lanes[r].len(), RING_LANES);
            for l in &p.lanes[r] {
                assert_eq!(l.len(), 2 * (4 - 1));
            }
            assert_eq!(p.expected_done(r), 4, "two lanes end on each rank and two lanes end into it");
        }
        let big = plan(&CcKind::AllReduce, 2, 2 * (2 * PASS_ELEMENTS + 1), &[true; 2]);
        assert_eq!(big.lanes[0][0].len(), 3 * 2, "three passes of two steps");
    }
}
