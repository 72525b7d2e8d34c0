//! A tensor-parallel (Megatron-style) two-layer mlp, one NEFF per rank:
//! `output0 = relu(x @ W1 + b1) @ W2 + b2`, float32, with the hidden
//! dimension split over the ranks.
//!
//! Rank `r` of `n` holds the hidden units `r·H/n .. (r+1)·H/n`: the columns
//! of W1 and b1 (column-parallel), the rows of W2 (row-parallel). It
//! computes its partial `y_r = relu(x @ W1_r + b1_r) @ W2_r`, and one
//! in-NEFF all-reduce (PSEUDO_TRIGGER_COLLECTIVE, add, float32) sums the
//! partials, so every rank's `output0` holds the whole mlp. b2 is folded
//! into rank 0's partial (its second-layer activation adds it), so the
//! all-reduce's output is the result and no engine works after the
//! collective: `(y_0 + b2) + y_1 + ...`, the same sum as adding b2
//! afterwards up to fp32 rounding order. With one rank there is no
//! collective and the NEFF is the single-core mlp.
//!
//! The program, in the transposed orientation of `examples/mlp` (the
//! hidden and output features on partitions, so ACT takes the biases as
//! its per-partition operand and layer 1's result is directly layer 2's
//! moving operand):
//!
//! 1. SP loads x (row `i` on partition `i`), the rank's W1 and W2 shards
//!    (one K-tile of 128 rows per DMA, row `k` on partition `k % 128`) and
//!    the biases transposed (`bᵀ[p][t] = b[128t + p]`, one DMA with a run
//!    per 128-chunk), by 0xD4 records on its dynamic queue set.
//! 2. POOL transposes x into xᵀ tiles (partition = input feature).
//! 3. PE, layer 1: per hidden chunk of 128, LDWEIGHTS / MATMUL over the
//!    input K-tiles accumulate hᵀ into PSUM bank `chunk`; ACT writes
//!    `relu(psum + b1)` to SBUF.
//! 4. PE, layer 2: per output chunk of 128, the hidden chunks of this rank
//!    accumulate yᵀ into PSUM (the layer-1 banks, free once ACT has read
//!    them all); ACT writes `psum (+ b2 on rank 0)`.
//! 5. POOL transposes yᵀ back to rows; SP copies them to the `shared` var
//!    `cc_in`, triggers the all-reduce into `cc_out`, and copies that to
//!    `output0` (with one rank: straight from SBUF to `output0`).

use crate::GenError;
use crate::dma_side::{Side, dma2d};
use crate::sched::{QueueSet, SEM_ACT, SEM_PE, Stream, Wait};
use nrt_neff::{DefJson, EngineFiles, EngineKind, NeffWriter, TensorSignature, npy::encode_npy};
use serde_json::json;

/// Partitions (PE rows and columns, the transpose tile).
const P: usize = 128;
/// Bytes of one PSUM bank per partition.
const BANK: usize = 2048;
/// PSUM banks per partition.
const BANKS: usize = 8;
/// PSUM in compute-operand addresses.
const PSUM_BASE: usize = 0x200_0000;
/// First SBUF byte used in each partition.
const SB_BASE: usize = 0x1000;
/// SBUF bytes per partition the program may use.
const SB_LIMIT: usize = 0x37000;
/// DMA-operand partition stride of the state buffer.
const SB_STRIDE: usize = 0x40000;
/// Completion semaphore of POOL's transposes.
const SEM_POOL: u32 = 7;
/// Semaphore the collective raises when its output is complete.
const SEM_CC: u32 = 3;
/// First semaphore of SP's dynamic queue set.
const SP_QUEUE_SEM: u32 = 8;
/// Rows of a 0xD4 record at least (one packet per DMA engine).
const MIN_DMA_ROWS: usize = 16;

/// Var ids.
const VAR_SB: u32 = 0;
const VAR_X: u32 = 1;
const VAR_OUT: u32 = 2;
const VAR_W1: u32 = 3;
const VAR_B1: u32 = 4;
const VAR_W2: u32 = 5;
const VAR_B2: u32 = 6;
const VAR_CC_IN: u32 = 7;
const VAR_CC_OUT: u32 = 8;
const VAR_DGE: u32 = 9;

/// The shape of a tensor-parallel mlp: x [m, d] -> hidden h -> output0 [m, d].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpMlpSpec {
    /// Rows of x and output0 (the batch): 16..=128, on partitions.
    pub m: usize,
    /// Input and output features (a multiple of 128).
    pub d: usize,
    /// Hidden units (a multiple of 128 · ranks).
    pub h: usize,
    /// Ranks the hidden units are split over (the NEFFs' world).
    pub ranks: usize,
}

/// The whole (unsharded) mlp's constants, row-major float32.
#[derive(Clone, Debug, PartialEq)]
pub struct MlpWeights {
    /// W1 [d, h].
    pub w1: Vec<f32>,
    /// b1 [h].
    pub b1: Vec<f32>,
    /// W2 [h, d].
    pub w2: Vec<f32>,
    /// b2 [d].
    pub b2: Vec<f32>,
}

impl TpMlpSpec {
    /// Hidden units per rank.
    pub fn shard(&self) -> usize {
        self.h / self.ranks.max(1)
    }

    /// Checks the shape; the message names the bad parameter and what is accepted.
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |s: String| Err(GenError::Param(s));
        if !(MIN_DMA_ROWS..=P).contains(&self.m) {
            return bad(format!("m = {} must be in {MIN_DMA_ROWS}..={P} (x's rows sit on the partitions; a DMA moves at least {MIN_DMA_ROWS} rows)", self.m));
        }
        if self.d == 0 || !self.d.is_multiple_of(P) {
            return bad(format!("d = {} must be a positive multiple of {P}", self.d));
        }
        if self.ranks == 0 || self.ranks > 64 {
            return bad(format!("ranks = {} must be in 1..=64", self.ranks));
        }
        if self.h == 0 || !self.h.is_multiple_of(P * self.ranks) {
            return bad(format!("h = {} must be a positive multiple of {P} x ranks ({}): every rank holds whole 128-unit chunks", self.h, P * self.ranks));
        }
        let banks = (self.shard() / P).max(self.d / P);
        if banks > BANKS {
            return bad(format!("{} hidden units per rank and d = {} need {banks} PSUM banks; a core has {BANKS} (at most {} per rank and per output)", self.shard(), self.d, BANKS * P));
        }
        let end = Layout::of(self).end;
        if end > SB_LIMIT {
            return bad(format!("the shards need {end:#x} bytes of each SBUF partition; {SB_LIMIT:#x} are available"));
        }
        Ok(())
    }
}

impl MlpWeights {
    fn check(&self, s: &TpMlpSpec) -> Result<(), GenError> {
        for (name, got, want) in [("w1", self.w1.len(), s.d * s.h), ("b1", self.b1.len(), s.h), ("w2", self.w2.len(), s.h * s.d), ("b2", self.b2.len(), s.d)] {
            if got != want {
                return Err(GenError::Param(format!("{name} has {got} elements; the spec needs {want}")));
            }
        }
        Ok(())
    }

    /// Rank `r`'s shards: W1[:, cols], b1[cols], W2[cols, :] for its hidden columns.
    fn shards(&self, s: &TpMlpSpec, r: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (hr, c0) = (s.shard(), r * s.shard());
        let w1 = (0..s.d).flat_map(|k| self.w1[k * s.h + c0..k * s.h + c0 + hr].iter().copied()).collect();
        let b1 = self.b1[c0..c0 + hr].to_vec();
        let w2 = self.w2[c0 * s.d..(c0 + hr) * s.d].to_vec();
        (w1, b1, w2)
    }
}

/// Byte offsets of each SBUF region inside a partition.
struct Layout {
    x: usize,
    xt: usize,
    w1: usize,
    b1t: usize,
    ht: usize,
    w2: usize,
    b2t: usize,
    yt: usize,
    y: usize,
    end: usize,
}

impl Layout {
    fn of(s: &TpMlpSpec) -> Layout {
        let (kt, ht, m4) = (s.d / P, s.shard() / P, s.m * 4);
        let mut at = SB_BASE;
        let mut take = |bytes: usize| {
            let here = at;
            at = (at + bytes).next_multiple_of(0x100);
            here
        };
        let x = take(s.d * 4);
        let xt = take(kt * m4);
        let w1 = take(kt * s.shard() * 4);
        let b1t = take(ht * 4);
        let htr = take(ht * m4);
        let w2 = take(ht * s.d * 4);
        let b2t = take(kt * 4);
        let yt = take(kt * m4);
        let y = take(s.d * 4);
        Layout { x, xt, w1, b1t, ht: htr, w2, b2t, yt, y, end: at }
    }
}

fn sb(offset: usize, rows: usize) -> Side {
    Side::rows(format!("var{VAR_SB}"), offset, SB_STRIDE, rows)
}

fn var(id: u32, offset: usize, step: usize, rows: usize) -> Side {
    Side::rows(format!("var{id}"), offset, step, rows)
}

/// Rows of an input or output, reached through DGE-table entry `entry`
/// (their addresses change every execution).
fn dge(entry: usize, step: usize, rows: usize) -> Side {
    Side::rows(format!("dge{entry}"), 0, step, rows)
}

fn dma(w: Wait, src: &Side, dst: &Side, run_bytes: usize) -> String {
    dma2d(w.sem, crate::sched::DMA_SEM_ADD, src, dst, run_bytes, "float32", "float32")
}

/// `b` [chunks·128] as `bᵀ[p][t] = b[128t + p]`: 128 rows of one float per chunk.
fn bias_dma(w: Wait, file: u32, chunks: usize, to: usize) -> String {
    let src = Side { at: format!("var{file}"), offset: 0, step: 4, rows: P, run_step: P * 4, runs: chunks };
    let dst = Side { at: format!("var{VAR_SB}"), offset: to, step: SB_STRIDE, rows: P, run_step: 4, runs: chunks };
    dma(w, &src, &dst, 4)
}

/// A contiguous 3-D compute pattern of `n` elements at `addr`.
fn pattern(addr: usize, n: usize) -> String {
    format!("[{addr:#x}; 1,{n}; 0,1; 0,1]")
}

/// The reversed stationary walk of the 128 elements starting at `first`.
fn weights(first: usize) -> String {
    format!("[{:#x}; -1,{P}; 0,1; 0,1]", first + (P - 1) * 4)
}

fn accumulate(t: usize, tiles: usize) -> &'static str {
    match (t == 0, t + 1 == tiles) {
        (true, true) => "single",
        (true, false) => "start",
        (false, true) => "stop",
        (false, false) => "mid",
    }
}

/// The four engine streams of rank `rank`.
struct Program {
    sp: Stream,
    pool: Stream,
    pe: Stream,
    act: Stream,
}

fn program(s: &TpMlpSpec, rank: usize) -> Program {
    let l = Layout::of(s);
    let (m, d, hr) = (s.m, s.d, s.shard());
    let (kt, ht) = (d / P, hr / P);
    let at = |sem, value| Wait { sem, value };
    let (mut sp, mut pool, mut pe, mut act) = (Stream::new(), Stream::new(), Stream::new(), Stream::new());
    let mut q = QueueSet::new(SP_QUEUE_SEM);
    let (mut n_pool, mut n_pe, mut n_act) = (0u32, 0u32, 0u32);

    // 1. Loads.
    let wx = q.issue();
    sp.push(&dma(wx, &dge(0, d * 4, m), &sb(l.x, m), d * 4), &[]);
    let ww1: Vec<Wait> = (0..kt)
        .map(|t| {
            let w = q.issue();
            sp.push(&dma(w, &var(VAR_W1, t * P * hr * 4, hr * 4, P), &sb(l.w1 + t * hr * 4, P), hr * 4), &[]);
            w
        })
        .collect();
    let wb1 = q.issue();
    sp.push(&bias_dma(wb1, VAR_B1, ht, l.b1t), &[]);
    let ww2: Vec<Wait> = (0..ht)
        .map(|t| {
            let w = q.issue();
            sp.push(&dma(w, &var(VAR_W2, t * P * d * 4, d * 4, P), &sb(l.w2 + t * d * 4, P), d * 4), &[]);
            w
        })
        .collect();
    let wb2 = (rank == 0).then(|| {
        let w = q.issue();
        sp.push(&bias_dma(w, VAR_B2, kt, l.b2t), &[]);
        w
    });

    // 2. xᵀ tiles.
    for t in 0..kt {
        pool.push(
            &format!("transpose in_dtype=float32 out_dtype=float32 partitions={m} input={} output={} update=sem{SEM_POOL}++", pattern(l.x + t * P * 4, P), pattern(l.xt + t * m * 4, m)),
            &[wx],
        );
        n_pool += 1;
    }

    // 3. Layer 1: hᵀ chunk c = relu(W1[:, c]ᵀ · xᵀ + b1[c]).
    act.push("act_table_load", &[]);
    for c in 0..ht {
        for (t, &loaded) in ww1.iter().enumerate() {
            let w = if c == 0 { vec![loaded, at(SEM_POOL, t as u32 + 1)] } else { vec![] };
            pe.push(&format!("ldweights weights={} dtype=float32 rows={P} cols={P} row_mask=15 col_mask=15", weights(l.w1 + t * hr * 4 + c * P * 4)), &w);
            let done = if t + 1 == kt { format!(" update=sem{SEM_PE}++") } else { String::new() };
            pe.push(
                &format!(
                    "matmul moving={} dtype=float32 rows={P} cols={P} accumulate={} row_mask=15 col_mask=15 psum={}{done}",
                    pattern(l.xt + t * m * 4, m),
                    accumulate(t, kt),
                    pattern(PSUM_BASE + c * BANK, m)
                ),
                &[],
            );
        }
        n_pe += 1;
        act.push(
            &format!(
                "activate func=relu in_dtype=float32 out_dtype=float32 partitions={P} input={} output={} scale=1.0 bias=0.0 bias_addr={:#x} bias_from_sbuf=true update=sem{SEM_ACT}++",
                pattern(PSUM_BASE + c * BANK, m),
                pattern(l.ht + c * m * 4, m),
                l.b1t + c * 4
            ),
            &[at(SEM_PE, n_pe), if c == 0 { wb1 } else { at(SEM_ACT, 0) }],
        );
        n_act += 1;
    }

    // 4. Layer 2: yᵀ chunk c = W2[:, c]ᵀ · hᵀ (+ b2[c] on rank 0), in the
    //    layer-1 banks once ACT has read them all.
    let hidden_done = at(SEM_ACT, n_act);
    for c in 0..kt {
        for (t, &loaded) in ww2.iter().enumerate() {
            let w = match (c, t) {
                (0, 0) => vec![loaded, hidden_done],
                (0, _) => vec![loaded],
                _ => vec![],
            };
            pe.push(&format!("ldweights weights={} dtype=float32 rows={P} cols={P} row_mask=15 col_mask=15", weights(l.w2 + t * d * 4 + c * P * 4)), &w);
            let done = if t + 1 == ht { format!(" update=sem{SEM_PE}++") } else { String::new() };
            pe.push(
                &format!(
                    "matmul moving={} dtype=float32 rows={P} cols={P} accumulate={} row_mask=15 col_mask=15 psum={}{done}",
                    pattern(l.ht + t * m * 4, m),
                    accumulate(t, ht),
                    pattern(PSUM_BASE + c * BANK, m)
                ),
                &[],
            );
        }
        n_pe += 1;
        let (bias, mut w) = match wb2 {
            Some(b) => (format!("bias_addr={:#x} bias_from_sbuf=true", l.b2t + c * 4), vec![b]),
            None => (String::new(), vec![]),
        };
        w.push(at(SEM_PE, n_pe));
        act.push(
            &format!(
                "activate func=identity in_dtype=float32 out_dtype=float32 partitions={P} input={} output={} scale=1.0 bias=0.0 {bias} update=sem{SEM_ACT}++",
                pattern(PSUM_BASE + c * BANK, m),
                pattern(l.yt + c * m * 4, m)
            ),
            &w,
        );
        n_act += 1;
        // 5. Back to rows: y[i][128c + j] on partition i.
        pool.push(
            &format!("transpose in_dtype=float32 out_dtype=float32 partitions={P} input={} output={} update=sem{SEM_POOL}++", pattern(l.yt + c * m * 4, m), pattern(l.y + c * P * 4, P)),
            &[at(SEM_ACT, n_act)],
        );
        n_pool += 1;
    }
    let y_ready = at(SEM_POOL, n_pool);
    let rows = |id: u32| var(id, 0, d * 4, m);
    if s.ranks == 1 {
        let w = q.issue();
        sp.push(&dma(w, &sb(l.y, m), &dge(1, d * 4, m), d * 4), &[y_ready]);
    } else {
        let w = q.issue();
        sp.push(&dma(w, &sb(l.y, m), &rows(VAR_CC_IN), d * 4), &[y_ready]);
        sp.push(
            &format!(
                "trigger_collective op=add dtype=float32 group_id=0 input_tensor={VAR_CC_IN} output_tensor={VAR_CC_OUT} num_elements={} collective=all_reduce update=sem{SEM_CC}++",
                m * d
            ),
            &[w],
        );
        let w = q.issue();
        sp.push(&dma(w, &rows(VAR_CC_OUT), &dge(1, d * 4, m), d * 4), &[at(SEM_CC, 1)]);
    }
    sp.finish(&q.all_done());
    Program { sp, pool, pe, act }
}

fn definition(s: &TpMlpSpec, rank: usize) -> Result<DefJson, GenError> {
    let (m, d, hr) = (s.m, s.d, s.shard());
    let mut vars = serde_json::Map::new();
    let file = |id: u32, name: &str, shape: &[usize]| {
        json!({"type": "file", "var_id": id, "size": shape.iter().product::<usize>() * 4, "dtype": "float32", "shape": shape, "file_name": format!("{name}.npy")})
    };
    vars.insert("SB".into(), json!({"type": "state-buffer", "var_id": VAR_SB}));
    vars.insert("x".into(), json!({"type": "input", "var_id": VAR_X, "size": m * d * 4, "dtype": "float32", "shape": [m, d]}));
    vars.insert("output0".into(), json!({"type": "output", "var_id": VAR_OUT, "size": m * d * 4, "dtype": "float32", "shape": [m, d]}));
    vars.insert("W1".into(), file(VAR_W1, "W1", &[d, hr]));
    vars.insert("b1".into(), file(VAR_B1, "b1", &[hr]));
    vars.insert("W2".into(), file(VAR_W2, "W2", &[hr, d]));
    if rank == 0 {
        vars.insert("b2".into(), file(VAR_B2, "b2", &[d]));
    }
    if s.ranks > 1 {
        vars.insert("cc_in".into(), json!({"type": "shared", "var_id": VAR_CC_IN, "size": m * d * 4}));
        vars.insert("cc_out".into(), json!({"type": "shared", "var_id": VAR_CC_OUT, "size": m * d * 4}));
    }
    vars.insert("DGETable0".into(), json!({"type": "dge-table", "var_id": VAR_DGE, "list": [VAR_X, VAR_OUT]}));
    crate::sched::sp_definition(vars, SP_QUEUE_SEM, s.ranks)
}

fn npy(shape: &[usize], v: &[f32]) -> Vec<u8> {
    let shape: Vec<u64> = shape.iter().map(|&n| n as u64).collect();
    encode_npy("<f4", &shape, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())
}

fn check(spec: &TpMlpSpec, weights: &MlpWeights, rank: usize) -> Result<(), GenError> {
    spec.validate()?;
    weights.check(spec)?;
    if rank >= spec.ranks {
        return Err(GenError::Param(format!("rank {rank} is not in 0..{}", spec.ranks)));
    }
    Ok(())
}

/// Rank `rank`'s constant members (archive path, `.npy` bytes): its shards
/// `sg00/W1.npy` [d, h/n], `sg00/b1.npy`, `sg00/W2.npy` [h/n, d], and on
/// rank 0 `sg00/b2.npy`. Separate from the NEFF so a source tree can
/// leave them out and have them generated.
pub fn tp_mlp_constants(spec: &TpMlpSpec, weights: &MlpWeights, rank: usize) -> Result<Vec<(String, Vec<u8>)>, GenError> {
    check(spec, weights, rank)?;
    let (d, hr) = (spec.d, spec.shard());
    let (w1, b1, w2) = weights.shards(spec, rank);
    let mut out = vec![("sg00/W1.npy".to_string(), npy(&[d, hr], &w1)), ("sg00/b1.npy".to_string(), npy(&[hr], &b1)), ("sg00/W2.npy".to_string(), npy(&[hr, d], &w2))];
    if rank == 0 {
        out.push(("sg00/b2.npy".to_string(), npy(&[d], &weights.b2)));
    }
    Ok(out)
}

/// Writes rank `rank`'s NEFF of `spec` with its shards of `weights`.
pub fn tp_mlp_neff(spec: &TpMlpSpec, weights: &MlpWeights, rank: usize) -> Result<Vec<u8>, GenError> {
    check(spec, weights, rank)?;
    let (m, d) = (spec.m, spec.d);
    let prog = program(spec, rank);
    let def = definition(spec, rank)?;
    let internal = |e: nrt_neff::NeffError| GenError::Internal(e.to_string());
    let engine = |e: EngineKind, s: &Stream| -> Result<EngineFiles, GenError> {
        let instructions = nrt_isa::asm::assemble(s.text()).map_err(|err| GenError::Internal(format!("{e:?} stream: {err}")))?;
        Ok(EngineFiles { engine: e, json: Default::default(), instructions })
    };
    let engines = [engine(EngineKind::Sp, &prog.sp)?, engine(EngineKind::Pool, &prog.pool)?, engine(EngineKind::Pe, &prog.pe)?, engine(EngineKind::Act, &prog.act)?];
    let sig = |name: &str| TensorSignature { name: name.into(), dtype: "float32".into(), shape: vec![m as u64, d as u64] };
    let mut w = NeffWriter::new();
    w.set_name(&format!("tp_mlp_{m}x{d}x{}_r{rank}of{}", spec.h, spec.ranks)).map_err(internal)?;
    w.add_model_manifests(&["sg00"], &[sig("x")], &[sig("output0")], "cayman").map_err(internal)?;
    for (path, bytes) in tp_mlp_constants(spec, weights, rank)? {
        w.add_member(&path, bytes).map_err(internal)?;
    }
    w.add_subgraph("sg00", &def, &engines).map_err(internal)?;
    w.to_bytes().map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ranks: usize) -> TpMlpSpec {
        TpMlpSpec { m: 128, d: 256, h: 512, ranks }
    }

    fn zeros(s: &TpMlpSpec) -> MlpWeights {
        MlpWeights { w1: vec![0.0; s.d * s.h], b1: vec![0.0; s.h], w2: vec![0.0; s.h * s.d], b2: vec![0.0; s.d] }
    }

    #[test]
    fn bad_shapes_are_named() {
        let err = |s: TpMlpSpec| s.validate().unwrap_err().to_string();
        assert!(err(TpMlpSpec { m: 8, ..spec(2) }).contains("m = 8"));
        assert!(err(TpMlpSpec { d: 100, ..spec(2) }).contains("d = 100"));
        assert!(err(TpMlpSpec { h: 384, ..spec(2) }).contains("h = 384"));
        assert!(err(TpMlpSpec { h: 2048, ..spec(1) }).contains("PSUM banks"));
        assert!(err(spec(0)).contains("ranks = 0"));
        let s = spec(2);
        let mut w = zeros(&s);
        w.b2.pop();
        assert!(tp_mlp_neff(&s, &w, 0).unwrap_err().to_string().contains("b2 has 255"));
        assert!(tp_mlp_neff(&s, &zeros(&s), 2).unwrap_err().to_string().contains("rank 2"));
    }

    #[test]
    fn each_rank_holds_its_shards_and_one_all_reduce() {
        let s = spec(2);
        let mut w = zeros(&s);
        // Mark each element with its index so the shards can be recognised.
        w.w1 = (0..s.d * s.h).map(|i| i as f32).collect();
        w.w2 = (0..s.h * s.d).map(|i| i as f32).collect();
        for r in 0..2 {
            let neff = nrt_neff::Neff::parse(&tp_mlp_neff(&s, &w, r).unwrap()).unwrap();
            let sg = &neff.subgraphs[0];
            assert_eq!(sg.def.var.contains_key("b2"), r == 0, "b2 lives on rank 0 only");
            let cc = nrt_neff::cc::CcConfig::from_def(&sg.def).unwrap();
            assert_eq!((cc.world_size, cc.replica_groups.clone()), (2, vec![vec![vec![0, 1]]]));
            let sp = sg.engine(EngineKind::Sp).unwrap();
            let triggers: Vec<_> = sp.instructions.chunks(64).filter_map(|c| nrt_isa::collective::CollectiveTrigger::decode(c.try_into().unwrap()).ok()).collect();
            assert_eq!(triggers.len(), 1);
            assert_eq!((triggers[0].num_elements, triggers[0].input_var, triggers[0].output_var), (128 * 256, VAR_CC_IN, VAR_CC_OUT));
            let (w1, _, w2) = w.shards(&s, r);
            assert_eq!(w1[0], (r * 256) as f32, "W1 row 0 starts at the rank's first hidden column");
            assert_eq!(w1[256], (512 + r * 256) as f32, "W1 row 1");
            assert_eq!(w2[0], (r * 256 * 256) as f32, "W2 starts at the rank's first hidden row");
        }
    }

    #[test]
    fn one_rank_is_a_plain_mlp_without_collectives() {
        let s = spec(1);
        let neff = nrt_neff::Neff::parse(&tp_mlp_neff(&s, &zeros(&s), 0).unwrap()).unwrap();
        let sg = &neff.subgraphs[0];
        assert!(!sg.def.var.contains_key("cc_in"));
        let sp = sg.engine(EngineKind::Sp).unwrap();
        assert!(sp.instructions.chunks(64).all(|c| c[0] != 0xC8));
    }
}
