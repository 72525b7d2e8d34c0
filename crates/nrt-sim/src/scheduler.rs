//! Cooperative stepping of engines and DMA queues.
//!
//! Work items are [`Task`]s: "step engine E of core C", "walk DMA queue Q
//! of core C" or "run Q7 core K's kernel for core C's op in flight". Each task runs a bounded slice and re-queues itself if it
//! has more to do, so a small pool steps any number of engines fairly
//! (there is no thread per engine; the machines have two cores).
//!
//! Two modes:
//! - **pool**: up to `threads` workers, started on the first task (an idle
//!   instance has no thread; the devices of an instance share one
//!   scheduler), parked on a condition variable when the queue
//!   is empty;
//! - **deterministic**: no worker threads; whoever submits work drains
//!   the queue on its own thread in FIFO order until the device is
//!   quiescent. The same program therefore produces the same order of
//!   events, bytes and timestamps on every run. A program that never
//!   quiesces (a loop without a wait) would hold the submitting thread
//!   forever, so after a configurable number of slices in one drain
//!   (default [`DETERMINISTIC_DRAIN_LIMIT`])
//!   the queue is handed to a single background worker (still FIFO, but
//!   no longer in lockstep with the host).
//!
//! An idle worker spins briefly before parking on the condition variable
//! (a cross-thread wake costs ~50 us on the project's VMs). It spins on an
//! atomic count of queued tasks, not on the queue's lock, so a spinning
//! worker never delays the thread that submits work (the runtime ringing a
//! doorbell) or the worker that runs it. At most one worker spins at a
//! time; the others park at once: on a two-core machine two spinners
//! would hold both cores just when the host thread, woken by the op's
//! completion, needs one to see it and ring the next doorbell (measured
//! with the Q7 bench, `docs/gpsimd.md` §11), while one spinner is enough
//! to pick that next task up without a wake.
//!
//! A host thread that is about to wait for the device and lend itself to
//! it ([`Scheduler::lending_begin`], then [`Scheduler::run_one`] until
//! [`Scheduler::lending_end`]) counts as a lender. Work that lenders can
//! take (no more queued tasks than lenders not running a task already)
//! wakes no parked worker, and
//! the spinning worker leaves it to them for a short grace
//! ([`LENDER_GRACE_POLLS`] polls) before it takes it anyway (a lender the
//! OS descheduled must not stall the device): a small execution then runs
//! start to end on the thread that rang its doorbell, with no futex wake
//! and no cache lines crossing cores, while work beyond what the lenders
//! can take still goes to the workers at once.
//!
//! Threads with nothing to run (the spinning worker, a lender) take parts
//! of a large kernel call that a running task offers (`kernels::split`):
//! a second CPU joins one big MATMUL exactly when it is idle, with no
//! wake and no extra thread.
//!
//! Every slice runs under a panic guard, on whichever thread runs it (a
//! worker, a lending host thread, a deterministic drainer): a panic in a
//! task is handed to the runner ([`Runner::panicked`]), which leaves
//! device evidence the host reads (an error record), and the thread goes
//! on with the queue. A panicking task never takes a worker, a drain or
//! the runtime thread lent to the device down with it.
//!
//! Wakes are rationed (`Scheduler::claim_wake`): a parked worker is woken
//! only for queued work no lender, spinner, already-woken worker or
//! submitting worker will take, and only while fewer of those threads run
//! than the process has CPUs. A Q7 dispatch queues eight tasks at once;
//! one wake each put more threads than CPUs on the device's work.

use crate::kernels::split;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// Default task slices one deterministic drain runs before handing the
/// rest of the queue to a background worker (2^16 slices of up to 256
/// instructions: about 16 M instructions).
pub const DETERMINISTIC_DRAIN_LIMIT: u64 = 1 << 16;

/// How long an idle worker polls the queue before parking.
const SPIN: Duration = Duration::from_micros(50);

/// Polls for which the spinning worker leaves queued work that the
/// lenders can take to them (a few microseconds: far more than a lender
/// between two slices needs, far less than a scheduling quantum).
pub const LENDER_GRACE_POLLS: u32 = 1024;

/// One unit of device work. The core is named by its index in the
/// instance (device index x cores per device + core: the devices of an
/// instance share one scheduler, `device::instance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Step a sequencer: (core, engine index).
    Engine(u32, u8),
    /// Walk a DMA queue: (core, queue index within the core).
    Dma(u32, u16),
    /// Run one Q7 core's share of the op in flight: (core, Q7 index).
    Q7(u32, u8),
}

/// Something that can run tasks (the device).
pub trait Runner: HasScheduler + Send + Sync + 'static {
    /// Runs one bounded slice of `task`.
    fn run(self: &Arc<Self>, task: Task);

    /// A slice of `task` panicked with `why`: leave what the device shows
    /// for such a failure (the task is not run again until work submits it).
    fn panicked(self: &Arc<Self>, task: Task, why: &str);
}

/// Runs `slice` (one slice of `task`) under the panic guard: a panic is
/// the runner's to report ([`Runner::panicked`]), and the caller goes on.
/// Free when nothing panics (no allocation, no extra work).
#[inline]
fn guarded<R: Runner>(runner: &Arc<R>, task: Task, slice: impl FnOnce(&Arc<R>)) {
    if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| slice(runner))) {
        report_panic(runner, task, &*p);
    }
}

/// [`guarded`]'s cold half: the text of the panic, to the runner (whose
/// own failure is swallowed: the thread must go on).
#[cold]
#[inline(never)]
fn report_panic<R: Runner>(runner: &Arc<R>, task: Task, p: &(dyn std::any::Any + Send)) {
    let why = p.downcast_ref::<&str>().map(|s| (*s).to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default();
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.panicked(task, &why)));
}

/// One slice of `task` under the panic guard.
#[inline]
fn run_guarded<R: Runner>(runner: &Arc<R>, task: Task) {
    guarded(runner, task, |r| r.run(task));
}

/// The task queue and its workers.
#[derive(Debug)]
pub struct Scheduler {
    queue: Mutex<VecDeque<Task>>,
    /// Tasks in `queue` (stored with the lock held, so a plain store
    /// rather than a read-modify-write keeps it exact; read without the
    /// lock by spinning workers).
    pending: AtomicUsize,
    /// Workers parked on `ready` (a notify is a system call; it is only
    /// made when someone sleeps).
    sleepers: AtomicUsize,
    /// Whether some worker is spinning for work (at most one does).
    spinning: AtomicBool,
    /// Host threads between `lending_begin` and `lending_end`.
    lenders: AtomicUsize,
    /// Lenders running a task right now ([`Scheduler::run_one`]): they
    /// take nothing else until it ends, so queued work is not left to
    /// them meanwhile (one lender in a long PE slice held the other
    /// LNC-2 core's work back from an idle worker).
    lenders_busy: AtomicUsize,
    /// Wakes sent to parked workers that none has consumed yet (changed
    /// under the queue lock; never more than `sleepers`).
    woken: AtomicUsize,
    /// Workers running a task right now.
    busy: AtomicUsize,
    /// CPUs this process may run on: more threads running device work
    /// than this only take turns on the same CPUs.
    cpus: usize,
    ready: Condvar,
    deterministic: bool,
    threads: usize,
    started: AtomicUsize,
    /// Claimed by the deterministic drainer ([`DrainClaim`]: one inline
    /// compare-and-swap per lockstep submit, where a mutex's `try_lock`
    /// with its poison bookkeeping was a call of ~27 instructions).
    draining: AtomicBool,
    /// The drainer's batch buffer (kept between drains, so a drain
    /// allocates nothing). Only the holder of `draining` locks it, and
    /// only when it takes tasks from the queue (a lockstep execution whose
    /// tasks hand each other over never does), so it is never contended.
    batch: Mutex<VecDeque<Task>>,
    shutdown: AtomicBool,
    /// Deterministic mode gave up lockstep after a runaway drain.
    escalated: AtomicBool,
    drain_limit: u64,
}

impl Scheduler {
    /// A scheduler in deterministic or pool mode.
    pub fn new(deterministic: bool, threads: usize, drain_limit: u64) -> Scheduler {
        Scheduler {
            queue: Mutex::new(VecDeque::new()),
            pending: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            spinning: AtomicBool::new(false),
            lenders: AtomicUsize::new(0),
            lenders_busy: AtomicUsize::new(0),
            woken: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ready: Condvar::new(),
            deterministic,
            threads: threads.max(1),
            started: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            batch: Mutex::new(VecDeque::new()),
            shutdown: AtomicBool::new(false),
            escalated: AtomicBool::new(false),
            drain_limit: drain_limit.max(1),
        }
    }

    /// Whether the scheduler runs deterministically.
    pub fn is_deterministic(&self) -> bool {
        self.deterministic
    }

    /// Worker threads started so far.
    pub fn workers(&self) -> usize {
        self.started.load(Ordering::Acquire)
    }

    fn pop(&self) -> Option<Task> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let t = q.pop_front();
        if t.is_some() {
            self.pending.store(q.len(), Ordering::Release);
        }
        t
    }

    /// This scheduler's identity in the thread-local drain mark.
    fn address(&self) -> usize {
        self as *const Scheduler as usize
    }

    /// Queues a task and makes sure someone runs it. `runner` hands out
    /// a handle of the runner ([`RunnerHandle`]: its `Arc`, owned or
    /// borrowed); it is only called when this call has to run the queue
    /// itself or start a worker (a submit from inside a running task, the
    /// common case, needs neither).
    pub fn submit<R: Runner, H: RunnerHandle<R>>(&self, runner: impl Fn() -> H, task: Task) {
        if self.shutdown.load(Ordering::Acquire) {
            return;
        }
        // A task of this thread's deterministic drain hands its first
        // submit straight to the drain (see `NEXT`), without the queue.
        if self.deterministic && !self.escalated.load(Ordering::Acquire) {
            if DRAIN.with(|d| d.hand_over(self.address(), task)) {
                return;
            }
            // Nothing queued and nobody draining: this thread drains, from
            // this task, without queueing it first.
            if self.pending.load(Ordering::Acquire) == 0
                && let Some(claim) = DrainClaim::take(&self.draining)
            {
                self.drain_claimed(claim, &runner, Some(task));
                return;
            }
        }
        let wake = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.push_back(task);
            self.pending.store(q.len(), Ordering::Release);
            self.claim_wake(q.len())
        };
        if self.deterministic && !self.escalated.load(Ordering::Acquire) {
            self.drain_here(&runner);
        } else {
            if self.started.load(Ordering::Acquire) < self.worker_limit() {
                self.ensure_workers(runner().runner());
            }
            if wake {
                self.ready.notify_one();
            }
        }
    }

    /// Deterministic mode, from a thread that is not draining this
    /// scheduler already: when nothing is queued and nobody drains, runs
    /// `task` at once on this thread (then whatever it submits, as a
    /// drain does) and returns true; otherwise (pool mode, a drain under
    /// way, work queued) false, and the caller submits as usual.
    ///
    /// For a caller that would mark the task queued before submitting it
    /// (an engine's step, woken by the runtime's doorbell): a task that
    /// runs at once needs no such mark, so the lockstep doorbell skips
    /// that flag's locked exchange. A waker on another thread that
    /// meanwhile finds the flag clear queues a second step, which the
    /// drain runs after this one; it finds its wait unmet and blocks
    /// again.
    ///
    /// The task is given as the slice itself (`first`, called with the
    /// runner), so the caller that knows what it runs (an engine of a core
    /// it holds) needs no [`Task`] value to be matched and looked up again;
    /// `task` names it for the panic guard.
    #[inline]
    pub fn run_now<R: Runner, H: RunnerHandle<R>>(&self, runner: impl Fn() -> H, task: Task, first: impl FnOnce(&Arc<R>)) -> bool {
        // A thread inside its own drain of this scheduler holds the drain
        // claim (a drain lets it go only as its last step), so the claim
        // refuses it: no look at the thread-local drain mark first.
        if !self.deterministic
            || self.escalated.load(Ordering::Acquire)
            || self.shutdown.load(Ordering::Acquire)
            || self.pending.load(Ordering::Acquire) != 0
        {
            return false;
        }
        let Some(claim) = DrainClaim::take(&self.draining) else { return false };
        let _draining = DrainingMark::set(self.address());
        let handle = runner();
        let runner = handle.runner();
        guarded(runner, task, first);
        if self.drain_limit <= 1 && !self.escalated.swap(true, Ordering::AcqRel) {
            self.escalate(&mut VecDeque::new(), runner);
            return true;
        }
        // The common end (the runtime's doorbell: the step handed nothing
        // over and queued nothing): `drain_from`'s last look, here, without
        // its call.
        let claim = if DRAIN.with(|d| d.next.get().is_none()) && self.pending.load(Ordering::SeqCst) == 0 {
            claim.release();
            if self.pending.load(Ordering::SeqCst) == 0 {
                return true;
            }
            match DrainClaim::take(&self.draining) {
                Some(again) => again,
                None => return true,
            }
        } else {
            claim
        };
        self.drain_from(claim, runner, 1);
        true
    }

    /// Whether `queued` tasks need a parked worker woken; if so, counts
    /// the wake. Called with the queue lock held, which orders it against
    /// the lenders' exits (`lending_end`) and the workers' parking.
    ///
    /// Only as many wakes as the queue needs and the CPUs can run: queued
    /// tasks are first for the threads that look at the queue without a
    /// wake (the lenders, a worker submitting from inside a task, which
    /// takes one when the task ends, the spinning worker, and workers
    /// already woken), and no worker is woken while every CPU already
    /// runs one of these threads. Waking a worker per submit (eight for a
    /// Q7 dispatch) put three threads on the two CPUs of the project's
    /// machines, taking turns, and whichever the OS preempted held up the
    /// op's end (`docs/gpsimd.md` §11).
    fn claim_wake(&self, queued: usize) -> bool {
        // A lockstep drain has no worker to wake (checked first: it is
        // every submit of deterministic mode).
        if self.deterministic && !self.escalated.load(Ordering::Acquire) {
            return false;
        }
        let sleepers = self.sleepers.load(Ordering::Acquire);
        let woken = self.woken.load(Ordering::Acquire);
        if sleepers <= woken {
            return false;
        }
        let lenders = self.lenders.load(Ordering::SeqCst);
        let spinning = usize::from(self.spinning.load(Ordering::Acquire));
        let here = usize::from(IN_TASK.get());
        if queued <= self.free_lenders() + spinning + here + woken {
            return false;
        }
        if self.busy.load(Ordering::Acquire) + lenders + spinning + woken >= self.cpus {
            return false;
        }
        self.woken.store(woken + 1, Ordering::Release);
        true
    }

    /// Lenders not running a task: the ones that will look at the queue.
    fn free_lenders(&self) -> usize {
        self.lenders.load(Ordering::SeqCst).saturating_sub(self.lenders_busy.load(Ordering::SeqCst))
    }

    /// Whether more tasks are queued than the free lenders can take.
    fn beyond_lenders(&self) -> bool {
        self.pending.load(Ordering::Acquire) > self.free_lenders()
    }

    /// The calling thread will wait for the device and lend itself to it
    /// with [`Scheduler::run_one`] (see the module docs); pool mode only
    /// changes who runs what, deterministic mode ignores it.
    #[inline]
    pub fn lending_begin(&self) {
        if !self.deterministic {
            self.lenders.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Ends a [`Scheduler::lending_begin`]: work still queued that the
    /// remaining lenders cannot take wakes a parked worker (the spinning
    /// one sees it by itself). Deterministic mode's test is inline (every
    /// lockstep execution ends a lending that changed nothing).
    #[inline]
    pub fn lending_end(&self) {
        if !self.deterministic {
            self.pool_lending_end();
        }
    }

    /// [`Scheduler::lending_end`] in pool mode.
    #[inline(never)]
    fn pool_lending_end(&self) {
        self.lenders.fetch_sub(1, Ordering::SeqCst);
        let wake = {
            let q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            self.claim_wake(q.len())
        };
        if wake {
            self.ready.notify_one();
        }
    }

    /// Pool mode: runs one queued task on the calling thread (a thread
    /// waiting for the device lends itself, see `nrt_hal::Device::assist`).
    /// Returns whether there was one. Deterministic mode keeps its own
    /// order (the submitting thread already drains in lockstep), so this
    /// never runs a task there.
    pub fn run_one<R: Runner>(&self, runner: &Arc<R>) -> bool {
        if self.deterministic || self.pending.load(Ordering::Acquire) == 0 {
            return false;
        }
        match self.pop() {
            Some(t) => {
                self.lenders_busy.fetch_add(1, Ordering::SeqCst);
                let _free = LenderFree(&self.lenders_busy);
                run_guarded(runner, t);
                true
            }
            None => false,
        }
    }

    /// What a thread lent to the device does (`nrt_hal::Device::assist`):
    /// one queued task ([`Scheduler::run_one`]), or with none, one part of
    /// a split kernel call another thread offers (`kernels::split`).
    /// Returns whether it ran either; pool mode only.
    pub fn assist<R: Runner>(&self, runner: &Arc<R>) -> bool {
        self.run_one(runner) || (!self.deterministic && split::wanted() && split::help())
    }

    /// Deterministic mode: run the queue to empty on this thread unless
    /// another thread (or an outer frame of this one) is already draining;
    /// that drainer will pick the task up.
    ///
    /// The drainer takes the whole queue at once (one lock per batch, not
    /// per task) into the drainer's batch buffer, and runs it
    /// in order; tasks submitted meanwhile queue behind it, so the order
    /// is the FIFO order of popping one task at a time.
    fn drain_here<R: Runner, H: RunnerHandle<R>>(&self, runner: &impl Fn() -> H) {
        // A submit from a task this thread's drain runs (most of them)
        // needs no try at the drain claim: its drainer is an outer frame.
        let me = self.address();
        if DRAIN.with(|d| d.scheduler.get()) == me {
            return;
        }
        // The task this thread queued is counted in `pending`; the fence
        // orders that count before the try at the claim, so a drainer that
        // lets the claim go meanwhile sees the count or this try sees the
        // drain free (see `drain_from`).
        std::sync::atomic::fence(Ordering::SeqCst);
        let Some(claim) = DrainClaim::take(&self.draining) else { return };
        self.drain_claimed(claim, runner, None);
    }

    /// [`Scheduler::drain_here`] once the drain is claimed, starting with
    /// `first` if given (a task that was never queued: nothing was queued
    /// before it).
    fn drain_claimed<R: Runner, H: RunnerHandle<R>>(&self, claim: DrainClaim<'_>, runner: &impl Fn() -> H, first: Option<Task>) {
        let _draining = DrainingMark::set(self.address());
        DRAIN.with(|d| d.next.set(first));
        let handle = runner();
        self.drain_from(claim, handle.runner(), 0);
    }

    /// The drain's loop, with the claim held, the drain marked on this
    /// thread and `slices` slices run already: the handed-over task and
    /// the queue, in order, until nothing is left (see
    /// [`Scheduler::drain_claimed`]).
    fn drain_from<'s, R: Runner>(&'s self, mut claim: DrainClaim<'s>, runner: &Arc<R>, mut slices: u64) {
        loop {
            // The task handed over by the last task's first submit comes
            // before anything this thread queued after it: run alone when
            // nothing is queued (no lock), else from the queue's front.
            // The batch buffer is locked only while it holds tasks taken
            // from the queue (each pass's guard ends with the pass).
            let mut batch = if let Some(t) = DRAIN.with(|d| d.next.take()) {
                if self.pending.load(Ordering::Acquire) == 0 {
                    run_guarded(runner, t);
                    slices += 1;
                    if slices >= self.drain_limit && !self.escalated.swap(true, Ordering::AcqRel) {
                        self.escalate(&mut VecDeque::new(), runner);
                        return;
                    }
                    continue;
                }
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                q.push_front(t);
                let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
                std::mem::swap(&mut *q, &mut *batch);
                self.pending.store(0, Ordering::Release);
                batch
            } else {
                if self.pending.load(Ordering::SeqCst) == 0 {
                    // Nothing queued: the drain is let go, and then the
                    // count is looked at once more. A submitter that
                    // queued a task meanwhile fences between its push and
                    // its try at the claim (`drain_here`), so either that
                    // try finds the drain free (and the submitter runs
                    // the queue) or this look sees the task (and the
                    // drain takes the claim back, or leaves the queue to
                    // whoever took it first). No task is stranded, with
                    // no queue lock when nothing was queued.
                    claim.release();
                    if self.pending.load(Ordering::SeqCst) == 0 {
                        return;
                    }
                    match DrainClaim::take(&self.draining) {
                        Some(again) => claim = again,
                        None => return,
                    }
                    continue;
                }
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                let mut batch = self.batch.lock().unwrap_or_else(|e| e.into_inner());
                std::mem::swap(&mut *q, &mut *batch);
                self.pending.store(0, Ordering::Release);
                batch
            };
            while let Some(t) = batch.pop_front() {
                run_guarded(runner, t);
                slices += 1;
                if slices >= self.drain_limit && !self.escalated.swap(true, Ordering::AcqRel) {
                    self.escalate(&mut batch, runner);
                    return;
                }
            }
        }
    }

    /// A runaway deterministic drain gives up lockstep: what it has not
    /// run yet (the rest of `batch`, then the handed-over task) goes back
    /// in front of whatever was submitted meanwhile, for the worker.
    #[cold]
    fn escalate<R: Runner>(&self, batch: &mut VecDeque<Task>, runner: &Arc<R>) {
        {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(t) = DRAIN.with(|d| d.next.take()) {
                q.push_front(t);
            }
            while let Some(t) = batch.pop_back() {
                q.push_front(t);
            }
            self.pending.store(q.len(), Ordering::Release);
        }
        self.ensure_workers(runner);
        self.ready.notify_one();
    }

    /// Worker threads this scheduler runs at most (an escalated
    /// deterministic scheduler keeps FIFO order with one).
    fn worker_limit(&self) -> usize {
        if self.deterministic { 1 } else { self.threads }
    }

    fn ensure_workers<R: Runner>(&self, runner: &Arc<R>) {
        let limit = self.worker_limit();
        while self.started.load(Ordering::Acquire) < limit {
            let n = self.started.fetch_add(1, Ordering::AcqRel);
            if n >= limit {
                self.started.fetch_sub(1, Ordering::AcqRel);
                break;
            }
            let weak: Weak<R> = Arc::downgrade(runner);
            let spawned = std::thread::Builder::new()
                .name(format!("nrt-sim-{n}"))
                .spawn(move || worker(weak));
            if spawned.is_err() {
                // Without a worker the queue would stall; fall back to
                // running on the submitting thread.
                self.started.fetch_sub(1, Ordering::AcqRel);
                self.drain_here(&|| runner.clone());
                break;
            }
        }
    }

    /// Asks workers to exit (device drop).
    pub fn shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        self.ready.notify_all();
    }

    fn next_for_worker(&self) -> Option<Task> {
        if self.beyond_lenders()
            && let Some(t) = self.pop()
        {
            return Some(t);
        }
        if !self.spinning.swap(true, Ordering::AcqRel) {
            let found = self.spin_for_work();
            self.spinning.store(false, Ordering::Release);
            if found.is_some() {
                return found;
            }
        }
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let mut waited = false;
        loop {
            if self.shutdown.load(Ordering::Acquire) {
                return None;
            }
            // Work the lenders can take is theirs (the spinning worker
            // takes it if they are slow, `lending_end` wakes us if they
            // leave it); once we have slept, whatever is queued is ours.
            if (waited || q.len() > self.free_lenders())
                && let Some(t) = q.pop_front()
            {
                self.pending.store(q.len(), Ordering::Release);
                return Some(t);
            }
            // Counted under the queue lock, before the wait releases it: a
            // submitter that pushes after this sees the count and wakes us.
            self.sleepers.fetch_add(1, Ordering::AcqRel);
            q = self
                .ready
                .wait_timeout(q, Duration::from_millis(200))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            self.sleepers.fetch_sub(1, Ordering::AcqRel);
            // Woken or timed out, this worker no longer waits: it takes
            // one counted wake with it, so the count never outlives the
            // sleepers it was meant for.
            if let Some(w) = self.woken.load(Ordering::Acquire).checked_sub(1) {
                self.woken.store(w, Ordering::Release);
            }
            waited = true;
        }
    }
}

impl Scheduler {
    /// The one spinning worker's poll for work, up to [`SPIN`] long
    /// after the last thing it did. Meanwhile it takes parts of a large
    /// kernel call that another thread offers (`kernels::split`): this
    /// worker has a CPU and nothing to run on it.
    fn spin_for_work(&self) -> Option<Task> {
        let mut spin_until = Instant::now() + SPIN;
        let mut spins = 0u32;
        // Polls that saw work queued which the lenders could take.
        let mut deferred = 0u32;
        loop {
            if self.shutdown.load(Ordering::Acquire) {
                return None;
            }
            if split::wanted() && self.help_split() {
                spin_until = Instant::now() + SPIN;
                continue;
            }
            if self.pending.load(Ordering::Acquire) > 0 {
                let take = self.beyond_lenders() || deferred >= LENDER_GRACE_POLLS;
                deferred += 1;
                if take && let Some(t) = self.pop() {
                    return Some(t);
                }
            } else {
                deferred = 0;
            }
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            // Reading the clock costs more than a spin: look every 64,
            // and let the OS run another thread of this CPU meanwhile (the
            // host thread that submits the next work, or one running it on
            // the device's behalf): with more runnable threads than cores
            // a pure spin holds a core they need. Copy bench, pool mode,
            // interleaved: async gap 9.5-10.2 -> 4.8-7.5 us, sync p99 64-79
            // -> 15-25 us.
            if spins.is_multiple_of(64) {
                if Instant::now() >= spin_until {
                    return None;
                }
                std::thread::yield_now();
            }
        }
    }
}

impl Scheduler {
    /// Runs one part of a split kernel call (`kernels::split::help`),
    /// counted as a busy worker meanwhile so wakes stay rationed to the
    /// CPUs; returns whether there was a part.
    #[cold]
    fn help_split(&self) -> bool {
        self.busy.fetch_add(1, Ordering::AcqRel);
        let ran = split::help();
        self.busy.fetch_sub(1, Ordering::AcqRel);
        ran
    }
}

std::thread_local! {
    /// Whether this thread is a worker running a task (it looks at the
    /// queue again when the task ends, so its own submits need no wake).
    static IN_TASK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// This thread's deterministic drain (see [`DrainState`]).
    static DRAIN: DrainState = const { DrainState { scheduler: std::cell::Cell::new(0), next: std::cell::Cell::new(None) } };
}

/// What a thread draining a deterministic scheduler keeps (one access to
/// the thread-local per submit).
struct DrainState {
    /// The address of the scheduler whose drain this thread has claimed (0:
    /// none; see [`DrainingMark`]).
    scheduler: std::cell::Cell<usize>,
    /// The first task a task of that drain submitted since the drain last
    /// looked (later ones go through the queue): the drain runs it next,
    /// without the queue's lock when nothing else is queued. Most tasks
    /// submit at most one (a sequencer's DMA doorbell, a DMA completion's
    /// wake), so most of a lockstep execution never touches the queue.
    next: std::cell::Cell<Option<Task>>,
}

impl DrainState {
    /// Takes `task` for the drain of `scheduler` if this thread runs that
    /// drain and holds no handed-over task yet.
    #[inline]
    fn hand_over(&self, scheduler: usize, task: Task) -> bool {
        if self.scheduler.get() != scheduler || self.next.get().is_some() {
            return false;
        }
        self.next.set(Some(task));
        true
    }
}

/// The claim of a deterministic scheduler's drain (`Scheduler::draining`):
/// taken with one compare-and-swap, let go with a sequentially consistent
/// store before the drainer's last look at the pending count
/// ([`DrainClaim::release`], see `Scheduler::drain_from`), or when dropped
/// (an escalation, a task that unwinds).
struct DrainClaim<'a>(&'a AtomicBool);

impl<'a> DrainClaim<'a> {
    /// The claim, unless another drain holds it (sequentially consistent,
    /// like its release: see `Scheduler::drain_from`).
    #[inline]
    fn take(flag: &'a AtomicBool) -> Option<DrainClaim<'a>> {
        flag.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst).ok().map(|_| DrainClaim(flag))
    }

    /// Lets the claim go with a sequentially consistent store, ordered
    /// before the drainer's last look at the pending count.
    #[inline]
    fn release(self) {
        self.0.store(false, Ordering::SeqCst);
        std::mem::forget(self);
    }
}

impl Drop for DrainClaim<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Marks the calling thread as the drainer of one deterministic scheduler
/// for as long as it lives (also when a task unwinds): a submit to that
/// scheduler from a task of the drain leaves the task to the drain without
/// trying the drain claim (the first through [`DrainState::next`]). A
/// submit to another scheduler is not affected; the mark and the
/// handed-over task of an outer drain come back when an inner one ends.
struct DrainingMark(usize, Option<Task>);

impl DrainingMark {
    #[inline]
    fn set(scheduler: usize) -> DrainingMark {
        let outer = DRAIN.with(|d| d.scheduler.replace(scheduler));
        DrainingMark(outer, DRAIN.with(|d| d.next.take()))
    }
}

impl Drop for DrainingMark {
    #[inline]
    fn drop(&mut self) {
        DRAIN.with(|d| {
            d.scheduler.set(self.0);
            d.next.set(self.1);
        });
    }
}

/// The runner handle a submit hands out when it must run the queue
/// itself or start a worker: an owned `Arc` (a caller that only has a
/// reference to the runner upgrades its weak self) or a borrowed one (a
/// caller that holds the runner's `Arc` already, such as the device
/// handle's register calls, saves the upgrade and its release, two
/// atomic read-modify-writes per lockstep drain).
pub trait RunnerHandle<R> {
    /// The runner.
    fn runner(&self) -> &Arc<R>;
}

impl<R> RunnerHandle<R> for Arc<R> {
    fn runner(&self) -> &Arc<R> {
        self
    }
}

impl<R> RunnerHandle<R> for &Arc<R> {
    fn runner(&self) -> &Arc<R> {
        self
    }
}

/// Counts a lender free again when its task ends (also by unwinding).
struct LenderFree<'a>(&'a AtomicUsize);

impl Drop for LenderFree<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Something that owns a scheduler (so a worker can find it again).
pub trait HasScheduler {
    /// The scheduler.
    fn scheduler(&self) -> &Scheduler;
}

fn worker<R: Runner>(weak: Weak<R>) {
    loop {
        let Some(runner) = weak.upgrade() else { return };
        let Some(task) = runner.scheduler().next_for_worker() else { return };
        let s = runner.scheduler();
        s.busy.fetch_add(1, Ordering::AcqRel);
        IN_TASK.set(true);
        run_guarded(&runner, task);
        IN_TASK.set(false);
        s.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Task (0, 0) holds its worker until released, task (0, 9) panics;
    /// every task that ends records the thread that ran it, every panic
    /// what the guard reported.
    struct Probe {
        scheduler: Scheduler,
        release: AtomicBool,
        holding: AtomicBool,
        ran: Mutex<Vec<(Task, std::thread::ThreadId)>>,
        panicked: Mutex<Vec<(Task, String)>>,
    }

    impl HasScheduler for Probe {
        fn scheduler(&self) -> &Scheduler {
            &self.scheduler
        }
    }

    impl Runner for Probe {
        fn run(self: &Arc<Self>, task: Task) {
            if task == Task::Engine(0, 0) {
                self.holding.store(true, Ordering::Release);
                while !self.release.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
            }
            assert!(task != Task::Engine(0, 9), "task {task:?} fails");
            self.ran.lock().unwrap().push((task, std::thread::current().id()));
        }

        fn panicked(self: &Arc<Self>, task: Task, why: &str) {
            self.panicked.lock().unwrap().push((task, why.to_string()));
        }
    }

    fn probe(deterministic: bool) -> Arc<Probe> {
        Arc::new(Probe {
            scheduler: Scheduler::new(deterministic, 1, DETERMINISTIC_DRAIN_LIMIT),
            release: AtomicBool::new(false),
            holding: AtomicBool::new(false),
            ran: Mutex::new(Vec::new()),
            panicked: Mutex::new(Vec::new()),
        })
    }

    /// A task that panics is reported to the runner, and whichever thread
    /// ran it (the worker, a lender, a deterministic drainer) goes on
    /// with the queue: later tasks still run.
    #[test]
    fn a_panicking_task_is_reported_and_the_queue_runs_on() {
        for deterministic in [false, true] {
            let p = probe(deterministic);
            p.release.store(true, Ordering::Release);
            p.scheduler.submit(|| p.clone(), Task::Engine(0, 9));
            p.scheduler.submit(|| p.clone(), Task::Dma(0, 1));
            wait_ran(&p, 1);
            // Once more, on a lending thread (pool mode) or the drain.
            p.scheduler.lending_begin();
            p.scheduler.submit(|| p.clone(), Task::Engine(0, 9));
            p.scheduler.submit(|| p.clone(), Task::Dma(0, 2));
            while p.scheduler.run_one(&p) {}
            p.scheduler.lending_end();
            wait_ran(&p, 2);
            // Deterministic mode runs a task at once here, guarded too.
            assert_eq!(p.scheduler.run_now(|| p.clone(), Task::Engine(0, 9), |r| r.run(Task::Engine(0, 9))), deterministic);
            let want = 2 + usize::from(deterministic);
            let deadline = Instant::now() + Duration::from_secs(20);
            while (p.panicked.lock().unwrap().len() < want || p.scheduler.busy.load(Ordering::Acquire) > 0) && Instant::now() < deadline {
                std::thread::yield_now();
            }
            let got = p.panicked.lock().unwrap().clone();
            assert_eq!(got.len(), want, "deterministic {deterministic}: {got:?}");
            assert!(got.iter().all(|(t, why)| *t == Task::Engine(0, 9) && why == "task Engine(0, 9) fails"), "{got:?}");
            let ran: Vec<Task> = p.ran.lock().unwrap().iter().map(|(t, _)| *t).collect();
            assert_eq!(ran, [Task::Dma(0, 1), Task::Dma(0, 2)]);
            assert_eq!(p.scheduler.busy.load(Ordering::Acquire), 0, "no worker is left counted busy");
            p.scheduler.shutdown();
        }
    }

    #[test]
    fn a_waiting_thread_runs_queued_work_while_the_workers_are_busy() {
        let p = probe(false);
        p.scheduler.submit(|| p.clone(), Task::Engine(0, 0));
        while !p.holding.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        // The only worker is held: the queued task runs here.
        p.scheduler.submit(|| p.clone(), Task::Dma(0, 3));
        assert!(p.scheduler.run_one(&p));
        assert!(!p.scheduler.run_one(&p), "nothing left to run");
        assert_eq!(p.ran.lock().unwrap()[0], (Task::Dma(0, 3), std::thread::current().id()));
        p.release.store(true, Ordering::Release);
        while p.ran.lock().unwrap().len() < 2 {
            std::thread::yield_now();
        }
        p.scheduler.shutdown();
    }

    /// Each engine task submits a DMA task and, for engine 0, another
    /// engine task: the order of a one-task-at-a-time FIFO.
    struct Chain {
        scheduler: Scheduler,
        ran: Mutex<Vec<Task>>,
    }

    impl HasScheduler for Chain {
        fn scheduler(&self) -> &Scheduler {
            &self.scheduler
        }
    }

    impl Runner for Chain {
        fn run(self: &Arc<Self>, task: Task) {
            self.ran.lock().unwrap().push(task);
            if let Task::Engine(c, e) = task {
                self.scheduler.submit(|| self.clone(), Task::Dma(c, u16::from(e)));
                if e == 0 && c < 3 {
                    self.scheduler.submit(|| self.clone(), Task::Engine(c + 1, 0));
                }
            }
        }

        fn panicked(self: &Arc<Self>, _: Task, why: &str) {
            unreachable!("no task of this test panics: {why}");
        }
    }

    #[test]
    fn deterministic_drains_run_in_submission_order() {
        for limit in [DETERMINISTIC_DRAIN_LIMIT, 3] {
            let c = Arc::new(Chain { scheduler: Scheduler::new(true, 1, limit), ran: Mutex::new(Vec::new()) });
            c.scheduler.submit(|| c.clone(), Task::Engine(0, 0));
            let want = [
                Task::Engine(0, 0),
                Task::Dma(0, 0),
                Task::Engine(1, 0),
                Task::Dma(1, 0),
                Task::Engine(2, 0),
                Task::Dma(2, 0),
                Task::Engine(3, 0),
                Task::Dma(3, 0),
            ];
            // Past the limit a worker finishes the queue, in the same order.
            let deadline = Instant::now() + Duration::from_secs(10);
            while c.ran.lock().unwrap().len() < want.len() && Instant::now() < deadline {
                std::thread::yield_now();
            }
            assert_eq!(c.ran.lock().unwrap().as_slice(), &want, "drain limit {limit}");
            c.scheduler.shutdown();
        }
    }

    /// A deterministic scheduler whose tasks submit a task to another
    /// deterministic scheduler (`other`), recording what ran.
    struct Outer {
        scheduler: Scheduler,
        other: Arc<Probe>,
        ran: Mutex<Vec<Task>>,
    }

    impl HasScheduler for Outer {
        fn scheduler(&self) -> &Scheduler {
            &self.scheduler
        }
    }

    impl Runner for Outer {
        fn run(self: &Arc<Self>, task: Task) {
            self.ran.lock().unwrap().push(task);
            if let Task::Engine(c, _) = task {
                // A nested submit to this scheduler waits for the drain;
                // one to the other scheduler drains there and then.
                self.scheduler.submit(|| self.clone(), Task::Dma(c, 0));
                let before = self.other.ran.lock().unwrap().len();
                self.other.scheduler.submit(|| self.other.clone(), Task::Dma(c, 1));
                assert_eq!(self.other.ran.lock().unwrap().len(), before + 1, "the other scheduler's task ran inside the submit");
                assert_eq!(self.ran.lock().unwrap().last(), Some(&task), "this scheduler's own task waits for its drain");
            }
        }

        fn panicked(self: &Arc<Self>, _: Task, why: &str) {
            unreachable!("no task of this test panics: {why}");
        }
    }

    #[test]
    fn a_drainer_leaves_only_its_own_schedulers_nested_submits_to_the_drain() {
        let other = probe(true);
        other.release.store(true, Ordering::Release);
        let o = Arc::new(Outer { scheduler: Scheduler::new(true, 1, DETERMINISTIC_DRAIN_LIMIT), other: other.clone(), ran: Mutex::new(Vec::new()) });
        o.scheduler.submit(|| o.clone(), Task::Engine(0, 0));
        o.scheduler.submit(|| o.clone(), Task::Engine(1, 0));
        assert_eq!(o.ran.lock().unwrap().as_slice(), &[Task::Engine(0, 0), Task::Dma(0, 0), Task::Engine(1, 0), Task::Dma(1, 0)]);
        let ran: Vec<Task> = other.ran.lock().unwrap().iter().map(|(t, _)| *t).collect();
        assert_eq!(ran, [Task::Dma(0, 1), Task::Dma(1, 1)]);
        assert_eq!(DRAIN.with(|d| (d.scheduler.get(), d.next.get())), (0, None), "the mark ends with the drain");
    }

    fn wait_ran(p: &Probe, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while p.ran.lock().unwrap().len() < n {
            assert!(Instant::now() < deadline, "queued work never ran ({} of {n} tasks)", p.ran.lock().unwrap().len());
            std::thread::yield_now();
        }
    }

    #[test]
    fn only_work_beyond_what_the_lenders_can_take_is_the_workers() {
        let p = probe(false);
        p.release.store(true, Ordering::Release);
        p.scheduler.lending_begin();
        p.scheduler.lending_begin();
        p.scheduler.pending.store(2, Ordering::Release);
        assert!(!p.scheduler.beyond_lenders(), "two lenders take two tasks");
        p.scheduler.pending.store(3, Ordering::Release);
        assert!(p.scheduler.beyond_lenders());
        p.scheduler.pending.store(0, Ordering::Release);
        p.scheduler.lending_end();
        p.scheduler.lending_end();
        assert_eq!(p.scheduler.lenders.load(Ordering::SeqCst), 0);
        // Deterministic mode has no lenders.
        let d = probe(true);
        d.scheduler.lending_begin();
        assert_eq!(d.scheduler.lenders.load(Ordering::SeqCst), 0);
        d.scheduler.lending_end();
    }

    /// A lender running a task (`run_one`) takes nothing else until it
    /// ends: work queued meanwhile wakes a parked worker and the spinning
    /// one takes it at once (one lender in a long PE slice held back the
    /// other LNC-2 core's work).
    #[test]
    fn a_lender_running_a_task_leaves_new_work_to_the_workers() {
        let mut s = Scheduler::new(false, 2, DETERMINISTIC_DRAIN_LIMIT);
        s.cpus = 4;
        s.lending_begin();
        s.sleepers.store(1, Ordering::Release);
        s.pending.store(1, Ordering::Release);
        assert!(!s.beyond_lenders(), "an idle lender takes the task");
        assert!(!s.claim_wake(1), "no wake for it");
        s.lenders_busy.fetch_add(1, Ordering::SeqCst);
        assert!(s.beyond_lenders(), "a busy lender takes nothing");
        assert!(s.claim_wake(1), "a parked worker is woken for it");
        s.lenders_busy.fetch_sub(1, Ordering::SeqCst);
        s.lending_end();
    }

    /// The spinning worker takes parts of a split kernel call that a
    /// thread running a task offers (`kernels::split`).
    #[test]
    fn the_spinning_worker_helps_a_split_kernel() {
        let p = probe(false);
        p.release.store(true, Ordering::Release);
        let elsewhere = AtomicUsize::new(0);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut round = 0;
        while elsewhere.load(Ordering::Relaxed) == 0 {
            assert!(Instant::now() < deadline, "no part ran on the worker in {round} rounds");
            let offered = AtomicBool::new(false);
            std::thread::scope(|s| {
                // A long job on the board, then a task: the worker runs the
                // task and, spinning for more, finds the job still open.
                s.spawn(|| {
                    split::run_parts(64, &|_| {
                        offered.store(true, Ordering::Release);
                        let t = Instant::now();
                        while t.elapsed() < Duration::from_micros(200) {
                            std::hint::spin_loop();
                        }
                        // A scheduler's worker (this one, or one of another
                        // test running meanwhile: any spinning worker helps).
                        if std::thread::current().name().is_some_and(|n| n.starts_with("nrt-sim-")) {
                            elsewhere.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                });
                while !offered.load(Ordering::Acquire) {
                    std::thread::yield_now();
                }
                p.scheduler.submit(|| p.clone(), Task::Dma(0, 1));
            });
            round += 1;
            wait_ran(&p, round);
        }
        p.scheduler.shutdown();
    }

    /// The count of busy lenders follows `run_one`, also when the task
    /// panics (the guard reports it and the lender goes on).
    #[test]
    fn run_one_counts_its_lender_busy() {
        struct Seen {
            scheduler: Scheduler,
            busy: Mutex<Vec<usize>>,
            panics: Mutex<Vec<String>>,
        }
        impl HasScheduler for Seen {
            fn scheduler(&self) -> &Scheduler {
                &self.scheduler
            }
        }
        impl Runner for Seen {
            fn run(self: &Arc<Self>, task: Task) {
                self.busy.lock().unwrap().push(self.scheduler.lenders_busy.load(Ordering::SeqCst));
                assert!(task != Task::Dma(0, 9), "this task fails");
            }
            fn panicked(self: &Arc<Self>, _: Task, why: &str) {
                self.panics.lock().unwrap().push(why.to_string());
            }
        }
        let r = Arc::new(Seen { scheduler: Scheduler::new(false, 1, DETERMINISTIC_DRAIN_LIMIT), busy: Mutex::new(Vec::new()), panics: Mutex::new(Vec::new()) });
        for t in [Task::Dma(0, 1), Task::Dma(0, 9)] {
            r.scheduler.queue.lock().unwrap().push_back(t);
            r.scheduler.pending.store(1, Ordering::Release);
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.scheduler.run_one(&r)));
            assert_eq!(r.scheduler.lenders_busy.load(Ordering::SeqCst), 0);
        }
        assert_eq!(*r.busy.lock().unwrap(), [1, 1]);
        let panics = r.panics.lock().unwrap().clone();
        assert!(panics.len() == 1 && panics[0].contains("this task fails"), "{panics:?}");
        r.scheduler.shutdown();
    }

    /// Work left to a lender that never takes it still runs: the spinning
    /// worker takes it after its grace, and a lender that leaves wakes a
    /// parked worker for what it left.
    #[test]
    fn work_a_lender_leaves_still_runs() {
        let p = probe(false);
        p.release.store(true, Ordering::Release);
        // Start the worker (no lender yet).
        p.scheduler.submit(|| p.clone(), Task::Dma(0, 0));
        wait_ran(&p, 1);
        for round in 0..10usize {
            p.scheduler.lending_begin();
            p.scheduler.submit(|| p.clone(), Task::Dma(0, 1));
            if round % 2 == 0 {
                // The lender stays but runs nothing: the worker's grace.
                wait_ran(&p, 2 + round);
                p.scheduler.lending_end();
            } else {
                // Let the worker finish spinning and park, then leave.
                std::thread::sleep(Duration::from_micros(if round % 4 == 1 { 100 } else { 0 }));
                p.scheduler.lending_end();
                wait_ran(&p, 2 + round);
            }
        }
        // A lender that assists runs what it was left on its own thread.
        p.scheduler.lending_begin();
        p.scheduler.submit(|| p.clone(), Task::Dma(0, 2));
        while !p.scheduler.run_one(&p) && p.ran.lock().unwrap().len() < 12 {
            std::hint::spin_loop();
        }
        p.scheduler.lending_end();
        wait_ran(&p, 12);
        p.scheduler.shutdown();
    }

    /// Each task (e, n) queues (e, n - 1) and, every fourth, a DMA task
    /// as well: chains of hand-offs between workers and submitters.
    struct Relay {
        scheduler: Scheduler,
        done: AtomicUsize,
    }

    impl HasScheduler for Relay {
        fn scheduler(&self) -> &Scheduler {
            &self.scheduler
        }
    }

    impl Runner for Relay {
        fn run(self: &Arc<Self>, task: Task) {
            if let Task::Engine(c, n) = task
                && n > 0
            {
                self.scheduler.submit(|| self.clone(), Task::Engine(c, n - 1));
                if n % 4 == 0 {
                    self.scheduler.submit(|| self.clone(), Task::Dma(c, u16::from(n)));
                }
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }

        fn panicked(self: &Arc<Self>, _: Task, why: &str) {
            unreachable!("no task of this test panics: {why}");
        }
    }

    #[test]
    fn rationed_wakes_strand_no_task() {
        // A task left queued with every worker parked would wait for a
        // worker's 200 ms timeout: hundreds of hand-offs make any such
        // loss show as seconds. Half the runs lend the submitting thread.
        for lend in [false, true] {
            let r = Arc::new(Relay { scheduler: Scheduler::new(false, 2, DETERMINISTIC_DRAIN_LIMIT), done: AtomicUsize::new(0) });
            let (chains, len) = (4u32, 200u8);
            let want = chains as usize * (usize::from(len) + 1 + usize::from(len) / 4);
            let t = Instant::now();
            if lend {
                r.scheduler.lending_begin();
            }
            for round in 0..chains {
                r.scheduler.submit(|| r.clone(), Task::Engine(round, len));
                // Let the workers go idle and park between rounds.
                std::thread::sleep(Duration::from_millis(2));
            }
            while r.done.load(Ordering::Acquire) < want && t.elapsed() < Duration::from_secs(30) {
                if !(lend && r.scheduler.run_one(&r)) {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            if lend {
                r.scheduler.lending_end();
            }
            assert_eq!(r.done.load(Ordering::Acquire), want, "lend {lend}");
            assert!(t.elapsed() < Duration::from_secs(5), "lend {lend}: {:?} for {want} tasks", t.elapsed());
            r.scheduler.shutdown();
        }
    }

    /// Threads submitting to one deterministic scheduler at once: whoever
    /// finds the drain claimed leaves its task to the drainer, and every
    /// task has run once the submitting threads are done (none stranded
    /// between a drainer's last look at the queue and its release).
    #[test]
    fn concurrent_deterministic_submitters_strand_no_task() {
        let c = Arc::new(Chain { scheduler: Scheduler::new(true, 1, DETERMINISTIC_DRAIN_LIMIT), ran: Mutex::new(Vec::new()) });
        let threads: Vec<_> = (0..3u32)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..2000u32 {
                        // Engine 1 tasks submit one DMA task each (no chain).
                        c.scheduler.submit(|| c.clone(), Task::Engine(t * 1000 + i, 1));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // Drains run on the submitting threads, so with all of them joined
        // every task has run unless one was stranded.
        let ran = c.ran.lock().unwrap();
        assert_eq!(ran.len(), 12_000, "every engine task and the DMA task it submitted ran");
        assert!(c.scheduler.pending.load(Ordering::Acquire) == 0 && !c.scheduler.draining.load(Ordering::Acquire));
        c.scheduler.shutdown();
    }

    /// The doorbell's direct run (`run_now`) mixed with ordinary submits
    /// from several threads: a task runs at once only when nothing is
    /// queued and nobody drains, a refused one is submitted, and none is
    /// stranded by a drain that lets its claim go while another thread
    /// queues (the drain's last look at the pending count).
    #[test]
    fn direct_runs_and_concurrent_submits_strand_no_task() {
        let c = Arc::new(Chain { scheduler: Scheduler::new(true, 1, DETERMINISTIC_DRAIN_LIMIT), ran: Mutex::new(Vec::new()) });
        let direct = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..3u32)
            .map(|t| {
                let (c, direct) = (c.clone(), direct.clone());
                std::thread::spawn(move || {
                    for i in 0..2000u32 {
                        let task = Task::Engine(t * 1000 + i, 1);
                        if i % 2 == 0 && c.scheduler.run_now(|| c.clone(), task, |r| r.run(task)) {
                            direct.fetch_add(1, Ordering::Relaxed);
                        } else {
                            c.scheduler.submit(|| c.clone(), task);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let ran = c.ran.lock().unwrap();
        assert_eq!(ran.len(), 12_000, "every engine task and the DMA task it submitted ran");
        assert!(direct.load(Ordering::Relaxed) > 0, "some runs found the scheduler idle");
        assert!(c.scheduler.pending.load(Ordering::Acquire) == 0 && !c.scheduler.draining.load(Ordering::Acquire));
        c.scheduler.shutdown();
    }

    /// `run_now` refuses where a direct run would break the order or the
    /// mode: pool mode, and a task of a drain under way on this thread
    /// (which hands its submits to the drain instead).
    #[test]
    fn run_now_only_runs_on_an_idle_deterministic_scheduler() {
        let pool = probe(false);
        pool.release.store(true, Ordering::Release);
        assert!(!pool.scheduler.run_now(|| pool.clone(), Task::Dma(0, 1), |r| r.run(Task::Dma(0, 1))));
        assert!(pool.ran.lock().unwrap().is_empty());
        pool.scheduler.shutdown();

        struct Nested {
            scheduler: Scheduler,
            inner: Mutex<Vec<bool>>,
            ran: Mutex<Vec<Task>>,
        }
        impl HasScheduler for Nested {
            fn scheduler(&self) -> &Scheduler {
                &self.scheduler
            }
        }
        impl Runner for Nested {
            fn run(self: &Arc<Self>, task: Task) {
                self.ran.lock().unwrap().push(task);
                if task == Task::Engine(0, 0) {
                    let direct = self.scheduler.run_now(|| self.clone(), Task::Engine(0, 1), |r| r.run(Task::Engine(0, 1)));
                    self.inner.lock().unwrap().push(direct);
                    self.scheduler.submit(|| self.clone(), Task::Engine(0, 1));
                }
            }

            fn panicked(self: &Arc<Self>, _: Task, why: &str) {
                unreachable!("no task of this test panics: {why}");
            }
        }
        let n = Arc::new(Nested { scheduler: Scheduler::new(true, 1, DETERMINISTIC_DRAIN_LIMIT), inner: Mutex::new(Vec::new()), ran: Mutex::new(Vec::new()) });
        assert!(n.scheduler.run_now(|| n.clone(), Task::Engine(0, 0), |r| r.run(Task::Engine(0, 0))), "idle: runs at once");
        assert_eq!(*n.inner.lock().unwrap(), [false], "inside the drain: refused");
        assert_eq!(*n.ran.lock().unwrap(), [Task::Engine(0, 0), Task::Engine(0, 1)], "the refused task was submitted and ran after");
        assert!(!n.scheduler.draining.load(Ordering::Acquire));
    }

    #[test]
    fn deterministic_mode_keeps_its_order_and_lends_nothing() {
        let p = probe(true);
        p.release.store(true, Ordering::Release);
        p.scheduler.submit(|| p.clone(), Task::Dma(0, 1));
        assert_eq!(p.ran.lock().unwrap().len(), 1, "the submitting thread drained it");
        assert!(!p.scheduler.run_one(&p));
    }
}
