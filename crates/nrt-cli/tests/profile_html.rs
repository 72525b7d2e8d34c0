//! `nrt profile` over the profile of the real compiler NEFF
//! (shared/data/neff/matmul_small.neff, read in place): the summary names
//! the compiler's instructions, and the `--html` timeline renders in
//! headless Chromium with one track per engine and a non-blank picture.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-profile-html-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the real NEFF once with a device profile; the profile's path, or
/// `None` (the test skipped) when the sample is absent.
fn real_profile(dir: &Path) -> Option<PathBuf> {
    if !Path::new(NEFF).exists() {
        nrt_test_support::skip!(return None; "{NEFF} is absent (the compiler's sample lives beside the checkout)");
    }
    let o = common::nrt_command()
        .args(["run", NEFF, "--profile", dir.join("prof").to_str().unwrap(), "--output-dir", dir.join("out").to_str().unwrap()])
        .env("NEURON_SIM_STATUS_DIR", "off")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("profile ")).unwrap_or_else(|| panic!("no profile line in {out}"));
    Some(PathBuf::from(line["profile ".len()..].rsplit_once(" (").unwrap().0))
}

/// Raw (still filtered) scanline bytes of a PNG.
fn png_pixels(png: &[u8]) -> (u32, u32, Vec<u8>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut at, mut idat, mut wh) = (8, Vec::new(), (0, 0));
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = &png[at + 4..at + 8];
        let body = &png[at + 8..at + 8 + len];
        if kind == b"IHDR" {
            wh = (u32::from_be_bytes(body[..4].try_into().unwrap()), u32::from_be_bytes(body[4..8].try_into().unwrap()));
        } else if kind == b"IDAT" {
            idat.extend_from_slice(body);
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    use std::io::Read;
    flate2::read::ZlibDecoder::new(&idat[..]).read_to_end(&mut raw).unwrap();
    (wh.0, wh.1, raw)
}

#[test]
fn the_real_neffs_profile_summary_names_the_compilers_instructions() {
    let dir = scratch("summary");
    let Some(prof) = real_profile(&dir) else { return };
    let o = common::nrt_command().args(["profile", prof.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("busy %") && s.contains("top instructions by time"), "{s}");
    // Compiler instruction names from the NEFF's debug info look like I-87-0.
    let named = s.lines().filter(|l| l.starts_with("I-")).count();
    assert!(named > 0, "no compiler-named instruction in\n{s}");
    for engine in ["PE", "ACT", "SP"] {
        assert!(s.lines().any(|l| l.split_whitespace().nth(3) == Some(engine) || l.contains(&format!(" {engine} "))), "no {engine} row in\n{s}");
    }
    let bad = common::nrt_command().args(["profile", NEFF]).output().unwrap();
    assert!(!bad.status.success() && text(&bad.stderr).contains("not JSON"), "{}", text(&bad.stderr));
}

#[test]
fn the_html_timeline_renders_in_headless_chromium() {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        nrt_test_support::skip!("/usr/bin/chromium is missing (Debian package chromium; scripts/test-all installs it)");
    }
    let dir = scratch("html");
    let Some(prof) = real_profile(&dir) else { return };
    let page = dir.join("timeline.html");
    let o = common::nrt_command().args(["profile", prof.to_str().unwrap(), "--html", page.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"), "the page fetches nothing");
    let shot = dir.join("shot.png");
    let profile_dir = dir.join("chromium-profile");
    let base = |extra: &[&str]| {
        let mut c = Command::new(chromium);
        c.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"])
            .arg(format!("--user-data-dir={}", profile_dir.display()))
            .args(extra)
            .arg(format!("file://{}", page.display()));
        c.output().expect("run chromium")
    };
    // One render: the DOM after layout, then the screenshot.
    let dom = base(&["--dump-dom"]);
    assert!(dom.status.success(), "{}", text(&dom.stderr));
    let dom = text(&dom.stdout);
    let tracks = dom.matches("class=\"track\"").count();
    assert!(tracks >= 3, "expected a track per engine, found {tracks}");
    assert!(dom.contains("data-engine=\"PE\"") && dom.contains("title=\"I-"), "tracks carry engines and compiler names");
    let o = base(&[&format!("--screenshot={}", shot.display()), "--window-size=1200,600"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (w, h, raw) = png_pixels(&std::fs::read(&shot).unwrap());
    assert_eq!((w, h), (1200, 600));
    let mut seen = [false; 256];
    for b in &raw {
        seen[*b as usize] = true;
    }
    assert!(seen.iter().filter(|s| **s).count() > 16, "the screenshot is blank");
}

/// The mlp example's profile explains its time: every DMA queue's packets
/// are tracks (bytes, start and end on the device clock) lying within the
/// device time, and nearly all the engines' idle time is attributed to
/// what they waited on; `nrt profile DIR` reads what `--profile DIR`
/// wrote.
#[test]
fn the_mlp_profile_has_dma_tracks_and_attributes_idle_time() {
    let dir = scratch("mlp-dma");
    let mlp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mlp");
    let prof = dir.join("prof");
    let o = common::nrt_command().args(["run", mlp.to_str().unwrap(), "--profile", prof.to_str().unwrap()]).env("NEURON_SIM_STATUS_DIR", "off").output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("profile ")).unwrap_or_else(|| panic!("no profile line in {out}"));
    let file = PathBuf::from(line["profile ".len()..].rsplit_once(" (").unwrap().0);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let spans = |dma: bool| -> Vec<(f64, f64)> {
        events.iter().filter(|e| e["ph"] == "X" && e["args"]["bytes"].is_u64() == dma).map(|e| (e["ts"].as_f64().unwrap(), e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap())).collect()
    };
    let (dma, instrs) = (spans(true), spans(false));
    assert!(!dma.is_empty(), "no DMA packet in the profile");
    let bytes: u64 = events.iter().filter_map(|e| e["args"]["bytes"].as_u64()).sum();
    // x [128, 256] in and out [128, 256] out, float32, at the least.
    assert!(bytes >= 2 * 128 * 256 * 4, "{bytes} bytes moved");
    // The device time (first START to last END) holds every record.
    let t0 = v["otherData"]["device_start_us"].as_f64().expect("the profile states its device time");
    let t1 = t0 + v["otherData"]["device_time_us"].as_f64().unwrap();
    assert!(dma.iter().chain(&instrs).all(|&(a, b)| a >= t0 - 1e-6 && b <= t1 + 1e-6 && b >= a), "a record outside the device time {t0}..{t1}");
    assert!(dma.iter().all(|(a, b)| b > a), "every packet takes device time");
    let busy: f64 = dma.iter().map(|(a, b)| b - a).sum();
    assert!(busy > 0.1 * (t1 - t0), "the DMA packets cover {busy} us of {} us", t1 - t0);
    // Idle time: (nearly) all of it waited on something named.
    let idle = |named: bool| -> f64 { events.iter().filter(|e| e["args"]["waited_on"].is_string() || !named).filter_map(|e| e["args"]["idle_us"].as_f64()).sum() };
    assert!(idle(false) > 0.0 && idle(true) >= 0.9 * idle(false), "{} of {} us idle attributed", idle(true), idle(false));
    assert!(events.iter().any(|e| e["args"]["waited_on"].as_str().is_some_and(|w| w.starts_with("DMA q"))), "no wait names a DMA queue");
    // A wait on another engine's semaphore names the engine whose
    // instructions raise it (ACT's RELUs wait for PE's MATMULs, POOL for
    // ACT, SP for POOL); every semaphore of the mlp is raised by the program.
    let waits: Vec<&str> = events.iter().filter_map(|e| e["args"]["waited_on"].as_str()).collect();
    for w in ["PE (semaphore 5)", "ACT (semaphore 6)", "POOL (semaphore 7)"] {
        assert!(waits.contains(&w), "no wait on {w:?} in {waits:?}");
    }
    assert!(!waits.iter().any(|w| w.starts_with("semaphore ")), "a bare semaphore number: {waits:?}");
    // The summary of the directory, and the timeline page.
    let page = dir.join("mlp.html");
    let o = common::nrt_command().args(["profile", prof.to_str().unwrap(), "--html", page.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    assert!(s.contains("DMA queue") && s.contains(" packets, ") && s.contains("idle time by what the engine waited on") && s.contains("DMA q"), "{s}");
    assert!(s.contains("  PE (semaphore 5)\n"), "{s}");
    assert!(std::fs::read_to_string(&page).unwrap().contains("waiting on PE (semaphore 5)"), "the page names the engine");
}
