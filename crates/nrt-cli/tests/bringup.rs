//! `nrt run`, `nrt bench` and `nrt run --ranks` bring the runtime up as
//! libnrt.so's `nrt_init` does: they run on the logical core
//! `NEURON_RT_VISIBLE_CORES` names and reserve their cores, so another
//! process's reservation stops them with libnrt's message.

mod common;

use nrt_hal::{CoreId, CoreReservation};
use std::path::Path;
use std::process::{Command, Output};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).to_str().unwrap().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `nrt ARGS` reserving in `locks`, with `NEURON_RT_VISIBLE_CORES` as
/// given (unset for None) and the default simulated instance.
fn nrt(locks: &Path, visible: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nrt"));
    c.args(args).env("XDG_RUNTIME_DIR", locks);
    for v in ["NEURON_SIM_INSTANCE", "NEURON_LOGICAL_NC_CONFIG", "NEURON_RT_VIRTUAL_CORE_SIZE", "NEURON_RT_NUM_CORES", "NEURON_RT_VISIBLE_CORES"] {
        c.env_remove(v);
    }
    if let Some(v) = visible {
        c.env("NEURON_RT_VISIBLE_CORES", v);
    }
    c.output().expect("run nrt")
}

/// Reserves physical cores of device 0 as another process would, in the
/// directory and namespace the command's simulated instance uses.
fn hold(locks: &Path, cores: &[u32]) -> CoreReservation {
    let sim = nrt_sim::SimConfig::from_vars(|_| None).unwrap();
    let cores: Vec<CoreId> = cores.iter().map(|&c| CoreId(c)).collect();
    CoreReservation::acquire(&locks.join("nrt-rs"), &sim.lock_namespace, 0, &cores).unwrap()
}

#[test]
fn run_and_bench_honour_visible_cores_and_other_processes_reservations() {
    let locks = common::lock_dir();
    let copy = example("copy");
    // The copy example is LNC 2: logical core 3 is physical cores 6 and 7.
    let o = nrt(&locks, Some("3"), &["run", &copy]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("model  on NC 3 (ND 0, physical cores 6,7)"), "{}", text(&o.stdout));
    let o = nrt(&locks, Some("3"), &["bench", &copy, "--iterations", "3", "--warmup", "0", "--host-only"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("model on NC 3 (ND 0, physical cores 6,7)"), "{}", text(&o.stdout));

    let held = hold(&locks, &[6, 7]);
    let me = std::process::id().to_string();
    for args in [vec!["run", copy.as_str()], vec!["bench", copy.as_str(), "--iterations", "3", "--warmup", "0", "--host-only"]] {
        let o = nrt(&locks, Some("3"), &args);
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{args:?} ran on a core another process holds:\n{}", text(&o.stdout));
        assert!(err.contains("Logical Neuron Core(s) not available - Requested:nc3-nc3") && err.contains(&me), "{args:?}: {err}");
    }
    // Another logical core is free...
    let o = nrt(&locks, Some("2"), &["run", &copy]);
    assert!(o.status.success() && text(&o.stdout).contains("model  on NC 2 (ND 0, physical cores 4,5)"), "{}{}", text(&o.stdout), text(&o.stderr));
    // ...but without NEURON_RT_VISIBLE_CORES a process asks for every core,
    // as libnrt does.
    let o = nrt(&locks, None, &["run", &copy]);
    assert!(!o.status.success() && text(&o.stderr).contains("not available"), "{}", text(&o.stderr));
    drop(held);
    let o = nrt(&locks, None, &["run", &copy]);
    assert!(o.status.success() && text(&o.stdout).contains("model  on NC 0 (ND 0, physical cores 0,1)"), "{}{}", text(&o.stdout), text(&o.stderr));
}

#[test]
fn run_ranks_runs_on_the_visible_cores_it_reserves() {
    let locks = common::lock_dir();
    let tp = example("tp-mlp");
    // Ranks run at LNC 1: logical cores 2 and 3 are physical cores 2 and 3.
    let held = hold(&locks, &[0, 1]);
    let o = nrt(&locks, Some("2-3"), &["run", "--ranks", "2", &tp]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("2 ranks: outputs identical on every rank"), "{}", text(&o.stdout));
    drop(held);
    let _held = hold(&locks, &[3]);
    let o = nrt(&locks, Some("2-3"), &["run", "--ranks", "2", &tp]);
    let err = text(&o.stderr);
    assert!(!o.status.success() && err.contains("NeuronCore(s) not available - Requested:nc2-nc3"), "{err}");
    let o = nrt(&locks, Some("5"), &["run", "--ranks", "2", &tp]);
    let err = text(&o.stderr);
    assert!(!o.status.success() && err.contains("--ranks 2: 2 rank(s) in this process need one logical core each and 1 are visible") && err.contains("NEURON_RT_VISIBLE_CORES=5"), "{err}");
}

/// Two processes contend for a core through the emulated driver's core
/// lock (CRWL_NC_RANGE_MARK): this process marks physical cores 6 and 7
/// through `NdlDevice`, and `nrt run` on the emulated driver gets libnrt's
/// message for the logical core they make up, runs on another, and on the
/// first once the marks are released.
#[test]
fn the_emulated_drivers_core_lock_holds_across_processes() {
    use nrt_hal::Device;
    let locks = common::lock_dir();
    let copy = example("copy");
    let base = nrt_sim::SimConfig::from_vars(|_| None).unwrap();
    let cfg = nrt_sim::SimConfig::builder().locks(locks.join("nrt-rs"), &base.lock_namespace).build();
    let dev = nrt_ndl::emulated(std::sync::Arc::new(nrt_sim::SimDevice::new(&cfg, 0)), 0, 1).unwrap();
    let held = dev.reserve_cores(&[CoreId(6), CoreId(7)]).unwrap();
    let run = |visible: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_nrt"));
        c.args(["run", copy.as_str()]).env("XDG_RUNTIME_DIR", &locks).env("NRT_DEVICE", "emulated-driver");
        for v in ["NEURON_SIM_INSTANCE", "NEURON_LOGICAL_NC_CONFIG", "NEURON_RT_VIRTUAL_CORE_SIZE", "NEURON_RT_NUM_CORES"] {
            c.env_remove(v);
        }
        c.env("NEURON_RT_VISIBLE_CORES", visible).output().expect("run nrt")
    };
    let o = run("3");
    let err = text(&o.stderr);
    assert!(!o.status.success(), "ran on cores another process marked:\n{}", text(&o.stdout));
    let me = format!("pid {}", std::process::id());
    assert!(err.contains("Logical Neuron Core(s) not available - Requested:nc3-nc3") && err.contains("NEURON_IOCTL_CRWL_NC_RANGE_MARK_EXT0"), "{err}");
    assert!(err.contains(&me), "the message names the holder, {me}: {err}");
    let o = run("2");
    assert!(o.status.success() && text(&o.stdout).contains("physical cores 4,5"), "{}{}", text(&o.stdout), text(&o.stderr));
    drop(held);
    let o = run("3");
    assert!(o.status.success() && text(&o.stdout).contains("physical cores 6,7"), "{}{}", text(&o.stdout), text(&o.stderr));
}
