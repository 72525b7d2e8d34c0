//! `sgNN/def.json`: one subgraph's variables, DMA queue sets, engine files
//! and runtime reservations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::engine::DmaBlock;
use super::{Extra, string_enum};

/// The five engines of a NeuronCore, in libnrt's index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineKind {
    /// Tensor (systolic array) engine, index 0.
    Pe,
    /// Activation engine, index 1.
    Act,
    /// Pool (GPSIMD) engine, index 2.
    Pool,
    /// Vector engine, index 3.
    Dve,
    /// Sync/sequencer engine, index 4.
    Sp,
}

impl EngineKind {
    /// All engines in index order.
    pub const ALL: [EngineKind; 5] =
        [EngineKind::Pe, EngineKind::Act, EngineKind::Pool, EngineKind::Dve, EngineKind::Sp];

    /// The def.json key naming the engine JSON ("pe", "act", ...); the
    /// instruction key is this plus `_instr`.
    pub fn key(self) -> &'static str {
        match self {
            EngineKind::Pe => "pe",
            EngineKind::Act => "act",
            EngineKind::Pool => "pool",
            EngineKind::Dve => "dve",
            EngineKind::Sp => "sp",
        }
    }

    /// The file stem compiler output uses for this engine ("PE", "Activation", ...).
    pub fn file_stem(self) -> &'static str {
        match self {
            EngineKind::Pe => "PE",
            EngineKind::Act => "Activation",
            EngineKind::Pool => "Pool",
            EngineKind::Dve => "DVE",
            EngineKind::Sp => "SP",
        }
    }

    /// Looks an engine up by its def.json key (also used as a queue owner).
    pub fn from_key(key: &str) -> Option<Self> {
        EngineKind::ALL.into_iter().find(|e| e.key() == key)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

/// A subgraph definition. Engine keys name files relative to the subgraph
/// directory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DefJson {
    /// Always "definition" in known producers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Definition format version, e.g. "0.6".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Variables by name (required by libnrt).
    pub var: BTreeMap<String, Var>,
    /// DMA queue sets by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dma_queue: BTreeMap<String, QueueSet>,
    /// PE engine JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe: Option<String>,
    /// PE instruction stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe_instr: Option<String>,
    /// Activation engine JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<String>,
    /// Activation instruction stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_instr: Option<String>,
    /// Pool engine JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    /// Pool instruction stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_instr: Option<String>,
    /// DVE engine JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dve: Option<String>,
    /// DVE instruction stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dve_instr: Option<String>,
    /// SP engine JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sp: Option<String>,
    /// SP instruction stream file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sp_instr: Option<String>,
    /// Subgraph-level DMA blocks (in addition to the engine JSONs' lists).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dma: Vec<DmaBlock>,
    /// Events the runtime may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_event_count: Option<u64>,
    /// Semaphores the runtime may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_semaphore_count: Option<u64>,
    /// State-buffer carve-outs reserved for the runtime.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtime_statebuffer_reservation: Vec<SbReservation>,
    /// Named NEFF features, e.g. "neff_feature_vnc".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neff_features: Vec<String>,
    /// FP8 conversion settings for the engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_conversion_config: Option<Fp8ConversionConfig>,
    /// GPSIMD microcode (custom-op) libraries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ucode_lib: Option<UcodeLibRef>,
    /// Extended-ISA library definition (shape not documented).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_isa_ucode_lib_def: Option<Value>,
    /// Collective-communication streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc_streams: Option<CcStreams>,
    /// Number of streams (older producers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_streams: Option<u64>,
    /// Collective replica groups (shape not documented).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_groups: Option<Value>,
    /// Collective source/target pairs (shape not documented).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_target_pairs: Option<Value>,
    /// Debug information object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug_info: Option<Value>,
    /// Keys not modelled here (debug file lists, `#` comments...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl DefJson {
    /// The engine JSON file named for `engine`, if any.
    pub fn engine_json(&self, engine: EngineKind) -> Option<&str> {
        match engine {
            EngineKind::Pe => self.pe.as_deref(),
            EngineKind::Act => self.act.as_deref(),
            EngineKind::Pool => self.pool.as_deref(),
            EngineKind::Dve => self.dve.as_deref(),
            EngineKind::Sp => self.sp.as_deref(),
        }
    }

    /// The instruction stream file named for `engine`, if any.
    pub fn engine_instr(&self, engine: EngineKind) -> Option<&str> {
        match engine {
            EngineKind::Pe => self.pe_instr.as_deref(),
            EngineKind::Act => self.act_instr.as_deref(),
            EngineKind::Pool => self.pool_instr.as_deref(),
            EngineKind::Dve => self.dve_instr.as_deref(),
            EngineKind::Sp => self.sp_instr.as_deref(),
        }
    }

    /// Sets the engine JSON and instruction stream file names for `engine`.
    pub fn set_engine_files(&mut self, engine: EngineKind, json: Option<String>, instr: Option<String>) {
        let (j, i) = match engine {
            EngineKind::Pe => (&mut self.pe, &mut self.pe_instr),
            EngineKind::Act => (&mut self.act, &mut self.act_instr),
            EngineKind::Pool => (&mut self.pool, &mut self.pool_instr),
            EngineKind::Dve => (&mut self.dve, &mut self.dve_instr),
            EngineKind::Sp => (&mut self.sp, &mut self.sp_instr),
        };
        *j = json;
        *i = instr;
    }

    /// Vars of one type, ordered by `var_id`.
    pub fn vars_of_type(&self, ty: &VarType) -> Vec<(&str, &Var)> {
        let mut v: Vec<_> =
            self.var.iter().filter(|(_, var)| &var.ty == ty).map(|(n, var)| (n.as_str(), var)).collect();
        v.sort_by_key(|(_, var)| var.var_id);
        v
    }
}

string_enum! {
    /// What a var is and where it lives.
    VarType {
        /// The on-chip state buffer (SBUF).
        StateBuffer = "state-buffer",
        /// A model input bound per execution.
        Input = "input",
        /// A model output bound per execution.
        Output = "output",
        /// An HBM constant loaded from `file_name`.
        File = "file",
        /// Private HBM scratchpad.
        TmpBuf = "tmp-buf",
        /// Shared HBM scratchpad at `backing_variable_off`.
        Virtual = "virtual",
        /// An 8-byte HBM slot holding another var's address.
        Pointer = "pointer",
        /// A list of var ids.
        List = "list",
        /// A descriptor-generation table listing var ids.
        DgeTable = "dge-table",
        /// A remote (other core) buffer.
        Remote = "remote",
        /// A buffer shared between cores.
        Shared = "shared",
        /// A buffer sharded between cores.
        Sharded = "sharded",
    }
}

/// One variable (memory region) of a subgraph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Var {
    /// Kind of region.
    #[serde(rename = "type")]
    pub ty: VarType,
    /// Unique id; descriptors and instructions refer to vars by it.
    pub var_id: u64,
    /// Size in bytes (required for input/output/tmp-buf/virtual/pointer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Required alignment, a power of two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alignment: Option<u64>,
    /// Fabric path, "main" (default) or "alt".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_path: Option<String>,
    /// Constant file (`.npy` or raw) for `file` vars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_name: Option<String>,
    /// Offset within the shared scratchpad for `virtual` vars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_variable_off: Option<u64>,
    /// Backing buffer of a `virtual` var.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing_buf: Option<Value>,
    /// Var whose address a `pointer` var stores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referenced_var_id: Option<u64>,
    /// Var ids of a `list` / `dge-table` var.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<Vec<u64>>,
    /// Element type (numpy-style name), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Tensor shape, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u64>>,
    /// Operations touching the var (empty in known output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<Vec<Value>>,
    /// Device-print prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Device-print pipe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipe: Option<Value>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Var {
    /// A var of `ty` with only the required keys set.
    pub fn new(ty: VarType, var_id: u64, size: Option<u64>) -> Self {
        Var {
            ty,
            var_id,
            size,
            alignment: None,
            fabric_path: None,
            file_name: None,
            backing_variable_off: None,
            backing_buf: None,
            referenced_var_id: None,
            list: None,
            dtype: None,
            shape: None,
            ops: None,
            prefix: None,
            pipe: None,
            extra: Extra::new(),
        }
    }
}

string_enum! {
    /// The ring kind a queue set maps to.
    QueueType {
        /// Input copies.
        In = "in",
        /// Output copies.
        Out = "out",
        /// Data movement (indirect memcpy when `indirect_memcpy` is set).
        Data = "data",
        /// Embedding-update queues.
        EmbeddingUpdate = "embedding_update",
        /// Descriptors generated at run time (DGE / dynamic DMA).
        Dynamic = "dynamic",
        /// Dynamic activation-table loads.
        ActLoad = "act_load",
    }
}

/// A named set of DMA queues.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueSet {
    /// Ring kind.
    #[serde(rename = "type")]
    pub ty: QueueType,
    /// Hardware queues in the set (default 1, at most 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_queues: Option<u32>,
    /// Engine issuing the DMA triggers ("pe", "act", "pool", "dve", "sp").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Preload to SBUF at model start (INF1 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    /// Swappable ring-set instance names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_instances: Option<Vec<String>>,
    /// Completion semaphore per queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semaphore_set: Option<Vec<u32>>,
    /// Completion semaphore of a single-queue set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semaphore: Option<u32>,
    /// Fabric path, "main" (default) or "alt".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_path: Option<String>,
    /// A `data` set used for indirect memcpy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indirect_memcpy: Option<bool>,
    /// Hardware descriptor generation settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dge: Option<Value>,
    /// State-buffer scratch for dynamic DMA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_dma: Option<DynamicDma>,
    /// Sync semaphore of an embedding-update set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding_update_sync_semaphore: Option<Value>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl QueueSet {
    /// A queue set of `ty` with only the required keys set.
    pub fn new(ty: QueueType) -> Self {
        QueueSet {
            ty,
            num_queues: None,
            owner: None,
            pinned: None,
            queue_instances: None,
            semaphore_set: None,
            semaphore: None,
            fabric_path: None,
            indirect_memcpy: None,
            dge: None,
            dynamic_dma: None,
            embedding_update_sync_semaphore: None,
            extra: Extra::new(),
        }
    }

    /// Number of hardware queues, applying the default of 1.
    pub fn queue_count(&self) -> u32 {
        self.num_queues.unwrap_or(1)
    }
}

/// State-buffer scratch area used by dynamic DMA queue sets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamicDma {
    /// Byte offset within each partition.
    #[serde(rename = "SB_scratch_partition_offset", default, skip_serializing_if = "Option::is_none")]
    pub sb_scratch_partition_offset: Option<u64>,
    /// Bytes per partition.
    #[serde(rename = "SB_scratch_partition_size", default, skip_serializing_if = "Option::is_none")]
    pub sb_scratch_partition_size: Option<u64>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A state-buffer carve-out the runtime owns (e.g. event accelerator slots).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SbReservation {
    /// Reservation kind; only "evtaccel" is known.
    #[serde(rename = "type")]
    pub ty: String,
    /// Byte offset within each partition.
    pub offset: u64,
    /// Bytes per partition.
    pub size: u64,
    /// First partition.
    pub base_partition: u32,
    /// Number of partitions.
    pub partitions: u32,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// FP8 conversion behaviour of the engines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fp8ConversionConfig {
    /// Extended FP8 range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_range_extension: Option<bool>,
    /// Maximum exponent of e4m3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emax_fp8_e4m3: Option<i64>,
    /// Maximum exponent of e5m2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emax_fp8_e5m2: Option<i64>,
    /// OCP saturation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocp_sat: Option<bool>,
    /// FP8 SIS flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_sis: Option<bool>,
    /// FP8 SNS flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp8_sns: Option<bool>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `ucode_lib`: either a manifest file name or inline library entries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UcodeLibRef {
    /// Name of a manifest member (e.g. "ucode_lib.json").
    File(String),
    /// Inline list of libraries.
    Libraries(Vec<UcodeLib>),
    /// A single inline library.
    Library(Box<UcodeLib>),
}

/// One GPSIMD microcode (custom-op) library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UcodeLib {
    /// The library `.bin` member.
    pub library: String,
    /// Version "X.Y.Z.W"; the major must match the runtime's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ulib_to_ucode_version: Option<String>,
    /// Opcode; -123 marks the baked default library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opcode: Option<i64>,
    /// CPU id (must be 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_id: Option<u32>,
    /// Pool cores used: 0 (unset), 1 or 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cpus: Option<u32>,
    /// Functions the library exports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<UcodeFunction>,
    /// Additional library reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_lib: Option<Value>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A function exported by a microcode library.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UcodeFunction {
    /// Function name (at most 64 characters).
    pub name: String,
    /// Extended-ISA opcode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opcode: Option<i64>,
    /// Sub-opcode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_opcode: Option<i64>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Collective-communication stream settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CcStreams {
    /// Number of CC streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_streams: Option<u64>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}
