//! `nrt run --ranks N DIR`: a set of NEFFs with in-NEFF collectives, one
//! per rank (`DIR/rank0`, `DIR/rank1`, ... as source trees or `.neff`
//! files), each loaded with `nrt_load_collectives` as its rank on its own
//! logical core (rank r on the instance's r-th, `decoder_run::placement`)
//! from its own thread, as a framework's rank processes would; executed
//! once with the same inputs on every rank.

use crate::model_io;
use anyhow::{Context, Result, anyhow, bail};
use nrt::cc::neff::CcRank;
use nrt::RuntimeHosts;
use nrt::load::ModelHost;
use nrt::tensor::{Tensor, TensorSet};
use nrt_neff::TensorSignature;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Rank `r`'s model under `dir`: the tree `rankR/` or the file `rankR.neff`.
pub fn rank_path(dir: &Path, r: usize) -> Result<PathBuf> {
    let tree = dir.join(format!("rank{r}"));
    let file = dir.join(format!("rank{r}.neff"));
    match (tree.is_dir(), file.is_file()) {
        (true, _) => Ok(tree),
        (false, true) => Ok(file),
        _ => bail!("{} has no rank{r}/ source tree or rank{r}.neff: --ranks expects one model per rank", dir.display()),
    }
}

/// Why this process sees `visible` logical cores of `rt` when `needed`
/// ranks are to run in it, one per logical core: what limits them (the
/// simulated instance, the runtime's logical-core size and visible cores,
/// as nrt::config read them) and how to get more (`more`).
pub fn too_few_cores(rt: &nrt::Runtime, needed: usize, visible: usize, more: &str) -> String {
    let instance = std::env::var("NEURON_SIM_INSTANCE")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .map_or_else(|| "the default instance, one trn2 device of 8 physical cores".to_string(), |v| format!("NEURON_SIM_INSTANCE={v}"));
    let lnc = rt.topology().lnc();
    let visible_cores = rt.config().visible_cores.as_ref().map_or_else(String::new, |v| format!(", NEURON_RT_VISIBLE_CORES={}", v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")));
    format!("{needed} rank(s) in this process need one logical core each and {visible} are visible ({instance}, LNC {lnc}{visible_cores}); {more}")
}

/// What one rank's thread brings back.
struct RankRun {
    inputs: Vec<(TensorSignature, Vec<u8>)>,
    outputs: Vec<(TensorSignature, Vec<u8>)>,
    elapsed: Duration,
}

fn run_rank(host: &ModelHost, vnc: usize, neff: &[u8], me: CcRank, given: &[(String, PathBuf)]) -> Result<RankRun> {
    let id = host.load_collectives(neff, vnc as i32, -1, &me).map_err(|e| anyhow!("load: {e}"))?;
    let result = (|| {
        let (sigs_in, sigs_out) = host.tensor_info(id).map_err(|e| anyhow!("tensor info: {e}"))?;
        let data = model_io::input_bytes(&sigs_in, given)?;
        let mut ins = TensorSet::new();
        for (sig, bytes) in sigs_in.iter().zip(&data) {
            ins.add(&sig.name, Arc::new(Tensor::from_host_bytes(bytes.clone(), &sig.name)));
        }
        let mut outs = TensorSet::new();
        let mut out_tensors = Vec::new();
        for sig in &sigs_out {
            let t = Arc::new(Tensor::allocate_host(model_io::size_of(sig)? as u64, &sig.name).map_err(|e| anyhow!("allocating {:?}: {e}", sig.name))?);
            outs.add(&sig.name, t.clone());
            out_tensors.push(t);
        }
        let start = std::time::Instant::now();
        host.execute(id, &ins, &outs).map_err(|e| anyhow!("execute: {e}"))?;
        let elapsed = start.elapsed();
        let mut outputs = Vec::new();
        for (sig, t) in sigs_out.iter().zip(&out_tensors) {
            let mut buf = nrt::host_memory::zeroed(t.size(), format_args!("output {:?}", sig.name)).map_err(|e| anyhow!("{}", e.message))?;
            t.read(0, &mut buf).map_err(|e| anyhow!("reading output {:?}: {e}", sig.name))?;
            outputs.push((sig.clone(), buf));
        }
        Ok(RankRun { inputs: sigs_in.into_iter().zip(data).collect(), outputs, elapsed })
    })();
    host.unload(id).map_err(|e| anyhow!("unload: {e}"))?;
    result
}

/// The variable that makes `nrt run --ranks N --processes P` a worker:
/// its process index.
pub const WORKER_VAR: &str = "NRT_RUN_RANKS_WORKER";

/// How many rank models `dir` holds (`rank0/` or `rank0.neff`, then
/// `rank1`, ... without a gap): what `--ranks` should say.
pub fn rank_count(dir: &Path) -> usize {
    (0..).take_while(|r| rank_path(dir, *r).is_ok()).count()
}

/// Runs the `ranks` models under `dir` once, in this process or split
/// over `processes` processes; writes each rank's outputs to
/// `output_dir/rankR/NAME.npy` when given.
pub fn run(dir: &Path, ranks: usize, processes: usize, given: &[(String, PathBuf)], output_dir: Option<&Path>) -> Result<()> {
    if ranks == 0 || ranks > 64 {
        bail!("--ranks {ranks}: expected 1..=64");
    }
    check_split(ranks, processes)?;
    let worker = crate::local_workers::index(WORKER_VAR, processes)?;
    if processes > 1 && worker.is_none() {
        for r in 0..ranks {
            rank_path(dir, r)?;
        }
        return launch(ranks, processes, output_checksum).map(|_| ());
    }
    let per = ranks / processes;
    let first = worker.unwrap_or(0) * per;
    let gids: Vec<usize> = (first..first + per).collect();
    let neffs: Vec<Vec<u8>> = gids.iter().map(|&r| rank_path(dir, r).and_then(|p| model_io::neff_bytes(&p))).collect::<Result<_>>()?;
    // Every rank at the logical-core size its NEFF was compiled for (one
    // subgraph per physical core: LNC 2 runs a ring per physical core).
    let mut lnc = None;
    for (&r, n) in gids.iter().zip(&neffs) {
        let l = nrt_neff::NeffHeader::parse(n).with_context(|| format!("rank {r}: reading the NEFF header"))?.lnc_size.max(1);
        match lnc {
            Some((first, was)) if was != l => bail!("rank {r}: the NEFF asks for logical cores of {l} physical cores but rank {first}'s for {was}; every rank of a world runs at one LNC"),
            Some(_) => {}
            None => lnc = Some((r, l)),
        }
    }
    // The runtime libnrt.so's nrt_init brings up (visible cores,
    // reservations), at the NEFFs' LNC unless the environment says
    // otherwise.
    let rt = model_io::start_runtime(Some(lnc.map_or(1, |l| l.1)), &[])?;
    let ran = run_on(&rt, &neffs, &gids, ranks, worker.is_some(), given, output_dir);
    let closed = rt.close().map_err(|e| anyhow!("close: {e}"));
    ran.and(closed)
}

/// `--ranks N` over `--processes P`: P divides N.
pub fn check_split(ranks: usize, processes: usize) -> Result<()> {
    if processes == 0 || !ranks.is_multiple_of(processes) {
        bail!("--processes {processes}: the {ranks} ranks must split evenly over the processes (--ranks a multiple of --processes)");
    }
    Ok(())
}

/// A worker's line of one of rank `R`'s outputs: `rank R output NAME …
/// checksum X` gives (R, X).
fn output_checksum(line: &str) -> Option<(usize, String)> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next().and_then(|r| r.parse::<usize>().ok()), words.next()) {
        (Some("rank"), Some(r), Some("output")) => Some((r, line.rsplit(' ').next()?.to_string())),
        _ => None,
    }
}

/// `--processes P`: runs the workers, prints their lines in rank order
/// and whether every rank's outputs are the same (by the checksums
/// `checksum` finds in their lines: (rank, checksum)); fails when a
/// worker failed. Whether the ranks' outputs are the same.
pub fn launch(ranks: usize, processes: usize, checksum: fn(&str) -> Option<(usize, String)>) -> Result<bool> {
    let finished = crate::local_workers::run(processes, ranks / processes, WORKER_VAR)?;
    let mut sums: Vec<Vec<String>> = vec![Vec::new(); ranks];
    for f in &finished {
        for line in f.stdout.lines() {
            println!("{line}");
            if let Some((r, sum)) = checksum(line)
                && r < ranks
            {
                sums[r].push(sum);
            }
        }
    }
    if let Some(f) = finished.iter().find(|f| !f.success) {
        bail!("worker process {} (ranks {}..{}) failed ({}); its error is above", f.index, f.index * ranks / processes, (f.index + 1) * ranks / processes - 1, f.status);
    }
    let same = sums.windows(2).all(|w| w[0] == w[1]);
    println!("{ranks} ranks in {processes} processes: outputs {}", if same { "identical on every rank" } else { "differ between ranks" });
    Ok(same)
}

/// Loads and runs rank `gids[v]` on logical core `v` of this process, one
/// thread each: ranks of a world that is all here wait for each other in
/// process; a worker's ranks register first and join the others at
/// NEURON_RT_ROOT_COMM_ID.
#[allow(clippy::too_many_arguments)]
fn run_on(rt: &RuntimeHosts, neffs: &[Vec<u8>], gids: &[usize], ranks: usize, worker: bool, given: &[(String, PathBuf)], output_dir: Option<&Path>) -> Result<()> {
    let timeout = rt.rt.config().collectives.net_timeout;
    let Some(places) = crate::decoder_run::placement(&rt.hosts, gids.len()) else {
        let visible: usize = rt.hosts.iter().map(|h| h.vcores().len()).sum();
        bail!("--ranks {ranks}: {}", too_few_cores(&rt.rt, gids.len(), visible, "--processes P splits them over P processes"));
    };
    let me: Vec<CcRank> = if worker {
        for (v, &g) in gids.iter().enumerate() {
            rt.rt.collectives().register_rank(g as u32, v as u32, ranks as u32).map_err(|e| anyhow!("rank {g}: {e}"))?;
        }
        gids.iter().map(|&g| CcRank::of(&rt.rt, g as u32, ranks as u32).map_err(|e| anyhow!("rank {g}: {e}"))).collect::<Result<_>>()?
    } else {
        gids.iter().map(|&g| CcRank::local(g as u32, ranks as u32, timeout)).collect()
    };
    let results: Vec<Result<RankRun>> = std::thread::scope(|s| {
        let hs: Vec<_> = neffs
            .iter()
            .zip(places)
            .zip(me)
            .map(|((neff, (host, vnc)), me)| s.spawn(move || run_rank(host, vnc, neff, me, given)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("the rank thread panicked")))).collect()
    });
    let mut runs = Vec::new();
    for (&r, res) in gids.iter().zip(results) {
        runs.push(res.with_context(|| format!("rank {r}"))?);
    }
    for (&r, run) in gids.iter().zip(&runs) {
        for (sig, bytes) in &run.inputs {
            println!("rank {r} input  {:<12} {:<9} {:?} checksum {:016x}", sig.name, sig.dtype, sig.shape, model_io::checksum(bytes));
        }
        for (sig, bytes) in &run.outputs {
            println!("rank {r} output {:<12} {:<9} {:?} checksum {:016x}", sig.name, sig.dtype, sig.shape, model_io::checksum(bytes));
            if let Some(out) = output_dir {
                let d = out.join(format!("rank{r}"));
                std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
                let path = d.join(format!("{}.npy", sig.name));
                std::fs::write(&path, nrt_neff::npy::encode_npy(&model_io::npy_descr(&sig.dtype), &sig.shape, bytes)).with_context(|| format!("writing {}", path.display()))?;
                println!("wrote  {}", path.display());
            }
        }
        println!("rank {r} executed in {:.1} us", run.elapsed.as_secs_f64() * 1e6);
    }
    if !worker {
        let same = runs.windows(2).all(|w| w[0].outputs.iter().map(|o| &o.1).eq(w[1].outputs.iter().map(|o| &o.1)));
        println!("{} ranks: outputs {}", ranks, if same { "identical on every rank" } else { "differ between ranks" });
    }
    Ok(())
}
