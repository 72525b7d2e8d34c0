//! The byte copy every bulk move of device memory goes through.
//!
//! Why not plain `copy_from_slice`: for copies of a few KiB and more,
//! glibc's `memcpy` switches to `rep movsb`, and on the AMD EPYC machines
//! this project builds and benchmarks on that instruction runs about ten
//! times slower when source and destination sit at certain offsets from
//! each other (measured: 16 bytes apart modulo 32 or 64). The simulator
//! cannot choose those offsets: HBM pages are heap blocks, and a Q7
//! kernel's TCM buffer is wherever its allocator put it, so the 8 KiB
//! chunk copies of `tensor_to_tcm` / `tcm_to_tensor` hit the slow case
//! (41% of the Q7 relu benchmark in `perf`, `docs/gpsimd.md` §11). A loop
//! of 64-byte block copies compiles to plain vector loads and stores,
//! whose speed does not depend on the relative offset.

/// Copies below this many bytes go to `copy_from_slice` (glibc uses
/// vector loops there, not `rep movsb`).
const BLOCK_COPY_FROM: usize = 1024;

/// Copies `src` into `dst` (same length, like `copy_from_slice`, whose
/// panic on a length mismatch it keeps), at the same speed whatever the
/// two slices' alignment.
#[inline]
pub fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    if src.len() < BLOCK_COPY_FROM || dst.len() != src.len() {
        dst.copy_from_slice(src);
    } else {
        copy_blocks(dst, src);
    }
}

/// The block loop, kept out of line so every caller runs the same
/// machine code: four 16-byte loads, then four 16-byte stores, per step.
/// (A loop of whole 64-byte array assignments is what LLVM's loop-idiom
/// pass turns back into one `memcpy` call; 16-byte stores at a 64-byte
/// stride are not a pattern it rewrites.)
#[inline(never)]
fn copy_blocks(dst: &mut [u8], src: &[u8]) {
    let mut d = dst.chunks_exact_mut(64);
    let mut s = src.chunks_exact(64);
    for (d, s) in (&mut d).zip(&mut s) {
        let word = |k: usize| u128::from_ne_bytes(s[k * 16..k * 16 + 16].try_into().unwrap_or_default());
        let (a, b, c, e) = (word(0), word(1), word(2), word(3));
        d[..16].copy_from_slice(&a.to_ne_bytes());
        d[16..32].copy_from_slice(&b.to_ne_bytes());
        d[32..48].copy_from_slice(&c.to_ne_bytes());
        d[48..].copy_from_slice(&e.to_ne_bytes());
    }
    d.into_remainder().copy_from_slice(s.remainder());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn matches_copy_from_slice(len in 0usize..9000, so in 0usize..70, doff in 0usize..70, seed in any::<u8>()) {
            let src: Vec<u8> = (0..len + so).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
            let mut got = vec![0xA5u8; len + doff + 8];
            let mut want = got.clone();
            copy_bytes(&mut got[doff..doff + len], &src[so..so + len]);
            want[doff..doff + len].copy_from_slice(&src[so..so + len]);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    #[should_panic]
    fn length_mismatch_panics_like_copy_from_slice() {
        copy_bytes(&mut [0u8; 2000], &[1u8; 1999]);
    }
}
