//! Rounding modes for narrowing float conversions.
//!
//! Neuron engines round fp32 results into bf16/fp16/fp8 either to nearest
//! (ties to even) or stochastically (`NEURON_RT_STOCHASTIC_ROUNDING_EN`,
//! seeded by `NEURON_RT_STOCHASTIC_ROUNDING_SEED`). The simulator must give
//! bit-identical results for a given seed, so the random source here is a
//! small deterministic generator (SplitMix64) owned by the caller.

use super::minifloat::{BF16, FP16, Fp8Kind};
use half::{bf16, f16};

/// A seeded source of stochastic-rounding decisions.
///
/// Same seed, same sequence of conversions -> same bits. Each rounded
/// element consumes one 64-bit draw, whether or not it needed rounding, so
/// the stream position depends only on the element count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StochasticRounder {
    state: u64,
}

impl StochasticRounder {
    /// A rounder whose draws are fully determined by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next uniform 64-bit draw (SplitMix64).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Round `x` into bf16: up with probability equal to the discarded
    /// fraction of an ulp. Overflow may round to ±inf, as IEEE bf16 does.
    #[inline]
    pub fn f32_to_bf16(&mut self, x: f32) -> bf16 {
        let bits = x.to_bits();
        let random = self.next_u64() as u32 & 0xFFFF;
        // bf16 is the top half of f32, so adding 16 random bits below the
        // cut and truncating is exactly the generic stochastic rule
        // (a carry can reach the exponent and give inf, as IEEE allows).
        let code = if bits & 0x7FFF_FFFF > 0x7F80_0000 {
            BF16.encode_rne(x) as u16
        } else {
            ((bits & 0x7FFF_FFFF).wrapping_add(random) >> 16) as u16 | ((bits >> 16) as u16 & 0x8000)
        };
        bf16::from_bits(code)
    }

    /// Round `x` into fp16 stochastically (overflow may give ±inf).
    #[inline]
    pub fn f32_to_f16(&mut self, x: f32) -> f16 {
        f16::from_bits(FP16.encode_stochastic(x, self.next_u64()) as u16)
    }

    /// Round `x` into an fp8 code stochastically (overflow saturates).
    #[inline]
    pub fn f32_to_fp8(&mut self, kind: Fp8Kind, x: f32) -> u8 {
        kind.encode_stochastic(x, self.next_u64())
    }
}

/// How a narrowing float conversion picks between the two neighbours of a
/// value it cannot represent.
///
/// Only float destinations use the mode. Conversions into integer dtypes
/// always round to nearest, ties to even (see [`super::convert`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Rounding {
    /// IEEE round-to-nearest, ties to even (the hardware default).
    #[default]
    NearestEven,
    /// Stochastic rounding from a seeded generator; the generator advances
    /// with every element converted.
    Stochastic(StochasticRounder),
}

impl Rounding {
    /// Stochastic rounding seeded with `seed`.
    pub fn stochastic(seed: u64) -> Self {
        Rounding::Stochastic(StochasticRounder::new(seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bits() {
        let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.0137 - 3.3).collect();
        let run = |seed| {
            let mut r = StochasticRounder::new(seed);
            xs.iter().map(|&x| r.f32_to_bf16(x).to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn mean_approaches_value() {
        // 1 + 2^-9 sits a quarter of the way from 1.0 to the next bf16.
        let x = 1.0 + 2f32.powi(-9);
        let mut r = StochasticRounder::new(42);
        let n = 20_000;
        let sum: f64 = (0..n).map(|_| f64::from(r.f32_to_bf16(x).to_f32())).sum();
        let mean = sum / f64::from(n);
        assert!((mean - f64::from(x)).abs() < 2e-4, "mean {mean} vs {x}");

        let mut r = StochasticRounder::new(3);
        let x = 0.3f32; // e4m3 neighbours 0.28125 and 0.3125
        let sum: f64 = (0..n).map(|_| f64::from(Fp8Kind::E4.decode(r.f32_to_fp8(Fp8Kind::E4, x)))).sum();
        assert!((sum / f64::from(n) - 0.3).abs() < 1e-3);

        let mut r = StochasticRounder::new(9);
        let x = 1.0 + 2f32.powi(-11); // half an fp16 ulp above 1.0
        let ups = (0..n).filter(|_| r.f32_to_f16(x).to_bits() == 0x3C01).count();
        let frac = ups as f64 / f64::from(n);
        assert!((frac - 0.5).abs() < 0.02, "fp16 up fraction {frac}");
    }

    #[test]
    fn bf16_fast_path_matches_generic_rule() {
        let mut fast = StochasticRounder::new(11);
        let mut reference = StochasticRounder::new(11);
        let mut x = 1.0e-40f32; // start among the f32 subnormals
        while x.is_finite() {
            for v in [x, -x, x * 1.001, f32::MAX] {
                let got = fast.f32_to_bf16(v).to_bits();
                let want = BF16.encode_stochastic(v, reference.next_u64()) as u16;
                assert_eq!(got, want, "x = {v:e}");
            }
            x *= 1.37;
        }
        assert!(fast.f32_to_bf16(f32::NAN).is_nan());
    }

    #[test]
    fn exact_values_never_move() {
        let mut r = StochasticRounder::new(1);
        for _ in 0..1000 {
            assert_eq!(r.f32_to_bf16(1.5).to_f32(), 1.5);
            assert_eq!(r.f32_to_f16(-0.25).to_f32(), -0.25);
            assert_eq!(r.f32_to_fp8(Fp8Kind::E5, 3.0), Fp8Kind::E5.encode(3.0));
        }
    }
}
