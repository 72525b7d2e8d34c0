//! In-NEFF collectives whose ranks live in different processes: each rank
//! process is a copy of this test binary (the ignored `neff_rank_main`
//! entry) with its own simulated trn2 device; it bootstraps the world at
//! `NEURON_RT_ROOT_COMM_ID` from `CcRank::of`, loads a NEFF with
//! `load_collectives` (an all-reduce from `nrt_gen::cc`, a chain of eight
//! collectives on several replica group sets from `nrt_gen::cc_chain`,
//! or the tp-decoder's prefill and decode NEFFs) and executes it; the
//! proxies move the cross-process steps over libfabric tcp on loopback
//! during each execution.
//!
//! Checked: several executions of 2 processes, each bit for bit against
//! the ring's reduction order and the same on both ranks; chains of 2 x 1
//! and 2 x 2 ranks against their reference, at LNC 1 and at LNC 2 (both
//! physical cores' rings across the processes); the tp-decoder at TP 2
//! with one rank per process, bit-identical across the ranks and within
//! its bound of the f64 reference, at LNC 2 also bit for bit what one
//! process computes; a peer killed between executions (also at LNC 2) and a
//! peer that never loads each give the survivor its status within the
//! bound with a message naming the rank, and the survivor still unloads
//! (also for a chain); peers that loaded different collectives both fail
//! their load naming both sides; an injected proxy failure is 1206 on
//! both ranks (also for a chain, and at LNC 2). Without libfabric these skip with a
//! note naming the package.

use nrt::cc::neff::CcRank;
use nrt::config::Env;
use nrt::load::ModelHost;
use nrt::model::ModelDb;
use nrt::tensor::{Tensor, TensorSet};
use nrt::{Runtime, RuntimeOptions};
use nrt_gen::cc::{CollectiveSpec, collective_neff};
use nrt_gen::cc_chain::{ChainOp, ChainSpec, chain_neff, chain_reference};
use nrt_gen::tp_decoder::reference::{deviation, expected};
use nrt_gen::tp_decoder::weights::DecoderWeights;
use nrt_gen::tp_decoder::{Phase, TpDecoderSpec, tp_decoder_neff};
use nrt_hal::{Arch, Device};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{AluOp, CollectiveType};
use nrt_sim::{SimConfig, SimDevice};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PROC: &str = "NRT_XNEFF_PROC";
const LOCAL: &str = "NRT_XNEFF_LOCAL";
const WORLD: &str = "NRT_XNEFF_WORLD";
const ROOT: &str = "NRT_XNEFF_ROOT";
const COUNT: &str = "NRT_XNEFF_COUNT";
const RUNS: &str = "NRT_XNEFF_RUNS";
/// Kill this process (SIGKILL) once it finished this many executions.
const DIE_AFTER: &str = "NRT_XNEFF_DIE_AFTER";
/// Join the world but never load.
const NO_LOAD: &str = "NRT_XNEFF_NO_LOAD";
/// What the ranks load: `all_reduce` (unset), `chain` or `decoder`.
const KIND: &str = "NRT_XNEFF_KIND";
/// The logical core size the ranks run at and the chain and decoder are
/// generated for (unset: 1).
const LNC: &str = "NRT_XNEFF_LNC";

/// The rank process's LNC ([`LNC`]).
fn lnc() -> usize {
    std::env::var(LNC).map_or(1, |v| v.parse().unwrap())
}

#[allow(dead_code)]
#[path = "../../nrt-cli/src/decoder_run.rs"]
mod decoder_run;

/// Decode steps after the decoder's prefill.
const DECODE_STEPS: usize = 2;

fn env(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| panic!("{k} not set"))
}

fn runtime(root: &str) -> Runtime {
    let dir = std::env::temp_dir().join(format!("nrt-xneff-{}", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(1).hbm_bytes_per_channel(128 << 20).locks(dir, "xneff").build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    let mut pairs: Vec<(String, String)> = vec![("NEURON_LOGICAL_NC_CONFIG".into(), lnc().to_string()), ("NEURON_RT_ROOT_COMM_ID".into(), root.into())];
    for k in ["NEURON_RT_CC_NET_TIMEOUT", "NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "NEURON_SIM_INJECT", "NEURON_RT_EXEC_TIMEOUT", "NEURON_RT_RANKS_PER_NETWORK_PROXY", "NEURON_RT_ONE_THREAD_PER_CORE", "NEURON_RT_CC_CHUNK_SIZE"] {
        if let Ok(v) = std::env::var(k) {
            pairs.push((k.into(), v));
        }
    }
    Runtime::init(RuntimeOptions::new(devs, Env::from_pairs(pairs))).unwrap()
}

/// Rank `g`'s input element `i` in execution `run`: fractional values,
/// so the sums round and the reduction order shows.
fn value(g: u32, i: u64, run: u64) -> f32 {
    ((i * 37 + u64::from(g) * 101 + run * 13) % 1000) as f32 * 0.001_3 + 0.1
}

/// What every rank holds after the all-reduce of `count` elements over
/// `n` ranks, in the ring's order: chunk `c` (of `ceil(count / n)`
/// elements) summed from rank `c + 1` round to rank `c`.
fn reference(n: usize, count: u64, run: u64) -> Vec<u8> {
    let per = count.div_ceil(n as u64);
    (0..count)
        .flat_map(|i| {
            let c = (i / per) as usize;
            let mut acc = value(((c + 1) % n) as u32, i, run);
            for k in 2..=n {
                acc += value(((c + k) % n) as u32, i, run);
            }
            acc.to_le_bytes()
        })
        .collect()
}

/// Prints rank `g`'s line for execution `run` started at `t`: `EXEC run g
/// OK us digest` when `out` holds what `want` gives, else WRONG with the
/// first differing byte, or ERR with the status.
fn report_exec(run: impl std::fmt::Display, g: impl std::fmt::Display, t: Instant, r: nrt::NrtResult<()>, out: &Tensor, want: impl FnOnce() -> Vec<u8>) {
    match r {
        Ok(()) => {
            let mut b = vec![0u8; out.size() as usize];
            out.read(0, &mut b).unwrap();
            match b.iter().zip(&want()).position(|(x, y)| x != y) {
                None => println!("EXEC {run} {g} OK {} {:016x}", t.elapsed().as_micros(), digest(&b)),
                Some(at) => println!("EXEC {run} {g} WRONG first difference at byte {at} of {}", b.len()),
            }
        }
        Err(e) => println!("EXEC {run} {g} ERR {} {} {}", e.status.name(), t.elapsed().as_millis(), e.message),
    }
}

fn digest(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3))
}

/// The rank process: its `NRT_XNEFF_LOCAL` ranks (global ranks
/// `NRT_XNEFF_PROC * local ..`, rank `v` on logical core `v`) each load
/// the NEFF from their own thread, execute it `NRT_XNEFF_RUNS` times and
/// unload, printing one line per step and rank `g`:
/// `LOAD g OK` / `LOAD g ERR status ms message`, `EXEC k g OK us digest` /
/// `EXEC k g ERR status ms message` / `EXEC k g WRONG …`,
/// `UNLOAD g OK|ERR`.
#[test]
#[ignore = "entry point of the rank processes the other tests spawn"]
fn neff_rank_main() {
    let Ok(root) = std::env::var(ROOT) else { return };
    let (proc_, local, world): (u32, u32, u32) = (env(PROC).parse().unwrap(), env(LOCAL).parse().unwrap(), env(WORLD).parse().unwrap());
    let count: u64 = env(COUNT).parse().unwrap();
    let runs: u64 = env(RUNS).parse().unwrap();
    let die_after: Option<u64> = std::env::var(DIE_AFTER).ok().map(|v| v.parse().unwrap());
    let rt = runtime(&root);
    let gids: Vec<u32> = (0..local).map(|v| proc_ * local + v).collect();
    for (v, &g) in gids.iter().enumerate() {
        rt.collectives().register_rank(g, v as u32, world).unwrap();
    }
    let host = ModelHost::for_runtime_device(&rt, 0, Arc::new(ModelDb::default())).unwrap();
    let t0 = Instant::now();
    let mut ccs = Vec::new();
    for &g in &gids {
        match CcRank::of(&rt, g, world) {
            Ok(cc) => ccs.push(cc),
            Err(e) => {
                println!("LOAD {g} ERR {} {} {}", e.status.name(), t0.elapsed().as_millis(), e.message);
                return;
            }
        }
    }
    if std::env::var(NO_LOAD).is_ok() {
        std::thread::sleep(Duration::from_secs(10));
        println!("DONE");
        return;
    }
    match std::env::var(KIND).as_deref() {
        Ok("chain") => return chain_ranks(&host, &gids, &ccs, world, runs, die_after, t0),
        Ok("decoder") => return decoder_rank(&host, &ccs[0], world),
        _ => {}
    }
    let spec = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, count, world);
    let neff = collective_neff(&spec).unwrap();
    let (host, neff) = (&host, &neff);
    std::thread::scope(|s| {
        for (v, (&g, cc)) in gids.iter().zip(&ccs).enumerate() {
            s.spawn(move || {
                let model = match host.load_collectives(neff, v as i32, -1, cc) {
                    Ok(m) => m,
                    Err(e) => {
                        println!("LOAD {g} ERR {} {} {}", e.status.name(), t0.elapsed().as_millis(), e.message);
                        return;
                    }
                };
                println!("LOAD {g} OK");
                for run in 0..runs {
                    if die_after == Some(run) {
                        let _ = Command::new("kill").args(["-9", &std::process::id().to_string()]).status();
                        std::thread::sleep(Duration::from_secs(5));
                    }
                    let input: Vec<u8> = (0..count).flat_map(|i| value(g, i, run).to_le_bytes()).collect();
                    let mut ins = TensorSet::new();
                    ins.add("input", Arc::new(Tensor::from_host_bytes(input, "input")));
                    let out = Arc::new(Tensor::allocate_host(count * 4, "output").unwrap());
                    let mut outs = TensorSet::new();
                    outs.add("output", out.clone());
                    let t = Instant::now();
                    let r = host.execute(model, &ins, &outs);
                    report_exec(run, g, t, r, &out, || reference(world as usize, count, run));
                }
                match host.unload(model) {
                    Ok(()) => println!("UNLOAD {g} OK"),
                    Err(e) => println!("UNLOAD {g} ERR {} {}", e.status.name(), e.message),
                }
            });
        }
    });
    println!("DONE");
}

/// Eight collectives on three replica group sets (the whole world; halves,
/// which stay in one process at 2 x 2; even and odd ranks, which cross)
/// and two pair sets, interleaved with ACT compute.
fn chain(world: u32) -> ChainSpec {
    let op = |kind, op, set| ChainOp { kind, op, set };
    ChainSpec {
        world,
        cols: 8,
        lnc: lnc(),
        sets: vec![vec![(0..world).collect()], vec![(0..world / 2).collect(), (world / 2..world).collect()], vec![(0..world).step_by(2).collect(), (1..world).step_by(2).collect()]],
        pairs: vec![(0..world).map(|r| (r, (r + 1) % world)).collect(), (0..world).map(|r| (r, world - 1 - r)).collect()],
        ops: vec![
            op(CollectiveType::AllReduce, AluOp::Add, 2),
            op(CollectiveType::AllReduce, AluOp::Max, 0),
            op(CollectiveType::ReduceScatter, AluOp::Add, 1),
            op(CollectiveType::AllGather, AluOp::Bypass, 1),
            op(CollectiveType::Permute, AluOp::Bypass, 0),
            op(CollectiveType::AllToAll, AluOp::Bypass, 0),
            op(CollectiveType::AllReduce, AluOp::Min, 2),
            op(CollectiveType::Permute, AluOp::Bypass, 1),
        ],
    }
}

/// Rank `r`'s chain input in execution `run`: small integers, exact in any
/// summation order.
fn chain_input(r: u32, elems: usize, run: u64) -> Vec<f32> {
    (0..elems).map(|i| ((r as usize * 7 + i * 3 + run as usize * 5) % 11) as f32).collect()
}

/// The chain NEFF on this process's ranks, each from its own thread:
/// `EXEC k g OK us digest` when its output is the reference's.
fn chain_ranks(host: &ModelHost, gids: &[u32], ccs: &[CcRank], world: u32, runs: u64, die_after: Option<u64>, t0: Instant) {
    let spec = chain(world);
    let neff = chain_neff(&spec).unwrap();
    let (spec, neff) = (&spec, &neff);
    std::thread::scope(|s| {
        for (v, (&g, cc)) in gids.iter().zip(ccs).enumerate() {
            s.spawn(move || {
                let model = match host.load_collectives(neff, v as i32, -1, cc) {
                    Ok(m) => m,
                    Err(e) => return println!("LOAD {g} ERR {} {} {}", e.status.name(), t0.elapsed().as_millis(), e.message),
                };
                println!("LOAD {g} OK");
                let n = spec.elements();
                for run in 0..runs {
                    if die_after == Some(run) {
                        let _ = Command::new("kill").args(["-9", &std::process::id().to_string()]).status();
                        std::thread::sleep(Duration::from_secs(5));
                    }
                    let ins: Vec<Vec<f32>> = (0..world).map(|r| chain_input(r, n, run)).collect();
                    let mut set = TensorSet::new();
                    set.add("input", Arc::new(Tensor::from_host_bytes(ins[g as usize].iter().flat_map(|x| x.to_le_bytes()).collect(), "input")));
                    let out = Arc::new(Tensor::allocate_host(n as u64 * 4, "output").unwrap());
                    let mut outs = TensorSet::new();
                    outs.add("output", out.clone());
                    let t = Instant::now();
                    let r = host.execute(model, &set, &outs);
                    report_exec(run, g, t, r, &out, || chain_reference(spec, &ins)[g as usize].iter().flat_map(|x| x.to_le_bytes()).collect());
                }
                match host.unload(model) {
                    Ok(()) => println!("UNLOAD {g} OK"),
                    Err(e) => println!("UNLOAD {g} ERR {} {}", e.status.name(), e.message),
                }
            });
        }
    });
    println!("DONE");
}

/// The tp-decoder's rank `cc.rank` of `world` on logical core 0, generated
/// for the process's [`LNC`] (at LNC 2 each NEFF's second subgraph runs
/// the batch's second sequence with all-reduces of its own): its
/// prefill and decode NEFFs (4 layers: 8 all-reduces each), the prefill
/// then [`DECODE_STEPS`] decode steps; `EXEC k g OK us digest` per
/// execution within the bound of the f64 reference, then `UNLOAD g OK`
/// (the runner unloads both).
fn decoder_rank(host: &ModelHost, cc: &CcRank, world: u32) {
    let g = cc.rank;
    let spec = TpDecoderSpec::new(world as usize, 4, lnc());
    let (prefill, decode): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (0..world).map(|_| (tp_decoder_neff(&spec, Phase::Prefill).unwrap(), tp_decoder_neff(&spec, Phase::Decode).unwrap())).unzip();
    let job = decoder_run::DecoderJob { spec, seed: 7, prefill: &prefill, decode: &decode, steps: DECODE_STEPS, peer_timeout: cc.peer_timeout };
    let weights = DecoderWeights::generate(&spec, 7);
    match decoder_run::run_rank_as(host, &job, &weights, cc, 0) {
        Ok(out) => {
            let want = expected(&spec, &weights, 7, DECODE_STEPS);
            for (k, (got, want)) in out.hidden.iter().zip(&want).enumerate() {
                let f: Vec<f32> = got.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
                let d = deviation(want, &f);
                match d.outside {
                    0 => println!("EXEC {k} {g} OK {} {:016x}", out.elapsed[k].as_micros(), digest(got)),
                    _ => println!("EXEC {k} {g} WRONG {d:?}"),
                }
            }
            println!("UNLOAD {g} OK");
        }
        Err(e) => println!("RUN {g} ERR {e}"),
    }
    println!("DONE");
}

/// Whether libfabric can be loaded here; the calling test is reported
/// skipped if not.
fn fabric_here() -> bool {
    match nrt_net::fabric::available() {
        Ok(()) => true,
        Err(e) => nrt_test_support::skip!(return false; "{e}"),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn spawn(proc_: u32, local: u32, world: u32, root: &str, count: u64, runs: u64, extra: &[(&str, String)]) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(["neff_rank_main", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(PROC, proc_.to_string())
        .env(LOCAL, local.to_string())
        .env(WORLD, world.to_string())
        .env(ROOT, root)
        .env(COUNT, count.to_string())
        .env(RUNS, runs.to_string())
        .env("FI_PROVIDER", "tcp")
        .env("FI_TCP_IFACE", "lo")
        .env("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "30")
        .env("NEURON_RT_CC_NET_TIMEOUT", "30")
        .env_remove("NEURON_SIM_INJECT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Outcome {
    /// The line that starts with `prefix` (libtest may print before it).
    fn line(&self, prefix: &str) -> Option<&str> {
        self.stdout.lines().find_map(|l| l.find(prefix).map(|at| &l[at..]))
    }
}

fn finish(ranks: Vec<Child>, deadline: Duration) -> Vec<Outcome> {
    let start = Instant::now();
    ranks
        .into_iter()
        .map(|mut c| {
            let status = loop {
                if let Some(s) = c.try_wait().unwrap() {
                    break Some(s);
                }
                if start.elapsed() > deadline {
                    let _ = c.kill();
                    let _ = c.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let (mut stdout, mut stderr) = (String::new(), String::new());
            c.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
            c.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            Outcome { code: status.and_then(|s| s.code()), stdout, stderr }
        })
        .collect()
}

fn report(out: &[Outcome]) -> String {
    out.iter().enumerate().map(|(i, o)| format!("--- process {i} (exit {:?})\n{}\n{}\n", o.code, o.stdout, o.stderr.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"))).collect()
}

/// `ERR status ms message` after `prefix`.
fn err_of<'a>(o: &'a Outcome, prefix: &str) -> (&'a str, u128, &'a str) {
    let l = o.line(prefix).unwrap_or_else(|| panic!("no {prefix:?} line:\n{}\n{}", o.stdout, o.stderr));
    let p: Vec<&str> = l[prefix.len()..].trim_start().splitn(4, ' ').collect();
    assert_eq!(p.first(), Some(&"ERR"), "expected an error: {l}");
    (p[1], p[2].parse().unwrap(), p.get(3).copied().unwrap_or(""))
}

/// Runs `procs` processes of `local` ranks each, `runs` executions of an
/// all-reduce of `count`; asserts every rank loaded, got every result
/// right (the same on every rank) and unloaded.
fn all_ok(procs: u32, local: u32, count: u64, runs: u64) {
    let (digests, report) = each_ok(procs, local, count, runs, &[]);
    for (run, d) in digests.iter().enumerate() {
        assert!(d.iter().all(|x| *x == d[0]), "execution {run}: the ranks' results differ\n{report}");
    }
}

/// Runs `procs` processes of `local` ranks each (their kind of NEFF set
/// by `extra`), `runs` executions; asserts every rank loaded, got every
/// result right and unloaded. Each execution's digests by rank, and the
/// report.
fn each_ok(procs: u32, local: u32, count: u64, runs: u64, extra: &[(&str, String)]) -> (Vec<Vec<String>>, String) {
    let root = format!("127.0.0.1:{}", free_port());
    let world = procs * local;
    let out = finish((0..procs).map(|p| spawn(p, local, world, &root, count, runs, extra)).collect(), Duration::from_secs(240));
    let report = report(&out);
    for g in 0..world {
        let o = &out[(g / local) as usize];
        assert!(o.line(&format!("LOAD {g} OK")).is_some(), "{report}");
        assert!(o.line(&format!("UNLOAD {g} OK")).is_some(), "{report}");
    }
    assert!(out.iter().all(|o| o.code == Some(0)), "{report}");
    let mut us: Vec<u64> = Vec::new();
    let mut digests = Vec::new();
    for run in 0..runs {
        let lines: Vec<&str> = (0..world).map(|g| out[(g / local) as usize].line(&format!("EXEC {run} {g} OK ")).unwrap_or_else(|| panic!("execution {run} rank {g}\n{report}"))).collect();
        digests.push(lines.iter().map(|l| l.rsplit(' ').next().unwrap().to_string()).collect());
        us.extend(lines.iter().filter_map(|l| l.split(' ').nth(4)?.parse::<u64>().ok()));
    }
    us.sort_unstable();
    eprintln!("{procs} processes x {local} ranks, {:?} (count {count}): median execution {} us over {} (rank, execution)s, the first included", extra, us[us.len() / 2], us.len());
    (digests, report)
}

#[test]
fn two_processes_run_a_loaded_all_reduce_bit_exact_execution_after_execution() {
    if fabric_here() {
        all_ok(2, 1, 10_001, 5);
    }
}

#[test]
fn two_processes_of_two_ranks_mix_device_and_network_steps() {
    if fabric_here() {
        all_ok(2, 2, 9_999, 3);
    }
}

/// A chain of eight collectives (four of them across the processes at
/// 2 x 1, six of the 2 x 2 world's, whose halves stay in each process)
/// runs execution after execution, every rank's output the reference's;
/// at 2 x 2 the two ranks of a process share a proxy thread
/// (`NEURON_RT_RANKS_PER_NETWORK_PROXY=2`), pinned to a CPU
/// (`NEURON_RT_ONE_THREAD_PER_CORE`).
#[test]
fn a_chain_of_collectives_runs_across_2_processes_of_1_and_of_2_ranks() {
    if fabric_here() {
        let chain = (KIND, "chain".to_string());
        each_ok(2, 1, 0, 3, std::slice::from_ref(&chain));
        each_ok(2, 2, 0, 2, &[chain, ("NEURON_RT_RANKS_PER_NETWORK_PROXY", "2".into()), ("NEURON_RT_ONE_THREAD_PER_CORE", "1".into())]);
    }
}

/// The tp-decoder at TP 2, one rank per process (as torchrun runs it):
/// the prefill and decode NEFFs (8 all-reduces each) loaded on the same
/// core, the prefill then the decode steps, every output within its bound
/// of the f64 reference and bit-identical on both ranks.
#[test]
fn the_tp_decoder_runs_with_one_rank_per_process() {
    if fabric_here() {
        decoder_across_processes(1);
    }
}

/// The same at LNC 2, trn2's default and torchrun's common shape: each
/// NEFF has a subgraph per physical core, each with its 8 all-reduces, so
/// the second physical core's ring crosses the processes on its own
/// connections, gate and proxy chain. Every output is within its bound,
/// and bit for bit what the same ranks compute in one process.
#[test]
fn the_tp_decoder_at_lnc_2_runs_with_one_rank_per_process_as_in_one_process() {
    if fabric_here() {
        let digests = decoder_across_processes(2);
        let spec = TpDecoderSpec::new(2, 4, 2);
        let (prefill, decode): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (0..2).map(|_| (tp_decoder_neff(&spec, Phase::Prefill).unwrap(), tp_decoder_neff(&spec, Phase::Decode).unwrap())).unzip();
        let rt = local_runtime(2);
        let host = ModelHost::for_runtime_device(&rt, 0, Arc::new(ModelDb::default())).unwrap();
        let job = decoder_run::DecoderJob { spec, seed: 7, prefill: &prefill, decode: &decode, steps: DECODE_STEPS, peer_timeout: Duration::from_secs(60) };
        let here = decoder_run::run(std::slice::from_ref(&host), &job).unwrap();
        for (k, d) in digests.iter().enumerate() {
            let one: Vec<String> = here.iter().map(|r| format!("{:016x}", digest(&r.hidden[k]))).collect();
            assert_eq!(*d, one, "execution {k}: across processes (left) and in one process (right)");
        }
    }
}

/// Runs the tp-decoder at TP 2 and `lnc`, one rank per process, and checks
/// both ranks' outputs agree; each execution's digests by rank.
fn decoder_across_processes(lnc: usize) -> Vec<Vec<String>> {
    let (digests, report) = each_ok(2, 1, 0, 1 + DECODE_STEPS as u64, &[(KIND, "decoder".to_string()), (LNC, lnc.to_string())]);
    for (k, d) in digests.iter().enumerate() {
        assert_eq!(d[0], d[1], "execution {k}: the ranks' hidden states differ\n{report}");
    }
    digests
}

/// A runtime of one trn2 device at `lnc` for ranks that all run in this
/// process.
fn local_runtime(lnc: usize) -> Runtime {
    let dir = std::env::temp_dir().join(format!("nrt-xneff-{}", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(1).hbm_bytes_per_channel(128 << 20).locks(dir, "xneff").build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    Runtime::init(RuntimeOptions::new(devs, Env::from_pairs([("NEURON_LOGICAL_NC_CONFIG".to_string(), lnc.to_string())]))).unwrap()
}

/// The chain of eight collectives at LNC 2: both subgraphs run it, each
/// on the ring of its physical core, so at 2 x 1 ranks each execution
/// runs two proxy chains per rank side by side (one per physical core),
/// at 2 x 2 with device and network steps mixed on both; every rank's
/// output the reference's, execution after execution.
#[test]
fn a_chain_of_collectives_runs_across_processes_on_both_physical_cores_at_lnc_2() {
    if fabric_here() {
        let (chain, lnc2) = ((KIND, "chain".to_string()), (LNC, "2".to_string()));
        each_ok(2, 1, 0, 2, &[chain.clone(), lnc2.clone()]);
        each_ok(2, 2, 0, 2, &[chain, lnc2]);
    }
}

/// Rank 1's process (running `kind`) kills itself after its first
/// execution: the survivor's second fails within the bound naming rank 1,
/// its third at once, and it still unloads.
fn a_killed_peer_fails_the_survivor(kind: &str, lnc: usize) {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let net = ("NEURON_RT_CC_NET_TIMEOUT", "3".to_string());
    let kind = (KIND, kind.to_string());
    let lnc = (LNC, lnc.to_string());
    let out = finish(vec![spawn(0, 1, 2, &root, 4096, 3, &[net.clone(), kind.clone(), lnc.clone()]), spawn(1, 1, 2, &root, 4096, 3, &[net, kind, lnc, (DIE_AFTER, "1".into())])], Duration::from_secs(120));
    let report = report(&out);
    assert!(out[0].line("EXEC 0 0 OK").is_some(), "{report}");
    let (status, ms, msg) = err_of(&out[0], "EXEC 1 0");
    eprintln!("the survivor: {status} after {ms} ms: {msg}");
    assert!(status == "NRT_TIMEOUT" || status == "NRT_NETWORK_PROXY_FAILURE", "{status}: {msg}\n{report}");
    assert!(ms < 30_000, "failed after {ms} ms\n{report}");
    assert!(msg.contains("rank 1"), "the message names the dead rank: {msg}");
    // The next execution fails at once; the model still unloads.
    let (_, ms2, _) = err_of(&out[0], "EXEC 2 0");
    assert!(ms2 < 2_000, "{report}");
    assert!(out[0].line("UNLOAD 0 OK").is_some(), "{report}");
    assert_ne!(out[1].code, Some(0), "the killed rank did not exit normally");
}

#[test]
fn a_peer_killed_between_executions_fails_the_survivor_within_the_bound_naming_it() {
    a_killed_peer_fails_the_survivor("all_reduce", 1);
}

#[test]
fn a_peer_killed_between_executions_of_a_chain_fails_the_survivor_within_the_bound() {
    a_killed_peer_fails_the_survivor("chain", 1);
}

/// At LNC 2 both physical cores' proxies wait for the dead peer: the
/// survivor still fails within the bound naming it, and unloads.
#[test]
fn a_peer_killed_between_executions_at_lnc_2_fails_the_survivor_within_the_bound() {
    a_killed_peer_fails_the_survivor("chain", 2);
}

#[test]
fn a_peer_that_never_loads_fails_the_load_within_the_bound_naming_it() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let net = ("NEURON_RT_CC_NET_TIMEOUT", "2".to_string());
    let out = finish(vec![spawn(0, 1, 2, &root, 256, 1, std::slice::from_ref(&net)), spawn(1, 1, 2, &root, 256, 1, &[net.clone(), (NO_LOAD, "1".into())])], Duration::from_secs(120));
    let report = report(&out);
    let (status, ms, msg) = err_of(&out[0], "LOAD 0");
    eprintln!("rank 0: {status} after {ms} ms: {msg}");
    assert_eq!(status, "NRT_TIMEOUT", "{msg}\n{report}");
    assert!(ms < 20_000 && msg.contains("rank 1") && msg.contains("NEURON_RT_CC_NET_TIMEOUT"), "{msg}\n{report}");
}

#[test]
fn peers_that_load_different_collectives_both_fail_naming_both_sides() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let out = finish(vec![spawn(0, 1, 2, &root, 64, 1, &[]), spawn(1, 1, 2, &root, 32, 1, &[])], Duration::from_secs(120));
    let report = report(&out);
    for (g, o) in out.iter().enumerate() {
        let (status, _, msg) = err_of(o, &format!("LOAD {g}"));
        assert_eq!(status, "NRT_INVALID", "{msg}\n{report}");
        assert!(msg.contains("mismatched collectives between the peers") && msg.contains("all_reduce of 64 float32") && msg.contains("all_reduce of 32 float32"), "{msg}\n{report}");
        assert!(msg.contains("rank 0") && msg.contains("rank 1"), "{msg}");
    }
}

/// Rank 0's process runs with `NEURON_SIM_INJECT=inject`: the proxy of
/// its first execution fails or panics, and the harvest of each rank's
/// execution gets the proxy's failure (1206 whose message contains
/// `says`) rather than waiting at the barrier or for the core; both
/// models unload.
fn an_injected_proxy_fault_is_1206_on_both_ranks(kind: &str, inject: &str, says: &str, lnc: usize) {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let inject = ("NEURON_SIM_INJECT", inject.to_string());
    let kind = (KIND, kind.to_string());
    let lnc = (LNC, lnc.to_string());
    let out = finish(vec![spawn(0, 1, 2, &root, 1024, 2, &[inject, kind.clone(), lnc.clone()]), spawn(1, 1, 2, &root, 1024, 2, &[kind, lnc])], Duration::from_secs(120));
    let report = report(&out);
    for (g, o) in out.iter().enumerate() {
        let (status, _, msg) = err_of(o, &format!("EXEC 0 {g}"));
        assert_eq!(status, "NRT_NETWORK_PROXY_FAILURE", "{msg}\n{report}");
        assert!(msg.contains(says), "{msg}\n{report}");
        assert!(o.line(&format!("UNLOAD {g} OK")).is_some(), "{report}");
    }
}

#[test]
fn an_injected_proxy_failure_is_1206_on_both_ranks() {
    an_injected_proxy_fault_is_1206_on_both_ranks("all_reduce", "proxy_fail:after=1", "injected network proxy failure", 1);
}

/// In a chain the failure comes in a later collective of the execution
/// (after 6 messages): both ranks still get 1206 and unload.
#[test]
fn an_injected_proxy_failure_in_a_chain_is_1206_on_both_ranks() {
    an_injected_proxy_fault_is_1206_on_both_ranks("chain", "proxy_fail:after=6", "injected network proxy failure", 1);
}

/// At LNC 2 each physical core's chain has its own proxy operation (both
/// fail after 6 messages): both ranks get 1206 and unload.
#[test]
fn an_injected_proxy_failure_at_lnc_2_is_1206_on_both_ranks() {
    an_injected_proxy_fault_is_1206_on_both_ranks("chain", "proxy_fail:after=6", "injected network proxy failure", 2);
}

/// The proxy thread panics: the panic is the operation's failure.
#[test]
fn an_injected_proxy_panic_is_1206_on_both_ranks() {
    an_injected_proxy_fault_is_1206_on_both_ranks("all_reduce", "proxy_panic:after=1", "injected panic (NEURON_SIM_INJECT=proxy_panic)", 1);
}

/// The persistent proxy thread of rank 0's process panics outside any
/// operation in the middle of the first execution
/// (`NEURON_SIM_INJECT=proxy_thread_panic`): rank 0's execution fails at
/// once with 1206 naming the thread, the peer hears it by abort (not by
/// its 5 s bound), the next execution of each fails at once (the model
/// is stopped, the world failed), and both models unload.
#[test]
fn a_proxy_thread_that_dies_mid_execution_fails_both_ranks_at_once_naming_it() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let net = ("NEURON_RT_CC_NET_TIMEOUT", "5".to_string());
    let chunk = ("NEURON_RT_CC_CHUNK_SIZE", "4096".to_string());
    let inject = ("NEURON_SIM_INJECT", "proxy_thread_panic:after=3".to_string());
    let out = finish(vec![spawn(0, 1, 2, &root, 16384, 2, &[net.clone(), chunk.clone(), inject]), spawn(1, 1, 2, &root, 16384, 2, &[net, chunk])], Duration::from_secs(120));
    let report = report(&out);
    let (status, ms, msg) = err_of(&out[0], "EXEC 0 0");
    eprintln!("rank 0: {status} after {ms} ms: {msg}");
    assert_eq!(status, "NRT_NETWORK_PROXY_FAILURE", "{msg}\n{report}");
    assert!(msg.contains("network proxy thread nrt-cc-proxy-0 panicked"), "the message names the thread: {msg}\n{report}");
    assert!(ms < 4_000, "rank 0 waited {ms} ms\n{report}");
    let (status, ms, msg) = err_of(&out[1], "EXEC 0 1");
    eprintln!("rank 1: {status} after {ms} ms: {msg}");
    assert_eq!(status, "NRT_NETWORK_PROXY_FAILURE", "{msg}\n{report}");
    assert!(msg.contains("rank 0") && msg.contains("nrt-cc-proxy-0"), "{msg}\n{report}");
    assert!(ms < 4_000, "rank 1 waited {ms} ms\n{report}");
    for (g, o) in out.iter().enumerate() {
        let (_, ms, msg) = err_of(o, &format!("EXEC 1 {g}"));
        assert!(ms < 2_000, "the next execution fails at once: {ms} ms {msg}\n{report}");
        assert!(o.line(&format!("UNLOAD {g} OK")).is_some(), "{report}");
    }
}
