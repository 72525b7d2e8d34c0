//! Engine JSON (`PE.json`, `Activation.json`, `DVE.json`, ...): the
//! engine's DMA blocks and, for ACT and DVE, the tables they load.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::{Extra, string_enum};

/// One engine's JSON member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineJson {
    /// The member's own name, e.g. "PE.json".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The instruction stream member (relative to the subgraph directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instr: Option<String>,
    /// DMA blocks the engine triggers.
    #[serde(default)]
    pub dma: Vec<DmaBlock>,
    /// ACT: activation-table index member (e.g. "act_info.json").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_info: Option<String>,
    /// ACT: semaphore used for table loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_semaphore: Option<u32>,
    /// ACT: names of the activation function sets (tables) used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_function_sets: Option<Vec<String>>,
    /// ACT: per-function profile records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_meta_data: Option<Value>,
    /// DVE: loadable table sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dve_tables: Option<Vec<DveTables>>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One set of loadable DVE tables (file names in the subgraph directory).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DveTables {
    /// Opcode table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opcode_table: Option<String>,
    /// Datapath table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datapath_table: Option<String>,
    /// Control table (single-table form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_table: Option<String>,
    /// Fast control table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_fast_table: Option<String>,
    /// Slow control table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control_slow_table: Option<String>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl DveTables {
    /// Every table file named by this set.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        [
            &self.opcode_table,
            &self.datapath_table,
            &self.control_table,
            &self.control_fast_table,
            &self.control_slow_table,
        ]
        .into_iter()
        .filter_map(|f| f.as_deref())
    }
}

/// A group of DMA descriptors fired by one trigger of the owning engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DmaBlock {
    /// Trigger id referenced by the engine's instruction stream.
    pub id: i64,
    /// Queue set name (required unless `instance_name` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Queue instance name; takes precedence over `queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_name: Option<String>,
    /// Starts a function's descriptor group for the queue set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_start: Option<String>,
    /// Place on the first queue of the set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_start_desc: Option<bool>,
    /// Event set after completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<i64>,
    /// Semaphore incremented after completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semaphore: Option<i64>,
    /// The other core's semaphores (LNC 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_semaphores: Option<Vec<i64>>,
    /// Priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class: Option<Value>,
    /// Free-form comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The descriptors (a single object is accepted too).
    #[serde(deserialize_with = "one_or_many")]
    pub desc: Vec<DmaDesc>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl DmaBlock {
    /// The queue name the block resolves to (`instance_name` first).
    pub fn queue_name(&self) -> Option<&str> {
        self.instance_name.as_deref().or(self.queue.as_deref())
    }
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<DmaDesc>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<DmaDesc>),
        One(Box<DmaDesc>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::Many(v) => v,
        OneOrMany::One(one) => vec![*one],
    })
}

string_enum! {
    /// What the DMA engine does while moving the data.
    DmaOp {
        /// Plain copy (also the meaning of an absent `op`).
        Copy = "copy",
        /// Fused multiply-add with `scale`.
        Fma = "fma",
        /// dtype conversion.
        Cast = "cast",
        /// Accumulate into the destination.
        Add = "add",
        /// Element-wise minimum with `constant`.
        Min = "min",
        /// Element-wise maximum with `constant`.
        Max = "max",
        /// Transpose per `transpose_shape`.
        Transpose = "transpose",
        /// Older spelling of transpose.
        TransposeOp = "transpose_op",
    }
}

/// One DMA descriptor: a strided read of `from` and a strided write of `to`.
/// Steps are byte strides and sizes element counts (innermost in bytes),
/// innermost first, at most four dimensions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DmaDesc {
    /// Operation (absent means copy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<DmaOp>,
    /// Source var name (absent for collective descriptors using `from_arr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Destination var name (always required by libnrt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// Source byte offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_off: Option<u64>,
    /// Destination byte offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_off: Option<u64>,
    /// Source byte strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_steps: Option<Vec<i64>>,
    /// Destination byte strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_steps: Option<Vec<i64>>,
    /// Source dimension sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_sizes: Option<Vec<u64>>,
    /// Destination dimension sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_sizes: Option<Vec<u64>>,
    /// Shared strides (form without from/to prefixes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<i64>>,
    /// Shared sizes (form without from/to prefixes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<u64>>,
    /// Source element type (default "uint8").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_dtype: Option<String>,
    /// Destination element type (default "uint8").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_dtype: Option<String>,
    /// Element type of collective (CCE) descriptors.
    #[serde(rename = "_dtype", default, skip_serializing_if = "Option::is_none")]
    pub cce_dtype: Option<String>,
    /// Number of tiling dimensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_tiling_dimensions: Option<u32>,
    /// Collective descriptors: up to 16 sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_arr: Option<Vec<DmaSource>>,
    /// fma: scale type ("float32").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_dtype: Option<String>,
    /// fma: scale (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// min/max: constant type ("float32", "int32", "uint32").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant_dtype: Option<String>,
    /// min/max: constant operand (integer or float).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constant: Option<Value>,
    /// Cast settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cast: Option<Value>,
    /// transpose: four-dimensional shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transpose_shape: Option<Vec<u64>>,
    /// transpose: element size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transpose_element_size: Option<u32>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One source of a collective descriptor's `from_arr`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DmaSource {
    /// Source var name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Source byte offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_off: Option<u64>,
    /// Source byte strides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_steps: Option<Vec<i64>>,
    /// Source dimension sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_sizes: Option<Vec<u64>>,
    /// Source element type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_dtype: Option<String>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}
