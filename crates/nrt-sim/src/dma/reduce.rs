//! In-DMA reduction: what a DMA engine's compute stage does to the bytes
//! of a reducing transfer as they land, `dst = op(src, dst)` element by
//! element in the transfer's dtype (the CCE ADD / FMA / MAX / MIN of the
//! collectives' receive descriptors, reached through a pattern block whose
//! two sides have the same dtype and no constant; see `pattern.rs`).
//!
//! Numerics, per dtype:
//! - fp32 (and fp32r): native f32, `Fma` is `src * scale + dst` rounded
//!   once per operation (a multiply then an add, as the f32 datapath of the
//!   pattern ops);
//! - fp16, bf16, fp8 (e3/e4/e5): each element widened to f32 (exact), the
//!   op in f32, the result rounded to nearest-even into the dtype;
//! - integers (int8..int64, uint8..uint64): exact in the dtype: `Add`
//!   wraps (two's complement, as NCCL's integer sums), `Max` / `Min`
//!   compare in the dtype's own order, `Fma` only with scale 1.0 (then an
//!   add; an integer engine has no fractional scale).
//!
//! The order of operations is the caller's: one call reduces one source
//! into one destination, so a collective's result depends only on the
//! order in which its schedule issues the transfers (fixed at compose
//! time), never on thread timing.

use nrt_isa::dma_desc::DmaOp;
use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};

/// Elements widened per pass for the narrow float types (a stack buffer:
/// the reduction allocates nothing).
const LANE: usize = 256;

/// Why a reduction cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReduceError {
    /// The op is not a reduction (copy, transpose).
    #[error("DMA op {0} does not reduce (expected add, fma, max or min)")]
    NotAReduction(&'static str),
    /// The dtype has no arithmetic (`unknown`).
    #[error("dtype {0} cannot be reduced")]
    NoArithmetic(&'static str),
    /// Integer FMA with a scale other than 1.
    #[error("an integer fma needs scale 1.0, got {0}")]
    IntegerScale(f32),
    /// Source and destination differ in length or hold partial elements.
    #[error("reduction of {src} source bytes into {dst} destination bytes of {dtype} ({size}-byte elements)")]
    Lengths {
        /// Source bytes.
        src: usize,
        /// Destination bytes.
        dst: usize,
        /// Dtype name.
        dtype: &'static str,
        /// Element size.
        size: usize,
    },
}

/// `dst[i] = f(src[i], dst[i])` over whole runs of `N`-byte elements:
/// one loop per (dtype, op) pair, monomorphised through `f`, with no
/// dispatch per element, so the compiler can vectorise it.
#[inline(always)]
fn elementwise<const N: usize, T: Copy>(
    src: &[u8],
    dst: &mut [u8],
    load: impl Fn([u8; N]) -> T,
    store: impl Fn(T) -> [u8; N],
    f: impl Fn(T, T) -> T,
) {
    let (s, _) = src.as_chunks::<N>();
    let (d, _) = dst.as_chunks_mut::<N>();
    for (d, s) in d.iter_mut().zip(s) {
        *d = store(f(load(*s), load(*d)));
    }
}

macro_rules! int_reduce {
    ($t:ty, $op:expr, $src:expr, $dst:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        let (load, store) = (<$t>::from_le_bytes, <$t>::to_le_bytes);
        match $op {
            DmaOp::Max => elementwise::<N, $t>($src, $dst, load, store, |a, b| a.max(b)),
            DmaOp::Min => elementwise::<N, $t>($src, $dst, load, store, |a, b| a.min(b)),
            _ => elementwise::<N, $t>($src, $dst, load, store, |a, b| a.wrapping_add(b)),
        }
    }};
}

/// Calls `$body` with `$f` bound to the f32 function of `$op` (`Fma`
/// with `$scale`), one monomorphised body per op.
macro_rules! with_f32_op {
    ($op:expr, $scale:expr, |$f:ident| $body:expr) => {{
        let scale: f32 = $scale;
        match $op {
            DmaOp::Fma => {
                let $f = move |a: f32, b: f32| a * scale + b;
                $body
            }
            DmaOp::Max => {
                let $f = |a: f32, b: f32| a.max(b);
                $body
            }
            DmaOp::Min => {
                let $f = |a: f32, b: f32| a.min(b);
                $body
            }
            _ => {
                let $f = |a: f32, b: f32| a + b;
                $body
            }
        }
    }};
}

/// The narrow floats: widens a lane of each side to f32 (exact), applies
/// `f` over the lane, rounds the lane back to nearest-even.
fn narrow_reduce(dtype: Dtype, src: &[u8], dst: &mut [u8], f: impl Fn(f32, f32) -> f32) -> Result<(), ReduceError> {
    let size = dtype.size_bytes();
    let mut a = [0f32; LANE];
    let mut b = [0f32; LANE];
    let mut rounding = Rounding::NearestEven;
    let err = |_| ReduceError::NoArithmetic(dtype.name());
    for (d, s) in dst.chunks_mut(LANE * size).zip(src.chunks(LANE * size)) {
        let n = s.len() / size;
        bytes_to_f32(s, dtype, &mut a[..n]).map_err(err)?;
        bytes_to_f32(d, dtype, &mut b[..n]).map_err(err)?;
        for (y, x) in b[..n].iter_mut().zip(&a[..n]) {
            *y = f(*x, *y);
        }
        f32_to_bytes(&b[..n], dtype, d, &mut rounding).map_err(err)?;
    }
    Ok(())
}

/// Reduces `src` into `dst` in place: `dst[i] = op(src[i], dst[i])` for
/// every element of `dtype` (`scale` is the `Fma` multiplier). The dtype
/// and op are matched once per call, never per element.
pub fn reduce_into(op: DmaOp, scale: f32, dtype: Dtype, src: &[u8], dst: &mut [u8]) -> Result<(), ReduceError> {
    if !matches!(op, DmaOp::Add | DmaOp::Fma | DmaOp::Max | DmaOp::Min) {
        return Err(ReduceError::NotAReduction(op.name()));
    }
    let size = dtype.size_bytes();
    if dtype == Dtype::Unknown {
        return Err(ReduceError::NoArithmetic(dtype.name()));
    }
    if src.len() != dst.len() || !src.len().is_multiple_of(size) {
        return Err(ReduceError::Lengths { src: src.len(), dst: dst.len(), dtype: dtype.name(), size });
    }
    if dtype.is_int() && op == DmaOp::Fma && scale != 1.0 {
        return Err(ReduceError::IntegerScale(scale));
    }
    match dtype {
        Dtype::Float32 | Dtype::Float32r => {
            with_f32_op!(op, scale, |f| elementwise::<4, f32>(src, dst, f32::from_le_bytes, f32::to_le_bytes, f))
        }
        Dtype::Int8 => int_reduce!(i8, op, src, dst),
        Dtype::Uint8 => int_reduce!(u8, op, src, dst),
        Dtype::Int16 => int_reduce!(i16, op, src, dst),
        Dtype::Uint16 => int_reduce!(u16, op, src, dst),
        Dtype::Int32 => int_reduce!(i32, op, src, dst),
        Dtype::Uint32 => int_reduce!(u32, op, src, dst),
        Dtype::Int64 => int_reduce!(i64, op, src, dst),
        Dtype::Uint64 => int_reduce!(u64, op, src, dst),
        _ => with_f32_op!(op, scale, |f| narrow_reduce(dtype, src, dst, f))?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    /// The reference of one integer op: exact in i128, then the dtype's
    /// wrap (for add) — computed independently of the engine's code.
    fn int_reference(op: DmaOp, a: i128, b: i128, bits: u32, signed: bool) -> i128 {
        let r = match op {
            DmaOp::Max => a.max(b),
            DmaOp::Min => a.min(b),
            _ => a + b,
        };
        let m = 1i128 << bits;
        let w = r.rem_euclid(m);
        if signed && w >= m / 2 { w - m } else { w }
    }

    fn check_int(dtype: Dtype, bits: u32, signed: bool) {
        let (lo, hi) = if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
        // Edge values and a spread between them.
        let mut vals = vec![lo, hi, 0, 1, hi - 1, lo + 1];
        let mut x: i128 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..58 {
            x = (x * 6364136223846793005 + 1442695040888963407) & 0xFFFF_FFFF_FFFF_FFFF;
            vals.push(lo + x.rem_euclid(hi - lo + 1));
        }
        let other: Vec<i128> = vals.iter().rev().copied().collect();
        let bytes = |v: &[i128]| -> Vec<u8> {
            let n = (bits / 8) as usize;
            v.iter().flat_map(|&e| e.to_le_bytes()[..n].to_vec()).collect()
        };
        let read = |b: &[u8]| -> Vec<i128> {
            let n = (bits / 8) as usize;
            b.chunks(n)
                .map(|c| {
                    let mut w = [0u8; 16];
                    w[..n].copy_from_slice(c);
                    let u = i128::from_le_bytes(w);
                    if signed && u >= 1i128 << (bits - 1) { u - (1i128 << bits) } else { u }
                })
                .collect()
        };
        for op in [DmaOp::Add, DmaOp::Fma, DmaOp::Max, DmaOp::Min] {
            let src = bytes(&vals);
            let mut dst = bytes(&other);
            reduce_into(op, 1.0, dtype, &src, &mut dst).unwrap();
            let want: Vec<i128> = vals.iter().zip(&other).map(|(&a, &b)| int_reference(op, a, b, bits, signed)).collect();
            assert_eq!(read(&dst), want, "{} {}", dtype.name(), op.name());
        }
        assert_eq!(reduce_into(DmaOp::Fma, 2.0, dtype, &bytes(&vals), &mut bytes(&other)), Err(ReduceError::IntegerScale(2.0)));
    }

    #[test]
    fn integer_ops_are_exact_and_wrap() {
        check_int(Dtype::Int8, 8, true);
        check_int(Dtype::Uint8, 8, false);
        check_int(Dtype::Int16, 16, true);
        check_int(Dtype::Uint16, 16, false);
        check_int(Dtype::Int32, 32, true);
        check_int(Dtype::Uint32, 32, false);
        check_int(Dtype::Int64, 64, true);
        check_int(Dtype::Uint64, 64, false);
    }

    fn sample() -> (Vec<f32>, Vec<f32>) {
        let a: Vec<f32> = (0..300).map(|i| ((i as f32) * 0.37 - 50.0) * if i % 7 == 0 { 1e-3 } else { 1.0 }).collect();
        let b: Vec<f32> = (0..300).map(|i| 40.0 - (i as f32) * 0.29).collect();
        (a, b)
    }

    fn reference(op: DmaOp, a: f32, b: f32) -> f32 {
        match op {
            DmaOp::Add => a + b,
            DmaOp::Fma => a * 0.5 + b,
            DmaOp::Max => a.max(b),
            _ => a.min(b),
        }
    }

    #[test]
    fn fp32_ops_match_native_f32() {
        let (a, b) = sample();
        for op in [DmaOp::Add, DmaOp::Fma, DmaOp::Max, DmaOp::Min] {
            let src: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut dst: Vec<u8> = b.iter().flat_map(|x| x.to_le_bytes()).collect();
            reduce_into(op, 0.5, Dtype::Float32, &src, &mut dst).unwrap();
            for (i, c) in dst.chunks(4).enumerate() {
                let got = f32::from_le_bytes(c.try_into().unwrap());
                assert_eq!(got.to_bits(), reference(op, a[i], b[i]).to_bits(), "{} at {i}", op.name());
            }
        }
    }

    #[test]
    fn fp16_and_bf16_round_the_f32_result_to_nearest_even() {
        let (a, b) = sample();
        for op in [DmaOp::Add, DmaOp::Fma, DmaOp::Max, DmaOp::Min] {
            let src: Vec<u8> = a.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect();
            let mut dst: Vec<u8> = b.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect();
            reduce_into(op, 0.5, Dtype::Float16, &src, &mut dst).unwrap();
            for (i, c) in dst.chunks(2).enumerate() {
                let want = f16::from_f32(reference(op, f16::from_f32(a[i]).to_f32(), f16::from_f32(b[i]).to_f32()));
                assert_eq!(c, want.to_le_bytes(), "fp16 {} at {i}", op.name());
            }
            let src: Vec<u8> = a.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect();
            let mut dst: Vec<u8> = b.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect();
            reduce_into(op, 0.5, Dtype::Bfloat16, &src, &mut dst).unwrap();
            for (i, c) in dst.chunks(2).enumerate() {
                let want = bf16::from_f32(reference(op, bf16::from_f32(a[i]).to_f32(), bf16::from_f32(b[i]).to_f32()));
                assert_eq!(c, want.to_le_bytes(), "bf16 {} at {i}", op.name());
            }
        }
    }

    #[test]
    fn fp8_reduces_through_f32() {
        // e4m3: 1.0 = 0x38, 2.0 = 0x40, 3.0 = 0x44; e5m2: 1.0 = 0x3C, 2.0 = 0x40, 3.0 = 0x42.
        let mut d = [0x38u8, 0x40];
        reduce_into(DmaOp::Add, 1.0, Dtype::Fp8E4, &[0x40, 0x38], &mut d).unwrap();
        assert_eq!(d, [0x44, 0x44]);
        let mut d = [0x3Cu8, 0x40];
        reduce_into(DmaOp::Max, 1.0, Dtype::Fp8E5, &[0x40, 0x3C], &mut d).unwrap();
        assert_eq!(d, [0x40, 0x40]);
    }

    #[test]
    fn bad_requests_are_refused() {
        let mut d = [0u8; 8];
        assert!(matches!(reduce_into(DmaOp::Copy, 1.0, Dtype::Float32, &[0; 8], &mut d), Err(ReduceError::NotAReduction("copy"))));
        assert!(matches!(reduce_into(DmaOp::Add, 1.0, Dtype::Unknown, &[0; 8], &mut d), Err(ReduceError::NoArithmetic(_))));
        assert!(matches!(reduce_into(DmaOp::Add, 1.0, Dtype::Float32, &[0; 6], &mut d[..6]), Err(ReduceError::Lengths { .. })));
        assert!(matches!(reduce_into(DmaOp::Add, 1.0, Dtype::Float32, &[0; 4], &mut d), Err(ReduceError::Lengths { .. })));
    }
}
