//! A [`Plan`] as the bytes the device walks: per rank, per lane, a TX and
//! an RX descriptor ring, the pattern blocks of its reducing transfers and
//! a table of 32-bit words its register writes copy from.
//!
//! Encoding (docs/collectives.md, "On the device"):
//! - a copy is plain UDMA copy pairs (at most 64 KiB each);
//! - a reduce is one pattern-block pair whose block has the reduction op
//!   (add / fma / max / min), the same dtype on both sides and no
//!   constant: the DMA engine computes `dst = op(src, dst)`;
//! - a copy into a destination that the next transfer of the step reduces
//!   into (a receiver's own contribution, then the incoming chunk) is
//!   interleaved with that reduce in pieces of [`FUSED_PIECE_BYTES`]: the
//!   copy pairs of a piece, then the reduce of the same piece, so the
//!   engine reduces into bytes it has just written (still in its cache)
//!   instead of reading the whole copied chunk back from memory. Each
//!   element is still `op(src, copied)`, once, so results are the same;
//! - "submit step k of lane l of rank q" is two 4-byte copies of the
//!   step's pair count from the word table into q's queue's M2S and S2M
//!   tail-increment registers (a doorbell rung by the DMA engine);
//! - "done on rank q" is a 4-byte copy of the word 1 into the SEM_INC
//!   alias of q's collectives semaphore [`CC_SEM`];
//! - a rank's engines name a rank of another device of the instance
//!   (its buffers, queue registers and semaphore) through the peer
//!   window ([`ArchDesc::peer_addr`]): the step is device-to-device DMA,
//!   the NeuronLink analogue, with the same descriptors.

use super::plan::{Buf, Loc, Plan, Signal, Step, Transfer};
use nrt_hal::arch::{ArchDesc, DMA_M2S_GROUP, DMA_S2M_GROUP, EVT_SEM_SEM_INC};
use nrt_hal::{CoreId, DmaQueueId};
use nrt_isa::dma_desc::{RxDescriptor, TxDescriptor, DmaDescriptor, DmaOp, MAX_BD_LENGTH, PatternBlock, PatternSide, pattern_pair, plain_copy_pairs};
use nrt_isa::dtype::Dtype;

/// The semaphore of each core that counts a collective's "done" signals
/// (outside the models' 0..248 and the dispatcher's; see
/// `exec::dispatch`).
pub const CC_SEM: u32 = 254;

/// The DMA queues of a core the collectives use, one per lane; the
/// model queue pool never hands them out ([`is_cc_queue`]).
pub const CC_QUEUES: [DmaQueueId; 2] = [DmaQueueId { engine: 7, queue: 14 }, DmaQueueId { engine: 7, queue: 15 }];

/// Whether `(engine, queue)` belongs to the collectives.
pub fn is_cc_queue(engine: u32, queue: u32) -> bool {
    CC_QUEUES.iter().any(|q| u32::from(q.engine) == engine && u32::from(q.queue) == queue)
}

/// Where one rank's buffers are: the device address of each chunk of its
/// input, output and scratch (see [`Loc`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankSide {
    /// The device (its index in the runtime's instance) of the rank's
    /// core: ranks of one meeting may sit on several devices.
    pub device: u32,
    /// The rank's physical core (the first of its logical core).
    pub core: CoreId,
    /// The DMA queue of each of the rank's lanes on that core (peers ring
    /// its steps there).
    pub queues: Vec<DmaQueueId>,
    /// Input chunk addresses.
    pub input: Vec<u64>,
    /// Output chunk addresses.
    pub output: Vec<u64>,
    /// Scratch chunk addresses (reduce-scatter only).
    pub scratch: Vec<u64>,
}

/// How rank `from`'s DMA engines name `addr` of rank `to`'s device (see
/// [`reach_device`]).
fn reach(arch: &ArchDesc, sides: &[RankSide], from: usize, to: usize, addr: u64) -> Result<u64, String> {
    reach_device(arch, sides[from].device, sides[to].device, addr)
}

/// How the DMA engines of device `from` name `addr` of device `to` (both
/// indices in the instance): the address itself on one device, else
/// through the peer window. Every address a collective's descriptors give
/// for another rank goes through here.
pub fn reach_device(arch: &ArchDesc, from: u32, to: u32, addr: u64) -> Result<u64, String> {
    if to == from {
        return Ok(addr);
    }
    arch.peer_addr(to, nrt_hal::DeviceAddr(addr)).map(|a| a.get()).ok_or_else(|| format!("the peer window cannot name address {addr:#x} of Neuron device {to}"))
}

impl RankSide {
    fn addr(&self, l: &Loc, esize: u64) -> u64 {
        let chunks = match l.buf {
            Buf::In => &self.input,
            Buf::Out => &self.output,
            Buf::Scratch => &self.scratch,
        };
        chunks[l.chunk] + l.offset * esize
    }
}

/// One lane's rings and the pair count of each of its steps.
#[derive(Clone, Debug, Default)]
pub struct LaneImage {
    /// TX descriptors, in walk order.
    pub tx: Vec<[u8; 16]>,
    /// RX descriptors.
    pub rx: Vec<[u8; 16]>,
    /// Pairs of each step (what a doorbell for that step adds).
    pub step_pairs: Vec<u32>,
    /// Ring length in descriptors (a multiple of 16, at least 32).
    pub capacity: u32,
}

/// One rank's device image, laid out from `base`: the lanes' TX and RX
/// rings, then the pattern blocks, then the word table.
#[derive(Clone, Debug, Default)]
pub struct RankImage {
    /// Lanes.
    pub lanes: Vec<LaneImage>,
    /// Pattern blocks.
    pub blocks: Vec<[u8; 128]>,
    /// Word table.
    pub words: Vec<u32>,
    /// Where the image sits.
    pub base: u64,
}

impl RankImage {
    /// Address of lane `l`'s TX ring and RX ring.
    pub fn rings(&self, l: usize) -> (u64, u64) {
        let mut at = self.base;
        for (i, lane) in self.lanes.iter().enumerate() {
            let bytes = u64::from(lane.capacity) * 16;
            if i == l {
                return (at, at + bytes);
            }
            at += 2 * bytes;
        }
        (at, at)
    }

    fn blocks_at(&self) -> u64 {
        self.rings(self.lanes.len()).0
    }

    fn words_at(&self) -> u64 {
        self.blocks_at() + 128 * self.blocks.len() as u64
    }

    /// Bytes the image needs.
    pub fn bytes(&self) -> u64 {
        self.words_at() + 4 * self.words.len() as u64 - self.base
    }

    /// The image as (offset from base, bytes) pieces to write.
    pub fn pieces(&self) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        for (l, lane) in self.lanes.iter().enumerate() {
            let (tx, rx) = self.rings(l);
            out.push((tx - self.base, lane.tx.concat()));
            out.push((rx - self.base, lane.rx.concat()));
        }
        out.push((self.blocks_at() - self.base, self.blocks.concat()));
        out.push((self.words_at() - self.base, self.words.iter().flat_map(|w| w.to_le_bytes()).collect()));
        out
    }
}

impl LaneImage {
    fn push(&mut self, tx: TxDescriptor, rx: RxDescriptor) -> Result<(), String> {
        self.tx.push(DmaDescriptor::Tx(tx).to_bytes().map_err(|e| e.to_string())?);
        self.rx.push(DmaDescriptor::Rx(rx).to_bytes().map_err(|e| e.to_string())?);
        Ok(())
    }

    fn copy(&mut self, src: u64, dst: u64, len: u64) -> Result<(), String> {
        for (t, x) in plain_copy_pairs(src, dst, len, 1).map_err(|e| e.to_string())? {
            self.push(t, x)?;
        }
        Ok(())
    }
}

fn copy_pairs(len_bytes: u64) -> u32 {
    len_bytes.div_ceil(u64::from(MAX_BD_LENGTH)) as u32
}

/// Bytes per piece of a copy interleaved with the reduce into the same
/// destination (see the module doc): four 64 KiB copy pairs, then one
/// reduce, so a piece stays in a core's L2 cache between the two.
pub const FUSED_PIECE_BYTES: u64 = 4 * MAX_BD_LENGTH as u64;

/// How a step's transfers become descriptors: a plain copy, a reduce, or
/// a copy and the reduce into the same destination right after it,
/// interleaved piece by piece.
#[derive(Clone, Copy)]
enum Emit<'a> {
    Copy(&'a Transfer),
    Reduce(&'a Transfer),
    CopyThenReduce(&'a Transfer, &'a Transfer),
}

impl Emit<'_> {
    /// Pairs and pattern blocks the item takes, for `esize`-byte elements.
    fn counts(&self, esize: u64) -> (u32, usize) {
        match *self {
            Emit::Copy(t) => (copy_pairs(t.len * esize), 0),
            Emit::Reduce(_) => (1, 1),
            Emit::CopyThenReduce(c, _) => {
                let bytes = c.len * esize;
                let pieces = bytes.div_ceil(piece_elems(esize) * esize);
                let copies: u32 = (0..pieces).map(|p| copy_pairs((bytes - p * piece_elems(esize) * esize).min(piece_elems(esize) * esize))).sum();
                (copies + pieces as u32, pieces as usize)
            }
        }
    }
}

/// Elements of one interleaved piece (whole elements only).
fn piece_elems(esize: u64) -> u64 {
    (FUSED_PIECE_BYTES / esize).max(1)
}

/// A step's transfers as [`Emit`] items, in order.
fn emits(step: &Step) -> Vec<Emit<'_>> {
    let ts = &step.transfers;
    let mut out = Vec::with_capacity(ts.len());
    let mut i = 0;
    while i < ts.len() {
        let t = &ts[i];
        match ts.get(i + 1) {
            Some(n) if !t.reduce && n.reduce && n.dst == t.dst && n.len == t.len => {
                out.push(Emit::CopyThenReduce(t, n));
                i += 2;
            }
            _ => {
                out.push(if t.reduce { Emit::Reduce(t) } else { Emit::Copy(t) });
                i += 1;
            }
        }
    }
    out
}

/// Pairs of one step.
fn pairs_of(step: &Step, esize: u64) -> u32 {
    let data: u32 = emits(step).iter().map(|e| e.counts(esize).0).sum();
    let signals: u32 = step.then.iter().map(|s| if matches!(s, Signal::Submit { .. }) { 2 } else { 1 }).sum();
    data + signals
}

/// Composes every rank's image; `bases[r]` is where rank `r`'s image
/// will sit (compose once with zeros to learn the sizes, see
/// [`RankImage::bytes`]; they do not depend on the bases).
pub fn compose(plan: &Plan, sides: &[RankSide], dtype: Dtype, op: DmaOp, arch: &ArchDesc, bases: &[u64]) -> Result<Vec<RankImage>, String> {
    compose_on(plan, sides, dtype, op, arch, bases, CC_SEM)
}

/// [`compose`] with "done" signals counted on semaphore `done_sem` (each
/// rank's lanes on its [`RankSide::queues`]): in-NEFF collectives
/// (`cc::neff`) keep their own queues and semaphores, so they never meet
/// the standalone ones.
pub fn compose_on(plan: &Plan, sides: &[RankSide], dtype: Dtype, op: DmaOp, arch: &ArchDesc, bases: &[u64], done_sem: u32) -> Result<Vec<RankImage>, String> {
    if let Some((r, l)) = plan.lanes.iter().enumerate().find(|(r, l)| l.len() > sides[*r].queues.len()) {
        return Err(format!("the schedule gives rank {r} {} lanes but it has {} queues", l.len(), sides[r].queues.len()));
    }
    let esize = dtype.size_bytes() as u64;
    let step_pairs: Vec<Vec<Vec<u32>>> = plan.lanes.iter().map(|lanes| lanes.iter().map(|steps| steps.iter().map(|s| pairs_of(s, esize)).collect()).collect()).collect();
    let mut images = Vec::with_capacity(plan.ranks);
    for (r, lanes) in plan.lanes.iter().enumerate() {
        // Lay out rings and count blocks and words first, so the
        // descriptors can name their addresses.
        let mut img = RankImage { base: bases[r], ..Default::default() };
        for l in 0..lanes.len() {
            let total: u32 = step_pairs[r][l].iter().sum();
            img.lanes.push(LaneImage { step_pairs: step_pairs[r][l].clone(), capacity: total.max(32).next_multiple_of(16), ..Default::default() });
        }
        let reduces: usize = lanes.iter().flatten().flat_map(emits).map(|e| e.counts(esize).1).sum();
        img.blocks = vec![[0u8; 128]; reduces];
        let mut words: Vec<u32> = vec![1];
        for steps in lanes {
            for s in steps {
                for sig in &s.then {
                    if let Signal::Submit { rank, lane, step } = *sig {
                        let w = step_pairs[rank][lane][step];
                        if !words.contains(&w) {
                            words.push(w);
                        }
                    }
                }
            }
        }
        img.words = words;
        let (blocks_at, words_at) = (img.blocks_at(), img.words_at());
        let word_addr = |w: u32| words_at + 4 * img.words.iter().position(|&x| x == w).expect("word in table") as u64;
        let mut block = 0usize;
        let mut blocks = std::mem::take(&mut img.blocks);
        for (l, steps) in lanes.iter().enumerate() {
            let lane = &mut img.lanes[l];
            for s in steps {
                let reach = |to: usize, addr: u64| reach(arch, sides, r, to, addr);
                let mut reduce = |lane: &mut LaneImage, src: u64, dst: u64, len: u64| -> Result<(), String> {
                    let n = u32::try_from(len).map_err(|_| format!("a reducing transfer of {len} elements is too large"))?;
                    let pb = PatternBlock {
                        op,
                        src: PatternSide::contiguous(src, dtype, n),
                        dst: PatternSide::contiguous(dst, dtype, n),
                        scale: 1.0,
                        constant: None,
                        transpose: None,
                    };
                    blocks[block] = pb.to_bytes().map_err(|e| e.to_string())?;
                    let (tx, rx) = pattern_pair(blocks_at + 128 * block as u64, 1).map_err(|e| e.to_string())?;
                    lane.push(tx, rx)?;
                    block += 1;
                    Ok(())
                };
                for e in emits(s) {
                    let at = |t: &Transfer| -> Result<(u64, u64), String> {
                        Ok((reach(t.src.rank, sides[t.src.rank].addr(&t.src, esize))?, reach(t.dst.rank, sides[t.dst.rank].addr(&t.dst, esize))?))
                    };
                    match e {
                        Emit::Copy(t) => {
                            let (src, dst) = at(t)?;
                            lane.copy(src, dst, t.len * esize)?;
                        }
                        Emit::Reduce(t) => {
                            let (src, dst) = at(t)?;
                            reduce(lane, src, dst, t.len)?;
                        }
                        Emit::CopyThenReduce(c, r) => {
                            let ((own, dst), (incoming, _)) = (at(c)?, at(r)?);
                            let per = piece_elems(esize);
                            let mut done = 0;
                            while done < c.len {
                                let n = (c.len - done).min(per);
                                let off = done * esize;
                                lane.copy(own + off, dst + off, n * esize)?;
                                reduce(lane, incoming + off, dst + off, n)?;
                                done += n;
                            }
                        }
                    }
                }
                for sig in &s.then {
                    match *sig {
                        Signal::Submit { rank, lane: ql, step } => {
                            let w = word_addr(step_pairs[rank][ql][step]);
                            let (core, q) = (sides[rank].core, sides[rank].queues[ql]);
                            lane.copy(w, reach(rank, arch.dma_tail_inc_addr(core, q, DMA_M2S_GROUP).get())?, 4)?;
                            lane.copy(w, reach(rank, arch.dma_tail_inc_addr(core, q, DMA_S2M_GROUP).get())?, 4)?;
                        }
                        Signal::Done { rank } => {
                            lane.copy(word_addr(1), reach(rank, arch.semaphore_addr(sides[rank].core, EVT_SEM_SEM_INC, done_sem).get())?, 4)?;
                        }
                    }
                }
            }
            debug_assert_eq!(lane.tx.len() as u32, lane.step_pairs.iter().sum::<u32>());
        }
        img.blocks = blocks;
        images.push(img);
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::plan::{CcKind, plan};

    #[test]
    fn the_collectives_queues_are_not_custom_op_queues() {
        for q in CC_QUEUES {
            assert!(!crate::custom_ops::is_custom_op_dma(u32::from(q.engine), u32::from(q.queue)));
        }
    }

    /// A receiver's own-chunk copy and the reduce into it alternate piece
    /// by piece: each piece's copy pairs, then a reduce block over the
    /// same bytes of the destination, covering the chunk once.
    #[test]
    fn own_chunk_copies_interleave_with_their_reduce_piece_by_piece() {
        use nrt_isa::dma_desc::RingSide;
        let arch = nrt_hal::Arch::Trn2.desc();
        // Two ranks, halves of 100_000 fp32 (400_000 bytes): a 256 KiB
        // piece and a 137_856-byte one.
        let p = plan(&CcKind::AllReduce, 2, 400_000, &[false; 2]);
        let sides: Vec<RankSide> = (0..2u64).map(|r| RankSide { device: 0, core: CoreId(r as u32), queues: CC_QUEUES.to_vec(), input: vec![0x1000_0000 * (r + 1), 0x1000_0000 * (r + 1) + 800_000], output: vec![0x4000_0000 * (r + 1), 0x4000_0000 * (r + 1) + 800_000], scratch: vec![] }).collect();
        let imgs = compose(&p, &sides, Dtype::Float32, DmaOp::Add, arch, &[0; 2]).unwrap();
        let img = &imgs[0];
        assert_eq!(img.blocks.len(), 2 * 2, "two pieces per half");
        let lane = &img.lanes[0];
        let first_step = lane.step_pairs[0] as usize;
        let kinds: Vec<bool> = lane.tx[..first_step].iter().map(|b| DmaDescriptor::from_bytes(b, RingSide::Tx).unwrap().len_ctrl().pattern).collect();
        let want: Vec<bool> = [vec![false; 4], vec![true], vec![false; 3], vec![true]].concat();
        assert_eq!(&kinds[..want.len()], &want[..], "4 copies, a reduce, 3 copies, a reduce, then the signals");
        assert!(kinds[want.len()..].iter().all(|k| !k));
        // Rank 0 sends chunk 1 to rank 1: the blocks reduce into rank 1's
        // output chunk 1 at offsets 0 and 256 KiB.
        let dst_of = |b: &[u8; 128]| PatternBlock::from_bytes(b).unwrap().dst;
        let (d0, d1) = (dst_of(&img.blocks[0]), dst_of(&img.blocks[1]));
        let base = sides[1].output[1];
        assert_eq!((d0.addr, d1.addr), (base, base + FUSED_PIECE_BYTES));
        assert_eq!((d0.elements(), d1.elements()), (FUSED_PIECE_BYTES / 4, 100_000 - FUSED_PIECE_BYTES / 4));
    }

    /// Ranks on two devices: every address a rank's descriptors and
    /// pattern blocks give for the other device's rank (its buffers, its
    /// queue doorbells, its done semaphore) is that rank's address in the
    /// peer window; its own stay plain.
    #[test]
    fn ranks_of_other_devices_are_reached_through_the_peer_window() {
        use nrt_isa::dma_desc::RingSide;
        let arch = nrt_hal::Arch::Trn1.desc();
        let p = plan(&CcKind::AllReduce, 2, 1000, &[false; 2]);
        let sides: Vec<RankSide> = (0..2u64)
            .map(|r| RankSide { device: 3 * r as u32, core: CoreId(1), queues: CC_QUEUES.to_vec(), input: vec![0x1000_0000 * (r + 1), 0x1000_0000 * (r + 1) + 2000], output: vec![0x2000_0000 * (r + 1), 0x2000_0000 * (r + 1) + 2000], scratch: vec![] })
            .collect();
        let imgs = compose(&p, &sides, Dtype::Float32, DmaOp::Add, arch, &[0x100, 0x900]).unwrap();
        let peer = |a: u64| arch.peer_addr(3, nrt_hal::DeviceAddr(a)).unwrap().get();
        let img = &imgs[0];
        let mut dsts: Vec<u64> = img.lanes.iter().flat_map(|l| l.rx.iter()).map(|b| DmaDescriptor::from_bytes(b, RingSide::Rx).unwrap().buf_ptr()).collect();
        dsts.extend(img.blocks.iter().map(|b| PatternBlock::from_bytes(b).unwrap().dst.addr));
        let own = |a: u64| (0x2000_0000..0x2000_0000 + 4000).contains(&a) || (0x100..0x100 + img.bytes()).contains(&a) || a == arch.semaphore_addr(CoreId(1), EVT_SEM_SEM_INC, CC_SEM).get();
        for d in &dsts {
            match arch.peer_of(nrt_hal::DeviceAddr(*d)) {
                Some((dev, local)) => {
                    assert_eq!(dev, 3);
                    let l = local.get();
                    let theirs = (0x4000_0000..0x4000_0000 + 4000).contains(&l)
                        || l == arch.semaphore_addr(CoreId(1), EVT_SEM_SEM_INC, CC_SEM).get()
                        || CC_QUEUES.iter().any(|q| [DMA_M2S_GROUP, DMA_S2M_GROUP].iter().any(|g| l == arch.dma_tail_inc_addr(CoreId(1), *q, *g).get()));
                    assert!(theirs, "{l:#x} is not rank 1's");
                }
                None => assert!(own(*d), "{d:#x} is neither rank 0's nor a peer address"),
            }
        }
        assert!(dsts.contains(&peer(arch.semaphore_addr(CoreId(1), EVT_SEM_SEM_INC, CC_SEM).get())), "rank 0's last step counts done on rank 1");
        assert!(dsts.contains(&arch.semaphore_addr(CoreId(1), EVT_SEM_SEM_INC, CC_SEM).get()), "and on itself, locally");
    }

    #[test]
    fn images_hold_one_pair_per_counted_pair_and_fit_their_rings() {
        let arch = nrt_hal::Arch::Trn2.desc();
        let p = plan(&CcKind::AllReduce, 4, 100_000, &[false; 4]);
        let sides: Vec<RankSide> = (0..4u64)
            .map(|r| RankSide { device: 0, core: CoreId(r as u32), queues: CC_QUEUES.to_vec(), input: (0..4).map(|c| 0x1000_0000 * (r + 1) + c * 100_000).collect(), output: (0..4).map(|c| 0x2000_0000 * (r + 1) + c * 100_000).collect(), scratch: vec![] })
            .collect();
        let imgs = compose(&p, &sides, Dtype::Float32, DmaOp::Add, arch, &[0; 4]).unwrap();
        for img in &imgs {
            for lane in &img.lanes {
                assert_eq!(lane.tx.len(), lane.rx.len());
                assert_eq!(lane.tx.len() as u32, lane.step_pairs.iter().sum::<u32>());
                assert!(lane.tx.len() as u32 <= lane.capacity && lane.capacity % 16 == 0);
            }
            assert_eq!(img.blocks.len(), 2 * 3, "one reduce per half per reduce-scatter step");
            let total: usize = img.pieces().iter().map(|(_, b)| b.len()).sum();
            assert!(total as u64 <= img.bytes());
        }
    }
}
