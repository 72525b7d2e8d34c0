//! Fuzz target: every typed JSON model of a NEFF member, read from
//! arbitrary bytes. The first byte picks the model; the rest is the member.
//! A model must either parse or return a typed `NeffError`; whatever
//! parses must serialise and parse back to the same JSON value (the models
//! keep unknown keys, so nothing the compiler wrote is lost on a re-pack).

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_neff::json::{self, def::DefJson, engine::EngineJson, graph::NeffGraph, kelf::InfoJson, kelf::KelfJson};
use serde::{Serialize, de::DeserializeOwned};

fn round_trip<T: DeserializeOwned + Serialize>(path: &str, bytes: &[u8]) {
    let Ok(model) = json::parse_member::<T>(path, bytes) else { return };
    let text = serde_json::to_vec(&model).expect("a parsed model serialises");
    let again: T = json::parse_member(path, &text).expect("a serialised model parses back");
    assert_eq!(
        serde_json::to_value(&model).expect("value"),
        serde_json::to_value(&again).expect("value"),
        "{path}: a model changed across serialise + parse"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else { return };
    match pick % 5 {
        0 => {
            round_trip::<DefJson>("sg00/def.json", body);
            // The strict collectives reading of whatever parses: a value or
            // a message, never a panic.
            if let Ok(def) = json::parse_member::<DefJson>("sg00/def.json", body) {
                if let Ok(cc) = nrt_neff::cc::CcConfig::from_def(&def) {
                    for set in 0..cc.replica_groups.len() {
                        let _ = cc.my_group(set, 0);
                    }
                    for set in 0..cc.src_target_pairs.len() {
                        let _ = cc.my_pairs(set, 0);
                    }
                }
            }
        }
        1 => round_trip::<EngineJson>("sg00/PE.json", body),
        2 => round_trip::<NeffGraph>("neff.json", body),
        3 => round_trip::<KelfJson>("kelf-0.json", body),
        _ => round_trip::<InfoJson>("info.json", body),
    }
});
