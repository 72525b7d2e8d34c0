//! `nrt cc-test`: nccom-test's benchmark and sanity check of collectives,
//! over ranks that are logical cores of this process on the simulated
//! instance (collectives spec §7): the same synopsis, ops and short names,
//! flags, table, JSON report and failure lines.
//!
//! `--processes P` splits the ranks over P processes on this machine: the
//! command spawns P workers (copies of itself, each owning `-r / P`
//! logical cores through `NEURON_RT_VISIBLE_CORES`), which meet at
//! `NEURON_RT_ROOT_COMM_ID` (a free loopback port unless set) and move
//! their bytes over libfabric (the runtime's choice per peer, `shm` on
//! this host, unless `FI_PROVIDER` names one; tcp on `lo`); each
//! worker reports its per-size times and checks on stdout and the command
//! prints one table and report: a size's time is the slowest process's
//! mean.
//!
//! Time per size is the mean over `-n` iterations after `-w` warm-ups,
//! from the moment every rank is released to the moment the last one
//! finished. `--compare-memcpy` (ours) interleaves a host memcpy of the
//! same size with every iteration and prints the medians of both and
//! their ratio.

use anyhow::{Result, anyhow, bail};
use nrt::cc::{Arrival, CcKind, ReduceOp};
use nrt::tensor::Tensor;
use nrt::Runtime;
use nrt_isa::dtype::Dtype;
use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// The options of `nrt cc-test` (see `nrt cc-test --help`).
#[derive(Debug, Clone)]
pub struct Options {
    /// Ranks in all (every process).
    pub ranks: usize,
    /// Nodes (`-N`): more than 1 launches one process per host with mpirun.
    pub nodes: usize,
    /// The hosts of `-N` (`--hosts H1,H2`).
    pub hosts: Option<String>,
    /// Processes on this machine the ranks split over (`--processes`).
    pub processes: usize,
    /// The op name as given.
    pub op: String,
    /// Smallest size in bytes.
    pub min_bytes: u64,
    /// Largest size in bytes.
    pub max_bytes: u64,
    /// Step in bytes (0: (max - min) / 10).
    pub step_bytes: Option<u64>,
    /// Step factor (sizes multiply), overrides the step.
    pub step_factor: Option<u64>,
    /// Timed iterations.
    pub iters: u32,
    /// Warm-up iterations.
    pub warmup: u32,
    /// Element type name.
    pub datatype: String,
    /// Check mode: none, `random`, `all_ones`.
    pub check: Option<String>,
    /// Seed of `--check random`.
    pub seed: u64,
    /// Where to write the JSON report.
    pub json: Option<PathBuf>,
    /// Print the algorithm column.
    pub show_algorithm: bool,
    /// Measure memcpy bandwidth alongside.
    pub compare_memcpy: bool,
}

/// Parses nccom-test sizes: `32M`, `2kb`, `1MB`, `4096` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let (num, mul) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.trim().parse::<u64>().ok().and_then(|n| n.checked_mul(mul)).ok_or_else(|| format!("invalid size {s:?}: expected a byte count with an optional k/m/g suffix (e.g. 32M, 2kb, 1MB)"))
}

fn kind_of(op: &str, ranks: usize) -> Result<CcKind> {
    Ok(match op {
        "all_reduce" | "allr" => CcKind::AllReduce,
        "all_gather" | "allg" => CcKind::AllGather,
        "reduce_scatter" | "redsct" => CcKind::ReduceScatter,
        "alltoall" => CcKind::AllToAll,
        "permute" => CcKind::Permute((0..ranks).map(|r| (r, (r + 1) % ranks)).collect()),
        "sendrecv" => {
            if ranks % 2 != 0 {
                bail!("sendrecv pairs ranks (0<->1, 2<->3, ...): -r must be even, got {ranks}");
            }
            CcKind::Permute((0..ranks).map(|r| (r, r ^ 1)).collect())
        }
        "all_gatherv" | "allgv" | "alltoallv" => bail!("{op} is not supported by nrt cc-test yet (variable-size ops)"),
        _ => bail!("unknown operation {op:?}: expected all_reduce|allr, all_gather|allg, reduce_scatter|redsct, sendrecv, alltoall or permute"),
    })
}

/// nccom-test's bus-bandwidth factor.
fn bus_factor(kind: &CcKind, n: usize) -> f64 {
    let n = n as f64;
    match kind {
        CcKind::AllReduce => 2.0 * (n - 1.0) / n,
        CcKind::Permute(_) => 1.0,
        _ => (n - 1.0) / n,
    }
}

fn dtype_of(name: &str) -> Result<Dtype> {
    Dtype::from_name(name).ok_or_else(|| anyhow!("unknown datatype {name:?}: expected uint8, int8, fp8e4, uint16, int16, fp16, bf16, uint32, int32 or fp32"))
}

fn sizes(o: &Options, esize: u64) -> Result<Vec<u64>> {
    if o.min_bytes > o.max_bytes {
        bail!("minbytes {} is larger than maxbytes {}", o.min_bytes, o.max_bytes);
    }
    let mut v = Vec::new();
    let mut s = o.min_bytes;
    loop {
        v.push(s / esize * esize);
        if s >= o.max_bytes {
            break;
        }
        s = match (o.step_factor, o.step_bytes) {
            (Some(f), _) if f >= 2 => s.max(1) * f,
            (Some(f), _) => bail!("stepfactor must be at least 2, got {f}"),
            (None, Some(b)) if b > 0 => s + b,
            _ => s + ((o.max_bytes - o.min_bytes) / 10).max(1),
        }
        .min(o.max_bytes);
    }
    Ok(v)
}

/// Element `i` of rank `r`'s input under a check mode (small integers so
/// every sum is exact in every dtype).
fn value(mode: Option<&str>, seed: u64, r: usize, i: u64, signed: bool) -> i64 {
    match mode {
        Some("all_ones") => 1,
        Some(_) => {
            let mut x = seed ^ (r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^= x >> 31;
            x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^= x >> 29;
            (x % 16) as i64 - if signed { 8 } else { 0 }
        }
        None => 0,
    }
}

fn encode(dtype: Dtype, v: i64, out: &mut Vec<u8>) {
    if dtype.is_float() {
        let mut o = [0u8; 4];
        let o = &mut o[..dtype.size_bytes()];
        nrt_isa::dtype::f32_to_bytes(&[v as f32], dtype, o, &mut nrt_isa::dtype::Rounding::NearestEven).expect("a float dtype");
        out.extend_from_slice(o);
    } else {
        out.extend_from_slice(&(v as i32).to_le_bytes()[..dtype.size_bytes()]);
    }
}

/// The golden output of every rank.
fn golden(kind: &CcKind, n: usize, count: u64, inputs: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let c = count as usize;
    match kind {
        CcKind::AllReduce => vec![(0..c).map(|i| inputs.iter().map(|v| v[i]).sum()).collect(); n],
        CcKind::AllGather => vec![inputs.concat(); n],
        CcKind::ReduceScatter => (0..n).map(|r| (0..c).map(|i| inputs.iter().map(|v| v[r * c + i]).sum()).collect()).collect(),
        CcKind::AllToAll => (0..n).map(|r| (0..n).flat_map(|j| inputs[j][r * c..(r + 1) * c].to_vec()).collect()).collect(),
        CcKind::Permute(p) => (0..n).map(|r| p.iter().find(|x| x.1 == r).map_or(vec![0; c], |x| inputs[x.0].clone())).collect(),
    }
}

struct Row {
    size: u64,
    count: u64,
    time_us: f64,
    algbw: f64,
    busbw: f64,
    check: &'static str,
    memcpy: Option<(f64, f64)>,
}

/// The variable that makes `nrt cc-test` a worker of `--processes`: its
/// process index.
pub const WORKER_VAR: &str = "NRT_CC_TEST_WORKER";

/// Runs `nrt cc-test`.
pub fn run(o: &Options) -> Result<()> {
    let n = o.ranks;
    if n == 0 {
        bail!("-r must be at least 1");
    }
    if o.nodes > 1 && o.processes != 1 {
        bail!("-N {} with --processes {}: -N runs one process per host; leave --processes at 1", o.nodes, o.processes);
    }
    let procs = o.processes.max(o.nodes);
    if procs == 0 || n % procs != 0 {
        bail!("--processes {procs}: the {n} ranks must split evenly over the processes (-r a multiple of --processes or -N)");
    }
    // A worker: spawned by --processes (our variable) or by mpirun for -N
    // (Open MPI's rank variable).
    let var = if o.nodes > 1 { MPI_RANK_VAR } else { WORKER_VAR };
    let worker = crate::local_workers::index(var, procs)?;
    if o.nodes > 1 && worker.is_none() {
        return launch_mpirun(o);
    }
    if procs > 1 && worker.is_none() {
        return launch(o);
    }
    let per = n / procs;
    let first = worker.unwrap_or(0) * per;
    let gids: Vec<u32> = (first..first + per).map(|g| g as u32).collect();
    let kind = kind_of(&o.op, n)?;
    let dtype = dtype_of(&o.datatype)?;
    let esize = dtype.size_bytes() as u64;
    let check = o.check.as_deref();
    if let Some(c) = check {
        if c != "random" && c != "all_ones" {
            bail!("unknown check {c:?}: expected random or all_ones");
        }
    }
    // The instance: NEURON_SIM_INSTANCE, else one trn2 device; logical
    // cores of one physical core each unless configured.
    // The bring-up libnrt.so's nrt_init does (NEURON_RT_VISIBLE_CORES,
    // reservations), at LNC 1 unless the environment names a size.
    let hosted = crate::model_io::start_runtime(Some(1), &[])?;
    let rt = Arc::clone(&hosted.rt);
    let vncs = rt.visible_vnc_count() as usize;
    if per > vncs {
        bail!("-r {n}: {}", crate::run_ranks::too_few_cores(&rt, per, vncs, "NEURON_SIM_INSTANCE=trn2.48xlarge has 16 devices, 128 logical cores at LNC 1"));
    }
    if worker.is_some() {
        for (v, &g) in gids.iter().enumerate() {
            rt.collectives().register_rank(g, v as u32, n as u32).map_err(|e| anyhow!("{}", e.message))?;
        }
    }
    let mut rows = Vec::new();
    let mut errors = 0usize;
    for size in sizes(o, esize)? {
        // size(B) is the larger per-rank buffer: the output of all-gather,
        // the input of reduce-scatter.
        let unit = match kind {
            CcKind::AllGather | CcKind::ReduceScatter | CcKind::AllToAll => size / esize / n as u64,
            _ => size / esize,
        };
        let outcome = run_size(&rt, &kind, dtype, n, &gids, unit, o);
        if worker.is_some() {
            // One line per size for the launcher.
            match &outcome {
                Ok((times, _, ok)) => println!("WORKER {} size={size} time={} check={ok}", worker.unwrap_or(0), times.iter().sum::<f64>() / times.len() as f64),
                Err(e) => println!("WORKER {} size={size} error={e}", worker.unwrap_or(0)),
            }
            continue;
        }
        match outcome {
            Ok((times, memcpy, ok)) => {
                let t = times.iter().sum::<f64>() / times.len() as f64;
                let bytes = (kind.sizes(n, unit).0.max(kind.sizes(n, unit).1) * esize) as f64;
                let algbw = bytes / (t * 1e-6) / (1u64 << 30) as f64;
                let check = match (check, ok) {
                    (None, _) => "skipped",
                    (_, true) => "pass",
                    _ => "fail",
                };
                if check == "fail" {
                    errors += 1;
                    println!("Failure running size {size}: outputs differ from the golden ({})", check_name(o));
                }
                let memcpy = memcpy.map(|m| (median(&times), m));
                rows.push(Row { size: bytes as u64, count: bytes as u64 / esize, time_us: t, algbw, busbw: algbw * bus_factor(&kind, n), check, memcpy });
            }
            Err(e) => {
                errors += 1;
                println!("Failure running size {size}: {e}");
            }
        }
    }
    if worker.is_some() {
        return Ok(());
    }
    report(o, &kind, &rows, errors)
}

/// Prints the table and the JSON report; fails when a size failed, with
/// one message counting the failures.
fn report(o: &Options, kind: &CcKind, rows: &[Row], errors: usize) -> Result<()> {
    print_table(rows, &o.datatype, o.show_algorithm, o.check.is_some(), kind);
    if let Some(path) = &o.json {
        let results: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| serde_json::json!({"size(B)": r.size, "count(elems)": r.count, "type": o.datatype, "algbw(GB/s)": r.algbw, "busbw(GB/s)": r.busbw, "time:avg(us)": r.time_us, "check": r.check}))
            .collect();
        std::fs::write(path, serde_json::to_string_pretty(&serde_json::json!({ "results": results }))?).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if errors > 0 {
        bail!("{errors} error{} found - test failed", if errors == 1 { "" } else { "s" });
    }
    Ok(())
}

/// `OP` and `--check` as typed: `-c` takes an optional value, so in
/// `-c allr` the parser hands it the operation; a value that is not a
/// check mode is the OP, with the default check (as nccom-test reads it).
pub fn op_and_check(op: Option<String>, check: Option<String>) -> Result<(String, Option<String>)> {
    match (op, check) {
        (Some(op), check) => Ok((op, check)),
        (None, Some(c)) if c != "random" && c != "all_ones" => Ok((c, Some("random".into()))),
        (None, _) => bail!("the operation is missing: nrt cc-test -r RANKS [options] OP (all_reduce|allr, all_gather|allg, reduce_scatter|redsct, sendrecv, alltoall or permute)"),
    }
}

/// `--processes P`: spawns the workers, waits for them and prints their
/// combined table (a size's time is the slowest process's mean).
fn launch(o: &Options) -> Result<()> {
    let finished = crate::local_workers::run(o.processes, o.ranks / o.processes, WORKER_VAR)?;
    let outputs: Vec<(usize, String, String)> = finished.into_iter().map(|f| (f.index, f.status, f.stdout)).collect();
    gather(o, &outputs)
}

/// Open MPI's rank of a process it launched.
pub const MPI_RANK_VAR: &str = "OMPI_COMM_WORLD_RANK";

/// The mpirun command line of `-N NODES --hosts H1,H2`: one process per
/// host running `exe args`, with the collectives variables passed on.
pub fn mpirun_command(o: &Options, exe: &std::path::Path, args: &[String], as_root: bool) -> Result<Vec<String>> {
    let hosts: Vec<&str> = o.hosts.as_deref().unwrap_or("").split(',').map(str::trim).filter(|h| !h.is_empty()).collect();
    if hosts.len() != o.nodes {
        bail!("-N {} needs --hosts with {} host names (got {})", o.nodes, o.nodes, hosts.len());
    }
    let mut c: Vec<String> = vec!["mpirun".into(), "-np".into(), o.nodes.to_string(), "--host".into(), hosts.join(",")];
    if as_root {
        c.push("--allow-run-as-root".into());
    }
    for v in ["NEURON_RT_ROOT_COMM_ID", "FI_PROVIDER", "FI_TCP_IFACE", "NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "NEURON_RT_CC_NET_TIMEOUT", "NEURON_SIM_INSTANCE", "NEURON_LOGICAL_NC_CONFIG"] {
        c.extend(["-x".into(), v.into()]);
    }
    c.push(exe.display().to_string());
    c.extend(args.iter().cloned());
    Ok(c)
}

/// `-N NODES --hosts H1,H2`: one process per host through mpirun, as
/// nccom-test does; their lines come back through mpirun's output.
fn launch_mpirun(o: &Options) -> Result<()> {
    if crate::local_workers::root_comm_id()?.is_none() {
        bail!("-N {}: set NEURON_RT_ROOT_COMM_ID to <first host's address>:<port> (e.g. 10.0.0.1:62001); mpirun passes it to every process", o.nodes);
    }
    let exe = std::env::current_exe()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")));
    let cmd = mpirun_command(o, &exe, &args, root)?;
    let out = std::process::Command::new(&cmd[0]).args(&cmd[1..]).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!("-N {}: mpirun not found; launching across machines needs Open MPI (on Debian/Ubuntu: apt-get install openmpi-bin)", o.nodes)
        } else {
            anyhow!("cannot run mpirun: {e}")
        }
    })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let outputs: Vec<(usize, String, String)> = (0..o.nodes).map(|p| (p, format!("mpirun {}", out.status), text.lines().filter(|l| l.starts_with(&format!("WORKER {p} "))).collect::<Vec<_>>().join("\n"))).collect();
    if !out.status.success() && outputs.iter().all(|(_, _, t)| t.is_empty()) {
        bail!("mpirun failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim());
    }
    gather(o, &outputs)
}

/// One table from the workers' `WORKER p size=… time=… check=…` lines.
fn gather(o: &Options, outputs: &[(usize, String, String)]) -> Result<()> {
    let n = o.ranks;
    let kind = kind_of(&o.op, n)?;
    let dtype = dtype_of(&o.datatype)?;
    let esize = dtype.size_bytes() as u64;
    let mut rows = Vec::new();
    let mut errors = 0usize;
    for size in sizes(o, esize)? {
        let mut time: f64 = 0.0;
        let mut ok = true;
        let mut failure = None;
        for (p, status, text) in outputs {
            let tag = format!("WORKER {p} size={size} ");
            match text.lines().find_map(|l| l.strip_prefix(&tag)) {
                Some(rest) if rest.starts_with("error=") => failure = Some(format!("process {p}: {}", &rest[6..])),
                Some(rest) => {
                    let field = |k: &str| rest.split(' ').find_map(|f| f.strip_prefix(k)).unwrap_or("");
                    time = time.max(field("time=").parse().unwrap_or(f64::NAN));
                    ok &= field("check=") == "true";
                }
                None => failure = Some(format!("process {p} reported nothing for this size ({status})")),
            }
        }
        if let Some(f) = failure {
            errors += 1;
            println!("Failure running size {size}: {f}");
            continue;
        }
        let unit = match kind {
            CcKind::AllGather | CcKind::ReduceScatter | CcKind::AllToAll => size / esize / n as u64,
            _ => size / esize,
        };
        let bytes = (kind.sizes(n, unit).0.max(kind.sizes(n, unit).1) * esize) as f64;
        let algbw = bytes / (time * 1e-6) / (1u64 << 30) as f64;
        let check = match (o.check.is_some(), ok) {
            (false, _) => "skipped",
            (true, true) => "pass",
            _ => "fail",
        };
        if check == "fail" {
            errors += 1;
            println!("Failure running size {size}: outputs differ from the golden ({})", check_name(o));
        }
        rows.push(Row { size: bytes as u64, count: bytes as u64 / esize, time_us: time, algbw, busbw: algbw * bus_factor(&kind, n), check, memcpy: None });
    }
    report(o, &kind, &rows, errors)
}

fn check_name(o: &Options) -> &str {
    o.check.as_deref().unwrap_or("none")
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    s[s.len() / 2]
}

/// What the bandwidth figures are here (printed under the table).
pub const SIMULATED_BANDWIDTH_NOTE: &str =
    " (simulated device: time is this machine's wall clock for the simulator's DMA work, so algbw and busbw measure the simulator on this host, not a Neuron device's links)";

/// nccom-test's table (nothing when no size succeeded), with a `check`
/// column and a closing verdict line when the outputs were checked.
fn print_table(rows: &[Row], dtype: &str, algo: bool, checked: bool, kind: &CcKind) {
    if rows.is_empty() {
        return;
    }
    let alg = if algo { "    algorithm" } else { "" };
    let chk = if checked { "  check" } else { "" };
    println!("{:>14}  {:>14}  {:>7}  {:>10}  {:>13}  {:>13}{alg}{chk}", "size(B)", "count(elems)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for r in rows {
        let a = if algo { format!("  {:>11}", if matches!(kind, CcKind::AllToAll | CcKind::Permute(_)) { "direct" } else { "ring" }) } else { String::new() };
        let c = if checked { format!("  {:>5}", r.check) } else { String::new() };
        println!("{:>14}  {:>14}  {:>7}  {:>10.0}  {:>13.2}  {:>13.2}{a}{c}", r.size, r.count, dtype, r.time_us, r.algbw, r.busbw);
    }
    let avg = rows.iter().map(|r| r.busbw).sum::<f64>() / rows.len() as f64;
    println!(" Avg bus bandwidth:      {avg:.4}GB/s");
    println!("{SIMULATED_BANDWIDTH_NOTE}");
    if checked {
        let failed = rows.iter().filter(|r| r.check == "fail").count();
        match failed {
            0 => println!(" Check: pass ({} of {} sizes)", rows.len(), rows.len()),
            f => println!(" Check: FAIL ({f} of {} sizes)", rows.len()),
        }
    }
    for r in rows {
        if let Some((t, m)) = r.memcpy {
            let busbw = r.size as f64 / (t * 1e-6) / (1u64 << 30) as f64 * r.busbw / r.algbw;
            println!(" size {}: median busbw {busbw:.2} GB/s, median memcpy {m:.2} GB/s, ratio {:.2}", r.size, busbw / m);
        }
    }
}

/// Runs one size: warm-ups, then timed iterations (each interleaved with
/// a memcpy when asked). Returns the times in µs, the median memcpy
/// bandwidth (GiB/s) and whether the check passed.
fn run_size(rt: &Arc<Runtime>, kind: &CcKind, dtype: Dtype, n: usize, gids: &[u32], unit: u64, o: &Options) -> Result<(Vec<f64>, Option<f64>, bool)> {
    let esize = dtype.size_bytes() as u64;
    let (ie, oe) = kind.sizes(n, unit);
    // The host buffers of this size (every rank's values, the encoded
    // input, the check's and the memcpy comparison's copies), bounded
    // before any is made.
    let host = (n as u64).saturating_mul(ie).saturating_mul(8).saturating_add(ie.max(oe).saturating_mul(esize).saturating_mul(4));
    nrt::host_memory::check(host, format_args!("host buffers of a {unit}-element {kind:?}")).map_err(|e| anyhow!("{}", e.message))?;
    let signed = !matches!(dtype, Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32);
    let mode = o.check.as_deref();
    let vals: Vec<Vec<i64>> = (0..n).map(|r| (0..ie).map(|i| value(mode, o.seed, r, i, signed)).collect()).collect();
    let mut tensors = Vec::with_capacity(gids.len());
    for (r, &g) in gids.iter().enumerate() {
        let v = &vals[g as usize];
        let vc = rt.vcore(r as u32).map_err(|e| anyhow!("{}", e.message))?.clone();
        let mem = rt.memory(vc.device).map_err(|e| anyhow!("{}", e.message))?;
        let i = Arc::new(Tensor::allocate_device(mem, vc.physical[0], (ie * esize).max(1), "cc-test input").map_err(|e| anyhow!("{}", e.message))?);
        let out = Arc::new(Tensor::allocate_device(mem, vc.physical[0], (oe * esize).max(1), "cc-test output").map_err(|e| anyhow!("{}", e.message))?);
        let mut bytes = Vec::with_capacity((ie * esize) as usize);
        for &x in v {
            encode(dtype, x, &mut bytes);
        }
        i.write(0, &bytes).map_err(|e| anyhow!("{}", e.message))?;
        tensors.push((i, out));
    }
    let total = o.warmup + o.iters;
    let local = gids.len();
    let start = Arc::new(Barrier::new(local + 1));
    let end = Arc::new(Barrier::new(local + 1));
    let mut times = Vec::with_capacity(o.iters as usize);
    let mut copies = Vec::new();
    let mut result = Ok(());
    let (src, mut dst) = if o.compare_memcpy { (vec![1u8; (ie.max(oe) * esize) as usize], vec![0u8; (ie.max(oe) * esize) as usize]) } else { (Vec::new(), Vec::new()) };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..local)
            .map(|r| {
                let g = gids[r] as usize;
                let (i, out) = tensors[r].clone();
                let (start, end, rt, kind) = (start.clone(), end.clone(), rt.clone(), kind.clone());
                s.spawn(move || -> nrt::NrtResult<()> {
                    let mut status = Ok(());
                    for _ in 0..total {
                        start.wait();
                        if status.is_ok() {
                            let a = Arrival { group: (0..n as u32).collect(), rank: g, vnc: r as u32, kind: kind.clone(), dtype, op: ReduceOp::Add, count: unit, input: vec![i.clone()], output: vec![out.clone()] };
                            // A panic is this rank's error: the thread must
                            // reach every barrier, or the others wait for it
                            // for ever.
                            status = nrt::worker::guarded(&format!("rank {g}'s thread"), nrt::NrtStatus::Failure, || rt.collectives().run(&rt, a));
                        }
                        end.wait();
                    }
                    status
                })
            })
            .collect();
        for k in 0..total {
            let t0 = Instant::now();
            start.wait();
            end.wait();
            let t = t0.elapsed();
            if k >= o.warmup {
                times.push(t.as_secs_f64() * 1e6);
                if o.compare_memcpy {
                    let c0 = Instant::now();
                    dst.copy_from_slice(&src);
                    std::hint::black_box(&dst);
                    copies.push(src.len() as f64 / c0.elapsed().max(Duration::from_nanos(1)).as_secs_f64() / (1u64 << 30) as f64);
                }
            }
        }
        for h in handles {
            if let Err(e) = h.join().unwrap_or_else(|_| Err(nrt::NrtError::failure("a rank thread panicked"))) {
                result = Err(anyhow!("{}", e.message));
            }
        }
    });
    result?;
    let ok = if mode.is_some() {
        let want = golden(kind, n, unit, &vals);
        (0..local).all(|r| {
            let mut g = vec![0u8; (oe * esize) as usize];
            let mut w = Vec::with_capacity(g.len());
            for &x in &want[gids[r] as usize] {
                encode(dtype, x, &mut w);
            }
            tensors[r].1.read(0, &mut g).is_ok() && g == w
        })
    } else {
        true
    };
    Ok((times, (!copies.is_empty()).then(|| median(&copies)), ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_nccom_test() {
        assert_eq!(parse_size("32M"), Ok(32 << 20));
        assert_eq!(parse_size("2kb"), Ok(2048));
        assert_eq!(parse_size("1MB"), Ok(1 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn minus_n_builds_an_mpirun_line_of_one_process_per_host() {
        let o = Options { ranks: 4, nodes: 2, hosts: Some("h1, h2".into()), processes: 1, op: "allr".into(), min_bytes: 1, max_bytes: 1, step_bytes: None, step_factor: None, iters: 1, warmup: 0, datatype: "fp32".into(), check: None, seed: 0, json: None, show_algorithm: false, compare_memcpy: false };
        let args: Vec<String> = ["cc-test", "-r", "4", "-N", "2", "--hosts", "h1,h2", "allr"].iter().map(|s| s.to_string()).collect();
        let c = mpirun_command(&o, std::path::Path::new("/opt/nrt"), &args, true).unwrap();
        let line = c.join(" ");
        assert!(line.starts_with("mpirun -np 2 --host h1,h2 --allow-run-as-root -x NEURON_RT_ROOT_COMM_ID -x FI_PROVIDER"), "{line}");
        assert!(line.ends_with("/opt/nrt cc-test -r 4 -N 2 --hosts h1,h2 allr"), "{line}");
        assert!(!mpirun_command(&o, std::path::Path::new("/opt/nrt"), &args, false).unwrap().contains(&"--allow-run-as-root".to_string()));
        let one = Options { hosts: Some("h1".into()), ..o };
        assert!(mpirun_command(&one, std::path::Path::new("/opt/nrt"), &args, false).unwrap_err().to_string().contains("needs --hosts with 2 host names"));
    }

    #[test]
    fn bus_factors_are_nccom_tests() {
        assert_eq!(bus_factor(&CcKind::AllReduce, 8), 1.75);
        assert_eq!(bus_factor(&CcKind::AllGather, 4), 0.75);
        assert_eq!(bus_factor(&CcKind::Permute(vec![]), 4), 1.0);
    }
}
