//! The GPSIMD custom-op path at load: library staging (the 9-library cap,
//! the shared single library, per-model sets), EXTENDED_INST resolution,
//! and the 0xCA micro-program in the staged POOL image.

mod exec_support;

use exec_support::{examples_dir, host};
use nrt::custom_ops::lower::is_micro_program;
use nrt::custom_ops::queues::stage_custom_op_queues;
use nrt_hal::{CoreId, DeviceAddr, EngineId};
use nrt_isa::record::RecordBytes;
use nrt_neff::Members;
use serde_json::{Value, json};

const POOL_ASM: &str = "\
pseudo_embedding_update queue=0 embedding_table=0x100 sbuf_base_addr=0 src_addr=0x1000 dst_addr=0x2000 bytes=64 update=sem5++
extended_inst spec=1
event_semaphore wait=sem5>=1
pseudo_inst sub=exit_execution
";

fn lib(name: &str, spec: u8) -> Value {
    json!({"library": name, "ulib_to_ucode_version": "1.0.0.0", "opcode": 0xF0, "cpu_id": 0, "total_cpus": 8,
           "functions": [{"name": name.trim_end_matches(".wasm"), "opcode": -16, "sub_opcode": spec}]})
}

/// The copy example plus a POOL stream and `libs` (each with member bytes).
fn neff(libs: &[Value], pool_asm: Option<&str>) -> Vec<u8> {
    let dir = examples_dir().join("copy");
    let contents = nrt_neff::read_dir(&dir).unwrap();
    let mut members: Members = contents.members;
    let mut def: Value = serde_json::from_slice(&members["sg00/def.json"]).unwrap();
    if !libs.is_empty() {
        def["ucode_lib"] = json!(libs);
        for l in libs {
            let name = l["library"].as_str().unwrap();
            members.insert(format!("sg00/{name}"), format!("\0asm\x01\0\0\0{name}").into_bytes());
        }
    }
    if let Some(asm) = pool_asm {
        def["pool"] = json!("POOL.json");
        def["pool_instr"] = json!("POOL.bin");
        members.insert("sg00/POOL.json".into(), br#"{"name": "POOL.json", "instr": "POOL.bin"}"#.to_vec());
        members.insert("sg00/POOL.asm".into(), asm.as_bytes().to_vec());
    }
    members.insert("sg00/def.json".into(), serde_json::to_vec(&def).unwrap());
    exec_support::pack_members(&contents.header.unwrap_or_default(), members)
}

fn pool_image(host: &nrt::load::ModelHost, id: nrt::model::ModelId) -> (CoreId, Vec<RecordBytes>) {
    let m = host.models().get(id).unwrap();
    let c = &m.program.as_ref().unwrap().cores[0];
    let at: DeviceAddr = c.images[EngineId::Pool.index()];
    let mut buf = vec![0u8; 64 * 64];
    host.device().read(at, &mut buf).unwrap();
    (c.core.core(), buf.chunks(64).map(|r| r.try_into().unwrap()).collect())
}

#[test]
fn the_pool_image_carries_the_micro_program_then_the_extended_inst() {
    let (_dev, host) = host();
    let id = host.load(&neff(&[lib("base.wasm", 0), lib("relu.wasm", 1)], Some(POOL_ASM)), -1, -1).unwrap();
    let (core, img) = pool_image(&host, id);
    let at = img.iter().position(|r| r[0] == 0x7A).expect("LOAD_POOL_ARGUMENT in the image");
    assert!(at >= 3);
    assert!(is_micro_program(&img[at - 3..at + 3]), "order: 3 x WRITE, 0x107A, 0x10A2, 0x10A0/0x13");
    assert_eq!(img[at + 3][0], 0xF0, "EXTENDED_INST follows the micro-program");
    assert_eq!(img[at + 3][0x0C], 1);
    // The DMA config goes to custom-op queue 0 (queue 15 of DMA engine 8).
    let q = stage_custom_op_queues(host.device().info().arch, core)[0];
    let addr = u64::from_le_bytes(img[at - 3][0x10..0x18].try_into().unwrap());
    assert_eq!(addr, q.m2s_addr() - 0x38 + 0x28);
    // The argument slot: SBUF base of the core, completion = INC alias of semaphore 5.
    let arch = host.device().info().arch;
    assert_eq!(u64::from_le_bytes(img[at][0x28..0x30].try_into().unwrap()), arch.sbuf_addr(core).get());
    assert_eq!(u64::from_le_bytes(img[at][0x38..0x40].try_into().unwrap()), arch.semaphore_addr(core, nrt_hal::arch::EVT_SEM_SEM_INC, 5).get());
    let m = host.models().get(id).unwrap();
    let set = m.program.as_ref().unwrap().cores[0].gpsimd_libs.clone().unwrap();
    assert!(set.has_custom_ops() && !set.shared);
    assert_eq!(set.table_rows, 2);
    drop(m);
    host.unload(id).unwrap();
}

#[test]
fn more_than_nine_libraries_fail_the_load() {
    let (_dev, host) = host();
    let libs: Vec<Value> = (0..10).map(|i| lib(&format!("l{i}.wasm"), i)).collect();
    let e = host.load(&neff(&libs, None), -1, -1).unwrap_err();
    assert!(e.message.contains("Exceeded max number of GPSIMD libs"), "{}", e.message);
    let nine: Vec<Value> = (0..9).map(|i| lib(&format!("l{i}.wasm"), i)).collect();
    host.load(&neff(&nine, None), -1, -1).unwrap();
}

#[test]
fn a_single_library_is_staged_once_per_core_and_shared() {
    let (_dev, host) = host();
    let bytes = neff(&[lib("extisa.wasm", 1)], Some("extended_inst spec=1\npseudo_inst sub=exit_execution\n"));
    let a = host.load(&bytes, 0, -1).unwrap();
    let b = host.load(&bytes, 0, -1).unwrap();
    assert_eq!(host.gpsimd_libs().stagings(), 1, "the second model reuses the staged library");
    let set_of = |id| host.models().get(id).unwrap().program.as_ref().unwrap().cores[0].gpsimd_libs.clone().unwrap();
    let (sa, sb) = (set_of(a), set_of(b));
    assert!(std::sync::Arc::ptr_eq(&sa, &sb) && sa.shared && !sa.has_custom_ops());
    // Unloading both leaves the shared set staged (no custom ops -> no free).
    host.unload(a).unwrap();
    host.unload(b).unwrap();
    let core = sa.core;
    assert!(host.gpsimd_libs().shared_set(core).is_some());
    assert!(host.memory().allocation(sa.table).is_some(), "shared table still allocated");
    let c = host.load(&bytes, 0, -1).unwrap();
    assert_eq!(host.gpsimd_libs().stagings(), 1);
    host.unload(c).unwrap();
    // Multi-library sets are per model and freed at unload.
    let multi = neff(&[lib("base.wasm", 0), lib("relu.wasm", 1)], None);
    let d = host.load(&multi, 0, -1).unwrap();
    let sd = set_of(d);
    assert!(sd.has_custom_ops() && !sd.shared);
    host.unload(d).unwrap();
    assert!(host.memory().allocation(sd.table).is_none(), "per-model set freed at unload");
    host.close().unwrap();
    assert!(host.memory().allocation(sa.table).is_none(), "shared set freed at teardown");
}

#[test]
fn unresolvable_ops_are_refused_at_load() {
    let (_dev, host) = host();
    // EXTENDED_INST naming a kernel no library exports.
    let e = host.load(&neff(&[lib("base.wasm", 0), lib("relu.wasm", 1)], Some("extended_inst spec=7\npseudo_inst sub=exit_execution\n")), -1, -1).unwrap_err();
    assert!(e.message.contains("EXTENDED_INST spec 7 names no kernel"), "{}", e.message);
    // A custom op with only the base library.
    let e = host.load(&neff(&[lib("base.wasm", 1)], Some(POOL_ASM)), -1, -1).unwrap_err();
    assert!(e.message.contains("needs op libraries"), "{}", e.message);
    // A custom-op queue beyond the eight.
    let asm = POOL_ASM.replace("queue=0", "queue=8");
    let e = host.load(&neff(&[lib("base.wasm", 0), lib("relu.wasm", 1)], Some(&asm)), -1, -1).unwrap_err();
    assert!(e.message.contains("custom-op queue 8 does not exist"), "{}", e.message);
    // Nothing leaked: no model, no per-model library memory.
    assert!(host.models().ids().is_empty());
}
