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

use crate::kernels::scratch;

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

/// The contiguous runs a side covers: `total` runs of `len` bytes (one
/// element when the innermost step is not the element size), enumerated
/// in pattern order by [`Runs::visit`] without collecting them, so a
/// pattern block executes without heap allocation.
struct Runs {
    addr: u64,
    len: usize,
    total: u64,
    per_outer: u64,
    inner_step: i64,
    /// `(count, step)` of the outer dims (at most 3 of the block's 4).
    outer: [(u64, i64); 4],
    rank: usize,
}

impl Runs {
    fn of(side: &PatternSide) -> HalResult<Self> {
        let dims = side.used_dims();
        let esize = side.dtype.size_bytes() as u64;
        let inner = dims[0];
        let inner_elems = u64::from(inner.size) / esize;
        let contiguous = i64::from(inner.step) == esize as i64;
        let (len, per_outer, inner_step) =
            if contiguous { (u64::from(inner.size), 1, 0i64) } else { (esize, inner_elems, i64::from(inner.step)) };
        let mut outer = [(1u64, 0i64); 4];
        let rank = dims.len() - 1;
        for (o, d) in outer.iter_mut().zip(&dims[1..]) {
            *o = (u64::from(d.size), i64::from(d.step));
        }
        let total = outer[..rank].iter().fold(per_outer, |n, (c, _)| n.saturating_mul(*c));
        if total.saturating_mul(len / esize) > MAX_ELEMENTS {
            return Err(bad(side.addr, format!("pattern moves more than {MAX_ELEMENTS} elements")));
        }
        Ok(Self { addr: side.addr, len: len as usize, total, per_outer, inner_step, outer, rank })
    }

    /// Bytes the runs cover.
    fn bytes(&self) -> usize {
        self.total as usize * self.len
    }

    /// Calls `f(index, address)` for every run, in pattern order.
    fn visit(&self, mut f: impl FnMut(usize, u64) -> HalResult<()>) -> HalResult<()> {
        if self.total == 0 {
            return Ok(());
        }
        let outer = &self.outer[..self.rank];
        let mut idx = [0u64; 4];
        let mut n = 0usize;
        loop {
            let mut base = self.addr as i128;
            for (k, (_, step)) in outer.iter().enumerate() {
                base += i128::from(idx[k]) * i128::from(*step);
            }
            for j in 0..self.per_outer {
                let a = base + i128::from(j) * i128::from(self.inner_step);
                let a = u64::try_from(a).map_err(|_| bad(self.addr, "pattern steps leave the address space"))?;
                f(n, a)?;
                n += 1;
            }
            // Odometer over the outer dims.
            let mut k = 0;
            loop {
                if k == outer.len() {
                    return Ok(());
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
}

/// Reads a side's bytes into a pooled buffer (hand it back with
/// `scratch::recycle_bytes`).
fn gather(mem: &dyn Bytes, side: &PatternSide) -> HalResult<Vec<u8>> {
    let runs = Runs::of(side)?;
    // Every run is read into its place below.
    let mut out = scratch::bytes_for_overwrite(runs.bytes());
    let len = runs.len;
    match runs.visit(|i, a| mem.read_bytes(DeviceAddr(a), &mut out[i * len..(i + 1) * len])) {
        Ok(()) => Ok(out),
        Err(e) => {
            scratch::recycle_bytes(out);
            Err(e)
        }
    }
}

fn scatter(mem: &dyn Bytes, side: &PatternSide, data: &[u8]) -> HalResult<()> {
    let runs = Runs::of(side)?;
    let len = runs.len;
    // As a zip of runs and data chunks: runs past the data are not written.
    let chunks = data.len() / len.max(1);
    runs.visit(|i, a| if i < chunks { mem.write_bytes(DeviceAddr(a), &data[i * len..(i + 1) * len]) } else { Ok(()) })
}

/// Widens `bytes` into a pooled f32 buffer (return it with
/// `scratch::recycle_f32`).
fn to_f32(bytes: &[u8], dtype: Dtype, addr: u64) -> HalResult<Vec<f32>> {
    let mut v = scratch::f32_filled(bytes.len() / dtype.size_bytes(), 0.0);
    if let Err(e) = bytes_to_f32(bytes, dtype, &mut v) {
        scratch::recycle_f32(v);
        return Err(bad(addr, e.to_string()));
    }
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
    if let Some(done) = reduce_streamed(mem, b) {
        return done;
    }
    let src = gather(mem, &b.src)?;
    // A reduction into the destination in one dtype (the collectives'
    // receive) starts from the destination's bytes.
    let mut out = if reduces(b) {
        match gather(mem, &b.dst) {
            Ok(d) => d,
            Err(e) => {
                scratch::recycle_bytes(src);
                return Err(e);
            }
        }
    } else {
        // `transform` writes every element (or fails, and nothing is
        // scattered).
        scratch::bytes_for_overwrite(n as usize * b.dst.dtype.size_bytes())
    };
    let res = transform(mem, b, n, &src, &mut out).and_then(|()| scatter(mem, &b.dst, &out));
    let written = out.len() as u64;
    scratch::recycle_bytes(src);
    scratch::recycle_bytes(out);
    res.map(|()| written)
}

/// Most copies a [`CopyPlan`] keeps; a block that would need more (an
/// element-wise strided gather) takes the general path every time.
pub const MAX_PLAN_RUNS: usize = 512;

/// A pattern block that moves its bytes unchanged (a COPY between sides of
/// one storage type), decoded once into the copies it makes: the runs
/// where both sides are contiguous, adjacent ones coalesced, so a block
/// that loads a tile into SBUF is one copy per partition row, with no
/// staging buffer, no conversion pass and no per-element walk.
///
/// Kept by the queue with the block's bytes ([`crate::dma::rings`]) and
/// rebuilt when they change. A plan is made only for blocks whose two
/// sides do not overlap, so copying run by run is the same as the general
/// path's gather of the whole source before the scatter.
#[derive(Clone, Debug, Default)]
pub struct CopyPlan {
    /// `(source, destination, bytes)` in pattern order.
    runs: Vec<(u64, u64, u64)>,
    /// Bytes the block writes (for the cost model).
    bytes: u64,
}

impl CopyPlan {
    /// Decodes `b` into this plan's storage (reusing it); false when the
    /// block is not a plain copy (another op, a cast, overlapping sides,
    /// a malformed side or more than [`MAX_PLAN_RUNS`] runs): the general
    /// path ([`execute`]) then runs it, and reports what is wrong with it.
    pub fn rebuild(&mut self, b: &PatternBlock) -> bool {
        self.runs.clear();
        self.bytes = 0;
        let same_storage = b.src.dtype == b.dst.dtype
            || matches!((b.src.dtype, b.dst.dtype), (Dtype::Float32, Dtype::Float32r) | (Dtype::Float32r, Dtype::Float32));
        if b.op != DmaOp::Copy || !same_storage || b.src.elements() != b.dst.elements() {
            return false;
        }
        let (Ok(s), Ok(d)) = (Runs::of(&b.src), Runs::of(&b.dst)) else { return false };
        let total = s.bytes() as u64;
        let whole = b.src.elements().saturating_mul(b.src.dtype.size_bytes() as u64);
        if total != d.bytes() as u64 || total != whole || s.len == 0 || d.len == 0 {
            return false;
        }
        if s.total.max(d.total) > MAX_PLAN_RUNS as u64 * 4 {
            return false;
        }
        // Both sides' runs, then their byte streams merged: a piece ends
        // where either side's run does.
        let mut src = [0u64; MAX_PLAN_RUNS * 4];
        let mut dst = [0u64; MAX_PLAN_RUNS * 4];
        let collect = |r: &Runs, out: &mut [u64]| r.visit(|i, a| {
            out[i] = a;
            Ok(())
        });
        if collect(&s, &mut src).is_err() || collect(&d, &mut dst).is_err() {
            return false;
        }
        let (sl, dl) = (s.len as u64, d.len as u64);
        let extent = |addrs: &[u64], len: u64| {
            let lo = addrs.iter().copied().min().unwrap_or(0);
            let hi = addrs.iter().map(|a| a.saturating_add(len)).max().unwrap_or(0);
            (lo, hi)
        };
        let ((slo, shi), (dlo, dhi)) = (extent(&src[..s.total as usize], sl), extent(&dst[..d.total as usize], dl));
        if slo < dhi && dlo < shi {
            return false;
        }
        let mut at = 0u64;
        while at < total {
            let (si, so) = ((at / sl) as usize, at % sl);
            let (di, doff) = ((at / dl) as usize, at % dl);
            let n = (sl - so).min(dl - doff);
            let (sa, da) = (src[si] + so, dst[di] + doff);
            match self.runs.last_mut() {
                Some((ps, pd, pn)) if *ps + *pn == sa && *pd + *pn == da => *pn += n,
                _ => {
                    if self.runs.len() == MAX_PLAN_RUNS {
                        self.runs.clear();
                        return false;
                    }
                    self.runs.push((sa, da, n));
                }
            }
            at += n;
        }
        self.bytes = total;
        true
    }

    /// The copies, `(source, destination, bytes)` in pattern order.
    pub fn runs(&self) -> &[(u64, u64, u64)] {
        &self.runs
    }

    /// Bytes the block writes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Bytes of one piece of a streamed reduction ([`reduce_streamed`]): a
/// piece of each side (2 x 32 KiB) stays in the L2 cache while it is
/// reduced.
const PIECE_BYTES: usize = 32 << 10;

/// A reduction (see [`reduces`]) between two contiguous runs that do not
/// overlap (every collectives receive), streamed piece by piece: read a
/// piece of each side, reduce, write the destination's piece. The bytes
/// pass through cache-sized buffers once, where the general path
/// gathers both whole sides into temporaries and scatters the result
/// back. A side that cannot be read or written stops the transfer there
/// (the pieces before it have landed, as on an engine that aborts
/// mid-transfer). `None`: any other block, for the general path (which
/// also reports malformed sides).
fn reduce_streamed(mem: &dyn Bytes, b: &PatternBlock) -> Option<HalResult<u64>> {
    if !reduces(b) {
        return None;
    }
    let (s, d) = (Runs::of(&b.src).ok()?, Runs::of(&b.dst).ok()?);
    if s.total != 1 || d.total != 1 || s.len != d.len {
        return None;
    }
    let len = d.len as u64;
    if s.addr < d.addr.saturating_add(len) && d.addr < s.addr.saturating_add(len) {
        return None;
    }
    let piece = PIECE_BYTES.min(d.len);
    let mut x = scratch::bytes_zeroed(piece);
    let mut y = scratch::bytes_zeroed(piece);
    let mut run = || -> HalResult<u64> {
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(piece as u64) as usize;
            let (sa, da) = (DeviceAddr(s.addr + done), DeviceAddr(d.addr + done));
            mem.read_bytes(sa, &mut x[..n])?;
            mem.read_bytes(da, &mut y[..n])?;
            crate::dma::reduce::reduce_into(b.op, b.scale, b.dst.dtype, &x[..n], &mut y[..n]).map_err(|e| bad(da.get(), e.to_string()))?;
            mem.write_bytes(da, &y[..n])?;
            done += n as u64;
        }
        Ok(len)
    };
    let res = run();
    scratch::recycle_bytes(x);
    scratch::recycle_bytes(y);
    Some(res)
}

/// Whether the block reduces its source into its destination in the
/// destination's own dtype, exactly (`reduce.rs`).
fn reduces(b: &PatternBlock) -> bool {
    matches!(b.op, DmaOp::Fma | DmaOp::Add | DmaOp::Min | DmaOp::Max) && b.constant.is_none() && b.src.dtype == b.dst.dtype
}

/// The block's operation from the gathered source `src` into `out` (the
/// destination's `n` elements; for a reduction, already its bytes).
fn transform(mem: &dyn Bytes, b: &PatternBlock, n: u64, src: &[u8], out: &mut [u8]) -> HalResult<()> {
    let dsize = b.dst.dtype.size_bytes();
    match b.op {
        DmaOp::Copy => {
            convert(src, b.src.dtype, out, b.dst.dtype, &mut Rounding::NearestEven)
                .map_err(|e| bad(b.src.addr, e.to_string()))?;
        }
        DmaOp::Transpose => {
            let Some(t) = b.transpose else { return Err(bad(b.src.addr, "transpose without parameters")) };
            let es = usize::from(t.elem_size);
            if es != b.src.dtype.size_bytes() || es != dsize {
                return Err(bad(b.src.addr, "transpose element size must match both dtypes"));
            }
            let d = t.shape.map(|x| x.max(1) as usize);
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
        _ if reduces(b) => {
            // Exact per dtype, see `reduce.rs`.
            crate::dma::reduce::reduce_into(b.op, b.scale, b.dst.dtype, src, out).map_err(|e| bad(b.dst.addr, e.to_string()))?;
        }
        DmaOp::Fma | DmaOp::Add | DmaOp::Min | DmaOp::Max => {
            let mut x = to_f32(src, b.src.dtype, b.src.addr)?;
            let needs_dst = b.op == DmaOp::Fma || b.constant.is_none();
            let y = if needs_dst {
                let y = gather(mem, &b.dst).and_then(|d| {
                    let y = to_f32(&d, b.dst.dtype, b.dst.addr);
                    scratch::recycle_bytes(d);
                    y
                });
                match y {
                    Ok(y) => y,
                    Err(e) => {
                        scratch::recycle_f32(x);
                        return Err(e);
                    }
                }
            } else {
                Vec::new()
            };
            let other = |i: usize| b.constant.map_or_else(|| y[i], constant);
            for (i, v) in x.iter_mut().enumerate() {
                *v = match b.op {
                    DmaOp::Fma => *v * b.scale + y[i],
                    DmaOp::Add => *v + other(i),
                    DmaOp::Min => v.min(other(i)),
                    _ => v.max(other(i)),
                };
            }
            let res = f32_to_bytes(&x, b.dst.dtype, out, &mut Rounding::NearestEven).map_err(|e| bad(b.dst.addr, e.to_string()));
            scratch::recycle_f32(x);
            scratch::recycle_f32(y);
            res?;
        }
    }
    Ok(())
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

    /// A reduction between contiguous sides spanning several streamed
    /// pieces (and a partial one) gives the element-wise result of every
    /// op; sides that overlap take the gathering path, whose result is
    /// that of reading the whole source before writing.
    #[test]
    fn streamed_reductions_match_the_elementwise_reference() {
        let n = PIECE_BYTES / 4 * 2 + 37;
        let d0 = 4 * n + 64;
        let m = Flat(RefCell::new(vec![0; 2 * 4 * n + 4096]));
        let a: Vec<f32> = (0..n).map(|i| (i % 977) as f32 * 0.25 - 100.0).collect();
        let b: Vec<f32> = (0..n).map(|i| 7.0 - (i % 613) as f32 * 0.5).collect();
        put_f32s(&m, 0, &a);
        let bytes = (4 * n) as u32;
        for op in [DmaOp::Add, DmaOp::Fma, DmaOp::Max, DmaOp::Min] {
            put_f32s(&m, d0, &b);
            let blk = PatternBlock { scale: 0.5, ..block(op, side(0, Dtype::Float32, &[(4, bytes)]), side(d0 as u64, Dtype::Float32, &[(4, bytes)])) };
            assert_eq!(execute(&m, &blk).unwrap(), u64::from(bytes));
            let want: Vec<u32> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| match op {
                    DmaOp::Add => x + y,
                    DmaOp::Fma => x * 0.5 + y,
                    DmaOp::Max => x.max(y),
                    _ => x.min(y),
                })
                .map(f32::to_bits)
                .collect();
            assert_eq!(f32s(&m, d0, n).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want, "{}", op.name());
            assert_eq!(f32s(&m, 0, n), a, "the source is only read");
        }
        // Destination two elements past the source: every destination
        // element is its old value plus the source's old value.
        let old = f32s(&m, 0, n + 2);
        execute(&m, &block(DmaOp::Add, side(0, Dtype::Float32, &[(4, bytes)]), side(8, Dtype::Float32, &[(4, bytes)]))).unwrap();
        let want: Vec<f32> = (0..n).map(|i| old[i] + old[i + 2]).collect();
        assert_eq!(f32s(&m, 8, n), want);
    }

    /// A plain copy is planned as its coalesced runs, and executing the
    /// runs gives the general path's bytes; casts, other ops and
    /// overlapping sides are not planned.
    #[test]
    fn copy_plans_coalesce_runs_and_match_the_general_path() {
        // 4 rows of 16 bytes, contiguous, into rows 64 bytes apart.
        let b = block(DmaOp::Copy, side(0, Dtype::Float32, &[(4, 64)]), side(1024, Dtype::Float32, &[(4, 16), (64, 4)]));
        let mut plan = CopyPlan::default();
        assert!(plan.rebuild(&b));
        assert_eq!(plan.runs(), &[(0, 1024, 16), (16, 1088, 16), (32, 1152, 16), (48, 1216, 16)]);
        assert_eq!(plan.bytes(), 64);
        // Dense on both sides: one run.
        assert!(plan.rebuild(&block(DmaOp::Copy, side(0, Dtype::Bfloat16, &[(2, 64), (64, 4)]), side(512, Dtype::Bfloat16, &[(2, 256)]))));
        assert_eq!(plan.runs(), &[(0, 512, 256)]);
        let m = Flat(RefCell::new((0..4096).map(|i| (i * 7) as u8).collect()));
        let want = Flat(RefCell::new(m.0.borrow().clone()));
        execute(&want, &b).unwrap();
        assert!(plan.rebuild(&b));
        for &(s, d, n) in plan.runs() {
            let mut buf = vec![0u8; n as usize];
            m.read_bytes(DeviceAddr(s), &mut buf).unwrap();
            m.write_bytes(DeviceAddr(d), &buf).unwrap();
        }
        assert_eq!(m.0.borrow().as_slice(), want.0.borrow().as_slice());
        assert!(!plan.rebuild(&block(DmaOp::Copy, side(0, Dtype::Float32, &[(4, 64)]), side(1024, Dtype::Bfloat16, &[(2, 32)]))), "a cast");
        assert!(!plan.rebuild(&block(DmaOp::Add, side(0, Dtype::Float32, &[(4, 64)]), side(1024, Dtype::Float32, &[(4, 64)]))), "a reduction");
        assert!(!plan.rebuild(&block(DmaOp::Copy, side(0, Dtype::Float32, &[(4, 64)]), side(32, Dtype::Float32, &[(4, 64)]))), "overlapping sides");
        assert!(plan.runs().is_empty());
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
