//! Runs a tp-decoder (crates/nrt-gen/src/tp_decoder) as an inference
//! server does: every rank loads its prefill and its decode NEFF on its
//! own logical core (`nrt_load_collectives`, rank `r` of the world; rank
//! `r` on the `r`-th logical core of the instance, counting the devices'
//! model hosts in order, so a world larger than a device spans several
//! and its ring steps between them are device-to-device DMA), binds
//! one set of device tensors to both (its weight shards, written once, and
//! the KV caches the executions update in place), then executes the
//! prefill once and the decode NEFF once per generated token, from its
//! own thread. Sequence `b` of the batch (one per physical core of the
//! logical core) reads token embeddings drawn from the seed.
//!
//! Shared by `nrt run --ranks N DIR` and the runtime's integration tests
//! (crates/nrt/tests/tp_mlp.rs includes this file), so both run the model
//! the same way; it depends on nothing of the command's.

use nrt::cc::neff::CcRank;
use nrt::load::ModelHost;
use nrt::tensor::{Tensor, TensorSet};
use nrt_gen::tp_decoder::weights::{DecoderWeights, decode_input, prefill_input};
use nrt_gen::tp_decoder::{Phase, TpDecoderSpec, names};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One rank's results: `hidden` of the prefill, then of each decode step
/// (raw little-endian fp32 bytes, [batch, tokens, d_model]), and each
/// execution's wall time.
#[derive(Clone, Debug, Default)]
pub struct RankOutputs {
    /// `hidden` per execution, prefill first.
    pub hidden: Vec<Vec<u8>>,
    /// Wall time of each `execute` call.
    pub elapsed: Vec<Duration>,
}

/// What to run: the spec and weight seed (`decoder.json`), each rank's
/// prefill and decode NEFF, and how many decode steps follow the prefill.
pub struct DecoderJob<'a> {
    /// The model's shape.
    pub spec: TpDecoderSpec,
    /// The seed of the weights and token embeddings.
    pub seed: u64,
    /// Each rank's prefill NEFF.
    pub prefill: &'a [Vec<u8>],
    /// Each rank's decode NEFF.
    pub decode: &'a [Vec<u8>],
    /// Decode steps after the prefill (at most `context - prompt`).
    pub steps: usize,
    /// The bound on the load-time wait for the other ranks.
    pub peer_timeout: Duration,
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A device tensor on `core` holding `bytes` (zeros when `bytes` is empty).
fn device_tensor(host: &ModelHost, core: nrt_hal::CoreId, name: &str, size: u64, bytes: &[u8]) -> Result<Arc<Tensor>, String> {
    let t = Tensor::allocate_device(host.memory(), core, size, name).map_err(|e| format!("allocating {name:?} ({size} bytes): {e}"))?;
    if !bytes.is_empty() {
        t.write(0, bytes).map_err(|e| format!("writing {name:?}: {e}"))?;
    }
    Ok(Arc::new(t))
}

fn execute(host: &ModelHost, model: u32, ins: &TensorSet, out: &Arc<Tensor>, what: &str, run: &mut RankOutputs) -> Result<(), String> {
    let mut outs = TensorSet::new();
    outs.add(names::HIDDEN, out.clone());
    let start = Instant::now();
    host.execute(model, ins, &outs).map_err(|e| format!("{what}: execute: {e}"))?;
    run.elapsed.push(start.elapsed());
    let mut buf = vec![0u8; out.size() as usize];
    out.read(0, &mut buf).map_err(|e| format!("{what}: reading hidden: {e}"))?;
    run.hidden.push(buf);
    Ok(())
}

/// Where each of `ranks` ranks runs: rank `r` on the `r`-th logical core
/// of the instance, counting `hosts` (one per device) in order, as the
/// host and its logical core; `None` when the hosts have fewer.
pub fn placement(hosts: &[ModelHost], ranks: usize) -> Option<Vec<(&ModelHost, usize)>> {
    let all: Vec<(&ModelHost, usize)> = hosts.iter().flat_map(|h| (0..h.vcores().len()).map(move |v| (h, v))).take(ranks).collect();
    (all.len() == ranks).then_some(all)
}

/// Rank `me.rank`'s part on logical core `vnc`: load both NEFFs, bind,
/// prefill, decode, unload. With `me` from `CcRank::of`, the rank's peers
/// may run in other processes (one rank per process, as torchrun runs
/// them).
pub fn run_rank_as(host: &ModelHost, job: &DecoderJob<'_>, weights: &DecoderWeights, me: &CcRank, vnc: usize) -> Result<RankOutputs, String> {
    let s = &job.spec;
    let rank = me.rank as usize;
    let core = *host.vcores().get(vnc).and_then(|v| v.first()).ok_or_else(|| format!("no logical core {vnc}"))?;
    let prefill = host.load_collectives(&job.prefill[rank], vnc as i32, -1, me).map_err(|e| format!("loading the prefill NEFF: {e}"))?;
    let decode = match host.load_collectives(&job.decode[rank], vnc as i32, -1, me) {
        Ok(m) => m,
        Err(e) => {
            let _ = host.unload(prefill);
            return Err(format!("loading the decode NEFF: {e}"));
        }
    };
    let result = (|| -> Result<RankOutputs, String> {
        // One tensor per weight and cache name, bound to both models.
        let mut shared = Vec::new();
        for (name, _, values) in weights.rank_inputs(s, rank).map_err(|e| e.to_string())? {
            let bytes = f32_bytes(&values);
            shared.push((name.clone(), device_tensor(host, core, &name, bytes.len() as u64, &bytes)?));
        }
        let (sigs, _) = s.signatures(Phase::Decode);
        for name in names::CACHES {
            let sig = sigs.iter().find(|t| t.name == name).ok_or_else(|| format!("no {name} input"))?;
            let size = sig.shape.iter().product::<u64>() * 4;
            shared.push((name.to_string(), device_tensor(host, core, name, size, &[])?));
        }
        let bind = |x: &[f32], position: Option<usize>| {
            let mut set = TensorSet::new();
            set.add(names::X, Arc::new(Tensor::from_host_bytes(f32_bytes(x), names::X)));
            if let Some(p) = position {
                let pos: Vec<u8> = (0..s.batch()).flat_map(|_| (p as i32).to_le_bytes()).collect();
                set.add(names::POSITION, Arc::new(Tensor::from_host_bytes(pos, names::POSITION)));
            }
            for (name, t) in &shared {
                set.add(name, t.clone());
            }
            set
        };
        let mut run = RankOutputs::default();
        let d = s.d_model as u64;
        let out = Arc::new(Tensor::allocate_host(s.batch() as u64 * s.prompt as u64 * d * 4, names::HIDDEN).map_err(|e| e.to_string())?);
        execute(host, prefill, &bind(&prefill_input(s, job.seed), None), &out, "prefill", &mut run)?;
        let out = Arc::new(Tensor::allocate_host(s.batch() as u64 * d * 4, names::HIDDEN).map_err(|e| e.to_string())?);
        for step in 0..job.steps {
            let p = s.prompt + step;
            execute(host, decode, &bind(&decode_input(s, job.seed, p), Some(p)), &out, &format!("decode step {step} (position {p})"), &mut run)?;
        }
        Ok(run)
    })();
    let unloaded = host.unload(decode).and(host.unload(prefill)).map_err(|e| format!("unload: {e}"));
    let run = result?;
    unloaded?;
    Ok(run)
}

/// Runs every rank from its own thread, rank `r` as [`placement`] puts
/// it over `hosts` (one per device of the instance); each rank's outputs,
/// by rank.
pub fn run(hosts: &[ModelHost], job: &DecoderJob<'_>) -> Result<Vec<RankOutputs>, String> {
    let me: Vec<CcRank> = (0..job.spec.ranks).map(|r| CcRank::local(r as u32, job.spec.ranks as u32, job.peer_timeout)).collect();
    run_as(hosts, job, &me)
}

/// Runs this process's ranks `me` (with `CcRank::of`, their peers may run
/// in other processes, as `nrt run --ranks N --processes P` splits them)
/// from their own thread each, the i-th on the i-th logical core of
/// `hosts` ([`placement`]); each rank's outputs, in `me`'s order.
pub fn run_as(hosts: &[ModelHost], job: &DecoderJob<'_>, me: &[CcRank]) -> Result<Vec<RankOutputs>, String> {
    let s = &job.spec;
    s.validate().map_err(|e| e.to_string())?;
    if job.prefill.len() != s.ranks || job.decode.len() != s.ranks {
        return Err(format!("{} ranks need {0} prefill and {0} decode NEFFs; got {} and {}", s.ranks, job.prefill.len(), job.decode.len()));
    }
    if job.steps > s.context - s.prompt {
        return Err(format!("{} decode steps after a {}-token prompt overrun the {}-position cache", job.steps, s.prompt, s.context));
    }
    let places = placement(hosts, me.len()).ok_or_else(|| {
        let visible: usize = hosts.iter().map(|h| h.vcores().len()).sum();
        format!("{visible} logical cores are visible on {} device(s); {} ranks need one each", hosts.len(), me.len())
    })?;
    let weights = DecoderWeights::generate(s, job.seed);
    let results: Vec<Result<RankOutputs, String>> = std::thread::scope(|scope| {
        let hs: Vec<_> = places.into_iter().zip(me).map(|((host, vnc), me)| (me.rank, scope.spawn({
            let weights = &weights;
            move || run_rank_as(host, job, weights, me, vnc)
        }))).collect();
        hs.into_iter().map(|(r, h)| h.join().unwrap_or_else(|_| Err("the rank thread panicked".into())).map_err(|e| format!("rank {r}: {e}"))).collect()
    });
    results.into_iter().collect()
}
