//! The GPSIMD library entries of def.json: resolution to member bytes and
//! every check the runtime applies at load.

mod common;

use common::{GOOD_DMA, def, writer_with};
use nrt_neff::Neff;
use nrt_neff::gpsimd::{self, EXT_ISA_LIB_FLAGS, GpsimdError, MAX_GPSIMD_LIBS};
use nrt_neff::json::def::{UcodeLib, UcodeLibRef};
use serde_json::json;

fn lib(name: &str) -> serde_json::Value {
    json!({"library": name, "ulib_to_ucode_version": "1.0.0.0", "opcode": 0xF0, "cpu_id": 0, "total_cpus": 8,
           "functions": [{"name": format!("{name}_kernel"), "opcode": -16, "sub_opcode": 1}]})
}

fn neff_with(entries: serde_json::Value, members: &[&str]) -> Neff {
    let mut d = def();
    d.ucode_lib = Some(serde_json::from_value::<UcodeLibRef>(entries).unwrap());
    let mut w = writer_with(&d, GOOD_DMA);
    for m in members {
        w.add_member(&format!("sg00/{m}"), format!("code of {m}").into_bytes()).unwrap();
    }
    Neff::parse(&w.to_bytes().unwrap()).unwrap()
}

fn set_of(neff: &Neff) -> Result<gpsimd::GpsimdLibSet, GpsimdError> {
    gpsimd::lib_set(neff, &neff.subgraphs[0])
}

#[test]
fn libraries_resolve_to_their_member_bytes() {
    let n = neff_with(json!([lib("base.wasm"), lib("relu.wasm")]), &["base.wasm", "relu.wasm"]);
    let s = set_of(&n).unwrap();
    assert_eq!(s.num_libs(), 2);
    assert!(s.has_custom_ops());
    assert_eq!(s.libs[1].bytes, b"code of relu.wasm");
    assert_eq!(s.libs[1].path, "sg00/relu.wasm");
    assert_eq!((s.libs[1].flags, s.libs[1].total_cpus), (EXT_ISA_LIB_FLAGS, 8));
    let (l, f) = s.find(0xF0, 1).unwrap();
    assert_eq!((l.name.as_str(), f.name.as_str()), ("base.wasm", "base.wasm_kernel"));
    assert!(s.find(0xF0, 9).is_none());
}

#[test]
fn a_single_library_carries_no_custom_ops() {
    let n = neff_with(lib("base.wasm"), &["base.wasm"]);
    let s = set_of(&n).unwrap();
    assert_eq!(s.num_libs(), 1);
    assert!(!s.has_custom_ops());
}

#[test]
fn nine_libraries_are_the_cap() {
    let names: Vec<String> = (0..MAX_GPSIMD_LIBS + 1).map(|i| format!("l{i}.wasm")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let nine = neff_with(json!(refs[..9].iter().map(|n| lib(n)).collect::<Vec<_>>()), &refs);
    assert_eq!(set_of(&nine).unwrap().num_libs(), 9);
    let ten = neff_with(json!(refs.iter().map(|n| lib(n)).collect::<Vec<_>>()), &refs);
    let e = set_of(&ten).unwrap_err();
    assert_eq!(e, GpsimdError::TooManyLibs { subgraph: "sg00".into(), count: 10 });
    assert!(e.to_string().starts_with("Exceeded max number of GPSIMD libs"), "{e}");
}

#[test]
fn total_cpus_must_be_one_or_eight() {
    for (cpus, ok) in [(0, true), (1, true), (8, true), (2, false), (4, false), (9, false)] {
        let mut l = lib("k.wasm");
        l["total_cpus"] = json!(cpus);
        let r = set_of(&neff_with(json!([l]), &["k.wasm"]));
        assert_eq!(r.is_ok(), ok, "total_cpus {cpus}: {r:?}");
        if !ok {
            assert!(r.unwrap_err().to_string().contains("has invalid number of total cpus"));
        }
    }
}

#[test]
fn entries_are_checked() {
    let mut no_version = lib("k.wasm");
    no_version.as_object_mut().unwrap().remove("ulib_to_ucode_version");
    assert!(matches!(set_of(&neff_with(json!([no_version]), &["k.wasm"])), Err(GpsimdError::MissingVersion { .. })));
    let mut wrong_major = lib("k.wasm");
    wrong_major["ulib_to_ucode_version"] = json!("2.0.0.0");
    assert!(matches!(set_of(&neff_with(json!([wrong_major]), &["k.wasm"])), Err(GpsimdError::VersionMismatch { .. })));
    let mut cpu = lib("k.wasm");
    cpu["cpu_id"] = json!(3);
    assert!(matches!(set_of(&neff_with(json!([cpu]), &["k.wasm"])), Err(GpsimdError::BadCpuId { cpu_id: 3, .. })));
    assert!(matches!(set_of(&neff_with(json!([lib("k.wasm"), lib("k.wasm")]), &["k.wasm"])), Err(GpsimdError::Duplicate { .. })));
    let e = set_of(&neff_with(json!([lib("absent.wasm")]), &[])).unwrap_err();
    assert!(e.to_string().contains("\"sg00/absent.wasm\""), "{e}");
    let mut long = lib("k.wasm");
    long["functions"][0]["name"] = json!("x".repeat(65));
    assert!(matches!(set_of(&neff_with(json!([long]), &["k.wasm"])), Err(GpsimdError::BadFunction { .. })));
}

#[test]
fn a_manifest_member_lists_the_libraries() {
    let mut d = def();
    d.ucode_lib = Some(UcodeLibRef::File("ucode_lib.json".into()));
    let mut w = writer_with(&d, GOOD_DMA);
    let entries: Vec<UcodeLib> = serde_json::from_value(json!([lib("base.wasm"), lib("softmax.wasm")])).unwrap();
    w.add_json("sg00/ucode_lib.json", &entries).unwrap();
    w.add_member("sg00/base.wasm", b"\0asm".to_vec()).unwrap();
    w.add_member("softmax.wasm", b"\0asm!".to_vec()).unwrap();
    let n = Neff::parse(&w.to_bytes().unwrap()).unwrap();
    let s = set_of(&n).unwrap();
    assert_eq!(s.libs.iter().map(|l| l.path.as_str()).collect::<Vec<_>>(), ["sg00/base.wasm", "softmax.wasm"]);
    // A NEFF without ucode_lib has no libraries.
    let plain = Neff::parse(&writer_with(&def(), GOOD_DMA).to_bytes().unwrap()).unwrap();
    assert_eq!(set_of(&plain).unwrap().num_libs(), 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Any count of libraries with any total_cpus either resolves within
    /// the documented rules or is refused with an error, never a panic.
    #[test]
    fn counts_and_cpus_follow_the_rules(n in 0usize..12, cpus in proptest::collection::vec(0u32..10, 12)) {
        let names: Vec<String> = (0..n).map(|i| format!("l{i}.wasm")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let entries: Vec<_> = refs.iter().zip(&cpus).map(|(nm, c)| { let mut l = lib(nm); l["total_cpus"] = json!(c); l }).collect();
        let r = set_of(&neff_with(json!(entries), &refs));
        let valid = n <= MAX_GPSIMD_LIBS && cpus[..n].iter().all(|c| matches!(c, 0 | 1 | 8));
        proptest::prop_assert_eq!(r.is_ok(), valid);
        if let Ok(s) = r { proptest::prop_assert_eq!(s.has_custom_ops(), n > 1); }
    }
}
