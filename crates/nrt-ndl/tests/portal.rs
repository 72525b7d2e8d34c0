//! The driver portal end to end without hardware: `NdlDevice` over the
//! emulated driver over the simulator passes the HAL conformance suite
//! (every HAL call crossing the ioctl ABI as struct bytes), and its
//! failures name the ioctl and errno.

use nrt_hal::{CoreId, Device, DeviceAddr, HalError};
use nrt_ndl::abi::cmd;
use nrt_sim::{SimConfig, SimDevice};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

fn unique_namespace(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("ndl-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

fn lock_dir() -> std::path::PathBuf {
    std::env::temp_dir().join("nrt-ndl-portal")
}

fn portal(cfg: &SimConfig) -> nrt_ndl::NdlDevice {
    nrt_ndl::emulated(Arc::new(SimDevice::new(cfg, 0)), 0, 1).expect("open the emulated driver")
}

mod trn2_emulated {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder().locks(lock_dir(), &unique_namespace("trn2")).build();
        Box::new(portal(&cfg))
    }
    nrt_hal::device_conformance_tests!(make);
}

mod trn1_emulated_deterministic {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder()
            .instance("trn1.2xlarge")
            .unwrap()
            .deterministic(true)
            .locks(lock_dir(), &unique_namespace("trn1"))
            .build();
        Box::new(portal(&cfg))
    }
    nrt_hal::device_conformance_tests!(make);
}

#[test]
fn the_device_reports_the_emulated_driver_and_the_simulators_shape() {
    let cfg = SimConfig::builder().locks(lock_dir(), &unique_namespace("info")).build();
    let sim = SimDevice::new(&cfg, 0);
    let want = sim.info().clone();
    let dev = nrt_ndl::emulated(Arc::new(sim), 0, 1).unwrap();
    assert_eq!(dev.info().backend, "emulated-driver");
    assert_eq!((dev.info().arch.arch, dev.info().physical_cores, &dev.info().hbm), (want.arch.arch, want.physical_cores, &want.hbm));
    // Discovery asked the driver: basic info, compatible version, driver info.
    for c in [cmd::DEVICE_BASIC_INFO, cmd::COMPATIBLE_VERSION, cmd::DRIVER_INFO_GET] {
        assert_eq!(dev.ioctl_count(c), 1, "{}", nrt_ndl::abi::command_name(c));
    }
}

#[test]
fn an_allocation_is_mem_alloc_v2mt64_and_a_doorbell_one_semaphore_increment() {
    let cfg = SimConfig::builder().locks(lock_dir(), &unique_namespace("count")).build();
    let dev = portal(&cfg);
    let before = dev.ioctl_total();
    let a = dev.alloc(nrt_hal::MemoryLocation::Hbm { channel: 0 }, 4096, 0).unwrap();
    assert_eq!(dev.ioctl_count(cmd::MEM_ALLOC_V2MT64), 1);
    assert_eq!(dev.ioctl_count(cmd::MEM_GET_EXTENDED_INFO), 1);
    let t = dev.ioctl_total();
    dev.semaphore_increment(CoreId(0), 3, 1).unwrap();
    assert_eq!(dev.ioctl_total() - t, 1);
    assert_eq!(dev.ioctl_count(cmd::SEMAPHORE_INCREMENT), 1);
    dev.free(a).unwrap();
    assert_eq!(dev.ioctl_total() - before, 4, "{:?}", dev.ioctl_counts());
}

#[test]
fn an_ioctl_failure_names_the_command_and_errno() {
    let cfg = SimConfig::builder().locks(lock_dir(), &unique_namespace("errno")).build();
    let dev = portal(&cfg);
    let ch = dev.info().hbm[0];
    let mut b = [0u8; 8];
    match dev.read(ch.base.offset(ch.size), &mut b) {
        Err(HalError::InvalidAddress { reason, .. }) => {
            assert!(reason.contains("NEURON_IOCTL_BAR_READ failed: errno 22"), "{reason}");
        }
        other => panic!("a read past HBM must fail: {other:?}"),
    }
    match dev.semaphore_read(CoreId(dev.info().physical_cores), 0) {
        Err(HalError::InvalidAddress { reason, .. }) => {
            assert!(reason.contains("NEURON_IOCTL_SEMAPHORE_READ failed: errno 22") && reason.contains("does not exist"), "{reason}");
        }
        other => panic!("a core past the last must fail: {other:?}"),
    }
    assert!(matches!(dev.free(DeviceAddr(12345)), Err(HalError::InvalidAddress { .. })));
}

/// Over the emulated driver the runtime's datastore is one
/// ACQUIRE_NEURON_DS (pid 0) and the mapping of the entry it answers: the
/// same entry the simulator behind it writes (the cores it marked), which
/// the tools read through `nrt_ndl::nds` as they read the driver's store,
/// and which is cleared when the last holder closes.
#[test]
fn the_datastore_is_acquired_once_and_the_tools_read_what_both_sides_wrote() {
    use nrt_hal::status::{MemCategory, Outcome};
    let ns = unique_namespace("nds");
    let dir = std::env::temp_dir().join(format!("nrt-ndl-nds-{ns}"));
    let cfg = SimConfig::builder().locks(lock_dir(), &ns).status_dir(Some(dir.clone())).build();
    let dev = portal(&cfg);
    assert_eq!(dev.ioctl_count(cmd::ACQUIRE_NEURON_DS), 0, "nothing acquired before the first publication");
    let w = dev.status().expect("an entry through the portal");
    w.add_memory(Some(0), MemCategory::Tensors, 4096);
    w.execution(0, Outcome::Completed, None, 1_000);
    assert!(dev.status().is_some());
    assert_eq!(dev.ioctl_count(cmd::ACQUIRE_NEURON_DS), 1, "acquired once, then the mapping is used");
    let held = dev.reserve_cores(&[CoreId(1)]).unwrap();
    let store = nrt_hal::status::status_file(&dir, &ns, 0);
    let ds = nrt_ndl::nds::Datastore::open(&store).unwrap();
    let me = std::process::id();
    assert_eq!(ds.apps().iter().map(|a| a.1).collect::<Vec<_>>(), vec![me], "one entry for this process");
    assert_eq!(ds.acquire(u32::MAX), Err(libc::ENOENT), "a pid without an entry");
    let d = ds.read().unwrap();
    let p = &d.processes[0];
    assert_eq!(p.reserved_cores(), vec![1], "the simulator's write, in the runtime's entry");
    assert_eq!((p.cores[0].mem(MemCategory::Tensors), p.cores[0].outcome(Outcome::Completed)), (4096, 1));
    assert_eq!(p.total_samples.since(0), vec![1_000]);
    drop(held);
    drop(dev);
    let d = nrt_ndl::nds::read(&store).unwrap();
    assert!(d.processes.is_empty() && d.stale.is_empty(), "released and cleared on close: {:?}", d.processes);
    let _ = std::fs::remove_dir_all(&dir);
}
