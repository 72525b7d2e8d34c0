//! A serializable overview of a NEFF, the data behind
//! `nrt neff inspect [--json]`: header fields, subgraphs with their vars,
//! queue sets and engine programs, and the model's inputs and outputs.

use serde::Serialize;

use crate::header::HeaderFields;
use crate::neff::{Neff, Subgraph};
use crate::signature::TensorSignature;

/// The whole overview.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NeffSummary {
    /// Header fields under their documented names (hash, uuid in hex).
    pub header: HeaderFields,
    /// Subgraphs in load order.
    pub subgraphs: Vec<SubgraphSummary>,
    /// Model inputs.
    pub inputs: Vec<TensorSignature>,
    /// Model outputs.
    pub outputs: Vec<TensorSignature>,
    /// Number of archive members.
    pub member_count: usize,
}

/// One subgraph's overview.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SubgraphSummary {
    /// Subgraph name.
    pub name: String,
    /// Archive path of its def.json.
    pub definition: String,
    /// Vars in var_id order.
    pub vars: Vec<VarSummary>,
    /// Queue sets in name order.
    pub queue_sets: Vec<QueueSetSummary>,
    /// Engine programs in engine order.
    pub engines: Vec<EngineSummary>,
}

/// One var.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VarSummary {
    /// Var name.
    pub name: String,
    /// Var type as spelled in def.json.
    #[serde(rename = "type")]
    pub ty: String,
    /// Var id.
    pub var_id: u64,
    /// Size in bytes, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Element type, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Shape, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u64>>,
    /// Backing file of a `file` var.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
}

/// One queue set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSetSummary {
    /// Queue set name.
    pub name: String,
    /// Ring kind as spelled in def.json.
    #[serde(rename = "type")]
    pub ty: String,
    /// Hardware queues (default 1 applied).
    pub num_queues: u32,
    /// Owning engine, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Completion semaphores (`semaphore_set`, or the single `semaphore`).
    pub semaphores: Vec<u32>,
}

/// One engine program.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineSummary {
    /// Engine key ("pe", "act", "pool", "dve", "sp").
    pub engine: String,
    /// Instruction stream member, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instr: Option<String>,
    /// Number of 64-byte instruction slots.
    pub instructions: usize,
    /// Number of DMA blocks in the engine JSON.
    pub dma_blocks: usize,
    /// Number of DMA descriptors across those blocks.
    pub descriptors: usize,
}

fn subgraph_summary(sg: &Subgraph) -> SubgraphSummary {
    let mut vars: Vec<VarSummary> = sg
        .def
        .var
        .iter()
        .map(|(n, v)| VarSummary {
            name: n.clone(),
            ty: v.ty.to_string(),
            var_id: v.var_id,
            size: v.size,
            dtype: v.dtype.clone(),
            shape: v.shape.clone(),
            file_name: v.file_name.clone(),
        })
        .collect();
    vars.sort_by_key(|v| v.var_id);
    let queue_sets = sg
        .def
        .dma_queue
        .iter()
        .map(|(n, q)| QueueSetSummary {
            name: n.clone(),
            ty: q.ty.to_string(),
            num_queues: q.queue_count(),
            owner: q.owner.clone(),
            semaphores: q.semaphore_set.clone().unwrap_or_else(|| q.semaphore.into_iter().collect()),
        })
        .collect();
    let engines = sg
        .engines
        .iter()
        .map(|p| EngineSummary {
            engine: p.engine.key().to_string(),
            instr: p.instr_path.clone(),
            instructions: p.instruction_count(),
            dma_blocks: p.json.as_ref().map_or(0, |j| j.dma.len()),
            descriptors: p.descriptor_count(),
        })
        .collect();
    SubgraphSummary { name: sg.name.clone(), definition: sg.def_path.clone(), vars, queue_sets, engines }
}

impl Neff {
    /// The overview `nrt neff inspect` prints.
    pub fn summary(&self) -> NeffSummary {
        NeffSummary {
            header: self.header.fields(),
            subgraphs: self.subgraphs.iter().map(subgraph_summary).collect(),
            inputs: self.inputs().to_vec(),
            outputs: self.outputs().to_vec(),
            member_count: self.members.len(),
        }
    }
}
