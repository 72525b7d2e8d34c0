//! Execution: two models interleaved on one core (model-switch flags and
//! the device's switch counter), a two-core (LNC 2) model with one
//! doorbell per core, bind errors with their exact statuses, and
//! execute_repeat, the tag a failed load logs under.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::tensor::{Tensor, TensorSet};
use std::sync::Arc;

const BYTES: usize = 8 * 128 * 4;

#[test]
fn two_models_interleave_on_one_core_and_only_switches_pay_a_reload() {
    let (_dev, host) = host();
    let neff = copy_neff();
    let a = host.load(&neff, 0, -1).unwrap();
    let b = host.load(&neff, 0, -1).unwrap();
    let core = host.cores().get(host.vcores()[0][0]).unwrap();
    let (ins_a, outs_a, out_a) = host_io(data(BYTES, 10), BYTES);
    let (ins_b, outs_b, out_b) = host_io(data(BYTES, 20), BYTES);
    let order = [a, a, b, b, a, b, a, a];
    let mut switches = 0;
    let mut last = None;
    for (step, &m) in order.iter().enumerate() {
        let (ins, outs, out, seed) = if m == a { (&ins_a, &outs_a, &out_a, 10) } else { (&ins_b, &outs_b, &out_b, 20) };
        out.memset(0, 0, BYTES as u64).unwrap();
        host.execute(m, ins, outs).unwrap_or_else(|e| panic!("step {step}: {e}"));
        assert_eq!(read_all(out), data(BYTES, seed), "step {step}");
        if last != Some(m) {
            switches += 1;
        }
        last = Some(m);
        assert_eq!(core.device_switch_count().unwrap(), switches, "step {step}: the device ran the MODEL_SWITCH region once per switch");
    }
    assert_eq!(core.lock_exec().switches, switches as u64);
    assert_eq!(core.doorbells(), order.len() as u64, "one doorbell per execute");
    host.unload(a).unwrap();
    // b still runs after a is gone.
    host.execute(b, &ins_b, &outs_b).unwrap();
    assert_eq!(read_all(&out_b), data(BYTES, 20));
}

#[test]
fn a_two_core_model_rings_one_doorbell_per_core() {
    // The copy example with a second subgraph: LNC 2, both cores copy.
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut members = contents.members;
    let sg00: Vec<(String, Vec<u8>)> = members.iter().filter(|(p, _)| p.starts_with("sg00/")).map(|(p, b)| (p.replacen("sg00/", "sg01/", 1), b.clone())).collect();
    members.extend(sg00);
    members.insert("kelf-0.json".into(), br#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"},{"definition":"sg01/def.json","name":"sg01"}],"version":"0.5","target":"cayman"}"#.to_vec());
    let neff = pack_members(&contents.header.unwrap(), members);
    let (_dev, host) = host();
    let id = host.load(&neff, 1, -1).unwrap();
    let cores: Vec<_> = host.vcores()[1].iter().map(|c| host.cores().get(*c).unwrap()).collect();
    assert_eq!(cores.len(), 2);
    let (ins, outs, out) = host_io(data(BYTES, 30), BYTES);
    for n in 1..=3u64 {
        host.execute(id, &ins, &outs).unwrap();
        assert_eq!(read_all(&out), data(BYTES, 30));
        assert_eq!((cores[0].doorbells(), cores[1].doorbells()), (n, n));
    }
}

#[test]
fn bind_errors_name_the_tensor_and_carry_libnrts_statuses() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);

    let e = host.execute(id, &TensorSet::new(), &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("Incorrect number of inputs, expected: 1, received: 0"), "{}", e.message);
    assert!(e.message.contains("missing: [\"input\"]"), "the count error names the absent tensor: {}", e.message);

    // One tensor too many: the count error names the one the model lacks.
    let mut extra = TensorSet::new();
    extra.add("input", Arc::new(Tensor::allocate_host(BYTES as u64, "input").unwrap()));
    extra.add("bias", Arc::new(Tensor::allocate_host(BYTES as u64, "bias").unwrap()));
    let e = host.execute(id, &extra, &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("received: 2") && e.message.contains("not the model's: [\"bias\"]"), "{}", e.message);

    let mut wrong_name = TensorSet::new();
    wrong_name.add("inputz", Arc::new(Tensor::allocate_host(BYTES as u64, "inputz").unwrap()));
    let e = host.execute(id, &wrong_name, &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("\"inputz\"") && e.message.contains("\"input\""), "{}", e.message);

    let mut small = TensorSet::new();
    small.add("input", Arc::new(Tensor::allocate_host(100, "input").unwrap()));
    let e = host.execute(id, &small, &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::ExecBadInput);
    assert!(e.message.contains("\"input\" has 100 bytes, expected 4096 bytes"), "{}", e.message);

    let mut small_out = TensorSet::new();
    small_out.add("output", Arc::new(Tensor::allocate_host(8, "output").unwrap()));
    assert_eq!(host.execute(id, &ins, &small_out).unwrap_err().status, NrtStatus::ExecBadInput);

    // A device input on another logical core than the model's is refused,
    // naming it (the model runs on vnc 0; the tensor sits on vnc 1's core).
    let other_core = host.vcores()[1][0];
    let mut elsewhere = TensorSet::new();
    elsewhere.add("input", Arc::new(Tensor::allocate_device(host.memory(), other_core, BYTES as u64, "input").unwrap()));
    let e = host.execute(id, &elsewhere, &outs).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("input tensor \"input\" is in the memory of physical core") && e.message.contains("logical core"), "{}", e.message);

    // None of that touched the device or poisoned the model.
    assert_eq!(host.cores().get(host.vcores()[0][0]).unwrap().doorbells(), 0);
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(host.execute(12345, &ins, &outs).unwrap_err().status, NrtStatus::InvalidHandle);
}

#[test]
fn execute_repeat_accepts_one_and_refuses_host_loops() {
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let (ins, outs, out) = host_io(data(BYTES, 9), BYTES);
    host.execute_repeat(id, &ins, &outs, 1).unwrap();
    assert_eq!(read_all(&out), data(BYTES, 9));
    let e = host.execute_repeat(id, &ins, &outs, 2).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("Supports for loops on the host is deprecated"), "{}", e.message);
}

#[test]
fn a_failed_plain_load_logs_under_its_own_tag() {
    let (_dev, host) = host();
    let cap = nrt::log::capture(nrt::log::Level::Error);
    assert!(host.load(b"not a neff", 0, -1).is_err());
    let text = cap.text();
    assert!(text.contains("NMGR:load ") && text.contains("Failed to load NEFF"), "{text}");
    assert!(!text.contains("load_collectives"), "a plain load is not a collectives load: {text}");
}
