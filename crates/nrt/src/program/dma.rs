//! Queue sets and DMA blocks resolved against the vars: which bytes move
//! from where to where when an engine fires a trigger.

use super::{MemRef, MemRefKind, ProgramError};
use nrt_hal::EngineId;
use nrt_neff::{DmaBlock, DmaDesc, DmaOp, QueueType, Subgraph};

/// A named set of DMA queues from def.json's `dma_queue` map.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSetIr {
    /// Set name (what triggers and blocks refer to).
    pub name: String,
    /// Ring kind.
    pub ty: QueueType,
    /// Hardware queues the set asks for.
    pub queues: u32,
    /// Completion semaphores of the set's queues (one per queue, or one shared).
    pub semaphores: Vec<u32>,
    /// Swappable instance names (triggers may name these instead of the set).
    pub instances: Vec<String>,
}

/// A byte position inside a var.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarSlice {
    /// The var.
    pub var_id: u64,
    /// Byte offset inside it.
    pub offset: u64,
}

/// One contiguous copy of a DMA block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Source.
    pub src: VarSlice,
    /// Destination.
    pub dst: VarSlice,
    /// Bytes moved.
    pub len: u64,
}

/// A DMA block: the transfers one trigger of its engine starts, as one
/// packet whose completion bumps the queue's semaphore once.
#[derive(Clone, Debug, PartialEq)]
pub struct DmaBlockIr {
    /// Owning engine (`None` for def.json's engine-less list).
    pub engine: Option<EngineId>,
    /// Trigger id (`block_id` of PSEUDO_DMA_TRIGGER).
    pub id: i64,
    /// Queue set name.
    pub queue: String,
    /// Semaphore incremented when the block completes.
    pub semaphore: Option<u32>,
    /// Event set when the block completes.
    pub event: Option<u32>,
    /// The transfers, in order.
    pub transfers: Vec<Transfer>,
}

fn bad(sg: &Subgraph, what: impl Into<String>, reason: impl Into<String>) -> ProgramError {
    ProgramError::BadDma { subgraph: sg.name.clone(), what: what.into(), reason: reason.into() }
}

/// The queue sets of a subgraph, in name order.
pub fn queue_sets(sg: &Subgraph) -> Result<Vec<QueueSetIr>, ProgramError> {
    let mut out = Vec::with_capacity(sg.def.dma_queue.len());
    for (name, set) in &sg.def.dma_queue {
        let queues = set.queue_count();
        if queues == 0 || queues > 16 {
            return Err(bad(sg, format!("queue set {name:?}"), format!("num_queues {queues} is outside 1..=16")));
        }
        let semaphores = match (&set.semaphore_set, set.semaphore) {
            (Some(list), _) => list.clone(),
            (None, Some(s)) => vec![s],
            (None, None) => Vec::new(),
        };
        out.push(QueueSetIr {
            name: name.clone(),
            ty: set.ty.clone(),
            queues,
            semaphores,
            instances: set.queue_instances.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

/// Resolves a queue or instance name to its set.
pub fn resolve_queue<'a>(sets: &'a [QueueSetIr], name: &str) -> Option<&'a QueueSetIr> {
    sets.iter().find(|s| s.name == name).or_else(|| sets.iter().find(|s| s.instances.iter().any(|i| i == name)))
}

fn small(sg: &Subgraph, what: &str, field: &str, v: i64) -> Result<u32, ProgramError> {
    u32::try_from(v).map_err(|_| bad(sg, what, format!("{field} {v} is not a valid index")))
}

/// Resolves one DMA block against the vars and queue sets.
pub fn block(
    sg: &Subgraph,
    engine: Option<EngineId>,
    block: &DmaBlock,
    vars: &[MemRef],
    sets: &[QueueSetIr],
) -> Result<DmaBlockIr, ProgramError> {
    let what = format!("DMA block {}{}", block.id, engine.map(|e| format!(" of {}", e.name())).unwrap_or_default());
    let qname = block.queue_name().ok_or_else(|| bad(sg, &what, "names no queue (queue or instance_name)"))?;
    let set = resolve_queue(sets, qname)
        .ok_or_else(|| bad(sg, &what, format!("queue {qname:?} is not a queue set or instance of def.json")))?;
    let semaphore = match block.semaphore {
        Some(s) => Some(small(sg, &what, "semaphore", s)?),
        None => set.semaphores.first().copied(),
    };
    let event = block.event.map(|e| small(sg, &what, "event", e)).transpose()?;
    let transfers = block
        .desc
        .iter()
        .enumerate()
        .map(|(i, d)| transfer(sg, &format!("{what} descriptor {i}"), d, vars))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DmaBlockIr { engine, id: block.id, queue: set.name.clone(), semaphore, event, transfers })
}

/// Bytes a (sizes, steps) pattern covers if it is contiguous: sizes are
/// innermost-first with the innermost in bytes; each outer step must equal
/// the bytes of everything inside it.
fn contiguous_len(sizes: &[u64], steps: Option<&[i64]>) -> Option<u64> {
    let mut span = *sizes.first()?;
    for (i, &n) in sizes.iter().enumerate().skip(1) {
        if let Some(steps) = steps {
            let step = *steps.get(i)?;
            if n > 1 && u64::try_from(step).ok()? != span {
                return None;
            }
        }
        span = span.checked_mul(n)?;
    }
    Some(span)
}

fn var<'a>(sg: &Subgraph, what: &str, vars: &'a [MemRef], name: &str) -> Result<&'a MemRef, ProgramError> {
    vars.iter().find(|v| v.name == name).ok_or_else(|| bad(sg, what, format!("names var {name:?}, which def.json does not declare")))
}

fn transfer(sg: &Subgraph, what: &str, d: &DmaDesc, vars: &[MemRef]) -> Result<Transfer, ProgramError> {
    if !matches!(d.op, None | Some(DmaOp::Copy)) {
        return Err(bad(sg, what, format!("op {:?} is not lowered by this runtime yet (plain copies only)", d.op)));
    }
    if d.from_dtype != d.to_dtype && d.from_dtype.is_some() && d.to_dtype.is_some() {
        return Err(bad(sg, what, "a copy between different dtypes needs op \"cast\"".to_string()));
    }
    let to = var(sg, what, vars, d.to.as_deref().ok_or_else(|| bad(sg, what, "has no `to` var"))?)?;
    let from = var(sg, what, vars, d.from.as_deref().ok_or_else(|| bad(sg, what, "has no `from` var"))?)?;
    let (from_off, to_off) = (d.from_off.unwrap_or(0), d.to_off.unwrap_or(0));
    let side = |sizes: &Option<Vec<u64>>, steps: &Option<Vec<i64>>, v: &MemRef, off: u64| -> Result<Option<u64>, ProgramError> {
        let (sizes, steps) = match (sizes.as_deref().or(d.sizes.as_deref()), steps.as_deref().or(d.steps.as_deref())) {
            (Some(sz), st) => (sz, st),
            (None, _) => return Ok(None),
        };
        if sizes.len() > 4 || steps.is_some_and(|s| s.len() != sizes.len()) {
            return Err(bad(sg, what, "needs at most 4 dims and as many steps as sizes"));
        }
        contiguous_len(sizes, steps).map(Some).ok_or_else(|| {
            bad(sg, what, format!("the access pattern on {:?} at +{off} is strided; only contiguous copies are lowered yet", v.name))
        })
    };
    let src_len = side(&d.from_sizes, &d.from_steps, from, from_off)?;
    let dst_len = side(&d.to_sizes, &d.to_steps, to, to_off)?;
    let len = match (src_len, dst_len) {
        (Some(a), Some(b)) if a != b => {
            return Err(bad(sg, what, format!("reads {a} bytes but writes {b}; a copy must move the same bytes")));
        }
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => to.size.saturating_sub(to_off),
    };
    if len == 0 {
        return Err(bad(sg, what, "moves zero bytes"));
    }
    for (v, off, dir) in [(from, from_off, "reads"), (to, to_off, "writes")] {
        let sized = !matches!(v.kind, MemRefKind::StateBuffer);
        if sized && off.checked_add(len).is_none_or(|end| end > v.size) {
            return Err(bad(
                sg,
                what,
                format!("{dir} {len} bytes at +{off} of var {:?}, which is only {} bytes", v.name, v.size),
            ));
        }
        if matches!(v.kind, MemRefKind::List { .. }) {
            return Err(bad(sg, what, format!("{dir} var {:?}, a list, which has no memory", v.name)));
        }
    }
    Ok(Transfer {
        src: VarSlice { var_id: from.var_id, offset: from_off },
        dst: VarSlice { var_id: to.var_id, offset: to_off },
        len,
    })
}

#[cfg(test)]
mod tests {
    use super::contiguous_len;
    use proptest::prelude::*;

    #[test]
    fn contiguity_of_patterns() {
        assert_eq!(contiguous_len(&[2048, 128], Some(&[1, 2048])), Some(2048 * 128));
        assert_eq!(contiguous_len(&[2048, 128], Some(&[1, 4096])), None);
        assert_eq!(contiguous_len(&[64], None), Some(64));
        assert_eq!(contiguous_len(&[], None), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Dense row-major patterns are contiguous and cover the product of their sizes.
        #[test]
        fn dense_patterns_are_contiguous(inner in 1u64..4096, outer in prop::collection::vec(1u64..16, 0..3)) {
            let mut sizes = vec![inner];
            let mut steps = vec![1i64];
            let mut span = inner;
            for n in outer { steps.push(span as i64); sizes.push(n); span *= n; }
            prop_assert_eq!(contiguous_len(&sizes, Some(&steps)), Some(span));
        }
    }
}
