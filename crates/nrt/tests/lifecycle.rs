//! Lifecycle, topology and reservation against simulated devices.

use nrt::config::Env;
use nrt::log::{self, Level};
use nrt::runtime::{self, Lifecycle, RuntimeState};
use nrt::{NrtStatus, Runtime, RuntimeOptions};
use nrt_hal::{Arch, CoreId, Device};
use nrt_sim::{SimConfig, SimDevice};
use std::path::PathBuf;
use std::sync::Arc;

/// Devices of a simulated instance whose reservation locks live in a
/// directory private to `test` (so tests never see each other's cores).
fn sim(arch: Arch, devices: u32, test: &str) -> Vec<Arc<dyn Device>> {
    let dir: PathBuf = std::env::temp_dir().join(format!("nrt-lifecycle-{}-{test}", std::process::id()));
    let cfg = SimConfig::builder().arch(arch).devices(devices).locks(dir, test).build();
    SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect()
}

fn init(devices: &[Arc<dyn Device>], pairs: &[(&str, &str)]) -> nrt::NrtResult<Runtime> {
    Runtime::init(RuntimeOptions::new(devices.to_vec(), Env::from_pairs(pairs.iter().copied())))
}

#[test]
fn trn2_defaults_to_lnc2_and_reserves_every_core() {
    let devs = sim(Arch::Trn2, 1, "trn2-default");
    let rt = init(&devs, &[]).unwrap();
    let t = rt.topology();
    assert_eq!((t.lnc(), t.total_vnc(), t.visible_vnc()), (2, 4, 4));
    assert_eq!(rt.vcore(3).unwrap().physical, vec![CoreId(6), CoreId(7)]);
    assert_eq!(rt.reserved_cores(), vec![(0, (0..8).map(CoreId).collect())]);
    assert_eq!(rt.memory(0).unwrap().device_index(), 0);
    assert_eq!(rt.device(0).unwrap().info().backend, "sim");
    assert!(rt.device(1).is_err());
    rt.close().unwrap();
    assert!(rt.reserved_cores().is_empty());
}

#[test]
fn trn2_lnc1_exposes_eight_cores() {
    let devs = sim(Arch::Trn2, 1, "trn2-lnc1");
    let rt = init(&devs, &[("NEURON_LOGICAL_NC_CONFIG", "1")]).unwrap();
    assert_eq!((rt.topology().lnc(), rt.visible_vnc_count()), (1, 8));
    assert_eq!(rt.vcore(5).unwrap().physical, vec![CoreId(5)]);
}

#[test]
fn trn1_is_always_lnc1() {
    let devs = sim(Arch::Trn1, 2, "trn1");
    let cap = log::capture(Level::Warn);
    let rt = init(&devs, &[("NEURON_RT_VIRTUAL_CORE_SIZE", "2")]).unwrap();
    assert_eq!((rt.topology().lnc(), rt.total_vnc_count()), (1, 4));
    assert!(cap.contains("Logical NeuronCore size 2 is not supported on trn1"), "{}", cap.text());
    let v = rt.vcore(3).unwrap();
    assert_eq!((v.device, v.physical.clone()), (1, vec![CoreId(1)]));
}

#[test]
fn visible_cores_are_renumbered_and_only_they_are_reserved() {
    let devs = sim(Arch::Trn2, 2, "visible");
    let rt = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "3-5")]).unwrap();
    assert_eq!(rt.visible_vnc_count(), 3);
    let globals: Vec<u32> = rt.topology().vcores().iter().map(|v| v.global).collect();
    assert_eq!(globals, vec![3, 4, 5]);
    assert_eq!(rt.vcore(0).unwrap().physical, vec![CoreId(6), CoreId(7)]);
    assert_eq!(rt.vcore(1).unwrap().device, 1);
    assert_eq!(
        rt.reserved_cores(),
        vec![(0, vec![CoreId(6), CoreId(7)]), (1, vec![CoreId(0), CoreId(1), CoreId(2), CoreId(3)])]
    );
    assert_eq!(rt.vcore(3).unwrap_err().status, NrtStatus::Invalid);
}

#[test]
fn second_runtime_sees_cores_not_available() {
    let devs = sim(Arch::Trn2, 1, "conflict");
    let first = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "0-1")]).unwrap();
    let cap = log::capture(Level::Error);
    let err = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "1-2")]).unwrap_err();
    assert_eq!(err.status, NrtStatus::Failure);
    assert!(
        err.message.starts_with("Logical Neuron Core(s) not available - Requested:nc1-nc2 Available:2 Logical Core size 2"),
        "{err}"
    );
    assert!(err.message.contains(&format!("held by pid {}", std::process::id())), "{err}");
    // The failure is its one error line: cores another process holds are
    // not a failure a user reports, so no infodump.
    assert_eq!(cap.lines().len(), 1, "{}", cap.text());
    assert!(cap.contains("NRT:nrt_init") && cap.contains("held by pid"), "{}", cap.text());
    // NUM_CORES picks the free cores instead.
    let other = init(&devs, &[("NEURON_RT_NUM_CORES", "1")]).unwrap();
    assert_eq!(other.vcore(0).unwrap().global, 2);
    // Asking for everything fails while anything is held.
    let err = init(&devs, &[]).unwrap_err();
    assert!(err.message.starts_with("Logical Neuron Core(s) not available - Requested:4 Available:1"), "{err}");
    // Close releases: now the conflicting request succeeds.
    first.close().unwrap();
    drop(other);
    let again = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "1-2")]).unwrap();
    assert_eq!(again.visible_vnc_count(), 2);
}

#[test]
fn lnc1_message_names_neuroncores() {
    let devs = sim(Arch::Trn1, 1, "trn1-conflict");
    let _first = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "1")]).unwrap();
    let err = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "1")]).unwrap_err();
    assert!(err.message.starts_with("NeuronCore(s) not available - Requested:nc1-nc1 Available:1"), "{err}");
}

#[test]
fn lifecycle_state_machine() {
    let devs = sim(Arch::Trn2, 1, "lifecycle");
    let l = Lifecycle::new();
    assert_eq!(l.runtime().unwrap_err().status, NrtStatus::Uninitialized);
    let opts = RuntimeOptions::new(devs.clone(), Env::new());
    let rt = l.init(opts.clone()).unwrap();
    assert_eq!(l.state(), RuntimeState::Init);
    // A second init is a no-op returning the same runtime.
    assert!(Arc::ptr_eq(&rt, &l.init(opts.clone()).unwrap()));
    l.close().unwrap();
    assert_eq!(l.state(), RuntimeState::Closed);
    assert_eq!(l.runtime().unwrap_err().status, NrtStatus::Closed);
    assert_eq!(l.close().unwrap_err().status, NrtStatus::Closed);
    // Handles kept from before the close answer NRT_CLOSED.
    assert_eq!(rt.memory(0).unwrap_err().status, NrtStatus::Closed);
    assert_eq!(rt.device(0).err().map(|e| e.status), Some(NrtStatus::Closed));
    assert_eq!(rt.vcore(0).unwrap_err().status, NrtStatus::Closed);
    // Re-initialisation after close works (the cores were released).
    let rt2 = l.init(opts).unwrap();
    assert!(!Arc::ptr_eq(&rt, &rt2));
    assert_eq!(rt2.visible_vnc_count(), 4);
    l.close().unwrap();
}

#[test]
fn pre_init_queries_do_not_reserve() {
    let devs = sim(Arch::Trn2, 2, "pre-init");
    let env = Env::new().with("NEURON_RT_VISIBLE_CORES", "2-3");
    assert_eq!(runtime::total_vnc_count(&env, &devs).unwrap(), 8);
    assert_eq!(runtime::visible_vnc_count(&env, &devs).unwrap(), 2);
    assert_eq!(runtime::visible_vnc_count(&Env::new().with("NEURON_RT_NUM_CORES", "4"), &devs).unwrap(), 4);
    assert_eq!(runtime::visible_vnc_count(&Env::new(), &devs).unwrap(), 8);
    let lnc1 = Env::new().with("NEURON_LOGICAL_NC_CONFIG", "1");
    assert_eq!(runtime::total_vnc_count(&lnc1, &devs).unwrap(), 16);
    let info = runtime::instance_info(&Env::new(), &devs).unwrap();
    assert_eq!((info.family.value(), info.arch_name.as_str()), (5, "trn2"));
    // Nothing was reserved: a runtime can take every core.
    let rt = init(&devs, &[]).unwrap();
    assert_eq!(rt.visible_vnc_count(), 8);
    let v = runtime::version();
    assert_eq!(v.maintenance, 0);
}

#[test]
fn infodump_lists_everything_libnrt_does() {
    let devs = sim(Arch::Trn2, 1, "infodump");
    let rt = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "1-2"), ("NEURON_RT_EXEC_TIMEOUT", "60")]).unwrap();
    let dump = rt.infodump(Some((NrtStatus::ExecOob, "nrt_execute")));
    for needle in [
        "Neuron runtime information - please include in any support request",
        "[ cut here ]",
        "NRT version: nrt-rs ",
        "Device backend: sim",
        "Instance: family Trn2 (5)",
        "Failure: NRT_EXEC_OOB in nrt_execute()",
        "LNC: 2",
        "Visible cores: 1-2",
        "  NEURON_RT_EXEC_TIMEOUT=60",
        "  NEURON_RT_VISIBLE_CORES=1-2",
    ] {
        assert!(dump.contains(needle), "missing {needle:?} in\n{dump}");
    }
    // A failure a user would report: the line, then the block.
    let cap = log::capture(Level::Error);
    rt.report_failure("nrt_execute", &nrt::NrtError::new(NrtStatus::Timeout, "no END from nc0"));
    let lines = cap.lines();
    assert!(lines[0].contains("ERROR") && lines[0].contains("NRT:nrt_execute") && lines[0].ends_with(" no END from nc0"), "{lines:?}");
    assert!(lines.iter().any(|l| l == "Failure: NRT_TIMEOUT in nrt_execute()"), "{lines:?}");
    drop(cap);
    // An argument error: one line, no support dump.
    let cap = log::capture(Level::Error);
    rt.report_failure("nrt_load", &nrt::NrtError::invalid("bad neff"));
    let lines = cap.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("NRT:nrt_load") && lines[0].ends_with(" bad neff"), "{lines:?}");
}

#[test]
fn invalid_configuration_fails_init_with_invalid() {
    let devs = sim(Arch::Trn2, 1, "bad-config");
    let err = init(&devs, &[("NEURON_RT_EXEC_TIMEOUT", "soon")]).unwrap_err();
    assert_eq!(err.status, NrtStatus::Invalid);
    assert!(err.message.contains("NEURON_RT_EXEC_TIMEOUT=\"soon\""), "{err}");
    let err = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "0,2")]).unwrap_err();
    assert_eq!((err.status, err.message.starts_with("Logical Neuron cores are not contiguous")), (NrtStatus::Invalid, true));
    // A failed init left nothing reserved.
    assert!(init(&devs, &[]).is_ok());
}

#[test]
fn reset_cores_is_honoured_and_optional() {
    let devs = sim(Arch::Trn2, 1, "reset");
    let rt = init(&devs, &[("NEURON_RT_RESET_CORES", "0")]).unwrap();
    assert!(!rt.config().reset_cores);
    rt.close().unwrap();
    let rt = init(&devs, &[("NEURON_RT_RESET_CORES", "1")]).unwrap();
    assert!(rt.config().reset_cores);
}

#[test]
fn vnc_memory_stats_and_device_vcores() {
    use nrt::memory::{MemOwner, MemUsage};
    let dir = std::env::temp_dir().join(format!("nrt-lifecycle-{}-stats", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(2).hbm_bytes_per_channel(8 << 20).locks(dir, "stats").build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    let rt = init(&devs, &[("NEURON_RT_VISIBLE_CORES", "3-4"), ("NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", "2")]).unwrap();
    assert_eq!(rt.device_vcores(0), vec![vec![CoreId(6), CoreId(7)]]);
    assert_eq!(rt.device_vcores(1), vec![vec![CoreId(0), CoreId(1)]]);
    assert_eq!((rt.locate_vnc(0).unwrap(), rt.locate_vnc(1).unwrap()), ((0, 0), (1, 0)));
    assert!(rt.locate_vnc(2).is_err());
    let mem = rt.memory(0).unwrap();
    mem.alloc(CoreId(6), MemOwner::Runtime, MemUsage::Tensor, 4096, 0).unwrap();
    mem.alloc(CoreId(7), MemOwner::Model(1), MemUsage::Weight, 1000, 0).unwrap();
    mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::Tensor, 5, 0).unwrap();
    let s = rt.vnc_memory_stats(0).unwrap();
    assert_eq!((s.bytes_used, s.bytes_limit), (5096, 8 << 20));
    assert_eq!(rt.vnc_memory_stats(1).unwrap().bytes_used, 0);
    assert!(rt.vnc_memory_stats(2).is_err());
    // The allocation log honours NEURON_RT_DEBUG_MEMLOG_MAX_SIZE.
    let (events, dropped) = mem.memlog();
    assert_eq!((events.len(), dropped), (2, 1));
    assert!(mem.memlog_csv().lines().nth(2).unwrap().starts_with("2,alloc,"), "{}", mem.memlog_csv());
    let cap = log::capture(Level::Error);
    rt.log_oom_report();
    let text = cap.text();
    assert!(text.contains("Device memory usage of ND 0:") && text.contains("Device memory usage of ND 1:"), "{text}");
    assert!(text.contains("| NEFF 1 "), "{text}");
    rt.close().unwrap();
    assert_eq!(rt.vnc_memory_stats(0).unwrap_err().status, NrtStatus::Closed);
}

#[test]
fn init_logs_config_warnings_and_api_trace() {
    let devs = sim(Arch::Trn2, 1, "warnings");
    let cap = log::capture(Level::Debug);
    let rt = init(&devs, &[("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "100"), ("NEURON_RT_SOMETHING_NEW", "1")]).unwrap();
    assert_eq!(rt.config().xu_compute_max_queued_requests, 63);
    let text = cap.text();
    assert!(text.contains("WARN") && text.contains("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS=100 exceeds the maximum of 63; using 63"), "{text}");
    assert!(text.contains("NRT:nrt_init") && text.contains("API:IN: (framework=NoFw"), "{text}");
    assert!(text.contains("ignoring unknown variable NEURON_RT_SOMETHING_NEW"), "{text}");
    assert!(text.contains("Neuron Runtime nrt-rs "), "{text}");
}

#[test]
fn close_hooks_run_newest_first_before_memory_teardown() {
    use nrt::memory::{MemOwner, MemUsage};
    use std::sync::Mutex;
    let devs = sim(Arch::Trn2, 1, "hooks");
    let rt = init(&devs, &[]).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mem = rt.memory(0).unwrap().clone();
    let tier = mem.model_tier(CoreId(0), rt.models().mint_id());
    tier.alloc(MemUsage::Weight, 4096, 0).unwrap();
    let leftover = mem.alloc(CoreId(1), MemOwner::Runtime, MemUsage::Tensor, 64, 0).unwrap();
    {
        let order = Arc::clone(&order);
        rt.on_close(move || {
            order.lock().unwrap().push("first registered");
            Ok(())
        })
        .unwrap();
    }
    {
        let order = Arc::clone(&order);
        let mem = Arc::clone(&mem);
        rt.on_close(move || {
            // Memory is still intact when hooks run: the host frees its own.
            assert_eq!(mem.ledger().allocations, 2);
            tier.free_all()?;
            order.lock().unwrap().push("second registered");
            Err(nrt::NrtError::failure("one model failed to unstage"))
        })
        .unwrap();
    }
    assert!(Arc::ptr_eq(&rt.shared_models(), &rt.shared_models()));
    let err = rt.close().unwrap_err();
    assert_eq!(err.message, "one model failed to unstage");
    assert_eq!(*order.lock().unwrap(), vec!["second registered", "first registered"]);
    // Close freed what nobody else did, and later registrations are refused.
    assert_eq!(mem.ledger().total(), 0);
    assert!(mem.allocation(leftover).is_none());
    assert_eq!(rt.on_close(|| Ok(())).unwrap_err().status, NrtStatus::Closed);
}

#[test]
fn no_device_mode_reserves_nothing_but_keeps_handed_devices() {
    let devs = sim(Arch::Trn2, 1, "fake");
    let rt = init(&devs, &[("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2.48xlarge"), ("NEURON_RT_VISIBLE_CORES", "0-3")]).unwrap();
    assert!(rt.is_fake() && rt.reserved_cores().is_empty());
    assert_eq!((rt.total_vnc_count(), rt.visible_vnc_count()), (64, 4));
    assert_eq!(rt.instance_info().size.value(), 7);
    assert!(rt.memory(0).is_ok());
    assert!(rt.memory(1).unwrap_err().message.contains("no-device mode"));
    assert!(rt.infodump(None).contains("Device backend: none (no-device mode)"));
    // Every core is still free for a real runtime.
    let real = init(&devs, &[]).unwrap();
    assert_eq!(real.visible_vnc_count(), 4);
}

#[test]
fn pool_ucode_is_accepted_before_init_only_and_silently_replaces_the_stock_image() {
    use nrt::custom_ops::Q7Image;
    use nrt::custom_ops::ucode::ImageSource;
    let devs = sim(Arch::Trn2, 1, "ucode");
    let l = Lifecycle::new();
    // Without a registration the stock image is installed.
    let rt = l.init(RuntimeOptions::new(devs.clone(), Env::new())).unwrap();
    assert_eq!(rt.q7_image(), &Q7Image::stock());
    assert_eq!(rt.q7_image_source(), ImageSource::Stock);
    // While initialised: NRT_UNINITIALIZED (0xd), nothing stored.
    let mine = Q7Image { iram: b"\0asm\x01\0\0\0custom".to_vec(), dram: vec![9; 32] };
    let e = l.set_pool_eng_ucode(mine.clone()).unwrap_err();
    assert_eq!((e.status, e.status as i32), (NrtStatus::Uninitialized, 0xd));
    assert_eq!(l.registered_pool_ucode(), None);
    drop(rt);
    l.close().unwrap();
    // After close: NRT_CLOSED (0xe).
    let e = l.set_pool_eng_ucode(mine.clone()).unwrap_err();
    assert_eq!((e.status, e.status as i32), (NrtStatus::Closed, 0xe));

    // A fresh process-wide lifecycle: registered before init, installed at init.
    let l = Lifecycle::new();
    l.set_pool_eng_ucode(Q7Image { iram: vec![1], dram: vec![] }).unwrap();
    l.set_pool_eng_ucode(mine.clone()).unwrap(); // the last registration wins
    let rt = l.init(RuntimeOptions::new(devs, Env::new())).unwrap();
    assert_eq!(rt.q7_image(), &mine);
    assert_eq!(rt.q7_image_source(), ImageSource::Registered);
    drop(rt);
    l.close().unwrap();
}
