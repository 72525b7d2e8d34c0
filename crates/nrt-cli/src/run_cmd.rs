//! `nrt run`: load a NEFF (or a source tree) on the simulated device,
//! execute it once, write every output as NAME.npy and print checksums.

use crate::model_io::{self, Loaded};
use anyhow::{Context, Result, anyhow};
use nrt::tensor::{Tensor, TensorSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Runs `path` once with `inputs` (NAME=PATH pairs; the rest pseudo-random)
/// and writes the outputs into `output_dir` when given.
pub fn run(path: &Path, inputs: &[(String, PathBuf)], output_dir: Option<&Path>, profile_dir: Option<&Path>) -> Result<()> {
    let bytes = model_io::neff_bytes(path)?;
    let loaded = Loaded::with_profile(&bytes, profile_dir)?;
    let data = model_io::input_bytes(&loaded.inputs, inputs)?;
    let mut ins = TensorSet::new();
    for (sig, d) in loaded.inputs.iter().zip(data) {
        let how = if inputs.iter().any(|(n, _)| n == &sig.name) { "from file" } else { "pseudo-random" };
        println!("input  {:<16} {:<9} {:?} {how} checksum {:016x}", sig.name, sig.dtype, sig.shape, model_io::checksum(&d));
        ins.add(&sig.name, Arc::new(Tensor::from_host_bytes(d, &sig.name)));
    }
    let mut outs = TensorSet::new();
    let mut out_tensors = Vec::new();
    for sig in &loaded.outputs {
        let t = Arc::new(Tensor::allocate_host(model_io::size_of(sig)? as u64, &sig.name).map_err(|e| anyhow!("{e}"))?);
        outs.add(&sig.name, t.clone());
        out_tensors.push(t);
    }
    let start = std::time::Instant::now();
    loaded.host.execute(loaded.id, &ins, &outs).map_err(|e| anyhow!("execute: {e}"))?;
    let elapsed = start.elapsed();
    if let Some(dir) = output_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for (sig, t) in loaded.outputs.iter().zip(&out_tensors) {
        let mut buf = vec![0u8; t.size() as usize];
        t.read(0, &mut buf).map_err(|e| anyhow!("reading output {:?}: {e}", sig.name))?;
        println!("output {:<16} {:<9} {:?} checksum {:016x}", sig.name, sig.dtype, sig.shape, model_io::checksum(&buf));
        if let Some(dir) = output_dir {
            let file = dir.join(format!("{}.npy", sig.name));
            let npy = nrt_neff::npy::encode_npy(&model_io::npy_descr(&sig.dtype), &sig.shape, &buf);
            std::fs::write(&file, npy).with_context(|| format!("writing {}", file.display()))?;
            println!("wrote  {}", file.display());
        }
    }
    println!("executed {} in {:.1} us", path.display(), elapsed.as_secs_f64() * 1e6);
    if profile_dir.is_some() {
        let model = loaded.host.models().get(loaded.id).ok_or_else(|| anyhow!("the model vanished before its profile was read"))?;
        let st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
        match st.profile.as_ref().and_then(|p| p.last()) {
            Some((file, trace)) => println!("profile {} ({} instructions)", file.display(), trace.events.len()),
            None => return Err(anyhow!("no device profile was written (see the log)")),
        }
    }
    loaded.close()
}
