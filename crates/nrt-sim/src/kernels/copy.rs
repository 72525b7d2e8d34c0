//! ACT / DVE COPY and CAST between access patterns.
//!
//! When input and output dtypes share a storage format (the same dtype, or
//! fp32 / fp32r) the elements move bit-exactly, never through f32: the real
//! compiler copies pairs of fp16 values as int32 words, which an f32 round
//! trip would corrupt. Otherwise each element is widened to f32 and narrowed
//! to the destination dtype with the given rounding.

use nrt_isa::dtype::{Dtype, Rounding};

use super::error::{KernelError, KernelResult, shape};
use super::pattern::{OnChipRead, OnChipWrite, Pattern, gather, gather_raw, scatter, scatter_raw};

/// Whether `a` and `b` store elements identically (so a copy is a byte move).
pub fn same_storage(a: Dtype, b: Dtype) -> bool {
    a == b || matches!((a, b), (Dtype::Float32, Dtype::Float32r) | (Dtype::Float32r, Dtype::Float32))
}

fn check_shapes(src: &Pattern, dst: &Pattern) -> KernelResult<()> {
    if (src.partitions(), src.free_len()) != (dst.partitions(), dst.free_len()) {
        return Err(KernelError::ShapeMismatch {
            op: "copy",
            expected: format!("destination {} (the source shape)", shape(src.partitions(), src.free_len())),
            got: shape(dst.partitions(), dst.free_len()),
        });
    }
    Ok(())
}

/// Copies (and casts) from one memory to another, e.g. PSUM to SBUF.
pub fn copy_cast<S: OnChipRead + ?Sized, D: OnChipWrite + ?Sized>(
    src: &S,
    src_pat: &Pattern,
    src_dtype: Dtype,
    dst: &mut D,
    dst_pat: &Pattern,
    dst_dtype: Dtype,
    rounding: &mut Rounding,
) -> KernelResult<()> {
    check_shapes(src_pat, dst_pat)?;
    if same_storage(src_dtype, dst_dtype) && src_dtype != Dtype::Unknown {
        let raw = gather_raw(src, src_pat, src_dtype.size_bytes())?;
        return scatter_raw(dst, dst_pat, &raw);
    }
    let tile = gather(src, src_pat, src_dtype)?;
    scatter(dst, dst_pat, dst_dtype, &tile, rounding)
}

/// Copies (and casts) within one memory, e.g. SBUF to SBUF. The whole
/// source is read before anything is written, so overlapping operands
/// behave as if the source were snapshotted first.
pub fn copy_cast_within<M: OnChipWrite + ?Sized>(
    mem: &mut M,
    src_pat: &Pattern,
    src_dtype: Dtype,
    dst_pat: &Pattern,
    dst_dtype: Dtype,
    rounding: &mut Rounding,
) -> KernelResult<()> {
    check_shapes(src_pat, dst_pat)?;
    if same_storage(src_dtype, dst_dtype) && src_dtype != Dtype::Unknown {
        let raw = gather_raw(&*mem, src_pat, src_dtype.size_bytes())?;
        return scatter_raw(mem, dst_pat, &raw);
    }
    let tile = gather(&*mem, src_pat, src_dtype)?;
    scatter(mem, dst_pat, dst_dtype, &tile, rounding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::pattern::{Axis, Memory, MemoryMut, tests::DTYPES};
    use nrt_isa::dtype::{bytes_to_f32, f32_to_bytes};
    use proptest::prelude::*;

    const PB: usize = 256;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Reference: decode each source element and encode it into the
        /// destination one at a time (or copy its bytes for equal storage).
        #[test]
        fn copy_matches_per_element_reference(si in 0usize..DTYPES.len(), di in 0usize..DTYPES.len(),
                                              parts in 1usize..4, n in 1u32..20, rev in any::<bool>(), seed in any::<u64>(), sr in any::<bool>()) {
            let (sd, dd) = (DTYPES[si], DTYPES[di]);
            let (se, de) = (sd.size_bytes(), dd.size_bytes());
            let src_bytes: Vec<u8> = (0..4 * PB).map(|i| (((i as u64 * 2654435761) ^ seed) >> 7) as u8).collect();
            let src_pat = Pattern::contiguous(0, parts, 0, n);
            // Destination walks backwards to exercise strided scatter.
            let dst_pat = if rev {
                Pattern::new(1, parts, (n as usize - 1) * de, &[Axis::new(-1, n)]).unwrap()
            } else {
                Pattern::contiguous(1, parts, 8, n)
            };
            let mut dst_bytes = vec![0xAAu8; 4 * PB];
            let mk = || if sr { Rounding::stochastic(seed) } else { Rounding::NearestEven };
            let mut rounding = mk();
            copy_cast(&Memory::new(&src_bytes, PB).unwrap(), &src_pat, sd, &mut MemoryMut::new(&mut dst_bytes, PB).unwrap(), &dst_pat, dd, &mut rounding).unwrap();
            let mut want = vec![0xAAu8; 4 * PB];
            let mut rounding = mk();
            for p in 0..parts {
                for j in 0..n as usize {
                    let s = p * PB + j * se;
                    let dj = if rev { n as usize - 1 - j } else { j };
                    let d = (p + 1) * PB + dst_pat.offset() - if rev { (n as usize - 1) * de } else { 0 } + dj * de;
                    if same_storage(sd, dd) {
                        want[d..d + de].copy_from_slice(&src_bytes[s..s + se]);
                    } else {
                        let mut v = [0f32];
                        bytes_to_f32(&src_bytes[s..s + se], sd, &mut v).unwrap();
                        f32_to_bytes(&v, dd, &mut want[d..d + de], &mut rounding).unwrap();
                    }
                }
            }
            prop_assert_eq!(dst_bytes, want);
        }
    }

    #[test]
    fn int32_copy_moves_fp16_pairs_exactly() {
        // A NaN-carrying fp16 pair is not a valid f32 round trip as int32.
        let mut bytes = vec![0u8; 2 * PB];
        bytes[..4].copy_from_slice(&[0x01, 0x7e, 0xff, 0xff]);
        let mut m = MemoryMut::new(&mut bytes, PB).unwrap();
        copy_cast_within(
            &mut m,
            &Pattern::contiguous(0, 1, 0, 1),
            Dtype::Int32,
            &Pattern::contiguous(1, 1, 16, 1),
            Dtype::Int32,
            &mut Rounding::NearestEven,
        )
        .unwrap();
        assert_eq!(&bytes[PB + 16..PB + 20], &[0x01, 0x7e, 0xff, 0xff]);
    }

    #[test]
    fn cast_within_and_shape_errors() {
        let mut bytes = vec![0u8; 2 * PB];
        bytes[..4].copy_from_slice(&1.5f32.to_le_bytes());
        let mut m = MemoryMut::new(&mut bytes, PB).unwrap();
        copy_cast_within(
            &mut m,
            &Pattern::contiguous(0, 1, 0, 1),
            Dtype::Float32,
            &Pattern::contiguous(0, 1, 4, 1),
            Dtype::Bfloat16,
            &mut Rounding::NearestEven,
        )
        .unwrap();
        assert_eq!(&bytes[4..6], &half::bf16::from_f32(1.5).to_bits().to_le_bytes());
        let mut m = MemoryMut::new(&mut bytes, PB).unwrap();
        let err = copy_cast_within(
            &mut m,
            &Pattern::contiguous(0, 1, 0, 2),
            Dtype::Float32,
            &Pattern::contiguous(0, 1, 8, 3),
            Dtype::Float32,
            &mut Rounding::NearestEven,
        );
        assert!(matches!(err, Err(KernelError::ShapeMismatch { .. })));
    }
}
