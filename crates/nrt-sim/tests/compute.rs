//! Per-instruction semantics of the compute engines: each test stages
//! inputs in SBUF through device writes, runs the instruction on a
//! deterministic SimDevice (start_engine + doorbell) and compares SBUF /
//! PSUM against a reference written here with plain loops.

mod common;

use common::*;
use nrt_hal::EngineId;
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::*;
use nrt_isa::notification::InferErrorSubtype;
use nrt_isa::operand::{Addr4, Tensor3d};
use nrt_sim::nq::record as nqr;
use nrt_sim::{FaultKind, FaultSpec, InstrSelector};

const FLOATS: [Dtype; 5] = [Dtype::Float32, Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E4, Dtype::Fp8E5];

fn code(d: Dtype) -> DtypeCode {
    DtypeCode::of(d)
}

/// LDWEIGHTS of a `k x m` tile at `base`, walked backwards as the compiler does.
pub fn ldweights(base: u32, dt: Dtype, k: u8, m: u8) -> Instruction {
    let last = base + (u32::from(m) - 1) * dt.size_bytes() as u32;
    let weights = Tensor3d { start: Addr4(last), step: [-1, 0, 0], num: [u16::from(m), 1, 1] };
    LdWeights { weights, dtype: code(dt), rows: k, cols: m, row_mask: 0xF, col_mask: 0xF, ..Default::default() }.into()
}

/// MATMUL of the `k x n` moving tile at `moving` into PSUM `psum`.
#[allow(clippy::too_many_arguments)]
pub fn matmul(moving: u32, n: u16, dt: Dtype, k: u8, m: u8, acc: Accumulate, psum: u32, transpose: bool) -> Instruction {
    Matmul {
        moving: t3(moving, n),
        dtype: code(dt),
        transpose,
        rows: k,
        cols: m,
        accumulate: acc,
        row_mask: 0xF,
        col_mask: 0xF,
        psum: t3(psum, n),
        ..Default::default()
    }
    .into()
}

/// Σ_k w[k][m] · x[k][n] in f64.
fn reference_matmul(w: &[Vec<f32>], x: &[Vec<f32>]) -> Vec<Vec<f64>> {
    let (m, n) = (w[0].len(), x[0].len());
    let mut out = vec![vec![0f64; n]; m];
    for (wr, xr) in w.iter().zip(x) {
        for (mi, o) in out.iter_mut().enumerate() {
            for (ni, v) in o.iter_mut().enumerate() {
                *v += f64::from(wr[mi]) * f64::from(xr[ni]);
            }
        }
    }
    out
}

#[test]
fn matmul_accumulates_two_k_tiles_in_fp32_for_every_dtype() {
    let (k, m, n) = (64usize, 32usize, 48usize);
    for dt in FLOATS {
        let rig = Rig::new(&[]);
        let (w1, x1, w2, x2) = (matrix(1, k, m, 1.0, dt), matrix(2, k, n, 1.0, dt), matrix(3, k, m, 1.0, dt), matrix(4, k, n, 1.0, dt));
        rig.stage(0x0, dt, &w1);
        rig.stage(0x1000, dt, &x1);
        rig.stage(0x2000, dt, &w2);
        rig.stage(0x3000, dt, &x2);
        let (k8, m8, n16) = (k as u8, m as u8, n as u16);
        rig.run(
            EngineId::Pe,
            &[
                ldweights(0x0, dt, k8, m8),
                matmul(0x1000, n16, dt, k8, m8, Accumulate::Start, PSUM, false),
                ldweights(0x2000, dt, k8, m8),
                matmul(0x3000, n16, dt, k8, m8, Accumulate::Stop, PSUM, false),
            ],
        );
        let (a, b) = (reference_matmul(&w1, &x1), reference_matmul(&w2, &x2));
        let want: Vec<Vec<f32>> = a.iter().zip(&b).map(|(r, s)| r.iter().zip(s).map(|(u, v)| (u + v) as f32).collect()).collect();
        assert_close(&rig.psum_values(0, Dtype::Float32, m, n), &want, 1e-5, &format!("matmul {dt:?}"));
    }
}

#[test]
fn matmul_middle_step_adds_to_psum_and_start_overwrites() {
    let rig = Rig::new(&[]);
    let dt = Dtype::Float32;
    let (w, x) = (matrix(5, 16, 8, 1.0, dt), matrix(6, 16, 4, 1.0, dt));
    rig.stage(0x0, dt, &w);
    rig.stage(0x100, dt, &x);
    for p in 0..8 {
        rig.write_psum(p, 0x40, &encode(&[10.0; 4], dt));
        rig.write_psum(p, 0x80, &encode(&[10.0; 4], dt));
    }
    rig.run(
        EngineId::Pe,
        &[
            ldweights(0x0, dt, 16, 8),
            matmul(0x100, 4, dt, 16, 8, Accumulate::Middle, PSUM + 0x40, false),
            // The weights stay loaded: a second MATMUL reuses them.
            matmul(0x100, 4, dt, 16, 8, Accumulate::Single, PSUM + 0x80, false),
        ],
    );
    let r = reference_matmul(&w, &x);
    let mid: Vec<Vec<f32>> = r.iter().map(|row| row.iter().map(|v| (v + 10.0) as f32).collect()).collect();
    let single: Vec<Vec<f32>> = r.iter().map(|row| row.iter().map(|v| *v as f32).collect()).collect();
    assert_close(&rig.psum_values(0x40, dt, 8, 4), &mid, 1e-6, "accumulate");
    assert_close(&rig.psum_values(0x80, dt, 8, 4), &single, 1e-6, "single");
}

#[test]
fn pe_transpose_against_identity_is_bit_exact_in_the_input_dtype() {
    let (k, m) = (32usize, 48usize);
    for dt in [Dtype::Float32, Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E4] {
        let rig = Rig::new(&[]);
        let mut w = matrix(7, k, m, 100.0, dt);
        w[3][5] = -0.0;
        rig.stage(0x0, dt, &w);
        let eye: Vec<Vec<f32>> = (0..k).map(|i| (0..k).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
        rig.stage(0x1000, dt, &eye);
        let mut ld = ldweights(0x0, dt, k as u8, m as u8);
        if let Instruction::LdWeights(l) = &mut ld {
            l.transpose = true;
        }
        rig.run(EngineId::Pe, &[ld, matmul(0x1000, k as u16, dt, k as u8, m as u8, Accumulate::Single, PSUM + 0x800, true)]);
        for (mi, _) in w[0].iter().enumerate() {
            let col: Vec<f32> = w.iter().map(|row| row[mi]).collect();
            assert_eq!(rig.read_psum(mi, 0x800, k * dt.size_bytes()), encode(&col, dt), "{dt:?} column {mi}");
        }
    }
}

fn activate(func: ActFunc, in_dt: Dtype, out_dt: Dtype, parts: u8, n: u16, scale: f32, bias: f32) -> Activate {
    Activate {
        func,
        in_dtype: code(in_dt),
        out_dtype: code(out_dt),
        partitions: parts,
        input: t3(0x0, n),
        output: t3(0x1000, n),
        scale: F32Bits::new(scale),
        bias: F32Bits::new(bias),
        ..Default::default()
    }
}

fn act_reference(func: ActFunc, x: f64) -> f64 {
    match func {
        ActFunc::Identity => x,
        ActFunc::Relu => x.max(0.0),
        ActFunc::Exp => x.exp(),
        ActFunc::Tanh => x.tanh(),
        ActFunc::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        ActFunc::Square => x * x,
        ActFunc::Silu => x / (1.0 + (-x).exp()),
        ActFunc::Abs => x.abs(),
        other => panic!("no reference for {other:?}"),
    }
}

/// Relative tolerance of a value stored as `dt` (about one unit in the last place).
fn tol(dt: Dtype) -> f32 {
    match dt {
        Dtype::Float32 => 2e-6,
        Dtype::Bfloat16 => 8e-3,
        Dtype::Float16 => 1e-3,
        Dtype::Fp8E4 => 0.13,
        Dtype::Fp8E5 => 0.26,
        _ => 0.0,
    }
}

#[test]
fn activate_matches_the_formula_for_functions_and_dtypes() {
    let funcs = [ActFunc::Identity, ActFunc::Relu, ActFunc::Exp, ActFunc::Tanh, ActFunc::Sigmoid, ActFunc::Square, ActFunc::Silu, ActFunc::Abs];
    let pairs = [
        (Dtype::Float32, Dtype::Float32),
        (Dtype::Float32, Dtype::Bfloat16),
        (Dtype::Bfloat16, Dtype::Float32),
        (Dtype::Float16, Dtype::Float16),
        (Dtype::Float32, Dtype::Fp8E4),
        (Dtype::Fp8E5, Dtype::Float32),
    ];
    let (parts, n) = (16usize, 40usize);
    for (in_dt, out_dt) in pairs {
        for func in funcs {
            let rig = Rig::new(&[]);
            let x = matrix(11, parts, n, 3.0, in_dt);
            rig.stage(0x0, in_dt, &x);
            rig.run(EngineId::Act, &[activate(func, in_dt, out_dt, parts as u8, n as u16, 0.5, -0.25).into()]);
            let want: Vec<Vec<f32>> = x
                .iter()
                .map(|r| r.iter().map(|v| quantize(act_reference(func, f64::from(*v) * 0.5 - 0.25) as f32, out_dt)).collect())
                .collect();
            let t = tol(out_dt).max(1e-5);
            assert_close(&rig.sbuf_values(0x1000, out_dt, parts, n), &want, t, &format!("{func:?} {in_dt:?}->{out_dt:?}"));
        }
    }
}

#[test]
fn activate_takes_a_per_partition_bias_from_sbuf() {
    let rig = Rig::new(&[]);
    let (parts, n) = (8usize, 12usize);
    let x = matrix(12, parts, n, 2.0, Dtype::Float32);
    rig.stage(0x0, Dtype::Float32, &x);
    let bias: Vec<Vec<f32>> = (0..parts).map(|p| vec![p as f32 - 4.0]).collect();
    rig.stage(0x3000, Dtype::Float32, &bias);
    let mut a = activate(ActFunc::Relu, Dtype::Float32, Dtype::Float32, parts as u8, n as u16, 2.0, 0.0);
    a.bias_from_sbuf = true;
    a.bias_addr = 0x3000;
    rig.run(EngineId::Act, &[Instruction::ActivationTableLoad(ActivationTableLoad::default()), a.into()]);
    let want: Vec<Vec<f32>> = x.iter().enumerate().map(|(p, r)| r.iter().map(|v| (v * 2.0 + p as f32 - 4.0).max(0.0)).collect()).collect();
    assert_close(&rig.sbuf_values(0x1000, Dtype::Float32, parts, n), &want, 1e-6, "relu with SBUF bias");
}

fn alu_reference(op: AluOp, a: f32, b: f32) -> f32 {
    let flag = |c: bool| if c { 1.0 } else { 0.0 };
    match op {
        AluOp::Bypass => a,
        AluOp::Add => a + b,
        AluOp::Sub => a - b,
        AluOp::Mult => a * b,
        AluOp::Divide => a / b,
        AluOp::Max => a.max(b),
        AluOp::Min => a.min(b),
        AluOp::AbsDiff => (a - b).abs(),
        AluOp::IsLt => flag(a < b),
        AluOp::IsGe => flag(a >= b),
        AluOp::IsEq => flag(a == b),
        other => panic!("no reference for {other:?}"),
    }
}

#[test]
fn tensor_tensor_matches_the_reference_for_ops_and_dtypes() {
    let ops = [AluOp::Add, AluOp::Sub, AluOp::Mult, AluOp::Max, AluOp::Min, AluOp::AbsDiff, AluOp::IsLt, AluOp::IsGe, AluOp::IsEq, AluOp::Bypass, AluOp::Divide];
    let (parts, n) = (8usize, 20usize);
    for dt in [Dtype::Float32, Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E4, Dtype::Int32] {
        for op in ops {
            if dt == Dtype::Int32 && op == AluOp::Divide {
                continue;
            }
            let rig = Rig::new(&[]);
            let range = if dt == Dtype::Int32 { 1000.0 } else { 4.0 };
            let a = matrix(21, parts, n, range, dt);
            let mut b = matrix(22, parts, n, range, dt);
            b[1][2] = a[1][2];
            rig.stage(0x0, dt, &a);
            rig.stage(0x400, dt, &b);
            let i = TensorTensor {
                in_dtypes: DtypePair { first: code(dt), second: code(dt) },
                out_dtype: code(dt),
                op,
                partitions: parts as u8,
                in0: t3(0x0, n as u16),
                in1: t3(0x400, n as u16),
                out: t3(0x800, n as u16),
                ..Default::default()
            };
            rig.run(EngineId::Dve, &[i.into()]);
            let want: Vec<Vec<f32>> =
                a.iter().zip(&b).map(|(r, s)| r.iter().zip(s).map(|(x, y)| quantize(alu_reference(op, *x, *y), dt)).collect()).collect();
            assert_close(&rig.sbuf_values(0x800, dt, parts, n), &want, 0.0, &format!("{op:?} {dt:?}"));
        }
    }
}

#[test]
fn tensor_scalar_chains_two_stages_with_reverse_and_bypass() {
    let (parts, n) = (4usize, 16usize);
    let cases = [
        (AluOp::Mult, 2.0, false, AluOp::Add, 1.0, false),
        (AluOp::Sub, 3.0, true, AluOp::Bypass, 0.0, false),
        (AluOp::Max, 0.0, false, AluOp::Divide, 8.0, true),
    ];
    for (in_dt, out_dt) in [(Dtype::Float32, Dtype::Float32), (Dtype::Bfloat16, Dtype::Float16), (Dtype::Float32, Dtype::Int32)] {
        for (op0, s0, r0, op1, s1, r1) in cases {
            let rig = Rig::new(&[]);
            let x = matrix(31, parts, n, 10.0, in_dt);
            rig.stage(0x0, in_dt, &x);
            let i = TensorScalar {
                op0,
                in_dtype: code(in_dt),
                out_dtype: code(out_dt),
                partitions: parts as u8,
                input: t3(0x0, n as u16),
                output: t3(0x200, n as u16),
                scalar0: F32Bits::new(s0),
                reverse0: r0,
                op1,
                reverse1: r1,
                scalar1: F32Bits::new(s1),
                ..Default::default()
            };
            rig.run(EngineId::Pool, &[i.into()]);
            let stage = |op, v: f32, s: f32, rev: bool| if rev { alu_reference(op, s, v) } else { alu_reference(op, v, s) };
            let want: Vec<Vec<f32>> = x
                .iter()
                .map(|r| r.iter().map(|v| quantize(stage(op1, stage(op0, *v, s0, r0), s1, r1), out_dt)).collect())
                .collect();
            assert_close(&rig.sbuf_values(0x200, out_dt, parts, n), &want, 0.0, &format!("{op0:?}/{op1:?} {in_dt:?}->{out_dt:?}"));
        }
    }
}

#[test]
fn pool_reduces_the_selected_dimensions_keeping_the_others_in_order() {
    let (parts, n0, n1, n2) = (4usize, 4usize, 3usize, 2usize);
    let input = Tensor3d { start: Addr4(0), step: [1, n0 as i16, (n0 * n1) as i16], num: [n0 as u16, n1 as u16, n2 as u16] };
    for dt in [Dtype::Float32, Dtype::Bfloat16, Dtype::Int32] {
        let x = matrix(41, parts, n0 * n1 * n2, 50.0, dt);
        let at = |r: &Vec<f32>, i0: usize, i1: usize, i2: usize| r[i0 + n0 * i1 + n0 * n1 * i2];
        for (axes, op) in [(0b001u8, ReduceOp::Sum), (0b010, ReduceOp::Max), (0b101, ReduceOp::Mean), (0b111, ReduceOp::Min)] {
            let rig = Rig::new(&[]);
            rig.stage(0x0, dt, &x);
            let dims = [n0, n1, n2];
            let kept: Vec<usize> = (0..3).filter(|k| axes & (1 << k) == 0).collect();
            let out_len: usize = kept.iter().map(|k| dims[*k]).product();
            let i = Pool {
                op,
                in_dtype: code(dt),
                out_dtype: code(Dtype::Float32),
                partitions: parts as u8,
                input,
                output: t3(0x400, out_len as u16),
                axes,
                ..Default::default()
            };
            rig.run(EngineId::Pool, &[i.into()]);
            let mut want = vec![Vec::new(); parts];
            for (p, r) in x.iter().enumerate() {
                for o in 0..out_len {
                    // Decompose o over the kept dims (first kept innermost).
                    let mut fixed = [None; 3];
                    let mut rest = o;
                    for k in &kept {
                        fixed[*k] = Some(rest % dims[*k]);
                        rest /= dims[*k];
                    }
                    let mut vals = Vec::new();
                    for i2 in 0..n2 {
                        for i1 in 0..n1 {
                            for i0 in 0..n0 {
                                let idx = [i0, i1, i2];
                                if (0..3).all(|k| fixed[k].is_none_or(|f| f == idx[k])) {
                                    vals.push(at(r, i0, i1, i2));
                                }
                            }
                        }
                    }
                    let v = match op {
                        ReduceOp::Sum => vals.iter().sum(),
                        ReduceOp::Max => vals.iter().copied().fold(f32::MIN, f32::max),
                        ReduceOp::Min => vals.iter().copied().fold(f32::MAX, f32::min),
                        ReduceOp::Mean => vals.iter().sum::<f32>() / vals.len() as f32,
                    };
                    want[p].push(v);
                }
            }
            assert_close(&rig.sbuf_values(0x400, Dtype::Float32, parts, out_len), &want, 1e-6, &format!("{op:?} axes {axes:#b} {dt:?}"));
        }
    }
}

fn copy(src: u32, in_dt: Dtype, dst: u32, out_dt: Dtype, parts: u8, n: u16) -> Copy {
    Copy { src: t4(src, n), in_dtype: code(in_dt), out_dtype: code(out_dt), partitions: parts, dst: t4(dst, n), ..Default::default() }
}

#[test]
fn copy_int32_moves_any_bits_exactly_and_from_psum() {
    let rig = Rig::new(&[]);
    let (parts, n) = (16usize, 32usize);
    let bits: Vec<Vec<u8>> = (0..parts)
        .map(|p| {
            let mut row: Vec<u8> = values(50 + p as u64, n, 1.0).iter().flat_map(|v| v.to_bits().wrapping_mul(2_654_435_761).to_le_bytes()).collect();
            row[0..4].copy_from_slice(&0x7FC0_1234u32.to_le_bytes()); // a NaN payload
            row
        })
        .collect();
    for (p, row) in bits.iter().enumerate() {
        rig.write_sbuf(p, 0x0, row);
        rig.write_psum(p, 0x800, row);
    }
    rig.run(
        EngineId::Act,
        &[
            copy(0x0, Dtype::Int32, 0x1000, Dtype::Int32, parts as u8, n as u16).into(),
            copy(PSUM + 0x800, Dtype::Float32, 0x2000, Dtype::Float32, parts as u8, n as u16).into(),
        ],
    );
    for (p, row) in bits.iter().enumerate() {
        assert_eq!(&rig.read_sbuf(p, 0x1000, row.len()), row, "int32 copy, partition {p}");
        assert_eq!(&rig.read_sbuf(p, 0x2000, row.len()), row, "fp32 PSUM copy, partition {p}");
    }
}

#[test]
fn cast_rounds_to_nearest_even_for_every_dtype() {
    let (parts, n) = (8usize, 64usize);
    let x = matrix(60, parts, n, 300.0, Dtype::Float32);
    for out in [Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E4, Dtype::Fp8E5, Dtype::Int32] {
        let rig = Rig::new(&[]);
        rig.stage(0x0, Dtype::Float32, &x);
        let c = copy(0x0, Dtype::Float32, 0x1000, out, parts as u8, n as u16);
        let cast = Cast { src: c.src, in_dtype: c.in_dtype, out_dtype: c.out_dtype, partitions: c.partitions, dst: c.dst, ..Default::default() };
        rig.run(EngineId::Dve, &[cast.into()]);
        for (p, r) in x.iter().enumerate() {
            assert_eq!(rig.read_sbuf(p, 0x1000, n * out.size_bytes()), encode(r, out), "cast to {out:?}, partition {p}");
        }
    }
}

#[test]
fn copy_predicated_selects_bit_exactly_and_inverts() {
    for invert in [false, true] {
        let rig = Rig::new(&[]);
        let (parts, n) = (4usize, 24usize);
        let src: Vec<Vec<u8>> = (0..parts).map(|p| (0..n * 4).map(|i| (i * 31 + p * 7) as u8).collect()).collect();
        let dst: Vec<Vec<u8>> = (0..parts).map(|p| (0..n * 4).map(|i| (i * 13 + p + 100) as u8).collect()).collect();
        let mask: Vec<Vec<u8>> = (0..parts).map(|p| (0..n).map(|i| ((i + p) % 3 == 0) as u8 * (1 + i as u8)).collect()).collect();
        for p in 0..parts {
            rig.write_sbuf(p, 0x0, &mask[p]);
            rig.write_sbuf(p, 0x100, &src[p]);
            rig.write_sbuf(p, 0x200, &dst[p]);
        }
        let i = CopyPredicated {
            mask_dtype: code(Dtype::Uint8),
            dtype: code(Dtype::Int32),
            invert,
            partitions: parts as u8,
            mask: t3(0x0, n as u16),
            src: t3(0x100, n as u16),
            dst: t3(0x200, n as u16),
            ..Default::default()
        };
        rig.run(EngineId::Pool, &[i.into()]);
        for p in 0..parts {
            let mut want = dst[p].clone();
            for e in 0..n {
                if (mask[p][e] != 0) != invert {
                    want[e * 4..e * 4 + 4].copy_from_slice(&src[p][e * 4..e * 4 + 4]);
                }
            }
            assert_eq!(rig.read_sbuf(p, 0x200, n * 4), want, "invert={invert} partition {p}");
        }
    }
}

fn iota(dt: Dtype, parts: u8, output: Tensor3d, base: f32, ps: f32, steps: [f32; 3]) -> Iota {
    Iota {
        dtype: code(dt),
        partitions: parts,
        output,
        base: F32Bits::new(base),
        partition_step: F32Bits::new(ps),
        step0: F32Bits::new(steps[0]),
        step1: F32Bits::new(steps[1]),
        step2: F32Bits::new(steps[2]),
        ..Default::default()
    }
}

#[test]
fn iota_and_memset_fill_the_documented_values() {
    let parts = 8usize;
    let out = Tensor3d { start: Addr4(0x100), step: [1, 16, 0], num: [16, 4, 1] };
    let cases: [(Dtype, f32, f32, [f32; 3]); 5] = [
        (Dtype::Int32, 5.0, 64.0, [1.0, 16.0, 0.0]),
        (Dtype::Float32, 2.5, 0.0, [0.0, 0.0, 0.0]),
        (Dtype::Float32, 0.5, 0.125, [0.25, -1.5, 0.0]),
        (Dtype::Bfloat16, -3.0, 1.0, [1.0, 100.0, 0.0]),
        (Dtype::Fp8E4, 0.0, 0.0, [0.0, 0.0, 0.0]),
    ];
    for (dt, base, ps, steps) in cases {
        let rig = Rig::new(&[]);
        rig.stage(0x100, dt, &vec![vec![9.0; 64]; parts]);
        rig.run(EngineId::Pool, &[iota(dt, parts as u8, out, base, ps, steps).into()]);
        let want: Vec<Vec<f32>> = (0..parts)
            .map(|p| {
                (0..64)
                    .map(|j| quantize(base + p as f32 * ps + (j % 16) as f32 * steps[0] + (j / 16) as f32 * steps[1], dt))
                    .collect()
            })
            .collect();
        assert_close(&rig.sbuf_values(0x100, dt, parts, 64), &want, 0.0, &format!("iota {dt:?} base {base}"));
    }
}

#[test]
fn stream_transpose_swaps_partitions_and_free_elements() {
    for (in_dt, out_dt, parts, f) in [(Dtype::Float16, Dtype::Float16, 32usize, 48usize), (Dtype::Float32, Dtype::Bfloat16, 16, 8), (Dtype::Int32, Dtype::Int32, 5, 7)] {
        let rig = Rig::new(&[]);
        let x = matrix(70, parts, f, 100.0, in_dt);
        rig.stage(0x0, in_dt, &x);
        let i = StreamTranspose {
            in_dtype: code(in_dt),
            out_dtype: code(out_dt),
            partitions: parts as u8,
            input: t3(0x0, f as u16),
            output: t3(0x1000, parts as u16),
            ..Default::default()
        };
        rig.run(EngineId::Pool, &[i.into()]);
        for j in 0..f {
            let col: Vec<f32> = x.iter().map(|r| r[j]).collect();
            assert_eq!(rig.read_sbuf(j, 0x1000, parts * out_dt.size_bytes()), encode(&col, out_dt), "{in_dt:?}->{out_dt:?} row {j}");
        }
    }
}

#[test]
fn nan_fault_poisons_the_named_compute_output_and_reports_it() {
    let rig = Rig::new(&[FaultSpec::new(FaultKind::Nan).at(InstrSelector::Name("MATMUL".into()))]);
    let dt = Dtype::Float32;
    let (w, x) = (matrix(80, 8, 4, 1.0, dt), matrix(81, 8, 6, 1.0, dt));
    rig.stage(0x0, dt, &w);
    rig.stage(0x100, dt, &x);
    rig.load(EngineId::Pe, &[ldweights(0x0, dt, 8, 4), matmul(0x100, 6, dt, 8, 4, Accumulate::Single, PSUM, false)]);
    rig.ring();
    let got = rig.psum_values(0, dt, 4, 6);
    assert!(got[0][0].is_nan(), "first output element is NaN");
    let r = reference_matmul(&w, &x);
    assert!((got[0][1] - r[0][1] as f32).abs() < 1e-5 && (got[3][5] - r[3][5] as f32).abs() < 1e-5, "the rest is intact");
    let errs: Vec<_> = rig.error_records().iter().filter_map(nqr::decode_error).collect();
    assert_eq!(errs.len(), 1);
    assert_eq!((errs[0].subtype, errs[0].detail), (InferErrorSubtype::Numerical, 0x02));
    assert_eq!(rig.dev.engine_state(C0, EngineId::Pe), Some(nrt_sim::engine::RunState::Idle), "the engine continues");
}

/// FILL 0x49 over `n` contiguous elements of `parts` partitions at `dst`.
fn fill(imm: f32, count: u32, in_dt: u8, out_dt: u8, parts: u8, dst: u32, n: u16) -> Fill {
    let dst = nrt_isa::operand::Tensor4d { start: Addr4(dst), step: [1, 1, 1, 1], num: [n, 1, 1, 1] };
    Fill { imm: F32Bits::new(imm), count, in_dtype: DtypeCode(in_dt), out_dtype: DtypeCode(out_dt), partitions: parts, dst, ..Default::default() }
}

#[test]
fn fill_sets_the_frame_and_a_mismatched_count_faults() {
    let parts = 128usize;
    // The compiler's accumulator initialisation: 512 fp32 zeros on DVE.
    let rig = Rig::new(&[]);
    rig.stage(0x5000, Dtype::Float32, &vec![vec![7.0; 512]; parts]);
    rig.run(EngineId::Dve, &[fill(0.0, 512, 0x0A, 0x0A, 128, 0x5000, 512).into()]);
    assert_close(&rig.sbuf_values(0x5000, Dtype::Float32, parts, 512), &vec![vec![0.0; 512]; parts], 0.0, "fill fp32 zero");
    // A non-zero immediate into bf16, the destination dtype from in_dtype (out_dtype 0).
    let rig = Rig::new(&[]);
    rig.stage(0x100, Dtype::Bfloat16, &vec![vec![7.0; 16]; 4]);
    rig.run(EngineId::Dve, &[fill(-1.5, 16, 6, 0, 4, 0x100, 16).into()]);
    assert_close(&rig.sbuf_values(0x100, Dtype::Bfloat16, 4, 16), &vec![vec![-1.5; 16]; 4], 0.0, "fill bf16");
    // count disagreeing with the frame is a bad-operands fault.
    let rig = Rig::new(&[]);
    rig.load(EngineId::Dve, &[fill(0.0, 256, 0x0A, 0x0A, 128, 0x5000, 512).into()]);
    rig.ring();
    let errs: Vec<_> = rig.error_records().iter().filter_map(nqr::decode_error).collect();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].detail, nrt_sim::engine::BAD_OPERANDS_DETAIL | 0x49);
}

#[test]
fn out_of_range_operands_fault_naming_the_instruction() {
    let rig = Rig::new(&[]);
    // 128 partitions from partition 100 run past the end of SBUF.
    rig.load(EngineId::Act, &[copy(100 << 18, Dtype::Float32, 0x0, Dtype::Float32, 128, 4).into()]);
    rig.ring();
    let errs: Vec<_> = rig.error_records().iter().filter_map(nqr::decode_error).collect();
    assert_eq!(errs.len(), 1);
    assert_eq!((errs[0].subtype, errs[0].detail), (InferErrorSubtype::SwSequencer, nrt_sim::engine::BAD_OPERANDS_DETAIL | 0x46));
    assert_eq!(rig.dev.engine_state(C0, EngineId::Act), Some(nrt_sim::engine::RunState::Halted));
}

/// Virtual time from START to END of one PE program (ps).
fn pe_program_time(n: u16) -> u64 {
    let rig = Rig::new(&[]);
    let dt = Dtype::Bfloat16;
    rig.run(EngineId::Pe, &[ldweights(0x0, dt, 128, 128), matmul(0x1000, n, dt, 128, 128, Accumulate::Single, PSUM, false)]);
    let recs: Vec<_> = rig.notify_records(EngineId::Pe).iter().map(nqr::decode).collect();
    assert_eq!(recs.len(), 2, "START and END");
    recs[1].timestamp_ps - recs[0].timestamp_ps
}

#[test]
fn matmul_duration_grows_with_the_moving_columns() {
    let (short, long) = (pe_program_time(16), pe_program_time(512));
    // A full 128x128 array retires one moving column per 1.4 GHz cycle.
    let per_column = long.saturating_sub(short) / (512 - 16);
    assert!((700..=730).contains(&per_column), "{per_column} ps per moving column");
}

#[test]
fn embedding_update_adds_rows_into_the_device_table_and_flags_out_of_range_indices() {
    use nrt_hal::{Device, MemoryLocation};
    use nrt_isa::notification::{CustomSubId, RuntimeSubtype};
    let rig = Rig::new(&[]);
    let (rows, row_elems, parts) = (10usize, 8usize, 4usize);
    let table_vals = values(90, rows * row_elems, 5.0);
    let table = rig.dev.alloc(MemoryLocation::Hbm { channel: 0 }, (rows * row_elems * 4) as u64, 64).unwrap();
    rig.dev.write(table, &encode(&table_vals, Dtype::Float32)).unwrap();
    // Two indices per partition: a repeated row (3) and an out-of-range one (10).
    let idx: Vec<Vec<f32>> = vec![vec![3.0, 0.0], vec![9.0, 3.0], vec![10.0, 5.0], vec![1.0, 2.0]];
    rig.stage(0x0, Dtype::Int32, &idx);
    let upd = matrix(91, parts, 2 * row_elems, 1.0, Dtype::Float32);
    rig.stage(0x100, Dtype::Float32, &upd);
    let i = EmbeddingUpdate {
        dtype: code(Dtype::Float32),
        index_dtype: code(Dtype::Int32),
        partitions: parts as u8,
        indices: t3(0x0, 2),
        updates: t3(0x100, (2 * row_elems) as u16),
        table_addr: table.get(),
        row_elems: row_elems as u32,
        num_rows: rows as u32,
        ..Default::default()
    };
    rig.run(EngineId::Pool, &[i.into()]);
    let mut want = table_vals.clone();
    for (p, r) in idx.iter().enumerate() {
        for (j, &v) in r.iter().enumerate() {
            if (v as usize) < rows {
                for e in 0..row_elems {
                    want[v as usize * row_elems + e] += upd[p][j * row_elems + e];
                }
            }
        }
    }
    let mut got = vec![0u8; rows * row_elems * 4];
    rig.dev.read(table, &mut got).unwrap();
    assert_close(&[decode(&got, Dtype::Float32)], &[want], 1e-6, "embedding table");
    let custom: Vec<_> = rig
        .notify_records(EngineId::Pool)
        .iter()
        .map(nqr::decode)
        .filter(|r| r.runtime_subtype() == Some(RuntimeSubtype::Custom))
        .map(|r| r.custom_sub_id())
        .collect();
    assert_eq!(custom, vec![Some(CustomSubId::EmbeddingUpdateOob)]);
}

#[test]
fn operand_addresses_carry_the_start_partition_in_sbuf_and_psum() {
    let rig = Rig::new(&[]);
    let dt = Dtype::Float32;
    let x = matrix(95, 12, 6, 3.0, dt);
    rig.stage(0x80, dt, &x);
    // Rows 5..9 of SBUF, times 3, into PSUM partitions 20..24; then back to SBUF partitions 100..104.
    let ts = TensorScalar {
        op0: AluOp::Mult,
        in_dtype: code(dt),
        out_dtype: code(dt),
        partitions: 4,
        input: t3(5 << 18 | 0x80, 6),
        output: t3(PSUM | 20 << 18 | 0x40, 6),
        scalar0: F32Bits::new(3.0),
        op1: AluOp::Bypass,
        ..Default::default()
    };
    rig.run(EngineId::Dve, &[ts.into(), copy(PSUM | 20 << 18 | 0x40, dt, 100 << 18 | 0x10, dt, 4, 6).into()]);
    let want: Vec<Vec<f32>> = x[5..9].iter().map(|r| r.iter().map(|v| v * 3.0).collect()).collect();
    let psum: Vec<Vec<f32>> = (20..24).map(|p| decode(&rig.read_psum(p, 0x40, 24), dt)).collect();
    let sbuf: Vec<Vec<f32>> = (100..104).map(|p| decode(&rig.read_sbuf(p, 0x10, 24), dt)).collect();
    assert_close(&psum, &want, 0.0, "PSUM partitions 20..24");
    assert_close(&sbuf, &want, 0.0, "SBUF partitions 100..104");
    assert_eq!(decode(&rig.read_psum(19, 0x40, 24), dt), vec![0.0; 6], "partition 19 untouched");
}
