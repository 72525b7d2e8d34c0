//! `nrt gen matmul` and `nrt gen tp-mlp`: write NEFFs in the compiler's
//! encoding (crates/nrt-gen), so test models can be made without the compiler.

use anyhow::{Context, Result, bail};
use nrt_gen::{MatmulSpec, Split, matmul_neff};
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
    let spec = MatmulSpec { m: a.m, k: a.k, n: a.n, dtype, lnc: a.lnc, split };
    let bytes = matmul_neff(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::write(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    println!("wrote {} ({} bytes): x [{}, {}] @ y [{}, {}] -> output0 [{}, {}], {}, LNC {}", out.display(), bytes.len(), a.m, a.k, a.k, a.n, a.m, a.n, dtype.name(), a.lnc);
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
