//! Posting and testing transfers allocate nothing on the Rust heap once
//! a connection is set up (the proxy thread that will drive collectives
//! runs this loop for every step): a counting allocator sees no
//! allocation on the posting thread across many transfers, in-process
//! and over libfabric (whose own C allocations are its business).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::net_bound;
use nrt_net::fabric::{FabricTransport, available};
use nrt_net::limits::stderr_sink;
use nrt_net::{InProcTransport, RecvComm, SendComm, Transport};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards every call unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

/// `rounds` exchanges of `buf`'s bytes from `s` to `r`, 4 in flight,
/// polling both ends from this thread; returns the allocations made.
fn exchange(s: &mut dyn SendComm, r: &mut dyn RecvComm, rounds: usize) -> u64 {
    let src = [0x5au8; 4096];
    let mut dst = [[0u8; 4096]; 4];
    let start = std::time::Instant::now();
    let before = allocations();
    for _ in 0..rounds {
        let mut sq = [None; 4];
        let mut rq = [None; 4];
        for k in 0..4 {
            // SAFETY: the buffers outlive the requests, tested to completion below.
            rq[k] = Some(unsafe { r.irecv(dst[k].as_mut_ptr(), 4096, None).unwrap() });
            sq[k] = Some(unsafe { s.isend(src.as_ptr(), 4096, None).unwrap() });
        }
        while sq.iter().any(Option::is_some) || rq.iter().any(Option::is_some) {
            for q in sq.iter_mut() {
                if let Some(req) = *q
                    && s.test(req).unwrap().is_some()
                {
                    *q = None;
                }
            }
            for q in rq.iter_mut() {
                if let Some(req) = *q
                    && r.test(req).unwrap().is_some()
                {
                    *q = None;
                }
            }
            assert!(start.elapsed().as_secs() < 60, "transfers did not complete");
        }
    }
    let made = allocations() - before;
    assert!(dst.iter().all(|d| d.iter().all(|b| *b == 0x5a)));
    made
}

#[test]
fn the_counter_counts() {
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 10]);
    assert!(allocations() > before, "the counting allocator must see this thread's allocations");
    drop(v);
}

#[test]
fn in_process_transfers_allocate_nothing() {
    let t = InProcTransport::new();
    let (h, mut l) = t.listen().unwrap();
    let mut s = t.connect(&h).unwrap();
    let mut r = l.accept(net_bound(10)).unwrap();
    exchange(&mut *s, &mut *r, 5);
    assert_eq!(exchange(&mut *s, &mut *r, 200), 0);
}

#[test]
fn libfabric_transfers_allocate_nothing() {
    if let Err(e) = available() {
        nrt_test_support::skip!("{e}");
    }
    let a = FabricTransport::open_provider("tcp", Some("lo"), stderr_sink()).unwrap();
    let b = FabricTransport::open_provider("tcp", Some("lo"), stderr_sink()).unwrap();
    let (h, mut l) = b.listen().unwrap();
    // Set up with a second thread driving b (as its own process would),
    // then run the exchange from this thread alone, polling both ends.
    let setup = std::thread::spawn(move || {
        let mut r = l.accept(net_bound(20)).unwrap();
        let mut one = [0u8; 1];
        nrt_net::transport::recv(&mut *r, &mut one, net_bound(20), &stderr_sink()).unwrap();
        (r, b)
    });
    let mut s = a.connect(&h).unwrap();
    nrt_net::transport::send(&mut *s, &[1], net_bound(20), &stderr_sink()).unwrap();
    let (mut r, _b) = setup.join().unwrap();
    exchange(&mut *s, &mut *r, 5);
    assert_eq!(exchange(&mut *s, &mut *r, 200), 0);
}
