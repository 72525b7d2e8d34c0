//! The traced execute: what [`super::execute`] runs instead while a
//! system-trace session captures execution events. Same bind / stage /
//! doorbell / harvest; the harvest keeps the device timeline
//! ([`crate::trace::hw::HwObservation`]) and this module turns it into
//! events: per physical core an `nc_exec_running` start/stop pair at the
//! core's first START and last END record, an `nrt_model_switch` instant
//! for a core whose request asked for the MODEL_SWITCH region, the
//! execution's `cc_running`, `numerical_err` and `hw_notify` records, and
//! the host-side `nrt_execute` pair around the whole call.

use crate::model::{DeviceProgram, LoadedModel};
use crate::status::{NrtResult, NrtStatus};
use crate::tensor::TensorSet;
use crate::trace::hw::HwObservation;
use crate::trace::{Event, EventData, EventType, Phase};

/// What the execute path fills in for a traced execution.
#[derive(Debug, Default)]
pub struct ExecTrace {
    /// The execution's id (`data.exec_id` of every event it produces).
    pub exec_id: u64,
    /// Host time of the first doorbell.
    pub doorbell_ns: u64,
    /// Per core index of the program, whether its request was a model switch.
    pub switched: u8,
}

/// The logical core a model's events belong to.
fn nc_of_model(model: &LoadedModel) -> u32 {
    match &model.program {
        Some(p) => {
            let c = &p.cores[0].core;
            crate::trace::nc_of(c.device().info().device_index, c.core().0)
        }
        None => model.vnc,
    }
}

/// Runs `model` through the traced path and records its events.
pub fn execute_traced(model: &LoadedModel, inputs: &TensorSet, outputs: &TensorSet) -> NrtResult<()> {
    let start_ns = crate::trace::now_ns();
    let mut t = ExecTrace { exec_id: crate::trace::next_exec_id(), ..Default::default() };
    let r = super::execute_inner(model, inputs, outputs, Some(&mut t));
    let status = r.as_ref().err().map_or(NrtStatus::Success, |e| e.status);
    let data = EventData { exec_id: Some(t.exec_id), model_id: Some(model.id), seq_id: crate::trace::current_seq(), status: Some(status as i32), ..Default::default() };
    crate::trace::record_span(EventType::NrtExecute, nc_of_model(model), start_ns, data);
    r
}

/// Records the hardware-group events of one finished execution.
pub fn record_device_events(model: &LoadedModel, prog: &DeviceProgram, hw: &HwObservation, t: &ExecTrace, status: NrtStatus) {
    if !hw.on {
        return;
    }
    let base_ps = (0..prog.cores.len()).filter_map(|c| hw.span(c)).map(|(s, _)| s).min().unwrap_or(0);
    let host = |ps: u64| t.doorbell_ns + ps.saturating_sub(base_ps) / 1000;
    let device_idx = prog.cores[0].core.device().info().device_index;
    let mut events = Vec::with_capacity(prog.cores.len() * 3 + hw.len);
    for (i, c) in prog.cores.iter().enumerate() {
        let core = c.core.core().0;
        let nc = crate::trace::nc_of(device_idx, core);
        let data = |ps: u64| EventData {
            nc_timestamp_ps: Some(ps),
            exec_id: Some(t.exec_id),
            device_core_idx: Some(core),
            device_idx: Some(device_idx),
            model_id: Some(model.id),
            ..Default::default()
        };
        if let Some((s, e)) = hw.span(i) {
            if crate::trace::wants(EventType::NcExecRunning) {
                let id = crate::trace::next_tracking_id();
                let start = Event { ty: EventType::NcExecRunning, phase: Phase::Start, tracking_id: id, nc_idx: nc, timestamp_ns: host(s), data: data(s) };
                events.push(start);
                events.push(Event { phase: Phase::Stop, timestamp_ns: host(e), data: EventData { status: Some(status as i32), ..data(e) }, ..start });
            }
            if t.switched & (1 << i) != 0 && crate::trace::wants(EventType::NrtModelSwitch) {
                let id = crate::trace::next_tracking_id();
                events.push(Event { ty: EventType::NrtModelSwitch, phase: Phase::Instant, tracking_id: id, nc_idx: nc, timestamp_ns: host(s), data: data(s) });
            }
        }
    }
    // Collective starts pair with the next end of the same core and engine.
    let mut open_cc: [[u64; 5]; crate::trace::hw::MAX_CORES] = [[0; 5]; crate::trace::hw::MAX_CORES];
    for n in hw.notes() {
        if !crate::trace::wants(n.ty) {
            continue;
        }
        let Some(c) = prog.cores.get(usize::from(n.core)) else { continue };
        let core = c.core.core().0;
        let slot = open_cc.get_mut(usize::from(n.core)).and_then(|r| r.get_mut(usize::from(n.engine)));
        let tracking_id = match (n.phase, slot) {
            (Phase::Start, Some(s)) => {
                *s = crate::trace::next_tracking_id();
                *s
            }
            (Phase::Stop, Some(s)) if *s != 0 => std::mem::take(s),
            _ => crate::trace::next_tracking_id(),
        };
        events.push(Event {
            ty: n.ty,
            phase: n.phase,
            tracking_id,
            nc_idx: crate::trace::nc_of(device_idx, core),
            timestamp_ns: host(n.ts_ps),
            data: EventData {
                nc_timestamp_ps: Some(n.ts_ps),
                exec_id: Some(t.exec_id),
                device_core_idx: Some(core),
                device_idx: Some(device_idx),
                model_id: Some(model.id),
                engine: (n.engine != 0xFF).then_some(n.engine),
                pc: Some(n.pc),
                detail: Some(n.detail),
                ..Default::default()
            },
        });
    }
    if hw.dropped > 0 {
        crate::log_warn!(
            crate::log::Module::Nrt,
            "system trace: {} device records of execution {} of model {} did not fit the per-execution note buffer ({} kept)",
            hw.dropped,
            t.exec_id,
            model.id,
            crate::trace::hw::MAX_NOTES
        );
    }
    crate::trace::record(&events);
}
