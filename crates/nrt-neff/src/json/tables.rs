//! Smaller per-subgraph JSON members: `tensor_map.json`, `act_info.json`
//! and the activation-table profile JSONs it points at.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Extra;

/// `tensor_map.json`: compiler tensors by name with layouts and shapes.
pub type TensorMap = BTreeMap<String, TensorMapEntry>;

/// One tensor of `tensor_map.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TensorMapEntry {
    /// numpy-style dtype name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    /// Whether the tensor is a constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_const: Option<bool>,
    /// "input" or "output" for model I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Framework layer name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer_name: Option<String>,
    /// On-device layout, e.g. "NC" or "CRSM".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_format: Option<String>,
    /// On-device shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_shape: Option<Vec<u64>>,
    /// Framework file name of the tensor's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf_file: Option<String>,
    /// Framework layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf_format: Option<String>,
    /// Framework shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf_shape: Option<Vec<u64>>,
    /// Axis a constant is split along (or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_axis: Option<Value>,
    /// Split points (or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_indices_or_sections: Option<Value>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `act_info.json`: the activation function sets the compiler can use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActInfo {
    /// Keys of each set that name files.
    #[serde(default)]
    pub pwp_file_keys: Vec<String>,
    /// The sets.
    #[serde(default)]
    pub act_func_sets: Vec<ActFuncSet>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One activation function set (a loadable ACT table).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActFuncSet {
    /// Set name, as listed in `activation_function_sets`.
    pub name: String,
    /// Bucket table file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bkt_bin: Option<String>,
    /// Control table file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctrl_bin: Option<String>,
    /// Profile JSON file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_json: Option<String>,
    /// Functions in the set with their cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<BTreeMap<String, Value>>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An activation table's profile JSON (e.g. `exp_and_others.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ActProfile {
    /// Bucket table file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bkt_bin: Option<String>,
    /// Control table file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctl_bin: Option<String>,
    /// One record per function (76 bytes each once lowered).
    #[serde(default)]
    pub profile_meta_data: Vec<Extra>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}
