//! The skip marker: how a test that cannot run here says so.
//!
//! libtest has no "skipped" outcome: a test that returns early is counted
//! as passed. [`skip!`](crate::skip!) writes `SKIPPED: <test> - <reason>`
//! on a line of its own straight to the process's stderr (not through
//! `eprintln!`, which the harness captures for passing tests), so the
//! marker reaches `scripts/test-all`'s log whatever the capture mode, and
//! the summary there counts the test as skipped instead.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// What every marker line starts with; `scripts/test-summary` reads it.
pub const MARKER: &str = "SKIPPED: ";

/// Ends the calling function after reporting the running test as skipped.
///
/// `skip!("{tool} is not installed")` returns `()`; a helper that returns
/// a value gives it first: `skip!(return None; "{path} is absent")`. The
/// reason should say what is missing and how to get it (the package, or
/// that `scripts/test-all` installs it).
#[macro_export]
macro_rules! skip {
    (return $value:expr; $($reason:tt)+) => {{
        $crate::report(env!("CARGO_PKG_NAME"), env!("CARGO_CRATE_NAME"), ::std::format_args!($($reason)+));
        return $value;
    }};
    ($($reason:tt)+) => {{
        $crate::report(env!("CARGO_PKG_NAME"), env!("CARGO_CRATE_NAME"), ::std::format_args!($($reason)+));
        return;
    }};
}

/// Writes the marker for the running test (once per test, however often a
/// test's helpers report). `package` and `crate_name` are the caller's
/// (the macro passes them); the test is the current thread's name, which
/// libtest sets to the test's path.
pub fn report(package: &str, crate_name: &str, reason: fmt::Arguments<'_>) {
    static SEEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let current = std::thread::current();
    let id = test_id(package, crate_name, current.name());
    if !SEEN.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone()) {
        return;
    }
    let line = marker_line(&id, &reason.to_string());
    // One write of the whole line: stderr is unbuffered, so the line is
    // never split by another thread's output.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The test's name in the marker: `package::path` for a crate's unit
/// tests, `package/target::path` for an integration test, bench or
/// example target (`nrt-capi/c_api::bad_arguments_...`). A thread libtest
/// did not name (a `harness = false` target) gives the target alone.
pub fn test_id(package: &str, crate_name: &str, thread: Option<&str>) -> String {
    let target = if crate_name == package.replace('-', "_") { package.to_string() } else { format!("{package}/{crate_name}") };
    match thread.filter(|t| *t != "main") {
        Some(test) => format!("{target}::{test}"),
        None => target,
    }
}

/// The marker line, newline-terminated; a reason spanning lines is joined
/// into one so the summary sees it whole.
pub fn marker_line(id: &str, reason: &str) -> String {
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{MARKER}{id} - {reason}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_and_integration_tests_are_told_apart() {
        assert_eq!(test_id("nrt-net", "nrt_net", Some("fabric::tests::layouts")), "nrt-net::fabric::tests::layouts");
        assert_eq!(test_id("nrt-capi", "c_api", Some("bad_args")), "nrt-capi/c_api::bad_args");
        assert_eq!(test_id("nrt-sim", "q7", Some("main")), "nrt-sim/q7");
        assert_eq!(test_id("nrt-sim", "q7", None), "nrt-sim/q7");
    }

    #[test]
    fn the_marker_is_one_line() {
        assert_eq!(marker_line("a::b", "no clang\n  (apt-get install clang)"), "SKIPPED: a::b - no clang (apt-get install clang)\n");
    }
}
