//! `nrt gen matmul`, `nrt gen tp-mlp` and `nrt gen tp-decoder`: write
//! NEFFs in the compiler's encoding (crates/nrt-gen), so test models can be
//! made without the compiler.

use anyhow::{Context, Result, anyhow, bail};
use nrt_gen::{MatmulSpec, Prints, Split, matmul_neff};
use nrt_isa::dtype::Dtype;
use std::path::Path;

/// Parameters of `nrt gen matmul`.
pub struct MatmulArgs<'a> {
    /// Rows of x.
    pub m: usize,
    /// Contraction size.
    pub k: usize,
    /// Columns of y.
    pub n: usize,
    /// fp16, bf16 or fp32.
    pub dtype: &'a str,
    /// 1 or 2.
    pub lnc: usize,
    /// n or m.
    pub split: &'a str,
    /// Tensors to print from the device (`--print`): x, y, output0.
    pub prints: &'a [String],
}

/// Generates the matmul and writes it to `out`.
pub fn matmul(a: &MatmulArgs<'_>, out: &Path) -> Result<()> {
    let dtype = match Dtype::from_name(a.dtype) {
        Some(d @ (Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float32)) => d,
        _ => bail!("unknown --dtype {:?}, expected fp16, bf16 or fp32", a.dtype),
    };
    let split = match a.split {
        "n" | "N" => Split::N,
        "m" | "M" => Split::M,
        other => bail!("unknown --split {other:?}, expected n or m"),
    };
    let prints = Prints::of(a.prints).map_err(|e| anyhow!("--print: {e}"))?;
    let spec = MatmulSpec { m: a.m, k: a.k, n: a.n, dtype, lnc: a.lnc, split, prints };
    let bytes = matmul_neff(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::write(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    println!("wrote {} ({} bytes): x [{}, {}] @ y [{}, {}] -> output0 [{}, {}], {}, LNC {}", out.display(), bytes.len(), a.m, a.k, a.k, a.n, a.m, a.n, dtype.name(), a.lnc);
    if !a.prints.is_empty() {
        println!("prints {} tile by tile from the device (prefix NAME.rROW.cCOL): `nrt run` shows them, NEURON_RT_DEBUG_OUTPUT_DIR collects them", a.prints.join(", "));
    }
    Ok(())
}

/// Writes the tensor-parallel mlp's rank source trees under `out`.
pub fn tp_mlp(ranks: usize, constants: bool, out: &Path) -> Result<()> {
    for dir in crate::tp_mlp_data::write_trees(ranks, out, constants)? {
        println!("wrote {}", dir.display());
    }
    println!("run them with: nrt run --ranks {ranks} {}", out.display());
    Ok(())
}

/// Writes the NEFF `bytes` as a source tree at `dir` (replacing it): the
/// NEFF unpacked, each engine program as `.asm` text (checked to assemble
/// back to the same records) instead of its `.bin`.
pub fn write_source_tree(bytes: &[u8], dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    nrt_neff::unpack_to_dir(bytes, dir, &nrt_neff::ReadOptions::default()).with_context(|| format!("writing {}", dir.display()))?;
    for sg in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let sg = sg?.path();
        if !sg.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&sg).with_context(|| format!("reading {}", sg.display()))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "bin") {
                let records = std::fs::read(&path)?;
                let text = nrt_isa::asm::disassemble(&records).map_err(|e| anyhow!("{}: {e}", path.display()))?;
                let back = nrt_isa::asm::assemble(&text).map_err(|e| anyhow!("{}: the disassembly does not assemble: {e}", path.display()))?;
                if back != records {
                    bail!("{}: the disassembly does not assemble back to the same records", path.display());
                }
                std::fs::write(path.with_extension("asm"), text)?;
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// Parameters of `nrt gen tp-decoder`.
pub struct TpDecoderArgs {
    /// Tensor-parallel ranks.
    pub ranks: usize,
    /// Decoder layers.
    pub layers: usize,
    /// Physical cores per logical core (also the batch).
    pub lnc: usize,
    /// The seed of the weights and token embeddings.
    pub seed: u64,
    /// Also write `data/`: the weight shards and token inputs as `.npy`
    /// files (`nrt_gen::tp_decoder::weights::write_data`).
    pub data: bool,
}

/// Writes a tp-decoder tree under `out`: `decoder.json` (the shape and the
/// seed the runner draws weights and tokens from), `prefill/rankR` and
/// `decode/rankR` source trees; with `data`, `data/` as well.
pub fn tp_decoder(a: &TpDecoderArgs, out: &Path) -> Result<()> {
    use nrt_gen::tp_decoder::{Phase, TpDecoderSpec, tp_decoder_neff};
    let spec = TpDecoderSpec::new(a.ranks, a.layers, a.lnc);
    spec.validate().map_err(|e| anyhow!("{e}"))?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for phase in [Phase::Prefill, Phase::Decode] {
        let bytes = tp_decoder_neff(&spec, phase).map_err(|e| anyhow!("{} NEFF: {e}", phase.dir_name()))?;
        let set = out.join(phase.dir_name());
        if set.exists() {
            std::fs::remove_dir_all(&set).with_context(|| format!("clearing {}", set.display()))?;
        }
        // Every rank runs the same program; only the weights it binds differ.
        for rank in 0..a.ranks {
            write_source_tree(&bytes, &set.join(format!("rank{rank}")))?;
        }
        println!("wrote {}/rank0..rank{} ({} collectives per NEFF)", set.display(), a.ranks - 1, if a.ranks > 1 { 2 * a.layers } else { 0 });
    }
    let desc = out.join(crate::decoder_cmd::DESCRIPTION);
    std::fs::write(&desc, serde_json::to_string_pretty(&spec.to_json(a.seed))? + "\n").with_context(|| format!("writing {}", desc.display()))?;
    println!("wrote {}", desc.display());
    if a.data {
        let data = out.join("data");
        nrt_gen::tp_decoder::weights::write_data(&spec, a.seed, crate::decoder_cmd::DECODE_STEPS, &data).with_context(|| format!("writing {}", data.display()))?;
        println!("wrote {}/rank0..rank{}/*.npy, x_prefill.npy, x_decode.npy ({} decode steps)", data.display(), a.ranks - 1, crate::decoder_cmd::DECODE_STEPS);
    }
    println!("run it with: nrt run --ranks {} {}", a.ranks, out.display());
    Ok(())
}
