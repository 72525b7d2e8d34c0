//! Hostile NEFFs: programs built with the NEFF writer and the assembler
//! from the copy example, each wrong in one way a corrupt or malicious file
//! could be: a variable claiming more memory than the device has, an
//! instruction stream that branches out of its image, a DMA descriptor
//! that points past its tensor (and so past device memory), a semaphore
//! wait nothing will ever meet.
//! Each must come back as a status with a message naming what was wrong,
//! never a panic, an abort or an allocation of the claimed size, and leave
//! the runtime usable (the unmodified example loads and runs after it).

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::{LoadSettings, ModelHost};
use nrt_neff::Members;
use std::time::Duration;

const BYTES: usize = 8 * 128 * 4;

/// The copy example's members with `edit` applied, packed.
fn copy_with(edit: impl FnOnce(&mut Members)) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).expect("examples/copy");
    let mut members = contents.members;
    edit(&mut members);
    pack_members(&contents.header.unwrap_or_default(), members)
}

fn json_edit(m: &mut Members, member: &str, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&m[member]).expect("member is JSON");
    f(&mut v);
    m.insert(member.to_string(), serde_json::to_vec(&v).expect("JSON"));
}

/// The SP program of the copy example replaced by `asm`.
fn copy_with_sp(asm: &str) -> Vec<u8> {
    copy_with(|m| {
        m.insert("sg00/SP.asm".to_string(), asm.as_bytes().to_vec());
    })
}

/// After a hostile file: the host still loads and runs the real example.
fn still_usable(host: &ModelHost) {
    let id = host.load(&copy_neff(), 0, -1).expect("the example loads after a hostile NEFF");
    let input = data(BYTES, 3);
    let (ins, outs, out) = host_io(input.clone(), BYTES);
    host.execute(id, &ins, &outs).expect("the example runs after a hostile NEFF");
    assert_eq!(read_all(&out), input);
    host.unload(id).unwrap();
}

/// Loads `neff` and, if it loads, executes it once; the error either gives.
fn load_and_run(host: &ModelHost, neff: &[u8]) -> nrt::NrtError {
    // The core's own buffers are made by its first load: measured after it.
    still_usable(host);
    let baseline = host.memory().ledger().total();
    let e = match host.load(neff, 0, -1) {
        Err(e) => e,
        Ok(id) => {
            let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);
            let e = host.execute(id, &ins, &outs).expect_err("the hostile program must not complete");
            host.unload(id).expect("a failed model still unloads");
            e
        }
    };
    assert_eq!(host.memory().ledger().total(), baseline, "the hostile model's memory was not all returned");
    e
}

fn short_timeout() -> LoadSettings {
    LoadSettings { exec_timeout: Duration::from_millis(300), ..LoadSettings::default() }
}

#[test]
fn a_variable_larger_than_the_device_is_resource() {
    let neff = copy_with(|m| {
        json_edit(m, "sg00/def.json", |d| {
            d["var"]["input"]["size"] = serde_json::json!(1u64 << 46);
        })
    });
    let (_dev, host) = host();
    let e = load_and_run(&host, &neff);
    assert_eq!(e.status, NrtStatus::Resource, "{}", e.message);
    assert!(e.message.contains("Failed to allocate"), "{}", e.message);
    still_usable(&host);
}

#[test]
fn a_branch_out_of_the_image_is_refused_at_load_naming_the_instruction() {
    let neff = copy_with_sp("dma_trigger queue=\"qCopy\" block_id=0\nevent_semaphore wait=sem1>=1\nbranch cmp=always dtype=int32 target=rel_imm rel_offset=100000\n");
    let (_dev, host) = host();
    let e = load_and_run(&host, &neff);
    assert_eq!(e.status, NrtStatus::Invalid, "{}", e.message);
    assert!(e.message.contains("SP instruction 2") && e.message.contains("outside the stream"), "{}", e.message);
    still_usable(&host);
}

#[test]
fn a_descriptor_past_its_tensor_is_refused() {
    let neff = copy_with(|m| {
        json_edit(m, "sg00/SP.json", |sp| {
            sp["dma"][0]["desc"][0]["to_off"] = serde_json::json!(1u64 << 40);
        })
    });
    let (_dev, host) = host();
    let e = load_and_run(&host, &neff);
    assert_eq!(e.status, NrtStatus::Invalid, "{}", e.message);
    assert!(e.message.contains("DMA block 0") && e.message.contains("var \"output\""), "{}", e.message);
    still_usable(&host);
}

#[test]
fn a_semaphore_wait_never_met_times_out() {
    let neff = copy_with_sp("dma_trigger queue=\"qCopy\" block_id=0\nevent_semaphore wait=sem1>=5\npseudo_inst sub=exit_execution\n");
    let (_dev, host) = host_with(short_timeout());
    let e = load_and_run(&host, &neff);
    // The status, the model, the engine that never ended, the semaphore it
    // waits on with its value, and its instruction (the second of SP's
    // stream, an EVENT_SEMAPHORE) are named.
    assert_eq!(e.status, NrtStatus::Timeout, "{}", e.message);
    assert!(e.message.contains("NRT_TIMEOUT") && e.message.contains("copy"), "{}", e.message);
    assert!(e.message.contains("no END from engine(s) SP") && e.message.contains("NEURON_RT_EXEC_TIMEOUT"), "{}", e.message);
    // (The value is 1 once the copy's DMA has signalled it, 0 before.)
    assert!(e.message.contains("SP waiting on semaphore 1 (value "), "{}", e.message);
    assert!(e.message.contains("at sg00 SP instruction 1 (EVENT_SEMAPHORE)"), "{}", e.message);
    still_usable(&host);
}
