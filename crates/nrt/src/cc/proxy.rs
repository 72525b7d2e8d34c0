//! The network proxy of one operation in one process: the host thread that
//! plays the NIC between this process's ranks and the others'. (A loaded
//! NEFF's chain of cross-process collectives runs one per rank and
//! execution, on that rank's connections, each collective gated on the
//! rank reaching it: [`super::neff_net`].)
//!
//! The protocol is nec.h's `enc_net_host_memory` one, on the simulated
//! device's bytes: a rank's DMA copies a step's bytes into an outbox and
//! then writes the step's post index into a post word of host-visible
//! memory; the proxy polls that word, reads the outbox and sends it over
//! the [`nrt_net::Transport`] (libfabric). On the receiving side it lands
//! the message in the rank's inbox and rings the doorbell of the landing
//! step on the rank's own DMA queue, which reduces (in-DMA) or copies it
//! into place and raises the signals the remote step would have raised.
//! The device never sees the network; the runtime never copies between
//! ranks' buffers.
//!
//! Per connection, the first message of an operation is a header naming
//! the op, so ranks that disagree fail with a message naming both sides.
//! Every wait is bounded by `NEURON_RT_CC_NET_TIMEOUT` (counted from the
//! last progress) and logs CCOM-style warnings while it lasts. A failure
//! sends an abort message to every peer this process sends to, so they
//! fail at once with the reason instead of waiting out the bound.
//!
//! The thread always leaves an outcome: a panic inside the operation is a
//! failure like any other (NRT_NETWORK_PROXY_FAILURE, peers told), and
//! one anywhere else in the thread is still published as one. Those who
//! wait for the outcome ([`Proxy::outcome`], an execution's harvest
//! through [`Proxy::state`]) also watch the thread: one that ended
//! without an outcome, or that neither progressed nor failed for its
//! bound plus [`STALL_GRACE`], is a failure naming it.

use super::net::{LaneName, Link, NetWorld, data_link};
use super::proxy_work::{CREDIT_LEN, Work};
use crate::log::{Level, Module};
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueId};
use nrt_net::queue::{RecvQueue, Region, SendQueue};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Length of a header message.
const HEADER_LEN: usize = 256;
/// Length of an abort message.
const ABORT_LEN: usize = 600;
/// Smallest receive buffer (so an abort always fits); smaller messages are
/// always staged through a host buffer.
pub const MIN_RECV: usize = 1024;
const HEADER_MAGIC: &[u8; 12] = b"NRTCC-OP\0\0\0\0";
const ABORT_MAGIC: &[u8; 12] = b"NRTCC-ABORT\0";
const CREDIT_MAGIC: &[u8; 8] = b"NRTCC-CR";
/// Messages in flight per connection and direction.
const WINDOW: usize = 16;
/// How long past its own bound (`NEURON_RT_CC_NET_TIMEOUT` without
/// progress) a waiter gives a proxy that neither progressed nor failed
/// before it stops waiting: the proxy is stuck outside its own checks.
pub const STALL_GRACE: Duration = Duration::from_secs(10);
/// How often a waiter looks at the proxy thread between outcomes.
const LOOK: Duration = Duration::from_millis(200);

/// Injected failures of a proxy (`NEURON_SIM_INJECT`, [`crate::inject`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Injected {
    /// `proxy_fail:after=N`: fail before sending message N+1.
    pub fail_after: Option<u64>,
    /// `proxy_panic:after=N`: panic before sending message N+1.
    pub panic_after: Option<u64>,
    /// `proxy_slow:ms=D`: sleep D ms before ringing each landing (a slow
    /// peer).
    pub slow_ms: Option<u64>,
}

impl Injected {
    /// The proxy kinds listed in `env`'s `NEURON_SIM_INJECT`.
    pub fn from_env(env: &crate::config::Env) -> Injected {
        Injected {
            fail_after: crate::inject::after(env, crate::inject::PROXY_FAIL),
            panic_after: crate::inject::after(env, crate::inject::PROXY_PANIC),
            slow_ms: crate::inject::value(env, crate::inject::PROXY_SLOW, "ms"),
        }
    }
}

/// The device side of the proxy: what it reads, writes and rings.
pub trait DeviceBytes: Send + Sync {
    /// Reads device memory (the NIC reading host-visible memory).
    fn read(&self, addr: u64, buf: &mut [u8]) -> NrtResult<()>;
    /// Writes device memory (the NIC landing a message).
    fn write(&self, addr: u64, data: &[u8]) -> NrtResult<()>;
    /// Rings a queue's doorbell for `pairs` descriptor pairs.
    fn ring(&self, core: CoreId, queue: DmaQueueId, pairs: u32) -> NrtResult<()>;
}

impl DeviceBytes for Arc<dyn nrt_hal::Device> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> NrtResult<()> {
        nrt_hal::Device::read(&**self, DeviceAddr(addr), buf).map_err(|e| NrtError::failure(format!("proxy read of {} bytes at {addr:#x}: {e}", buf.len())))
    }
    fn write(&self, addr: u64, data: &[u8]) -> NrtResult<()> {
        nrt_hal::Device::write(&**self, DeviceAddr(addr), data).map_err(|e| NrtError::failure(format!("proxy write of {} bytes at {addr:#x}: {e}", data.len())))
    }
    fn ring(&self, core: CoreId, queue: DmaQueueId, pairs: u32) -> NrtResult<()> {
        self.dma_tail_increment(core, queue, pairs, pairs).map_err(|e| NrtError::failure(format!("proxy doorbell: {e}")))
    }
}

/// Everything the proxy thread needs for one operation.
pub struct Job {
    /// The world.
    pub world: Arc<NetWorld>,
    /// The device of the local ranks.
    pub device: Box<dyn DeviceBytes>,
    /// What the op is (the header text; must match on every peer).
    pub op: String,
    /// What the proxy sends, receives and submits.
    pub work: Arc<Work>,
    /// Injected failures.
    pub inject: Injected,
    /// A word of device memory in which the rank's device counts the
    /// job's collectives it reached (it writes `j + 1` on reaching the
    /// one of ordinal `j`): collective `j`'s landings are not rung before
    /// the word exceeds `j` (in-NEFF collectives, whose buffers the
    /// engines may still be computing when a peer's message arrives).
    /// `None`: ring at once.
    pub gate: Option<u64>,
    /// The local ranks' proxy areas registered with the world's
    /// transports (transport index, region): messages of at least
    /// [`MIN_RECV`] bytes are sent from the outbox and received into the
    /// inbox where they are. Empty: every message is staged through a
    /// host buffer (a device whose memory is not mapped).
    pub regions: Vec<(usize, Arc<Region>)>,
}

impl Job {
    /// The region of transport `kind` holding `bytes` at `addr`, for a
    /// message that goes without a staging buffer.
    fn region(&self, kind: usize, addr: u64, bytes: u64) -> Option<&Arc<Region>> {
        if bytes < MIN_RECV as u64 {
            return None;
        }
        self.regions.iter().find(|(k, r)| {
            let (base, len) = r.device_range();
            *k == kind && addr >= base.get() && addr + bytes <= base.get() + len
        }).map(|(_, r)| r)
    }
}

/// The proxy's outcome, shared with the ranks that wait for it.
#[derive(Debug)]
pub struct Proxy {
    /// The op (the header text), for messages.
    op: String,
    /// The proxy's own bound (progress within it).
    bound: nrt_net::Bound,
    result: Mutex<Option<NrtResult<()>>>,
    done: Condvar,
    /// Every peer's header arrived: the peers reached this operation (the
    /// cross-process barrier).
    met: AtomicBool,
    /// Set by [`Proxy::stop`]: the proxy fails with this error.
    stop: Mutex<Option<NrtError>>,
    /// Moves at every round of the proxy's loop that made progress.
    progress: AtomicU64,
    /// Cleared when the proxy thread ends, however it ends.
    alive: AtomicBool,
}

/// Clears [`Proxy::alive`] when the proxy thread ends (also by unwinding)
/// and wakes the waiters, who then find the outcome or its absence.
struct Alive(Arc<Proxy>);

impl Drop for Alive {
    fn drop(&mut self) {
        let p = &self.0;
        {
            let mut r = p.result.lock().unwrap_or_else(|e| e.into_inner());
            if r.is_none() {
                *r = Some(Err(NrtError::new(NrtStatus::NetworkProxyFailure, format!("the collectives network proxy thread of {} ended without an outcome", p.op))));
            }
        }
        p.alive.store(false, Ordering::Release);
        p.done.notify_all();
    }
}

/// What a proxy is doing, as an execution's harvest sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyState {
    /// Waiting for a peer's header (the barrier has not passed).
    Barrier,
    /// Every peer reached the operation; bytes are moving (or all moved).
    Running,
    /// Failed with this status.
    Failed(NrtStatus),
}

impl Proxy {
    /// The outcome object of `job`'s operation, before it runs.
    pub(super) fn new(job: &Job) -> Arc<Proxy> {
        Arc::new(Proxy {
            op: job.op.clone(),
            bound: job.world.net,
            result: Mutex::new(None),
            done: Condvar::new(),
            met: AtomicBool::new(false),
            stop: Mutex::new(None),
            progress: AtomicU64::new(0),
            alive: AtomicBool::new(true),
        })
    }

    /// Starts a thread of its own for `job` (an operation that may make
    /// the first connections of its links, whose accept waits: the
    /// load-time meeting, a standalone collective). The thread ends with
    /// the operation.
    pub fn start(job: Job) -> NrtResult<Arc<Proxy>> {
        let p = Proxy::new(&job);
        let mut op = Running::new(job, p.clone());
        std::thread::Builder::new()
            .name("nrt-cc-proxy".into())
            .spawn(move || {
                let mut idle = Idle::default();
                loop {
                    match op.pass() {
                        Pass::Ended => return op.end(),
                        Pass::Progress => idle.reset(),
                        Pass::Idle => idle.wait(op.world()),
                    }
                }
            })
            .map_err(|e| NrtError::failure(format!("cannot start the collectives proxy thread: {e}")))?;
        Ok(p)
    }

    /// The outcome once the proxy ended, `None` while it runs.
    pub fn poll(&self) -> Option<NrtResult<()>> {
        self.result.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What the proxy is doing (allocation-free: an execution's harvest
    /// asks at every sweep). A thread that ended without an outcome is a
    /// failure.
    pub fn state(&self) -> ProxyState {
        match &*self.result.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(Err(e)) => ProxyState::Failed(e.status),
            Some(Ok(())) => ProxyState::Running,
            None if !self.alive.load(Ordering::Acquire) => ProxyState::Failed(NrtStatus::NetworkProxyFailure),
            None if self.met.load(Ordering::Acquire) => ProxyState::Running,
            None => ProxyState::Barrier,
        }
    }

    /// Makes a running proxy fail with `e` (its peers are told, as for
    /// any failure); no effect once it ended.
    pub fn stop(&self, e: NrtError) {
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
    }

    fn stopped(&self) -> Option<NrtError> {
        self.stop.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Waits at most `d` for the outcome.
    pub fn wait(&self, d: Duration) -> Option<NrtResult<()>> {
        let g = self.result.lock().unwrap_or_else(|e| e.into_inner());
        let (g, _) = self.done.wait_timeout_while(g, d, |r| r.is_none() && self.alive.load(Ordering::Acquire)).unwrap_or_else(|e| e.into_inner());
        g.clone()
    }

    /// Waits for the outcome, calling `waiting` with the time waited so far
    /// every few hundred milliseconds (for warnings). Bounded: the proxy
    /// fails by itself after its bound without progress; a proxy thread
    /// that ended without an outcome fails the wait at once, and one that
    /// neither progressed nor failed for its bound plus [`STALL_GRACE`] is
    /// stopped and fails it with NRT_TIMEOUT naming the proxy.
    pub fn outcome(&self, mut waiting: impl FnMut(Duration)) -> NrtResult<()> {
        let t0 = Instant::now();
        let mut seen = self.progress.load(Ordering::Relaxed);
        let mut since = t0;
        loop {
            if let Some(r) = self.wait(LOOK) {
                return r;
            }
            let now = Instant::now();
            let p = self.progress.load(Ordering::Relaxed);
            if p != seen {
                (seen, since) = (p, now);
            } else if now.duration_since(since) >= self.bound.limit + STALL_GRACE {
                let e = NrtError::new(
                    NrtStatus::Timeout,
                    format!(
                        "the collectives network proxy of {} made no progress for {:.1} sec and did not fail by its own bound of {:.1} sec ({}): it is stuck",
                        self.op,
                        now.duration_since(since).as_secs_f64(),
                        self.bound.limit.as_secs_f64(),
                        self.bound.variable
                    ),
                );
                self.stop(e.clone());
                return Err(e);
            }
            waiting(now.duration_since(t0));
        }
    }
}

/// A message waiting for room on its connection.
enum Payload {
    /// Staged (control messages; a device whose memory is not registered).
    Owned(Vec<u8>),
    /// In the outbox of a registered region: (region, device address,
    /// bytes), sent from there.
    InOutbox(Arc<Region>, u64, usize),
}

struct OutConn {
    link: Link,
    /// The world's transport of the link.
    kind: usize,
    q: SendQueue,
    /// Messages waiting to be sent, each with the credits it needs.
    queued: VecDeque<(Payload, u64)>,
    /// The operation's header (the first message) went.
    header_sent: bool,
    /// Sends completed (the header first).
    completed: u64,
    /// Credits the receiver sent back.
    credits: u64,
    /// The front message is waiting for a credit (counted once).
    held: bool,
}

impl OutConn {
    /// Data messages whose send completed (their outbox slot is free).
    fn data_completed(&self) -> u64 {
        self.completed.saturating_sub(1)
    }
}

struct InConn {
    link: Link,
    kind: usize,
    q: RecvQueue,
    /// The header is the oldest receive until it has been checked.
    header_done: bool,
    header_posted: bool,
    next_post: usize,
    next_done: usize,
    /// A credit link: the data link whose credits it carries.
    credits_for: Option<Link>,
}

fn header(op: &str) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_LEN];
    h[..12].copy_from_slice(HEADER_MAGIC);
    let t = op.as_bytes();
    let n = t.len().min(HEADER_LEN - 12);
    h[12..12 + n].copy_from_slice(&t[..n]);
    h
}

fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn credit(n: u64) -> Vec<u8> {
    let mut m = vec![0u8; CREDIT_LEN as usize];
    m[..8].copy_from_slice(CREDIT_MAGIC);
    m[8..].copy_from_slice(&n.to_le_bytes());
    m
}

fn abort(e: &NrtError) -> Vec<u8> {
    let mut m = vec![0u8; ABORT_LEN];
    m[..12].copy_from_slice(ABORT_MAGIC);
    m[12..16].copy_from_slice(&(e.status as i32).to_le_bytes());
    let t = e.message.as_bytes();
    let n = t.len().min(ABORT_LEN - 17);
    m[16..16 + n].copy_from_slice(&t[..n]);
    m
}

/// The error a peer's abort message carries, if `b` is one.
fn parse_abort(world: &NetWorld, from: u32, b: &[u8]) -> Option<NrtError> {
    if b.len() != ABORT_LEN || &b[..12] != ABORT_MAGIC {
        return None;
    }
    let code = i32::from_le_bytes(b[12..16].try_into().ok()?);
    let status = NrtStatus::from_code(code).unwrap_or(NrtStatus::Failure);
    Some(NrtError::new(status, format!("{} stopped the collective: {}", world.who(from), text(&b[16..]))))
}

/// A little-endian device word (post, relay and free words).
fn read_word(dev: &dyn DeviceBytes, at: u64) -> NrtResult<u64> {
    let mut w = [0u8; 8];
    dev.read(at, &mut w)?;
    Ok(u64::from_le_bytes(w))
}

/// Message `i` (counted from 0) of `n` on `link`, for messages:
/// `message 3 of 5 on lane 0`, or `credit 3 of 5 for lane 0` on a credit
/// connection (`lane 0 of physical core 1` on the second ring channel).
fn what_of(link: Link, i: usize, n: usize) -> String {
    match data_link(link) {
        Some(d) => format!("credit {} of {n} for {}", i + 1, LaneName(d.2)),
        None => format!("message {} of {n} on {}", i + 1, LaneName(link.2)),
    }
}

fn net(e: nrt_net::NetError, what: impl FnOnce() -> String) -> NrtError {
    super::net::net_err(&what(), &e)
}

/// Tells the peers `outs` sends to that the operation failed with `e`
/// (briefly: they fail at once instead of waiting out their bound), logs
/// a proxy failure and marks the world failed.
fn fail_world(world: &NetWorld, outs: Vec<OutConn>, e: &NrtError) {
    let msg = abort(e);
    for o in outs {
        let mut c = o.q.into_comm();
        let _ = nrt_net::transport::send(&mut *c, &msg, nrt_net::Bound::new(Duration::from_secs(1), nrt_net::limits::NET_TIMEOUT_VAR), &world.sink);
    }
    if e.status == NrtStatus::NetworkProxyFailure {
        crate::log::write(Level::Error, Module::Nrt, "cc_proxy", format_args!("EFA network proxy operation failed: {}", e.message));
    }
    world.poison(e);
}

/// An operation dropped before it ended (its proxy thread unwound, or
/// dropped it queued): a failure naming the thread, told to the peers as
/// any failure is; the world is failed (the operation's connections are
/// gone).
impl Drop for Running {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let thread = std::thread::current();
        let how = if std::thread::panicking() { "panicked" } else { "ended" };
        let e = NrtError::new(NrtStatus::NetworkProxyFailure, format!("the collectives network proxy thread {} {how} during {}; the operation ended without an outcome", thread.name().unwrap_or("(unnamed)"), self.job.op));
        fail_world(&self.job.world, std::mem::take(&mut self.outs), &e);
        self.alive.0.result.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(Err(e));
    }
}

/// What one pass over an operation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Something moved.
    Progress,
    /// Nothing moved (the caller backs off before the next pass).
    Idle,
    /// The operation ended (its outcome is in `Running::outcome`).
    Ended,
}

/// The back-off of a proxy thread that found nothing to do: yields
/// first, then sleeps a little longer each time, driving the transports'
/// progress.
#[derive(Default)]
pub(super) struct Idle {
    spins: u32,
}

impl Idle {
    pub(super) fn reset(&mut self) {
        self.spins = 0;
    }

    pub(super) fn wait(&mut self, world: &NetWorld) {
        self.spins = self.spins.saturating_add(1);
        if self.spins < 32 {
            std::thread::yield_now();
        } else {
            let _ = world.progress();
            std::thread::sleep(Duration::from_micros(if self.spins < 1000 { 20 } else { 200 }));
        }
    }
}

/// One operation in progress on a proxy thread: its job, connections and
/// how far it got. Dropped without an outcome (its thread unwound), its
/// [`Alive`] guard makes that a failure for the waiters.
pub(super) struct Running {
    job: Job,
    alive: Alive,
    outs: Vec<OutConn>,
    ins: Vec<InConn>,
    /// The connections were taken (the first pass).
    connected: bool,
    posted: Vec<usize>,
    /// Per submit lane and step: its message arrived (or it lands none).
    landed: Vec<Vec<bool>>,
    submitted: Vec<usize>,
    /// Per submit lane: the relay word's last value read.
    relayed: Vec<u64>,
    /// Per submit lane: the step last counted as waiting for an outbox
    /// slot.
    held_at: Vec<usize>,
    sent_msgs: u64,
    last: Instant,
    started: Instant,
    warned: Instant,
    /// Collectives the rank reached (the gate's value).
    open: u32,
    last_op: u32,
    /// What a peer's header holds when it runs the same operation (the
    /// text is cut to the header's length).
    mine: String,
    outcome: Option<NrtResult<()>>,
    /// [`Running::end`] ran (else dropping it is a failure).
    ended: bool,
}

impl Running {
    pub(super) fn new(job: Job, proxy: Arc<Proxy>) -> Running {
        let now = Instant::now();
        Running {
            posted: vec![0; job.work.sends.len()],
            landed: job.work.submits.iter().map(|s| s.steps.iter().map(|st| !st.landing).collect()).collect(),
            submitted: vec![0; job.work.submits.len()],
            relayed: vec![0; job.work.submits.len()],
            held_at: vec![usize::MAX; job.work.submits.len()],
            open: if job.gate.is_none() { u32::MAX } else { 0 },
            last_op: job.work.sends.iter().map(|s| s.op).chain(job.work.submits.iter().map(|s| s.op)).max().unwrap_or(0),
            mine: text(&header(&job.op)[12..]),
            job,
            alive: Alive(proxy),
            outs: Vec::new(),
            ins: Vec::new(),
            connected: false,
            sent_msgs: 0,
            last: now,
            started: now,
            warned: now,
            outcome: None,
            ended: false,
        }
    }

    /// One round: takes the connections on the first, then moves what can
    /// move. A failure or a panic ends the operation.
    /// Its world.
    pub(super) fn world(&self) -> &NetWorld {
        &self.job.world
    }

    pub(super) fn pass(&mut self) -> Pass {
        let r = crate::worker::guarded("the collectives network proxy", NrtStatus::NetworkProxyFailure, || {
            if !self.connected {
                self.connected = true;
                self.connect()?;
            }
            self.round()
        });
        match r {
            Ok(Some(p)) => p,
            Ok(None) => {
                self.outcome = Some(Ok(()));
                Pass::Ended
            }
            Err(e) => {
                self.outcome = Some(Err(e));
                Pass::Ended
            }
        }
    }

    fn connect(&mut self) -> NrtResult<()> {
        let world = self.job.world.clone();
        world.check()?;
        let work = self.job.work.clone();
        for &link in &work.out_links {
            let q = SendQueue::new(world.take_send(link)?);
            self.outs.push(OutConn { link, kind: world.route(link.0, link.1), q, queued: VecDeque::from([(Payload::Owned(header(&self.job.op)), 0)]), header_sent: false, completed: 0, credits: 0, held: false });
        }
        for rl in &work.recvs {
            let q = RecvQueue::new(world.take_recv(rl.link)?);
            self.ins.push(InConn { link: rl.link, kind: world.route(rl.link.0, rl.link.1), q, header_done: false, header_posted: false, next_post: 0, next_done: 0, credits_for: data_link(rl.link) });
        }
        Ok(())
    }

    /// Ends the ended operation: gives its connections back (success) or
    /// tells the peers it sends to and fails the world (failure), then
    /// publishes the outcome to its waiters.
    pub(super) fn end(mut self) {
        self.ended = true;
        let world = self.job.world.clone();
        let (outs, ins) = (std::mem::take(&mut self.outs), std::mem::take(&mut self.ins));
        let r = self.outcome.take().unwrap_or_else(|| Err(NrtError::new(NrtStatus::NetworkProxyFailure, format!("the collectives network proxy of {} ended without an outcome", self.job.op))));
        match &r {
            Ok(()) => world.give_back(outs.into_iter().map(|o| (o.link, o.q.into_comm())).collect(), ins.into_iter().map(|i| (i.link, i.q.into_comm())).collect()),
            Err(e) => {
                drop(ins);
                fail_world(&world, outs, e);
            }
        }
        self.alive.0.result.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(r);
        // `self.alive` drops here: the waiters are woken.
    }

    /// One round over the operation's receives (and the credits they give
    /// back), gate, submits, posts and sends. `None`: it is complete.
    fn round(&mut self) -> NrtResult<Option<Pass>> {
        let job = &self.job;
        let work = &*job.work;
        let proxy = &*self.alive.0;
        let world = &*job.world;
        let dev = &*job.device;
        let bound = world.net;
        let (outs, ins) = (&mut self.outs, &mut self.ins);
        let (posted, landed, submitted, relayed, held_at) = (&mut self.posted, &mut self.landed, &mut self.submitted, &mut self.relayed, &mut self.held_at);
        let recv_of = |link: Link| work.recvs.iter().find(|r| r.link == link).expect("recv link");
        let out_of = |outs: &[OutConn], link: Link| outs.iter().position(|o| o.link == link).ok_or_else(|| NrtError::failure(format!("the collectives proxy of {} has no connection {link:?}", job.op)));
        if let Some(e) = proxy.stopped() {
            return Err(e);
        }
        let mut progress = false;
        // Receives: the header first, then a window of messages, each
        // posted once its inbox slot is free; a credit goes back for it.
        for c in ins.iter_mut() {
            let rl = recv_of(c.link);
            if !c.header_posted {
                c.header_posted = true;
                c.q.post(vec![0u8; MIN_RECV]).map_err(|e| net(e, || format!("posting the header receive from {}", world.who(c.link.0))))?;
            }
            while c.next_post < rl.msgs.len() && c.q.in_flight() < WINDOW {
                let m = rl.msgs[c.next_post];
                if let Some((word, value)) = m.free
                    && read_word(dev, word)? < value
                {
                    break;
                }
                let region = if c.credits_for.is_some() { None } else { job.region(c.kind, m.addr, m.bytes) };
                let in_place = region.is_some();
                let posted = match region {
                    // Into the inbox, where the landing reads it.
                    Some(r) => c.q.post_region(r, DeviceAddr(m.addr), m.bytes as usize),
                    None => {
                        let want = (m.bytes as usize).max(1).max(MIN_RECV);
                        let buf = crate::host_memory::zeroed(want as u64, format_args!("a {want}-byte receive of {} from {}", job.op, world.who(c.link.0)))?;
                        c.q.post(buf)
                    }
                };
                posted.map_err(|e| net(e, || format!("posting a receive from {}", world.who(c.link.0))))?;
                if c.credits_for.is_none() {
                    world.count_message(in_place);
                }
                if m.free.is_some() {
                    // The slot is free and its receive posted: the sender
                    // may send the message.
                    let o = out_of(outs, super::net::credit_link(c.link))?;
                    outs[o].queued.push_back((Payload::Owned(credit(c.next_post as u64)), 0));
                }
                c.next_post += 1;
                progress = true;
            }
            if !c.header_done {
                let got = c.q.test_oldest().map_err(|e| net(e, || format!("the header of {} from {}", job.op, world.who(c.link.0))))?;
                let Some((b, len)) = got else { continue };
                if let Some(e) = parse_abort(world, c.link.0, &b[..len]) {
                    return Err(e);
                }
                let theirs = if len == HEADER_LEN && &b[..12] == HEADER_MAGIC { text(&b[12..len]) } else { format!("a message of {len} bytes that is not an operation header") };
                if theirs != self.mine {
                    return Err(NrtError::invalid(format!("mismatched collectives between the peers: {} runs {} but {} runs {}", world.who(c.link.1), job.op, world.who(c.link.0), theirs)));
                }
                c.header_done = true;
                progress = true;
            }
            while c.next_done < c.next_post {
                let i = c.next_done;
                let m = rl.msgs[i];
                let got = c.q.test_oldest().map_err(|e| net(e, || format!("{} from {}", what_of(c.link, i, rl.msgs.len()), world.who(c.link.0))))?;
                let Some((b, len)) = got else { break };
                if let Some(data) = c.credits_for {
                    if let Some(e) = parse_abort(world, c.link.0, &b[..len]) {
                        return Err(e);
                    }
                    if len != CREDIT_LEN as usize || &b[..8] != CREDIT_MAGIC {
                        return Err(NrtError::new(NrtStatus::NetworkProxyFailure, format!("{} from {} is not a credit ({len} bytes)", what_of(c.link, i, rl.msgs.len()), world.who(c.link.0))));
                    }
                    let o = out_of(outs, data)?;
                    outs[o].credits += 1;
                    c.next_done += 1;
                    progress = true;
                    continue;
                }
                // A message received into the inbox is there already; one
                // of another length can only be an abort.
                let in_inbox = b.is_empty();
                if in_inbox && len == ABORT_LEN {
                    let mut a = [0u8; ABORT_LEN];
                    dev.read(m.addr, &mut a)?;
                    if let Some(e) = parse_abort(world, c.link.0, &a) {
                        return Err(e);
                    }
                }
                if !in_inbox && let Some(e) = parse_abort(world, c.link.0, &b[..len]) {
                    return Err(e);
                }
                if len != (m.bytes as usize).max(1) {
                    return Err(NrtError::new(NrtStatus::NetworkProxyFailure, format!("{} from {} has {len} bytes; expected {}", what_of(c.link, i, rl.msgs.len()), world.who(c.link.0), m.bytes)));
                }
                if m.bytes > 0 && !in_inbox {
                    dev.write(m.addr, &b[..m.bytes as usize])?;
                }
                c.q.flush().map_err(|e| net(e, || "flushing a landed message".into()))?;
                landed[m.lane][m.step] = true;
                c.next_done += 1;
                progress = true;
            }
        }
        if !proxy.met.load(Ordering::Relaxed) && ins.iter().all(|c| c.header_done) {
            proxy.met.store(true, Ordering::Release);
        }
        if self.open <= self.last_op && let Some(at) = job.gate {
            let mut w = [0u8; 4];
            dev.read(at, &mut w)?;
            let now_open = u32::from_le_bytes(w);
            progress |= now_open > self.open;
            self.open = self.open.max(now_open);
        }
        let open = self.open;
        // Steps go to their queues in step order (once the rank reached
        // their collective), each once its message landed, its relay came
        // and the outbox slots it fills were sent from.
        for (k, s) in work.submits.iter().enumerate().filter(|(_, s)| s.op < open) {
            while let Some(st) = s.steps.get(submitted[k]) {
                if !landed[k][submitted[k]] {
                    break;
                }
                if let Some(v) = st.relay
                    && relayed[k] < v
                {
                    let word = s.relay_word.ok_or_else(|| NrtError::failure(format!("the collectives proxy of {} relays a lane without a relay word", job.op)))?;
                    relayed[k] = read_word(dev, word)?;
                    if relayed[k] < v {
                        break;
                    }
                }
                if st.outbox.iter().any(|&(link, need)| outs.iter().find(|o| o.link == link).is_none_or(|o| o.data_completed() < need)) {
                    if held_at[k] != submitted[k] {
                        held_at[k] = submitted[k];
                        world.count_held();
                    }
                    break;
                }
                if st.landing
                    && let Some(ms) = job.inject.slow_ms
                {
                    std::thread::sleep(Duration::from_millis(ms));
                }
                dev.ring(s.core, s.queue, st.pairs)?;
                submitted[k] += 1;
                progress = true;
            }
        }
        // The devices' posts, one collective at a time: the first with
        // posts not yet queued.
        let front = work.sends.iter().zip(posted.iter()).filter(|(s, n)| **n < s.posts.len()).map(|(s, _)| s.op).min();
        for (k, s) in work.sends.iter().enumerate() {
            if posted[k] == s.posts.len() || Some(s.op) != front {
                continue;
            }
            let v = (read_word(dev, s.post_word)? as usize).min(s.posts.len());
            while posted[k] < v {
                for p in &s.posts[posted[k]] {
                    let at = out_of(outs, (s.gid, p.dst, s.lane))?;
                    let o = &mut outs[at];
                    if let Some(r) = job.region(o.kind, p.addr, p.bytes) {
                        // Sent from the outbox where the device put it.
                        o.queued.push_back((Payload::InOutbox(r.clone(), p.addr, p.bytes as usize), p.credit));
                        continue;
                    }
                    let mut b = crate::host_memory::zeroed(p.bytes.max(1), format_args!("a {}-byte send of {} to rank {}", p.bytes, job.op, p.dst))?;
                    if p.bytes > 0 {
                        dev.read(p.addr, &mut b)?;
                    }
                    o.queued.push_back((Payload::Owned(b), p.credit));
                }
                posted[k] += 1;
                progress = true;
            }
        }
        // Sends: post what is queued and credited, retire what completed.
        for o in outs.iter_mut() {
            while o.q.in_flight() < WINDOW {
                let Some(&(_, need)) = o.queued.front() else { break };
                if need > o.credits {
                    if !o.held {
                        o.held = true;
                        world.count_held();
                    }
                    break;
                }
                o.held = false;
                let Some((b, _)) = o.queued.pop_front() else { break };
                if job.inject.fail_after.is_some_and(|n| self.sent_msgs >= n) {
                    return Err(NrtError::new(NrtStatus::NetworkProxyFailure, format!("injected network proxy failure (NEURON_SIM_INJECT=proxy_fail) sending to {}", world.who(o.link.1))));
                }
                if job.inject.panic_after.is_some_and(|n| self.sent_msgs >= n) {
                    panic!("injected panic (NEURON_SIM_INJECT=proxy_panic) sending to {}", world.who(o.link.1));
                }
                // The header and credits are not data messages.
                let (data, in_place) = (o.header_sent && data_link(o.link).is_none(), matches!(b, Payload::InOutbox(..)));
                let sent = match b {
                    Payload::Owned(b) => o.q.post(b),
                    Payload::InOutbox(r, addr, bytes) => o.q.post_region(&r, DeviceAddr(addr), bytes),
                };
                sent.map_err(|e| net(e, || format!("sending to {}", world.who(o.link.1))))?;
                if data {
                    world.count_message(in_place);
                }
                o.header_sent = true;
                self.sent_msgs += 1;
                progress = true;
            }
            while o.q.in_flight() > 0 {
                let got = o.q.test_oldest().map_err(|e| net(e, || format!("a send to {} on {}", world.who(o.link.1), LaneName(o.link.2))))?;
                if got.is_none() {
                    break;
                }
                o.completed += 1;
                progress = true;
            }
        }
        let done = ins.iter().all(|c| c.header_done && c.next_done == recv_of(c.link).msgs.len())
            && submitted.iter().zip(&work.submits).all(|(n, s)| *n == s.steps.len())
            && posted.iter().zip(&work.sends).all(|(n, s)| *n == s.posts.len())
            && outs.iter().all(|o| o.q.in_flight() == 0 && o.queued.is_empty());
        if done {
            return Ok(None);
        }
        let now = Instant::now();
        if progress {
            self.last = now;
            proxy.progress.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(Pass::Progress));
        }
        let waiting = || {
            let mut w: Vec<String> = ins
                .iter()
                .filter(|c| !c.header_done || c.next_done < recv_of(c.link).msgs.len())
                .map(|c| format!("{} from {}", what_of(c.link, c.next_done + usize::from(c.header_done), recv_of(c.link).msgs.len() + 1), world.who(c.link.0)))
                .collect();
            w.extend(work.sends.iter().zip(posted.iter()).filter(|(s, n)| **n < s.posts.len()).map(|(s, n)| format!("step {} of {} of rank {}'s device", n + 1, LaneName(s.lane), s.gid)));
            w.extend(outs.iter().filter(|o| o.held).map(|o| format!("a credit from {} for {} (its inbox slots are full)", world.who(o.link.1), LaneName(o.link.2))));
            w.extend(outs.iter().filter(|o| o.q.in_flight() > 0).map(|o| format!("a send to {} on {}", world.who(o.link.1), LaneName(o.link.2))));
            if open <= self.last_op && work.submits.iter().any(|s| s.op >= open) {
                w.push(if self.last_op == 0 { "this process's device to reach the collective".to_string() } else { format!("this process's device to reach collective {} of {}", open + 1, self.last_op + 1) });
            }
            w.join(", ")
        };
        if now.duration_since(self.last) >= bound.limit {
            return Err(NrtError::new(
                NrtStatus::Timeout,
                format!("collective {}: nothing arrived within {:.1} sec ({}); waiting for {} (did a peer exit or fail?)", job.op, bound.limit.as_secs_f64(), bound.variable, waiting()),
            ));
        }
        if now.duration_since(self.warned) >= bound.warn_period() {
            self.warned = now;
            (world.sink)(&format!("Timeout waiting for RX: {} (waited {} sec) - retrying; giving up after {:.1} sec of no progress ({})", waiting(), now.duration_since(self.started).as_secs(), bound.limit.as_secs_f64(), bound.variable));
        }
        Ok(Some(Pass::Idle))
    }
}
