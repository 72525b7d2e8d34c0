//! The generated members of `examples/custom_ops`: the two argument
//! blocks (576 bytes each, `docs/gpsimd.md` §5), the stock library file
//! and the example kernel library built from
//! `crates/nrt-kernel/kernels/examples` with the real wasm toolchain.
//!
//! The runtime's integration tests include this file too (`#[path]`), so
//! the NEFF they run is the one `nrt run examples/custom_ops` runs.

use nrt_isa::ucode::{ArgBlock, ArgKind, ArgLocation, ArgTensor, isa_dtype, stock_library};
use std::path::{Path, PathBuf};

/// Rows of x, y and z (one per SBUF partition).
pub const ROWS: u32 = 128;
/// Columns of x, y and z.
pub const COLS: u32 = 512;
/// SBUF byte offset of x on every partition.
pub const SBUF_X: u32 = 0x0;
/// SBUF byte offset of y = relu(x).
pub const SBUF_Y: u32 = 0x800;
/// SBUF byte offset of z = softmax(x) (row-wise).
pub const SBUF_Z: u32 = 0x1000;
/// Member names of the generated files, relative to the example.
pub const ARGS_RELU: &str = "sg00/args_relu.bin";
/// Softmax's argument block member.
pub const ARGS_SOFTMAX: &str = "sg00/args_softmax.bin";
/// The stock library member (the NEFF's base library).
pub const STOCK_LIB: &str = "sg00/stock.ucpl";
/// The example kernel library member (relu, add, softmax).
pub const KERNELS_LIB: &str = "sg00/examples.ucpl";

/// An fp32 [ROWS, COLS] tensor in SBUF at `offset`, row `i` on partition `i`.
fn sbuf_tensor(offset: u32) -> ArgTensor {
    ArgTensor { location: ArgLocation::Sbuf { addr: offset, partitions: ROWS as u8, per_block: COLS }, dtype: isa_dtype::FP32, dims: vec![ROWS, COLS], shape4d: false }
}

/// The argument block of `op(x) -> out`.
pub fn unary_args(out_offset: u32) -> Vec<u8> {
    ArgBlock { args: vec![(ArgKind::Tensor, sbuf_tensor(SBUF_X))], dst: Some(sbuf_tensor(out_offset)) }.encode().to_vec()
}

/// The kernel crates of the SDK.
pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../nrt-kernel/kernels")
}

/// Where kernel crates are built: `$CARGO_TARGET_DIR/wasm-kernels`, else
/// the workspace's `target/wasm-kernels` (cargo caches there).
pub fn kernel_target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("wasm-kernels"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm-kernels"),
    }
}

/// The library file of the SDK's misbehaving kernels (`buggy`: kernel 0
/// `oob_write`, kernel 1 `spin`).
#[allow(dead_code)] // used by crates/nrt/tests/custom_ops_exec.rs, which includes this file
pub fn buggy_library(target_dir: &Path) -> Result<Vec<u8>, String> {
    let (lib, names) = nrt_sim::q7::build::build_library(&kernels_dir().join("buggy"), target_dir).map_err(|e| e.to_string())?;
    if names != ["oob_write", "spin"] {
        return Err(format!("the buggy kernel library exports {names:?}; expected oob_write, spin"));
    }
    Ok(lib.to_file())
}

/// Whether `dir` is the custom_ops example.
#[allow(dead_code)] // source_tree uses it; the nrt test that includes this file does not
pub fn is_custom_ops(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "custom_ops") && dir.join("sg00/def.json").is_file()
}

/// The members `nrt run`, `nrt neff pack` (via `nrt example-data`) and the
/// tests add to the custom_ops example. The kernel library is built with
/// cargo into `target_dir` (slow the first time, cached afterwards).
pub fn members(target_dir: &Path) -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    let (lib, names) = nrt_sim::q7::build::build_library(&kernels_dir().join("examples"), target_dir).map_err(|e| e.to_string())?;
    if names.first().map(String::as_str) != Some("relu") || names.get(2).map(String::as_str) != Some("softmax") {
        return Err(format!("the example kernel library exports {names:?}; expected relu, add, softmax"));
    }
    Ok(vec![
        (ARGS_RELU, unary_args(SBUF_Y)),
        (ARGS_SOFTMAX, unary_args(SBUF_Z)),
        (STOCK_LIB, stock_library().to_file()),
        (KERNELS_LIB, lib.to_file()),
    ])
}

/// relu of every element.
#[allow(dead_code)] // used by crates/nrt/tests/custom_ops_exec.rs, which includes this file
pub fn relu_reference(x: &[f32]) -> Vec<f32> {
    x.iter().map(|v| v.max(0.0)).collect()
}

/// Row-wise softmax of a [rows, cols] matrix (f64 accumulation).
#[allow(dead_code)] // used by crates/nrt/tests/custom_ops_exec.rs, which includes this file
pub fn softmax_reference(x: &[f32], cols: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        let sum: f64 = row.iter().map(|&v| f64::from(v - max).exp()).sum();
        out.extend(row.iter().map(|&v| (f64::from(v - max).exp() / sum) as f32));
    }
    out
}
