//! The fused path against the reference it replaces: widen the whole
//! operand with `bytes_to_f32` (what gather does), then the f32 GEMM.

use super::*;
use crate::kernels::gemm::{MatRef, gemm_with};
use nrt_isa::dtype::bytes_to_f32;
use proptest::prelude::*;

const DTYPES: [Dtype; 5] = [Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E3, Dtype::Fp8E4, Dtype::Fp8E5];

/// Pseudo-random element bytes. `finite` keeps the exponent field away from
/// all-ones, otherwise NaN / infinity codes appear too.
fn bytes(len: usize, seed: u64, dtype: Dtype, finite: bool) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out: Vec<u8> = (0..len * dtype.size_bytes())
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    if finite {
        // Clear the second-highest bit of each element: no all-ones exponent.
        for e in out.chunks_mut(dtype.size_bytes()) {
            let last = e.len() - 1;
            e[last] &= 0xBF;
        }
    }
    out
}

fn widened(raw: &[u8], dtype: Dtype) -> Vec<f32> {
    let mut out = vec![0.0f32; raw.len() / dtype.size_bytes()];
    bytes_to_f32(raw, dtype, &mut out).unwrap();
    out
}

/// Runs both paths on A (`m x k`) and B (`k x n`) stored with the given
/// strides and checks every output bit matches.
#[allow(clippy::too_many_arguments)]
fn compare(dtype: Dtype, m: usize, n: usize, k: usize, a_strides: (usize, usize), b_strides: (usize, usize), seed: u64, finite: bool, accumulate: bool) {
    let fmt = LowFormat::of(dtype).unwrap();
    let extent = |r: usize, c: usize, (rs, cs): (usize, usize)| (r - 1) * rs + (c - 1) * cs + 1;
    let a_raw = bytes(extent(m, k, a_strides), seed, dtype, finite);
    let b_raw = bytes(extent(k, n, b_strides), seed.wrapping_mul(31).wrapping_add(7), dtype, finite);
    let (a_wide, b_wide) = (widened(&a_raw, dtype), widened(&b_raw, dtype));
    let init: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.25 - 3.0).collect();
    for kernel in [MicroKernel::Avx2Fma, MicroKernel::Portable] {
        let mut want = init.clone();
        gemm_with(
            kernel,
            MatRef::new(&a_wide, m, k, a_strides.0, a_strides.1).unwrap(),
            MatRef::new(&b_wide, k, n, b_strides.0, b_strides.1).unwrap(),
            &mut MatMut::row_major(&mut want, m, n).unwrap(),
            accumulate,
        )
        .unwrap();
        let mut got = init.clone();
        gemm_mixed_with(
            kernel,
            Operand::Low(LowRef::new(&a_raw, fmt, m, k, a_strides.0, a_strides.1).unwrap()),
            Operand::Low(LowRef::new(&b_raw, fmt, k, n, b_strides.0, b_strides.1).unwrap()),
            &mut MatMut::row_major(&mut got, m, n).unwrap(),
            accumulate,
        )
        .unwrap();
        // Mixed operands: f32 A with a low-precision B (the simulator's
        // LDWEIGHTS-widened stationary against a raw moving tile).
        let mut mixed = init.clone();
        gemm_mixed_with(
            kernel,
            Operand::F32(MatRef::new(&a_wide, m, k, a_strides.0, a_strides.1).unwrap()),
            Operand::Low(LowRef::new(&b_raw, fmt, k, n, b_strides.0, b_strides.1).unwrap()),
            &mut MatMut::row_major(&mut mixed, m, n).unwrap(),
            accumulate,
        )
        .unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "{dtype:?} {kernel:?} {m}x{n}x{k} A{a_strides:?} B{b_strides:?}");
        assert_eq!(bits(&mixed), bits(&want), "mixed {dtype:?} {kernel:?} {m}x{n}x{k}");
    }
}

#[test]
fn pe_native_shapes_are_bit_identical() {
    for dtype in DTYPES {
        // Stationary stored k x m (A = its transpose), moving k x n.
        for &(m, n, k) in &[(128, 64, 128), (128, 128, 128), (7, 300, 257)] {
            compare(dtype, m, n, k, (1, m), (n, 1), 11, true, false);
        }
    }
}

#[test]
fn nan_and_infinity_codes_propagate_identically() {
    for dtype in DTYPES {
        compare(dtype, 13, 21, 17, (17, 1), (21, 1), 5, false, true);
    }
}

#[test]
fn formats_map_from_dtypes() {
    assert_eq!(LowFormat::of(Dtype::Bfloat16), Some(LowFormat::Bfloat16));
    assert_eq!(LowFormat::of(Dtype::Float16).map(LowFormat::size_bytes), Some(2));
    assert_eq!(LowFormat::of(Dtype::Fp8E4).map(LowFormat::size_bytes), Some(1));
    assert_eq!(LowFormat::of(Dtype::Float32), None);
    assert_eq!(LowFormat::of(Dtype::Int8), None);
}

#[test]
fn views_past_the_buffer_are_errors() {
    let raw = [0u8; 12];
    assert!(LowRef::row_major(&raw, LowFormat::Bfloat16, 2, 3).is_ok());
    assert!(LowRef::row_major(&raw, LowFormat::Bfloat16, 2, 4).is_err());
    assert!(LowRef::new(&raw, LowFormat::Bfloat16, 2, 2, usize::MAX, 1).is_err());
    let view = LowRef::row_major(&raw, LowFormat::Fp8(nrt_isa::dtype::Fp8Kind::E4), 2, 5).unwrap().t();
    assert_eq!((view.rows(), view.cols()), (5, 2));
    // Shape mismatches surface as errors, not panics.
    let mut c = [0.0f32; 4];
    let a = Operand::Low(LowRef::row_major(&raw, LowFormat::Bfloat16, 2, 2).unwrap());
    let b = Operand::Low(LowRef::row_major(&raw, LowFormat::Bfloat16, 3, 1).unwrap());
    assert!(gemm_mixed(a, b, &mut MatMut::row_major(&mut c, 2, 2).unwrap(), false).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_shapes_and_strides_are_bit_identical(
        dtype_idx in 0usize..DTYPES.len(),
        m in 1usize..30,
        n in 1usize..40,
        k in 1usize..70,
        a_t in any::<bool>(),
        b_t in any::<bool>(),
        a_pad in 0usize..5,
        b_pad in 0usize..5,
        seed in any::<u64>(),
        finite in any::<bool>(),
        accumulate in any::<bool>(),
    ) {
        // Row-major or column-major storage with padded leading dimensions.
        let a_strides = if a_t { (1, m + a_pad) } else { (k + a_pad, 1) };
        let b_strides = if b_t { (1, k + b_pad) } else { (n + b_pad, 1) };
        compare(DTYPES[dtype_idx], m, n, k, a_strides, b_strides, seed, finite, accumulate);
    }

    #[test]
    fn general_strides_are_bit_identical(
        dtype_idx in 0usize..DTYPES.len(),
        m in 1usize..12,
        n in 1usize..20,
        k in 1usize..20,
        rs in 1usize..4,
        cs in 1usize..4,
        seed in any::<u64>(),
    ) {
        // Non-unit strides on both axes (the element-by-element read path).
        compare(DTYPES[dtype_idx], m, n, k, (rs * k * cs, cs), (rs, cs * k * rs), seed, true, false);
    }
}
