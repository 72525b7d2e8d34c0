//! NEFFs carrying one collective (docs/collectives.md, "NEFF encoding"):
//! the model's `input` is copied into an internal `shared` var, SP's
//! PSEUDO_TRIGGER_COLLECTIVE runs the collective over the replica group
//! (or source/target pairs) the def.json declares, and the result is
//! copied out to `output`. Every rank of the world loads the same NEFF
//! with `nrt_load_collectives`, each as its own global rank.

use crate::GenError;
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{AluOp, CollectiveType};
use nrt_neff::json::def::DefJson;
use nrt_neff::json::engine::EngineJson;
use nrt_neff::{EngineFiles, EngineKind, NeffWriter, TensorSignature};
use serde_json::json;

/// What collective NEFF to write.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveSpec {
    /// The collective.
    pub kind: CollectiveType,
    /// The reduction's ALU op (add, mult, max, min) for reducing kinds.
    pub op: AluOp,
    /// Element type.
    pub dtype: Dtype,
    /// The per-rank unit of elements (the 0xC8 `num_elements`).
    pub count: u64,
    /// The NEFF's world (`#rank_world_size`).
    pub world: u32,
    /// The replica group set: groups of global ranks, in ring order (all
    /// of one size).
    pub groups: Vec<Vec<u32>>,
    /// The source/target pair set (permute).
    pub pairs: Vec<(u32, u32)>,
    /// Whether the collective works in place (one shared var).
    pub in_place: bool,
    /// Physical cores of the logical core the NEFF is for (its LNC): the
    /// collective runs on the first; the other subgraphs only end.
    pub lnc: usize,
}

impl CollectiveSpec {
    /// An op over one group of the whole world, 0..world in ring order
    /// (permute: rank r sends to r + 1).
    pub fn whole_world(kind: CollectiveType, op: AluOp, dtype: Dtype, count: u64, world: u32) -> CollectiveSpec {
        CollectiveSpec {
            kind,
            op,
            dtype,
            count,
            world,
            groups: vec![(0..world).collect()],
            pairs: (0..world).map(|r| (r, (r + 1) % world)).collect(),
            in_place: false,
            lnc: 1,
        }
    }

    /// Ranks in a group.
    pub fn group_size(&self) -> u64 {
        self.groups.first().map_or(1, |g| g.len() as u64)
    }

    /// Elements of each rank's input and output.
    pub fn elements(&self) -> (u64, u64) {
        let (c, n) = (self.count, self.group_size());
        match self.kind {
            CollectiveType::AllGather => (c, c * n),
            CollectiveType::ReduceScatter => (c * n, c),
            CollectiveType::AllToAll => (c * n, c * n),
            _ => (c, c),
        }
    }

    fn validate(&self) -> Result<(), GenError> {
        let p = |m: String| Err(GenError::Param(m));
        if self.world == 0 || self.count == 0 {
            return p(format!("world {} and count {} must be positive", self.world, self.count));
        }
        if self.groups.is_empty() || self.groups.iter().any(|g| g.len() as u64 != self.group_size()) {
            return p(format!("replica groups {:?}: expected groups of one size", self.groups));
        }
        if self.in_place && self.elements().0 != self.elements().1 {
            return p(format!("{:?} changes the buffer size: it cannot run in place", self.kind));
        }
        if !(1..=2).contains(&self.lnc) {
            return p(format!("lnc {}: expected 1 or 2", self.lnc));
        }
        if self.dtype == Dtype::Unknown {
            return p("dtype unknown: expected an integer or floating-point type".to_string());
        }
        Ok(())
    }
}

const IN: u64 = 2;
const OUT: u64 = 3;

/// A copy DMA block of `bytes` from `from` to `to` on `queue`.
fn copy_block(queue: &str, sem: u32, from: &str, to: &str, bytes: u64) -> serde_json::Value {
    let row = if bytes.is_multiple_of(512) && bytes > 512 { 512 } else { bytes };
    let rows = bytes / row;
    json!({"id": 0, "queue": queue, "semaphore": sem, "desc": [{
        "from": from, "from_off": 0, "from_sizes": [row, rows], "from_steps": [1, row],
        "to": to, "to_off": 0, "to_sizes": [row, rows], "to_steps": [1, row]
    }]})
}

/// The NEFF's bytes, for trn2 ([`crate::DEFAULT_TARGET`]).
pub fn collective_neff(spec: &CollectiveSpec) -> Result<Vec<u8>, GenError> {
    collective_neff_for(spec, crate::DEFAULT_TARGET)
}

/// The NEFF's bytes for the NeuronCore generation whose kelf `target`
/// (compiler code name) is `target`.
pub fn collective_neff_for(spec: &CollectiveSpec, target: &str) -> Result<Vec<u8>, GenError> {
    spec.validate()?;
    let es = spec.dtype.size_bytes() as u64;
    let (ie, oe) = spec.elements();
    let (ib, ob) = (ie * es, oe * es);
    let internal = |e: String| GenError::Internal(e);
    let cc_out = if spec.in_place { "cc_in" } else { "cc_out" };
    let mut vars = serde_json::Map::new();
    vars.insert("input".into(), json!({"type": "input", "var_id": 0, "size": ib}));
    vars.insert("output".into(), json!({"type": "output", "var_id": 1, "size": ob}));
    vars.insert("cc_in".into(), json!({"type": "shared", "var_id": IN, "size": ib}));
    if !spec.in_place {
        vars.insert("cc_out".into(), json!({"type": "shared", "var_id": OUT, "size": ob}));
    }
    let group_set = 0;
    let def: DefJson = serde_json::from_value(json!({
        "name": "definition",
        "version": "0.6",
        "var": vars,
        "dma_queue": {
            "qIn": {"type": "data", "num_queues": 1, "owner": "sp", "semaphore": 1},
            "qOut": {"type": "data", "num_queues": 1, "owner": "sp", "semaphore": 2}
        },
        "#rank_world_size": spec.world,
        "cc_streams": {"num_streams": 1},
        "replica_groups": [spec.groups],
        "src_target_pairs": [spec.pairs.iter().map(|&(s, t)| [s, t]).collect::<Vec<_>>()],
    }))
    .map_err(|e| internal(format!("def.json: {e}")))?;
    let sp_json: EngineJson = serde_json::from_value(json!({
        "dma": [copy_block("qIn", 1, "input", "cc_in", ib), copy_block("qOut", 2, cc_out, "output", ob)]
    }))
    .map_err(|e| internal(format!("SP.json: {e}")))?;
    let output_var = if spec.in_place { IN } else { OUT };
    let text = format!(
        "# one collective between the copy in and the copy out\n\
         dma_trigger queue=\"qIn\" block_id=0\n\
         trigger_collective op={op} dtype={dt} group_id={group_set} input_tensor={IN} output_tensor={output_var} num_elements={n} collective={kind} wait=sem1>=1 update=sem3++\n\
         dma_trigger queue=\"qOut\" block_id=0 wait=sem3>=1\n\
         event_semaphore wait=sem2>=1\n\
         pseudo_inst sub=exit_execution\n",
        op = spec.op.asm_name(),
        dt = spec.dtype.name(),
        n = spec.count,
        kind = spec.kind.asm_name(),
    );
    let instructions = nrt_isa::asm::assemble(&text).map_err(|e| internal(format!("SP stream: {e}")))?;
    let sig = |name: &str, elems: u64| TensorSignature { name: name.into(), dtype: spec.dtype.name().into(), shape: vec![elems] };
    let ne = |e: nrt_neff::NeffError| internal(e.to_string());
    let mut w = NeffWriter::new();
    w.set_name(&format!("cc_{}_{}x{}_w{}", spec.kind.asm_name(), spec.count, spec.dtype.name(), spec.world)).map_err(ne)?;
    let dirs: Vec<String> = (0..spec.lnc).map(|h| format!("sg{h:02}")).collect();
    let dir_refs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    w.set_lnc_size(spec.lnc as u32);
    w.add_model_manifests(&dir_refs, &[sig("input", ie)], &[sig("output", oe)], target).map_err(ne)?;
    w.add_subgraph("sg00", &def, &[EngineFiles { engine: EngineKind::Sp, json: sp_json, instructions }]).map_err(ne)?;
    if spec.lnc > 1 {
        // The logical core's other physical cores take no part.
        let idle: DefJson = serde_json::from_value(json!({"name": "definition", "version": "0.6", "var": {}})).map_err(|e| internal(format!("def.json: {e}")))?;
        let exit = nrt_isa::asm::assemble("pseudo_inst sub=exit_execution\n").map_err(|e| internal(format!("SP stream: {e}")))?;
        for dir in &dirs[1..] {
            w.add_subgraph(dir, &idle, &[EngineFiles { engine: EngineKind::Sp, json: Default::default(), instructions: exit.clone() }]).map_err(ne)?;
        }
    }
    w.to_bytes().map_err(ne)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_neff_declares_its_collective() {
        let s = CollectiveSpec::whole_world(CollectiveType::AllGather, AluOp::Bypass, Dtype::Float32, 16, 4);
        let bytes = collective_neff(&s).unwrap();
        let neff = nrt_neff::Neff::parse(&bytes).unwrap();
        let sg = &neff.subgraphs[0];
        let cc = nrt_neff::cc::CcConfig::from_def(&sg.def).unwrap();
        assert_eq!((cc.world_size, cc.streams), (4, 1));
        assert_eq!(cc.replica_groups, vec![vec![vec![0, 1, 2, 3]]]);
        assert_eq!(sg.def.var["cc_out"].size, Some(4 * 64));
        let sp = sg.engine(EngineKind::Sp).unwrap();
        let rec: [u8; 64] = sp.instructions[64..128].try_into().unwrap();
        let t = nrt_isa::collective::CollectiveTrigger::decode(&rec).unwrap();
        assert_eq!((t.kind, t.num_elements, t.input_var, t.output_var), (CollectiveType::AllGather, 16, 2, 3));
    }

    #[test]
    fn bad_specs_are_named() {
        let mut s = CollectiveSpec::whole_world(CollectiveType::AllGather, AluOp::Bypass, Dtype::Float32, 16, 4);
        s.in_place = true;
        assert!(collective_neff(&s).unwrap_err().to_string().contains("in place"));
        s.in_place = false;
        s.groups = vec![vec![0, 1], vec![2]];
        assert!(collective_neff(&s).unwrap_err().to_string().contains("one size"));
    }
}
