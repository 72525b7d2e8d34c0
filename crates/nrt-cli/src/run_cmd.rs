//! `nrt run`: load a NEFF (or a source tree) on the simulated device,
//! execute it once, write every output as NAME.npy and print checksums,
//! and show what the model printed from the device (its debug stream)
//! unless NEURON_RT_DEBUG_OUTPUT_DIR has the runtime write it to files.

use crate::example_data;
use crate::model_io::{self, Loaded};
use anyhow::{Context, Result, anyhow};
use nrt::tensor::{Tensor, TensorSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The world size a NEFF's collectives need (def.json's
/// `#rank_world_size`; the largest of its subgraphs), if it has any.
fn collectives_world(bytes: &[u8]) -> Option<u32> {
    let neff = nrt_neff::Neff::parse(bytes).ok()?;
    neff.subgraphs.iter().filter_map(|sg| nrt_neff::cc::CcConfig::from_def(&sg.def).ok()).map(|c| c.world_size).max()
}

/// Runs `path` once with `inputs` (NAME=PATH pairs; the rest pseudo-random)
/// and writes the outputs into `output_dir` when given.
pub fn run(path: &Path, inputs: &[(String, PathBuf)], output_dir: Option<&Path>, profile_dir: Option<&Path>) -> Result<()> {
    let ranks = crate::run_ranks::rank_count(path);
    if ranks > 0 {
        anyhow::bail!("{} holds one model per rank (rank0 .. rank{}): run them together with `nrt run --ranks {ranks} {}`", path.display(), ranks - 1, path.display());
    }
    let bytes = model_io::neff_bytes(path)?;
    let loaded = Loaded::with_profile(&bytes, path, profile_dir).map_err(|e| match collectives_world(&bytes) {
        Some(n) if n > 1 => anyhow!("{e:#}; {} is one rank of a world of {n} collectives ranks: run every rank's model together with `nrt run --ranks {n} DIR` (DIR holding rank0 .. rank{})", path.display(), n - 1),
        _ => e,
    })?;
    drop(bytes);
    model_io::check_input_names(&loaded.inputs, inputs)?;
    println!("model  on {}", loaded.placement()?);
    // Inputs and outputs live in device memory of the model's core, as a
    // framework's tensors would: execute binds them in place, and files
    // stream in and out a chunk at a time, so a tensor of several GiB is
    // in host memory once (its device pages), never whole in a buffer.
    let model = loaded.host().models().get(loaded.id).ok_or_else(|| anyhow!("the model vanished after its load"))?;
    let core = *loaded
        .host()
        .vcores()
        .get(model.vnc as usize)
        .and_then(|v| v.first())
        .ok_or_else(|| anyhow!("logical core {} of the model has no physical core", model.vnc))?;
    drop(model);
    let memory = loaded.host().memory().clone();
    let device = |sig: &nrt_neff::TensorSignature| -> Result<Arc<Tensor>> {
        let size = model_io::size_of(sig)? as u64;
        Tensor::allocate_device(&memory, core, size, &sig.name).map(Arc::new).map_err(|e| anyhow!("allocating {:?} ({size} bytes): {e}", sig.name))
    };
    let mut ins = TensorSet::new();
    for (i, sig) in loaded.inputs.iter().enumerate() {
        let t = device(sig)?;
        let write = |off: u64, chunk: &[u8]| t.write(off, chunk).map_err(|e| anyhow!("writing input {:?}: {e}", sig.name));
        let (how, sum) = match inputs.iter().rev().find(|(n, _)| n == &sig.name) {
            Some((_, file)) => ("from file", model_io::open_input_npy(sig, file)?.stream(write)?),
            None => {
                let d = example_data::pseudo_random_tensor(&sig.dtype, model_io::size_of(sig)?, 1 + i as u64);
                write(0, &d)?;
                ("pseudo-random", model_io::checksum(&d))
            }
        };
        println!("input  {:<16} {:<9} {:?} {how} checksum {sum:016x}", sig.name, sig.dtype, sig.shape);
        ins.add(&sig.name, t);
    }
    let mut outs = TensorSet::new();
    let mut out_tensors = Vec::new();
    for sig in &loaded.outputs {
        let t = device(sig)?;
        outs.add(&sig.name, t.clone());
        out_tensors.push(t);
    }
    // The model's device prints: this command is the stream's client,
    // unless the runtime's own consumer writes them to files.
    let lnc = loaded.lnc()?;
    let print_dir = loaded.rt.rt.config().debug_output_dir.clone();
    let stream = match &print_dir {
        None => Some(nrt::debug_stream::connect(lnc as i32).map_err(|e| anyhow!("debug stream: {e}"))?),
        Some(_) => None,
    };
    let start = std::time::Instant::now();
    let executed = loaded.host().execute(loaded.id, &ins, &outs).map_err(|e| anyhow!("execute: {e}"));
    let elapsed = start.elapsed();
    if let Some(c) = stream {
        let shown = show_prints(c);
        let _ = nrt::debug_stream::disconnect(c);
        shown?;
    }
    executed?;
    drop(ins);
    if let Some(dir) = output_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for (sig, t) in loaded.outputs.iter().zip(&out_tensors) {
        let mut file = match output_dir {
            Some(dir) => {
                let path = dir.join(format!("{}.npy", sig.name));
                let mut f = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
                f.write_all(&nrt_neff::npy::encode_npy_header(&model_io::npy_descr(&sig.dtype), &sig.shape))
                    .with_context(|| format!("writing {}", path.display()))?;
                Some((f, path))
            }
            None => None,
        };
        let size = t.size();
        let mut buf = vec![0u8; model_io::STREAM_CHUNK.min(size as usize)];
        let mut sum = model_io::Fnv::new();
        let mut off = 0u64;
        while off < size {
            let n = (size - off).min(buf.len() as u64) as usize;
            t.read(off, &mut buf[..n]).map_err(|e| anyhow!("reading output {:?}: {e}", sig.name))?;
            sum.update(&buf[..n]);
            if let Some((f, path)) = file.as_mut() {
                f.write_all(&buf[..n]).with_context(|| format!("writing {}", path.display()))?;
            }
            off += n as u64;
        }
        println!("output {:<16} {:<9} {:?} checksum {:016x}", sig.name, sig.dtype, sig.shape, sum.finish());
        if let Some((_, path)) = file {
            println!("wrote  {}", path.display());
        }
    }
    drop(outs);
    drop(out_tensors);
    println!("executed {} in {:.1} us", path.display(), elapsed.as_secs_f64() * 1e6);
    if let Some(dir) = print_dir {
        println!("device prints (if any) under {}/<prefix>/core_{lnc}/<iteration>/", dir.display());
    }
    if profile_dir.is_some() {
        let model = loaded.host().models().get(loaded.id).ok_or_else(|| anyhow!("the model vanished before its profile was read"))?;
        let st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
        match st.profile.as_ref().and_then(|p| p.last()) {
            Some((file, trace)) => println!("profile {} ({} instructions)", file.display(), trace.events.len()),
            None => return Err(anyhow!("no device profile was written (see the log)")),
        }
    }
    loaded.close()
}

/// Rows and values per row of a device print shown in full; larger tiles
/// show their corners.
const SHOWN: usize = 8;

/// Prints every event waiting on debug-stream connection `c`.
fn show_prints(c: nrt::debug_stream::Connection) -> Result<()> {
    while let Some(e) = nrt::debug_stream::read_one(c).map_err(|e| anyhow!("debug stream: {e}"))? {
        let engine = nrt_hal::EngineId::ALL.get(e.pipe as usize).map_or("?", |g| g.name());
        println!("print  {:<16} {:<9} {:?} core {} engine {engine}", e.prefix, e.dtype.name(), e.shape, e.logical_nc_id);
        let mut values = vec![0f32; e.data.len() / e.dtype.size_bytes().max(1)];
        if nrt_isa::dtype::bytes_to_f32(&e.data, e.dtype, &mut values).is_err() {
            println!("       ({} bytes of {})", e.data.len(), e.dtype.name());
            continue;
        }
        let cols = (e.shape.iter().skip(1).product::<u64>() as usize).max(1);
        let rows: Vec<&[f32]> = values.chunks(cols).collect();
        for (r, row) in rows.iter().enumerate() {
            if r == SHOWN && rows.len() > SHOWN + 1 {
                println!("       ... {} more rows", rows.len() - SHOWN - 1);
            }
            if r >= SHOWN && r + 1 < rows.len() {
                continue;
            }
            let mut cells: Vec<String> = row.iter().take(SHOWN).map(|v| format!("{v}")).collect();
            if row.len() > SHOWN {
                cells.push(format!("... ({} values)", row.len()));
            }
            println!("       [{}]", cells.join(", "));
        }
    }
    Ok(())
}
