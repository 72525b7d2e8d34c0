//! Ranks as threads of one process: they meet through the bootstrap (on
//! loopback TCP, the same code as across processes) and exchange data
//! through the in-process transport.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{free_port, net_bound, ring_allgather};
use nrt_net::bootstrap::{BootstrapConfig, Joining, Signature, rendezvous};
use nrt_net::limits::{BOOTSTRAP_TIMEOUT_VAR, Bound, stderr_sink};
use nrt_net::{InProcTransport, Transport};

fn world_of(n: u32, chunk: usize) {
    let t = InProcTransport::new();
    let port = free_port();
    let handles: Vec<_> = (0..n)
        .map(|rank| {
            let t = t.clone();
            thread::spawn(move || {
                let sink = stderr_sink();
                let (h, mut listener) = t.listen().unwrap();
                let cfg = BootstrapConfig {
                    root: format!("127.0.0.1:{port}").parse().unwrap(),
                    bound: Bound::new(Duration::from_secs(30), BOOTSTRAP_TIMEOUT_VAR),
                    sink: sink.clone(),
                };
                let me = Joining {
                    rank,
                    world_size: n,
                    endpoint: h.as_bytes().to_vec(),
                    signatures: vec![Signature { group: 0, digest: [n as u8; 16] }],
                };
                let world = rendezvous(&cfg, me).unwrap();
                assert_eq!(world.size(), n);
                ring_allgather(&t, &mut *listener, &world, chunk, net_bound(30), &sink).unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn two_ranks_in_process_exchange_data() {
    world_of(2, 64 << 10);
}

#[test]
fn four_ranks_in_process_exchange_data() {
    world_of(4, 100_003);
}

#[test]
fn eight_ranks_in_process_exchange_data() {
    world_of(8, 1 << 16);
}

#[test]
fn a_rank_that_leaves_fails_its_neighbour_not_hangs_it() {
    let t = InProcTransport::new();
    let (h, mut l) = t.listen().unwrap();
    let s = t.connect(&h).unwrap();
    let mut r = l.accept(net_bound(5)).unwrap();
    let sink: nrt_net::WarnSink = Arc::new(|_: &str| {});
    let waiter = thread::spawn(move || {
        let mut buf = [0u8; 16];
        nrt_net::transport::recv(&mut *r, &mut buf, net_bound(30), &sink)
    });
    thread::sleep(Duration::from_millis(50));
    drop(s);
    let e = waiter.join().unwrap().unwrap_err();
    assert!(matches!(e, nrt_net::NetError::PeerClosed { .. }), "{e}");
}
