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

use super::queue::XuQueue;
use super::seq::{SEQ_NUM_MAX, XuId};
use super::signal::EventCount;
use crate::cache_line::CacheLine;
use crate::exec::errors::poisons;
use crate::model::LoadedModel;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::tensor::TensorSet;
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

    fn run(&self, work: Work) -> NrtStatus {
        let fatal = self.health() == Health::FatalShutdown;
        match work {
            Work::Execute { model, inputs, outputs, in_flight } => {
                let status = if fatal {
                    NrtStatus::ExecUnitUnrecoverable
                } else {
                    let status = status_of(|| crate::exec::execute(&model, &inputs, &outputs));
                    if poisons(status, false) {
                        crate::log_error!(crate::log::Module::Kmgr, "[{}] execution of model {} ended with {status}; the execution unit is unrecoverable", self.id, model.id);
                        self.health.store(Health::FatalShutdown as u8, Ordering::Release);
                    }
                    status
                };
                if in_flight {
                    release_in_flight(&inputs, &outputs);
                }
                status
            }
            Work::Tensor(_) if fatal => NrtStatus::ExecUnitUnrecoverable,
            Work::Tensor(job) => status_of(job),
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
        // Sequence watchers whose request is done fire outside the lock,
        // a stack batch at a time (the worker allocates nothing).
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

    fn worker(self: Arc<Shared>) {
        loop {
            if let Some((n, req)) = self.queue.take_front() {
                // Events the request produces carry its sequence id.
                let traced = crate::trace::wants_any(crate::trace::EventType::ALL_MASK);
                if traced {
                    crate::trace::set_current_seq(self.id.seq(n));
                }
                let status = self.run(req.work);
                if traced {
                    crate::trace::set_current_seq(0);
                }
                self.complete(n, req.on_complete, status);
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
    /// A unit with a queue of `depth` requests and its worker thread.
    pub fn start(id: XuId, depth: u64) -> NrtResult<ExecUnit> {
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
                let e = NrtError::new(NrtStatus::ExecUnitUnrecoverable, format!("{} is in an unrecoverable state after an earlier fault", s.id));
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
    /// returns whether it completed.
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
            let left = deadline.map_or(Duration::from_secs(3600), |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Ok(false);
            }
            s.done.wait(seen, left);
        }
    }

    /// Blocks until everything submitted so far has completed
    /// (`nrt_async_drain_queued_execs`).
    pub fn drain(&self) {
        let last = self.shared.queue.tail() - 1;
        if last > 0 {
            let _ = self.wait(last, Duration::MAX);
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
    /// joins it. Idempotent.
    pub fn shutdown(&self) {
        {
            let _g = lock(&self.shared.submit);
            let _ = self.shared.health.compare_exchange(Health::Healthy as u8, Health::Shutdown as u8, Ordering::AcqRel, Ordering::Acquire);
        }
        self.shared.stop.store(true, Ordering::Release);
        self.shared.work.notify();
        if let Some(h) = lock(&self.worker).take() {
            let _ = h.join();
        }
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
