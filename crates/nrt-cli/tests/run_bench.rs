//! `nrt run`, `nrt bench` and `nrt example-data` end to end on the
//! repository's examples (packed on the fly from their source trees).

mod common;

use common::read_npy;

use std::path::{Path, PathBuf};
use std::process::Output;

fn nrt(args: &[&str]) -> Output {
    common::nrt_command().args(args).output().expect("run nrt")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).to_str().unwrap().to_string()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-run-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn f32_npy(shape: &[u64], values: &[f32]) -> Vec<u8> {
    nrt_neff::npy::encode_npy("<f4", shape, &values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())
}

#[test]
fn run_reads_inputs_and_writes_outputs_as_npy() {
    let dir = scratch("copy-io");
    let values: Vec<f32> = (0..8 * 128).map(|i| i as f32 * 0.25 - 100.0).collect();
    let input = dir.join("in.npy");
    std::fs::write(&input, f32_npy(&[8, 128], &values)).unwrap();
    let out_dir = dir.join("out");
    let o = nrt(&["run", &example("copy"), "--input", &format!("input={}", input.display()), "--output-dir", out_dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (h, data) = read_npy(&out_dir.join("output.npy"));
    assert_eq!((h.descr.as_str(), h.shape.as_slice()), ("<f4", &[8u64, 128][..]));
    let got: Vec<f32> = data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, values, "the copy example returns its input");
    assert!(text(&o.stdout).contains("from file"), "{}", text(&o.stdout));
}

/// `nrt run` shows a model's device prints (the device-print example's
/// `x` and `y = 2x + 1`, DEBUG_TENSOR_READ on DVE); with
/// NEURON_RT_DEBUG_OUTPUT_DIR the runtime writes them as `.npy` instead.
#[test]
fn run_shows_device_prints_or_leaves_them_to_the_output_dir() {
    let dir = scratch("device-print");
    let values: Vec<f32> = (0..32).map(|i| i as f32 - 8.0).collect();
    let input = dir.join("x.npy");
    std::fs::write(&input, f32_npy(&[4, 8], &values)).unwrap();
    let x = format!("x={}", input.display());
    let o = nrt(&["run", &example("device-print"), "--input", &x]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let at = |p: &str| out.find(p).unwrap_or_else(|| panic!("no {p:?} in {out}"));
    assert!(at("print  x ") < at("print  y "), "{out}");
    assert!(out.contains("float32   [4, 8] core ") && out.contains(" engine DVE"), "{out}");
    assert!(out.contains("[-8, -7, -6, -5, -4, -3, -2, -1]"), "x's first row: {out}");
    assert!(out.contains("[-15, -13, -11, -9, -7, -5, -3, -1]"), "y's first row: {out}");
    let prints = dir.join("prints");
    let o = common::nrt_command().args(["run", &example("device-print"), "--input", &x]).env("NEURON_RT_DEBUG_OUTPUT_DIR", &prints).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("print  x"), "{}", text(&o.stdout));
    // One logical core (whichever the run got), one iteration.
    let cores: Vec<PathBuf> = std::fs::read_dir(prints.join("y")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(cores.len(), 1, "{cores:?}");
    assert!(cores[0].file_name().unwrap().to_str().unwrap().starts_with("core_"), "{cores:?}");
    let (h, data) = read_npy(&cores[0].join("0/tensor.npy"));
    assert_eq!((h.descr.as_str(), h.shape.as_slice()), ("<f4", &[4u64, 8][..]));
    let want: Vec<u8> = values.iter().flat_map(|v| (v * 2.0 + 1.0).to_le_bytes()).collect();
    assert_eq!(data, want);
}

#[test]
fn run_without_inputs_uses_deterministic_data_and_prints_checksums() {
    let a = nrt(&["run", &example("copy")]);
    assert!(a.status.success(), "{}", text(&a.stderr));
    let out = text(&a.stdout);
    let sum = |kind: &str| {
        out.lines().find(|l| l.starts_with(kind)).and_then(|l| l.rsplit(' ').next()).map(str::to_string).unwrap_or_else(|| panic!("no {kind} line in {out}"))
    };
    // The copy's output is its input, byte for byte.
    assert_eq!(sum("input "), sum("output "));
    let b = nrt(&["run", &example("copy")]);
    assert_eq!(text(&b.stdout).lines().filter(|l| l.contains("checksum")).collect::<Vec<_>>(), out.lines().filter(|l| l.contains("checksum")).collect::<Vec<_>>(), "same data every run");
}

/// Every example runs to the same checksums through the driver portal
/// (`NRT_DEVICE=emulated-driver`: every device call an ioctl to the
/// emulated driver) as on the in-process simulator, and `nrt bench`
/// reports its figures through it.
#[test]
fn every_example_gives_the_same_checksums_through_the_emulated_driver() {
    let checksums = |o: &Output| text(&o.stdout).lines().filter(|l| l.contains("checksum")).map(str::to_string).collect::<Vec<_>>();
    for (name, ranks) in [("copy", None), ("mlp", None), ("mlp-bf16", None), ("all-engines", None), ("custom_ops", None), ("tp-mlp", Some("2"))] {
        let path = example(name);
        let mut args = vec!["run", path.as_str()];
        if let Some(r) = ranks {
            args.extend(["--ranks", r]);
        }
        let sim = common::nrt_command().args(&args).env_remove("NRT_DEVICE").output().unwrap();
        let portal = common::nrt_command().args(&args).env("NRT_DEVICE", "emulated-driver").output().unwrap();
        assert!(sim.status.success() && portal.status.success(), "{name}: {}{}", text(&sim.stderr), text(&portal.stderr));
        if ranks.is_none() {
            assert!(!checksums(&sim).is_empty(), "{name}: no checksums in {}", text(&sim.stdout));
        }
        assert_eq!(checksums(&portal), checksums(&sim), "{name}: checksums differ through the emulated driver");
        assert_eq!(text(&portal.stdout).lines().count(), text(&sim.stdout).lines().count(), "{name}: {}", text(&portal.stdout));
    }
    let b = common::nrt_command()
        .args(["bench", &example("copy"), "--iterations", "5", "--warmup", "1"])
        .env("NRT_DEVICE", "emulated-driver")
        .output()
        .unwrap();
    assert!(b.status.success() && text(&b.stdout).contains("p50"), "{}{}", text(&b.stdout), text(&b.stderr));
    let bad = common::nrt_command().args(["run", &example("copy")]).env("NRT_DEVICE", "hardware").output().unwrap();
    assert!(!bad.status.success() && text(&bad.stderr).contains("NRT_DEVICE"), "{}", text(&bad.stderr));
}

#[test]
fn run_mlp_writes_a_relu_output() {
    let dir = scratch("mlp");
    let o = nrt(&["run", &example("mlp"), "--output-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (h, data) = read_npy(&dir.join("y.npy"));
    assert_eq!(h.shape, vec![128, 512]);
    let y: Vec<f32> = data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(y.iter().all(|v| *v >= 0.0), "relu output is never negative");
    assert!(y.iter().filter(|v| **v > 0.0).count() > 1000, "and not all zero");
}

#[test]
fn run_rejects_an_unknown_input_name_in_one_line() {
    let dir = scratch("badname");
    let p = dir.join("x.npy");
    std::fs::write(&p, f32_npy(&[8, 128], &vec![0.0; 8 * 128])).unwrap();
    let o = nrt(&["run", &example("copy"), "--input", &format!("nosuch={}", p.display())]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("nosuch") && err.contains("no input of that name") && err.contains("input"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn run_rejects_a_wrong_shape_naming_both() {
    let dir = scratch("badshape");
    let p = dir.join("x.npy");
    std::fs::write(&p, f32_npy(&[4, 128], &vec![0.0; 4 * 128])).unwrap();
    let o = nrt(&["run", &example("copy"), "--input", &format!("input={}", p.display())]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("[4, 128]") && err.contains("[8, 128]"), "{err}");
    // A dtype mismatch is refused too.
    let q = dir.join("i.npy");
    std::fs::write(&q, nrt_neff::npy::encode_npy("<i4", &[8, 128], &vec![0u8; 8 * 128 * 4])).unwrap();
    let o = nrt(&["run", &example("copy"), "--input", &format!("input={}", q.display())]);
    assert!(!o.status.success() && text(&o.stderr).contains("float32"), "{}", text(&o.stderr));
    // And a malformed argument.
    let o = nrt(&["run", &example("copy"), "--input", "justaname"]);
    assert!(!o.status.success() && text(&o.stderr).contains("NAME=PATH"), "{}", text(&o.stderr));
}

#[test]
fn bench_json_has_the_documented_keys() {
    let o = nrt(&["bench", &example("copy"), "--iterations", "20", "--warmup", "2", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    for k in ["p0", "p1", "p50", "p99", "p100"] {
        assert!(v["latency_us"][k].as_f64().is_some_and(|x| x > 0.0), "latency_us.{k} in {v}");
    }
    let l = &v["latency_us"];
    assert!(l["p0"].as_f64() <= l["p50"].as_f64() && l["p50"].as_f64() <= l["p100"].as_f64());
    assert!(v["executions_per_s"].as_f64().is_some_and(|x| x > 0.0));
    // The spin round trip is measured only with --spin.
    assert!(v.get("spin_roundtrip_us").is_none(), "{v}");
    // nrtpy's device vs host split: one device time per execution, from
    // the trace's nc_exec_running pairs, well under the host latency.
    let d = &v["device_us"];
    assert_eq!(d["iterations"].as_u64(), Some(20), "{v}");
    for k in ["mean", "min", "max", "p50", "p99"] {
        assert!(d[k].as_f64().is_some_and(|x| x > 0.0), "device_us.{k} in {v}");
    }
    assert!(d["min"].as_f64() <= d["mean"].as_f64() && d["mean"].as_f64() <= d["max"].as_f64() && d["std_dev"].as_f64().is_some_and(|x| x >= 0.0));
    assert!(v["traced_latency_us"]["p50"].as_f64().is_some_and(|x| x > 0.0) && v["traced_over_untraced_p50"].as_f64().is_some(), "{v}");
    let o = nrt(&["bench", &example("copy"), "--iterations", "20", "--warmup", "2", "--json", "--spin"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert!(s["spin_roundtrip_us"].as_f64().is_some_and(|x| x > 0.0), "{s}");
    assert!(s["spin_batches"].as_u64().is_some_and(|n| n >= 2) && s["p50_over_spin_roundtrip"].as_f64().is_some(), "{s}");
    // --host-only: the untraced executions alone.
    let o = nrt(&["bench", &example("copy"), "--iterations", "20", "--warmup", "2", "--json", "--host-only"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let h: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert!(h.get("device_us").is_none() && h.get("traced_latency_us").is_none() && h["latency_us"]["p50"].as_f64().is_some(), "{h}");
    // The runtime's steady state: no allocation on the executing thread and
    // one doorbell per physical core the model runs on (the copy example has
    // one subgraph, so one core).
    assert_eq!(v["heap_allocations_per_execute"].as_f64(), Some(0.0), "{v}");
    assert_eq!(v["doorbells_per_execute"].as_f64(), Some(1.0), "{v}");
    let table = nrt(&["bench", &example("copy"), "--iterations", "5", "--warmup", "1"]);
    assert!(text(&table.stdout).contains("p50") && text(&table.stdout).contains("executions/s"));
    assert!(text(&table.stdout).contains("device (us)") && !text(&table.stdout).contains("spin round trip"), "{}", text(&table.stdout));
    let zero = nrt(&["bench", &example("copy"), "--iterations", "0"]);
    assert!(!zero.status.success() && text(&zero.stderr).contains("--iterations"));
}

#[test]
fn example_data_writes_the_constants_once() {
    let dir = scratch("example-data");
    for name in ["mlp", "mlp-bf16", "tp-mlp/rank0", "tp-mlp/rank1"] {
        std::fs::create_dir_all(dir.join(name).join("sg00")).unwrap();
        std::fs::copy(Path::new(&example(name)).join("sg00/def.json"), dir.join(name).join("sg00/def.json")).unwrap();
    }
    let o = nrt(&["example-data", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (w, data) = read_npy(&dir.join("mlp-bf16/sg00/W.npy"));
    assert_eq!((w.descr.as_str(), w.shape.as_slice(), data.len()), ("<u2", &[512u64, 512][..], 512 * 512 * 2));
    let (b, _) = read_npy(&dir.join("mlp/sg00/b.npy"));
    assert_eq!(b.shape, vec![512]);
    // The tensor-parallel mlp's shards: W1's columns and W2's rows of each rank, b2 on rank 0 only.
    assert_eq!(read_npy(&dir.join("tp-mlp/rank1/sg00/W1.npy")).0.shape, vec![256, 256]);
    assert_eq!(read_npy(&dir.join("tp-mlp/rank1/sg00/W2.npy")).0.shape, vec![256, 256]);
    assert!(dir.join("tp-mlp/rank0/sg00/b2.npy").is_file() && !dir.join("tp-mlp/rank1/sg00/b2.npy").exists());
    let again = nrt(&["example-data", dir.to_str().unwrap()]);
    assert!(text(&again.stdout).contains("up to date"), "{}", text(&again.stdout));
    let missing = nrt(&["example-data", dir.join("nowhere").to_str().unwrap()]);
    assert!(!missing.status.success());
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn the_tp_mlp_example_is_what_the_generator_writes() {
    let dir = scratch("tp-mlp-gen");
    let o = nrt(&["gen", "tp-mlp", "--ranks", "2", "--no-constants", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let committed = nrt_neff::read_dir(Path::new(&example("tp-mlp"))).unwrap().members;
    let fresh = nrt_neff::read_dir(&dir).unwrap().members;
    let source = |m: &nrt_neff::Members| m.iter().filter(|(k, _)| !k.ends_with(".npy") && !k.ends_with("README.md") && !k.ends_with(".gitignore")).map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>();
    assert_eq!(source(&committed), source(&fresh), "examples/tp-mlp is stale: regenerate it with `nrt gen tp-mlp --ranks 2 --no-constants -o examples/tp-mlp`");
}

#[test]
fn run_ranks_runs_the_tp_mlp_on_two_cores_with_one_result() {
    let dir = scratch("tp-mlp-run");
    let o = nrt(&["run", "--ranks", "2", &example("tp-mlp"), "--output-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("2 ranks: outputs identical on every rank"), "{}", text(&o.stdout));
    let (h, two) = read_npy(&dir.join("rank0/output0.npy"));
    assert_eq!(h.shape, vec![128, 256]);
    assert_eq!(read_npy(&dir.join("rank1/output0.npy")).1, two, "both ranks hold the same bytes");
    // The one-rank NEFF of the same mlp, run plainly: the same result up to
    // fp32 summation order. With |x| < 1, |W| < 1/16 and |b| < 1/2 the
    // error bound of crates/nrt/tests/tp_mlp.rs is at most
    // 2 (512/16 · γ_258 · 16.5 + γ_514 · (512 · 16.5/16 + 0.5)) < 0.05 per
    // element whatever x is, so the two differ by less than 0.1 (b2 alone
    // moves outputs by up to 0.5; the observed differences are ~1e-6).
    let one = dir.join("one");
    assert!(nrt(&["gen", "tp-mlp", "--ranks", "1", "-o", one.to_str().unwrap()]).status.success());
    let single = nrt(&["run", one.join("rank0").to_str().unwrap(), "--output-dir", one.to_str().unwrap()]);
    assert!(single.status.success(), "{}", text(&single.stderr));
    let a = f32s(&two);
    let b = f32s(&read_npy(&one.join("output0.npy")).1);
    assert!(a.iter().any(|v| *v != 0.0));
    for (n, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!((x - y).abs() < 0.1, "output0[{}][{}]: two ranks {x}, one core {y}", n / 256, n % 256);
    }
}

#[test]
fn run_ranks_names_a_missing_rank_and_a_short_world() {
    let o = nrt(&["run", "--ranks", "3", &example("tp-mlp")]);
    assert!(!o.status.success() && text(&o.stderr).contains("no rank2/ source tree or rank2.neff"), "{}", text(&o.stderr));
    let o = nrt(&["run", "--ranks", "1", &example("tp-mlp")]);
    assert!(!o.status.success() && text(&o.stderr).contains("World size of neff 2 is greater than world size of global communicator 1"), "{}", text(&o.stderr));
    // Without --ranks: the directory of rank trees, and one rank's tree,
    // each say what to run instead.
    let o = nrt(&["run", &example("tp-mlp")]);
    assert!(!o.status.success() && text(&o.stderr).contains("holds one model per rank (rank0 .. rank1): run them together with `nrt run --ranks 2 "), "{}", text(&o.stderr));
    let o = nrt(&["run", &format!("{}/rank1", example("tp-mlp"))]);
    let err = text(&o.stderr);
    assert!(!o.status.success() && err.contains("World size of neff 2") && err.contains("is one rank of a world of 2 collectives ranks: run every rank's model together with `nrt run --ranks 2 DIR`"), "{err}");
    let o = nrt(&["run", "--processes", "2", &example("tp-mlp")]);
    assert!(!o.status.success() && text(&o.stderr).contains("it needs --ranks"), "{}", text(&o.stderr));
    let o = nrt(&["run", "--ranks", "2", "--processes", "3", &example("tp-mlp")]);
    assert!(!o.status.success() && text(&o.stderr).contains("must split evenly"), "{}", text(&o.stderr));
}

/// `--processes 2`: one rank per process, meeting at a loopback
/// NEURON_RT_ROOT_COMM_ID and moving the all-reduce's bytes over
/// libfabric; the same outputs as the one-process run.
#[test]
fn run_ranks_splits_the_tp_mlp_over_two_processes() {
    if !common::libfabric_installed() {
        return;
    }
    let dir = scratch("tp-mlp-procs");
    let o = nrt(&["run", "--ranks", "2", "--processes", "2", &example("tp-mlp"), "--output-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}\n{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("2 ranks in 2 processes: outputs identical on every rank"), "{}", text(&o.stdout));
    let one = nrt(&["run", "--ranks", "2", &example("tp-mlp"), "--output-dir", dir.join("one").to_str().unwrap()]);
    assert!(one.status.success(), "{}", text(&one.stderr));
    for r in ["rank0", "rank1"] {
        assert_eq!(read_npy(&dir.join(r).join("output0.npy")).1, read_npy(&dir.join("one").join(r).join("output0.npy")).1, "{r}: two processes and one give the same bytes");
    }
}

/// `--processes 2` on a tp-decoder tree at LNC 2 (each NEFF a subgraph
/// per physical core, each with its all-reduces): one rank per process,
/// as torchrun runs them, both physical cores' rings crossing the
/// processes; every execution within the reference's bound, the ranks
/// identical, and every `hidden` the bytes one process computes. The
/// prefill NEFFs alone, as a plain tree of rank models at LNC 2, run the
/// same way.
#[test]
fn run_ranks_splits_a_tp_decoder_at_lnc_2_over_two_processes() {
    if !common::libfabric_installed() {
        return;
    }
    let dir = scratch("tp-decoder-lnc2-procs");
    let tree = dir.join("tree");
    assert!(nrt(&["gen", "tp-decoder", "--ranks", "2", "--layers", "1", "--lnc", "2", "-o", tree.to_str().unwrap()]).status.success());
    let o = nrt(&["run", "--ranks", "2", "--processes", "2", tree.to_str().unwrap(), "--output-dir", dir.join("two").to_str().unwrap()]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("2 ranks in 2 processes: outputs identical on every rank"), "{stdout}");
    assert!(stdout.contains("every output within its worst-case fp32 bound"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.contains(" decode ")).count(), 8, "4 decode steps on each rank: {stdout}");
    let one = nrt(&["run", "--ranks", "2", tree.to_str().unwrap(), "--output-dir", dir.join("one").to_str().unwrap()]);
    assert!(one.status.success(), "{}", text(&one.stderr));
    for r in ["rank0", "rank1"] {
        for i in 0..5 {
            let f = format!("{r}/hidden_{i}.npy");
            let (h, two) = read_npy(&dir.join("two").join(&f));
            assert_eq!(h.shape[0], 2, "{f}: a sequence per physical core");
            assert_eq!(two, read_npy(&dir.join("one").join(&f)).1, "{f}: two processes and one give the same bytes");
        }
    }
    let o = nrt(&["run", "--ranks", "2", "--processes", "2", tree.join("prefill").to_str().unwrap()]);
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("2 ranks in 2 processes: outputs identical on every rank"), "{}", text(&o.stdout));
}

#[test]
fn the_tp_decoder_example_is_what_the_generator_writes() {
    let dir = scratch("tp-decoder-gen");
    let o = nrt(&["gen", "tp-decoder", "--ranks", "2", "--layers", "2", "-o", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for part in ["prefill/rank0", "prefill/rank1", "decode/rank0", "decode/rank1"] {
        let committed = nrt_neff::read_dir(&Path::new(&example("tp-decoder")).join(part)).unwrap().members;
        let fresh = nrt_neff::read_dir(&dir.join(part)).unwrap().members;
        assert_eq!(committed, fresh, "examples/tp-decoder/{part} is stale: regenerate it with `nrt gen tp-decoder --ranks 2 --layers 2 -o examples/tp-decoder`");
    }
    let desc = |p: &Path| std::fs::read_to_string(p.join("decoder.json")).unwrap();
    assert_eq!(desc(Path::new(&example("tp-decoder"))), desc(&dir));
}

/// One rank runs today's way (no collectives): the prefill and decode
/// NEFFs on one core sharing their tensors, every execution within the
/// reference's bound, each `hidden` written per execution.
#[test]
fn run_ranks_runs_a_one_rank_decoder_and_checks_it() {
    let dir = scratch("tp-decoder-one");
    let tree = dir.join("tree");
    assert!(nrt(&["gen", "tp-decoder", "--ranks", "1", "--layers", "1", "-o", tree.to_str().unwrap()]).status.success());
    let out = dir.join("out");
    let o = nrt(&["run", "--ranks", "1", tree.to_str().unwrap(), "--output-dir", out.to_str().unwrap()]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("every output within its worst-case fp32 bound"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("rank 0 decode")).count(), 4, "{stdout}");
    assert_eq!(read_npy(&out.join("rank0/hidden_0.npy")).0.shape, vec![1, 16, 256]);
    assert_eq!(read_npy(&out.join("rank0/hidden_4.npy")).0.shape, vec![1, 1, 256]);
    let o = nrt(&["run", "--ranks", "2", tree.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o.stderr).contains("sharded over 1 ranks"), "{}", text(&o.stderr));
    let o = nrt(&["run", "--ranks", "1", tree.to_str().unwrap(), "--input", "x=x.npy"]);
    assert!(!o.status.success() && text(&o.stderr).contains("takes no inputs"), "{}", text(&o.stderr));
}

/// The example: 2 ranks, each with its prefill and decode NEFF (4
/// all-reduces each) on its own core; every execution agrees across the
/// ranks and stays within the reference's bound.
#[test]
fn run_ranks_runs_the_tp_decoder_example() {
    let o = nrt(&["run", "--ranks", "2", &example("tp-decoder")]);
    let stdout = text(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", text(&o.stderr));
    assert!(stdout.contains("2 ranks: outputs identical on every rank"), "{stdout}");
    assert!(stdout.contains("every output within its worst-case fp32 bound"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.contains(" decode ")).count(), 8, "4 decode steps on each rank: {stdout}");
}
