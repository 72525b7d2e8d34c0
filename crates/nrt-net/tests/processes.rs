//! Ranks as separate processes on this machine (and, where the machine
//! allows network namespaces, on two "hosts" joined by a veth pair),
//! meeting at `NEURON_RT_ROOT_COMM_ID` and exchanging data over libfabric
//! tcp on loopback.
//!
//! Each rank is a copy of this test binary running the `rank_main` entry
//! (ignored in normal runs) with its role in the environment. Every child
//! is bounded by our variables and, as a last resort, killed by the
//! parent after a deadline. Without libfabric these tests skip with a note
//! naming the package.

mod common;

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, ring_allgather};
use nrt_net::bootstrap::{BootstrapConfig, Joining, ROOT_COMM_ID_VAR, RootCommId, Signature, rendezvous};
use nrt_net::fabric::{FabricTransport, available};
use nrt_net::limits::{BOOTSTRAP_TIMEOUT_VAR, Bound, NET_TIMEOUT_VAR, stderr_sink};
use nrt_net::{NetResult, Transport};

const ROLE: &str = "NRT_NET_TEST_ROLE";
const RANK: &str = "NRT_NET_TEST_RANK";
const WORLD: &str = "NRT_NET_TEST_WORLD";
const CHUNK: &str = "NRT_NET_TEST_CHUNK";

/// The bound the parent gave a rank process in `variable` (whole seconds;
/// the runtime's own parser is `nrt::config`, above this crate), else
/// 600 s.
fn bound_given(variable: &'static str) -> Bound {
    let secs = std::env::var(variable).map_or(600, |v| v.parse().unwrap_or_else(|_| panic!("{variable}={v}: the tests pass whole seconds")));
    Bound::new(Duration::from_secs(secs), variable)
}

/// The rank process. Roles: `ring` (bootstrap + ring all-gather),
/// `mismatch` (a different op signature), `killed-in-bootstrap` (SIGKILLs
/// itself while the exchange waits for a rank that never comes),
/// `exit-after-bootstrap` (exits before sending any data), `stream`
/// (the bandwidth bench).
#[test]
#[ignore = "entry point of the rank processes the other tests spawn"]
fn rank_main() {
    let Ok(role) = std::env::var(ROLE) else { return };
    let rank: u32 = std::env::var(RANK).unwrap().parse().unwrap();
    let code = match run_rank(&role, rank) {
        Ok(()) => {
            eprintln!("RANK {rank} OK");
            0
        }
        Err(e) => {
            eprintln!("RANK {rank} ERROR: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn run_rank(role: &str, rank: u32) -> NetResult<()> {
    let world_size: u32 = std::env::var(WORLD).unwrap().parse().unwrap();
    let chunk: usize = std::env::var(CHUNK).ok().map(|c| c.parse().unwrap()).unwrap_or(1 << 20);
    let sink = stderr_sink();
    let t = FabricTransport::open()?;
    eprintln!("RANK {rank} endpoint {} via {}", t.address(), t.provider());
    let (h, mut listener) = t.listen()?;
    let root: RootCommId = std::env::var(ROOT_COMM_ID_VAR).unwrap_or_default().parse()?;
    let cfg = BootstrapConfig { root, bound: bound_given(BOOTSTRAP_TIMEOUT_VAR), sink: stderr_sink() };
    let digest = if role == "mismatch" { [0xbb; 16] } else { [0xaa; 16] };
    if role == "killed-in-bootstrap" {
        std::thread::spawn(|| {
            std::thread::sleep(Duration::from_millis(3000));
            // SAFETY: kill(2) on our own pid.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        });
    }
    let me = Joining {
        rank,
        world_size,
        endpoint: h.as_bytes().to_vec(),
        signatures: vec![Signature { group: 0, digest }, Signature { group: 1, digest: [1; 16] }],
    };
    let world = rendezvous(&cfg, me)?;
    if role == "exit-after-bootstrap" {
        std::process::exit(3);
    }
    let net = bound_given(NET_TIMEOUT_VAR);
    if role == "stream" {
        return stream(&t, &mut *listener, &world, chunk, net);
    }
    if role == "pingpong" {
        return pingpong(&t, &mut *listener, &world, chunk, net);
    }
    ring_allgather(&t, &mut *listener, &world, chunk, net, &sink)
}

/// Rank 0 streams `NRT_NET_TEST_ITERS` messages of `chunk` bytes to rank 1
/// (16 in flight) and prints the bandwidth.
fn stream(t: &dyn Transport, listener: &mut dyn nrt_net::Listener, world: &nrt_net::bootstrap::World, chunk: usize, net: Bound) -> NetResult<()> {
    let iters: usize = std::env::var("NRT_NET_TEST_ITERS").ok().map(|c| c.parse().unwrap()).unwrap_or(200);
    let depth = 16usize;
    let sink = stderr_sink();
    let mut bufs: Vec<Vec<u8>> = (0..depth).map(|_| vec![7u8; chunk]).collect();
    if world.rank == 0 {
        let mut s = t.connect(&nrt_net::Handle::from_bytes(&world.endpoints[1])?)?;
        let regs: Vec<_> = bufs.iter().map(|b| unsafe { t.register(b.as_ptr(), b.len()) }).collect::<NetResult<_>>()?;
        let start = Instant::now();
        let mut inflight = std::collections::VecDeque::new();
        for i in 0..iters {
            if inflight.len() == depth {
                let q = inflight.pop_front().unwrap();
                nrt_net::transport::wait(|| s.test(q), net, &sink, &|| "a streamed send".into())?;
            }
            let b = &bufs[i % depth];
            // SAFETY: the buffer outlives the request (waited below).
            inflight.push_back(unsafe { s.isend(b.as_ptr(), chunk, Some(&regs[i % depth]))? });
        }
        for q in inflight {
            nrt_net::transport::wait(|| s.test(q), net, &sink, &|| "a streamed send".into())?;
        }
        // The receiver's one-byte ack: everything has landed.
        let mut r = listener.accept(net)?;
        let mut ack = [0u8; 1];
        nrt_net::transport::recv(&mut *r, &mut ack, net, &sink)?;
        let secs = start.elapsed().as_secs_f64();
        println!("STREAM bytes={} secs={secs:.6} MB/s={:.1}", chunk * iters, (chunk * iters) as f64 / secs / 1e6);
    } else {
        let mut r = listener.accept(net)?;
        let regs: Vec<_> = bufs.iter_mut().map(|b| unsafe { t.register(b.as_ptr(), b.len()) }).collect::<NetResult<_>>()?;
        let base: Vec<*mut u8> = bufs.iter_mut().map(|b| b.as_mut_ptr()).collect();
        let mut inflight = std::collections::VecDeque::new();
        let mut posted = 0;
        let mut done = 0;
        while done < iters {
            while posted < iters && inflight.len() < depth {
                // SAFETY: the buffers outlive the requests (waited below).
                inflight.push_back(unsafe { r.irecv(base[posted % depth], chunk, Some(&regs[posted % depth]))? });
                posted += 1;
            }
            let q = inflight.pop_front().unwrap();
            nrt_net::transport::wait(|| r.test(q), net, &sink, &|| "a streamed receive".into())?;
            done += 1;
        }
        let mut s = t.connect(&nrt_net::Handle::from_bytes(&world.endpoints[0])?)?;
        nrt_net::transport::send(&mut *s, &[1], net, &sink)?;
    }
    Ok(())
}

/// fi_pingpong's pattern over our transport: rank 0 sends `chunk` bytes,
/// rank 1 sends them back, one message in flight; prints rank 0's
/// bandwidth counted as fi_pingpong counts it (both directions' bytes).
fn pingpong(t: &dyn Transport, listener: &mut dyn nrt_net::Listener, world: &nrt_net::bootstrap::World, chunk: usize, net: Bound) -> NetResult<()> {
    let iters: usize = std::env::var("NRT_NET_TEST_ITERS").ok().map(|c| c.parse().unwrap()).unwrap_or(200);
    let sink = stderr_sink();
    let peer = 1 - world.rank as usize;
    let mut s = t.connect(&nrt_net::Handle::from_bytes(&world.endpoints[peer])?)?;
    let mut r = listener.accept(net)?;
    let mut buf = vec![5u8; chunk];
    let start = Instant::now();
    for _ in 0..iters {
        if world.rank == 0 {
            nrt_net::transport::send(&mut *s, &buf, net, &sink)?;
            nrt_net::transport::recv(&mut *r, &mut buf, net, &sink)?;
        } else {
            nrt_net::transport::recv(&mut *r, &mut buf, net, &sink)?;
            nrt_net::transport::send(&mut *s, &buf, net, &sink)?;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    if world.rank == 0 {
        println!("STREAM bytes={} secs={secs:.6} MB/s={:.1}", 2 * chunk * iters, (2 * chunk * iters) as f64 / secs / 1e6);
    }
    Ok(())
}

/// Whether the libfabric tests can run here; the calling test is reported
/// skipped if not.
fn fabric_here() -> bool {
    match available() {
        Ok(()) => true,
        Err(e) => nrt_test_support::skip!(return false; "{e}"),
    }
}

struct Rank {
    rank: u32,
    child: Child,
}

/// Spawns one rank process.
fn spawn(rank: u32, world: u32, role: &str, root: &str, env: &[(&str, String)], wrap: Option<&[&str]>) -> Rank {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = match wrap {
        Some(prefix) => {
            let mut c = Command::new(prefix[0]);
            c.args(&prefix[1..]).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args(["rank_main", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(RANK, rank.to_string())
        .env(WORLD, world.to_string())
        .env("NEURON_RT_ROOT_COMM_ID", root)
        .env("FI_PROVIDER", "tcp")
        .env("FI_TCP_IFACE", "lo")
        .env("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "20")
        .env("NEURON_RT_CC_NET_TIMEOUT", "20")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Rank { rank, child: cmd.spawn().unwrap() }
}

struct Outcome {
    rank: u32,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Waits for every rank, killing any still running after `deadline`.
fn finish(ranks: Vec<Rank>, deadline: Duration) -> Vec<Outcome> {
    let start = Instant::now();
    let mut out = Vec::new();
    for mut r in ranks {
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
        let mut stdout = String::new();
        let mut stderr = String::new();
        r.child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
        r.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        let code = status.and_then(|s| s.code());
        out.push(Outcome { rank: r.rank, code, stdout, stderr });
    }
    out
}

fn report(o: &[Outcome]) -> String {
    o.iter().map(|x| format!("--- rank {} exit {:?}\n{}{}", x.rank, x.code, x.stdout, x.stderr)).collect()
}

fn ring_of(n: u32, chunk: usize) {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let ranks = (0..n).map(|r| spawn(r, n, "ring", &root, &[(CHUNK, chunk.to_string())], None)).collect();
    let out = finish(ranks, Duration::from_secs(90));
    assert!(out.iter().all(|o| o.code == Some(0)), "{}", report(&out));
    assert!(out.iter().all(|o| o.stderr.contains(&format!("RANK {} OK", o.rank))), "{}", report(&out));
}

#[test]
fn two_processes_exchange_over_libfabric_tcp() {
    ring_of(2, 1 << 20);
}

#[test]
fn four_processes_exchange_over_libfabric_tcp() {
    ring_of(4, 300_007);
}

#[test]
fn a_process_killed_mid_exchange_fails_every_other_rank_within_the_bound() {
    if !fabric_here() {
        return;
    }
    // World of 4: rank 3 never starts, rank 2 is killed while the
    // exchange waits for it; ranks 0 and 1 must fail naming rank 2 long
    // before their 20 s bound.
    let root = format!("127.0.0.1:{}", free_port());
    let start = Instant::now();
    let ranks = vec![
        spawn(0, 4, "ring", &root, &[], None),
        spawn(1, 4, "ring", &root, &[], None),
        spawn(2, 4, "killed-in-bootstrap", &root, &[], None),
    ];
    let out = finish(ranks, Duration::from_secs(60));
    assert!(start.elapsed() < Duration::from_secs(15), "the death must be noticed at once:\n{}", report(&out));
    assert_eq!(out[2].code, None, "rank 2 was killed by a signal:\n{}", report(&out));
    for o in &out[..2] {
        assert_eq!(o.code, Some(1), "{}", report(&out));
        assert!(
            o.stderr.contains("rank 2 (") && o.stderr.contains("closed its connection during the exchange"),
            "{}",
            report(&out)
        );
    }
}

#[test]
fn a_peer_that_exits_after_bootstrap_fails_the_others_within_the_net_bound() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let short = [("NEURON_RT_CC_NET_TIMEOUT", "3".to_string())];
    let ranks = vec![
        spawn(0, 3, "ring", &root, &short, None),
        spawn(1, 3, "ring", &root, &short, None),
        spawn(2, 3, "exit-after-bootstrap", &root, &short, None),
    ];
    let out = finish(ranks, Duration::from_secs(60));
    assert_eq!(out[2].code, Some(3), "{}", report(&out));
    for o in &out[..2] {
        assert_eq!(o.code, Some(1), "{}", report(&out));
        assert!(
            o.stderr.contains("did not happen within 3 sec (the limit set by NEURON_RT_CC_NET_TIMEOUT)"),
            "{}",
            report(&out)
        );
        assert!(o.stderr.contains("CCOM WARN Timeout waiting for"), "no warning while waiting:\n{}", report(&out));
    }
}

#[test]
fn a_wrong_root_address_fails_within_the_bound() {
    if !fabric_here() {
        return;
    }
    let port = free_port();
    let root = format!("127.0.0.1:{port}");
    let short = [("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "2".to_string())];
    let out = finish(vec![spawn(1, 2, "ring", &root, &short, None)], Duration::from_secs(30));
    assert_eq!(out[0].code, Some(1), "{}", report(&out));
    let e = &out[0].stderr;
    assert!(e.contains(&format!("could not reach rank 0 at {root} (NEURON_RT_ROOT_COMM_ID) within 2 sec")), "{e}");
    assert!(e.contains(&format!("CCOM WARN Connect to {root} failed")), "{e}");
    // A malformed value is refused at once, naming the expected form.
    let out = finish(vec![spawn(1, 2, "ring", "localhost:48620", &[], None)], Duration::from_secs(30));
    assert_eq!(out[0].code, Some(1), "{}", report(&out));
    assert!(out[0].stderr.contains("Invalid NEURON_RT_ROOT_COMM_ID [localhost:48620]"), "{}", report(&out));
    assert!(out[0].stderr.contains("please use format: <ipv4>:<port> or [<ipv6>]:<port>"), "{}", report(&out));
}

#[test]
fn a_mismatched_signature_fails_both_ranks_naming_both_sides() {
    if !fabric_here() {
        return;
    }
    let root = format!("127.0.0.1:{}", free_port());
    let ranks = vec![spawn(0, 2, "ring", &root, &[], None), spawn(1, 2, "mismatch", &root, &[], None)];
    let out = finish(ranks, Duration::from_secs(60));
    for o in &out {
        assert_eq!(o.code, Some(1), "{}", report(&out));
        let e = &o.stderr;
        assert!(e.contains("mismatched collectives between the peers: replica group 0 has op signature"), "{e}");
        assert!(e.contains(&"aa".repeat(16)) && e.contains(&"bb".repeat(16)), "{e}");
        assert!(e.contains("on rank 0 (") && e.contains("on rank 1 ("), "{e}");
    }
}

/// Two network namespaces joined by a veth pair, each one a host with an
/// address of our own private range; removed again on drop.
struct TwoHosts {
    names: [String; 2],
}

impl TwoHosts {
    fn create() -> Result<TwoHosts, String> {
        let tag = std::process::id() % 10000;
        let names = [format!("nrtnet{tag}a"), format!("nrtnet{tag}b")];
        let hosts = TwoHosts { names: names.clone() };
        let (va, vb) = (format!("nv{tag}a"), format!("nv{tag}b"));
        let run = |args: &[&str]| -> Result<(), String> {
            let o = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
            if o.status.success() { Ok(()) } else { Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr))) }
        };
        run(&["netns", "add", &names[0]])?;
        run(&["netns", "add", &names[1]])?;
        run(&["link", "add", &va, "netns", &names[0], "type", "veth", "peer", "name", &vb, "netns", &names[1]])?;
        for (ns, dev, addr) in [(&names[0], &va, "10.213.77.1/30"), (&names[1], &vb, "10.213.77.2/30")] {
            run(&["-n", ns, "addr", "add", addr, "dev", dev])?;
            run(&["-n", ns, "link", "set", dev, "up"])?;
            run(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        // libfabric lists an interface only once its link is up.
        for (ns, dev) in [(&names[0], &va), (&names[1], &vb)] {
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
fn two_hosts_made_of_network_namespaces_exchange_over_libfabric() {
    if !fabric_here() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        nrt_test_support::skip!("network namespaces need root");
    }
    let hosts = match TwoHosts::create() {
        Ok(h) => h,
        Err(e) => nrt_test_support::skip!("cannot create network namespaces here ({e})"),
    };
    let tag = std::process::id() % 10000;
    let root = "10.213.77.1:62011";
    let ranks = (0..2u32)
        .map(|r| {
            let ns = hosts.names[r as usize].clone();
            let iface = format!("nv{tag}{}", if r == 0 { 'a' } else { 'b' });
            let wrap = ["ip", "netns", "exec", ns.as_str()];
            spawn(r, 2, "ring", root, &[("FI_TCP_IFACE", iface)], Some(&wrap))
        })
        .collect();
    let out = finish(ranks, Duration::from_secs(90));
    drop(hosts);
    assert!(out.iter().all(|o| o.code == Some(0)), "{}", report(&out));
}

/// The bandwidth of our libfabric transport between two processes on
/// loopback, against `fi_pingpong -p tcp` on the same loopback in the
/// same run (interleaved, median of 3). Prints the figures.
#[test]
#[ignore = "benchmark: cargo test -p nrt-net --release --test processes -- --ignored bandwidth --nocapture"]
fn bandwidth_against_fi_pingpong() {
    if !fabric_here() {
        return;
    }
    let size: usize = 1 << 20;
    let iters = 400;
    let mut ours = Vec::new();
    let mut ours_pp = Vec::new();
    let mut theirs = Vec::new();
    let run = |role: &str| -> f64 {
        let root = format!("127.0.0.1:{}", free_port());
        let env = [(CHUNK, size.to_string()), ("NRT_NET_TEST_ITERS", iters.to_string())];
        let ranks = (0..2).map(|r| spawn(r, 2, role, &root, &env, None)).collect();
        let out = finish(ranks, Duration::from_secs(120));
        assert!(out.iter().all(|o| o.code == Some(0)), "{}", report(&out));
        let line = out[0].stdout.lines().find(|l| l.contains("STREAM bytes=")).expect("a STREAM line").to_string();
        line.rsplit("MB/s=").next().unwrap().parse().unwrap()
    };
    for _ in 0..3 {
        ours.push(run("stream"));
        ours_pp.push(run("pingpong"));
        theirs.push(fi_pingpong(size, iters));
    }
    ours.sort_by(f64::total_cmp);
    ours_pp.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    let (o, p, t) = (ours[1], ours_pp[1], theirs[1]);
    println!("nrt-net libfabric tcp stream (16 in flight), 1 MiB x {iters}: median {o:.1} MB/s (runs {ours:?})");
    println!("nrt-net libfabric tcp ping-pong, 1 MiB x {iters}: median {p:.1} MB/s (runs {ours_pp:?})");
    println!("fi_pingpong -p tcp -e rdm -m tagged, 1 MiB x {iters}: median {t:.1} MB/s (runs {theirs:?})");
    println!("ratio stream / fi_pingpong {:.2}, ping-pong / fi_pingpong {:.2}", o / t, p / t);
}

/// Runs `fi_pingpong` server and client on loopback; returns its MB/s.
fn fi_pingpong(size: usize, iters: usize) -> f64 {
    let port = free_port().to_string();
    let (iters, size) = (iters.to_string(), size.to_string());
    let args = ["-p", "tcp", "-e", "rdm", "-m", "tagged", "-I", &iters, "-S", &size];
    let server =
        Command::new("fi_pingpong").args(args).args(["-B", &port]).env("FI_TCP_IFACE", "lo").stdout(Stdio::piped()).spawn();
    let Ok(server) = server else {
        eprintln!("fi_pingpong not installed (apt-get install libfabric-bin)");
        return f64::NAN;
    };
    std::thread::sleep(Duration::from_millis(300));
    let client =
        Command::new("fi_pingpong").args(args).args(["-P", &port, "127.0.0.1"]).env("FI_TCP_IFACE", "lo").output().unwrap();
    let _ = server.wait_with_output();
    let text = String::from_utf8_lossy(&client.stdout).into_owned();
    // A header line names the columns (bytes #sent #ack total time MB/sec
    // usec/xfer Mxfers/sec); the row under it has the figures.
    let lines: Vec<&str> = text.lines().collect();
    let h = lines.iter().position(|l| l.contains("MB/sec")).unwrap_or_else(|| panic!("fi_pingpong printed:\n{text}"));
    let col = lines[h].split_whitespace().position(|c| c == "MB/sec").unwrap();
    let row = lines.get(h + 1).unwrap_or_else(|| panic!("fi_pingpong printed:\n{text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    cols[col].parse().unwrap_or_else(|_| panic!("fi_pingpong row: {row}"))
}
