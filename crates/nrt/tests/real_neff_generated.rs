//! Matmul programs in the compiler's encoding (0xD4 DMAs on the Pool
//! dynamic queue set reaching inputs/outputs through the DGE table,
//! LDWEIGHTS with the reversed stationary walk, MATMUL with PSUM
//! accumulation flags, ACT COPY PSUM -> SBUF, a casting output DMA),
//! generated for many shapes and dtypes with NeffWriter and the nrt-isa
//! assembler, run through the runtime on the simulator and compared with
//! references computed here. So the lowering is exercised beyond the one
//! compiler sample. Also the benchmark figures (ignored by default).

mod exec_support;

use exec_support::*;
use half::{bf16, f16};
use nrt::load::ModelHost;
use nrt::tensor::{Tensor, TensorSet};
use nrt_isa::dtype::Dtype;
use nrt_neff::{EngineFiles, EngineKind, NeffWriter, TensorSignature};
use proptest::prelude::*;
use std::fmt::Write as _;
use std::sync::Arc;

/// Partitions (the contraction tile and the PE column count).
const P: usize = 128;
/// SBUF layout of the generated program (bytes inside each partition).
const A0: usize = 0x1000;

/// One generated problem: out[M, N] = xtᵀ @ y with xt [K, M], y [K, N].
#[derive(Clone, Copy, Debug)]
struct Shape {
    kt: usize,
    mt: usize,
    n: usize,
    dtype: Dtype,
    /// y arrives as its two column halves stacked ([2][K][N/2]); the y
    /// DMAs walk them with the 0xD4 record's second dimension.
    y_halves: bool,
}

impl Shape {
    fn k(&self) -> usize {
        self.kt * P
    }
    fn m(&self) -> usize {
        self.mt * P
    }
}

fn dtype_name(d: Dtype) -> &'static str {
    d.name()
}

/// The NEFF of `s`: one subgraph (LNC 2 header), Pool issues every DMA,
/// PE multiplies, ACT evacuates PSUM.
fn build(s: Shape) -> Vec<u8> {
    let es = s.dtype.size_bytes();
    let (k, m, n) = (s.k(), s.m(), s.n);
    let dt = dtype_name(s.dtype);
    // SBUF regions per partition: A tiles, B tiles, fp32 results.
    let b0 = A0 + s.kt * m * es;
    let c0 = (b0 + s.kt * n * es).next_multiple_of(0x100);
    assert!(c0 + s.mt * n * 4 <= 0x38000, "the generated layout fits a partition");
    let mut pool = String::from("prologue_b1\nbranch_label\n");
    let mut sem = 24;
    let mut a_sems = Vec::new();
    let mut b_sems = Vec::new();
    for t in 0..s.kt {
        writeln!(pool, "dma2d flags=0 sem={sem} sem_add=16 src=[dge0+{:#x}; {:#x},128; 0x1,1; {}] dst=[var0+{:#x}; 0x40000,128; 0x1,1; {}] src_dtype={dt} dst_dtype={dt}", t * P * m * es, m * es, m * es, A0 + t * m * es, m * es).unwrap();
        a_sems.push(sem);
        sem += 1;
        if s.y_halves {
            // Row kk of tile t: two runs of N/2, one from each stacked half (K*N/2 apart).
            let h = n / 2 * es;
            writeln!(pool, "dma2d flags=0 sem={sem} sem_add=16 src=[dge1+{:#x}; {h:#x},128; {:#x},2; {h}] dst=[var0+{:#x}; 0x40000,128; {h:#x},2; {h}] src_dtype={dt} dst_dtype={dt}", t * P * h, k * h, b0 + t * n * es).unwrap();
        } else {
            writeln!(pool, "dma2d flags=0 sem={sem} sem_add=16 src=[dge1+{:#x}; {:#x},128; 0x1,1; {}] dst=[var0+{:#x}; 0x40000,128; 0x1,1; {}] src_dtype={dt} dst_dtype={dt}", t * P * n * es, n * es, n * es, b0 + t * n * es, n * es).unwrap();
        }
        b_sems.push(sem);
        sem += 1;
    }
    let mut out_sems = Vec::new();
    for i in 0..s.mt {
        writeln!(pool, "dma2d flags=0 sem={sem} sem_add=16 src=[var0+{:#x}; 0x40000,128; 0x1,1; {}] dst=[dge2+{:#x}; {:#x},128; 0x1,1; {}] src_dtype=float32 dst_dtype={dt} wait=sem4>={}", c0 + i * n * 4, n * 4, i * P * n * es, n * es, n * es, i + 1).unwrap();
        out_sems.push(sem);
        sem += 1;
    }
    for s2 in &out_sems {
        writeln!(pool, "nop wait=sem{s2}>=16").unwrap();
    }
    let mut pe = String::from("prologue_b1\nbranch_label\n");
    for sm in a_sems.iter().chain(&b_sems) {
        writeln!(pe, "event_semaphore ext_wait=none ext_update=none wait=sem{sm}>=16").unwrap();
    }
    for i in 0..s.mt {
        for t in 0..s.kt {
            let acc = match (t == 0, t + 1 == s.kt) {
                (true, true) => "single",
                (true, false) => "start",
                (false, true) => "stop",
                (false, false) => "mid",
            };
            let w = A0 + t * m * es + (i * P + P - 1) * es;
            writeln!(pe, "ldweights weights=[{w:#x}; -1,32; 0,1; -32,4] dtype={dt} transpose=false row_start=0 col_start=0 rows=128 cols=128 row_mask=15 col_mask=15").unwrap();
            let upd = if t + 1 == s.kt { " update=sem5++" } else { "" };
            writeln!(pe, "matmul moving=[{:#x}; 1,{n}; 0,1; 0,1] dtype={dt} transpose=false row_start=0 col_start=0 rows=128 cols=128 accumulate={acc} row_mask=15 col_mask=15 psum=[{:#x}; 1,{n}; 0,1; 0,1]{upd}", b0 + t * n * es, 0x2000000 + i * 0x800).unwrap();
        }
    }
    let mut act = String::from("prologue_b1\nbranch_label\nact_table_load\n");
    for i in 0..s.mt {
        writeln!(act, "copy src=[{:#x}; 1,{n}; 1,1; 1,1; 1,1] in_dtype=float32 out_dtype=float32 partitions=128 dst=[{:#x}; 1,{n}; 1,1; 1,1; 1,1] wait=sem5>={} update=sem4++", 0x2000000 + i * 0x800, c0 + i * n * 4, i + 1).unwrap();
    }
    let sig = |name: &str, shape: [usize; 2]| TensorSignature { name: name.into(), dtype: dt.into(), shape: shape.iter().map(|&d| d as u64).collect() };
    let (xt, y, out) = (sig("xt", [k, m]), sig("y", [k, n]), sig("output0", [m, n]));
    let def: nrt_neff::DefJson = serde_json::from_value(serde_json::json!({
        "var": {
            "SB": {"type": "state-buffer", "var_id": 0},
            "xt": {"type": "input", "var_id": 1, "size": k * m * es},
            "y": {"type": "input", "var_id": 2, "size": k * n * es},
            "output0": {"type": "output", "var_id": 3, "size": m * n * es},
            "DGETable0": {"type": "dge-table", "var_id": 4, "list": [1, 2, 3]}
        },
        "dma_queue": {
            "qPoolDynamic": {"type": "dynamic", "num_queues": 16, "owner": "pool", "semaphore_set": (24..40).collect::<Vec<u32>>()}
        }
    }))
    .unwrap();
    let engine = |e: EngineKind, text: &str| EngineFiles { engine: e, json: Default::default(), instructions: nrt_isa::asm::assemble(text).unwrap_or_else(|err| panic!("{e:?}: {err}\n{text}")) };
    let mut w = NeffWriter::new();
    w.set_name("gen_matmul").unwrap();
    w.set_lnc_size(2);
    w.add_model_manifests(&["sg00"], &[xt, y], &[out], "cayman").unwrap();
    w.add_subgraph("sg00", &def, &[engine(EngineKind::Pool, &pool), engine(EngineKind::Pe, &pe), engine(EngineKind::Act, &act)]).unwrap();
    w.to_bytes().unwrap()
}

/// Values exactly representable in every dtype under test (so inputs are
/// the same numbers whatever the storage): small multiples of 1/8.
fn values(len: usize, seed: u64) -> Vec<f32> {
    data(len, seed).iter().map(|b| (f32::from(*b % 33) - 16.0) / 8.0).collect()
}

/// Executes `neff` once with host tensors and returns output0 as f32.
fn run(host: &ModelHost, id: nrt::model::ModelId, s: Shape, xt: &[f32], y: &[f32]) -> Vec<f32> {
    let mut ins = TensorSet::new();
    ins.add("xt", Arc::new(Tensor::from_host_bytes(encode(s.dtype, xt), "xt")));
    ins.add("y", Arc::new(Tensor::from_host_bytes(encode(s.dtype, y), "y")));
    let out = Arc::new(Tensor::allocate_host((s.m() * s.n * s.dtype.size_bytes()) as u64, "output0").unwrap());
    let mut outs = TensorSet::new();
    outs.add("output0", out.clone());
    host.execute(id, &ins, &outs).unwrap_or_else(|e| panic!("{s:?}: {} {}", e.status, e.message));
    decode(s.dtype, &read_all(&out))
}

/// xtᵀ @ y in f64, rounded once to the dtype (inputs are small multiples
/// of 1/8, so fp32 accumulation in any order is exact here).
fn reference(s: Shape, xt: &[f32], y: &[f32]) -> Vec<f32> {
    let (k, m, n) = (s.k(), s.m(), s.n);
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let acc: f64 = (0..k).map(|kk| f64::from(xt[kk * m + i]) * f64::from(y[kk * n + j])).sum();
            out.push(acc as f32);
        }
    }
    decode(s.dtype, &encode(s.dtype, &out))
}

fn check(s: Shape, seed: u64) {
    let bytes = build(s);
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap_or_else(|e| panic!("{s:?}: load: {} {}", e.status, e.message));
    let xt = values(s.k() * s.m(), seed);
    let y = values(s.k() * s.n, seed ^ 0x55);
    let got = run(&host, id, s, &xt, &y);
    let want = reference(s, &xt, &y);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{s:?} seed {seed}: output0[{}][{}] = {g}, want {w}", i / s.n, i % s.n);
    }
    host.unload(id).unwrap();
}

/// Full-precision random inputs: uniform in [-2, 2), rounded to the dtype,
/// so products and partial sums cancel and round like real data.
fn random_values(d: Dtype, len: usize, seed: u64) -> Vec<f32> {
    let raw: Vec<f32> = data(len * 4, seed)
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32 / 4294967296.0 * 4.0 - 2.0)
        .collect();
    decode(d, &encode(d, &raw))
}

/// xtᵀ @ y the way the issue defines it: for each element an fp32 sum of
/// the products in ascending k, starting from 0, then one rounding to the
/// dtype. Each step is written as `mul_add`; for fp16 / bf16 the product is
/// exact in fp32, so this equals plain `acc + a * b`; for fp32 it is the
/// fused step the simulated PE documents.
fn sequential_reference(s: Shape, xt: &[f32], y: &[f32]) -> Vec<f32> {
    let (k, m, n) = (s.k(), s.m(), s.n);
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f32;
            for kk in 0..k {
                acc = xt[kk * m + i].mul_add(y[kk * n + j], acc);
            }
            out.push(acc);
        }
    }
    decode(s.dtype, &encode(s.dtype, &out))
}

/// Distance in units in the last place of `d` between two values of `d`.
fn ulps(d: Dtype, a: f32, b: f32) -> u64 {
    let key = |v: f32| -> i64 {
        let (bits, sign) = match d {
            Dtype::Float16 => (i64::from(f16::from_f32(v).to_bits()), 0x8000),
            Dtype::Bfloat16 => (i64::from(bf16::from_f32(v).to_bits()), 0x8000),
            _ => (i64::from(v.to_bits()), 0x8000_0000),
        };
        if bits & sign != 0 { -(bits & (sign - 1)) } else { bits }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Runs `s` on random full-precision inputs and asserts every element is
/// within 1 ulp of [`sequential_reference`]; returns the largest distance.
fn check_random(s: Shape, seed: u64) -> u64 {
    let bytes = build(s);
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap_or_else(|e| panic!("{s:?}: load: {} {}", e.status, e.message));
    let xt = random_values(s.dtype, s.k() * s.m(), seed);
    let y = random_values(s.dtype, s.k() * s.n, seed ^ 0x55);
    let got = run(&host, id, s, &xt, &y);
    let want = sequential_reference(s, &xt, &y);
    let mut worst = 0;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        let d = ulps(s.dtype, *g, *w);
        assert!(d <= 1, "{s:?} seed {seed}: output0[{}][{}] = {g}, reference {w}: {d} ulps apart", i / s.n, i % s.n);
        worst = worst.max(d);
    }
    host.unload(id).unwrap();
    worst
}

/// y [K, N] rearranged as its two column halves stacked: [2][K][N/2].
fn stacked_halves(y: &[f32], k: usize, n: usize) -> Vec<f32> {
    let h = n / 2;
    (0..2).flat_map(|half| (0..k).flat_map(move |kk| (0..h).map(move |j| y[kk * n + half * h + j]))).collect()
}

#[test]
fn dma_records_with_a_second_dimension_gather_stacked_halves() {
    for (dtype, seed) in [(Dtype::Float16, 5u64), (Dtype::Float32, 6)] {
        let s = Shape { kt: 2, mt: 1, n: 128, dtype, y_halves: true };
        let bytes = build(s);
        let (_dev, host) = host();
        let id = host.load(&bytes, 0, -1).unwrap_or_else(|e| panic!("{s:?}: load: {} {}", e.status, e.message));
        let xt = random_values(dtype, s.k() * s.m(), seed);
        let y = random_values(dtype, s.k() * s.n, seed ^ 0x55);
        let got = run(&host, id, s, &xt, &stacked_halves(&y, s.k(), s.n));
        let want = sequential_reference(s, &xt, &y);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(ulps(dtype, *g, *w) <= 1, "{s:?}: output0[{}][{}] = {g}, reference {w}", i / s.n, i % s.n);
        }
        host.unload(id).unwrap();
    }
}

#[test]
fn random_inputs_stay_within_one_ulp_of_the_sequential_reference() {
    for (dtype, seed) in [(Dtype::Float16, 1u64), (Dtype::Float16, 2), (Dtype::Bfloat16, 3), (Dtype::Float32, 4)] {
        let worst = check_random(Shape { kt: 3, mt: 1, n: 128, dtype, y_halves: false }, seed);
        println!("{dtype:?} seed {seed}: largest distance {worst} ulp");
    }
}

#[test]
fn a_generated_matmul_runs_like_the_compiler_sample() {
    check(Shape { kt: 2, mt: 1, n: 64, dtype: Dtype::Float16, y_halves: false }, 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Generated programs of many shapes and dtypes match the reference exactly.
    #[test]
    fn generated_matmuls_match_references(kt in 1usize..4, mt in 1usize..3, nq in 1usize..5, d in 0usize..3, seed in any::<u64>()) {
        let dtype = [Dtype::Float16, Dtype::Bfloat16, Dtype::Float32][d];
        check(Shape { kt, mt, n: nq * 64, dtype, y_halves: false }, seed);
    }

    /// The same programs on random full-precision inputs, where terms
    /// cancel: every element within 1 ulp of the sequential reference.
    #[test]
    fn generated_matmuls_on_random_inputs_are_within_one_ulp(kt in 1usize..4, mt in 1usize..3, nq in 1usize..5, d in 0usize..3, seed in any::<u64>()) {
        let dtype = [Dtype::Float16, Dtype::Bfloat16, Dtype::Float32][d];
        check_random(Shape { kt, mt, n: nq * 64, dtype, y_halves: false }, seed);
    }
}

/// Benchmark figures (run with `--ignored --nocapture`): execute latency of
/// the compiler sample, and GFLOP/s of a large generated fp32 matmul on
/// the simulator next to the matrixmultiply crate's sgemm in the same run.
#[test]
#[ignore = "benchmark; prints figures"]
fn bench_real_neff_latency_and_generated_gflops() {
    use std::time::Instant;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");
    if let Ok(bytes) = std::fs::read(path) {
        for deterministic in [true, false] {
            let cfg = nrt_sim::SimConfig::builder().deterministic(deterministic).build();
            let host = ModelHost::with_lnc(Arc::new(nrt_sim::SimDevice::new(&cfg, 0)), 2, nrt::load::LoadSettings::default()).unwrap();
            let id = host.load(&bytes, 0, -1).unwrap();
            let x = encode(Dtype::Float16, &values(128 * 256, 1));
            let y = encode(Dtype::Float16, &values(256 * 128, 2));
            let mut ins = TensorSet::new();
            ins.add("x", Arc::new(Tensor::from_host_bytes(x, "x")));
            ins.add("y", Arc::new(Tensor::from_host_bytes(y, "y")));
            let mut outs = TensorSet::new();
            outs.add("output0", Arc::new(Tensor::allocate_host(128 * 128 * 2, "output0").unwrap()));
            for _ in 0..10 {
                host.execute(id, &ins, &outs).unwrap();
            }
            let runs = 100;
            let t = Instant::now();
            for _ in 0..runs {
                host.execute(id, &ins, &outs).unwrap();
            }
            let mode = if deterministic { "deterministic" } else { "threaded" };
            println!("matmul_small.neff: execute latency {:.1} us (mean of {runs}, {mode} sim)", t.elapsed().as_secs_f64() * 1e6 / f64::from(runs));
        }
    } else {
        println!("skipping the sample latency: {path} is absent");
    }
    let s = Shape { kt: 7, mt: 2, n: 512, dtype: Dtype::Float32, y_halves: false };
    let (k, m, n) = (s.k(), s.m(), s.n);
    let bytes = build(s);
    let (_dev, host) = host();
    let id = host.load(&bytes, 0, -1).unwrap();
    let xt = values(k * m, 5);
    let y = values(k * n, 6);
    let want = reference(s, &xt, &y);
    assert_eq!(run(&host, id, s, &xt, &y), want);
    let flops = 2.0 * (k * m * n) as f64;
    let reps = 20;
    let t = Instant::now();
    for _ in 0..reps {
        run(&host, id, s, &xt, &y);
    }
    let sim = flops * f64::from(reps) / t.elapsed().as_secs_f64() / 1e9;
    let mut c = vec![0f32; m * n];
    let t = Instant::now();
    for _ in 0..reps {
        // c[M, N] = xtᵀ[M, K] · y[K, N]: xt read with row stride 1, column stride M.
        unsafe {
            matrixmultiply::sgemm(m, k, n, 1.0, xt.as_ptr(), 1, m as isize, y.as_ptr(), n as isize, 1, 0.0, c.as_mut_ptr(), n as isize, 1);
        }
    }
    let mm = flops * f64::from(reps) / t.elapsed().as_secs_f64() / 1e9;
    assert_eq!(c, want, "matrixmultiply agrees");
    println!("generated fp32 matmul M={m} K={k} N={n}: simulator {sim:.2} GFLOP/s (whole execute incl. host IO), matrixmultiply sgemm {mm:.2} GFLOP/s");
}
