//! One execution unit: its request queue, its worker thread, its health
//! and the ways a completion is observed.
//!
//! Submitters serialise on the submit lock and push onto the
//! single-consumer [`XuQueue`]; the worker takes the front request, runs
//! it to completion on its own thread (an execution goes through
//! [`crate::exec::execute`], so the harvest state machine and its wait loop
//! are the synchronous path's), writes the status, frees the slot and
//! then signals: the per-request callback, every XU watcher, the watchers
//! registered for that sequence number, and the host threads blocked in
//! [`ExecUnit::wait`]. The worker's idle wait is a short spin on the queue
//! cursor, then a block on the unit's work event (the has-work eventfd).
//!
//! Health (libnrt's `tpb_xu_base_t.health`): HEALTHY until an execution
//! ends with a fatal status (a timeout or a hardware fault), then
//! FATAL_SHUTDOWN for good: requests already queued complete with
//! NRT_EXEC_UNIT_UNRECOVERABLE without running, and every later submit is
//! refused with it. Other units are unaffected.
//!
//! A worker that panics outside the guard around each request's work
//! dies, and its guard leaves nothing waiting: the unit goes to
//! FATAL_SHUTDOWN, the request it held completes with NRT_FAILURE and
//! every queued one with NRT_EXEC_UNIT_UNRECOVERABLE (callbacks, watchers
//! and waiters all see them; in-flight marks are released), and later
//! submits are refused naming the panic. Waits that have no timeout of
//! their own ([`ExecUnit::drain`], the implicit-async retry, the join at
//! shutdown) give up when the unit completes nothing for its request
//! limit ([`super::XuSettings::request_limit`]: the longest one request
//! may take).

use super::queue::XuQueue;
use super::seq::{SEQ_NUM_MAX, XuId};
use super::signal::EventCount;
use crate::cache_line::CacheLine;
use crate::exec::errors::poisons;
use crate::model::LoadedModel;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::tensor::TensorSet;
use crate::worker::panic_text;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle worker polls its queue before it blocks. Longer than a
/// futex wake-up on the project's VMs (~50 us), so a submitter that comes
/// back within a few wake-up times finds the worker still polling: with 20
/// us the depth-8 copy bench's mean gap was 2.8-3.4 us, with 200 us
/// 2.1-2.8 us (same run, interleaved).
pub const WORKER_SPIN: Duration = Duration::from_micros(200);
/// How long [`ExecUnit::wait`] polls for the completion before it blocks
/// (the same trade as [`WORKER_SPIN`], on the waiting side).
pub const WAIT_SPIN: Duration = Duration::from_micros(200);

/// Reports a request's sequence id and final status once, when it
/// completes (the `NRT_STATUS *` a schedule call passes, or the
/// implicit-async callback).
pub enum OnComplete {
    /// A closure.
    Once(Box<dyn FnOnce(u64, NrtStatus) + Send>),
    /// A plain function called with a word the request carries (where to
    /// write the status, which model it ran): a report that costs the
    /// submitter no allocation and the worker no cross-thread free.
    Fn(fn(u64, u64, NrtStatus), u64),
}

impl OnComplete {
    /// A closure report.
    pub fn once(f: impl FnOnce(u64, NrtStatus) + Send + 'static) -> OnComplete {
        OnComplete::Once(Box::new(f))
    }

    /// Reports (sequence id, status).
    pub fn call(self, seq: u64, status: NrtStatus) {
        match self {
            OnComplete::Once(f) => f(seq, status),
            OnComplete::Fn(f, word) => f(word, seq, status),
        }
    }
}
/// Called with (sequence id, status) when a watched request completes
/// (an eventfd registration).
pub type Notifier = Arc<dyn Fn(u64, NrtStatus) + Send + Sync>;
/// Sequence watchers a completion fires per pass over the pending list.
const FIRE_BATCH: usize = 8;
/// A host-side tensor operation run by a tensor-op unit's worker.
pub type TensorJob = Box<dyn FnOnce() -> NrtResult<()> + Send>;

/// What a request does.
pub enum Work {
    /// Run a model once on these tensor sets (device tensors only).
    Execute {
        /// The model.
        model: Arc<LoadedModel>,
        /// Inputs.
        inputs: TensorSet,
        /// Outputs.
        outputs: TensorSet,
        /// The sets' tensors were marked in flight when it was queued
        /// (implicit async); the worker releases the marks when it ends,
        /// before the completion is reported.
        in_flight: bool,
    },
    /// A tensor read, write or copy.
    Tensor(TensorJob),
}

/// A queued request.
pub struct Request {
    /// What to do.
    pub work: Work,
    /// Where the final status goes.
    pub on_complete: Option<OnComplete>,
}

/// Health of a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    /// Accepting and running requests.
    Healthy = 0,
    /// Closing: no new requests.
    Shutdown = 1,
    /// A fatal fault happened: every later request fails with 101.
    FatalShutdown = 2,
}

/// The unit's state shared by submitters, the worker and waiters. Fields
/// written on every request by one side sit on their own cache lines
/// ([`CacheLine`]): the submit lock and the work event (submitters), the
/// done event (the worker), the waiters' registration; the rest is read
/// on every request and written rarely.
struct Shared {
    id: XuId,
    queue: XuQueue<Request>,
    submit: CacheLine<Mutex<()>>,
    health: AtomicU8,
    stop: AtomicBool,
    work: CacheLine<EventCount>,
    done: CacheLine<EventCount>,
    /// The lowest sequence number a thread blocked in [`ExecUnit::wait`]
    /// waits for (`u64::MAX`: nobody): a completion before it wakes no
    /// one, so a waiter for the 4th of 8 queued requests is woken once,
    /// not after each of the first three.
    wake_at: CacheLine<AtomicU64>,
    watchers: Mutex<Vec<Notifier>>,
    watcher_count: AtomicUsize,
    pending: Mutex<Vec<(u64, Notifier)>>,
    pending_count: AtomicUsize,
    /// The longest one request may take ([`super::XuSettings::request_limit`]).
    stall: Duration,
    /// `xu_panic:after=N`: the worker panics holding request N+1
    /// (`u64::MAX`: never).
    panic_at: u64,
    /// Why the worker died (`None` while it lives or after it stopped).
    death: Mutex<Option<String>>,
    /// Set once the worker's guard completed everything after its death.
    dead: AtomicBool,
    /// Set when the worker thread ends, however it ends.
    exited: AtomicBool,
}

/// The request the worker took and has not completed yet, with its report
/// while unmade: what the worker's guard completes if it dies holding it.
type Held = Option<(u64, Option<OnComplete>)>;

/// Releases the in-flight marks of an implicit-async execution's sets when
/// dropped: when its run ends, also by unwinding.
struct Marks<'a>(&'a TensorSet, &'a TensorSet);

impl Drop for Marks<'_> {
    fn drop(&mut self) {
        release_in_flight(self.0, self.1);
    }
}

/// Marks the worker exited and wakes the waiters when the worker thread
/// ends (also by unwinding).
struct Exit<'a>(&'a Shared);

impl Drop for Exit<'_> {
    fn drop(&mut self) {
        self.0.exited.store(true, Ordering::SeqCst);
        self.0.done.notify();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn health(&self) -> Health {
        match self.health.load(Ordering::Acquire) {
            0 => Health::Healthy,
            1 => Health::Shutdown,
            _ => Health::FatalShutdown,
        }
    }

    /// Runs request `n`'s work (the worker).
    fn run(&self, n: u64, work: Work) -> NrtStatus {
        let fatal = self.health() == Health::FatalShutdown;
        match work {
            Work::Execute { model, inputs, outputs, in_flight } => {
                // Released when the run ends, before the completion is
                // reported (also if the worker dies in it).
                let _marks = in_flight.then(|| Marks(&inputs, &outputs));
                self.injected_panic(n);
                if fatal {
                    NrtStatus::ExecUnitUnrecoverable
                } else {
                    let status = status_of(|| crate::exec::execute(&model, &inputs, &outputs));
                    if poisons(status, false) {
                        crate::log_error!(crate::log::Module::Kmgr, "[{}] execution of model {} ended with {status}; the execution unit is unrecoverable", self.id, model.id);
                        self.health.store(Health::FatalShutdown as u8, Ordering::Release);
                    }
                    status
                }
            }
            Work::Tensor(_) if fatal => NrtStatus::ExecUnitUnrecoverable,
            Work::Tensor(job) => {
                self.injected_panic(n);
                status_of(job)
            }
        }
    }

    /// `xu_panic`: the worker dies holding request `n` (one comparison
    /// with a field the worker reads anyway).
    #[inline]
    fn injected_panic(&self, n: u64) {
        if n == self.panic_at {
            panic!("injected panic (NEURON_SIM_INJECT={}) in the worker of {} holding request {n}", crate::inject::XU_PANIC, self.id);
        }
    }

    fn complete(&self, n: u64, on_complete: Option<OnComplete>, status: NrtStatus) {
        let seq = self.id.seq(n);
        if let Some(f) = on_complete {
            let _ = catch_unwind(AssertUnwindSafe(|| f.call(seq, status)));
        }
        let done = self.queue.complete_front();
        debug_assert_eq!(done, n);
        // Pairs with the fence in `watch_seq` (see there).
        fence(Ordering::SeqCst);
        if self.watcher_count.load(Ordering::SeqCst) > 0 {
            for w in lock(&self.watchers).iter() {
                w(seq, status);
            }
        }
        self.fire_due(seq, status);
        // Waiters register (`wake_at`) and then read `head`; we published
        // `head` and then read the registration (the fence above): either
        // the waiter sees its request done or we see its registration. The
        // registrations are cleared before the count moves, so a waiter
        // whose registration this clears sees the count move and registers
        // again.
        if n >= self.wake_at.load(Ordering::SeqCst) {
            self.wake_at.store(u64::MAX, Ordering::SeqCst);
            self.done.notify();
        }
    }

    /// Fires the sequence watchers whose request is done (`seq` completed
    /// with `status`): outside the lock, a stack batch at a time (the
    /// worker allocates nothing).
    fn fire_due(&self, seq: u64, status: NrtStatus) {
        while self.pending_count.load(Ordering::SeqCst) > 0 {
            let mut fire: [Option<(u64, Notifier)>; FIRE_BATCH] = Default::default();
            let mut fired = 0;
            {
                let mut p = lock(&self.pending);
                let head = self.queue.head();
                let mut i = 0;
                while i < p.len() && fired < FIRE_BATCH {
                    if super::seq::seq_num(p[i].0) < head {
                        fire[fired] = Some(p.swap_remove(i));
                        fired += 1;
                    } else {
                        i += 1;
                    }
                }
                self.pending_count.store(p.len(), Ordering::SeqCst);
            }
            for (s, w) in fire.into_iter().flatten() {
                w(s, status_of_unknown(s, seq, status));
            }
            if fired < FIRE_BATCH {
                break;
            }
        }
    }

    /// The worker thread: serves the queue until shutdown; if it panics
    /// outside a request's own guard, [`Shared::die`] completes what it
    /// held and everything queued.
    fn worker(self: Arc<Shared>) {
        let _exit = Exit(&self);
        let mut held: Held = None;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| self.serve(&mut held))) {
            self.die(&panic_text(&*p), held.take());
        }
    }

    /// The worker's loop. `held` is the request taken and not completed.
    fn serve(&self, held: &mut Held) {
        loop {
            if let Some((n, req)) = self.queue.take_front() {
                let Request { work, on_complete } = req;
                *held = Some((n, on_complete));
                // Events the request produces carry its sequence id.
                let traced = crate::trace::wants_any(crate::trace::EventType::ALL_MASK);
                if traced {
                    crate::trace::set_current_seq(self.id.seq(n));
                }
                let status = self.run(n, work);
                if traced {
                    crate::trace::set_current_seq(0);
                }
                let report = held.as_mut().and_then(|h| h.1.take());
                self.complete(n, report, status);
                *held = None;
                continue;
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let seen = self.work.count();
            poll_for(Instant::now() + WORKER_SPIN, || self.queue.tail() != self.queue.head() || self.stop.load(Ordering::Acquire));
            if self.queue.tail() == self.queue.head() && !self.stop.load(Ordering::Acquire) {
                self.work.wait(seen, Duration::from_millis(100));
            }
        }
    }
}

impl Shared {
    /// The worker died of `why` holding `held`: the unit takes no more
    /// requests, the held request completes with NRT_FAILURE and every
    /// queued one with NRT_EXEC_UNIT_UNRECOVERABLE (each through the usual
    /// completion: callback, watchers, waiters), then the death is
    /// published for waiters and submitters.
    #[cold]
    fn die(&self, why: &str, held: Held) {
        {
            let _g = lock(&self.submit);
            self.health.store(Health::FatalShutdown as u8, Ordering::Release);
            *lock(&self.death) = Some(why.to_string());
        }
        let mut failed = 0u64;
        if let Some((n, report)) = held
            && self.queue.head() == n
        {
            self.complete_after_death(n, report, NrtStatus::Failure);
            failed += 1;
        }
        while self.queue.head() < self.queue.tail() {
            let head = self.queue.head();
            let (n, report) = match self.queue.take_front() {
                Some((n, Request { work, on_complete })) => {
                    if let Work::Execute { inputs, outputs, in_flight: true, .. } = &work {
                        release_in_flight(inputs, outputs);
                    }
                    (n, on_complete)
                }
                // Taken and never completed: nothing left to report.
                None => (head, None),
            };
            self.complete_after_death(n, report, NrtStatus::ExecUnitUnrecoverable);
            failed += 1;
        }
        // Sequence watchers a panicking watcher kept from firing.
        let last = self.id.seq(self.queue.head() - 1);
        let _ = catch_unwind(AssertUnwindSafe(|| self.fire_due(last, NrtStatus::ExecUnitUnrecoverable)));
        crate::log_error!(
            crate::log::Module::Kmgr,
            "[{}] the worker thread panicked: {why}; {failed} request(s) it held or had queued completed with an error; the execution unit is unrecoverable",
            self.id
        );
        self.dead.store(true, Ordering::SeqCst);
        self.wake_at.store(u64::MAX, Ordering::SeqCst);
        self.done.notify();
    }

    /// [`Shared::complete`] for the guard of a dead worker: a callback or
    /// watcher that panics again does not stop the others' completion.
    #[cold]
    fn complete_after_death(&self, n: u64, report: Option<OnComplete>, status: NrtStatus) {
        if catch_unwind(AssertUnwindSafe(|| self.complete(n, report, status))).is_err() && self.queue.head() == n {
            self.queue.complete_front();
            let _ = catch_unwind(AssertUnwindSafe(|| self.fire_due(self.id.seq(n), status)));
        }
    }

    /// The error of a request or submit the dead worker can no longer
    /// take (`None` while the worker lives).
    fn death_error(&self, what: impl FnOnce() -> String) -> Option<NrtError> {
        let why = lock(&self.death).clone()?;
        Some(NrtError::new(NrtStatus::ExecUnitUnrecoverable, format!("{}: the worker thread of {} died ({why})", what(), self.id)))
    }
}

/// The status of running `f` on the worker: its error's, success, or
/// NRT_FAILURE if it panicked (the worker lives on).
fn status_of(f: impl FnOnce() -> NrtResult<()>) -> NrtStatus {
    catch_unwind(AssertUnwindSafe(f)).map_or(NrtStatus::Failure, |r| r.err().map_or(NrtStatus::Success, |e| e.status))
}

/// Releases the in-flight marks an implicit-async execution put on the
/// tensors of its sets (one per occurrence, as they were taken).
pub(crate) fn release_in_flight(inputs: &TensorSet, outputs: &TensorSet) {
    for (_, t) in inputs.iter().chain(outputs.iter()) {
        t.unmark_in_flight();
    }
}

/// Polls between two yields in [`poll_for`]. When the submitter and the
/// worker share one CPU (the other one busy, or the first ~50 ms before
/// the kernel moves the new worker away) every refill of the queue costs
/// a hand-over both ways, and each side spins this many polls before it
/// gives the CPU up: with 64 a depth-8 copy run lost ~8.7 us per refill
/// (mean gap 1.63-1.81 us), with 8 ~5.5 us (1.27-1.48 us); with a CPU
/// each the two measured the same (0.8-1.6 us).
const POLLS_PER_YIELD: u32 = 8;

/// Polls `done` until it holds or `until` passes (the bounded spin before
/// a block, on either side of the queue).
fn poll_for(until: Instant, mut done: impl FnMut() -> bool) {
    let mut polls = 0u32;
    while !done() {
        std::hint::spin_loop();
        polls = polls.wrapping_add(1);
        // Reading the clock costs more than a poll: look every
        // POLLS_PER_YIELD, and let the OS run another thread of this CPU
        // meanwhile. With more runnable threads than cores (a busy
        // machine, or the simulator's workers beside these) a pure spin
        // holds the core the other side of the queue needs to make the
        // progress this poll waits for; on an idle CPU the yield returns
        // at once.
        if polls.is_multiple_of(POLLS_PER_YIELD) {
            if Instant::now() >= until {
                return;
            }
            std::thread::yield_now();
        }
    }
}

/// The status a sequence watcher reports: the completing request's own
/// status when it is the one watched, else success (its own status went
/// to its submitter; the watcher only learns that it finished).
fn status_of_unknown(watched: u64, completing: u64, status: NrtStatus) -> NrtStatus {
    if watched == completing { status } else { NrtStatus::Success }
}

/// See the module docs.
pub struct ExecUnit {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for ExecUnit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecUnit")
            .field("id", &self.shared.id)
            .field("head", &self.shared.queue.head())
            .field("tail", &self.shared.queue.tail())
            .field("health", &self.shared.health())
            .finish()
    }
}

impl ExecUnit {
    /// A unit with a queue of `depth` requests and its worker thread, the
    /// default request limit and no injected panic.
    pub fn start(id: XuId, depth: u64) -> NrtResult<ExecUnit> {
        let d = super::XuSettings::default();
        ExecUnit::start_with(id, depth, d.request_limit, d.panic_after)
    }

    /// A unit with a queue of `depth` requests and its worker thread;
    /// waits without a timeout of their own give up after `request_limit`
    /// without a completion; `panic_after` is `xu_panic:after=N`.
    pub fn start_with(id: XuId, depth: u64, request_limit: Duration, panic_after: Option<u64>) -> NrtResult<ExecUnit> {
        let shared = Arc::new(Shared {
            id,
            queue: XuQueue::new(depth)?,
            submit: CacheLine(Mutex::new(())),
            health: AtomicU8::new(Health::Healthy as u8),
            stop: AtomicBool::new(false),
            work: CacheLine(EventCount::default()),
            done: CacheLine(EventCount::default()),
            wake_at: CacheLine(AtomicU64::new(u64::MAX)),
            watchers: Mutex::new(Vec::new()),
            watcher_count: AtomicUsize::new(0),
            pending: Mutex::new(Vec::new()),
            pending_count: AtomicUsize::new(0),
            stall: request_limit,
            panic_at: panic_after.map_or(u64::MAX, |k| k.saturating_add(1)),
            death: Mutex::new(None),
            dead: AtomicBool::new(false),
            exited: AtomicBool::new(false),
        });
        let s = shared.clone();
        let handle = std::thread::Builder::new()
            .name(format!("nrt-xu-{:04x}", id.code()))
            .spawn(move || s.worker())
            .map_err(|e| NrtError::new(NrtStatus::Resource, format!("cannot start the worker thread of {id}: {e}")))?;
        Ok(ExecUnit { shared, worker: Mutex::new(Some(handle)) })
    }

    /// Its id.
    pub fn id(&self) -> XuId {
        self.shared.id
    }

    /// Its health.
    pub fn health(&self) -> Health {
        self.shared.health()
    }

    /// Queue depth.
    pub fn depth(&self) -> u64 {
        self.shared.queue.capacity()
    }

    /// Queues `req`; returns its sequence id. Refusals leave no trace:
    /// NRT_EXEC_UNIT_UNRECOVERABLE after a fatal fault, NRT_CLOSED while
    /// shutting down, NRT_QUEUE_FULL when `depth` requests are queued.
    pub fn submit(&self, req: Request) -> NrtResult<u64> {
        self.submit_or_return(req).map_err(|(_, e)| e)
    }

    /// [`ExecUnit::submit`], handing the request back on refusal (so a
    /// caller can retry it after NRT_QUEUE_FULL).
    pub fn submit_or_return(&self, req: Request) -> Result<u64, (Request, NrtError)> {
        let s = &self.shared;
        let _g = lock(&s.submit);
        match s.health() {
            Health::Healthy => {}
            Health::FatalShutdown => {
                let e = s
                    .death_error(|| "request refused".to_string())
                    .unwrap_or_else(|| NrtError::new(NrtStatus::ExecUnitUnrecoverable, format!("{} is in an unrecoverable state after an earlier fault", s.id)));
                return Err((req, e));
            }
            Health::Shutdown => return Err((req, NrtError::new(NrtStatus::Closed, format!("{} is shutting down", s.id)))),
        }
        if s.queue.tail() > SEQ_NUM_MAX {
            return Err((req, NrtError::failure(format!("{} has used every sequence number", s.id))));
        }
        let n = s.queue.push(req).map_err(|(r, e)| (r, NrtError::new(e.status, format!("{}: {}", s.id, e.message))))?;
        s.work.notify();
        if crate::trace::wants(crate::trace::EventType::NrtaSubmit) {
            let data = crate::trace::EventData { seq_id: Some(s.id.seq(n)), ..Default::default() };
            crate::trace::record_instant(crate::trace::EventType::NrtaSubmit, u32::from(s.id.vnc), data);
        }
        Ok(s.id.seq(n))
    }

    /// Whether sequence number `n` completed; NRT_INVALID if it was never
    /// handed out.
    pub fn is_completed(&self, n: u64) -> NrtResult<bool> {
        let s = &self.shared;
        let head = s.queue.head();
        if n == 0 || n >= s.queue.tail() {
            return Err(NrtError::invalid(format!("sequence number {n} was never issued on {} (last issued {})", s.id, s.queue.tail() - 1)));
        }
        Ok(n < head)
    }

    /// The last completed sequence id (sequence number 0 before any).
    pub fn last_completed(&self) -> u64 {
        self.shared.id.seq(self.shared.queue.head() - 1)
    }

    /// The last issued sequence id (0 before any).
    pub fn last_submitted(&self) -> u64 {
        self.shared.id.seq(self.shared.queue.tail() - 1)
    }

    /// Blocks until sequence number `n` completes or `timeout` passes;
    /// returns whether it completed. NRT_EXEC_UNIT_UNRECOVERABLE if the
    /// worker died and `n` can never complete.
    pub fn wait(&self, n: u64, timeout: Duration) -> NrtResult<bool> {
        let t0 = crate::trace::wants(crate::trace::EventType::NrtaWait).then(crate::trace::now_ns);
        let r = self.wait_inner(n, timeout);
        if let Some(t0) = t0 {
            let s = &self.shared;
            let data = crate::trace::EventData {
                seq_id: Some(s.id.seq(n)),
                status: Some(match &r {
                    Ok(true) => 0,
                    Ok(false) => crate::status::NrtStatus::Timeout as i32,
                    Err(e) => e.status as i32,
                }),
                ..Default::default()
            };
            crate::trace::record_span(crate::trace::EventType::NrtaWait, u32::from(s.id.vnc), t0, data);
        }
        r
    }

    fn wait_inner(&self, n: u64, timeout: Duration) -> NrtResult<bool> {
        self.is_completed(n)?;
        let s = &self.shared;
        let now = Instant::now();
        let deadline = now.checked_add(timeout);
        // Poll first: a request a few microseconds from done is seen at
        // once, and the worker pays no wake-up system call. Blocking right
        // away costs a futex round trip on each side (tens of microseconds
        // on a VM), long enough for a queue of short executions to run dry
        // before the waiter can refill it.
        poll_for(now + WAIT_SPIN.min(timeout), || n < s.queue.head());
        loop {
            let seen = s.done.count();
            s.wake_at.fetch_min(n, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if n < s.queue.head() {
                return Ok(true);
            }
            // The dead worker's guard completed everything before it
            // published `dead`: seen dead, `head` is read again (the read
            // above may predate the completions).
            if s.dead.load(Ordering::SeqCst) {
                if n < s.queue.head() {
                    return Ok(true);
                }
                if let Some(e) = s.death_error(|| format!("sequence number {n} can never complete")) {
                    return Err(e);
                }
            }
            let left = deadline.map_or(Duration::from_secs(3600), |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(false);
            }
            s.done.wait(seen, left);
        }
    }

    /// Blocks until everything submitted so far has completed
    /// (`nrt_async_drain_queued_execs`). NRT_TIMEOUT when the unit
    /// completes nothing for its request limit; the worker's death ends it
    /// at once (its guard completes everything queued).
    pub fn drain(&self) -> NrtResult<()> {
        let last = self.shared.queue.tail() - 1;
        if last == 0 {
            return Ok(());
        }
        self.wait_progressing(last, "draining")
    }

    /// Waits until sequence number `n` completes, for as long as the unit
    /// keeps completing requests: NRT_TIMEOUT naming the request at the
    /// front when it completes none for its request limit (`doing` says
    /// what the caller was doing).
    pub fn wait_progressing(&self, n: u64, doing: &str) -> NrtResult<()> {
        let s = &self.shared;
        let mut head = s.queue.head();
        let mut since = Instant::now();
        loop {
            let left = s.stall.saturating_sub(since.elapsed());
            if self.wait(n, left.max(Duration::from_millis(1)))? {
                return Ok(());
            }
            let h = s.queue.head();
            if h != head {
                (head, since) = (h, Instant::now());
            } else if since.elapsed() >= s.stall {
                return Err(NrtError::new(
                    NrtStatus::Timeout,
                    format!(
                        "{doing} {}: request {h} did not complete within {:.1} sec, the longest a request may take (NEURON_RT_EXEC_TIMEOUT + NEURON_RT_CC_NET_TIMEOUT); the worker is stuck",
                        s.id,
                        s.stall.as_secs_f64()
                    ),
                ));
            }
        }
    }

    /// Calls `notifier` on every later completion of this unit.
    pub fn watch_all(&self, notifier: Notifier) {
        let mut w = lock(&self.shared.watchers);
        w.push(notifier);
        self.shared.watcher_count.store(w.len(), Ordering::SeqCst);
    }

    /// Calls `notifier` once sequence number `n` has completed (at once if
    /// it already has); NRT_INVALID if `n` was never issued.
    pub fn watch_seq(&self, n: u64, notifier: Notifier) -> NrtResult<()> {
        self.is_completed(n)?;
        let s = &self.shared;
        let seq = s.id.seq(n);
        let fire_now = {
            let mut p = lock(&s.pending);
            p.push((seq, notifier));
            s.pending_count.store(p.len(), Ordering::SeqCst);
            // Either the worker's load of pending_count (after its head
            // store and fence) sees this registration, or this load of
            // head sees its completion; never neither.
            fence(Ordering::SeqCst);
            if n < s.queue.head() {
                let w = p.pop();
                s.pending_count.store(p.len(), Ordering::SeqCst);
                w
            } else {
                None
            }
        };
        if let Some((seq, w)) = fire_now {
            w(seq, NrtStatus::Success);
        }
        Ok(())
    }

    /// Stops taking requests, lets the worker finish what is queued and
    /// joins it. Idempotent. Bounded: a worker that completes nothing for
    /// the unit's request limit is left behind (logged) instead of joined.
    pub fn shutdown(&self) {
        let s = &self.shared;
        {
            let _g = lock(&s.submit);
            let _ = s.health.compare_exchange(Health::Healthy as u8, Health::Shutdown as u8, Ordering::AcqRel, Ordering::Acquire);
        }
        s.stop.store(true, Ordering::Release);
        s.work.notify();
        let Some(h) = lock(&self.worker).take() else { return };
        let mut head = s.queue.head();
        let mut since = Instant::now();
        while !s.exited.load(Ordering::SeqCst) {
            let seen = s.done.count();
            if s.exited.load(Ordering::SeqCst) {
                break;
            }
            let left = s.stall.saturating_sub(since.elapsed());
            if left.is_zero() {
                crate::log_error!(
                    crate::log::Module::Kmgr,
                    "[{}] the worker did not stop: request {head} did not complete within {:.1} sec (NEURON_RT_EXEC_TIMEOUT + NEURON_RT_CC_NET_TIMEOUT); left running",
                    s.id,
                    s.stall.as_secs_f64()
                );
                return;
            }
            s.done.wait(seen, left);
            let h = s.queue.head();
            if h != head {
                (head, since) = (h, Instant::now());
            }
        }
        let _ = h.join();
    }
}

impl Drop for ExecUnit {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xu::seq::XuKind;

    /// More sequence watchers than one firing batch become due at one
    /// completion: every one fires exactly once, with its own sequence id.
    #[test]
    fn a_completion_fires_every_due_watcher_once_past_the_batch_size() {
        let unit = ExecUnit::start(XuId::new(0, XuKind::TensorOp, 0).unwrap(), 8).unwrap();
        let gate = Arc::new(std::sync::Barrier::new(2));
        let g = gate.clone();
        let job: TensorJob = Box::new(move || {
            g.wait();
            Ok(())
        });
        let first = unit.submit(Request { work: Work::Tensor(job), on_complete: None }).unwrap();
        let n = super::super::seq::seq_num(first);
        let fired = Arc::new(Mutex::new(Vec::new()));
        let watchers = 3 * FIRE_BATCH + 1;
        for k in 0..watchers {
            let f = fired.clone();
            unit.watch_seq(n, Arc::new(move |seq, st| f.lock().unwrap().push((k, seq, st)))).unwrap();
        }
        assert!(fired.lock().unwrap().is_empty());
        gate.wait();
        assert!(unit.wait(n, Duration::from_secs(20)).unwrap());
        // The worker fires the watchers after it publishes the completion.
        let until = Instant::now() + Duration::from_secs(20);
        while fired.lock().unwrap().len() < watchers && Instant::now() < until {
            std::thread::yield_now();
        }
        unit.shutdown();
        let mut got = fired.lock().unwrap().clone();
        got.sort_by_key(|(k, _, _)| *k);
        assert_eq!(got, (0..watchers).map(|k| (k, first, NrtStatus::Success)).collect::<Vec<_>>());
        assert_eq!(unit.shared.pending_count.load(Ordering::SeqCst), 0);
    }

    /// A unit whose worker was made with `panic_after` and a short
    /// request limit.
    fn unit_with(panic_after: Option<u64>, limit_ms: u64) -> ExecUnit {
        ExecUnit::start_with(XuId::new(0, XuKind::TensorOp, 0).unwrap(), 8, Duration::from_millis(limit_ms), panic_after).unwrap()
    }

    fn job(f: impl FnOnce() + Send + 'static) -> Request {
        let job: TensorJob = Box::new(move || {
            f();
            Ok(())
        });
        Request { work: Work::Tensor(job), on_complete: None }
    }

    /// The worker dies holding request 2 (`xu_panic:after=1`) with two
    /// more queued behind it: every request's callback fires once with
    /// its status (NRT_FAILURE for the held one, 101 for the queued),
    /// the sequence watchers fire, a waiter for the last one returns, and
    /// the unit refuses new work naming the panic.
    #[test]
    fn a_worker_that_dies_holding_a_request_leaves_no_waiter_waiting() {
        let unit = Arc::new(unit_with(Some(1), 600_000));
        let gate = Arc::new(std::sync::Barrier::new(2));
        let reports = Arc::new(Mutex::new(Vec::new()));
        let g = gate.clone();
        let mut seqs = Vec::new();
        for k in 0..4 {
            let g = g.clone();
            let r = reports.clone();
            let mut req = job(move || {
                if k == 0 {
                    g.wait();
                }
            });
            req.on_complete = Some(OnComplete::once(move |seq, st| r.lock().unwrap().push((seq, st))));
            seqs.push(unit.submit(req).unwrap());
        }
        let watched = Arc::new(Mutex::new(Vec::new()));
        let w = watched.clone();
        unit.watch_seq(super::super::seq::seq_num(seqs[3]), Arc::new(move |seq, st| w.lock().unwrap().push((seq, st)))).unwrap();
        let u = unit.clone();
        let last = super::super::seq::seq_num(seqs[3]);
        let waiter = std::thread::spawn(move || u.wait(last, Duration::from_secs(60)));
        gate.wait();
        assert!(waiter.join().unwrap().unwrap(), "the waiter sees its request completed");
        let got = reports.lock().unwrap().clone();
        let want: Vec<(u64, NrtStatus)> = vec![
            (seqs[0], NrtStatus::Success),
            (seqs[1], NrtStatus::Failure),
            (seqs[2], NrtStatus::ExecUnitUnrecoverable),
            (seqs[3], NrtStatus::ExecUnitUnrecoverable),
        ];
        assert_eq!(got, want);
        assert_eq!(*watched.lock().unwrap(), [(seqs[3], NrtStatus::ExecUnitUnrecoverable)]);
        assert_eq!(unit.health(), Health::FatalShutdown);
        let e = unit.submit(job(|| {})).unwrap_err();
        assert_eq!(e.status, NrtStatus::ExecUnitUnrecoverable);
        assert!(e.message.contains("died") && e.message.contains("injected panic (NEURON_SIM_INJECT=xu_panic)") && e.message.contains("holding request 2"), "{}", e.message);
        assert!(unit.drain().is_ok());
        unit.shutdown();
    }

    /// A watcher that panics kills the worker outside every request's
    /// guard (the path any bug of the worker takes): the request it was
    /// completing and the queued ones still complete, and a waiter for
    /// the last one returns instead of waiting for ever.
    #[test]
    fn a_panicking_watcher_does_not_strand_the_waiters() {
        let unit = Arc::new(unit_with(None, 600_000));
        let gate = Arc::new(std::sync::Barrier::new(2));
        let g = gate.clone();
        let first = unit.submit(job(move || {
            g.wait();
        }));
        let first = first.unwrap();
        let rest: Vec<u64> = (0..3).map(|_| unit.submit(job(|| {})).unwrap()).collect();
        unit.watch_all(Arc::new(|_, _| panic!("a watcher fails")));
        let u = unit.clone();
        let last = super::super::seq::seq_num(rest[2]);
        let waiter = std::thread::spawn(move || u.wait(last, Duration::from_secs(60)));
        gate.wait();
        assert!(waiter.join().unwrap().unwrap());
        assert!(unit.is_completed(super::super::seq::seq_num(first)).unwrap());
        let e = unit.submit(job(|| {})).unwrap_err();
        assert!(e.status == NrtStatus::ExecUnitUnrecoverable && e.message.contains("a watcher fails"), "{}", e.message);
        unit.shutdown();
    }

    /// A request that never ends (a stuck worker): drain and shutdown give
    /// up after the request limit, naming the request, instead of
    /// blocking for ever.
    #[test]
    fn drain_and_shutdown_of_a_stuck_unit_end_at_the_request_limit() {
        let unit = unit_with(None, 300);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let stuck = unit.submit(job(move || {
            let _ = rx.recv();
        }));
        let stuck = super::super::seq::seq_num(stuck.unwrap());
        let e = unit.drain().unwrap_err();
        assert_eq!(e.status, NrtStatus::Timeout);
        assert!(e.message.contains(&format!("request {stuck} did not complete within 0.3 sec")), "{}", e.message);
        // Shutdown leaves the stuck worker behind (logged) and returns.
        unit.shutdown();
        assert!(!unit.shared.exited.load(Ordering::SeqCst));
        drop(tx);
    }

    /// Several host threads wait for different requests of one unit while
    /// it completes them: completions that are nobody's target wake no one,
    /// yet every waiter returns (no lost wake-up), and only once its own
    /// request is done.
    #[test]
    fn waiters_for_different_requests_all_return() {
        let unit = Arc::new(ExecUnit::start(XuId::new(0, XuKind::TensorOp, 0).unwrap(), 8).unwrap());
        for round in 0..200u64 {
            let gate = Arc::new(std::sync::Barrier::new(2));
            let mut seqs = Vec::new();
            for k in 0..4 {
                let g = gate.clone();
                let job: TensorJob = Box::new(move || {
                    if k == 0 {
                        g.wait();
                    }
                    Ok(())
                });
                seqs.push(unit.submit(Request { work: Work::Tensor(job), on_complete: None }).unwrap());
            }
            let waiters: Vec<_> = seqs
                .iter()
                .rev()
                .map(|&n| {
                    let u = unit.clone();
                    let n = super::super::seq::seq_num(n);
                    std::thread::spawn(move || {
                        let ok = u.wait(n, Duration::from_secs(20)).unwrap();
                        (ok, n < u.shared.queue.head())
                    })
                })
                .collect();
            // Let (some of) the waiters block before the first request ends.
            if round % 2 == 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
            gate.wait();
            for w in waiters {
                assert_eq!(w.join().unwrap(), (true, true), "round {round}");
            }
        }
    }
}
