//! The OOM report: libnrt's "Failed to allocate ..." line followed by the
//! usage table (rows: device total, each physical core, each model;
//! columns: the report categories), the HBM channel fill and the map from
//! model id to name.

use super::ledger::{LedgerSnapshot, UsageTotals};
use super::usage::{MemUsage, ReportColumn, human_bytes};
use crate::model::ModelId;
use nrt_hal::CoreId;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The allocation that did not fit, for the first line of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailedAlloc {
    /// Bytes requested.
    pub size: u64,
    /// Alignment requested (0 or 1 = none).
    pub align: u64,
    /// Usage type.
    pub usage: MemUsage,
    /// Device index.
    pub device: u32,
    /// Physical core.
    pub core: CoreId,
}

impl FailedAlloc {
    /// libnrt's headline, e.g.
    /// `Failed to allocate 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4`.
    pub fn headline(&self) -> String {
        let align = if self.align <= 1 { "none".to_string() } else { human_bytes(self.align) };
        format!(
            "Failed to allocate {} (alignment: {align}, usage: {}) on ND {}:NC {}",
            human_bytes(self.size),
            self.usage.column().label(),
            self.device,
            self.core.0
        )
    }
}

/// Renders the usage table of a snapshot (the body of the OOM report).
pub fn render_table(snapshot: &LedgerSnapshot, model_names: &BTreeMap<ModelId, String>) -> String {
    let mut rows: Vec<(String, UsageTotals)> = vec![(format!("ND {}", snapshot.device), snapshot.device_totals)];
    for (core, totals) in &snapshot.cores {
        rows.push((format!("NC {}", core.0), *totals));
    }
    for (id, totals) in &snapshot.models {
        rows.push((format!("NEFF {id}"), *totals));
    }
    let mut header: Vec<String> = vec!["owner".into()];
    header.extend(ReportColumn::ALL.iter().map(|c| c.label().to_string()));
    header.push("total".into());
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, t)| {
            let mut r = vec![name.clone()];
            r.extend(ReportColumn::ALL.iter().map(|&c| human_bytes(t.column(c))));
            r.push(human_bytes(t.total()));
            r
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| cells.iter().map(|r| r[i].len()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, r: &[String]| {
        out.push('|');
        for (i, cell) in r.iter().enumerate() {
            let _ = if i == 0 {
                write!(out, " {cell:<w$} |", w = widths[i])
            } else {
                write!(out, " {cell:>w$} |", w = widths[i])
            };
        }
        out.push('\n');
    };
    line(&mut out, &header);
    out.push('|');
    for w in &widths {
        out.push_str(&"-".repeat(w + 2));
        out.push('|');
    }
    out.push('\n');
    for r in &cells {
        line(&mut out, r);
    }
    for (i, c) in snapshot.channels.iter().enumerate() {
        let _ = writeln!(
            out,
            "HBM {i}: {} used of {} ({} free)",
            human_bytes(c.used),
            human_bytes(c.capacity),
            human_bytes(c.capacity.saturating_sub(c.used))
        );
    }
    if snapshot.host.used > 0 {
        let _ = writeln!(
            out,
            "host-DMA memory: {} used of {}",
            human_bytes(snapshot.host.used),
            human_bytes(snapshot.host.capacity)
        );
    }
    if !snapshot.models.is_empty() {
        out.push_str("NEFF id to name:\n");
        for id in snapshot.models.keys() {
            let name = model_names.get(id).map(String::as_str).unwrap_or("<unnamed>");
            let _ = writeln!(out, "  {id}: {name}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::ledger::{Ledger, MemOwner};

    #[test]
    fn headline_matches_libnrt() {
        let f = FailedAlloc { size: 4 << 30, align: 0, usage: MemUsage::Tensor, device: 0, core: CoreId(4) };
        assert_eq!(f.headline(), "Failed to allocate 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4");
        let f = FailedAlloc { align: 0x8000, usage: MemUsage::InstrPe, ..f };
        assert!(f.headline().contains("(alignment: 32.000KB, usage: model code)"));
    }

    #[test]
    fn table_has_device_core_and_model_rows() {
        let mut l = Ledger::new(0, [1 << 20], 0);
        let ch0 = nrt_hal::MemoryLocation::Hbm { channel: 0 };
        l.book(CoreId(0), MemOwner::Model(3), MemUsage::Weight, ch0, 4096);
        l.book(CoreId(1), MemOwner::Runtime, MemUsage::Tensor, ch0, 1024);
        let names = BTreeMap::from([(3, "mlp.neff".to_string())]);
        let t = render_table(&l.snapshot(), &names);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("tensors") && lines[0].contains("model constants"));
        assert!(lines[2].starts_with("| ND 0 ") && lines[2].contains("5.000KB"));
        assert!(lines[3].starts_with("| NC 0 ") && lines[3].contains("4.000KB"));
        assert!(lines[4].starts_with("| NC 1 "));
        assert!(lines[5].starts_with("| NEFF 3 "));
        assert!(t.contains("HBM 0: 5.000KB used of 1.000MB"));
        assert!(t.contains("  3: mlp.neff"));
    }
}
