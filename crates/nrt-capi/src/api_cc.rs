//! The collectives exports: the global communicators
//! (`nrt_build_global_comm`, `nrt_cc_global_comm_init`), the host-side
//! `nrt_barrier` / `nrt_all_gather` and the standalone `nrta_cc_prepare` /
//! `nrta_cc_schedule`, over the runtime core's collectives (`nrt::cc`):
//! ranks are logical cores, each driven by its own caller thread (or
//! collectives queue), meeting per replica group; between the ranks of
//! this process the data moves as DMA work on the device, to and from
//! ranks of other processes (a world bootstrapped at
//! `NEURON_RT_ROOT_COMM_ID`) through the network proxy
//! (docs/collectives.md).

use crate::ctensor::View;
use crate::global::{self, TENSORS};
use crate::handles::Registry;
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::cc::world::check_member;
use nrt_core::cc::{Arrival, CcKind, CommContext, ReduceOp};
use nrt_core::tensor::Tensor;
use nrt_core::xu::unit::OnComplete;
use nrt_core::{NrtError, NrtResult};
use nrt_isa::dtype::Dtype;
use std::ffi::{c_int, c_void};
use std::sync::{Arc, LazyLock};

/// `nrt_cc_comm_t` (32 bytes, align 8).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NrtCcComm {
    /// Participants (global ids), `rank_n` of them, in ring order.
    pub replica_group: *mut u32,
    /// My index in `replica_group`.
    pub rank: u32,
    /// Participants.
    pub rank_n: u32,
    /// Device id within the context (not used by in-process ranks).
    pub ctx_device_id: u32,
    /// Devices in the context.
    pub ctx_device_count: u32,
    /// My logical core.
    pub vnc: u32,
}

/// `nrt_tensor_list_t` (16 bytes, align 8).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NrtTensorList {
    /// Tensor handles.
    pub tensors: *mut *mut c_void,
    /// How many.
    pub num_tensors: usize,
}

/// A prepared collective (`nrt_cc_context_t`): the rank's part, ready to
/// queue.
#[derive(Debug)]
pub struct CcContext {
    arrival: Arrival,
}

/// Live `nrt_cc_context_t` handles.
pub static CONTEXTS: LazyLock<Registry<CcContext>> = LazyLock::new(|| Registry::new("collectives context"));

fn vnc_of(vnc: i64) -> NrtResult<u32> {
    let h = global::hosts()?;
    let v = u32::try_from(vnc).map_err(|_| NrtError::invalid(format!("vnc {vnc} is not a logical core")))?;
    h.rt.vcore(v)?;
    Ok(v)
}

/// Sets up the world of context `ctx` (`nrt::cc::Collectives::global_comm`).
fn global_comm(ctx: CommContext, vnc: i64, id: u32, count: u32) -> NrtResult<()> {
    let h = global::hosts()?;
    let v = vnc_of(vnc)?;
    h.rt.collectives().global_comm(ctx, id, v, count)
}

/// `nrt_build_global_comm`: the world of NEFF collectives (context 0).
/// Ranks of this process meet at their first collective; a world larger
/// than the process's ranks waits there, bounded, for the others.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_build_global_comm(vnc: i32, g_device_id: u32, g_device_count: u32) -> NRT_STATUS {
    call("nrt_build_global_comm", || global_comm(CommContext::Neff, vnc.into(), g_device_id, g_device_count))
}

/// `nrt_cc_global_comm_init`: the world of host-driven collectives
/// (context 1), with the same rules.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_cc_global_comm_init(vnc: u32, g_device_id: u32, g_device_count: u32) -> NRT_STATUS {
    call("nrt_cc_global_comm_init", || global_comm(CommContext::Host, vnc.into(), g_device_id, g_device_count))
}

/// `nrt_barrier`: a 128-byte all-reduce over every worker of the world,
/// run by the logical core's barrier model (loaded on first use, as
/// libnrt 2.31 does); the call joins the world first, as the barrier
/// model's load does, so it runs across processes with
/// `NEURON_RT_ROOT_COMM_ID` set (`nrt::cc::Collectives::barrier`).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_barrier(vnc: i32, g_device_id: u32, g_device_count: u32) -> NRT_STATUS {
    call("nrt_barrier", || {
        let h = global::hosts()?;
        let v = vnc_of(vnc.into())?;
        h.rt.collectives().barrier(&h.rt, &h.devices, v, g_device_id, g_device_count)
    })
}

/// `nrt_all_gather`: `output` (host memory, `g_device_count *
/// rank_input_size` bytes) gets every worker's `input` in worker order;
/// joins the world first, as libnrt does
/// (`nrt::cc::Collectives::all_gather_host`).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_all_gather(vnc: i32, g_device_id: u32, g_device_count: u32, rank_input_size: u32, input: *mut c_void, output: *mut c_void) -> NRT_STATUS {
    call("nrt_all_gather", || {
        let h = global::hosts()?;
        let v = vnc_of(vnc.into())?;
        check_member(g_device_id, g_device_count)?;
        let n = rank_input_size as usize;
        let total = n * g_device_count as usize;
        // SAFETY: the caller gives `rank_input_size` readable bytes.
        let data = if n == 0 { &[][..] } else { unsafe { ptr::bytes(input, n, "input") }? };
        let mut empty = [0u8; 0];
        let out: &mut [u8] = if total == 0 {
            &mut empty
        } else {
            non_null(output, "output")?;
            // SAFETY: the caller gives `g_device_count * rank_input_size` writable bytes.
            unsafe { ptr::bytes_mut(output, total, "output") }?
        };
        h.rt.collectives().all_gather_host(&h.rt, v, g_device_id, g_device_count, data, out)
    })
}

/// The whole runtime tensors of a tensor list.
fn tensors_of(list: *const NrtTensorList, what: &str) -> NrtResult<Vec<Arc<Tensor>>> {
    non_null(list, what)?;
    // SAFETY: checked non-NULL; the caller gives a valid list.
    let l = unsafe { *list };
    if l.num_tensors == 0 {
        return Err(NrtError::invalid(format!("{what} tensor list is empty")));
    }
    non_null(l.tensors, what)?;
    (0..l.num_tensors)
        .map(|k| {
            // SAFETY: the list holds `num_tensors` handles.
            let handle = unsafe { *l.tensors.add(k) };
            let ct = TENSORS.get(handle as usize)?;
            match ct.view() {
                View::Runtime { root, device: Some(_), offset: 0, size } if size == root.size() => Ok(root),
                _ => Err(NrtError::invalid(format!("{what} tensor {k} ({:?}): collectives need whole device tensors (not host memory, slices or attached buffers)", ct.name))),
            }
        })
        .collect()
}

fn bytes_of(ts: &[Arc<Tensor>]) -> u64 {
    ts.iter().map(|t| t.size()).sum()
}

/// `nrta_cc_prepare`: checks one rank's part of a collective and returns a
/// context for `nrta_cc_schedule`. `cc_op`: 0 all-gather, 1 all-reduce,
/// 2 reduce-scatter; `op` (`nrt_op_type_t`) is read for the reducing ops.
/// Tensor lists: all-reduce 1 in / 1 out (the same tensor for in place),
/// all-gather 1 in / 1 or rank_n out, reduce-scatter 1 or rank_n in / 1
/// out.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrta_cc_prepare(comm: *const NrtCcComm, input: *const NrtTensorList, output: *const NrtTensorList, dtype: u32, op: u32, cc_op: u32, cc_ctx: *mut *mut c_void) -> NRT_STATUS {
    call("nrta_cc_prepare", || {
        let _h = global::hosts()?;
        non_null(comm, "comm")?;
        non_null(cc_ctx, "cc_ctx")?;
        // SAFETY: checked non-NULL.
        let c = unsafe { *comm };
        // Bounds rank_n too, before the group is copied.
        check_member(c.rank, c.rank_n).map_err(|e| NrtError::invalid(format!("comm (rank {} of rank_n {}): {}", c.rank, c.rank_n, e.message)))?;
        non_null(c.replica_group, "comm->replica_group")?;
        // SAFETY: the group holds `rank_n` ids.
        let group = unsafe { std::slice::from_raw_parts(c.replica_group, c.rank_n as usize) }.to_vec();
        let vnc = vnc_of(c.vnc.into())?;
        let dt = u8::try_from(dtype).ok().and_then(Dtype::from_code).filter(|d| *d != Dtype::Unknown).ok_or_else(|| NrtError::invalid(format!("dtype {dtype} is not an nrt_dtype_t (expected 0x1..=0xF)")))?;
        let kind = match cc_op {
            0 => CcKind::AllGather,
            1 => CcKind::AllReduce,
            2 => CcKind::ReduceScatter,
            _ => return Err(NrtError::invalid(format!("cc_op {cc_op} is not an nrt_cc_op_type_t (expected 0 NRT_CC_ALLGATHER, 1 NRT_CC_ALLREDUCE or 2 NRT_CC_REDUCESCATTER)"))),
        };
        let reduce = if kind.reduces() {
            ReduceOp::from_code(op).ok_or_else(|| NrtError::invalid(format!("op {op} is not a reduction (expected 0 NRT_OP_ADD, 1 NRT_OP_FMA, 2 NRT_OP_MAX or 3 NRT_OP_MIN)")))?
        } else {
            ReduceOp::Add
        };
        let ins = tensors_of(input, "input")?;
        let outs = tensors_of(output, "output")?;
        let n = u64::from(c.rank_n);
        let es = dt.size_bytes() as u64;
        let (inb, outb) = (bytes_of(&ins), bytes_of(&outs));
        let count = match kind {
            CcKind::AllReduce => {
                if ins.len() != 1 || outs.len() != 1 || inb != outb {
                    return Err(NrtError::invalid(format!("all-reduce takes one input and one output tensor of the same size (got {} of {inb} bytes and {} of {outb} bytes)", ins.len(), outs.len())));
                }
                inb / es
            }
            CcKind::AllGather => {
                if ins.len() != 1 || outb != inb * n {
                    return Err(NrtError::invalid(format!("all-gather takes one input tensor and outputs of rank_n ({n}) times its size (got {inb} bytes in, {outb} bytes out)")));
                }
                inb / es
            }
            _ => {
                if outs.len() != 1 || inb != outb * n {
                    return Err(NrtError::invalid(format!("reduce-scatter takes inputs of rank_n ({n}) times the size of its one output tensor (got {inb} bytes in, {outb} bytes out)")));
                }
                outb / es
            }
        };
        if (inb.max(outb)) % es != 0 {
            return Err(NrtError::invalid(format!("tensor sizes are not a whole number of {}-byte {} elements", es, dt.name())));
        }
        let arrival = Arrival { group, rank: c.rank as usize, vnc, kind, dtype: dt, op: reduce, count, input: ins, output: outs };
        let handle = CONTEXTS.insert(CcContext { arrival });
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(cc_ctx, handle as *mut c_void) };
        Ok(())
    })
}

fn write_status(ret: u64, _seq: u64, s: nrt_core::NrtStatus) {
    // SAFETY: the caller keeps `ret` valid until completion (API contract).
    unsafe { ptr::write(ret as usize as *mut NRT_STATUS, s.code()) }
}

/// `nrta_cc_schedule`: queues the prepared collective on collectives
/// queue `queue` (0..=2) of the rank's logical core and clears `*cc_ctx`
/// (the queue owns the context and frees it after the operation).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrta_cc_schedule(cc_ctx: *mut *mut c_void, queue: c_int, ret: *mut NRT_STATUS, seq: *mut u64) -> NRT_STATUS {
    call("nrta_cc_schedule", || {
        let h = global::hosts()?;
        non_null(cc_ctx, "cc_ctx")?;
        if seq.is_null() {
            return Err(NrtError::invalid("req_sequence is a required parameter"));
        }
        // SAFETY: checked non-NULL.
        let handle = unsafe { *cc_ctx } as usize;
        let ctx = CONTEXTS.get(handle)?;
        let arrival = ctx.arrival.clone();
        let vnc = arrival.vnc;
        let rt = h.rt.clone();
        let job = Box::new(move || rt.collectives().run(&rt, arrival));
        let done = (!ret.is_null()).then(|| OnComplete::Fn(write_status, ret as usize as u64));
        let s = h.xus.schedule_collective(vnc, queue.into(), job, done)?;
        let _ = CONTEXTS.remove(handle);
        // SAFETY: checked non-NULL.
        unsafe {
            ptr::write(seq, s);
            ptr::write(cc_ctx, std::ptr::null_mut());
        }
        Ok(())
    })
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_build_global_comm,
    nrt_cc_global_comm_init,
    nrt_barrier,
    nrt_all_gather,
);

crate::symbols::versioned!("NRT_3.0.0":
    nrta_cc_prepare,
    nrta_cc_schedule,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_structs_have_the_header_layout() {
        assert_eq!((std::mem::size_of::<NrtCcComm>(), std::mem::align_of::<NrtCcComm>()), (32, 8));
        assert_eq!((std::mem::size_of::<NrtTensorList>(), std::mem::align_of::<NrtTensorList>()), (16, 8));
    }
}
