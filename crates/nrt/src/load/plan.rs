//! The static memory plan: where every var lives, decided once at load
//! (libnrt's mem_ref placement). Execute never plans or allocates.
//!
//! | var type | placement |
//! |---|---|
//! | state-buffer | the core's SBUF window |
//! | input / output | an IO slot, bound per execution (staging buffer by default) |
//! | file | private HBM, the constant copied in (WEIGHT) |
//! | tmp-buf | private HBM (DRAM_SPILL) |
//! | virtual | the core's shared scratchpad at its `backing_variable_off` |
//! | pointer | an 8-byte private slot holding the referenced var's address |
//! | dge-table | a private table of the listed vars' 8-byte addresses |
//! | list | nothing on the device |
//! | remote / shared / sharded | private HBM (no cross-core sharing yet) |

use crate::memory::MemUsage;
use crate::program::{MemRefKind, Program, SubgraphProgram};

/// Where one var goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The SBUF window of the subgraph's core.
    StateBuffer,
    /// IO slot (inputs first, then outputs).
    Io(usize),
    /// A private allocation booked under `usage`.
    Private(MemUsage),
    /// The shared scratchpad at `offset`.
    Scratch(u64),
    /// No device memory (lists).
    Nothing,
}

/// One var's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarPlan {
    /// The var.
    pub var_id: u64,
    /// Bytes.
    pub size: u64,
    /// Alignment.
    pub align: u64,
    /// Where it goes.
    pub placement: Placement,
}

/// The plan of one subgraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubgraphPlan {
    /// Every var, in var-id order.
    pub vars: Vec<VarPlan>,
    /// Shared scratchpad bytes needed: max(offset + size) over `virtual` vars.
    pub scratchpad_bytes: u64,
    /// Private bytes (before alignment).
    pub private_bytes: u64,
}

impl SubgraphPlan {
    /// The plan of var `id`.
    pub fn var(&self, id: u64) -> Option<&VarPlan> {
        self.vars.iter().find(|v| v.var_id == id)
    }
}

/// Plans one subgraph. `inputs` is the number of model inputs (outputs'
/// slots follow them).
pub fn plan_subgraph(sg: &SubgraphProgram, inputs: usize) -> SubgraphPlan {
    let mut scratchpad_bytes = 0u64;
    let mut private_bytes = 0u64;
    let vars = sg
        .vars
        .iter()
        .map(|v| {
            let placement = match &v.kind {
                MemRefKind::StateBuffer => Placement::StateBuffer,
                MemRefKind::Input { index } => Placement::Io(*index),
                MemRefKind::Output { index } => Placement::Io(inputs + index),
                MemRefKind::File { .. } => Placement::Private(MemUsage::Weight),
                MemRefKind::TmpBuf => Placement::Private(MemUsage::DramSpill),
                MemRefKind::Virtual { offset } => {
                    scratchpad_bytes = scratchpad_bytes.max(offset.saturating_add(v.size));
                    Placement::Scratch(*offset)
                }
                MemRefKind::Pointer { .. } | MemRefKind::DgeTable { .. } => Placement::Private(MemUsage::Generic),
                MemRefKind::List { .. } => Placement::Nothing,
                MemRefKind::CrossCore => Placement::Private(MemUsage::DramSpill),
            };
            if matches!(placement, Placement::Private(_)) {
                private_bytes = private_bytes.saturating_add(v.size);
            }
            VarPlan { var_id: v.var_id, size: v.size, align: v.align.max(64), placement }
        })
        .collect();
    SubgraphPlan { vars, scratchpad_bytes, private_bytes }
}

/// Plans every subgraph of a program.
pub fn plan(program: &Program) -> Vec<SubgraphPlan> {
    program.subgraphs.iter().map(|sg| plan_subgraph(sg, program.inputs.len())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::MemRef;

    fn mr(name: &str, id: u64, size: u64, kind: MemRefKind) -> MemRef {
        MemRef { name: name.into(), var_id: id, size, align: 1, kind }
    }

    #[test]
    fn placement_by_type_and_scratchpad_size() {
        let sg = SubgraphProgram {
            name: "sg00".into(),
            vars: vec![
                mr("SB", 0, 0, MemRefKind::StateBuffer),
                mr("x", 1, 64, MemRefKind::Input { index: 0 }),
                mr("y", 2, 64, MemRefKind::Output { index: 0 }),
                mr("w", 3, 128, MemRefKind::File { payload_len: 128 }),
                mr("v1", 4, 100, MemRefKind::Virtual { offset: 4096 }),
                mr("v2", 5, 5000, MemRefKind::Virtual { offset: 0 }),
                mr("t", 6, 32, MemRefKind::TmpBuf),
                mr("l", 7, 0, MemRefKind::List { ids: vec![1] }),
            ],
            queue_sets: vec![],
            dma_blocks: vec![],
            streams: vec![],
            dma2d: vec![],
        };
        let p = plan_subgraph(&sg, 1);
        assert_eq!(p.scratchpad_bytes, 5000);
        assert_eq!(p.private_bytes, 160);
        assert_eq!(p.var(2).unwrap().placement, Placement::Io(1));
        assert_eq!(p.var(4).unwrap().placement, Placement::Scratch(4096));
        assert_eq!(p.var(3).unwrap().placement, Placement::Private(MemUsage::Weight));
        assert_eq!(p.var(7).unwrap().placement, Placement::Nothing);
        assert_eq!(p.var(0).unwrap().placement, Placement::StateBuffer);
    }
}
