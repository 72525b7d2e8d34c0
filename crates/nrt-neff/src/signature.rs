//! The model's input and output tensors (name, dtype, shape): what
//! `nrt_get_model_tensor_info` reports and what tensor sets are keyed by.

use serde::{Deserialize, Serialize};

use crate::error::{NeffError, Result};
use crate::json::def::{DefJson, VarType};
use crate::json::graph::{NeffGraph, Signature};

/// One model input or output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorSignature {
    /// Tensor name (the key callers use in tensor sets).
    pub name: String,
    /// numpy-style dtype name, e.g. "float16".
    pub dtype: String,
    /// Dimensions.
    pub shape: Vec<u64>,
}

impl TensorSignature {
    /// Size in bytes (elements x dtype size, from the element-type table
    /// `nrt_isa::dtype::ELEMENT_TYPES`); `None` for a dtype no layer knows
    /// or on overflow.
    pub fn size_bytes(&self) -> Option<u64> {
        let elem = nrt_isa::dtype::element_type(&self.dtype)?.size as u64;
        self.shape.iter().try_fold(elem, |acc, &d| acc.checked_mul(d))
    }
}

/// Inputs and outputs from neff.json: the signature when it lists them,
/// else the graph's arg nodes and heads with the per-entry attrs.
pub(crate) fn io_from_graph(
    path: &str,
    g: &NeffGraph,
) -> Result<(Vec<TensorSignature>, Vec<TensorSignature>)> {
    let sig: Option<&Signature> = g
        .metadata
        .as_ref()
        .and_then(|m| m.signatures.get("default").or_else(|| m.signatures.values().next()));
    let inputs = match sig.filter(|s| !s.inputs.is_empty()) {
        Some(s) => from_signature(&s.inputs),
        None => {
            let entries: Vec<(u64, usize)> = g.arg_nodes.iter().map(|&n| (n, 0)).collect();
            from_entries(path, g, &entries)?
        }
    };
    let outputs = match sig.filter(|s| !s.outputs.is_empty()) {
        Some(s) => from_signature(&s.outputs),
        None => {
            let entries = g
                .heads
                .iter()
                .map(|h| match h.as_slice() {
                    [node, idx, ..] => Ok((*node, *idx as usize)),
                    [node] => Ok((*node, 0)),
                    [] => Err(NeffError::manifest(path, "empty entry in `heads`, expected [node_id, index, version]")),
                })
                .collect::<Result<Vec<_>>>()?;
            from_entries(path, g, &entries)?
        }
    };
    Ok((inputs, outputs))
}

fn from_signature(
    map: &std::collections::BTreeMap<String, crate::json::graph::SignatureTensor>,
) -> Vec<TensorSignature> {
    let mut v: Vec<_> = map.iter().collect();
    v.sort_by(|a, b| (a.1.id.is_none(), a.1.id, a.0).cmp(&(b.1.id.is_none(), b.1.id, b.0)));
    v.into_iter()
        .map(|(name, t)| TensorSignature { name: name.clone(), dtype: t.dtype.clone(), shape: t.shape.clone() })
        .collect()
}

/// Resolves `(node_id, output_index)` pairs through `node_row_ptr` into the
/// attrs lists; repeated names (one per LNC core) are reported once.
fn from_entries(path: &str, g: &NeffGraph, entries: &[(u64, usize)]) -> Result<Vec<TensorSignature>> {
    let (Some((_, dtypes)), Some((_, shapes))) = (&g.attrs.dltype, &g.attrs.shape) else {
        return Err(NeffError::manifest(path, "attrs lacks `dltype` or `shape`; both are required"));
    };
    let mut out: Vec<TensorSignature> = Vec::new();
    for &(node_id, idx) in entries {
        let node = g.nodes.get(node_id as usize).ok_or_else(|| {
            NeffError::manifest(path, format!("node id {node_id} out of bounds, graph has {} nodes", g.nodes.len()))
        })?;
        let base = *g.node_row_ptr.get(node_id as usize).ok_or_else(|| {
            NeffError::manifest(path, format!("node_row_ptr has no entry for node {node_id}"))
        })?;
        let eid = (base as usize).saturating_add(idx);
        let (Some(dtype), Some(shape)) = (dtypes.get(eid), shapes.get(eid)) else {
            return Err(NeffError::manifest(
                path,
                format!("entry id {eid} out of bounds for dltype ({}) / shape ({})", dtypes.len(), shapes.len()),
            ));
        };
        let name = node
            .output_names
            .as_ref()
            .and_then(|n| n.get(idx))
            .cloned()
            .unwrap_or_else(|| node.name.clone());
        if !out.iter().any(|t| t.name == name) {
            out.push(TensorSignature { name, dtype: dtype.clone(), shape: shape.clone() });
        }
    }
    Ok(out)
}

/// Fallback without neff.json: `input` / `output` vars in var_id order,
/// typed by their `dtype`/`shape` keys, else as `uint8` bytes of `size`.
pub(crate) fn io_from_defs(def: &DefJson) -> (Vec<TensorSignature>, Vec<TensorSignature>) {
    let collect = |ty: VarType| {
        def.vars_of_type(&ty)
            .into_iter()
            .map(|(name, v)| match (&v.dtype, &v.shape) {
                (Some(d), Some(s)) => TensorSignature { name: name.to_string(), dtype: d.clone(), shape: s.clone() },
                _ => TensorSignature {
                    name: name.to_string(),
                    dtype: "uint8".to_string(),
                    shape: vec![v.size.unwrap_or(0)],
                },
            })
            .collect()
    };
    (collect(VarType::Input), collect(VarType::Output))
}
