//! `nrt profile FILE`: neuron-profile's summary view of a device profile
//! nrt wrote (the Chrome trace-event JSON of docs/trace-formats.md, under
//! whatever name the caller gave it, `.ntff` included): per engine busy %,
//! instruction counts by opcode, top instructions by time, DMA-issuing
//! instructions; and with `--html OUT.html` a self-contained timeline page
//! (one track per engine, instructions named as the compiler named them).

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One instruction of the profile.
#[derive(Clone, Debug)]
pub struct Instr {
    /// Track index in [`Profile::tracks`].
    pub track: usize,
    /// Start, µs of device time.
    pub ts: f64,
    /// Duration, µs (0 for instants).
    pub dur: f64,
    /// The compiler's name (or the opcode).
    pub name: String,
    /// Opcode name.
    pub opcode: String,
}

/// A parsed profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Model name.
    pub model: String,
    /// Records the rings overwrote.
    pub lost_records: u64,
    /// (core label, engine name) per track.
    pub tracks: Vec<(String, String)>,
    /// Instructions in file order.
    pub instrs: Vec<Instr>,
}

impl Profile {
    /// Parses the trace JSON.
    pub fn parse(text: &str) -> Result<Profile> {
        let v: Value = serde_json::from_str(text).context("the profile is not JSON (expected nrt's Chrome trace-event profile)")?;
        let events = v.get("traceEvents").and_then(Value::as_array).context("the profile has no traceEvents array")?;
        let mut p = Profile {
            model: v["otherData"]["model"].as_str().unwrap_or("").to_string(),
            lost_records: v["otherData"]["lost_records"].as_u64().unwrap_or(0),
            ..Profile::default()
        };
        let mut procs: BTreeMap<i64, String> = BTreeMap::new();
        let mut threads: BTreeMap<(i64, i64), String> = BTreeMap::new();
        for e in events {
            if e["ph"] == "M" {
                let name = e["args"]["name"].as_str().unwrap_or("").to_string();
                match e["name"].as_str() {
                    Some("process_name") => {
                        procs.insert(e["pid"].as_i64().unwrap_or(0), name);
                    }
                    Some("thread_name") => {
                        threads.insert((e["pid"].as_i64().unwrap_or(0), e["tid"].as_i64().unwrap_or(0)), name);
                    }
                    _ => {}
                }
            }
        }
        let mut index: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        for e in events {
            let ph = e["ph"].as_str().unwrap_or("");
            if ph != "X" && ph != "i" {
                continue;
            }
            let key = (e["pid"].as_i64().unwrap_or(0), e["tid"].as_i64().unwrap_or(0));
            let track = *index.entry(key).or_insert_with(|| {
                p.tracks.push((
                    procs.get(&key.0).cloned().unwrap_or_else(|| format!("NC {}", key.0)),
                    threads.get(&key).cloned().unwrap_or_else(|| format!("engine {}", key.1)),
                ));
                p.tracks.len() - 1
            });
            p.instrs.push(Instr {
                track,
                ts: e["ts"].as_f64().unwrap_or(0.0),
                dur: e["dur"].as_f64().unwrap_or(0.0),
                name: e["name"].as_str().unwrap_or("").to_string(),
                opcode: e["args"]["opcode"].as_str().unwrap_or("").to_string(),
            });
        }
        if p.instrs.is_empty() {
            bail!("the profile holds no instructions (was the execution profiled?)");
        }
        Ok(p)
    }

    /// (first start, last end) in µs.
    pub fn span(&self) -> (f64, f64) {
        let t0 = self.instrs.iter().map(|i| i.ts).fold(f64::INFINITY, f64::min);
        let t1 = self.instrs.iter().map(|i| i.ts + i.dur).fold(f64::NEG_INFINITY, f64::max);
        (t0, t1)
    }
}

/// Whether an opcode starts DMA transfers (its name says DMA).
fn is_dma(opcode: &str) -> bool {
    opcode.to_ascii_uppercase().contains("DMA")
}

/// The summary text.
pub fn summary(p: &Profile) -> String {
    let (t0, t1) = p.span();
    let total = (t1 - t0).max(0.0);
    let mut s = String::new();
    let _ = writeln!(s, "model {}: {} instructions on {} engine tracks over {:.3} us of device time", p.model, p.instrs.len(), p.tracks.len(), total);
    if p.lost_records > 0 {
        let _ = writeln!(s, "warning: {} trace records were overwritten before they were read", p.lost_records);
    }
    let _ = writeln!(s, "\n{:<16} {:<6} {:>8} {:>12} {:>7} {:>6}  opcodes", "core", "engine", "instrs", "busy (us)", "busy %", "dma");
    for (t, (core, engine)) in p.tracks.iter().enumerate() {
        let mine: Vec<&Instr> = p.instrs.iter().filter(|i| i.track == t).collect();
        let busy: f64 = mine.iter().map(|i| i.dur).sum();
        let mut ops: BTreeMap<&str, u64> = BTreeMap::new();
        for i in &mine {
            *ops.entry(i.opcode.as_str()).or_default() += 1;
        }
        let mut ops: Vec<_> = ops.into_iter().collect();
        ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let dma = mine.iter().filter(|i| is_dma(&i.opcode)).count();
        let pct = if total > 0.0 { busy / total * 100.0 } else { 0.0 };
        let list = ops.iter().map(|(o, n)| format!("{o} {n}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(s, "{core:<16} {engine:<6} {:>8} {busy:>12.3} {pct:>6.1}% {dma:>6}  {list}", mine.len());
    }
    let mut by_name: BTreeMap<(usize, &str), (f64, u64)> = BTreeMap::new();
    for i in &p.instrs {
        let e = by_name.entry((i.track, i.name.as_str())).or_default();
        e.0 += i.dur;
        e.1 += 1;
    }
    let mut top: Vec<_> = by_name.into_iter().collect();
    top.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
    let _ = writeln!(s, "\ntop instructions by time\n{:<40} {:<6} {:>6} {:>12}", "name", "engine", "count", "total (us)");
    for ((t, name), (dur, n)) in top.into_iter().take(10) {
        let _ = writeln!(s, "{name:<40} {:<6} {n:>6} {dur:>12.3}", p.tracks[t].1);
    }
    let _ = writeln!(
        s,
        "\nDMA: {} DMA-issuing instructions; the profile records no per-transfer bytes yet, so DMA bytes and bandwidth are not reported",
        p.instrs.iter().filter(|i| is_dma(&i.opcode)).count()
    );
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A colour per opcode (stable across pages).
fn colour(op: &str) -> String {
    let h = op.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b))) % 360;
    format!("hsl({h},60%,55%)")
}

/// The self-contained timeline page: one `.track` per engine, one
/// `.instr` per instruction placed by its device time; no scripts or
/// fetches.
pub fn html(p: &Profile) -> String {
    let (t0, t1) = p.span();
    let total = (t1 - t0).max(1e-9);
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>nrt profile: {}</title><style>\
body{{font:13px sans-serif;margin:16px;background:#fff;color:#222}}\
.track{{display:flex;align-items:center;margin:4px 0}}\
.label{{width:190px;flex:none;font-weight:bold}}\
.lane{{position:relative;flex:1;height:28px;background:#eef1f5;border:1px solid #c9d0da}}\
.instr{{position:absolute;top:2px;height:24px;min-width:1px;box-sizing:border-box;border-right:1px solid #fff;overflow:hidden;font-size:10px;color:#fff;white-space:nowrap}}\
.axis{{margin-left:190px;display:flex;justify-content:space-between;color:#666}}\
</style></head><body><h1>{}</h1><p>{} instructions, {:.3} us of device time</p>",
        esc(&p.model),
        esc(&p.model),
        p.instrs.len(),
        total
    );
    for (t, (core, engine)) in p.tracks.iter().enumerate() {
        let _ = write!(s, "<div class=\"track\" data-engine=\"{}\"><div class=\"label\">{} {}</div><div class=\"lane\">", esc(engine), esc(core), esc(engine));
        for i in p.instrs.iter().filter(|i| i.track == t) {
            let left = (i.ts - t0) / total * 100.0;
            let width = (i.dur / total * 100.0).max(0.05);
            let _ = write!(
                s,
                "<div class=\"instr\" style=\"left:{left:.4}%;width:{width:.4}%;background:{}\" title=\"{} ({}) {:.3} us at {:.3} us\">{}</div>",
                colour(&i.opcode),
                esc(&i.name),
                esc(&i.opcode),
                i.dur,
                i.ts - t0,
                esc(&i.name)
            );
        }
        s.push_str("</div></div>");
    }
    let _ = write!(s, "<div class=\"axis\"><span>0 us</span><span>{:.3} us</span></div></body></html>\n", total);
    s
}

/// Runs `nrt profile FILE [--html OUT]`.
pub fn run(file: &Path, html_out: Option<&Path>) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading profile {}", file.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: the profile is not JSON text (expected nrt's Chrome trace-event profile, not a NEFF or binary NTFF)", file.display()))?;
    let p = Profile::parse(&text).with_context(|| file.display().to_string())?;
    print!("{}", summary(&p));
    if let Some(out) = html_out {
        std::fs::write(out, html(&p)).with_context(|| format!("writing {}", out.display()))?;
        println!("\nwrote {}", out.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"{"displayTimeUnit":"ns","otherData":{"model":"m","lost_records":0},"traceEvents":[
      {"ph":"M","name":"process_name","pid":0,"args":{"name":"NC 0 (sg00)"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"PE"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":4,"args":{"name":"SP"}},
      {"ph":"X","pid":0,"tid":0,"ts":0.0,"dur":2.0,"name":"I-1-0","args":{"opcode":"MATMUL"}},
      {"ph":"X","pid":0,"tid":4,"ts":1.0,"dur":1.0,"name":"I-2-0","args":{"opcode":"DMA_TRIGGER"}},
      {"ph":"X","pid":0,"tid":0,"ts":2.0,"dur":2.0,"name":"I-1-0","args":{"opcode":"MATMUL"}}]}"#;

    #[test]
    fn summary_counts_per_engine() {
        let p = Profile::parse(SAMPLE).unwrap();
        assert_eq!(p.tracks, vec![("NC 0 (sg00)".to_string(), "PE".to_string()), ("NC 0 (sg00)".to_string(), "SP".to_string())]);
        let s = summary(&p);
        assert!(s.contains("MATMUL 2") && s.contains("100.0%") && s.contains("25.0%"), "{s}");
        assert!(s.contains("I-1-0") && s.contains("1 DMA-issuing"), "{s}");
        let h = html(&p);
        assert_eq!(h.matches("class=\"track\"").count(), 2);
        assert!(!h.contains("http") && !h.contains("<script"), "self-contained");
    }

    #[test]
    fn bad_files_are_named() {
        assert!(Profile::parse("nope").unwrap_err().to_string().contains("not JSON"));
        assert!(Profile::parse("{}").unwrap_err().to_string().contains("traceEvents"));
    }
}
