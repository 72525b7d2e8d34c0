//! Execution of patterned DMA transfers (the pattern-block extension of
//! `nrt_isa::dma_desc::pattern`): access patterns of up to 4 dims per
//! side, casts between dtypes, fma / add / min / max and transpose.
//!
//! Elements are gathered from the source pattern in pattern order
//! (innermost dim fastest), transformed, and scattered to the destination
//! pattern in the same order. Arithmetic goes through f32 (the DMA
//! engine's compute datapath); results are rounded to nearest-even into
//! the destination dtype. A reduction of the source into the destination
//! (add / fma / min / max, no constant, both sides of one dtype) is the
//! collectives' in-DMA reduce and runs exactly in that dtype
//! ([`crate::dma::reduce`]: integers wrap instead of passing through f32).
//!
//! Transpose (ours, as the block format leaves it open): `shape` is
//! innermost-first `[d0, d1, d2, d3]` (a zero counts as 1); the gathered
//! elements form a tensor with `d0` fastest, and the output swaps the two
//! innermost axes, so within each outer `(i3, i2)` slab
//! `out[i0 * d1 + i1] = in[i1 * d0 + i0]`. Transpose moves bytes: the
//! element size must match both sides' dtypes.

use nrt_hal::{DeviceAddr, HalError, HalResult};
use nrt_isa::dma_desc::{DmaOp, PatternBlock, PatternConstant, PatternSide};
use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, convert, f32_to_bytes};

/// Largest number of elements one pattern block may move (self-protection
/// against a block that would make the simulator allocate gigabytes).
pub const MAX_ELEMENTS: u64 = 1 << 24;

/// Byte access to device memory.
pub trait Bytes {
    /// Reads device bytes.
    fn read_bytes(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()>;
    /// Writes device bytes.
    fn write_bytes(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()>;
}

fn bad(addr: u64, why: impl Into<String>) -> HalError {
    HalError::invalid(DeviceAddr(addr), 0, why.into())
}

/// Start addresses of the contiguous runs a side covers, in pattern order,
/// plus the run length in bytes (one element when the innermost step is
/// not the element size).
fn runs(side: &PatternSide) -> HalResult<(Vec<u64>, usize)> {
    let dims = side.used_dims();
    let esize = side.dtype.size_bytes() as u64;
    let inner = dims[0];
    let inner_elems = u64::from(inner.size) / esize;
    let contiguous = i64::from(inner.step) == esize as i64;
    let (run_len, per_run_count, per_run_step) =
        if contiguous { (u64::from(inner.size), 1, 0i64) } else { (esize, inner_elems, i64::from(inner.step)) };
    let mut starts = Vec::new();
    let outer: Vec<(u64, i64)> = dims[1..].iter().map(|d| (u64::from(d.size), i64::from(d.step))).collect();
    let total_runs = outer.iter().fold(per_run_count, |n, (c, _)| n.saturating_mul(*c));
    if total_runs.saturating_mul(run_len / esize) > MAX_ELEMENTS {
        return Err(bad(side.addr, format!("pattern moves more than {MAX_ELEMENTS} elements")));
    }
    starts.reserve(total_runs as usize);
    let mut idx = vec![0u64; outer.len()];
    loop {
        let mut base = side.addr as i128;
        for (k, (_, step)) in outer.iter().enumerate() {
            base += i128::from(idx[k]) * i128::from(*step);
        }
        for j in 0..per_run_count {
            let a = base + i128::from(j) * i128::from(per_run_step);
            let a = u64::try_from(a).map_err(|_| bad(side.addr, "pattern steps leave the address space"))?;
            starts.push(a);
        }
        // Odometer over the outer dims.
        let mut k = 0;
        loop {
            if k == outer.len() {
                return Ok((starts, run_len as usize));
            }
            idx[k] += 1;
            if idx[k] < outer[k].0 {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
    }
}

fn gather(mem: &dyn Bytes, side: &PatternSide) -> HalResult<Vec<u8>> {
    let (starts, run) = runs(side)?;
    let mut out = vec![0u8; starts.len() * run];
    for (chunk, &a) in out.chunks_exact_mut(run).zip(&starts) {
        mem.read_bytes(DeviceAddr(a), chunk)?;
    }
    Ok(out)
}

fn scatter(mem: &dyn Bytes, side: &PatternSide, data: &[u8]) -> HalResult<()> {
    let (starts, run) = runs(side)?;
    for (chunk, &a) in data.chunks_exact(run).zip(&starts) {
        mem.write_bytes(DeviceAddr(a), chunk)?;
    }
    Ok(())
}

fn to_f32(bytes: &[u8], dtype: Dtype, addr: u64) -> HalResult<Vec<f32>> {
    let mut v = vec![0f32; bytes.len() / dtype.size_bytes()];
    bytes_to_f32(bytes, dtype, &mut v).map_err(|e| bad(addr, e.to_string()))?;
    Ok(v)
}

fn constant(c: PatternConstant) -> f32 {
    match c {
        PatternConstant::F32(x) => x,
        PatternConstant::I32(x) => x as f32,
        PatternConstant::U32(x) => x as f32,
    }
}

/// Executes one pattern block; returns the bytes written (for the cost
/// model).
pub fn execute(mem: &dyn Bytes, b: &PatternBlock) -> HalResult<u64> {
    let n = b.src.elements();
    if n != b.dst.elements() {
        return Err(bad(
            b.dst.addr,
            format!("source covers {n} elements, destination {}", b.dst.elements()),
        ));
    }
    let src = gather(mem, &b.src)?;
    let dsize = b.dst.dtype.size_bytes();
    let reduces = matches!(b.op, DmaOp::Fma | DmaOp::Add | DmaOp::Min | DmaOp::Max) && b.constant.is_none() && b.src.dtype == b.dst.dtype;
    let mut out = if reduces { gather(mem, &b.dst)? } else { vec![0u8; n as usize * dsize] };
    match b.op {
        DmaOp::Copy => {
            convert(&src, b.src.dtype, &mut out, b.dst.dtype, &mut Rounding::NearestEven)
                .map_err(|e| bad(b.src.addr, e.to_string()))?;
        }
        DmaOp::Transpose => {
            let Some(t) = b.transpose else { return Err(bad(b.src.addr, "transpose without parameters")) };
            let es = usize::from(t.elem_size);
            if es != b.src.dtype.size_bytes() || es != dsize {
                return Err(bad(b.src.addr, "transpose element size must match both dtypes"));
            }
            let d: Vec<usize> = t.shape.iter().map(|&x| x.max(1) as usize).collect();
            let (d0, d1) = (d[0], d[1]);
            let slab = d0 * d1;
            let covered = d.iter().try_fold(1u64, |acc, &x| acc.checked_mul(x as u64));
            if covered != Some(n) {
                return Err(bad(b.src.addr, format!("transpose shape {:?} does not cover {n} elements", t.shape)));
            }
            for s in 0..(n as usize / slab) {
                for i1 in 0..d1 {
                    for i0 in 0..d0 {
                        let from = (s * slab + i1 * d0 + i0) * es;
                        let to = (s * slab + i0 * d1 + i1) * es;
                        out[to..to + es].copy_from_slice(&src[from..from + es]);
                    }
                }
            }
        }
        _ if reduces => {
            // A reduction into the destination in one dtype (the
            // collectives' receive): exact per dtype, see `reduce.rs`.
            crate::dma::reduce::reduce_into(b.op, b.scale, b.dst.dtype, &src, &mut out).map_err(|e| bad(b.dst.addr, e.to_string()))?;
        }
        DmaOp::Fma | DmaOp::Add | DmaOp::Min | DmaOp::Max => {
            let x = to_f32(&src, b.src.dtype, b.src.addr)?;
            let needs_dst = b.op == DmaOp::Fma || b.constant.is_none();
            let y = if needs_dst { to_f32(&gather(mem, &b.dst)?, b.dst.dtype, b.dst.addr)? } else { Vec::new() };
            let other = |i: usize| b.constant.map_or_else(|| y[i], constant);
            let r: Vec<f32> = (0..x.len())
                .map(|i| match b.op {
                    DmaOp::Fma => x[i] * b.scale + y[i],
                    DmaOp::Add => x[i] + other(i),
                    DmaOp::Min => x[i].min(other(i)),
                    _ => x[i].max(other(i)),
                })
                .collect();
            f32_to_bytes(&r, b.dst.dtype, &mut out, &mut Rounding::NearestEven)
                .map_err(|e| bad(b.dst.addr, e.to_string()))?;
        }
    }
    scatter(mem, &b.dst, &out)?;
    Ok(out.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::dma_desc::{PatternDim, TransposeSpec};
    use proptest::prelude::*;
    use std::cell::RefCell;

    struct Flat(RefCell<Vec<u8>>);
    impl Bytes for Flat {
        fn read_bytes(&self, a: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
            let m = self.0.borrow();
            let s = a.get() as usize;
            buf.copy_from_slice(m.get(s..s + buf.len()).ok_or_else(|| bad(a.get(), "oob"))?);
            Ok(())
        }
        fn write_bytes(&self, a: DeviceAddr, d: &[u8]) -> HalResult<()> {
            let mut m = self.0.borrow_mut();
            let s = a.get() as usize;
            m.get_mut(s..s + d.len()).ok_or_else(|| bad(a.get(), "oob"))?.copy_from_slice(d);
            Ok(())
        }
    }

    fn side(addr: u64, dtype: Dtype, dims: &[(i32, u32)]) -> PatternSide {
        let mut d = [PatternDim::default(); 4];
        for (i, &(step, size)) in dims.iter().enumerate() {
            d[i] = PatternDim { step, size };
        }
        PatternSide { addr, dtype, ndims: dims.len() as u8, dims: d }
    }

    fn f32s(m: &Flat, at: usize, n: usize) -> Vec<f32> {
        m.0.borrow()[at..at + 4 * n].chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    fn put_f32s(m: &Flat, at: usize, v: &[f32]) {
        for (i, x) in v.iter().enumerate() {
            m.0.borrow_mut()[at + 4 * i..at + 4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
    }

    fn block(op: DmaOp, src: PatternSide, dst: PatternSide) -> PatternBlock {
        PatternBlock { op, src, dst, scale: 1.0, constant: None, transpose: None }
    }

    #[test]
    fn strided_gather_reads_a_column() {
        let m = Flat(RefCell::new(vec![0; 4096]));
        // A 4x3 row-major f32 matrix at 0; read column 1 into 1024.
        put_f32s(&m, 0, &(0..12).map(|i| i as f32).collect::<Vec<_>>());
        let b = block(DmaOp::Copy, side(4, Dtype::Float32, &[(12, 4), (12, 4)]), side(1024, Dtype::Float32, &[(4, 16)]));
        // inner dim: one element (4 bytes) with step 12; outer 4 rows.
        let b = PatternBlock { src: side(4, Dtype::Float32, &[(12, 4), (12, 4)]), ..b };
        execute(&m, &b).unwrap();
        assert_eq!(f32s(&m, 1024, 4), vec![1.0, 4.0, 7.0, 10.0]);
    }

    #[test]
    fn cast_fma_add_min_max() {
        let m = Flat(RefCell::new(vec![0; 4096]));
        put_f32s(&m, 0, &[1.5, -2.0, 3.25, 8.0]);
        let src = side(0, Dtype::Float32, &[(4, 16)]);
        // Cast to bf16 and back.
        execute(&m, &block(DmaOp::Copy, src, side(100, Dtype::Bfloat16, &[(2, 8)]))).unwrap();
        execute(&m, &block(DmaOp::Copy, side(100, Dtype::Bfloat16, &[(2, 8)]), side(200, Dtype::Float32, &[(4, 16)]))).unwrap();
        assert_eq!(f32s(&m, 200, 4), vec![1.5, -2.0, 3.25, 8.0]);
        // dst = src * 2 + dst
        let fma = PatternBlock { scale: 2.0, ..block(DmaOp::Fma, src, side(200, Dtype::Float32, &[(4, 16)])) };
        execute(&m, &fma).unwrap();
        assert_eq!(f32s(&m, 200, 4), vec![4.5, -6.0, 9.75, 24.0]);
        let add = PatternBlock { constant: Some(PatternConstant::F32(1.0)), ..block(DmaOp::Add, src, side(300, Dtype::Float32, &[(4, 16)])) };
        execute(&m, &add).unwrap();
        assert_eq!(f32s(&m, 300, 4), vec![2.5, -1.0, 4.25, 9.0]);
        put_f32s(&m, 400, &[0.0, 0.0, 5.0, 5.0]);
        execute(&m, &block(DmaOp::Max, src, side(400, Dtype::Float32, &[(4, 16)]))).unwrap();
        assert_eq!(f32s(&m, 400, 4), vec![1.5, 0.0, 5.0, 8.0]);
        let min = PatternBlock { constant: Some(PatternConstant::I32(2)), ..block(DmaOp::Min, src, side(500, Dtype::Float32, &[(4, 16)])) };
        execute(&m, &min).unwrap();
        assert_eq!(f32s(&m, 500, 4), vec![1.5, -2.0, 2.0, 2.0]);
    }

    #[test]
    fn oversized_and_overflowing_blocks_are_refused() {
        let m = Flat(RefCell::new(vec![0; 256]));
        let huge = block(DmaOp::Copy, side(0, Dtype::Float32, &[(4, !3u32)]), side(64, Dtype::Float32, &[(4, !3u32)]));
        assert!(execute(&m, &huge).is_err());
        let t = PatternBlock {
            transpose: Some(TransposeSpec { shape: [u32::MAX; 4], elem_size: 4 }),
            ..block(DmaOp::Transpose, side(0, Dtype::Float32, &[(4, 16)]), side(64, Dtype::Float32, &[(4, 16)]))
        };
        assert!(execute(&m, &t).is_err());
    }

    #[test]
    fn mismatched_counts_are_refused() {
        let m = Flat(RefCell::new(vec![0; 256]));
        let b = block(DmaOp::Copy, side(0, Dtype::Float32, &[(4, 16)]), side(64, Dtype::Float32, &[(4, 12)]));
        assert!(execute(&m, &b).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn transpose_matches_reference(d0 in 1u32..9, d1 in 1u32..9, d2 in 1u32..3) {
            let n = (d0 * d1 * d2) as usize;
            let m = Flat(RefCell::new(vec![0; 8 * n + 64]));
            let vals: Vec<f32> = (0..n).map(|i| i as f32).collect();
            put_f32s(&m, 0, &vals);
            let dst = 4 * n;
            let b = PatternBlock {
                transpose: Some(TransposeSpec { shape: [d0, d1, d2, 0], elem_size: 4 }),
                ..block(DmaOp::Transpose, side(0, Dtype::Float32, &[(4, 4 * n as u32)]), side(dst as u64, Dtype::Float32, &[(4, 4 * n as u32)]))
            };
            execute(&m, &b).unwrap();
            let got = f32s(&m, dst, n);
            let (d0, d1) = (d0 as usize, d1 as usize);
            for s in 0..d2 as usize {
                for i1 in 0..d1 {
                    for i0 in 0..d0 {
                        prop_assert_eq!(got[s * d0 * d1 + i0 * d1 + i1], vals[s * d0 * d1 + i1 * d0 + i0]);
                    }
                }
            }
        }

        #[test]
        fn four_dim_copy_matches_nested_loops(sizes in prop::array::uniform4(1u32..4), rev in any::<bool>()) {
            // Source: a dense 4-D f32 block; destination: the same walk
            // with the outermost axis optionally reversed (negative step).
            let [a, b2, c, d] = sizes;
            let n = (a * b2 * c * d) as usize;
            let m = Flat(RefCell::new(vec![0; 8 * n + 64]));
            let vals: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
            put_f32s(&m, 0, &vals);
            let s1 = 4 * a as i32;
            let s2 = s1 * b2 as i32;
            let s3 = s2 * c as i32;
            let src = side(0, Dtype::Float32, &[(4, 4 * a), (s1, b2), (s2, c), (s3, d)]);
            let base = 4 * n as u64;
            let (dst_addr, s3d) = if rev { (base + (s3 as u64) * u64::from(d - 1), -s3) } else { (base, s3) };
            let dst = side(dst_addr, Dtype::Float32, &[(4, 4 * a), (s1, b2), (s2, c), (s3d, d)]);
            execute(&m, &block(DmaOp::Copy, src, dst)).unwrap();
            let got = f32s(&m, base as usize, n);
            let slab = (a * b2 * c) as usize;
            for l in 0..d as usize {
                let from = if rev { d as usize - 1 - l } else { l };
                prop_assert_eq!(&got[from * slab..(from + 1) * slab], &vals[l * slab..(l + 1) * slab]);
            }
        }
    }
}
