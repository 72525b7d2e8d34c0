//! The tensor-parallel decoder (`nrt_gen::tp_decoder`): every rank's
//! prefill and decode NEFF loaded on its own logical core, weights and KV
//! caches bound to both as device tensors, the prefill then decode steps
//! executed from the rank threads (`decoder_run`, the runner `nrt run
//! --ranks` uses); every execution's `hidden` checked on every rank
//! against the unsharded model in f64 within its derived worst-case fp32
//! bound, bit-identical across ranks and across two runs.

use super::exec_support::{instance, sim};
use nrt::load::{LoadSettings, ModelHost};
use nrt_gen::tp_decoder::reference::{deviation, expected};
use nrt_gen::tp_decoder::weights::DecoderWeights;
use nrt_gen::tp_decoder::{Phase, TpDecoderSpec, tp_decoder_neff};
use std::time::Duration;

#[allow(dead_code)]
#[path = "../../../nrt-cli/src/decoder_run.rs"]
mod decoder_run;

const SEED: u64 = 7;
const STEPS: usize = 3;

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn settings() -> LoadSettings {
    LoadSettings { exec_timeout: Duration::from_secs(120), ..LoadSettings::default() }
}

/// Runs `spec` twice on one simulated device; checks both runs against
/// the reference and each other, every rank against rank 0.
fn check(spec: TpDecoderSpec) {
    let host = ModelHost::with_lnc(sim(), spec.lnc as u32, settings()).expect("host");
    check_on(std::slice::from_ref(&host), spec);
}

/// [`check`] with the ranks over `hosts` (one per device of an instance,
/// rank r on its r-th logical core).
fn check_on(hosts: &[ModelHost], spec: TpDecoderSpec) {
    let prefill: Vec<Vec<u8>> = (0..spec.ranks).map(|_| tp_decoder_neff(&spec, Phase::Prefill).unwrap()).collect();
    let decode: Vec<Vec<u8>> = (0..spec.ranks).map(|_| tp_decoder_neff(&spec, Phase::Decode).unwrap()).collect();
    let job = decoder_run::DecoderJob { spec, seed: SEED, prefill: &prefill, decode: &decode, steps: STEPS, peer_timeout: Duration::from_secs(60) };
    let first = decoder_run::run(hosts, &job).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let want = expected(&spec, &DecoderWeights::generate(&spec, SEED), SEED, STEPS);
    for (r, rank) in first.iter().enumerate() {
        assert_eq!(rank.hidden.len(), 1 + STEPS);
        for (i, (got, want)) in rank.hidden.iter().zip(&want).enumerate() {
            let d = deviation(want, &f32s(got));
            assert_eq!(d.outside, 0, "{spec:?} rank {r} execution {i}: {d:?}");
        }
        assert_eq!(rank.hidden, first[0].hidden, "{spec:?}: rank {r} differs from rank 0");
    }
    let second = decoder_run::run(hosts, &job).unwrap_or_else(|e| panic!("{spec:?} again: {e}"));
    assert_eq!(second[0].hidden, first[0].hidden, "{spec:?}: a second run differs");
    for h in hosts {
        h.close().unwrap();
    }
}

#[test]
fn decoder_on_one_rank_lnc1() {
    check(TpDecoderSpec::new(1, 4, 1));
}

#[test]
fn decoder_on_one_rank_lnc2() {
    check(TpDecoderSpec::new(1, 4, 2));
}

/// TP 2, 4 and 8 at LNC 1 and TP 2 and 4 at LNC 2 on one simulated trn2
/// device (8 physical cores; TP 8 at LNC 2 needs two, below): 4 layers, so 8 all-reduces per NEFF, the
/// prefill and decode NEFFs of each rank loaded on the same core and
/// executed alternately (a prefill, 3 decode steps, then again).
#[test]
fn decoder_tp2_lnc1() {
    check(TpDecoderSpec::new(2, 4, 1));
}

#[test]
fn decoder_tp4_lnc1() {
    check(TpDecoderSpec::new(4, 4, 1));
}

#[test]
fn decoder_tp8_lnc1() {
    check(TpDecoderSpec::new(8, 4, 1));
}

#[test]
fn decoder_tp2_lnc2() {
    check(TpDecoderSpec::new(2, 4, 2));
}

#[test]
fn decoder_tp4_lnc2() {
    check(TpDecoderSpec::new(4, 4, 2));
}

/// TP 8 at LNC 2 (16 physical cores: two simulated trn2 devices, ranks
/// 0-3 on the first, 4-7 on the second): every ring of both channels
/// crosses between the devices twice, through the peer window.
#[test]
fn decoder_tp8_lnc2_on_two_devices() {
    let (_, hosts) = instance(nrt_hal::Arch::Trn2, 2, 2, settings());
    check_on(&hosts, TpDecoderSpec::new(8, 4, 2));
}
