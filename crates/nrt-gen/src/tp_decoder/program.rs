//! The engine programs of the decoder NEFFs: one core's streams for one
//! sequence, and the NEFF around them (module docs of [`super`]).
//!
//! Instructions are emitted in one global order that is itself a valid
//! execution, and every access to a memory region (an SBUF tile, a PSUM
//! bank, a DRAM var) is ordered by a small tracker: a read waits for the
//! region's last writer, a write for its last writer and every reader
//! since. So tiles, banks and the per-layer scratch can be reused freely
//! and no engine can overtake the data it needs or overwrite data still
//! to be read. Waits name completions emitted earlier, so no engine can
//! wait for one that never comes.

use super::{EPS, P, Phase, SB_BASE, TpDecoderSpec, names};
use crate::GenError;
use crate::dma_side::{Side, dma2d};
use crate::sched::{DMA_SEM_ADD, QueueSet, SEM_ACT, SEM_DVE, SEM_PE, Stream, Wait};
use nrt_neff::{DefJson, EngineFiles, EngineKind, NeffWriter};
use serde_json::json;
use std::collections::HashMap;

/// Bytes of one PSUM bank per partition (512 fp32).
const BANK: usize = 2048;
/// PSUM banks per partition.
const BANKS: usize = 8;
/// PSUM in compute-operand addresses.
const PSUM_BASE: usize = 0x200_0000;
/// DMA-operand partition stride of the state buffer.
const SB_STRIDE: usize = 0x40000;
/// Bit position of the partition in a compute operand's SBUF address.
const PARTITION_SHIFT: usize = 18;
/// Completion semaphore of POOL's instructions.
const SEM_POOL: u32 = 7;
/// Semaphore the collectives raise when their output is complete.
const SEM_CC: u32 = 3;
/// First semaphore of SP's dynamic queue set.
const SP_QUEUE_SEM: u32 = 8;
/// Alignment of SBUF tiles in a partition.
const TILE_ALIGN: usize = 64;
/// The state buffer's var id.
const VAR_SB: u32 = 0;

/// A region whose accesses are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// The SBUF tile at this byte offset (of every partition).
    Sb(usize),
    /// A PSUM bank.
    Psum(usize),
    /// A DRAM var, from this byte offset (regions of one var never overlap).
    Dram(u32, usize),
}

/// The compute engines (SP issues the DMAs and collectives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eng {
    Pe,
    Act,
    Dve,
    Pool,
}

impl Eng {
    fn sem(self) -> u32 {
        match self {
            Eng::Pe => SEM_PE,
            Eng::Act => SEM_ACT,
            Eng::Dve => SEM_DVE,
            Eng::Pool => SEM_POOL,
        }
    }
}

/// An operand: the region it touches and its pattern text.
#[derive(Clone, Debug)]
struct Op {
    key: Key,
    pat: String,
}

/// A tile of `parts` partitions × `free` fp32 at byte offset `off`.
#[derive(Clone, Copy, Debug)]
struct Tile {
    off: usize,
    parts: usize,
    free: usize,
}

fn pattern(addr: usize, step: i32, n: usize) -> String {
    format!("[{addr:#x}; {step},{n}; 0,1; 0,1]")
}

impl Tile {
    fn at(&self, elem: usize) -> usize {
        self.off + 4 * elem
    }
    /// Elements `from..from + n` of every partition.
    fn cols(&self, from: usize, n: usize) -> Op {
        debug_assert!(from + n <= self.free, "{self:?}: {from}+{n}");
        Op { key: Key::Sb(self.off), pat: pattern(self.at(from), 1, n) }
    }
    fn all(&self) -> Op {
        self.cols(0, self.free)
    }
    /// Element `elem` of every partition, repeated `n` times.
    fn bcast(&self, elem: usize, n: usize) -> Op {
        Op { key: Key::Sb(self.off), pat: pattern(self.at(elem), 0, n) }
    }
    /// `n` columns from `from` as a stationary operand: the compiler's
    /// reversed walk (its first element feeds the last PE column).
    fn weights(&self, from: usize, n: usize) -> Op {
        Op { key: Key::Sb(self.off), pat: pattern(self.at(from + n - 1), -1, n) }
    }
    /// Every element of partitions `first..` (a compute operand starts at
    /// the partition its address encodes).
    fn partitions_from(&self, first: usize) -> Op {
        Op { key: Key::Sb(self.off), pat: pattern(first << PARTITION_SHIFT | self.off, 1, self.free) }
    }
    fn side(&self) -> Side {
        Side::rows(format!("var{VAR_SB}"), self.off, SB_STRIDE, self.parts)
    }
}

/// A PSUM bank's first `n` fp32 of every partition.
fn bank_op(bank: usize, n: usize) -> Op {
    Op { key: Key::Psum(bank), pat: pattern(PSUM_BASE + bank * BANK, 1, n) }
}

/// Element 0 of a PSUM bank's partitions, repeated `n` times.
fn bank_bcast(bank: usize, n: usize) -> Op {
    Op { key: Key::Psum(bank), pat: pattern(PSUM_BASE + bank * BANK, 0, n) }
}

/// Bump allocation of SBUF tiles; `mark` / `reset` reuse the per-layer
/// scratch (every layer allocates the same tiles in the same order, so a
/// reused offset is the same tile and the tracker's key stays right).
#[derive(Default)]
struct Sbuf {
    at: usize,
    high: usize,
    sizes: HashMap<usize, usize>,
}

impl Sbuf {
    fn take(&mut self, parts: usize, free: usize) -> Tile {
        let off = self.at;
        let bytes = 4 * free;
        let prev = self.sizes.insert(off, bytes);
        assert!(prev.is_none_or(|p| p == bytes), "SBUF offset {off:#x} reused with another size");
        self.at = (off + bytes).next_multiple_of(TILE_ALIGN);
        self.high = self.high.max(self.at);
        Tile { off, parts, free }
    }
}

/// An ACT bias: an immediate or one fp32 per partition.
enum Bias {
    Imm(f32),
    Tile(Tile),
}

/// An fp32 as assembler text (its bits, so every value round-trips).
fn f(v: f32) -> String {
    format!("{:#010x}", v.to_bits())
}

/// Accesses since the last write of a region.
#[derive(Default)]
struct Access {
    writers: Vec<Wait>,
    readers: Vec<Wait>,
}

fn merge(list: &mut Vec<Wait>, w: Wait) {
    match list.iter_mut().find(|x| x.sem == w.sem) {
        Some(x) => x.value = x.value.max(w.value),
        None => list.push(w),
    }
}

/// One core's streams under construction.
struct Core {
    sp: Stream,
    pe: Stream,
    act: Stream,
    dve: Stream,
    pool: Stream,
    counts: [u32; 4],
    q: QueueSet,
    collectives: u32,
    deps: HashMap<Key, Access>,
    next_bank: usize,
}

impl Core {
    fn new() -> Core {
        let mut c = Core {
            sp: Stream::new(),
            pe: Stream::new(),
            act: Stream::new(),
            dve: Stream::new(),
            pool: Stream::new(),
            counts: [0; 4],
            q: QueueSet::new(SP_QUEUE_SEM),
            collectives: 0,
            deps: HashMap::new(),
            next_bank: 0,
        };
        c.act.push("act_table_load", &[]);
        c
    }

    fn stream(&mut self, e: Eng) -> &mut Stream {
        match e {
            Eng::Pe => &mut self.pe,
            Eng::Act => &mut self.act,
            Eng::Dve => &mut self.dve,
            Eng::Pool => &mut self.pool,
        }
    }

    /// What an access to `reads` and `writes` must wait for.
    fn waits(&self, reads: &[Key], writes: &[Key]) -> Vec<Wait> {
        let mut w = Vec::new();
        for k in reads.iter().chain(writes) {
            if let Some(a) = self.deps.get(k) {
                a.writers.iter().for_each(|x| merge(&mut w, *x));
            }
        }
        for k in writes {
            if let Some(a) = self.deps.get(k) {
                a.readers.iter().for_each(|x| merge(&mut w, *x));
            }
        }
        w
    }

    fn record(&mut self, reads: &[Key], writes: &[Key], done: Wait) {
        for k in reads {
            merge(&mut self.deps.entry(*k).or_default().readers, done);
        }
        for k in writes {
            self.deps.insert(*k, Access { writers: vec![done], readers: Vec::new() });
        }
    }

    /// Emits `line` on compute engine `e` after what its accesses need;
    /// the instruction's completion.
    fn emit(&mut self, e: Eng, line: &str, reads: &[&Op], writes: &[&Op]) -> Wait {
        let (r, w): (Vec<Key>, Vec<Key>) = (reads.iter().map(|o| o.key).collect(), writes.iter().map(|o| o.key).collect());
        let mut waits = self.waits(&r, &w);
        // An engine runs its own stream in order.
        waits.retain(|x| x.sem != e.sem());
        let i = e as usize;
        self.counts[i] += 1;
        let done = Wait { sem: e.sem(), value: self.counts[i] };
        self.stream(e).push(&format!("{line} update=sem{}++", e.sem()), &waits);
        self.record(&r, &w, done);
        done
    }

    /// A DMA on SP's queue set moving `run_bytes` per run.
    fn dma(&mut self, src: (&Side, Key), dst: (&Side, Key), run_bytes: usize, src_dtype: &str) {
        let waits = self.waits(&[src.1], &[dst.1]);
        let w = self.q.issue();
        self.sp.push(&dma2d(w.sem, DMA_SEM_ADD, src.0, dst.0, run_bytes, src_dtype, "float32"), &waits);
        self.record(&[src.1], &[dst.1], w);
    }

    /// An in-NEFF all-reduce (add, fp32) of `elems` from var `input` into var `output`.
    fn all_reduce(&mut self, input: u32, output: u32, elems: usize) {
        let (r, w) = ([Key::Dram(input, 0)], [Key::Dram(output, 0)]);
        let waits = self.waits(&r, &w);
        self.collectives += 1;
        let done = Wait { sem: SEM_CC, value: self.collectives };
        let line = format!(
            "trigger_collective op=add dtype=float32 group_id=0 input_tensor={input} output_tensor={output} num_elements={elems} collective=all_reduce update=sem{SEM_CC}++"
        );
        self.sp.push(&line, &waits);
        self.record(&r, &w, done);
    }

    fn bank(&mut self) -> usize {
        let b = self.next_bank % BANKS;
        self.next_bank += 1;
        b
    }

    /// A PE accumulation group into a fresh bank: per step a stationary
    /// operand of `rows` partitions × `cols` and a moving one of `rows` ×
    /// `n`; `psum[m][j] = Σ_steps Σ_k W[k][m] · X[k][j]`. The bank.
    fn matmul(&mut self, cols: usize, n: usize, steps: &[(Op, usize, Op)]) -> usize {
        let bank = self.bank();
        let out = bank_op(bank, n);
        for (i, (w, rows, x)) in steps.iter().enumerate() {
            let mut waits = self.waits(&[w.key], &[]);
            waits.retain(|x| x.sem != SEM_PE);
            self.pe.push(&format!("ldweights weights={} dtype=float32 rows={rows} cols={cols} row_mask=15 col_mask=15", w.pat), &waits);
            let acc = match (i == 0, i + 1 == steps.len()) {
                (true, true) => "single",
                (true, false) => "start",
                (false, true) => "stop",
                (false, false) => "mid",
            };
            let line = format!("matmul moving={} dtype=float32 rows={rows} cols={cols} accumulate={acc} row_mask=15 col_mask=15 psum={}", x.pat, out.pat);
            let writes: &[&Op] = if i == 0 { &[&out] } else { &[] };
            let done = self.emit(Eng::Pe, &line, &[x, w], writes);
            if i > 0 {
                self.record(&[], &[out.key], done);
            }
        }
        bank
    }

    fn activate(&mut self, func: &str, parts: usize, input: &Op, output: &Op, scale: f32, bias: Bias) {
        let (bias_text, bias_op) = match bias {
            Bias::Imm(b) => (format!("bias={}", f(b)), None),
            Bias::Tile(t) => (format!("bias=0x0 bias_addr={:#x} bias_from_sbuf=true", t.off), Some(t.all())),
        };
        let line = format!(
            "activate func={func} in_dtype=float32 out_dtype=float32 partitions={parts} input={} output={} scale={} {bias_text}",
            input.pat,
            output.pat,
            f(scale)
        );
        let mut reads = vec![input];
        reads.extend(bias_op.as_ref());
        self.emit(Eng::Act, &line, &reads, &[output]);
    }

    /// `output = input` through ACT (`identity`, scale 1, bias 0: exact).
    fn copy(&mut self, parts: usize, input: &Op, output: &Op) {
        self.activate("identity", parts, input, output, 1.0, Bias::Imm(0.0));
    }

    fn tensor_tensor(&mut self, e: Eng, op: &str, parts: usize, in0: &Op, in1: &Op, out: &Op) {
        let line = format!("tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op={op} partitions={parts} in0={} in1={} out={}", in0.pat, in1.pat, out.pat);
        self.emit(e, &line, &[in0, in1], &[out]);
    }

    fn tensor_scalar(&mut self, e: Eng, op: &str, scalar: f32, parts: usize, input: &Op, output: &Op) {
        let line = format!(
            "tensor_scalar op0={op} in_dtype=float32 out_dtype=float32 partitions={parts} input={} output={} scalar0={} reverse0=false op1=bypass reverse1=false scalar1=0x0",
            input.pat,
            output.pat,
            f(scalar)
        );
        self.emit(e, &line, &[input], &[output]);
    }

    /// `dst = src` where `mask != 0`; `dst` keeps its value elsewhere.
    fn select(&mut self, parts: usize, mask: &Op, src: &Op, dst: &Op) {
        let line = format!("copy_predicated mask_dtype=float32 dtype=float32 invert=false partitions={parts} mask={} src={} dst={}", mask.pat, src.pat, dst.pat);
        self.emit(Eng::Dve, &line, &[mask, src, dst], &[dst]);
    }

    fn iota(&mut self, parts: usize, out: &Op, partition_step: f32, step0: f32) {
        let line = format!("iota dtype=float32 partitions={parts} output={} base=0x0 partition_step={} step0={} step1=0x0 step2=0x0", out.pat, f(partition_step), f(step0));
        self.emit(Eng::Pool, &line, &[], &[out]);
    }

    fn memset(&mut self, parts: usize, out: &Op, value: f32) {
        let line = format!("memset dtype=float32 partitions={parts} output={} fill={}", out.pat, f(value));
        self.emit(Eng::Pool, &line, &[], &[out]);
    }

    /// `out[p] = op over the free elements of input[p]` (max or sum).
    fn reduce(&mut self, op: &str, parts: usize, input: &Op, out: &Op) {
        let line = format!("pool op={op} in_dtype=float32 out_dtype=float32 partitions={parts} input={} output={} axes=1", input.pat, out.pat);
        self.emit(Eng::Pool, &line, &[input], &[out]);
    }

    fn transpose(&mut self, parts: usize, input: &Op, out: &Op) {
        let line = format!("transpose in_dtype=float32 out_dtype=float32 partitions={parts} input={} output={}", input.pat, out.pat);
        self.emit(Eng::Pool, &line, &[input], &[out]);
    }

    /// The streams, each ending once everything it issued is done.
    fn finish(mut self) -> [(EngineKind, Stream); 5] {
        let dmas = self.q.all_done();
        self.sp.finish(&dmas);
        [(EngineKind::Sp, self.sp), (EngineKind::Pool, self.pool), (EngineKind::Pe, self.pe), (EngineKind::Act, self.act), (EngineKind::Dve, self.dve)]
    }
}

/// Var ids and DGE entries of a NEFF's vars.
struct Vars {
    /// (var id, DGE entry) of each input and output by name.
    io: HashMap<&'static str, (u32, usize)>,
    /// The collectives' (input, output) var ids, two per layer.
    cc: Vec<(u32, u32)>,
    dge: u32,
}

const IO_NAMES: [&str; 13] = [
    names::X,
    names::POSITION,
    names::ATTN_NORM,
    names::WQKV,
    names::WO,
    names::MLP_NORM,
    names::W_GATE_UP,
    names::W_DOWN,
    names::FINAL_NORM,
    names::K_CACHE,
    names::V_CACHE,
    names::HIDDEN,
    "",
];

impl Vars {
    fn of(s: &TpDecoderSpec, phase: Phase) -> Vars {
        let (ins, outs) = s.signatures(phase);
        let mut io = HashMap::new();
        for (entry, sig) in ins.iter().chain(&outs).enumerate() {
            let name = IO_NAMES.iter().copied().find(|n| *n == sig.name).expect("a known tensor name");
            io.insert(name, (entry as u32 + 1, entry));
        }
        let mut next = io.len() as u32 + 1;
        let mut cc = Vec::new();
        if s.ranks > 1 {
            for _ in 0..2 * s.layers {
                cc.push((next, next + 1));
                next += 2;
            }
        }
        Vars { io, cc, dge: next }
    }

    fn io(&self, name: &str) -> (u32, usize) {
        self.io[name]
    }

    /// A side through the DGE table: `rows` rows of `name` from `offset`.
    fn dge(&self, name: &str, offset: usize, step: usize, rows: usize) -> (Side, Key) {
        let (id, entry) = self.io(name);
        (Side::rows(format!("dge{entry}"), offset, step, rows), Key::Dram(id, offset))
    }
}

/// A transposing side: `P` rows (features, 4 bytes apart) of `runs`
/// tokens, `run_step` bytes apart.
fn features(mut side: Side, runs: usize, run_step: usize) -> Side {
    side.step = 4;
    side.rows = P;
    side.runs = runs;
    side.run_step = run_step;
    side
}

/// The SBUF side of a transposing DMA: partition p, `runs` elements.
fn sb_runs(t: &Tile, runs: usize) -> Side {
    Side { at: format!("var{VAR_SB}"), offset: t.off, step: SB_STRIDE, rows: t.parts, run_step: 4, runs }
}

/// Per layer, the weight tiles (all loaded up front).
struct LayerWeights {
    attn_g: Tile,
    wqkv: Vec<Tile>,
    wo: Vec<Tile>,
    mlp_g: Tile,
    wgu: Vec<Tile>,
    wd: Vec<Tile>,
    k: Vec<Tile>,
    v: Vec<Tile>,
}

/// The per-sequence constants of an execution.
struct Masks {
    /// Where a score is masked (1.0) [tokens, attended].
    cond: Tile,
    /// -inf [tokens, attended].
    neg_inf: Tile,
    /// Decode: one-hot of the position over Kᵀ's columns [head_dim, context]
    /// and over V's rows [context, head_dim].
    k_hot: Option<Tile>,
    v_hot: Option<Tile>,
}

/// Builds one core's program: sequence `b` of the batch.
fn core(s: &TpDecoderSpec, phase: Phase, b: usize, vars: &Vars, sb: &mut Sbuf) -> Core {
    let mut c = Core::new();
    let (d, hd, hr, fr, l_n, ctx, cmax) = (s.d_model, s.head_dim, s.heads_per_rank(), s.ffn_per_rank(), s.layers, s.attended(phase), s.context);
    let (t, bsz, kc) = (s.tokens(phase), s.batch(), s.d_model / P);
    let fchunks: Vec<(usize, usize)> = (0..fr).step_by(P).map(|f0| (f0, P.min(fr - f0))).collect();
    sb.at = SB_BASE;

    // The sequence's tokens, transposed: chunk j = features 128j.. on the partitions.
    let x: Vec<Tile> = (0..kc)
        .map(|j| {
            let tile = sb.take(P, t);
            let (side, key) = vars.dge(names::X, (b * t * d + j * P) * 4, 4, P);
            c.dma((&features(side, t, d * 4), key), (&sb_runs(&tile, t), Key::Sb(tile.off)), 4, "float32");
            tile
        })
        .collect();
    // Decode: the position on every partition.
    let pos = (phase == Phase::Decode).then(|| {
        let tile = sb.take(P, 1);
        let (side, key) = vars.dge(names::POSITION, b * 4, 0, P);
        c.dma((&side, key), (&tile.side(), Key::Sb(tile.off)), 4, "int32");
        tile
    });
    // Every layer's weights and (decode) KV tiles.
    let norm = |c: &mut Core, sb: &mut Sbuf, name: &str, at: usize| {
        let tile = sb.take(P, kc);
        let (side, key) = vars.dge(name, at, 4, P);
        let mut src = features(side, kc, P * 4);
        src.step = 4;
        c.dma((&src, key), (&sb_runs(&tile, kc), Key::Sb(tile.off)), 4, "float32");
        tile
    };
    let rows = |c: &mut Core, sb: &mut Sbuf, name: &str, at: usize, parts: usize, free: usize| {
        let tile = sb.take(parts, free);
        let (side, key) = vars.dge(name, at, free * 4, parts);
        c.dma((&side, key), (&tile.side(), Key::Sb(tile.off)), free * 4, "float32");
        tile
    };
    let cache_at = |l: usize, h: usize| ((l * bsz + b) * hr + h) * hd * cmax * 4;
    let layers: Vec<LayerWeights> = (0..l_n)
        .map(|l| {
            let attn_g = norm(&mut c, sb, names::ATTN_NORM, l * d * 4);
            let wqkv = (0..kc).map(|j| rows(&mut c, sb, names::WQKV, (l * d + j * P) * 3 * hr * hd * 4, P, 3 * hr * hd)).collect();
            let wo = (0..hr).map(|h| rows(&mut c, sb, names::WO, (l * hr + h) * hd * d * 4, hd, d)).collect();
            let mlp_g = norm(&mut c, sb, names::MLP_NORM, l * d * 4);
            let wgu = (0..kc).map(|j| rows(&mut c, sb, names::W_GATE_UP, (l * d + j * P) * 2 * fr * 4, P, 2 * fr)).collect();
            let wd = fchunks.iter().map(|&(f0, fc)| rows(&mut c, sb, names::W_DOWN, (l * fr + f0) * d * 4, fc, d)).collect();
            let (k, v) = match phase {
                Phase::Decode => (
                    (0..hr).map(|h| rows(&mut c, sb, names::K_CACHE, cache_at(l, h), hd, cmax)).collect(),
                    (0..hr).map(|h| rows(&mut c, sb, names::V_CACHE, cache_at(l, h), cmax, hd)).collect(),
                ),
                Phase::Prefill => ((0..hr).map(|_| sb.take(hd, cmax)).collect(), (0..hr).map(|_| sb.take(cmax, hd)).collect()),
            };
            LayerWeights { attn_g, wqkv, wo, mlp_g, wgu, wd, k, v }
        })
        .collect();
    let final_g = norm(&mut c, sb, names::FINAL_NORM, 0);

    // Constants: the ones matrix (RMSNorm's cross-partition sum), -inf,
    // the causal mask, and for decode the position's one-hots.
    let ones = sb.take(P, P);
    c.memset(P, &ones.all(), 1.0);
    let neg_inf = sb.take(t, ctx);
    c.memset(t, &neg_inf.all(), f32::NEG_INFINITY);
    let cond = sb.take(t, ctx);
    let (k_hot, v_hot) = match &pos {
        None => {
            // Prefill: token i attends positions j <= i: mask where j - i > 0.
            let rel = sb.take(t, ctx);
            c.iota(t, &rel.all(), -1.0, 1.0);
            c.tensor_scalar(Eng::Dve, "is_gt", 0.0, t, &rel.all(), &cond.all());
            (None, None)
        }
        Some(pos) => {
            let col = sb.take(P, cmax);
            c.iota(P, &col.all(), 0.0, 1.0);
            let row = sb.take(cmax, hd);
            c.iota(cmax, &row.all(), 1.0, 0.0);
            c.tensor_tensor(Eng::Dve, "is_gt", t, &col.cols(0, ctx), &pos.bcast(0, ctx), &cond.all());
            let k_hot = sb.take(hd, cmax);
            c.tensor_tensor(Eng::Dve, "is_eq", hd, &col.all(), &pos.bcast(0, cmax), &k_hot.all());
            let v_hot = sb.take(cmax, hd);
            c.tensor_tensor(Eng::Dve, "is_eq", cmax, &row.all(), &pos.bcast(0, hd), &v_hot.all());
            (Some(k_hot), Some(v_hot))
        }
    };
    let masks = Masks { cond, neg_inf, k_hot, v_hot };
    let scale = 1.0 / (hd as f32).sqrt();

    let scratch = sb.at;
    let mut h = x;
    for (l, w) in layers.iter().enumerate() {
        sb.at = scratch;
        // Attention.
        let xn = rmsnorm(&mut c, sb, &h, &w.attn_g, &ones, t, d);
        let mut heads = Vec::with_capacity(hr);
        for head in 0..hr {
            let proj = |c: &mut Core, col: usize| {
                let steps: Vec<(Op, usize, Op)> = (0..kc).map(|j| (w.wqkv[j].weights(col, hd), P, xn[j].all())).collect();
                c.matmul(hd, t, &steps)
            };
            let qb = proj(&mut c, head * hd);
            let q = sb.take(hd, t);
            c.copy(hd, &bank_op(qb, t), &q.all());
            let kb = proj(&mut c, (hr + head) * hd);
            let vcol = (2 * hr + head) * hd;
            let (kt, vt) = (w.k[head], w.v[head]);
            match (&masks.k_hot, &masks.v_hot) {
                (Some(k_hot), Some(v_hot)) => {
                    // Decode: write the token's K column and V row at the
                    // position. V comes out of the PE on every row: the
                    // stationary operand repeats the token's features.
                    c.select(hd, &k_hot.all(), &bank_bcast(kb, cmax), &kt.all());
                    let steps: Vec<(Op, usize, Op)> = (0..kc).map(|j| (xn[j].bcast(0, cmax), P, w.wqkv[j].cols(vcol, hd))).collect();
                    let vb = c.matmul(cmax, hd, &steps);
                    c.select(cmax, &v_hot.all(), &bank_op(vb, hd), &vt.all());
                }
                _ => {
                    c.memset(hd, &kt.cols(t, cmax - t), 0.0);
                    c.copy(hd, &bank_op(kb, t), &kt.cols(0, t));
                    let steps: Vec<(Op, usize, Op)> = (0..kc).map(|j| (xn[j].weights(0, t), P, w.wqkv[j].cols(vcol, hd))).collect();
                    let vb = c.matmul(t, hd, &steps);
                    c.memset(cmax - t, &vt.partitions_from(t), 0.0);
                    c.copy(t, &bank_op(vb, hd), &vt.all());
                }
            }
            let at = cache_at(l, head);
            let (side, key) = vars.dge(names::K_CACHE, at, cmax * 4, hd);
            c.dma((&kt.side(), Key::Sb(kt.off)), (&side, key), cmax * 4, "float32");
            let (side, key) = vars.dge(names::V_CACHE, at, hd * 4, cmax);
            c.dma((&vt.side(), Key::Sb(vt.off)), (&side, key), hd * 4, "float32");
            heads.push(attention(&mut c, sb, &masks, &q, &kt, &vt, t, ctx, hd, scale));
        }
        let attn = |c: &mut Core, j: usize| {
            let steps: Vec<(Op, usize, Op)> = heads.iter().enumerate().map(|(hh, o)| (w.wo[hh].weights(j * P, P), hd, o.all())).collect();
            c.matmul(P, t, &steps)
        };
        h = reduce_add(&mut c, sb, vars, s, 2 * l, &h, t, attn);
        // MLP.
        let xn = rmsnorm(&mut c, sb, &h, &w.mlp_g, &ones, t, d);
        let acts: Vec<Tile> = fchunks
            .iter()
            .map(|&(f0, fc)| {
                let gate: Vec<(Op, usize, Op)> = (0..kc).map(|j| (w.wgu[j].weights(f0, fc), P, xn[j].all())).collect();
                let gb = c.matmul(fc, t, &gate);
                let up: Vec<(Op, usize, Op)> = (0..kc).map(|j| (w.wgu[j].weights(fr + f0, fc), P, xn[j].all())).collect();
                let ub = c.matmul(fc, t, &up);
                let sg = sb.take(fc, t);
                c.activate("silu", fc, &bank_op(gb, t), &sg.all(), 1.0, Bias::Imm(0.0));
                let m = sb.take(fc, t);
                c.tensor_tensor(Eng::Dve, "mult", fc, &sg.all(), &bank_op(ub, t), &m.all());
                m
            })
            .collect();
        let down = |c: &mut Core, j: usize| {
            let steps: Vec<(Op, usize, Op)> = acts.iter().zip(&w.wd).map(|(m, wd)| (wd.weights(j * P, P), m.parts, m.all())).collect();
            c.matmul(P, t, &steps)
        };
        h = reduce_add(&mut c, sb, vars, s, 2 * l + 1, &h, t, down);
    }
    sb.at = scratch;
    let out = rmsnorm(&mut c, sb, &h, &final_g, &ones, t, d);
    for (j, tile) in out.iter().enumerate() {
        let (side, key) = vars.dge(names::HIDDEN, (b * t * d + j * P) * 4, 4, P);
        c.dma((&sb_runs(tile, t), Key::Sb(tile.off)), (&features(side, t, d * 4), key), 4, "float32");
    }
    c
}

/// `x · rstd(x) · g` over the chunks of `x` ([128, t] each): the sum of
/// squares across partitions and chunks by the PE against a ones matrix
/// (every output partition gets the whole sum), `1/sqrt` on ACT.
fn rmsnorm(c: &mut Core, sb: &mut Sbuf, x: &[Tile], g: &Tile, ones: &Tile, t: usize, d: usize) -> Vec<Tile> {
    let sq: Vec<Tile> = x
        .iter()
        .map(|xj| {
            let tile = sb.take(P, t);
            c.activate("square", P, &xj.all(), &tile.all(), 1.0, Bias::Imm(0.0));
            tile
        })
        .collect();
    let steps: Vec<(Op, usize, Op)> = sq.iter().map(|q| (ones.weights(0, P), P, q.all())).collect();
    let bank = c.matmul(P, t, &steps);
    let rstd = sb.take(P, t);
    c.activate("rsqrt", P, &bank_op(bank, t), &rstd.all(), 1.0 / d as f32, Bias::Imm(EPS));
    x.iter()
        .enumerate()
        .map(|(j, xj)| {
            let scaled = sb.take(P, t);
            c.tensor_tensor(Eng::Dve, "mult", P, &xj.all(), &rstd.all(), &scaled.all());
            let out = sb.take(P, t);
            c.tensor_tensor(Eng::Dve, "mult", P, &scaled.all(), &g.bcast(j, t), &out.all());
            out
        })
        .collect()
}

/// One head's attention for `t` tokens over `ctx` positions: `oᵀ` [hd, t].
#[allow(clippy::too_many_arguments)]
fn attention(c: &mut Core, sb: &mut Sbuf, m: &Masks, q: &Tile, kt: &Tile, vt: &Tile, t: usize, ctx: usize, hd: usize, scale: f32) -> Tile {
    let sb_bank = c.matmul(t, ctx, &[(q.weights(0, t), hd, kt.cols(0, ctx))]);
    let scores = bank_op(sb_bank, ctx);
    c.select(t, &m.cond.all(), &m.neg_inf.all(), &scores);
    let mx = sb.take(t, 1);
    c.reduce("max", t, &scores, &mx.all());
    let neg = sb.take(t, 1);
    c.tensor_scalar(Eng::Dve, "mult", -scale, t, &mx.all(), &neg.all());
    let e = sb.take(t, ctx);
    c.activate("exp", t, &scores, &e.all(), scale, Bias::Tile(neg));
    let total = sb.take(t, 1);
    c.reduce("sum", t, &e.all(), &total.all());
    let inv = sb.take(t, 1);
    c.activate("reciprocal", t, &total.all(), &inv.all(), 1.0, Bias::Imm(0.0));
    let p = sb.take(t, ctx);
    c.tensor_tensor(Eng::Dve, "mult", t, &e.all(), &inv.bcast(0, ctx), &p.all());
    let pt = sb.take(ctx, t);
    c.transpose(t, &p.all(), &pt.all());
    let ob = c.matmul(hd, t, &[(vt.weights(0, hd), ctx, pt.all())]);
    let o = sb.take(hd, t);
    c.copy(hd, &bank_op(ob, t), &o.all());
    o
}

/// `h + Σ_ranks partial` chunk by chunk: `partial(c, j)` leaves chunk j of
/// this rank's partial sum [128, t] in a PSUM bank; with several ranks
/// collective `index` (an in-NEFF all-reduce) adds the ranks' partials.
#[allow(clippy::too_many_arguments)]
fn reduce_add(c: &mut Core, sb: &mut Sbuf, vars: &Vars, s: &TpDecoderSpec, index: usize, h: &[Tile], t: usize, partial: impl Fn(&mut Core, usize) -> usize) -> Vec<Tile> {
    let kc = h.len();
    let sums: Vec<Op> = if s.ranks == 1 {
        (0..kc).map(|j| bank_op(partial(c, j), t)).collect()
    } else {
        let (input, output) = vars.cc[index];
        for j in 0..kc {
            let bank = partial(c, j);
            let part = sb.take(P, t);
            c.copy(P, &bank_op(bank, t), &part.all());
            let dst = Side::rows(format!("var{input}"), j * P * t * 4, t * 4, P);
            c.dma((&part.side(), Key::Sb(part.off)), (&dst, Key::Dram(input, 0)), t * 4, "float32");
        }
        c.all_reduce(input, output, s.d_model * t);
        (0..kc)
            .map(|j| {
                let tile = sb.take(P, t);
                let src = Side::rows(format!("var{output}"), j * P * t * 4, t * 4, P);
                c.dma((&src, Key::Dram(output, 0)), (&tile.side(), Key::Sb(tile.off)), t * 4, "float32");
                tile.all()
            })
            .collect()
    };
    h.iter()
        .zip(&sums)
        .map(|(hj, sum)| {
            let out = sb.take(P, t);
            c.tensor_tensor(Eng::Dve, "add", P, &hj.all(), sum, &out.all());
            out
        })
        .collect()
}

/// SBUF bytes per partition `phase`'s program needs.
pub(super) fn sbuf_bytes(s: &TpDecoderSpec, phase: Phase) -> usize {
    let vars = Vars::of(s, phase);
    let mut sb = Sbuf::default();
    core(s, phase, 0, &vars, &mut sb);
    sb.high - SB_BASE
}

fn definition(s: &TpDecoderSpec, phase: Phase, vars: &Vars) -> Result<DefJson, GenError> {
    let (ins, outs) = s.signatures(phase);
    let mut v = serde_json::Map::new();
    v.insert("SB".into(), json!({"type": "state-buffer", "var_id": VAR_SB}));
    for (sig, ty) in ins.iter().map(|x| (x, "input")).chain(outs.iter().map(|x| (x, "output"))) {
        let (id, _) = vars.io(&sig.name);
        let size = sig.shape.iter().product::<u64>() * 4;
        v.insert(sig.name.clone(), json!({"type": ty, "var_id": id, "size": size, "dtype": sig.dtype, "shape": sig.shape}));
    }
    let bytes = s.d_model * s.tokens(phase) * 4;
    for (l, &(input, output)) in vars.cc.iter().enumerate() {
        let what = if l % 2 == 0 { "attn" } else { "mlp" };
        v.insert(format!("cc_{what}_in_{}", l / 2), json!({"type": "shared", "var_id": input, "size": bytes}));
        v.insert(format!("cc_{what}_out_{}", l / 2), json!({"type": "shared", "var_id": output, "size": bytes}));
    }
    let list: Vec<u32> = (1..=(ins.len() + outs.len()) as u32).collect();
    v.insert("DGETable0".into(), json!({"type": "dge-table", "var_id": vars.dge, "list": list}));
    crate::sched::sp_definition(v, SP_QUEUE_SEM, s.ranks)
}

/// The NEFF of `phase`: one subgraph per physical core, subgraph `b`
/// running sequence `b`.
pub(super) fn neff(s: &TpDecoderSpec, phase: Phase) -> Result<Vec<u8>, GenError> {
    let vars = Vars::of(s, phase);
    let def = definition(s, phase, &vars)?;
    let (ins, outs) = s.signatures(phase);
    let dirs: Vec<String> = (0..s.lnc).map(|b| format!("sg{b:02}")).collect();
    let dir_refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let internal = |e: nrt_neff::NeffError| GenError::Internal(e.to_string());
    let mut w = NeffWriter::new();
    w.set_name(&format!("tp_decoder_{}_l{}_tp{}_lnc{}", phase.dir_name(), s.layers, s.ranks, s.lnc)).map_err(internal)?;
    w.set_lnc_size(s.lnc as u32);
    w.add_model_manifests(&dir_refs, &ins, &outs, "cayman").map_err(internal)?;
    for (b, dir) in dirs.iter().enumerate() {
        let mut sb = Sbuf::default();
        let streams = core(s, phase, b, &vars, &mut sb).finish();
        let engines = streams
            .iter()
            .map(|(e, st)| {
                let instructions = nrt_isa::asm::assemble(st.text()).map_err(|err| GenError::Internal(format!("{e:?} stream: {err}")))?;
                Ok(EngineFiles { engine: *e, json: Default::default(), instructions })
            })
            .collect::<Result<Vec<_>, GenError>>()?;
        w.add_subgraph(dir, &def, &engines).map_err(internal)?;
    }
    w.to_bytes().map_err(internal)
}
