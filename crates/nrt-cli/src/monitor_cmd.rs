//! `nrt monitor`: neuron-monitor for the simulated instance. Every period
//! it writes one JSON report (neuron-monitor's groups and field names) to
//! stdout, built from two reads of the devices' datastores, or with
//! `--prometheus` the same metrics in the Prometheus text format under
//! the names neuron-monitor-prometheus.py exports.

use crate::observe::{DeviceColumns, HostColumns, Instance, Sample, utilization};
use anyhow::{Context, Result, bail};
use nrt_hal::status::{ErrorClass, MemCategory, Outcome};
use nrt_hal::status_read::{ProcessStatus, Samples, percentile_of};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Runtime metric groups.
pub const RUNTIME_GROUPS: [&str; 4] = ["neuroncore_counters", "memory_used", "neuron_runtime_vcpu_usage", "execution_stats"];
/// System metric groups.
pub const SYSTEM_GROUPS: [&str; 3] = ["vcpu_usage", "memory_info", "neuron_hw_counters"];

/// A parsed `-c` config: the period of each enabled group and the tag filter.
#[derive(Clone, Debug)]
pub struct Config {
    /// Root period.
    pub period: Duration,
    /// Enabled runtime groups with their periods.
    pub runtime: BTreeMap<String, Duration>,
    /// Enabled system groups with their periods.
    pub system: BTreeMap<String, Duration>,
    /// Processes whose `NEURON_PROCESS_TAG` (or pid) matches.
    pub tag_filter: Option<regex_lite::Regex>,
}

/// Parses `"1s"`, `"500ms"`, `"2m"` or a bare number of seconds.
pub fn parse_period(s: &str) -> Result<Duration> {
    let t = s.trim();
    let (num, mul) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().with_context(|| format!("period {s:?}: expected e.g. \"1s\", \"500ms\" or \"2m\""))?;
    if !(v > 0.0) || !v.is_finite() {
        bail!("period {s:?}: must be positive");
    }
    Ok(Duration::from_secs_f64(v * mul))
}

impl Config {
    /// Every group every 5 s (neuron-monitor without `-c`).
    pub fn default_all() -> Config {
        let p = Duration::from_secs(5);
        Config {
            period: p,
            runtime: RUNTIME_GROUPS.iter().map(|g| (g.to_string(), p)).collect(),
            system: SYSTEM_GROUPS.iter().map(|g| (g.to_string(), p)).collect(),
            tag_filter: None,
        }
    }

    /// Parses a config file's JSON.
    pub fn parse(text: &str) -> Result<Config> {
        let v: Value = serde_json::from_str(text).context("monitor config is not JSON")?;
        let root = match v.get("period") {
            Some(Value::String(s)) => parse_period(s)?,
            Some(other) => bail!("monitor config: period must be a string like \"1s\", got {other}"),
            None => Duration::from_secs(5),
        };
        let group_period = |m: &Value, inherited: Duration| -> Result<Duration> {
            match m.get("period") {
                Some(Value::String(s)) => parse_period(s),
                Some(other) => bail!("monitor config: period must be a string, got {other}"),
                None => Ok(inherited),
            }
        };
        let mut cfg = Config { period: root, runtime: BTreeMap::new(), system: BTreeMap::new(), tag_filter: None };
        if let Some(rts) = v.get("neuron_runtimes") {
            let rts = rts.as_array().context("monitor config: neuron_runtimes must be an array")?;
            for rt in rts {
                let rp = group_period(rt, root)?;
                if let Some(f) = rt.get("tag_filter") {
                    let f = f.as_str().context("monitor config: tag_filter must be a string")?;
                    cfg.tag_filter = Some(regex_lite::Regex::new(&format!("^(?:{f})$")).with_context(|| format!("monitor config: tag_filter {f:?} is not a regular expression"))?);
                }
                for m in rt.get("metrics").and_then(Value::as_array).into_iter().flatten() {
                    let ty = m.get("type").and_then(Value::as_str).context("monitor config: every metric needs a \"type\"")?;
                    if !RUNTIME_GROUPS.contains(&ty) {
                        bail!("monitor config: unknown runtime metric type {ty:?}; known: {}", RUNTIME_GROUPS.join(", "));
                    }
                    cfg.runtime.insert(ty.to_string(), group_period(m, rp)?);
                }
            }
        }
        if let Some(sys) = v.get("system_metrics") {
            for m in sys.as_array().context("monitor config: system_metrics must be an array")? {
                let ty = m.get("type").and_then(Value::as_str).context("monitor config: every metric needs a \"type\"")?;
                if !SYSTEM_GROUPS.contains(&ty) {
                    bail!("monitor config: unknown system metric type {ty:?}; known: {}", SYSTEM_GROUPS.join(", "));
                }
                cfg.system.insert(ty.to_string(), group_period(m, root)?);
            }
        }
        Ok(cfg)
    }

    /// The tick: the shortest enabled period.
    pub fn tick(&self) -> Duration {
        self.runtime.values().chain(self.system.values()).copied().min().unwrap_or(self.period)
    }
}

/// A process seen across devices: (device, slot status) pairs.
struct Runtime<'a> {
    pid: u32,
    tag: String,
    slots: Vec<(u32, &'a ProcessStatus)>,
}

fn runtimes(s: &Sample) -> Vec<Runtime<'_>> {
    let mut by_pid: BTreeMap<(u32, u64), Runtime<'_>> = BTreeMap::new();
    for (d, p) in s.processes() {
        by_pid.entry((p.pid, p.start_time)).or_insert_with(|| Runtime { pid: p.pid, tag: p.tag.clone(), slots: Vec::new() }).slots.push((d, p));
    }
    by_pid.into_values().collect()
}

fn proc_cpu_ticks(pid: u32) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

/// `/proc/stat` cpu lines: name -> 7 fields + the context switch count.
fn system_cpu() -> (BTreeMap<String, [u64; 7]>, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let mut cpus = BTreeMap::new();
    let mut ctxt = 0;
    for l in text.lines() {
        let mut it = l.split_whitespace();
        match it.next() {
            Some(n) if n.starts_with("cpu") => {
                let v: Vec<u64> = it.take(7).filter_map(|x| x.parse().ok()).collect();
                if v.len() == 7 {
                    cpus.insert(n.to_string(), [v[0], v[1], v[2], v[3], v[4], v[5], v[6]]);
                }
            }
            Some("ctxt") => ctxt = it.next().and_then(|x| x.parse().ok()).unwrap_or(0),
            _ => {}
        }
    }
    (cpus, ctxt)
}

/// What one tick reads besides the datastores.
struct HostSample {
    cpus: BTreeMap<String, [u64; 7]>,
    ctxt: u64,
    procs: BTreeMap<u32, (u64, u64)>,
}

fn host_sample(s: &Sample) -> HostSample {
    let (cpus, ctxt) = system_cpu();
    let procs = s.processes().filter_map(|(_, p)| proc_cpu_ticks(p.pid).map(|t| (p.pid, t))).collect();
    HostSample { cpus, ctxt, procs }
}

const CPU_FIELDS: [&str; 7] = ["user", "nice", "system", "idle", "io_wait", "irq", "soft_irq"];

fn cpu_usage(before: &[u64; 7], after: &[u64; 7]) -> Value {
    let d: Vec<u64> = (0..7).map(|i| after[i].saturating_sub(before[i])).collect();
    let total: u64 = d.iter().sum::<u64>().max(1);
    let mut m = Map::new();
    for (i, f) in CPU_FIELDS.iter().enumerate() {
        m.insert(f.to_string(), json!(round2(d[i] as f64 * 100.0 / total as f64)));
    }
    Value::Object(m)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn meminfo() -> BTreeMap<String, u64> {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.to_string(), v.split_whitespace().next()?.parse::<u64>().ok()? * 1024))
        })
        .collect()
}

/// neuron-monitor's latency percentiles (seconds) of the samples a
/// period recorded; null when it recorded none.
fn latency(mut samples: Vec<u64>) -> Value {
    let mut m = Map::new();
    for (name, p) in [("p0", 0.0), ("p1", 1.0), ("p25", 25.0), ("p50", 50.0), ("p75", 75.0), ("p99", 99.0), ("p100", 100.0)] {
        match percentile_of(&mut samples, p) {
            Some(ns) => m.insert(name.into(), json!(ns as f64 / 1e9)),
            None => return Value::Null,
        };
    }
    Value::Object(m)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One report: neuron-monitor's top-level object.
fn report(inst: &Instance, cfg: &Config, due: &[&str], prev: &Sample, prev_host: &HostSample, now: &Sample, now_host: &HostSample) -> Value {
    let secs = now.at.duration_since(prev.at).as_secs_f64();
    let period = json!(round6(secs));
    let nc = inst.nc_per_device();
    let lnc = inst.lnc;
    let ticks = 100.0; // USER_HZ on Linux.
    let mut rt_data = Vec::new();
    for rt in runtimes(now) {
        let label = if rt.tag.is_empty() { rt.pid.to_string() } else { rt.tag.clone() };
        if let Some(f) = &cfg.tag_filter
            && !f.is_match(&label)
        {
            continue;
        }
        let mut rep = Map::new();
        let prev_of = |d: u32, p: &ProcessStatus| prev.find(d, p.pid, p.start_time);
        if due.contains(&"neuroncore_counters") {
            let mut in_use = Map::new();
            for &(d, p) in &rt.slots {
                let plnc = if p.lnc == 0 { lnc } else { p.lnc };
                let mut by_logical: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                for c in p.reserved_cores() {
                    by_logical.entry(d * nc + c / plnc).or_default().push(c);
                }
                for (l, phys) in by_logical {
                    let utils: Vec<f64> = phys.iter().map(|&c| utilization(prev_of(d, p), p, c as usize, secs)).collect();
                    let mut entry = Map::new();
                    entry.insert("neuroncore_utilization".into(), json!(round2(utils.iter().sum::<f64>() / utils.len().max(1) as f64)));
                    // The PE arrays' floating-point operations over the
                    // period (the device counts them per physical core).
                    let flops: u64 = phys.iter().map(|&c| flops_between(prev_of(d, p), p, c as usize)).sum();
                    entry.insert("flops".into(), json!(if secs > 0.0 { (flops as f64 / secs).round() } else { 0.0 }));
                    if inst.arch.arch == nrt_hal::Arch::Trn2 && plnc == 2 {
                        let v3d: Map<String, Value> = phys
                            .iter()
                            .zip(&utils)
                            .map(|(c, u)| (format!("nc_v3.{}", d * inst.arch.cores_per_device + c), json!({"neuroncore_utilization": round2(*u)})))
                            .collect();
                        entry.insert("v3d".into(), Value::Object(v3d));
                    }
                    in_use.insert(l.to_string(), Value::Object(entry));
                }
            }
            rep.insert("neuroncore_counters".into(), json!({"period": period, "neuroncores_in_use": in_use, "error": ""}));
        }
        if due.contains(&"execution_stats") {
            let mut outcomes = [0u64; 6];
            let mut errors = [0u64; 6];
            for &(d, p) in &rt.slots {
                let b = prev_of(d, p);
                for (c, cc) in p.cores.iter().enumerate() {
                    let bc = b.and_then(|b| b.cores.get(c));
                    for i in 0..6 {
                        outcomes[i] += cc.outcomes[i].saturating_sub(bc.map_or(0, |x| x.outcomes[i]));
                        errors[i] += cc.errors[i].saturating_sub(bc.map_or(0, |x| x.errors[i]));
                    }
                }
            }
            let es: Map<String, Value> = ErrorClass::NAMES.iter().enumerate().map(|(i, n)| (n.to_string(), json!(errors[i]))).collect();
            let xs: Map<String, Value> = Outcome::NAMES.iter().enumerate().map(|(i, n)| (n.to_string(), json!(outcomes[i]))).collect();
            // Latencies: the samples each slot (one per device) recorded
            // in the period (its most recent ones when more came than a
            // ring holds), together.
            let period_samples = |f: &dyn Fn(&ProcessStatus) -> &Samples| -> Vec<u64> {
                rt.slots.iter().flat_map(|&(d, p)| f(p).since(prev_of(d, p).map_or(0, |b| f(b).count))).collect()
            };
            let total = period_samples(&|p| &p.total_samples);
            let device = period_samples(&|p| &p.device_samples);
            rep.insert(
                "execution_stats".into(),
                json!({
                    "period": period,
                    "error_summary": es,
                    "execution_summary": xs,
                    "latency_stats": {
                        "total_latency": latency(total),
                        "device_latency": latency(device),
                    },
                    "error": "",
                }),
            );
        }
        if due.contains(&"memory_used") {
            let mut host = [0u64; MemCategory::COUNT];
            let mut per_nc: BTreeMap<u32, DeviceColumns> = BTreeMap::new();
            let mut models = Vec::new();
            for &(d, p) in &rt.slots {
                let plnc = if p.lnc == 0 { lnc } else { p.lnc };
                for (i, v) in p.host_memory.iter().enumerate() {
                    host[i] += v;
                }
                for (c, cc) in p.cores.iter().enumerate() {
                    if cc.memory_total() == 0 && p.cores_mask & (1 << c) == 0 {
                        continue;
                    }
                    let cols = DeviceColumns::of(&cc.memory);
                    let e = per_nc.entry(d * nc + c as u32 / plnc).or_default();
                    e.tensors += cols.tensors;
                    e.constants += cols.constants;
                    e.model_code += cols.model_code;
                    e.runtime_memory += cols.runtime_memory;
                    e.scratchpad += cols.scratchpad;
                }
                for m in &p.models {
                    let cols = DeviceColumns::of(&m.memory);
                    let running = p.cores.get(m.core as usize).is_some_and(|c| c.running > 0);
                    models.push(json!({
                        "name": m.name,
                        "uuid": hex(&m.uuid),
                        "model_id": m.id,
                        "is_running": running,
                        "subgraphs": {"sg_00": {
                            "memory_used_bytes": {
                                "host": m.host_bytes,
                                "neuron_device": cols.total(),
                                "usage_breakdown": {
                                    "host": host_breakdown(&HostColumns::of(&m.host_memory)),
                                    "neuron_device": {"constants": cols.constants, "model_code": cols.model_code, "runtime_memory": cols.runtime_memory + cols.scratchpad, "tensors": cols.tensors},
                                },
                            },
                            "neuroncore_index": d * nc + m.vnc % nc.max(1),
                            "neuron_device_index": d,
                        }},
                    }));
                }
            }
            let hc = HostColumns::of(&host);
            let device_total: u64 = per_nc.values().map(DeviceColumns::total).sum();
            let ncs: Map<String, Value> = per_nc
                .iter()
                .map(|(l, c)| {
                    (
                        l.to_string(),
                        json!({"constants": c.constants, "model_code": c.model_code, "model_shared_scratchpad": c.scratchpad, "runtime_memory": c.runtime_memory, "tensors": c.tensors}),
                    )
                })
                .collect();
            rep.insert(
                "memory_used".into(),
                json!({
                    "period": period,
                    "neuron_runtime_used_bytes": {
                        "host": hc.total(),
                        "neuron_device": device_total,
                        "usage_breakdown": {
                            "host": host_breakdown(&hc),
                            "neuroncore_memory_usage": ncs,
                        },
                    },
                    "loaded_models": models,
                    "error": "",
                }),
            );
        }
        if due.contains(&"neuron_runtime_vcpu_usage") {
            let (u, s) = match (prev_host.procs.get(&rt.pid), now_host.procs.get(&rt.pid)) {
                (Some(b), Some(a)) if secs > 0.0 => {
                    (round2(a.0.saturating_sub(b.0) as f64 / ticks / secs * 100.0), round2(a.1.saturating_sub(b.1) as f64 / ticks / secs * 100.0))
                }
                _ => (0.0, 0.0),
            };
            rep.insert("neuron_runtime_vcpu_usage".into(), json!({"period": period, "vcpu_usage": {"user": u, "system": s}, "error": ""}));
        }
        let address = rt.slots.iter().map(|(d, p)| format!("nd{d}/slot{}", p.slot)).collect::<Vec<_>>().join(",");
        rt_data.push(json!({"pid": rt.pid, "address": address, "neuron_runtime_tag": label, "error": "", "report": rep}));
    }
    let mut system = Map::new();
    if due.contains(&"vcpu_usage") {
        let mut usage = Map::new();
        let mut avg = Value::Null;
        for (name, a) in &now_host.cpus {
            let b = prev_host.cpus.get(name).unwrap_or(a);
            let u = cpu_usage(b, a);
            if name == "cpu" {
                avg = u;
            } else {
                usage.insert(name.trim_start_matches("cpu").to_string(), u);
            }
        }
        system.insert(
            "vcpu_usage".into(),
            json!({"period": period, "average_usage": avg, "usage_data": usage, "context_switch_count": now_host.ctxt.saturating_sub(prev_host.ctxt), "error": ""}),
        );
    }
    if due.contains(&"memory_info") {
        let m = meminfo();
        let g = |k: &str| m.get(k).copied().unwrap_or(0);
        system.insert(
            "memory_info".into(),
            json!({
                "period": period,
                "memory_total_bytes": g("MemTotal"),
                "memory_used_bytes": g("MemTotal").saturating_sub(g("MemAvailable")),
                "swap_total_bytes": g("SwapTotal"),
                "swap_used_bytes": g("SwapTotal").saturating_sub(g("SwapFree")),
                "error": "",
            }),
        );
    }
    if due.contains(&"neuron_hw_counters") {
        let devs: Vec<Value> = (0..inst.devices)
            .map(|d| {
                // The devices' own memory-error counters (the driver's
                // stats/hardware); a simulated memory never corrects an
                // error, so it has no corrected counters, and the fields
                // are left out as neuron-monitor does without a source.
                let hw = now.devices.get(d as usize).and_then(|r| r.as_ref().ok()).map(|s| s.hardware).unwrap_or_default();
                json!({
                    "neuron_device_index": d,
                    "mem_ecc_uncorrected": hw.mem_ecc_uncorrected + hw.mem_ecc_repairable_uncorrected,
                    "sram_ecc_uncorrected": hw.sram_ecc_uncorrected,
                })
            })
            .collect();
        system.insert("neuron_hw_counters".into(), json!({"period": period, "neuron_devices": devs, "error": ""}));
    }
    let (dtype, dver, cver) = inst.hardware_names();
    json!({
        "neuron_runtime_data": rt_data,
        "system_data": system,
        "instance_info": {
            "instance_name": "",
            "instance_id": inst.instance_id,
            "instance_type": inst.instance_type,
            "instance_availability_zone": "",
            "instance_availability_zone_id": "",
            "instance_region": "",
            "ami_id": "",
            "subnet_id": "",
            "error": "",
        },
        "neuron_hardware_info": {
            "neuron_device_type": dtype,
            "neuron_device_version": dver,
            "neuroncore_version": cver,
            "neuron_device_count": inst.devices,
            "neuron_device_memory_size": inst.hbm_bytes,
            "neuroncore_per_device_count": nc,
            "logical_neuroncore_config": inst.lnc,
            "error": "",
        },
    })
}

/// neuron-monitor's host `usage_breakdown`.
fn host_breakdown(c: &HostColumns) -> Value {
    json!({"application_memory": c.application_memory, "constants": c.constants, "dma_buffers": c.dma_buffers, "tensors": c.tensors})
}

/// FLOPs of physical core `core` of a process between two reads of its
/// slot.
fn flops_between(before: Option<&ProcessStatus>, after: &ProcessStatus, core: usize) -> u64 {
    let b = before.and_then(|p| p.cores.get(core)).map_or(0, |c| c.flops);
    after.cores.get(core).map_or(0, |c| c.flops).saturating_sub(b)
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The Prometheus text form of one report (the metric names of
/// neuron-monitor-prometheus.py).
pub fn prometheus(r: &Value) -> String {
    let mut out = String::new();
    let mut family = |name: &str, help: &str, ty: &str, samples: Vec<(String, f64)>| {
        out += &format!("# HELP {name} {help}\n# TYPE {name} {ty}\n");
        for (labels, v) in samples {
            out += &format!("{name}{labels} {v}\n");
        }
    };
    let inst = &r["instance_info"];
    let il = format!(
        "instance_name=\"{}\",instance_id=\"{}\",instance_type=\"{}\",availability_zone=\"\",region=\"\",subnet_id=\"\"",
        esc(inst["instance_name"].as_str().unwrap_or("")),
        esc(inst["instance_id"].as_str().unwrap_or("")),
        esc(inst["instance_type"].as_str().unwrap_or(""))
    );
    family("instance_info", "EC2 instance information", "gauge", vec![(format!("{{{il}}}"), 1.0)]);
    let mut util = Vec::new();
    let mut lat = Vec::new();
    let mut status = Vec::new();
    let mut mem = Vec::new();
    let mut vcpu = Vec::new();
    for rt in r["neuron_runtime_data"].as_array().into_iter().flatten() {
        let tag = esc(rt["neuron_runtime_tag"].as_str().unwrap_or(""));
        let rep = &rt["report"];
        for (nc, v) in rep["neuroncore_counters"]["neuroncores_in_use"].as_object().into_iter().flatten() {
            let u = v["neuroncore_utilization"].as_f64().unwrap_or(0.0) / 100.0;
            util.push((format!("{{runtime_tag=\"{tag}\",neuroncore=\"{nc}\"}}"), u));
        }
        let es = &rep["execution_stats"];
        for (k, v) in es["execution_summary"].as_object().into_iter().flatten() {
            status.push((format!("{{runtime_tag=\"{tag}\",status_type=\"{k}\"}}"), v.as_f64().unwrap_or(0.0)));
        }
        for (k, v) in es["error_summary"].as_object().into_iter().flatten() {
            status.push((format!("{{runtime_tag=\"{tag}\",status_type=\"{k}_error\"}}"), v.as_f64().unwrap_or(0.0)));
        }
        for (k, v) in es["latency_stats"]["total_latency"].as_object().into_iter().flatten() {
            lat.push((format!("{{runtime_tag=\"{tag}\",percentile=\"{k}\"}}"), v.as_f64().unwrap_or(0.0)));
        }
        let mu = &rep["memory_used"]["neuron_runtime_used_bytes"];
        for loc in ["host", "neuron_device"] {
            if let Some(b) = mu[loc].as_f64() {
                mem.push((format!("{{runtime_tag=\"{tag}\",memory_location=\"{loc}\"}}"), b));
            }
        }
        for k in ["user", "system"] {
            if let Some(v) = rep["neuron_runtime_vcpu_usage"]["vcpu_usage"][k].as_f64() {
                vcpu.push((format!("{{runtime_tag=\"{tag}\",usage_type=\"{k}\"}}"), v / 100.0));
            }
        }
    }
    family("neuroncore_utilization_ratio", "NeuronCore utilization ratio", "gauge", util);
    family("execution_latency_seconds", "Execution latency by percentile", "gauge", lat);
    family("execution_status_total", "Execution status counts in the period", "counter", status);
    family("neuron_runtime_memory_used_bytes", "Runtime memory used", "gauge", mem);
    family("neuron_runtime_vcpu_usage_ratio", "Runtime vCPU usage ratio", "gauge", vcpu);
    let sys = &r["system_data"];
    let avg: Vec<(String, f64)> = sys["vcpu_usage"]["average_usage"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (format!("{{usage_type=\"{k}\"}}"), v.as_f64().unwrap_or(0.0) / 100.0))
        .collect();
    if !avg.is_empty() {
        let n = sys["vcpu_usage"]["usage_data"].as_object().map_or(0, |m| m.len());
        family("system_vcpu_usage_ratio", "System vCPU usage ratio", "gauge", avg);
        family("system_vcpu_count", "System vCPU count", "gauge", vec![(String::new(), n as f64)]);
    }
    if let Some(t) = sys["memory_info"]["memory_total_bytes"].as_f64() {
        family("system_memory_total_bytes", "System memory total", "gauge", vec![(String::new(), t)]);
        family("system_memory_used_bytes", "System memory used", "gauge", vec![(String::new(), sys["memory_info"]["memory_used_bytes"].as_f64().unwrap_or(0.0))]);
    }
    out
}

/// Runs `nrt monitor`: `count` reports (0 = until interrupted).
pub fn run(config: Option<&std::path::Path>, count: u64, prometheus_form: bool) -> Result<()> {
    let cfg = match config {
        Some(p) => Config::parse(&std::fs::read_to_string(p).with_context(|| format!("reading monitor config {}", p.display()))?)?,
        None => Config::default_all(),
    };
    let inst = Instance::from_env()?;
    let tick = cfg.tick();
    let mut prev = Sample::read(&inst);
    let mut prev_host = host_sample(&prev);
    let mut last: BTreeMap<&str, Instant> = BTreeMap::new();
    let start = Instant::now();
    let mut written = 0u64;
    let mut next = start + tick;
    loop {
        let now_t = Instant::now();
        if next > now_t {
            std::thread::sleep(next - now_t);
        }
        next += tick;
        let now = Sample::read(&inst);
        let now_host = host_sample(&now);
        let due: Vec<&str> = cfg
            .runtime
            .iter()
            .chain(cfg.system.iter())
            .filter(|(g, p)| {
                let since = last.get(g.as_str()).copied().unwrap_or(start);
                // A tenth of the tick of slack: a group due at this tick runs.
                now.at.duration_since(since) + tick / 10 >= **p
            })
            .map(|(g, _)| g.as_str())
            .collect();
        for g in &due {
            let key = RUNTIME_GROUPS.iter().chain(SYSTEM_GROUPS.iter()).find(|k| *k == g).copied().unwrap_or("");
            last.insert(key, now.at);
        }
        let r = report(&inst, &cfg, &due, &prev, &prev_host, &now, &now_host);
        if prometheus_form {
            print!("{}", prometheus(&r));
            println!();
        } else {
            println!("{}", serde_json::to_string(&r)?);
        }
        use std::io::Write;
        std::io::stdout().flush()?;
        prev = now;
        prev_host = now_host;
        written += 1;
        if count != 0 && written >= count {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two reads of one device a second apart: FLOPS are the PE
    /// counters' difference over the period, summed over a logical
    /// core's physical cores; memory errors are the device's own counters
    /// (no corrected ones: the simulated memory has no such counter);
    /// host memory comes from the published categories, per process and
    /// per model; latency percentiles from the period's samples.
    #[test]
    fn flops_memory_errors_and_host_memory_come_from_the_counters() {
        use nrt_hal::status_read::{CoreCounters, DeviceStatus, HardwareCounters, ModelEntry};
        let inst = Instance {
            instance_type: "trn2-1".into(),
            instance_id: "i-0".into(),
            arch: &nrt_hal::arch::TRN2,
            devices: 1,
            lnc: 2,
            hbm_bytes: 96 << 30,
            status_dir: None,
            namespace: "sim-trn2-1".into(),
            topology: nrt_hal::Topology::of("trn2-1", nrt_hal::Arch::Trn2, 1),
        };
        let mut host = [0u64; MemCategory::COUNT];
        host[MemCategory::Tensors as usize] = 4096;
        host[MemCategory::Notifications as usize] = 64;
        // Latency samples: three before the period, four in it.
        let recorded = [9_000u64, 9_000, 9_000, 1_000, 1_100, 1_150, 5_000];
        let ring = |n: usize| {
            let mut ring = vec![0; nrt_hal::status::LATENCY_SAMPLES];
            ring[..n].copy_from_slice(&recorded[..n]);
            Samples { count: n as u64, ring }
        };
        let process = |flops: [u64; 2]| ProcessStatus {
            slot: 0,
            pid: 4242,
            start_time: 1,
            cores_mask: 0b11,
            lnc: 2,
            command: "app".into(),
            tag: String::new(),
            runtime_version: String::new(),
            cores: (0..8).map(|c| CoreCounters { flops: *flops.get(c).unwrap_or(&0), ..CoreCounters::default() }).collect(),
            host_memory: host,
            total_latency: vec![0; nrt_hal::status::LATENCY_BUCKETS],
            device_latency: vec![0; nrt_hal::status::LATENCY_BUCKETS],
            total_samples: ring(if flops[0] == 1_000 { 3 } else { 7 }),
            device_samples: Samples::default(),
            models: vec![ModelEntry { name: "m".into(), host_memory: host, host_bytes: 4160, ..ModelEntry::default() }],
        };
        let sample = |flops, hardware, at| Sample {
            at,
            devices: vec![Ok(DeviceStatus {
                device_index: 0,
                physical_cores: 8,
                memory_bytes: 96 << 30,
                host_memory_bytes: 0,
                arch: "trn2".into(),
                processes: vec![process(flops)],
                stale: Vec::new(),
                hardware,
            })],
        };
        let t0 = Instant::now();
        let prev = sample([1_000, 500], HardwareCounters::default(), t0);
        let hw = HardwareCounters { mem_ecc_uncorrected: 2, mem_ecc_repairable_uncorrected: 1, sram_ecc_uncorrected: 3 };
        let now = sample([3_001_000, 1_000_500], hw, t0 + Duration::from_secs(1));
        let none = HostSample { cpus: BTreeMap::new(), ctxt: 0, procs: BTreeMap::new() };
        let cfg = Config::parse(r#"{"period":"1s"}"#).unwrap();
        let r = report(&inst, &cfg, &["neuroncore_counters", "memory_used", "neuron_hw_counters", "execution_stats"], &prev, &none, &now, &none);
        let rep = &r["neuron_runtime_data"][0]["report"];
        // Percentiles of the period's four samples, exact (1,000 and
        // 1,100 ns share a histogram bucket), none from before it.
        let lat = &rep["execution_stats"]["latency_stats"];
        assert_eq!(lat["total_latency"], json!({"p0": 1e-6, "p1": 1e-6, "p25": 1.1e-6, "p50": 1.15e-6, "p75": 1.15e-6, "p99": 5e-6, "p100": 5e-6}), "{lat}");
        assert_eq!(lat["device_latency"], Value::Null, "no device latencies recorded");
        assert_eq!(rep["neuroncore_counters"]["neuroncores_in_use"]["0"]["flops"], json!(4_000_000.0), "{rep}");
        let used = &rep["memory_used"]["neuron_runtime_used_bytes"];
        assert_eq!(used["host"], json!(4160));
        assert_eq!(used["usage_breakdown"]["host"], json!({"application_memory": 0, "constants": 0, "dma_buffers": 64, "tensors": 4096}));
        let m = &rep["memory_used"]["loaded_models"][0]["subgraphs"]["sg_00"]["memory_used_bytes"];
        assert_eq!(m["host"], json!(4160));
        assert_eq!(m["usage_breakdown"]["host"]["tensors"], json!(4096));
        let d = &r["system_data"]["neuron_hw_counters"]["neuron_devices"][0];
        assert_eq!(d, &json!({"neuron_device_index": 0, "mem_ecc_uncorrected": 3, "sram_ecc_uncorrected": 3}));
    }

    #[test]
    fn periods_parse() {
        assert_eq!(parse_period("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_period("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_period("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_period("soon").is_err());
        assert!(parse_period("0s").is_err());
    }

    #[test]
    fn config_file_selects_groups_and_periods() {
        let c = Config::parse(
            r#"{"period":"1s","neuron_runtimes":[{"tag_filter":".*","metrics":[{"type":"neuroncore_counters"},{"type":"execution_stats","period":"2s"}]}],
               "system_metrics":[{"type":"memory_info"}]}"#,
        )
        .unwrap();
        assert_eq!(c.runtime.len(), 2);
        assert_eq!(c.runtime["execution_stats"], Duration::from_secs(2));
        assert_eq!(c.system["memory_info"], Duration::from_secs(1));
        assert_eq!(c.tick(), Duration::from_secs(1));
        let e = Config::parse(r#"{"neuron_runtimes":[{"metrics":[{"type":"bogus"}]}]}"#).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }
}
