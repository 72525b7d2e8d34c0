//! Unit tests of the decoder generator: shapes, shards, the NEFFs'
//! declarations and collectives, and the f64 reference's bound.

use super::reference::Reference;
use super::weights::DecoderWeights;
use super::*;
use nrt_neff::EngineKind;

fn small(ranks: usize, layers: usize, lnc: usize) -> TpDecoderSpec {
    TpDecoderSpec::new(ranks, layers, lnc)
}

#[test]
fn bad_shapes_are_named() {
    let err = |s: TpDecoderSpec| s.validate().unwrap_err().to_string();
    assert!(err(TpDecoderSpec { ranks: 3, ..small(3, 1, 1) }).contains("heads = 8"));
    assert!(err(small(0, 1, 1)).contains("ranks = 0"));
    assert!(err(small(2, 0, 1)).contains("layers = 0"));
    assert!(err(small(2, 1, 3)).contains("lnc = 3"));
    assert!(err(TpDecoderSpec { d_model: 200, ..small(2, 1, 1) }).contains("d_model = 200"));
    assert!(err(TpDecoderSpec { head_dim: 8, ..small(2, 1, 1) }).contains("head_dim = 8"));
    assert!(err(TpDecoderSpec { ffn: 100, ..small(2, 1, 1) }).contains("ffn = 100"));
    assert!(err(TpDecoderSpec { prompt: 32, ..small(2, 1, 1) }).contains("prompt = 32"));
    assert!(err(TpDecoderSpec { context: 256, ..small(2, 1, 1) }).contains("context = 256"));
    assert!(err(small(1, 40, 1)).contains("SBUF"), "too many layers for one rank's SBUF");
}

#[test]
fn the_spec_round_trips_through_its_json() {
    let s = small(4, 2, 2);
    let (back, seed) = TpDecoderSpec::from_json(&s.to_json(77)).unwrap();
    assert_eq!((back, seed), (s, 77));
    let mut j = s.to_json(1);
    j["model"] = "tp-mlp".into();
    assert!(TpDecoderSpec::from_json(&j).unwrap_err().to_string().contains("tp-decoder"));
    let mut j = s.to_json(1);
    j["ranks"] = 3.into();
    assert!(TpDecoderSpec::from_json(&j).unwrap_err().to_string().contains("heads"));
}

#[test]
fn shards_hold_the_ranks_heads_and_units() {
    let s = TpDecoderSpec { layers: 2, ..small(2, 2, 1) };
    let full = TpDecoderSpec { ranks: 1, ..s };
    let mut w = DecoderWeights::generate(&full, 5);
    let idx = |n: usize| (0..n).map(|i| i as f32).collect::<Vec<f32>>();
    let (d, a, f) = (s.d_model, s.heads * s.head_dim, s.ffn);
    (w.wq, w.wk, w.wv, w.wo) = (idx(2 * d * a), idx(2 * d * a).iter().map(|v| -v).collect(), idx(2 * d * a), idx(2 * a * d));
    (w.w_gate, w.w_up, w.w_down) = (idx(2 * d * f), idx(2 * d * f), idx(2 * f * d));
    let r1 = w.rank_inputs(&s, 1).unwrap();
    let names: Vec<&str> = r1.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, names::WEIGHTS);
    let get = |n: &str| r1.iter().find(|x| x.0 == n).unwrap();
    let (ar, fr) = (a / 2, f / 2);
    let wqkv = get(names::WQKV);
    assert_eq!(wqkv.1, vec![2, d as u64, 3 * ar as u64]);
    // Row 0 of layer 0: wq columns ar.., then wk's, then wv's.
    assert_eq!((wqkv.2[0], wqkv.2[ar], wqkv.2[2 * ar]), (ar as f32, -(ar as f32), ar as f32));
    // Layer 1, row 3.
    let at = (d + 3) * 3 * ar;
    assert_eq!(wqkv.2[at], ((d + 3) * a + ar) as f32);
    let wo = get(names::WO);
    assert_eq!(wo.2[0], (ar * d) as f32, "wo starts at the rank's first head row");
    assert_eq!(wo.2[ar * d], ((a + ar) * d) as f32, "layer 1");
    let wgu = get(names::W_GATE_UP);
    assert_eq!((wgu.2[0], wgu.2[fr]), (fr as f32, fr as f32));
    assert_eq!(get(names::W_DOWN).2[0], (fr * d) as f32);
    assert!(w.rank_inputs(&s, 2).unwrap_err().to_string().contains("rank 2"));
}

#[test]
fn the_neffs_declare_their_io_collectives_and_subgraphs() {
    for (ranks, lnc) in [(1, 1), (2, 1), (4, 2)] {
        let s = small(ranks, 2, lnc);
        for phase in [Phase::Prefill, Phase::Decode] {
            let neff = nrt_neff::Neff::parse(&tp_decoder_neff(&s, phase).unwrap()).unwrap();
            assert_eq!(neff.subgraphs.len(), lnc);
            let (ins, _) = s.signatures(phase);
            assert_eq!(neff.inputs().iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ins.iter().map(|t| t.name.as_str()).collect::<Vec<_>>());
            assert_eq!(neff.outputs()[0].shape, vec![lnc as u64, s.tokens(phase) as u64, s.d_model as u64]);
            for sg in &neff.subgraphs {
                let sp = sg.engine(EngineKind::Sp).unwrap();
                let triggers: Vec<_> = sp.instructions.chunks(64).filter_map(|c| nrt_isa::collective::CollectiveTrigger::decode(c.try_into().unwrap()).ok()).collect();
                assert_eq!(triggers.len(), if ranks == 1 { 0 } else { 2 * s.layers }, "two all-reduces per layer");
                for tr in &triggers {
                    assert_eq!(tr.num_elements, (s.d_model * s.tokens(phase)) as u64);
                }
                if ranks > 1 {
                    let cc = nrt_neff::cc::CcConfig::from_def(&sg.def).unwrap();
                    assert_eq!((cc.world_size, cc.replica_groups.clone()), (ranks as u32, vec![vec![(0..ranks as u32).collect::<Vec<_>>()]]));
                }
            }
        }
    }
}

#[test]
fn every_rank_runs_the_same_program() {
    let s = small(4, 1, 1);
    let a = tp_decoder_neff(&s, Phase::Decode).unwrap();
    assert_eq!(a, tp_decoder_neff(&s, Phase::Decode).unwrap(), "deterministic");
    assert_ne!(a, tp_decoder_neff(&s, Phase::Prefill).unwrap());
}

/// The reference's outputs keep unit scale, their bounds are small
/// against them, and the layers move the outputs far more than the bound:
/// a NEFF that skipped a layer's branches, or read the wrong cache
/// positions or shards, could not pass the check.
#[test]
fn the_reference_bound_is_tight_enough_to_mean_something() {
    let s = small(2, 4, 1);
    let w = DecoderWeights::generate(&s, 9);
    let mut r = Reference::new(&s, &w);
    let exact = |v: Vec<f32>| v.into_iter().map(bounded::Bounded::exact).collect::<Vec<_>>();
    let x: Vec<Vec<bounded::Bounded>> = (0..s.prompt).map(|t| exact(weights::token(&s, 3, 0, t))).collect();
    let mut outs = r.prefill(&x);
    for p in s.prompt..s.prompt + 3 {
        outs.push(r.decode(&exact(weights::token(&s, 3, 0, p))));
    }
    assert_eq!(r.len(), s.prompt + 3);
    for (p, out) in outs.iter().enumerate() {
        let rms = (out.iter().map(|b| b.v * b.v).sum::<f64>() / s.d_model as f64).sqrt();
        assert!((0.5..2.0).contains(&rms), "position {p}: the final norm keeps unit scale: {rms}");
        let worst = out.iter().map(|b| b.e).fold(0.0, f64::max);
        assert!(worst < 3e-3 * rms, "position {p}: bound {worst} against rms {rms}");
        // The same token through no layer at all: final_norm(rmsnorm(x)).
        let x = weights::token(&s, 3, 0, p);
        let xr = (x.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / s.d_model as f64).sqrt();
        let moved = out.iter().zip(&x).zip(&w.final_norm).map(|((o, xi), g)| (o.v - f64::from(*xi) / xr * f64::from(*g)).abs()).fold(0.0, f64::max);
        assert!(moved > 20.0 * worst, "position {p}: the layers move the output by {moved}, the bound is {worst}");
    }
}
