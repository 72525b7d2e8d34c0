//! The in-process transport: ranks are threads (logical cores) of one
//! process, and a transfer is one memory copy from the sender's buffer
//! into the receiver's, made by whichever side posts second, as a
//! rendezvous network would. No bytes are staged in between.
//!
//! Clones of one [`InProcTransport`] form one fabric; handles name it, so
//! a handle from another fabric or another process is refused.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::error::{NetError, NetResult};
use crate::limits::{Bound, WarnSink, Waiting, stderr_sink};
use crate::slots::Slots;
use crate::transport::{
    HANDLE_BYTES, Handle, Listener, MAX_REQUESTS, RecvComm, Registration, Request, SendComm, Transport,
};

const MAGIC: &[u8; 8] = b"NRTINPR1";
static NEXT_FABRIC: AtomicU64 = AtomicU64::new(1);

/// The in-process fabric. Cheap to clone; clones share the fabric.
#[derive(Clone)]
pub struct InProcTransport {
    fabric: Arc<Fabric>,
}

struct Fabric {
    id: u64,
    next_listen: AtomicU32,
    listeners: Mutex<HashMap<u32, Arc<Backlog>>>,
    sink: WarnSink,
}

/// Connections waiting for `accept`.
struct Backlog {
    queue: Mutex<(VecDeque<Arc<Channel>>, bool)>,
    arrived: Condvar,
}

impl Default for InProcTransport {
    fn default() -> Self {
        InProcTransport::new()
    }
}

impl InProcTransport {
    /// A new fabric whose waits warn on stderr.
    pub fn new() -> InProcTransport {
        InProcTransport::with_sink(stderr_sink())
    }

    /// A new fabric whose waits warn through `sink`.
    pub fn with_sink(sink: WarnSink) -> InProcTransport {
        InProcTransport {
            fabric: Arc::new(Fabric {
                id: NEXT_FABRIC.fetch_add(1, Ordering::Relaxed),
                next_listen: AtomicU32::new(1),
                listeners: Mutex::new(HashMap::new()),
                sink,
            }),
        }
    }

    fn parse(&self, h: &Handle) -> NetResult<u32> {
        let b = h.as_bytes();
        if &b[..8] != MAGIC {
            return Err(NetError::Invalid("the handle is not an in-process transport handle".into()));
        }
        let fabric = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
        let pid = u32::from_le_bytes(b[16..20].try_into().expect("4 bytes"));
        if pid != std::process::id() || fabric != self.fabric.id {
            return Err(NetError::Invalid(format!(
                "the handle names in-process fabric {fabric} of process {pid}; this is fabric {} of process {} \
                 (ranks in other processes need the libfabric transport)",
                self.fabric.id,
                std::process::id()
            )));
        }
        Ok(u32::from_le_bytes(b[20..24].try_into().expect("4 bytes")))
    }
}

impl Transport for InProcTransport {
    fn name(&self) -> String {
        "inproc".into()
    }

    fn listen(&self) -> NetResult<(Handle, Box<dyn Listener>)> {
        let id = self.fabric.next_listen.fetch_add(1, Ordering::Relaxed);
        let backlog = Arc::new(Backlog { queue: Mutex::new((VecDeque::new(), false)), arrived: Condvar::new() });
        lock(&self.fabric.listeners).insert(id, backlog.clone());
        let mut h = Handle::zeroed();
        let b = h.bytes_mut();
        b[..8].copy_from_slice(MAGIC);
        b[8..16].copy_from_slice(&self.fabric.id.to_le_bytes());
        b[16..20].copy_from_slice(&std::process::id().to_le_bytes());
        b[20..24].copy_from_slice(&id.to_le_bytes());
        const { assert!(24 <= HANDLE_BYTES) };
        Ok((h, Box::new(InProcListener { id, backlog, fabric: self.fabric.clone() })))
    }

    fn connect(&self, handle: &Handle) -> NetResult<Box<dyn SendComm>> {
        let id = self.parse(handle)?;
        let backlog = lock(&self.fabric.listeners).get(&id).cloned().ok_or_else(|| {
            NetError::Invalid(format!("in-process listener {id} is closed or never existed"))
        })?;
        let chan = Arc::new(Channel::new(self.fabric.id, id));
        {
            let mut q = lock(&backlog.queue);
            if q.1 {
                return Err(NetError::PeerClosed { what: "connect".into(), peer: format!("in-process listener {id}") });
            }
            q.0.push_back(chan.clone());
        }
        backlog.arrived.notify_all();
        Ok(Box::new(InProcSend { chan }))
    }

    unsafe fn register(&self, base: *const u8, len: usize) -> NetResult<Registration> {
        // Plain memory needs no registration; the record still checks that
        // transfers stay inside the range.
        Ok(Registration { transport: self.fabric.id, base: base as usize, len, desc: std::ptr::null_mut(), _owner: None })
    }
}

struct InProcListener {
    id: u32,
    backlog: Arc<Backlog>,
    fabric: Arc<Fabric>,
}

impl Listener for InProcListener {
    fn accept(&mut self, bound: Bound) -> NetResult<Box<dyn RecvComm>> {
        let mut w = Waiting::start(bound, &self.fabric.sink);
        let mut q = lock(&self.backlog.queue);
        loop {
            if let Some(chan) = q.0.pop_front() {
                return Ok(Box::new(InProcRecv { chan }));
            }
            if w.expired() {
                return Err(w.timeout(format!("a connection to in-process listener {}", self.id)));
            }
            let step = w.remaining().min(bound.warn_period());
            q = self.backlog.arrived.wait_timeout(q, step).unwrap_or_else(|p| p.into_inner()).0;
            w.tick(|| format!("Timeout waiting for incoming connection on in-process listener {}", self.id));
        }
    }
}

impl Drop for InProcListener {
    fn drop(&mut self) {
        lock(&self.fabric.listeners).remove(&self.id);
        let mut q = lock(&self.backlog.queue);
        q.1 = true;
        for chan in q.0.drain(..) {
            chan.close_side(Side::Recv);
        }
    }
}

/// One connection: the posted transfers of both ends, matched in order.
struct Channel {
    fabric: u64,
    listen_id: u32,
    state: Mutex<ChanState>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Send,
    Recv,
}

enum Slot {
    Posted { ptr: usize, len: usize },
    Done(usize),
    Failed(NetError),
}

struct ChanState {
    sends: Slots<Slot>,
    recvs: Slots<Slot>,
    send_queue: VecDeque<Request>,
    recv_queue: VecDeque<Request>,
    send_open: bool,
    recv_open: bool,
}

impl Channel {
    fn new(fabric: u64, listen_id: u32) -> Channel {
        Channel {
            fabric,
            listen_id,
            state: Mutex::new(ChanState {
                sends: Slots::new(),
                recvs: Slots::new(),
                send_queue: VecDeque::with_capacity(MAX_REQUESTS),
                recv_queue: VecDeque::with_capacity(MAX_REQUESTS),
                send_open: true,
                recv_open: true,
            }),
        }
    }

    fn peer(&self, side: Side) -> String {
        match side {
            Side::Send => format!("the receiver of in-process listener {}", self.listen_id),
            Side::Recv => format!("the sender to in-process listener {}", self.listen_id),
        }
    }

    /// Posts one side's transfer and, when the other side has one waiting,
    /// copies and completes both.
    fn post(&self, side: Side, ptr: usize, len: usize) -> NetResult<Request> {
        let mut st = lock(&self.state);
        let other_open = match side {
            Side::Send => st.recv_open,
            Side::Recv => st.send_open || !st.send_queue.is_empty(),
        };
        if !other_open {
            return Err(NetError::PeerClosed {
                what: format!("posting a {} of {len} bytes", if side == Side::Send { "send" } else { "receive" }),
                peer: self.peer(side),
            });
        }
        let req = match side {
            Side::Send => st.sends.insert(Slot::Posted { ptr, len })?,
            Side::Recv => st.recvs.insert(Slot::Posted { ptr, len })?,
        };
        match side {
            Side::Send => st.send_queue.push_back(req),
            Side::Recv => st.recv_queue.push_back(req),
        }
        st.match_pending();
        Ok(req)
    }

    fn test(&self, side: Side, req: Request) -> NetResult<Option<usize>> {
        let mut st = lock(&self.state);
        let slots = st.slots(side);
        match slots.get_mut(req)? {
            Slot::Posted { .. } => Ok(None),
            Slot::Done(n) => {
                let n = *n;
                slots.remove(req)?;
                Ok(Some(n))
            }
            Slot::Failed(_) => match slots.remove(req)? {
                Slot::Failed(e) => Err(e),
                _ => unreachable!("checked Failed"),
            },
        }
    }

    fn cancel(&self, side: Side, req: Request) -> NetResult<()> {
        let mut st = lock(&self.state);
        st.slots(side).remove(req)?;
        st.queue(side).retain(|r| *r != req);
        Ok(())
    }

    /// One end went away: its posted transfers are withdrawn (no one will
    /// touch those buffers again: copies happen under this lock) and the
    /// other end's pending transfers fail.
    fn close_side(&self, side: Side) {
        let mut st = lock(&self.state);
        match side {
            Side::Send => st.send_open = false,
            Side::Recv => st.recv_open = false,
        }
        st.queue(side).clear();
        let own: Vec<u16> = st.slots(side).occupied().map(|(i, _)| i).collect();
        for i in own {
            if let Some(s) = st.slots(side).by_index(i) {
                *s = Slot::Failed(NetError::Invalid("comm closed".into()));
            }
        }
        let other = if side == Side::Send { Side::Recv } else { Side::Send };
        let peer = self.peer(other);
        st.queue(other).clear();
        for (_, s) in st.slots(other).occupied() {
            if let Slot::Posted { len, .. } = s {
                let what = format!("a transfer of {len} bytes");
                *s = Slot::Failed(NetError::PeerClosed { what, peer: peer.clone() });
            }
        }
    }
}

impl ChanState {
    fn slots(&mut self, side: Side) -> &mut Slots<Slot> {
        match side {
            Side::Send => &mut self.sends,
            Side::Recv => &mut self.recvs,
        }
    }

    fn queue(&mut self, side: Side) -> &mut VecDeque<Request> {
        match side {
            Side::Send => &mut self.send_queue,
            Side::Recv => &mut self.recv_queue,
        }
    }

    fn match_pending(&mut self) {
        while let (Some(&s), Some(&r)) = (self.send_queue.front(), self.recv_queue.front()) {
            self.send_queue.pop_front();
            self.recv_queue.pop_front();
            let (sp, sl) = match self.sends.get_mut(s) {
                Ok(Slot::Posted { ptr, len }) => (*ptr, *len),
                _ => continue,
            };
            let (rp, cap) = match self.recvs.get_mut(r) {
                Ok(Slot::Posted { ptr, len }) => (*ptr, *len),
                _ => continue,
            };
            if sl > cap {
                *self.recvs.get_mut(r).expect("posted") = Slot::Failed(NetError::Invalid(format!(
                    "a message of {sl} bytes arrived for a receive of {cap} bytes (truncated)"
                )));
            } else {
                // SAFETY: both buffers are posted and, by the isend/irecv
                // contracts, valid and untouched by their owners until the
                // requests complete; the copy runs under the channel lock,
                // which cancel/close also take before withdrawing buffers.
                unsafe { std::ptr::copy_nonoverlapping(sp as *const u8, rp as *mut u8, sl) };
                *self.recvs.get_mut(r).expect("posted") = Slot::Done(sl);
            }
            *self.sends.get_mut(s).expect("posted") = Slot::Done(sl);
        }
    }
}

struct InProcSend {
    chan: Arc<Channel>,
}

struct InProcRecv {
    chan: Arc<Channel>,
}

impl SendComm for InProcSend {
    fn peer(&self) -> String {
        self.chan.peer(Side::Send)
    }
    unsafe fn isend(&mut self, buf: *const u8, len: usize, reg: Option<&Registration>) -> NetResult<Request> {
        if let Some(r) = reg {
            r.desc_for(self.chan.fabric, buf as usize, len)?;
        }
        self.chan.post(Side::Send, buf as usize, len)
    }
    fn test(&mut self, req: Request) -> NetResult<Option<usize>> {
        self.chan.test(Side::Send, req)
    }
    fn cancel(&mut self, req: Request) -> NetResult<()> {
        self.chan.cancel(Side::Send, req)
    }
}

impl Drop for InProcSend {
    fn drop(&mut self) {
        self.chan.close_side(Side::Send);
    }
}

impl RecvComm for InProcRecv {
    fn peer(&self) -> String {
        self.chan.peer(Side::Recv)
    }
    unsafe fn irecv(&mut self, buf: *mut u8, cap: usize, reg: Option<&Registration>) -> NetResult<Request> {
        if let Some(r) = reg {
            r.desc_for(self.chan.fabric, buf as usize, cap)?;
        }
        self.chan.post(Side::Recv, buf as usize, cap)
    }
    fn test(&mut self, req: Request) -> NetResult<Option<usize>> {
        self.chan.test(Side::Recv, req)
    }
    fn cancel(&mut self, req: Request) -> NetResult<()> {
        self.chan.cancel(Side::Recv, req)
    }
    fn flush(&mut self) -> NetResult<()> {
        std::sync::atomic::fence(Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for InProcRecv {
    fn drop(&mut self) {
        self.chan.close_side(Side::Recv);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{recv, send};
    use std::time::Duration;

    fn bound(ms: u64) -> Bound {
        Bound::new(Duration::from_millis(ms), "NEURON_RT_CC_NET_TIMEOUT")
    }

    #[test]
    fn messages_arrive_in_order_whoever_posts_first() {
        let t = InProcTransport::new();
        let (h, mut l) = t.listen().unwrap();
        let mut s = t.connect(&h).unwrap();
        let mut r = l.accept(bound(1000)).unwrap();
        let sink = stderr_sink();
        // Sender first.
        send(&mut *s, b"first", bound(10), &sink).unwrap_err(); // no receiver yet: times out, cancelled
        let a = [1u8, 2, 3];
        let req = unsafe { s.isend(a.as_ptr(), 3, None).unwrap() };
        let mut buf = [0u8; 8];
        assert_eq!(recv(&mut *r, &mut buf, bound(1000), &sink).unwrap(), 3);
        assert_eq!(&buf[..3], &[1, 2, 3]);
        assert_eq!(s.test(req).unwrap(), Some(3));
        // Receiver first.
        let mut buf2 = [0u8; 4];
        let rr = unsafe { r.irecv(buf2.as_mut_ptr(), 4, None).unwrap() };
        assert_eq!(r.test(rr).unwrap(), None);
        send(&mut *s, b"abcd", bound(1000), &sink).unwrap();
        assert_eq!(r.test(rr).unwrap(), Some(4));
        assert_eq!(&buf2, b"abcd");
        r.flush().unwrap();
    }

    #[test]
    fn truncation_and_closed_peer_are_errors() {
        let t = InProcTransport::new();
        let sink = stderr_sink();
        let (h, mut l) = t.listen().unwrap();
        let mut s = t.connect(&h).unwrap();
        let mut r = l.accept(bound(1000)).unwrap();
        let big = [0u8; 16];
        let sreq = unsafe { s.isend(big.as_ptr(), 16, None).unwrap() };
        let mut small = [0u8; 4];
        let e = recv(&mut *r, &mut small, bound(1000), &sink).unwrap_err().to_string();
        assert!(e.contains("16 bytes arrived for a receive of 4"), "{e}");
        assert_eq!(s.test(sreq).unwrap(), Some(16));
        let mut buf = [0u8; 4];
        let rreq = unsafe { r.irecv(buf.as_mut_ptr(), 4, None).unwrap() };
        drop(s);
        let e = r.test(rreq).unwrap_err();
        assert!(matches!(e, NetError::PeerClosed { .. }), "{e}");
    }

    #[test]
    fn accept_is_bounded_and_handles_are_checked() {
        let t = InProcTransport::new();
        let (h, mut l) = t.listen().unwrap();
        let e = l.accept(bound(50)).err().unwrap().to_string();
        assert!(e.contains("a connection to in-process listener") && e.contains("NEURON_RT_CC_NET_TIMEOUT"), "{e}");
        let other = InProcTransport::new();
        let e = other.connect(&h).err().unwrap().to_string();
        assert!(e.contains("libfabric transport"), "{e}");
        drop(l);
        assert!(t.connect(&h).is_err());
    }
}
