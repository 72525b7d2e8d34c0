//! The skip marker end to end: a test that skips, run by libtest with its
//! output captured as in `cargo test`, still prints the marker, and
//! `scripts/test-summary` reads that run as one skipped test, not a pass.

use std::process::Command;

/// A helper that cannot do its work here, as the real-NEFF helpers are.
fn sample() -> Option<u32> {
    nrt_test_support::skip!(return None; "the sample is absent ({})", "first reason");
}

#[test]
#[ignore = "run by a_skipped_test_is_counted_as_skipped in a child process"]
fn a_test_that_skips() {
    assert_eq!(sample(), None);
    assert_eq!(sample(), None);
    nrt_test_support::skip!("second reason");
    #[allow(unreachable_code)]
    {
        panic!("skip! returns");
    }
}

/// Runs this binary's `a_test_that_skips` with `extra` libtest flags and
/// the two streams merged in one log, as scripts/test-all keeps them.
fn run_child(extra: &[&str], log: &std::path::Path) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let cmd = format!("'{}' --ignored --exact a_test_that_skips {} > '{}' 2>&1", exe.display(), extra.join(" "), log.display());
    let st = Command::new("sh").args(["-c", &cmd]).status().expect("run sh");
    let out = std::fs::read_to_string(log).expect("child log");
    assert!(st.success(), "the skipping test passes as far as libtest is concerned:\n{out}");
    out
}

#[test]
fn a_skipped_test_is_counted_as_skipped() {
    let summary = nrt_test_support::repo_root().join("scripts/test-summary");
    for extra in [&[][..], &["--test-threads=1"], &["--nocapture"]] {
        let log = std::env::temp_dir().join(format!("nrt-skip-marker-{}-{}.log", std::process::id(), extra.len()));
        let out = run_child(extra, &log);
        let marker = "SKIPPED: nrt-test-support/skip_marker::a_test_that_skips - the sample is absent (first reason)";
        assert_eq!(out.matches("SKIPPED: ").count(), 1, "one marker per test ({extra:?}):\n{out}");
        assert!(out.contains(marker), "{extra:?}:\n{out}");
        assert!(out.contains("test result: ok. 1 passed"), "{out}");
        let s = Command::new(&summary).arg(&log).output().expect("run scripts/test-summary");
        let _ = std::fs::remove_file(&log);
        assert!(s.status.success());
        let s = String::from_utf8_lossy(&s.stdout);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines,
            [
                "test-all: skipped nrt-test-support/skip_marker::a_test_that_skips - the sample is absent (first reason)",
                "test-all: 0 passed, 0 failed, 1 skipped",
            ],
            "{extra:?}"
        );
    }
}

/// The summary's other sources: pytest's count and its `-rs` reasons, a
/// step that ran nothing, ignored tests, and a failed step without a
/// counted failure.
#[test]
fn the_summary_counts_every_source() {
    let log = std::env::temp_dir().join(format!("nrt-skip-summary-{}.log", std::process::id()));
    std::fs::write(
        &log,
        "test result: ok. 5 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.01s\n\
         test b ... SKIPPED: nrt-x/t::b - no tool (apt-get install tool)\n\
         ok\n\
         SKIPPED [1] crates/nrt-py/tests/test_model.py:72: the sample NEFF is absent\n\
         ============ 30 passed, 1 skipped in 12.30s ============\n\
         NOT RUN: scripts/fuzz - no nightly toolchain\n",
    )
    .unwrap();
    let run = |failed_steps: &str| {
        let out = Command::new(nrt_test_support::repo_root().join("scripts/test-summary")).arg(&log).arg(failed_steps).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ok = run("0");
    assert_eq!(
        ok.lines().collect::<Vec<_>>(),
        [
            "test-all: skipped nrt-x/t::b - no tool (apt-get install tool)",
            "test-all: skipped pytest crates/nrt-py/tests/test_model.py:72: the sample NEFF is absent",
            "test-all: skipped scripts/fuzz - no nightly toolchain",
            "test-all: skipped 2 #[ignore] tests (benchmarks and the entry points of child processes; run with -- --ignored)",
            "test-all: 34 passed, 0 failed, 5 skipped",
        ]
    );
    assert!(run("1").ends_with("test-all: 34 passed, 1 failed, 5 skipped\n"));
    let _ = std::fs::remove_file(&log);
}
