//! What the POOL sequencer does with the Q7 cluster: LOAD_POOL_ARGUMENT
//! latches an argument block, EXTENDED_INST resolves the kernel and
//! queues one task per invoked Q7 core, and the EVENT_SEMAPHORE that
//! gates the op's completion drops the update the cluster makes itself.
//!
//! Behaviour over a core's [`super::Cluster`]: memory through the
//! device's [`Bus`], the Q7 tasks queued through its [`Signals`].

use super::{DispatchError, Latched, invoke, lock, resolve};
use crate::core::Core;
use crate::engine::record::Record;
use crate::port::Bus;
use crate::signals::Signals;
use nrt_hal::{ArchDesc, DeviceAddr};
use nrt_isa::ucode::{ArgBlock, GpsimdCause};
use std::sync::Arc;

/// What EXTENDED_INST did.
#[derive(Debug)]
pub enum Dispatch {
    /// An op is still in flight: block and retry.
    Wait,
    /// Tasks for the op's cores were queued.
    Started,
    /// No LOAD_POOL_ARGUMENT latched an argument block.
    NoArguments,
    /// The op cannot start: report a GPSIMD exception.
    Failed(DispatchError),
}

/// EXTENDED_INST `spec` at instruction `pc`: resolve the kernel and queue
/// one task per invoked Q7 core.
pub fn dispatch(dev: &(impl Bus + Signals), core: &Core, spec: u8, pc: u64, clock: u64) -> Dispatch {
    let cluster = &core.q7;
    if cluster.busy() {
        return Dispatch::Wait;
    }
    let Some(latched) = cluster.take_latched() else { return Dispatch::NoArguments };
    let resolved = match resolve::resolve(dev, cluster, spec) {
        Ok(r) => r,
        Err(e) => {
            cluster.dispatch_fault(e.cause.detail(e.q7));
            return Dispatch::Failed(e);
        }
    };
    if let Some(q) = (0..resolved.total as usize).find(|&q| cluster.stalled(q)) {
        let e = DispatchError { cause: GpsimdCause::Stalled, q7: q as u8, why: format!("Q7 core {q} is held in RUN_STALL") };
        cluster.dispatch_fault(e.cause.detail(e.q7));
        return Dispatch::Failed(e);
    }
    let one_value = latched.one_value;
    let op_id = cluster.begin(resolved.total, latched.completion_addr);
    let tensor_bytes = invoke::tensor_sizes(&latched.args);
    let job = Arc::new(invoke::Job {
        op_id,
        pc,
        total: resolved.total,
        kernels: resolved.kernels,
        latched,
        one_value,
        start_clock: clock,
        tensor_bytes,
    });
    *lock(&cluster.job) = Some(job);
    for q in 0..resolved.total {
        dev.schedule_q7(core, q as u8);
    }
    Dispatch::Started
}

/// The completion gate of a latched op (seed 000 §4, seed 001 §3.6): an
/// EVENT_SEMAPHORE on POOL whose update is SEM_INC_COMPLETE (0x13) on the
/// very semaphore whose increment register the latched LOAD_POOL_ARGUMENT
/// names as `completion_write_addr`. Its increment *is* the op's
/// completion write, made once when the Q7 cores are done, so the
/// sequencer must not apply it as well (the semaphore counts one per op).
/// Returns `rec` with that update dropped, or `rec` unchanged when it is
/// not a gate of the latched op.
pub fn completion_gate(arch: &ArchDesc, core: &Core, rec: Record) -> Record {
    let inc_complete = nrt_isa::record::UpdateMode::SemIncComplete.to_u8();
    if rec.updates.iter().all(|u| u.mode != inc_complete) {
        return rec;
    }
    let Some(done) = core.q7.latched_completion_addr().filter(|a| *a != 0) else { return rec };
    let mut out = rec;
    for u in out.updates.iter_mut() {
        let inc = arch.semaphore_addr(core.id, nrt_hal::arch::EVT_SEM_SEM_INC, u32::from(u.index)).get();
        if u.mode == inc_complete && inc == done {
            u.mode = 0;
        }
    }
    out
}

/// LOAD_POOL_ARGUMENT: checks the record's fixed fields, reads and decodes
/// the argument block at `sbuf_base_addr + embedding_table_lo` and the
/// `one_value_read_addr` word.
pub fn load_arguments(dev: &impl Bus, l: &nrt_isa::instr::LoadPoolArgument) -> Result<Latched, String> {
    if l.move_source != nrt_isa::instr::slots::LOAD_POOL_ARGUMENT_MOVE_SOURCE {
        return Err(format!("move_source {} (expected 3)", l.move_source));
    }
    if l.embedding_table_hi != l.embedding_table_lo.wrapping_add(4) {
        return Err(format!("embedding table hi {:#x} is not lo + 4", l.embedding_table_hi));
    }
    let at = l.sbuf_base_addr.checked_add(u64::from(l.embedding_table_lo)).ok_or("argument block address overflows")?;
    let mut raw = [0u8; nrt_isa::ucode::ARG_BLOCK_BYTES];
    dev.read(DeviceAddr(at), &mut raw).map_err(|e| format!("argument block at {at:#x}: {e}"))?;
    let args = ArgBlock::decode(&raw).map_err(|e| e.to_string())?;
    let mut one_value = 0u32;
    if l.one_value_read_addr != 0 {
        let mut w = [0u8; 4];
        dev.read(DeviceAddr(l.one_value_read_addr), &mut w).map_err(|e| format!("one_value_read_addr: {e}"))?;
        one_value = u32::from_le_bytes(w);
    }
    Ok(Latched {
        args: Arc::new(args),
        sbuf_base: l.sbuf_base_addr,
        one_value_addr: l.one_value_read_addr,
        completion_addr: l.completion_write_addr,
        one_value,
    })
}
