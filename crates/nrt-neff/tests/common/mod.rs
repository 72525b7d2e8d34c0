//! A small but complete model NEFF built with the public writer API.

#![allow(dead_code)]

use nrt_neff::json::engine::DmaBlock;
use nrt_neff::{
    DefJson, EngineFiles, EngineJson, EngineKind, NeffWriter, QueueSet, QueueType, TensorSignature, Var,
    VarType,
};

pub fn sig(name: &str, dtype: &str, shape: &[u64]) -> TensorSignature {
    TensorSignature { name: name.into(), dtype: dtype.into(), shape: shape.to_vec() }
}

pub fn def() -> DefJson {
    let mut d = DefJson::default();
    d.var.insert("SB".into(), Var::new(VarType::StateBuffer, 0, None));
    d.var.insert("a".into(), Var::new(VarType::Input, 1, Some(256)));
    d.var.insert("out".into(), Var::new(VarType::Output, 2, Some(256)));
    let mut q = QueueSet::new(QueueType::Data);
    q.owner = Some("sp".into());
    q.semaphore = Some(3);
    d.dma_queue.insert("qIn".into(), q);
    d
}

pub fn sp_json(dma: &str) -> EngineJson {
    EngineJson { dma: serde_json::from_str::<Vec<DmaBlock>>(dma).unwrap(), ..EngineJson::default() }
}

pub const GOOD_DMA: &str = r#"[{"id":0,"queue":"qIn","semaphore":3,
  "desc":[{"from":"a","to":"SB","from_steps":[1],"from_sizes":[256],"to_steps":[1,65536],"to_sizes":[2,128]}]}]"#;

/// A writer holding a one-subgraph model: input `a` float32 [64], output
/// `out` float32 [64], an SP program with one DMA block and a PE program.
pub fn writer_with(def: &DefJson, sp_dma: &str) -> NeffWriter {
    let mut w = NeffWriter::new();
    w.set_name("unit.neff").unwrap();
    w.add_model_manifests(&["sg00"], &[sig("a", "float32", &[64])], &[sig("out", "float32", &[64])], "*")
        .unwrap();
    w.add_subgraph(
        "sg00",
        def,
        &[
            EngineFiles { engine: EngineKind::Pe, json: EngineJson::default(), instructions: vec![0xA1; 64] },
            EngineFiles { engine: EngineKind::Sp, json: sp_json(sp_dma), instructions: vec![0; 128] },
        ],
    )
    .unwrap();
    w
}

pub fn good_neff() -> Vec<u8> {
    writer_with(&def(), GOOD_DMA).to_bytes().unwrap()
}
