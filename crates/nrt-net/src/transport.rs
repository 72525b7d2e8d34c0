//! The transport interface, shaped like NCCL's net plugin.
//!
//! That plugin interface is the seam between libnrt's collectives library
//! and its network (libfabric/EFA), and the surface `nrt_async_sendrecv_*`
//! sits on, so the runtime talks to the network through the same verbs:
//!
//! * [`Transport::listen`] gives an opaque [`Handle`] (to pass to the peer
//!   out of band, through the bootstrap) and a [`Listener`];
//! * the peer calls [`Transport::connect`] with that handle and gets a
//!   [`SendComm`] at once; the listener's [`Listener::accept`] gives the
//!   matching [`RecvComm`];
//! * [`SendComm::isend`] / [`RecvComm::irecv`] post a transfer and return a
//!   [`Request`] at once; `test` polls it; [`RecvComm::flush`] makes
//!   received bytes visible; [`Transport::register`] registers memory.
//!
//! Messages on one connection arrive in the order they were sent and match
//! receives in the order they were posted. A comm holds at most
//! [`MAX_REQUESTS`] requests in flight (NCCL's Neuron net limit); posting
//! and testing do not allocate.
//!
//! Buffers are raw pointers, as in the plugin: a posted buffer must stay
//! valid (and, for a receive, untouched) until `test` reports the request
//! done or failed, or until [`SendComm::cancel`]/[`RecvComm::cancel`] or
//! dropping the comm returns. Those return only once the transport no
//! longer touches the buffer. [`send`] and [`recv`] are the safe, bounded
//! blocking forms.

use std::any::Any;
use std::ffi::c_void;
use std::time::Duration;

use crate::error::{NetError, NetResult};
use crate::limits::{Bound, WarnSink, Waiting};

/// Size of a listen handle, as NCCL's `NCCL_NET_HANDLE_MAXSIZE`.
pub const HANDLE_BYTES: usize = 128;

/// Requests one comm may have in flight (`NCCL_NET_NEURON_MAX_REQUESTS`).
pub const MAX_REQUESTS: usize = 128;

/// What a peer needs to connect to a listener: opaque bytes produced by
/// [`Transport::listen`], exchanged through the bootstrap.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    bytes: [u8; HANDLE_BYTES],
}

impl Handle {
    /// A handle from its bytes (as received from a peer).
    pub fn from_bytes(b: &[u8]) -> NetResult<Handle> {
        let bytes: [u8; HANDLE_BYTES] = b.try_into().map_err(|_| {
            NetError::Invalid(format!("a listen handle is {HANDLE_BYTES} bytes, got {}", b.len()))
        })?;
        Ok(Handle { bytes })
    }

    /// The bytes to send to a peer.
    pub fn as_bytes(&self) -> &[u8; HANDLE_BYTES] {
        &self.bytes
    }

    pub(crate) fn zeroed() -> Handle {
        Handle { bytes: [0; HANDLE_BYTES] }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8; HANDLE_BYTES] {
        &mut self.bytes
    }
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Handle(")?;
        for b in &self.bytes[..16] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

/// A transfer in flight: a slot of its comm and the slot's generation (so
/// a stale request is refused, not confused with a newer one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub(crate) slot: u16,
    pub(crate) generation: u32,
}

/// A registered memory range. Transfers inside it may pass it to
/// `isend`/`irecv` (providers that need registration use its descriptor).
/// Dropping it deregisters.
pub struct Registration {
    pub(crate) transport: u64,
    pub(crate) base: usize,
    pub(crate) len: usize,
    pub(crate) desc: *mut c_void,
    /// Keeps the provider's registration alive; dropping it deregisters.
    pub(crate) _owner: Option<Box<dyn Any + Send + Sync>>,
}

// SAFETY: `desc` is the provider's opaque descriptor, only ever handed back
// to the provider, which allows use from any thread.
unsafe impl Send for Registration {}
// SAFETY: as above; the registration is never mutated after creation.
unsafe impl Sync for Registration {}

impl Registration {
    /// The registered range.
    pub fn range(&self) -> (usize, usize) {
        (self.base, self.len)
    }

    /// The descriptor for a transfer of `len` bytes at `ptr`, after
    /// checking the transfer lies inside this registration of `transport`.
    pub(crate) fn desc_for(&self, transport: u64, ptr: usize, len: usize) -> NetResult<*mut c_void> {
        if self.transport != transport {
            return Err(NetError::Invalid("the registration belongs to another transport".into()));
        }
        let inside = ptr >= self.base && ptr.checked_add(len).is_some_and(|end| end <= self.base + self.len);
        if !inside {
            return Err(NetError::Invalid(format!(
                "transfer of {len} bytes at {ptr:#x} is outside the registration {:#x}+{}",
                self.base, self.len
            )));
        }
        Ok(self.desc)
    }
}

/// A network (or in-process fabric) the ranks talk through.
pub trait Transport: Send + Sync {
    /// A short name for messages ("inproc", "libfabric tcp;ofi_rxm").
    fn name(&self) -> String;

    /// Opens a listener; the handle tells a peer how to connect to it.
    fn listen(&self) -> NetResult<(Handle, Box<dyn Listener>)>;

    /// Connects to the listener behind `handle`. Returns at once: the comm
    /// may be used (isend) before the peer accepts; transfers start when it
    /// does.
    fn connect(&self, handle: &Handle) -> NetResult<Box<dyn SendComm>>;

    /// Registers `len` bytes at `base` for transfers.
    ///
    /// # Safety
    /// The range must stay allocated until the registration is dropped.
    unsafe fn register(&self, base: *const u8, len: usize) -> NetResult<Registration>;

    /// Moves the transport's own work along (completions, a connection's
    /// first message) without a request to test: providers with manual
    /// progress (libfabric tcp) deliver nothing while no call reaches
    /// them, so a thread that owns comms but has nothing to test calls
    /// this. The default (transports that progress by themselves) does
    /// nothing.
    fn progress(&self) -> NetResult<()> {
        Ok(())
    }
}

/// The listening side of [`Transport::listen`].
pub trait Listener: Send {
    /// Waits (at most `bound`) for a peer's connect and returns the
    /// receiving comm. The error names the listener when nobody came.
    fn accept(&mut self, bound: Bound) -> NetResult<Box<dyn RecvComm>>;
}

/// The sending end of a connection.
pub trait SendComm: Send {
    /// The peer, for messages.
    fn peer(&self) -> String;

    /// Posts a send of `len` bytes at `buf`.
    ///
    /// # Safety
    /// The bytes must stay valid and unchanged until `test` reports the
    /// request done or failed, or `cancel` / dropping the comm returns.
    unsafe fn isend(&mut self, buf: *const u8, len: usize, reg: Option<&Registration>) -> NetResult<Request>;

    /// `Some(bytes sent)` once done, `None` while in flight; a failed
    /// transfer is an error (and frees the request).
    fn test(&mut self, req: Request) -> NetResult<Option<usize>>;

    /// Withdraws a request; returns once the transport no longer touches
    /// its buffer. A request that already finished is just freed.
    fn cancel(&mut self, req: Request) -> NetResult<()>;
}

/// The receiving end of a connection.
pub trait RecvComm: Send {
    /// The peer, for messages.
    fn peer(&self) -> String;

    /// Posts a receive of at most `cap` bytes into `buf`.
    ///
    /// # Safety
    /// The bytes must stay valid and must not be accessed until `test`
    /// reports the request done or failed, or `cancel` / dropping the comm
    /// returns.
    unsafe fn irecv(&mut self, buf: *mut u8, cap: usize, reg: Option<&Registration>) -> NetResult<Request>;

    /// `Some(bytes received)` once done, `None` while in flight. A message
    /// larger than the posted buffer fails the request.
    fn test(&mut self, req: Request) -> NetResult<Option<usize>>;

    /// Withdraws a request; returns once the transport no longer touches
    /// its buffer.
    fn cancel(&mut self, req: Request) -> NetResult<()>;

    /// Makes the bytes of completed receives visible to every reader of
    /// that memory. For host memory (the simulator's device memory is host
    /// memory) completion already implies it and this is a fence; a
    /// device-memory transport would read back through the device here.
    fn flush(&mut self) -> NetResult<()>;
}

/// Polls `test` until done, at most `bound`, logging the warning while it
/// waits; `what` names the transfer in the warning and the timeout error.
pub fn wait(
    mut test: impl FnMut() -> NetResult<Option<usize>>,
    bound: Bound,
    sink: &WarnSink,
    what: &dyn Fn() -> String,
) -> NetResult<usize> {
    let mut w = Waiting::start(bound, sink);
    let mut spins = 0u32;
    loop {
        if let Some(n) = test()? {
            return Ok(n);
        }
        if w.expired() {
            return Err(w.timeout(what()));
        }
        w.tick(|| format!("Timeout waiting for {}", what()));
        spins += 1;
        if spins > 64 {
            std::thread::sleep(Duration::from_micros(50));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Sends `data` and waits (at most `bound`) for it to complete.
pub fn send(comm: &mut dyn SendComm, data: &[u8], bound: Bound, sink: &WarnSink) -> NetResult<()> {
    // SAFETY: `data` outlives this call, and the request is finished or
    // cancelled before we return.
    let req = unsafe { comm.isend(data.as_ptr(), data.len(), None)? };
    let peer = comm.peer();
    let what = || format!("a send of {} bytes to {peer} to complete", data.len());
    let mut finished = false;
    let r = wait(|| comm.test(req).inspect_err(|_| finished = true), bound, sink, &what);
    if r.is_err() && !finished {
        comm.cancel(req)?;
    }
    r.map(|_| ())
}

/// Receives one message into `buf` and waits (at most `bound`) for it;
/// returns its length.
pub fn recv(comm: &mut dyn RecvComm, buf: &mut [u8], bound: Bound, sink: &WarnSink) -> NetResult<usize> {
    // SAFETY: `buf` is borrowed mutably for this call, and the request is
    // finished or cancelled before we return.
    let req = unsafe { comm.irecv(buf.as_mut_ptr(), buf.len(), None)? };
    let peer = comm.peer();
    let cap = buf.len();
    let what = || format!("a receive of up to {cap} bytes from {peer}");
    // A failed test frees the request; only a timeout leaves it to cancel.
    let mut finished = false;
    let r = wait(|| comm.test(req).inspect_err(|_| finished = true), bound, sink, &what);
    if r.is_err() && !finished {
        comm.cancel(req)?;
    }
    r
}
