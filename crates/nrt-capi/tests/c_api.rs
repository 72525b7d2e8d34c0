//! The C ABI from C: the programs in tests/c are compiled with the system
//! C compiler against include/ and linked against the built libnrt.so (and
//! one against libnrt.a), then run; the exported symbol table is compared
//! with the functions the headers declare, version nodes included.

mod libnrt_build;
#[allow(dead_code)]
#[path = "../../nrt-cli/src/example_data.rs"]
mod example_data;
#[allow(dead_code)]
#[path = "../../nrt-cli/src/custom_ops_data.rs"]
mod custom_ops_data;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

/// The directory holding libnrt.so / libnrt.a built from this tree: the
/// profile dir, after the workspace build has brought them up to date.
fn lib_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| libnrt_build::libnrt_dir(&repo()))
}

/// A scratch directory per test, with libnrt.so / libnrt.so.1 links.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-capi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("lib")).expect("scratch dir");
    std::fs::create_dir_all(d.join("run")).expect("scratch run dir");
    let so = lib_dir().join("libnrt.so");
    for link in ["libnrt.so", "libnrt.so.1"] {
        std::os::unix::fs::symlink(&so, d.join("lib").join(link)).expect("symlink libnrt");
    }
    d
}

fn cc() -> Command {
    let mut c = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()));
    c.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-pthread"]);
    c.arg("-I").arg(repo().join("include")).arg("-I").arg(repo().join("tests/c"));
    c
}

fn run_checked(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(out.status.success(), "{what} failed ({}):\n{}\n{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Compiles tests/c/<name>.c against libnrt.so (or libnrt.a).
fn build(name: &str, dir: &Path, static_link: bool) -> PathBuf {
    let exe = dir.join(name);
    let mut c = cc();
    c.arg(repo().join(format!("tests/c/{name}.c"))).arg("-o").arg(&exe);
    if static_link {
        c.arg(lib_dir().join("libnrt.a")).args(["-lpthread", "-ldl", "-lm"]);
    } else {
        let lib = dir.join("lib");
        c.arg("-L").arg(&lib).arg("-lnrt").arg(format!("-Wl,-rpath,{}", lib.display())).arg("-lm");
    }
    run_checked(c, &format!("compiling tests/c/{name}.c"));
    exe
}

/// Runs a C test program with its own core-reservation namespace and a
/// time limit; returns stdout. Fails on a non-zero exit.
fn run(exe: &Path, dir: &Path, args: &[&Path]) -> String {
    run_env(exe, dir, args, &[])
}

/// [`run`] with extra environment variables. Both pipes are drained while
/// the program runs: a program that logs more than a pipe holds (64 KiB)
/// would otherwise block on its write and look like a hang.
fn run_env(exe: &Path, dir: &Path, args: &[&Path], env: &[(&str, &str)]) -> String {
    let mut child = Command::new(exe)
        .args(args)
        .envs(env.iter().copied())
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start C test");
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out_reader = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err_reader = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait C test") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{} did not finish within 120 s", exe.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = out_reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    println!("{stdout}");
    assert!(status.success(), "{} failed ({status}):\n{stdout}\n{stderr}", exe.display());
    stdout
}

/// Why a C test program did not run, when it said so (`skipped()` of
/// tests/c/check.h).
fn skipped_in(stdout: &str) -> Option<&str> {
    stdout.lines().find(|l| l.contains(": skipped: "))
}

/// The copy example packed into a NEFF file in `dir`.
fn copy_neff(dir: &Path) -> PathBuf {
    pack_example("copy", dir, Vec::new())
}

/// Packs examples/<name> (plus `extra` members) into `dir/<name>.neff`, the
/// way `nrt neff pack` does: `*.asm` members are assembled into `*.bin`.
fn pack_example(name: &str, dir: &Path, extra: Vec<(&str, Vec<u8>)>) -> PathBuf {
    pack_example_as(name, name, dir, extra)
}

/// [`pack_example`] written to `dir/<file>.neff`.
fn pack_example_as(name: &str, file: &str, dir: &Path, extra: Vec<(&str, Vec<u8>)>) -> PathBuf {
    let contents = nrt_neff::read_dir(&repo().join("examples").join(name)).unwrap_or_else(|e| panic!("read examples/{name}: {e}"));
    let header = contents.header.unwrap_or_default();
    let mut members = nrt_neff::Members::new();
    let extra = extra.into_iter().map(|(p, b)| (p.to_string(), b));
    for (path, bytes) in contents.members.into_iter().chain(extra) {
        match path.strip_suffix(".asm") {
            Some(stem) => {
                let text = String::from_utf8(bytes).expect("asm is text");
                members.insert(format!("{stem}.bin"), nrt_isa::asm::assemble(&text).unwrap_or_else(|e| panic!("{path}: {e}")));
            }
            None => {
                members.insert(path, bytes);
            }
        }
    }
    let kind = nrt_neff::HashKind::Md5;
    let bytes = nrt_neff::pack_members(&header, &members, kind, nrt_neff::writer::default_format(kind)).expect("pack NEFF");
    let p = dir.join(format!("{file}.neff"));
    std::fs::write(&p, bytes).expect("write NEFF");
    p
}

/// The mlp example packed into `dir/mlp.neff` with its constants W and b
/// as raw little-endian float32 files beside it (what execute_mlp and the
/// async pipeline client take).
fn mlp_files(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let constants = example_data::constants_for(&repo().join("examples/mlp")).expect("mlp constants");
    let neff = pack_example("mlp", dir, constants);
    let raw = |v: Vec<f32>, file: &str| {
        let p = dir.join(file);
        std::fs::write(&p, v.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<u8>>()).expect("write constants");
        p
    };
    (neff, raw(example_data::mlp_weights(), "W.f32"), raw(example_data::mlp_bias(), "b.f32"))
}

/// Function names the public headers declare.
fn declared() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for dir in ["include/nrt", "include/ndl"] {
        for e in std::fs::read_dir(repo().join(dir)).expect("headers") {
            let path = e.expect("entry").path();
            // The kernel SDK header declares functions that run inside
            // GPSIMD kernels (wasm), not libnrt exports.
            if path.file_name().is_some_and(|n| n == "nrt_kernel.h") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("header text");
            let mut code = String::new();
            let mut rest = text.as_str();
            while let Some(i) = rest.find("/*") {
                code.push_str(&rest[..i]);
                rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
            }
            code.push_str(rest);
            for stmt in code.split(';') {
                let stmt = stmt.trim();
                if stmt.contains("typedef") || stmt.starts_with('#') {
                    continue;
                }
                let Some(paren) = stmt.find('(') else { continue };
                let head = stmt[..paren].trim_end();
                let name: String = head.chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>().chars().rev().collect();
                if name.starts_with("nrt_") || name.starts_with("nrta_") || name.starts_with("nec_") {
                    names.insert(name);
                }
            }
        }
    }
    names
}

/// Exported (defined, dynamic) symbols with their version nodes.
fn exported() -> BTreeMap<String, String> {
    let so = lib_dir().join("libnrt.so");
    let out = Command::new("nm").args(["-D", "--defined-only", "--with-symbol-versions"]).arg(&so).output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            // No nm: readelf's dynamic symbol table has the same data.
            let o = Command::new("readelf").args(["--dyn-syms", "-W"]).arg(&so).output().expect("neither nm nor readelf is available to read the symbol table");
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.contains(" UND ") && (l.contains(" FUNC ") || l.contains(" OBJECT ")))
                .filter_map(|l| l.split_whitespace().last().map(|s| format!("0 T {s}")))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    let mut map = BTreeMap::new();
    for line in text.lines() {
        let Some(sym) = line.split_whitespace().nth(2) else { continue };
        let (name, version) = match sym.split_once('@') {
            Some((n, v)) => (n.to_string(), v.trim_start_matches('@').to_string()),
            None => (sym.to_string(), String::new()),
        };
        // Version-definition markers (absolute symbols named after a node).
        if name.starts_with("NRT_") && version == name {
            continue;
        }
        map.insert(name, version);
    }
    map
}

#[test]
fn exports_are_exactly_the_declared_functions_with_their_version_nodes() {
    let declared = declared();
    let exported = exported();
    assert!(declared.len() > 100, "header parse found only {} functions", declared.len());
    let names: BTreeSet<String> = exported.keys().cloned().collect();
    let missing: Vec<_> = declared.difference(&names).collect();
    let extra: Vec<_> = names.difference(&declared).collect();
    assert!(missing.is_empty() && extra.is_empty(), "declared but not exported: {missing:?}\nexported but not declared: {extra:?}");
    for (name, version) in &exported {
        let want = if name.starts_with("nrta_") { "NRT_3.0.0" } else { "NRT_2.0.0" };
        assert_eq!(version, want, "{name} has version {version:?}, expected {want}");
    }
    println!("{} exports, all versioned", exported.len());
}

#[test]
fn soname_is_libnrt_so_1() {
    let so = lib_dir().join("libnrt.so");
    let out = Command::new("readelf").args(["-d"]).arg(&so).output().or_else(|_| Command::new("objdump").arg("-p").arg(&so).output());
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let line = text.lines().find(|l| l.contains("SONAME")).unwrap_or_else(|| panic!("no SONAME in {text}"));
            assert!(line.contains("libnrt.so.1"), "{line}");
        }
        _ => {
            let bytes = std::fs::read(&so).expect("read libnrt.so");
            assert!(bytes.windows(12).any(|w| w == b"libnrt.so.1\0"), "libnrt.so.1 not in the dynamic strings");
        }
    }
}

#[test]
fn struct_layouts_static_assert() {
    let dir = scratch("abi");
    let exe = build("abi_layout", &dir, false);
    assert!(run(&exe, &dir, &[]).contains("abi_layout: every struct size and offset matches"));
}

#[test]
fn headers_compile_and_link_as_cxx() {
    let dir = scratch("cxx");
    let exe = dir.join("cxx_headers");
    let lib = dir.join("lib");
    let mut c = Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()));
    c.args(["-std=c++17", "-Wall", "-Wextra", "-Werror"]).arg("-I").arg(repo().join("include"));
    c.arg(repo().join("tests/c/cxx_headers.cc")).arg("-o").arg(&exe);
    c.arg("-L").arg(&lib).arg("-lnrt").arg(format!("-Wl,-rpath,{}", lib.display()));
    run_checked(c, "compiling tests/c/cxx_headers.cc");
    assert!(run(&exe, &dir, &[]).contains("cxx_headers: ok"));
}

#[test]
fn state_rules() {
    let dir = scratch("state");
    let exe = build("state_rules", &dir, false);
    assert!(run(&exe, &dir, &[]).contains("state_rules:"));
}

#[test]
fn state_rules_linked_statically() {
    let dir = scratch("static");
    let exe = build("state_rules", &dir, true);
    assert!(run(&exe, &dir, &[]).contains("state_rules:"));
}

#[test]
fn tensor_api() {
    let dir = scratch("tensor");
    let exe = build("tensor_api", &dir, false);
    assert!(run(&exe, &dir, &[]).contains("tensor_api:"));
}

/// Host buffers sized by the client (host tensors, staging, copies)
/// refused with NRT_RESOURCE instead of aborting, up front for sizes no
/// host holds and through the allocator under an address-space limit.
#[test]
fn sizes_the_host_cannot_give_are_resource_errors() {
    let dir = scratch("host_sizes");
    let neff = copy_neff(&dir);
    let exe = build("host_sizes", &dir, false);
    assert!(run(&exe, &dir, &[&neff]).contains("host_sizes: "));
}

#[test]
fn execute_copy_example() {
    let dir = scratch("copy");
    let neff = copy_neff(&dir);
    let exe = build("execute_copy", &dir, false);
    assert!(run(&exe, &dir, &[&neff]).contains("execute_copy:"));
}

/// A synchronous execute through the C API allocates nothing once warm
/// (every allocator call of the process is counted, deterministic mode so
/// the simulator runs on the calling thread).
#[test]
fn execute_through_the_c_api_is_allocation_free() {
    let dir = scratch("alloc");
    let neff = copy_neff(&dir);
    let exe = build("execute_alloc", &dir, false);
    let out = run_env(&exe, &dir, &[&neff], &[("NEURON_SIM_DETERMINISTIC", "1")]);
    if let Some(why) = skipped_in(&out) {
        nrt_test_support::skip!("{why}");
    }
    assert!(out.contains("execute_alloc:"), "{out}");
    println!("{out}");
}

#[test]
fn async_api_explicit_with_eventfds_through_epoll() {
    let dir = scratch("async-explicit");
    let neff = copy_neff(&dir);
    let exe = build("async_api", &dir, false);
    let out = run_env(&exe, &dir, &[neff.as_ref(), Path::new("explicit")], &[("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "4")]);
    assert!(out.contains("async_api explicit:"), "{out}");
}

#[test]
fn async_api_implicit_mode_reports_through_the_callback() {
    let dir = scratch("async-implicit");
    let neff = copy_neff(&dir);
    let exe = build("async_api", &dir, false);
    let log = dir.join("nrt.log");
    let env = [("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "3"), ("NEURON_RT_LOG_LEVEL", "WARN"), ("NEURON_RT_LOG_LOCATION", log.to_str().expect("UTF-8 path"))];
    let out = run_env(&exe, &dir, &[neff.as_ref(), Path::new("implicit")], &env);
    assert!(out.contains("async_api implicit:"), "{out}");
    // libnrt 2.32's deprecation warning, once (the program initialises once).
    let text = std::fs::read_to_string(&log).expect("the runtime log");
    let warned = text.lines().filter(|l| l.contains("WARN") && l.contains("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS") && l.contains("deprecated")).count();
    assert_eq!(warned, 1, "{text}");
}

/// The batch calls' `unsafe` skips tensor tracking: while an implicit
/// async execution hangs on the device (until the execution timeout), an
/// unsafe batch read and write of its tensors return at once; a tracked
/// batch read waits for it.
#[test]
fn batch_calls_with_unsafe_skip_tensor_tracking() {
    let dir = scratch("async-untracked");
    let neff = copy_neff(&dir);
    let exe = build("async_api", &dir, false);
    let env = [("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "2"), ("NEURON_SIM_INJECT", "hang"), ("NEURON_RT_EXEC_TIMEOUT", "10")];
    let out = run_env(&exe, &dir, &[neff.as_ref(), Path::new("untracked")], &env);
    assert!(out.contains("async_api untracked:"), "{out}");
}

/// HBM mapped into the process (NEURON_RT_MAP_HBM) and the instance
/// queries: regions, device tensors' VAs, nrt_memcpy_to_device feeding an
/// execution, the dma-buf descriptor, the attached EFA NIC and the
/// routing-id map, on one trn2 device, unmapped, on a trn2.48xlarge and
/// on an instance without EFA; and their status before init.
#[test]
fn mapped_hbm_dmabuf_efa_and_routing_ids() {
    let dir = scratch("hbm_map");
    let neff = copy_neff(&dir);
    let exe = build("hbm_map", &dir, false);
    let on = ("NEURON_RT_MAP_HBM", "1");
    assert!(run_env(&exe, &dir, &[Path::new("mapped"), &neff], &[on]).contains("hbm_map mapped:"));
    assert!(run_env(&exe, &dir, &[Path::new("unmapped")], &[]).contains("hbm_map unmapped:"));
    assert!(run_env(&exe, &dir, &[Path::new("trn2x16")], &[on, ("NEURON_SIM_INSTANCE", "trn2.48xlarge")]).contains("hbm_map trn2x16:"));
    assert!(run_env(&exe, &dir, &[Path::new("noefa")], &[on, ("NEURON_SIM_INSTANCE", "inf2.xlarge")]).contains("hbm_map noefa:"));
}

/// nec.h on a simulated trn2.48xlarge: the topology table's devices, PCI
/// addresses, routing ids and links through MLA indexes, pods, the LNC
/// size, the version, the dynamic size table, a register store.
#[test]
fn nec_answers_from_the_instance_topology() {
    let dir = scratch("nec");
    let exe = build("nec", &dir, false);
    let out = run_env(&exe, &dir, &[], &[("NEURON_SIM_INSTANCE", "trn2.48xlarge")]);
    assert!(out.contains("nec: ") && out.contains(" 0 failed"), "{out}");
}

/// The acceptance client of the 2.29+ async API (tests/c/async_pipeline.cc,
/// C++17 against include/ alone): write / execute / read pipelines of the
/// mlp example on several logical cores, per-unit eventfds through epoll,
/// sequences polled, every output checked against relu(x @ W + b).
#[test]
fn async_pipeline_client_on_several_logical_cores() {
    let dir = scratch("async_pipeline");
    let (neff, w, b) = mlp_files(&dir);
    let exe = dir.join("async_pipeline");
    let lib = dir.join("lib");
    let mut c = Command::new(std::env::var("CXX").unwrap_or_else(|_| "c++".into()));
    c.args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1"]).arg("-I").arg(repo().join("include"));
    c.arg(repo().join("tests/c/async_pipeline.cc")).arg("-o").arg(&exe);
    c.arg("-L").arg(&lib).arg("-lnrt").arg(format!("-Wl,-rpath,{}", lib.display()));
    run_checked(c, "compiling tests/c/async_pipeline.cc");
    let out = run_env(&exe, &dir, &[neff.as_path(), w.as_path(), b.as_path(), Path::new("2")], &[("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "1")]);
    assert!(out.contains("async_pipeline: ") && out.contains(" 0 failed"), "{out}");
    assert!(!out.contains("async_pipeline: 1 logical cores"), "{out}");
}

/// The async figures through the C API (ignored: a measurement, not a
/// check): `cargo test -p nrt-capi --release --test c_api -- --ignored
/// --nocapture async_api_bench`.
#[test]
#[ignore]
fn async_api_bench() {
    let dir = scratch("async-bench");
    let neff = copy_neff(&dir);
    let exe = build("async_api", &dir, false);
    // Both simulator modes, as `nrt bench --mode async` reports them; each
    // pattern in its own process, the three alternating over three rounds.
    for (mode, env) in [("pool", &[][..]), ("deterministic", &[("NEURON_SIM_DETERMINISTIC", "1")][..])] {
        for _ in 0..3 {
            for pattern in ["xu", "batch", "poll"] {
                let out = run_env(&exe, &dir, &[neff.as_ref(), Path::new("bench"), Path::new("20000"), Path::new("8"), Path::new(pattern)], env);
                for line in out.lines().filter(|l| l.starts_with("pattern=")) {
                    println!("sim={mode} {line}");
                }
            }
        }
    }
}

#[test]
fn collectives_between_in_process_ranks() {
    let dir = scratch("cc_api");
    let exe = build("cc_api", &dir, false);
    let out = run_env(&exe, &dir, &[], &[("NEURON_LOGICAL_NC_CONFIG", "1"), ("NEURON_RT_CC_NET_TIMEOUT", "60")]);
    assert!(out.contains("cc_api: world of 8 ranks ok") && out.contains("0 failed"), "{out}");
}

/// A 4-rank all-reduce NEFF (fp32 add of the 1000 elements tests/c/cc_load.c checks).
fn cc_allreduce_neff(dir: &Path, world: u32) -> PathBuf {
    use nrt_isa::instr::{AluOp, CollectiveType};
    let spec = nrt_gen::cc::CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, nrt_isa::dtype::Dtype::Float32, 1000, world);
    let p = dir.join(format!("allreduce_w{world}.neff"));
    std::fs::write(&p, nrt_gen::cc::collective_neff(&spec).expect("collective NEFF")).expect("write the NEFF");
    p
}

#[test]
fn neff_collectives_load_and_execute_from_rank_threads() {
    let dir = scratch("cc_load");
    let exe = build("cc_load", &dir, false);
    for world in [2u32, 4] {
        let neff = cc_allreduce_neff(&dir, world);
        let w = world.to_string();
        let out = run_env(&exe, &dir, &[&neff, Path::new(&w)], &[("NEURON_LOGICAL_NC_CONFIG", "1"), ("NEURON_RT_CC_NET_TIMEOUT", "60")]);
        assert!(out.contains(&format!("cc_load: world of {world} ranks in threads")) && out.contains(" 0 failed"), "{out}");
    }
}

/// The same program as two processes, one rank each, meeting through
/// NEURON_RT_ROOT_COMM_ID: each process's proxy moves its rank's
/// cross-process steps over libfabric tcp on loopback during
/// `nrt_execute`; both ranks check both executions' results.
#[test]
fn neff_collectives_from_two_processes() {
    if let Err(e) = nrt_net::fabric::available() {
        nrt_test_support::skip!("{e}");
    }
    let dir = scratch("cc_load_2p");
    let exe = build("cc_load", &dir, false);
    let neff = cc_allreduce_neff(&dir, 2);
    let root = format!("127.0.0.1:{}", free_port());
    let (exe, dir, neff, root) = (&exe, &dir, &neff, root.as_str());
    std::thread::scope(|s| {
        let runs: Vec<_> = ["0", "1"]
            .into_iter()
            .map(|r| {
                s.spawn(move || {
                    let env = [
                        ("NEURON_RT_ROOT_COMM_ID", root),
                        ("FI_PROVIDER", "tcp"),
                        ("FI_TCP_IFACE", "lo"),
                        ("NEURON_LOGICAL_NC_CONFIG", "1"),
                        ("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "60"),
                        ("NEURON_RT_CC_NET_TIMEOUT", "60"),
                        // Each process owns another simulated core.
                        ("NEURON_RT_VISIBLE_CORES", r),
                    ];
                    run_env(exe, dir, &[neff, Path::new("2"), Path::new(r)], &env)
                })
            })
            .collect();
        for (r, h) in runs.into_iter().enumerate() {
            let out = h.join().expect("rank process");
            assert!(out.contains(&format!("cc_load: rank {r} of 2")) && out.contains(" 0 failed"), "{out}");
        }
    });
}

/// The tensor-parallel decoder (TP 2, 4 layers, LNC 1) from C
/// (tests/c/tp_decoder.c): each rank thread loads its prefill and decode
/// NEFF with nrt_load_collectives, binds its weight shards and KV caches
/// as device tensors shared by both, runs the prefill and the decode steps
/// of `nrt gen tp-decoder --data`; the ranks' outputs are the same bits,
/// and every execution's is within the derived fp32 bound of the f64
/// reference.
#[test]
fn tp_decoder_prefill_and_decode_from_rank_threads() {
    use nrt_gen::tp_decoder::reference::{deviation, expected};
    use nrt_gen::tp_decoder::weights::{DecoderWeights, write_data};
    use nrt_gen::tp_decoder::{Phase, TpDecoderSpec, tp_decoder_neff};
    const SEED: u64 = 11;
    const STEPS: usize = 3;
    let dir = scratch("tp_decoder");
    let exe = build("tp_decoder", &dir, false);
    let spec = TpDecoderSpec::new(2, 4, 1);
    let model = dir.join("model");
    for phase in [Phase::Prefill, Phase::Decode] {
        let neff = tp_decoder_neff(&spec, phase).expect("decoder NEFF");
        let set = model.join(phase.dir_name());
        std::fs::create_dir_all(&set).expect("NEFF dir");
        for r in 0..spec.ranks {
            std::fs::write(set.join(format!("rank{r}.neff")), &neff).expect("write the NEFF");
        }
    }
    write_data(&spec, SEED, STEPS, &model.join("data")).expect("write the data");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("output dir");
    let stdout = run_env(&exe, &dir, &[&model, Path::new("2"), &out], &[("NEURON_LOGICAL_NC_CONFIG", "1"), ("NEURON_RT_CC_NET_TIMEOUT", "60")]);
    assert!(stdout.contains("hidden identical on every rank: yes") && stdout.contains(" 0 failed"), "{stdout}");
    let want = expected(&spec, &DecoderWeights::generate(&spec, SEED), SEED, STEPS);
    for (i, want) in want.iter().enumerate() {
        let bytes = std::fs::read(out.join(format!("hidden_{i}.bin"))).expect("hidden written");
        let got: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        let d = deviation(want, &got);
        assert_eq!(d.outside, 0, "execution {i}: {d:?}");
    }
}

#[test]
fn threads_execute_concurrently() {
    let dir = scratch("threads");
    let neff = copy_neff(&dir);
    let exe = build("threads", &dir, false);
    assert!(run(&exe, &dir, &[&neff]).contains("threads:"));
}

#[test]
fn no_device_mode() {
    let dir = scratch("nodev");
    let neff = copy_neff(&dir);
    let exe = build("no_device", &dir, false);
    let out = run_env(&exe, &dir, &[&neff], &[("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge")]);
    assert!(out.contains("no_device:"));
}

#[test]
fn execute_mlp_example_against_a_c_reference() {
    let dir = scratch("mlp");
    let (neff, w, b) = mlp_files(&dir);
    let exe = build("execute_mlp", &dir, false);
    assert!(run(&exe, &dir, &[&neff, &w, &b]).contains("execute_mlp:"));
}

/// The custom_ops example and a buggy variant of it (its first op calls
/// the SDK's `oob_write` kernel instead of relu), packed with the kernel
/// libraries built for wasm32 (the same members `nrt run` generates).
fn custom_ops_neffs(dir: &Path) -> (PathBuf, PathBuf) {
    let target = custom_ops_data::kernel_target_dir();
    let members = custom_ops_data::members(&target).expect("build the example kernel library");
    let good = pack_example("custom_ops", dir, members.clone());
    let example = repo().join("examples/custom_ops/sg00");
    let mut def: serde_json::Value = serde_json::from_slice(&std::fs::read(example.join("def.json")).expect("def.json")).expect("def.json parses");
    def["ucode_lib"][1] = serde_json::json!({"library": "buggy.ucpl", "ulib_to_ucode_version": "1.0.0.0", "opcode": -16, "cpu_id": 0, "total_cpus": 8,
        "functions": [{"name": "oob_write", "opcode": -16, "sub_opcode": 1}, {"name": "spin", "opcode": -16, "sub_opcode": 2}]});
    let pool = std::fs::read_to_string(example.join("POOL.asm")).expect("POOL.asm");
    assert!(pool.contains("extended_inst spec=1"), "the example's first op is spec 1, which the buggy set maps to oob_write");
    let mut extra = members;
    extra.push(("sg00/def.json", serde_json::to_vec(&def).expect("def.json")));
    extra.push(("sg00/buggy.ucpl", custom_ops_data::buggy_library(&target).expect("build the buggy kernel library")));
    let bad = pack_example_as("custom_ops", "custom_ops_buggy", dir, extra);
    (good, bad)
}

#[test]
fn execute_custom_ops_example_against_c_references() {
    let dir = scratch("custom-ops");
    let (good, bad) = custom_ops_neffs(&dir);
    let log = dir.join("nrt.log");
    let exe = build("execute_custom_ops", &dir, false);
    let env = [
        ("NEURON_RT_LOG_LOCATION", log.to_str().expect("UTF-8 path")),
        ("NEURON_RT_LOG_LEVEL", "INFO"),
        ("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", "4096"),
    ];
    let out = run_env(&exe, &dir, &[&good, &bad, &log], &env);
    assert!(out.contains("execute_custom_ops:"), "{out}");
}

/// ndebug_stream.h from C (tests/c/debug_stream.c): the device-print
/// example's two prints reach a client waiting with epoll, with the 2.28
/// event layout, each payload freed by the caller.
#[test]
fn debug_stream_from_c() {
    let dir = scratch("debug_stream");
    let neff = pack_example("device-print", &dir, Vec::new());
    let exe = build("debug_stream", &dir, false);
    let out = run(&exe, &dir, &[&neff]);
    assert!(out.contains("debug_stream: ") && out.contains(" 0 failed"), "{out}");
}

/// nrt_sys_trace.h, nrt_profile.h and nrt_trace_start/stop from C
/// (tests/c/sys_trace.c): nrtpy's device-mode benchmark on one core,
/// profiles, inspect, bad arguments.
#[test]
fn sys_trace_and_profiles_from_c() {
    let dir = scratch("sys_trace");
    let neff = copy_neff(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    let exe = build("sys_trace", &dir, false);
    let stdout = run_env(&exe, &dir, &[&neff, &out], &[("NEURON_SIM_DETERMINISTIC", "1")]);
    assert!(stdout.contains("sys_trace:"), "{stdout}");
    // Inspect wrote its tree.
    let inspect = std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok()).find(|e| e.file_name().to_string_lossy().contains("_pid_")).expect("inspect directory");
    let names: Vec<String> = std::fs::read_dir(inspect.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    for want in ["ntrace.json", "ntrace.perfetto.json", "host_mem.json", "cpu_util.json"] {
        assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
    }
    assert!(names.iter().any(|n| n.starts_with("profile_nc0_model") && n.ends_with("_session3.ntff")), "{names:?}");
    let ntrace: serde_json::Value = serde_json::from_slice(&std::fs::read(inspect.path().join("ntrace.json")).unwrap()).expect("ntrace.json parses");
    assert!(ntrace["events"].as_array().unwrap().iter().any(|e| e["event_type"] == "nc_exec_running"));
    // The environment-driven session: hardware events only, no cpu_util.
    let env = std::fs::read_dir(out.join("env")).unwrap().next().expect("env inspect directory").unwrap().path();
    let ntrace: serde_json::Value = serde_json::from_slice(&std::fs::read(env.join("ntrace.json")).unwrap()).expect("ntrace.json parses");
    let events = ntrace["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["event_type"] == "nc_exec_running"), "{ntrace}");
    assert!(events.iter().all(|e| ["nc_exec_running", "nrt_model_switch", "hw_notify", "numerical_err"].contains(&e["event_type"].as_str().unwrap())), "{ntrace}");
    assert!(!env.join("cpu_util.json").exists() && env.join("host_mem.json").exists());
    // Continuous profiling saved the latest execution on vnc 0.
    let saved: Vec<String> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("profile_vnc0_model")).collect();
    assert!(saved.iter().any(|n| n.ends_with("_exec1.ntff")), "{saved:?}");
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("copy.ntff.summary.json")).unwrap()).expect("summary parses");
    assert_eq!(summary["format"], "nrt-rs-profile-summary");
    assert!(summary["instructions"].as_u64().unwrap() > 0);
}

/// tests/c/sys_trace.c on the compiler's sample NEFF: its profile names
/// instructions as the compiler did, and each execution at LNC 2 gives one
/// nc_exec_running pair per physical core.
#[test]
fn sys_trace_of_the_compiler_sample_from_c() {
    let real = repo().join("../shared/data/neff/matmul_small.neff");
    if !real.exists() {
        nrt_test_support::skip!("{} is absent (the compiler's sample lives beside the checkout)", real.display());
    }
    let dir = scratch("sys_trace_compiler");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    let exe = build("sys_trace", &dir, false);
    let stdout = run_env(&exe, &dir, &[Path::new("--compiler"), &real, &out], &[("NEURON_SIM_DETERMINISTIC", "1")]);
    assert!(stdout.contains("sys_trace: compiler NEFF: 6 nc_exec_running pairs") && stdout.contains("sys_trace --compiler: "), "{stdout}");
}

/// `dir/name` made a libnrt prefix by scripts/install-prefix, from the
/// library this tree built.
fn install_prefix(dir: &Path, name: &str) -> PathBuf {
    let prefix = dir.join(name);
    let mut install = Command::new(repo().join("scripts/install-prefix"));
    install.arg(&prefix).env("NRT_LIB_DIR", lib_dir());
    run_checked(install, "scripts/install-prefix");
    prefix
}

/// `scripts/install-prefix DIR` lays out headers and library as libnrt
/// ships them, and a C++17 client configured by CMake against that prefix
/// (NEURON_ROOT, the way nrtpy-style wrappers find libnrt) links and runs
/// the copy example twice in one process. Needs cmake (scripts/test-all
/// installs it); without it the test says so and, under CI, fails.
#[test]
fn install_prefix_serves_a_cmake_cxx17_client() {
    if Command::new("cmake").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "cmake is missing; scripts/test-all installs it");
        nrt_test_support::skip!("cmake is not installed (Debian package cmake; scripts/test-all installs it)");
    }
    let dir = scratch("prefix");
    let prefix = install_prefix(&dir, "neuron");
    for f in ["include/nrt/nrt.h", "include/nrt/nrt_version.h", "lib/libnrt.so.1", "lib/libnrt.a"] {
        assert!(prefix.join(f).exists(), "{f} is not installed");
    }
    assert_eq!(std::fs::read_link(prefix.join("lib/libnrt.so")).expect("libnrt.so is a link"), Path::new("libnrt.so.1"));
    let build_dir = dir.join("build");
    let mut configure = Command::new("cmake");
    configure.arg("-S").arg(repo().join("tests/cmake-client")).arg("-B").arg(&build_dir).arg(format!("-DNEURON_ROOT={}", prefix.display()));
    run_checked(configure, "cmake configure of tests/cmake-client");
    let mut make = Command::new("cmake");
    make.arg("--build").arg(&build_dir);
    run_checked(make, "cmake --build of tests/cmake-client");
    let neff = copy_neff(&dir);
    let out = run(&build_dir.join("nrt_client"), &dir, &[&neff]);
    assert!(out.contains("client ok: libnrt 2.32"), "{out}");
}

/// examples/c, the C on-ramp, as its README and docs/c-api.md tell a user
/// to build it: against a prefix made by scripts/install-prefix, with its
/// Makefile (`make run`), with its CMake file, and with the compile line
/// docs/c-api.md gives, run as written (`$HOME/nrt-rs` is the prefix);
/// each client runs the copy example and checks its output.
#[test]
fn examples_c_builds_and_runs() {
    for tool in ["make", "cmake"] {
        if Command::new(tool).arg("--version").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "{tool} is missing; scripts/test-all installs cmake");
            nrt_test_support::skip!("{tool} is not installed (scripts/test-all installs cmake)");
        }
    }
    let dir = scratch("examples_c");
    let prefix = install_prefix(&dir, "nrt-rs");
    let example = repo().join("examples/c");
    let neff = copy_neff(&dir);
    let ok = "ok (output equals input)";

    let make_dir = dir.join("make");
    std::fs::create_dir_all(&make_dir).expect("make dir");
    std::fs::copy(&neff, make_dir.join("copy.neff")).expect("copy.neff for make run");
    let make_args = [Path::new("-f"), &example.join("Makefile"), Path::new("-C"), &make_dir, Path::new("run")];
    let root = format!("NEURON_ROOT={}", prefix.display());
    let out = run(Path::new("make"), &dir, &[&make_args[..], &[Path::new(&root)]].concat());
    assert!(out.contains(ok), "make run: {out}");

    let build_dir = dir.join("cmake");
    let mut configure = Command::new("cmake");
    configure.arg("-S").arg(&example).arg("-B").arg(&build_dir).arg(format!("-DNEURON_ROOT={}", prefix.display()));
    run_checked(configure, "cmake configure of examples/c");
    let mut cmake_build = Command::new("cmake");
    cmake_build.arg("--build").arg(&build_dir);
    run_checked(cmake_build, "cmake --build of examples/c");
    let out = run(&build_dir.join("client"), &dir, &[&neff, Path::new("--copy")]);
    assert!(out.contains(ok), "cmake-built client: {out}");

    let doc = std::fs::read_to_string(repo().join("docs/c-api.md")).expect("docs/c-api.md");
    let line = doc.lines().map(str::trim).find(|l| l.starts_with("cc app.c ")).expect("docs/c-api.md gives a `cc app.c ...` line");
    std::fs::copy(example.join("client.c"), dir.join("app.c")).expect("app.c");
    let mut compile = Command::new("sh");
    compile.arg("-c").arg(line).env("HOME", &dir).current_dir(&dir);
    run_checked(compile, &format!("docs/c-api.md's `{line}`"));
    let out = run(&dir.join("a.out"), &dir, &[&neff, Path::new("--copy")]);
    assert!(out.contains(ok), "{line}: {out}");
}

/// The export table of tests/c/bad_args.c: every function of the headers
/// it covers called with NULL, out-of-range, wrong-state, stale-handle,
/// foreign and wrong-size arguments, each returning its documented status
/// with its outputs untouched. The table must name every function those
/// headers declare, so a new export without bad-argument rows fails here.
#[test]
fn bad_arguments_of_every_export_return_their_status() {
    let dir = scratch("bad_args");
    let exe = build("bad_args", &dir, false);
    let listed: BTreeSet<String> = bad_args_rows(&exe, &dir).into_iter().collect();
    let covered = ["nrt.h", "nrt_async.h", "nrt_experimental.h", "nrt_status.h", "nrt_version.h", "nrt_profile.h", "nrt_sys_trace.h", "nrt_async_sendrecv.h", "nec.h", "ndebug_stream.h"];
    let texts: Vec<String> = covered
        .iter()
        .map(|h| std::fs::read_to_string(repo().join("include/nrt").join(h)).expect("header"))
        .collect();
    let missing: Vec<String> = declared()
        .into_iter()
        .filter(|f| texts.iter().any(|t| t.contains(&format!("{f}("))))
        .filter(|f| !listed.contains(f))
        .collect();
    assert!(missing.is_empty(), "tests/c/bad_args.c has no rows for {missing:?}");
    let neff = copy_neff(&dir);
    let out = run(&exe, &dir, &[&neff]);
    assert!(out.contains("bad_args: ") && out.contains(" 0 failed"), "{out}");
}

/// The function of every row of tests/c/bad_args.c, in table order
/// (`bad_args --list`).
fn bad_args_rows(exe: &Path, dir: &Path) -> Vec<String> {
    run(exe, dir, &[Path::new("--list")]).lines().filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// `text` with its whitespace runs made single spaces (docs wrap lines).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the docs count about the C API, against the source: the coverage
/// table of docs/c-api.md has one row per exported function and no other,
/// and the bad-argument table's size in docs/c-api.md and
/// docs/reliability.md is tests/c/bad_args.c's.
#[test]
fn the_c_api_docs_count_what_the_source_has() {
    let c_api = std::fs::read_to_string(repo().join("docs/c-api.md")).expect("docs/c-api.md");
    let table: BTreeSet<String> = c_api
        .split("## Coverage in this release")
        .nth(1)
        .expect("the coverage section")
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| l.split('`').next().unwrap().to_string())
        .collect();
    let exports = declared();
    let undocumented: Vec<&String> = exports.difference(&table).collect();
    let not_exported: Vec<&String> = table.difference(&exports).collect();
    assert!(undocumented.is_empty() && not_exported.is_empty(), "docs/c-api.md's coverage table: missing {undocumented:?}, not exported {not_exported:?}");
    let dir = scratch("bad_args_docs");
    let rows = bad_args_rows(&build("bad_args", &dir, false), &dir);
    let functions = rows.iter().collect::<BTreeSet<_>>().len();
    assert_eq!(functions, exports.len(), "the docs say the bad-argument table covers all exported functions");
    for (doc, says) in [
        ("docs/c-api.md", format!("a table of {} rows over all {functions} exported functions", rows.len())),
        ("docs/reliability.md", format!("Its {} rows call all {functions} exported functions", rows.len())),
    ] {
        let text = one_line(&std::fs::read_to_string(repo().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}")));
        assert!(text.contains(&says), "{doc} should say \"{says}\" (tests/c/bad_args.c --list)");
    }
}

/// Every program of tests/c is built and run by a test of this file and
/// named in docs/c-api.md's list of what `cargo test -p nrt-capi` runs.
#[test]
fn every_c_test_program_runs_and_is_documented() {
    let this = std::fs::read_to_string(repo().join("crates/nrt-capi/tests/c_api.rs")).expect("this file");
    let doc = std::fs::read_to_string(repo().join("docs/c-api.md")).expect("docs/c-api.md");
    let tests = doc.split("\n## Tests").nth(1).expect("docs/c-api.md's Tests section");
    let mut wrong = Vec::new();
    let mut programs = 0;
    for e in std::fs::read_dir(repo().join("tests/c")).expect("tests/c") {
        let file = e.expect("entry").file_name().to_string_lossy().into_owned();
        let (stem, built) = match file.rsplit_once('.') {
            Some((stem, "c")) => (stem.to_string(), format!("build(\"{stem}\"")),
            Some((_, "cc")) => (file.clone(), format!("\"tests/c/{file}\"")),
            _ => continue,
        };
        programs += 1;
        if !this.contains(&built) {
            wrong.push(format!("tests/c/{file} is built by no test"));
        }
        if !tests.contains(&format!("`{stem}`")) {
            wrong.push(format!("tests/c/{file} is not in docs/c-api.md's Tests list"));
        }
    }
    assert!(programs > 10, "{programs} programs");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The environment of the send/recv C test: the feature gate, a free
/// rendezvous port, libfabric tcp on loopback.
fn sendrecv_env(port: &str) -> Vec<(&'static str, String)> {
    vec![
        ("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "1".into()),
        ("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", port.into()),
        ("FI_PROVIDER", "tcp".into()),
        ("FI_TCP_IFACE", "lo".into()),
        ("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "60".into()),
        ("NEURON_RT_CC_NET_TIMEOUT", "60".into()),
    ]
}

fn free_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string()
}

#[test]
fn async_sendrecv_between_two_cores_of_one_process() {
    if let Err(e) = nrt_net::fabric::available() {
        nrt_test_support::skip!("{e}");
    }
    let dir = scratch("sendrecv_one");
    let exe = build("sendrecv", &dir, false);
    let env = sendrecv_env(&free_port());
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = run_env(&exe, &dir, &[Path::new("both")], &env);
    assert!(out.contains("sendrecv both: ") && out.contains(" 0 failed"), "{out}");
}

#[test]
fn async_sendrecv_between_two_processes() {
    if let Err(e) = nrt_net::fabric::available() {
        nrt_test_support::skip!("{e}");
    }
    let dir = scratch("sendrecv_two");
    let exe = build("sendrecv", &dir, false);
    let port = free_port();
    let sides: Vec<std::thread::JoinHandle<String>> = [("recv", "1"), ("send", "0")]
        .into_iter()
        .map(|(mode, core)| {
            let (exe, dir, port) = (exe.clone(), dir.clone(), port.clone());
            std::thread::spawn(move || {
                let mut env = sendrecv_env(&port);
                // Each process owns another simulated core.
                env.push(("NEURON_RT_VISIBLE_CORES", core.into()));
                let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
                run_env(&exe, &dir, &[Path::new(mode)], &env)
            })
        })
        .collect();
    for (side, mode) in sides.into_iter().zip(["recv", "send"]) {
        let out = side.join().unwrap_or_else(|_| panic!("the {mode} process failed"));
        assert!(out.contains(&format!("sendrecv {mode}: ")) && out.contains(" 0 failed"), "{out}");
    }
}

/// Runs `cc_procs` as two processes (ranks 0 and 1, each on its own
/// simulated core) meeting at a fresh NEURON_RT_ROOT_COMM_ID over `provider`;
/// `extra` follows the rank and world arguments.
fn cc_procs_pair(dir: &Path, exe: &Path, extra: &[&str], provider: Option<&str>) -> Vec<String> {
    let root = format!("127.0.0.1:{}", free_port());
    let sides: Vec<std::thread::JoinHandle<String>> = (0..2)
        .map(|r| {
            let (exe, dir, root) = (exe.to_path_buf(), dir.to_path_buf(), root.clone());
            let extra: Vec<PathBuf> = extra.iter().map(PathBuf::from).collect();
            let provider = provider.map(str::to_string);
            std::thread::spawn(move || {
                let core = r.to_string();
                let mut env = vec![
                    ("NEURON_RT_ROOT_COMM_ID", root.as_str()),
                    ("FI_TCP_IFACE", "lo"),
                    ("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "60"),
                    ("NEURON_RT_CC_NET_TIMEOUT", "60"),
                    // Each process owns another simulated core.
                    ("NEURON_RT_VISIBLE_CORES", core.as_str()),
                ];
                if let Some(p) = provider.as_deref() {
                    env.push(("FI_PROVIDER", p));
                }
                let mut args = vec![PathBuf::from(&core), PathBuf::from("2")];
                args.extend(extra);
                let args: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
                run_env(&exe, &dir, &args, &env)
            })
        })
        .collect();
    sides.into_iter().enumerate().map(|(r, side)| side.join().unwrap_or_else(|_| panic!("rank process {r} failed"))).collect()
}

#[test]
fn collectives_between_two_processes() {
    if let Err(e) = nrt_net::fabric::available() {
        nrt_test_support::skip!("{e}");
    }
    let dir = scratch("cc_procs");
    let exe = build("cc_procs", &dir, false);
    for (r, out) in cc_procs_pair(&dir, &exe, &[], Some("tcp")).iter().enumerate() {
        assert!(out.contains(&format!("cc_procs rank {r} of 2: ")) && out.contains(" 0 failed"), "{out}");
    }
}

/// nrt_barrier and nrt_all_gather in two processes that set up no
/// communicator: the calls join the world themselves and meet at
/// NEURON_RT_ROOT_COMM_ID (they used to wait in their own process for a
/// peer that could never arrive there), over the provider chosen per peer
/// (shm: both run on this host).
#[test]
fn standalone_barrier_and_all_gather_between_two_processes() {
    if let Err(e) = nrt_net::fabric::available() {
        nrt_test_support::skip!("{e}");
    }
    let dir = scratch("cc_procs_standalone");
    let exe = build("cc_procs", &dir, false);
    for (r, out) in cc_procs_pair(&dir, &exe, &["standalone"], None).iter().enumerate() {
        assert!(out.contains(&format!("cc_procs rank {r} of 2 (standalone): ")) && out.contains(" 0 failed"), "{out}");
    }
}

/// A C test program's run: its name, the arguments and environment the
/// tests above give it.
struct CRun {
    name: &'static str,
    args: Vec<PathBuf>,
    env: Vec<(&'static str, String)>,
}

/// The C test programs and their inputs, for the sanitizer runs. Left out:
/// `execute_alloc` (it replaces `malloc` to count allocations, which the
/// sanitizers' own allocator replaces) and `execute_custom_ops` (its
/// GPSIMD kernels run as wasmtime JIT code, whose trap handling through
/// SIGSEGV AddressSanitizer's own handler would take first).
fn sanitizer_runs(dir: &Path) -> Vec<CRun> {
    let neff = copy_neff(dir);
    let (mlp, w, b) = mlp_files(dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    let run = |name, args: Vec<PathBuf>, env: Vec<(&'static str, &str)>| CRun { name, args, env: env.into_iter().map(|(k, v)| (k, v.to_string())).collect() };
    vec![
        run("state_rules", vec![], vec![]),
        run("tensor_api", vec![], vec![]),
        run("execute_copy", vec![neff.clone()], vec![]),
        run("async_api", vec![neff.clone(), "explicit".into()], vec![("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "4")]),
        run("async_api", vec![neff.clone(), "implicit".into()], vec![("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "3")]),
        run("threads", vec![neff.clone()], vec![]),
        run("no_device", vec![neff.clone()], vec![("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge")]),
        run("execute_mlp", vec![mlp, w, b], vec![]),
        run("sys_trace", vec![neff.clone(), out], vec![("NEURON_SIM_DETERMINISTIC", "1")]),
        run("bad_args", vec![neff.clone()], vec![]),
        run("hbm_map", vec!["mapped".into(), neff], vec![("NEURON_RT_MAP_HBM", "1")]),
        run("cc_api", vec![], vec![("NEURON_LOGICAL_NC_CONFIG", "1"), ("NEURON_RT_CC_NET_TIMEOUT", "60")]),
        run("nccl_net", vec!["absent".into()], vec![("LD_LIBRARY_PATH", "/nonexistent")]),
    ]
}

/// The C test programs through the driver portal: every run of
/// [`sanitizer_runs`] and the custom-ops example, built as the tests
/// above build them, with `NRT_DEVICE=emulated-driver` (each device call
/// an ioctl to the emulated driver, docs/hardware.md); each program
/// checks its own results, so the whole C API answers through the portal
/// as it does in-process.
#[test]
fn the_c_tests_pass_through_the_driver_portal() {
    let dir = scratch("portal");
    let mut runs = sanitizer_runs(&dir);
    let (good, bad) = custom_ops_neffs(&dir);
    let log = dir.join("nrt.log");
    runs.push(CRun {
        name: "execute_custom_ops",
        args: vec![good, bad, log.clone()],
        env: vec![("NEURON_RT_LOG_LOCATION", log.display().to_string()), ("NEURON_RT_LOG_LEVEL", "INFO".into()), ("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", "4096".into())],
    });
    let mut failed = Vec::new();
    for r in &runs {
        let exe = build(r.name, &dir, false);
        let mut env: Vec<(&str, &str)> = r.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        env.push(("NRT_DEVICE", "emulated-driver"));
        let args: Vec<&Path> = r.args.iter().map(PathBuf::as_path).collect();
        if let Err(e) = std::panic::catch_unwind(|| run_env(&exe, &dir, &args, &env)) {
            let why = e.downcast_ref::<String>().cloned().unwrap_or_default();
            failed.push(format!("{} {:?}: {}", r.name, r.args.first(), why.lines().take(12).collect::<Vec<_>>().join("\n")));
        }
    }
    assert!(failed.is_empty(), "through NRT_DEVICE=emulated-driver:\n{}", failed.join("\n\n"));
}

/// Compiles tests/c/<name>.c with `flags` (a sanitizer) against libnrt.so.
fn build_sanitized(name: &str, dir: &Path, tag: &str, flags: &[&str]) -> PathBuf {
    let exe = dir.join(format!("{name}-{tag}"));
    let mut c = cc();
    c.args(flags).arg(repo().join(format!("tests/c/{name}.c"))).arg("-o").arg(&exe);
    let lib = dir.join("lib");
    c.arg("-L").arg(&lib).arg("-lnrt").arg(format!("-Wl,-rpath,{}", lib.display())).arg("-lm");
    run_checked(c, &format!("compiling tests/c/{name}.c with {flags:?}"));
    exe
}

/// Runs every program of `runs` built with `flags`, with `env` added; a
/// sanitizer report fails the run (each sanitizer is set to exit non-zero
/// on its first report).
fn run_sanitized(dir: &Path, runs: &[CRun], tag: &str, flags: &[&str], env: &[(&str, String)]) {
    for r in runs {
        let exe = build_sanitized(r.name, dir, tag, flags);
        let mut all: Vec<(&str, &str)> = r.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.extend(env.iter().map(|(k, v)| (*k, v.as_str())));
        let args: Vec<&Path> = r.args.iter().map(PathBuf::as_path).collect();
        run_env(&exe, dir, &args, &all);
    }
}

/// Every C test program (but the two `sanitizer_runs` names) built with
/// gcc's AddressSanitizer and UndefinedBehaviorSanitizer over libnrt.so:
/// no invalid access, double free or undefined behaviour in the programs,
/// and none the interceptors see in libnrt's calls into the C library
/// (`malloc`/`free` of every Rust allocation, `memcpy`, `memset`, ...).
/// LeakSanitizer runs too, at exit: every `nrt_close` must leave no heap
/// block unreachable, libnrt's included (its globals are reachable, so
/// they are not reported).
#[test]
fn c_tests_run_clean_under_address_and_undefined_sanitizers() {
    let dir = scratch("asan");
    let runs = sanitizer_runs(&dir);
    let env = [
        ("ASAN_OPTIONS", "halt_on_error=1:detect_leaks=1:abort_on_error=0:exitcode=86:detect_stack_use_after_return=1".to_string()),
        ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1:exitcode=87".to_string()),
    ];
    run_sanitized(&dir, &runs, "asan", &["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"], &env);
}

/// The multi-threaded C tests (threads.c, async_api.c in both modes) under
/// ThreadSanitizer. libnrt.so itself is not instrumented (see
/// docs/reliability.md): this checks the programs' own shared state and
/// what reaches them through libnrt (callbacks on libnrt's threads,
/// buffers handed back), with libnrt's locks seen through the pthread
/// interceptors.
#[test]
fn multi_threaded_c_tests_run_clean_under_thread_sanitizer() {
    let dir = scratch("tsan");
    let runs: Vec<CRun> = sanitizer_runs(&dir).into_iter().filter(|r| ["threads", "async_api", "cc_api"].contains(&r.name)).collect();
    // libnrt is not instrumented: its own accesses are ordered by atomics
    // TSan cannot see (the loom models check those), so the interceptors
    // libnrt calls (its memcpy of tensor bytes, ...) are left out, as
    // TSan's `called_from_lib` suppression is made for; the programs' own
    // accesses and every pthread call stay checked.
    let supp = dir.join("tsan.supp");
    std::fs::write(&supp, "called_from_lib:libnrt.so.1\n").expect("write the TSan suppressions");
    let env = [("TSAN_OPTIONS", format!("halt_on_error=1:exitcode=88:report_signal_unsafe=0:suppressions={}", supp.display()))];
    run_sanitized(&dir, &runs, "tsan", &["-fsanitize=thread", "-fno-omit-frame-pointer"], &env);
}

#[test]
fn nccl_net_plugin_is_opened_when_present_and_named_when_absent() {
    let dir = scratch("nccl_net");
    let exe = build("nccl_net", &dir, false);
    // A stand-in for aws-neuronx-collectives' plugin: the one symbol the
    // collectives library looks up through the handle.
    let plugin = dir.join("plugin");
    std::fs::create_dir_all(&plugin).unwrap();
    let src = dir.join("plugin.c");
    std::fs::write(&src, "const int ncclNetPlugin_v6[4] = {6, 0, 0, 0};\n").unwrap();
    let mut c = cc();
    c.args(["-shared", "-fPIC"]).arg(&src).arg("-o").arg(plugin.join("libnccom-net.so"));
    run_checked(c, "compiling the stand-in plugin");
    let absent = run_env(&exe, &dir, &[Path::new("absent")], &[("LD_LIBRARY_PATH", "/nonexistent")]);
    assert!(absent.contains("nccl_net absent: ") && absent.contains(" 0 failed"), "{absent}");
    let present = run_env(&exe, &dir, &[Path::new("present")], &[("LD_LIBRARY_PATH", plugin.to_str().unwrap())]);
    assert!(present.contains("nccl_net present: ") && present.contains(" 0 failed"), "{present}");
}
