//! `nrt profile FILE|DIR`: neuron-profile's summary view of a device
//! profile nrt wrote (the Chrome trace-event JSON of docs/trace-formats.md,
//! under whatever name the caller gave it, `.ntff` included, or every
//! profile under a directory such as the one `nrt run --profile DIR`
//! wrote): per engine busy %, instruction counts by opcode and the time
//! it sat idle by what it waited on (a DMA queue, a semaphore, an event);
//! per DMA queue its packets, bytes and busy time; top instructions by
//! time; and with `--html OUT.html` a self-contained timeline page (one
//! track per engine and per DMA queue, instructions named as the compiler
//! named them).

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
    /// Opcode name (empty for a DMA packet).
    pub opcode: String,
    /// Bytes of a DMA packet (`None` for an instruction).
    pub bytes: Option<u64>,
    /// µs its engine sat idle before it issued.
    pub idle: f64,
    /// What it waited on before it issued, when it waited.
    pub waited_on: Option<String>,
}

impl Instr {
    /// Whether this is a DMA queue's packet rather than an instruction.
    pub fn is_packet(&self) -> bool {
        self.bytes.is_some()
    }
}

/// A parsed profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Model name.
    pub model: String,
    /// Records the rings overwrote.
    pub lost_records: u64,
    /// The execution's first START and device time, µs (a profile of
    /// one execution).
    pub device_time: Option<(f64, f64)>,
    /// (core label, engine or DMA queue name) per track.
    pub tracks: Vec<(String, String)>,
    /// Instructions and DMA packets in file order.
    pub instrs: Vec<Instr>,
}

impl Profile {
    /// Parses the trace JSON, prefixing every core label with `label`
    /// (which file of several the core's rows came from; empty for none).
    pub fn parse_labelled(text: &str, label: &str) -> Result<Profile> {
        let v: Value = serde_json::from_str(text).context("the profile is not JSON (expected nrt's Chrome trace-event profile)")?;
        let events = v.get("traceEvents").and_then(Value::as_array).context("the profile has no traceEvents array")?;
        let mut p = Profile {
            model: v["otherData"]["model"].as_str().unwrap_or("").to_string(),
            lost_records: v["otherData"]["lost_records"].as_u64().unwrap_or(0),
            device_time: v["otherData"]["device_start_us"].as_f64().zip(v["otherData"]["device_time_us"].as_f64()),
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
                let core = procs.get(&key.0).cloned().unwrap_or_else(|| format!("NC {}", key.0));
                p.tracks.push((
                    if label.is_empty() { core } else { format!("{label} {core}") },
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
                bytes: e["args"]["bytes"].as_u64(),
                idle: e["args"]["idle_us"].as_f64().unwrap_or(0.0),
                waited_on: e["args"]["waited_on"].as_str().map(str::to_string),
            });
        }
        if p.instrs.is_empty() {
            bail!("the profile holds no instructions (was the execution profiled?)");
        }
        Ok(p)
    }

    /// Adds `other`'s tracks and instructions (the profiles of one
    /// directory).
    pub fn merge(&mut self, other: Profile) {
        let base = self.tracks.len();
        // Several executions have no one device time: their span is shown.
        self.device_time = if base == 0 { other.device_time } else { None };
        self.tracks.extend(other.tracks);
        self.instrs.extend(other.instrs.into_iter().map(|i| Instr { track: i.track + base, ..i }));
        self.lost_records += other.lost_records;
        if self.model.is_empty() {
            self.model = other.model;
        } else if !other.model.is_empty() && !self.model.split(", ").any(|m| m == other.model) {
            self.model = format!("{}, {}", self.model, other.model);
        }
    }

    /// (first start, last end) in µs: the device time when the profile
    /// states it, else the records' span.
    pub fn span(&self) -> (f64, f64) {
        if let Some((start, time)) = self.device_time {
            return (start, start + time);
        }
        let t0 = self.instrs.iter().map(|i| i.ts).fold(f64::INFINITY, f64::min);
        let t1 = self.instrs.iter().map(|i| i.ts + i.dur).fold(f64::NEG_INFINITY, f64::max);
        (t0, t1)
    }
}

/// Whether an opcode starts DMA transfers (its name says DMA).
fn is_dma(opcode: &str) -> bool {
    opcode.to_ascii_uppercase().contains("DMA")
}

/// The union of intervals (µs), in µs.
fn covered(mut spans: Vec<(f64, f64)>) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut open: Option<(f64, f64)> = None;
    for (a, b) in spans {
        match open {
            Some((s, e)) if a <= e => open = Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                open = Some((a, b));
            }
            None => open = Some((a, b)),
        }
    }
    total + open.map_or(0.0, |(s, e)| e - s)
}

/// The summary text.
pub fn summary(p: &Profile) -> String {
    let (t0, t1) = p.span();
    let total = (t1 - t0).max(0.0);
    let packets = p.instrs.iter().filter(|i| i.is_packet()).count();
    let mut s = String::new();
    let _ = writeln!(s, "model {}: {} instructions and {packets} DMA packets on {} tracks over {:.3} us of device time", p.model, p.instrs.len() - packets, p.tracks.len(), total);
    if p.lost_records > 0 {
        let _ = writeln!(s, "warning: {} trace records were overwritten before they were read", p.lost_records);
    }
    let engine_tracks: Vec<usize> = (0..p.tracks.len()).filter(|t| !p.instrs.iter().any(|i| i.track == *t && i.is_packet())).collect();
    let dma_tracks: Vec<usize> = (0..p.tracks.len()).filter(|t| !engine_tracks.contains(t)).collect();
    let width = p.tracks.iter().map(|t| t.0.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(s, "\n{:<width$} {:<6} {:>8} {:>12} {:>7} {:>12} {:>6}  opcodes", "core", "engine", "instrs", "busy (us)", "busy %", "idle (us)", "dma");
    for &t in &engine_tracks {
        let (core, engine) = &p.tracks[t];
        let mine: Vec<&Instr> = p.instrs.iter().filter(|i| i.track == t).collect();
        let busy: f64 = mine.iter().map(|i| i.dur).sum();
        let idle: f64 = mine.iter().map(|i| i.idle).sum();
        let mut ops: BTreeMap<&str, u64> = BTreeMap::new();
        for i in &mine {
            *ops.entry(i.opcode.as_str()).or_default() += 1;
        }
        let mut ops: Vec<_> = ops.into_iter().collect();
        ops.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let dma = mine.iter().filter(|i| is_dma(&i.opcode)).count();
        let pct = if total > 0.0 { busy / total * 100.0 } else { 0.0 };
        let list = ops.iter().map(|(o, n)| format!("{o} {n}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(s, "{core:<width$} {engine:<6} {:>8} {busy:>12.3} {pct:>6.1}% {idle:>12.3} {dma:>6}  {list}", mine.len());
    }
    if dma_tracks.is_empty() {
        let _ = writeln!(s, "\nDMA: the profile records no DMA packets");
    } else {
        let _ = writeln!(s, "\n{:<width$} {:<10} {:>8} {:>14} {:>12} {:>7}", "core", "DMA queue", "packets", "bytes", "busy (us)", "busy %");
        for &t in &dma_tracks {
            let (core, queue) = &p.tracks[t];
            let mine: Vec<&Instr> = p.instrs.iter().filter(|i| i.track == t).collect();
            let busy: f64 = mine.iter().map(|i| i.dur).sum();
            let bytes: u64 = mine.iter().filter_map(|i| i.bytes).sum();
            let pct = if total > 0.0 { busy / total * 100.0 } else { 0.0 };
            let _ = writeln!(s, "{core:<width$} {:<10} {:>8} {bytes:>14} {busy:>12.3} {pct:>6.1}%", queue.trim_start_matches("DMA "), mine.len());
        }
        let any = covered(p.instrs.iter().filter(|i| i.is_packet()).map(|i| (i.ts, i.ts + i.dur)).collect());
        let bytes: u64 = p.instrs.iter().filter_map(|i| i.bytes).sum();
        let pct = if total > 0.0 { any / total * 100.0 } else { 0.0 };
        let _ = writeln!(s, "DMA: {packets} packets, {bytes} bytes on {} queues; some queue moves data during {any:.3} us ({pct:.1}% of the device time)", dma_tracks.len());
    }
    let mut waits: BTreeMap<(usize, &str), (f64, u64)> = BTreeMap::new();
    for i in p.instrs.iter().filter(|i| i.idle > 0.0) {
        let w = waits.entry((i.track, i.waited_on.as_deref().unwrap_or("nothing (issue and fetch)"))).or_default();
        w.0 += i.idle;
        w.1 += 1;
    }
    if !waits.is_empty() {
        let mut waits: Vec<_> = waits.into_iter().collect();
        waits.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
        let _ = writeln!(s, "\nidle time by what the engine waited on\n{:<width$} {:<6} {:>12} {:>6}  waited on", "core", "engine", "idle (us)", "waits");
        for ((t, on), (idle, n)) in waits.into_iter().take(12) {
            let _ = writeln!(s, "{:<width$} {:<6} {idle:>12.3} {n:>6}  {on}", p.tracks[t].0, p.tracks[t].1);
        }
    }
    let mut by_name: BTreeMap<(usize, &str), (f64, u64)> = BTreeMap::new();
    for i in p.instrs.iter().filter(|i| !i.is_packet()) {
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
    let _ = writeln!(s, "\n{} DMA-issuing instructions", p.instrs.iter().filter(|i| is_dma(&i.opcode)).count());
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
            let what = match (i.bytes, &i.waited_on) {
                (Some(b), _) => format!("{b} bytes"),
                (None, Some(on)) => format!("{}, after {:.3} us idle waiting on {on}", i.opcode, i.idle),
                (None, None) => i.opcode.clone(),
            };
            let _ = write!(
                s,
                "<div class=\"instr\" style=\"left:{left:.4}%;width:{width:.4}%;background:{}\" title=\"{} ({}) {:.3} us at {:.3} us\">{}</div>",
                colour(if i.is_packet() { "DMA" } else { &i.opcode }),
                esc(&i.name),
                esc(&what),
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

/// The profiles under `dir` (what `nrt run --profile DIR` and
/// NEURON_RT_INSPECT_OUTPUT_DIR hold: `neff_*/profile_vnc*_exec*.json`,
/// an inspect session's `profile_*.ntff`), in path order; the summaries
/// and system traces beside them are not profiles.
fn profiles_under(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("profile")) && path.extension().is_some_and(|e| e == "json" || e == "ntff") {
                found.push(path);
            }
        }
    }
    found.sort();
    if found.is_empty() {
        bail!("{} holds no profile (profile*.json or profile*.ntff); write one with `nrt run --profile {} MODEL`", dir.display(), dir.display());
    }
    Ok(found)
}

fn read_profile(file: &Path, label: &str) -> Result<Profile> {
    let bytes = std::fs::read(file).with_context(|| format!("reading profile {}", file.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: the profile is not JSON text (expected nrt's Chrome trace-event profile, not a NEFF or binary NTFF)", file.display()))?;
    Profile::parse_labelled(&text, label).with_context(|| file.display().to_string())
}

/// Runs `nrt profile FILE|DIR [--html OUT]`: a directory's profiles are
/// summarised together, each core's rows labelled with its file's name
/// when there are several.
pub fn run(file: &Path, html_out: Option<&Path>) -> Result<()> {
    let files = if file.is_dir() { profiles_under(file)? } else { vec![file.to_path_buf()] };
    let mut p = Profile::default();
    for f in &files {
        let label = if files.len() > 1 { f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default() } else { String::new() };
        p.merge(read_profile(f, &label)?);
    }
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
        let p = Profile::parse_labelled(SAMPLE, "").unwrap();
        assert_eq!(p.tracks, vec![("NC 0 (sg00)".to_string(), "PE".to_string()), ("NC 0 (sg00)".to_string(), "SP".to_string())]);
        let s = summary(&p);
        assert!(s.contains("MATMUL 2") && s.contains("100.0%") && s.contains("25.0%"), "{s}");
        assert!(s.contains("I-1-0") && s.contains("1 DMA-issuing"), "{s}");
        let h = html(&p);
        assert_eq!(h.matches("class=\"track\"").count(), 2);
        assert!(!h.contains("http") && !h.contains("<script"), "self-contained");
    }

    /// A DMA queue's packets get a table of their own (and stay out of the
    /// engines' and the top instructions'); idle time is summed by what
    /// the engine waited on.
    #[test]
    fn dma_packets_and_waits_are_summarised() {
        const WITH_DMA: &str = r#"{"displayTimeUnit":"ns","otherData":{"model":"m","lost_records":0},"traceEvents":[
          {"ph":"M","name":"process_name","pid":0,"args":{"name":"NC 0 (sg00)"}},
          {"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"PE"}},
          {"ph":"M","name":"thread_name","pid":0,"tid":116,"args":{"name":"DMA q1.0"}},
          {"ph":"X","pid":0,"tid":116,"ts":0.0,"dur":6.0,"name":"DMA 4096 B","args":{"bytes":4096,"queue":"q1.0"}},
          {"ph":"X","pid":0,"tid":116,"ts":4.0,"dur":4.0,"name":"DMA 1024 B","args":{"bytes":1024,"queue":"q1.0"}},
          {"ph":"X","pid":0,"tid":0,"ts":8.0,"dur":2.0,"name":"I-1-0","args":{"opcode":"MATMUL","idle_us":8.0,"waited_on":"DMA q1.0 (semaphore 8)"}}]}"#;
        let p = Profile::parse_labelled(WITH_DMA, "").unwrap();
        let s = summary(&p);
        assert!(s.starts_with("model m: 1 instructions and 2 DMA packets on 2 tracks over 10.000 us of device time"), "{s}");
        assert!(s.lines().any(|l| l.contains("q1.0") && l.contains(" 2 ") && l.contains("5120") && l.contains("10.000") && l.contains("100.0%")), "{s}");
        assert!(s.contains("DMA: 2 packets, 5120 bytes on 1 queues; some queue moves data during 8.000 us (80.0% of the device time)"), "{s}");
        assert!(s.lines().any(|l| l.contains("PE") && l.contains("8.000") && l.ends_with("DMA q1.0 (semaphore 8)")), "{s}");
        assert!(!s.lines().any(|l| l.starts_with("DMA 4096 B")), "packets are not instructions: {s}");
        let h = html(&p);
        assert_eq!(h.matches("class=\"track\"").count(), 2);
        assert!(h.contains("4096 bytes") && h.contains("after 8.000 us idle waiting on DMA q1.0 (semaphore 8)"), "{h}");
    }

    #[test]
    fn profiles_of_a_directory_keep_their_cores_apart() {
        let mut p = Profile::parse_labelled(SAMPLE, "profile_vnc0_exec0").unwrap();
        p.merge(Profile::parse_labelled(SAMPLE, "profile_vnc1_exec0").unwrap());
        assert_eq!(p.tracks.len(), 4);
        assert_eq!(p.tracks[2], ("profile_vnc1_exec0 NC 0 (sg00)".to_string(), "PE".to_string()));
        assert_eq!(p.model, "m");
        let s = summary(&p);
        assert!(s.lines().filter(|l| l.starts_with("profile_vnc1_exec0 NC 0 (sg00) PE")).count() == 1, "{s}");
    }

    #[test]
    fn bad_files_are_named() {
        assert!(Profile::parse_labelled("nope", "").unwrap_err().to_string().contains("not JSON"));
        assert!(Profile::parse_labelled("{}", "").unwrap_err().to_string().contains("traceEvents"));
    }
}
