//! The rendezvous with ranks as threads of this process (the same TCP
//! code path as ranks in separate processes).

use super::*;
use crate::limits::{BOOTSTRAP_TIMEOUT_VAR, stderr_sink};
use std::sync::{Arc, Mutex};
use std::thread;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn new() -> (Log, WarnSink) {
        let v = Arc::new(Mutex::new(Vec::new()));
        let v2 = v.clone();
        (Log(v), Arc::new(move |m: &str| v2.lock().unwrap().push(m.to_string())))
    }
    fn any(&self, needle: &str) -> bool {
        self.0.lock().unwrap().iter().any(|l| l.contains(needle))
    }
}

fn cfg(port: u16, ms: u64, sink: WarnSink) -> BootstrapConfig {
    BootstrapConfig {
        root: format!("127.0.0.1:{port}").parse().unwrap(),
        bound: Bound::new(Duration::from_millis(ms), BOOTSTRAP_TIMEOUT_VAR),
        sink,
    }
}

fn sig(group: u32, b: u8) -> Signature {
    Signature { group, digest: [b; 16] }
}

fn join(rank: u32, n: u32, sigs: Vec<Signature>) -> Joining {
    Joining { rank, world_size: n, endpoint: vec![rank as u8; 8 + rank as usize], signatures: sigs }
}

/// Runs `ranks` (rank numbers) as threads; returns each one's outcome.
fn run(port: u16, ms: u64, sink: &WarnSink, ranks: Vec<Joining>) -> Vec<NetResult<World>> {
    let handles: Vec<_> = ranks
        .into_iter()
        .map(|j| {
            let c = cfg(port, ms, sink.clone());
            thread::spawn(move || rendezvous(&c, j))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn four_ranks_meet_and_share_the_table() {
    let (_log, sink) = Log::new();
    let out = run(free_port(), 20_000, &sink, (0..4).map(|r| join(r, 4, vec![sig(0, 1), sig(1, 2)])).collect());
    let worlds: Vec<World> = out.into_iter().map(|r| r.unwrap()).collect();
    for (r, w) in worlds.iter().enumerate() {
        assert_eq!(w.rank, r as u32);
        assert_eq!(w.size(), 4);
        assert_eq!(w.endpoints, worlds[0].endpoints);
        for (k, ep) in w.endpoints.iter().enumerate() {
            assert_eq!(ep, &vec![k as u8; 8 + k]);
        }
        assert_eq!(w.members[0].pid, std::process::id());
    }
}

#[test]
fn a_missing_rank_fails_every_rank_naming_it_after_warnings() {
    let (log, sink) = Log::new();
    let out = run(free_port(), 800, &sink, vec![join(0, 3, vec![]), join(1, 3, vec![])]);
    let root = out[0].as_ref().unwrap_err().to_string();
    assert!(root.contains("rank 2 never arrived") && root.contains("NEURON_RT_CC_BOOTSTRAP_TIMEOUT"), "{root}");
    assert!(root.contains("arrived: 0, 1"), "{root}");
    let leaf = out[1].as_ref().unwrap_err().to_string();
    assert!(leaf.contains("rank 0 stopped the exchange") && leaf.contains("rank 2 never arrived"), "{leaf}");
    assert!(log.any("Timeout waiting for incoming connection at 127.0.0.1:"), "no libnrt-style warning");
    assert!(log.any("missing 2"));
}

#[test]
fn a_rank_that_dies_mid_exchange_is_named_on_every_rank() {
    let (_log, sink) = Log::new();
    let port = free_port();
    let c = cfg(port, 20_000, sink.clone());
    let root = thread::spawn(move || rendezvous(&c, join(0, 4, vec![])));
    let c1 = cfg(port, 20_000, sink.clone());
    let one = thread::spawn(move || rendezvous(&c1, join(1, 4, vec![])));
    // "Rank 2" says hello, then its process goes away (the socket closes);
    // rank 3 never comes. Nobody may wait for the full 20 s.
    let start = std::time::Instant::now();
    let mut s = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => break s,
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    };
    let h = Hello { rank: 2, world_size: 4, member: Member::this_process(), endpoint: vec![2], signatures: vec![] };
    s.write_all(&Msg::Hello(h).encode()).unwrap();
    thread::sleep(Duration::from_millis(100));
    drop(s);
    let r0 = root.join().unwrap().unwrap_err().to_string();
    let r1 = one.join().unwrap().unwrap_err().to_string();
    assert!(start.elapsed() < Duration::from_secs(15), "a dead rank must not cost the whole bound");
    assert!(r0.contains("rank 2 (") && r0.contains("closed its connection during the exchange"), "{r0}");
    assert!(r1.contains("rank 0 stopped the exchange") && r1.contains("rank 2"), "{r1}");
}

#[test]
fn a_dead_root_fails_the_others() {
    let (_log, sink) = Log::new();
    let port = free_port();
    // A "root" that accepts, reads the hello and dies.
    let l = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let fake = thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut b = [0u8; 64];
        let _ = s.read(&mut b);
    });
    let e = rendezvous(&cfg(port, 20_000, sink), join(1, 2, vec![])).unwrap_err().to_string();
    fake.join().unwrap();
    assert!(e.contains("rank 0 at 127.0.0.1:") && e.contains("closed the connection during the exchange"), "{e}");
}

#[test]
fn mismatched_signatures_and_world_sizes_name_both_sides() {
    let (_log, sink) = Log::new();
    let out = run(free_port(), 20_000, &sink, vec![join(0, 2, vec![sig(5, 1)]), join(1, 2, vec![sig(5, 2)])]);
    for r in &out {
        let e = r.as_ref().unwrap_err();
        assert!(matches!(e, NetError::Mismatch(_)), "{e}");
        let e = e.to_string();
        assert!(e.contains("mismatched collectives between the peers: replica group 5"), "{e}");
        assert!(e.contains(&"01".repeat(16)) && e.contains(&"02".repeat(16)), "{e}");
        assert!(e.contains("on rank 0 (") && e.contains("on rank 1 ("), "{e}");
    }
    let out = run(free_port(), 20_000, &sink, vec![join(0, 2, vec![sig(1, 1)]), join(1, 2, vec![])]);
    let e = out[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("rank 0 (") && e.contains("has replica group 1 but rank 1 (") && e.contains("does not"), "{e}");
    // World size: rank 1 thinks the world has 3 ranks.
    let out = run(free_port(), 20_000, &sink, vec![join(0, 2, vec![]), join(1, 3, vec![])]);
    let e = out[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("world size mismatch: rank 0 (") && e.contains("has 2 ranks but rank 1 (") && e.contains("has 3"), "{e}");
}

#[test]
fn duplicate_ranks_are_refused() {
    let (_log, sink) = Log::new();
    let out = run(free_port(), 5_000, &sink, vec![join(0, 3, vec![]), join(1, 3, vec![]), join(1, 3, vec![])]);
    let e = out[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("two processes claim rank 1"), "{e}");
}

#[test]
fn wrong_root_addresses_fail_within_the_bound() {
    let (log, sink) = Log::new();
    // Nobody listens there.
    let port = free_port();
    let e = rendezvous(&cfg(port, 600, sink.clone()), join(1, 2, vec![])).unwrap_err().to_string();
    assert!(e.contains(&format!("could not reach rank 0 at 127.0.0.1:{port} (NEURON_RT_ROOT_COMM_ID)")), "{e}");
    assert!(log.any(&format!("Connect to 127.0.0.1:{port} failed")), "no retry warning");
    // Rank 0 given an address that is not its own (TEST-NET-1).
    let c = BootstrapConfig { root: "192.0.2.1:62001".parse().unwrap(), ..cfg(port, 600, sink) };
    let e = rendezvous(&c, join(0, 2, vec![])).unwrap_err().to_string();
    assert!(e.contains("rank 0 cannot listen at 192.0.2.1:62001 (NEURON_RT_ROOT_COMM_ID)"), "{e}");
    // A rank outside the world.
    let e = rendezvous(&cfg(port, 600, stderr_sink()), join(2, 2, vec![])).unwrap_err().to_string();
    assert!(e.contains("outside a world of 2"), "{e}");
}

#[test]
fn ranks_meet_at_an_ipv6_root() {
    let Ok(l) = std::net::TcpListener::bind("[::1]:0") else {
        nrt_test_support::skip!("no IPv6 loopback here");
    };
    let port = l.local_addr().unwrap().port();
    drop(l);
    let (_log, sink) = Log::new();
    let handles: Vec<_> = (0..2)
        .map(|r| {
            let c = BootstrapConfig { root: format!("[::1]:{port}").parse().unwrap(), ..cfg(port, 20_000, sink.clone()) };
            thread::spawn(move || rendezvous(&c, join(r, 2, vec![sig(0, 9)])))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap().size(), 2);
    }
}
