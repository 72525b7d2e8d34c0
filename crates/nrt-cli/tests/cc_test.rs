//! `nrt cc-test` end to end: the table, the JSON report with its check
//! verdicts, and the failure lines.

use std::process::{Command, Output};

fn cc_test(args: &[&str], name: &str) -> Output {
    let dir = std::env::temp_dir().join(format!("nrt-cc-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Command::new(env!("CARGO_BIN_EXE_nrt")).arg("cc-test").args(args).env("XDG_RUNTIME_DIR", &dir).env_remove("NEURON_SIM_INSTANCE").output().expect("run nrt")
}

#[test]
fn all_reduce_prints_nccom_tests_table_and_writes_a_checked_json_report() {
    let json = std::env::temp_dir().join(format!("nrt-cc-test-{}.json", std::process::id()));
    let out = cc_test(&["-r", "8", "-b", "1k", "-e", "16k", "-f", "4", "-n", "3", "-w", "1", "-d", "bf16", "-c", "all_ones", "--show-algorithm", "--report-to-json-file", json.to_str().unwrap(), "allr"], "allr");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for col in ["size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "algorithm", "check", "Avg bus bandwidth:", "simulated device: time is this machine's wall clock"] {
        assert!(text.contains(col), "missing {col}:\n{text}");
    }
    // The verdict: per size in the table, and in a closing line.
    assert_eq!(text.lines().filter(|l| l.contains("bf16") && l.trim_end().ends_with("pass")).count(), 3, "{text}");
    assert!(text.contains(" Check: pass (3 of 3 sizes)"), "{text}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "1k, 4k, 16k");
    for r in rows {
        assert_eq!(r["check"], "pass");
        assert_eq!(r["type"], "bf16");
        let (alg, bus) = (r["algbw(GB/s)"].as_f64().unwrap(), r["busbw(GB/s)"].as_f64().unwrap());
        assert!((bus - alg * 1.75).abs() <= 1e-9 * bus.max(1.0), "busbw = algbw x 2(r-1)/r");
        assert!(r["time:avg(us)"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(rows[0]["size(B)"], 1024);
    assert_eq!(rows[0]["count(elems)"], 512);
    let _ = std::fs::remove_file(&json);
}

/// A whole simulated instance driven by one process: 32 ranks on the 16
/// devices of a trn1.32xlarge (LNC 1) and 64 on a trn2.48xlarge at LNC
/// 2, small sizes, checked; the ring's steps between devices are peer
/// DMA.
#[test]
fn a_whole_instance_runs_32_and_64_ranks() {
    for (instance, lnc, ranks, op) in [("trn1.32xlarge", "1", "32", "allr"), ("trn2.48xlarge", "2", "64", "allr"), ("trn1.32xlarge", "1", "32", "all_gather")] {
        let dir = std::env::temp_dir().join(format!("nrt-cc-test-{}-{instance}-{op}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_nrt"))
            .args(["cc-test", "-r", ranks, "-b", "4k", "-e", "64k", "-f", "16", "-n", "2", "-w", "1", "-d", "fp32", "-c", "random", op])
            .env("XDG_RUNTIME_DIR", &dir)
            .env("NEURON_SIM_INSTANCE", instance)
            .env("NEURON_LOGICAL_NC_CONFIG", lnc)
            .output()
            .expect("run nrt");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{instance} -r {ranks} {op}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(text.lines().filter(|l| l.contains("float32") || l.contains("fp32")).count(), 2, "4k and 64k:\n{text}");
        assert!(!text.contains("errors found"), "{text}");
    }
}

#[test]
fn every_op_passes_its_random_check() {
    for op in ["all_gather", "redsct", "alltoall", "permute", "sendrecv"] {
        let out = cc_test(&["-r", "4", "-b", "4k", "-e", "4k", "-n", "2", "-w", "1", "-d", "int32", "-c", "random", "--seed", "7", op], op);
        assert!(out.status.success(), "{op}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn bad_requests_fail_with_a_message() {
    let out = cc_test(&["-r", "3", "sendrecv"], "odd");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("-r must be even"));
    let out = cc_test(&["-r", "2", "-N", "2", "--hosts", "h1,h2", "allr"], "nodes");
    assert!(String::from_utf8_lossy(&out.stderr).contains("set NEURON_RT_ROOT_COMM_ID"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = cc_test(&["-r", "2", "bogus"], "bogus");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown operation \"bogus\""));
    let out = cc_test(&["-r", "16", "allr"], "many");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-r 16: 16 rank(s) in this process need one logical core each and 8 are visible") && err.contains("NEURON_SIM_INSTANCE=trn2.48xlarge"), "{err}");
}

/// `-c` takes an optional mode: `-c allr` is the default check and the
/// op, not a check named allr with the op missing.
#[test]
fn minus_c_before_the_op_checks_and_keeps_the_op() {
    let out = cc_test(&["-r", "2", "-b", "1k", "-e", "1k", "-n", "1", "-w", "0", "-c", "allr"], "c-op");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(" Check: pass (1 of 1 sizes)"), "{text}");
    let out = cc_test(&["-r", "2", "-c", "all_ones"], "c-only");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("the operation is missing"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A size that fails prints its failure line, no table header without
/// rows, and one closing message counting "1 error".
#[test]
fn a_failed_size_is_one_error_without_an_empty_table() {
    let out = cc_test(&["-r", "2", "-b", "64G", "-e", "64G", "-n", "1", "-w", "0", "allr"], "fail");
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success());
    assert!(text.contains("Failure running size 68719476736:") && !text.contains("size(B)") && !text.contains("errors found"), "{text}");
    assert_eq!(err.matches("1 error found - test failed").count(), 1, "{err}");
}

/// Whether libfabric can be loaded (the cross-process runs need it); the
/// calling test is reported skipped when it cannot.
fn libfabric_here() -> bool {
    let found = std::process::Command::new("ldconfig").arg("-p").output().map(|o| String::from_utf8_lossy(&o.stdout).contains("libfabric.so.1")).unwrap_or(false);
    if !found {
        nrt_test_support::skip!(return false; "libfabric.so.1 is not installed (Debian package libfabric1; scripts/test-all installs it)");
    }
    true
}

#[test]
fn processes_split_the_ranks_and_gather_one_checked_report() {
    if !libfabric_here() {
        return;
    }
    let json = std::env::temp_dir().join(format!("nrt-cc-test-procs-{}.json", std::process::id()));
    for (op, dt) in [("allr", "int32"), ("allg", "uint8"), ("redsct", "bf16")] {
        let out = cc_test(&["-r", "4", "--processes", "2", "-b", "4k", "-e", "16k", "-f", "4", "-n", "2", "-w", "1", "-d", dt, "-c", "random", "--report-to-json-file", json.to_str().unwrap(), op], "procs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{op}: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("size(B)") && text.contains("Avg bus bandwidth") && !text.contains("WORKER"), "{text}");
        let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let results = report["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{report}");
        assert!(results.iter().all(|r| r["check"] == "pass"), "{op}: {report}");
    }
    // At LNC 2 (trn2's default) each process publishes connections for
    // both physical cores' ring channels; the standalone all-reduce runs
    // on the first's.
    let dir = std::env::temp_dir().join(format!("nrt-cc-test-{}-procs-lnc2", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nrt"))
        .args(["cc-test", "-r", "4", "--processes", "2", "-b", "4k", "-e", "16k", "-f", "4", "-n", "2", "-w", "1", "-d", "fp32", "-c", "random", "allr"])
        .env("XDG_RUNTIME_DIR", &dir)
        .env_remove("NEURON_SIM_INSTANCE")
        .env("NEURON_LOGICAL_NC_CONFIG", "2")
        .output()
        .expect("run nrt");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains(" Check: pass (2 of 2 sizes)"), "LNC 2: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let out = cc_test(&["-r", "3", "--processes", "2", "allr"], "uneven");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("must split evenly"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn minus_n_without_mpirun_names_the_package() {
    let dir = std::env::temp_dir().join(format!("nrt-cc-test-{}-mpi", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nrt"))
        .args(["cc-test", "-r", "2", "-N", "2", "--hosts", "h1,h2", "allr"])
        .env("XDG_RUNTIME_DIR", &dir)
        .env("NEURON_RT_ROOT_COMM_ID", "127.0.0.1:62001")
        .env("PATH", &dir)
        .output()
        .expect("run nrt");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("mpirun not found") && err.contains("apt-get install openmpi-bin"), "{err}");
}

/// The help says what -N and --processes do: several machines through
/// mpirun, several processes of this machine (it once said -N took 1 only).
#[test]
fn help_describes_the_multi_node_and_multi_process_runs() {
    let out = Command::new(env!("CARGO_BIN_EXE_nrt")).args(["cc-test", "--help"]).output().expect("run nrt");
    let help = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.status.success(), "{help}");
    let nodes = help.split("--nnodes").nth(1).expect("the -N option").split(" -s,").next().unwrap();
    assert!(nodes.contains("mpirun") && nodes.contains("NEURON_RT_ROOT_COMM_ID") && !nodes.contains("only 1"), "-N's help: {nodes}");
    assert!(help.contains("split over --processes on this machine or -N machines"), "{help}");
}
