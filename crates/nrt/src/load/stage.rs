//! Stage, lower and relocate: puts a planned program on the device.
//!
//! Per subgraph (= physical core): allocate private vars and copy
//! constants in, join the shared scratchpad, write pointer and DGE
//! tables, build and program one DMA ring pair per triggered queue set,
//! lower every engine stream and write the images into the core's
//! instruction arena. Every allocation goes through the model's memory
//! tier (or is recorded for return) so a failure, or unload, gives all of
//! it back.

use super::lower::{self, LowerError, TriggerRef, TriggerTarget};
use super::plan::{Placement, SubgraphPlan};
use super::rings::{self, Endpoint, RingImage, Side};
use super::sites::ImageMap;
use super::ModelHost;
use crate::custom_ops::{self, CustomOpEnv, StagedLibSet};
use crate::exec::cores::CoreDispatch;
use crate::cc::neff::CcRank;
use crate::exec::dispatch::MODEL_SEMAPHORES;
use crate::memory::MemUsage;
use crate::model::{CoreProgram, DeviceProgram, IoSlot, ModelId, PatchSite};
use crate::program::{dma, Dma2dIr, MemRefKind, Program, SbufGeometry, SubgraphProgram, Transfer};
use crate::status::{NrtError, NrtResult};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueId, DmaRingConfig, EngineId};
use nrt_hal::arch::{DMA_M2S_GROUP, DMA_S2M_GROUP, EVT_SEM_SEM_INC};
use nrt_isa::dma_desc::pattern::PATTERN_BLOCK_SIZE;
use nrt_isa::instr::PseudoDmaTrigger;
use nrt_isa::opcode::Opcode;
use nrt_neff::Neff;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Offset of the source address in a pattern block.
const PATTERN_SRC_ADDR: u64 = 0x10;
/// Offset of the destination address in a pattern block.
const PATTERN_DST_ADDR: u64 = 0x18;

/// Resources already taken on one core, for rollback.
#[derive(Default)]
struct Taken {
    images: Vec<DeviceAddr>,
    queues: Vec<DmaQueueId>,
    shared_scratchpad: bool,
    gpsimd_libs: Option<Arc<StagedLibSet>>,
    /// Whether the core's trace rings are held for a profile from the load.
    trace: bool,
}

fn hal(what: &str, e: impl std::fmt::Display) -> NrtError {
    NrtError::failure(format!("{what}: {e}"))
}

/// Stages a planned program for model `id` on `cores` (subgraph i on
/// `cores[i]`). On failure everything is given back.
/// `cc` is the loading rank of its collectives (rank 0 of 1 for `nrt_load`).
pub fn stage(host: &ModelHost, neff: &Neff, program: &Program, plans: &[SubgraphPlan], id: ModelId, cores: &[CoreId], cc: &CcRank) -> NrtResult<DeviceProgram> {
    let memory = host.memory.model_tier(cores[0], id);
    let mut per_core: Vec<(Arc<CoreDispatch>, Taken)> = Vec::new();
    let result = stage_inner(host, neff, program, plans, &memory, cores, &mut per_core, cc);
    match result {
        Ok((io, patches, cores_out)) => {
            let mut lock_order: Vec<usize> = (0..cores_out.len()).collect();
            lock_order.sort_by_key(|&i| cores_out[i].core.core());
            Ok(DeviceProgram { cores: cores_out, lock_order, io, patches, memory })
        }
        Err(e) => {
            for (core, taken) in per_core {
                if let Err(undo_err) = undo(&core, &taken, &host.memory) {
                    crate::log_error!(crate::log::Module::Nmgr, "rollback of model {id}: {undo_err}");
                }
            }
            if let Err(free_err) = memory.free_all() {
                crate::log_error!(crate::log::Module::Nmgr, "rollback of model {id}: {free_err}");
            }
            Err(e)
        }
    }
}

fn undo(core: &CoreDispatch, taken: &Taken, memory: &crate::memory::DeviceMemory) -> NrtResult<()> {
    for a in &taken.images {
        core.free_image(*a);
    }
    core.release_queues(&taken.queues);
    if taken.shared_scratchpad {
        core.release_scratchpad();
    }
    if taken.trace {
        core.release_trace();
    }
    match &taken.gpsimd_libs {
        Some(set) => custom_ops::libs::release_model(memory, set),
        None => Ok(()),
    }
}

/// Gives back everything a staged program holds (unload).
pub fn release(p: &DeviceProgram) -> NrtResult<()> {
    let mut first = Ok(());
    for c in &p.cores {
        let taken = Taken {
            images: c.images.to_vec(),
            queues: c.queues.clone(),
            shared_scratchpad: c.shared_scratchpad,
            gpsimd_libs: c.gpsimd_libs.clone(),
            trace: c.trace_held.swap(false, std::sync::atomic::Ordering::AcqRel),
        };
        if let Err(e) = undo(&c.core, &taken, p.memory.device_memory())
            && first.is_ok()
        {
            first = Err(e);
        }
    }
    let freed = p.memory.free_all();
    first.and(freed)
}

type Staged = (Vec<IoSlot>, Vec<PatchSite>, Vec<CoreProgram>);

#[allow(clippy::too_many_arguments)]
fn stage_inner(
    host: &ModelHost,
    neff: &Neff,
    program: &Program,
    plans: &[SubgraphPlan],
    memory: &crate::memory::ModelMemory,
    cores: &[CoreId],
    per_core: &mut Vec<(Arc<CoreDispatch>, Taken)>,
    cc: &CcRank,
) -> NrtResult<Staged> {
    // IO slots: one staging buffer per model input/output on the home core.
    let mut io = Vec::new();
    for (slot, sig) in program.inputs.iter().chain(program.outputs.iter()).enumerate() {
        let var_size = program
            .subgraphs
            .iter()
            .flat_map(|sg| sg.vars.iter())
            .filter(|v| matches!(v.kind, MemRefKind::Input { index } if index == slot) || matches!(v.kind, MemRefKind::Output { index } if index + program.inputs.len() == slot))
            .map(|v| v.size)
            .max()
            .unwrap_or(0);
        let size = sig.size_bytes().unwrap_or(var_size).max(var_size);
        if size == 0 {
            return Err(NrtError::invalid(format!("tensor {:?} has no size (neither its signature nor a var gives one)", sig.name)));
        }
        let staging = memory.alloc(MemUsage::Io, size, 64)?;
        io.push(IoSlot { name: sig.name.clone(), size, staging });
    }
    let mut patches = Vec::new();
    let mut out = Vec::new();
    for (i, (sg, plan)) in program.subgraphs.iter().zip(plans).enumerate() {
        let core_id = cores[i];
        let core = host.cores.get_or_install(&host.memory, core_id, host.settings.arena_bytes)?;
        per_core.push((core.clone(), Taken::default()));
        let taken = &mut per_core.last_mut().expect("just pushed").1;
        // Single-core programs stream output completions from SP's postamble.
        let notify_outputs = if program.subgraphs.len() == 1 { program.outputs.len() } else { 0 };
        let nsg = program.subgraphs.len();
        out.push(stage_subgraph(host, neff, sg, plan, memory, &core, taken, &io, &mut patches, notify_outputs, (cc, i, nsg))?);
    }
    patches.sort_by_key(|p: &PatchSite| p.slot);
    Ok((io, patches, out))
}

#[allow(clippy::too_many_arguments)]
fn stage_subgraph(
    host: &ModelHost,
    neff: &Neff,
    sg: &SubgraphProgram,
    plan: &SubgraphPlan,
    memory: &crate::memory::ModelMemory,
    core: &Arc<CoreDispatch>,
    taken: &mut Taken,
    io: &[IoSlot],
    patches: &mut Vec<PatchSite>,
    notify_outputs: usize,
    (cc, subgraph, subgraphs): (&CcRank, usize, usize),
) -> NrtResult<CoreProgram> {
    let device = &host.device;
    let arch = device.info().arch;
    let core_id = core.core();
    let nsg = neff.subgraphs.iter().find(|s| s.name == sg.name).ok_or_else(|| NrtError::failure(format!("subgraph {} vanished from the NEFF", sg.name)))?;

    // Shared scratchpad (virtual vars).
    let mut scratch_base = None;
    if plan.scratchpad_bytes > 0 {
        scratch_base = match core.acquire_scratchpad(plan.scratchpad_bytes)? {
            Some(a) => {
                taken.shared_scratchpad = true;
                Some(a)
            }
            None => Some(memory.alloc_on(core_id, MemUsage::ScratchpadNotShared, plan.scratchpad_bytes, 4096)?),
        };
    }

    // Every var's endpoint.
    let mut ends: BTreeMap<u64, Endpoint> = BTreeMap::new();
    for vp in &plan.vars {
        let e = match &vp.placement {
            Placement::StateBuffer => Endpoint::Fixed(arch.sbuf_addr(core_id).get()),
            Placement::Io(slot) => Endpoint::Io { slot: *slot, offset: 0 },
            Placement::Private(usage) => Endpoint::Fixed(memory.alloc_on(core_id, *usage, vp.size.max(1), vp.align)?.get()),
            Placement::Scratch(off) => Endpoint::Fixed(scratch_base.map_or(0, |b| b.get()) + off),
            Placement::Nothing => continue,
        };
        ends.insert(vp.var_id, e);
    }
    let resolve = |e: Endpoint, site: DeviceAddr, patches: &mut Vec<PatchSite>| -> u64 {
        match e {
            Endpoint::Fixed(a) => a,
            Endpoint::Io { slot, offset } => {
                patches.push(PatchSite { addr: site, slot, offset });
                io[slot].staging.get() + offset
            }
        }
    };
    // Constants, pointers, DGE tables.
    for v in &sg.vars {
        let Some(&Endpoint::Fixed(at)) = ends.get(&v.var_id) else { continue };
        match &v.kind {
            MemRefKind::File { .. } => {
                let c = neff.constant(nsg, &v.name).map_err(|e| NrtError::invalid(format!("constant {:?}: {e}", v.name)))?;
                device.write(DeviceAddr(at), c.data()).map_err(|e| hal(&format!("staging constant {:?}", v.name), e))?;
            }
            MemRefKind::Pointer { referenced_var_id } => {
                let target = *ends.get(referenced_var_id).ok_or_else(|| NrtError::invalid(format!("pointer var {:?} refers to var {referenced_var_id}, which has no memory", v.name)))?;
                let a = resolve(target, DeviceAddr(at), patches);
                device.write(DeviceAddr(at), &a.to_le_bytes()).map_err(|e| hal("writing a pointer var", e))?;
            }
            MemRefKind::DgeTable { ids } => {
                let mut table = Vec::with_capacity(ids.len() * 8);
                for (k, id) in ids.iter().enumerate() {
                    let target = *ends.get(id).ok_or_else(|| NrtError::invalid(format!("dge-table {:?} lists var {id}, which has no memory", v.name)))?;
                    table.extend_from_slice(&resolve(target, DeviceAddr(at + 8 * k as u64), patches).to_le_bytes());
                }
                if !table.is_empty() {
                    device.write(DeviceAddr(at), &table).map_err(|e| hal("writing a dge-table", e))?;
                }
            }
            _ => {}
        }
    }

    // Collectives: meet the peers, compose the group's rings, lower 0xC8.
    let fixed = |id: u64| match ends.get(&id) {
        Some(Endpoint::Fixed(a)) => Some(*a),
        _ => None,
    };
    let mut collectives = crate::cc::neff::stage(&crate::cc::neff::StageCtx {
        instance: crate::cc::neff::instance_key(&host.models),
        device,
        memory,
        core: core_id,
        dispatch: core,
        sg,
        def: &nsg.def,
        fixed: &fixed,
        subgraph,
        subgraphs,
        rank: cc.clone(),
    })?;

    // Trigger order per queue set, engine by engine.
    let mut triggers: BTreeMap<String, (EngineId, Vec<i64>)> = BTreeMap::new();
    for s in &sg.streams {
        for (index, rec) in s.records.iter().enumerate() {
            if Opcode::from_u8(rec[0]) != Opcode::PseudoDmaTrigger {
                continue;
            }
            let Ok(t) = PseudoDmaTrigger::decode(rec) else { continue };
            let set = dma::resolve_queue(&sg.queue_sets, &t.queue.0).ok_or_else(|| {
                NrtError::invalid(format!("{}: {} instruction {index} triggers queue {:?}, which def.json does not declare", sg.name, s.engine.name(), t.queue.0))
            })?;
            let entry = triggers.entry(set.name.clone()).or_insert((s.engine, Vec::new()));
            if entry.0 != s.engine {
                return Err(NrtError::invalid(format!(
                    "{}: queue set {:?} is triggered by both {} and {}; a queue must have one owning engine",
                    sg.name, set.name, entry.0.name(), s.engine.name()
                )));
            }
            entry.1.push(i64::from(t.block_id));
        }
    }
    // 0xD4 DMAs: one hardware queue per (dynamic queue set, slot), whose
    // completion semaphore is the slot's semaphore.
    let mut direct: BTreeMap<(String, u32), (EngineId, Vec<&Dma2dIr>)> = BTreeMap::new();
    for d in &sg.dma2d {
        let entry = direct.entry((d.queue_set.clone(), d.semaphore)).or_insert((d.engine, Vec::new()));
        if entry.0 != d.engine {
            return Err(NrtError::invalid(format!(
                "{}: queue slot {} of {:?} is used by both {} and {}; a queue must have one owning engine",
                sg.name, d.slot, d.queue_set, entry.0.name(), d.engine.name()
            )));
        }
        entry.1.push(d);
    }
    let mut patches_here: Vec<PatchSite> = Vec::new();
    let queues = core.claim_queues(triggers.len() + direct.len())?;
    taken.queues = queues.clone();
    let (block_queues, direct_queues) = queues.split_at(triggers.len());
    let ctx = RingCtx { host, sg, memory, core_id, ends: &ends, io };
    let mut targets: BTreeMap<(String, i64), TriggerTarget> = BTreeMap::new();
    for ((set, (engine, ids)), q) in triggers.iter().zip(block_queues) {
        let mut blocks = Vec::with_capacity(ids.len());
        let (mut sem, mut evt) = (None, None);
        for id in ids {
            let b = sg.block(*engine, set, *id).ok_or_else(|| {
                NrtError::invalid(format!("{}: {} triggers DMA block {id} on queue {set:?}, which no engine JSON defines", sg.name, engine.name()))
            })?;
            for (mine, theirs, what) in [(&mut sem, b.semaphore, "semaphore"), (&mut evt, b.event, "event")] {
                match (*mine, theirs) {
                    (Some(a), Some(b2)) if a != b2 => {
                        return Err(NrtError::invalid(format!("{}: blocks of queue {set:?} name different completion {what}s ({a} and {b2})", sg.name)));
                    }
                    (None, Some(x)) => *mine = Some(x),
                    _ => {}
                }
            }
            let copies = ctx.copies(&b.transfers, &format!("DMA block {id}"), &mut patches_here)?;
            targets.insert((set.clone(), *id), ctx.target(*q, &copies)?);
            blocks.push(copies);
        }
        ctx.program_ring(*q, &format!("queue {set:?}"), &blocks, sem, evt, patches)?;
    }
    // Each 0xD4 record is `packets` packets on its slot's ring.
    let sbuf = SbufGeometry { partitions: u64::from(arch.sbuf_partitions), partition_bytes: arch.sbuf_partition_bytes };
    let mut direct_targets: BTreeMap<(EngineId, usize), TriggerTarget> = BTreeMap::new();
    for (((set, sem), (_, recs)), q) in direct.iter().zip(direct_queues) {
        let mut blocks = Vec::new();
        for d in recs {
            let what = format!("{} instruction {} (dma2d)", d.engine.name(), d.index);
            let transfers = d.packets(&sg.name, sbuf).map_err(|e| NrtError::invalid(e.to_string()))?;
            let mut total = Vec::with_capacity(transfers.len());
            for t in &transfers {
                let copies = ctx.copies(std::slice::from_ref(t), &what, &mut patches_here)?;
                total.extend_from_slice(&copies);
                blocks.push(copies);
            }
            direct_targets.insert((d.engine, d.index), ctx.target(*q, &total)?);
        }
        ctx.program_ring(*q, &format!("dynamic queue {set:?} slot of semaphore {sem}"), &blocks, Some(*sem), None, patches)?;
    }

    patches.append(&mut patches_here);
    // GPSIMD libraries and the custom-op queues of the core's Q7 cores.
    let lib_set = nrt_neff::gpsimd::lib_set(neff, nsg).map_err(|e| NrtError::invalid(e.to_string()))?;
    taken.gpsimd_libs = host.gpsimd.stage(&host.memory, core_id, memory.model(), &lib_set)?;
    let installed = host.cores.q7_setup().image.library();
    let uses_q7 = check_extended_insts(sg, &lib_set, installed.as_ref())?;
    // The POOL image points the Q7 cluster at this model's library set
    // first (libnrt's ucode_switch_libs; 0 rows = the installed image only).
    let pool_head: Vec<nrt_isa::record::RecordBytes> = if uses_q7 || taken.gpsimd_libs.is_some() {
        let (at, rows) = taken.gpsimd_libs.as_ref().map_or((0, 0), |l| (l.table.get(), l.table_rows));
        let csr = arch.q7_csr_addr(core_id);
        let none = nrt_isa::record::Events::NONE;
        vec![
            lower::write_record(csr.offset(nrt_isa::ucode::csr::LIBSET_LO).get(), at as u32, none),
            lower::write_record(csr.offset(nrt_isa::ucode::csr::LIBSET_HI).get(), (at >> 32) as u32, none),
            lower::write_record(csr.offset(nrt_isa::ucode::csr::LIBSET_ROWS).get(), rows, none),
        ]
    } else {
        Vec::new()
    };
    let custom_queues = custom_ops::stage_custom_op_queues(arch, core_id);
    let has_custom_ops = lib_set.has_custom_ops();
    // Lower every engine and write its image.
    let mut images = [DeviceAddr(0); 5];
    let mut repeat_entries = [DeviceAddr(0); 5];
    let mut sites: [ImageMap; 5] = Default::default();
    let mut image_records = [0u32; 5];
    let mut debug_rings = Vec::new();
    // A device profile instruments every record and needs the core's TRACE rings.
    let mut traced = if host.settings.device_profile != crate::config::DeviceProfile::Off {
        core.enable_trace()?;
        taken.trace = true;
        Some(crate::profile::TracedImages::default())
    } else {
        None
    };
    // SP and the engines the subgraph gives a stream run; the others are
    // not started (no image, no START/END).
    let engines = crate::exec::dispatch::EngineSet::with_programs(|e| sg.stream(e).is_some());
    for engine in EngineId::ALL {
        if !engines.contains(engine) {
            continue;
        }
        let custom_op = |index: usize, rec: &nrt_isa::record::RecordBytes| {
            let bad = |reason: String| LowerError::BadRecord { subgraph: sg.name.clone(), engine: engine.name(), index, reason };
            if !has_custom_ops {
                return Err(bad(format!("a GPSIMD custom op needs op libraries; the subgraph carries {} (the base library alone has no custom ops)", lib_set.num_libs())));
            }
            let q = usize::from(rec[0x0C]);
            let queue = *custom_queues.get(q).ok_or_else(|| bad(format!("custom-op queue {q} does not exist; the core has {} (one per Q7 core)", custom_queues.len())))?;
            let env = CustomOpEnv {
                queue,
                sbuf_base_addr: arch.sbuf_addr(core_id).get(),
                one_value_read_addr: arch.event_addr(core_id, custom_ops::lower::EVT_ACCEL_EVENT).get(),
                completion_write_addr: arch.semaphore_addr(core_id, EVT_SEM_SEM_INC, u32::from(rec[7])).get(),
            };
            custom_ops::lower_pseudo_embedding_update(rec, &env).map_err(|e| bad(e.to_string()))
        };
        let image = match sg.stream(engine) {
            Some(s) => lower::lower_engine_mapped(&sg.name, engine, engines, &s.records, if engine == EngineId::Pool { &pool_head } else { &[] }, |t, index| {
                let bad = |reason: String| LowerError::BadRecord { subgraph: sg.name.clone(), engine: engine.name(), index, reason };
                match t {
                    TriggerRef::Block { queue, block_id } => {
                        let set = dma::resolve_queue(&sg.queue_sets, queue).map(|s| s.name.clone()).unwrap_or_default();
                        targets
                            .get(&(set, i64::from(block_id)))
                            .copied()
                            .ok_or_else(|| bad(format!("trigger of block {block_id} on queue {queue:?} has no staged ring")))
                    }
                    TriggerRef::Direct2d => direct_targets.get(&(engine, index)).copied().ok_or_else(|| bad("dma2d record has no staged ring".to_string())),
                }
            }, custom_op, |index, _| {
                collectives.records.remove(&(engine, index)).ok_or_else(|| LowerError::BadRecord {
                    subgraph: sg.name.clone(),
                    engine: engine.name(),
                    index,
                    reason: "PSEUDO_TRIGGER_COLLECTIVE was not staged".to_string(),
                })
            })
            .map(|(image, map)| (image, map.with_names(&s.names)))
            .map_err(|e| NrtError::invalid(e.to_string()))?,
            None => (lower::empty_sp(engines), ImageMap::frame_only(crate::exec::dispatch::preamble_for(engine, engines).len())),
        };
        let (mut image, map) = image;
        sites[engine.index()] = map;
        if let Some(ring) = crate::debug_stream::ring::stage(&mut image, engine, memory, device.as_ref())? {
            debug_rings.push(ring);
        }
        if engine == EngineId::Sp
            && notify_outputs > 0
            && !crate::exec::dispatch::insert_after_join(&mut image, crate::exec::dispatch::output_notifications(notify_outputs))
        {
            return Err(NrtError::failure(format!("subgraph {}: SP's image does not end with the runtime postamble", sg.name)));
        }
        if let Some(t) = traced.as_mut() {
            t.debug_cmds[engine.index()] = crate::profile::instrument(&mut image);
        }
        image_records[engine.index()] = image.len() as u32;
        let bytes = image.concat();
        let at = core.alloc_image(bytes.len() as u64)?;
        taken.images.push(at);
        // The image's bytes are the model's, not the runtime's: book them
        // to the model tier, which returns them at unload.
        memory.book_carved(core.arena_addr(), MemUsage::instructions_of(engine), bytes.len() as u64)?;
        device.write(at, &bytes).map_err(|e| hal("writing an instruction image", e))?;
        images[engine.index()] = at;
        let repeat = crate::exec::dispatch::frame_head(engine, engines).repeat_entry;
        repeat_entries[engine.index()] = at.offset((repeat * nrt_isa::record::RECORD_SIZE) as u64);
    }
    Ok(CoreProgram {
        core: core.clone(),
        images,
        repeat_entries,
        engines,
        runs_q7: !pool_head.is_empty(),
        queues: taken.queues.clone(),
        shared_scratchpad: taken.shared_scratchpad,
        gpsimd_libs: taken.gpsimd_libs.clone(),
        subgraph: sg.name.clone(),
        sites,
        image_records,
        trace_held: std::sync::atomic::AtomicBool::new(traced.is_some()),
        trace: traced,
        cc_claim: collectives.claim.take(),
        cc_ops: collectives.ops,
        cc_net: collectives.net.take(),
        debug_rings,
    })
}

/// Every EXTENDED_INST of the subgraph must name a kernel one of its
/// libraries exports (opcode 0xF0, sub-opcode = the record's `spec`) or
/// one the installed Q7 image's kernel table lists. Returns whether the
/// subgraph hands any op to the Q7 cluster.
fn check_extended_insts(sg: &SubgraphProgram, libs: &nrt_neff::gpsimd::GpsimdLibSet, installed: Option<&nrt_isa::ucode::LibraryImage>) -> NrtResult<bool> {
    let op = Opcode::ExtendedInst.to_u8();
    let mut any = false;
    for s in &sg.streams {
        for (index, rec) in s.records.iter().enumerate() {
            if rec[0] != op {
                continue;
            }
            any = true;
            let spec = rec[0x0C];
            if libs.find(op, spec).is_none() && installed.and_then(|l| l.lookup(spec, op)).is_none() {
                return Err(NrtError::invalid(format!(
                    "{}: {} instruction {index}: EXTENDED_INST spec {spec} names no kernel; the subgraph's {} GPSIMD libraries export {:?} and the installed Q7 image {}",
                    sg.name,
                    s.engine.name(),
                    libs.num_libs(),
                    libs.libs.iter().flat_map(|l| l.functions.iter().map(|f| (f.name.as_str(), f.opcode, f.sub_opcode))).collect::<Vec<_>>(),
                    match installed {
                        Some(l) => format!("lists specs {:?}", l.table.iter().filter(|r| r.opcode == op).map(|r| r.spec).collect::<Vec<_>>()),
                        None => "is not a library".to_string(),
                    }
                )));
            }
        }
    }
    Ok(any)
}

/// What building a ring needs from the subgraph being staged.
struct RingCtx<'a> {
    host: &'a ModelHost,
    sg: &'a SubgraphProgram,
    memory: &'a crate::memory::ModelMemory,
    core_id: CoreId,
    ends: &'a BTreeMap<u64, Endpoint>,
    io: &'a [IoSlot],
}

impl RingCtx<'_> {
    /// The ring entries of `transfers`: var slices resolved to endpoints,
    /// pattern blocks staged (their IO address fields become patch sites).
    fn copies(&self, transfers: &[Transfer], what: &str, patches: &mut Vec<PatchSite>) -> NrtResult<Vec<rings::Copy>> {
        let sg = &self.sg.name;
        let device = &self.host.device;
        let mut out = Vec::with_capacity(transfers.len());
        for t in transfers {
            let at = |v: dma::VarSlice| -> NrtResult<Endpoint> {
                match self.ends.get(&v.var_id) {
                    Some(Endpoint::Fixed(a)) => Ok(Endpoint::Fixed(a + v.offset)),
                    Some(Endpoint::Io { slot, .. }) => Ok(Endpoint::Io { slot: *slot, offset: v.offset }),
                    None => Err(NrtError::invalid(format!("{sg}: {what} uses var {} which has no memory", v.var_id))),
                }
            };
            let (src, dst) = (at(t.src)?, at(t.dst)?);
            let mut resolve = |e: Endpoint, site: DeviceAddr| -> u64 {
                match e {
                    Endpoint::Fixed(a) => a,
                    Endpoint::Io { slot, offset } => {
                        patches.push(PatchSite { addr: site, slot, offset });
                        self.io[slot].staging.get() + offset
                    }
                }
            };
            let pattern_block = match &t.pattern {
                None => None,
                Some(p) => {
                    let blk = self.memory.alloc_on(self.core_id, MemUsage::DmaRing, PATTERN_BLOCK_SIZE as u64, 64)?;
                    let mut p = *p;
                    p.src.addr = resolve(src, blk.offset(PATTERN_SRC_ADDR));
                    p.dst.addr = resolve(dst, blk.offset(PATTERN_DST_ADDR));
                    let bytes = p.to_bytes().map_err(|e| NrtError::invalid(format!("{sg}: {what}: {e}")))?;
                    device.write(blk, &bytes).map_err(|e| hal("writing a DMA pattern block", e))?;
                    Some(blk.get())
                }
            };
            out.push(rings::Copy { src, dst, len: t.len, pattern_block });
        }
        Ok(out)
    }

    /// The tail-increment registers of queue `q` and the descriptor count `copies` submit.
    fn target(&self, q: DmaQueueId, copies: &[rings::Copy]) -> NrtResult<TriggerTarget> {
        let arch = self.host.device.info().arch;
        let count = u32::try_from(rings::descriptor_count(copies)).map_err(|_| NrtError::invalid("DMA block too large"))?;
        Ok(TriggerTarget {
            tx_tail_inc: arch.dma_tail_inc_addr(self.core_id, q, DMA_M2S_GROUP).get(),
            rx_tail_inc: arch.dma_tail_inc_addr(self.core_id, q, DMA_S2M_GROUP).get(),
            count,
        })
    }

    /// Builds, writes and programs the ring pair of queue `q` from its
    /// packets in submission order; ring IO fields become patch sites.
    fn program_ring(&self, q: DmaQueueId, what: &str, blocks: &[Vec<rings::Copy>], sem: Option<u32>, evt: Option<u32>, patches: &mut Vec<PatchSite>) -> NrtResult<()> {
        let sg = &self.sg.name;
        let device = &self.host.device;
        if let Some(s) = sem.filter(|s| *s >= MODEL_SEMAPHORES) {
            return Err(NrtError::invalid(format!("{sg}: {what} signals semaphore {s}; models may use 0..{MODEL_SEMAPHORES}")));
        }
        let refs: Vec<&[rings::Copy]> = blocks.iter().map(Vec::as_slice).collect();
        let img: RingImage = rings::build(&refs, &|slot| self.io[slot].staging.get()).map_err(|e| NrtError::invalid(format!("{sg}: {what}: {e}")))?;
        let ring_bytes = img.tx.len() as u64;
        let usage = if blocks.is_empty() { MemUsage::DmaRing } else { MemUsage::DmaRingIo };
        let tx = self.memory.alloc_on(self.core_id, usage, ring_bytes, 256)?;
        let rx = self.memory.alloc_on(self.core_id, usage, ring_bytes, 256)?;
        device.write(tx, &img.tx).map_err(|e| hal("writing a TX ring", e))?;
        device.write(rx, &img.rx).map_err(|e| hal("writing an RX ring", e))?;
        for p in &img.patches {
            let base = if p.side == Side::Tx { tx } else { rx };
            patches.push(PatchSite { addr: base.offset(p.ring_offset), slot: p.slot, offset: p.offset });
        }
        let cfg = DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: img.descriptors, completion_semaphore: sem, completion_event: evt };
        // Through the core, which remembers the programming for a recovery.
        let core = self.host.cores.get(self.core_id).ok_or_else(|| NrtError::failure(format!("NC {} is not installed", self.core_id.0)))?;
        core.program_queue(q, cfg)
    }
}
