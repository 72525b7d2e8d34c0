//! `nrt gen matmul` and `nrt neff check` as a user runs them: a generated
//! matmul runs and checks clean, the compiler sample checks clean, and a
//! generated NEFF with records nothing executes is listed by `check` and
//! refused by the load with the same list.

mod common;

use common::read_npy;

use std::path::{Path, PathBuf};
use std::process::Output;

fn nrt(args: &[&str]) -> Output {
    common::nrt_command().args(args).output().expect("run nrt")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-gen-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_compiler_sample_checks_clean() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/neff/matmul_small.neff");
    if !p.exists() {
        nrt_test_support::skip!("{} is absent (the compiler's sample lives beside the checkout)", p.display());
    }
    let out = nrt(&["neff", "check", s(&p)]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{e}");
    assert!(o.contains("the simulator can run all of it (58 records in 10 streams of 2 subgraph(s))"), "{o}");
}

#[test]
fn a_generated_matmul_checks_clean_and_runs() {
    let d = scratch("ok");
    let neff = d.join("mm.neff");
    let out = nrt(&["gen", "matmul", "--m", "128", "--k", "256", "--n", "128", "--dtype", "fp16", "-o", s(&neff)]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.contains("x [128, 256] @ y [256, 128] -> output0 [128, 128], float16, LNC 2"), "{}", text(&out).0);
    assert!(nrt(&["neff", "check", s(&neff)]).status.success());
    let run = nrt(&["run", s(&neff), "--output-dir", s(&d)]);
    assert!(run.status.success(), "{}", text(&run).1);
    assert!(d.join("output0.npy").exists());
    let bad = nrt(&["gen", "matmul", "--m", "128", "--k", "100", "--n", "128", "-o", s(&d.join("x.neff"))]);
    assert!(!bad.status.success());
    assert!(text(&bad).1.contains("k = 100 must be a positive multiple of 128"), "{}", text(&bad).1);
}

/// `nrt gen matmul --print output0`: with NEURON_RT_DEBUG_OUTPUT_DIR set,
/// `nrt run` leaves each core's output block (LNC 2 splits N: columns
/// 0..64 and 64..128) as `<dir>/output0.r0.cCOL/core_<lnc>/0/tensor.npy`,
/// the bytes `nrt run` writes as output0; without it, `nrt run` prints
/// them.
#[test]
fn a_generated_matmul_prints_its_output_from_the_device() {
    let d = scratch("print");
    let neff = d.join("mm.neff");
    let out = nrt(&["gen", "matmul", "--m", "128", "--k", "256", "--n", "128", "--dtype", "fp16", "--print", "output0", "-o", s(&neff)]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.contains("prints output0 tile by tile"), "{}", text(&out).0);
    let prints = d.join("prints");
    let run = common::nrt_command().args(["run", s(&neff), "--output-dir", s(&d)]).env("NEURON_RT_DEBUG_OUTPUT_DIR", &prints).output().unwrap();
    assert!(run.status.success(), "{}", text(&run).1);
    let (h, whole) = read_npy(&d.join("output0.npy"));
    assert_eq!(h.shape, [128, 128]);
    for col in [0usize, 64] {
        let dir = prints.join(format!("output0.r0.c{col}"));
        let cores: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).collect();
        assert_eq!(cores.len(), 1, "{cores:?}");
        let (th, tile) = read_npy(&cores[0].join("0/tensor.npy"));
        assert_eq!((th.descr.as_str(), th.shape.as_slice()), ("<f2", &[128u64, 64][..]));
        let want: Vec<u8> = (0..128).flat_map(|r| whole[(r * 128 + col) * 2..(r * 128 + col + 64) * 2].to_vec()).collect();
        assert!(tile == want, "output0.r0.c{col}: the printed block differs from the output");
    }
    let shown = nrt(&["run", s(&neff)]);
    assert!(shown.status.success() && text(&shown).0.contains("print  output0.r0.c64 "), "{}", text(&shown).0);
    let bad = nrt(&["gen", "matmul", "--m", "128", "--k", "256", "--n", "128", "--print", "w", "-o", s(&d.join("w.neff"))]);
    assert!(!bad.status.success() && text(&bad).1.contains("output0"), "{}", text(&bad).1);
}

#[test]
fn unknown_opcodes_are_listed_by_check_and_refused_by_the_load() {
    let d = scratch("bad");
    let neff = d.join("mm.neff");
    assert!(nrt(&["gen", "matmul", "--m", "128", "--k", "256", "--n", "128", "-o", s(&neff)]).status.success());
    let dir = d.join("src");
    assert!(nrt(&["neff", "unpack", s(&neff), s(&dir)]).status.success());
    // Two DVE records of sg01 become opcode 0x0D; record 0 (0xB1) of sg00's PE stream 0x0E.
    let dve = dir.join("sg01/DVE.bin");
    let mut b = std::fs::read(&dve).unwrap();
    b[2 * 64] = 0x0D;
    b[3 * 64] = 0x0D;
    std::fs::write(&dve, &b).unwrap();
    let pe = dir.join("sg00/PE.bin");
    let mut b = std::fs::read(&pe).unwrap();
    b[0] = 0x0E;
    std::fs::write(&pe, &b).unwrap();
    let patched = d.join("patched.neff");
    assert!(nrt(&["neff", "pack", s(&dir), s(&patched)]).status.success());
    let out = nrt(&["neff", "check", s(&patched)]);
    let (o, e) = text(&out);
    assert!(!out.status.success());
    assert!(o.contains("0x0e     PE") && o.contains("sg00[0]"), "{o}");
    assert!(o.contains("0x0d     DVE          2  sg01[2]"), "{o}");
    assert!(e.contains("cannot run 3 of"), "{e}");
    let run = nrt(&["run", s(&patched)]);
    let e = text(&run).1;
    assert!(!run.status.success());
    assert!(e.contains("Unsupported hardware operator code 14 found in neff (PE instruction 0 of sg00)"), "{e}");
    assert!(e.contains("opcode 0x0d on DVE x2") && e.contains("first: sg01 instruction 2"), "{e}");
}
