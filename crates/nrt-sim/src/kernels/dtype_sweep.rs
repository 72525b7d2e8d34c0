//! Instruction-level checks across dtypes: operands are stored in SBUF-like
//! memory in every input dtype, gathered, computed, scattered to every output
//! dtype, and compared with a per-element f64 reference rounded into the same
//! output dtype.
//!
//! Tolerance: the kernel's own f32 error (per op, as in the kernel tests)
//! plus one unit in the last place of the *output* dtype, since an f32 value
//! within tolerance of the reference may round to the neighbouring output
//! code.

use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};

use super::activation::{ActFunc, activation};
use super::elementwise::{AluOp, ScalarStage, select, tensor_scalar, tensor_tensor};
use super::pattern::tests::DTYPES;
use super::pattern::{MemoryMut, Pattern, gather, scatter};
use super::reduce::{ReduceOp, reduce_all_free};
use super::simd::ScalarOperand;
use super::tile::Tile;
use super::transpose::transpose;

const PARTS: usize = 4;
const FREE: usize = 24;
const PB: usize = 1024;

/// A unary reference formula.
type Unary = fn(f64) -> f64;
/// A binary reference formula.
type Binary = fn(f64, f64) -> f64;

/// Spacing of `dtype` values around `x` (1 for integers).
fn ulp(dtype: Dtype, x: f64) -> f64 {
    let (mant, emin) = match dtype {
        Dtype::Float32 | Dtype::Float32r => (23, -126),
        Dtype::Bfloat16 => (7, -126),
        Dtype::Float16 => (10, -14),
        Dtype::Fp8E3 => (4, -2),
        Dtype::Fp8E4 => (3, -6),
        Dtype::Fp8E5 => (2, -14),
        _ => return 1.0,
    };
    let e = (x.abs().max(1e-30).log2().floor() as i32).max(emin);
    2f64.powi(e - mant)
}

/// Stores `t` as `dtype` and reads it back: the exact operand values an
/// instruction sees when its input lives in memory as `dtype`.
fn through_memory(t: &Tile, dtype: Dtype) -> Tile {
    let mut bytes = vec![0u8; t.partitions() * PB];
    let pat = Pattern::contiguous(0, t.partitions(), 0, t.free() as u32);
    let mut mem = MemoryMut::new(&mut bytes, PB).unwrap();
    scatter(&mut mem, &pat, dtype, t, &mut Rounding::NearestEven).unwrap();
    gather(&mem, &pat, dtype).unwrap()
}

/// `x` rounded into `dtype` and decoded again, as the reference's output.
fn as_dtype(x: f32, dtype: Dtype) -> f32 {
    let mut b = vec![0u8; dtype.size_bytes()];
    f32_to_bytes(&[x], dtype, &mut b, &mut Rounding::NearestEven).unwrap();
    let mut v = [0f32];
    bytes_to_f32(&b, dtype, &mut v).unwrap();
    v[0]
}

fn input(dtype: Dtype, seed: usize) -> Tile {
    let unsigned = matches!(dtype, Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Uint64);
    let t = Tile::from_fn(PARTS, FREE, |p, j| {
        let u = (((p * FREE + j) * 7919 + seed * 104_729) % 1000) as f32 / 1000.0;
        if unsigned { u * 6.0 } else { u * 6.0 - 3.0 }
    });
    through_memory(&t, dtype)
}

/// Compares the kernel output (after the trip through `out_dtype`) with the
/// reference values; `rel` is the kernel's own relative f32 tolerance.
fn check(name: &str, got: &Tile, want: &[f64], out_dtype: Dtype, rel: f64, abs: f64) {
    let got = through_memory(got, out_dtype);
    for (i, (&g, &w)) in got.as_slice().iter().zip(want).enumerate() {
        let w_rounded = as_dtype(w as f32, out_dtype) as f64;
        let tol = rel * w.abs() + abs + ulp(out_dtype, w) * 1.001;
        let ok = (g as f64 - w_rounded).abs() <= tol || (g.is_nan() && w_rounded.is_nan());
        assert!(
            ok,
            "{name} -> {out_dtype:?}, element {i}: got {g}, want {w} (as {out_dtype:?}: {w_rounded}), tol {tol}"
        );
    }
}

#[test]
fn activation_every_dtype_pair() {
    let cases: [(ActFunc, f32, f32, Unary); 5] = [
        (ActFunc::Identity, 2.0, 1.0, |x| x),
        (ActFunc::Relu, 1.0, -0.5, |x| x.max(0.0)),
        (ActFunc::Exp, 0.5, 0.0, f64::exp),
        (ActFunc::Sigmoid, 1.0, 0.0, |x| 1.0 / (1.0 + (-x).exp())),
        (ActFunc::GeluTanh, 1.0, 0.0, |x| {
            0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
        }),
    ];
    for din in DTYPES {
        let x = input(din, 1);
        for (func, scale, bias, reference) in cases {
            let y = activation(&x, func, ScalarOperand::Imm(scale), ScalarOperand::Imm(bias)).unwrap();
            let want: Vec<f64> = x.as_slice().iter().map(|&v| reference((v * scale + bias) as f64)).collect();
            for dout in DTYPES {
                check(&format!("{} from {din:?}", func.name()), &y, &want, dout, 1e-5, 1e-6);
            }
        }
    }
}

#[test]
fn tensor_ops_every_dtype_pair() {
    let ops: [(AluOp, Binary); 5] = [
        (AluOp::Add, |a, b| a + b),
        (AluOp::Subtract, |a, b| a - b),
        (AluOp::Multiply, |a, b| a * b),
        (AluOp::Max, f64::max),
        (AluOp::Ge, |a, b| if a >= b { 1.0 } else { 0.0 }),
    ];
    for din in DTYPES {
        let (a, b) = (input(din, 2), input(din, 3));
        for (op, reference) in ops {
            let y = tensor_tensor(&a, &b, op).unwrap();
            let want: Vec<f64> = a
                .as_slice()
                .iter()
                .zip(b.as_slice())
                .map(|(&x, &z)| reference(x as f64, z as f64))
                .collect();
            // One f32 rounding of an exact-in-f64 result.
            for dout in DTYPES {
                check(&format!("{op:?} from {din:?}"), &y, &want, dout, 1.2e-7, 0.0);
            }
        }
        let y = tensor_scalar(
            &a,
            ScalarStage::new(AluOp::Multiply, ScalarOperand::Imm(3.0)),
            Some(ScalarStage::reversed(AluOp::Subtract, ScalarOperand::Imm(1.0))),
        )
        .unwrap();
        let want: Vec<f64> = a.as_slice().iter().map(|&x| 1.0 - 3.0 * x as f64).collect();
        let mask = input(din, 4);
        let sel = select(&mask, &a, &b).unwrap();
        let want_sel: Vec<f64> =
            (0..PARTS * FREE).map(|i| if mask.as_slice()[i] != 0.0 { a.as_slice()[i] } else { b.as_slice()[i] } as f64).collect();
        for dout in DTYPES {
            check(&format!("tensor_scalar from {din:?}"), &y, &want, dout, 2.4e-7, 0.0);
            check(&format!("select from {din:?}"), &sel, &want_sel, dout, 0.0, 0.0);
        }
    }
}

#[test]
fn reduce_and_transpose_every_dtype_pair() {
    for din in DTYPES {
        let x = input(din, 5);
        let sums = reduce_all_free(&x, ReduceOp::Sum).unwrap();
        let want: Vec<f64> = (0..PARTS).map(|p| x.row(p).iter().map(|&v| v as f64).sum()).collect();
        let mag = x.as_slice().iter().map(|v| v.abs() as f64).fold(0.0, f64::max) * FREE as f64;
        let t = transpose(&x);
        let want_t: Vec<f64> = (0..FREE)
            .flat_map(|j| (0..PARTS).map(move |p| (p, j)))
            .map(|(p, j)| x.get(p, j).unwrap() as f64)
            .collect();
        for dout in DTYPES {
            check(
                &format!("sum from {din:?}"),
                &sums,
                &want,
                dout,
                0.0,
                (FREE as f64 + 2.0) * f32::EPSILON as f64 * mag,
            );
            check(&format!("transpose from {din:?}"), &t, &want_t, dout, 0.0, 0.0);
        }
    }
}
