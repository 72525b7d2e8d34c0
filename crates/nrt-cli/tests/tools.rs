//! `nrt ls`, `nrt monitor` and `nrt top` against a second process that
//! executes on the simulated device: the fields the real tools print,
//! read from the device status files (`docs/status-file.md`).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn status_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-tools-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn nrt(dir: &Path, args: &[&str]) -> Output {
    common::nrt_command().args(args).env("NEURON_SIM_STATUS_DIR", dir).env_remove("NEURON_SIM_INSTANCE").output().expect("run nrt")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A `nrt bench` executing the copy example until dropped (killed then).
struct Workload(Child);

impl Workload {
    fn start(dir: &Path) -> Workload {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/copy");
        let child = common::nrt_command()
            .args(["bench", example.to_str().unwrap(), "--iterations", "20000000", "--warmup", "0", "--host-only"])
            .env("NEURON_SIM_STATUS_DIR", dir)
            .env_remove("NEURON_SIM_INSTANCE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nrt bench");
        Workload(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Waits (at most 60 s) until `nrt ls -j` lists the workload with a
    /// loaded model and completed executions, and returns that listing.
    fn wait_visible(&mut self, dir: &Path) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(self.0.try_wait().unwrap().is_none(), "the workload exited early");
            let o = nrt(dir, &["ls", "--json-output"]);
            assert!(o.status.success(), "{}", text(&o.stderr));
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let listed = v[0]["neuron_processes"].as_array().unwrap().iter().any(|p| p["pid"] == self.pid());
            if listed {
                return v;
            }
            assert!(Instant::now() < deadline, "workload pid {} never appeared: {v}", self.pid());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().map(String::as_str).collect()
}

#[test]
fn ls_lists_the_executing_process_with_neuron_ls_fields() {
    let dir = status_dir("ls");
    let mut w = Workload::start(&dir);
    let v = w.wait_visible(&dir);
    let dev = &v[0];
    assert_eq!(
        keys(dev),
        [
            "neuron_device",
            "bdf",
            "cpu_affinity",
            "numa_node",
            "connected_to",
            "nc_count",
            "logical_neuroncore_config",
            "memory_size",
            "neuroncore_ids",
            "neuron_processes"
        ]
    );
    // The default instance: one trn2 device, 8 physical cores at LNC 2.
    assert_eq!((dev["nc_count"].as_u64(), dev["logical_neuroncore_config"].as_u64()), (Some(4), Some(2)));
    assert!(dev["numa_node"].is_string() && dev["bdf"].as_str().unwrap().ends_with(":00.0"));
    assert_eq!(dev["neuroncore_ids"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(dev["memory_size"].as_u64(), Some(96 << 30));
    let p = dev["neuron_processes"].as_array().unwrap().iter().find(|p| p["pid"] == w.pid()).unwrap();
    assert_eq!(keys(p), ["pid", "command", "neuron_runtime_version"]);
    // The whole command line, far past the slot's 63-byte copy, in the
    // JSON and the wide table.
    let whole = format!("{} bench {} --iterations 20000000 --warmup 0 --host-only", env!("CARGO_BIN_EXE_nrt"), Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/copy").display());
    assert!(whole.len() > 63);
    assert_eq!(p["command"].as_str().unwrap(), whole, "{p}");
    let table = text(&nrt(&dir, &["ls", "--wide"]).stdout);
    assert!(table.contains("| PID ") && table.contains(&w.pid().to_string()), "{table}");
    assert!(table.contains(&whole), "{table}");
    let short = text(&nrt(&dir, &["ls"]).stdout);
    assert!(short.contains("NEURON CORE IDS") && short.contains("0-3") && short.contains("logical-neuroncore-config: 2"), "{short}");
    // The default instance (one trn2 device) shows as the EC2 type of that shape.
    assert!(short.starts_with("instance-type: trn2.3xlarge\n"), "{short}");
}

#[test]
fn a_killed_process_is_stale_and_its_entry_is_reused_last() {
    let dir = status_dir("stale");
    let mut w = Workload::start(&dir);
    w.wait_visible(&dir);
    let dead = w.pid();
    drop(w); // SIGKILL: the entry is never released.
    let v: Value = serde_json::from_slice(&nrt(&dir, &["ls", "-j"]).stdout).unwrap();
    assert_eq!(v[0]["neuron_processes"], serde_json::json!([]), "a dead process is not listed: {v}");
    let file = dir.join("sim-trn2-1-nd0.nds");
    // The table's record of entry e: pid, start time, clear tick.
    let pid_of = |bytes: &[u8], e: usize| {
        let at = nrt_hal::status::table::record(e, nrt_hal::status::table::PID) * 8;
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
    };
    assert_eq!(pid_of(&std::fs::read(&file).unwrap(), 0), u64::from(dead), "the dead process's entry 0 is still taken in the store");
    let mut w2 = Workload::start(&dir);
    w2.wait_visible(&dir);
    let bytes = std::fs::read(&file).unwrap();
    // The driver hands out a never-used entry before a cleared one.
    assert_eq!((pid_of(&bytes, 0), pid_of(&bytes, 1)), (u64::from(dead), u64::from(w2.pid())), "the next process took entry 1");
    let v: Value = serde_json::from_slice(&nrt(&dir, &["ls", "-j"]).stdout).unwrap();
    assert_eq!(v[0]["neuron_processes"].as_array().map(Vec::len), Some(1), "only the live process is listed: {v}");
}

#[test]
fn monitor_reports_neuron_monitor_groups_while_a_process_executes() {
    let dir = status_dir("monitor");
    let mut w = Workload::start(&dir);
    w.wait_visible(&dir);
    let cfg = dir.join("monitor.json");
    std::fs::write(
        &cfg,
        r#"{"period":"1s","neuron_runtimes":[{"tag_filter":".*","metrics":[{"type":"neuroncore_counters"},{"type":"memory_used"},{"type":"neuron_runtime_vcpu_usage"},{"type":"execution_stats"}]}],
           "system_metrics":[{"type":"vcpu_usage"},{"type":"memory_info"},{"type":"neuron_hw_counters"}]}"#,
    )
    .unwrap();
    let o = nrt(&dir, &["monitor", "-c", cfg.to_str().unwrap(), "--count", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let r: Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(keys(&r), ["neuron_runtime_data", "system_data", "instance_info", "neuron_hardware_info"]);
    assert_eq!(
        keys(&r["instance_info"]),
        [
            "instance_name",
            "instance_id",
            "instance_type",
            "instance_availability_zone",
            "instance_availability_zone_id",
            "instance_region",
            "ami_id",
            "subnet_id",
            "error"
        ]
    );
    assert_eq!(
        keys(&r["neuron_hardware_info"]),
        [
            "neuron_device_type",
            "neuron_device_version",
            "neuroncore_version",
            "neuron_device_count",
            "neuron_device_memory_size",
            "neuroncore_per_device_count",
            "logical_neuroncore_config",
            "error"
        ]
    );
    let rt = r["neuron_runtime_data"].as_array().unwrap().iter().find(|x| x["pid"] == w.pid()).unwrap_or_else(|| panic!("{r}"));
    assert_eq!(keys(rt), ["pid", "address", "neuron_runtime_tag", "error", "report"]);
    let rep = &rt["report"];
    let mut groups = keys(rep);
    groups.sort();
    assert_eq!(groups, ["execution_stats", "memory_used", "neuron_runtime_vcpu_usage", "neuroncore_counters"]);
    for g in groups {
        assert!(rep[g]["period"].as_f64().unwrap() > 0.5 && rep[g]["error"] == "", "{g}: {}", rep[g]);
    }
    let nc = &rep["neuroncore_counters"]["neuroncores_in_use"]["0"];
    let util = nc["neuroncore_utilization"].as_f64().unwrap();
    assert!(util > 0.0 && util <= 100.0, "a core executing in a loop is busy: {nc}");
    assert!(nc["flops"].is_number() && nc["v3d"]["nc_v3.0"]["neuroncore_utilization"].is_number(), "{nc}");
    let es = &rep["execution_stats"];
    assert_eq!(keys(&es["error_summary"]), ["generic", "numerical", "transient", "model", "runtime", "hardware"]);
    assert_eq!(
        keys(&es["execution_summary"]),
        ["completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input", "failed_to_queue"]
    );
    assert!(es["execution_summary"]["completed"].as_u64().unwrap() > 0, "{es}");
    for l in ["total_latency", "device_latency"] {
        let p = &es["latency_stats"][l];
        assert_eq!(keys(p), ["p0", "p1", "p25", "p50", "p75", "p99", "p100"], "{l}");
        assert!(p["p0"].as_f64().unwrap() <= p["p50"].as_f64().unwrap() && p["p50"].as_f64().unwrap() <= p["p100"].as_f64().unwrap());
        assert!(p["p50"].as_f64().unwrap() < 1.0, "latencies are in seconds: {p}");
    }
    let mu = &rep["memory_used"];
    let used = &mu["neuron_runtime_used_bytes"];
    assert_eq!(keys(used), ["host", "neuron_device", "usage_breakdown"]);
    assert_eq!(keys(&used["usage_breakdown"]["host"]), ["application_memory", "constants", "dma_buffers", "tensors"]);
    let nc0 = &used["usage_breakdown"]["neuroncore_memory_usage"]["0"];
    assert_eq!(keys(nc0), ["constants", "model_code", "model_shared_scratchpad", "runtime_memory", "tensors"]);
    assert!(used["neuron_device"].as_u64().unwrap() > 0 && nc0["model_code"].as_u64().unwrap() > 0, "{used}");
    // Model code is the copy model's few records; the core's 16 MiB
    // instruction arena no model owns is the runtime's memory.
    assert!(nc0["model_code"].as_u64().unwrap() < 1 << 20 && nc0["runtime_memory"].as_u64().unwrap() >= 16 << 20, "{used}");
    let m = &mu["loaded_models"][0];
    assert_eq!(keys(m), ["name", "uuid", "model_id", "is_running", "subgraphs"]);
    assert_eq!(m["name"], "copy");
    assert_eq!(m["uuid"].as_str().unwrap().len(), 32);
    assert_eq!(keys(&m["subgraphs"]["sg_00"]), ["memory_used_bytes", "neuroncore_index", "neuron_device_index"]);
    assert_eq!(keys(&rep["neuron_runtime_vcpu_usage"]["vcpu_usage"]), ["user", "system"]);
    let sys = &r["system_data"];
    assert_eq!(keys(&sys["vcpu_usage"]), ["period", "average_usage", "usage_data", "context_switch_count", "error"]);
    assert_eq!(keys(&sys["vcpu_usage"]["average_usage"]), ["user", "nice", "system", "idle", "io_wait", "irq", "soft_irq"]);
    assert_eq!(keys(&sys["memory_info"]), ["period", "memory_total_bytes", "memory_used_bytes", "swap_total_bytes", "swap_used_bytes", "error"]);
    // No corrected-error counters: the simulated device has none, and the
    // fields are left out as neuron-monitor leaves out what has no source.
    assert_eq!(keys(&sys["neuron_hw_counters"]["neuron_devices"][0]), ["neuron_device_index", "mem_ecc_uncorrected", "sram_ecc_uncorrected"]);
    // The Prometheus form names neuron-monitor-prometheus.py's metrics.
    let o = nrt(&dir, &["monitor", "-c", cfg.to_str().unwrap(), "--count", "1", "--prometheus"]);
    let prom = text(&o.stdout);
    for name in ["neuroncore_utilization_ratio{", "execution_status_total{", "execution_latency_seconds{", "neuron_runtime_memory_used_bytes{", "system_memory_total_bytes "] {
        assert!(prom.contains(name), "{name} missing from {prom}");
    }
    assert!(prom.contains("status_type=\"completed\"") && prom.contains("# TYPE neuroncore_utilization_ratio gauge"), "{prom}");
}

/// The memory errors a device detected stay counted in its status file
/// after the process that saw them ended, by kind: an HBM error is not an
/// SRAM one, and other hardware-class errors (a DMA abort) are neither.
#[test]
fn monitor_reports_the_devices_memory_error_counters_by_kind() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/copy");
    let counters = |inject: &str| -> Value {
        let dir = status_dir(&format!("ecc-{inject}"));
        let run = Command::new(env!("CARGO_BIN_EXE_nrt"))
            .args(["run", example.to_str().unwrap()])
            .env("NEURON_SIM_STATUS_DIR", &dir)
            .env("NEURON_SIM_INJECT", inject)
            .env_remove("NEURON_SIM_INSTANCE")
            .output()
            .expect("run nrt run");
        assert!(!run.status.success(), "{inject}: the execution fails");
        let cfg = dir.join("hw.json");
        std::fs::write(&cfg, r#"{"period":"1s","system_metrics":[{"type":"neuron_hw_counters"}]}"#).unwrap();
        let o = nrt(&dir, &["monitor", "-c", cfg.to_str().unwrap(), "--count", "1"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let r: Value = serde_json::from_str(text(&o.stdout).lines().next().unwrap()).unwrap();
        r["system_data"]["neuron_hw_counters"]["neuron_devices"][0].clone()
    };
    let hbm = counters("hbm_ue");
    assert_eq!((hbm["mem_ecc_uncorrected"].as_u64(), hbm["sram_ecc_uncorrected"].as_u64()), (Some(1), Some(0)), "{hbm}");
    let sram = counters("sram_parity");
    assert_eq!((sram["mem_ecc_uncorrected"].as_u64(), sram["sram_ecc_uncorrected"].as_u64()), (Some(0), Some(1)), "{sram}");
    let dma = counters("dma_abort");
    assert_eq!((dma["mem_ecc_uncorrected"].as_u64(), dma["sram_ecc_uncorrected"].as_u64()), (Some(0), Some(0)), "{dma}");
}

#[test]
fn monitor_rejects_a_bad_config() {
    let dir = status_dir("badcfg");
    let cfg = dir.join("bad.json");
    std::fs::write(&cfg, r#"{"neuron_runtimes":[{"metrics":[{"type":"gpu_counters"}]}]}"#).unwrap();
    let o = nrt(&dir, &["monitor", "-c", cfg.to_str().unwrap(), "--count", "1"]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("gpu_counters") && text(&o.stderr).contains("neuroncore_counters"), "{}", text(&o.stderr));
}

/// A private tmux server (its own socket), killed when dropped.
struct Tmux(PathBuf);

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux").arg("-S").arg(&self.0).args(args).output().expect("run tmux")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

#[test]
fn top_shows_utilization_memory_and_the_process_under_tmux() {
    if Command::new("tmux").arg("-V").output().is_err() {
        nrt_test_support::skip!("tmux is not installed (Debian package tmux; scripts/test-all installs it)");
    }
    let dir = status_dir("top");
    let mut w = Workload::start(&dir);
    w.wait_visible(&dir);
    let tmux = Tmux(dir.join("tmux.sock"));
    let cmd = format!("NEURON_SIM_STATUS_DIR={} {} top --interval 0.5", dir.display(), env!("CARGO_BIN_EXE_nrt"));
    let o = tmux.cmd(&["new-session", "-d", "-x", "120", "-y", "40", "-s", "top", &cmd]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tab = format!(":{}", w.pid());
    let deadline = Instant::now() + Duration::from_secs(30);
    let screen = loop {
        let s = text(&tmux.cmd(&["capture-pane", "-p", "-t", "top"]).stdout);
        let nd0 = s.lines().find(|l| l.contains("ND0 ")).unwrap_or("").to_string();
        // A core executing in a loop shows a non-zero percentage.
        let busy = nd0.split('[').skip(1).filter_map(|p| p.split('%').next()?.trim().parse::<f64>().ok()).any(|u| u > 0.0);
        if busy && s.contains(&tab) && s.contains("    copy ") {
            break s;
        }
        assert!(Instant::now() < deadline, "nrt top never showed the workload busy:\n{s}");
        std::thread::sleep(Duration::from_millis(200));
    };
    for part in ["nrt top", "NeuronCore v3d Utilization (Avg:", "NC0", "vCPU Utilization", "Host Used Memory", "Device Used Memory", "Model Code", "Memory Usage Details", "ND 0 ", ">[1]:all<", "q: quit"] {
        assert!(screen.contains(part), "{part:?} missing from\n{screen}");
    }
    assert!(!screen.contains("[+]") && !screen.contains("[-]"), "rows that cannot expand carry no marker:\n{screen}");
    // `d` selects the workload's tab; `q` quits.
    tmux.cmd(&["send-keys", "-t", "top", "d"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let s = text(&tmux.cmd(&["capture-pane", "-p", "-t", "top"]).stdout);
        if s.contains(&format!(">[2]{tab}<")) {
            break;
        }
        assert!(Instant::now() < deadline, "tab 2 never selected:\n{s}");
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.cmd(&["send-keys", "-t", "top", "q"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.cmd(&["has-session", "-t", "top"]).status.success() {
        assert!(Instant::now() < deadline, "nrt top did not quit on q");
        std::thread::sleep(Duration::from_millis(100));
    }
}
