//! Waits that no worker can strand (docs/reliability.md, "Waits and their
//! bounds"): an execution unit's worker that dies mid-execution completes
//! everything it had (callbacks, in-flight marks, host accesses waiting
//! for them), and the waits with no timeout of their own (a host access to
//! a tensor in flight, the implicit-async retry on a full queue, unload
//! waiting for executions) end at the request limit when nothing
//! completes. Every test here makes its units with the same short request
//! limit (the limit is the process's, set by the last `Xus` made).

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::LoadSettings;
use nrt::tensor::{Tensor, TensorSet};
use nrt::xu::unit::OnComplete;
use nrt::xu::{XuSettings, Xus};
use nrt_sim::{FaultKind, FaultSpec};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BYTES: usize = 8 * 128 * 4;
/// The request limit of every unit made here (long enough for a dying
/// worker's panic hook, which prints a backtrace before the unwinding
/// releases anything, on a busy machine).
const LIMIT: Duration = Duration::from_secs(5);

fn xus(depth: u64, panic_after: Option<u64>) -> Xus {
    Xus::new(XuSettings { compute_depth: depth, other_depth: depth, request_limit: LIMIT, panic_after })
}

/// Device input and output tensors on `host`'s logical core 0.
fn io(host: &nrt::load::ModelHost) -> (TensorSet, TensorSet, Arc<Tensor>) {
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(host.memory(), core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(host.memory(), core, BYTES as u64, "output").unwrap());
    din.write(0, &data(BYTES, 3)).unwrap();
    let mut ins = TensorSet::new();
    ins.add("input", din);
    let mut outs = TensorSet::new();
    outs.add("output", dout.clone());
    (ins, outs, dout)
}

/// `xu_panic`: the compute unit's worker dies holding an implicit-async
/// execution. Its callback and the queued one's fire with their status,
/// and a host read of the output (which waits while the tensor is in
/// flight) returns instead of waiting for the marks for ever.
#[test]
fn a_worker_dying_mid_execution_releases_its_tensors_and_reports_every_request() {
    let (_dev, host) = host_with(LoadSettings::default());
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let model = host.models().get(id).unwrap();
    let x = xus(4, Some(0));
    let (ins, outs, dout) = io(&host);
    let calls = Arc::new(Mutex::new(Vec::new()));
    // The first is queued on a healthy unit; the second either queues
    // behind it or, once the worker died, is refused (no callback then).
    let mut accepted = Vec::new();
    for k in 0..2 {
        let c = calls.clone();
        match x.execute_implicit(0, model.clone(), ins.clone(), outs.clone(), OnComplete::once(move |_, st| c.lock().unwrap().push((k, st)))) {
            Ok(_) => accepted.push(k),
            Err(e) => assert!(k == 1 && e.status == NrtStatus::ExecUnitUnrecoverable && e.message.contains("xu_panic"), "{e:?}"),
        }
    }
    let mut b = vec![0u8; BYTES];
    dout.read(0, &mut b).unwrap();
    assert!(!dout.is_in_flight());
    x.drain(0).unwrap();
    let mut got = calls.lock().unwrap().clone();
    got.sort_unstable_by_key(|c| c.0);
    let want: Vec<(i32, NrtStatus)> = accepted.iter().map(|&k| (k, if k == 0 { NrtStatus::Failure } else { NrtStatus::ExecUnitUnrecoverable })).collect();
    assert_eq!(got, want);
    let e = x.execute_implicit(0, model.clone(), ins, outs, OnComplete::once(|_, _| {})).unwrap_err();
    assert_eq!(e.status, NrtStatus::ExecUnitUnrecoverable);
    assert!(e.message.contains("xu_panic"), "{}", e.message);
    assert!(!dout.is_in_flight(), "a refused execution leaves no mark");
    drop(model);
    host.unload(id).unwrap();
}

/// An execution that hangs (the device never ends it; the model's own
/// timeout is far away): with the queue full, the implicit-async call
/// and a host read of the tensor in flight give up after the request
/// limit instead of blocking until the execution ends.
#[test]
fn waits_behind_a_hung_execution_end_at_the_request_limit() {
    let settings = LoadSettings { exec_timeout: Duration::from_secs(120), ..LoadSettings::default() };
    let (dev, host) = host_with(settings);
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let model = host.models().get(id).unwrap();
    dev.inject(FaultSpec::new(FaultKind::Hang).on_core(host.vcores()[0][0].0));
    let x = xus(1, None);
    let (ins, outs, dout) = io(&host);
    x.execute_implicit(0, model.clone(), ins.clone(), outs.clone(), OnComplete::once(|_, _| {})).unwrap();
    let e = x.execute_implicit(0, model.clone(), ins.clone(), outs.clone(), OnComplete::once(|_, _| {})).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains("waiting for a free slot") && e.message.contains("request 1 did not complete within 5.0 sec"), "{}", e.message);
    let mut b = vec![0u8; BYTES];
    let e = dout.read(0, &mut b).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains("\"output\"") && e.message.contains("did not complete") && e.message.contains("5.0 sec"), "{}", e.message);
    let e = x.drain(0).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    drop(model);
}

/// Unload waits for the executions holding the model; one holder that
/// never lets go (here the test itself) makes it fail with NRT_TIMEOUT
/// after the request limit instead of waiting for ever.
#[test]
fn unload_gives_up_on_a_model_nobody_lets_go() {
    let (_dev, host) = host_with(LoadSettings::default());
    let _x = xus(1, None);
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let held = host.models().get(id).unwrap();
    let e = host.unload(id).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains(&format!("unloading model {id}")) && e.message.contains("1 execution(s) or callback(s) still hold it"), "{}", e.message);
    drop(held);
}
