//! The one wrapper every export goes through: it catches panics (a panic
//! becomes NRT_FAILURE plus a log line), maps the runtime's errors to
//! NRT_STATUS, and logs each failure once (the error line, plus libnrt's
//! infodump block when a runtime is running).

use crate::global;
use crate::status::{NRT_STATUS, SUCCESS, of_error};
use nrt_core::log::{self, Level, Module};
use nrt_core::{NrtError, NrtResult, NrtStatus};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body` for export `api` and returns its C status.
pub fn call(api: &str, body: impl FnOnce() -> NrtResult<()>) -> NRT_STATUS {
    match value(api, body) {
        Some(()) => SUCCESS,
        None => last_status(),
    }
}

thread_local! {
    static LAST: std::cell::Cell<NRT_STATUS> = const { std::cell::Cell::new(0) };
}

fn last_status() -> NRT_STATUS {
    LAST.with(|c| c.get())
}

/// Runs `body` for export `api`; on failure (error or panic) logs it,
/// records the status for [`call`] and returns `None`. Exports returning
/// something other than NRT_STATUS (`void *`, `size_t`, `void`) use this
/// and pick their documented failure value.
pub fn value<T>(api: &str, body: impl FnOnce() -> NrtResult<T>) -> Option<T> {
    let outcome = catch_unwind(AssertUnwindSafe(body));
    let err = match outcome {
        Ok(Ok(v)) => return Some(v),
        Ok(Err(e)) => e,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".to_string());
            NrtError::failure(format!("internal error (panic) in {api}: {what}"))
        }
    };
    LAST.with(|c| c.set(of_error(&err)));
    report(api, &err);
    None
}

/// Logs a failed call: through the running runtime (error line and
/// infodump) when there is one, else a single error line.
pub fn report(api: &str, err: &NrtError) {
    // Logging must never turn a failure into a crash.
    let _ = catch_unwind(AssertUnwindSafe(|| match global::running() {
        Some(rt) if !matches!(err.status, NrtStatus::Uninitialized | NrtStatus::Closed) => rt.report_failure(api, err),
        _ => log::write(Level::Error, Module::Nrt, api, format_args!("{} ({})", err.message, err.status)),
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_failure() {
        let s = call("nrt_test_panic", || panic!("boom"));
        assert_eq!(s, NrtStatus::Failure.code());
    }

    #[test]
    fn errors_map_to_their_code() {
        assert_eq!(call("nrt_test", || Err(NrtError::new(NrtStatus::Timeout, "slow"))), 5);
        assert_eq!(call("nrt_test", || Ok(())), 0);
        assert_eq!(value("nrt_test", || Ok(7)), Some(7));
    }
}
