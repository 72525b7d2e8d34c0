//! Mutated NEFFs must give `Ok` or a typed error, never a panic. Mutations
//! are applied to the decompressed members and re-packed, so they reach the
//! JSON, manifest and DMA layers rather than stopping at the gzip CRC.

mod common;

use nrt_neff::{HashKind, Members, Neff, PayloadFormat, pack_members};
use proptest::prelude::*;

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

fn corpus() -> Vec<(nrt_neff::NeffHeader, Members)> {
    let mut out = Vec::new();
    let built = Neff::parse(&common::good_neff()).unwrap();
    out.push((built.header, built.members));
    match std::fs::read(SAMPLE) {
        Ok(b) => {
            let real = Neff::parse(&b).unwrap();
            out.push((real.header, real.members));
        }
        Err(e) => eprintln!("sample NEFF {SAMPLE} not readable ({e}); mutating the built model only"),
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn mutated_members_never_panic(
        which in any::<prop::sample::Index>(),
        member in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        truncate in any::<Option<prop::sample::Index>>(),
        drop_member in any::<bool>(),
    ) {
        let corpus = corpus();
        let (header, members) = &corpus[which.index(corpus.len())];
        let mut members = members.clone();
        // Prefer JSON members: that is where the structure lives.
        let json: Vec<String> = members.keys().filter(|k| k.ends_with(".json")).cloned().collect();
        let key = json[member.index(json.len())].clone();
        if drop_member {
            members.remove(&key);
        } else {
            let bytes = members.get_mut(&key).unwrap();
            for (at, value) in &edits {
                if !bytes.is_empty() {
                    let i = at.index(bytes.len());
                    bytes[i] = *value;
                }
            }
            if let Some(t) = truncate {
                let n = t.index(bytes.len() + 1);
                bytes.truncate(n);
            }
        }
        let b = pack_members(header, &members, HashKind::Md5, PayloadFormat::Gzip).unwrap();
        let _ = Neff::parse(&b);
    }
}
