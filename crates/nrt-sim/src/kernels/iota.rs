//! Index generation (NKI `iota`): `value = base + partition *
//! channel_multiplier + Σ index_i * step_i` over a free-dim pattern of up to
//! four `(step, count)` axes, innermost first (the same axis order as operand
//! access patterns).
//!
//! Values are computed exactly in i64 and stored in the f32 tile, so they
//! are exact up to 2^24 in magnitude; larger magnitudes round to f32 before
//! the scatter converts them to the destination dtype.

use super::error::{KernelError, KernelResult};
use super::pattern::{Axis, MAX_AXES, checked_free_len};
use super::tile::Tile;

/// Generates the `[partitions x Π counts]` index tile.
pub fn iota(partitions: usize, base: i64, channel_multiplier: i64, axes: &[Axis]) -> KernelResult<Tile> {
    if axes.is_empty() || axes.len() > MAX_AXES {
        return Err(KernelError::InvalidPattern {
            detail: format!("{} iota axes, expected 1 to {MAX_AXES}", axes.len()),
        });
    }
    let free = checked_free_len(axes)?;
    let mut out = Tile::zeros(partitions, free);
    for p in 0..partitions {
        let start = base.wrapping_add((p as i64).wrapping_mul(channel_multiplier));
        // The offset of each free position from the partition's base, by an
        // odometer over the axes (no offsets table: iota allocates nothing).
        let mut idx = [0u32; MAX_AXES];
        for o in out.row_mut(p).iter_mut() {
            let off = axes.iter().zip(&idx).map(|(a, &i)| a.step as i64 * i as i64).sum::<i64>();
            *o = start.wrapping_add(off) as f32;
            for (a, i) in axes.iter().zip(idx.iter_mut()) {
                *i += 1;
                if *i < a.count {
                    break;
                }
                *i = 0;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn iota_matches_nested_loops(parts in 1usize..6, base in -1000i64..1000, cm in -50i64..50,
                                     axes in prop::collection::vec((-9i32..9, 1u32..5), 1..=4)) {
            let axes: Vec<Axis> = axes.into_iter().map(|(s, c)| Axis::new(s, c)).collect();
            let t = iota(parts, base, cm, &axes).unwrap();
            let c = |i: usize| axes.get(i).map_or(1, |a| a.count);
            let s = |i: usize| axes.get(i).map_or(0, |a| a.step as i64);
            for p in 0..parts {
                let mut j = 0;
                for i3 in 0..c(3) { for i2 in 0..c(2) { for i1 in 0..c(1) { for i0 in 0..c(0) {
                    let want = base + p as i64 * cm + i0 as i64 * s(0) + i1 as i64 * s(1) + i2 as i64 * s(2) + i3 as i64 * s(3);
                    prop_assert_eq!(t.get(p, j).unwrap(), want as f32);
                    j += 1;
                }}}}
            }
        }
    }

    #[test]
    fn rank_is_checked() {
        assert!(iota(1, 0, 1, &[]).is_err());
        assert!(iota(1, 0, 1, &[Axis::new(1, 1); 5]).is_err());
        assert!(iota(1, 0, 1, &[Axis::new(0, u32::MAX); 4]).is_err());
    }
}
