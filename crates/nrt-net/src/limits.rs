//! The bounds on every wait and the warning a wait logs while it lasts.
//!
//! libnrt's collectives library waits forever and repeats "Timeout waiting
//! for ... (waited 120 sec) - retrying" every 120 s. Users' first complaint
//! is exactly that hang, so here every wait ends: it logs the same kind of
//! warning while it lasts and then fails naming what never came. The spec
//! gives no libnrt variable for these bounds, so they are ours, named in
//! libnrt's style:
//!
//! | Variable | Bounds | Default |
//! |---|---|---|
//! | `NEURON_RT_CC_BOOTSTRAP_TIMEOUT` | the whole rendezvous at `NEURON_RT_ROOT_COMM_ID` | 600 s |
//! | `NEURON_RT_CC_NET_TIMEOUT` | one transport wait: accept, a send or receive to complete | 600 s |
//!
//! This crate reads no environment: the runtime parses both variables in
//! `nrt::config` (seconds, decimals allowed, greater than zero) and hands
//! each wait its [`Bound`]. The warning repeats every 120 s like libnrt's,
//! or every quarter of the limit when that is shorter.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{NetError, secs};

/// Variable bounding the bootstrap rendezvous.
pub const BOOTSTRAP_TIMEOUT_VAR: &str = "NEURON_RT_CC_BOOTSTRAP_TIMEOUT";
/// Variable bounding each transport wait.
pub const NET_TIMEOUT_VAR: &str = "NEURON_RT_CC_NET_TIMEOUT";
/// libnrt's warning period.
pub const WARN_PERIOD: Duration = Duration::from_secs(120);

/// One bound: how long, and which variable says so (for messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// How long the wait may last.
    pub limit: Duration,
    /// The variable that set it.
    pub variable: &'static str,
}

impl Bound {
    /// A bound of `limit` attributed to `variable` (the caller read the
    /// value from its configuration).
    pub const fn new(limit: Duration, variable: &'static str) -> Bound {
        Bound { limit, variable }
    }

    /// How often a wait under this bound logs its warning.
    pub fn warn_period(&self) -> Duration {
        WARN_PERIOD.min(self.limit / 4).max(Duration::from_millis(1))
    }

    /// The timeout error for `what` after `waited`.
    pub fn timeout(&self, what: impl Into<String>, waited: Duration) -> NetError {
        NetError::Timeout { what: what.into(), waited, variable: self.variable }
    }
}

/// Where waits send their warnings. The runtime routes these into its log;
/// the default prints a libnrt-style line on stderr.
pub type WarnSink = Arc<dyn Fn(&str) + Send + Sync>;

/// The default sink: `PID:TID CCOM WARN message` on stderr, the shape of
/// libnrt's collectives lines.
pub fn stderr_sink() -> WarnSink {
    Arc::new(|msg: &str| {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) };
        eprintln!("{}:{} CCOM WARN {msg}", std::process::id(), tid);
    })
}

/// A wait in progress under a [`Bound`]: knows when to warn and when to
/// give up.
pub(crate) struct Waiting<'a> {
    start: Instant,
    bound: Bound,
    next_warn: Duration,
    sink: &'a WarnSink,
}

impl<'a> Waiting<'a> {
    pub(crate) fn start(bound: Bound, sink: &'a WarnSink) -> Waiting<'a> {
        Waiting { start: Instant::now(), next_warn: bound.warn_period(), bound, sink }
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time left before the bound (zero once past it).
    pub(crate) fn remaining(&self) -> Duration {
        self.bound.limit.saturating_sub(self.elapsed())
    }

    pub(crate) fn expired(&self) -> bool {
        self.elapsed() >= self.bound.limit
    }

    /// Logs "`what` (waited N sec) - retrying ..." once per warning period.
    pub(crate) fn tick(&mut self, what: impl FnOnce() -> String) {
        let e = self.elapsed();
        if e >= self.next_warn && e < self.bound.limit {
            (self.sink)(&format!(
                "{} (waited {}) - retrying; giving up after {} ({})",
                what(),
                secs(self.next_warn),
                secs(self.bound.limit),
                self.bound.variable
            ));
            self.next_warn += self.bound.warn_period();
        }
    }

    pub(crate) fn timeout(&self, what: impl Into<String>) -> NetError {
        self.bound.timeout(what, self.bound.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn warn_period_is_libnrt_s_or_a_quarter() {
        assert_eq!(Bound::new(Duration::from_secs(600), "V").warn_period(), WARN_PERIOD);
        assert_eq!(Bound::new(Duration::from_secs(2), "V").warn_period(), Duration::from_millis(500));
    }

    #[test]
    fn waiting_warns_then_times_out() {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        let sink: WarnSink = Arc::new(move |m: &str| l2.lock().unwrap().push(m.to_string()));
        let mut w = Waiting::start(Bound::new(Duration::from_millis(200), "NEURON_RT_X"), &sink);
        while !w.expired() {
            w.tick(|| "Timeout waiting for a thing".into());
            std::thread::sleep(Duration::from_millis(5));
        }
        let lines = lines.lock().unwrap();
        assert!(!lines.is_empty(), "no warning while waiting");
        assert!(lines[0].starts_with("Timeout waiting for a thing (waited 50 ms) - retrying"), "{}", lines[0]);
        let e = w.timeout("the thing").to_string();
        assert!(e.contains("the thing did not happen within 200 ms") && e.contains("NEURON_RT_X"), "{e}");
    }
}
