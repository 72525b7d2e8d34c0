//! NEFFs carrying a chain of collectives interleaved with compute, the
//! shape a tensor-parallel program has (docs/collectives.md, "NEFF
//! encoding"): every rank loads the same NEFF with
//! `nrt_load_collectives`, each as its own global rank.
//!
//! Per subgraph (one per physical core of the logical core; with LNC 2
//! subgraph `h` takes rows `128h .. 128h + 128` of the input, the
//! compiler's split of the tensor between the cores), the input's 128
//! rows of `cols` float32 are copied into a `shared` var; then, for each
//! op of the chain, in order, SP triggers the collective
//! (PSEUDO_TRIGGER_COLLECTIVE on the op's replica group set or pair set),
//! and, unless the op is a reduce-scatter (whose shorter output the next
//! op, an all-gather, takes as it is), the result goes to SBUF, ACT
//! computes `y = 0.5 x + 1` on it and SP copies `y` into the next op's
//! input, or, after the last op, into the output.
//!
//! [`chain_reference`] computes what every rank's output must be.

use crate::GenError;
use crate::sched::{QueueSet, SEM_ACT, Stream, Wait};
use nrt_isa::instr::{AluOp, CollectiveType};
use nrt_neff::json::def::DefJson;
use nrt_neff::{EngineFiles, EngineKind, NeffWriter, TensorSignature};
use serde_json::json;

/// Partitions: the rows each subgraph holds.
const P: usize = 128;
/// DMA-operand partition stride of the state buffer.
const SB_STRIDE: usize = 0x40000;
/// First SBUF byte used in each partition.
const SB_BASE: usize = 0x1000;
/// SBUF bytes per partition the program may use.
const SB_LIMIT: usize = 0x37000;
/// Semaphore the collectives raise when their output is complete.
const SEM_CC: u32 = 3;
/// First semaphore of SP's dynamic queue set.
const SP_QUEUE_SEM: u32 = 8;
const VAR_SB: u32 = 0;
const VAR_IN: u32 = 1;
const VAR_OUT: u32 = 2;
const VAR_DGE: u32 = 3;
/// Var ids of op `k`'s input and output: `VAR_CC + 2k` and `VAR_CC + 2k + 1`.
const VAR_CC: u32 = 10;
/// ACT's computation between collectives: `y = SCALE x + BIAS`.
pub const SCALE: f32 = 0.5;
/// See [`SCALE`].
pub const BIAS: f32 = 1.0;

/// One collective of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainOp {
    /// All-reduce, all-to-all, permute, or a reduce-scatter followed at
    /// once by an all-gather on the same set.
    pub kind: CollectiveType,
    /// The reduction (all-reduce and reduce-scatter): add, max or min.
    pub op: AluOp,
    /// The replica group set (permute: the source/target pair set).
    pub set: u16,
}

/// What chain NEFF to write.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSpec {
    /// The NEFF's world (`#rank_world_size`).
    pub world: u32,
    /// float32 elements per row; each subgraph holds 128 rows.
    pub cols: usize,
    /// Subgraphs: 1, or 2 for a logical core of two physical cores.
    pub lnc: usize,
    /// Replica group sets: groups of global ranks in ring order, all of one
    /// size within a set, covering the world.
    pub sets: Vec<Vec<Vec<u32>>>,
    /// Source/target pair sets (permute).
    pub pairs: Vec<Vec<(u32, u32)>>,
    /// The collectives, in program order.
    pub ops: Vec<ChainOp>,
}

impl ChainSpec {
    /// Elements of one subgraph's share.
    pub fn share(&self) -> usize {
        P * self.cols
    }

    /// Elements of each rank's input and output (every subgraph's share).
    pub fn elements(&self) -> usize {
        self.share() * self.lnc
    }

    fn group_size(&self, set: u16) -> usize {
        self.sets.get(usize::from(set)).and_then(|s| s.first()).map_or(0, Vec::len)
    }

    /// Collectives per subgraph.
    pub fn collectives(&self) -> usize {
        self.ops.len()
    }

    fn validate(&self) -> Result<(), GenError> {
        let p = |m: String| Err(GenError::Param(m));
        if self.world == 0 || self.cols == 0 || !(1..=2).contains(&self.lnc) || self.ops.is_empty() {
            return p(format!("world {}, cols {}, lnc {} and {} ops: expected a positive world and cols, lnc 1 or 2 and at least one op", self.world, self.cols, self.lnc, self.ops.len()));
        }
        if SB_BASE + 2 * self.cols * 4 > SB_LIMIT {
            return p(format!("cols = {} does not fit twice in an SBUF partition ({SB_LIMIT:#x} bytes)", self.cols));
        }
        for (i, s) in self.sets.iter().enumerate() {
            if s.is_empty() || s.iter().any(|g| g.len() != s[0].len()) || s.iter().map(Vec::len).sum::<usize>() != self.world as usize {
                return p(format!("replica group set {i} {s:?}: expected groups of one size covering the {} ranks", self.world));
            }
        }
        for (k, op) in self.ops.iter().enumerate() {
            let at = |m: &str| GenError::Param(format!("op {k} ({:?} on set {}): {m}", op.kind, op.set));
            match op.kind {
                CollectiveType::Permute if usize::from(op.set) >= self.pairs.len() => return Err(at("no such pair set")),
                CollectiveType::Permute => {}
                _ if usize::from(op.set) >= self.sets.len() => return Err(at("no such replica group set")),
                CollectiveType::AllReduce => {}
                CollectiveType::AllToAll | CollectiveType::ReduceScatter if !self.share().is_multiple_of(self.group_size(op.set)) => {
                    return Err(at("the share must divide by the group's size"));
                }
                CollectiveType::AllToAll => {}
                CollectiveType::ReduceScatter => {
                    let next = self.ops.get(k + 1);
                    if next.is_none_or(|n| n.kind != CollectiveType::AllGather || n.set != op.set) {
                        return Err(at("a reduce-scatter must be followed by an all-gather on the same set"));
                    }
                }
                CollectiveType::AllGather => {
                    if k == 0 || self.ops[k - 1].kind != CollectiveType::ReduceScatter {
                        return Err(at("an all-gather must follow a reduce-scatter on the same set"));
                    }
                }
            }
        }
        Ok(())
    }

    /// The per-rank unit (`num_elements`) of op `k`.
    fn count(&self, k: usize) -> usize {
        let op = self.ops[k];
        match op.kind {
            CollectiveType::AllReduce | CollectiveType::Permute => self.share(),
            _ => self.share() / self.group_size(op.set),
        }
    }
}

fn in_var(k: usize) -> u32 {
    VAR_CC + 2 * k as u32
}

fn out_var(k: usize) -> u32 {
    VAR_CC + 2 * k as u32 + 1
}

/// `rows` rows of `row_bytes` at `at + offset`, one per `step` bytes.
fn rows(at: &str, offset: usize, step: usize, rows: usize) -> String {
    format!("[{at}+{offset:#x}; {step:#x},{rows}; 0x1,1")
}

fn dma(w: Wait, src: &str, dst: &str, row_bytes: usize) -> String {
    format!(
        "dma2d flags=0 sem={} sem_add={} src={src}; {row_bytes}] dst={dst}; {row_bytes}] src_dtype=float32 dst_dtype=float32",
        w.sem,
        crate::sched::DMA_SEM_ADD
    )
}

fn pattern(addr: usize, n: usize) -> String {
    format!("[{addr:#x}; 1,{n}; 0,1; 0,1]")
}

/// Subgraph `h`'s SP and ACT streams.
fn program(s: &ChainSpec, h: usize) -> (Stream, Stream) {
    let row = s.cols * 4;
    let (mut sp, mut act) = (Stream::new(), Stream::new());
    let mut q = QueueSet::new(SP_QUEUE_SEM);
    let (mut n_cc, mut n_act) = (0u32, 0u32);
    let var = |id: u32| rows(&format!("var{id}"), 0, row, P);
    let (x, y) = (SB_BASE, SB_BASE + row);
    let sb = |at: usize| rows(&format!("var{VAR_SB}"), at, SB_STRIDE, P);
    let w = q.issue();
    sp.push(&dma(w, &rows("dge0", h * P * row, row, P), &var(in_var(0)), row), &[]);
    let mut prev = w;
    for (k, op) in s.ops.iter().enumerate() {
        let input = if k > 0 && s.ops[k - 1].kind == CollectiveType::ReduceScatter { out_var(k - 1) } else { in_var(k) };
        sp.push(
            &format!(
                "trigger_collective op={} dtype=float32 group_id={} input_tensor={input} output_tensor={} num_elements={} collective={} update=sem{SEM_CC}++",
                op.op.asm_name(),
                op.set,
                out_var(k),
                s.count(k),
                op.kind.asm_name()
            ),
            &[prev],
        );
        n_cc += 1;
        let done = Wait { sem: SEM_CC, value: n_cc };
        if op.kind == CollectiveType::ReduceScatter {
            prev = done;
            continue;
        }
        let w = q.issue();
        sp.push(&dma(w, &var(out_var(k)), &sb(x), row), &[done]);
        act.push(
            &format!("activate func=identity in_dtype=float32 out_dtype=float32 partitions={P} input={} output={} scale={SCALE:?} bias={BIAS:?} update=sem{SEM_ACT}++", pattern(x, s.cols), pattern(y, s.cols)),
            &[w],
        );
        n_act += 1;
        let w = q.issue();
        let to = if k + 1 == s.ops.len() { rows("dge1", h * P * row, row, P) } else { var(in_var(k + 1)) };
        sp.push(&dma(w, &sb(y), &to, row), &[Wait { sem: SEM_ACT, value: n_act }]);
        prev = w;
    }
    sp.finish(&q.all_done());
    (sp, act)
}

fn definition(s: &ChainSpec) -> Result<DefJson, GenError> {
    let bytes = s.elements() * 4;
    let mut vars = serde_json::Map::new();
    vars.insert("SB".into(), json!({"type": "state-buffer", "var_id": VAR_SB}));
    vars.insert("input".into(), json!({"type": "input", "var_id": VAR_IN, "size": bytes, "dtype": "float32", "shape": [s.lnc * P, s.cols]}));
    vars.insert("output".into(), json!({"type": "output", "var_id": VAR_OUT, "size": bytes, "dtype": "float32", "shape": [s.lnc * P, s.cols]}));
    vars.insert("DGETable0".into(), json!({"type": "dge-table", "var_id": VAR_DGE, "list": [VAR_IN, VAR_OUT]}));
    for (k, op) in s.ops.iter().enumerate() {
        let out = if op.kind == CollectiveType::ReduceScatter { s.count(k) } else { s.share() };
        if k == 0 || s.ops[k - 1].kind != CollectiveType::ReduceScatter {
            vars.insert(format!("cc{k}_in"), json!({"type": "shared", "var_id": in_var(k), "size": s.share() * 4}));
        }
        vars.insert(format!("cc{k}_out"), json!({"type": "shared", "var_id": out_var(k), "size": out * 4}));
    }
    let pairs: Vec<Vec<[u32; 2]>> = s.pairs.iter().map(|set| set.iter().map(|&(a, b)| [a, b]).collect()).collect();
    serde_json::from_value(json!({
        "name": "definition",
        "version": "0.6",
        "var": vars,
        "dma_queue": {"qSPDynamicHW": {"type": "dynamic", "num_queues": 16, "owner": "sp", "fabric_path": "main", "semaphore_set": (SP_QUEUE_SEM..SP_QUEUE_SEM + 16).collect::<Vec<u32>>()}},
        "#rank_world_size": s.world,
        "cc_streams": {"num_streams": 1},
        "replica_groups": s.sets,
        "src_target_pairs": pairs,
    }))
    .map_err(|e| GenError::Internal(format!("def.json: {e}")))
}

/// The NEFF's bytes (the same for every rank), for trn2
/// ([`crate::DEFAULT_TARGET`]).
pub fn chain_neff(spec: &ChainSpec) -> Result<Vec<u8>, GenError> {
    chain_neff_for(spec, crate::DEFAULT_TARGET)
}

/// The NEFF's bytes for the NeuronCore generation whose kelf `target`
/// (compiler code name) is `target`.
pub fn chain_neff_for(spec: &ChainSpec, target: &str) -> Result<Vec<u8>, GenError> {
    spec.validate()?;
    let internal = |e: nrt_neff::NeffError| GenError::Internal(e.to_string());
    let dirs: Vec<String> = (0..spec.lnc).map(|h| format!("sg{h:02}")).collect();
    let dir_refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let sig = |name: &str| TensorSignature { name: name.into(), dtype: "float32".into(), shape: vec![(spec.lnc * P) as u64, spec.cols as u64] };
    let mut w = NeffWriter::new();
    w.set_name(&format!("cc_chain_{}ops_{}x{}_w{}_lnc{}", spec.ops.len(), P, spec.cols, spec.world, spec.lnc)).map_err(internal)?;
    w.set_lnc_size(spec.lnc as u32);
    w.add_model_manifests(&dir_refs, &[sig("input")], &[sig("output")], target).map_err(internal)?;
    let def = definition(spec)?;
    for (h, dir) in dirs.iter().enumerate() {
        let (sp, act) = program(spec, h);
        let engine = |e: EngineKind, s: &Stream| -> Result<EngineFiles, GenError> {
            let instructions = nrt_isa::asm::assemble(s.text()).map_err(|err| GenError::Internal(format!("{e:?} stream: {err}")))?;
            Ok(EngineFiles { engine: e, json: Default::default(), instructions })
        };
        w.add_subgraph(dir, &def, &[engine(EngineKind::Act, &act)?, engine(EngineKind::Sp, &sp)?]).map_err(internal)?;
    }
    w.to_bytes().map_err(internal)
}

fn reduce(op: AluOp, xs: impl Iterator<Item = f64>) -> f64 {
    xs.reduce(|a, b| match op {
        AluOp::Max => a.max(b),
        AluOp::Min => a.min(b),
        _ => a + b,
    })
    .unwrap_or(0.0)
}

/// Every rank's output for `inputs` (rank order), computed in f64 (exact
/// for inputs whose every partial sum is exact in float32, e.g. small
/// integers).
pub fn chain_reference(s: &ChainSpec, inputs: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let n = s.world as usize;
    let share = s.share();
    let mut out = vec![vec![0f32; s.elements()]; n];
    for h in 0..s.lnc {
        let mut cur: Vec<Vec<f64>> = inputs.iter().map(|v| v[h * share..(h + 1) * share].iter().map(|&x| f64::from(x)).collect()).collect();
        for (k, op) in s.ops.iter().enumerate() {
            let c = s.count(k);
            let group_of = |r: u32| s.sets[usize::from(op.set)].iter().find(|g| g.contains(&r)).expect("a set covers the world").clone();
            let next: Vec<Vec<f64>> = (0..n as u32)
                .map(|r| match op.kind {
                    CollectiveType::AllReduce => {
                        let g = group_of(r);
                        (0..c).map(|i| reduce(op.op, g.iter().map(|&q| cur[q as usize][i]))).collect()
                    }
                    CollectiveType::ReduceScatter => {
                        let g = group_of(r);
                        let me = g.iter().position(|&q| q == r).expect("in its group");
                        (0..c).map(|i| reduce(op.op, g.iter().map(|&q| cur[q as usize][me * c + i]))).collect()
                    }
                    CollectiveType::AllGather => group_of(r).iter().flat_map(|&q| cur[q as usize][..c].to_vec()).collect(),
                    CollectiveType::AllToAll => {
                        let g = group_of(r);
                        let me = g.iter().position(|&q| q == r).expect("in its group");
                        g.iter().flat_map(|&q| cur[q as usize][me * c..(me + 1) * c].to_vec()).collect()
                    }
                    CollectiveType::Permute => match s.pairs[usize::from(op.set)].iter().find(|p| p.1 == r) {
                        Some(&(src, _)) => cur[src as usize].clone(),
                        // A rank no source sends to keeps its output var's
                        // previous bytes: zero (never written).
                        None => vec![0.0; c],
                    },
                })
                .collect();
            cur = next;
            if op.kind != CollectiveType::ReduceScatter {
                for v in &mut cur {
                    for x in v.iter_mut() {
                        *x = f64::from((*x as f32) * SCALE + BIAS);
                    }
                }
            }
        }
        for r in 0..n {
            for (i, x) in cur[r].iter().enumerate() {
                out[r][h * share + i] = *x as f32;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ChainSpec {
        ChainSpec {
            world: 4,
            cols: 4,
            lnc: 2,
            sets: vec![vec![vec![0, 1, 2, 3]], vec![vec![0, 1], vec![2, 3]]],
            pairs: vec![vec![(0, 1), (1, 2), (2, 3), (3, 0)]],
            ops: vec![
                ChainOp { kind: CollectiveType::AllReduce, op: AluOp::Add, set: 1 },
                ChainOp { kind: CollectiveType::ReduceScatter, op: AluOp::Max, set: 0 },
                ChainOp { kind: CollectiveType::AllGather, op: AluOp::Bypass, set: 0 },
                ChainOp { kind: CollectiveType::Permute, op: AluOp::Bypass, set: 0 },
            ],
        }
    }

    #[test]
    fn each_subgraph_carries_the_chain_in_program_order() {
        let s = spec();
        let neff = nrt_neff::Neff::parse(&chain_neff(&s).unwrap()).unwrap();
        assert_eq!(neff.subgraphs.len(), 2);
        for sg in &neff.subgraphs {
            let cc = nrt_neff::cc::CcConfig::from_def(&sg.def).unwrap();
            assert_eq!((cc.world_size, cc.replica_groups.len(), cc.src_target_pairs.len()), (4, 2, 1));
            let sp = sg.engine(EngineKind::Sp).unwrap();
            let kinds: Vec<(CollectiveType, u16, u32, u32)> = sp
                .instructions
                .chunks(64)
                .filter(|r| r[0] == 0xC8)
                .map(|r| nrt_isa::collective::CollectiveTrigger::decode(r.try_into().unwrap()).unwrap())
                .map(|t| (t.kind, t.group_set, t.input_var, t.output_var))
                .collect();
            assert_eq!(kinds, vec![(CollectiveType::AllReduce, 1, 10, 11), (CollectiveType::ReduceScatter, 0, 12, 13), (CollectiveType::AllGather, 0, 13, 15), (CollectiveType::Permute, 0, 16, 17)]);
        }
    }

    #[test]
    fn the_reference_follows_the_ops() {
        let s = ChainSpec { lnc: 1, ops: vec![ChainOp { kind: CollectiveType::AllReduce, op: AluOp::Add, set: 1 }], ..spec() };
        let ins: Vec<Vec<f32>> = (0..4).map(|r| vec![r as f32; s.elements()]).collect();
        let out = chain_reference(&s, &ins);
        assert_eq!((out[0][0], out[1][5], out[2][0], out[3][9]), (1.5, 1.5, 3.5, 3.5));
    }

    #[test]
    fn bad_chains_are_named() {
        let mut s = spec();
        s.ops.remove(2);
        assert!(chain_neff(&s).unwrap_err().to_string().contains("followed by an all-gather"));
        let mut s = spec();
        s.ops[0].set = 5;
        assert!(chain_neff(&s).unwrap_err().to_string().contains("no such replica group set"));
    }
}
