//! `nrt_barrier` and `nrt_all_gather`: the host-side calls of one rank,
//! which need no communicator from the caller. libnrt builds the global
//! communicator itself in these calls (spec §3.3: the barrier loads its
//! model with `nrt_load_collectives`, the all-gather builds the global
//! comm first), so a process that never called `nrt_build_global_comm`
//! still joins the world as rank `g_device_id` of `g_device_count`: with
//! `NEURON_RT_ROOT_COMM_ID` set and the other ranks in other processes
//! or hosts, the call bootstraps the world there and runs across them
//! ([`super::net`]); without it, the ranks are this process's logical
//! cores, as before.

use super::plan::CcKind;
use super::world::{Arrival, Collectives, ReduceOp, check_member};
use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult};
use crate::tensor::Tensor;
use nrt_isa::dtype::Dtype;
use std::sync::Arc;

impl Collectives {
    /// Joins the world of the in-NEFF collectives' context as rank `id` of
    /// `count` on logical core `vnc`, as the barrier model's
    /// `nrt_load_collectives` does: the existing world (the rank registered
    /// in it), or one of `count` made here.
    /// A world of another size already set up stays as it is: the call
    /// then runs over `count` workers of this process (as before there
    /// was a world), since a barrier neither sets up nor changes the
    /// in-NEFF context's world (tests/c/cc_api.c's barriers over 2, 4 and
    /// 8 workers after a world of 2).
    fn join_world(&self, id: u32, vnc: u32, count: u32) -> NrtResult<()> {
        if self.context_size(super::world::CommContext::Neff).is_some_and(|n| n != count) {
            return Ok(());
        }
        let world = self.neff_world(id, vnc, count)?;
        self.register_rank(id, vnc, world)
    }

    /// `nrt_barrier(vnc, g_device_id, g_device_count)`: joins the world
    /// (as the barrier model's `nrt_load_collectives` does), then runs the
    /// logical core's barrier model (loaded on first use,
    /// [`super::barrier`]) over `hosts`, the runtime's model hosts by
    /// device: returns once every worker of the world reached its barrier,
    /// or fails within the collectives' bounds.
    pub fn barrier(&self, rt: &Runtime, hosts: &[crate::load::ModelHost], vnc: u32, g_device_id: u32, g_device_count: u32) -> NrtResult<()> {
        check_member(g_device_id, g_device_count)?;
        rt.vcore(vnc)?;
        self.join_world(g_device_id, vnc, g_device_count)?;
        self.barriers.run(rt, hosts, vnc, g_device_id, g_device_count)
    }

    /// `nrt_all_gather(vnc, g_device_id, g_device_count, ...)`: `output`
    /// (`g_device_count * input.len()` bytes, checked by the caller) gets
    /// every rank's `input` in rank order.
    pub fn all_gather_host(&self, rt: &Runtime, vnc: u32, g_device_id: u32, g_device_count: u32, input: &[u8], output: &mut [u8]) -> NrtResult<()> {
        check_member(g_device_id, g_device_count)?;
        rt.vcore(vnc)?;
        let n = input.len() as u64;
        let total = n * u64::from(g_device_count);
        if output.len() as u64 != total {
            return Err(NrtError::invalid(format!("nrt_all_gather: the output holds {} bytes; g_device_count ({g_device_count}) x rank_input_size ({n}) is {total}", output.len())));
        }
        self.join_world(g_device_id, vnc, g_device_count)?;
        let i = scratch(rt, vnc, n, "all_gather input")?;
        i.write(0, input)?;
        let o = scratch(rt, vnc, total, "all_gather output")?;
        self.run(rt, world_arrival(vnc, g_device_id, g_device_count, CcKind::AllGather, Dtype::Uint8, n, [i, o.clone()]))?;
        if total > 0 {
            o.read(0, output)?;
        }
        Ok(())
    }
}

/// A device tensor of `size` bytes (at least 1) on the first core of `vnc`.
fn scratch(rt: &Runtime, vnc: u32, size: u64, name: &str) -> NrtResult<Arc<Tensor>> {
    let v = rt.vcore(vnc)?;
    Ok(Arc::new(Tensor::allocate_device(rt.memory(v.device)?, v.physical[0], size.max(1), name)?))
}

/// Rank `id`'s part of an operation over the whole world of `count`;
/// `buffers` are its input and output.
fn world_arrival(vnc: u32, id: u32, count: u32, kind: CcKind, dtype: Dtype, n: u64, buffers: [Arc<Tensor>; 2]) -> Arrival {
    let [input, output] = buffers;
    Arrival { group: (0..count).collect(), rank: id as usize, vnc, kind, dtype, op: ReduceOp::Add, count: n, input: vec![input], output: vec![output] }
}
