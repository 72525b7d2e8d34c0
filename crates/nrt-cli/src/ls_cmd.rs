//! `nrt ls`: neuron-ls for the simulated instance: devices, cores, memory
//! and the processes using them (read from the devices' datastores), as the
//! default table, `--wide`, `--show-all-procs` or `--json-output`.

use crate::observe::{Instance, Sample};
use anyhow::Result;
use serde_json::{Value, json};

/// One process row.
struct Proc {
    pid: u32,
    command: String,
    version: String,
}

fn procs_of(sample: &Sample, d: u32) -> Vec<Proc> {
    let mut v: Vec<Proc> = sample
        .processes()
        .filter(|(dev, _)| *dev == d)
        .map(|(_, p)| Proc { pid: p.pid, command: p.command.clone(), version: p.runtime_version.clone() })
        .collect();
    v.sort_by_key(|p| p.pid);
    v.dedup_by_key(|p| p.pid);
    v
}

/// The JSON array neuron-ls `-j` prints (fields in its order).
pub fn json(inst: &Instance, sample: &Sample) -> Value {
    let nc = inst.nc_per_device();
    let devices: Vec<Value> = (0..inst.devices)
        .map(|d| {
            let procs: Vec<Value> = procs_of(sample, d)
                .into_iter()
                .map(|p| json!({"pid": p.pid, "command": p.command, "neuron_runtime_version": p.version}))
                .collect();
            json!({
                "neuron_device": d,
                "bdf": inst.bdf(d),
                "cpu_affinity": cpu_affinity(),
                "numa_node": "0",
                "connected_to": inst.connected_to(d),
                "nc_count": nc,
                "logical_neuroncore_config": inst.lnc,
                "memory_size": inst.hbm_bytes,
                "neuroncore_ids": (d * nc..(d + 1) * nc).collect::<Vec<u32>>(),
                "neuron_processes": procs,
            })
        })
        .collect();
    Value::Array(devices)
}

/// Every CPU of the host as a range list (the simulator is not NUMA-bound).
fn cpu_affinity() -> String {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n == 1 { "0".into() } else { format!("0-{}", n - 1) }
}

fn gib(bytes: u64) -> String {
    format!("{} GB", bytes >> 30)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n { s.to_string() } else { format!("{}...", s.chars().take(n.saturating_sub(3)).collect::<String>()) }
}

/// Renders rows as a `+---+` bordered table; `groups` ends a group after
/// the row indices it lists (a separator line).
fn table(header: &[&str], rows: &[Vec<String>], separators: &[usize]) -> String {
    let mut w: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = format!("+{}+\n", w.iter().map(|n| "-".repeat(n + 2)).collect::<Vec<_>>().join("+"));
    let row = |cells: &[String]| format!("| {} |\n", cells.iter().enumerate().map(|(i, c)| format!("{c:<0$}", w[i])).collect::<Vec<_>>().join(" | "));
    let mut out = line.clone();
    out += &row(&header.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    out += &line;
    for (i, r) in rows.iter().enumerate() {
        out += &row(r);
        if separators.contains(&i) {
            out += &line;
        }
    }
    if !separators.contains(&rows.len().wrapping_sub(1)) {
        out += &line;
    }
    out
}

/// The text neuron-ls prints.
pub fn text(inst: &Instance, sample: &Sample, wide: bool, all_procs: bool) -> String {
    let nc = inst.nc_per_device();
    let mut out = format!("instance-type: {}\ninstance-id: {}\n", inst.instance_type, inst.instance_id);
    if inst.arch.arch == nrt_hal::Arch::Trn2 || inst.arch.arch == nrt_hal::Arch::Trn3 {
        out += &format!("logical-neuroncore-config: {}\n", inst.lnc);
    }
    let mut rows = Vec::new();
    let mut seps = Vec::new();
    for d in 0..inst.devices {
        let connected = inst.connected_to(d).iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let procs = procs_of(sample, d);
        if wide || all_procs {
            let first = procs.first();
            let cell = |f: &dyn Fn(&Proc) -> String| first.map_or(String::new(), f);
            rows.push(vec![
                d.to_string(),
                nc.to_string(),
                gib(inst.hbm_bytes),
                connected,
                inst.bdf(d),
                cell(&|p| p.pid.to_string()),
                cell(&|p| if wide { p.command.clone() } else { truncate(&p.command, 24) }),
                cell(&|p| if p.version.is_empty() { "NA".into() } else { p.version.clone() }),
            ]);
            if all_procs {
                for p in procs.iter().skip(1) {
                    rows.push(vec![
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        String::new(),
                        p.pid.to_string(),
                        if wide { p.command.clone() } else { truncate(&p.command, 24) },
                        if p.version.is_empty() { "NA".into() } else { p.version.clone() },
                    ]);
                }
                seps.push(rows.len() - 1);
            }
        } else {
            let ids = if nc == 1 { format!("{}", d * nc) } else { format!("{}-{}", d * nc, (d + 1) * nc - 1) };
            rows.push(vec![
                d.to_string(),
                nc.to_string(),
                ids,
                gib(inst.hbm_bytes),
                connected,
                format!("0000:{}", inst.bdf(d)),
                cpu_affinity(),
                "0".into(),
            ]);
        }
    }
    let header: &[&str] = if wide || all_procs {
        &["NEURON DEVICE", "NEURON CORES", "NEURON MEMORY", "CONNECTED DEVICES", "PCI BDF", "PID", "COMMAND", "RUNTIME VERSION"]
    } else {
        &["NEURON DEVICE", "NEURON CORES", "NEURON CORE IDS", "NEURON MEMORY", "CONNECTED DEVICES", "PCI BDF", "CPU AFFINITY", "NUMA NODE"]
    };
    out += &table(header, &rows, &seps);
    out
}

/// Runs `nrt ls`.
pub fn run(wide: bool, all_procs: bool, json_output: bool) -> Result<()> {
    let inst = Instance::from_env()?;
    let sample = Sample::read(&inst);
    for (d, r) in sample.devices.iter().enumerate() {
        if let Err(e) = r {
            eprintln!("nrt ls: device {d}: {e}");
        }
    }
    if json_output {
        println!("{}", serde_json::to_string_pretty(&json(&inst, &sample))?);
    } else {
        print!("{}", text(&inst, &sample, wide, all_procs));
    }
    Ok(())
}
