//! Activation against plain f64 reference formulas.

use super::*;
use proptest::prelude::*;

/// erf in f64: Maclaurin series for |x| < 2.5, continued fraction of erfc
/// beyond (each accurate to ~1e-12 there).
fn erf(x: f64) -> f64 {
    let z = x.abs();
    if z < 2.5 {
        let (mut sum, mut term, mut n) = (0.0f64, x, 0.0f64);
        while n < 120.0 {
            sum += term / (2.0 * n + 1.0);
            n += 1.0;
            term *= -x * x / n;
        }
        return sum * 2.0 / std::f64::consts::PI.sqrt();
    }
    let mut k = z;
    for n in (1..=80).rev() {
        k = z + (n as f64 / 2.0) / k;
    }
    let erfc = (-z * z).exp() / std::f64::consts::PI.sqrt() / k;
    (1.0 - erfc).copysign(x)
}

/// erfc in f64 without cancellation in the tail: the continued fraction for
/// z >= 2.5, `1 - erf` elsewhere.
fn erfc(x: f64) -> f64 {
    if x >= 2.5 {
        let mut k = x;
        for n in (1..=80).rev() {
            k = x + (n as f64 / 2.0) / k;
        }
        (-x * x).exp() / std::f64::consts::PI.sqrt() / k
    } else {
        1.0 - erf(x)
    }
}

/// The definition of each function, in f64, written the obvious way.
fn reference(func: ActFunc, x: f64) -> f64 {
    let sp = |x: f64| (1.0 + x.exp()).ln();
    match func {
        ActFunc::Identity => x,
        ActFunc::Relu => x.max(0.0),
        ActFunc::Gelu => 0.5 * x * erfc(-x / 2f64.sqrt()),
        ActFunc::GeluTanh => 0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh()),
        ActFunc::Tanh => x.tanh(),
        ActFunc::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        ActFunc::Exp => x.exp(),
        ActFunc::Log => x.ln(),
        ActFunc::Rsqrt => 1.0 / x.sqrt(),
        ActFunc::Reciprocal => 1.0 / x,
        ActFunc::Silu => x / (1.0 + (-x).exp()),
        ActFunc::Square => x * x,
        ActFunc::Sqrt => x.sqrt(),
        ActFunc::Abs => x.abs(),
        ActFunc::Sign => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }
        ActFunc::Softplus => sp(x),
        ActFunc::Mish => x * sp(x).tanh(),
    }
}

/// Relative + absolute tolerance per function: the fast transcendental paths
/// are within a few f32 ULP (documented in `math`), so 1e-5 relative with a
/// 1e-6 absolute floor (for the cancellation near GELU/Mish zero crossings);
/// the plain arithmetic ones are within 2 roundings of f32.
fn close(func: ActFunc, got: f32, want: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return got as f64 == want;
    }
    let (rel, abs) = match func {
        ActFunc::Identity | ActFunc::Relu | ActFunc::Square | ActFunc::Abs | ActFunc::Sign => (2.5e-7, 0.0),
        ActFunc::Reciprocal | ActFunc::Sqrt | ActFunc::Rsqrt | ActFunc::Log => (4e-7, 0.0),
        _ => (1e-5, 1e-6),
    };
    (got as f64 - want).abs() <= rel * want.abs() + abs
}

fn input(partitions: usize, free: usize, lo: f32, hi: f32) -> Tile {
    Tile::from_fn(partitions, free, |p, j| {
        let t = ((p * free + j) as f32 * 0.618_034).fract();
        lo + (hi - lo) * t
    })
}

#[test]
fn every_function_matches_reference_with_scale_and_bias() {
    let x = input(4, 300, -6.0, 6.0);
    let scale = [0.5f32, 1.0, -1.25, 2.0];
    let bias = [0.0f32, 0.25, -0.5, 1.0];
    for func in ActFunc::ALL {
        let out = activation(&x, func, ScalarOperand::PerPartition(&scale), ScalarOperand::PerPartition(&bias)).unwrap();
        for p in 0..4 {
            for j in 0..300 {
                let arg = x.get(p, j).unwrap() * scale[p] + bias[p];
                let want = reference(func, arg as f64);
                let got = out.get(p, j).unwrap();
                assert!(close(func, got, want), "{} at x={arg}: got {got}, want {want}", func.name());
            }
        }
    }
}

#[test]
fn apply_matches_tile_path() {
    let x = input(1, 64, -3.0, 3.0);
    for func in ActFunc::ALL {
        let out = activation(&x, func, ScalarOperand::Imm(1.0), ScalarOperand::Imm(0.0)).unwrap();
        for j in 0..64 {
            assert_eq!(out.get(0, j).unwrap().to_bits(), func.apply(x.get(0, j).unwrap()).to_bits());
        }
    }
}

#[test]
fn special_values() {
    let x = Tile::from_vec(1, 5, vec![0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]).unwrap();
    let out = |f| {
        activation(&x, f, ScalarOperand::Imm(1.0), ScalarOperand::Imm(0.0))
            .unwrap()
            .into_vec()
    };
    assert_eq!(out(ActFunc::Exp)[..4], [1.0, 1.0, f32::INFINITY, 0.0]);
    assert_eq!(out(ActFunc::Sigmoid)[2..4], [1.0, 0.0]);
    assert_eq!(out(ActFunc::Tanh)[2..4], [1.0, -1.0]);
    assert_eq!(out(ActFunc::Relu)[3], 0.0);
    assert_eq!(out(ActFunc::Log)[0], f32::NEG_INFINITY);
    assert_eq!(out(ActFunc::Reciprocal)[2], 0.0);
    for f in ActFunc::ALL {
        if f != ActFunc::Relu {
            assert!(out(f)[4].is_nan(), "{} should propagate NaN", f.name());
        }
    }
}

#[test]
fn reduce_commands() {
    let x = input(3, 40, -1.0, 1.0);
    let sums: Vec<f32> = (0..3)
        .map(|p| (0..40).map(|j| x.get(p, j).unwrap() as f64).sum::<f64>() as f32)
        .collect();
    let one = ScalarOperand::Imm(1.0);
    let zero = ScalarOperand::Imm(0.0);
    let mut regs = vec![10.0f32; 3];
    activation_reduce(&x, ActFunc::Identity, one, zero, &mut regs, ReduceCmd::Idle).unwrap();
    assert_eq!(regs, vec![10.0; 3]);
    activation_reduce(&x, ActFunc::Identity, one, zero, &mut regs, ReduceCmd::Reduce).unwrap();
    for p in 0..3 {
        assert!((regs[p] - (10.0 + sums[p])).abs() < 1e-4);
    }
    activation_reduce(&x, ActFunc::Identity, one, zero, &mut regs, ReduceCmd::ResetReduce).unwrap();
    for p in 0..3 {
        assert!((regs[p] - sums[p]).abs() < 1e-5);
    }
    activation_reduce(&x, ActFunc::Identity, one, zero, &mut regs, ReduceCmd::Reset).unwrap();
    assert_eq!(regs, vec![0.0; 3]);
    assert!(activation_reduce(&x, ActFunc::Identity, one, zero, &mut [0.0; 2], ReduceCmd::Reduce).is_err());
    assert!(activation(&x, ActFunc::Exp, ScalarOperand::PerPartition(&[1.0]), zero).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn random_inputs_match_reference(f in 0usize..ActFunc::ALL.len(), xs in prop::collection::vec(-20.0f32..20.0, 1..70), s in -2.0f32..2.0, b in -2.0f32..2.0) {
        let func = ActFunc::ALL[f];
        let t = Tile::from_vec(1, xs.len(), xs.clone()).unwrap();
        let mut regs = [0.0f32];
        let out = activation_reduce(&t, func, ScalarOperand::Imm(s), ScalarOperand::Imm(b), &mut regs, ReduceCmd::ResetReduce).unwrap();
        let mut sum = 0.0f64;
        for (j, &x) in xs.iter().enumerate() {
            let arg = x * s + b;
            let want = reference(func, arg as f64);
            let got = out.get(0, j).unwrap();
            prop_assert!(close(func, got, want), "{} at {arg}: {got} vs {want}", func.name());
            sum += got as f64;
        }
        if sum.is_finite() {
            let mag: f64 = out.as_slice().iter().map(|v| v.abs() as f64).sum();
            prop_assert!((regs[0] as f64 - sum).abs() <= mag * 1e-6 + 1e-30);
        }
    }
}
