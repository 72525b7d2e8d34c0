//! Elementwise kernels against one-element-at-a-time reference code.
#![allow(clippy::needless_range_loop)]

use super::*;
use proptest::prelude::*;

/// The definition of each operator, written independently of the kernel.
fn reference(op: AluOp, a: f32, b: f32) -> f32 {
    let t = |c: bool| if c { 1.0 } else { 0.0 };
    match op {
        AluOp::Add => a + b,
        AluOp::Subtract => a - b,
        AluOp::Multiply => a * b,
        AluOp::Divide => a / b,
        AluOp::Max => {
            if a.is_nan() {
                b
            } else if b.is_nan() || a >= b {
                a
            } else {
                b
            }
        }
        AluOp::Min => {
            if a.is_nan() {
                b
            } else if b.is_nan() || a <= b {
                a
            } else {
                b
            }
        }
        AluOp::Pow => a.powf(b),
        AluOp::AbsDiff => (a - b).abs(),
        AluOp::Eq => t(a == b),
        AluOp::Ne => t(a != b),
        AluOp::Lt => t(a < b),
        AluOp::Le => t(a <= b),
        AluOp::Gt => t(a > b),
        AluOp::Ge => t(a >= b),
        AluOp::LogicalAnd => t(a != 0.0 && b != 0.0),
        AluOp::LogicalOr => t(a != 0.0 || b != 0.0),
        AluOp::LogicalXor => t((a != 0.0) ^ (b != 0.0)),
        AluOp::Bypass => b,
    }
}

/// Bit equality, except that any NaN matches any NaN and the sign of a zero
/// is not compared (IEEE maxNum/minNum may return either zero for ±0).
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) || (a == 0.0 && b == 0.0)
}

fn value() -> impl Strategy<Value = f32> {
    prop_oneof![
        8 => -100.0f32..100.0,
        1 => prop::sample::select(vec![0.0f32, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 2.0]),
    ]
}

fn tile(parts: usize, free: usize) -> impl Strategy<Value = Tile> {
    prop::collection::vec(value(), parts * free).prop_map(move |v| Tile::from_vec(parts, free, v).unwrap())
}

fn shaped() -> impl Strategy<Value = (Tile, Tile, Tile)> {
    (1usize..5, 1usize..40).prop_flat_map(|(p, f)| (tile(p, f), tile(p, f), tile(p, f)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tensor_tensor_matches_reference((a, b, _) in shaped(), op in 0usize..AluOp::ALL.len()) {
        let op = AluOp::ALL[op];
        let out = tensor_tensor(&a, &b, op).unwrap();
        for p in 0..a.partitions() {
            for j in 0..a.free() {
                let (x, y) = (a.get(p, j).unwrap(), b.get(p, j).unwrap());
                let want = reference(op, x, y);
                prop_assert!(same(out.get(p, j).unwrap(), want), "{op:?}({x}, {y}) = {} want {want}", out.get(p, j).unwrap());
            }
        }
    }

    #[test]
    fn tensor_scalar_chain_matches_reference(
        (a, _, _) in shaped(), op0 in 0usize..AluOp::ALL.len(), op1 in 0usize..AluOp::ALL.len(),
        r0 in any::<bool>(), r1 in any::<bool>(), s0 in value(), s1 in prop::collection::vec(value(), 5), two in any::<bool>()
    ) {
        let (op0, op1) = (AluOp::ALL[op0], AluOp::ALL[op1]);
        let per = &s1[..a.partitions()];
        let first = ScalarStage { op: op0, operand: ScalarOperand::Imm(s0), reverse: r0 };
        let second = two.then_some(ScalarStage { op: op1, operand: ScalarOperand::PerPartition(per), reverse: r1 });
        let out = tensor_scalar(&a, first, second).unwrap();
        for p in 0..a.partitions() {
            for j in 0..a.free() {
                let x = a.get(p, j).unwrap();
                let mut want = if r0 { reference(op0, s0, x) } else { reference(op0, x, s0) };
                if two {
                    want = if r1 { reference(op1, per[p], want) } else { reference(op1, want, per[p]) };
                }
                prop_assert!(same(out.get(p, j).unwrap(), want));
            }
        }
    }

    #[test]
    fn scalar_tensor_tensor_and_select((a, b, m) in shaped(), op0 in 0usize..AluOp::ALL.len(), op1 in 0usize..AluOp::ALL.len(), s in value(), r in any::<bool>()) {
        let (op0, op1) = (AluOp::ALL[op0], AluOp::ALL[op1]);
        let out = scalar_tensor_tensor(&a, ScalarStage::new(op0, ScalarOperand::Imm(s)), op1, &b, r).unwrap();
        let sel = select(&m, &a, &b).unwrap();
        for p in 0..a.partitions() {
            for j in 0..a.free() {
                let (x, y, mk) = (a.get(p, j).unwrap(), b.get(p, j).unwrap(), m.get(p, j).unwrap());
                let t = reference(op0, x, s);
                let want = if r { reference(op1, y, t) } else { reference(op1, t, y) };
                prop_assert!(same(out.get(p, j).unwrap(), want));
                let want_sel = if mk != 0.0 { x } else { y };
                prop_assert!(same(sel.get(p, j).unwrap(), want_sel));
            }
        }
    }
}

#[test]
fn apply_agrees_and_shapes_are_checked() {
    assert_eq!(AluOp::Subtract.apply(5.0, 3.0), 2.0);
    assert_eq!(AluOp::Ge.apply(f32::NAN, 1.0), 0.0);
    assert_eq!(AluOp::Ne.apply(f32::NAN, f32::NAN), 1.0);
    assert_eq!(AluOp::Max.apply(f32::NAN, 1.0), 1.0);
    let a = Tile::zeros(2, 3);
    let b = Tile::zeros(3, 2);
    assert!(matches!(tensor_tensor(&a, &b, AluOp::Add), Err(KernelError::ShapeMismatch { .. })));
    assert!(select(&a, &a, &b).is_err());
    assert!(tensor_scalar(&a, ScalarStage::new(AluOp::Add, ScalarOperand::PerPartition(&[1.0])), None).is_err());
    assert_eq!(memset(2, 2, 7.0).as_slice(), &[7.0; 4]);
}
