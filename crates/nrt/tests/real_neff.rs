//! The unmodified compiler NEFF (shared/data/neff/matmul_small.neff, x @ y
//! in fp16 on trn2, LNC 2) loaded through the runtime and executed on the
//! simulated device: its 0xD4 DMAs run as descriptor-ring work on the
//! issuing engines' dynamic queues, inputs and outputs are reached through
//! the DGE table per execution, and output0 must equal x @ y computed here
//! independently (fp32 accumulate, one fp16 rounding) within 1 fp16 ulp.

mod exec_support;

use exec_support::*;
use half::f16;
use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use nrt_sim::{SimConfig, SimDevice};
use std::sync::Arc;

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");
/// x is [M, K], y is [K, N] in the sample.
const M: usize = 128;
const K: usize = 256;
const N: usize = 128;

/// The compiler's sample NEFF; `None` (the calling test reported skipped)
/// when it cannot be read.
fn real() -> Option<Vec<u8>> {
    match std::fs::read(NEFF) {
        Ok(b) => Some(b),
        Err(e) => nrt_test_support::skip!(return None; "{NEFF} cannot be read ({e}; the compiler's sample lives beside the checkout)"),
    }
}

/// Random fp16 values in [-2, 2) from a seed.
fn random_f16(len: usize, seed: u64) -> Vec<f16> {
    data(len * 2, seed).chunks(2).map(|c| f16::from_f32((u16::from_le_bytes([c[0], c[1]]) as f32 / 65536.0) * 4.0 - 2.0)).collect()
}

fn f16_bytes(v: &[f16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// x @ y with fp32 accumulation and one rounding to fp16.
fn reference(x: &[f16], y: &[f16]) -> Vec<f16> {
    let mut out = vec![f16::ZERO; M * N];
    for m in 0..M {
        for n in 0..N {
            let acc: f32 = (0..K).map(|k| x[m * K + k].to_f32() * y[k * N + n].to_f32()).sum();
            out[m * N + n] = f16::from_f32(acc);
        }
    }
    out
}

/// Distance in fp16 units in the last place (same-sign ordering).
fn ulps(a: f16, b: f16) -> u32 {
    let key = |v: f16| {
        let bits = v.to_bits() as i32;
        if bits & 0x8000 != 0 { -(bits & 0x7FFF) } else { bits }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Asserts every element of `got` is within 1 fp16 ulp of `want` (x @ y,
/// fp32 sequential accumulation in ascending k, one rounding) and returns
/// the largest distance seen. The simulated PE accumulates each element in
/// exactly that order (nrt-sim's GEMM documents it), so the bound holds
/// even where the terms cancel.
fn check(got: &[f16], want: &[f16], what: &str) -> u32 {
    let mut worst = 0;
    for m in 0..M {
        for n in 0..N {
            let (g, w) = (got[m * N + n], want[m * N + n]);
            let d = ulps(g, w);
            assert!(d <= 1, "{what}: output0[{m}][{n}] = {g}, x @ y = {w}: {d} fp16 ulps apart, at most 1 allowed");
            worst = worst.max(d);
        }
    }
    println!("{what}: largest distance from the reference {worst} fp16 ulp");
    worst
}

/// Runs the model once on `x`, `y` (host tensors) and returns output0.
fn run(host: &ModelHost, id: nrt::model::ModelId, x: &[f16], y: &[f16]) -> Vec<f16> {
    let mut ins = TensorSet::new();
    ins.add("x", Arc::new(Tensor::from_host_bytes(f16_bytes(x), "x")));
    ins.add("y", Arc::new(Tensor::from_host_bytes(f16_bytes(y), "y")));
    let out = Arc::new(Tensor::allocate_host((M * N * 2) as u64, "output0").unwrap());
    let mut outs = TensorSet::new();
    outs.add("output0", out.clone());
    host.execute(id, &ins, &outs).unwrap();
    read_all(&out).chunks(2).map(|c| f16::from_le_bytes([c[0], c[1]])).collect()
}

#[test]
fn matmul_small_computes_x_at_y_for_several_seeds() {
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap_or_else(|e| panic!("load: {} {}", e.status, e.message));
    for seed in [1u64, 7, 42, 1234] {
        let x = random_f16(M * K, seed);
        let y = random_f16(K * N, seed ^ 0xABCD);
        let got = run(&host, id, &x, &y);
        let want = reference(&x, &y);
        check(&got, &want, &format!("seed {seed}"));
    }
    host.unload(id).unwrap();
}

#[test]
fn tensor_info_reports_x_y_and_output0() {
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap();
    let (ins, outs) = host.tensor_info(id).unwrap();
    let desc: Vec<(String, String, Vec<u64>)> = ins.iter().chain(&outs).map(|t| (t.name.clone(), t.dtype.clone(), t.shape.clone())).collect();
    assert_eq!(
        desc,
        vec![
            ("x".to_string(), "float16".to_string(), vec![M as u64, K as u64]),
            ("y".to_string(), "float16".to_string(), vec![K as u64, N as u64]),
            ("output0".to_string(), "float16".to_string(), vec![M as u64, N as u64]),
        ]
    );
}

#[test]
fn deterministic_simulator_gives_bit_identical_outputs() {
    let Some(bytes) = real() else { return };
    let x = random_f16(M * K, 99);
    let y = random_f16(K * N, 98);
    let once = || {
        let cfg = SimConfig::builder().deterministic(true).build();
        let dev = Arc::new(SimDevice::new(&cfg, 0));
        let host = ModelHost::with_lnc(dev, 2, LoadSettings::default()).unwrap();
        let id = host.load(&bytes, 0, -1).unwrap();
        let a = run(&host, id, &x, &y);
        let b = run(&host, id, &x, &y);
        assert_eq!(a, b, "two executions on one device differ");
        a
    };
    assert_eq!(once(), once(), "two devices differ");
}

#[test]
fn device_tensors_are_bound_in_place_through_the_dge_table() {
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap();
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    // Two sets of device tensors: every DGE-reached address changes
    // between executions, and each execution must see its own buffers.
    for seed in [11u64, 12, 13] {
        let x = random_f16(M * K, seed);
        let y = random_f16(K * N, seed + 100);
        let dev = |len: usize, name: &str| Arc::new(Tensor::allocate_device(&memory, core, len as u64, name).unwrap());
        let (dx, dy, dout) = (dev(M * K * 2, "x"), dev(K * N * 2, "y"), dev(M * N * 2, "output0"));
        dx.write(0, &f16_bytes(&x)).unwrap();
        dy.write(0, &f16_bytes(&y)).unwrap();
        let mut ins = TensorSet::new();
        ins.add("x", dx);
        ins.add("y", dy);
        let mut outs = TensorSet::new();
        outs.add("output0", dout.clone());
        host.execute(id, &ins, &outs).unwrap();
        let got: Vec<f16> = read_all(&dout).chunks(2).map(|c| f16::from_le_bytes([c[0], c[1]])).collect();
        check(&got, &reference(&x, &y), &format!("device tensors, seed {seed}"));
    }
}

#[test]
fn an_opcode_without_an_executor_fails_the_load_naming_the_instruction() {
    let Some(bytes) = real() else { return };
    let neff = nrt_neff::Neff::parse(&bytes).unwrap();
    let mut pool = neff.member("sg01/Pool.bin").unwrap().to_vec();
    pool[6 * 64] = 0x0D; // the final NOP becomes an opcode nothing executes
    let mut w = nrt_neff::NeffWriter::from_neff(&neff);
    w.add_member("sg01/Pool.bin", pool).unwrap();
    let patched = w.to_bytes().unwrap();
    let (_dev, host) = host();
    host.install_vcore(0).unwrap();
    let baseline = host.memory().ledger();
    let e = host.load(&patched, 0, -1).unwrap_err();
    assert_eq!(e.status, nrt::NrtStatus::Invalid);
    assert_eq!(
        e.message,
        "Unsupported hardware operator code 13 found in neff (POOL instruction 6 'Block1-final-DMA-NOP' of sg01); the device cannot run 1 kind(s) of record: \
         opcode 0x0d on POOL x1: no execution for this opcode (not an instruction the device runs, nor one the load rewrites); first: sg01 instruction 6 'Block1-final-DMA-NOP'"
    );
    assert_eq!(host.memory().ledger(), baseline);
}

/// A host profiling in `mode`, writing under a fresh temp directory
/// (returned with it).
fn profiled_host(mode: nrt::config::DeviceProfile, tag: &str) -> (ModelHost, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("nrt-profile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (_dev, host) = host_with(LoadSettings { device_profile: mode, inspect_output_dir: dir.clone(), ..LoadSettings::default() });
    (host, dir)
}

#[test]
fn a_device_fault_names_the_compiler_instruction() {
    use nrt::log::{self, Level};
    use nrt_sim::{FaultKind, FaultSpec, InstrSelector};
    let Some(bytes) = real() else { return };
    let (dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap();
    let x = random_f16(M * K, 5);
    let y = random_f16(K * N, 6);
    run(&host, id, &x, &y);
    let cap = log::capture(Level::Error);
    dev.inject(FaultSpec::new(FaultKind::SramParity).at(InstrSelector::Name("MATMUL".into())));
    let mut ins = TensorSet::new();
    ins.add("x", Arc::new(Tensor::from_host_bytes(f16_bytes(&x), "x")));
    ins.add("y", Arc::new(Tensor::from_host_bytes(f16_bytes(&y), "y")));
    let mut outs = TensorSet::new();
    outs.add("output0", Arc::new(Tensor::allocate_host((M * N * 2) as u64, "output0").unwrap()));
    let e = host.execute(id, &ins, &outs).unwrap_err();
    assert_eq!(e.status.code(), 1202, "{}", e.message);
    // The first MATMUL of either subgraph is PE instruction 4, which the
    // debug info calls I-87-0; the message says so rather than giving
    // the raw device program counter.
    let text = cap.text();
    let line = text.lines().find(|l| l.contains("FATAL-RT-UNDEFINED-STATE")).unwrap_or_else(|| panic!("no fatal line in:\n{text}"));
    println!("{line}");
    assert!(line.contains("PE instruction 4 'I-87-0' (MATMUL)"), "{line}");
}

/// Parses a profile and returns its complete events (name, tid, args).
fn profile_events(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: serde_json::Value = serde_json::from_str(&text).expect("profile is JSON");
    v["traceEvents"].as_array().expect("traceEvents").iter().filter(|e| e["ph"] == "X").cloned().collect()
}

#[test]
fn device_profile_traces_the_first_execution_with_compiler_names() {
    let Some(bytes) = real() else { return };
    let (host, dir) = profiled_host(nrt::config::DeviceProfile::Model, "model");
    let id = host.load(&bytes, 0, -1).unwrap();
    // Instrumented or not, the model computes the same thing.
    for seed in [21u64, 22, 23] {
        let x = random_f16(M * K, seed);
        let y = random_f16(K * N, seed + 1);
        check(&run(&host, id, &x, &y), &reference(&x, &y), &format!("profiled model, seed {seed}"));
    }
    let model_dir = std::fs::read_dir(&dir).unwrap().next().expect("a model directory").unwrap().path();
    let mut files: Vec<String> = std::fs::read_dir(&model_dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(files, vec!["profile_vnc0_exec0.json".to_string()], "model mode profiles the first execution only");
    let events = profile_events(&model_dir.join(&files[0]));
    // Both physical cores, every engine, and the compiler's names.
    let pids: std::collections::BTreeSet<u64> = events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 2, "one process per physical core");
    let tids: std::collections::BTreeSet<u64> = events.iter().map(|e| e["tid"].as_u64().unwrap()).collect();
    let dma = u64::from(nrt::profile::DMA_TID_BASE);
    assert_eq!(tids.iter().filter(|t| **t < dma).count(), 5, "one thread per engine");
    assert!(tids.iter().any(|t| *t >= dma), "and one per DMA queue that moved data");
    let matmuls: Vec<&serde_json::Value> = events.iter().filter(|e| e["args"]["opcode"] == "MATMUL").collect();
    assert_eq!(matmuls.len(), 8, "4 MATMULs per subgraph");
    assert!(matmuls.iter().all(|e| e["name"].as_str().unwrap().starts_with("I-")), "{matmuls:?}");
    assert!(matmuls.iter().all(|e| e["dur"].as_f64().unwrap() > 0.0));
    // Every event starts at or after the previous one on its engine.
    let mut last: std::collections::BTreeMap<(u64, u64), f64> = Default::default();
    for e in &events {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let ts = e["ts"].as_f64().unwrap();
        assert!(ts >= *last.get(&key).unwrap_or(&0.0), "{e}");
        last.insert(key, ts);
    }
    host.unload(id).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP: model mode skips the
/// first N executions (run instrumented, records dropped) and writes
/// execution N, with the whole program in it.
#[test]
fn model_profile_skips_the_warmup_executions() {
    let Some(bytes) = real() else { return };
    let dir = std::env::temp_dir().join(format!("nrt-profile-warmup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = LoadSettings { device_profile: nrt::config::DeviceProfile::Model, device_profile_warmup: 2, inspect_output_dir: dir.clone(), ..LoadSettings::default() };
    let (_dev, host) = host_with(settings);
    let id = host.load(&bytes, 0, -1).unwrap();
    for seed in [31u64, 32, 33, 34] {
        let x = random_f16(M * K, seed);
        let y = random_f16(K * N, seed + 1);
        check(&run(&host, id, &x, &y), &reference(&x, &y), &format!("warm-up profile, seed {seed}"));
    }
    let model_dir = std::fs::read_dir(&dir).unwrap().next().expect("a model directory").unwrap().path();
    let files: Vec<String> = std::fs::read_dir(&model_dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(files, vec!["profile_vnc0_exec2.json".to_string()], "two warm-up executions skipped, the third profiled, none after");
    let events = profile_events(&model_dir.join(&files[0]));
    assert_eq!(events.iter().filter(|e| e["args"]["opcode"] == "MATMUL").count(), 8, "the profiled execution holds its own records only");
    host.unload(id).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn session_profile_traces_every_execution() {
    let Some(bytes) = real() else { return };
    let (host, dir) = profiled_host(nrt::config::DeviceProfile::Session, "session");
    let id = host.load(&bytes, 0, -1).unwrap();
    let x = random_f16(M * K, 3);
    let y = random_f16(K * N, 4);
    for _ in 0..2 {
        check(&run(&host, id, &x, &y), &reference(&x, &y), "session profile");
    }
    let model_dir = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let a = profile_events(&model_dir.join("profile_vnc0_exec0.json"));
    let b = profile_events(&model_dir.join("profile_vnc0_exec1.json"));
    // The same NEFF instructions run each time ...
    let neff = |v: &[serde_json::Value]| {
        v.iter().filter(|e| !e["args"]["neff_index"].is_null()).map(|e| (e["pid"].clone(), e["tid"].clone(), e["args"]["pc"].clone())).collect::<Vec<_>>()
    };
    assert_eq!(neff(&a), neff(&b), "the same instructions run each time");
    // ... but only the first pays the model switch: the switch record
    // (after SP's two records that start the other engines, first on the
    // other engines) runs once per engine and core on the switch entry;
    // the repeat entry is past it.
    let switch = |v: &[serde_json::Value]| {
        v.iter()
            .filter(|e| {
                let at = if e["tid"].as_u64() == Some(nrt_hal::EngineId::Sp.index() as u64) { 2 } else { 0 };
                e["args"]["site"].as_str().is_some_and(|s| s.ends_with(&format!("preamble record {at}")))
            })
            .count()
    };
    assert_eq!((switch(&a), switch(&b)), (10, 0));
    host.unload(id).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A profile started on a model loaded without instrumentation
/// (`nrt_profile_start`'s path): the images are instrumented in place, the
/// executions until the stop are traced with the compiler's names, the
/// outputs are unchanged, and after the stop the images are as loaded
/// (later executions leave no trace records).
#[test]
fn a_capture_on_a_loaded_model_names_the_compiler_instructions_and_restores_it() {
    use nrt::profile::capture::{self, Keep};
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap();
    let model = host.models().get(id).unwrap();
    let x = random_f16(M * K, 31);
    let y = random_f16(K * N, 32);
    check(&run(&host, id, &x, &y), &reference(&x, &y), "before the capture");
    capture::start(&model, Keep::All).unwrap();
    assert!(capture::start(&model, Keep::All).is_err(), "one capture at a time");
    for _ in 0..2 {
        check(&run(&host, id, &x, &y), &reference(&x, &y), "captured");
    }
    let c = capture::stop(&model).unwrap();
    assert_eq!(c.executions().len(), 2);
    let dir = std::env::temp_dir().join(format!("nrt-capture-{}", std::process::id()));
    let path = dir.join("matmul.ntff");
    let w = capture::write_profile(&path, &model, c.executions()).unwrap();
    assert_eq!(w.trace, path, "the caller's .ntff name is kept");
    let events = profile_events(&path);
    let matmuls: Vec<&serde_json::Value> = events.iter().filter(|e| e["args"]["opcode"] == "MATMUL").collect();
    assert_eq!(matmuls.len(), 16, "4 MATMULs per subgraph, two cores, two executions");
    assert!(matmuls.iter().all(|e| e["name"].as_str().unwrap().starts_with("I-")), "{matmuls:?}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&w.summary).unwrap()).unwrap();
    assert_eq!(summary["executions"].as_array().unwrap().len(), 2);
    assert!(summary["top_instructions"].as_array().unwrap().iter().any(|t| t["name"].as_str().unwrap().starts_with("I-")), "{summary}");
    let pe_matmuls: u64 = summary["engines"].as_array().unwrap().iter().filter(|e| e["engine"] == "PE").map(|e| e["opcodes"]["MATMUL"].as_u64().unwrap_or(0)).sum();
    assert_eq!(pe_matmuls, 16);
    // The DMA queues' packets: the summary's per-queue bytes are the trace's.
    let traced: u64 = events.iter().filter_map(|e| e["args"]["bytes"].as_u64()).sum();
    let queues = summary["dma_queues"].as_array().unwrap();
    assert!(traced > 0 && !queues.is_empty(), "{summary}");
    assert_eq!(queues.iter().map(|q| q["bytes"].as_u64().unwrap()).sum::<u64>(), traced);
    // Restored: an execution after the stop writes no trace records.
    check(&run(&host, id, &x, &y), &reference(&x, &y), "after the capture");
    let after = nrt::profile::collect_with(model.program.as_ref().unwrap(), |_| None, true);
    assert!(after.events.is_empty());
    let prog = model.program.as_ref().unwrap();
    for c in &prog.cores {
        let mut buf = [[0u8; 16]; 8];
        for e in 0..5 {
            assert_eq!(c.core.read_trace(e, &mut buf).0, 0, "no trace records after the images were restored");
        }
    }
    assert!(capture::stop(&model).is_err());
    drop(model);
    host.unload(id).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
