//! The tensor-parallel mlp (`nrt_gen::tp_mlp`, `examples/tp-mlp`): each
//! rank's NEFF loaded with `nrt_load_collectives` on its own logical core
//! of one process, executed several times from rank threads; `output0`
//! checked on every rank against the unsharded mlp computed here in f64,
//! bit-identical across ranks and runs, and close to the single-core NEFF
//! the same generator writes for one rank.

mod exec_support;

/// The tensor-parallel decoder's tests share this binary.
#[path = "tp/decoder.rs"]
mod decoder;

#[allow(dead_code)]
#[path = "../../nrt-pack/src/example_data.rs"]
mod example_data;

use example_data::{TP_D, TP_H, TP_M, Xorshift};
use exec_support::{read_all, sim};
use nrt::cc::neff::CcRank;
use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use nrt_gen::tp_mlp::{MlpWeights, TpMlpSpec, tp_mlp_neff};
use std::sync::Arc;
use std::time::Duration;

fn host() -> ModelHost {
    let settings = LoadSettings { exec_timeout: Duration::from_secs(30), ..LoadSettings::default() };
    ModelHost::with_lnc(sim(), 1, settings).expect("host")
}

fn weights() -> MlpWeights {
    let [w1, b1, w2, b2] = example_data::tp_mlp_constants();
    MlpWeights { w1, b1, w2, b2 }
}

fn spec(ranks: usize) -> TpMlpSpec {
    TpMlpSpec { m: TP_M, d: TP_D, h: TP_H, ranks }
}

fn input(seed: u64) -> Vec<f32> {
    let mut r = Xorshift::new(seed);
    (0..TP_M * TP_D).map(|_| r.next_unit()).collect()
}

/// The unsharded mlp in f64, and for every output an a-priori bound on
/// the error of any fp32 evaluation, whatever order it sums in.
///
/// Summing n fp32 terms in any order errs by at most γ_n · Σ|terms|, with
/// γ_n = n·u / (1 - n·u) and u = 2^-24 (Higham, Accuracy and Stability,
/// §4.2), products adding one rounding each. So a hidden unit errs by at
/// most e_j = γ_{D+2} (Σ_k |x_k W1_kj| + |b1_j|) (relu cannot increase it)
/// and an output by Σ_j |W2_jd| e_j plus γ_{H+2} (Σ_j |h_j W2_jd| + |b2_d|)
/// (the all-reduce's adds of the ranks' partials are part of that sum of
/// H + 1 terms). The bound is doubled to cover the second-order terms.
fn reference(x: &[f32], w: &MlpWeights) -> (Vec<f64>, Vec<f64>) {
    let u = 2f64.powi(-24);
    let gamma = |n: usize| n as f64 * u / (1.0 - n as f64 * u);
    let (mut y, mut bound) = (vec![0f64; TP_M * TP_D], vec![0f64; TP_M * TP_D]);
    for i in 0..TP_M {
        let mut h = vec![0f64; TP_H];
        let mut e = vec![0f64; TP_H];
        for j in 0..TP_H {
            let (mut acc, mut abs) = (f64::from(w.b1[j]), f64::from(w.b1[j]).abs());
            for k in 0..TP_D {
                let t = f64::from(x[i * TP_D + k]) * f64::from(w.w1[k * TP_H + j]);
                acc += t;
                abs += t.abs();
            }
            h[j] = acc.max(0.0);
            e[j] = gamma(TP_D + 2) * abs;
        }
        for d in 0..TP_D {
            let (mut acc, mut abs, mut carried) = (f64::from(w.b2[d]), f64::from(w.b2[d]).abs(), 0f64);
            for j in 0..TP_H {
                let w2 = f64::from(w.w2[j * TP_D + d]);
                acc += h[j] * w2;
                abs += (h[j] * w2).abs();
                carried += w2.abs() * e[j];
            }
            y[i * TP_D + d] = acc;
            bound[i * TP_D + d] = 2.0 * (carried + gamma(TP_H + 2) * abs);
        }
    }
    (y, bound)
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs `model` once with `x`; its output0 bytes.
fn execute(host: &ModelHost, model: u32, x: &[u8]) -> Vec<u8> {
    let mut i = TensorSet::new();
    i.add("x", Arc::new(Tensor::from_host_bytes(x.to_vec(), "x")));
    let out = Arc::new(Tensor::allocate_host((TP_M * TP_D * 4) as u64, "output0").unwrap());
    let mut o = TensorSet::new();
    o.add("output0", out.clone());
    host.execute(model, &i, &o).unwrap_or_else(|e| panic!("execute of model {model}: {e}"));
    read_all(&out)
}

/// Loads every rank's NEFF (rank r on logical core r, from its own
/// thread), executes each of `xs` on every rank from the rank threads, and
/// unloads; the outputs by input, then rank.
fn run_ranks(host: &ModelHost, ranks: usize, xs: &[Vec<u8>]) -> Vec<Vec<Vec<u8>>> {
    let w = weights();
    let neffs: Vec<Vec<u8>> = (0..ranks).map(|r| tp_mlp_neff(&spec(ranks), &w, r).expect("generate")).collect();
    let per_rank: Vec<Vec<Vec<u8>>> = std::thread::scope(|s| {
        let hs: Vec<_> = neffs
            .iter()
            .enumerate()
            .map(|(r, neff)| {
                s.spawn(move || {
                    let me = CcRank::local(r as u32, ranks as u32, Duration::from_secs(30));
                    let m = host.load_collectives(neff, r as i32, -1, &me).unwrap_or_else(|e| panic!("rank {r}: load: {e}"));
                    let outs = xs.iter().map(|x| execute(host, m, x)).collect();
                    host.unload(m).unwrap();
                    outs
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("rank thread")).collect()
    });
    (0..xs.len()).map(|k| per_rank.iter().map(|o| o[k].clone()).collect()).collect()
}

/// Checks `got` against the reference within its bound; returns the
/// largest error as a fraction of the bound.
fn check(got: &[f32], want: &[f64], bound: &[f64], what: &str) -> f64 {
    let mut worst = 0f64;
    for (n, ((g, w), b)) in got.iter().zip(want).zip(bound).enumerate() {
        let err = (f64::from(*g) - w).abs();
        assert!(err <= *b, "{what}: output0[{}][{}] = {g}, expected {w} within {b}", n / TP_D, n % TP_D);
        worst = worst.max(err / b);
    }
    worst
}

#[test]
fn two_ranks_compute_the_whole_mlp_on_every_rank_and_run() {
    let host = host();
    let w = weights();
    let inputs: Vec<Vec<f32>> = (0..3).map(|k| input(40 + k)).collect();
    let outs = run_ranks(&host, 2, &inputs.iter().map(|x| bytes(x)).collect::<Vec<_>>());
    for (k, (x, by_rank)) in inputs.iter().zip(&outs).enumerate() {
        assert_eq!(by_rank[0], by_rank[1], "input {k}: both ranks hold the same bits");
        let (want, bound) = reference(x, &w);
        let got = f32s(&by_rank[0]);
        check(&got, &want, &bound, &format!("input {k}"));
        // relu clips some hidden units but not all, so the output is neither trivial nor linear.
        let negative = got.iter().filter(|v| **v < 0.0).count();
        assert!(negative > 1000 && negative < got.len() - 1000, "outputs of both signs ({negative} negative)");
    }
    // The same input again on a fresh load gives the same bits.
    let again = run_ranks(&host, 2, &[bytes(&inputs[0])]);
    assert_eq!(again[0], outs[0], "repeat load and execution");
}

#[test]
fn repeated_executions_are_bit_identical() {
    let host = host();
    let x = bytes(&input(77));
    let outs = run_ranks(&host, 2, &[x.clone(), x.clone(), x.clone(), x]);
    for o in &outs[1..] {
        assert_eq!(o, &outs[0], "every run gives the same bits");
    }
}

#[test]
fn the_sharded_result_matches_the_single_core_mlp() {
    let host = host();
    let w = weights();
    let x = input(5);
    let single = {
        let neff = tp_mlp_neff(&spec(1), &w, 0).unwrap();
        let m = host.load(&neff, 0, -1).expect("load the one-rank mlp");
        let out = execute(&host, m, &bytes(&x));
        host.unload(m).unwrap();
        f32s(&out)
    };
    let (want, bound) = reference(&x, &w);
    check(&single, &want, &bound, "one rank");
    for ranks in [2, 4] {
        let outs = run_ranks(&host, ranks, &[bytes(&x)]);
        for r in 1..ranks {
            assert_eq!(outs[0][r], outs[0][0], "{ranks} ranks: rank {r} holds rank 0's bits");
        }
        let sharded = f32s(&outs[0][0]);
        check(&sharded, &want, &bound, &format!("{ranks} ranks"));
        // Both are within the bound of the exact result, so within twice
        // it of each other; only the order of the hidden sum differs.
        for (n, ((a, b), e)) in sharded.iter().zip(&single).zip(&bound).enumerate() {
            assert!(f64::from((a - b).abs()) <= 2.0 * e, "{ranks} ranks: output0[{}][{}] = {a}, one core {b}", n / TP_D, n % TP_D);
        }
    }
}
