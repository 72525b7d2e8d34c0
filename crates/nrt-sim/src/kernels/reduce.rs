//! Reductions: along the free dimension (DVE `tensor_reduce`) and across
//! partitions (Pool `tensor_partition_reduce`).
//!
//! Free-dim reductions keep the partition axis and reduce each consecutive
//! group of `group` elements to one, so the output is `[P x free/group]`:
//! with `group == free` that is NKI's `keepdims=True` shape `[P x 1]`; with a
//! smaller group it reduces the innermost axis of a `[P x (outer x group)]`
//! operand. To reduce an outer axis instead, gather with a pattern that puts
//! that axis innermost (patterns may permute axes freely).
//!
//! Summation order is fixed (eight interleaved partial sums, then in order),
//! so results are deterministic run to run.

use super::error::{KernelError, KernelResult};
use super::simd::{multiversion, sum_row};
use super::tile::Tile;

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum of the elements.
    Sum,
    /// Largest element (NaN is ignored unless all are NaN, as maxNum).
    Max,
    /// Smallest element (NaN ignored as minNum).
    Min,
    /// Arithmetic mean (sum divided by the element count).
    Mean,
    /// Product of the elements, in order.
    Prod,
    /// Largest absolute value.
    AbsMax,
}

impl ReduceOp {
    /// Every operator, for tests.
    pub const ALL: [ReduceOp; 6] = [
        ReduceOp::Sum,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Mean,
        ReduceOp::Prod,
        ReduceOp::AbsMax,
    ];
}

#[inline(always)]
fn reduce_slice(op: ReduceOp, xs: &[f32]) -> f32 {
    match op {
        ReduceOp::Sum => sum_row(xs),
        ReduceOp::Mean => sum_row(xs) / xs.len() as f32,
        ReduceOp::Max => xs.iter().copied().fold(f32::NAN, f32::max),
        ReduceOp::Min => xs.iter().copied().fold(f32::NAN, f32::min),
        ReduceOp::Prod => xs.iter().product(),
        ReduceOp::AbsMax => xs.iter().fold(f32::NAN, |m, x| m.max(x.abs())),
    }
}

/// Reduces every consecutive `group` elements of each partition to one
/// value; `group` must be nonzero and divide the free size.
pub fn reduce_free(data: &Tile, op: ReduceOp, group: usize) -> KernelResult<Tile> {
    if group == 0 || !data.free().is_multiple_of(group) {
        return Err(KernelError::ShapeMismatch {
            op: "reduce_free",
            expected: format!("a nonzero group dividing the free size {}", data.free()),
            got: format!("group {group}"),
        });
    }
    let groups = data.free() / group;
    let mut out = Tile::zeros(data.partitions(), groups);
    reduce_free_rows(&mut out, data, op, group);
    Ok(out)
}

multiversion! {
    /// One output element per `group` input elements, row by row.
    fn reduce_free_rows(out: &mut Tile, data: &Tile, op: ReduceOp, group: usize) {
        for p in 0..data.partitions() {
            for (o, xs) in out.row_mut(p).iter_mut().zip(data.row(p).chunks_exact(group)) {
                *o = reduce_slice(op, xs);
            }
        }
    }
}

/// Reduces the whole free dimension: `[P x F] -> [P x 1]` (F must be > 0).
pub fn reduce_all_free(data: &Tile, op: ReduceOp) -> KernelResult<Tile> {
    reduce_free(data, op, data.free())
}

/// Reduces across partitions: `[P x F] -> [1 x F]`, column by column, in
/// partition order (P must be > 0).
pub fn reduce_partitions(data: &Tile, op: ReduceOp) -> KernelResult<Tile> {
    if data.partitions() == 0 {
        return Err(KernelError::ShapeMismatch {
            op: "reduce_partitions",
            expected: "at least one partition".into(),
            got: "0".into(),
        });
    }
    let mut out = Tile::zeros(1, data.free());
    out.as_mut_slice().copy_from_slice(data.row(0));
    if op == ReduceOp::AbsMax {
        out.as_mut_slice().iter_mut().for_each(|v| *v = v.abs());
    }
    reduce_partition_rows(out.as_mut_slice(), data, op);
    Ok(out)
}

multiversion! {
    /// Folds partitions 1.. of `data` into `acc` (which holds partition 0).
    fn reduce_partition_rows(acc: &mut [f32], data: &Tile, op: ReduceOp) {
        for p in 1..data.partitions() {
            let row = data.row(p);
            match op {
                ReduceOp::Sum | ReduceOp::Mean => acc.iter_mut().zip(row).for_each(|(a, &x)| *a += x),
                ReduceOp::Max => acc.iter_mut().zip(row).for_each(|(a, &x)| *a = a.max(x)),
                ReduceOp::Min => acc.iter_mut().zip(row).for_each(|(a, &x)| *a = a.min(x)),
                ReduceOp::Prod => acc.iter_mut().zip(row).for_each(|(a, &x)| *a *= x),
                ReduceOp::AbsMax => acc.iter_mut().zip(row).for_each(|(a, &x)| *a = a.max(x.abs())),
            }
        }
        if op == ReduceOp::Mean {
            let n = data.partitions() as f32;
            acc.iter_mut().for_each(|a| *a /= n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Straightforward f64 reference (NaN-free inputs).
    fn reference(op: ReduceOp, xs: &[f32]) -> f64 {
        let v: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        match op {
            ReduceOp::Sum => v.iter().sum(),
            ReduceOp::Mean => v.iter().sum::<f64>() / v.len() as f64,
            ReduceOp::Max => v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            ReduceOp::Min => v.iter().cloned().fold(f64::INFINITY, f64::min),
            ReduceOp::Prod => v.iter().product(),
            ReduceOp::AbsMax => v.iter().map(|x| x.abs()).fold(0.0, f64::max),
        }
    }

    /// Sums/products of n f32 values err by at most about n·u relative to
    /// the sum of magnitudes; max/min/absmax are exact.
    fn close(op: ReduceOp, got: f32, xs: &[f32]) -> bool {
        let want = reference(op, xs);
        let n = xs.len() as f64;
        let tol = match op {
            ReduceOp::Max | ReduceOp::Min | ReduceOp::AbsMax => 0.0,
            ReduceOp::Sum | ReduceOp::Mean => {
                let mag: f64 = xs.iter().map(|x| x.abs() as f64).sum();
                (n + 2.0) * f32::EPSILON as f64 * mag / if op == ReduceOp::Mean { n } else { 1.0 }
            }
            ReduceOp::Prod => (n + 2.0) * f32::EPSILON as f64 * want.abs() + f32::MIN_POSITIVE as f64,
        };
        (got as f64 - want).abs() <= tol
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn free_and_partition_reductions_match_reference(parts in 1usize..6, groups in 1usize..5, group in 1usize..40, op in 0usize..6, seed in any::<u32>()) {
            let op = ReduceOp::ALL[op];
            let free = groups * group;
            let t = Tile::from_fn(parts, free, |p, j| {
                let h = ((p * 977 + j * 131) as u32).wrapping_mul(2654435761) ^ seed;
                (h >> 20) as f32 / 2048.0 - 1.0 + if op == ReduceOp::Prod { 1.0 } else { 0.0 }
            });
            let out = reduce_free(&t, op, group).unwrap();
            prop_assert_eq!(out.shape(), (parts, groups));
            for p in 0..parts {
                for g in 0..groups {
                    let xs = &t.row(p)[g * group..(g + 1) * group];
                    prop_assert!(close(op, out.get(p, g).unwrap(), xs), "{op:?} p{p} g{g}");
                }
            }
            let cols = reduce_partitions(&t, op).unwrap();
            prop_assert_eq!(cols.shape(), (1, free));
            for j in 0..free {
                let xs: Vec<f32> = (0..parts).map(|p| t.get(p, j).unwrap()).collect();
                prop_assert!(close(op, cols.get(0, j).unwrap(), &xs));
            }
        }
    }

    #[test]
    fn bad_groups_are_errors_and_nan_is_skipped() {
        let t = Tile::from_vec(1, 3, vec![1.0, f32::NAN, 3.0]).unwrap();
        assert!(reduce_free(&t, ReduceOp::Sum, 2).is_err());
        assert!(reduce_free(&t, ReduceOp::Sum, 0).is_err());
        assert_eq!(reduce_all_free(&t, ReduceOp::Max).unwrap().as_slice(), &[3.0]);
        assert_eq!(reduce_all_free(&t, ReduceOp::Min).unwrap().as_slice(), &[1.0]);
        assert!(reduce_all_free(&t, ReduceOp::Sum).unwrap().as_slice()[0].is_nan());
        assert!(reduce_partitions(&Tile::zeros(0, 3), ReduceOp::Sum).is_err());
    }
}
