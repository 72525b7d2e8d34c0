//! Cross-checks of DMA blocks against their subgraph's def.json: every var
//! and queue named must be declared, and every access pattern must have
//! matching steps/sizes lists of at most four dimensions.

use crate::error::{NeffError, Result};
use crate::json::def::DefJson;
use crate::json::engine::{DmaBlock, DmaDesc};

/// Most dimensions a descriptor access pattern may have (`XPOSE_NUM_DIMS`).
pub const MAX_DMA_DIMS: usize = 4;

/// Checks `blocks` (found in member `path`) against `def`.
pub fn check_dma_blocks(path: &str, blocks: &[DmaBlock], def: &DefJson) -> Result<()> {
    for block in blocks {
        check_queue(path, block, def)?;
        for (i, desc) in block.desc.iter().enumerate() {
            check_desc(path, block.id, i, desc, def)?;
        }
    }
    Ok(())
}

fn check_queue(path: &str, block: &DmaBlock, def: &DefJson) -> Result<()> {
    let Some(name) = block.queue_name() else {
        return Err(NeffError::manifest(
            path,
            format!("DMA block {} has neither `queue` nor `instance_name`; expected one", block.id),
        ));
    };
    let declared = def.dma_queue.contains_key(name)
        || def.dma_queue.values().any(|q| {
            q.queue_instances.as_ref().is_some_and(|inst| inst.iter().any(|n| n == name))
        });
    if declared {
        Ok(())
    } else {
        Err(NeffError::UndeclaredQueue { path: path.to_string(), block: block.id, queue: name.to_string() })
    }
}

fn check_var(path: &str, block: i64, desc: usize, var: Option<&str>, def: &DefJson) -> Result<()> {
    match var {
        Some(v) if !def.var.contains_key(v) => Err(NeffError::UndeclaredVar {
            path: path.to_string(),
            block,
            desc,
            var: v.to_string(),
        }),
        _ => Ok(()),
    }
}

fn check_pattern(
    path: &str,
    block: i64,
    desc: usize,
    side: &'static str,
    steps: Option<&[i64]>,
    sizes: Option<&[u64]>,
) -> Result<()> {
    let (n_steps, n_sizes) = (steps.map_or(0, <[i64]>::len), sizes.map_or(0, <[u64]>::len));
    if steps.is_some() != sizes.is_some() || n_steps != n_sizes {
        return Err(NeffError::StepsSizesMismatch {
            path: path.to_string(),
            block,
            desc,
            side,
            steps: n_steps,
            sizes: n_sizes,
        });
    }
    if n_sizes > MAX_DMA_DIMS {
        return Err(NeffError::TooManyDims { path: path.to_string(), block, desc, side, dims: n_sizes });
    }
    Ok(())
}

fn check_desc(path: &str, block: i64, i: usize, d: &DmaDesc, def: &DefJson) -> Result<()> {
    if d.to.is_none() {
        return Err(NeffError::manifest(
            path,
            format!("DMA block {block} descriptor {i} has no `to`; every descriptor needs a destination var"),
        ));
    }
    check_var(path, block, i, d.from.as_deref(), def)?;
    check_var(path, block, i, d.to.as_deref(), def)?;
    check_pattern(path, block, i, "from", d.from_steps.as_deref(), d.from_sizes.as_deref())?;
    check_pattern(path, block, i, "to", d.to_steps.as_deref(), d.to_sizes.as_deref())?;
    // The prefix-less form is only checked when present.
    if d.steps.is_some() || d.sizes.is_some() {
        check_pattern(path, block, i, "", d.steps.as_deref(), d.sizes.as_deref())?;
    }
    if let Some(sources) = &d.from_arr {
        if sources.len() > 16 {
            return Err(NeffError::manifest(
                path,
                format!("DMA block {block} descriptor {i} has {} from_arr sources, at most 16 are allowed", sources.len()),
            ));
        }
        for s in sources {
            check_var(path, block, i, s.from.as_deref(), def)?;
            check_pattern(path, block, i, "from_arr", s.from_steps.as_deref(), s.from_sizes.as_deref())?;
        }
    }
    if let Some(shape) = &d.transpose_shape
        && shape.len() != MAX_DMA_DIMS
    {
        return Err(NeffError::manifest(
            path,
            format!("DMA block {block} descriptor {i} transpose_shape has {} entries, expected 4", shape.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::def::{QueueSet, QueueType, Var, VarType};

    fn def() -> DefJson {
        let mut d = DefJson::default();
        d.var.insert("a".into(), Var::new(VarType::Input, 0, Some(64)));
        d.var.insert("b".into(), Var::new(VarType::Output, 1, Some(64)));
        let mut q = QueueSet::new(QueueType::Data);
        q.queue_instances = Some(vec!["qdata_i0".into()]);
        d.dma_queue.insert("qdata".into(), q);
        d
    }

    fn block(json: &str) -> Vec<DmaBlock> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn good_block_passes() {
        let b = block(r#"[{"id":1,"queue":"qdata","desc":[{"from":"a","to":"b","from_steps":[1,64],"from_sizes":[64,1],"to_steps":[1],"to_sizes":[64]}]},
                          {"id":2,"instance_name":"qdata_i0","desc":{"from":"a","to":"b"}}]"#);
        check_dma_blocks("PE.json", &b, &def()).unwrap();
    }

    #[test]
    fn undeclared_var() {
        let b = block(r#"[{"id":3,"queue":"qdata","desc":[{"from":"nope","to":"b"}]}]"#);
        assert!(matches!(
            check_dma_blocks("PE.json", &b, &def()),
            Err(NeffError::UndeclaredVar { block: 3, desc: 0, ref var, .. }) if var == "nope"
        ));
    }

    #[test]
    fn undeclared_queue() {
        let b = block(r#"[{"id":4,"queue":"qmissing","desc":[{"from":"a","to":"b"}]}]"#);
        assert!(matches!(
            check_dma_blocks("PE.json", &b, &def()),
            Err(NeffError::UndeclaredQueue { block: 4, ref queue, .. }) if queue == "qmissing"
        ));
    }

    #[test]
    fn steps_sizes_mismatch() {
        let b = block(r#"[{"id":5,"queue":"qdata","desc":[{"from":"a","to":"b","to_steps":[1,2],"to_sizes":[4]}]}]"#);
        assert!(matches!(
            check_dma_blocks("PE.json", &b, &def()),
            Err(NeffError::StepsSizesMismatch { side: "to", steps: 2, sizes: 1, .. })
        ));
        let b = block(r#"[{"id":5,"queue":"qdata","desc":[{"from":"a","to":"b","from_steps":[1]}]}]"#);
        assert!(matches!(
            check_dma_blocks("PE.json", &b, &def()),
            Err(NeffError::StepsSizesMismatch { side: "from", steps: 1, sizes: 0, .. })
        ));
    }

    #[test]
    fn more_than_four_dims() {
        let b = block(r#"[{"id":6,"queue":"qdata","desc":[{"from":"a","to":"b","from_steps":[1,1,1,1,1],"from_sizes":[1,1,1,1,1]}]}]"#);
        assert!(matches!(
            check_dma_blocks("PE.json", &b, &def()),
            Err(NeffError::TooManyDims { side: "from", dims: 5, .. })
        ));
    }

    #[test]
    fn missing_destination() {
        let b = block(r#"[{"id":7,"queue":"qdata","desc":[{"from":"a"}]}]"#);
        assert!(matches!(check_dma_blocks("PE.json", &b, &def()), Err(NeffError::Manifest { .. })));
    }
}
