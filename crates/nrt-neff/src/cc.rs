//! The collectives a subgraph's def.json declares, read strictly: the
//! NEFF's world size, its collectives streams, its replica group sets and
//! its source/target pair sets (docs/collectives.md, "NEFF encoding").
//!
//! From the spec (collectives spec §9): the keys `#rank_world_size`,
//! `cc_streams` {`num_streams`} (older producers: a top-level
//! `num_streams`), `replica_groups` and `src_target_pairs`; at most 16
//! replica group sets per NEFF and 4 streams. Ours (the schema is not
//! public; this is nccom-test's `--custom-replica-groups` /
//! `--custom-src-target-pairs` shape): `replica_groups` is a list of sets,
//! each set a list of groups of global ranks (a set partitions the ranks
//! that take part); `src_target_pairs` is a list of sets of
//! `[source, target]` global ranks. A collective names a set by index.

use crate::json::def::DefJson;
use serde_json::Value;

/// Most replica group sets (and pair sets) in one subgraph (16 since
/// Neuron 2.32).
pub const MAX_GROUP_SETS: usize = 16;
/// Most collectives streams (`NEC_MAX_STREAM_N`).
pub const MAX_STREAMS: u64 = 4;
/// Largest world a NEFF may name (a bound against absurd input).
pub const MAX_WORLD: u64 = 1 << 16;

/// The def.json key of the NEFF's world size.
pub const WORLD_SIZE_KEY: &str = "#rank_world_size";

/// A subgraph's collectives declarations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CcConfig {
    /// Ranks of the world the NEFF was compiled for (0: no collectives).
    pub world_size: u32,
    /// Collectives streams.
    pub streams: u32,
    /// Replica group sets: set -> groups -> global ranks, in ring order.
    pub replica_groups: Vec<Vec<Vec<u32>>>,
    /// Source/target pair sets: set -> `(source, target)` global ranks.
    pub src_target_pairs: Vec<Vec<(u32, u32)>>,
}

impl CcConfig {
    /// Reads and checks the declarations of `def`; the error names the key
    /// and what was expected.
    pub fn from_def(def: &DefJson) -> Result<CcConfig, String> {
        let world = match def.extra.get(WORLD_SIZE_KEY) {
            None => 0,
            Some(v) => match v.as_u64() {
                Some(w) if w <= MAX_WORLD => w as u32,
                _ => return Err(format!("{WORLD_SIZE_KEY} is {v}: expected an integer 0..={MAX_WORLD}")),
            },
        };
        let nested = def.cc_streams.as_ref().and_then(|c| c.num_streams);
        let streams = match (nested, def.num_streams) {
            (Some(a), Some(b)) if a != b => return Err(format!("cc_streams.num_streams is {a} but num_streams is {b}: expected one value")),
            (a, b) => a.or(b).unwrap_or(0),
        };
        if streams > MAX_STREAMS {
            return Err(format!("cc_streams.num_streams is {streams}: expected at most {MAX_STREAMS}"));
        }
        let rank = |v: &Value, at: &str| -> Result<u32, String> {
            match v.as_u64() {
                Some(r) if r < u64::from(world) => Ok(r as u32),
                _ => Err(format!("{at} is {v}: expected a global rank 0..{world} ({WORLD_SIZE_KEY} {world})")),
            }
        };
        let sets = |key: &str, v: &Option<Value>| -> Result<Vec<Value>, String> {
            let Some(v) = v else { return Ok(Vec::new()) };
            let list = v.as_array().ok_or_else(|| format!("{key} is {}: expected a list of sets", kind(v)))?;
            if list.len() > MAX_GROUP_SETS {
                return Err(format!("{key} has {} sets: expected at most {MAX_GROUP_SETS}", list.len()));
            }
            if !list.is_empty() && world == 0 {
                return Err(format!("{key} is given but {WORLD_SIZE_KEY} is 0: expected the NEFF's world size"));
            }
            Ok(list.clone())
        };
        let mut replica_groups = Vec::new();
        for (s, set) in sets("replica_groups", &def.replica_groups)?.iter().enumerate() {
            let at = format!("replica_groups[{s}]");
            let groups = set.as_array().filter(|g| !g.is_empty()).ok_or_else(|| format!("{at} is {}: expected a non-empty list of groups", kind(set)))?;
            let mut seen = vec![false; world as usize];
            let mut out = Vec::with_capacity(groups.len());
            for (g, group) in groups.iter().enumerate() {
                let at = format!("{at}[{g}]");
                let members = group.as_array().filter(|m| !m.is_empty()).ok_or_else(|| format!("{at} is {}: expected a non-empty list of global ranks", kind(group)))?;
                let mut ranks = Vec::with_capacity(members.len());
                for (i, m) in members.iter().enumerate() {
                    let r = rank(m, &format!("{at}[{i}]"))?;
                    if std::mem::replace(&mut seen[r as usize], true) {
                        return Err(format!("{at}: rank {r} is in this set twice: expected each rank in at most one group of a set"));
                    }
                    ranks.push(r);
                }
                out.push(ranks);
            }
            replica_groups.push(out);
        }
        let mut src_target_pairs = Vec::new();
        for (s, set) in sets("src_target_pairs", &def.src_target_pairs)?.iter().enumerate() {
            let at = format!("src_target_pairs[{s}]");
            let pairs = set.as_array().filter(|p| !p.is_empty()).ok_or_else(|| format!("{at} is {}: expected a non-empty list of [source, target] pairs", kind(set)))?;
            let (mut sends, mut recvs) = (vec![false; world as usize], vec![false; world as usize]);
            let mut out = Vec::with_capacity(pairs.len());
            for (i, p) in pairs.iter().enumerate() {
                let at = format!("{at}[{i}]");
                let pair = p.as_array().filter(|p| p.len() == 2).ok_or_else(|| format!("{at} is {}: expected [source, target]", kind(p)))?;
                let (src, dst) = (rank(&pair[0], &format!("{at}[0]"))?, rank(&pair[1], &format!("{at}[1]"))?);
                if std::mem::replace(&mut sends[src as usize], true) {
                    return Err(format!("{at}: rank {src} sends twice in this set: expected one target per source"));
                }
                if std::mem::replace(&mut recvs[dst as usize], true) {
                    return Err(format!("{at}: rank {dst} receives twice in this set: expected one source per target"));
                }
                out.push((src, dst));
            }
            src_target_pairs.push(out);
        }
        Ok(CcConfig { world_size: world, streams: streams as u32, replica_groups, src_target_pairs })
    }

    /// Whether the subgraph declares any collectives.
    pub fn is_empty(&self) -> bool {
        self.world_size == 0 && self.replica_groups.is_empty() && self.src_target_pairs.is_empty()
    }

    /// The group of set `set` that holds global rank `me`, and `me`'s index
    /// in it. The error is libnrt's "replica groups (set/sets) does not
    /// have myself me".
    pub fn my_group(&self, set: usize, me: u32) -> Result<(&[u32], usize), String> {
        let groups = self.replica_groups.get(set).ok_or_else(|| format!("replica group set {set}: the NEFF declares {} set(s) (replica_groups)", self.replica_groups.len()))?;
        groups
            .iter()
            .find_map(|g| g.iter().position(|&r| r == me).map(|i| (g.as_slice(), i)))
            .ok_or_else(|| format!("replica groups ({set}/{}) does not have myself {me}", self.replica_groups.len()))
    }

    /// The ranks of pair set `set` (sorted) and `me`'s index among them.
    pub fn my_pairs(&self, set: usize, me: u32) -> Result<(Vec<u32>, usize), String> {
        let pairs = self.src_target_pairs.get(set).ok_or_else(|| format!("source/target pair set {set}: the NEFF declares {} set(s) (src_target_pairs)", self.src_target_pairs.len()))?;
        let mut ranks: Vec<u32> = pairs.iter().flat_map(|&(s, t)| [s, t]).collect();
        ranks.sort_unstable();
        ranks.dedup();
        let i = ranks.iter().position(|&r| r == me).ok_or_else(|| format!("source/target pairs ({set}/{}) does not have myself {me}", self.src_target_pairs.len()))?;
        Ok((ranks, i))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(text: &str) -> DefJson {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_full_declaration_reads() {
        let c = CcConfig::from_def(&def(r##"{"var": {}, "#rank_world_size": 4, "cc_streams": {"num_streams": 1}, "replica_groups": [[[0,1,2,3]], [[0,2],[1,3]]], "src_target_pairs": [[[0,1],[1,0]]]}"##)).unwrap();
        assert_eq!((c.world_size, c.streams), (4, 1));
        assert_eq!(c.replica_groups[1], vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(c.src_target_pairs[0], vec![(0, 1), (1, 0)]);
        assert_eq!(c.my_group(1, 3).unwrap(), (&[1u32, 3][..], 1));
        assert_eq!(c.my_pairs(0, 1).unwrap(), (vec![0, 1], 1));
        assert_eq!(c.my_pairs(0, 2).unwrap_err(), "source/target pairs (0/1) does not have myself 2");
        assert!(!c.is_empty());
    }

    #[test]
    fn the_real_compiler_form_without_collectives_is_empty() {
        let c = CcConfig::from_def(&def(r##"{"var": {}, "#rank_world_size": 0, "cc_streams": {"num_streams": 0}}"##)).unwrap();
        assert!(c.is_empty());
    }

    #[test]
    fn myself_missing_is_libnrts_message() {
        let c = CcConfig::from_def(&def(r##"{"var": {}, "#rank_world_size": 4, "replica_groups": [[[0,1]]]}"##)).unwrap();
        assert_eq!(c.my_group(0, 2).unwrap_err(), "replica groups (0/1) does not have myself 2");
        assert!(c.my_group(3, 0).unwrap_err().contains("declares 1 set"));
    }

    #[test]
    fn bad_declarations_name_the_key() {
        let cases = [
            (r##""#rank_world_size": -1"##, "#rank_world_size is -1"),
            (r##""#rank_world_size": 2, "cc_streams": {"num_streams": 5}"##, "at most 4"),
            (r##""#rank_world_size": 2, "cc_streams": {"num_streams": 1}, "num_streams": 2"##, "expected one value"),
            (r##""replica_groups": [[[0,1]]]"##, "#rank_world_size is 0"),
            (r##""#rank_world_size": 2, "replica_groups": {"a": 1}"##, "replica_groups is an object: expected a list of sets"),
            (r##""#rank_world_size": 2, "replica_groups": [[]]"##, "replica_groups[0] is a list: expected a non-empty list of groups"),
            (r##""#rank_world_size": 2, "replica_groups": [[[0, 2]]]"##, "replica_groups[0][0][1] is 2: expected a global rank 0..2"),
            (r##""#rank_world_size": 2, "replica_groups": [[[0], [0, 1]]]"##, "rank 0 is in this set twice"),
            (r##""#rank_world_size": 2, "replica_groups": [[["a"]]]"##, "replica_groups[0][0][0] is \"a\""),
            (r##""#rank_world_size": 2, "src_target_pairs": [[[0, 1, 1]]]"##, "expected [source, target]"),
            (r##""#rank_world_size": 3, "src_target_pairs": [[[0, 1], [2, 1]]]"##, "rank 1 receives twice"),
            (r##""#rank_world_size": 3, "src_target_pairs": [[[0, 1], [0, 2]]]"##, "rank 0 sends twice"),
        ];
        for (body, want) in cases {
            let e = CcConfig::from_def(&def(&format!(r#"{{"var": {{}}, {body}}}"#))).unwrap_err();
            assert!(e.contains(want), "{body}: {e}");
        }
        let many = format!(r##"{{"var": {{}}, "#rank_world_size": 1, "replica_groups": [{}]}}"##, vec!["[[0]]"; 17].join(","));
        assert!(CcConfig::from_def(&def(&many)).unwrap_err().contains("at most 16"));
    }
}
