//! Throughput of the bulk dtype converters, in elements per second.
//!
//! Run with `cargo bench -p nrt-isa --bench dtype`. A plain timing loop
//! (no bench framework) keeps the dependency set small; each case converts
//! a 1 Mi-element buffer several times and reports the best run.

use nrt_isa::dtype::{Dtype, Rounding, convert};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ELEMS: usize = 1 << 20;
const RUNS: usize = 5;

fn source(dtype: Dtype) -> Vec<u8> {
    let values: Vec<f32> = (0..ELEMS).map(|i| ((i as f32) * 0.37).sin() * 300.0).collect();
    let mut out = vec![0u8; ELEMS * dtype.size_bytes()];
    let f32_bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    convert(&f32_bytes, Dtype::Float32, &mut out, dtype, &mut Rounding::NearestEven).expect("seed buffer");
    out
}

fn bench(src_dtype: Dtype, dst_dtype: Dtype, stochastic: bool) {
    let src = source(src_dtype);
    let mut dst = vec![0u8; ELEMS * dst_dtype.size_bytes()];
    let mut best = Duration::MAX;
    for run in 0..RUNS {
        let mut rounding = if stochastic { Rounding::stochastic(run as u64) } else { Rounding::NearestEven };
        let start = Instant::now();
        convert(black_box(&src), src_dtype, black_box(&mut dst), dst_dtype, &mut rounding).expect("bench conversion");
        best = best.min(start.elapsed());
    }
    let rate = ELEMS as f64 / best.as_secs_f64() / 1e6;
    let mode = if stochastic { "SR " } else { "RNE" };
    println!("{:>9} -> {:<9} {mode} {:>9.1} Melem/s", src_dtype.name(), dst_dtype.name(), rate);
}

fn main() {
    for (s, d) in [
        (Dtype::Float32, Dtype::Bfloat16),
        (Dtype::Bfloat16, Dtype::Float32),
        (Dtype::Float32, Dtype::Float16),
        (Dtype::Float16, Dtype::Float32),
        (Dtype::Float32, Dtype::Fp8E4),
        (Dtype::Fp8E4, Dtype::Float32),
        (Dtype::Float32, Dtype::Fp8E5),
        (Dtype::Float32, Dtype::Fp8E3),
        (Dtype::Float16, Dtype::Bfloat16),
        (Dtype::Float32, Dtype::Int32),
        (Dtype::Int32, Dtype::Float32),
        (Dtype::Int32, Dtype::Int8),
    ] {
        bench(s, d, false);
    }
    for d in [Dtype::Bfloat16, Dtype::Float16, Dtype::Fp8E4] {
        bench(Dtype::Float32, d, true);
    }
}
