//! What a scheduled task that panicked leaves on the device (the
//! scheduler's panic guard hands it here, [`crate::scheduler::Runner::panicked`]):
//! the evidence the hardware gives for a part that stops, so the host's
//! harvest fails the execution at once instead of waiting out its timeout
//! for an END that will not come.
//!
//! | task | evidence |
//! |---|---|
//! | engine step | the sequencer halts; a sequencer error record (detail [`crate::engine::SIMULATOR_FAULT_DETAIL`]) on its error ring: NRT_EXEC_COMPLETED_WITH_ERR, engine stopped |
//! | DMA queue walk | the queue goes to ABORTED and a DmaAbort record (detail = queue index) is written: NRT_EXEC_HW_ERR_DMA_ABORT |
//! | Q7 invocation | the op ends with a GPSIMD exception of cause SIMULATOR_FAULT: NRT_EXEC_COMPLETED_WITH_ERR, POOL stopped |
//!
//! The panic's own text goes to stderr through the panic hook, as any
//! panic's does.

use super::Shared;
use crate::engine::RunState;
use crate::scheduler::Task;
use nrt_hal::{CoreId, DmaQueueStatus};
use nrt_isa::notification::InferErrorSubtype;
use nrt_isa::ucode::GpsimdCause;
use std::sync::Arc;
use std::sync::atomic::Ordering;

impl Shared {
    /// Leaves the evidence of `task`'s panic (see the module docs).
    #[cold]
    pub(super) fn task_panicked(self: &Arc<Self>, task: Task, _why: &str) {
        match task {
            Task::Engine(c, e) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                let Some(slot) = core.engines.get(usize::from(e)) else { return };
                let mut seq = slot.seq.lock().unwrap_or_else(|p| p.into_inner());
                if seq.state() == RunState::Running {
                    seq.halt_after_panic(&**self, core);
                }
                slot.active.store(false, Ordering::Release);
            }
            Task::Dma(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                let Some(queue) = core.dma.get(usize::from(q)) else { return };
                let mut regs = queue.regs.lock().unwrap_or_else(|p| p.into_inner());
                if regs.status == DmaQueueStatus::Enabled {
                    regs.status = DmaQueueStatus::Aborted;
                    core.error_record(&**self, None, u64::from(q), InferErrorSubtype::DmaAbort, q, regs.clock.max(core.now()));
                }
            }
            Task::Q7(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                let Some(job) = core.q7.job(Some(core.q7.current_op())) else { return };
                self.end_q7(core, usize::from(q), &job, crate::q7::invoke::Outcome::Fault(GpsimdCause::SimulatorFault), core.now());
            }
        }
    }
}
