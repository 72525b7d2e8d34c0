//! The system trace end to end on the simulated device: events from
//! what the device wrote (nc_exec_running pairs at the START / END
//! record timestamps, one pair per physical core) and from the runtime
//! (load, execute, tensor operations), consumed once, nothing while off.
//! The session is process-wide, so these tests take one lock.

mod exec_support;

use exec_support::*;
use nrt::tensor::{Tensor, TensorSet};
use nrt::trace::{self, FetchOptions, TraceConfig};
use nrt_hal::EngineId;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

const BYTES: usize = 8 * 128 * 4;

fn lock() -> std::sync::MutexGuard<'static, ()> {
    trace::session::TEST_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn fetch_all() -> Vec<Value> {
    let json = trace::fetch(&FetchOptions::default()).expect("fetch");
    let v: Value = serde_json::from_str(&json).expect("fetched JSON parses");
    v["events"].as_array().expect("events array").clone()
}

/// (tracking_id -> (start, stop)) of the events of `ty`.
fn pairs<'a>(events: &'a [Value], ty: &str) -> BTreeMap<u64, (Option<&'a Value>, Option<&'a Value>)> {
    let mut out: BTreeMap<u64, (Option<&Value>, Option<&Value>)> = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == ty) {
        let slot = out.entry(e["tracking_id"].as_u64().unwrap()).or_default();
        match e["phase"].as_str() {
            Some("start") => slot.0 = Some(e),
            Some("stop") => slot.1 = Some(e),
            p => panic!("{ty} with phase {p:?}"),
        }
    }
    out
}

fn device_io(host: &nrt::load::ModelHost) -> (TensorSet, TensorSet, Arc<Tensor>) {
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let din = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "input").unwrap());
    let dout = Arc::new(Tensor::allocate_device(&memory, core, BYTES as u64, "output").unwrap());
    let mut ins = TensorSet::new();
    ins.add("input", din.clone());
    let mut outs = TensorSet::new();
    outs.add("output", dout);
    (ins, outs, din)
}

#[test]
fn nc_exec_running_pairs_follow_the_device_clock() {
    let _g = lock();
    trace::stop();
    let (dev, host) = host();
    let core = host.vcores()[0][0];
    trace::start(&TraceConfig::default(), Vec::new()).unwrap();
    let id = host.load(&copy_neff(), 0, -1).expect("load copy");
    let (ins, outs, din) = device_io(&host);
    din.write(0, &data(BYTES, 1)).unwrap();
    const N: usize = 6;
    let mut sp_clock_after = Vec::new();
    for _ in 0..N {
        host.execute(id, &ins, &outs).unwrap();
        sp_clock_after.push(dev.engine_clock(core, EngineId::Sp).expect("SP clock"));
    }
    let events = fetch_all();
    let running = pairs(&events, "nc_exec_running");
    assert_eq!(running.len(), N, "one pair per execution of a one-core model: {events:#?}");
    let mut last_stop = 0;
    for ((_, (start, stop)), sp_end) in running.iter().zip(&sp_clock_after) {
        let (start, stop) = (start.expect("start"), stop.expect("stop"));
        let ps = |e: &Value| e["data"]["nc_timestamp_ps"].as_u64().unwrap();
        let (s, e) = (ps(start), ps(stop));
        assert!(e > s, "an execution takes device time");
        assert!(s >= last_stop, "executions follow each other on the device clock");
        // SP waits for every engine and exits last: its clock is the END.
        assert_eq!(e, *sp_end, "stop is the device's END timestamp");
        assert_eq!(start["data"]["nc_timestamp_ns"].as_u64().unwrap(), s / 1000);
        assert_eq!(start["data"]["exec_id"], stop["data"]["exec_id"]);
        assert_eq!(stop["data"]["device_core_idx"].as_u64(), Some(u64::from(core.0)));
        assert_eq!(stop["nc_idx"].as_u64(), Some(0));
        last_stop = e;
    }
    // The host-side spans: load, one nrt_execute per call, the tensor write.
    let execs = pairs(&events, "nrt_execute");
    assert_eq!(execs.len(), N);
    assert!(execs.values().all(|(s, e)| s.is_some() && e.is_some_and(|e| e["data"]["status"] == 0)));
    let exec_ids: Vec<_> = execs.values().map(|(_, e)| e.unwrap()["data"]["exec_id"].clone()).collect();
    let hw_ids: Vec<_> = running.values().map(|(_, e)| e.unwrap()["data"]["exec_id"].clone()).collect();
    assert_eq!(exec_ids, hw_ids, "device and host events of one execution share its exec_id");
    let loads = pairs(&events, "nrt_load");
    assert_eq!(loads.len(), 1);
    assert_eq!(loads.values().next().unwrap().1.unwrap()["data"]["model_id"].as_u64(), Some(u64::from(id)));
    let writes = pairs(&events, "nrt_tensor_write");
    assert_eq!(writes.values().next().and_then(|p| p.1).unwrap()["data"]["size"].as_u64(), Some(BYTES as u64));
    assert_eq!(pairs(&events, "nrt_tensor_allocate").len(), 2);
    // The first execution switched the core to this model.
    assert_eq!(events.iter().filter(|e| e["event_type"] == "nrt_model_switch").count(), 1);
    // Consumed once.
    assert!(fetch_all().is_empty());
    // Stopped: nothing is captured, and fetch is refused.
    trace::stop();
    host.execute(id, &ins, &outs).unwrap();
    assert!(trace::fetch(&FetchOptions::default()).is_err());
    // Restarted with only nc_exec_running on a ring of 2 events.
    let mut cfg = TraceConfig { max_events_per_nc: 2, types: 0, ..Default::default() };
    cfg.set_type("nc_exec_running", true).unwrap();
    trace::start(&cfg, Vec::new()).unwrap();
    for _ in 0..3 {
        host.execute(id, &ins, &outs).unwrap();
    }
    let json = trace::fetch(&FetchOptions::default()).unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    let events = v["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "ring capacity: {json}");
    assert!(events.iter().all(|e| e["event_type"] == "nc_exec_running"));
    assert_eq!(v["overwritten_events"][0]["count"].as_u64(), Some(4), "{json}");
    trace::stop();
    drop((ins, outs, din));
    host.unload(id).unwrap();
    host.close().unwrap();
}

#[test]
fn a_disabled_core_captures_nothing() {
    let _g = lock();
    trace::stop();
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).expect("load copy");
    let (ins, outs, _din) = device_io(&host);
    let mut cfg = TraceConfig::default();
    cfg.set_core(0, false);
    trace::start(&cfg, Vec::new()).unwrap();
    host.execute(id, &ins, &outs).unwrap();
    assert!(fetch_all().is_empty());
    trace::stop();
    host.unload(id).unwrap();
}

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

/// LNC 2: the compiler's two-subgraph NEFF runs on both physical cores of
/// the logical core, and each execution gives one pair per physical core,
/// same exec_id, same logical nc_idx.
#[test]
fn lnc2_gives_one_pair_per_physical_core() {
    let Ok(neff) = std::fs::read(NEFF) else {
        nrt_test_support::skip!("{NEFF} is absent (the compiler's sample lives beside the checkout)");
    };
    let _g = lock();
    trace::stop();
    let (_dev, host) = host();
    let id = host.load(&neff, 0, -1).expect("load matmul_small");
    let (ins_sig, outs_sig) = host.tensor_info(id).unwrap();
    let mut ins = TensorSet::new();
    for s in &ins_sig {
        ins.add(&s.name, Arc::new(Tensor::from_host_bytes(data(s.size_bytes().unwrap() as usize, 3), &s.name)));
    }
    let mut outs = TensorSet::new();
    for s in &outs_sig {
        outs.add(&s.name, Arc::new(Tensor::allocate_host(s.size_bytes().unwrap(), &s.name).unwrap()));
    }
    let phys: Vec<u32> = host.vcores()[0].iter().map(|c| c.0).collect();
    let map = phys.iter().map(|p| (0, *p, 0)).collect();
    trace::start(&TraceConfig::default(), map).unwrap();
    for _ in 0..3 {
        host.execute(id, &ins, &outs).unwrap();
    }
    let events = fetch_all();
    trace::stop();
    let running = pairs(&events, "nc_exec_running");
    assert_eq!(running.len(), 6, "two physical cores x three executions");
    let mut by_exec: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (s, e) in running.values() {
        let (s, e) = (s.unwrap(), e.unwrap());
        assert_eq!(s["nc_idx"], 0);
        assert!(e["data"]["nc_timestamp_ps"].as_u64() > s["data"]["nc_timestamp_ps"].as_u64());
        by_exec.entry(e["data"]["exec_id"].as_u64().unwrap()).or_default().push(e["data"]["device_core_idx"].as_u64().unwrap());
    }
    assert_eq!(by_exec.len(), 3);
    for cores in by_exec.values() {
        let mut c = cores.clone();
        c.sort();
        assert_eq!(c, phys.iter().map(|p| u64::from(*p)).collect::<Vec<_>>());
    }
    host.unload(id).unwrap();
}

/// Asynchronous executions: the submit is an instant with the request's
/// sequence id, the execution the unit runs carries it on its
/// nrt_execute pair and its device pair, the wait is a pair with it too.
#[test]
fn async_requests_carry_their_sequence_ids() {
    use nrt::xu::{XuSettings, Xus};
    let _g = lock();
    trace::stop();
    let (_dev, host) = host();
    let id = host.load(&copy_neff(), 0, -1).expect("load copy");
    let (ins, outs, _din) = device_io(&host);
    let xus = Xus::new(XuSettings::default());
    trace::start(&TraceConfig::default(), Vec::new()).unwrap();
    let model = host.models().get(id).unwrap();
    let seq = xus.schedule_execute(0, model.clone(), ins.clone(), outs.clone(), 0, None).unwrap();
    assert!(xus.wait(seq, std::time::Duration::from_secs(30)).unwrap());
    let events = fetch_all();
    trace::stop();
    let with_seq = |ty: &str| events.iter().filter(|e| e["event_type"] == ty && e["data"]["seq_id"].as_u64() == Some(seq)).count();
    assert_eq!(with_seq("nrt_model_submit"), 1, "{events:#?}");
    assert_eq!(with_seq("nrt_execute"), 2, "the start and stop of the execution the unit ran");
    assert_eq!(with_seq("nrt_async_sema_wait"), 2, "the wait's start and stop");
    assert_eq!(pairs(&events, "nc_exec_running").len(), 1);
    drop(model);
    xus.shutdown();
    host.unload(id).unwrap();
}
