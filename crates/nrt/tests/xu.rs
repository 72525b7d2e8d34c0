//! Asynchronous execution through execution units: sequence order,
//! backpressure, completion watchers, fault isolation between units,
//! implicit async with its callback and tensor waits, and a 4-thread
//! stress run of the copy example with verified outputs.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::{LoadSettings, ModelHost};
use nrt::model::{LoadedModel, ModelId};
use nrt::tensor::{Tensor, TensorSet};
use nrt::xu::seq::{XuId, XuKind, seq_num, seq_xu};
use nrt::xu::unit::OnComplete;
use nrt::xu::{XuSettings, Xus};
use nrt_sim::{FaultKind, FaultSpec};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BYTES: usize = 8 * 128 * 4;
const LONG: Duration = Duration::from_secs(60);

struct Rig {
    _dev: Arc<nrt_sim::SimDevice>,
    host: ModelHost,
    models: Vec<(u32, ModelId)>,
}

/// The copy example loaded on logical cores 0 and 1.
fn rig(settings: LoadSettings) -> Rig {
    let (dev, host) = host_with(settings);
    let neff = copy_neff();
    let models = (0..2u32).map(|v| (v, host.load(&neff, v as i32, -1).expect("load copy"))).collect();
    Rig { _dev: dev, host, models }
}

impl Rig {
    fn model(&self, vnc: u32) -> Arc<LoadedModel> {
        self.host.models().get(self.models[vnc as usize].1).expect("loaded")
    }
    fn core(&self, vnc: u32) -> nrt_hal::CoreId {
        self.host.vcores()[vnc as usize][0]
    }
    /// Device input and output tensors on `vnc`, the input filled from `seed`.
    fn io(&self, vnc: u32, seed: u64) -> (TensorSet, TensorSet, Arc<Tensor>, Arc<Tensor>, Vec<u8>) {
        let m = self.host.memory();
        let din = Arc::new(Tensor::allocate_device(m, self.core(vnc), BYTES as u64, "input").unwrap());
        let dout = Arc::new(Tensor::allocate_device(m, self.core(vnc), BYTES as u64, "output").unwrap());
        let bytes = data(BYTES, seed);
        din.write(0, &bytes).unwrap();
        let mut ins = TensorSet::new();
        ins.add("input", din.clone());
        let mut outs = TensorSet::new();
        outs.add("output", dout.clone());
        (ins, outs, din, dout, bytes)
    }
}

fn status_cell() -> (Arc<AtomicI32>, OnComplete) {
    let cell = Arc::new(AtomicI32::new(-1));
    let c = cell.clone();
    (cell, OnComplete::once(move |_, s: NrtStatus| c.store(s.code(), Ordering::SeqCst)))
}

#[test]
fn completions_arrive_in_sequence_order_and_get_sequence_is_monotonic() {
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings::default());
    let order = Arc::new(Mutex::new(Vec::new()));
    {
        let order = order.clone();
        xus.watch_unit(0, XuKind::Compute, 0, Arc::new(move |seq, st| order.lock().unwrap().push((seq, st)))).unwrap();
    }
    let (ins, outs, _din, dout, bytes) = rig.io(0, 1);
    let id = XuId::new(0, XuKind::Compute, 0).unwrap();
    let total = 40u64;
    let mut issued = Vec::new();
    let mut last_seen = xus.last_completed(0, XuKind::Compute, 0).unwrap();
    assert_eq!(last_seen, id.seq(0), "nothing completed yet");
    while (issued.len() as u64) < total {
        match xus.schedule_execute(0, rig.model(0), ins.clone(), outs.clone(), 0, None) {
            Ok(seq) => issued.push(seq),
            Err(e) => {
                assert_eq!(e.status, NrtStatus::QueueFull);
                std::thread::yield_now();
            }
        }
        let now = xus.last_completed(0, XuKind::Compute, 0).unwrap();
        assert!(now >= last_seen, "nrta_get_sequence went backwards");
        last_seen = now;
    }
    let expected: Vec<u64> = (1..=total).map(|n| id.seq(n)).collect();
    assert_eq!(issued, expected, "sequence ids are xu_id << 48 | 1, 2, 3, ...");
    assert!(xus.wait(*issued.last().unwrap(), LONG).unwrap());
    for s in &issued {
        assert!(xus.is_completed(*s).unwrap());
    }
    let got = order.lock().unwrap().clone();
    assert_eq!(got.iter().map(|(s, _)| *s).collect::<Vec<_>>(), expected);
    assert!(got.iter().all(|(_, st)| *st == NrtStatus::Success));
    assert_eq!(read_all(&dout), bytes);
    assert_eq!(xus.last_completed(0, XuKind::Compute, 0).unwrap(), id.seq(total));
    // Unknown sequences are NRT_INVALID: never issued, number 0, unused unit, bad id.
    assert_eq!(xus.is_completed(id.seq(total + 1)).unwrap_err().status, NrtStatus::Invalid);
    assert_eq!(xus.is_completed(id.seq(0)).unwrap_err().status, NrtStatus::Invalid);
    let unused = XuId::new(1, XuKind::Compute, 0).unwrap();
    assert_eq!(xus.is_completed(unused.seq(1)).unwrap_err().status, NrtStatus::Invalid);
    assert_eq!(xus.is_completed(0x000F_0000_0000_0001).unwrap_err().status, NrtStatus::Invalid);
    assert_eq!(seq_xu(issued[0]), id.code());
}

#[test]
fn a_full_queue_refuses_one_schedule_without_side_effects_then_accepts_after_a_completion() {
    let depth = 4;
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings { compute_depth: depth, other_depth: depth, ..XuSettings::default() });
    let (ins, outs, _din, dout, bytes) = rig.io(0, 2);
    // The first request's completion callback holds the worker until the
    // test releases it, so the queue fills deterministically.
    let (release, gate) = mpsc::channel::<()>();
    let gate = Mutex::new(gate);
    let first = OnComplete::once(move |_, _| {
        let _ = gate.lock().unwrap().recv_timeout(LONG);
    });
    let s1 = xus.schedule_execute(0, rig.model(0), ins.clone(), outs.clone(), 0, Some(first)).unwrap();
    for _ in 1..depth {
        xus.schedule_execute(0, rig.model(0), ins.clone(), outs.clone(), 0, None).unwrap();
    }
    let unit = xus.unit(XuId::new(0, XuKind::Compute, 0).unwrap()).unwrap();
    let submitted = unit.last_submitted();
    let dispatch = rig.host.cores().get(rig.core(0)).unwrap();
    // Let the worker reach the gate: it has rung the first doorbell.
    let t = Instant::now();
    while dispatch.doorbells() == 0 && t.elapsed() < LONG {
        std::thread::sleep(Duration::from_millis(1));
    }
    let rung = dispatch.doorbells();
    let (cell, done) = status_cell();
    let err = xus.schedule_execute(0, rig.model(0), ins.clone(), outs.clone(), 0, Some(done)).unwrap_err();
    assert_eq!(err.status, NrtStatus::QueueFull);
    assert_eq!(unit.last_submitted(), submitted, "a refused schedule takes no sequence number");
    assert_eq!(cell.load(Ordering::SeqCst), -1, "a refused schedule never reports a status");
    assert!(!xus.is_completed(s1).unwrap());
    assert_eq!(dispatch.doorbells(), rung, "a refused schedule touches no device");
    // One completion frees one slot.
    release.send(()).unwrap();
    assert!(xus.wait(s1, LONG).unwrap());
    let (cell, done) = status_cell();
    let s = xus.schedule_execute(0, rig.model(0), ins.clone(), outs.clone(), 0, Some(done)).unwrap();
    assert_eq!(seq_num(s), depth + 1);
    assert!(xus.wait(s, LONG).unwrap());
    assert_eq!(cell.load(Ordering::SeqCst), 0);
    assert_eq!(read_all(&dout), bytes);
}

#[test]
fn async_paths_refuse_host_tensors_and_bad_queues() {
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings::default());
    let (ins, outs, _o) = host_io(data(BYTES, 3), BYTES);
    let e = xus.schedule_execute(0, rig.model(0), ins, outs, 0, None).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains(nrt::xu::HOST_TENSOR_MESSAGE), "{}", e.message);
    let (ins, outs, din, dout, _) = rig.io(0, 3);
    assert_eq!(xus.schedule_execute(0, rig.model(0), ins, outs, 1, None).unwrap_err().status, NrtStatus::Invalid);
    let host_t = Arc::new(Tensor::allocate_host(16, "h").unwrap());
    assert_eq!(xus.tensor_copy(0, host_t, 0, dout.clone(), 0, 16, 0, None).unwrap_err().status, NrtStatus::Invalid);
    assert_eq!(xus.tensor_copy(0, din.clone(), BYTES as u64, dout.clone(), 0, 16, 0, None).unwrap_err().status, NrtStatus::Invalid);
    assert_eq!(xus.tensor_write(0, din, 0, vec![1, 2], 2, None).unwrap_err().status, NrtStatus::Invalid, "tensor-op has two queues");
}

#[test]
fn tensor_ops_write_copy_and_read_in_order() {
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings::default());
    let (_ins, _outs, din, dout, _) = rig.io(0, 4);
    let payload = data(2048, 44);
    let (wcell, wdone) = status_cell();
    xus.tensor_write(0, din.clone(), 100, payload.clone(), 0, Some(wdone)).unwrap();
    xus.tensor_copy(0, din.clone(), 100, dout.clone(), 8, 2048, 0, None).unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let s = xus.tensor_read(0, dout.clone(), 8, 2048, Box::new(move |b| sink.lock().unwrap().extend_from_slice(b)), 0, None).unwrap();
    assert!(xus.wait(s, LONG).unwrap());
    assert_eq!(wcell.load(Ordering::SeqCst), 0);
    assert_eq!(*got.lock().unwrap(), payload);
    assert_eq!(seq_xu(s), XuId::new(0, XuKind::TensorOp, 0).unwrap().code());
}

#[test]
fn a_hang_on_one_unit_times_out_then_refuses_with_101_while_the_other_unit_works() {
    let settings = LoadSettings { exec_timeout: Duration::from_millis(300), ..LoadSettings::default() };
    let rig = rig(settings);
    let xus = Xus::new(XuSettings::default());
    let (ins0, outs0, _, _, _) = rig.io(0, 5);
    let (ins1, outs1, _, dout1, bytes1) = rig.io(1, 6);
    rig._dev.inject(FaultSpec::new(FaultKind::Hang).on_core(rig.core(0).0));
    let (cell, done) = status_cell();
    let s = xus.schedule_execute(0, rig.model(0), ins0.clone(), outs0.clone(), 0, Some(done)).unwrap();
    // Queued behind the hang: completes with 101 without running.
    let (cell2, done2) = status_cell();
    let s2 = xus.schedule_execute(0, rig.model(0), ins0.clone(), outs0.clone(), 0, Some(done2)).unwrap();
    assert!(xus.wait(s2, LONG).unwrap());
    assert!(xus.is_completed(s).unwrap());
    assert_eq!(cell.load(Ordering::SeqCst), NrtStatus::Timeout.code());
    assert_eq!(cell2.load(Ordering::SeqCst), NrtStatus::ExecUnitUnrecoverable.code());
    let e = xus.schedule_execute(0, rig.model(0), ins0, outs0, 0, None).unwrap_err();
    assert_eq!(e.status, NrtStatus::ExecUnitUnrecoverable);
    assert_eq!(e.status.code(), 101);
    // The other logical core's unit is unaffected.
    for _ in 0..3 {
        let (c, d) = status_cell();
        let s = xus.schedule_execute(1, rig.model(1), ins1.clone(), outs1.clone(), 0, Some(d)).unwrap();
        assert!(xus.wait(s, LONG).unwrap());
        assert_eq!(c.load(Ordering::SeqCst), 0);
    }
    assert_eq!(read_all(&dout1), bytes1);
}

#[test]
fn implicit_async_reports_through_the_callback_and_tensor_access_waits() {
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings { compute_depth: 2, other_depth: 2, ..XuSettings::default() });
    let (ins, outs, _din, dout, bytes) = rig.io(0, 7);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut seqs = Vec::new();
    for job in 0..6u64 {
        let calls = calls.clone();
        // More requests than the queue holds: the call blocks instead of
        // refusing.
        let s = xus.execute_implicit(0, rig.model(0), ins.clone(), outs.clone(), OnComplete::once(move |_, st| calls.lock().unwrap().push((job, st)))).unwrap();
        seqs.push(s);
    }
    // A host read of an output an execution still uses waits for it.
    let mut b = vec![0u8; BYTES];
    dout.read(0, &mut b).unwrap();
    assert_eq!(b, bytes);
    xus.drain(0).unwrap();
    assert!(!dout.is_in_flight());
    let got = calls.lock().unwrap().clone();
    assert_eq!(got, (0..6).map(|j| (j, NrtStatus::Success)).collect::<Vec<_>>());
    assert!(seqs.iter().all(|s| xus.is_completed(*s).unwrap()));
}

#[test]
fn streaming_completion_records_count_outputs_on_sync_and_async_paths() {
    let rig = rig(LoadSettings::default());
    let model = rig.model(0);
    assert!(nrt::exec::streams_outputs(model.program.as_ref().unwrap()), "a single-core program streams");
    let (ins, outs, _din, dout, _) = rig.io(0, 8);
    rig.host.execute(rig.models[0].1, &ins, &outs).unwrap();
    // Counted from the device's record (single-core programs have no
    // end-of-execution fallback), and already when the harvest saw DONE.
    assert_eq!(dout.output_completions(), 1);
    let xus = Xus::new(XuSettings::default());
    let at_completion = Arc::new(Mutex::new(Vec::new()));
    {
        let (at, d) = (at_completion.clone(), dout.clone());
        xus.watch_unit(0, XuKind::Compute, 0, Arc::new(move |_, _| at.lock().unwrap().push(d.output_completions()))).unwrap();
    }
    let mut last = 0;
    for _ in 0..3 {
        loop {
            match xus.schedule_execute(0, model.clone(), ins.clone(), outs.clone(), 0, None) {
                Ok(s) => {
                    last = s;
                    break;
                }
                Err(e) => assert_eq!(e.status, NrtStatus::QueueFull),
            }
        }
    }
    assert!(xus.wait(last, LONG).unwrap());
    assert_eq!(*at_completion.lock().unwrap(), vec![2, 3, 4]);
    dout.reset_output_completions();
    assert_eq!(dout.output_completions(), 0);
}

/// Four submitting threads, 10 000 executions each, two per unit: every
/// completion arrives exactly once and in order, and every output is the
/// input that was written for that execution (a unique stamp at both ends
/// of every buffer, the whole buffer compared on every 500th).
#[test]
fn four_threads_times_ten_thousand_copies_lose_and_duplicate_nothing() {
    const PER_THREAD: u64 = 10_000;
    const RING: usize = 4;
    let rig = Arc::new(rig(LoadSettings::default()));
    let xus = Arc::new(Xus::new(XuSettings::default()));
    let seen: Vec<Arc<Mutex<Vec<u64>>>> = (0..2).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
    for (v, s) in seen.iter().enumerate() {
        let s = s.clone();
        xus.watch_unit(v as u32, XuKind::Compute, 0, Arc::new(move |seq, st| {
            assert_eq!(st, NrtStatus::Success);
            s.lock().unwrap().push(seq);
        }))
        .unwrap();
    }
    let completions = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (rig, xus, completions) = (rig.clone(), xus.clone(), completions.clone());
            std::thread::spawn(move || {
                let vnc = (t % 2) as u32;
                let slots: Vec<_> = (0..RING).map(|k| rig.io(vnc, 1000 * t + k as u64)).collect();
                let mut last: Vec<Option<(u64, u64, Arc<AtomicI32>)>> = vec![None; RING];
                let stamp = |i: u64| -> [u8; 16] {
                    let mut s = [0u8; 16];
                    s[..8].copy_from_slice(&t.to_le_bytes());
                    s[8..].copy_from_slice(&i.to_le_bytes());
                    s
                };
                let verify = |k: usize, i: u64, full: bool, cell: &AtomicI32| {
                    assert_eq!(cell.load(Ordering::SeqCst), 0, "thread {t} execution {i}");
                    let out = &slots[k].3;
                    let mut head = [0u8; 16];
                    let mut tail = [0u8; 16];
                    out.read(0, &mut head).unwrap();
                    out.read((BYTES - 16) as u64, &mut tail).unwrap();
                    assert_eq!((head, tail), (stamp(i), stamp(i)), "thread {t} execution {i}: output is not its input");
                    if full {
                        let mut want = slots[k].4.clone();
                        want[..16].copy_from_slice(&stamp(i));
                        want[BYTES - 16..].copy_from_slice(&stamp(i));
                        assert_eq!(read_all(out), want);
                    }
                };
                for i in 0..PER_THREAD {
                    let k = (i as usize) % RING;
                    if let Some((seq, prev, cell)) = last[k].take() {
                        assert!(xus.wait(seq, LONG).unwrap());
                        verify(k, prev, prev % 500 == 0, &cell);
                    }
                    let (ins, outs, din, _, _) = &slots[k];
                    din.write(0, &stamp(i)).unwrap();
                    din.write((BYTES - 16) as u64, &stamp(i)).unwrap();
                    loop {
                        let (cell, done) = status_cell();
                        let c2 = completions.clone();
                        let done = OnComplete::once(move |q, s| {
                            c2.fetch_add(1, Ordering::Relaxed);
                            done.call(q, s)
                        });
                        match xus.schedule_execute(vnc, rig.model(vnc), ins.clone(), outs.clone(), 0, Some(done)) {
                            Ok(seq) => {
                                last[k] = Some((seq, i, cell));
                                break;
                            }
                            Err(e) => {
                                assert_eq!(e.status, NrtStatus::QueueFull);
                                std::thread::yield_now();
                            }
                        }
                    }
                }
                for (k, l) in last.iter().enumerate() {
                    if let Some((seq, prev, cell)) = l {
                        assert!(xus.wait(*seq, LONG).unwrap());
                        verify(k, *prev, true, cell);
                    }
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let total = 4 * PER_THREAD;
    assert_eq!(completions.load(Ordering::SeqCst), total);
    for (v, s) in seen.iter().enumerate() {
        let id = XuId::new(v as u32, XuKind::Compute, 0).unwrap();
        let want: Vec<u64> = (1..=2 * PER_THREAD).map(|n| id.seq(n)).collect();
        assert_eq!(*s.lock().unwrap(), want, "unit {v}: every sequence once, in order");
    }
    eprintln!("stress: {total} executions in {:.2?}", t0.elapsed());
}

/// Once the last queued request has completed the unit holds nothing:
/// the model and tensors are referenced only by their owners again, and
/// the model unloads at once (whatever the queue does with requests after
/// they ran, the caller that saw everything complete holds the last
/// references).
#[test]
fn a_drained_unit_holds_no_reference_to_models_or_tensors() {
    let rig = rig(LoadSettings::default());
    let xus = Xus::new(XuSettings { compute_depth: 4, other_depth: 4, ..XuSettings::default() });
    let (ins, outs, din, dout, _) = rig.io(0, 7);
    let model = rig.model(0);
    let base = (Arc::strong_count(&model), Arc::strong_count(&din), Arc::strong_count(&dout));
    for round in 0..3 {
        // Fill the queue (several times over) and wait for the last one.
        let mut last = 0;
        for _ in 0..10 {
            loop {
                match xus.schedule_execute(0, model.clone(), ins.clone(), outs.clone(), 0, None) {
                    Ok(s) => {
                        last = s;
                        break;
                    }
                    Err(e) if e.status == NrtStatus::QueueFull => std::thread::yield_now(),
                    Err(e) => panic!("schedule: {e}"),
                }
            }
        }
        assert!(xus.wait(last, LONG).unwrap(), "round {round}");
        assert_eq!((Arc::strong_count(&model), Arc::strong_count(&din), Arc::strong_count(&dout)), base, "round {round}");
    }
    drop((ins, outs));
    let id = model.id;
    drop(model);
    let t = Instant::now();
    rig.host.unload(id).unwrap();
    assert!(t.elapsed() < Duration::from_millis(500), "unload waited {:?}", t.elapsed());
}

/// An execution an execution unit runs is counted in the device's status
/// file (what `nrt top` and `nrt monitor` read) as a synchronous one is:
/// its outcome on the model's core and its host latency
/// (docs/status-file.md).
#[test]
fn async_executions_publish_outcomes_and_latencies_to_the_status_file() {
    let dir = std::env::temp_dir().join(format!("nrt-xu-status-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = nrt_sim::SimConfig::builder().deterministic(true).locks(dir.join("locks"), "xu-status").status_dir(Some(dir.join("status"))).build();
    let dev = Arc::new(nrt_sim::SimDevice::new(&cfg, 0));
    let host = ModelHost::with_lnc(dev.clone(), 2, LoadSettings::default()).expect("host");
    let model = host.models().get(host.load(&copy_neff(), 0, -1).expect("load copy")).expect("loaded");
    let core = host.vcores()[0][0];
    let m = host.memory();
    let mut ins = TensorSet::new();
    ins.add("input", Arc::new(Tensor::allocate_device(m, core, BYTES as u64, "input").unwrap()));
    let mut outs = TensorSet::new();
    outs.add("output", Arc::new(Tensor::allocate_device(m, core, BYTES as u64, "output").unwrap()));
    let xus = Xus::new(XuSettings::default());
    let runs = 5u64;
    let mut last = 0;
    for _ in 0..runs {
        last = xus.schedule_execute(0, model.clone(), ins.clone(), outs.clone(), 0, None).unwrap();
    }
    assert!(xus.wait(last, LONG).unwrap(), "the executions completed");
    let file = std::fs::read_dir(dir.join("status")).unwrap().flatten().map(|e| e.path()).find(|p| p.extension().is_some_and(|x| x == "nds")).expect("a datastore");
    let status = nrt_ndl::nds::read(&file).unwrap();
    let me = status.processes.iter().find(|p| p.pid == std::process::id()).expect("this process's entry");
    let completed: u64 = me.cores.iter().map(|c| c.outcome(nrt_hal::status::Outcome::Completed)).sum();
    assert_eq!(completed, runs, "outcomes per core: {:?}", me.cores.iter().map(|c| c.outcomes).collect::<Vec<_>>());
    assert_eq!(me.total_latency.iter().sum::<u64>(), runs, "one host latency per execution");
    drop(xus);
    drop(model);
    let _ = std::fs::remove_dir_all(&dir);
}
