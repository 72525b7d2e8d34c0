//! Float helpers `core` lacks on wasm32 (no libm): `expf`, and the
//! compare-and-select forms of max that vectorise (`relu`, `max_select`).

/// e^x in f32, relative error below 2e-7 over the finite range
/// (range reduction x = k·ln2 + r, |r| ≤ ln2/2, degree-7 polynomial).
pub fn expf(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.72284 {
        return f32::INFINITY;
    }
    if x < -103.97208 {
        return 0.0;
    }
    let xd = f64::from(x);
    let k = (xd * core::f64::consts::LOG2_E + if xd >= 0.0 { 0.5 } else { -0.5 }) as i32;
    let r = xd - f64::from(k) * core::f64::consts::LN_2;
    // Taylor terms to r^7: |r| <= 0.35 keeps the remainder below 1e-8.
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    // 2^k as f64 bits, then scale (f64 covers f32's whole exponent range).
    let scale = f64::from_bits(((1023 + i64::from(k)) as u64) << 52);
    (p * scale) as f32
}

/// `max(x, 0)` as a compare and select, so loops over it vectorise.
///
/// On wasm32, `f32::max` lowers to a call of the `fmaxf` builtin per
/// element (wasm's own `f32.max` propagates NaN, which `f32::max` must
/// not), and a loop of calls never becomes simd128 code. This form gives
/// the same results for every input a kernel sees (a NaN becomes 0, as
/// with `f32::max`; only the sign of a zero result may differ) and
/// compiles to `f32x4.gt` + `v128.bitselect` (or `f32x4.pmax`).
#[inline(always)]
pub fn relu(x: f32) -> f32 {
    if x > 0.0 { x } else { 0.0 }
}

/// [`relu`] over a slice, in place. On wasm32 with simd128 it runs
/// [`RELU_STEP`] elements per step as `f32x4.pmax(0, x)` vectors (a
/// load, one `maxps` and a store each on x86 hosts; `pmax(0, x)` is
/// `0 < x ? x : 0`, exactly [`relu`], NaN and -0 included), so the
/// runtime's per-loop watchdog check and the loop bookkeeping are paid
/// once per step (the compiler's own vectorisation stops at one vector
/// per step, and measured 16-element steps spent as much on the loop as
/// on the data).
pub fn relu_slice(v: &mut [f32]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::{f32x4_pmax, f32x4_splat, v128, v128_load, v128_store};
        // Opaque to LLVM: with a constant zero it rewrites `pmax(0, x)` as
        // `f32x4.gt` + `v128.and` (two x86 instructions per vector, the
        // compare and the mask); with a zero it cannot see, `f32x4.pmax`
        // stays, and wasmtime emits one `maxps` for it. The value, and so
        // every result, is the same either way.
        let zero = core::hint::black_box(f32x4_splat(0.0));
        // Also opaque, and also zero: each step's address goes through an
        // `xor` with it. Otherwise LLVM's loop strength reduction rewrites
        // the step's vector addresses as separate `i32.add`s (one `lea` per
        // vector on x86) instead of leaving them as the constant offsets of
        // the loads and stores (`v128.load offset=16`, folded into the x86
        // addressing mode): a quarter of the loop's instructions.
        let opaque = core::hint::black_box(0usize);
        let mut groups = v.chunks_exact_mut(RELU_STEP);
        for g in &mut groups {
            let p = (g.as_mut_ptr() as *mut v128).map_addr(|a| a ^ opaque);
            // In blocks of 32 vectors: LLVM unrolls a loop of 32 fully
            // (straight-line loads and stores at constant offsets), a loop
            // of 64 only twice.
            for block in 0..RELU_STEP / 128 {
                for k in block * 32..block * 32 + 32 {
                    // SAFETY: `g` is RELU_STEP f32s, i.e. exactly RELU_STEP / 4
                    // 16-byte vectors (`p` is `g`'s address, xor 0); wasm
                    // loads and stores need no alignment.
                    unsafe { v128_store(p.add(k), f32x4_pmax(zero, v128_load(p.add(k)))) };
                }
            }
        }
        // What is left: a vector at a time, then the last elements alone.
        let mut quads = groups.into_remainder().chunks_exact_mut(4);
        for q in &mut quads {
            let p = q.as_mut_ptr() as *mut v128;
            // SAFETY: `q` is 4 f32s, one 16-byte vector.
            unsafe { v128_store(p, f32x4_pmax(zero, v128_load(p))) };
        }
        for x in quads.into_remainder() {
            *x = relu(*x);
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    for x in v.iter_mut() {
        *x = relu(*x);
    }
}

/// Elements [`relu_slice`] handles per loop step on wasm32 (a multiple
/// of 128: blocks of 32 vectors; the TCM chunks kernels use are
/// multiples of it, and what is left over takes the scalar path).
pub const RELU_STEP: usize = 256;

/// The larger of `a` and `b` as a compare and select (see [`relu`] for
/// why not `f32::max`): `b` if `b > a`, else `a`, so a NaN `b` is ignored
/// like `f32::max` ignores it.
#[inline(always)]
pub fn max_select(a: f32, b: f32) -> f32 {
    if b > a { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relu_slice_is_relu_of_every_element() {
        let mut v: std::vec::Vec<f32> = (0..203).map(|i| (i as f32 - 101.5) * 0.75).collect();
        v[3] = f32::NAN;
        v[70] = -0.0;
        v[71] = f32::NEG_INFINITY;
        let want: std::vec::Vec<u32> = v.iter().map(|&x| relu(x).to_bits()).collect();
        relu_slice(&mut v);
        assert_eq!(v.iter().map(|x| x.to_bits()).collect::<std::vec::Vec<_>>(), want);
    }

    #[test]
    fn relu_and_max_select_agree_with_std_max() {
        for x in [-3.5f32, -1e-30, 0.0, 1e-30, 2.25, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            assert_eq!(relu(x).to_bits(), x.max(0.0).to_bits(), "relu({x})");
            for m in [-1.0f32, 0.5, f32::NEG_INFINITY] {
                assert_eq!(max_select(m, x).to_bits(), m.max(x).to_bits(), "max_select({m}, {x})");
            }
        }
    }

    #[test]
    fn expf_matches_std() {
        let mut x = -100.0f32;
        while x < 88.0 {
            let (a, b) = (expf(x), x.exp());
            assert!(((a - b) / b).abs() < 1e-6, "exp({x}) = {a}, std {b}");
            x += 0.173;
        }
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(-200.0), 0.0);
        assert_eq!(expf(100.0), f32::INFINITY);
        assert!(expf(f32::NAN).is_nan());
    }
}
