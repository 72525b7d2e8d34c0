//! Bulk element conversion between dtypes.
//!
//! The DMA engines cast between dtypes and the compute engines load and
//! store every dtype through an fp32 datapath, so the simulator converts
//! whole slices at a time. Each call dispatches on the dtypes once per block
//! of [`BLOCK`] elements and then runs a tight, type-specialised loop.
//!
//! Conversion rules:
//! - Same dtype, or fp32 <-> fp32r (identical storage): a byte copy, so
//!   NaN payloads survive.
//! - Integer -> integer: exact, then saturated to the destination range
//!   (e.g. int32 300 -> uint8 255, int8 -5 -> uint16 0).
//! - Everything else goes through an f32 intermediate, as the hardware's
//!   fp32 datapath does:
//!   - integer -> f32 rounds to nearest even (exact up to 2^24);
//!   - f32 -> narrower float uses the [`Rounding`] mode and the NaN / inf /
//!     saturation rules of [`super::minifloat`];
//!   - f32 -> integer rounds to nearest, ties to even, saturates to the
//!     destination range, and maps NaN to 0.
//! - Little-endian element storage throughout.

use super::Dtype;
use super::minifloat::{FP8_E3, FP8_E4, FP8_E5, FP16, Fp8Kind};
use super::rounding::Rounding;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// Elements converted per dispatch; sized so the f32 / i128 staging buffer
/// stays in L1.
pub const BLOCK: usize = 256;

/// Why a conversion could not run. Nothing is written to the destination
/// when an error is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// Dtype code 0 has no element format to convert.
    #[error("cannot convert elements of dtype unknown (code 0): it has no element format")]
    UnknownDtype,
    /// The source byte count is not a multiple of the element size.
    #[error("source holds {len} bytes, not a whole number of {dtype} elements ({size} bytes each)")]
    PartialElement {
        /// Source dtype.
        dtype: Dtype,
        /// Source length in bytes.
        len: usize,
        /// Element size of `dtype`.
        size: usize,
    },
    /// The destination byte count does not match the source element count.
    #[error("destination holds {dst_len} bytes but {elems} {dtype} elements need exactly {expected}")]
    DestinationSize {
        /// Destination dtype.
        dtype: Dtype,
        /// Number of source elements.
        elems: usize,
        /// Destination length in bytes.
        dst_len: usize,
        /// Bytes the destination must have.
        expected: usize,
    },
    /// Typed slices of different lengths.
    #[error("slice lengths differ: source has {src} elements, destination has {dst}")]
    LengthMismatch {
        /// Source element count.
        src: usize,
        /// Destination element count.
        dst: usize,
    },
}

fn check_same_len(src: usize, dst: usize) -> Result<(), ConvertError> {
    if src == dst { Ok(()) } else { Err(ConvertError::LengthMismatch { src, dst }) }
}

/// Validate a byte-slice pair and return the element count.
fn element_count(src: &[u8], src_dtype: Dtype, dst: &[u8], dst_dtype: Dtype) -> Result<usize, ConvertError> {
    if src_dtype == Dtype::Unknown || dst_dtype == Dtype::Unknown {
        return Err(ConvertError::UnknownDtype);
    }
    let size = src_dtype.size_bytes();
    if !src.len().is_multiple_of(size) {
        return Err(ConvertError::PartialElement { dtype: src_dtype, len: src.len(), size });
    }
    let elems = src.len() / size;
    let expected = elems * dst_dtype.size_bytes();
    if dst.len() != expected {
        return Err(ConvertError::DestinationSize { dtype: dst_dtype, elems, dst_len: dst.len(), expected });
    }
    Ok(elems)
}

/// Convert `src` (elements of `src_dtype`) into `dst` (elements of
/// `dst_dtype`) under the module's rules; returns the element count.
///
/// `dst` must be exactly as long as the converted elements need.
/// `rounding` only matters for float destinations narrower than fp32; a
/// stochastic rounder advances one draw per element rounded.
pub fn convert(
    src: &[u8],
    src_dtype: Dtype,
    dst: &mut [u8],
    dst_dtype: Dtype,
    rounding: &mut Rounding,
) -> Result<usize, ConvertError> {
    let elems = element_count(src, src_dtype, dst, dst_dtype)?;
    let same_storage = src_dtype == dst_dtype
        || matches!((src_dtype, dst_dtype), (Dtype::Float32, Dtype::Float32r) | (Dtype::Float32r, Dtype::Float32));
    if same_storage {
        dst.copy_from_slice(src);
        return Ok(elems);
    }
    let (ss, ds) = (src_dtype.size_bytes(), dst_dtype.size_bytes());
    let chunks = src.chunks(BLOCK * ss).zip(dst.chunks_mut(BLOCK * ds));
    if src_dtype.is_int() && dst_dtype.is_int() {
        let mut buf = [0i128; BLOCK];
        for (s, d) in chunks {
            let n = s.len() / ss;
            decode_int(src_dtype, s, &mut buf[..n]);
            encode_int(dst_dtype, &buf[..n], d);
        }
    } else {
        let mut buf = [0f32; BLOCK];
        for (s, d) in chunks {
            let n = s.len() / ss;
            decode_f32(src_dtype, s, &mut buf[..n]);
            encode_f32(dst_dtype, &buf[..n], d, rounding);
        }
    }
    Ok(elems)
}

/// Decode `src` (elements of `dtype`) into f32 values, as an engine's fp32
/// datapath reads them. `dst.len()` must equal the element count.
pub fn bytes_to_f32(src: &[u8], dtype: Dtype, dst: &mut [f32]) -> Result<(), ConvertError> {
    if dtype == Dtype::Unknown {
        return Err(ConvertError::UnknownDtype);
    }
    let size = dtype.size_bytes();
    if !src.len().is_multiple_of(size) {
        return Err(ConvertError::PartialElement { dtype, len: src.len(), size });
    }
    let elems = src.len() / size;
    check_same_len(elems, dst.len())?;
    decode_f32(dtype, src, dst);
    Ok(())
}

/// Encode f32 values into `dst` as elements of `dtype`, rounding with
/// `rounding`. `dst.len()` must equal `src.len() * dtype.size_bytes()`.
pub fn f32_to_bytes(src: &[f32], dtype: Dtype, dst: &mut [u8], rounding: &mut Rounding) -> Result<(), ConvertError> {
    if dtype == Dtype::Unknown {
        return Err(ConvertError::UnknownDtype);
    }
    let expected = src.len() * dtype.size_bytes();
    if dst.len() != expected {
        return Err(ConvertError::DestinationSize { dtype, elems: src.len(), dst_len: dst.len(), expected });
    }
    encode_f32(dtype, src, dst, rounding);
    Ok(())
}

macro_rules! int_arms_to_f32 {
    ($dtype:expr, $src:expr, $out:expr, $($variant:ident => $t:ty),*) => {
        match $dtype {
            $(Dtype::$variant => {
                let (words, _) = $src.as_chunks::<{ size_of::<$t>() }>();
                for (o, w) in $out.iter_mut().zip(words) {
                    *o = <$t>::from_le_bytes(*w) as f32;
                }
            })*
            _ => {}
        }
    };
}

/// Decode into f32; callers have validated lengths and excluded `Unknown`.
fn decode_f32(dtype: Dtype, src: &[u8], out: &mut [f32]) {
    match dtype {
        Dtype::Float32 | Dtype::Float32r => {
            for (o, w) in out.iter_mut().zip(src.as_chunks::<4>().0) {
                *o = f32::from_le_bytes(*w);
            }
        }
        Dtype::Bfloat16 => {
            for (o, w) in out.iter_mut().zip(src.as_chunks::<2>().0) {
                *o = f32::from_bits(u32::from(u16::from_le_bytes(*w)) << 16);
            }
        }
        Dtype::Float16 => {
            // Stage through an f16 buffer so half's SIMD slice path applies.
            let mut halves = [f16::ZERO; BLOCK];
            for (o, s) in out.chunks_mut(BLOCK).zip(src.chunks(2 * BLOCK)) {
                let staged = &mut halves[..o.len()];
                for (h, w) in staged.iter_mut().zip(s.as_chunks::<2>().0) {
                    *h = f16::from_bits(u16::from_le_bytes(*w));
                }
                staged.convert_to_f32_slice(o);
            }
        }
        Dtype::Fp8E3 | Dtype::Fp8E4 | Dtype::Fp8E5 => {
            if let Some(kind) = dtype.fp8_kind() {
                let table = kind.decode_table();
                for (o, b) in out.iter_mut().zip(src) {
                    *o = table[usize::from(*b)];
                }
            }
        }
        Dtype::Unknown => {}
        _ => int_arms_to_f32!(dtype, src, out,
            Int8 => i8, Uint8 => u8, Int16 => i16, Uint16 => u16,
            Int32 => i32, Uint32 => u32, Int64 => i64, Uint64 => u64),
    }
}

macro_rules! f32_to_int_arms {
    ($dtype:expr, $input:expr, $dst:expr, $($variant:ident => $t:ty),*) => {
        match $dtype {
            $(Dtype::$variant => {
                let (words, _) = $dst.as_chunks_mut::<{ size_of::<$t>() }>();
                for (w, x) in words.iter_mut().zip($input) {
                    // `as` saturates and maps NaN to 0.
                    *w = (round_half_even(*x) as $t).to_le_bytes();
                }
            })*
            _ => {}
        }
    };
}

/// `x.round_ties_even()` without a libm call, so integer stores
/// vectorise: below 2^23, adding and removing 2^23 leaves the magnitude
/// rounded to an integer by the FPU's round-to-nearest-even; from 2^23 up
/// every f32 is already an integer.
#[inline(always)]
fn round_half_even(x: f32) -> f32 {
    const TWO_23: f32 = 8_388_608.0;
    let a = x.abs();
    let rounded = if a < TWO_23 { (a + TWO_23) - TWO_23 } else { a };
    // NaN stays NaN (the comparison is false), and the sign is restored.
    rounded.copysign(x)
}

/// Encode from f32; callers have validated lengths and excluded `Unknown`.
fn encode_f32(dtype: Dtype, input: &[f32], dst: &mut [u8], rounding: &mut Rounding) {
    match dtype {
        Dtype::Float32 | Dtype::Float32r => {
            for (w, x) in dst.as_chunks_mut::<4>().0.iter_mut().zip(input) {
                *w = x.to_le_bytes();
            }
        }
        Dtype::Bfloat16 => {
            let words = dst.as_chunks_mut::<2>().0.iter_mut().zip(input);
            match rounding {
                Rounding::NearestEven => words.for_each(|(w, x)| *w = bf16::from_f32(*x).to_le_bytes()),
                Rounding::Stochastic(r) => words.for_each(|(w, x)| *w = r.f32_to_bf16(*x).to_le_bytes()),
            }
        }
        Dtype::Float16 => match rounding {
            Rounding::NearestEven => {
                for (w, x) in dst.as_chunks_mut::<2>().0.iter_mut().zip(input) {
                    *w = (FP16.encode_rne_fast(*x) as u16).to_le_bytes();
                }
            }
            Rounding::Stochastic(r) => {
                for (w, x) in dst.as_chunks_mut::<2>().0.iter_mut().zip(input) {
                    *w = r.f32_to_f16(*x).to_le_bytes();
                }
            }
        },
        Dtype::Fp8E3 | Dtype::Fp8E4 | Dtype::Fp8E5 => {
            if let Some(kind) = dtype.fp8_kind() {
                encode_fp8(kind, input, dst, rounding);
            }
        }
        Dtype::Unknown => {}
        _ => f32_to_int_arms!(dtype, input, dst,
            Int8 => i8, Uint8 => u8, Int16 => i16, Uint16 => u16,
            Int32 => i32, Uint32 => u32, Int64 => i64, Uint64 => u64),
    }
}

fn encode_fp8(kind: Fp8Kind, input: &[f32], dst: &mut [u8], rounding: &mut Rounding) {
    let pairs = dst.iter_mut().zip(input);
    match (rounding, kind) {
        // Each arm names a constant format so the encoder is specialised.
        (Rounding::NearestEven, Fp8Kind::E3) => pairs.for_each(|(b, x)| *b = FP8_E3.encode_rne_fast(*x) as u8),
        (Rounding::NearestEven, Fp8Kind::E4) => pairs.for_each(|(b, x)| *b = FP8_E4.encode_rne_fast(*x) as u8),
        (Rounding::NearestEven, Fp8Kind::E5) => pairs.for_each(|(b, x)| *b = FP8_E5.encode_rne_fast(*x) as u8),
        (Rounding::Stochastic(r), _) => pairs.for_each(|(b, x)| *b = r.f32_to_fp8(kind, *x)),
    }
}

macro_rules! int_codec {
    ($name_dec:ident, $name_enc:ident, $($variant:ident => $t:ty),*) => {
        /// Decode integers exactly into i128 (callers pass integer dtypes).
        fn $name_dec(dtype: Dtype, src: &[u8], out: &mut [i128]) {
            match dtype {
                $(Dtype::$variant => {
                    for (o, w) in out.iter_mut().zip(src.as_chunks::<{ size_of::<$t>() }>().0) {
                        *o = i128::from(<$t>::from_le_bytes(*w));
                    }
                })*
                _ => {}
            }
        }

        /// Encode i128 values with saturation (callers pass integer dtypes).
        fn $name_enc(dtype: Dtype, input: &[i128], dst: &mut [u8]) {
            match dtype {
                $(Dtype::$variant => {
                    let (lo, hi) = (i128::from(<$t>::MIN), i128::from(<$t>::MAX));
                    for (w, v) in dst.as_chunks_mut::<{ size_of::<$t>() }>().0.iter_mut().zip(input) {
                        *w = ((*v).clamp(lo, hi) as $t).to_le_bytes();
                    }
                })*
                _ => {}
            }
        }
    };
}

int_codec!(decode_int, encode_int,
    Int8 => i8, Uint8 => u8, Int16 => i16, Uint16 => u16,
    Int32 => i32, Uint32 => u32, Int64 => i64, Uint64 => u64);

/// f32 -> bf16 over typed slices.
pub fn f32_to_bf16_slice(src: &[f32], dst: &mut [bf16], rounding: &mut Rounding) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    match rounding {
        Rounding::NearestEven => dst.convert_from_f32_slice(src),
        Rounding::Stochastic(r) => dst.iter_mut().zip(src).for_each(|(d, x)| *d = r.f32_to_bf16(*x)),
    }
    Ok(())
}

/// bf16 -> f32 over typed slices (exact).
pub fn bf16_to_f32_slice(src: &[bf16], dst: &mut [f32]) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    src.convert_to_f32_slice(dst);
    Ok(())
}

/// f32 -> fp16 over typed slices.
pub fn f32_to_f16_slice(src: &[f32], dst: &mut [f16], rounding: &mut Rounding) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    match rounding {
        Rounding::NearestEven => dst.convert_from_f32_slice(src),
        Rounding::Stochastic(r) => dst.iter_mut().zip(src).for_each(|(d, x)| *d = r.f32_to_f16(*x)),
    }
    Ok(())
}

/// fp16 -> f32 over typed slices (exact).
pub fn f16_to_f32_slice(src: &[f16], dst: &mut [f32]) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    src.convert_to_f32_slice(dst);
    Ok(())
}

/// f32 -> fp8 codes of `kind`.
pub fn f32_to_fp8_slice(kind: Fp8Kind, src: &[f32], dst: &mut [u8], rounding: &mut Rounding) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    encode_fp8(kind, src, dst, rounding);
    Ok(())
}

/// fp8 codes of `kind` -> f32 (exact, table lookup).
pub fn fp8_to_f32_slice(kind: Fp8Kind, src: &[u8], dst: &mut [f32]) -> Result<(), ConvertError> {
    check_same_len(src.len(), dst.len())?;
    let table = kind.decode_table();
    dst.iter_mut().zip(src).for_each(|(d, b)| *d = table[usize::from(*b)]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn conv(src: &[u8], sd: Dtype, dd: Dtype) -> Vec<u8> {
        let n = src.len() / sd.size_bytes();
        let mut out = vec![0u8; n * dd.size_bytes()];
        convert(src, sd, &mut out, dd, &mut Rounding::NearestEven).expect("valid conversion");
        out
    }

    fn f32_bytes(xs: &[f32]) -> Vec<u8> {
        xs.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn fp8_codes_survive_f32_round_trip() {
        let codes: Vec<u8> = (0..=255).collect();
        for kind in Fp8Kind::ALL {
            let wide = conv(&codes, kind.dtype(), Dtype::Float32);
            let back = conv(&wide, Dtype::Float32, kind.dtype());
            for (c, b) in codes.iter().zip(&back) {
                if kind.format().is_nan(u32::from(*c)) {
                    assert!(kind.format().is_nan(u32::from(*b)));
                } else {
                    assert_eq!(c, b, "{kind:?}");
                }
            }
        }
    }

    #[test]
    fn half_codes_survive_f32_round_trip() {
        let codes: Vec<u8> = (0..=u16::MAX).flat_map(|c| c.to_le_bytes()).collect();
        for d in [Dtype::Bfloat16, Dtype::Float16] {
            let wide = conv(&codes, d, Dtype::Float32);
            let back = conv(&wide, Dtype::Float32, d);
            for (i, (a, b)) in codes.as_chunks::<2>().0.iter().zip(back.as_chunks::<2>().0).enumerate() {
                let (a, b) = (u16::from_le_bytes(*a), u16::from_le_bytes(*b));
                let wide_val = f32::from_le_bytes(wide[i * 4..i * 4 + 4].try_into().unwrap());
                if wide_val.is_nan() {
                    assert!(f32::from_bits(u32::from(b) << 16).is_nan() || f16::from_bits(b).is_nan());
                } else {
                    assert_eq!(a, b, "{d} code {a:#x}");
                }
            }
        }
    }

    #[test]
    fn integers_saturate() {
        let src: Vec<u8> = [300i32, -5, 70000, i32::MIN].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(conv(&src, Dtype::Int32, Dtype::Uint8), vec![255, 0, 255, 0]);
        assert_eq!(conv(&src, Dtype::Int32, Dtype::Int8), vec![127, 0xFB, 127, 0x80]);
        let big = u64::MAX.to_le_bytes();
        assert_eq!(conv(&big, Dtype::Uint64, Dtype::Int64), i64::MAX.to_le_bytes());
        let neg = (-1i64).to_le_bytes();
        assert_eq!(conv(&neg, Dtype::Int64, Dtype::Uint64), 0u64.to_le_bytes());
    }

    #[test]
    fn floats_to_integers_round_half_even_and_saturate() {
        let src = f32_bytes(&[2.5, 3.5, -2.5, 1e10, -1e10, f32::NAN, f32::INFINITY, 0.49]);
        let out = conv(&src, Dtype::Float32, Dtype::Int16);
        let vals: Vec<i16> = out.as_chunks::<2>().0.iter().map(|w| i16::from_le_bytes(*w)).collect();
        assert_eq!(vals, vec![2, 4, -2, i16::MAX, i16::MIN, 0, i16::MAX, 0]);
        let out = conv(&src, Dtype::Float32, Dtype::Uint8);
        assert_eq!(out, vec![2, 4, 0, 255, 0, 0, 255, 0]);
    }

    #[test]
    fn integers_to_floats() {
        let src: Vec<u8> = [1i16, -3, 1000].iter().flat_map(|v| v.to_le_bytes()).collect();
        let out = conv(&src, Dtype::Int16, Dtype::Bfloat16);
        let vals: Vec<f32> =
            out.as_chunks::<2>().0.iter().map(|w| bf16::from_le_bytes(*w).to_f32()).collect();
        assert_eq!(vals, vec![1.0, -3.0, 1000.0]);
        let out = conv(&[200u8], Dtype::Uint8, Dtype::Fp8E4);
        assert_eq!(Fp8Kind::E4.decode(out[0]), 192.0);
    }

    #[test]
    fn round_half_even_matches_std() {
        for x in [0.5f32, 1.5, 2.5, -0.5, -2.5, 8388607.5, 4194303.5, 1e30, -0.0, 0.49999997] {
            assert_eq!(round_half_even(x).to_bits(), x.round_ties_even().to_bits(), "{x}");
        }
        assert!(round_half_even(f32::NAN).is_nan());
    }

    #[test]
    fn fp32_and_fp32r_share_storage() {
        let src = f32::from_bits(0x7FC1_2345).to_le_bytes();
        assert_eq!(conv(&src, Dtype::Float32, Dtype::Float32r), src);
    }

    #[test]
    fn errors_name_the_problem() {
        let mut r = Rounding::NearestEven;
        let mut out = [0u8; 4];
        assert_eq!(
            convert(&[0; 3], Dtype::Float16, &mut out, Dtype::Float32, &mut r),
            Err(ConvertError::PartialElement { dtype: Dtype::Float16, len: 3, size: 2 })
        );
        assert_eq!(
            convert(&[0; 4], Dtype::Float16, &mut out, Dtype::Float32, &mut r),
            Err(ConvertError::DestinationSize { dtype: Dtype::Float32, elems: 2, dst_len: 4, expected: 8 })
        );
        assert_eq!(convert(&[0; 4], Dtype::Unknown, &mut out, Dtype::Uint8, &mut r), Err(ConvertError::UnknownDtype));
        let mut small = [bf16::ZERO; 1];
        assert_eq!(
            f32_to_bf16_slice(&[1.0, 2.0], &mut small, &mut r),
            Err(ConvertError::LengthMismatch { src: 2, dst: 1 })
        );
        assert!(bytes_to_f32(&[0; 5], Dtype::Float32, &mut [0.0; 1]).is_err());
        assert!(f32_to_bytes(&[1.0], Dtype::Int8, &mut [0; 2], &mut r).is_err());
    }

    #[test]
    fn stochastic_convert_is_deterministic_per_seed() {
        let xs: Vec<f32> = (0..1000).map(|i| (i as f32).sin() * 3.0).collect();
        let src = f32_bytes(&xs);
        let run = |seed| {
            let mut out = vec![0u8; xs.len()];
            convert(&src, Dtype::Float32, &mut out, Dtype::Fp8E4, &mut Rounding::stochastic(seed)).unwrap();
            out
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    const NARROW: [Dtype; 14] = [
        Dtype::Uint64, Dtype::Int8, Dtype::Uint8, Dtype::Int16, Dtype::Uint16, Dtype::Bfloat16, Dtype::Float16,
        Dtype::Int32, Dtype::Uint32, Dtype::Float32r, Dtype::Int64, Dtype::Fp8E3, Dtype::Fp8E4, Dtype::Fp8E5,
    ];

    const INTS: [Dtype; 8] = [
        Dtype::Int8, Dtype::Uint8, Dtype::Int16, Dtype::Uint16, Dtype::Int32, Dtype::Uint32, Dtype::Int64, Dtype::Uint64,
    ];

    /// Reference: one element at a time through the scalar codecs.
    fn scalar_encode(x: f32, d: Dtype) -> Vec<u8> {
        match d {
            Dtype::Bfloat16 => bf16::from_f32(x).to_le_bytes().to_vec(),
            Dtype::Float16 => f16::from_f32(x).to_le_bytes().to_vec(),
            Dtype::Float32 | Dtype::Float32r => x.to_le_bytes().to_vec(),
            Dtype::Fp8E3 | Dtype::Fp8E4 | Dtype::Fp8E5 => vec![d.fp8_kind().unwrap().encode(x)],
            Dtype::Int8 => ((x.round_ties_even() as i8).to_le_bytes()).to_vec(),
            Dtype::Uint8 => ((x.round_ties_even() as u8).to_le_bytes()).to_vec(),
            Dtype::Int16 => ((x.round_ties_even() as i16).to_le_bytes()).to_vec(),
            Dtype::Uint16 => ((x.round_ties_even() as u16).to_le_bytes()).to_vec(),
            Dtype::Int32 => ((x.round_ties_even() as i32).to_le_bytes()).to_vec(),
            Dtype::Uint32 => ((x.round_ties_even() as u32).to_le_bytes()).to_vec(),
            Dtype::Int64 => ((x.round_ties_even() as i64).to_le_bytes()).to_vec(),
            Dtype::Uint64 => ((x.round_ties_even() as u64).to_le_bytes()).to_vec(),
            Dtype::Unknown => vec![],
        }
    }

    /// Reference: decode one element of `d` to f32.
    fn scalar_decode(b: &[u8], d: Dtype) -> f32 {
        let w2 = || u16::from_le_bytes([b[0], b[1]]);
        let w4 = || [b[0], b[1], b[2], b[3]];
        let w8 = || [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
        match d {
            Dtype::Bfloat16 => bf16::from_bits(w2()).to_f32(),
            Dtype::Float16 => f16::from_bits(w2()).to_f32(),
            Dtype::Float32 | Dtype::Float32r => f32::from_le_bytes(w4()),
            Dtype::Fp8E3 | Dtype::Fp8E4 | Dtype::Fp8E5 => d.fp8_kind().unwrap().decode(b[0]),
            Dtype::Int8 => b[0] as i8 as f32,
            Dtype::Uint8 => f32::from(b[0]),
            Dtype::Int16 => w2() as i16 as f32,
            Dtype::Uint16 => f32::from(w2()),
            Dtype::Int32 => i32::from_le_bytes(w4()) as f32,
            Dtype::Uint32 => u32::from_le_bytes(w4()) as f32,
            Dtype::Int64 => i64::from_le_bytes(w8()) as f32,
            Dtype::Uint64 => u64::from_le_bytes(w8()) as f32,
            Dtype::Unknown => f32::NAN,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_float_pair_matches_scalar(raw in proptest::collection::vec(any::<u8>(), 0..2048), si in 0usize..15, di in 0usize..15) {
            let all = Dtype::ALL;
            let (sd, dd) = (all[si + 1], all[di + 1]);
            prop_assume!(!(sd.is_int() && dd.is_int()));
            let n = raw.len() / sd.size_bytes();
            let src = &raw[..n * sd.size_bytes()];
            let out = conv(src, sd, dd);
            for (i, (s, o)) in src.chunks(sd.size_bytes()).zip(out.chunks(dd.size_bytes())).enumerate() {
                let want = scalar_encode(scalar_decode(s, sd), dd);
                let same_storage = sd == dd || (sd.size_bytes() == 4 && dd.size_bytes() == 4 && sd.is_float() && dd.is_float());
                if same_storage {
                    prop_assert_eq!(o, s, "bit copy at {}", i);
                } else if dd.is_float() {
                    let (a, b) = (scalar_decode(o, dd), scalar_decode(&want, dd));
                    prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{} -> {} at {}", sd, dd, i);
                } else {
                    prop_assert_eq!(o, &want[..], "{} -> {} at {}", sd, dd, i);
                }
            }
        }

        #[test]
        fn bulk_f32_encode_matches_scalar(xs in proptest::collection::vec(any::<f32>(), 0..600), di in 0usize..14) {
            let d = NARROW[di];
            let out = conv(&f32_bytes(&xs), Dtype::Float32, d);
            let expected: Vec<u8> = xs.iter().flat_map(|&x| scalar_encode(x, d)).collect();
            if d.is_float() {
                // NaN payloads may differ between codecs; compare decoded values.
                let mut a = vec![0f32; xs.len()];
                let mut b = vec![0f32; xs.len()];
                bytes_to_f32(&out, d, &mut a).unwrap();
                bytes_to_f32(&expected, d, &mut b).unwrap();
                for (x, y) in a.iter().zip(&b) {
                    prop_assert!(x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()));
                }
            } else {
                prop_assert_eq!(out, expected);
            }
        }

        #[test]
        fn round_half_even_matches_std_everywhere(bits in any::<u32>()) {
            let x = f32::from_bits(bits);
            let (got, want) = (round_half_even(x), x.round_ties_even());
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()));
        }

        #[test]
        fn bulk_int_convert_matches_scalar(vals in proptest::collection::vec(any::<i64>(), 0..600), si in 0usize..8, di in 0usize..8) {
            let (sd, dd) = (INTS[si], INTS[di]);
            // Build a source of `sd` elements by saturating the random values.
            let wide: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            let src = conv(&wide, Dtype::Int64, sd);
            let out = conv(&src, sd, dd);
            let mut back_src = vec![0i128; vals.len()];
            decode_int(sd, &src, &mut back_src);
            let mut back_out = vec![0i128; vals.len()];
            decode_int(dd, &out, &mut back_out);
            let (lo, hi) = int_range(dd);
            for (s, o) in back_src.iter().zip(&back_out) {
                prop_assert_eq!(*o, (*s).clamp(lo, hi));
            }
        }

        #[test]
        fn typed_paths_match_bulk(xs in proptest::collection::vec(-1e5f32..1e5, 0..300), seed in any::<u64>()) {
            let src = f32_bytes(&xs);
            let mut typed = vec![bf16::ZERO; xs.len()];
            f32_to_bf16_slice(&xs, &mut typed, &mut Rounding::stochastic(seed)).unwrap();
            let mut bulk = vec![0u8; xs.len() * 2];
            convert(&src, Dtype::Float32, &mut bulk, Dtype::Bfloat16, &mut Rounding::stochastic(seed)).unwrap();
            let typed_bytes: Vec<u8> = typed.iter().flat_map(|h| h.to_le_bytes()).collect();
            prop_assert_eq!(&typed_bytes, &bulk);

            let mut h = vec![f16::ZERO; xs.len()];
            f32_to_f16_slice(&xs, &mut h, &mut Rounding::NearestEven).unwrap();
            let mut back = vec![0f32; xs.len()];
            f16_to_f32_slice(&h, &mut back).unwrap();
            let mut back2 = vec![0f32; xs.len()];
            bytes_to_f32(&conv(&src, Dtype::Float32, Dtype::Float16), Dtype::Float16, &mut back2).unwrap();
            prop_assert_eq!(back, back2);

            for kind in Fp8Kind::ALL {
                let mut codes = vec![0u8; xs.len()];
                f32_to_fp8_slice(kind, &xs, &mut codes, &mut Rounding::NearestEven).unwrap();
                prop_assert_eq!(&codes, &conv(&src, Dtype::Float32, kind.dtype()));
                let mut vals = vec![0f32; xs.len()];
                fp8_to_f32_slice(kind, &codes, &mut vals).unwrap();
                let mut b = vec![bf16::ZERO; xs.len()];
                f32_to_bf16_slice(&vals, &mut b, &mut Rounding::NearestEven).unwrap();
                let mut wide = vec![0f32; xs.len()];
                bf16_to_f32_slice(&b, &mut wide).unwrap();
                // Every fp8 value is exact in bf16.
                prop_assert_eq!(wide, vals);
            }
        }
    }

    fn int_range(d: Dtype) -> (i128, i128) {
        match d {
            Dtype::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Dtype::Uint8 => (0, u8::MAX.into()),
            Dtype::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Dtype::Uint16 => (0, u16::MAX.into()),
            Dtype::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Dtype::Uint32 => (0, u32::MAX.into()),
            Dtype::Int64 => (i64::MIN.into(), i64::MAX.into()),
            _ => (0, u64::MAX.into()),
        }
    }
}
