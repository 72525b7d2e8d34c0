//! Emitting the compiler's member layout, so NEFFs we build are read by the
//! same code path as compiler output: `neff.json` (graph + signature),
//! `kelf-0.json` (subgraph list), `info.json`, and per subgraph `def.json`
//! with `<Engine>.json` / `<Engine>.bin` members named as the compiler
//! names them (PE, Activation, Pool, DVE, SP).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::Result;
use crate::json::Extra;
use crate::json::def::{DefJson, EngineKind};
use crate::json::engine::EngineJson;
use crate::json::graph::{GraphAttrs, GraphMetadata, GraphNode, KELF_FUNC_NAME, NeffGraph, Signature, SignatureTensor};
use crate::json::kelf::{InfoJson, KelfGraph, KelfJson};
use crate::signature::TensorSignature;
use crate::writer::NeffWriter;

/// One engine's files for [`NeffWriter::add_subgraph`].
#[derive(Clone, Debug, PartialEq)]
pub struct EngineFiles {
    /// Which engine.
    pub engine: EngineKind,
    /// Its JSON (`name` and `instr` are filled in when written).
    pub json: EngineJson,
    /// Its instruction stream.
    pub instructions: Vec<u8>,
}

/// The KELF descriptor member our writer emits.
pub const KELF_MEMBER: &str = "kelf-0.json";

/// Builds the neff.json graph for a model with one KELF node consuming
/// every input and producing every output.
pub fn build_graph(inputs: &[TensorSignature], outputs: &[TensorSignature]) -> NeffGraph {
    let n_in = inputs.len() as u64;
    let mut nodes: Vec<GraphNode> = inputs
        .iter()
        .map(|t| GraphNode {
            op: "null".into(),
            name: t.name.clone(),
            inputs: vec![],
            output_names: Some(vec![t.name.clone()]),
            attrs: None,
            extra: Extra::new(),
        })
        .collect();
    let mut attrs = Extra::new();
    attrs.insert("func_name".into(), Value::from(KELF_FUNC_NAME));
    attrs.insert("kelf".into(), Value::from(KELF_MEMBER));
    attrs.insert("num_inputs".into(), Value::from(inputs.len().to_string()));
    attrs.insert("num_outputs".into(), Value::from(outputs.len().to_string()));
    nodes.push(GraphNode {
        op: "tvm_op".into(),
        name: "sg_core".into(),
        inputs: (0..n_in).map(|i| vec![i, 0, 0]).collect(),
        output_names: Some(outputs.iter().map(|t| t.name.clone()).collect()),
        attrs: Some(attrs),
        extra: Extra::new(),
    });
    let all = || inputs.iter().chain(outputs);
    let sig = |ts: &[TensorSignature]| -> BTreeMap<String, SignatureTensor> {
        ts.iter()
            .enumerate()
            .map(|(i, t)| {
                let st = SignatureTensor {
                    id: Some(i as u64),
                    dtype: t.dtype.clone(),
                    shape: t.shape.clone(),
                    extra: Extra::new(),
                };
                (t.name.clone(), st)
            })
            .collect()
    };
    let mut signatures = BTreeMap::new();
    signatures.insert(
        "default".to_string(),
        Signature { inputs: sig(inputs), outputs: sig(outputs), extra: Extra::new() },
    );
    NeffGraph {
        nodes,
        arg_nodes: (0..n_in).collect(),
        heads: (0..outputs.len() as u64).map(|j| vec![n_in, j, 0]).collect(),
        node_row_ptr: (0..=n_in).chain([n_in + outputs.len() as u64]).collect(),
        attrs: GraphAttrs {
            shape: Some(("list_shape".into(), all().map(|t| t.shape.clone()).collect())),
            dltype: Some(("list_str".into(), all().map(|t| t.dtype.clone()).collect())),
            storage_id: Some(("list_int".into(), (0..all().count() as i64).collect())),
            output_names: None,
            extra: Extra::new(),
        },
        metadata: Some(GraphMetadata { signatures, extra: Extra::new() }),
        extra: Extra::new(),
    }
}

impl NeffWriter {
    /// Writes `neff.json`, `kelf-0.json` and `info.json` for a model whose
    /// subgraph definitions live at `<dir>/def.json` for each of
    /// `subgraph_dirs` (in load order), targeting `target` ("*" = any).
    pub fn add_model_manifests(
        &mut self,
        subgraph_dirs: &[&str],
        inputs: &[TensorSignature],
        outputs: &[TensorSignature],
        target: &str,
    ) -> Result<&mut Self> {
        self.add_json("neff.json", &build_graph(inputs, outputs))?;
        let kelf = KelfJson {
            graphs: subgraph_dirs
                .iter()
                .map(|d| KelfGraph { name: d.to_string(), definition: format!("{d}/def.json"), extra: Extra::new() })
                .collect(),
            version: Some("0.5".into()),
            target: Some(target.into()),
            extra: Extra::new(),
        };
        self.add_json(KELF_MEMBER, &kelf)?;
        let h = self.header();
        let info = InfoJson {
            tool_version: Some(concat!("nrt-neff ", env!("CARGO_PKG_VERSION")).into()),
            kelp_version: None,
            name: Some(h.name()),
            num_tpb: Some(u64::from(h.num_tpb)),
            num_tpb_requested: Some(u64::from(h.requested_tpb_count)),
            num_tpb_per_node: Some(h.tpb_per_node.iter().map(|&b| u64::from(b)).collect()),
            extra: Extra::new(),
        };
        self.add_json("info.json", &info)
    }

    /// Writes `<dir>/def.json` plus each engine's `<Stem>.json` and
    /// `<Stem>.bin`, setting the def.json engine keys to those names.
    pub fn add_subgraph(&mut self, dir: &str, def: &DefJson, engines: &[EngineFiles]) -> Result<&mut Self> {
        let mut def = def.clone();
        for e in engines {
            let stem = e.engine.file_stem();
            let (json_name, bin_name) = (format!("{stem}.json"), format!("{stem}.bin"));
            let mut j = e.json.clone();
            j.name = Some(json_name.clone());
            j.instr = Some(bin_name.clone());
            self.add_json(&format!("{dir}/{json_name}"), &j)?;
            self.add_member(&format!("{dir}/{bin_name}"), e.instructions.clone())?;
            def.set_engine_files(e.engine, Some(json_name), Some(bin_name));
        }
        if def.name.is_none() {
            def.name = Some("definition".into());
        }
        if def.version.is_none() {
            def.version = Some("0.6".into());
        }
        self.add_json(&format!("{dir}/def.json"), &def)
    }
}
