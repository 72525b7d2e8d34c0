//! The network proxy threads of a process, as libnrt 2.31 has them:
//! persistent threads that serve the executions of loaded NEFFs whose
//! collectives have ranks in other processes, instead of a thread started
//! per execution.
//!
//! - `NEURON_RT_RANKS_PER_NETWORK_PROXY` (default 1): how many of this
//!   process's ranks share one thread. The local ranks, in global-rank
//!   order, go to threads `position / N`; a thread drives every operation
//!   of its ranks in turn, one round each, and backs off only when none of
//!   them moved.
//! - `NEURON_RT_ONE_THREAD_PER_CORE`: each thread pins itself to a CPU of
//!   its own, thread `i` to the `i`-th CPU the process may run on (modulo
//!   their number, so beyond that count threads share CPUs).
//!
//! A thread starts on its ranks' first execution and parks (bounded waits
//! of [`PARK`]) when it has nothing to do; it ends when the world is
//! dropped. An operation's failure or panic is that operation's outcome
//! (its waiters get it; the thread goes on with the others). A thread that
//! dies anyway leaves every operation it held or had queued failed for
//! their waiters (NRT_NETWORK_PROXY_FAILURE, "ended without an outcome"),
//! and the next execution of its ranks starts a new one.
//!
//! The load-time meeting and standalone collectives keep a thread of their
//! own per operation ([`super::proxy::Proxy::start`]): they may make the
//! first connections of their links, whose accept waits for the peer and
//! would hold up the other ranks of a shared thread.

use super::proxy::{Idle, Job, Pass, Proxy, Running};
use crate::log::{Level, Module};
use crate::status::{NrtError, NrtResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How long an idle proxy thread parks before it looks again whether its
/// world is gone.
pub const PARK: Duration = Duration::from_secs(1);

/// The proxy threads of one world.
pub struct ProxyThreads {
    ranks_per_thread: usize,
    pin: bool,
    /// `NEURON_SIM_INJECT=proxy_thread_panic:after=N`: each thread panics,
    /// outside its operations, once N of its rounds moved something.
    panic_after: Option<u64>,
    workers: Mutex<Vec<Option<Arc<Worker>>>>,
}

#[derive(Default)]
struct Worker {
    index: usize,
    /// Operations handed to the thread, not yet picked up.
    incoming: Mutex<Vec<Running>>,
    wake: Condvar,
    alive: AtomicBool,
    closing: AtomicBool,
}

impl std::fmt::Debug for ProxyThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyThreads").field("ranks_per_thread", &self.ranks_per_thread).field("pin", &self.pin).field("running", &self.running()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the worker dead when its thread ends, however it ends; what it
/// had queued is dropped, which fails those operations for their waiters
/// (as dropping the ones it held does, by unwinding).
struct ThreadEnd(Arc<Worker>);

impl Drop for ThreadEnd {
    fn drop(&mut self) {
        self.0.alive.store(false, Ordering::Release);
        lock(&self.0.incoming).clear();
    }
}

impl ProxyThreads {
    /// Threads for `ranks_per_thread` ranks each (at least 1), pinned to
    /// CPUs of their own when `pin`.
    pub fn new(ranks_per_thread: u32, pin: bool) -> ProxyThreads {
        ProxyThreads { ranks_per_thread: (ranks_per_thread as usize).max(1), pin, panic_after: None, workers: Mutex::new(Vec::new()) }
    }

    /// Threads that panic (outside their operations) once `after` of
    /// their rounds moved something (`NEURON_SIM_INJECT=proxy_thread_panic`).
    pub fn with_injected_panic(mut self, after: Option<u64>) -> ProxyThreads {
        self.panic_after = after;
        self
    }

    /// The thread serving the local rank at `position` (its place among
    /// this process's ranks in global-rank order).
    pub fn thread_of(&self, position: usize) -> usize {
        position / self.ranks_per_thread
    }

    /// Threads running now.
    pub fn running(&self) -> usize {
        lock(&self.workers).iter().flatten().filter(|w| w.alive.load(Ordering::Acquire)).count()
    }

    /// Hands `job` to the thread of the local rank at `position`
    /// (starting it, or a new one for a thread that died).
    pub fn start(&self, position: usize, job: Job) -> NrtResult<Arc<Proxy>> {
        let p = Proxy::new(&job);
        let op = Running::new(job, p.clone());
        let w = self.worker(self.thread_of(position))?;
        lock(&w.incoming).push(op);
        w.wake.notify_one();
        Ok(p)
    }

    fn worker(&self, index: usize) -> NrtResult<Arc<Worker>> {
        let mut ws = lock(&self.workers);
        if ws.len() <= index {
            ws.resize(index + 1, None);
        }
        if let Some(w) = &ws[index]
            && w.alive.load(Ordering::Acquire)
        {
            return Ok(w.clone());
        }
        let w = Arc::new(Worker { index, alive: AtomicBool::new(true), ..Worker::default() });
        let (worker, pin, panic_after) = (w.clone(), self.pin, self.panic_after);
        std::thread::Builder::new()
            .name(format!("nrt-cc-proxy-{index}"))
            .spawn(move || serve(worker, pin, panic_after))
            .map_err(|e| NrtError::failure(format!("cannot start collectives network proxy thread {index}: {e}")))?;
        ws[index] = Some(w.clone());
        Ok(w)
    }
}

impl Drop for ProxyThreads {
    fn drop(&mut self) {
        for w in lock(&self.workers).iter().flatten() {
            w.closing.store(true, Ordering::Release);
            w.wake.notify_all();
        }
    }
}

/// A proxy thread: picks up the operations handed to it and drives them
/// all, a round each, until the world is dropped.
fn serve(w: Arc<Worker>, pin: bool, panic_after: Option<u64>) {
    let _end = ThreadEnd(w.clone());
    if pin {
        match nrt_net::affinity::pin_current_thread(w.index) {
            Ok(cpu) => crate::log::write(Level::Info, Module::Nrt, "cc_proxy", format_args!("network proxy thread {} runs on CPU {cpu} (NEURON_RT_ONE_THREAD_PER_CORE)", w.index)),
            Err(e) => crate::log::write(Level::Warn, Module::Nrt, "cc_proxy", format_args!("network proxy thread {} could not be pinned to a CPU of its own (NEURON_RT_ONE_THREAD_PER_CORE): {e}", w.index)),
        }
    }
    let mut ops: Vec<Running> = Vec::new();
    let mut idle = Idle::default();
    let mut moved_rounds = 0u64;
    loop {
        {
            let mut q = lock(&w.incoming);
            if ops.is_empty() && q.is_empty() {
                if w.closing.load(Ordering::Acquire) {
                    return;
                }
                q = w.wake.wait_timeout(q, PARK).unwrap_or_else(|e| e.into_inner()).0;
            }
            ops.append(&mut q);
        }
        let mut moved = false;
        let mut i = 0;
        while i < ops.len() {
            match ops[i].pass() {
                Pass::Progress => {
                    moved = true;
                    i += 1;
                }
                Pass::Idle => i += 1,
                Pass::Ended => {
                    ops.swap_remove(i).end();
                    moved = true;
                }
            }
        }
        if moved {
            moved_rounds += 1;
            if panic_after.is_some_and(|n| moved_rounds > n) && !ops.is_empty() {
                panic!("injected panic of network proxy thread {} (NEURON_SIM_INJECT=proxy_thread_panic)", w.index);
            }
        }
        match ops.first() {
            Some(op) if !moved => idle.wait(op.world()),
            _ => idle.reset(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_share_threads_by_their_position() {
        let one = ProxyThreads::new(1, false);
        assert_eq!((0..4).map(|p| one.thread_of(p)).collect::<Vec<_>>(), [0, 1, 2, 3]);
        let two = ProxyThreads::new(2, false);
        assert_eq!((0..5).map(|p| two.thread_of(p)).collect::<Vec<_>>(), [0, 0, 1, 1, 2]);
        // 0 is taken as 1: every rank has a thread.
        assert_eq!(ProxyThreads::new(0, false).thread_of(3), 3);
        assert_eq!(one.running(), 0, "no thread before the first execution");
    }
}
