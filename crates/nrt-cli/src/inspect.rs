//! `nrt neff inspect`: what a NEFF holds, as tables or one JSON object.
//!
//! The data is nrt-neff's [`NeffSummary`]; this module adds what needs ISA
//! knowledge (an opcode histogram per engine stream) and the rendering.

use anyhow::{Context, Result};
use nrt_isa::opcode::Opcode;
use nrt_neff::summary::NeffSummary;
use nrt_neff::{Neff, ReadOptions};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The JSON document `--json` prints: the summary plus, per subgraph and
/// engine, an opcode histogram.
#[derive(Serialize)]
struct Report {
    #[serde(flatten)]
    summary: NeffSummary,
    payload_format: String,
    /// Subgraph name -> engine key -> opcode name (or `0xNN`) -> record count.
    opcodes: BTreeMap<String, BTreeMap<String, BTreeMap<String, usize>>>,
}

/// Runs `nrt neff inspect`.
pub fn run(file: &Path, json: bool, verify_hash: bool) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let options = ReadOptions { verify_hash, ..ReadOptions::default() };
    let neff = Neff::parse_with(&bytes, &options).with_context(|| format!("{}", file.display()))?;
    let report = Report {
        summary: neff.summary(),
        payload_format: format!("{:?}", neff.payload_format),
        opcodes: neff
            .subgraphs
            .iter()
            .map(|sg| {
                let engines = sg.engines.iter().map(|e| (e.engine.key().to_string(), opcode_histogram(&e.instructions)));
                (sg.name.clone(), engines.collect())
            })
            .collect(),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_tables(&report, verify_hash);
    }
    Ok(())
}

/// Counts records per opcode; byte 0 of each 64-byte slot is the opcode.
fn opcode_histogram(stream: &[u8]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for record in stream.chunks_exact(64) {
        let name = match Opcode::from_u8(record[0]).name() {
            Some(n) => n.to_string(),
            None => format!("0x{:02X}", record[0]),
        };
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
}

fn print_tables(r: &Report, verified: bool) {
    let s = &r.summary;
    let h = &s.header;
    println!("NEFF header");
    let rows: [(&str, String); 14] = [
        ("pkg_version", h.pkg_version.to_string()),
        ("header_size", h.header_size.to_string()),
        ("data_size", h.data_size.to_string()),
        ("neff_version", format!("{}.{}", h.neff_version_major, h.neff_version_minor)),
        ("neff_build_version", format!("{:?}", h.neff_build_version)),
        ("num_tpb", h.num_tpb.to_string()),
        ("hash", format!("{}{}", h.hash, if verified { " (verified)" } else { "" })),
        ("uuid", h.uuid.clone()),
        ("name", format!("{:?}", h.name)),
        ("requested_tpb_count", h.requested_tpb_count.to_string()),
        ("tpb_per_node", format!("{:?}", h.tpb_per_node)),
        ("feature_bits", format!("0x{:x}", h.feature_bits)),
        ("lnc_size", h.lnc_size.to_string()),
        ("payload", format!("{} ({} members)", r.payload_format, s.member_count)),
    ];
    for (k, v) in rows {
        println!("  {k:<20} {v}");
    }
    for (title, tensors) in [("Inputs", &s.inputs), ("Outputs", &s.outputs)] {
        println!("\n{title}");
        for t in tensors {
            println!("  {:<24} {:<10} {:?}", t.name, t.dtype, t.shape);
        }
    }
    for sg in &s.subgraphs {
        println!("\nSubgraph {} ({})", sg.name, sg.definition);
        println!("  vars:");
        for v in &sg.vars {
            let size = v.size.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            let detail = match (&v.dtype, &v.shape, &v.file_name) {
                (Some(d), Some(s), _) => format!("{d} {s:?}"),
                (_, _, Some(f)) => f.clone(),
                _ => String::new(),
            };
            println!("    {:>4}  {:<28} {:<13} {:>10}  {}", v.var_id, v.name, v.ty, size, detail);
        }
        println!("  queue sets:");
        for q in &sg.queue_sets {
            println!(
                "    {:<20} type={:<8} owner={:<5} queues={:<3} semaphores={:?}",
                q.name,
                q.ty,
                q.owner.as_deref().unwrap_or("-"),
                q.num_queues,
                q.semaphores
            );
        }
        println!("  engines:");
        let empty = BTreeMap::new();
        let hists = r.opcodes.get(&sg.name).unwrap_or(&empty);
        for e in &sg.engines {
            let hist: Vec<String> = hists
                .get(&e.engine)
                .map(|h| h.iter().map(|(k, v)| format!("{k}x{v}")).collect())
                .unwrap_or_default();
            println!("    {:<5} {:>5} instr {:>4} dma desc  {}", e.engine, e.instructions, e.descriptors, hist.join(" "));
        }
    }
}
