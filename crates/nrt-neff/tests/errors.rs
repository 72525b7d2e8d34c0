//! One test per reader error, each asserting the specific variant, driven
//! through the public `Neff::parse*` entry points.

mod common;

use common::*;
use nrt_neff::{HashKind, Neff, NeffError, NeffWriter, PayloadFormat, ReadLimits, ReadOptions};

fn set_u64(bytes: &mut [u8], off: usize, v: u64) {
    bytes[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn good_model_reads() {
    let n = Neff::parse(&good_neff()).unwrap();
    assert_eq!(n.subgraphs.len(), 1);
    assert_eq!(n.inputs()[0].name, "a");
    assert_eq!(n.outputs()[0].name, "out");
}

#[test]
fn truncated_header() {
    let b = good_neff();
    assert!(matches!(Neff::parse(&b[..1000]), Err(NeffError::TruncatedHeader { len: 1000 })));
}

#[test]
fn header_size_not_1024() {
    let mut b = good_neff();
    set_u64(&mut b, 8, 1000);
    assert!(matches!(Neff::parse(&b), Err(NeffError::BadHeaderSize { found: 1000 })));
}

#[test]
fn data_size_mismatch() {
    let mut b = good_neff();
    b.truncate(b.len() - 1);
    assert!(matches!(Neff::parse(&b), Err(NeffError::DataSizeMismatch { .. })));
}

#[test]
fn hash_mismatch_when_verifying() {
    let mut b = good_neff();
    b[172] ^= 0xFF;
    Neff::parse(&b).expect("no verification by default");
    let opts = ReadOptions { verify_hash: true, ..ReadOptions::default() };
    assert!(matches!(Neff::parse_with(&b, &opts), Err(NeffError::HashMismatch { kind: HashKind::Md5, .. })));
}

#[test]
fn unsupported_major_version() {
    let mut b = good_neff();
    set_u64(&mut b, 24, 3);
    let e = Neff::parse(&b).unwrap_err();
    assert!(matches!(e, NeffError::UnsupportedVersion { major: 3, .. }));
    assert!(e.is_unsupported_version());
}

#[test]
fn unknown_feature_bits() {
    let mut b = good_neff();
    set_u64(&mut b, 544, 1 << 50);
    let e = Neff::parse(&b).unwrap_err();
    assert!(matches!(e, NeffError::UnsupportedFeatureBits { .. }));
    assert!(e.is_unsupported_version());
}

#[test]
fn unsupported_packager() {
    let mut b = good_neff();
    set_u64(&mut b, 0, 7);
    let e = Neff::parse(&b).unwrap_err();
    assert!(matches!(e, NeffError::UnsupportedPackager { pkg_version: 7 }));
    assert!(e.is_unsupported_version());
    assert!(!NeffError::TruncatedHeader { len: 0 }.is_unsupported_version());
}

#[test]
fn corrupt_archive() {
    let mut b = good_neff();
    let mid = 1024 + (b.len() - 1024) / 2;
    for x in &mut b[mid..mid + 16] {
        *x ^= 0x5A;
    }
    assert!(matches!(Neff::parse(&b), Err(NeffError::CorruptArchive { .. })));
}

#[test]
fn path_traversal_and_absolute_paths() {
    for (name, reason) in [(&b"../evil"[..], "path traversal through '..'"), (b"/abs", "absolute path")] {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_size(1);
        h.set_entry_type(tar::EntryType::Regular);
        h.set_cksum();
        let mut t = tar::Builder::new(Vec::new());
        t.append(&h, &b"x"[..]).unwrap();
        let payload = t.into_inner().unwrap();
        let mut header = nrt_neff::NeffHeader { data_size: payload.len() as u64, ..Default::default() };
        header.hash = HashKind::Md5.compute(&payload);
        let mut b = header.to_bytes().to_vec();
        b.extend_from_slice(&payload);
        match Neff::parse(&b) {
            Err(NeffError::UnsafePath { reason: r, .. }) => assert_eq!(r, reason),
            other => panic!("expected UnsafePath, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn missing_def_json() {
    // The KELF list names a definition that is absent.
    let mut w = NeffWriter::new();
    w.add_model_manifests(&["sg00"], &[], &[], "*").unwrap();
    assert!(matches!(
        Neff::parse(&w.to_bytes().unwrap()),
        Err(NeffError::MissingDefJson { ref path }) if path == "sg00/def.json"
    ));
    // No manifests and no sgNN/def.json at all.
    let mut w = NeffWriter::new();
    w.add_member("readme.txt", b"hi".to_vec()).unwrap();
    assert!(matches!(Neff::parse(&w.to_bytes().unwrap()), Err(NeffError::MissingDefJson { .. })));
}

#[test]
fn dma_names_undeclared_var() {
    let dma = r#"[{"id":0,"queue":"qIn","desc":[{"from":"ghost","to":"SB"}]}]"#;
    let b = writer_with(&def(), dma).to_bytes().unwrap();
    assert!(matches!(
        Neff::parse(&b),
        Err(NeffError::UndeclaredVar { ref path, ref var, .. }) if path == "sg00/SP.json" && var == "ghost"
    ));
}

#[test]
fn dma_names_undeclared_queue() {
    let dma = r#"[{"id":9,"queue":"qNope","desc":[{"from":"a","to":"SB"}]}]"#;
    let b = writer_with(&def(), dma).to_bytes().unwrap();
    assert!(matches!(Neff::parse(&b), Err(NeffError::UndeclaredQueue { block: 9, .. })));
}

#[test]
fn steps_sizes_length_mismatch() {
    let dma = r#"[{"id":0,"queue":"qIn","desc":[{"from":"a","to":"SB","from_steps":[1,2],"from_sizes":[2]}]}]"#;
    let b = writer_with(&def(), dma).to_bytes().unwrap();
    assert!(matches!(Neff::parse(&b), Err(NeffError::StepsSizesMismatch { side: "from", .. })));
}

#[test]
fn more_than_four_dims() {
    let dma = r#"[{"id":0,"queue":"qIn","desc":[{"from":"a","to":"SB","to_steps":[1,1,1,1,1],"to_sizes":[1,1,1,1,1]}]}]"#;
    let b = writer_with(&def(), dma).to_bytes().unwrap();
    assert!(matches!(Neff::parse(&b), Err(NeffError::TooManyDims { side: "to", dims: 5, .. })));
}

#[test]
fn too_many_members() {
    let opts = ReadOptions { limits: ReadLimits { max_members: 3, ..ReadLimits::default() }, verify_hash: false };
    assert!(matches!(Neff::parse_with(&good_neff(), &opts), Err(NeffError::TooManyMembers { limit: 3 })));
}

#[test]
fn too_large() {
    let opts =
        ReadOptions { limits: ReadLimits { max_total_bytes: 100, ..ReadLimits::default() }, verify_hash: false };
    assert!(matches!(Neff::parse_with(&good_neff(), &opts), Err(NeffError::TooLarge { limit: 100, .. })));
}

#[test]
fn duplicate_member() {
    let mut t = tar::Builder::new(Vec::new());
    for _ in 0..2 {
        let mut h = tar::Header::new_ustar();
        h.set_size(2);
        h.set_mode(0o644);
        t.append_data(&mut h, "sg00/def.json", &b"{}"[..]).unwrap();
    }
    let payload = t.into_inner().unwrap();
    let header = nrt_neff::NeffHeader { data_size: payload.len() as u64, ..Default::default() };
    let mut b = header.to_bytes().to_vec();
    b.extend_from_slice(&payload);
    assert!(matches!(Neff::parse(&b), Err(NeffError::DuplicateMember { .. })));
}

#[test]
fn engine_json_missing() {
    let mut w = writer_with(&def(), GOOD_DMA);
    let mut members = w.members().clone();
    members.remove("sg00/SP.json");
    let b = nrt_neff::pack_members(w.header_mut(), &members, HashKind::Md5, PayloadFormat::Gzip).unwrap();
    assert!(matches!(
        Neff::parse(&b),
        Err(NeffError::MissingMember { ref path, .. }) if path == "sg00/SP.json"
    ));
}

#[test]
fn instruction_stream_not_whole_slots() {
    let mut w = writer_with(&def(), GOOD_DMA);
    w.add_member("sg00/PE.bin", vec![0; 65]).unwrap();
    assert!(matches!(
        Neff::parse(&w.to_bytes().unwrap()),
        Err(NeffError::InstructionStreamSize { len: 65, .. })
    ));
}

#[test]
fn invalid_json_names_member() {
    let mut w = writer_with(&def(), GOOD_DMA);
    w.add_member("sg00/def.json", b"{\"var\": 5}".to_vec()).unwrap();
    assert!(matches!(
        Neff::parse(&w.to_bytes().unwrap()),
        Err(NeffError::Json { ref path, .. }) if path == "sg00/def.json"
    ));
}

#[test]
fn graph_head_out_of_bounds() {
    let mut w = writer_with(&def(), GOOD_DMA);
    let mut g: serde_json::Value = serde_json::from_slice(&w.members()["neff.json"]).unwrap();
    g["heads"] = serde_json::json!([[42, 0, 0]]);
    g["metadata"]["signatures"]["default"]["outputs"] = serde_json::json!({});
    w.add_json("neff.json", &g).unwrap();
    assert!(matches!(
        Neff::parse(&w.to_bytes().unwrap()),
        Err(NeffError::Manifest { ref message, .. }) if message.contains("42")
    ));
}

#[test]
fn pack_dir_of_missing_directory() {
    let e = nrt_neff::pack_dir(std::path::Path::new("/nonexistent/nrt-neff"), &Default::default()).unwrap_err();
    assert!(matches!(e, NeffError::Io { .. }));
}
