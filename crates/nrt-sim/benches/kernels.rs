//! Throughput of the simulator's numerical kernels.
//!
//! Run with `cargo bench -p nrt-sim --bench kernels`. Prints, for each shape,
//! the median of several repetitions: our PE matmul GFLOP/s (fp32 tiles; bf16
//! tiles widened by gather and then multiplied, the former simulator path;
//! and bf16 read raw and widened inside the GEMM's packing, which is what the
//! simulator's MATMUL does now) next to the `matrixmultiply` crate's sgemm on
//! the same shapes in the same run, and the ratios; then elementwise
//! activation / tensor-tensor throughput in elements per second.

use std::hint::black_box;
use std::time::{Duration, Instant};

use nrt_isa::dtype::{Dtype, Rounding};
use nrt_sim::kernels::Tile;
use nrt_sim::kernels::activation::{ActFunc, activation};
use nrt_sim::kernels::elementwise::{AluOp, ScalarStage, tensor_scalar, tensor_tensor};
use nrt_sim::kernels::gemm;
use nrt_sim::kernels::lowp::LowFormat;
use nrt_sim::kernels::pattern::{Memory, MemoryMut, Pattern, gather, gather_into, gather_raw, scatter};
use nrt_sim::kernels::pe::{AccFlags, Moving, Weights, matmul, matmul_moving};
use nrt_sim::kernels::simd::{ScalarOperand, avx2_available};

/// Median wall time of `reps` runs of `f`, each repeated `inner` times.
fn median_time(reps: usize, inner: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm caches and packing buffers
    let mut times: Vec<Duration> = (0..reps).map(|_| sample(inner, &mut f)).collect();
    times.sort();
    times[reps / 2]
}

fn sample(inner: usize, f: &mut impl FnMut()) -> Duration {
    let t = Instant::now();
    for _ in 0..inner {
        f();
    }
    t.elapsed() / inner as u32
}

/// Medians (and minima) of several closures timed in interleaved rounds, so
/// that load from other processes on the machine hits every contender alike
/// and the ratios stay meaningful.
fn paired_medians<const N: usize>(reps: usize, inner: usize, fs: &mut [&mut dyn FnMut(); N]) -> ([Duration; N], [Duration; N]) {
    for f in fs.iter_mut() {
        f();
    }
    let mut times: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(reps));
    for _ in 0..reps {
        for (f, t) in fs.iter_mut().zip(times.iter_mut()) {
            let start = Instant::now();
            for _ in 0..inner {
                f();
            }
            t.push(start.elapsed() / inner as u32);
        }
    }
    for t in times.iter_mut() {
        t.sort();
    }
    (times.clone().map(|t| t[reps / 2]), times.map(|t| t[0]))
}

fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len)
        .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// Inner repetitions so one timed sample is at least a few milliseconds.
fn inner_for(flops: f64) -> usize {
    ((2e7 / flops).ceil() as usize).max(1)
}

fn bench_gemm(quick: bool) {
    println!("== PE matmul: out[M x N] = stationary[K x M]^T . moving[K x N], fp32 accumulate ==");
    let reps = if quick { 1 } else { 21 };
    println!(
        "micro-kernel: {:?}; GFLOP/s = 2*M*N*K / median of {reps} interleaved samples",
        gemm::micro_kernel()
    );
    println!("columns: medians in GFLOP/s, ratios vs sgemm (the last one from the fastest sample of each)");
    println!("bf16 = gather (widen) both operands, then multiply; bf16 fused = raw operands widened while packing");
    println!(
        "{:>14} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>7} {:>10} {:>10}",
        "M x N x K", "fp32", "bf16", "fused", "sgemm", "fp32/", "bf16/", "fused/", "fp32/ best", "fused/best"
    );
    let full = [
        (128, 128, 128),
        (128, 512, 128),
        (128, 64, 128),
        (128, 512, 512),
        (256, 256, 256),
        (512, 512, 512),
    ];
    let shapes: &[(usize, usize, usize)] = if quick { &[(32, 48, 40)] } else { &full };
    for &(m, n, k) in shapes {
        let st = values(k * m, 1);
        let mv = values(k * n, 2);
        let flops = 2.0 * (m * n * k) as f64;
        let inner = if quick { 1 } else { inner_for(flops) };
        // fp32 tiles straight into the PE matmul.
        let w = Weights::from_columns(Tile::from_vec(k, m, st.clone()).unwrap());
        let x = Tile::from_vec(k, n, mv.clone()).unwrap();
        let mut psum = Tile::zeros(m, n);
        let mut psum16 = Tile::zeros(m, n);
        let mut psum_fused = Tile::zeros(m, n);
        // bf16 tiles in an SBUF-like memory: gather (widen) both operands, then multiply.
        let pb = (m + n) * 2;
        let mut sb = vec![0u8; k * pb];
        let w_pat = Pattern::contiguous(0, k, 0, m as u32);
        let x_pat = Pattern::contiguous(0, k, m * 2, n as u32);
        {
            let mut mm = MemoryMut::new(&mut sb, pb).unwrap();
            scatter(&mut mm, &w_pat, Dtype::Bfloat16, &w.tile(), &mut Rounding::NearestEven).unwrap();
            scatter(&mut mm, &x_pat, Dtype::Bfloat16, &x, &mut Rounding::NearestEven).unwrap();
        }
        let mem = Memory::new(&sb, pb).unwrap();
        let mut xt = Tile::zeros(k, n);
        let mut out = vec![0.0f32; m * n];
        let mut fp32 = || {
            matmul(&w, &x, &mut psum, AccFlags::SINGLE).unwrap();
            black_box(&psum);
        };
        let mut bf16 = || {
            let wb = Weights::from_columns(gather(&mem, &w_pat, Dtype::Bfloat16).unwrap());
            gather_into(&mem, &x_pat, Dtype::Bfloat16, &mut xt).unwrap();
            matmul(&wb, &xt, &mut psum16, AccFlags::SINGLE).unwrap();
            black_box(&psum16);
        };
        let mut fused = || {
            // As the simulator: LDWEIGHTS keeps raw elements, MATMUL reads the
            // moving operand raw, and the GEMM widens both while packing.
            let f = LowFormat::Bfloat16;
            let wb = Weights::from_raw_columns(gather_raw(&mem, &w_pat, 2).unwrap(), f).unwrap();
            let xr = gather_raw(&mem, &x_pat, 2).unwrap();
            matmul_moving(&wb, Moving::Low { raw: &xr, format: f }, &mut psum_fused, AccFlags::SINGLE).unwrap();
            black_box(&psum_fused);
        };
        let mut reference = || {
            // SAFETY: pointers and strides describe the same in-bounds
            // matrices as above (A = stationaryᵀ via strides 1, m).
            unsafe {
                matrixmultiply::sgemm(
                    m,
                    k,
                    n,
                    1.0,
                    st.as_ptr(),
                    1,
                    m as isize,
                    mv.as_ptr(),
                    n as isize,
                    1,
                    0.0,
                    out.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
            black_box(&out);
        };
        let ([t32, t16, tfu, tref], [b32, _, bfu, bref]) =
            paired_medians(reps, inner, &mut [&mut fp32, &mut bf16, &mut fused, &mut reference]);
        assert_eq!(
            psum16.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            psum_fused.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "fused bf16 differs from gather + multiply"
        );
        let g = |t: Duration| flops / t.as_secs_f64() / 1e9;
        println!(
            "{:>14} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>7.2} {:>7.2} {:>7.2} {:>10.2} {:>10.2}",
            format!("{m}x{n}x{k}"),
            g(t32),
            g(t16),
            g(tfu),
            g(tref),
            g(t32) / g(tref),
            g(t16) / g(tref),
            g(tfu) / g(tref),
            g(b32) / g(bref),
            g(bfu) / g(bref)
        );
    }
}

/// Elements per second of one `[128 x free]` pass.
fn rate(elems: usize, t: Duration) -> f64 {
    elems as f64 / t.as_secs_f64()
}

fn bench_elementwise(quick: bool) {
    let (parts, free) = if quick { (4, 64) } else { (128, 2048) };
    let reps = if quick { 1 } else { 9 };
    let elems = parts * free;
    let a = Tile::from_vec(parts, free, values(elems, 3).iter().map(|v| v * 4.0).collect()).unwrap();
    let b = Tile::from_vec(parts, free, values(elems, 4).iter().map(|v| v + 1.5).collect()).unwrap();
    let inner = if quick { 1 } else { 4 };
    println!();
    println!(
        "== ACT activation, [{parts} x {free}] fp32 tile, func(x * 1.5 + 0.25) (AVX2 dispatch: {}) ==",
        avx2_available()
    );
    for func in ActFunc::ALL {
        let t = median_time(reps, inner, || {
            black_box(activation(&a, func, ScalarOperand::Imm(1.5), ScalarOperand::Imm(0.25)).unwrap());
        });
        println!("{:>16} {:>8.2} Gelem/s", func.name(), rate(elems, t) / 1e9);
    }
    println!();
    println!("== DVE tensor_tensor / tensor_scalar, [{parts} x {free}] fp32 tiles ==");
    for op in [AluOp::Add, AluOp::Multiply, AluOp::Divide, AluOp::Max, AluOp::Ge] {
        let t = median_time(reps, inner, || {
            black_box(tensor_tensor(&a, &b, op).unwrap());
        });
        println!("{:>16} {:>8.2} Gelem/s", format!("tt {op:?}"), rate(elems, t) / 1e9);
    }
    let t = median_time(reps, inner, || {
        black_box(
            tensor_scalar(
                &a,
                ScalarStage::new(AluOp::Multiply, ScalarOperand::Imm(2.0)),
                Some(ScalarStage::new(AluOp::Add, ScalarOperand::Imm(1.0))),
            )
            .unwrap(),
        );
    });
    println!("{:>16} {:>8.2} Gelem/s", "ts mul,add", rate(elems, t) / 1e9);
    // The dtype boundary: bf16 gather + scatter of the same tile.
    let pb = free * 2;
    let mut sb = vec![0u8; parts * pb];
    let pat = Pattern::contiguous(0, parts, 0, free as u32);
    let mut tile = Tile::zeros(parts, free);
    let t = median_time(reps, inner, || {
        let mut mm = MemoryMut::new(&mut sb, pb).unwrap();
        scatter(&mut mm, &pat, Dtype::Bfloat16, &a, &mut Rounding::NearestEven).unwrap();
        gather_into(&mm.as_ref(), &pat, Dtype::Bfloat16, &mut tile).unwrap();
        black_box(&tile);
    });
    println!("{:>16} {:>8.2} Gelem/s", "bf16 scat+gath", rate(elems, t) / 1e9);
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this
    // binary without it, where a tiny smoke run checks the code paths only.
    let quick = !std::env::args().any(|a| a == "--bench");
    if quick {
        println!("(smoke run with tiny shapes; use `cargo bench -p nrt-sim --bench kernels` for figures)");
    }
    bench_gemm(quick);
    bench_elementwise(quick);
}
