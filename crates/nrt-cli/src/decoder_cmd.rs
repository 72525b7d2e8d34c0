//! `nrt run --ranks N DIR` on a tp-decoder tree (`nrt gen tp-decoder`):
//! DIR holds `decoder.json`, `prefill/rankR` and `decode/rankR`. Every
//! rank loads both NEFFs on its logical core and runs the prefill, then
//! [`DECODE_STEPS`] decode steps (`decoder_run`); the command prints each
//! execution's checksum per rank, whether the ranks agree, and how far
//! `hidden` is from the unsharded model in f64 against its worst-case
//! fp32 bound (`nrt_gen::tp_decoder::reference`). With `--processes P`
//! the ranks split over P worker processes (`crate::local_workers`, one
//! rank per process as torchrun runs them when P = N), which meet at
//! NEURON_RT_ROOT_COMM_ID; each worker checks its ranks against the
//! reference and the launcher whether all ranks agree.

use crate::decoder_run::{self, DecoderJob};
use crate::model_io;
use anyhow::{Context, Result, anyhow, bail};
use nrt::cc::neff::CcRank;
use nrt_gen::tp_decoder::reference::{deviation, expected};
use nrt_gen::tp_decoder::weights::DecoderWeights;
use nrt_gen::tp_decoder::{Phase, TpDecoderSpec};
use std::path::Path;

/// The file that marks a tp-decoder tree and describes its model.
pub const DESCRIPTION: &str = "decoder.json";

/// Decode steps after the prefill.
pub const DECODE_STEPS: usize = 4;

/// Whether `dir` is a tp-decoder tree.
pub fn is_decoder_tree(dir: &Path) -> bool {
    dir.join(DESCRIPTION).is_file()
}

/// The spec and seed `dir/decoder.json` describes.
pub fn read_description(dir: &Path) -> Result<(TpDecoderSpec, u64)> {
    let path = dir.join(DESCRIPTION);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    TpDecoderSpec::from_json(&v).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// A worker's line of rank `R`'s `hidden`: `rank R WHAT hidden checksum
/// X …` gives (R, X).
fn hidden_checksum(line: &str) -> Option<(usize, String)> {
    let rank = line.strip_prefix("rank ")?.split(' ').next()?.parse().ok()?;
    let (_, rest) = line.split_once(" hidden checksum ")?;
    Some((rank, rest.split(' ').next()?.to_string()))
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Runs the tree at `dir` over `ranks` ranks, in this process or split
/// over `processes`; `hidden` of every execution goes to
/// `output_dir/rankR/hidden_I.npy` (I = 0 the prefill) when given.
pub fn run(dir: &Path, ranks: usize, processes: usize, given: &[(String, std::path::PathBuf)], output_dir: Option<&Path>) -> Result<()> {
    let (spec, seed) = read_description(dir)?;
    if ranks != spec.ranks {
        bail!("--ranks {ranks}: {} describes a decoder sharded over {} ranks", dir.join(DESCRIPTION).display(), spec.ranks);
    }
    if let Some((name, _)) = given.first() {
        bail!("--input {name}: a tp-decoder run draws its tokens from the seed in {DESCRIPTION}; it takes no inputs");
    }
    crate::run_ranks::check_split(ranks, processes)?;
    let worker = crate::local_workers::index(crate::run_ranks::WORKER_VAR, processes)?;
    let neffs = |phase: Phase| -> Result<Vec<Vec<u8>>> {
        (0..ranks).map(|r| crate::run_ranks::rank_path(&dir.join(phase.dir_name()), r).and_then(|p| model_io::neff_bytes(&p))).collect()
    };
    let (prefill, decode) = (neffs(Phase::Prefill)?, neffs(Phase::Decode)?);
    if processes > 1 && worker.is_none() {
        // Each worker failed unless its ranks' outputs are within the bound.
        if !crate::run_ranks::launch(ranks, processes, hidden_checksum)? {
            bail!("the tp-decoder's outputs are wrong");
        }
        println!("reference: the unsharded decoder in f64; every output within its worst-case fp32 bound");
        return Ok(());
    }
    let per = ranks / processes;
    let gids: Vec<u32> = (0..per).map(|v| (worker.unwrap_or(0) * per + v) as u32).collect();
    let rt = model_io::start_runtime(Some(spec.lnc as u32), &[])?;
    let ran = (|| {
        let job = DecoderJob { spec, seed, prefill: &prefill, decode: &decode, steps: DECODE_STEPS, peer_timeout: rt.rt.config().collectives.net_timeout };
        if worker.is_none() {
            return decoder_run::run(&rt.hosts, &job).map_err(|e| anyhow!("{e}"));
        }
        // A worker's ranks register, then join the others at
        // NEURON_RT_ROOT_COMM_ID.
        for (v, &g) in gids.iter().enumerate() {
            rt.rt.collectives().register_rank(g, v as u32, ranks as u32).map_err(|e| anyhow!("rank {g}: {e}"))?;
        }
        let me: Vec<CcRank> = gids.iter().map(|&g| CcRank::of(&rt.rt, g, ranks as u32).map_err(|e| anyhow!("rank {g}: {e}"))).collect::<Result<_>>()?;
        decoder_run::run_as(&rt.hosts, &job, &me).map_err(|e| anyhow!("{e}"))
    })();
    let closed = rt.close().map_err(|e| anyhow!("close: {e}"));
    let runs = ran?;
    closed?;
    let want = expected(&spec, &DecoderWeights::generate(&spec, seed), seed, DECODE_STEPS);
    let mut outside = 0;
    for (&r, run) in gids.iter().zip(&runs) {
        for (i, (bytes, t)) in run.hidden.iter().zip(&run.elapsed).enumerate() {
            let what = if i == 0 { "prefill".to_string() } else { format!("decode {}", spec.prompt + i - 1) };
            let d = deviation(&want[i], &f32s(bytes));
            outside += d.outside;
            println!(
                "rank {r} {what:<10} hidden checksum {:016x}  max |diff| {:.2e} = {:.3} of the bound{}  {:.1} us",
                model_io::checksum(bytes),
                d.max_abs,
                d.max_of_bound,
                if d.outside > 0 { format!(" ({} OUTSIDE)", d.outside) } else { String::new() },
                t.as_secs_f64() * 1e6
            );
            if let Some(out) = output_dir {
                let dir = out.join(format!("rank{r}"));
                std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
                let tokens = if i == 0 { spec.prompt } else { 1 };
                let shape = [spec.batch() as u64, tokens as u64, spec.d_model as u64];
                let path = dir.join(format!("hidden_{i}.npy"));
                std::fs::write(&path, nrt_neff::npy::encode_npy("<f4", &shape, bytes)).with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    if worker.is_some() {
        // The launcher compares the ranks; this worker answers for its own.
        if outside > 0 {
            bail!("{outside} outputs of ranks {gids:?} OUTSIDE their worst-case fp32 bound");
        }
        return Ok(());
    }
    let same = runs.windows(2).all(|w| w[0].hidden == w[1].hidden);
    println!("{ranks} ranks: outputs {}", if same { "identical on every rank" } else { "differ between ranks" });
    println!(
        "reference: the unsharded decoder in f64; {}",
        if outside == 0 { "every output within its worst-case fp32 bound".to_string() } else { format!("{outside} outputs OUTSIDE their worst-case fp32 bound") }
    );
    if !same || outside > 0 {
        bail!("the tp-decoder's outputs are wrong");
    }
    Ok(())
}
