//! Device profiles started on a loaded model: `nrt_profile_start/stop`,
//! continuous profiling and inspect sessions.
//!
//! [`start`] instruments the model's images in place (every record's
//! `debug_cmd` set to START_END, the originals kept) and gives its cores
//! their TRACE rings; each later execution's instruction trace is read
//! while the cores are still locked ([`Capture::after_execution`]) and
//! kept as [`Keep`] says; [`stop`] writes the original bytes back and
//! hands the captured executions to the caller, who writes them
//! ([`write_profile`]), and lets go of the cores' trace rings (the last
//! profile on a core unbinds them). A model instrumented at load
//! (NEURON_RT_INSPECT_DEVICE_PROFILE) whose profile still runs is
//! captured as it is and left instrumented.

use super::{ExecutionTrace, TracedImages};
use crate::model::{DeviceProgram, LoadedModel};
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::EngineId;
use nrt_isa::record::RECORD_SIZE;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which executions a capture keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Every execution (`nrt_profile_start/stop`, inspect).
    All,
    /// Only the latest (continuous profiling saves it on demand).
    Last,
    /// Only executions that failed (inspect on fail).
    Failed,
}

/// One captured execution.
#[derive(Clone, Debug)]
pub struct CapturedExecution {
    /// Position among the model's executions since the capture started.
    pub index: u64,
    /// Process-wide order of the capture (which execution is latest).
    pub order: u64,
    /// How it ended.
    pub status: NrtStatus,
    /// What the engines executed.
    pub trace: ExecutionTrace,
}

/// A capture in progress on one model.
#[derive(Debug)]
pub struct Capture {
    keep: Keep,
    /// Per core of the program: the `debug_cmd` bytes this capture
    /// replaced (`None`: instrumented at load, left so).
    originals: Vec<Option<TracedImages>>,
    executions: Vec<CapturedExecution>,
    seen: u64,
}

static ORDER: AtomicU64 = AtomicU64::new(1);

impl Capture {
    /// The captured executions so far.
    pub fn executions(&self) -> &[CapturedExecution] {
        &self.executions
    }

    /// Called after each execution of the model, cores still locked.
    /// `already` is the trace the load-time profile collected from the
    /// same rings, if it did.
    /// `device_time` is its first START and device time (ps).
    pub fn after_execution(&mut self, prog: &DeviceProgram, already: Option<ExecutionTrace>, status: NrtStatus, device_time: Option<(u64, u64)>) {
        let index = self.seen;
        self.seen += 1;
        let trace = already.unwrap_or_else(|| {
            let t = super::collect_with(prog, |ci| self.originals.get(ci).and_then(Option::as_ref).or(prog.cores[ci].trace.as_ref()), status == NrtStatus::Success);
            ExecutionTrace { device_time, ..t }
        });
        let keep = match self.keep {
            Keep::All => true,
            Keep::Last => {
                self.executions.clear();
                true
            }
            Keep::Failed => status != NrtStatus::Success,
        };
        if keep {
            self.executions.push(CapturedExecution { index, order: ORDER.fetch_add(1, Ordering::Relaxed), status, trace });
        }
    }
}

fn io(what: &str, e: nrt_hal::HalError) -> NrtError {
    NrtError::failure(format!("{what}: {e}"))
}

/// Instruments `model` and starts keeping its executions' traces.
/// NRT_INVALID for a model without a device program (no-device mode) or
/// one already being captured.
pub fn start(model: &LoadedModel, keep: Keep) -> NrtResult<()> {
    let Some(prog) = &model.program else {
        return Err(NrtError::invalid(format!("model {} \"{}\" has no device program (no-device mode): there is nothing to profile", model.id, model.name)));
    };
    let mut st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
    if st.capture.is_some() {
        return Err(NrtError::invalid(format!("model {} \"{}\" is already being profiled; stop that profile first", model.id, model.name)));
    }
    let mut originals: Vec<Option<TracedImages>> = Vec::with_capacity(prog.cores.len());
    for c in &prog.cores {
        if c.trace.is_some() && c.trace_held.load(Ordering::Acquire) {
            originals.push(None);
            continue;
        }
        if let Err(e) = c.core.enable_trace() {
            restore_all(prog, &originals);
            return Err(e);
        }
        let r = (|| {
            // Nothing from an earlier capture may mix in.
            c.core.discard_trace();
            let mut t = TracedImages::default();
            for e in EngineId::ALL.into_iter().filter(|e| c.engines.contains(*e)) {
                let n = c.image_records[e.index()] as usize;
                let mut bytes = vec![0u8; n * RECORD_SIZE];
                c.core.device().read(c.images[e.index()], &mut bytes).map_err(|x| io("reading an instruction image", x))?;
                let mut cmds = Vec::with_capacity(n);
                for rec in bytes.chunks_exact_mut(RECORD_SIZE) {
                    cmds.push(std::mem::replace(&mut rec[super::DEBUG_CMD_OFFSET], super::DEBUG_CMD_START_END));
                }
                c.core.device().write(c.images[e.index()], &bytes).map_err(|x| io("writing an instruction image", x))?;
                t.debug_cmds[e.index()] = cmds;
            }
            Ok(t)
        })();
        match r {
            Ok(t) => originals.push(Some(t)),
            Err(e) => {
                c.core.release_trace();
                restore_all(prog, &originals);
                return Err(e);
            }
        }
    }
    st.capture = Some(Capture { keep, originals, executions: Vec::new(), seen: 0 });
    Ok(())
}

/// Ends what [`start`] did on each core it instrumented: the original
/// images back, the core's trace rings let go.
fn restore_all(prog: &DeviceProgram, originals: &[Option<TracedImages>]) {
    for (c, t) in prog.cores.iter().zip(originals) {
        let Some(t) = t else { continue };
        if let Err(e) = super::restore_images(c, t) {
            crate::log_warn!(crate::log::Module::Nrt, "restoring the uninstrumented images of {} failed: {}", c.subgraph, e.message);
        }
        c.core.release_trace();
    }
}

/// Ends `model`'s capture: restores the images it instrumented and
/// returns what it captured. NRT_INVALID when none runs.
pub fn stop(model: &LoadedModel) -> NrtResult<Capture> {
    let mut st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
    let c = st.capture.take().ok_or_else(|| NrtError::invalid(format!("model {} \"{}\" is not being profiled", model.id, model.name)))?;
    if let Some(prog) = &model.program {
        restore_all(prog, &c.originals);
    }
    Ok(c)
}

/// Runs `f` on `model`'s capture (e.g. to save the latest execution
/// without stopping); NRT_INVALID when none runs.
pub fn with_capture<T>(model: &LoadedModel, f: impl FnOnce(&Capture) -> T) -> NrtResult<T> {
    let st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
    st.capture.as_ref().map(f).ok_or_else(|| NrtError::invalid(format!("model {} \"{}\" is not being profiled", model.id, model.name)))
}

/// What [`write_profile`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenProfile {
    /// The trace (Chrome trace-event JSON, whatever its extension).
    pub trace: PathBuf,
    /// The JSON summary beside it.
    pub summary: PathBuf,
    /// Instructions in the trace.
    pub instructions: usize,
}

/// The summary's path for a trace written to `trace`: the same path with
/// `.summary.json` appended.
pub fn summary_path(trace: &Path) -> PathBuf {
    let mut s = trace.as_os_str().to_owned();
    s.push(".summary.json");
    PathBuf::from(s)
}

/// Writes `executions` of `model` as one trace at `path` (exactly that
/// path: a caller's `.ntff` name is kept) plus the summary beside it.
pub fn write_profile(path: &Path, model: &LoadedModel, executions: &[CapturedExecution]) -> NrtResult<WrittenProfile> {
    let prog = model.program.as_ref().ok_or_else(|| NrtError::invalid(format!("model {} has no device program", model.id)))?;
    let mut merged = ExecutionTrace::default();
    for e in executions {
        merged.events.extend_from_slice(&e.trace.events);
        merged.dma.extend_from_slice(&e.trace.dma);
        merged.lost += e.trace.lost;
    }
    // One execution's device time; several have one each (the summary's).
    if let [one] = executions {
        merged.device_time = one.trace.device_time;
    }
    super::write_chrome_trace(path, &model.name, prog, &merged)?;
    let summary = summary_path(path);
    let text = super::summary::summary_json(&model.name, model.id, prog, &merged, executions);
    std::fs::write(&summary, text).map_err(|e| NrtError::failure(format!("writing {}: {e}", summary.display())))?;
    Ok(WrittenProfile { trace: path.to_path_buf(), summary, instructions: merged.events.len() })
}
