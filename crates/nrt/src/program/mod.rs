//! The program IR: what a parsed NEFF asks of the device, per subgraph (one
//! subgraph per physical core of the logical core), before any address is
//! known.
//!
//! libnrt builds a `kbin` per subgraph out of def.json, the engine JSON and
//! the engine binaries; this is our equivalent. It is pure data built from
//! [`nrt_neff::Neff`] without touching a device, so every check here runs
//! (and is tested) without a simulator.

pub mod dma;
pub mod dma2d;
pub mod error;
pub mod opcodes;
pub mod stream;
pub mod support;
pub mod vars;

pub use dma::{DmaBlockIr, QueueSetIr, Transfer, VarSlice};
pub use dma2d::{Dma2dIr, SbufGeometry};
pub use error::ProgramError;
pub use stream::EngineStream;
pub use vars::{MemRef, MemRefKind};

use nrt_hal::EngineId;
use nrt_neff::{EngineKind, Neff, Subgraph, TensorSignature};

/// One subgraph lowered to IR: the program of one physical core.
#[derive(Clone, Debug, PartialEq)]
pub struct SubgraphProgram {
    /// Subgraph name (`sg00`, ...).
    pub name: String,
    /// Every var as a memory reference, in var-id order.
    pub vars: Vec<MemRef>,
    /// Queue sets by name order.
    pub queue_sets: Vec<QueueSetIr>,
    /// DMA blocks of every engine (and of def.json's own `dma` list).
    pub dma_blocks: Vec<DmaBlockIr>,
    /// Engine instruction streams, one per engine that has one.
    pub streams: Vec<EngineStream>,
    /// Every 0xD4 DMA record of the streams, resolved (stream order per engine).
    pub dma2d: Vec<Dma2dIr>,
}

impl SubgraphProgram {
    /// The var named `name`.
    pub fn var(&self, name: &str) -> Option<&MemRef> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// The var with id `id`.
    pub fn var_by_id(&self, id: u64) -> Option<&MemRef> {
        self.vars.iter().find(|v| v.var_id == id)
    }

    /// The stream of `engine`, if the subgraph has one.
    pub fn stream(&self, engine: EngineId) -> Option<&EngineStream> {
        self.streams.iter().find(|s| s.engine == engine)
    }

    /// The resolved 0xD4 record at `index` of `engine`'s stream.
    pub fn dma2d_at(&self, engine: EngineId, index: usize) -> Option<&Dma2dIr> {
        self.dma2d.iter().find(|d| d.engine == engine && d.index == index)
    }

    /// The DMA block an engine's trigger `block_id` on queue set `queue` names.
    pub fn block(&self, engine: EngineId, queue: &str, block_id: i64) -> Option<&DmaBlockIr> {
        self.dma_blocks
            .iter()
            .find(|b| b.id == block_id && b.queue == queue && b.engine.is_none_or(|e| e == engine))
    }
}

/// A whole NEFF as IR.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The NEFF header's model name.
    pub name: String,
    /// kelf-0.json `target` (`sunda`, `cayman`, `mariana`, ...), if given.
    pub target: Option<String>,
    /// Physical cores per logical core the NEFF was compiled for.
    pub lnc_size: u32,
    /// Model inputs in order.
    pub inputs: Vec<TensorSignature>,
    /// Model outputs in order.
    pub outputs: Vec<TensorSignature>,
    /// One program per subgraph (physical core).
    pub subgraphs: Vec<SubgraphProgram>,
}

/// The engine id the device uses for a NEFF engine key.
pub fn engine_id(kind: EngineKind) -> EngineId {
    match kind {
        EngineKind::Pe => EngineId::Pe,
        EngineKind::Act => EngineId::Act,
        EngineKind::Pool => EngineId::Pool,
        EngineKind::Dve => EngineId::Dve,
        EngineKind::Sp => EngineId::Sp,
    }
}

impl Program {
    /// Builds the IR of every subgraph of a parsed NEFF.
    pub fn from_neff(neff: &Neff) -> Result<Program, ProgramError> {
        let subgraphs = neff
            .subgraphs
            .iter()
            .map(|sg| SubgraphProgram::build(neff, sg))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Program {
            name: neff.header.name().to_string(),
            target: neff.kelf.as_ref().and_then(|k| k.target.clone()),
            lnc_size: neff.header.lnc_size.max(1),
            inputs: neff.inputs().to_vec(),
            outputs: neff.outputs().to_vec(),
            subgraphs,
        })
    }
}

impl SubgraphProgram {
    fn build(neff: &Neff, sg: &Subgraph) -> Result<SubgraphProgram, ProgramError> {
        let vars = vars::mem_refs(neff, sg)?;
        let queue_sets = dma::queue_sets(sg)?;
        let mut dma_blocks = Vec::new();
        for (engine, _, block) in sg.dma_blocks() {
            dma_blocks.push(dma::block(sg, engine.map(engine_id), block, &vars, &queue_sets)?);
        }
        let streams = sg
            .engines
            .iter()
            .filter(|p| !p.instructions.is_empty())
            .map(|p| {
                let mut s = EngineStream::decode(&sg.name, engine_id(p.engine), &p.instructions)?;
                // Debug info is optional: a NEFF whose debug members do not
                // decode still loads, its records just have no names.
                s.names = nrt_neff::debug_info::instruction_names(neff, sg, p.engine).unwrap_or_default();
                Ok(s)
            })
            .collect::<Result<Vec<_>, ProgramError>>()?;
        let mut dma2d = Vec::new();
        for s in &streams {
            for (index, rec) in s.records.iter().enumerate() {
                if rec[0] == opcodes::DMA_DIRECT2D_OPCODE {
                    dma2d.push(Dma2dIr::resolve(&sg.name, s.engine, index, rec, &vars, &queue_sets)?);
                }
            }
        }
        Ok(SubgraphProgram { name: sg.name.clone(), vars, queue_sets, dma_blocks, streams, dma2d })
    }
}
