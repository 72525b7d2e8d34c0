//! The model database: every loaded model by id (libnrt's `dlr_model_set`
//! under a rwlock, with `last_nn_id`), and what a loaded model holds.
//!
//! The load pipeline inserts a [`LoadedModel`] when a model reaches READY;
//! unload removes it from lookup first, then waits for in-flight
//! executions to release their references.

use crate::cache_line::CacheLine;
use crate::exec::cores::CoreDispatch;
use crate::exec::harvest::Harvest;
use crate::memory::ModelMemory;
use crate::status::NrtStatus;
use crate::load::sites::ImageMap;
use nrt_hal::{DeviceAddr, DmaQueueId, EngineId};
use nrt_neff::TensorSignature;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// A model id as the C API hands it out (`nrt_model_t` identity).
pub type ModelId = u32;

/// Lifecycle state of a model (`dlr_model.state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelState {
    /// Being staged.
    Starting,
    /// Ready to execute.
    Running,
    /// Being unloaded.
    Stopping,
}

/// An 8-byte device field that must hold the address of an IO tensor
/// (plus an offset): a descriptor `buf_ptr`, a pointer var, a DGE entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchSite {
    /// Where the address goes.
    pub addr: DeviceAddr,
    /// IO slot (inputs first, then outputs).
    pub slot: usize,
    /// Offset added to the tensor's address.
    pub offset: u64,
}

/// The device-resident program of a model on one physical core.
#[derive(Debug)]
pub struct CoreProgram {
    /// The core's dispatch resources.
    pub core: Arc<CoreDispatch>,
    /// Per-engine image addresses (PE, ACT, POOL, DVE, SP): what the request
    /// carries (0 for an engine the program does not start).
    pub images: [DeviceAddr; 5],
    /// Per-engine repeat entries ([`crate::exec::dispatch::FrameHead`]):
    /// what the request carries when the core's previous execution was of
    /// this model (no MODEL_SWITCH region); `images` is the switch entry.
    pub repeat_entries: [DeviceAddr; 5],
    /// The engines the program starts (SP and those with a stream); the
    /// harvest expects START/END from exactly these.
    pub engines: crate::exec::dispatch::EngineSet,
    /// DMA queues claimed on the core.
    pub queues: Vec<DmaQueueId>,
    /// Whether the model joined the core's shared scratchpad.
    pub shared_scratchpad: bool,
    /// The GPSIMD library set staged for the model on this core (shared
    /// with other models when it is the single extended-ISA library).
    pub gpsimd_libs: Option<Arc<crate::custom_ops::StagedLibSet>>,
    /// The subgraph this program runs (`sg00`, ...).
    pub subgraph: String,
    /// Per engine, where each image record came from (names instructions
    /// in error messages and traces).
    pub sites: [ImageMap; 5],
    /// Whether the program can hand ops to the Q7 cluster (EXTENDED_INST
    /// or custom ops): only then can an execution leave kernel output to
    /// drain from the Q7 stdout rings.
    pub runs_q7: bool,
    /// Records of each engine's image (0 for an engine not started).
    pub image_records: [u32; 5],
    /// Set when the images are instrumented for a device profile.
    pub trace: Option<crate::profile::TracedImages>,
    /// Whether that load-time profile is still running: its images stay
    /// instrumented and it holds the core's trace rings
    /// ([`crate::exec::cores::CoreDispatch::enable_trace`]). It ends after
    /// the profiled execution in `model` mode, at unload in `session` mode.
    pub trace_held: std::sync::atomic::AtomicBool,
    /// The core's in-NEFF collectives claim (its collectives queues and
    /// semaphores), given back when the program is dropped.
    pub cc_claim: Option<crate::cc::neff::CcClaim>,
    /// In-NEFF collectives the core runs per execution.
    pub cc_ops: u32,
    /// The proxy work of the core's in-NEFF collective when its replica
    /// group has ranks in other processes (one proxy per execution).
    pub cc_net: Option<Arc<crate::cc::neff_net::NeffNet>>,
    /// The debug rings of the engines whose images print
    /// (DEBUG_TENSOR_READ), drained after each execution.
    pub debug_rings: Vec<crate::debug_stream::DebugRing>,
}

impl CoreProgram {
    /// Record index within engine `engine`'s image of the device program
    /// counter `pc` (which counts from the engine's dispatcher stream), or
    /// `None` when `pc` lies before the image (in the dispatcher).
    pub fn image_pc(&self, engine: usize, pc: u64) -> Option<u64> {
        pc.checked_sub(self.image_first_pc(engine)?)
    }

    /// The device program counter of the first record of engine
    /// `engine`'s image.
    pub fn image_first_pc(&self, engine: usize) -> Option<u64> {
        if !self.engines.contains_index(engine) {
            return None;
        }
        let start = self.core.engine_stream_addr(engine)?;
        let image = self.images.get(engine)?.get();
        Some(image.checked_sub(start.get())? / nrt_isa::record::RECORD_SIZE as u64)
    }

    /// Names what engine `engine` was executing at device program counter
    /// `pc`: the NEFF instruction (index, compiler name, opcode) or the
    /// runtime frame record, or the dispatcher.
    pub fn describe_pc(&self, engine: usize, pc: u64) -> String {
        let Some(e) = EngineId::from_index(engine) else {
            return format!("{} engine {engine} record {pc}", self.subgraph);
        };
        match self.image_pc(engine, pc) {
            Some(at) => self.sites[engine].describe(&self.subgraph, e, at),
            None => format!("{} {} runtime dispatcher record {pc}", self.subgraph, e.name()),
        }
    }
}

/// An IO slot: a model input or output with its staging buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct IoSlot {
    /// Tensor name.
    pub name: String,
    /// Bytes an execution must bind.
    pub size: u64,
    /// Staging buffer for host tensors (and the default binding).
    pub staging: DeviceAddr,
}

/// Everything a model put on the device.
#[derive(Debug)]
pub struct DeviceProgram {
    /// One entry per subgraph, in subgraph order.
    pub cores: Vec<CoreProgram>,
    /// Indices into `cores` in ascending core order (lock order).
    pub lock_order: Vec<usize>,
    /// IO slots: inputs, then outputs.
    pub io: Vec<IoSlot>,
    /// IO patch sites, grouped by slot.
    pub patches: Vec<PatchSite>,
    /// The model's memory tier (freed at unload).
    pub memory: ModelMemory,
}

/// What executions of a model keep between runs (preallocated at load so
/// an execution allocates nothing).
#[derive(Debug)]
pub struct ExecState {
    /// Address each IO slot's patch sites currently hold.
    pub bound: Vec<u64>,
    /// The (inputs, outputs) sets the last execution validated and bound,
    /// when all their tensors live on the device: the same sets again need
    /// neither (host tensors are staged on every execution).
    pub last_sets: Option<(crate::tensor::SetToken, crate::tensor::SetToken)>,
    /// While `last_sets` holds: each output slot's position in that
    /// outputs set, so a tensor-completion record finds its tensor without
    /// matching names.
    pub output_positions: Vec<usize>,
    /// The harvest state machine.
    pub harvest: Harvest,
    /// Device profiling of this model (NEURON_RT_INSPECT_*), if on.
    pub profile: Option<crate::profile::ModelProfile>,
    /// A profile capture started on the loaded model
    /// (`nrt_profile_start`, continuous profiling, inspect), if any.
    pub capture: Option<crate::profile::capture::Capture>,
}

/// The header name the Neuron compiler writes into every NEFF it
/// produces, whatever the model (`neuronx-cc`'s `file.neff`).
pub const COMPILER_PLACEHOLDER_NAME: &str = "file.neff";

/// The one name a model goes by in the logs, the tools' views and
/// Python: the NEFF header's, except where that is empty or the
/// compiler's placeholder and the NEFF was read from a file, then the
/// file's stem (`matmul_small` for `.../matmul_small.neff`).
pub fn model_name(header_name: &str, file: Option<&std::path::Path>) -> String {
    let placeholder = header_name.is_empty() || header_name == COMPILER_PLACEHOLDER_NAME;
    match file.and_then(|f| f.file_stem()).filter(|_| placeholder) {
        Some(stem) => stem.to_string_lossy().into_owned(),
        None => header_name.to_string(),
    }
}

/// A model that finished loading.
#[derive(Debug)]
pub struct LoadedModel {
    /// Its id.
    pub id: ModelId,
    /// Its name ([`model_name`]).
    pub name: String,
    /// Logical core it runs on.
    pub vnc: u32,
    /// Inputs (what `nrt_get_model_tensor_info` reports).
    pub inputs: Vec<TensorSignature>,
    /// Outputs.
    pub outputs: Vec<TensorSignature>,
    /// The device program; `None` in fake-instance mode.
    pub program: Option<DeviceProgram>,
    /// Execution state, locked for the duration of an execution (on its
    /// own cache line: an async worker locks it per execution while
    /// submitters read the fields above to validate their requests).
    pub exec: CacheLine<Mutex<ExecState>>,
    state: Mutex<ModelState>,
    poison: AtomicI32,
}

impl LoadedModel {
    /// A model in state RUNNING.
    pub fn new(
        id: ModelId,
        name: String,
        vnc: u32,
        inputs: Vec<TensorSignature>,
        outputs: Vec<TensorSignature>,
        program: Option<DeviceProgram>,
        exec: ExecState,
    ) -> LoadedModel {
        LoadedModel { id, name, vnc, inputs, outputs, program, exec: CacheLine(Mutex::new(exec)), state: Mutex::new(ModelState::Running), poison: AtomicI32::new(0) }
    }

    /// Its lifecycle state.
    pub fn state(&self) -> ModelState {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves it to `s`.
    pub fn set_state(&self, s: ModelState) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = s;
    }

    /// The status that poisoned it, if a fatal fault did (fail-stop).
    pub fn poisoned(&self) -> Option<NrtStatus> {
        match self.poison.load(Ordering::Acquire) {
            0 => None,
            code => NrtStatus::from_code(code),
        }
    }

    /// Poisons it with `status` (the first fatal status sticks).
    pub fn poison(&self, status: NrtStatus) {
        let _ = self.poison.compare_exchange(0, status.code(), Ordering::AcqRel, Ordering::Acquire);
    }
}

/// All loaded models.
#[derive(Debug, Default)]
pub struct ModelDb {
    last_id: AtomicU32,
    models: RwLock<BTreeMap<ModelId, Arc<LoadedModel>>>,
}

impl ModelDb {
    /// Mints the next model id (ids start at 1 and are never reused).
    pub fn mint_id(&self) -> ModelId {
        self.last_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a ready model.
    pub fn insert(&self, model: Arc<LoadedModel>) {
        self.models.write().unwrap_or_else(|e| e.into_inner()).insert(model.id, model);
    }

    /// Looks a model up.
    pub fn get(&self, id: ModelId) -> Option<Arc<LoadedModel>> {
        self.models.read().unwrap_or_else(|e| e.into_inner()).get(&id).cloned()
    }

    /// Removes a model from lookup, returning it so the caller can wait for
    /// its last references and unstage it.
    pub fn remove(&self, id: ModelId) -> Option<Arc<LoadedModel>> {
        self.models.write().unwrap_or_else(|e| e.into_inner()).remove(&id)
    }

    /// Ids of every loaded model (a snapshot, e.g. for close).
    pub fn ids(&self) -> Vec<ModelId> {
        self.models.read().unwrap_or_else(|e| e.into_inner()).keys().copied().collect()
    }

    /// How many loaded models run on logical core `vnc`.
    pub fn count_on(&self, vnc: u32) -> usize {
        self.models.read().unwrap_or_else(|e| e.into_inner()).values().filter(|m| m.vnc == vnc).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compilers_placeholder_name_gives_way_to_the_file_stem() {
        let file = std::path::Path::new("/models/matmul_small.neff");
        assert_eq!(model_name(COMPILER_PLACEHOLDER_NAME, Some(file)), "matmul_small");
        assert_eq!(model_name("", Some(file)), "matmul_small");
        assert_eq!(model_name("copy", Some(file)), "copy", "a real header name stays");
        assert_eq!(model_name(COMPILER_PLACEHOLDER_NAME, None), "file.neff", "bytes alone keep the header's");
    }
}
