//! `neff.json`: the TVM-style graph wrapping the KELF node, and the model
//! signature (input/output names, dtypes, shapes).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Extra;

/// The node attribute value that marks the KELF node.
pub const KELF_FUNC_NAME: &str = "__kelf";

/// The top-level graph. The five graph keys are required, as in libnrt.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NeffGraph {
    /// Graph nodes: inputs (`op` "null") and the KELF node.
    pub nodes: Vec<GraphNode>,
    /// Indices of the input nodes.
    pub arg_nodes: Vec<u64>,
    /// Graph outputs as `[node_id, output_index, version]`.
    pub heads: Vec<Vec<u64>>,
    /// Node -> first entry id; entry ids index `attrs.shape` / `attrs.dltype`.
    pub node_row_ptr: Vec<u64>,
    /// Per-entry shapes and dtypes.
    pub attrs: GraphAttrs,
    /// Model signatures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<GraphMetadata>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

impl NeffGraph {
    /// The KELF node's `attrs.kelf` (the tier-2 descriptor member), if the
    /// graph has a node whose `attrs.func_name` is `__kelf`.
    pub fn kelf_member(&self) -> Option<&str> {
        self.nodes.iter().find_map(|n| {
            let attrs = n.attrs.as_ref()?;
            (attrs.get("func_name")?.as_str()? == KELF_FUNC_NAME)
                .then(|| attrs.get("kelf")?.as_str())
                .flatten()
        })
    }
}

/// One graph node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// "null" for inputs, "tvm_op" for the KELF node.
    pub op: String,
    /// Node name (the input tensor name for input nodes).
    pub name: String,
    /// Inputs as `[node_id, output_index, version]`.
    #[serde(default)]
    pub inputs: Vec<Vec<u64>>,
    /// Names of the node's outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_names: Option<Vec<String>>,
    /// String attributes (`func_name`, `kelf`, `num_inputs`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attrs: Option<Extra>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Graph-wide attributes; each list is `[type_tag, values]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphAttrs {
    /// `["list_shape", [[dims]...]]`, one shape per entry id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<(String, Vec<Vec<u64>>)>,
    /// `["list_str", [dtype...]]`, one dtype per entry id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dltype: Option<(String, Vec<String>)>,
    /// `["list_int", [id...]]`, storage id per entry id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_id: Option<(String, Vec<i64>)>,
    /// Output names, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_names: Option<Value>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `metadata` of the graph.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphMetadata {
    /// Named signatures; compiler output has one, "default".
    #[serde(default)]
    pub signatures: BTreeMap<String, Signature>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Inputs and outputs of one signature, keyed by tensor name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Signature {
    /// Input tensors.
    #[serde(default)]
    pub inputs: BTreeMap<String, SignatureTensor>,
    /// Output tensors (often empty: then the graph heads say).
    #[serde(default)]
    pub outputs: BTreeMap<String, SignatureTensor>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One tensor of a signature.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SignatureTensor {
    /// Position among the inputs (or outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// numpy-style dtype name.
    pub dtype: String,
    /// Dimensions.
    pub shape: Vec<u64>,
    /// Keys not modelled here.
    #[serde(flatten)]
    pub extra: Extra,
}
