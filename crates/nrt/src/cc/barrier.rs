//! `nrt_barrier` as libnrt 2.31 runs it (spec/collectives.md §3.3): per
//! logical core, on first use, a barrier model - a NEFF whose one
//! collective is a 128-byte all-reduce over every worker of the world, on
//! the logical core's first physical core (with LNC 2 the other subgraph
//! only ends) - is loaded through the in-NEFF collectives path (as
//! `nrt_load_collectives` loads worker `g_device_id` of `g_device_count`,
//! so workers of other processes take part as in any loaded NEFF); each
//! barrier then executes it and reads its output back. A failed build is
//! sticky for the process, as libnrt's: later barriers on that logical
//! core as that worker fail at once with the same status and message. A
//! call as another worker (rank, world) has a model of its own.

use super::neff::CcRank;
use crate::load::ModelHost;
use crate::model::ModelId;
use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult};
use crate::tensor::{Tensor, TensorSet};
use nrt_gen::cc::{CollectiveSpec, collective_neff_for};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{AluOp, CollectiveType};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes the barrier all-reduces (libnrt's barrier input).
pub const BARRIER_BYTES: u64 = 128;

/// A built barrier model of one logical core.
#[derive(Debug)]
struct Built {
    model: ModelId,
    device: usize,
    inputs: TensorSet,
    outputs: TensorSet,
    out: Arc<Tensor>,
}

/// The barrier models of a runtime, by process-local logical core and the
/// worker (rank, world) it is called as.
#[derive(Debug, Default)]
pub struct Barriers {
    by_vnc: Mutex<BTreeMap<(u32, u32, u32), Arc<Mutex<Option<Result<Built, NrtError>>>>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Barriers {
    /// `nrt_barrier(vnc, rank, world)`: builds the logical core's barrier
    /// model on first use (over `hosts`, the runtime's model hosts by
    /// device), then runs it once. Workers of one process wait for each
    /// other on their own logical cores, each from its own thread.
    pub fn run(&self, rt: &Runtime, hosts: &[ModelHost], vnc: u32, rank: u32, world: u32) -> NrtResult<()> {
        let slot = Arc::clone(lock(&self.by_vnc).entry((vnc, rank, world)).or_default());
        let mut st = lock(&slot);
        let built = st.get_or_insert_with(|| {
            build(rt, hosts, vnc, rank, world).map_err(|e| {
                let e = NrtError::new(e.status, format!("The barrier initialization has failed for LNC:{vnc}, worker: {rank}/{world}: {}", e.message));
                crate::log_error!(crate::log::Module::Nrt, "{}", e.message);
                e
            })
        });
        let b = built.as_ref().map_err(|e| NrtError::new(e.status, e.message.clone()))?;
        crate::hosts::host_of(rt, hosts, b.device)?.execute(b.model, &b.inputs, &b.outputs)?;
        let mut got = [0u8; BARRIER_BYTES as usize];
        b.out.read(0, &mut got)?;
        let want = world.to_le_bytes();
        if got.chunks(4).any(|w| w != want) {
            return Err(NrtError::failure(format!("the barrier of LNC:{vnc} read back {:?}, not the world size {world} in every word", &got[..8])));
        }
        Ok(())
    }
}

fn build(rt: &Runtime, hosts: &[ModelHost], vnc: u32, rank: u32, world: u32) -> NrtResult<Built> {
    let spec = CollectiveSpec { lnc: rt.topology().lnc() as usize, ..CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Uint32, BARRIER_BYTES / 4, world) };
    // As rank `rank` of `world` (not of the in-NEFF collectives' context,
    // which a barrier neither sets up nor changes), for the device's
    // generation.
    let cc = CcRank::of(rt, rank, world)?;
    let (device, local) = rt.locate_vnc(vnc)?;
    let host = crate::hosts::host_of(rt, hosts, device)?;
    let target = crate::load::gate::code_name(host.device().info().arch.arch);
    let neff = collective_neff_for(&spec, target).map_err(|e| NrtError::failure(format!("the barrier model: {e}")))?;
    let model = host.load_collectives(&neff, local as i32, -1, &cc)?;
    let mut inputs = TensorSet::new();
    inputs.add("input", Arc::new(Tensor::from_host_bytes(1u32.to_le_bytes().repeat(BARRIER_BYTES as usize / 4), "barrier input")));
    let out = Arc::new(Tensor::allocate_host(BARRIER_BYTES, "barrier output")?);
    let mut outputs = TensorSet::new();
    outputs.add("output", Arc::clone(&out));
    Ok(Built { model, device, inputs, outputs, out })
}
