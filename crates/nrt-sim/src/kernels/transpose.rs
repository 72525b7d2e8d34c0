//! Partition <-> free transposes.
//!
//! [`transpose`] is the general `[P x F] -> [F x P]` (the PE transpose via
//! identity matmul, and NKI `nc_transpose`), cache-blocked in 32x32 squares.
//! [`transpose_blocks32`] models the vector engine's 32x32 transpose applied
//! across a grid: every 32x32 block is transposed in place, blocks keep their
//! grid position (our modelling choice: NKI documents the 32x32 limit, not
//! how larger operands are tiled). [`transpose_raw`] does the same as [`transpose`] on raw elements of
//! any size, bit-exactly, for same-dtype moves.

use super::error::{KernelError, KernelResult};
use super::pattern::RawTile;
use super::tile::Tile;

/// Side of the square blocks used for cache blocking and the DVE transpose.
pub const BLOCK: usize = 32;

/// `[P x F] -> [F x P]`: output partition `j` holds input column `j`.
pub fn transpose(t: &Tile) -> Tile {
    let (rows, cols) = t.shape();
    let mut out = Tile::zeros(cols, rows);
    let src = t.as_slice();
    let dst = out.as_mut_slice();
    for i0 in (0..rows).step_by(BLOCK) {
        for j0 in (0..cols).step_by(BLOCK) {
            for i in i0..(i0 + BLOCK).min(rows) {
                for j in j0..(j0 + BLOCK).min(cols) {
                    dst[j * rows + i] = src[i * cols + j];
                }
            }
        }
    }
    out
}

/// Transposes each 32x32 block in place within its grid position; both
/// dimensions must be multiples of 32.
pub fn transpose_blocks32(t: &Tile) -> KernelResult<Tile> {
    let (rows, cols) = t.shape();
    if rows % BLOCK != 0 || cols % BLOCK != 0 {
        return Err(KernelError::ShapeMismatch {
            op: "transpose_blocks32",
            expected: "partitions and free size multiples of 32".into(),
            got: format!("{rows}x{cols}"),
        });
    }
    let mut out = Tile::zeros(rows, cols);
    let src = t.as_slice();
    let dst = out.as_mut_slice();
    for i0 in (0..rows).step_by(BLOCK) {
        for j0 in (0..cols).step_by(BLOCK) {
            for a in 0..BLOCK {
                for b in 0..BLOCK {
                    dst[(i0 + b) * cols + j0 + a] = src[(i0 + a) * cols + j0 + b];
                }
            }
        }
    }
    Ok(out)
}

/// Transposes `rows x cols` elements of `N` bytes, in `BLOCK`-square
/// blocks; fixed-size elements move as values, not as `memcpy` calls.
fn transpose_fixed<const N: usize>(src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
    let (s, _) = src.as_chunks::<N>();
    let (d, _) = dst.as_chunks_mut::<N>();
    for i0 in (0..rows).step_by(BLOCK) {
        for j0 in (0..cols).step_by(BLOCK) {
            for i in i0..(i0 + BLOCK).min(rows) {
                for j in j0..(j0 + BLOCK).min(cols) {
                    d[j * rows + i] = s[i * cols + j];
                }
            }
        }
    }
}

/// [`transpose_fixed`] of 2-byte elements (bf16 / fp16: the PE transposes
/// of every compiled model), four rows by four columns at a time: each
/// 4x4 square is four 8-byte loads, a shuffle of their 16-bit lanes in
/// registers and four 8-byte stores, instead of sixteen element moves;
/// the edges a square does not cover move element by element.
fn transpose_2(src: &[u8], dst: &mut [u8], rows: usize, cols: usize) {
    const LO16: u64 = 0x0000_FFFF_0000_FFFF;
    const LO32: u64 = 0x0000_0000_FFFF_FFFF;
    let (r4, c4) = (rows / 4 * 4, cols / 4 * 4);
    let load = |i: usize, j: usize| {
        let o = (i * cols + j) * 2;
        u64::from_le_bytes(src[o..o + 8].try_into().unwrap_or_default())
    };
    let mut store = |j: usize, i: usize, v: u64| {
        let o = (j * rows + i) * 2;
        dst[o..o + 8].copy_from_slice(&v.to_le_bytes());
    };
    for i0 in (0..r4).step_by(BLOCK) {
        for j0 in (0..c4).step_by(BLOCK) {
            for i in (i0..(i0 + BLOCK).min(r4)).step_by(4) {
                for j in (j0..(j0 + BLOCK).min(c4)).step_by(4) {
                    // Rows a..d hold lanes 0..3 (columns j..j+4).
                    let (a, b, c, d) = (load(i, j), load(i + 1, j), load(i + 2, j), load(i + 3, j));
                    // Pairs of rows interleaved: a0 b0 a2 b2, a1 b1 a3 b3.
                    let (ab02, ab13) = ((a & LO16) | ((b & LO16) << 16), ((a >> 16) & LO16) | (b & !LO16));
                    let (cd02, cd13) = ((c & LO16) | ((d & LO16) << 16), ((c >> 16) & LO16) | (d & !LO16));
                    store(j, i, (ab02 & LO32) | (cd02 << 32));
                    store(j + 1, i, (ab13 & LO32) | (cd13 << 32));
                    store(j + 2, i, (ab02 >> 32) | (cd02 & !LO32));
                    store(j + 3, i, (ab13 >> 32) | (cd13 & !LO32));
                }
            }
        }
    }
    let mut one = |i: usize, j: usize| {
        let (s, d) = ((i * cols + j) * 2, (j * rows + i) * 2);
        dst[d..d + 2].copy_from_slice(&src[s..s + 2]);
    };
    for i in 0..r4 {
        for j in c4..cols {
            one(i, j);
        }
    }
    for i in r4..rows {
        for j in 0..cols {
            one(i, j);
        }
    }
}

/// [`transpose`] on raw elements: bit-exact for every dtype.
pub fn transpose_raw(raw: &RawTile) -> KernelResult<RawTile> {
    let (rows, cols, e) = (raw.partitions, raw.free, raw.esize);
    let needed = rows.checked_mul(cols).and_then(|n| n.checked_mul(e)).unwrap_or(usize::MAX);
    if raw.bytes.len() != needed {
        return Err(KernelError::BufferTooSmall {
            what: "raw tile",
            needed,
            have: raw.bytes.len(),
        });
    }
    // Pooled storage (RawTile hands it back when dropped); the transpose
    // writes every element.
    let mut bytes = super::scratch::bytes_for_overwrite(raw.bytes.len());
    match e {
        1 => transpose_fixed::<1>(&raw.bytes, &mut bytes, rows, cols),
        2 => transpose_2(&raw.bytes, &mut bytes, rows, cols),
        4 => transpose_fixed::<4>(&raw.bytes, &mut bytes, rows, cols),
        8 => transpose_fixed::<8>(&raw.bytes, &mut bytes, rows, cols),
        _ => {
            for i in 0..rows {
                for j in 0..cols {
                    let s = (i * cols + j) * e;
                    let d = (j * rows + i) * e;
                    bytes[d..d + e].copy_from_slice(&raw.bytes[s..s + e]);
                }
            }
        }
    }
    Ok(RawTile {
        partitions: cols,
        free: rows,
        esize: e,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn transpose_matches_definition(rows in 0usize..70, cols in 0usize..70) {
            let t = Tile::from_fn(rows, cols, |p, j| (p * 1000 + j) as f32);
            let out = transpose(&t);
            prop_assert_eq!(out.shape(), (cols, rows));
            for p in 0..rows {
                for j in 0..cols {
                    prop_assert_eq!(out.get(j, p), t.get(p, j));
                }
            }
            prop_assert_eq!(transpose(&out), t);
            let raw = RawTile { partitions: rows, free: cols, esize: 2, bytes: (0..rows * cols * 2).map(|i| (i % 251) as u8).collect() };
            let rt = transpose_raw(&raw).unwrap();
            for p in 0..rows {
                for j in 0..cols {
                    let s = (p * cols + j) * 2;
                    let d = (j * rows + p) * 2;
                    prop_assert_eq!(&raw.bytes[s..s + 2], &rt.bytes[d..d + 2]);
                }
            }
        }

        #[test]
        fn block_transpose_matches_definition(br in 1usize..4, bc in 1usize..4) {
            let (rows, cols) = (br * 32, bc * 32);
            let t = Tile::from_fn(rows, cols, |p, j| (p * 1000 + j) as f32);
            let out = transpose_blocks32(&t).unwrap();
            for p in 0..rows {
                for j in 0..cols {
                    let (bi, bj) = (p / 32 * 32, j / 32 * 32);
                    let (a, b) = (p % 32, j % 32);
                    prop_assert_eq!(out.get(bi + b, bj + a), t.get(p, j));
                }
            }
        }
    }

    #[test]
    fn block_transpose_needs_multiples_of_32() {
        assert!(transpose_blocks32(&Tile::zeros(32, 33)).is_err());
        let bad = RawTile {
            partitions: 2,
            free: 2,
            esize: 4,
            bytes: vec![0; 3],
        };
        assert!(transpose_raw(&bad).is_err());
    }
}
