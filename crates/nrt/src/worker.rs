//! The panic guard of the runtime's own threads (execution-unit workers,
//! network proxies) and of work they run for others: a panic becomes an
//! error naming the thread and what it said, which the thread then
//! publishes to everyone waiting on it, so no waiter is left waiting for
//! a result that will never come (docs/reliability.md, "Waits and their
//! bounds").

use crate::status::{NrtError, NrtResult, NrtStatus};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The text a panic carried (its `&str` or `String` payload).
pub fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload.downcast_ref::<&str>().map(|s| (*s).to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic without a message".to_string())
}

/// Runs `f`; a panic inside it becomes an error of `status` saying that
/// `who` panicked and what it said. Allocation-free unless `f` panics.
pub fn guarded<T>(who: &str, status: NrtStatus, f: impl FnOnce() -> NrtResult<T>) -> NrtResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(NrtError::new(status, format!("{who} panicked: {}", panic_text(&*p)))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_naming_the_thread_and_the_message() {
        let e = guarded::<()>("the test thread", NrtStatus::Failure, || panic!("went {} wrong", "badly")).unwrap_err();
        assert_eq!((e.status, e.message.as_str()), (NrtStatus::Failure, "the test thread panicked: went badly wrong"));
        let e = guarded::<()>("it", NrtStatus::Timeout, || panic!("static text")).unwrap_err();
        assert_eq!(e.message, "it panicked: static text");
        assert_eq!(guarded("it", NrtStatus::Failure, || Ok(7)).unwrap(), 7);
        let e = guarded::<()>("it", NrtStatus::Failure, || std::panic::panic_any(5u8)).unwrap_err();
        assert_eq!(e.message, "it panicked: a panic without a message");
    }
}
