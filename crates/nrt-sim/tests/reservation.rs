//! Core reservation across processes: the test binary re-runs itself as a
//! child that tries to reserve the same core.

use nrt_hal::{CoreId, Device, HalError};
use nrt_sim::{SimConfig, SimDevice};
use std::process::Command;

const CHILD_ENV: &str = "NRT_SIM_RESERVATION_CHILD_NS";
const EXIT_RESERVED: i32 = 0;
const EXIT_BUSY: i32 = 3;
const EXIT_OTHER: i32 = 4;

fn device(namespace: &str) -> SimDevice {
    let cfg = SimConfig::builder()
        .locks(std::env::temp_dir().join("nrt-sim-reservation"), namespace)
        .build();
    SimDevice::new(&cfg, 0)
}

/// Child side: only does something when spawned by the parent test (the
/// variable carries the namespace); exits with a code the parent checks.
#[test]
#[ignore = "helper run as a child process by another_process_sees_the_reservation"]
fn reservation_child() {
    let Ok(ns) = std::env::var(CHILD_ENV) else { return };
    let dev = device(&ns);
    let code = match dev.reserve_cores(&[CoreId(0), CoreId(1)]) {
        Ok(_) => EXIT_RESERVED,
        Err(HalError::Busy { cores, .. }) if cores == vec![0] => EXIT_BUSY,
        Err(e) => {
            eprintln!("unexpected: {e}");
            EXIT_OTHER
        }
    };
    std::process::exit(code);
}

fn spawn_child(ns: &str) -> i32 {
    let exe = std::env::current_exe().expect("test binary path");
    let status = Command::new(exe)
        .args(["--ignored", "--exact", "reservation_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, ns)
        .status()
        .expect("spawn child test process");
    status.code().unwrap_or(-1)
}

#[test]
fn another_process_sees_the_reservation() {
    let ns = format!("xproc-{}", std::process::id());
    let dev = device(&ns);
    let held = dev.reserve_cores(&[CoreId(0)]).expect("parent reserves core 0");
    assert_eq!(spawn_child(&ns), EXIT_BUSY, "child must get Busy naming core 0");
    drop(held);
    assert_eq!(spawn_child(&ns), EXIT_RESERVED, "child reserves once the parent released");
    // The child's exit released its cores without any cleanup call.
    let again = dev.reserve_cores(&[CoreId(0), CoreId(1)]).expect("released at child exit");
    assert_eq!(again.cores(), &[CoreId(0), CoreId(1)]);
}
