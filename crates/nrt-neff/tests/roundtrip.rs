//! Writer/reader round trips, byte stability and the reader's fallbacks.

mod common;

use common::*;
use nrt_neff::{EngineKind, HashKind, Neff, NeffWriter, PayloadFormat, ReadOptions, Var, VarType};
use proptest::prelude::*;

fn verify() -> ReadOptions {
    ReadOptions { verify_hash: true, ..ReadOptions::default() }
}

#[test]
fn written_model_reads_back_through_the_compiler_layout() {
    let b = good_neff();
    let n = Neff::parse_with(&b, &verify()).unwrap();
    assert_eq!(n.kelf_path.as_deref(), Some("kelf-0.json"));
    assert_eq!(n.inputs(), [sig("a", "float32", &[64])]);
    assert_eq!(n.outputs(), [sig("out", "float32", &[64])]);
    let sg = &n.subgraphs[0];
    assert_eq!(sg.def.pe.as_deref(), Some("PE.json"));
    assert_eq!(sg.def.sp_instr.as_deref(), Some("SP.bin"));
    let sp = sg.engine(EngineKind::Sp).unwrap();
    assert_eq!(sp.instruction_count(), 2);
    assert_eq!(sp.descriptor_count(), 1);
    assert!(sg.engine(EngineKind::Act).is_none());
    assert_eq!(n.info.as_ref().unwrap().name.as_deref(), Some("unit.neff"));
}

#[test]
fn output_is_byte_stable() {
    assert_eq!(good_neff(), good_neff());
    let sha = writer_with(&def(), GOOD_DMA).set_hash_kind(HashKind::Sha256).to_bytes().unwrap();
    assert_eq!(sha, writer_with(&def(), GOOD_DMA).set_hash_kind(HashKind::Sha256).to_bytes().unwrap());
    // The gzip header carries no mtime or name: bytes 4..8 are zero, flags 0.
    let b = good_neff();
    assert_eq!(&b[1024..1028], &[0x1f, 0x8b, 8, 0]);
    assert_eq!(&b[1028..1032], &[0, 0, 0, 0]);
}

#[test]
fn without_kelf_subgraphs_are_discovered() {
    let mut w = writer_with(&def(), GOOD_DMA);
    let mut members = w.members().clone();
    members.remove("kelf-0.json");
    members.remove("neff.json");
    // A second subgraph, found by its directory name.
    for (p, bytes) in w.members().clone() {
        if let Some(rest) = p.strip_prefix("sg00/") {
            members.insert(format!("sg01/{rest}"), bytes);
        }
    }
    let b = nrt_neff::pack_members(w.header_mut(), &members, HashKind::Md5, PayloadFormat::Gzip).unwrap();
    let n = Neff::parse(&b).unwrap();
    let names: Vec<_> = n.subgraphs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["sg00", "sg01"]);
    // Without neff.json the I/O comes from the def.json vars.
    assert_eq!(n.inputs(), [sig("a", "uint8", &[256])]);
    assert_eq!(n.outputs(), [sig("out", "uint8", &[256])]);
}

#[test]
fn var_dtype_and_shape_feed_the_fallback() {
    let mut d = def();
    let mut v = Var::new(VarType::Input, 1, Some(256));
    v.dtype = Some("float16".into());
    v.shape = Some(vec![8, 16]);
    d.var.insert("a".into(), v);
    let mut w = writer_with(&d, GOOD_DMA);
    let mut members = w.members().clone();
    members.remove("neff.json");
    let b = nrt_neff::pack_members(w.header_mut(), &members, HashKind::Md5, PayloadFormat::Gzip).unwrap();
    assert_eq!(Neff::parse(&b).unwrap().inputs(), [sig("a", "float16", &[8, 16])]);
}

#[test]
fn graph_heads_give_outputs_when_signature_lists_none() {
    let mut w = writer_with(&def(), GOOD_DMA);
    let mut g: serde_json::Value = serde_json::from_slice(&w.members()["neff.json"]).unwrap();
    g["metadata"]["signatures"]["default"]["outputs"] = serde_json::json!({});
    g["metadata"]["signatures"]["default"]["inputs"] = serde_json::json!({});
    w.add_json("neff.json", &g).unwrap();
    let n = Neff::parse(&w.to_bytes().unwrap()).unwrap();
    assert_eq!(n.inputs(), [sig("a", "float32", &[64])]);
    assert_eq!(n.outputs(), [sig("out", "float32", &[64])]);
}

#[test]
fn unknown_json_keys_survive_typed_round_trip() {
    let text = r#"{"var":{"v":{"type":"tmp-buf","var_id":0,"size":8,"mystery":[1,2]}},"new_key":{"a":1}}"#;
    let d: nrt_neff::DefJson = serde_json::from_str(text).unwrap();
    assert_eq!(d.var["v"].extra["mystery"], serde_json::json!([1, 2]));
    let back: serde_json::Value = serde_json::to_value(&d).unwrap();
    assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap());
}

fn member_path() -> impl Strategy<Value = String> {
    "(misc|data)/[a-z0-9_]{1,10}\\.(bin|npy|txt)"
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Generated NEFFs (random header fields, extra members, digest kind)
    /// read back with the same header fields, members and I/O.
    #[test]
    fn write_read_round_trip(
        name in "[a-zA-Z0-9_.-]{0,60}",
        uuid in any::<[u8; 16]>(),
        lnc in 1u32..3,
        feature_bits in 0u64..(1 << 27),
        minor in 0u64..10,
        sha in any::<bool>(),
        extra in proptest::collection::btree_map(member_path(), proptest::collection::vec(any::<u8>(), 0..300), 0..5),
        n_in in 1usize..4,
    ) {
        let inputs: Vec<_> = (0..n_in).map(|i| sig(&format!("in{i}"), "float16", &[i as u64 + 1, 4])).collect();
        let outputs = vec![sig("output0", "bfloat16", &[2, 2])];
        let mut w = NeffWriter::new();
        w.set_name(&name).unwrap().set_uuid(uuid).set_lnc_size(lnc).set_feature_bits(feature_bits);
        w.header_mut().neff_version_minor = minor;
        w.set_hash_kind(if sha { HashKind::Sha256 } else { HashKind::Md5 });
        w.add_model_manifests(&["sg00"], &inputs, &outputs, "*").unwrap();
        w.add_subgraph("sg00", &def(), &[]).unwrap();
        for (p, d) in &extra {
            w.add_member(p, d.clone()).unwrap();
        }
        let bytes = w.to_bytes().unwrap();
        prop_assert_eq!(&bytes, &w.to_bytes().unwrap());
        let n = Neff::parse_with(&bytes, &verify()).unwrap();
        prop_assert_eq!(n.header.name(), name);
        prop_assert_eq!(n.header.uuid, uuid);
        prop_assert_eq!(n.header.lnc_size, lnc);
        prop_assert_eq!(n.header.feature_bits, feature_bits);
        prop_assert_eq!(n.header.neff_version_minor, minor);
        prop_assert_eq!(n.header.pkg_version, if sha { 1 } else { 2 });
        prop_assert_eq!(&n.members, w.members());
        prop_assert_eq!(n.inputs(), &inputs[..]);
        prop_assert_eq!(n.outputs(), &outputs[..]);
        // Re-packing the parsed NEFF reproduces the bytes exactly.
        let kind = if sha { HashKind::Sha256 } else { HashKind::Md5 };
        prop_assert_eq!(n.to_bytes(kind).unwrap(), bytes);
    }

    /// Arbitrary bytes behind a valid header never panic the reader.
    #[test]
    fn garbage_payload_never_panics(payload in proptest::collection::vec(any::<u8>(), 0..4096), gz in any::<bool>()) {
        let mut p = payload;
        if gz && p.len() >= 2 { p[0] = 0x1f; p[1] = 0x8b; }
        let header = nrt_neff::NeffHeader { data_size: p.len() as u64, ..Default::default() };
        let mut b = header.to_bytes().to_vec();
        b.extend_from_slice(&p);
        let _ = Neff::parse(&b);
    }
}

#[test]
fn dma_blocks_are_listed_with_their_engine() {
    let n = Neff::parse(&good_neff()).unwrap();
    let blocks: Vec<_> = n.subgraphs[0].dma_blocks().map(|(e, p, b)| (e, p.to_string(), b.id)).collect();
    assert_eq!(blocks, [(Some(EngineKind::Sp), "sg00/SP.json".to_string(), 0)]);
    let d = &n.subgraphs[0].dma_blocks().next().unwrap().2.desc[0];
    assert_eq!(d.to_sizes.as_deref(), Some(&[2, 128][..]));
    assert_eq!(d.op, None);
}

/// Found by the `neff_json` fuzz target: a long decimal was parsed one ulp
/// off, so a member's number changed when written and read again (serde
/// JSON's fast float parser; the workspace now asks it for correctly
/// rounded parsing).
#[test]
fn long_decimal_numbers_survive_a_write_and_read() {
    use nrt_neff::json::{self, kelf::InfoJson};
    let digits = "6".repeat(122);
    let text = format!("{{\"\": [{digits}]}}");
    let info: InfoJson = json::parse_member("info.json", text.as_bytes()).unwrap();
    let again: InfoJson = json::parse_member("info.json", &serde_json::to_vec(&info).unwrap()).unwrap();
    assert_eq!(serde_json::to_value(&info).unwrap(), serde_json::to_value(&again).unwrap());
}
