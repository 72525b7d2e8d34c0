//! Real numbers with a worst-case bound on how far an fp32 evaluation of
//! the same formula can be from them: the arithmetic of the decoder's f64
//! reference (docs/collectives.md, "Example: tensor-parallel decoder").
//!
//! A [`Bounded`] is `v`, the exact value of a formula on exact inputs
//! (computed in f64), and `e`, a bound on `|x̂ - v|` for the value `x̂`
//! the device computes in fp32 from its own (already inexact) inputs. Each
//! operation below combines its operands' bounds with the rounding of the
//! fp32 operation the simulated engines perform (docs/isa.md, §5), so the
//! bound of a whole network is derived op by op rather than guessed:
//!
//! * a product `fl(â·b̂)`: `|a|·e_b + |b|·e_a + e_a·e_b` from the inputs,
//!   plus `u·|â·b̂|` for the rounding (u = 2^-24);
//! * a sum or dot product of n terms, in any order and with or without
//!   fused multiply-adds: the inputs' errors carried through, plus
//!   `γ_n·Σ|â_i·b̂_i|` with `γ_n = n·u / (1 - n·u)` (Higham, Accuracy and
//!   Stability of Numerical Algorithms, §3.1 and §4.2): this covers the
//!   PE's sequential PSUM accumulation, POOL's reductions and the
//!   all-reduce's ring order alike, whatever the ranks;
//! * a function `f` of one value: `max|f'|` over `[v - e, v + e]` times
//!   `e`, plus the function's own rounding (exp: 2 ulp, so `4u·|f|`;
//!   `1/sqrt`: two roundings; silu: `8u` through its exp, add, reciprocal
//!   and multiply).
//!
//! Every bound also carries the f64 evaluation error of `v` itself
//! (`γ_n` with 2^-53), so the check `|x̂ - v| <= e` is rigorous for the
//! operations as the simulator defines them.

/// fp32's unit roundoff.
pub const U32: f64 = 1.0 / (1u64 << 24) as f64;
/// f64's unit roundoff (the reference's own evaluation).
pub const U64: f64 = 1.0 / (1u64 << 53) as f64;

/// `γ_n` for unit roundoff `u`: the relative error bound of a sum of `n` terms.
pub fn gamma(n: usize, u: f64) -> f64 {
    let nu = n as f64 * u;
    assert!(nu < 0.5, "gamma({n}) is not small");
    nu / (1.0 - nu)
}

/// An exact value and a bound on the error of its fp32 evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounded {
    /// The exact value (f64).
    pub v: f64,
    /// Bound on `|fp32 result - v|`.
    pub e: f64,
}

impl Bounded {
    /// An exactly known fp32 value (an input, a weight, a DMA copy).
    pub fn exact(x: f32) -> Bounded {
        Bounded { v: f64::from(x), e: 0.0 }
    }

    /// A value the device holds as the fp32 `x` that stands for `v` (the
    /// bound is the distance, rounded up): constants such as `1/sqrt(hd)`.
    pub fn rounded_constant(v: f64, x: f32) -> Bounded {
        Bounded { v, e: (f64::from(x) - v).abs() * (1.0 + 2.0 * U64) }
    }

    /// Whether the fp32 value is exactly 0.
    pub fn is_exact_zero(&self) -> bool {
        self.v == 0.0 && self.e == 0.0
    }

    /// The largest magnitude the fp32 value can have.
    pub fn hi(&self) -> f64 {
        self.v.abs() + self.e
    }

    /// Whether the fp32 value `x` is within the bound.
    pub fn holds(&self, x: f32) -> bool {
        (f64::from(x) - self.v).abs() <= self.e
    }


    /// `self · c` for a power of two `c` (exact in fp32 away from underflow).
    pub fn scale_pow2(self, c: f64) -> Bounded {
        debug_assert!(c != 0.0 && c.abs().log2().fract() == 0.0, "{c} is not a power of two");
        Bounded { v: self.v * c, e: self.e * c.abs() }
    }


    /// `exp(self)` as ACT computes it (within 2 ulp: `4u` relative).
    pub fn exp(self) -> Bounded {
        let v = self.v.exp();
        let top = (self.v + self.e).exp();
        Bounded { v, e: top * self.e + 4.0 * U32 * top + U64 * v }
    }

    /// `1/sqrt(self)` as ACT computes it (a rounded square root, then a
    /// rounded reciprocal). The value must be bounded away from 0.
    pub fn rsqrt(self) -> Bounded {
        let lo = self.v - self.e;
        assert!(lo > 0.0, "rsqrt of a value that may be <= 0 ({self:?})");
        let v = 1.0 / self.v.sqrt();
        Bounded { v, e: 0.5 * lo.powf(-1.5) * self.e + gamma(2, U32) * lo.powf(-0.5) + 4.0 * U64 * v }
    }

    /// `1/self` (one rounding). The value must be bounded away from 0.
    pub fn recip(self) -> Bounded {
        let lo = self.v - self.e;
        assert!(lo > 0.0, "reciprocal of a value that may be <= 0 ({self:?})");
        let v = 1.0 / self.v;
        Bounded { v, e: self.e / (lo * lo) + U32 / lo + 2.0 * U64 * v }
    }

    /// `silu(self) = self · sigmoid(self)` as ACT computes it:
    /// `x · 1/(1 + exp(-x))`. Its derivative is below 1.1 everywhere; the
    /// exp (4u), the add, the reciprocal and the product round within 8u
    /// relative; 1e-30 covers the exp's clamp far below any value here.
    pub fn silu(self) -> Bounded {
        let v = self.v / (1.0 + (-self.v).exp());
        let carried = 1.1 * self.e;
        Bounded { v, e: carried + 8.0 * U32 * (v.abs() + carried) + 1e-30 + 4.0 * U64 * v.abs() }
    }
}

/// `-a` (exact in fp32).
impl std::ops::Neg for Bounded {
    type Output = Bounded;
    fn neg(self) -> Bounded {
        Bounded { v: -self.v, e: self.e }
    }
}

/// `fl(a + b)`.
impl std::ops::Add for Bounded {
    type Output = Bounded;
    fn add(self, o: Bounded) -> Bounded {
        let v = self.v + o.v;
        let carried = self.e + o.e;
        Bounded { v, e: carried + U32 * (v.abs() + carried) + U64 * v.abs() }
    }
}

/// `fl(a · b)`.
impl std::ops::Mul for Bounded {
    type Output = Bounded;
    fn mul(self, o: Bounded) -> Bounded {
        let v = self.v * o.v;
        let carried = self.v.abs() * o.e + o.v.abs() * self.e + self.e * o.e;
        Bounded { v, e: carried + U32 * (v.abs() + carried) + U64 * v.abs() }
    }
}

/// `Σ a_i · b_i` evaluated in fp32 in any order (fused or not).
pub fn dot(a: impl IntoIterator<Item = Bounded>, b: impl IntoIterator<Item = Bounded>) -> Bounded {
    dot_split(a, b, 1)
}

/// `Σ a_i · b_i` as `parts` partial dot products (each over any subset of
/// the terms, in any order) whose results are then summed in any order:
/// a row-parallel projection whose ranks' partials an all-reduce adds.
/// A term with an exactly zero factor is exactly 0 in fp32 and adding it
/// rounds nothing, so it does not count towards `n`; every other term
/// passes through at most `n - 1` additions inside its partial and
/// `parts - 1` between the partials, hence `γ_{n + parts - 1}`.
pub fn dot_split(a: impl IntoIterator<Item = Bounded>, b: impl IntoIterator<Item = Bounded>, parts: usize) -> Bounded {
    let (mut v, mut carried, mut mag, mut abs, mut n) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for (x, y) in a.into_iter().zip(b) {
        if x.is_exact_zero() || y.is_exact_zero() {
            continue;
        }
        v += x.v * y.v;
        abs += (x.v * y.v).abs();
        carried += x.v.abs() * y.e + y.v.abs() * x.e + x.e * y.e;
        mag += x.hi() * y.hi();
        n += 1;
    }
    let adds = (n + parts.max(1) - 1).max(1);
    Bounded { v, e: carried + gamma(adds, U32) * mag + gamma(adds, U64) * abs }
}

/// `Σ a_i` evaluated in fp32 in any order.
pub fn sum(a: impl IntoIterator<Item = Bounded>) -> Bounded {
    let (mut v, mut carried, mut mag, mut abs, mut n) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for x in a {
        v += x.v;
        abs += x.v.abs();
        carried += x.e;
        mag += x.hi();
        n += 1;
    }
    Bounded { v, e: carried + gamma(n.max(1), U32) * mag + gamma(n.max(1), U64) * abs }
}

/// `max_i a_i` (exact in fp32: the error is the largest input error).
pub fn max(a: impl IntoIterator<Item = Bounded>) -> Bounded {
    a.into_iter().fold(Bounded { v: f64::NEG_INFINITY, e: 0.0 }, |m, x| Bounded { v: m.v.max(x.v), e: m.e.max(x.e) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation's bound holds for its fp32 evaluation on inputs
    /// perturbed anywhere inside their bounds, over a sweep of values.
    #[test]
    fn bounds_hold_for_perturbed_fp32_evaluations() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..20_000 {
            let (a, b) = (Bounded { v: 3.0 * next(), e: 1e-6 * next().abs() }, Bounded { v: 3.0 * next(), e: 1e-6 * next().abs() });
            // fp32 inputs somewhere inside the bounds.
            let ah = (a.v + a.e * next()) as f32;
            let bh = (b.v + b.e * next()) as f32;
            let (a, b) = (Bounded { v: a.v, e: a.e.max((f64::from(ah) - a.v).abs()) }, Bounded { v: b.v, e: b.e.max((f64::from(bh) - b.v).abs()) });
            assert!((a + b).holds(ah + bh));
            assert!((a * b).holds(ah * bh));
            assert!(a.exp().holds(ah.exp()));
            assert!(a.silu().holds(ah / (1.0 + (-ah).exp())));
            let p = Bounded { v: a.v.abs() + 0.5, e: a.e };
            let ph = (f64::from(ah.abs()) + 0.5) as f32;
            let p = Bounded { v: p.v, e: p.e.max((f64::from(ph) - p.v).abs()) };
            assert!(p.rsqrt().holds(1.0 / ph.sqrt()));
            assert!(p.recip().holds(1.0 / ph));
        }
    }

    #[test]
    fn a_long_dot_product_is_within_gamma_n() {
        let xs: Vec<f32> = (0..4096).map(|i| ((i * 7919) % 1000) as f32 / 999.0 - 0.5).collect();
        let ys: Vec<f32> = (0..4096).map(|i| ((i * 104_729) % 997) as f32 / 996.0 - 0.5).collect();
        let mut acc = 0f32;
        for (x, y) in xs.iter().zip(&ys) {
            acc = x.mul_add(*y, acc);
        }
        let b = dot(xs.iter().map(|&x| Bounded::exact(x)), ys.iter().map(|&y| Bounded::exact(y)));
        assert!(b.holds(acc), "{acc} vs {b:?}");
        let abs: f64 = xs.iter().zip(&ys).map(|(x, y)| f64::from(x * y).abs()).sum();
        assert!(b.e <= 1.01 * gamma(4096, U32) * abs, "the bound is γ_n Σ|x·y|: {b:?}");
        // Exact zeros neither count nor add error; partials add their adds.
        let z = dot([Bounded::exact(0.0), Bounded::exact(2.0)], [Bounded { v: 5.0, e: 1.0 }, Bounded::exact(3.0)]);
        assert_eq!(z.v, 6.0);
        assert!(z.e < 1e-6, "{z:?}");
        let one = dot_split([Bounded::exact(1.0)], [Bounded::exact(3.0)], 1);
        let split = dot_split([Bounded::exact(1.0)], [Bounded::exact(3.0)], 8);
        assert!((one.e - gamma(1, U32) * 3.0).abs() < 1e-12 && split.e > 7.0 * one.e, "{one:?} {split:?}");
        let m = max([Bounded { v: 1.0, e: 0.5 }, Bounded { v: 2.0, e: 0.1 }]);
        assert_eq!((m.v, m.e), (2.0, 0.5));
        assert!(sum([Bounded::exact(1.0), Bounded::exact(2.0)]).holds(3.0));
    }
}
