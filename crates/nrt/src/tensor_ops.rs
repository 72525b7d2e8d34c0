//! Element-wise work on device tensors without a NEFF: nrtpy's
//! `tensor_cast` and `tensor_compute` (libnrt 2.35's `nrt_tensor_cast` /
//! `nrt_tensor_compute`, whose C signatures are not published, so
//! libnrt.so does not export them; docs/c-api.md).
//!
//! The device does the work: each call becomes pattern blocks (the DMA
//! engine's cast and in-DMA add / min / max the collectives use,
//! `nrt_isa::dma_desc::pattern`) run in order on the tensors' core's
//! device-to-device queue ([`crate::transfer::Transfers::patterned`]).
//! `compute(op, [s0, s1, ..], dst)` is `dst = cast(s0)`, then
//! `dst = dst op s_k` for each further source, each step rounded to the
//! destination dtype (a reduction between equal dtypes runs exactly in
//! that dtype). Every tensor must be a device tensor on one logical core
//! (one physical core of one device), each operation starts at element 0,
//! and `num_elements` must fit every tensor; a destination overlapping a
//! source other than the first is refused (the first step would overwrite
//! it).

use crate::status::{NrtError, NrtResult};
use crate::tensor::{Placement, Tensor};
use nrt_isa::dma_desc::{DmaOp, PatternBlock, PatternSide};
use nrt_isa::dtype::Dtype;

/// Elements per pattern block (the simulator's DMA takes up to 2^24).
pub const BLOCK_ELEMENTS: u64 = 1 << 20;

/// The element-wise reductions of `tensor_compute`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeOp {
    /// dst = s0 + s1 + ...
    Add,
    /// dst = min(s0, s1, ...)
    Min,
    /// dst = max(s0, s1, ...)
    Max,
}

impl ComputeOp {
    /// Every op, in nrtpy's order.
    pub const ALL: [ComputeOp; 3] = [ComputeOp::Add, ComputeOp::Min, ComputeOp::Max];

    /// Its name (`ADD`, `MIN`, `MAX`).
    pub fn name(self) -> &'static str {
        match self {
            ComputeOp::Add => "ADD",
            ComputeOp::Min => "MIN",
            ComputeOp::Max => "MAX",
        }
    }

    /// The op named `name` (any case).
    pub fn from_name(name: &str) -> Option<ComputeOp> {
        ComputeOp::ALL.into_iter().find(|o| o.name().eq_ignore_ascii_case(name))
    }

    fn dma(self) -> DmaOp {
        match self {
            ComputeOp::Add => DmaOp::Add,
            ComputeOp::Min => DmaOp::Min,
            ComputeOp::Max => DmaOp::Max,
        }
    }
}

/// A tensor with the device dtype its elements are read or written as.
#[derive(Clone, Copy, Debug)]
pub struct Typed<'a> {
    /// The tensor.
    pub tensor: &'a Tensor,
    /// Its elements' dtype.
    pub dtype: Dtype,
}

/// Where a checked operand lives.
struct Operand {
    device: u32,
    core: nrt_hal::CoreId,
    addr: u64,
    bytes: u64,
    dtype: Dtype,
}

fn operand(role: &str, t: Typed<'_>, n: u64) -> NrtResult<Operand> {
    let name = t.tensor.name();
    if t.dtype == Dtype::Unknown {
        return Err(NrtError::invalid(format!("{role} tensor {name:?} has no device dtype; attach one (float32, bfloat16, ...)")));
    }
    let Placement::Device { core, addr } = t.tensor.placement() else {
        return Err(NrtError::invalid(format!("{role} tensor {name:?} is a host tensor; tensor cast and compute take device tensors")));
    };
    let bytes = n.checked_mul(t.dtype.size_bytes() as u64).filter(|&b| b <= t.tensor.size()).ok_or_else(|| {
        NrtError::invalid(format!(
            "{role} tensor {name:?} holds {} bytes, fewer than {n} elements of {} ({} bytes each)",
            t.tensor.size(),
            t.dtype.name(),
            t.dtype.size_bytes()
        ))
    })?;
    Ok(Operand { device: t.tensor.device_index().unwrap_or(u32::MAX), core, addr: addr.get(), bytes, dtype: t.dtype })
}

/// The pattern blocks of `op` from `src` into `dst` over `n` elements.
fn blocks(op: DmaOp, src: &Operand, dst: &Operand, n: u64, out: &mut Vec<PatternBlock>) {
    let mut at = 0;
    while at < n {
        let k = (n - at).min(BLOCK_ELEMENTS);
        let side = |o: &Operand| PatternSide::contiguous(o.addr + at * o.dtype.size_bytes() as u64, o.dtype, k as u32);
        out.push(PatternBlock { op, src: side(src), dst: side(dst), scale: 1.0, constant: None, transpose: None });
        at += k;
    }
}

/// The tensors' common device and core, or NRT_INVALID naming the first
/// that differs.
fn one_core(dst: &Operand, srcs: &[(&str, &Operand)]) -> NrtResult<()> {
    for (name, s) in srcs {
        if (s.device, s.core) != (dst.device, dst.core) {
            return Err(NrtError::invalid(format!(
                "tensor {name:?} is on ND {} physical core {}, the destination on ND {} physical core {}; all tensors must be on one logical core",
                s.device, s.core.0, dst.device, dst.core.0
            )));
        }
    }
    Ok(())
}

fn overlaps(a: &Operand, b: &Operand) -> bool {
    a.addr < b.addr + b.bytes && b.addr < a.addr + a.bytes
}

/// nrtpy's `tensor_cast(src, dst, num_elements)`: `num_elements` elements
/// of `src` converted from its dtype to `dst`'s (round to nearest even)
/// by the device.
pub fn cast(src: Typed<'_>, dst: Typed<'_>, num_elements: u64) -> NrtResult<()> {
    let s = operand("source", src, num_elements)?;
    let d = operand("destination", dst, num_elements)?;
    one_core(&d, &[(src.tensor.name(), &s)])?;
    let mut work = Vec::new();
    blocks(DmaOp::Copy, &s, &d, num_elements, &mut work);
    run(dst.tensor, d.core, &work)
}

/// nrtpy's `tensor_compute(op, srcs, dst, num_elements)`: the element-wise
/// `op` of every source into `dst`, by the device (see the module docs).
pub fn compute(op: ComputeOp, srcs: &[Typed<'_>], dst: Typed<'_>, num_elements: u64) -> NrtResult<()> {
    if srcs.is_empty() {
        return Err(NrtError::invalid("tensor_compute needs at least one source tensor"));
    }
    let d = operand("destination", dst, num_elements)?;
    let ops = srcs.iter().map(|s| operand("source", *s, num_elements)).collect::<NrtResult<Vec<_>>>()?;
    let named: Vec<(&str, &Operand)> = srcs.iter().map(|s| s.tensor.name()).zip(&ops).collect();
    one_core(&d, &named)?;
    if let Some((name, _)) = named.iter().skip(1).find(|(_, s)| num_elements > 0 && overlaps(s, &d)) {
        return Err(NrtError::invalid(format!(
            "the destination overlaps source {name:?}, which is not the first source: the first step would overwrite it"
        )));
    }
    let mut work = Vec::new();
    blocks(DmaOp::Copy, &ops[0], &d, num_elements, &mut work);
    for s in &ops[1..] {
        blocks(op.dma(), s, &d, num_elements, &mut work);
    }
    run(dst.tensor, d.core, &work)
}

fn run(dst: &Tensor, core: nrt_hal::CoreId, work: &[PatternBlock]) -> NrtResult<()> {
    let memory = dst.device_memory().ok_or_else(|| NrtError::invalid(format!("tensor {:?} is a host tensor", dst.name())))?;
    memory.transfers().patterned(memory, core, work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names() {
        assert_eq!(ComputeOp::from_name("max"), Some(ComputeOp::Max));
        assert_eq!(ComputeOp::from_name("Add").map(ComputeOp::name), Some("ADD"));
        assert_eq!(ComputeOp::from_name("mul"), None);
    }

    #[test]
    fn host_tensors_and_untyped_tensors_are_refused() {
        // (A device tensor shorter than the count: tests/transfers.rs,
        // which has a device.)
        let h = Tensor::from_host_bytes(vec![0; 16], "h");
        let e = cast(Typed { tensor: &h, dtype: Dtype::Float32 }, Typed { tensor: &h, dtype: Dtype::Float16 }, 4).unwrap_err();
        assert!(e.message.contains("host tensor"), "{e}");
        let e = operand("source", Typed { tensor: &h, dtype: Dtype::Float32 }, 5).err().unwrap();
        assert!(e.message.contains("is a host tensor"), "{e}");
        let e = operand("source", Typed { tensor: &h, dtype: Dtype::Unknown }, 1).err().unwrap();
        assert!(e.message.contains("no device dtype"), "{e}");
    }

    #[test]
    fn large_operations_split_into_blocks() {
        let o = |addr| Operand { device: 0, core: nrt_hal::CoreId(0), addr, bytes: 0, dtype: Dtype::Float32 };
        let mut out = Vec::new();
        blocks(DmaOp::Add, &o(0x1000), &o(0x10_0000_0000), BLOCK_ELEMENTS + 3, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!((out[1].src.addr, out[1].src.elements()), (0x1000 + 4 * BLOCK_ELEMENTS, 3));
        assert!(out.iter().all(|b| b.validate().is_ok()));
    }
}
