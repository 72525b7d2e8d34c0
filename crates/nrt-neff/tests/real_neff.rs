//! Reads the compiler-produced sample NEFF from ../shared (never copied into
//! the repository) and checks everything the runtime will rely on.

use nrt_neff::{
    EngineKind, HashKind, Neff, NeffError, PackOptions, QueueType, ReadOptions, VarType, pack_dir,
    unpack_to_dir,
};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

/// The compiler's sample NEFF; `None` (the calling test reported
/// skipped) when it cannot be read.
fn sample() -> Option<Vec<u8>> {
    match std::fs::read(SAMPLE) {
        Ok(b) => Some(b),
        Err(e) => nrt_test_support::skip!(return None; "the sample NEFF {SAMPLE} cannot be read ({e}; it lives beside the checkout)"),
    }
}

#[test]
fn header_fields() {
    let Some(bytes) = sample() else { return };
    let neff = Neff::parse(&bytes).unwrap();
    let h = &neff.header;
    assert_eq!(h.pkg_version, 2);
    assert_eq!(h.header_size, 1024);
    assert_eq!(h.data_size as usize, bytes.len() - 1024);
    assert_eq!((h.neff_version_major, h.neff_version_minor), (2, 0));
    assert_eq!(h.build_version(), "");
    assert_eq!(h.num_tpb, 1);
    assert_eq!(h.name(), "file.neff");
    assert_eq!(h.requested_tpb_count, 1);
    assert_eq!(h.tpb_per_node[0], 1);
    assert_eq!(h.feature_bits, 0x209c00);
    assert_eq!(h.lnc_size, 2);
    assert!(h.hash[..16].iter().any(|&b| b != 0));
    assert!(h.hash[16..].iter().all(|&b| b == 0));
    // Exact header round trip.
    assert_eq!(&h.to_bytes()[..], &bytes[..1024]);
    assert_eq!(neff.payload_format, nrt_neff::PayloadFormat::Gzip);
}

#[test]
fn subgraphs_vars_and_queues() {
    let Some(bytes) = sample() else { return };
    let neff = Neff::parse(&bytes).unwrap();
    assert_eq!(neff.kelf_path.as_deref(), Some("kelf-0.json"));
    assert_eq!(neff.kelf.as_ref().unwrap().target.as_deref(), Some("cayman"));
    assert_eq!(neff.info.as_ref().unwrap().name.as_deref(), Some("file.neff"));
    let names: Vec<_> = neff.subgraphs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["sg00", "sg01"]);
    for sg in &neff.subgraphs {
        let def = &sg.def;
        let mut vars: Vec<_> = def.var.iter().map(|(n, v)| (v.var_id, n.as_str(), v.ty.clone())).collect();
        vars.sort_by_key(|v| v.0);
        assert_eq!(
            vars,
            [
                (0, "SB", VarType::StateBuffer),
                (1, "x", VarType::Input),
                (2, "y", VarType::Input),
                (3, "output0", VarType::Output),
                (4, "identity_82_sg0000", VarType::File),
                (5, "DGETable0", VarType::DgeTable),
            ]
        );
        assert_eq!(def.var["x"].size, Some(65536));
        assert_eq!(def.var["DGETable0"].list.as_deref(), Some(&[1, 2, 3][..]));
        let q = &def.dma_queue["qSPDynamicHW"];
        assert_eq!(q.ty, QueueType::Dynamic);
        assert_eq!(q.queue_count(), 16);
        assert_eq!(q.owner.as_deref(), Some("sp"));
        assert_eq!(q.semaphore_set.as_deref().unwrap(), (8..24).collect::<Vec<u32>>());
        let pool = &def.dma_queue["qPoolDynamic"];
        assert_eq!(pool.dynamic_dma.as_ref().unwrap().sb_scratch_partition_size, Some(16384));
        assert_eq!(def.runtime_statebuffer_reservation[0].ty, "evtaccel");
        assert_eq!(def.runtime_statebuffer_reservation[0].partitions, 128);
        assert_eq!(def.neff_features, ["neff_feature_vnc"]);
        assert_eq!(def.fp8_conversion_config.as_ref().unwrap().emax_fp8_e5m2, Some(15));
        assert_eq!(def.cc_streams.as_ref().unwrap().num_streams, Some(0));
        assert!(def.extra.contains_key("#rank_world_size"), "unknown keys are kept");
        // The compiler's "no collectives" form reads as no collectives.
        let cc = nrt_neff::cc::CcConfig::from_def(def).unwrap();
        assert!(cc.is_empty() && cc.streams == 0, "{cc:?}");

        // Every engine has a program whose stream is whole 64-byte slots.
        assert_eq!(sg.engines.len(), 5);
        for e in EngineKind::ALL {
            let p = sg.engine(e).unwrap();
            assert!(!p.instructions.is_empty());
            assert_eq!(p.instructions.len() % 64, 0);
            assert!(p.instructions.chunks(64).all(|slot| slot[1] == 0x10));
            assert_eq!(p.instr_path.as_deref(), Some(&*sg.member_path(&format!("{}.bin", e.file_stem()))));
        }
        let act = sg.engine(EngineKind::Act).unwrap().json.as_ref().unwrap();
        assert_eq!(act.activation_function_sets.as_deref(), Some(&["exp_and_others".to_string()][..]));
        let dve = sg.engine(EngineKind::Dve).unwrap().json.as_ref().unwrap();
        let tables: Vec<_> = dve.dve_tables.as_ref().unwrap()[0].files().collect();
        assert_eq!(tables.len(), 4);
        for t in tables {
            assert!(neff.member(&sg.member_path(t)).is_some(), "{t} present");
        }

        let c = neff.constant(sg, "identity_82_sg0000").unwrap();
        match c {
            nrt_neff::Constant::Npy { header, data } => {
                assert_eq!(header.descr, "<f2");
                assert_eq!(header.shape, [128, 128, 1, 1]);
                assert_eq!(data.len(), 32768);
            }
            other => panic!("expected npy, got {other:?}"),
        }
    }
    let tm: nrt_neff::json::tables::TensorMap =
        nrt_neff::json::parse_member("sg00/tensor_map.json", neff.member("sg00/tensor_map.json").unwrap()).unwrap();
    assert_eq!(tm["x"].kind.as_deref(), Some("input"));
    let ai: nrt_neff::json::tables::ActInfo =
        nrt_neff::json::parse_member("sg00/act_info.json", neff.member("sg00/act_info.json").unwrap()).unwrap();
    assert_eq!(ai.act_func_sets[0].name, "exp_and_others");
    let prof: nrt_neff::json::tables::ActProfile = nrt_neff::json::parse_member(
        "sg00/exp_and_others.json",
        neff.member("sg00/exp_and_others.json").unwrap(),
    )
    .unwrap();
    assert!(!prof.profile_meta_data.is_empty());
}

#[test]
fn inputs_and_outputs() {
    let Some(bytes) = sample() else { return };
    let neff = Neff::parse(&bytes).unwrap();
    let ins: Vec<_> = neff.inputs().iter().map(|t| (t.name.as_str(), t.dtype.as_str(), t.shape.clone())).collect();
    assert_eq!(ins, [("x", "float16", vec![128, 256]), ("y", "float16", vec![256, 128])]);
    let outs: Vec<_> = neff.outputs().iter().map(|t| (t.name.as_str(), t.dtype.as_str(), t.shape.clone())).collect();
    assert_eq!(outs, [("output0", "float16", vec![128, 128])]);
    assert_eq!(neff.outputs()[0].size_bytes(), Some(32768));
}

#[test]
fn sample_hash_is_not_payload_md5() {
    // The sample's producer hashed something else (see data/neff/README.md):
    // verification must say so with both digests, not crash.
    let Some(bytes) = sample() else { return };
    let opts = ReadOptions { verify_hash: true, ..ReadOptions::default() };
    match Neff::parse_with(&bytes, &opts) {
        Err(NeffError::HashMismatch { kind: HashKind::Md5, expected, found }) => {
            assert_eq!(expected.len(), 32);
            assert_ne!(expected, found);
        }
        other => panic!("expected HashMismatch, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn unpack_then_pack_reproduces_every_member() {
    let Some(bytes) = sample() else { return };
    let original = Neff::parse(&bytes).unwrap();
    let dir = std::env::temp_dir().join(format!("nrt-neff-unpack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    unpack_to_dir(&bytes, &dir, &ReadOptions::default()).unwrap();
    assert!(dir.join("sg01/PE.bin").is_file());
    let packed = pack_dir(&dir, &PackOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let again = Neff::parse_with(&packed, &ReadOptions { verify_hash: true, ..Default::default() }).unwrap();
    assert_eq!(again.members, original.members);
    let (mut a, mut b) = (again.header.clone(), original.header.clone());
    (a.data_size, a.hash, b.data_size, b.hash) = (0, [0; 32], 0, [0; 32]);
    assert_eq!(a, b, "every header field but data_size/hash survives");
    assert_eq!(again.inputs(), original.inputs());
    // Packing twice gives the same bytes.
    assert_eq!(again.to_bytes(HashKind::Md5).unwrap(), packed);
}

#[test]
fn repack_with_sha256_is_plain_tar_and_verifies() {
    let Some(bytes) = sample() else { return };
    let neff = Neff::parse(&bytes).unwrap();
    let out = neff.to_bytes(HashKind::Sha256).unwrap();
    assert_eq!(&out[..8], &1u64.to_le_bytes());
    assert_ne!(&out[1024..1026], &[0x1f, 0x8b]);
    let back = Neff::parse_with(&out, &ReadOptions { verify_hash: true, ..Default::default() }).unwrap();
    assert_eq!(back.members, neff.members);
    assert_eq!(back.payload_format, nrt_neff::PayloadFormat::PlainTar);
}

#[test]
fn summary_json_names_documented_fields() {
    let Some(bytes) = sample() else { return };
    let s = serde_json::to_value(Neff::parse(&bytes).unwrap().summary()).unwrap();
    let h = &s["header"];
    for key in [
        "pkg_version", "header_size", "data_size", "neff_version_major", "neff_version_minor",
        "neff_build_version", "num_tpb", "hash", "uuid", "name", "requested_tpb_count", "tpb_per_node",
        "feature_bits", "lnc_size",
    ] {
        assert!(h.get(key).is_some(), "header key {key}");
    }
    assert_eq!(h["uuid"], "00a04c535fd94f07bffdd5eacdefc852");
    assert_eq!(h["feature_bits"], 0x209c00);
    assert_eq!(s["subgraphs"].as_array().unwrap().len(), 2);
    let sg0 = &s["subgraphs"][0];
    assert_eq!(sg0["vars"].as_array().unwrap().len(), 6);
    assert_eq!(sg0["queue_sets"][0]["name"], "qPoolDynamic");
    assert_eq!(sg0["queue_sets"][0]["semaphores"].as_array().unwrap().len(), 16);
    assert_eq!(sg0["engines"][0]["engine"], "pe");
    assert_eq!(sg0["engines"][0]["instructions"], 12);
    assert_eq!(s["inputs"][1]["shape"], serde_json::json!([256, 128]));
    assert_eq!(s["outputs"][0]["name"], "output0");
}
