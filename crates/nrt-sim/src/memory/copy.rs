//! The byte copy every bulk move of device memory goes through.
//!
//! Why not plain `copy_from_slice`: for copies of a few KiB and more,
//! glibc's `memcpy` switches to `rep movsb`, and on the AMD EPYC machines
//! this project builds and benchmarks on that instruction runs about ten
//! times slower when source and destination sit at certain offsets from
//! each other (measured: 8 MiB moved in 8 KiB copies took 0.16 ms at the
//! best offsets and 2.0–2.5 ms when the two were 16 bytes apart modulo 32
//! or 64). The simulator cannot choose those offsets: HBM pages are heap
//! blocks, and a Q7 kernel's TCM buffer is wherever its allocator put it.
//! Below its `rep movsb` threshold glibc copies with vector loads and
//! stores, whose speed does not depend on the offsets, and at that speed:
//! so a long copy is made of 2 KiB `memcpy`s. (A hand-written
//! loop of 16-byte moves avoided the slow case too, but ran 15–30% behind
//! glibc's vector loop in the common one.)

/// Piece length of a long copy: under glibc's `rep movsb` threshold
/// (`glibc.cpu.x86_rep_movsb_threshold`, copies of at least that many
/// bytes take `rep movsb`) on every x86-64 CPU where that instruction has
/// the slow offsets: 2112 bytes on CPUs with fast short `rep movsb`
/// (FSRM: this EPYC, `ld.so --list-tunables` shows 0x840), otherwise
/// 2048 times the vector width over 16 (4 KiB with AVX2, which every AMD
/// CPU with ERMS has; only SSE2-only Intel CPUs, whose `rep movsb` is not
/// the slow kind, start it at 2048 bytes). 2 KiB rather than 1 KiB halves
/// the calls (and their setup) per KiB moved; 4 KiB pieces were measured
/// to hit the slow case here (10x at the bad offsets).
const PIECE: usize = 2048;

/// Copies `src` into `dst` (same length, like `copy_from_slice`, whose
/// panic on a length mismatch it keeps), at the same speed whatever the
/// two slices' alignment.
#[inline]
pub fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    if src.len() <= PIECE || dst.len() != src.len() {
        dst.copy_from_slice(src);
    } else {
        copy_pieces(dst, src);
    }
}

/// [`copy_bytes`] inside one buffer: copies the `len` bytes at `src` to
/// `dst` like `buf.copy_within(src..src + len, dst)` (whose panic on a
/// range outside `buf` it keeps). Ranges that overlap keep
/// `copy_within`'s semantics (one `memmove`); disjoint ones longer than a
/// piece go in pieces, as [`copy_bytes`] does: a DMA copy inside one page
/// of device memory (a small model's input and output tensors share
/// theirs) would otherwise take glibc's `rep movsb` (4 KiB, aligned,
/// in cache: ~52 ns against ~43 ns in two pieces on this EPYC).
#[inline]
pub fn copy_within_bytes(buf: &mut [u8], src: usize, dst: usize, len: usize) {
    if len <= PIECE || src.abs_diff(dst) < len {
        buf.copy_within(src..src + len, dst);
    } else if src < dst {
        let (head, tail) = buf.split_at_mut(dst);
        copy_pieces(&mut tail[..len], &head[src..src + len]);
    } else {
        let (head, tail) = buf.split_at_mut(src);
        copy_pieces(&mut head[dst..dst + len], &tail[..len]);
    }
}

/// The piece loop, kept out of line so every caller runs the same machine
/// code. The piece length is the smaller of [`PIECE`] and what is left, not
/// a constant, so LLVM does not fold the loop back into one `memcpy`.
#[inline(never)]
fn copy_pieces(dst: &mut [u8], src: &[u8]) {
    let len = dst.len().min(src.len());
    let mut at = 0;
    while at < len {
        let n = (len - at).min(PIECE);
        dst[at..at + n].copy_from_slice(&src[at..at + n]);
        at += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        /// Overlapping or not, in pieces or not: what `copy_within` does.
        #[test]
        fn within_matches_copy_within(len in 0usize..9000, src in 0usize..9000, dst in 0usize..9000, seed in any::<u8>()) {
            let mut got: Vec<u8> = (0..18_100usize).map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed)).collect();
            let mut want = got.clone();
            copy_within_bytes(&mut got, src, dst, len);
            want.copy_within(src..src + len, dst);
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    #[should_panic]
    fn within_out_of_range_panics_like_copy_within() {
        copy_within_bytes(&mut [0u8; 5000], 0, 2600, 2500);
    }

    #[test]
    #[should_panic]
    fn length_mismatch_panics_like_copy_from_slice() {
        copy_bytes(&mut [0u8; 2000], &[1u8; 1999]);
    }
}
