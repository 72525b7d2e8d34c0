//! The JSON summary written beside every device profile: per engine the
//! instruction count, busy time and opcode counts, per DMA queue its
//! packets, bytes and busy time, and the instructions that took longest,
//! named as the compiler named them.

use super::capture::CapturedExecution;
use super::{ExecutionTrace, json_str};
use crate::load::sites::{ImageSite, opcode_label};
use crate::model::DeviceProgram;
use nrt_hal::EngineId;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Per (core, engine): instructions, busy ps, count by opcode name.
type EngineTally = (u64, u64, BTreeMap<String, u64>);
/// (core, engine, NEFF index, name) of an instruction.
type InstrKey = (usize, usize, Option<u32>, String);

/// Instructions listed in `top_instructions`.
pub const TOP: usize = 20;

/// The summary document (format `nrt-rs-profile-summary`, version 1; see
/// docs/trace-formats.md).
pub fn summary_json(model_name: &str, model_id: u32, prog: &DeviceProgram, trace: &ExecutionTrace, executions: &[CapturedExecution]) -> String {
    let mut s = String::new();
    let _ = write!(s, "{{\"format\":\"nrt-rs-profile-summary\",\"version\":1,\"model\":{},\"model_id\":{model_id},", json_str(model_name));
    let _ = write!(s, "\"lost_records\":{},\"instructions\":{},\"executions\":[", trace.lost, trace.events.len());
    for (i, e) in executions.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let span = e.trace.events.iter().map(|x| x.start_ps).min().zip(e.trace.events.iter().map(|x| x.end_ps.unwrap_or(x.start_ps)).max());
        let (t0, t1) = span.unwrap_or((0, 0));
        let _ = write!(s, "{{\"index\":{},\"status\":{},\"instructions\":{},\"start_ps\":{t0},\"end_ps\":{t1}", e.index, e.status as i32, e.trace.events.len());
        if let Some((_, time)) = e.trace.device_time {
            let _ = write!(s, ",\"device_time_ps\":{time}");
        }
        s.push('}');
    }
    s.push_str("],\"engines\":[");
    // Per (core, engine): count, busy time, opcodes.
    let mut per: BTreeMap<(usize, usize), EngineTally> = BTreeMap::new();
    // Per (core, engine, neff index): name, total time, count.
    let mut by_instr: BTreeMap<InstrKey, (u64, u64)> = BTreeMap::new();
    for ev in &trace.events {
        let Some(c) = prog.cores.get(ev.core) else { continue };
        let dur = ev.end_ps.map_or(0, |e| e.saturating_sub(ev.start_ps));
        let slot = per.entry((ev.core, ev.engine)).or_default();
        slot.0 += 1;
        slot.1 += dur;
        *slot.2.entry(opcode_label(ev.opcode)).or_default() += 1;
        let (name, index) = match c.image_pc(ev.engine, ev.pc).map(|p| c.sites[ev.engine].site(p)) {
            Some(ImageSite::Source { index, .. }) => (c.sites[ev.engine].name(index).map_or_else(|| opcode_label(ev.opcode), str::to_string), Some(index)),
            _ => (format!("runtime {}", opcode_label(ev.opcode)), None),
        };
        let t = by_instr.entry((ev.core, ev.engine, index, name)).or_default();
        t.0 += dur;
        t.1 += 1;
    }
    let mut first = true;
    for ((core, engine), (count, busy, ops)) in &per {
        if !first {
            s.push(',');
        }
        first = false;
        let nc = prog.cores[*core].core.core().0;
        let ename = EngineId::from_index(*engine).map_or("?", |e| e.name());
        let _ = write!(s, "{{\"physical_core\":{nc},\"subgraph\":{},\"engine\":\"{ename}\",\"instructions\":{count},\"busy_ps\":{busy},\"opcodes\":{{", json_str(&prog.cores[*core].subgraph));
        for (i, (op, n)) in ops.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, "{}:{n}", json_str(op));
        }
        s.push_str("}}");
    }
    s.push_str("],\"dma_queues\":[");
    // Per (core, queue): packets, bytes, busy time.
    let mut queues: BTreeMap<(usize, u8), (u64, u64, u64)> = BTreeMap::new();
    for d in &trace.dma {
        let q = queues.entry((d.core, d.queue)).or_default();
        q.0 += 1;
        q.1 += d.bytes;
        q.2 += d.end_ps.saturating_sub(d.start_ps);
    }
    for (i, ((core, queue), (packets, bytes, busy))) in queues.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let c = &prog.cores[*core].core;
        let per = c.device().info().dma_queues_per_engine().max(1);
        let name = super::dma_queue_name(u32::from(*queue) / per, u32::from(*queue) % per);
        let _ = write!(s, "{{\"physical_core\":{},\"queue\":\"{name}\",\"packets\":{packets},\"bytes\":{bytes},\"busy_ps\":{busy}}}", c.core().0);
    }
    s.push_str("],\"top_instructions\":[");
    let mut top: Vec<_> = by_instr.into_iter().collect();
    top.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    for (i, ((core, engine, index, name), (total, count))) in top.into_iter().take(TOP).enumerate() {
        if i > 0 {
            s.push(',');
        }
        let ename = EngineId::from_index(engine).map_or("?", |e| e.name());
        let nc = prog.cores[core].core.core().0;
        let _ = write!(s, "{{\"name\":{},\"physical_core\":{nc},\"engine\":\"{ename}\",\"count\":{count},\"total_ps\":{total}", json_str(&name));
        if let Some(i) = index {
            let _ = write!(s, ",\"neff_index\":{i}");
        }
        s.push('}');
    }
    s.push_str("]}\n");
    s
}
