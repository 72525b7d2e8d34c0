//! `kelf-N.json` (the subgraph list) and `info.json` (producer summary).

use serde::{Deserialize, Serialize};

use super::Extra;

/// The KELF descriptor: which subgraph definitions make up the model and
/// which hardware generation they target.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KelfJson {
    /// One entry per subgraph, in load order.
    pub graphs: Vec<KelfGraph>,
    /// Descriptor version, "MAJOR.MINOR[-suffix]" (e.g. "0.5").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Target architecture name ("sunda"/"v2", "cayman"/"v3", "mariana"/"v4", "*").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One subgraph of the KELF descriptor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KelfGraph {
    /// Subgraph name, e.g. "sg00".
    pub name: String,
    /// Archive path of its def.json, e.g. "sg00/def.json".
    pub definition: String,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `info.json`: producer version and TPB counts, informational only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct InfoJson {
    /// Compiler version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// KELP flavour (e.g. "Dynamic").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kelp_version: Option<String>,
    /// Model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// TPBs needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_tpb: Option<u64>,
    /// TPBs requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_tpb_requested: Option<u64>,
    /// TPBs per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_tpb_per_node: Option<Vec<u64>>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}
