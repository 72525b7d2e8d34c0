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

/// Runs the `ranks` models under `dir` once; writes each rank's outputs to
/// `output_dir/rankR/NAME.npy` when given.
pub fn run(dir: &Path, ranks: usize, given: &[(String, PathBuf)], output_dir: Option<&Path>) -> Result<()> {
    if ranks == 0 || ranks > 64 {
        bail!("--ranks {ranks}: expected 1..=64");
    }
    let neffs: Vec<Vec<u8>> = (0..ranks).map(|r| rank_path(dir, r).and_then(|p| model_io::neff_bytes(&p))).collect::<Result<_>>()?;
    for (r, n) in neffs.iter().enumerate() {
        let lnc = nrt_neff::NeffHeader::parse(n).with_context(|| format!("rank {r}: reading the NEFF header"))?.lnc_size.max(1);
        if lnc != 1 {
            bail!("rank {r}: the NEFF asks for logical cores of {lnc} physical cores; collectives NEFFs run on LNC 1");
        }
    }
    // The runtime libnrt.so's nrt_init brings up (visible cores,
    // reservations), at LNC 1 unless the environment says otherwise.
    let rt = model_io::start_runtime(Some(1), &[])?;
    let ran = run_on(&rt, &neffs, ranks, given, output_dir);
    let closed = rt.close().map_err(|e| anyhow!("close: {e}"));
    ran.and(closed)
}

fn run_on(rt: &RuntimeHosts, neffs: &[Vec<u8>], ranks: usize, given: &[(String, PathBuf)], output_dir: Option<&Path>) -> Result<()> {
    let timeout = rt.rt.config().collectives.net_timeout;
    let Some(places) = crate::decoder_run::placement(&rt.hosts, ranks) else {
        let visible: usize = rt.hosts.iter().map(|h| h.vcores().len()).sum();
        bail!("{visible} logical cores of the simulated instance are visible; --ranks {ranks} needs one per rank (NEURON_SIM_INSTANCE, NEURON_RT_VISIBLE_CORES)");
    };
    let results: Vec<Result<RankRun>> = std::thread::scope(|s| {
        let hs: Vec<_> = neffs
            .iter()
            .zip(places)
            .enumerate()
            .map(|(r, (neff, (host, vnc)))| {
                let me = CcRank::local(r as u32, ranks as u32, timeout);
                s.spawn(move || run_rank(host, vnc, neff, me, given))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(anyhow!("the rank thread panicked")))).collect()
    });
    let mut runs = Vec::new();
    for (r, res) in results.into_iter().enumerate() {
        runs.push(res.with_context(|| format!("rank {r}"))?);
    }
    for (r, run) in runs.iter().enumerate() {
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
    let same = runs.windows(2).all(|w| w[0].outputs.iter().map(|o| &o.1).eq(w[1].outputs.iter().map(|o| &o.1)));
    println!("{} ranks: outputs {}", ranks, if same { "identical on every rank" } else { "differ between ranks" });
    Ok(())
}
