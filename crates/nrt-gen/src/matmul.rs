//! `output0 = x @ y` in the compiler's encoding, tiled the way neuronx-cc
//! tiles the matmul samples (`real-isa-observed` §3.4 and §7).
//!
//! Per core (LNC 2 gives each core half of N, or half of M):
//!
//! 1. SP loads the identity constant into SBUF; Pool loads x in blocks of
//!    one PSUM bank's worth of 128-column tiles (partition = row m).
//! 2. PE transposes each tile against the identity (LDWEIGHTS/MATMUL with
//!    the transpose flag) into PSUM; ACT and DVE take turns copying each
//!    bank to an SBUF staging slot (as int32 pairs for 2-byte dtypes, as
//!    the compiler does); ACT spills the staged xᵀ to one `virtual` var
//!    per accumulation group through its own dynamic queue set.
//! 3. For each block of up to 2048 output columns: DVE fills an fp32
//!    accumulator per 512-column chunk (FILL 0x49); for each group of up
//!    to 32 K-tiles, SP reloads the group's xᵀ from its virtual var, Pool
//!    streams y tiles [128, block], PE loads each xᵀ tile once and runs
//!    one MATMUL per chunk into its own PSUM bank (accumulate start / mid
//!    / stop; two bank sets alternate between groups), and DVE adds each
//!    bank into its accumulator (TENSOR_TENSOR 0x41).
//! 4. ACT and DVE cast the accumulators to the output dtype (CAST 0x47)
//!    and Pool writes the block to output0.
//!
//! Every DMA is a 0xD4 record on the issuing engine's dynamic queue set,
//! round-robin over its 16 queues; inputs and outputs are reached through
//! the DGE table, SBUF, the constant and the spills by var id.
//!
//! On request ([`Prints`]) Pool prints tiles of x, y or output0 from the
//! device as they pass through SBUF: a DEBUG_TENSOR_READ (`debug_print`,
//! docs/isa.md §9) of each tile after its load lands (x, y) or before its
//! write starts (output0), named by [`print_prefix`].

use crate::GenError;
use crate::sched::{QueueSet, SEM_ACT, SEM_DVE, SEM_PE, Stream, Wait};
use nrt_isa::dtype::Dtype;
use nrt_neff::{DefJson, EngineFiles, EngineKind, NeffWriter, TensorSignature, npy::encode_npy};

/// Partitions: rows of a tile, PE rows and columns.
const P: usize = 128;
/// Bytes of one PSUM bank in a partition (512 fp32).
const BANK: usize = 2048;
/// PSUM in compute-operand addresses.
const PSUM_BASE: usize = 0x200_0000;
/// K-tiles per accumulation group (the compiler's 32).
const GROUP_TILES: usize = 32;
/// Output columns per PSUM bank (fp32).
const CHUNK: usize = 512;
/// Chunks per y block (one y DMA feeds this many MATMULs per LDWEIGHTS).
const BLOCK_CHUNKS: usize = 4;
/// y tile slots in SBUF.
const Y_SLOTS: usize = 4;
/// Staging slots for the xᵀ spill.
const STG_SLOTS: usize = 4;
/// First SBUF byte the generated layout uses in each partition.
const SB_BASE: usize = 0x1000;
/// SBUF bytes per partition the compiler allocates below (the runtime
/// keeps the top of the partition).
const SB_LIMIT: usize = 0x37000;
/// DMA-operand partition stride of the state buffer.
const SB_STRIDE: usize = 0x40000;
/// Var ids of the fixed vars.
const VAR_SB: usize = 0;
const VAR_IDENTITY: usize = 4;
const VAR_FIRST_SPILL: usize = 5;
/// Alignment of each spill var in the scratchpad.
const SPILL_ALIGN: usize = 4096;

/// How LNC 2 divides the work between the two cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Each core computes half of the output columns (the compiler's choice).
    N,
    /// Each core computes half of the output rows.
    M,
}

/// Which tensors the generated program prints from the device (NKI's
/// `device_print`): every tile of each one named, as it passes through
/// SBUF, goes to the debug stream of the model's logical core under the
/// prefix [`print_prefix`] gives it. With LNC 2 each core prints the
/// tiles it loads, so a tensor both cores load (x when N is split, y when
/// M is split) is printed twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prints {
    /// Each x tile Pool loads (128 rows by up to one PSUM bank of columns).
    pub x: bool,
    /// Each y tile Pool loads (128 rows by one block of up to 2048 columns).
    pub y: bool,
    /// Each output0 block before Pool writes it (128 rows by up to 2048 columns).
    pub output0: bool,
}

impl Prints {
    /// The tensors that can be printed, by name.
    pub const NAMES: [&str; 3] = ["x", "y", "output0"];

    /// The tensors `names` lists (each one of [`Prints::NAMES`]).
    pub fn of(names: &[impl AsRef<str>]) -> Result<Prints, GenError> {
        let mut p = Prints::default();
        for n in names {
            match n.as_ref() {
                "x" => p.x = true,
                "y" => p.y = true,
                "output0" => p.output0 = true,
                other => return Err(GenError::Param(format!("cannot print {other:?}: the matmul's tensors are {}", Prints::NAMES.join(", ")))),
            }
        }
        Ok(p)
    }
}

/// The prefix of a printed tile: the tensor's name and the row and column
/// of the tile's first element in the tensor (`output0.r128.c2048`). It
/// fits the record's 24 bytes: a tensor has at most 2^31 elements of 2
/// bytes or more ([`MatmulSpec::validate`]), so row and column have at
/// most 11 digits together.
pub fn print_prefix(tensor: &str, row: usize, col: usize) -> String {
    format!("{tensor}.r{row}.c{col}")
}

/// A matmul to generate: `x` [m, k] @ `y` [k, n] = `output0` [m, n].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulSpec {
    /// Rows of x and output0 (a multiple of 128).
    pub m: usize,
    /// Contraction size (a multiple of 128).
    pub k: usize,
    /// Columns of y and output0.
    pub n: usize,
    /// Element type of x, y and output0 (float16, bfloat16 or float32).
    pub dtype: Dtype,
    /// Logical NeuronCore size: 1 or 2 cores.
    pub lnc: usize,
    /// How LNC 2 divides the work.
    pub split: Split,
    /// The tensors printed from the device (none by default).
    pub prints: Prints,
}

impl MatmulSpec {
    /// Checks the parameters; the message names the bad one and what is accepted.
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |s: String| Err(GenError::Param(s));
        if !matches!(self.dtype, Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float32) {
            return bad(format!("dtype {} is not supported; expected float16, bfloat16 or float32", self.dtype.name()));
        }
        if self.m == 0 || !self.m.is_multiple_of(P) {
            return bad(format!("m = {} must be a positive multiple of {P} (the partitions)", self.m));
        }
        if self.k == 0 || !self.k.is_multiple_of(P) {
            return bad(format!("k = {} must be a positive multiple of {P} (the PE rows)", self.k));
        }
        if self.n == 0 {
            return bad("n must be positive".into());
        }
        if !matches!(self.lnc, 1 | 2) {
            return bad(format!("lnc = {} must be 1 or 2", self.lnc));
        }
        if self.lnc == 2 {
            match self.split {
                Split::N if !self.n.is_multiple_of(2) => return bad(format!("n = {} must be even to split N over 2 cores", self.n)),
                Split::M if !(self.m / P).is_multiple_of(2) => {
                    return bad(format!("m = {} must be a multiple of 256 to split M over 2 cores", self.m));
                }
                _ => {}
            }
        }
        let es = self.dtype.size_bytes() as u64;
        for (name, elems) in [("x", self.m * self.k), ("y", self.k * self.n), ("output0", self.m * self.n)] {
            if elems as u64 * es > 1 << 32 {
                return bad(format!("{name} is {} bytes; a DMA offset is 32 bits, so each tensor may have at most 4 GiB", elems as u64 * es));
            }
        }
        if self.n * es as usize > u32::MAX as usize / P {
            return bad(format!("n = {} makes a row pitch too large", self.n));
        }
        Ok(())
    }
}

/// One core's share: output rows `m0..m0 + mt·128` and columns `n0..n0 + nc`.
#[derive(Clone, Copy)]
struct Share {
    m0: usize,
    mt: usize,
    n0: usize,
    nc: usize,
}

/// The five streams and the spill vars of one core.
struct CoreProgram {
    pool: Stream,
    pe: Stream,
    act: Stream,
    dve: Stream,
    sp: Stream,
    /// (var id, size, scratchpad offset) of each spill var.
    spills: Vec<(usize, usize, usize)>,
}

/// One side of a 0xD4 record: reference, byte offset, row step.
struct Side<'a> {
    at: &'a str,
    offset: usize,
    step: usize,
}

fn dma(w: Wait, src: Side<'_>, dst: Side<'_>, row_bytes: usize, dt: &str) -> String {
    format!(
        "dma2d flags=0 sem={} sem_add=16 src=[{}+{:#x}; {:#x},{P}; 0x1,1; {row_bytes}] dst=[{}+{:#x}; {:#x},{P}; 0x1,1; {row_bytes}] src_dtype={dt} dst_dtype={dt}",
        w.sem, src.at, src.offset, src.step, dst.at, dst.offset, dst.step
    )
}

fn sb(offset: usize) -> Side<'static> {
    Side { at: "var0", offset, step: SB_STRIDE }
}

/// A Pool DEBUG_TENSOR_READ of the 128-partition tile of `n` elements at
/// SBUF offset `addr`.
fn print_tile(addr: usize, n: usize, dt: &str, prefix: &str) -> String {
    format!("debug_print dtype={dt} partitions={P} input={} prefix=\"{prefix}\"", pattern(addr, n))
}

/// A 4-D ACT/DVE frame of `n` contiguous elements at `addr`.
fn frame(addr: usize, n: usize) -> String {
    format!("[{addr:#x}; 1,{n}; 1,1; 1,1; 1,1]")
}

/// A 3-D PE/DVE pattern of `n` contiguous elements at `addr`.
fn pattern(addr: usize, n: usize) -> String {
    format!("[{addr:#x}; 1,{n}; 0,1; 0,1]")
}

/// The compiler's reversed stationary walk of the 128 elements ending at `last`.
fn weights(last: usize) -> String {
    format!("[{last:#x}; -1,32; 0,1; -32,4]")
}

fn core_program(s: &MatmulSpec, sh: Share) -> Result<CoreProgram, GenError> {
    let es = s.dtype.size_bytes();
    let dt = s.dtype.name();
    let (k, n, kt, mt) = (s.k, s.n, s.k / P, sh.mt);
    let tpb = BANK / (P * es);
    let gtiles = GROUP_TILES.min(kt);
    let groups: Vec<(usize, usize)> = (0..kt).step_by(gtiles).map(|t0| (t0, gtiles.min(kt - t0))).collect();
    let bcols = (CHUNK * BLOCK_CHUNKS).min(sh.nc);
    let blocks: Vec<(usize, usize)> = (0..sh.nc).step_by(bcols).map(|c0| (c0, bcols.min(sh.nc - c0))).collect();

    // SBUF layout (bytes in each partition).
    let idn = SB_BASE;
    let xs = idn + 0x200;
    let stg = xs + 2 * BANK;
    let xt = stg + STG_SLOTS * BANK;
    let xt_slot = gtiles * P * es;
    let y = (xt + 2 * xt_slot).next_multiple_of(0x100);
    let y_slot = bcols * es;
    let acc = (y + Y_SLOTS * y_slot).next_multiple_of(0x100);
    let out = acc + BLOCK_CHUNKS * BANK;
    if out + bcols * es > SB_LIMIT {
        return Err(GenError::Internal(format!("the SBUF layout needs {:#x} bytes per partition", out + bcols * es)));
    }

    let mut spills = Vec::new();
    let mut off = 0;
    for (g, (_, gt)) in groups.iter().enumerate() {
        let size = P * mt * gt * P * es;
        spills.push((VAR_FIRST_SPILL + g, size, off));
        off = (off + size).next_multiple_of(SPILL_ALIGN);
    }
    let spill = |g: usize| format!("var{}", VAR_FIRST_SPILL + g);

    let (mut pool, mut pe, mut act, mut dve, mut sp) = (Stream::new(), Stream::new(), Stream::new(), Stream::new(), Stream::new());
    act.push("act_table_load", &[]);
    let mut pool_q = QueueSet::new(24);
    let mut sp_q = QueueSet::new(8);
    let mut act_q = QueueSet::new(40);
    let (mut s4, mut s5, mut s6) = (0u32, 0u32, 0u32);
    let at = |sem, value| Wait { sem, value };

    // 1. The identity.
    let idn_done = sp_q.issue();
    sp.push(&dma(idn_done, Side { at: &format!("var{VAR_IDENTITY}"), offset: 0, step: P * es }, sb(idn), P * es, dt), &[]);

    // 2. xᵀ: transpose, stage, spill.
    let mut xs_free = [0u32; 2];
    let mut tb_free = [at(SEM_ACT, 0); 2];
    let mut stg_free = [at(SEM_ACT, 0); STG_SLOTS];
    let mut blk = 0usize;
    for i in 0..mt {
        for (g, &(t0, gt)) in groups.iter().enumerate() {
            for b0 in (0..gt).step_by(tpb) {
                let nt = tpb.min(gt - b0);
                let (slot, tb, st) = (blk % 2, blk % 2, blk % STG_SLOTS);
                let xw = pool_q.issue();
                let xoff = ((sh.m0 + i * P) * k + (t0 + b0) * P) * es;
                pool.push(&dma(xw, Side { at: "dge0", offset: xoff, step: k * es }, sb(xs + slot * BANK), nt * P * es, dt), &[at(SEM_PE, xs_free[slot])]);
                if s.prints.x {
                    // Pool's next load into the slot comes after the print.
                    pool.push(&print_tile(xs + slot * BANK, nt * P, dt, &print_prefix("x", sh.m0 + i * P, (t0 + b0) * P)), &[xw]);
                }
                for tl in 0..nt {
                    let mut w = Vec::new();
                    if tl == 0 {
                        w.push(xw);
                        if blk == 0 {
                            w.push(idn_done);
                        }
                    }
                    let last = xs + slot * BANK + tl * P * es + (P - 1) * es;
                    pe.push(&format!("ldweights weights={} dtype={dt} transpose=true rows=128 cols=128 row_mask=15 col_mask=15", weights(last)), &w);
                    let bank_free = if tl == 0 { vec![tb_free[tb]] } else { vec![] };
                    let psum = PSUM_BASE + tb * BANK + tl * P * es;
                    pe.push(
                        &format!("matmul moving={} dtype={dt} transpose=true rows=128 cols=128 accumulate=single row_mask=15 col_mask=15 psum={} update=sem5++", pattern(idn, P), pattern(psum, P)),
                        &bank_free,
                    );
                    s5 += 1;
                }
                xs_free[slot] = s5;
                let words = nt * P * es / 4;
                let cdt = if es == 4 { dt } else { "int32" };
                let line = format!(
                    "copy src={} in_dtype={cdt} out_dtype={cdt} partitions=128 dst={}",
                    frame(PSUM_BASE + tb * BANK, words),
                    frame(stg + st * BANK, words)
                );
                let copied = if blk.is_multiple_of(2) {
                    act.push(&format!("{line} update=sem4++"), &[at(SEM_PE, s5), stg_free[st]]);
                    s4 += 1;
                    at(SEM_ACT, s4)
                } else {
                    dve.push(&format!("{line} update=sem6++"), &[at(SEM_PE, s5), stg_free[st]]);
                    s6 += 1;
                    at(SEM_DVE, s6)
                };
                tb_free[tb] = copied;
                let vw = act_q.issue();
                let dst = Side { at: &spill(g), offset: (i * gt + b0) * P * es, step: mt * gt * P * es };
                act.push(&dma(vw, sb(stg + st * BANK), dst, nt * P * es, dt), &[copied]);
                stg_free[st] = vw;
                blk += 1;
            }
        }
    }

    // 3./4. The matmul proper.
    let mut phase_waits = vec![at(SEM_ACT, s4), at(SEM_DVE, s6)];
    let mut reload_waits = act_q.all_done();
    let mut xt_free = [0u32; 2];
    let mut y_free = [0u32; Y_SLOTS];
    let mut bank_free = [at(SEM_DVE, 0); 2];
    let mut acc_free = [at(SEM_ACT, 0); BLOCK_CHUNKS];
    let mut out_free = at(SEM_ACT, 0);
    let (mut q, mut rl, mut gi) = (0usize, 0usize, 0usize);
    for i in 0..mt {
        for &(c0, bw) in &blocks {
            let chunks: Vec<(usize, usize)> = (0..bw).step_by(CHUNK).map(|o| (o, CHUNK.min(bw - o))).collect();
            for (c, &(_, cw)) in chunks.iter().enumerate() {
                dve.push(
                    &format!("fill imm=0.0 count={cw} in_dtype=float32 out_dtype=float32 partitions=128 dst={} update=sem6++", frame(acc + c * BANK, cw)),
                    &[acc_free[c]],
                );
                s6 += 1;
            }
            for (g, &(t0, gt)) in groups.iter().enumerate() {
                let xslot = rl % 2;
                let rw = sp_q.issue();
                let mut w = std::mem::take(&mut reload_waits);
                w.push(at(SEM_PE, xt_free[xslot]));
                let src = Side { at: &spill(g), offset: i * gt * P * es, step: mt * gt * P * es };
                sp.push(&dma(rw, src, sb(xt + xslot * xt_slot), gt * P * es, dt), &w);
                rl += 1;
                let set = gi % 2;
                for tl in 0..gt {
                    let ys = q % Y_SLOTS;
                    let yw = pool_q.issue();
                    let yoff = ((t0 + tl) * P * n + sh.n0 + c0) * es;
                    pool.push(&dma(yw, Side { at: "dge1", offset: yoff, step: n * es }, sb(y + ys * y_slot), bw * es, dt), &[at(SEM_PE, y_free[ys])]);
                    if s.prints.y {
                        pool.push(&print_tile(y + ys * y_slot, bw, dt, &print_prefix("y", (t0 + tl) * P, sh.n0 + c0)), &[yw]);
                    }
                    let mut w = std::mem::take(&mut phase_waits);
                    w.push(yw);
                    if tl == 0 {
                        w.push(rw);
                    }
                    let last = xt + xslot * xt_slot + tl * P * es + (P - 1) * es;
                    pe.push(&format!("ldweights weights={} dtype={dt} transpose=false rows=128 cols=128 row_mask=15 col_mask=15", weights(last)), &w);
                    for (c, &(co, cw)) in chunks.iter().enumerate() {
                        let flag = match (tl == 0, tl + 1 == gt) {
                            (true, true) => "single",
                            (true, false) => "start",
                            (false, true) => "stop",
                            (false, false) => "mid",
                        };
                        let w = if tl == 0 && c == 0 { vec![bank_free[set]] } else { vec![] };
                        let psum = PSUM_BASE + (set * BLOCK_CHUNKS + c) * BANK;
                        pe.push(
                            &format!(
                                "matmul moving={} dtype={dt} transpose=false rows=128 cols=128 accumulate={flag} row_mask=15 col_mask=15 psum={} update=sem5++",
                                pattern(y + ys * y_slot + co * es, cw),
                                pattern(psum, cw)
                            ),
                            &w,
                        );
                        s5 += 1;
                    }
                    y_free[ys] = s5;
                    q += 1;
                }
                xt_free[xslot] = s5;
                for (c, &(_, cw)) in chunks.iter().enumerate() {
                    let psum = PSUM_BASE + (set * BLOCK_CHUNKS + c) * BANK;
                    let a = pattern(acc + c * BANK, cw);
                    dve.push(
                        &format!("tensor_tensor in_dtypes=float32/float32 out_dtype=float32 op=add partitions=128 in0={} in1={a} out={a} update=sem6++", pattern(psum, cw)),
                        &[at(SEM_PE, s5)],
                    );
                    s6 += 1;
                }
                bank_free[set] = at(SEM_DVE, s6);
                gi += 1;
            }
            for (c, &(co, cw)) in chunks.iter().enumerate() {
                let line = format!("cast src={} in_dtype=float32 out_dtype={dt} partitions=128 dst={}", frame(acc + c * BANK, cw), frame(out + co * es, cw));
                if c.is_multiple_of(2) {
                    act.push(&format!("{line} update=sem4++"), &[out_free, at(SEM_DVE, s6)]);
                    s4 += 1;
                    acc_free[c] = at(SEM_ACT, s4);
                } else {
                    dve.push(&format!("{line} update=sem6++"), &[out_free]);
                    s6 += 1;
                    acc_free[c] = at(SEM_DVE, s6);
                }
            }
            if s.prints.output0 {
                // ACT and DVE write the next block here only after the write below.
                pool.push(&print_tile(out, bw, dt, &print_prefix("output0", sh.m0 + i * P, sh.n0 + c0)), &[at(SEM_ACT, s4), at(SEM_DVE, s6)]);
            }
            let ow = pool_q.issue();
            let ooff = ((sh.m0 + i * P) * n + sh.n0 + c0) * es;
            pool.push(&dma(ow, sb(out), Side { at: "dge2", offset: ooff, step: n * es }, bw * es, dt), &[at(SEM_ACT, s4), at(SEM_DVE, s6)]);
            out_free = ow;
        }
    }
    pool.finish(&pool_q.all_done());
    sp.finish(&sp_q.all_done());
    act.finish(&act_q.all_done());
    Ok(CoreProgram { pool, pe, act, dve, sp, spills })
}

/// The def.json of one core.
fn definition(s: &MatmulSpec, prog: &CoreProgram) -> Result<DefJson, GenError> {
    let es = s.dtype.size_bytes();
    let mut vars = serde_json::Map::new();
    vars.insert("SB".into(), serde_json::json!({"type": "state-buffer", "var_id": VAR_SB}));
    vars.insert("x".into(), serde_json::json!({"type": "input", "var_id": 1, "size": s.m * s.k * es}));
    vars.insert("y".into(), serde_json::json!({"type": "input", "var_id": 2, "size": s.k * s.n * es}));
    vars.insert("output0".into(), serde_json::json!({"type": "output", "var_id": 3, "size": s.m * s.n * es}));
    vars.insert(
        "identity".into(),
        serde_json::json!({"type": "file", "var_id": VAR_IDENTITY, "file_name": IDENTITY_FILE, "size": P * P * es, "alignment": 32768}),
    );
    for &(id, size, off) in &prog.spills {
        vars.insert(format!("spill_{id}"), serde_json::json!({"type": "virtual", "var_id": id, "size": size, "backing_variable_off": off}));
    }
    let dge = VAR_FIRST_SPILL + prog.spills.len();
    vars.insert("DGETable0".into(), serde_json::json!({"type": "dge-table", "var_id": dge, "list": [1, 2, 3]}));
    let set = |owner: &str, first: u32| serde_json::json!({"type": "dynamic", "num_queues": 16, "owner": owner, "fabric_path": "main", "semaphore_set": (first..first + 16).collect::<Vec<u32>>()});
    serde_json::from_value(serde_json::json!({
        "var": vars,
        "dma_queue": {"qPoolDynamic": set("pool", 24), "qSPDynamicHW": set("sp", 8), "qActDynamicHW": set("act", 40)},
    }))
    .map_err(|e| GenError::Internal(format!("def.json: {e}")))
}

/// The identity constant's member name inside each subgraph directory.
const IDENTITY_FILE: &str = "value_identity.npy";

/// eye(128) in `d`, as an .npy member (bfloat16 is stored as '<u2' bits).
fn identity_npy(d: Dtype) -> Vec<u8> {
    let (descr, one): (&str, Vec<u8>) = match d {
        Dtype::Float16 => ("<f2", 0x3C00u16.to_le_bytes().to_vec()),
        Dtype::Bfloat16 => ("<u2", 0x3F80u16.to_le_bytes().to_vec()),
        _ => ("<f4", 1.0f32.to_le_bytes().to_vec()),
    };
    let es = one.len();
    let mut data = vec![0u8; P * P * es];
    for r in 0..P {
        data[(r * P + r) * es..(r * P + r + 1) * es].copy_from_slice(&one);
    }
    encode_npy(descr, &[P as u64, P as u64], &data)
}

/// Writes the NEFF of `spec`.
pub fn matmul_neff(spec: &MatmulSpec) -> Result<Vec<u8>, GenError> {
    spec.validate()?;
    let dt = spec.dtype.name();
    let (m, n, lnc) = (spec.m, spec.n, spec.lnc);
    let shares: Vec<Share> = (0..lnc)
        .map(|c| match spec.split {
            _ if lnc == 1 => Share { m0: 0, mt: m / P, n0: 0, nc: n },
            Split::N => Share { m0: 0, mt: m / P, n0: c * n / lnc, nc: n / lnc },
            Split::M => Share { m0: c * m / lnc, mt: m / P / lnc, n0: 0, nc: n },
        })
        .collect();
    let dirs: Vec<String> = (0..lnc).map(|c| format!("sg{c:02}")).collect();
    let dir_refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let sig = |name: &str, shape: [usize; 2]| TensorSignature { name: name.into(), dtype: dt.into(), shape: shape.iter().map(|&d| d as u64).collect() };
    let internal = |e: nrt_neff::NeffError| GenError::Internal(e.to_string());
    let mut w = NeffWriter::new();
    w.set_name(&format!("matmul_{m}x{}x{n}_{dt}", spec.k)).map_err(internal)?;
    w.set_lnc_size(lnc as u32);
    w.add_model_manifests(&dir_refs, &[sig("x", [m, spec.k]), sig("y", [spec.k, n])], &[sig("output0", [m, n])], "cayman").map_err(internal)?;
    for (dir, sh) in dirs.iter().zip(&shares) {
        let prog = core_program(spec, *sh)?;
        let def = definition(spec, &prog)?;
        let engine = |e: EngineKind, s: &Stream| -> Result<EngineFiles, GenError> {
            let instructions = nrt_isa::asm::assemble(s.text()).map_err(|err| GenError::Internal(format!("{e:?} stream: {err}")))?;
            Ok(EngineFiles { engine: e, json: Default::default(), instructions })
        };
        let engines = [
            engine(EngineKind::Pool, &prog.pool)?,
            engine(EngineKind::Pe, &prog.pe)?,
            engine(EngineKind::Act, &prog.act)?,
            engine(EngineKind::Dve, &prog.dve)?,
            engine(EngineKind::Sp, &prog.sp)?,
        ];
        w.add_member(&format!("{dir}/{IDENTITY_FILE}"), identity_npy(spec.dtype)).map_err(internal)?;
        w.add_subgraph(dir, &def, &engines).map_err(internal)?;
    }
    w.to_bytes().map_err(internal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(m: usize, k: usize, n: usize, dtype: Dtype, lnc: usize) -> MatmulSpec {
        MatmulSpec { m, k, n, dtype, lnc, split: Split::N, prints: Prints::default() }
    }

    #[test]
    fn bad_parameters_are_named() {
        let err = |s: MatmulSpec| matmul_neff(&s).unwrap_err().to_string();
        assert!(err(spec(100, 128, 64, Dtype::Float16, 1)).contains("m = 100"));
        assert!(err(spec(128, 130, 64, Dtype::Float16, 1)).contains("k = 130"));
        assert!(err(spec(128, 128, 0, Dtype::Float16, 1)).contains("n must be positive"));
        assert!(err(spec(128, 128, 63, Dtype::Float16, 2)).contains("even"));
        assert!(err(spec(128, 128, 64, Dtype::Int32, 1)).contains("dtype"));
        assert!(err(spec(128, 128, 64, Dtype::Float16, 3)).contains("lnc = 3"));
        assert!(err(MatmulSpec { split: Split::M, ..spec(128, 128, 64, Dtype::Float16, 2) }).contains("256"));
    }

    #[test]
    fn prints_are_one_pool_record_per_tile_named_by_its_origin() {
        // fp32: 4 K-tiles per x load, so K = 640 is two x tiles per row
        // band; N = 2100 is two column blocks (2048 + 52).
        let s = MatmulSpec { prints: Prints::of(&["x", "y", "output0"]).unwrap(), ..spec(256, 640, 2100, Dtype::Float32, 1) };
        let prog = core_program(&s, Share { m0: 0, mt: 2, n0: 0, nc: 2100 }).unwrap();
        let prints: Vec<&str> = prog.pool.text().lines().filter(|l| l.starts_with("debug_print ")).collect();
        let named = |p: &str| prints.iter().filter(|l| l.contains(&format!("prefix=\"{p}\""))).count();
        assert_eq!(prints.len(), 2 * 2 + 2 * 2 * 5 + 2 * 2, "x: 2 per band; y: 5 K-tiles per block and band; output0: one per block and band");
        assert_eq!((named("x.r128.c512"), named("y.r512.c2048"), named("output0.r128.c2048")), (1, 2, 1));
        assert!(prints.iter().all(|l| l.contains("partitions=128") && l.contains("dtype=float32")), "{prints:?}");
        assert!(matmul_neff(&s).is_ok());
        for other in [&prog.pe, &prog.act, &prog.dve, &prog.sp] {
            assert!(!other.text().contains("debug_print"));
        }
    }

    #[test]
    fn prints_name_known_tensors() {
        assert!(Prints::of(&["w"]).unwrap_err().to_string().contains("x, y, output0"));
        assert_eq!(Prints::of(&["output0"]).unwrap(), Prints { output0: true, ..Prints::default() });
    }

    #[test]
    fn the_large_shape_has_the_compilers_record_counts() {
        // K = 32768 in 8 groups of 32 K-tiles; per core 2048 columns = one block of 4 chunks.
        let s = spec(128, 32768, 4096, Dtype::Float16, 2);
        let prog = core_program(&s, Share { m0: 0, mt: 1, n0: 0, nc: 2048 }).unwrap();
        let count = |st: &Stream, op: &str| st.text().lines().filter(|l| l.starts_with(op)).count();
        assert_eq!(count(&prog.pe, "ldweights "), 256 + 256);
        assert_eq!(count(&prog.pe, "matmul "), 256 + 256 * 4);
        assert_eq!(count(&prog.dve, "tensor_tensor "), 8 * 4);
        assert_eq!(count(&prog.dve, "fill "), 4);
        assert_eq!(prog.spills.len(), 8);
        let starts = prog.pe.text().lines().filter(|l| l.contains("accumulate=start")).count();
        let stops = prog.pe.text().lines().filter(|l| l.contains("accumulate=stop")).count();
        assert_eq!((starts, stops), (32, 32));
        assert!(matmul_neff(&s).is_ok());
    }
}
