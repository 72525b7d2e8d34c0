//! PE matmul against a naive triple loop, accumulation groups, transpose,
//! and a replay of the real compiler program's PE/ACT steps on bytes.

use super::*;
use crate::kernels::copy::copy_cast;
use crate::kernels::pattern::{Axis, Memory, MemoryMut, gather};
use proptest::prelude::*;

/// out[m][n] = Σ_k w[k][m] · x[k][n] in f64, plus Σ|w·x| for the tolerance.
fn naive(w: &Tile, x: &Tile) -> (Vec<f64>, Vec<f64>) {
    let (k, m, n) = (w.partitions(), w.free(), x.free());
    let mut out = vec![0.0; m * n];
    let mut mag = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let v = w.get(p, i).unwrap() as f64 * x.get(p, j).unwrap() as f64;
                out[i * n + j] += v;
                mag[i * n + j] += v.abs();
            }
        }
    }
    (out, mag)
}

/// fp32 accumulation of `terms` products: error ≤ (terms + 2)·ε·Σ|products|.
fn assert_close(got: &Tile, want: &[f64], mag: &[f64], terms: usize) {
    for (i, ((&g, &w), &s)) in got.as_slice().iter().zip(want).zip(mag).enumerate() {
        let tol = (terms as f64 + 2.0) * f32::EPSILON as f64 * s + 1e-30;
        assert!((g as f64 - w).abs() <= tol, "element {i}: {g} vs {w} (tol {tol})");
    }
}

fn tile(parts: usize, free: usize, seed: u32) -> Tile {
    Tile::from_fn(parts, free, |p, j| {
        let h = ((p * 7919 + j * 104_729) as u32 ^ seed).wrapping_mul(2654435761);
        (h >> 19) as f32 / 4096.0 - 1.0
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn accumulation_group_matches_naive(k in 1usize..130, m in 1usize..40, n in 1usize..70, steps in 1usize..4, seed in any::<u32>()) {
        let mut psum = Tile::filled(m, n, 123.0);
        let mut want = vec![0.0; m * n];
        let mut mag = vec![0.0; m * n];
        for s in 0..steps {
            let w = Weights::from_columns(tile(k, m, seed ^ s as u32));
            let x = tile(k, n, seed.rotate_left(7) ^ s as u32);
            let flags = AccFlags { start: s == 0, stop: s + 1 == steps };
            matmul(&w, &x, &mut psum, flags).unwrap();
            let (o, g) = naive(&w.tile(), &x);
            for i in 0..m * n {
                want[i] += o[i];
                mag[i] += g[i];
            }
        }
        assert_close(&psum, &want, &mag, k * steps);
    }
}

#[test]
fn flags_roundtrip_and_reject_unknown_bits() {
    for b in 0..4u8 {
        assert_eq!(AccFlags::from_bits(b).unwrap().bits(), b);
    }
    assert_eq!(AccFlags::from_bits(3).unwrap(), AccFlags::SINGLE);
    assert!(AccFlags::from_bits(4).is_err());
}

#[test]
fn shape_errors() {
    let w = Weights::from_columns(Tile::zeros(4, 3));
    assert!(matmul(&w, &Tile::zeros(5, 2), &mut Tile::zeros(3, 2), AccFlags::SINGLE).is_err());
    assert!(matmul(&w, &Tile::zeros(4, 2), &mut Tile::zeros(2, 3), AccFlags::SINGLE).is_err());
}

#[test]
fn ldweights_order_is_reversed() {
    let walk = Tile::from_vec(1, 4, vec![3.0, 2.0, 1.0, 0.0]).unwrap();
    assert_eq!(Weights::from_ldweights_order(walk).tile().row(0), &[0.0, 1.0, 2.0, 3.0]);
}

#[test]
fn transpose_is_bit_exact_with_identity_and_arithmetic_otherwise() {
    let mut t = tile(8, 5, 3);
    t.row_mut(2)[1] = f32::NAN;
    t.row_mut(3)[4] = -0.0;
    t.row_mut(4)[0] = f32::INFINITY;
    let w = Weights::from_columns(t.clone());
    let out = matmul_transpose(&w, &Tile::identity(8)).unwrap();
    for p in 0..8 {
        for j in 0..5 {
            assert_eq!(out.get(j, p).unwrap().to_bits(), t.get(p, j).unwrap().to_bits());
        }
    }
    let x = tile(8, 3, 9);
    let w = Weights::from_columns(tile(8, 5, 4));
    let (want, mag) = naive(&w.tile(), &x);
    assert_close(&matmul_transpose(&w, &x).unwrap(), &want, &mag, 8);
}

#[test]
fn low_precision_inputs_widen_through_gather() {
    // bf16 / fp16 / fp8 operands: the product must match the naive loop over
    // the *decoded* operand values (widening is exact, accumulation fp32).
    for dtype in [
        Dtype::Bfloat16,
        Dtype::Float16,
        Dtype::Fp8E4,
        Dtype::Fp8E5,
        Dtype::Fp8E3,
        Dtype::Int8,
    ] {
        let (k, m, n) = (32, 16, 24);
        let es = dtype.size_bytes();
        let pb = 256;
        let mut bytes = vec![0u8; k * pb];
        let mut mm = MemoryMut::new(&mut bytes, pb).unwrap();
        let w_pat = Pattern::contiguous(0, k, 0, m as u32);
        let x_pat = Pattern::contiguous(0, k, m * es, n as u32);
        scatter(&mut mm, &w_pat, dtype, &tile(k, m, 1), &mut Rounding::NearestEven).unwrap();
        scatter(&mut mm, &x_pat, dtype, &tile(k, n, 2), &mut Rounding::NearestEven).unwrap();
        let mem = Memory::new(&bytes, pb).unwrap();
        let w = Weights::from_columns(gather(&mem, &w_pat, dtype).unwrap());
        let x = gather(&mem, &x_pat, dtype).unwrap();
        let mut out = Tile::zeros(m, n);
        matmul(&w, &x, &mut out, AccFlags::SINGLE).unwrap();
        let (want, mag) = naive(&w.tile(), &x);
        assert_close(&out, &want, &mag, k);
    }
}

fn put_f16(bytes: &mut [u8], at: usize, v: f32) {
    bytes[at..at + 2].copy_from_slice(&half::f16::from_f32(v).to_bits().to_le_bytes());
}

/// Replays the PE and ACT records of the real 128x256 @ 256x64 program
/// (spec/real-isa-observed.md §2.1, §3.4) with their exact operand fields.
#[test]
fn real_program_pe_act_steps_compute_the_product() {
    const SB_PB: usize = 0x38000; // 224 KiB per partition
    const PSUM_PB: usize = 0x4000; // 16 KiB per partition
    let (mdim, kdim, ndim) = (128, 256, 64);
    let x = |m: usize, k: usize| (((m * 31 + k * 17) % 64) as f32 - 32.0) / 16.0;
    let y = |k: usize, n: usize| (((k * 13 + n * 7) % 32) as f32 - 16.0) / 8.0;
    let mut sb = vec![0u8; 128 * SB_PB];
    let mut ps = vec![0u8; 128 * PSUM_PB];
    // What the DMAs leave in SBUF: identity at 0x37b00, x rows at 0x37c00,
    // y[0:128, 0:64] at 0x37f00 and y[128:256, 0:64] at 0x37e00.
    for p in 0..128 {
        let base = p * SB_PB;
        put_f16(&mut sb, base + 0x37b00 + 2 * p, 1.0);
        for k in 0..kdim {
            put_f16(&mut sb, base + 0x37c00 + 2 * k, x(p, k));
        }
        for n in 0..ndim {
            put_f16(&mut sb, base + 0x37f00 + 2 * n, y(p, n));
            put_f16(&mut sb, base + 0x37e00 + 2 * n, y(128 + p, n));
        }
    }
    let walk = [Axis::new(-1, 32), Axis::new(0, 1), Axis::new(-32, 4)];
    let ldweights = |sb: &[u8], start: usize| {
        let t = gather(
            &Memory::new(sb, SB_PB).unwrap(),
            &Pattern::new(0, 128, start, &walk).unwrap(),
            Dtype::Float16,
        )
        .unwrap();
        Weights::from_ldweights_order(t)
    };
    let moving = |sb: &[u8], start: usize, n: u32| {
        gather(
            &Memory::new(sb, SB_PB).unwrap(),
            &Pattern::contiguous(0, 128, start, n),
            Dtype::Float16,
        )
        .unwrap()
    };
    // PE[3..6]: two transposes into PSUM bank 1 (fp16 output, flags 3).
    for (ld, out) in [(0x37cfe, 0x800), (0x37dfe, 0x900)] {
        let w = ldweights(&sb, ld);
        let t = matmul_transpose(&w, &moving(&sb, 0x37b00, 128)).unwrap();
        scatter(
            &mut MemoryMut::new(&mut ps, PSUM_PB).unwrap(),
            &Pattern::contiguous(0, 128, out, 128),
            Dtype::Float16,
            &t,
            &mut Rounding::NearestEven,
        )
        .unwrap();
    }
    // ACT[3]: COPY int32 -> int32, 128 words per partition, PSUM 0x800 -> SBUF 0x4000.
    copy_cast(
        &Memory::new(&ps, PSUM_PB).unwrap(),
        &Pattern::contiguous(0, 128, 0x800, 128),
        Dtype::Int32,
        &mut MemoryMut::new(&mut sb, SB_PB).unwrap(),
        &Pattern::contiguous(0, 128, 0x4000, 128),
        Dtype::Int32,
        &mut Rounding::NearestEven,
    )
    .unwrap();
    // PE[8..11]: K accumulation over two tiles into PSUM bank 0 (flags 1 then 2).
    for (ld, mv, flags) in [(0x40fe, 0x37f00, 1u8), (0x41fe, 0x37e00, 2u8)] {
        let w = ldweights(&sb, ld);
        let mvt = moving(&sb, mv, 64);
        matmul_into_psum(
            &mut MemoryMut::new(&mut ps, PSUM_PB).unwrap(),
            &Pattern::contiguous(0, 128, 0, 64),
            &w,
            &mvt,
            AccFlags::from_bits(flags).unwrap(),
        )
        .unwrap();
    }
    // ACT[4]: COPY fp32 PSUM 0x0 -> SBUF 0x4200, 64 elements.
    copy_cast(
        &Memory::new(&ps, PSUM_PB).unwrap(),
        &Pattern::contiguous(0, 128, 0, 64),
        Dtype::Float32,
        &mut MemoryMut::new(&mut sb, SB_PB).unwrap(),
        &Pattern::contiguous(0, 128, 0x4200, 64),
        Dtype::Float32,
        &mut Rounding::NearestEven,
    )
    .unwrap();
    let result = gather(
        &Memory::new(&sb, SB_PB).unwrap(),
        &Pattern::contiguous(0, 128, 0x4200, 64),
        Dtype::Float32,
    )
    .unwrap();
    for m in 0..mdim {
        for n in 0..ndim {
            // All inputs are exact in fp16 with few mantissa bits, so the
            // fp32 sum is exact too.
            let want: f64 = (0..kdim).map(|k| x(m, k) as f64 * y(k, n) as f64).sum();
            assert_eq!(result.get(m, n).unwrap() as f64, want, "out[{m}][{n}]");
        }
    }
}

/// Raw bytes for `parts x free` elements of `dtype` (any code, NaN included).
fn raw_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// The simulator's fused MATMUL (raw LDWEIGHTS walk, raw moving operand,
    /// widening inside the GEMM) writes exactly the PSUM bytes of the former
    /// path (gather both widened, then multiply), accumulating or not.
    #[test]
    fn raw_operands_match_gathered_operands_bit_for_bit(
        dtype_idx in 0usize..5,
        k in 1usize..40,
        m in 1usize..24,
        n in 1usize..40,
        x_step in 1i32..3,
        seed in any::<u64>(),
        accumulate in any::<bool>(),
    ) {
        let dtype = [Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E3, Dtype::Fp8E4, Dtype::Fp8E5][dtype_idx];
        let format = crate::kernels::lowp::LowFormat::of(dtype).unwrap();
        let es = dtype.size_bytes();
        let pb = 256;
        let sb = raw_bytes(k * pb, seed);
        let mem = Memory::new(&sb, pb).unwrap();
        // LDWEIGHTS walks backwards from the last element; moving is strided.
        let w_pat = Pattern::new(0, k, (m - 1) * es, &[Axis::new(-1, m as u32)]).unwrap();
        let x_pat = Pattern::new(0, k, m * es, &[Axis::new(x_step, n as u32)]).unwrap();
        let wide_w = Weights::from_ldweights_order(gather(&mem, &w_pat, dtype).unwrap());
        let wide_x = gather(&mem, &x_pat, dtype).unwrap();
        let raw_w = Weights::from_ldweights_raw(crate::kernels::pattern::gather_raw(&mem, &w_pat, es).unwrap(), format).unwrap();
        let raw_x = crate::kernels::pattern::gather_raw(&mem, &x_pat, es).unwrap();
        prop_assert_eq!(raw_w.tile().as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            wide_w.tile().as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let flags = if accumulate { AccFlags::ACCUMULATE } else { AccFlags::SINGLE };
        let out = Pattern::contiguous(0, m, 0, n as u32);
        let mut ps_old = raw_bytes(m * n * 4, seed ^ 0x77);
        // Keep the prior PSUM values finite so accumulation stays comparable.
        for w in ps_old.chunks_exact_mut(4) { w[3] &= 0x3F; }
        let mut ps_new = ps_old.clone();
        matmul_into_psum(&mut MemoryMut::new(&mut ps_old, n * 4).unwrap(), &out, &wide_w, &wide_x, flags).unwrap();
        matmul_moving_into_psum(&mut MemoryMut::new(&mut ps_new, n * 4).unwrap(), &out, &raw_w,
            Moving::Low { raw: &raw_x, format }, flags).unwrap();
        prop_assert_eq!(ps_old, ps_new);
    }
}

#[test]
fn raw_tiles_of_the_wrong_element_size_are_rejected() {
    let raw = crate::kernels::pattern::RawTile { partitions: 2, free: 3, esize: 1, bytes: vec![0; 6] };
    let bf16 = crate::kernels::lowp::LowFormat::Bfloat16;
    assert!(Weights::from_raw_columns(raw.clone(), bf16).is_err());
    assert!(Weights::from_ldweights_raw(raw.clone(), bf16).is_err());
    let w = Weights::from_columns(Tile::zeros(2, 2));
    let mut out = Tile::zeros(2, 3);
    assert!(matmul_moving(&w, Moving::Low { raw: &raw, format: bf16 }, &mut out, AccFlags::SINGLE).is_err());
}

/// The identity of `n` in `format`'s codes (with -0.0 at one off-diagonal
/// place, which is still the identity).
fn raw_identity(n: usize, format: crate::kernels::lowp::LowFormat) -> crate::kernels::pattern::RawTile {
    use crate::kernels::lowp::LowFormat;
    let es = format.size_bytes();
    let mut bytes = vec![0u8; n * n * es];
    for p in 0..n {
        let one = Tile::filled(1, 1, 1.0);
        let mut code = vec![0u8; es];
        nrt_isa::dtype::f32_to_bytes(one.as_slice(), format.dtype(), &mut code, &mut nrt_isa::dtype::Rounding::NearestEven).unwrap();
        bytes[(p * n + p) * es..(p * n + p + 1) * es].copy_from_slice(&code);
    }
    if n > 1 && matches!(format, LowFormat::Float16 | LowFormat::Bfloat16) {
        bytes[3] = 0x80; // element (0, 1) = -0.0: the high byte of the second code
    }
    crate::kernels::pattern::RawTile { partitions: n, free: n, esize: es, bytes }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// The raw PE transpose moves every code of the weights (NaN payloads
    /// included) to its transposed place, and declines (None) a moving
    /// operand that is not the identity or of another format.
    #[test]
    fn raw_transpose_moves_codes_and_declines_non_identities(
        dtype_idx in 0usize..5,
        k in 1usize..40,
        m in 1usize..24,
        seed in any::<u64>(),
    ) {
        let dtype = [Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E3, Dtype::Fp8E4, Dtype::Fp8E5][dtype_idx];
        let format = crate::kernels::lowp::LowFormat::of(dtype).unwrap();
        let es = dtype.size_bytes();
        let raw = crate::kernels::pattern::RawTile { partitions: k, free: m, esize: es, bytes: raw_bytes(k * m * es, seed) };
        let w = Weights::from_raw_columns(raw.clone(), format).unwrap();
        let t = matmul_transpose_raw(&w, &raw_identity(k, format), format).unwrap().expect("identity moving operand");
        prop_assert_eq!((t.partitions, t.free), (m, k));
        for kk in 0..k {
            for mm in 0..m {
                prop_assert_eq!(&t.bytes[(mm * k + kk) * es..(mm * k + kk + 1) * es], &raw.bytes[(kk * m + mm) * es..(kk * m + mm + 1) * es]);
            }
        }
        let mut not_identity = raw_identity(k, format);
        not_identity.bytes[(k * k - 1) * es] ^= 0x01; // the last diagonal element is no longer 1.0
        prop_assert!(matmul_transpose_raw(&w, &not_identity, format).unwrap().is_none());
        let other = if format == crate::kernels::lowp::LowFormat::Float16 { crate::kernels::lowp::LowFormat::Bfloat16 } else { crate::kernels::lowp::LowFormat::Float16 };
        if other.size_bytes() == es {
            prop_assert!(matmul_transpose_raw(&w, &raw_identity(k, other), other).unwrap().is_none());
        }
    }
}

/// A PSUM that cannot lend its rows: MATMUL takes the copying path
/// (gather the partials, multiply a tile, scatter it back).
struct Copying<'a>(MemoryMut<'a>);

impl crate::kernels::pattern::OnChipRead for Copying<'_> {
    fn partitions(&self) -> usize {
        self.0.partitions()
    }
    fn partition_bytes(&self) -> usize {
        self.0.partition_bytes()
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        self.0.read_partition(partition, offset, buf)
    }
}

impl OnChipWrite for Copying<'_> {
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]) {
        self.0.write_partition(partition, offset, data)
    }
}

/// MATMUL into PSUM's own rows writes exactly the bytes of the copying
/// path, starting a group or resuming one, at a partition and bank
/// offset, on the compiler's full shape (128 x 128 x 512, split across
/// parts) and ragged ones, fp16 and fp32 moving operands; bytes outside
/// the output stay as they were.
#[test]
fn psum_in_place_matches_the_copying_path_bit_for_bit() {
    use crate::kernels::lowp::LowFormat;
    for &(k, m, n, first, col) in &[(128usize, 128usize, 512usize, 0usize, 512usize), (37, 13, 70, 3, 9), (128, 40, 512, 88, 0)] {
        let pb = 4 * (col + n + 5);
        let weights = Weights::from_raw_columns(
            RawTile { partitions: k, free: m, esize: 2, bytes: f16_codes(k * m, 3) },
            LowFormat::Float16,
        )
        .unwrap();
        let raw_x = RawTile { partitions: k, free: n, esize: 2, bytes: f16_codes(k * n, 5) };
        let wide_x = Tile::from_fn(k, n, |p, j| half::f16::from_bits(u16::from_le_bytes([raw_x.bytes[2 * (p * n + j)], raw_x.bytes[2 * (p * n + j) + 1]])).to_f32());
        let out = Pattern::contiguous(first, m, col * 4, n as u32);
        for moving in [Moving::Low { raw: &raw_x, format: LowFormat::Float16 }, Moving::Wide(&wide_x)] {
            for flags in [AccFlags::SINGLE, AccFlags { start: true, stop: false }, AccFlags::ACCUMULATE] {
                let mut start: Vec<u8> = (0..(first + m) * pb / 4).flat_map(|i| (((i % 977) as f32) / 61.0 - 8.0).to_le_bytes()).collect();
                start.resize(128 * pb, 0);
                let (mut copied, mut in_place) = (start.clone(), start.clone());
                matmul_moving_into_psum(&mut Copying(MemoryMut::new(&mut copied, pb).unwrap()), &out, &weights, moving, flags).unwrap();
                let mut lent = MemoryMut::new(&mut in_place, pb).unwrap();
                assert!(lent.with_rows_mut(first, m, col * 4, n * 4, &mut |_| {}), "the test memory lends rows");
                matmul_moving_into_psum(&mut lent, &out, &weights, moving, flags).unwrap();
                assert!(copied == in_place, "{k}x{m}x{n} at partition {first}, column {col}, {flags:?}: PSUM bytes differ");
                assert!(copied != start, "the MATMUL wrote its output");
            }
        }
    }
}

/// `len` finite fp16 codes in [-2, 2).
fn f16_codes(len: usize, seed: u64) -> Vec<u8> {
    raw_bytes(2 * len, seed)
        .chunks_exact(2)
        .flat_map(|w| half::f16::from_f32(f32::from(u16::from_le_bytes([w[0], w[1]])) / 16384.0 - 2.0).to_bits().to_le_bytes())
        .collect()
}
