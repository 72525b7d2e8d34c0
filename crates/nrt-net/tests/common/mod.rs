//! What the integration tests share: a ring all-gather of byte chunks
//! over any transport (each rank sends to the next, receives from the
//! previous, n-1 steps), and the pattern each rank's chunk carries.

#![allow(dead_code)]

use std::time::Duration;

use nrt_net::bootstrap::World;
use nrt_net::limits::{Bound, NET_TIMEOUT_VAR, WarnSink};
use nrt_net::transport::wait;
use nrt_net::{Handle, Listener, NetResult, Transport};

/// The byte at `i` of rank `r`'s chunk.
pub fn pattern(r: u32, i: usize) -> u8 {
    (i as u32).wrapping_mul(31).wrapping_add(r.wrapping_mul(97)).wrapping_add(i as u32 >> 8) as u8
}

/// Runs a ring all-gather of `chunk`-byte chunks and checks every chunk.
/// `listener` is the one whose handle this rank gave the bootstrap.
pub fn ring_allgather(
    t: &dyn Transport,
    listener: &mut dyn Listener,
    world: &World,
    chunk: usize,
    bound: Bound,
    sink: &WarnSink,
) -> NetResult<()> {
    let n = world.size() as usize;
    let r = world.rank as usize;
    let next = Handle::from_bytes(&world.endpoints[(r + 1) % n])?;
    let mut send = t.connect(&next)?;
    let mut recv = listener.accept(bound)?;
    let mut buf = vec![0u8; n * chunk];
    for i in 0..chunk {
        buf[r * chunk + i] = pattern(r as u32, i);
    }
    let base = buf.as_mut_ptr();
    for s in 0..n - 1 {
        let out = (r + n - s) % n;
        let inc = (r + n - s - 1) % n;
        // SAFETY: the two chunks are disjoint parts of `buf`, which lives
        // until both requests are done (waited below; an error returns
        // only after the comm drops, which withdraws the requests).
        let rq = unsafe { recv.irecv(base.add(inc * chunk), chunk, None)? };
        let sq = unsafe { send.isend(base.add(out * chunk), chunk, None)? };
        let peer = recv.peer();
        let got = wait(|| recv.test(rq), bound, sink, &|| format!("chunk {inc} (step {s}) from {peer}"))?;
        if got != chunk {
            return Err(nrt_net::NetError::Invalid(format!("chunk {inc}: {got} bytes, expected {chunk}")));
        }
        let speer = send.peer();
        wait(|| send.test(sq), bound, sink, &|| format!("the send of chunk {out} (step {s}) to {speer}"))?;
    }
    recv.flush()?;
    for k in 0..n {
        for i in 0..chunk {
            let b = buf[k * chunk + i];
            if b != pattern(k as u32, i) {
                return Err(nrt_net::NetError::Invalid(format!(
                    "rank {r}: byte {i} of rank {k}'s chunk is {b}, expected {}",
                    pattern(k as u32, i)
                )));
            }
        }
    }
    Ok(())
}

/// A bound for tests.
pub fn net_bound(secs: u64) -> Bound {
    Bound::new(Duration::from_secs(secs), NET_TIMEOUT_VAR)
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
