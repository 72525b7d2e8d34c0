//! The unmodified compiler NEFF through the C API: a C program (written
//! here, compiled with the system compiler against include/ and linked to
//! the libnrt.so this test run built) does nrt_load, checks the tensor info
//! (x, y, output0: fp16 with their shapes), runs nrt_execute on device
//! tensors and writes output0 to a file; this side computes x @ y
//! independently (fp32 sum in ascending k, one fp16 rounding) and requires
//! every element within 1 fp16 ulp of it. With
//! NEURON_SIM_DETERMINISTIC=1 two processes give bit-identical outputs.

mod libnrt_build;

use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};
use std::path::{Path, PathBuf};
use std::process::Command;

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");
const M: usize = 128;
const K: usize = 256;
const N: usize = 128;

const C_SOURCE: &str = r#"
#include "check.h"
#include "nrt/nrt_experimental.h"
#define M 128
#define K 256
#define N 128
int main(int argc, char **argv) {
    if (argc < 5) return 2;
    size_t size = 0, xs = 0, ys = 0;
    void *neff = read_file(argv[1], &size);
    void *x = read_file(argv[2], &xs);
    void *y = read_file(argv[3], &ys);
    EXPECT(xs == M * K * 2 && ys == K * N * 2);
    OK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "2.0", ""));
    nrt_model_t *model = NULL;
    OK(nrt_load(neff, size, 0, -1, &model));
    if (!model) return finish("real_neff");
    nrt_tensor_info_array_t *ti = NULL;
    OK(nrt_get_model_tensor_info(model, &ti));
    EXPECT(ti && ti->tensor_count == 3);
    if (ti && ti->tensor_count == 3) {
        const char *names[3] = {"x", "y", "output0"};
        uint32_t dims[3][2] = {{M, K}, {K, N}, {M, N}};
        for (int i = 0; i < 3; i++) {
            nrt_tensor_info_t *t = &ti->tensor_array[i];
            EXPECT(strcmp(t->name, names[i]) == 0);
            EXPECT(t->usage == (i < 2 ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT));
            EXPECT(t->dtype == NRT_DTYPE_FLOAT16);
            EXPECT(t->ndim == 2 && t->shape[0] == dims[i][0] && t->shape[1] == dims[i][1]);
            EXPECT(t->size == (size_t)dims[i][0] * dims[i][1] * 2);
        }
    }
    OK(nrt_free_model_tensor_info(ti));
    nrt_tensor_t *tx = NULL, *ty = NULL, *to = NULL;
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, M * K * 2, "x", &tx));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, K * N * 2, "y", &ty));
    OK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, M * N * 2, "output0", &to));
    OK(nrt_tensor_write(tx, x, 0, M * K * 2));
    OK(nrt_tensor_write(ty, y, 0, K * N * 2));
    nrt_tensor_set_t *ins = NULL, *outs = NULL;
    OK(nrt_allocate_tensor_set(&ins));
    OK(nrt_allocate_tensor_set(&outs));
    OK(nrt_add_tensor_to_tensor_set(ins, "x", tx));
    OK(nrt_add_tensor_to_tensor_set(ins, "y", ty));
    OK(nrt_add_tensor_to_tensor_set(outs, "output0", to));
    static unsigned char a[M * N * 2], b[M * N * 2];
    OK(nrt_execute(model, ins, outs));
    OK(nrt_tensor_read(to, a, 0, sizeof a));
    OK(nrt_execute(model, ins, outs));
    OK(nrt_tensor_read(to, b, 0, sizeof b));
    EXPECT(memcmp(a, b, sizeof a) == 0);
    FILE *f = fopen(argv[4], "wb");
    EXPECT(f && fwrite(a, 1, sizeof a, f) == sizeof a);
    if (f) fclose(f);
    OK(nrt_unload(model));
    nrt_close();
    return finish("real_neff");
}
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The profile dir, after the workspace build has brought its
/// libnrt.so up to date (`cargo test` does not rebuild the cdylib, so a
/// library left there by an earlier build could be stale).
fn lib_dir() -> PathBuf {
    libnrt_build::libnrt_dir(&repo())
}

fn f16_round(v: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let mut b = vec![0u8; v.len() * 2];
    f32_to_bytes(v, Dtype::Float16, &mut b, &mut Rounding::NearestEven).unwrap();
    let mut out = vec![0f32; v.len()];
    bytes_to_f32(&b, Dtype::Float16, &mut out).unwrap();
    (b, out)
}

fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

#[test]
fn c_api_runs_the_compiler_sample_deterministically() {
    if !Path::new(NEFF).exists() {
        nrt_test_support::skip!("{NEFF} is absent (the compiler's sample lives beside the checkout)");
    }
    let dir = std::env::temp_dir().join(format!("nrt-capi-real-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    let so = lib_dir().join("libnrt.so");
    for link in ["libnrt.so", "libnrt.so.1"] {
        std::os::unix::fs::symlink(&so, dir.join("lib").join(link)).unwrap();
    }
    let src = dir.join("real_neff.c");
    std::fs::write(&src, C_SOURCE).unwrap();
    let exe = dir.join("real_neff");
    let lib = dir.join("lib");
    let o = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-pthread"])
        .arg("-I")
        .arg(repo().join("include"))
        .arg("-I")
        .arg(repo().join("tests/c"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg("-lnrt")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lm")
        .output()
        .unwrap();
    assert!(o.status.success(), "compiling the C test: {}", String::from_utf8_lossy(&o.stderr));
    let (xb, x) = f16_round(&values(M * K, 21));
    let (yb, y) = f16_round(&values(K * N, 22));
    std::fs::write(dir.join("x.bin"), &xb).unwrap();
    std::fs::write(dir.join("y.bin"), &yb).unwrap();
    let run = |out: &str| -> Vec<u8> {
        let o = Command::new(&exe)
            .args([NEFF, dir.join("x.bin").to_str().unwrap(), dir.join("y.bin").to_str().unwrap(), dir.join(out).to_str().unwrap()])
            .env("NEURON_SIM_DETERMINISTIC", "1")
            .env("XDG_RUNTIME_DIR", dir.join("run"))
            .output()
            .unwrap();
        assert!(o.status.success(), "C test failed:\n{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        std::fs::read(dir.join(out)).unwrap()
    };
    let a = run("out_a.bin");
    let b = run("out_b.bin");
    assert_eq!(a, b, "NEURON_SIM_DETERMINISTIC=1: two processes differ");
    let mut got = vec![0f32; M * N];
    bytes_to_f32(&a, Dtype::Float16, &mut got).unwrap();
    let mut worst = 0f64;
    for m in 0..M {
        for n in 0..N {
            let acc: f32 = (0..K).map(|k| x[m * K + k] * y[k * N + n]).sum();
            let want = f16_round(&[acc]).1[0];
            let g = got[m * N + n];
            // One fp16 ulp at the reference's magnitude (subnormal spacing below 2^-14).
            let ulp = 2f64.powi(f64::from(want.abs()).max(2f64.powi(-14)).log2().floor() as i32 - 10);
            let err = (f64::from(g) - f64::from(want)).abs();
            assert!(err <= ulp, "output0[{m}][{n}] = {g}, x @ y = {want}: {} fp16 ulps apart, at most 1 allowed", err / ulp);
            worst = worst.max(err / ulp);
        }
    }
    println!("largest distance from the reference: {worst} fp16 ulp");
    let _ = std::fs::remove_dir_all(&dir);
}
