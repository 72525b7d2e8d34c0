//! The unsharded decoder in f64, with a worst-case bound on every output
//! of any fp32 evaluation that computes it the way the NEFFs do
//! ([`super::bounded`]): one sequence, its KV cache kept between calls.
//!
//! The operations mirror the program's, so each bound is derived from
//! what the engines compute, not fitted:
//!
//! * RMSNorm: `x²` (one rounding), their sum over `d_model` (the PE with a
//!   ones matrix: a dot product), `fl(fl(Σ · 1/d) + eps)`, `1/sqrt`, then
//!   `(x · rstd) · g`;
//! * projections: dot products over `d_model` (Q, K, V, gate, up: inside
//!   one rank), over `heads · head_dim` (output projection) and `ffn`
//!   (down): each rank's partial, then the all-reduce's sum of the ranks'
//!   partials in ring order ([`dot_split`] over `ranks` parts);
//! * attention: scores `q · k` over `head_dim`; positions after the token
//!   are masked (the device selects -inf; its exp gives 0, bounded here by
//!   1e-44); `m = max`, `z = fl(fl(s · c) + fl(m · -c))` with `c` the fp32
//!   `1/sqrt(head_dim)`, `e = exp(z)`, `p = e · fl(1/Σe)`, `o = Σ p · v`
//!   over all the positions the device reads;
//! * residual adds; SwiGLU `fl(silu(gate) · up)`.

use super::bounded::{Bounded, dot, dot_split, max, sum};
use super::weights::DecoderWeights;
use super::{EPS, TpDecoderSpec};

/// What the device's exp of a masked (-inf) score can be at most.
const MASKED: Bounded = Bounded { v: 0.0, e: 1e-44 };

/// One sequence through the unsharded decoder.
#[derive(Clone, Debug)]
pub struct Reference<'a> {
    spec: TpDecoderSpec,
    w: &'a DecoderWeights,
    /// Per layer and head: K rows by position, then V rows (head_dim each).
    k: Vec<Vec<Vec<Bounded>>>,
    v: Vec<Vec<Vec<Bounded>>>,
    /// Positions filled so far.
    len: usize,
}

fn rmsnorm(x: &[Bounded], g: &[f32]) -> Vec<Bounded> {
    let n = x.len();
    let ms = sum(x.iter().map(|a| *a * *a));
    let inv_n = 1.0 / n as f64;
    let y = ms * Bounded::rounded_constant(inv_n, inv_n as f32) + Bounded::exact(EPS);
    let rstd = y.rsqrt();
    x.iter().zip(g).map(|(a, &gi)| *a * rstd * Bounded::exact(gi)).collect()
}

/// Column `j` of the row-major [rows, cols] block of `w` starting at `at`.
fn column(w: &[f32], at: usize, rows: usize, cols: usize, j: usize) -> impl Iterator<Item = Bounded> + '_ {
    (0..rows).map(move |k| Bounded::exact(w[at + k * cols + j]))
}

impl<'a> Reference<'a> {
    /// A fresh sequence (empty cache).
    pub fn new(spec: &TpDecoderSpec, w: &'a DecoderWeights) -> Reference<'a> {
        let zero = vec![Bounded::exact(0.0); spec.head_dim];
        let cache = vec![vec![zero; spec.context]; spec.layers * spec.heads];
        Reference { spec: *spec, w, k: cache.clone(), v: cache, len: 0 }
    }

    /// Positions filled so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing has run yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The prefill: `x` [prompt][d_model] from position 0; the outputs.
    pub fn prefill(&mut self, x: &[Vec<Bounded>]) -> Vec<Vec<Bounded>> {
        assert_eq!((self.len, x.len()), (0, self.spec.prompt), "a prefill runs the prompt from position 0");
        // The prefill NEFF attends over the prompt's positions only.
        self.block(x, self.spec.prompt)
    }

    /// One decode step: `x` [d_model] at the next position; the output.
    pub fn decode(&mut self, x: &[Bounded]) -> Vec<Bounded> {
        assert!(self.len < self.spec.context, "the cache is full ({} positions)", self.spec.context);
        self.block(&[x.to_vec()], self.spec.context).remove(0)
    }

    /// Tokens `x` at positions `len..`, each attending causally over the
    /// first `ctx` cache positions.
    fn block(&mut self, x: &[Vec<Bounded>], ctx: usize) -> Vec<Vec<Bounded>> {
        let s = self.spec;
        let (d, hd, nh, f) = (s.d_model, s.head_dim, s.heads, s.ffn);
        let a = nh * hd;
        let w = self.w;
        let sc = 1.0 / (hd as f64).sqrt();
        let c = Bounded::rounded_constant(sc, sc as f32);
        let pos0 = self.len;
        let mut h: Vec<Vec<Bounded>> = x.to_vec();
        for l in 0..s.layers {
            let xn: Vec<Vec<Bounded>> = h.iter().map(|r| rmsnorm(r, &w.attn_norm[l * d..(l + 1) * d])).collect();
            let proj = |m: &[f32], row: &[Bounded], j: usize| dot(row.iter().copied(), column(m, l * d * a, d, a, j));
            let q: Vec<Vec<Bounded>> = xn.iter().map(|r| (0..a).map(|j| proj(&w.wq, r, j)).collect()).collect();
            for (t, r) in xn.iter().enumerate() {
                for head in 0..nh {
                    let kv = |m: &[f32]| (0..hd).map(|i| proj(m, r, head * hd + i)).collect::<Vec<_>>();
                    self.k[l * nh + head][pos0 + t] = kv(&w.wk);
                    self.v[l * nh + head][pos0 + t] = kv(&w.wv);
                }
            }
            let mut o = vec![vec![Bounded::exact(0.0); a]; x.len()];
            for (t, ot) in o.iter_mut().enumerate() {
                let last = pos0 + t;
                for head in 0..nh {
                    let (kc, vc) = (&self.k[l * nh + head], &self.v[l * nh + head]);
                    let qh = &q[t][head * hd..(head + 1) * hd];
                    let scores: Vec<Bounded> = (0..=last).map(|p| dot(qh.iter().copied(), kc[p].iter().copied())).collect();
                    let m = max(scores.iter().copied());
                    let e: Vec<Bounded> = (0..ctx).map(|p| if p <= last { (scores[p] * c + m * -c).exp() } else { MASKED }).collect();
                    let rs = sum(e.iter().copied()).recip();
                    let p: Vec<Bounded> = e.iter().map(|ei| *ei * rs).collect();
                    for i in 0..hd {
                        ot[head * hd + i] = dot(p.iter().copied(), vc[..ctx].iter().map(|row| row[i]));
                    }
                }
            }
            for (ht, ot) in h.iter_mut().zip(&o) {
                let y: Vec<Bounded> = (0..d).map(|j| dot_split(ot.iter().copied(), column(&w.wo, l * a * d, a, d, j), s.ranks)).collect();
                for (hi, yi) in ht.iter_mut().zip(y) {
                    *hi = *hi + yi;
                }
            }
            for ht in h.iter_mut() {
                let xn = rmsnorm(ht, &w.mlp_norm[l * d..(l + 1) * d]);
                let g = |m: &[f32], j: usize| dot(xn.iter().copied(), column(m, l * d * f, d, f, j));
                let act: Vec<Bounded> = (0..f).map(|j| g(&w.w_gate, j).silu() * g(&w.w_up, j)).collect();
                for (j, hj) in ht.iter_mut().enumerate() {
                    *hj = *hj + dot_split(act.iter().copied(), column(&w.w_down, l * f * d, f, d, j), s.ranks);
                }
            }
        }
        self.len += x.len();
        h.iter().map(|r| rmsnorm(r, &w.final_norm)).collect()
    }
}

/// What a tp-decoder run must produce: per execution (the prefill, then
/// `steps` decode steps), `hidden` [batch, tokens, d_model] flattened,
/// each sequence run through its own [`Reference`] from the token
/// embeddings of `seed` ([`super::weights::token`]).
pub fn expected(spec: &TpDecoderSpec, w: &DecoderWeights, seed: u64, steps: usize) -> Vec<Vec<Bounded>> {
    let exact = |v: Vec<f32>| v.into_iter().map(Bounded::exact).collect::<Vec<_>>();
    let mut runs = vec![Vec::new(); 1 + steps];
    for b in 0..spec.batch() {
        let mut r = Reference::new(spec, w);
        let x: Vec<Vec<Bounded>> = (0..spec.prompt).map(|t| exact(super::weights::token(spec, seed, b, t))).collect();
        runs[0].extend(r.prefill(&x).into_iter().flatten());
        for (step, run) in runs.iter_mut().skip(1).enumerate() {
            run.extend(r.decode(&exact(super::weights::token(spec, seed, b, spec.prompt + step))));
        }
    }
    runs
}

/// How far fp32 results are from their references: the largest
/// `|x̂ - v|`, the largest `|x̂ - v| / e` (at most 1 when every bound
/// holds) and how many exceed their bound.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Deviation {
    /// Largest absolute difference.
    pub max_abs: f64,
    /// Largest difference as a fraction of its bound.
    pub max_of_bound: f64,
    /// Elements outside their bound (NaN included).
    pub outside: usize,
}

/// Compares `got` element by element with `want`.
pub fn deviation(want: &[Bounded], got: &[f32]) -> Deviation {
    let mut d = Deviation { outside: want.len().abs_diff(got.len()), ..Deviation::default() };
    for (w, &g) in want.iter().zip(got) {
        let diff = (f64::from(g) - w.v).abs();
        if !w.holds(g) {
            d.outside += 1;
        }
        d.max_abs = d.max_abs.max(diff);
        d.max_of_bound = d.max_of_bound.max(if w.e > 0.0 { diff / w.e } else if diff == 0.0 { 0.0 } else { f64::INFINITY });
    }
    d
}
