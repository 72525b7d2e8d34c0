//! Collectives whose ranks live in several processes: each rank process
//! is a copy of this test binary (the ignored `rank_main` entry) running
//! a simulated trn2 device; the ranks meet at `NEURON_RT_ROOT_COMM_ID`
//! and their proxies move the cross-process bytes over libfabric tcp on
//! loopback (and, where network namespaces are allowed, between two
//! "hosts" joined by a veth pair).
//!
//! What is checked: results against a host reference (fp32 all-reduce
//! bit for bit in the ring's reduction order, the same on every rank), 2
//! and 4 processes with one or two ranks each; a peer killed in the middle
//! of an operation, a wrong `NEURON_RT_ROOT_COMM_ID`, a mismatched op and
//! an injected proxy failure each give their status and message within
//! the bound, the world stays failed, and a re-initialised runtime runs
//! again. Without libfabric these tests skip with a note naming the
//! package.

use nrt::cc::{Arrival, CcKind, ReduceOp};
use nrt::config::Env;
use nrt::tensor::Tensor;
use nrt::{Runtime, RuntimeOptions};
use nrt_hal::{Arch, Device};
use nrt_isa::dtype::Dtype;
use nrt_sim::{SimConfig, SimDevice};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STEPS: &str = "NRT_CC_TEST_STEPS";
const PROC: &str = "NRT_CC_TEST_PROC";
const LOCAL: &str = "NRT_CC_TEST_LOCAL";
const WORLD: &str = "NRT_CC_TEST_WORLD";
const ROOT: &str = "NRT_CC_TEST_ROOT";
/// Set: the rank processes register no ranks (the host calls join the
/// world themselves).
const BARE: &str = "NRT_CC_TEST_BARE";

fn env(k: &str) -> String {
    std::env::var(k).unwrap_or_else(|_| panic!("{k} not set"))
}

fn runtime(root: &str) -> Runtime {
    let tag = format!("{}-{}", std::process::id(), Instant::now().elapsed().as_nanos());
    let dir = std::env::temp_dir().join(format!("nrt-ccp-{tag}"));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(1).hbm_bytes_per_channel(128 << 20).locks(dir, "ccp").build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    let mut pairs: Vec<(String, String)> = vec![("NEURON_LOGICAL_NC_CONFIG".into(), "1".into()), ("NEURON_RT_ROOT_COMM_ID".into(), root.into())];
    for k in ["NEURON_RT_CC_NET_TIMEOUT", "NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "NEURON_SIM_INJECT", "NEURON_RT_EXEC_TIMEOUT", "NEURON_RT_CC_CHUNK_SIZE"] {
        if let Ok(v) = std::env::var(k) {
            pairs.push((k.into(), v));
        }
    }
    Runtime::init(RuntimeOptions::new(devs, Env::from_pairs(pairs))).unwrap()
}

/// Rank `g`'s input element `i` (as a small integer; floats get a
/// fractional part below so sums round).
fn value(g: u32, i: u64) -> i64 {
    ((i * 7 + u64::from(g) * 3 + i / 5) % 8) as i64 - 3
}

fn fvalue(g: u32, i: u64) -> f32 {
    ((i * 37 + u64::from(g) * 101) % 1000) as f32 * 0.001_3 + 0.1
}

fn enc(dtype: Dtype, v: i64) -> Vec<u8> {
    match dtype {
        Dtype::Float32 => (v as f32).to_le_bytes().to_vec(),
        Dtype::Bfloat16 => half::bf16::from_f32(v as f32).to_le_bytes().to_vec(),
        Dtype::Int8 | Dtype::Uint8 => vec![v as u8],
        Dtype::Int16 | Dtype::Uint16 => (v as u16).to_le_bytes().to_vec(),
        Dtype::Int32 | Dtype::Uint32 => (v as u32).to_le_bytes().to_vec(),
        _ => unreachable!(),
    }
}

fn kind_of(name: &str, n: usize) -> CcKind {
    match name {
        "allr" => CcKind::AllReduce,
        "allg" => CcKind::AllGather,
        "redsct" => CcKind::ReduceScatter,
        "alltoall" => CcKind::AllToAll,
        "permute" => CcKind::Permute((0..n).map(|r| (r, (r + 1) % n)).collect()),
        _ => panic!("op {name}"),
    }
}

fn dtype_of(name: &str) -> Dtype {
    match name {
        "f32" | "f32ring" => Dtype::Float32,
        "bf16" => Dtype::Bfloat16,
        "u8" => Dtype::Uint8,
        "i16" => Dtype::Int16,
        "i32" => Dtype::Int32,
        _ => panic!("dtype {name}"),
    }
}

/// Rank `g`'s input bytes for an op whose input has `elems` elements.
fn input(dt: &str, g: u32, elems: u64) -> Vec<u8> {
    if dt == "f32ring" {
        return (0..elems).flat_map(|i| fvalue(g, i).to_le_bytes()).collect();
    }
    (0..elems).flat_map(|i| enc(dtype_of(dt), value(g, i))).collect()
}

/// What rank `r` of `n` must hold after the op: integer-valued ops
/// exactly; `f32ring` in the ring's order (chunk `c` summed from rank
/// `c + 1` round to rank `c`).
fn reference(kind: &CcKind, dt: &str, n: usize, count: u64, r: usize) -> Vec<u8> {
    let c = count as usize;
    if dt == "f32ring" {
        let per = count.div_ceil(n as u64);
        return (0..count)
            .flat_map(|i| {
                let chunk = (i / per) as usize;
                let mut acc = fvalue(((chunk + 1) % n) as u32, i);
                for k in 2..=n {
                    acc += fvalue(((chunk + k) % n) as u32, i);
                }
                acc.to_le_bytes()
            })
            .collect();
    }
    let dtype = dtype_of(dt);
    let inputs: Vec<Vec<i64>> = (0..n).map(|g| (0..kind.sizes(n, count).0).map(|i| value(g as u32, i)).collect()).collect();
    let vals: Vec<i64> = match kind {
        CcKind::AllReduce => (0..c).map(|i| inputs.iter().map(|v| v[i]).sum()).collect(),
        CcKind::AllGather => inputs.concat(),
        CcKind::ReduceScatter => (0..c).map(|i| inputs.iter().map(|v| v[r * c + i]).sum()).collect(),
        CcKind::AllToAll => (0..n).flat_map(|j| inputs[j][r * c..(r + 1) * c].to_vec()).collect(),
        CcKind::Permute(pairs) => pairs.iter().find(|p| p.1 == r).map_or(vec![0; c], |p| inputs[p.0].clone()),
    };
    vals.iter().flat_map(|&v| enc(dtype, v)).collect()
}

/// Runs one op on this process's ranks (one thread each); returns each
/// local rank's result or error.
fn run_op(rt: &Runtime, gids: &[u32], world: u32, kind: &CcKind, dt: &str, count: u64) -> Vec<nrt::NrtResult<Vec<u8>>> {
    let n = world as usize;
    let dtype = dtype_of(dt);
    let es = dtype.size_bytes() as u64;
    let (in_elems, out_elems) = kind.sizes(n, count);
    std::thread::scope(|s| {
        let hs: Vec<_> = gids
            .iter()
            .enumerate()
            .map(|(v, &g)| {
                let kind = kind.clone();
                s.spawn(move || -> nrt::NrtResult<Vec<u8>> {
                    let vc = rt.vcore(v as u32)?;
                    let mem = rt.memory(vc.device)?;
                    let i = Arc::new(Tensor::allocate_device(mem, vc.physical[0], (in_elems * es).max(1), "in")?);
                    i.write(0, &input(dt, g, in_elems))?;
                    let o = Arc::new(Tensor::allocate_device(mem, vc.physical[0], (out_elems * es).max(1), "out")?);
                    let a = Arrival { group: (0..world).collect(), rank: g as usize, vnc: v as u32, kind, dtype, op: ReduceOp::Add, count, input: vec![i], output: vec![o.clone()] };
                    rt.collectives().run(rt, a)?;
                    let mut b = vec![0u8; (out_elems * es) as usize];
                    o.read(0, &mut b)?;
                    Ok(b)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn digest(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3))
}

/// The rank process: runs `NRT_CC_TEST_STEPS` (comma-separated `op:KIND:DTYPE:COUNT`,
/// `barrier` (`nrt_barrier`), `hostallg:BYTES` (`nrt_all_gather` of host
/// bytes), `routes` (the transport to every rank of another process:
/// `STEP i OK g src>dst=NAME;...`), `moved` (the proxies' data messages
/// so far: `STEP i OK g staged=N,inplace=M`), `die:MS` (SIGKILL this process MS ms
/// from now), `reinit:ROOT`), printing
/// `STEP i OK g digest` / `STEP i ERR g status ms message` per op and rank.
#[test]
#[ignore = "entry point of the rank processes the other tests spawn"]
fn rank_main() {
    let Ok(steps) = std::env::var(STEPS) else { return };
    let (proc_, local, world): (u32, u32, u32) = (env(PROC).parse().unwrap(), env(LOCAL).parse().unwrap(), env(WORLD).parse().unwrap());
    let gids: Vec<u32> = (0..local).map(|v| proc_ * local + v).collect();
    let make = |root: &str| {
        let rt = runtime(root);
        if std::env::var_os(BARE).is_none() {
            for (v, &g) in gids.iter().enumerate() {
                rt.collectives().register_rank(g, v as u32, world).unwrap();
            }
        }
        // The model hosts `nrt_barrier` loads its barrier model with.
        let hosts: Vec<nrt::load::ModelHost> = (0..rt.devices().len()).map(|d| nrt::load::ModelHost::for_runtime_device(&rt, d, rt.shared_models()).unwrap()).collect();
        (rt, hosts)
    };
    let (mut rt, mut hosts) = make(&env(ROOT));
    for (i, step) in steps.split(',').enumerate() {
        let parts: Vec<&str> = step.split(':').collect();
        match parts[0] {
            "die" => {
                let ms: u64 = parts[1].parse().unwrap();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(ms));
                    let _ = Command::new("kill").args(["-9", &std::process::id().to_string()]).status();
                });
            }
            "reinit" => {
                drop(hosts);
                drop(rt);
                (rt, hosts) = make(&parts[1..].join(":"));
            }
            "op" => {
                let kind = kind_of(parts[1], world as usize);
                let count: u64 = parts[3].parse().unwrap();
                let t0 = Instant::now();
                let got = run_op(&rt, &gids, world, &kind, parts[2], count);
                let ms = t0.elapsed().as_millis();
                for (g, r) in gids.iter().zip(got) {
                    match r {
                        Ok(b) => {
                            let want = reference(&kind, parts[2], world as usize, count, *g as usize);
                            if b == want {
                                println!("STEP {i} OK {g} {:016x}", digest(&b));
                            } else {
                                let at = b.iter().zip(&want).position(|(x, y)| x != y);
                                let k = at.unwrap_or(0);
                                println!("STEP {i} WRONG {g} first difference at byte {at:?} of {}: got {:?}, want {:?}", b.len(), &b[k..(k + 8).min(b.len())], &want[k..(k + 8).min(b.len())]);
                            }
                        }
                        Err(e) => println!("STEP {i} ERR {g} {} {ms} {}", e.status.name(), e.message),
                    }
                }
            }
            "routes" | "moved" | "credits" => {
                let everyone: Vec<u32> = (0..world).collect();
                match rt.collectives().world_for(&rt, &everyone) {
                    Ok(Some(w)) => {
                        for &g in &gids {
                            let r: Vec<String> = (0..world).filter(|q| !gids.contains(q)).map(|q| format!("{g}>{q}={}", w.transport_name(g, q).replace(' ', "_"))).collect();
                            let (staged, in_place) = w.messages_moved();
                            let (held, area) = w.credit_stats();
                            let what = match parts[0] {
                                "routes" => r.join(";"),
                                "moved" => format!("staged={staged},inplace={in_place}"),
                                _ => format!("held={held},area={area}"),
                            };
                            println!("STEP {i} OK {g} {what}");
                        }
                    }
                    Ok(None) => println!("STEP {i} ERR 0 NRT_FAILURE 0 no cross-process world"),
                    Err(e) => println!("STEP {i} ERR 0 {} 0 {}", e.status.name(), e.message),
                }
            }
            "barrier" | "hostallg" => {
                let bytes: usize = parts.get(1).map_or(0, |b| b.parse().unwrap());
                let mine = |g: u32| -> Vec<u8> { (0..bytes).map(|k| (k as u32 * 7 + g * 31) as u8).collect() };
                let t0 = Instant::now();
                let got: Vec<nrt::NrtResult<Vec<u8>>> = std::thread::scope(|s| {
                    let hs: Vec<_> = gids
                        .iter()
                        .enumerate()
                        .map(|(v, &g)| {
                            let (rt, hosts) = (&rt, &hosts);
                            let barrier = parts[0] == "barrier";
                            s.spawn(move || -> nrt::NrtResult<Vec<u8>> {
                                if barrier {
                                    rt.collectives().barrier(rt, hosts, v as u32, g, world)?;
                                    return Ok(Vec::new());
                                }
                                let mut out = vec![0u8; bytes * world as usize];
                                rt.collectives().all_gather_host(rt, v as u32, g, world, &mine(g), &mut out)?;
                                Ok(out)
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap()).collect()
                });
                let ms = t0.elapsed().as_millis();
                let want: Vec<u8> = if parts[0] == "barrier" { Vec::new() } else { (0..world).flat_map(mine).collect() };
                for (g, r) in gids.iter().zip(got) {
                    match r {
                        Ok(b) if b == want => println!("STEP {i} OK {g} {:016x}", digest(&b)),
                        Ok(b) => println!("STEP {i} WRONG {g} got {} bytes, first difference at {:?}", b.len(), b.iter().zip(&want).position(|(x, y)| x != y)),
                        Err(e) => println!("STEP {i} ERR {g} {} {ms} {}", e.status.name(), e.message),
                    }
                }
            }
            s => panic!("step {s}"),
        }
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

struct Spawned {
    child: Child,
}

fn spawn(proc_: u32, local: u32, world: u32, root: &str, steps: &str, extra: &[(&str, String)], wrap: Option<&[&str]>) -> Spawned {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match wrap {
        Some(w) => {
            let mut c = Command::new(w[0]);
            c.args(&w[1..]).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args(["rank_main", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(STEPS, steps)
        .env(PROC, proc_.to_string())
        .env(LOCAL, local.to_string())
        .env(WORLD, world.to_string())
        .env(ROOT, root)
        .env("FI_PROVIDER", "tcp")
        .env("FI_TCP_IFACE", "lo")
        .env("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "30")
        .env("NEURON_RT_CC_NET_TIMEOUT", "30")
        .env_remove("NEURON_SIM_INJECT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        // An empty value unsets the variable (FI_PROVIDER: choose per peer).
        if v.is_empty() {
            cmd.env_remove(k);
        } else {
            cmd.env(k, v);
        }
    }
    Spawned { child: cmd.spawn().unwrap() }
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Outcome {
    fn lines(&self, step: usize) -> Vec<&str> {
        let p = format!("STEP {step} ");
        // libtest prints "test rank_main ... " before the first line.
        self.stdout.lines().filter_map(|l| l.find(&p).map(|at| &l[at..])).collect()
    }
}

fn finish(ranks: Vec<Spawned>, deadline: Duration) -> Vec<Outcome> {
    let start = Instant::now();
    ranks
        .into_iter()
        .map(|mut r| {
            let status = loop {
                if let Some(s) = r.child.try_wait().unwrap() {
                    break Some(s);
                }
                if start.elapsed() > deadline {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let (mut stdout, mut stderr) = (String::new(), String::new());
            r.child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
            r.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            Outcome { code: status.and_then(|s| s.code()), stdout, stderr }
        })
        .collect()
}

fn report(out: &[Outcome]) -> String {
    out.iter().enumerate().map(|(i, o)| format!("--- process {i} (exit {:?})\n{}\n{}", o.code, o.stdout, o.stderr.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"))).collect()
}

/// Runs `steps` on `procs` processes of `local` ranks each; asserts each
/// step listed in `ok_steps` succeeded on every rank, with the same
/// digest on every rank for the all-reduce steps.
fn all_ok(procs: u32, local: u32, steps: &str) {
    all_ok_with(procs, local, steps, &[]);
}

/// [`all_ok`] with `extra` variables for the rank processes.
fn all_ok_with(procs: u32, local: u32, steps: &str, extra: &[(&str, String)]) {
    let root = format!("127.0.0.1:{}", free_port());
    let world = procs * local;
    let ranks = (0..procs).map(|p| spawn(p, local, world, &root, steps, extra, None)).collect();
    let out = finish(ranks, Duration::from_secs(240));
    let report = report(&out);
    for (i, step) in steps.split(',').enumerate() {
        let lines: Vec<&str> = out.iter().flat_map(|o| o.lines(i)).collect();
        assert_eq!(lines.len(), world as usize, "step {i} ({step}): one line per rank\n{report}");
        assert!(lines.iter().all(|l| l.split(' ').nth(2) == Some("OK")), "step {i} ({step})\n{report}");
        if step.starts_with("op:allr") {
            let d: Vec<&str> = lines.iter().map(|l| l.rsplit(' ').next().unwrap()).collect();
            assert!(d.iter().all(|x| *x == d[0]), "step {i}: all-reduce results differ between ranks\n{report}");
        }
    }
    assert!(out.iter().all(|o| o.code == Some(0)), "{report}");
}

const OPS: &str = "op:allr:f32ring:10001,op:allr:i32:3000,op:allg:u8:777,op:redsct:i16:301,op:alltoall:u8:50,op:allr:bf16:2049,op:permute:i32:64";

#[test]
fn two_processes_run_every_op_bit_exact() {
    if fabric_here() {
        all_ok(2, 1, OPS);
    }
}

#[test]
fn four_processes_run_all_reduce_and_all_gather() {
    if fabric_here() {
        all_ok(4, 1, "op:allr:f32ring:20000,op:allg:i32:100,op:redsct:i32:64");
    }
}

#[test]
fn two_processes_of_two_ranks_mix_local_and_remote_steps() {
    if fabric_here() {
        all_ok(2, 2, "op:allr:f32ring:9999,op:allg:u8:300,op:alltoall:i16:40");
    }
}

/// `nrt_barrier` and `nrt_all_gather` in processes that set up no
/// communicator: the calls join the world as their rank and meet the other
/// processes at NEURON_RT_ROOT_COMM_ID (they used to wait inside their own
/// process for peers that could not arrive there, until the bound).
/// A slow peer: process 1's proxy lands every message 10 ms late
/// (`NEURON_SIM_INJECT=proxy_slow:ms=10`). Over 2 processes of 2 ranks
/// and 2 KiB messages (`NEURON_RT_CC_CHUNK_SIZE=4096`, 24 per connection
/// and lane), rank 1, whose successor is rank 2 in the slow process,
/// waits for credits or outbox slots instead of running ahead; each
/// rank's proxy area stays at its slots' size (2 slots per connection,
/// side and lane: under 16 KiB, where a whole operation's traffic is
/// 96 KiB); and every rank gets the same right result.
#[test]
fn a_slow_peer_stalls_its_ring_neighbour_with_bounded_memory() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let steps = "op:allr:f32ring:16384,credits";
    let chunk = ("NEURON_RT_CC_CHUNK_SIZE", "4096".to_string());
    let ranks = vec![spawn(0, 2, 4, &root, steps, std::slice::from_ref(&chunk), None), spawn(1, 2, 4, &root, steps, &[chunk, ("NEURON_SIM_INJECT", "proxy_slow:ms=10".into())], None)];
    let out = finish(ranks, Duration::from_secs(120));
    let report = report(&out);
    let results: Vec<&str> = out.iter().flat_map(|o| o.lines(0)).collect();
    assert_eq!(results.len(), 4, "{report}");
    assert!(results.iter().all(|l| l.split(' ').nth(2) == Some("OK")), "{report}");
    let d: Vec<&str> = results.iter().map(|l| l.rsplit(' ').next().unwrap()).collect();
    assert!(d.iter().all(|x| *x == d[0]), "the ranks' results differ\n{report}");
    let stat = |o: &Outcome, key: &str| -> u64 {
        let l = o.lines(1).into_iter().next().unwrap_or_else(|| panic!("no credit line\n{report}"));
        l.rsplit(' ').next().unwrap().split(',').find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok()).unwrap()
    };
    eprintln!("held: {} / {}; largest area: {} / {} bytes", stat(&out[0], "held"), stat(&out[1], "held"), stat(&out[0], "area"), stat(&out[1], "area"));
    assert!(stat(&out[0], "held") > 0, "rank 1 waited for its slow successor\n{report}");
    for o in &out {
        assert!(stat(o, "area") < 16 * 1024, "{report}");
    }
    assert!(out.iter().all(|o| o.code == Some(0)), "{report}");
}

#[test]
fn standalone_barrier_and_all_gather_join_the_world_themselves() {
    if fabric_here() {
        all_ok_with(2, 1, "barrier,hostallg:1000,barrier,hostallg:3", &[(BARE, "1".into())]);
    }
}

/// Four processes of two ranks on this host, no FI_PROVIDER: each
/// process's cross-process bytes go over libfabric's shared-memory
/// provider (the transport is chosen per peer: same host and boot), mixed
/// with device DMA between the two ranks of a process.
#[test]
fn four_processes_of_two_ranks_over_shm() {
    if !fabric_here() {
        return;
    }
    let steps = "op:allr:f32ring:20000,op:allg:u8:300,op:redsct:i32:64,routes,moved";
    let root = format!("127.0.0.1:{}", free_port());
    let ranks = (0..4).map(|p| spawn(p, 2, 8, &root, steps, &[("FI_PROVIDER", String::new())], None)).collect();
    let out = finish(ranks, Duration::from_secs(240));
    let report = report(&out);
    for i in 0..5 {
        let lines: Vec<&str> = out.iter().flat_map(|o| o.lines(i)).collect();
        assert_eq!(lines.len(), 8, "step {i}\n{report}");
        assert!(lines.iter().all(|l| l.split(' ').nth(2) == Some("OK")), "step {i}\n{report}");
    }
    let routes: Vec<&str> = out.iter().flat_map(|o| o.lines(3)).flat_map(|l| l.rsplit(' ').next().unwrap().split(';')).collect();
    assert_eq!(routes.len(), 8 * 6, "{report}");
    assert!(routes.iter().all(|r| r.ends_with("=libfabric_shm")), "{routes:?}");
    // The all-reduce's messages (halves of 2500-element chunks) went from
    // the outbox and into the inbox where they are; the small ones staged.
    for l in out.iter().flat_map(|o| o.lines(4)) {
        let counts = l.rsplit(' ').next().unwrap();
        let n = |k: &str| -> u64 { counts.split(',').find_map(|kv| kv.strip_prefix(k)).unwrap().parse().unwrap() };
        assert!(n("inplace=") > 0 && n("staged=") > 0, "{l}\n{report}");
    }
}

/// Parses a `STEP i ERR g STATUS ms message` line.
fn err_of(line: &str) -> (String, u128, String) {
    let p: Vec<&str> = line.splitn(7, ' ').collect();
    assert_eq!(p.get(2), Some(&"ERR"), "expected an error: {line}");
    (p[4].to_string(), p[5].parse().unwrap(), p.get(6).unwrap_or(&"").to_string())
}

#[test]
fn a_peer_killed_mid_collective_fails_the_others_within_the_bound_and_reinit_works() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let root2 = format!("127.0.0.1:{}", free_port());
    let net = [("NEURON_RT_CC_NET_TIMEOUT", "3".to_string())];
    let survivor = format!("op:allr:i32:64,op:allr:f32:4000000,op:allr:i32:64,reinit:{root2},op:allr:f32ring:5000");
    let ranks = vec![
        spawn(0, 1, 2, &root, &survivor, &net, None),
        spawn(1, 1, 2, &root, "op:allr:i32:64,die:300,op:allr:f32:4000000", &net, None),
        spawn(1, 1, 2, &root2, "op:allr:f32ring:5000", &[], None),
    ];
    let out = finish(ranks, Duration::from_secs(180));
    let report = report(&out);
    assert_eq!(out[0].lines(0).len(), 1, "{report}");
    assert!(out[0].lines(0)[0].contains(" OK "), "{report}");
    assert!(!out[0].lines(1).is_empty(), "the survivor reported nothing for step 1\n{report}");
    let (status, ms, msg) = err_of(out[0].lines(1)[0]);
    eprintln!("the survivor: {status} after {ms} ms: {msg}");
    assert!(status == "NRT_TIMEOUT" || status == "NRT_NETWORK_PROXY_FAILURE", "{status}: {msg}\n{report}");
    assert!(ms < 30_000, "failed after {ms} ms\n{report}");
    assert!(msg.contains("rank 1"), "the message names the dead rank: {msg}");
    let (status2, ms2, msg2) = err_of(out[0].lines(2)[0]);
    assert_eq!(status2, status, "{msg2}");
    assert!(ms2 < 2_000 && msg2.contains("failed in an earlier operation"), "{msg2}");
    assert!(out[0].lines(4)[0].contains(" OK "), "after re-init\n{report}");
    assert!(out[2].lines(0)[0].contains(" OK "), "{report}");
    assert_ne!(out[1].code, Some(0), "the killed rank did not exit normally");
}

#[test]
fn a_wrong_root_comm_id_fails_both_ranks_within_the_bound() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let wrong = format!("127.0.0.1:{}", free_port());
    let b = [("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "2".to_string())];
    let ranks = vec![spawn(0, 1, 2, &root, "op:allr:i32:64", &b, None), spawn(1, 1, 2, &wrong, "op:allr:i32:64", &b, None), spawn(1, 1, 2, "localhost:62001", "op:allr:i32:64", &b, None)];
    let out = finish(ranks, Duration::from_secs(60));
    let report = report(&out);
    let (s0, ms0, m0) = err_of(out[0].lines(0)[0]);
    assert_eq!(s0, "NRT_FAILURE", "{m0}");
    assert!(m0.contains("never arrived") && m0.contains("NEURON_RT_CC_BOOTSTRAP_TIMEOUT") && ms0 < 15_000, "{m0}\n{report}");
    let (s1, ms1, m1) = err_of(out[1].lines(0)[0]);
    assert_eq!(s1, "NRT_FAILURE", "{m1}");
    assert!(m1.contains(&wrong) && m1.contains("could not reach rank 0") && ms1 < 15_000, "{m1}\n{report}");
    let (s2, ms2, m2) = err_of(out[2].lines(0)[0]);
    assert_eq!(s2, "NRT_INVALID", "{m2}");
    assert!(m2.contains("Invalid NEURON_RT_ROOT_COMM_ID [localhost:62001]") && ms2 < 2_000, "{m2}");
}

#[test]
fn a_mismatched_op_fails_both_ranks_naming_both_sides() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let net = [("NEURON_RT_CC_NET_TIMEOUT", "5".to_string())];
    let ranks = vec![spawn(0, 1, 2, &root, "op:allr:i32:64", &net, None), spawn(1, 1, 2, &root, "op:allr:i32:65", &net, None)];
    let out = finish(ranks, Duration::from_secs(60));
    let report = report(&out);
    for o in &out {
        let (s, ms, m) = err_of(o.lines(0)[0]);
        assert_eq!(s, "NRT_INVALID", "{m}\n{report}");
        assert!(m.contains("mismatched collectives between the peers") && m.contains("64 int32") && m.contains("65 int32") && m.contains("rank 0 (") && m.contains("rank 1 ("), "{m}");
        assert!(ms < 5_000, "{ms} ms");
    }
}

#[test]
fn an_injected_proxy_failure_gives_1206_on_every_rank() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let inj = [("NEURON_SIM_INJECT", "proxy_fail:after=2".to_string()), ("NEURON_RT_CC_NET_TIMEOUT", "10".to_string())];
    let steps = "op:allr:i32:64,op:allr:i32:5000,op:allr:i32:64";
    let ranks = vec![spawn(0, 1, 2, &root, steps, &inj, None), spawn(1, 1, 2, &root, steps, &[("NEURON_RT_CC_NET_TIMEOUT", "10".to_string())], None)];
    let out = finish(ranks, Duration::from_secs(60));
    let report = report(&out);
    // after=2: the first op's header and one data message go out, then
    // the proxy of process 0 fails.
    for o in &out {
        let (s, ms, m) = err_of(o.lines(0)[0]);
        assert_eq!(s, "NRT_NETWORK_PROXY_FAILURE", "{m}\n{report}");
        assert!(m.contains("injected network proxy failure") && ms < 5_000, "{m}");
        let (s, _, m) = err_of(o.lines(2)[0]);
        assert!(s == "NRT_NETWORK_PROXY_FAILURE" && m.contains("failed in an earlier operation"), "{m}");
    }
    assert!(out[0].stderr.contains("EFA network proxy operation failed"), "{report}");
}

/// `proxy_panic`: process 0's proxy thread panics mid-operation. The
/// panic is its failure: its ranks get 1206 naming the panic, the peer is
/// told through the abort message, and nobody waits for the bound (60 s,
/// which would give NRT_TIMEOUT).
#[test]
fn an_injected_proxy_panic_gives_1206_on_every_rank() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let net = ("NEURON_RT_CC_NET_TIMEOUT", "60".to_string());
    let inj = [("NEURON_SIM_INJECT", "proxy_panic:after=2".to_string()), net.clone()];
    let steps = "op:allr:i32:64,op:allr:i32:5000";
    let ranks = vec![spawn(0, 1, 2, &root, steps, &inj, None), spawn(1, 1, 2, &root, steps, &[net], None)];
    let out = finish(ranks, Duration::from_secs(120));
    let report = report(&out);
    for o in &out {
        let (s, _, m) = err_of(o.lines(0)[0]);
        assert_eq!(s, "NRT_NETWORK_PROXY_FAILURE", "{m}\n{report}");
        assert!(m.contains("panicked: injected panic (NEURON_SIM_INJECT=proxy_panic)"), "{m}\n{report}");
    }
}

/// Two network namespaces joined by a veth pair (10.213.78.0/30), each a
/// "host"; removed again on drop.
struct TwoHosts {
    names: [String; 2],
    devs: [String; 2],
}

impl TwoHosts {
    fn create() -> Result<TwoHosts, String> {
        let tag = std::process::id() % 10000;
        let names = [format!("nrtcc{tag}a"), format!("nrtcc{tag}b")];
        let devs = [format!("nc{tag}a"), format!("nc{tag}b")];
        let hosts = TwoHosts { names: names.clone(), devs: devs.clone() };
        let run = |args: &[&str]| -> Result<(), String> {
            let o = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
            if o.status.success() { Ok(()) } else { Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr))) }
        };
        run(&["netns", "add", &names[0]])?;
        run(&["netns", "add", &names[1]])?;
        run(&["link", "add", &devs[0], "netns", &names[0], "type", "veth", "peer", "name", &devs[1], "netns", &names[1]])?;
        for (ns, dev, addr) in [(&names[0], &devs[0], "10.213.78.1/30"), (&names[1], &devs[1], "10.213.78.2/30")] {
            run(&["-n", ns, "addr", "add", addr, "dev", dev])?;
            run(&["-n", ns, "link", "set", dev, "up"])?;
            run(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        for (ns, dev) in names.iter().zip(&devs) {
            let start = Instant::now();
            loop {
                let o = Command::new("ip").args(["-n", ns, "link", "show", "dev", dev]).output().map_err(|e| e.to_string())?;
                if String::from_utf8_lossy(&o.stdout).contains("LOWER_UP") {
                    break;
                }
                if start.elapsed() > Duration::from_secs(10) {
                    return Err(format!("{dev} in {ns} did not come up"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(hosts)
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

#[test]
fn two_hosts_made_of_network_namespaces_run_an_all_reduce() {
    if !fabric_here() {
        return;
    }
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    if uid != "0" {
        nrt_test_support::skip!("network namespaces need root");
    }
    let hosts = match TwoHosts::create() {
        Ok(h) => h,
        Err(e) => nrt_test_support::skip!("cannot create network namespaces here ({e})"),
    };
    let root = "10.213.78.1:62021";
    let steps = "op:allr:f32ring:50000,op:allg:u8:1000";
    let ranks = (0..2u32)
        .map(|p| {
            let wrap = ["ip", "netns", "exec", hosts.names[p as usize].as_str()];
            spawn(p, 1, 2, root, steps, &[("FI_TCP_IFACE", hosts.devs[p as usize].clone())], Some(&wrap))
        })
        .collect();
    let out = finish(ranks, Duration::from_secs(120));
    drop(hosts);
    let report = report(&out);
    for i in 0..2 {
        let lines: Vec<&str> = out.iter().flat_map(|o| o.lines(i)).collect();
        assert_eq!(lines.len(), 2, "{report}");
        assert!(lines.iter().all(|l| l.contains(" OK ")), "{report}");
    }
    let d: Vec<&str> = out.iter().map(|o| o.lines(0)[0].rsplit(' ').next().unwrap()).collect();
    assert_eq!(d[0], d[1], "the two hosts' all-reduce results differ\n{report}");
}
