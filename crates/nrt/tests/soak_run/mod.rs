//! The soak run shared by the ignored soak test (`tests/soak.rs`, which
//! asserts on its report) and the soak bench (`benches/soak.rs`, which
//! prints its figures): threads each running thousands of executions over
//! three models on one simulated device, half of them synchronous
//! (`nrt_execute`'s path, host tensors) and half asynchronous (an
//! execution unit's queue, device tensors, up to [`ASYNC_DEPTH`] in flight
//! per thread), with a fault injected into the device every few hundred
//! executions (each kind of `FaultKind` in turn). Tensor reads and writes
//! are DMA work, so a DMA fault may fail one instead of an execution: that
//! settles the execution with the transfer's status.
//!
//! A model a fault poisoned is unloaded and loaded again. A compute unit a
//! fault made unrecoverable stays so until the runtime restarts, as in
//! libnrt (every later request on it fails with
//! NRT_EXEC_UNIT_UNRECOVERABLE); the thread then starts a fresh set of
//! units, which is what an application does after re-initialising.
//!
//! Everything is counted: every execution is settled exactly once (its
//! output equal to its input, or a status), and every asynchronous
//! completion callback fires exactly once for its sequence id.

use crate::exec_support::*;
use nrt::NrtStatus;
use nrt::load::{LoadSettings, ModelHost};
use nrt::model::ModelId;
use nrt::tensor::{Tensor, TensorSet};
use nrt::xu::unit::OnComplete;
use nrt::xu::{XuSettings, Xus};
use nrt_sim::{FaultKind, FaultSpec, SimDevice};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Asynchronous executions a thread keeps in flight.
pub const ASYNC_DEPTH: usize = 4;

/// How long a thread waits for one asynchronous execution: far above the
/// device's own execution timeout, so reaching it means a lost completion.
const SETTLE_BOUND: Duration = Duration::from_secs(60);

/// The fault kinds injected, in turn.
pub const KINDS: [FaultKind; 8] = [FaultKind::HbmUe, FaultKind::HbmUeRepairable, FaultKind::SramParity, FaultKind::DmaAbort, FaultKind::NqOverflow, FaultKind::Hang, FaultKind::Nan, FaultKind::Oob];

/// The size of one run.
#[derive(Clone, Copy, Debug)]
pub struct SoakPlan {
    /// Threads.
    pub threads: u64,
    /// Executions per thread.
    pub execs: u64,
    /// A fault every this many executions (over all threads); 0 for none.
    pub fault_every: u64,
    /// Executions per sync or async run within a thread (they alternate).
    pub burst: u64,
}

impl SoakPlan {
    /// The plan from `SOAK_THREADS`, `SOAK_EXECS`, `SOAK_FAULT_EVERY` and
    /// `SOAK_BURST`, with the sizes as defaults.
    pub fn from_env() -> SoakPlan {
        SoakPlan { threads: env_or("SOAK_THREADS", 4), execs: env_or("SOAK_EXECS", 10_000), fault_every: env_or("SOAK_FAULT_EVERY", 300), burst: env_or("SOAK_BURST", 16).max(1) }
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// What a run counted.
#[derive(Debug, Default)]
pub struct SoakReport {
    /// Executions asked for (threads x executions).
    pub total: u64,
    /// Settled with the right output (or only NaN words changed by a NaN
    /// fault).
    pub ok: u64,
    /// Of those, outputs with injected NaN words.
    pub nan_outputs: u64,
    /// Settled with a status.
    pub failed: u64,
    /// Executions that went through an execution unit.
    pub async_execs: u64,
    /// Completion callbacks that fired.
    pub callbacks: u64,
    /// Sequence ids whose callback fired more than once, or never.
    pub callback_anomalies: Vec<String>,
    /// Models unloaded after being poisoned and loaded again.
    pub reloads: u64,
    /// Sets of execution units replaced after one became unrecoverable.
    pub unit_restarts: u64,
    /// Faults injected.
    pub injected: u64,
    /// Failures by status.
    pub statuses: BTreeMap<String, u64>,
    /// (executions done, resident bytes), every 1,000 executions.
    pub rss_curve: Vec<(u64, u64)>,
    /// Ledger total after warm-up, and at the end.
    pub ledger_baseline: u64,
    /// The ledger's total at the end.
    pub ledger_end: u64,
    /// Memory still booked to models at the end.
    pub ledger_models_left: usize,
    /// Wall time of the executions.
    pub elapsed: Duration,
}

impl SoakReport {
    /// RSS over the second half of the run: (lowest, highest). The first
    /// half is warm-up: besides caches, every execution unit replaced
    /// after a fatal fault brings a new worker thread, and glibc gives new
    /// threads their own malloc arenas (up to 8 per core), each growing to
    /// its working set once; runs of 160,000 executions level off by then.
    pub fn warm_rss(&self) -> Option<(u64, u64)> {
        let warm: Vec<u64> = self.rss_curve.iter().skip(self.rss_curve.len() / 2).map(|c| c.1).collect();
        Some((*warm.iter().min()?, *warm.iter().max()?))
    }

    /// Prints the counts and the curve.
    pub fn print(&self, plan: &SoakPlan) {
        println!(
            "soak: {} threads x {} executions ({} async) in {:.1} s ({:.0} executions/s): {} ok ({} with NaN output), {} failed, {} reloads, {} unit restarts, {} faults injected",
            plan.threads,
            plan.execs,
            self.async_execs,
            self.elapsed.as_secs_f64(),
            self.total as f64 / self.elapsed.as_secs_f64().max(1e-9),
            self.ok,
            self.nan_outputs,
            self.failed,
            self.reloads,
            self.unit_restarts,
            self.injected
        );
        println!("soak: {} completion callbacks, anomalies {:?}", self.callbacks, self.callback_anomalies);
        println!("soak: statuses {:?}", self.statuses);
        for (n, r) in &self.rss_curve {
            println!("soak: rss after {n:>6} executions: {:.1} MiB", *r as f64 / (1 << 20) as f64);
        }
        println!("soak: ledger {} bytes at the end, baseline {}", self.ledger_end, self.ledger_baseline);
        if let Some((lo, hi)) = self.warm_rss() {
            println!("soak: rss after warm-up {:.1}..{:.1} MiB ({:+.1}%)", lo as f64 / (1 << 20) as f64, hi as f64 / (1 << 20) as f64, (hi as f64 / lo as f64 - 1.0) * 100.0);
        }
    }
}

/// Resident set size in bytes (`/proc/self/statm`, second field, pages).
pub fn rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = s.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("statm's resident field");
    pages * 4096
}

/// The three models: the copy example at three sizes (rows of 128 floats).
fn models() -> Vec<(Vec<u8>, usize)> {
    [8u64, 16, 32]
        .iter()
        .map(|&rows| {
            let contents = nrt_neff::read_dir(&examples_dir().join("copy")).expect("examples/copy");
            let mut m = contents.members;
            resize_copy_io(&mut m, rows, 128);
            (pack_members(&contents.header.unwrap_or_default(), m), (rows * 128 * 4) as usize)
        })
        .collect()
}

/// Counters every thread adds to.
#[derive(Default)]
struct Tally {
    done: AtomicU64,
    ok: AtomicU64,
    nan_outputs: AtomicU64,
    failed: AtomicU64,
    async_execs: AtomicU64,
    reloads: AtomicU64,
    unit_restarts: AtomicU64,
    injected: AtomicU64,
    statuses: Mutex<BTreeMap<String, u64>>,
    curve: Mutex<Vec<(u64, u64)>>,
    /// Callbacks fired, and the sequence ids whose callback fired other
    /// than once.
    callbacks: Mutex<(u64, Vec<String>)>,
}

impl Tally {
    fn fail(&self, status: NrtStatus) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        *self.statuses.lock().unwrap().entry(format!("{status:?}")).or_default() += 1;
    }

    /// Checks a settled output against its input.
    fn check(&self, got: &[u8], input: &[u8], what: &str) {
        if got != input {
            // An injected NaN fault completes as success (numerical errors
            // are not reported by default, as in libnrt); the only change
            // it may make is NaN words.
            let nan_only = got.chunks(4).zip(input.chunks(4)).all(|(g, i)| g == i || f32::from_le_bytes(g.try_into().unwrap()).is_nan());
            assert!(nan_only, "{what}: wrong output");
            self.nan_outputs.fetch_add(1, Ordering::Relaxed);
        }
        self.ok.fetch_add(1, Ordering::Relaxed);
    }
}

/// One asynchronous execution in flight.
struct Pending {
    seq: u64,
    model: usize,
    input: Vec<u8>,
    out: Arc<Tensor>,
    cell: Arc<Mutex<Callback>>,
    /// Keeps the input tensor alive until the execution settles.
    _ins: TensorSet,
}

/// What an execution's completion callback left: its status and how many
/// times it fired.
#[derive(Default)]
struct Callback {
    status: Option<NrtStatus>,
    fired: u32,
}

/// Settled executions whose callback cell is still watched, so a callback
/// that fires again after its execution settled is caught; bounded, so the
/// check does not grow the resident set it measures.
const WATCHED: usize = 4096;

/// One thread's part.
struct Worker<'a> {
    t: u64,
    plan: SoakPlan,
    host: &'a ModelHost,
    dev: &'a SimDevice,
    neffs: &'a [(Vec<u8>, usize)],
    tally: &'a Tally,
    ids: Vec<ModelId>,
    xus: Xus,
    generation: u64,
    pending: VecDeque<Pending>,
    /// The last [`WATCHED`] settled executions: (sequence id, unit
    /// generation, callback cell).
    settled: VecDeque<(u64, u64, Arc<Mutex<Callback>>)>,
}

impl Worker<'_> {
    fn run(&mut self) {
        self.ids = self.neffs.iter().map(|(n, _)| self.host.load(n, -1, -1).expect("load")).collect();
        for i in 0..self.plan.execs {
            let m = (i as usize + self.t as usize) % self.ids.len();
            let input = data(self.neffs[m].1, i ^ (self.t << 32));
            if (i / self.plan.burst) % 2 == 1 {
                self.submit(m, input);
            } else {
                self.settle_all();
                self.sync(i, m, input);
            }
            self.executed();
        }
        self.settle_all();
        for id in std::mem::take(&mut self.ids) {
            self.host.unload(id).expect("unload");
        }
        // Units stop (and finish any callback) when dropped.
        self.xus = Xus::new(XuSettings::default());
        while let Some(s) = self.settled.pop_front() {
            self.audit(s);
        }
    }

    /// Counts a settled execution's callbacks; anything but exactly one is
    /// an anomaly.
    fn audit(&self, (seq, generation, cell): (u64, u64, Arc<Mutex<Callback>>)) {
        let fired = cell.lock().unwrap().fired;
        let mut t = self.tally.callbacks.lock().unwrap();
        t.0 += u64::from(fired);
        if fired != 1 {
            t.1.push(format!("thread {} units {generation} seq {seq:#x}: {fired} callbacks", self.t));
        }
    }

    /// Counts one execution issued; injects a fault and samples RSS on
    /// schedule.
    fn executed(&self) {
        let n = self.tally.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.plan.fault_every > 0 && n % self.plan.fault_every == 0 {
            let k = self.tally.injected.fetch_add(1, Ordering::Relaxed);
            self.dev.inject(FaultSpec::new(KINDS[k as usize % KINDS.len()]));
        }
        if n % 1000 == 0 {
            self.tally.curve.lock().unwrap().push((n, rss()));
        }
    }

    fn sync(&mut self, i: u64, m: usize, input: Vec<u8>) {
        let size = self.neffs[m].1;
        let (ins, outs, out) = host_io(input.clone(), size);
        match self.host.execute(self.ids[m], &ins, &outs) {
            Ok(()) => self.tally.check(&read_all(&out), &input, &format!("thread {} sync execution {i}", self.t)),
            Err(e) => {
                self.tally.fail(e.status);
                self.reload_if_poisoned(m);
            }
        }
    }

    fn submit(&mut self, m: usize, input: Vec<u8>) {
        if self.pending.len() >= ASYNC_DEPTH {
            self.settle_one();
        }
        self.tally.async_execs.fetch_add(1, Ordering::Relaxed);
        let model = self.host.models().get(self.ids[m]).expect("a loaded model");
        let core = self.host.vcores()[model.vnc as usize][0];
        let mem = self.host.memory();
        let size = self.neffs[m].1 as u64;
        let din = Arc::new(Tensor::allocate_device(mem, core, size, "input").expect("device input"));
        let out = Arc::new(Tensor::allocate_device(mem, core, size, "output").expect("device output"));
        // Writing the input is DMA work: an injected DMA fault may take it.
        if let Err(e) = din.write(0, &input) {
            self.tally.fail(e.status);
            return;
        }
        let (mut ins, mut outs) = (TensorSet::new(), TensorSet::new());
        ins.add("input", din);
        outs.add("output", out.clone());
        let cell = Arc::new(Mutex::new(Callback::default()));
        let c = cell.clone();
        let done = OnComplete::once(move |_, st| {
            let mut c = c.lock().unwrap();
            c.status = Some(st);
            c.fired += 1;
        });
        match self.xus.schedule_execute(model.vnc, model, ins.clone(), outs, 0, Some(done)) {
            Ok(seq) => {
                self.pending.push_back(Pending { seq, model: m, input, out, cell, _ins: ins });
            }
            Err(e) => {
                // Refused at submission: no sequence id, no callback.
                self.tally.fail(e.status);
                if e.status == NrtStatus::ExecUnitUnrecoverable {
                    self.restart_units();
                }
                self.reload_if_poisoned(m);
            }
        }
    }

    /// Settles the oldest asynchronous execution.
    fn settle_one(&mut self) {
        let Some(p) = self.pending.pop_front() else { return };
        let completed = self.xus.wait(p.seq, SETTLE_BOUND).expect("wait on an issued sequence id");
        assert!(completed, "thread {}: sequence id {:#x} never completed within {SETTLE_BOUND:?}", self.t, p.seq);
        let status = p.cell.lock().unwrap().status.unwrap_or_else(|| panic!("thread {}: sequence id {:#x} completed without its callback", self.t, p.seq));
        if self.settled.len() == WATCHED {
            let oldest = self.settled.pop_front().unwrap();
            self.audit(oldest);
        }
        self.settled.push_back((p.seq, self.generation, p.cell.clone()));
        if status == NrtStatus::Success {
            // Reading the output back is DMA work too (a fault may take it).
            let mut got = vec![0u8; p.input.len()];
            match p.out.read(0, &mut got) {
                Ok(()) => self.tally.check(&got, &p.input, &format!("thread {} async sequence {:#x}", self.t, p.seq)),
                Err(e) => self.tally.fail(e.status),
            }
        } else {
            self.tally.fail(status);
            if status == NrtStatus::ExecUnitUnrecoverable || nrt::exec::errors::poisons(status, false) {
                self.settle_all();
                self.restart_units();
            }
            self.reload_if_poisoned(p.model);
        }
    }

    fn settle_all(&mut self) {
        while !self.pending.is_empty() {
            self.settle_one();
        }
    }

    /// A fresh set of execution units (after one became unrecoverable);
    /// the old ones finish what they hold and stop.
    fn restart_units(&mut self) {
        self.settle_all();
        self.xus = Xus::new(XuSettings::default());
        self.generation += 1;
        self.tally.unit_restarts.fetch_add(1, Ordering::Relaxed);
    }

    fn reload_if_poisoned(&mut self, m: usize) {
        let poisoned = self.host.models().get(self.ids[m]).and_then(|model| model.poisoned());
        if poisoned.is_some() {
            self.settle_all();
            self.host.unload(self.ids[m]).expect("unload a poisoned model");
            self.ids[m] = self.host.load(&self.neffs[m].0, -1, -1).expect("reload");
            self.tally.reloads.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Runs `plan` on a fresh simulated device and returns what it counted.
pub fn run(plan: SoakPlan) -> SoakReport {
    let settings = LoadSettings { exec_timeout: Duration::from_millis(200), ..LoadSettings::default() };
    let (dev, host) = host_with(settings);
    // The allocation log is a bounded ring of 2^20 entries by default
    // (NEURON_RT_DEBUG_MEMLOG_MAX_SIZE, as libnrt); the asynchronous half
    // allocates its device tensors per execution, so a default-sized log
    // would grow the resident set by ~56 bytes per event until it wraps.
    // A small ring takes that bounded growth out of the flatness check.
    host.memory().set_memlog_capacity(4096);
    let neffs = models();
    // Each core's own buffers come with its first load: the baseline is
    // taken after as many models as the run holds at once were loaded
    // (spreading over the same cores) and unloaded.
    let warm: Vec<_> = (0..plan.threads).flat_map(|_| neffs.iter()).map(|(n, _)| host.load(n, -1, -1).expect("warm-up load")).collect();
    for id in warm {
        host.unload(id).unwrap();
    }
    let baseline = host.memory().ledger().total();
    let tally = Tally::default();
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..plan.threads {
            let (host, neffs, tally, dev) = (&host, &neffs[..], &tally, &*dev);
            s.spawn(move || {
                let mut w = Worker {
                    t,
                    plan,
                    host,
                    dev,
                    neffs,
                    tally,
                    ids: Vec::new(),
                    xus: Xus::new(XuSettings::default()),
                    generation: 0,
                    pending: VecDeque::new(),
                    settled: VecDeque::with_capacity(WATCHED),
                };
                w.run();
            });
        }
    });
    let elapsed = start.elapsed();
    let ledger = host.memory().ledger();
    let (callbacks, mut anomalies) = tally.callbacks.into_inner().unwrap();
    anomalies.sort();
    SoakReport {
        total: plan.threads * plan.execs,
        ok: tally.ok.into_inner(),
        nan_outputs: tally.nan_outputs.into_inner(),
        failed: tally.failed.into_inner(),
        async_execs: tally.async_execs.into_inner(),
        callbacks,
        callback_anomalies: anomalies,
        reloads: tally.reloads.into_inner(),
        unit_restarts: tally.unit_restarts.into_inner(),
        injected: tally.injected.into_inner(),
        statuses: tally.statuses.into_inner().unwrap(),
        rss_curve: tally.curve.into_inner().unwrap(),
        ledger_baseline: baseline,
        ledger_end: ledger.total(),
        ledger_models_left: ledger.models.len(),
        elapsed,
    }
}
