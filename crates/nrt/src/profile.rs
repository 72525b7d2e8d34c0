//! Device instruction profiles: what every engine executed, when, named as
//! the compiler named it.
//!
//! libnrt's device profile (NEURON_RT_INSPECT_ENABLE with
//! NEURON_RT_INSPECT_DEVICE_PROFILE) instruments a model's instruction
//! streams so each engine reports instruction starts and ends on its TRACE
//! notification queue, then turns those records into a trace file. We do
//! the same with the device's own mechanism: at load, every record of a
//! profiled model's images gets `debug_cmd` START_END (byte +0x02); the
//! core gets one TRACE ring per engine; after an execution the runtime
//! reads the records (engine, program counter, opcode, device timestamp),
//! pairs starts with ends and writes a Chrome trace-event JSON file (open
//! it in Perfetto or chrome://tracing) in which each instruction carries
//! its NEFF index, opcode and debug-info name ([`crate::load::sites`]).
//!
//! Mode `model` profiles the first execution of each model and then
//! restores the images' original `debug_cmd` bytes, so later executions
//! run uninstrumented; `session` profiles every execution. The files go to
//! `<NEURON_RT_INSPECT_OUTPUT_DIR>/neff_<id>_<name>/profile_vnc<vnc>_exec<n>.json`.

pub mod capture;
pub mod summary;

use crate::config::DeviceProfile;
use crate::log::Module;
use crate::model::{CoreProgram, DeviceProgram};
use crate::status::{NrtError, NrtResult};
use nrt_hal::{EngineId, NQ_RECORD_BYTES};
use nrt_isa::notification::{DmaCompletion, DmaEdge, EngineEvent, NotificationRecord};
use nrt_isa::record::{RECORD_SIZE, RecordBytes};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bytes of each engine's TRACE ring (65536 records: 32768 instructions
/// per engine and execution before the oldest are overwritten).
pub const TRACE_RING_BYTES: u32 = 1 << 20;
/// Offset of `debug_cmd` in an instruction record.
pub const DEBUG_CMD_OFFSET: usize = 2;
/// `debug_cmd` value asking for a trace record at start and at end.
pub const DEBUG_CMD_START_END: u8 = 7;
/// How long a profiled execution waits for the engines' last trace
/// records after the execution completed (they trail the END records).
pub const STRAGGLER_WAIT: Duration = Duration::from_millis(200);

/// Sets every record of `image` to report its start and end on the trace
/// queue; returns the `debug_cmd` bytes it replaced (to restore later).
pub fn instrument(image: &mut [RecordBytes]) -> Vec<u8> {
    image
        .iter_mut()
        .map(|r| std::mem::replace(&mut r[DEBUG_CMD_OFFSET], DEBUG_CMD_START_END))
        .collect()
}

/// What a profiled program keeps per core: the original `debug_cmd` bytes
/// of each engine's image (PE, ACT, POOL, DVE, SP).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracedImages {
    /// Original `debug_cmd` per record, per engine.
    pub debug_cmds: [Vec<u8>; 5],
}

/// One instruction an engine executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrEvent {
    /// Index of the core in the model's program (subgraph order).
    pub core: usize,
    /// Engine index (PE, ACT, POOL, DVE, SP).
    pub engine: usize,
    /// Device program counter (counted from the engine's dispatcher).
    pub pc: u64,
    /// Opcode byte.
    pub opcode: u8,
    /// Device time at issue, in picoseconds.
    pub start_ps: u64,
    /// Device time at completion (none for records that end an
    /// execution, whose end the device does not report).
    pub end_ps: Option<u64>,
}

/// One packet a DMA queue moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaEvent {
    /// Index of the core in the model's program (subgraph order).
    pub core: usize,
    /// The queue, core-relative (`engine * queues_per_engine + queue`).
    pub queue: u8,
    /// Device time its first descriptor started, in picoseconds.
    pub start_ps: u64,
    /// Device time its last byte landed.
    pub end_ps: u64,
    /// Bytes it moved.
    pub bytes: u64,
}

/// Everything one profiled execution recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecutionTrace {
    /// Instructions in device order per engine.
    pub events: Vec<InstrEvent>,
    /// Packets in device order per DMA engine.
    pub dma: Vec<DmaEvent>,
    /// The execution's first START and its device time (ps; docs/
    /// performance.md, "Device time"), when it is one execution whose
    /// START and END came.
    pub device_time: Option<(u64, u64)>,
    /// Records the rings overwrote before they were read.
    pub lost: u64,
}

/// Per-model profiling state (kept with the model's execution state).
#[derive(Debug)]
pub struct ModelProfile {
    mode: DeviceProfile,
    /// Executions `model` mode skips before the one it records.
    warmup: u64,
    dir: PathBuf,
    executions: u64,
    /// The last profile written, for callers that want it in memory.
    last: Option<(PathBuf, ExecutionTrace)>,
}

impl ModelProfile {
    /// Profiling for a model, or `None` when `mode` is off. In `model`
    /// mode the first `warmup` executions run instrumented but their
    /// records are dropped, and execution `warmup` is the one written
    /// (NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP); `session` mode
    /// records every execution.
    pub fn new(mode: DeviceProfile, warmup: u32, dir: &Path) -> Option<ModelProfile> {
        (mode != DeviceProfile::Off).then(|| ModelProfile { mode, warmup: u64::from(warmup), dir: dir.to_path_buf(), executions: 0, last: None })
    }

    /// The last profile written and where.
    pub fn last(&self) -> Option<&(PathBuf, ExecutionTrace)> {
        self.last.as_ref()
    }

    /// Whether the next execution runs instrumented.
    pub fn wants_next(&self) -> bool {
        self.mode == DeviceProfile::Session || self.executions <= self.warmup
    }

    /// Called after each execution of the model (cores still locked, so no
    /// other execution's records mix in): collects and writes the profile
    /// of an instrumented execution, and after the first one in `model`
    /// mode restores the uninstrumented images.
    /// Returns whether it collected this execution's trace (then in
    /// [`ModelProfile::last`]).
    /// `device_time` is the execution's first START and device time (ps).
    pub fn after_execution(&mut self, model_id: u32, model_name: &str, vnc: u32, prog: &DeviceProgram, completed: bool, device_time: Option<(u64, u64)>) -> bool {
        if !self.wants_next() {
            return false;
        }
        let n = self.executions;
        self.executions += 1;
        let trace = ExecutionTrace { device_time, ..collect(prog, completed) };
        if self.mode == DeviceProfile::Model && n < self.warmup {
            // A warm-up execution: its records are drained and dropped.
            return false;
        }
        let path = self.dir.join(format!("neff_{model_id}_{}", sanitize(model_name))).join(format!("profile_vnc{vnc}_exec{n}.json"));
        match write_chrome_trace(&path, model_name, prog, &trace) {
            Ok(()) => crate::log_info!(
                Module::Nrt,
                "device profile of model {model_id} \"{model_name}\" execution {n}: {} instructions written to {}{}",
                trace.events.len(),
                path.display(),
                if trace.lost > 0 { format!(" ({} trace records lost to ring overflow)", trace.lost) } else { String::new() }
            ),
            Err(e) => crate::log_warn!(Module::Nrt, "device profile of model {model_id} could not be written: {}", e.message),
        }
        self.last = Some((path, trace));
        if self.mode == DeviceProfile::Model {
            for c in &prog.cores {
                if let Err(e) = restore(c) {
                    crate::log_warn!(Module::Nrt, "model {model_id}: restoring the uninstrumented images failed: {}", e.message);
                }
            }
        }
        true
    }
}

/// Ends the load-time profile of a core: writes the original `debug_cmd`
/// bytes back into its images, drops whatever trace records remain and
/// lets go of the core's trace rings.
fn restore(c: &CoreProgram) -> NrtResult<()> {
    let Some(t) = &c.trace else { return Ok(()) };
    if !c.trace_held.swap(false, std::sync::atomic::Ordering::AcqRel) {
        return Ok(());
    }
    let restored = restore_images(c, t);
    c.core.release_trace();
    restored
}

/// Writes the `debug_cmd` bytes of `t` back into `c`'s images and drops
/// whatever trace records remain.
pub fn restore_images(c: &CoreProgram, t: &TracedImages) -> NrtResult<()> {
    let device = c.core.device();
    for (engine, cmds) in t.debug_cmds.iter().enumerate() {
        if !c.engines.contains_index(engine) {
            continue;
        }
        let mut bytes = vec![0u8; cmds.len() * RECORD_SIZE];
        let at = c.images[engine];
        device.read(at, &mut bytes).map_err(|e| NrtError::failure(format!("reading an instruction image: {e}")))?;
        for (rec, cmd) in bytes.chunks_exact_mut(RECORD_SIZE).zip(cmds) {
            rec[DEBUG_CMD_OFFSET] = *cmd;
        }
        device.write(at, &bytes).map_err(|e| NrtError::failure(format!("writing an instruction image: {e}")))?;
    }
    c.core.discard_trace();
    Ok(())
}

/// Reads what the engines recorded for the execution that just ended.
/// When it `completed`, waits (briefly) for every engine's closing record,
/// which the device writes after the END notification.
pub fn collect(prog: &DeviceProgram, completed: bool) -> ExecutionTrace {
    collect_with(prog, |ci| prog.cores[ci].trace.as_ref(), completed)
}

/// [`collect`] over the cores `traced` gives instrumented images for
/// (by core index; their original `debug_cmd` bytes, which also give each
/// image's length).
pub fn collect_with<'a>(prog: &DeviceProgram, traced: impl Fn(usize) -> Option<&'a TracedImages>, completed: bool) -> ExecutionTrace {
    let mut out = ExecutionTrace::default();
    let mut buf = vec![[0u8; NQ_RECORD_BYTES]; 256];
    let deadline = Instant::now() + STRAGGLER_WAIT;
    for (ci, c) in prog.cores.iter().enumerate() {
        let Some(traced) = traced(ci) else { continue };
        for engine in (0..EngineId::ALL.len()).filter(|e| c.engines.contains_index(*e)) {
            // The image's last record (the exit) closes the engine's trace.
            let last_pc = c.image_first_pc(engine).map(|first| first + (traced.debug_cmds[engine].len() as u64).saturating_sub(1));
            let mut seen_last = false;
            loop {
                let (n, lost) = c.core.read_trace(engine, &mut buf);
                out.lost += lost;
                for raw in &buf[..n] {
                    let rec = NotificationRecord::from_bytes(raw);
                    let Some((_, event)) = rec.kind().and_then(|k| k.engine_event()) else { continue };
                    let pc = u64::from(rec.program_counter);
                    let opcode = rec.metadata_2 as u8;
                    match event {
                        EngineEvent::InstStart => {
                            out.events.push(InstrEvent { core: ci, engine, pc, opcode, start_ps: rec.timestamp_ps, end_ps: None });
                            seen_last |= Some(pc & 0xF_FFFF) == last_pc.map(|p| p & 0xF_FFFF);
                        }
                        EngineEvent::InstEnd => {
                            // Pair with this engine's open start of the same record.
                            if let Some(e) = out.events.iter_mut().rev().find(|e| e.core == ci && e.engine == engine)
                                && e.pc == pc
                                && e.end_ps.is_none()
                            {
                                e.end_ps = Some(rec.timestamp_ps);
                            }
                        }
                        _ => {}
                    }
                }
                if n > 0 {
                    continue;
                }
                if seen_last || !completed || Instant::now() >= deadline {
                    break;
                }
                std::thread::yield_now();
            }
        }
        // The DMA queues' packets: each writes its start and end record
        // together once it completed, so by the engines' last records
        // every packet the execution waited for is in.
        // Only the model's own queues: other models' executions on the
        // core write into the same rings between this model's.
        let per = c.core.device().info().dma_queues_per_engine();
        let cc = c.cc_claim.as_ref().map_or(&[][..], |cc| cc.queues());
        let mine: Vec<u32> = c.queues.iter().chain(cc).map(|q| u32::from(q.engine) * per + u32::from(q.queue)).collect();
        for ring in 0..c.core.dma_trace_rings() {
            // A packet's two records may straddle two reads.
            let mut started: Option<DmaCompletion> = None;
            loop {
                let (n, lost) = c.core.read_dma_trace(ring, &mut buf);
                out.lost += lost;
                for raw in &buf[..n] {
                    let Some(d) = DmaCompletion::from_record(&NotificationRecord::from_bytes(raw)) else { continue };
                    match (d.edge, started.take()) {
                        (DmaEdge::Start, _) => started = Some(d),
                        (DmaEdge::End, Some(s)) if s.queue == d.queue && mine.contains(&u32::from(d.queue)) => {
                            out.dma.push(DmaEvent { core: ci, queue: d.queue, start_ps: s.timestamp_ps, end_ps: d.timestamp_ps, bytes: d.bytes });
                        }
                        (DmaEdge::End, _) => {}
                    }
                }
                if n == 0 {
                    break;
                }
            }
        }
    }
    out
}

/// Thread id of a DMA queue's track in the Chrome trace (engines are
/// 0..5).
pub const DMA_TID_BASE: u32 = 100;

/// A DMA queue's name in profiles: `q<DMA engine>.<queue>`.
pub fn dma_queue_name(engine: u32, queue: u32) -> String {
    format!("q{engine}.{queue}")
}

/// What the instructions of one core waited on: the wait fields of its
/// images (read back from the device) and what raises each semaphore.
struct Waits {
    images: [Vec<u8>; 5],
    /// Per semaphore, what raises it where the program says so: the
    /// model's DMA queues that signal it on completion, then the engines
    /// whose instructions increment (add to, write) it.
    raised_by: std::collections::BTreeMap<u32, Vec<String>>,
}

impl Waits {
    fn of(c: &CoreProgram) -> Waits {
        use nrt_isa::record::{EVENTS_OFFSET, EXTENDED_EVENTS_OFFSET, Events, EventsExtended};
        let mut images: [Vec<u8>; 5] = Default::default();
        for (e, image) in images.iter_mut().enumerate().filter(|(e, _)| c.engines.contains_index(*e)) {
            let mut bytes = vec![0u8; c.image_records[e] as usize * RECORD_SIZE];
            if c.core.device().read(c.images[e], &mut bytes).is_ok() {
                *image = bytes;
            }
        }
        let mut raised_by: std::collections::BTreeMap<u32, Vec<String>> = std::collections::BTreeMap::new();
        let mut add = |sem: u32, who: String| {
            let list = raised_by.entry(sem).or_default();
            if !list.contains(&who) {
                list.push(who);
            }
        };
        let cc = c.cc_claim.as_ref().map_or(&[][..], |cc| cc.queues());
        for q in c.queues.iter().chain(cc) {
            if let Some(sem) = c.core.queue_config(*q).and_then(|cfg| cfg.completion_semaphore) {
                add(sem, format!("DMA {}", dma_queue_name(u32::from(q.engine), u32::from(q.queue))));
            }
        }
        let event_semaphore = nrt_isa::opcode::Opcode::EventSemaphore.to_u8();
        for (e, image) in images.iter().enumerate() {
            let Some(engine) = EngineId::from_index(e) else { continue };
            for rec in image.chunks_exact(RECORD_SIZE) {
                let Ok(rec) = <&RecordBytes>::try_from(rec) else { continue };
                let ev = Events::read_at(rec, EVENTS_OFFSET);
                let ext = (rec[0] == event_semaphore).then(|| EventsExtended::read_at(rec, EXTENDED_EVENTS_OFFSET));
                for (mode, sem) in std::iter::once((ev.update_mode, ev.update_idx)).chain(ext.map(|x| (x.update_mode, x.update_idx))) {
                    if mode.raises_semaphore() {
                        add(u32::from(sem), engine.name().to_string());
                    }
                }
            }
        }
        Waits { images, raised_by }
    }

    /// What the record at device program counter `pc` of `engine` waits
    /// for before it issues: what raises its semaphore (DMA queues,
    /// engines) with the semaphore, the bare semaphore when nothing in the
    /// program raises it, or the event; `None` when it waits for nothing.
    fn cause(&self, c: &CoreProgram, engine: usize, pc: u64) -> Option<String> {
        let at = c.image_pc(engine, pc)? as usize * RECORD_SIZE;
        let rec: &RecordBytes = self.images[engine].get(at..at + RECORD_SIZE)?.try_into().ok()?;
        let ev = nrt_isa::record::Events::read_at(rec, nrt_isa::record::EVENTS_OFFSET);
        use nrt_isa::record::WaitMode as W;
        match ev.wait_mode {
            W::None => None,
            W::EvtSet | W::EvtSetThenClear | W::EvtClear | W::EvtClearThenSet => Some(format!("event {}", ev.wait_idx)),
            _ => Some(match self.raised_by.get(&u32::from(ev.wait_idx)) {
                Some(who) => format!("{} (semaphore {})", who.join(", "), ev.wait_idx),
                None => format!("semaphore {}", ev.wait_idx),
            }),
        }
    }
}

/// The trace as Chrome trace-event JSON: one process per physical core,
/// one thread per engine and per DMA queue that moved data, one complete
/// event per instruction and per DMA packet (times in microseconds of
/// device time). An instruction that issued after its engine sat idle
/// carries `idle_us` (since the engine's previous instruction ended) and
/// `waited_on` (its wait: what raises its semaphore, the DMA queues
/// signalling it or the engines incrementing it, or the bare semaphore or
/// event).
pub fn chrome_trace_json(model_name: &str, prog: &DeviceProgram, trace: &ExecutionTrace) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(128 + trace.events.len() * 200);
    s.push_str("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"model\":");
    s.push_str(&json_str(model_name));
    let _ = write!(s, ",\"lost_records\":{}", trace.lost);
    if let Some((start, time)) = trace.device_time {
        let _ = write!(s, ",\"device_start_us\":{:.6},\"device_time_us\":{:.6}", start as f64 / 1e6, time as f64 / 1e6);
    }
    s.push_str("},\"traceEvents\":[");
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push(',');
        }
        first = false;
    };
    for (ci, c) in prog.cores.iter().enumerate() {
        let pid = c.core.core().0;
        sep(&mut s);
        let _ = write!(s, "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"args\":{{\"name\":{}}}}}", json_str(&format!("NC {pid} ({})", c.subgraph)));
        for e in EngineId::ALL.into_iter().filter(|e| c.engines.contains(*e)) {
            sep(&mut s);
            let _ = write!(s, "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}", e.index(), e.name());
        }
        let per = c.core.device().info().dma_queues_per_engine().max(1);
        let queues: std::collections::BTreeSet<u8> = trace.dma.iter().filter(|d| d.core == ci).map(|d| d.queue).collect();
        for q in &queues {
            sep(&mut s);
            let name = format!("DMA {}", dma_queue_name(u32::from(*q) / per, u32::from(*q) % per));
            let _ = write!(s, "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":{}}}}}", DMA_TID_BASE + u32::from(*q), json_str(&name));
        }
        for d in trace.dma.iter().filter(|d| d.core == ci) {
            sep(&mut s);
            let _ = write!(
                s,
                "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{:.6},\"dur\":{:.6},\"name\":\"DMA {} B\",\"args\":{{\"bytes\":{},\"queue\":\"{}\"}}}}",
                DMA_TID_BASE + u32::from(d.queue),
                d.start_ps as f64 / 1e6,
                d.end_ps.saturating_sub(d.start_ps) as f64 / 1e6,
                d.bytes,
                d.bytes,
                dma_queue_name(u32::from(d.queue) / per, u32::from(d.queue) % per)
            );
        }
        let waits = Waits::of(c);
        // An engine is idle from the execution's START (or the core's
        // first record) until its own first instruction, then between
        // its instructions.
        let first = trace.events.iter().filter(|e| e.core == ci).map(|e| e.start_ps).min();
        let first = match (trace.device_time, first) {
            (Some((start, _)), Some(f)) => Some(start.min(f)),
            (_, f) => f,
        };
        let mut idle_since: [Option<u64>; 5] = [first; 5];
        for ev in trace.events.iter().filter(|e| e.core == ci) {
            let Some(engine) = EngineId::from_index(ev.engine) else { continue };
            let image_pc = c.image_pc(ev.engine, ev.pc);
            let site = c.describe_pc(ev.engine, ev.pc);
            let (name, index) = match image_pc.map(|p| c.sites[ev.engine].site(p)) {
                Some(crate::load::sites::ImageSite::Source { index, .. }) => {
                    let label = c.sites[ev.engine].name(index).map_or_else(|| crate::load::sites::opcode_label(ev.opcode), str::to_string);
                    (label, Some(index))
                }
                _ => (format!("runtime {}", crate::load::sites::opcode_label(ev.opcode)), None),
            };
            sep(&mut s);
            let ts = ev.start_ps as f64 / 1e6;
            let _ = match ev.end_ps {
                Some(end) => write!(
                    s,
                    "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{ts:.6},\"dur\":{:.6},\"name\":{}",
                    engine.index(),
                    end.saturating_sub(ev.start_ps) as f64 / 1e6,
                    json_str(&name)
                ),
                None => write!(s, "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{},\"ts\":{ts:.6},\"name\":{}", engine.index(), json_str(&name)),
            };
            let _ = write!(s, ",\"args\":{{\"opcode\":{},\"pc\":{},\"site\":{}", json_str(&crate::load::sites::opcode_label(ev.opcode)), ev.pc, json_str(&site));
            if let Some(i) = index {
                let _ = write!(s, ",\"neff_index\":{i}");
            }
            if let Some(since) = idle_since.get(ev.engine).copied().flatten().filter(|t| ev.start_ps > *t) {
                let _ = write!(s, ",\"idle_us\":{:.6}", (ev.start_ps - since) as f64 / 1e6);
                if let Some(cause) = waits.cause(c, ev.engine, ev.pc) {
                    let _ = write!(s, ",\"waited_on\":{}", json_str(&cause));
                }
            }
            if let Some(slot) = idle_since.get_mut(ev.engine) {
                *slot = ev.end_ps;
            }
            s.push_str("}}");
        }
    }
    s.push_str("]}\n");
    s
}

/// Writes [`chrome_trace_json`] to `path`, creating its directory.
pub fn write_chrome_trace(path: &Path, model_name: &str, prog: &DeviceProgram, trace: &ExecutionTrace) -> NrtResult<()> {
    let io = |what: &str, e: std::io::Error| NrtError::failure(format!("{what} {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("creating the directory of", e))?;
    }
    let mut f = std::fs::File::create(path).map_err(|e| io("creating", e))?;
    f.write_all(chrome_trace_json(model_name, prog, trace).as_bytes()).map_err(|e| io("writing", e))
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A model name as a path component.
pub fn sanitize(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') { format!("model{s}") } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instrument_marks_every_record_and_keeps_the_originals() {
        let mut image = vec![[0u8; 64]; 3];
        image[1][DEBUG_CMD_OFFSET] = 1;
        let old = instrument(&mut image);
        assert_eq!(old, vec![0, 1, 0]);
        assert!(image.iter().all(|r| r[DEBUG_CMD_OFFSET] == DEBUG_CMD_START_END));
    }

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }

    #[test]
    fn names_become_safe_path_components() {
        assert_eq!(sanitize("mlp fp32/v2"), "mlp_fp32_v2");
        assert_eq!(sanitize(".."), "model..");
        assert_eq!(sanitize(""), "model");
    }
}
