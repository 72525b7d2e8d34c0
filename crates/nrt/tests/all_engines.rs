//! The all-engines example end to end: SP moves x in and the covariance
//! out, POOL takes row means, DVE centres the rows, PE multiplies xcᵀ·xc
//! and ACT scales; each hands over to the next through a semaphore. The
//! output is compared with the covariance computed here with plain loops.

mod exec_support;

use exec_support::*;
use nrt::tensor::{Tensor, TensorSet};
use std::sync::Arc;

const R: usize = 32;
const C: usize = 64;

/// cov[m][n] = (1/R) Σ_r (x[r][m] - mean_r)(x[r][n] - mean_r), with
/// mean_r the mean of row r, in f64.
fn reference(x: &[f32]) -> Vec<f64> {
    let xc: Vec<f64> = (0..R)
        .flat_map(|r| {
            let row = &x[r * C..(r + 1) * C];
            let mean = row.iter().map(|v| f64::from(*v)).sum::<f64>() / C as f64;
            row.iter().map(move |v| f64::from(*v) - mean)
        })
        .collect();
    let mut cov = vec![0f64; C * C];
    for m in 0..C {
        for n in 0..C {
            cov[m * C + n] = (0..R).map(|r| xc[r * C + m] * xc[r * C + n]).sum::<f64>() / R as f64;
        }
    }
    cov
}

#[test]
fn all_engines_example_computes_the_row_centred_covariance() {
    let (_dev, host) = host();
    let id = host.load(&pack_dir(&examples_dir().join("all-engines")), -1, -1).expect("load all-engines");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    assert_eq!((inputs[0].shape.clone(), outputs[0].shape.clone()), (vec![R as u64, C as u64], vec![C as u64, C as u64]));
    for seed in [1u64, 2] {
        // Values in [-4, 4) with a per-row offset, so centring matters.
        let x: Vec<f32> = data(R * C * 4, seed)
            .chunks_exact(4)
            .enumerate()
            .map(|(i, c)| (u32::from_le_bytes(c.try_into().unwrap()) >> 8) as f32 / (1u32 << 21) as f32 - 4.0 + (i / C) as f32)
            .collect();
        let mut ins = TensorSet::new();
        ins.add("x", Arc::new(Tensor::from_host_bytes(x.iter().flat_map(|v| v.to_le_bytes()).collect(), "x")));
        let out = Arc::new(Tensor::allocate_host((C * C * 4) as u64, "cov").unwrap());
        let mut outs = TensorSet::new();
        outs.add("cov", out.clone());
        host.execute(id, &ins, &outs).expect("execute");
        let got: Vec<f32> = read_all(&out).chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        // fp32 mean, subtraction and a 32-term fp32 accumulation of values
        // below 64: a few ulps of the largest partial sums (~2000), so an
        // absolute 1e-3 after the 1/32 scale is generous yet tight enough
        // to catch a wrong row, a missing centring or a skipped scale.
        for (i, (g, w)) in got.iter().zip(reference(&x)).enumerate() {
            assert!((f64::from(*g) - w).abs() <= 1e-3, "seed {seed}: cov[{}][{}] = {g}, expected {w}", i / C, i % C);
        }
        // A covariance matrix is symmetric, bit for bit here (same products).
        for m in 0..C {
            for n in 0..m {
                assert_eq!(got[m * C + n], got[n * C + m], "cov[{m}][{n}]");
            }
        }
    }
    host.unload(id).unwrap();
    host.close().unwrap();
}
