//! Core reservation across processes: a child process holds cores, the
//! parent is refused with libnrt's message naming the child's pid, and the
//! cores come back when the child is killed (the kernel drops its locks).

use nrt::config::Env;
use nrt::{NrtStatus, Runtime, RuntimeOptions};
use nrt_hal::{Arch, Device};
use nrt_sim::{SimConfig, SimDevice};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

const CHILD_DIR: &str = "NRT_TEST_RESERVATION_CHILD_DIR";

fn devices(dir: &Path) -> Vec<Arc<dyn Device>> {
    let cfg = SimConfig::builder().arch(Arch::Trn2).locks(dir, "xproc").build();
    SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect()
}

/// Runs only inside the child: reserve logical cores 0-1, say so, then
/// hold them until stdin closes or the process is killed.
#[test]
#[ignore = "entry point of the child process reservation_is_exclusive_across_processes_and_released_at_exit spawns"]
fn child_holder() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else { return };
    let devs = devices(Path::new(&dir));
    let rt = Runtime::init(RuntimeOptions::new(devs, Env::new().with("NEURON_RT_VISIBLE_CORES", "0-1"))).unwrap();
    println!("READY {}", std::process::id());
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(rt);
}

#[test]
fn reservation_is_exclusive_across_processes_and_released_at_exit() {
    if std::env::var_os(CHILD_DIR).is_some() {
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("nrt-xproc-{}", std::process::id()));
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(["--ignored", "--exact", "child_holder", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the child's READY line on a helper thread, so a child that
    // never gets there fails the test instead of hanging it.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test child_holder ... " before the child's own output.
            if let Some((_, pid)) = line.split_once("READY ") {
                let _ = tx.send(pid.trim().to_string());
                return;
            }
        }
    });
    let child_pid = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(pid) => pid,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("child did not reserve its cores: {e}");
        }
    };
    let devs = devices(&dir);
    let err = Runtime::init(RuntimeOptions::new(devs.clone(), Env::new().with("NEURON_RT_VISIBLE_CORES", "1-2"))).unwrap_err();
    assert_eq!(err.status, NrtStatus::Failure);
    assert!(err.message.starts_with("Logical Neuron Core(s) not available - Requested:nc1-nc2 Available:2"), "{err}");
    assert!(err.message.contains(&format!("held by pid {child_pid}")), "{err}");
    // Cores the child does not hold are free.
    let other = Runtime::init(RuntimeOptions::new(devs.clone(), Env::new().with("NEURON_RT_VISIBLE_CORES", "2-3"))).unwrap();
    drop(other);
    // A killed process releases its cores without running any cleanup.
    child.kill().unwrap();
    child.wait().unwrap();
    let rt = Runtime::init(RuntimeOptions::new(devs, Env::new().with("NEURON_RT_VISIBLE_CORES", "0-1"))).unwrap();
    assert_eq!(rt.visible_vnc_count(), 2);
    drop(rt);
    let _ = std::fs::remove_dir_all(&dir);
}
