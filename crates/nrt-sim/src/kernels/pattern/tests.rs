//! Gather/scatter against a per-element reference walk, for all dtypes.

use super::*;
use proptest::prelude::*;

/// Every dtype the engines compute on.
pub(crate) const DTYPES: [Dtype; 14] = [
    Dtype::Float32,
    Dtype::Float32r,
    Dtype::Bfloat16,
    Dtype::Float16,
    Dtype::Fp8E3,
    Dtype::Fp8E4,
    Dtype::Fp8E5,
    Dtype::Int8,
    Dtype::Uint8,
    Dtype::Int16,
    Dtype::Uint16,
    Dtype::Int32,
    Dtype::Uint32,
    Dtype::Int64,
];

/// The byte address of every element, by the definition: nested loops over
/// the axes (innermost first), nothing clever.
fn reference_addresses(pat: &Pattern, esize: usize, partition_bytes: usize) -> Vec<Vec<usize>> {
    let axes = pat.axes();
    let mut out = Vec::new();
    for p in 0..pat.partitions() {
        let mut row = Vec::new();
        let c: Vec<u32> = (0..MAX_AXES).map(|i| axes.get(i).map_or(1, |a| a.count)).collect();
        let s: Vec<i64> = (0..MAX_AXES).map(|i| axes.get(i).map_or(0, |a| a.step as i64)).collect();
        for i3 in 0..c[3] {
            for i2 in 0..c[2] {
                for i1 in 0..c[1] {
                    for i0 in 0..c[0] {
                        let elem = i0 as i64 * s[0] + i1 as i64 * s[1] + i2 as i64 * s[2] + i3 as i64 * s[3];
                        let byte = pat.offset() as i64 + elem * esize as i64;
                        row.push((pat.start_partition() + p) * partition_bytes + byte as usize);
                    }
                }
            }
        }
        out.push(row);
    }
    out
}

fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn arb_pattern() -> impl Strategy<Value = (Pattern, usize)> {
    let axis = (-5i32..=5, 1u32..=5).prop_map(|(s, c)| Axis::new(s, c));
    (0usize..3, 1usize..4, prop::collection::vec(axis, 1..=4)).prop_map(|(sp, parts, axes)| {
        // Place the start so the most negative reach lands at byte >= 0.
        let neg: i64 = axes.iter().map(|a| (a.step as i64 * (a.count as i64 - 1)).min(0)).sum();
        let start_elems = (-neg) as usize;
        (Pattern::new(sp, parts, 0, &axes).unwrap(), start_elems)
    })
}

/// Whether every element of `pat` (starting `offset` bytes into its
/// partitions) ends inside a `PB`-byte partition. The generator bounds the
/// axes in elements, so wide dtypes (8 bytes) can reach past the end; the
/// kernels rightly refuse those, and the reference walk would index out of
/// the buffer, so such cases are not drawn.
fn fits(pat: &Pattern, offset: usize, esize: usize) -> bool {
    let reach: i64 = pat.axes().iter().map(|a| (a.step as i64 * (a.count as i64 - 1)).max(0)).sum();
    offset as i64 + (reach + 1) * esize as i64 <= PB as i64
}

fn with_offset(p: &Pattern, offset: usize) -> Pattern {
    Pattern::new(p.start_partition(), p.partitions(), offset, p.axes()).unwrap()
}

const PB: usize = 512;
const PARTS: usize = 6;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn gather_matches_reference((pat, start) in arb_pattern(), dt in 0usize..DTYPES.len(), seed in any::<u64>(), extra in 0usize..8) {
        let dtype = DTYPES[dt];
        let esize = dtype.size_bytes();
        prop_assume!(fits(&pat, (start + extra) * esize, esize));
        let pat = with_offset(&pat, (start + extra) * esize);
        let bytes = noise(PARTS * PB, seed);
        let mem = Memory::new(&bytes, PB).unwrap();
        let tile = gather(&mem, &pat, dtype).unwrap();
        for (p, row) in reference_addresses(&pat, esize, PB).iter().enumerate() {
            for (j, &at) in row.iter().enumerate() {
                let mut want = [0f32];
                bytes_to_f32(&bytes[at..at + esize], dtype, &mut want).unwrap();
                let got = tile.get(p, j).unwrap();
                prop_assert!(got.to_bits() == want[0].to_bits() || (got.is_nan() && want[0].is_nan()), "p{p} j{j}: {got} vs {}", want[0]);
            }
        }
        let raw = gather_raw(&mem, &pat, esize).unwrap();
        let flat: Vec<usize> = reference_addresses(&pat, esize, PB).concat();
        let want: Vec<u8> = flat.iter().flat_map(|&at| bytes[at..at + esize].to_vec()).collect();
        prop_assert_eq!(&raw.bytes, &want);
    }

    #[test]
    fn scatter_matches_reference((pat, start) in arb_pattern(), dt in 0usize..DTYPES.len(), seed in any::<u64>(), sr in any::<bool>()) {
        let dtype = DTYPES[dt];
        let esize = dtype.size_bytes();
        prop_assume!(fits(&pat, start * esize, esize));
        let pat = with_offset(&pat, start * esize);
        let tile = Tile::from_fn(pat.partitions(), pat.free_len(), |p, j| ((p * 31 + j * 7) as f32 * 0.37 - 9.0) * (1.0 + (seed % 5) as f32));
        let init = noise(PARTS * PB, seed);
        let mut got = init.clone();
        let mut rounding = if sr { Rounding::stochastic(seed) } else { Rounding::NearestEven };
        scatter(&mut MemoryMut::new(&mut got, PB).unwrap(), &pat, dtype, &tile, &mut rounding).unwrap();
        // Reference: one element at a time, same rounding stream order.
        let mut want = init.clone();
        let mut rounding = if sr { Rounding::stochastic(seed) } else { Rounding::NearestEven };
        for (p, row) in reference_addresses(&pat, esize, PB).iter().enumerate() {
            for (j, &at) in row.iter().enumerate() {
                f32_to_bytes(&[tile.get(p, j).unwrap()], dtype, &mut want[at..at + esize], &mut rounding).unwrap();
            }
        }
        prop_assert_eq!(&got, &want);
        // Raw scatter of the raw gather restores the same bytes.
        let raw = gather_raw(&Memory::new(&got, PB).unwrap(), &pat, esize).unwrap();
        let mut again = init.clone();
        scatter_raw(&mut MemoryMut::new(&mut again, PB).unwrap(), &pat, &raw).unwrap();
        let raw2 = gather_raw(&Memory::new(&again, PB).unwrap(), &pat, esize).unwrap();
        prop_assert_eq!(&raw.bytes, &raw2.bytes);
    }
}

#[test]
fn ldweights_reversed_walk_enumerates_backwards() {
    // The compiler's LDWEIGHTS walk: start at element 127, steps [-1, 0, -32],
    // counts [32, 1, 4] over fp16 → elements 127, 126, ..., 0.
    let mut bytes = vec![0u8; 2 * 512];
    for i in 0..128u16 {
        let v = half::f16::from_f32(i as f32).to_bits().to_le_bytes();
        bytes[2 * i as usize..2 * i as usize + 2].copy_from_slice(&v);
    }
    let pat = Pattern::new(0, 1, 0xfe, &[Axis::new(-1, 32), Axis::new(0, 1), Axis::new(-32, 4)]).unwrap();
    let t = gather(&Memory::new(&bytes, 512).unwrap(), &pat, Dtype::Float16).unwrap();
    let want: Vec<f32> = (0..128).rev().map(|i| i as f32).collect();
    assert_eq!(t.as_slice(), &want[..]);
}

#[test]
fn bounds_and_shape_errors() {
    let bytes = vec![0u8; 4 * 64];
    let mem = Memory::new(&bytes, 64).unwrap();
    let too_far = Pattern::contiguous(0, 1, 60, 2);
    assert!(matches!(
        gather(&mem, &too_far, Dtype::Float32),
        Err(KernelError::OutOfBounds { .. })
    ));
    let backwards = Pattern::new(0, 1, 4, &[Axis::new(-1, 3)]).unwrap();
    assert!(matches!(
        gather(&mem, &backwards, Dtype::Float32),
        Err(KernelError::OutOfBounds { .. })
    ));
    let too_many_parts = Pattern::contiguous(3, 2, 0, 1);
    assert!(matches!(
        gather(&mem, &too_many_parts, Dtype::Float32),
        Err(KernelError::OutOfBounds { .. })
    ));
    assert!(matches!(
        gather(&mem, &Pattern::contiguous(0, 1, 0, 1), Dtype::Unknown),
        Err(KernelError::UnsupportedDtype { .. })
    ));
    assert!(Pattern::new(0, 1, 0, &[Axis::new(1, 1); 5]).is_err());
    assert!(Pattern::new(0, 1, 0, &[Axis::new(0, u32::MAX); 4]).is_err());
    let huge_broadcast = Pattern::contiguous(0, 1, 0, u32::MAX);
    assert!(matches!(
        gather(&mem, &huge_broadcast, Dtype::Float32),
        Err(KernelError::InvalidPattern { .. })
    ));
    assert!(Memory::new(&bytes, 48).is_err());
    let mut buf = bytes.clone();
    let mut m = MemoryMut::new(&mut buf, 64).unwrap();
    let wrong = Tile::zeros(1, 3);
    assert!(matches!(
        scatter(
            &mut m,
            &Pattern::contiguous(0, 1, 0, 2),
            Dtype::Float32,
            &wrong,
            &mut Rounding::NearestEven
        ),
        Err(KernelError::ShapeMismatch { .. })
    ));
}

#[test]
fn contiguous_fp32_roundtrip_is_exact() {
    let mut bytes = vec![0u8; 128 * 1024];
    let pat = Pattern::contiguous(0, 128, 256, 64);
    let tile = Tile::from_fn(128, 64, |p, j| p as f32 * 1000.0 + j as f32 + 0.125);
    scatter(
        &mut MemoryMut::new(&mut bytes, 1024).unwrap(),
        &pat,
        Dtype::Float32,
        &tile,
        &mut Rounding::NearestEven,
    )
    .unwrap();
    assert_eq!(gather(&Memory::new(&bytes, 1024).unwrap(), &pat, Dtype::Float32).unwrap(), tile);
}

/// A store that can only copy bytes in and out (like the device's paged
/// SBUF): exercises the staging path of gathers.
struct Paged {
    parts: Vec<Vec<u8>>,
}

impl OnChipRead for Paged {
    fn partitions(&self) -> usize {
        self.parts.len()
    }
    fn partition_bytes(&self) -> usize {
        PB
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        buf.copy_from_slice(&self.parts[partition][offset..offset + buf.len()]);
    }
}

impl OnChipWrite for Paged {
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]) {
        self.parts[partition][offset..offset + data.len()].copy_from_slice(data);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn copy_only_store_matches_slice_store((pat, start) in arb_pattern(), dt in 0usize..DTYPES.len(), seed in any::<u64>()) {
        let dtype = DTYPES[dt];
        let esize = dtype.size_bytes();
        prop_assume!(fits(&pat, start * esize, esize));
        let pat = with_offset(&pat, start * esize);
        let mut flat = noise(PARTS * PB, seed);
        let mut paged = Paged { parts: flat.chunks(PB).map(|c| c.to_vec()).collect() };
        let a = gather(&Memory::new(&flat, PB).unwrap(), &pat, dtype).unwrap();
        let b = gather(&paged, &pat, dtype).unwrap();
        prop_assert_eq!(a.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(gather_raw(&paged, &pat, esize).unwrap(), gather_raw(&Memory::new(&flat, PB).unwrap(), &pat, esize).unwrap());
        let tile = Tile::from_fn(pat.partitions(), pat.free_len(), |p, j| (p * 3 + j) as f32 - 7.5);
        scatter(&mut MemoryMut::new(&mut flat, PB).unwrap(), &pat, dtype, &tile, &mut Rounding::NearestEven).unwrap();
        scatter(&mut paged, &pat, dtype, &tile, &mut Rounding::NearestEven).unwrap();
        prop_assert_eq!(flat, paged.parts.concat());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// The single-run fast path of `gather_raw` returns exactly the bytes of
    /// each partition's run, as the general walk would.
    #[test]
    fn gather_raw_unit_runs_are_the_partition_bytes(
        start in 0usize..4,
        parts in 1usize..5,
        offset in 0usize..16,
        len in 1u32..20,
        esize in prop::sample::select(vec![1usize, 2, 4]),
        split in any::<bool>(),
        seed in any::<u8>(),
    ) {
        const PB: usize = 128;
        let bytes: Vec<u8> = (0..8 * PB).map(|i| (i as u8).wrapping_mul(37) ^ seed).collect();
        let mem = Memory::new(&bytes, PB).unwrap();
        // Two axes that merge into one run exercise the canonical form too.
        let pat = if split && len % 2 == 0 {
            Pattern::new(start, parts, offset, &[Axis::new(1, len / 2), Axis::new((len / 2) as i32, 2)]).unwrap()
        } else {
            Pattern::contiguous(start, parts, offset, len)
        };
        let raw = gather_raw(&mem, &pat, esize).unwrap();
        let row = len as usize * esize;
        let want: Vec<u8> = (start..start + parts).flat_map(|p| bytes[p * PB + offset..p * PB + offset + row].to_vec()).collect();
        prop_assert_eq!(&raw.bytes, &want);
        prop_assert_eq!((raw.partitions, raw.free, raw.esize), (parts, len as usize, esize));
    }
}

#[test]
fn gather_raw_unit_run_out_of_bounds_is_an_error() {
    let bytes = vec![0u8; 2 * 16];
    let mem = Memory::new(&bytes, 16).unwrap();
    assert!(gather_raw(&mem, &Pattern::contiguous(0, 2, 10, 4), 2).is_err());
    assert!(gather_raw(&mem, &Pattern::contiguous(1, 2, 0, 4), 2).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// A backwards walk read forwards (`reversed_as_forward`) yields the
    /// walk's elements in reverse order, for the compiler's LDWEIGHTS shape
    /// ([-1, 32], [-32, 4]) and any single backwards run; other walks have
    /// no forward form.
    #[test]
    fn reversed_walk_read_forwards_is_the_walk_reversed(
        parts in 1usize..5,
        inner in 1u32..40,
        outer in 1u32..5,
        esize_idx in 0usize..3,
        seed in any::<u8>(),
    ) {
        let esize = [1usize, 2, 4][esize_idx];
        let n = (inner * outer) as usize;
        let pb = n * esize + 8;
        let bytes: Vec<u8> = (0..parts * pb).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed)).collect();
        let mem = Memory::new(&bytes, pb).unwrap();
        let last = (n - 1) * esize + 4;
        let walk = Pattern::new(0, parts, last, &[Axis::new(-1, inner), Axis::new(-(inner as i32), outer)]).unwrap();
        match walk.reversed_as_forward(esize) {
            Some(fwd) => {
                prop_assert!(n >= 2);
                let back = gather_raw(&mem, &walk, esize).unwrap();
                let ahead = gather_raw(&mem, &fwd, esize).unwrap();
                for p in 0..parts {
                    let row = |t: &RawTile| t.bytes[p * n * esize..(p + 1) * n * esize].chunks(esize).map(<[u8]>::to_vec).collect::<Vec<_>>();
                    let mut rev = row(&back);
                    rev.reverse();
                    prop_assert_eq!(rev, row(&ahead));
                }
            }
            None => prop_assert_eq!(n, 1),
        }
        let forward = Pattern::new(0, parts, 0, &[Axis::new(1, inner + 1)]).unwrap();
        prop_assert!(forward.reversed_as_forward(esize).is_none());
        let strided = Pattern::new(0, parts, last, &[Axis::new(-2, 2)]).unwrap();
        prop_assert!(strided.reversed_as_forward(esize).is_none());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// fp32 operands that are one unit-step run per partition (written as
    /// one axis or as axes that merge into one) move as whole rows; the
    /// values are those of the per-element reference walk, NaN bits and
    /// out-of-pattern bytes included.
    #[test]
    fn fp32_rows_move_as_the_reference_walk(inner in 1u32..20, outer in 1u32..4, sp in 0usize..3, parts in 1usize..4, lead in 0usize..8, seed in any::<u64>()) {
        let pat = Pattern::new(sp, parts, lead * 4, &[Axis::new(1, inner), Axis::new(inner as i32, outer)]).unwrap();
        let bytes = noise(PARTS * PB, seed);
        let mem = Memory::new(&bytes, PB).unwrap();
        let tile = gather(&mem, &pat, Dtype::Float32).unwrap();
        let addrs = reference_addresses(&pat, 4, PB);
        for (p, row) in addrs.iter().enumerate() {
            for (j, &at) in row.iter().enumerate() {
                prop_assert_eq!(tile.get(p, j).unwrap().to_bits(), u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()));
            }
        }
        let src = Tile::from_fn(pat.partitions(), pat.free_len(), |p, j| f32::from_bits(0x7FA0_0001 ^ (p * 977 + j) as u32));
        let mut got = bytes.clone();
        scatter(&mut MemoryMut::new(&mut got, PB).unwrap(), &pat, Dtype::Float32, &src, &mut Rounding::stochastic(seed)).unwrap();
        let mut want = bytes.clone();
        for (p, row) in addrs.iter().enumerate() {
            for (j, &at) in row.iter().enumerate() {
                want[at..at + 4].copy_from_slice(&src.get(p, j).unwrap().to_bits().to_le_bytes());
            }
        }
        prop_assert_eq!(got, want);
    }
}
