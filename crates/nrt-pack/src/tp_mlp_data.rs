//! The tensor-parallel mlp example (`examples/tp-mlp`): its shape and its
//! constants (the whole mlp's from `example_data`, sharded per rank by
//! `nrt_gen::tp_mlp`), which the rank trees are packed with and `nrt gen
//! tp-mlp` writes.

use crate::example_data::{TP_D, TP_H, TP_M, TP_RANKS, tp_mlp_constants};
use anyhow::{Context, Result, anyhow, bail};
use nrt_gen::tp_mlp::{MlpWeights, TpMlpSpec, tp_mlp_constants as shard_members};
use std::path::{Path, PathBuf};

/// The example's shape split over `ranks`.
pub fn spec(ranks: usize) -> TpMlpSpec {
    TpMlpSpec { m: TP_M, d: TP_D, h: TP_H, ranks }
}

/// The example's whole-mlp constants.
pub fn weights() -> MlpWeights {
    let [w1, b1, w2, b2] = tp_mlp_constants();
    MlpWeights { w1, b1, w2, b2 }
}

/// The directory of rank `rank` under a rank-set directory.
pub fn rank_dir(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank{rank}"))
}

/// The rank of `dir` if it is one of the example's rank trees
/// (`.../tp-mlp/rankR`), whose constants are generated.
fn example_rank(dir: &Path) -> Option<usize> {
    let parent = dir.parent()?.file_name()?.to_str()?;
    let rank: usize = dir.file_name()?.to_str()?.strip_prefix("rank")?.parse().ok()?;
    (parent == "tp-mlp" && rank < TP_RANKS).then_some(rank)
}

/// Constant members: (archive path, bytes).
pub type Members = Vec<(String, Vec<u8>)>;

/// The constant members of `dir` if it is one of the example's rank trees.
pub fn constants_for(dir: &Path) -> Option<Result<Members>> {
    let rank = example_rank(dir)?;
    Some(shard_members(&spec(TP_RANKS), &weights(), rank).map_err(|e| anyhow!("tp-mlp rank {rank}: {e}")))
}

/// Writes the generated constants of the example's rank trees under
/// `examples/tp-mlp` (skipping files holding the same bytes); the paths
/// written. Nothing when the examples directory has no `tp-mlp` (a copy
/// of some examples only), as for custom_ops.
pub fn write_constants(examples: &Path) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if !examples.join("tp-mlp").is_dir() {
        return Ok(written);
    }
    for rank in 0..TP_RANKS {
        let dir = rank_dir(&examples.join("tp-mlp"), rank);
        if !dir.join("sg00/def.json").is_file() {
            bail!("{} is not an example source tree (no sg00/def.json)", dir.display());
        }
        for (member, bytes) in shard_members(&spec(TP_RANKS), &weights(), rank).map_err(|e| anyhow!("{e}"))? {
            let path = dir.join(member);
            if std::fs::read(&path).is_ok_and(|old| old == bytes) {
                continue;
            }
            std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}
