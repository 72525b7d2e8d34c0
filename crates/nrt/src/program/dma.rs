//! Queue sets and DMA blocks resolved against the vars: which bytes move
//! from where to where when an engine fires a trigger.

use super::{MemRef, MemRefKind, ProgramError};
use nrt_hal::EngineId;
use nrt_isa::dma_desc::pattern::{self as pat, MAX_PATTERN_DIMS, PatternBlock, PatternConstant, PatternDim, PatternSide, TransposeSpec};
use nrt_isa::dtype::Dtype;
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
    /// The engine issuing the set's DMAs (def.json `owner`), if given.
    pub owner: Option<String>,
}

/// A byte position inside a var.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarSlice {
    /// The var.
    pub var_id: u64,
    /// Byte offset inside it.
    pub offset: u64,
}

/// One transfer of a DMA block: a contiguous copy of `len` bytes, or,
/// when `pattern` is set, a patterned transfer (strides, casts, compute,
/// transpose) run by one pattern block whose addresses the load fills in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    /// Source.
    pub src: VarSlice,
    /// Destination.
    pub dst: VarSlice,
    /// Bytes moved (contiguous copies) or bytes the source pattern reads.
    pub len: u64,
    /// The pattern (with zero addresses), for non-contiguous transfers.
    pub pattern: Option<PatternBlock>,
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
            owner: set.owner.clone(),
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
fn contiguous_len(sizes: &[u64], steps: Option<&[i64]>, esize: u64) -> Option<u64> {
    let mut span = *sizes.first()?;
    if let Some(st) = steps.and_then(|s| s.first())
        && !(*st == 1 || *st as u64 == esize)
    {
        return None;
    }
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

/// One side's dims for a pattern block: innermost step in bytes per
/// element (def.json's 1 means "the next element"), size in bytes; outer
/// dims as given.
fn dims(sizes: &[u64], steps: Option<&[i64]>, esize: u64) -> Option<(u8, [PatternDim; MAX_PATTERN_DIMS])> {
    if sizes.is_empty() || sizes.len() > MAX_PATTERN_DIMS {
        return None;
    }
    let mut d = [PatternDim::default(); MAX_PATTERN_DIMS];
    // Bytes of a dense layout of the dims inside the current one.
    let mut span = sizes[0];
    for (i, &n) in sizes.iter().enumerate() {
        let step = match steps.and_then(|s| s.get(i)).copied() {
            Some(1) if i == 0 => esize as i64,
            Some(st) => st,
            None if i == 0 => esize as i64,
            None => {
                let v = i64::try_from(span).ok()?;
                span = span.checked_mul(n)?;
                v
            }
        };
        d[i] = PatternDim { step: i32::try_from(step).ok()?, size: u32::try_from(n).ok()? };
    }
    Some((sizes.len() as u8, d))
}

/// The byte range [lo, hi) a pattern side touches relative to its address.
fn extent(side: &PatternSide) -> (i128, i128) {
    let esize = side.dtype.size_bytes() as i128;
    let used = side.used_dims();
    let mut lo = 0i128;
    let mut hi = esize;
    for (i, d) in used.iter().enumerate() {
        let count = if i == 0 { i128::from(d.size) / esize.max(1) } else { i128::from(d.size) };
        let reach = (count - 1).max(0) * i128::from(d.step);
        lo += reach.min(0);
        hi += reach.max(0);
    }
    (lo, hi)
}

fn dtype_of(sg: &Subgraph, what: &str, name: Option<&str>) -> Result<Dtype, ProgramError> {
    let n = name.unwrap_or("uint8");
    Dtype::from_name(n).ok_or_else(|| bad(sg, what, format!("dtype {n:?} is not a known element type")))
}

fn transfer(sg: &Subgraph, what: &str, d: &DmaDesc, vars: &[MemRef]) -> Result<Transfer, ProgramError> {
    let to = var(sg, what, vars, d.to.as_deref().ok_or_else(|| bad(sg, what, "has no `to` var"))?)?;
    let from = var(sg, what, vars, d.from.as_deref().ok_or_else(|| bad(sg, what, "has no `from` var"))?)?;
    for (v, dir) in [(from, "reads"), (to, "writes")] {
        if matches!(v.kind, MemRefKind::List { .. }) {
            return Err(bad(sg, what, format!("{dir} var {:?}, a list, which has no memory", v.name)));
        }
    }
    let (from_off, to_off) = (d.from_off.unwrap_or(0), d.to_off.unwrap_or(0));
    let (src_dt, dst_dt) = (dtype_of(sg, what, d.from_dtype.as_deref())?, dtype_of(sg, what, d.to_dtype.as_deref())?);
    let src_sizes = d.from_sizes.as_deref().or(d.sizes.as_deref());
    let dst_sizes = d.to_sizes.as_deref().or(d.sizes.as_deref());
    let src_steps = d.from_steps.as_deref().or(d.steps.as_deref());
    let dst_steps = d.to_steps.as_deref().or(d.steps.as_deref());
    for (sizes, steps) in [(src_sizes, src_steps), (dst_sizes, dst_steps)] {
        if sizes.is_some_and(|s| s.len() > 4) || steps.is_some_and(|st| sizes.is_some_and(|s| s.len() != st.len())) {
            return Err(bad(sg, what, "needs at most 4 dims and as many steps as sizes"));
        }
    }
    let op = d.op.clone().unwrap_or(DmaOp::Copy);
    let plain = matches!(op, DmaOp::Copy) && src_dt == dst_dt;
    let src_len = src_sizes.map(|s| contiguous_len(s, src_steps, src_dt.size_bytes() as u64));
    let dst_len = dst_sizes.map(|s| contiguous_len(s, dst_steps, dst_dt.size_bytes() as u64));
    let contiguous = !matches!(src_len, Some(None)) && !matches!(dst_len, Some(None));
    if plain && contiguous {
        let len = match (src_len.flatten(), dst_len.flatten()) {
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
                return Err(bad(sg, what, format!("{dir} {len} bytes at +{off} of var {:?}, which is only {} bytes", v.name, v.size)));
            }
        }
        return Ok(Transfer { src: VarSlice { var_id: from.var_id, offset: from_off }, dst: VarSlice { var_id: to.var_id, offset: to_off }, len, pattern: None });
    }
    // A patterned transfer.
    let side = |sizes: Option<&[u64]>, steps: Option<&[i64]>, dt: Dtype, v: &MemRef, off: u64, other_elems: Option<u64>| -> Result<PatternSide, ProgramError> {
        let esize = dt.size_bytes() as u64;
        let default;
        let sizes = match sizes {
            Some(s) => s,
            None => {
                let elems = other_elems.unwrap_or(v.size.saturating_sub(off) / esize.max(1));
                default = [elems * esize];
                &default[..]
            }
        };
        let (ndims, dims) = dims(sizes, steps, esize).ok_or_else(|| bad(sg, what, format!("the access pattern on {:?} does not fit a pattern block", v.name)))?;
        Ok(PatternSide { addr: 0, dtype: dt, ndims, dims })
    };
    let dst_side = side(dst_sizes, dst_steps, dst_dt, to, to_off, None)?;
    let src_side = side(src_sizes, src_steps, src_dt, from, from_off, Some(dst_side.elements()))?;
    let constant = match (&d.constant, d.constant_dtype.as_deref()) {
        (None, _) => None,
        (Some(c), t) => Some(match (t.unwrap_or("float32"), c.as_f64()) {
            ("float32", Some(x)) => PatternConstant::F32(x as f32),
            ("int32", Some(x)) if x.fract() == 0.0 => PatternConstant::I32(x as i32),
            ("uint32", Some(x)) if x.fract() == 0.0 && x >= 0.0 => PatternConstant::U32(x as u32),
            (t, _) => return Err(bad(sg, what, format!("constant {c} of type {t:?} is not a float32, int32 or uint32 value"))),
        }),
    };
    let transpose = match (&op, &d.transpose_shape) {
        (DmaOp::Transpose | DmaOp::TransposeOp, Some(shape)) if shape.len() == 4 => Some(TransposeSpec {
            shape: [shape[0] as u32, shape[1] as u32, shape[2] as u32, shape[3] as u32],
            elem_size: d.transpose_element_size.unwrap_or(src_dt.size_bytes() as u32) as u8,
        }),
        (DmaOp::Transpose | DmaOp::TransposeOp, _) => return Err(bad(sg, what, "a transpose needs a 4-entry transpose_shape")),
        _ => None,
    };
    let block = PatternBlock {
        op: match op {
            DmaOp::Copy | DmaOp::Cast => pat::DmaOp::Copy,
            DmaOp::Fma => pat::DmaOp::Fma,
            DmaOp::Add => pat::DmaOp::Add,
            DmaOp::Min => pat::DmaOp::Min,
            DmaOp::Max => pat::DmaOp::Max,
            DmaOp::Transpose | DmaOp::TransposeOp => pat::DmaOp::Transpose,
            DmaOp::Other(o) => return Err(bad(sg, what, format!("DMA op {o:?} is not one the device performs (copy, cast, fma, add, min, max, transpose)"))),
        },
        src: src_side,
        dst: dst_side,
        scale: d.scale.unwrap_or(1.0) as f32,
        constant,
        transpose,
    };
    block.validate().map_err(|e| bad(sg, what, e.to_string()))?;
    for (v, off, s, dir) in [(from, from_off, &block.src, "reads"), (to, to_off, &block.dst, "writes")] {
        let (lo, hi) = extent(s);
        let sized = !matches!(v.kind, MemRefKind::StateBuffer);
        if i128::from(off) + lo < 0 || (sized && i128::from(off) + hi > i128::from(v.size)) {
            return Err(bad(sg, what, format!("{dir} bytes {}..{} of var {:?}, which is {} bytes", i128::from(off) + lo, i128::from(off) + hi, v.name, v.size)));
        }
    }
    let len = u64::try_from(extent(&block.src).1).unwrap_or(0);
    Ok(Transfer { src: VarSlice { var_id: from.var_id, offset: from_off }, dst: VarSlice { var_id: to.var_id, offset: to_off }, len, pattern: Some(block) })
}

#[cfg(test)]
mod tests {
    use super::{contiguous_len, dims};
    use proptest::prelude::*;

    #[test]
    fn contiguity_of_patterns() {
        assert_eq!(contiguous_len(&[2048, 128], Some(&[1, 2048]), 4), Some(2048 * 128));
        assert_eq!(contiguous_len(&[2048, 128], Some(&[4, 2048]), 4), Some(2048 * 128));
        assert_eq!(contiguous_len(&[2048, 128], Some(&[8, 2048]), 4), None);
        assert_eq!(contiguous_len(&[2048, 128], Some(&[1, 4096]), 4), None);
        assert_eq!(contiguous_len(&[64], None, 1), Some(64));
        assert_eq!(contiguous_len(&[], None, 1), None);
    }

    #[test]
    fn pattern_dims_default_to_dense_strides() {
        let (n, d) = dims(&[16, 3, 2], None, 4).unwrap();
        assert_eq!(n, 3);
        assert_eq!((d[0].step, d[0].size, d[1].step, d[2].step), (4, 16, 16, 48));
        let (_, d) = dims(&[4, 8], Some(&[1, 64]), 4).unwrap();
        assert_eq!((d[0].step, d[1].step), (4, 64));
        assert!(dims(&[], None, 4).is_none());
        assert!(dims(&[1, 1, 1, 1, 1], None, 4).is_none());
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
            prop_assert_eq!(contiguous_len(&sizes, Some(&steps), 1), Some(span));
        }
    }
}
