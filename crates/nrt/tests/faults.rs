//! Every status of the error model, produced by injecting its fault into
//! the simulated device and asserted exactly, plus fail-stop behaviour:
//! a poisoned model returns the same status without touching the device,
//! still unloads cleanly, and the next model loaded on its core runs.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::LoadSettings;
use nrt_sim::{FaultKind, FaultSpec};
use std::time::Duration;

const BYTES: usize = 8 * 128 * 4;

/// Loads copy, runs it once healthy, injects `fault`, runs again and
/// returns that status; then checks poisoning (or not) and unload.
fn run_with_fault(settings: LoadSettings, fault: FaultSpec) -> NrtStatus {
    let (dev, host) = host_with(settings);
    let id = host.load(&copy_neff(), 0, -1).expect("load");
    let core = host.cores().get(host.vcores()[0][0]).expect("installed");
    let baseline = host.memory().ledger();
    let input = data(BYTES, 7);
    let (ins, outs, out) = host_io(input.clone(), BYTES);
    host.execute(id, &ins, &outs).expect("healthy execution");
    assert_eq!(read_all(&out), input);

    // The faulted execution runs on device tensors written beforehand:
    // staging host tensors is DMA work too, and would take a DMA fault
    // armed for the execution (tests/transfers.rs covers that).
    let (ins, outs) = device_io(&host, &input, BYTES);
    dev.inject(fault);
    let status = match host.execute(id, &ins, &outs) {
        Ok(()) => NrtStatus::Success,
        Err(e) => e.status,
    };
    let model = host.models().get(id).unwrap();
    if status != NrtStatus::Success && !status.is_soft() {
        // Fail-stop: the same status again, and no doorbell rung.
        assert_eq!(model.poisoned(), Some(status));
        let rung = core.doorbells();
        assert_eq!(host.execute(id, &ins, &outs).unwrap_err().status, status);
        assert_eq!(core.doorbells(), rung, "a poisoned model must not touch the device");
    } else {
        assert_eq!(model.poisoned(), None);
    }
    drop((model, ins, outs));
    host.unload(id).expect("unload after a fault");
    let after = host.memory().ledger();
    assert_eq!(after.model(id), Default::default());
    assert!(after.total() < baseline.total(), "the model's memory was returned");
    // The unload recovered the core (a poisoned model's cores are reset
    // and brought up again): a model loaded there next runs correctly.
    let next = host.load(&copy_neff(), 0, -1).expect("load after the fault");
    for seed in [11, 12] {
        let input = data(BYTES, seed);
        let (ins, outs, out) = host_io(input.clone(), BYTES);
        host.execute(next, &ins, &outs).unwrap_or_else(|e| panic!("the next model on the same core after {status}: {e:?}"));
        assert_eq!(read_all(&out), input);
    }
    host.unload(next).unwrap();
    status
}

/// Device-tensor sets for the copy example on the model's core, the input
/// written.
fn device_io(host: &nrt::load::ModelHost, input: &[u8], size: usize) -> (nrt::tensor::TensorSet, nrt::tensor::TensorSet) {
    use nrt::tensor::{Tensor, TensorSet};
    use std::sync::Arc;
    let core = host.vcores()[0][0];
    let din = Tensor::allocate_device(host.memory(), core, size as u64, "input").unwrap();
    din.write(0, input).unwrap();
    let dout = Tensor::allocate_device(host.memory(), core, size as u64, "output").unwrap();
    let (mut ins, mut outs) = (TensorSet::new(), TensorSet::new());
    ins.add("input", Arc::new(din));
    outs.add("output", Arc::new(dout));
    (ins, outs)
}

fn short_timeout() -> LoadSettings {
    LoadSettings { exec_timeout: Duration::from_millis(300), ..LoadSettings::default() }
}

#[test]
fn hbm_uncorrectable_is_1201() {
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::HbmUe)).code(), 1201);
}

#[test]
fn hbm_repairable_is_1205() {
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::HbmUeRepairable)).code(), 1205);
}

#[test]
fn sram_parity_is_1202() {
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::SramParity)).code(), 1202);
}

#[test]
fn dma_abort_is_1203() {
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::DmaAbort)).code(), 1203);
}

#[test]
fn out_of_bounds_is_1006() {
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::Oob)).code(), 1006);
}

/// `sim_panic`: the simulator panics inside an engine's step (on one of
/// its workers or on the runtime thread lent to it). The scheduler's
/// guard halts the engine with a sequencer error, so the execution fails
/// with 1004 from the device's evidence, not NRT_TIMEOUT at the end of
/// its bound, and the core recovers at unload.
#[test]
fn a_simulator_panic_is_an_engine_error_not_a_timeout() {
    let settings = LoadSettings { exec_timeout: Duration::from_secs(60), ..LoadSettings::default() };
    let (dev, host) = host_with(settings);
    let id = host.load(&copy_neff(), 0, -1).expect("load");
    let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);
    dev.inject(FaultSpec::new(FaultKind::SimPanic));
    let e = host.execute(id, &ins, &outs).unwrap_err();
    assert_eq!(e.status.code(), 1004, "{}", e.message);
    assert_eq!(host.models().get(id).unwrap().poisoned(), Some(NrtStatus::ExecCompletedWithErr));
    host.unload(id).unwrap();
    // The core recovers: a model loaded there next runs correctly.
    let next = host.load(&copy_neff(), 0, -1).expect("load after the panic");
    let input = data(BYTES, 2);
    let (ins, outs, out) = host_io(input.clone(), BYTES);
    host.execute(next, &ins, &outs).expect("the next model runs");
    assert_eq!(read_all(&out), input);
    host.unload(next).unwrap();
}

#[test]
fn hang_is_a_timeout() {
    assert_eq!(run_with_fault(short_timeout(), FaultSpec::new(FaultKind::Hang)), NrtStatus::Timeout);
}

#[test]
fn nq_overflow_is_1204() {
    assert_eq!(run_with_fault(short_timeout(), FaultSpec::new(FaultKind::NqOverflow)).code(), 1204);
}

#[test]
fn nan_is_1003_only_when_numerical_errors_are_reported() {
    let on = LoadSettings { numerical_errors: true, ..LoadSettings::default() };
    assert_eq!(run_with_fault(on, FaultSpec::new(FaultKind::Nan)).code(), 1003);
    assert_eq!(run_with_fault(LoadSettings::default(), FaultSpec::new(FaultKind::Nan)), NrtStatus::Success);
}

#[test]
fn sequencer_fault_is_1004() {
    // An SP program whose register branch targets address 0: the sequencer
    // faults (SW_SEQUENCER) and halts.
    let dir = examples_dir().join("copy");
    let contents = nrt_neff::read_dir(&dir).unwrap();
    let mut members = contents.members;
    members.insert(
        "sg00/SP.asm".to_string(),
        b"dma_trigger queue=\"qCopy\" block_id=0\nevent_semaphore wait=sem1>=1\nbranch cmp=always dtype=int32 target=register target_reg_lo=100 target_reg_hi=101\n".to_vec(),
    );
    let neff = pack_members(&contents.header.unwrap(), members);
    let (_dev, host) = host();
    let id = host.load(&neff, 0, -1).expect("load");
    let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);
    let e = host.execute(id, &ins, &outs).unwrap_err();
    assert_eq!(e.status.code(), 1004, "{}", e.message);
    assert_eq!(host.models().get(id).unwrap().poisoned(), Some(NrtStatus::ExecCompletedWithErr));
    host.unload(id).unwrap();
}
