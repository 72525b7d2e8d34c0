//! Acceptance of issue 5 at the command line: `nrt run` on the unmodified
//! compiler NEFF (shared/data/neff/matmul_small.neff, x @ y in fp16, LNC 2)
//! with x and y from .npy files writes output0 equal to x @ y computed here
//! independently (fp32 accumulation, one fp16 rounding), for several seeds.

mod common;

use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};
use std::path::{Path, PathBuf};

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");
const M: usize = 128;
const K: usize = 256;
const N: usize = 128;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-real-neff-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// fp16 values (as f32, exactly representable) in [-2, 2) from a seed.
fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let raw: Vec<f32> = (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect();
    let mut b = vec![0u8; len * 2];
    f32_to_bytes(&raw, Dtype::Float16, &mut b, &mut Rounding::NearestEven).unwrap();
    let mut out = vec![0f32; len];
    bytes_to_f32(&b, Dtype::Float16, &mut out).unwrap();
    out
}

fn f16_npy(path: &Path, shape: &[u64], v: &[f32]) {
    let mut b = vec![0u8; v.len() * 2];
    f32_to_bytes(v, Dtype::Float16, &mut b, &mut Rounding::NearestEven).unwrap();
    std::fs::write(path, nrt_neff::npy::encode_npy("<f2", shape, &b)).unwrap();
}

#[test]
fn nrt_run_on_the_compiler_sample_writes_x_at_y() {
    if !Path::new(NEFF).exists() {
        nrt_test_support::skip!("{NEFF} is absent (the compiler's sample lives beside the checkout)");
    }
    for seed in [1u64, 2, 3] {
        let dir = scratch(&format!("seed{seed}"));
        let (x, y) = (values(M * K, seed), values(K * N, seed + 50));
        let (xp, yp, out) = (dir.join("X.npy"), dir.join("Y.npy"), dir.join("D"));
        f16_npy(&xp, &[M as u64, K as u64], &x);
        f16_npy(&yp, &[K as u64, N as u64], &y);
        let o = common::nrt_command()
            .args(["run", NEFF, "--input", &format!("x={}", xp.display()), "--input", &format!("y={}", yp.display()), "--output-dir", out.to_str().unwrap()])
            .env("NEURON_RT_LOG_LEVEL", "INFO")
            .output()
            .unwrap();
        assert!(o.status.success(), "nrt run failed: {}", String::from_utf8_lossy(&o.stderr));
        // The header's name is the compiler's placeholder: the model goes
        // by the file's stem (as in Python and the tools).
        let log = String::from_utf8_lossy(&o.stderr);
        assert!(log.contains("Loaded NN \"matmul_small\""), "{log}");
        let bytes = std::fs::read(out.join("output0.npy")).unwrap();
        let h = nrt_neff::npy::parse_npy_header("output0", &bytes).unwrap();
        assert_eq!((h.descr.as_str(), h.shape.as_slice()), ("<f2", &[M as u64, N as u64][..]));
        let mut got = vec![0f32; M * N];
        bytes_to_f32(&bytes[h.data_offset..], Dtype::Float16, &mut got).unwrap();
        let mut worst = 0f64;
        for m in 0..M {
            for n in 0..N {
                // fp32 sum in ascending k (products of fp16 are exact), one fp16 rounding.
                let acc: f32 = (0..K).map(|k| x[m * K + k] * y[k * N + n]).sum();
                let mut w = [0u8; 2];
                f32_to_bytes(&[acc], Dtype::Float16, &mut w, &mut Rounding::NearestEven).unwrap();
                let mut want = [0f32];
                bytes_to_f32(&w, Dtype::Float16, &mut want).unwrap();
                let want = want[0];
                let g = got[m * N + n];
                // One fp16 ulp of the reference (2^(e-10), subnormal floor 2^-24).
                let ulp = 2f64.powi((f64::from(want.abs()).max(2f64.powi(-14))).log2().floor() as i32 - 10);
                let err = (f64::from(g) - f64::from(want)).abs();
                assert!(err <= ulp, "seed {seed}: output0[{m}][{n}] = {g}, x @ y = {want}: {} ulps apart", err / ulp);
                worst = worst.max(err / ulp);
            }
        }
        println!("seed {seed}: largest distance from the reference {worst} fp16 ulp");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
