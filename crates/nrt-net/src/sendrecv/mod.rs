//! Point-to-point tensor transfers between logical cores, possibly on
//! other hosts: the engine behind `nrt_async_sendrecv.h`.
//!
//! It is host-driven, as libnrt's is: no device program and no semaphore.
//! Per logical core (LNC, `0..128`) [`SendRecv::init`] starts a service
//! thread; [`SendRecv::connect`] (sending side) and [`SendRecv::accept`]
//! (receiving side) return a communicator at once and leave the
//! rendezvous to that thread; the caller polls [`SendRecv::test_comm`].
//! The rendezvous goes through the key-value store of [`kv`] at
//! `NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT`: the receiver asks the
//! sender's host for its name, listens on the transport and publishes
//! the listen handle in its own host's store under a key made of both
//! cores and that name; the sender fetches it from the receiver's host
//! and connects. Tensor bytes then move through the [`Transport`]
//! (libfabric in the runtime).
//!
//! Transfers: [`SendRecv::send`] / [`SendRecv::recv`] post and return a
//! request at once; [`SendRecv::test_request`] polls it. A post is made
//! by the caller when nothing posted earlier on the communicator still
//! waits for the service thread, otherwise it is queued behind them, so
//! posts leave in the order they were made. The device memory of a tensor
//! is not reachable by the network here (that needs hardware with
//! peer-to-peer DMA), so bytes are staged through a host buffer of the
//! request: read from the tensor before the send is posted, written into
//! the tensor before the receive is reported done. A communicator holds
//! [`MAX_PENDING_REQUESTS`] request slots, reused; a slot's staging buffer
//! keeps its capacity for the next transfer.
//!
//! Every wait is bounded: a communicator must connect within
//! `NEURON_RT_CC_BOOTSTRAP_TIMEOUT` and a transfer complete within
//! `NEURON_RT_CC_NET_TIMEOUT` of its post (see [`crate::limits`]);
//! otherwise the test call reports a timeout naming what never came.
//! The service thread has a panic guard: if it dies, every test of a
//! communicator it had not connected yet and of a post it had not made
//! fails at once naming the panic, and `close` still ends. `close` waits
//! at most [`STOP_LIMIT`] for the thread to stop.

pub mod kv;

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{NetError, NetResult, secs};
use crate::limits::{Bound, NET_TIMEOUT_VAR, WarnSink};
use crate::transport::{Handle, Listener, RecvComm, Request, SendComm, Transport};

/// Logical cores a host may have (`0..128`).
pub const MAX_LNC: u32 = 128;
/// Communicators one logical core may hold
/// (`NRT_ASYNC_SENDRECV_MAX_NUM_COMMUNICATORS_PER_LNC`).
pub const MAX_COMMS_PER_LNC: usize = 128;
/// Requests one communicator may have pending
/// (`NRT_ASYNC_SENDRECV_MAX_NUM_PENDING_REQUEST`).
pub const MAX_PENDING_REQUESTS: usize = crate::transport::MAX_REQUESTS;
/// Must be `1` for [`SendRecv::init`] to bring a core up.
pub const ENABLE_VAR: &str = "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED";
/// The port of the rendezvous store.
pub const PORT_VAR: &str = "NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT";

/// How long after a communicator opens the service thread keeps driving
/// the transport even with nothing in flight, so the connection's first
/// message reaches a peer that waits in an accept.
const FIRST_MESSAGE_GRACE: Duration = Duration::from_secs(5);

/// Staging buffers above this size are released when their transfer ends
/// instead of being kept for the next one.
const KEEP_STAGING: usize = 64 << 20;

/// How long [`SendRecv::close`] waits for a core's service thread to
/// stop. One round of the thread is a step per communicator (a store
/// request is bounded by the store's I/O limit of 500 ms, the accept by
/// 1 ms) and a nap of at most 50 ms; a thread that has not stopped after
/// this is stuck, and the close fails naming it.
pub const STOP_LIMIT: Duration = Duration::from_secs(10);

/// Which C status a failure maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// NRT_FAILURE: a transfer or connection failed, a bad argument.
    Failure,
    /// NRT_INVALID: a malformed argument (NULL output, bad address).
    Invalid,
    /// NRT_INVALID_HANDLE: a stale, foreign or unconnected handle.
    InvalidHandle,
    /// NRT_RESOURCE: over a communicator or request limit.
    Resource,
    /// NRT_TIMEOUT: a bounded wait ran out.
    Timeout,
}

/// A send/recv failure: its status class and a message naming what was
/// wrong and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrError {
    /// The status class.
    pub kind: ErrorKind,
    /// The message.
    pub message: String,
}

impl SrError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> SrError {
        SrError { kind, message: message.into() }
    }
}

impl std::fmt::Display for SrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SrError {}

/// Result alias of this module.
pub type SrResult<T> = Result<T, SrError>;

fn failure(m: impl Into<String>) -> SrError {
    SrError::new(ErrorKind::Failure, m)
}

/// The bytes a transfer reads or fills: a tensor of the runtime.
pub trait Payload: Send + Sync {
    /// Size in bytes.
    fn size(&self) -> u64;
    /// Copies `buf.len()` bytes at `offset` out of the tensor.
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), String>;
    /// Copies `data` into the tensor at `offset`.
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), String>;
}

/// What a logical core's engine is configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The rendezvous store's port.
    pub port: u16,
    /// How long a communicator may take to connect.
    pub connect: Bound,
    /// How long a transfer may take after its post.
    pub transfer: Bound,
}

impl Settings {
    /// The settings of a core from the runtime's configuration (read from
    /// the environment once, in `nrt::config`): the experimental switch
    /// must be on and the port given; otherwise the error names the
    /// variable to set.
    pub fn new(enabled: bool, port: Option<u16>, connect: Bound, transfer: Bound) -> SrResult<Settings> {
        if !enabled {
            return Err(failure(format!("async send/recv is experimental and disabled: set {ENABLE_VAR}=1")));
        }
        let port = port.ok_or_else(|| failure(format!("{PORT_VAR} is unset: async send/recv needs the port of its rendezvous store (1-65535)")))?;
        Ok(Settings { port, connect, transfer })
    }
}

/// Opens the transport of a logical core (libfabric in the runtime, the
/// in-process transport in tests).
pub type Opener = Box<dyn Fn() -> NetResult<Arc<dyn Transport>> + Send + Sync>;

/// A communicator handle: which core, which slot, which generation (so a
/// closed communicator's handle is refused, not confused with a newer one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommId(u64);

/// A request handle, built like [`CommId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequestId(u64);

const MARK: u64 = 1 << 63;
const GEN_BITS: u32 = 41;
const GEN_MASK: u64 = (1 << GEN_BITS) - 1;

impl CommId {
    fn new(lnc: u32, slot: usize, generation: u64) -> CommId {
        CommId(MARK | (lnc as u64) << 56 | (slot as u64) << 49 | (generation & GEN_MASK))
    }
    /// The raw value (the pointer a C client holds).
    pub fn raw(self) -> u64 {
        self.0
    }
    /// A handle from a raw value; `None` when it cannot be one of ours.
    pub fn from_raw(v: u64) -> Option<CommId> {
        (v & MARK != 0 && (v >> GEN_BITS) & 0xFF == 0).then_some(CommId(v))
    }
    fn lnc(self) -> u32 {
        ((self.0 >> 56) & 0x7F) as u32
    }
    fn slot(self) -> usize {
        ((self.0 >> 49) & 0x7F) as usize
    }
}

impl RequestId {
    fn new(comm: CommId, slot: usize, generation: u64) -> RequestId {
        // The request slot sits in bits 41..49 (+1, so that it is never 0
        // and a request can never pass for a communicator).
        RequestId((comm.0 & !GEN_MASK) | ((slot as u64 + 1) << GEN_BITS) | (generation & GEN_MASK))
    }
    /// The raw value (the pointer a C client holds).
    pub fn raw(self) -> u64 {
        self.0
    }
    /// A handle from a raw value; `None` when it cannot be one of ours.
    pub fn from_raw(v: u64) -> Option<RequestId> {
        let slot = (v >> GEN_BITS) & 0xFF;
        (v & MARK != 0 && slot != 0 && slot as usize <= MAX_PENDING_REQUESTS).then_some(RequestId(v))
    }
    fn comm(self) -> (u32, usize) {
        (((self.0 >> 56) & 0x7F) as u32, ((self.0 >> 49) & 0x7F) as usize)
    }
    fn slot(self) -> usize {
        ((self.0 >> GEN_BITS) & 0xFF) as usize - 1
    }
    fn generation(self) -> u64 {
        self.0 & GEN_MASK
    }
}

/// Every handle gets a fresh generation (never 0).
static GENERATION: AtomicU64 = AtomicU64::new(1);

fn next_generation() -> u64 {
    loop {
        let g = GENERATION.fetch_add(1, Ordering::Relaxed) & GEN_MASK;
        if g != 0 {
            return g;
        }
    }
}

/// Which way a communicator moves bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Made by `connect`: posts sends.
    Send,
    /// Made by `accept`: posts receives.
    Recv,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "receive",
        }
    }
}

/// The async send/recv engine of one process: up to [`MAX_LNC`] logical
/// cores, each with its communicators and service thread.
pub struct SendRecv {
    lncs: Vec<Mutex<LncSlot>>,
    opener: Opener,
    sink: WarnSink,
}

enum LncSlot {
    Down,
    Up(Arc<Lnc>, JoinHandle<()>),
    /// The last close failed; libnrt refuses to initialise the core again.
    CloseFailed(String),
}

/// One logical core's engine.
struct Lnc {
    index: u32,
    settings: Settings,
    hostname: Vec<u8>,
    transport: Arc<dyn Transport>,
    comms: Mutex<Vec<Option<Arc<Comm>>>>,
    work: Mutex<bool>,
    wake: Condvar,
    shutdown: AtomicBool,
    sink: WarnSink,
    /// Why the service thread died (`None` while it lives or after it
    /// stopped normally).
    died: Mutex<Option<String>>,
    /// Set when the service thread ends, however it ends (under `work`'s
    /// lock, with `wake` notified, so `close` can wait for it).
    exited: AtomicBool,
}

/// Marks the service thread exited and wakes `close` (also when the
/// thread unwinds).
struct Exited<'a>(&'a Lnc);

impl Drop for Exited<'_> {
    fn drop(&mut self) {
        let _w = lock(&self.0.work);
        self.0.exited.store(true, Ordering::Release);
        self.0.wake.notify_all();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SendRecv {
    /// An engine whose cores open their transport with `opener` and whose
    /// waits warn through `sink` while they last.
    pub fn new(opener: Opener, sink: WarnSink) -> SendRecv {
        SendRecv { lncs: (0..MAX_LNC).map(|_| Mutex::new(LncSlot::Down)).collect(), opener, sink }
    }

    fn slot(&self, lnc: i64) -> SrResult<&Mutex<LncSlot>> {
        usize::try_from(lnc)
            .ok()
            .and_then(|i| self.lncs.get(i))
            .ok_or_else(|| failure(format!("logical neuron core {lnc} is out of range: expected 0-{}", MAX_LNC - 1)))
    }

    fn up(&self, lnc: u32) -> SrResult<Arc<Lnc>> {
        match &*lock(self.slot(lnc as i64)?) {
            LncSlot::Up(l, _) => Ok(Arc::clone(l)),
            _ => Err(failure(format!("async send/recv is not initialised on logical neuron core {lnc} (call nrt_async_sendrecv_init)"))),
        }
    }

    /// Brings up logical core `lnc` with `settings`: elects or joins the
    /// host's rendezvous store, publishes this host's name in it, opens
    /// the transport and starts the service thread.
    pub fn init(&self, lnc: i64, settings: Settings) -> SrResult<()> {
        let mut slot = lock(self.slot(lnc)?);
        match &*slot {
            LncSlot::Up(..) => return Err(failure(format!("async send/recv is already initialised on logical neuron core {lnc}"))),
            LncSlot::CloseFailed(why) => {
                return Err(failure(format!(
                    "async send/recv cannot be initialised again on logical neuron core {lnc}: its last close failed ({why})"
                )));
            }
            LncSlot::Down => {}
        }
        kv::ensure_server(settings.port).map_err(failure)?;
        let hostname = hostname();
        publish_hostname(settings.port, &hostname)?;
        let transport = (self.opener)().map_err(|e| failure(format!("async send/recv on logical neuron core {lnc}: {e}")))?;
        let core = Arc::new(Lnc {
            index: lnc as u32,
            settings,
            hostname,
            transport,
            comms: Mutex::new((0..MAX_COMMS_PER_LNC).map(|_| None).collect()),
            work: Mutex::new(false),
            wake: Condvar::new(),
            shutdown: AtomicBool::new(false),
            sink: self.sink.clone(),
            died: Mutex::new(None),
            exited: AtomicBool::new(false),
        });
        let run = Arc::clone(&core);
        let thread = std::thread::Builder::new()
            .name(format!("nrt-sr-lnc{lnc}"))
            .spawn(move || guarded_service(&run))
            .map_err(|e| failure(format!("cannot start the send/recv service thread of logical neuron core {lnc}: {e}")))?;
        *slot = LncSlot::Up(core, thread);
        Ok(())
    }

    /// Whether `lnc` is initialised.
    pub fn is_up(&self, lnc: i64) -> bool {
        self.slot(lnc).is_ok_and(|s| matches!(&*lock(s), LncSlot::Up(..)))
    }

    /// Closes logical core `lnc`: every communicator and request of it
    /// ends. An unconnected communicator or a request still in flight
    /// makes the close fail (after tearing everything down anyway), and
    /// the core then refuses a new `init`, as libnrt's does.
    pub fn close(&self, lnc: i64) -> SrResult<()> {
        let mut slot = lock(self.slot(lnc)?);
        let (core, thread) = match std::mem::replace(&mut *slot, LncSlot::Down) {
            LncSlot::Up(c, t) => (c, t),
            other => {
                *slot = other;
                return Err(failure(format!("async send/recv is not initialised on logical neuron core {lnc}")));
            }
        };
        core.shutdown.store(true, Ordering::Release);
        core.notify();
        let mut problems = Vec::new();
        let stopped = core.wait_exited(STOP_LIMIT);
        if stopped {
            let _ = thread.join();
        } else {
            // Left running (it holds its own references); the core is
            // torn down below all the same, except a communicator the
            // stuck thread holds.
            problems.push(format!("its service thread did not stop within {}", secs(STOP_LIMIT)));
        }
        if let Some(why) = lock(&core.died).clone() {
            (core.sink)(&format!("async send/recv on logical neuron core {lnc}: the service thread had died ({why})"));
        }
        let comms: Vec<Arc<Comm>> = lock(&core.comms).iter_mut().filter_map(Option::take).collect();
        for c in &comms {
            let mut inner = match c.inner.try_lock() {
                Ok(g) => g,
                Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if !stopped => {
                    problems.push(format!("the {} communicator to {} core {} is held by the stuck service thread", c.dir.name(), c.peer_ip, c.peer_lnc));
                    continue;
                }
                Err(std::sync::TryLockError::WouldBlock) => lock(&c.inner),
            };
            if !matches!(inner.state, ConnState::Connected) {
                problems.push(format!("{} communicator to {} core {} is not connected", c.dir.name(), c.peer_ip, c.peer_lnc));
            }
            let busy = inner.reqs.iter().filter(|r| !matches!(r.state, ReqState::Free)).count();
            if busy > 0 {
                problems.push(format!("{busy} request(s) of the {} communicator to {} core {} are in flight", c.dir.name(), c.peer_ip, c.peer_lnc));
            }
            inner.teardown();
        }
        if problems.is_empty() {
            Ok(())
        } else {
            let why = problems.join("; ");
            *slot = LncSlot::CloseFailed(why.clone());
            Err(failure(format!("closing async send/recv on logical neuron core {lnc}: {why}")))
        }
    }

    /// Closes every initialised core (runtime shutdown); returns the
    /// cores that were still open.
    pub fn close_all(&self) -> Vec<u32> {
        let mut open = Vec::new();
        for i in 0..MAX_LNC {
            if self.is_up(i as i64) {
                open.push(i);
                let _ = self.close(i as i64);
            }
            *lock(&self.lncs[i as usize]) = LncSlot::Down;
        }
        open
    }

    /// A sending communicator from `lnc` to core `peer_lnc` of the host at
    /// `peer_ip`. Returns at once; the connection is made by the service
    /// thread (poll [`SendRecv::test_comm`]).
    pub fn connect(&self, peer_ip: &str, peer_lnc: i64, lnc: i64) -> SrResult<CommId> {
        self.open_comm(peer_ip, peer_lnc, lnc, Direction::Send)
    }

    /// The receiving communicator on `lnc` for the sender `peer_lnc` of the
    /// host at `peer_ip`. Returns at once, as [`SendRecv::connect`].
    pub fn accept(&self, peer_ip: &str, peer_lnc: i64, lnc: i64) -> SrResult<CommId> {
        self.open_comm(peer_ip, peer_lnc, lnc, Direction::Recv)
    }

    fn open_comm(&self, peer_ip: &str, peer_lnc: i64, lnc: i64, dir: Direction) -> SrResult<CommId> {
        let ip: IpAddr = peer_ip.trim().trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| {
            failure(format!("peer_ip {peer_ip:?} is not an IP address: expected an IPv4 or IPv6 literal such as 10.0.0.2"))
        })?;
        let peer = u32::try_from(peer_lnc)
            .ok()
            .filter(|p| *p < MAX_LNC)
            .ok_or_else(|| failure(format!("peer_lnc {peer_lnc} is out of range: expected 0-{}", MAX_LNC - 1)))?;
        self.slot(lnc)?;
        let core = self.up(lnc as u32)?;
        let mut comms = lock(&core.comms);
        let Some(slot) = comms.iter().position(Option::is_none) else {
            return Err(SrError::new(
                ErrorKind::Resource,
                format!("logical neuron core {lnc} already has {MAX_COMMS_PER_LNC} communicators (the limit)"),
            ));
        };
        let id = CommId::new(core.index, slot, next_generation());
        comms[slot] = Some(Arc::new(Comm::new(id, dir, ip, peer)));
        drop(comms);
        core.notify();
        Ok(id)
    }

    fn comm(&self, id: CommId) -> SrResult<(Arc<Lnc>, Arc<Comm>)> {
        let stale = || SrError::new(ErrorKind::InvalidHandle, format!("{:#x} is not a live async send/recv communicator", id.0));
        let core = self.up(id.lnc()).map_err(|_| stale())?;
        let comm = lock(&core.comms).get(id.slot()).and_then(|c| c.clone()).filter(|c| c.id == id).ok_or_else(stale)?;
        Ok((core, comm))
    }

    /// Whether communicator `id` is connected. A communicator that failed
    /// to connect reports its error (NRT_TIMEOUT when the peer never
    /// came within the bound).
    pub fn test_comm(&self, id: CommId) -> SrResult<bool> {
        let (core, comm) = self.comm(id)?;
        let mut inner = lock(&comm.inner);
        inner.check_deadline(&comm, &core.settings);
        inner.check_service(&comm, &core);
        match &inner.state {
            ConnState::Connected => Ok(true),
            ConnState::Failed(e) => Err(e.clone()),
            _ => Ok(false),
        }
    }

    /// Posts a send of `len` bytes of `payload` at `offset` on `comm`.
    pub fn send(&self, payload: Arc<dyn Payload>, offset: u64, len: u64, comm: CommId) -> SrResult<RequestId> {
        self.post(payload, offset, len, comm, Direction::Send)
    }

    /// Posts a receive of at most `len` bytes into `payload` at `offset`.
    pub fn recv(&self, payload: Arc<dyn Payload>, offset: u64, len: u64, comm: CommId) -> SrResult<RequestId> {
        self.post(payload, offset, len, comm, Direction::Recv)
    }

    fn post(&self, payload: Arc<dyn Payload>, offset: u64, len: u64, id: CommId, dir: Direction) -> SrResult<RequestId> {
        let (core, comm) = self.comm(id)?;
        if comm.dir != dir {
            return Err(failure(format!(
                "a {} posted on a {} communicator: sends go on communicators from nrt_async_sendrecv_connect, receives on those from nrt_async_sendrecv_accept",
                dir.name(),
                comm.dir.name()
            )));
        }
        let size = payload.size();
        if offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(failure(format!("a transfer of {len} bytes at offset {offset} is out of bounds of a tensor of {size} bytes")));
        }
        let len = usize::try_from(len).map_err(|_| failure(format!("a transfer of {len} bytes does not fit this host's address space")))?;
        let mut inner = lock(&comm.inner);
        if !matches!(inner.state, ConnState::Connected) {
            return Err(SrError::new(
                ErrorKind::InvalidHandle,
                "post on an unconnected communicator: wait until nrt_async_sendrecv_test_comm reports it connected",
            ));
        }
        let Some(&slot) = inner.free.last() else {
            return Err(SrError::new(ErrorKind::Resource, format!("Maximum number of pending requests {MAX_PENDING_REQUESTS} reached")));
        };
        // The staging buffer is grown here, fallibly, so that a transfer
        // the host cannot stage is this call's NRT_RESOURCE (and `start`
        // never reallocates).
        let staging = &mut inner.reqs[slot as usize].staging;
        staging.try_reserve_exact(len.saturating_sub(staging.len())).map_err(|_| {
            SrError::new(ErrorKind::Resource, format!("a {} of {len} bytes needs a host staging buffer of {len} bytes, which the allocator refused", dir.name()))
        })?;
        inner.free.pop();
        let generation = next_generation();
        let req = &mut inner.reqs[slot as usize];
        req.generation = generation;
        req.payload = Some(payload);
        req.offset = offset;
        req.len = len;
        req.posted = Instant::now();
        req.state = ReqState::Stashed;
        if inner.stash.is_empty() {
            // Nothing earlier waits for the service thread: post now.
            inner.start(slot as usize);
        } else {
            inner.stash.push_back(slot);
            drop(inner);
            core.notify();
        }
        Ok(RequestId::new(id, slot as usize, generation))
    }

    /// Polls request `id`: `Some(bytes)` once done (the slot is then free
    /// and the handle dead), `None` while in flight. A failed or timed-out
    /// transfer reports its error once and frees the slot.
    pub fn test_request(&self, id: RequestId) -> SrResult<Option<usize>> {
        let stale = || SrError::new(ErrorKind::InvalidHandle, format!("{:#x} is not a request in use (done, stale or foreign)", id.0));
        let (lnc, slot) = id.comm();
        let core = self.up(lnc).map_err(|_| stale())?;
        let comm = lock(&core.comms).get(slot).and_then(|c| c.clone()).ok_or_else(stale)?;
        let mut inner = lock(&comm.inner);
        let r = id.slot();
        if inner.reqs[r].generation != id.generation() || matches!(inner.reqs[r].state, ReqState::Free) {
            return Err(stale());
        }
        if matches!(inner.reqs[r].state, ReqState::Stashed)
            && let Some(why) = lock(&core.died).clone()
        {
            // Nobody will post it.
            inner.stash.retain(|s| *s as usize != r);
            inner.release(r);
            return Err(failure(format!("a {} on {} was never posted: the send/recv service thread died ({why})", comm.dir.name(), comm.describe(core.index))));
        }
        inner.poll(r, &comm, &core.settings)
    }

    /// Makes the bytes of receives already reported done on `lnc` visible
    /// to every reader. Receives are written into their tensor before they
    /// are reported done, so this is the transport's fence.
    pub fn flush(&self, lnc: i64) -> SrResult<()> {
        self.slot(lnc)?;
        let core = self.up(lnc as u32)?;
        let comms: Vec<Arc<Comm>> = lock(&core.comms).iter().flatten().cloned().collect();
        for c in comms {
            let mut inner = lock(&c.inner);
            if let Link::Recv(r) = &mut inner.link {
                r.flush().map_err(|e| failure(format!("flush of the receive communicator from {} core {}: {e}", c.peer_ip, c.peer_lnc)))?;
            }
        }
        Ok(())
    }
}

impl Drop for SendRecv {
    fn drop(&mut self) {
        self.close_all();
    }
}

impl Lnc {
    fn notify(&self) {
        *lock(&self.work) = true;
        self.wake.notify_all();
    }

    /// Waits at most `limit` for the service thread to end; whether it did.
    fn wait_exited(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let mut w = lock(&self.work);
        while !self.exited.load(Ordering::Acquire) {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            w = self.wake.wait_timeout(w, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }
}

/// This host's name, as the rendezvous keys carry it.
fn hostname() -> Vec<u8> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let name = name.trim();
    if name.is_empty() { b"localhost".to_vec() } else { name.as_bytes().to_vec() }
}

/// The key under which this host's store holds its name.
const HOSTNAME_KEY: &[u8] = b"hostname";

/// Publishes this host's name in the local store; retried briefly, since
/// the process that won the election may still be binding its port.
fn publish_hostname(port: u16, name: &[u8]) -> SrResult<()> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        match kv::set(IpAddr::V4(Ipv4Addr::LOCALHOST), port, HOSTNAME_KEY, name) {
            Ok(()) => return Ok(()),
            Err(e) if e.retry && Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(failure(format!("publishing this host's name in the send/recv rendezvous store: {}", e.message))),
        }
    }
}

/// The rendezvous key of the connection from `send_lnc` to `recv_lnc`,
/// the sender being on host `sender_host`.
fn handle_key(send_lnc: u32, recv_lnc: u32, sender_host: &[u8]) -> Vec<u8> {
    let mut k = b"handle-".to_vec();
    k.extend_from_slice(&send_lnc.to_le_bytes());
    k.extend_from_slice(&recv_lnc.to_le_bytes());
    k.extend_from_slice(sender_host);
    k
}

/// One communicator.
struct Comm {
    id: CommId,
    dir: Direction,
    peer_ip: IpAddr,
    peer_lnc: u32,
    opened: Instant,
    inner: Mutex<CommInner>,
}

/// Where a communicator's connection stands.
enum ConnState {
    /// Sender: fetching the receiver's listen handle. Receiver: asking the
    /// sender's host for its name.
    Start,
    /// Receiver: the sender's host name is known; listen and publish.
    Publish(Vec<u8>),
    /// Receiver: the handle is published; waiting for the sender.
    Accept,
    /// Ready for transfers.
    Connected,
    /// Failed for good; `test_comm` reports it.
    Failed(SrError),
}

enum Link {
    None,
    Send(Box<dyn SendComm>),
    Recv(Box<dyn RecvComm>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReqState {
    Free,
    /// Waiting for the service thread to post it.
    Stashed,
    /// Posted to the transport.
    Posted(Request),
    /// Failed before or at its post; reported by the next test.
    Error,
}

struct Req {
    state: ReqState,
    generation: u64,
    payload: Option<Arc<dyn Payload>>,
    offset: u64,
    len: usize,
    posted: Instant,
    staging: Vec<u8>,
    error: Option<SrError>,
}

struct CommInner {
    state: ConnState,
    link: Link,
    listener: Option<Box<dyn Listener>>,
    /// Why the last rendezvous step did not advance (for the warning and
    /// the timeout message).
    last_wait: String,
    /// When the next "still waiting" warning is due.
    next_warn: Duration,
    reqs: Vec<Req>,
    free: Vec<u8>,
    stash: VecDeque<u8>,
}

impl Comm {
    fn new(id: CommId, dir: Direction, peer_ip: IpAddr, peer_lnc: u32) -> Comm {
        let now = Instant::now();
        let reqs = (0..MAX_PENDING_REQUESTS)
            .map(|_| Req {
                state: ReqState::Free,
                generation: 0,
                payload: None,
                offset: 0,
                len: 0,
                posted: now,
                staging: Vec::new(),
                error: None,
            })
            .collect();
        Comm {
            id,
            dir,
            peer_ip,
            peer_lnc,
            opened: now,
            inner: Mutex::new(CommInner {
                state: ConnState::Start,
                link: Link::None,
                listener: None,
                last_wait: "the rendezvous has not started".into(),
                next_warn: Duration::MAX,
                reqs,
                free: (0..MAX_PENDING_REQUESTS as u8).rev().collect(),
                stash: VecDeque::with_capacity(MAX_PENDING_REQUESTS),
            }),
        }
    }

    fn describe(&self, lnc: u32) -> String {
        match self.dir {
            Direction::Send => format!("the send communicator from core {lnc} to core {} at {}", self.peer_lnc, self.peer_ip),
            Direction::Recv => format!("the receive communicator on core {lnc} for core {} at {}", self.peer_lnc, self.peer_ip),
        }
    }

    /// One rendezvous step (service thread). Returns whether the
    /// communicator still needs steps.
    fn step(&self, core: &Lnc) -> bool {
        let mut inner = lock(&self.inner);
        inner.check_deadline(self, &core.settings);
        inner.warn(self, core);
        let port = core.settings.port;
        let lnc = core.index;
        let fail = |m: String| ConnState::Failed(failure(m));
        let next = match std::mem::replace(&mut inner.state, ConnState::Start) {
            ConnState::Start if self.dir == Direction::Send => {
                let key = handle_key(lnc, self.peer_lnc, &core.hostname);
                match kv::get(self.peer_ip, port, &key) {
                    Ok(kv::Lookup::Found(bytes)) => match Handle::from_bytes(&bytes).and_then(|h| core.transport.connect(&h)) {
                        Ok(s) => {
                            inner.link = Link::Send(s);
                            ConnState::Connected
                        }
                        Err(e) => fail(format!("{}: connecting to the receiver's listen handle: {e}", self.describe(lnc))),
                    },
                    Ok(kv::Lookup::NotFound) => {
                        inner.last_wait = format!("core {} at {} has not published its listen handle (no matching nrt_async_sendrecv_accept)", self.peer_lnc, self.peer_ip);
                        ConnState::Start
                    }
                    Err(e) if e.retry => {
                        inner.last_wait = e.message;
                        ConnState::Start
                    }
                    Err(e) => fail(format!("{}: {}", self.describe(lnc), e.message)),
                }
            }
            ConnState::Start => match kv::get(self.peer_ip, port, HOSTNAME_KEY) {
                Ok(kv::Lookup::Found(name)) => ConnState::Publish(name),
                Ok(kv::Lookup::NotFound) => {
                    inner.last_wait = format!("the store at {}:{port} has no host name yet (async send/recv not initialised there)", self.peer_ip);
                    ConnState::Start
                }
                Err(e) if e.retry => {
                    inner.last_wait = e.message;
                    ConnState::Start
                }
                Err(e) => fail(format!("{}: {}", self.describe(lnc), e.message)),
            },
            ConnState::Publish(peer_host) => {
                if inner.listener.is_none() {
                    match core.transport.listen() {
                        Ok((h, l)) => {
                            inner.listener = Some(l);
                            inner.last_wait = String::new();
                            // Keep the handle bytes with the host name until published.
                            let key = handle_key(self.peer_lnc, lnc, &peer_host);
                            return inner.publish(self, lnc, port, key, h);
                        }
                        Err(e) => fail(format!("{}: listening on the transport: {e}", self.describe(lnc))),
                    }
                } else {
                    ConnState::Publish(peer_host)
                }
            }
            ConnState::Accept => {
                let l = inner.listener.as_mut().expect("a listener while accepting");
                match l.accept(Bound::new(Duration::from_millis(1), NET_TIMEOUT_VAR)) {
                    Ok(r) => {
                        inner.link = Link::Recv(r);
                        inner.listener = None;
                        ConnState::Connected
                    }
                    Err(NetError::Timeout { .. }) => {
                        inner.last_wait = format!("core {} at {} has not connected (no matching nrt_async_sendrecv_connect)", self.peer_lnc, self.peer_ip);
                        ConnState::Accept
                    }
                    Err(e) => fail(format!("{}: accepting the sender: {e}", self.describe(lnc))),
                }
            }
            s => s,
        };
        inner.state = next;
        !matches!(inner.state, ConnState::Connected | ConnState::Failed(_))
    }
}

impl CommInner {
    /// Publishes the listen handle (retried on later steps through
    /// `pending_publish`) and moves on to accepting.
    fn publish(&mut self, comm: &Comm, lnc: u32, port: u16, key: Vec<u8>, handle: Handle) -> bool {
        match kv::set(IpAddr::V4(Ipv4Addr::LOCALHOST), port, &key, handle.as_bytes()) {
            Ok(()) => {
                self.state = ConnState::Accept;
                true
            }
            Err(e) if e.retry => {
                // Start over from the listen: the listener is dropped and a
                // fresh one published on the next step.
                self.last_wait = e.message;
                self.listener = None;
                self.state = ConnState::Start;
                true
            }
            Err(e) => {
                self.state = ConnState::Failed(failure(format!("{}: {}", comm.describe(lnc), e.message)));
                false
            }
        }
    }

    /// Logs libnrt's kind of "still waiting" line once per warning
    /// period while the rendezvous lasts.
    fn warn(&mut self, comm: &Comm, core: &Lnc) {
        if matches!(self.state, ConnState::Connected | ConnState::Failed(_)) {
            return;
        }
        let bound = core.settings.connect;
        if self.next_warn == Duration::MAX {
            self.next_warn = bound.warn_period();
        }
        let waited = comm.opened.elapsed();
        if waited >= self.next_warn && waited < bound.limit {
            (core.sink)(&format!(
                "Timeout waiting for {} to connect: {} (waited {}) - retrying; giving up after {} ({})",
                comm.describe(core.index),
                self.last_wait,
                secs(self.next_warn),
                secs(bound.limit),
                bound.variable
            ));
            self.next_warn += bound.warn_period();
        }
    }

    /// A communicator still connecting fails once the service thread,
    /// which drives its rendezvous, has died.
    fn check_service(&mut self, comm: &Comm, core: &Lnc) {
        if matches!(self.state, ConnState::Connected | ConnState::Failed(_)) {
            return;
        }
        if let Some(why) = lock(&core.died).clone() {
            self.state = ConnState::Failed(failure(format!("{} never connected: the send/recv service thread died ({why})", comm.describe(core.index))));
            self.listener = None;
        }
    }

    fn check_deadline(&mut self, comm: &Comm, settings: &Settings) {
        if matches!(self.state, ConnState::Connected | ConnState::Failed(_)) {
            return;
        }
        let waited = comm.opened.elapsed();
        if waited > settings.connect.limit {
            let what = format!("{} to connect ({})", comm.describe(comm.id.lnc()), self.last_wait);
            self.state = ConnState::Failed(SrError::new(ErrorKind::Timeout, settings.connect.timeout(what, waited).to_string()));
            self.listener = None;
        }
    }

    /// Stages and posts request `r` (caller or service thread).
    fn start(&mut self, r: usize) {
        let req = &mut self.reqs[r];
        let len = req.len;
        // Reuses the slot's buffer, whose room `post` reserved.
        req.staging.resize(len, 0);
        let posted = match &mut self.link {
            Link::Send(s) => {
                let payload = req.payload.as_ref().expect("a posted request has its tensor");
                match payload.read(req.offset, &mut req.staging[..len]) {
                    // SAFETY: the staging buffer belongs to the request and is
                    // neither touched nor resized until the transport is done
                    // with it (test reports done or failed, or cancel returns).
                    Ok(()) => unsafe { s.isend(req.staging.as_ptr(), len, None) },
                    Err(e) => Err(NetError::Invalid(format!("reading the tensor to send: {e}"))),
                }
            }
            // SAFETY: as above, for the receive into the staging buffer.
            Link::Recv(rc) => unsafe { rc.irecv(req.staging.as_mut_ptr(), len, None) },
            Link::None => Err(NetError::Invalid("the communicator has no connection".into())),
        };
        match posted {
            Ok(net) => req.state = ReqState::Posted(net),
            Err(e) => {
                req.error = Some(failure(format!("Failed to post async sendrecv request: {e}")));
                req.state = ReqState::Error;
            }
        }
    }

    /// Posts what waits in the stash, in order (service thread).
    fn drain(&mut self) {
        while let Some(r) = self.stash.pop_front() {
            self.start(r as usize);
        }
    }

    fn release(&mut self, r: usize) {
        let req = &mut self.reqs[r];
        req.state = ReqState::Free;
        req.generation = 0;
        req.payload = None;
        req.error = None;
        if req.staging.capacity() > KEEP_STAGING {
            req.staging = Vec::new();
        }
        self.free.push(r as u8);
    }

    fn poll(&mut self, r: usize, comm: &Comm, settings: &Settings) -> SrResult<Option<usize>> {
        let waited = self.reqs[r].posted.elapsed();
        let timed_out = waited > settings.transfer.limit;
        let what = |req: &Req| format!("a {} of {} bytes on {} to complete", comm.dir.name(), req.len, comm.describe(comm.id.lnc()));
        match self.reqs[r].state {
            ReqState::Free => unreachable!("checked by the caller"),
            ReqState::Stashed if timed_out => {
                let e = SrError::new(ErrorKind::Timeout, settings.transfer.timeout(what(&self.reqs[r]), waited).to_string());
                self.stash.retain(|s| *s as usize != r);
                self.release(r);
                Err(e)
            }
            ReqState::Stashed => Ok(None),
            ReqState::Error => {
                let e = self.reqs[r].error.take().unwrap_or_else(|| failure("the request failed"));
                self.release(r);
                Err(e)
            }
            ReqState::Posted(net) => {
                let tested = match &mut self.link {
                    Link::Send(s) => s.test(net),
                    Link::Recv(rc) => rc.test(net),
                    Link::None => Err(NetError::Invalid("the communicator has no connection".into())),
                };
                match tested {
                    Ok(Some(n)) => {
                        let req = &self.reqs[r];
                        if comm.dir == Direction::Recv {
                            let payload = req.payload.as_ref().expect("a posted request has its tensor");
                            if let Err(e) = payload.write(req.offset, &req.staging[..n]) {
                                self.release(r);
                                return Err(failure(format!("writing {n} received bytes into the tensor: {e}")));
                            }
                        }
                        self.release(r);
                        Ok(Some(n))
                    }
                    Ok(None) if timed_out => {
                        let e = SrError::new(ErrorKind::Timeout, settings.transfer.timeout(what(&self.reqs[r]), waited).to_string());
                        let _ = match &mut self.link {
                            Link::Send(s) => s.cancel(net),
                            Link::Recv(rc) => rc.cancel(net),
                            Link::None => Ok(()),
                        };
                        self.release(r);
                        Err(e)
                    }
                    Ok(None) => Ok(None),
                    Err(e) => {
                        let m = format!("{} failed: {e}", what(&self.reqs[r]).trim_end_matches(" to complete"));
                        self.release(r);
                        Err(failure(m))
                    }
                }
            }
        }
    }

    /// Withdraws posted requests and drops the connection (close).
    fn teardown(&mut self) {
        for r in 0..self.reqs.len() {
            if let ReqState::Posted(net) = self.reqs[r].state {
                let _ = match &mut self.link {
                    Link::Send(s) => s.cancel(net),
                    Link::Recv(rc) => rc.cancel(net),
                    Link::None => Ok(()),
                };
            }
            if !matches!(self.reqs[r].state, ReqState::Free) {
                self.release(r);
            }
        }
        self.stash.clear();
        self.link = Link::None;
        self.listener = None;
    }
}

/// [`service`] with its panic guard: a panic is recorded for the tests
/// of what the thread would have advanced, and `close` is woken.
fn guarded_service(core: &Lnc) {
    let _exited = Exited(core);
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| service(core))) {
        let why = p.downcast_ref::<&str>().map(|s| (*s).to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
        let why = format!("it panicked: {why}");
        (core.sink)(&format!("async send/recv on logical neuron core {}: the service thread died ({why})", core.index));
        *lock(&core.died) = Some(why);
    }
}

/// The service thread of one logical core: advances rendezvous one step
/// per communicator per round and posts what callers queued. It sleeps
/// on the core's condition variable when nothing is pending (woken by a
/// new communicator or a queued post), and polls every 200 us while a
/// rendezvous is in progress.
fn service(core: &Lnc) {
    let mut comms: Vec<Arc<Comm>> = Vec::with_capacity(MAX_COMMS_PER_LNC);
    while !core.shutdown.load(Ordering::Acquire) {
        comms.clear();
        comms.extend(lock(&core.comms).iter().flatten().cloned());
        let mut pending = false;
        for c in &comms {
            let connecting = !matches!(lock(&c.inner).state, ConnState::Connected | ConnState::Failed(_));
            if connecting {
                pending |= c.step(core);
            } else {
                let mut inner = lock(&c.inner);
                inner.drain();
                // A connection's first message and posted transfers move
                // only when someone calls the transport: keep polling
                // while anything is in flight, so a peer in this process
                // waiting on us is not starved.
                pending |= inner.free.len() < MAX_PENDING_REQUESTS || c.opened.elapsed() < FIRST_MESSAGE_GRACE;
            }
        }
        if pending {
            // Errors surface on the requests' own tests.
            let _ = core.transport.progress();
        }
        let mut work = lock(&core.work);
        if !*work {
            let nap = if pending { Duration::from_micros(200) } else { Duration::from_millis(50) };
            work = core.wake.wait_timeout(work, nap).unwrap_or_else(|e| e.into_inner()).0;
        }
        *work = false;
    }
}

#[cfg(test)]
mod tests;
