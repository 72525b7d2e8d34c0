//! The kinds of `NEURON_SIM_INJECT` that the runtime acts on (the
//! simulator parses the device's kinds and skips these, its
//! `fault::RUNTIME_KINDS`): failures of the runtime's own threads, which no
//! device evidence can stand for. Each is `kind[:after=N]` and fires once
//! N units of the thread's work went normally (default 0):
//!
//! | kind | thread | fires |
//! |---|---|---|
//! | `proxy_fail` | a collectives network proxy | fails with NRT_NETWORK_PROXY_FAILURE before sending message N+1 |
//! | `proxy_panic` | a collectives network proxy | panics before sending message N+1 |
//! | `proxy_thread_panic` | a persistent network proxy thread (a loaded NEFF's executions) | panics outside any operation once N of its rounds moved something |
//! | `proxy_slow:ms=D` | a collectives network proxy | sleeps D ms before ringing each landing step (a slow peer) |
//! | `xu_panic` | every execution unit's worker | panics once it took request N+1 of its unit (mid-request) |
//!
//! Read once per runtime (`Runtime::env`); the checks sit where the
//! thread already counts its work, so a runtime without injection pays
//! nothing for them.

use crate::config::Env;

/// The variable (the simulator's fault list, shared with it).
pub const VARIABLE: &str = "NEURON_SIM_INJECT";
/// A network proxy fails.
pub const PROXY_FAIL: &str = "proxy_fail";
/// A network proxy thread panics.
pub const PROXY_PANIC: &str = "proxy_panic";
/// A persistent network proxy thread panics outside its operations.
pub const PROXY_THREAD_PANIC: &str = "proxy_thread_panic";
/// A network proxy lands every message late (a slow peer).
pub const PROXY_SLOW: &str = "proxy_slow";
/// An execution unit's worker thread panics.
pub const XU_PANIC: &str = "xu_panic";
/// Every runtime kind.
pub const KINDS: [&str; 5] = [PROXY_FAIL, PROXY_PANIC, PROXY_THREAD_PANIC, PROXY_SLOW, XU_PANIC];

/// The `after=` count of `kind` in `env`'s `NEURON_SIM_INJECT` (0 when
/// not given), `None` when the kind is not listed.
pub fn after(env: &Env, kind: &str) -> Option<u64> {
    after_in(env.get(VARIABLE)?, kind)
}

fn after_in(list: &str, kind: &str) -> Option<u64> {
    param_in(list, kind, "after").map(|n| n.unwrap_or(0))
}

/// The `KEY=` number of `kind` in `env`'s `NEURON_SIM_INJECT` (0 when
/// not given), `None` when the kind is not listed.
pub fn value(env: &Env, kind: &str, key: &str) -> Option<u64> {
    param_in(env.get(VARIABLE)?, kind, key).map(|n| n.unwrap_or(0))
}

/// `Some(the KEY= number, if given)` when `kind` is listed.
fn param_in(list: &str, kind: &str, key: &str) -> Option<Option<u64>> {
    list.split(',').find_map(|spec| {
        let mut parts = spec.trim().split(':');
        if parts.next()?.split('@').next()? != kind {
            return None;
        }
        Some(parts.find_map(|p| p.strip_prefix(key)?.strip_prefix('=')).and_then(|n| n.parse().ok()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_found_with_its_count() {
        assert_eq!(after_in("hang, xu_panic:after=3", XU_PANIC), Some(3));
        assert_eq!(after_in("proxy_panic", PROXY_PANIC), Some(0));
        assert_eq!(after_in("proxy_panic", PROXY_FAIL), None);
        assert_eq!(after_in("", XU_PANIC), None);
        assert_eq!(param_in("proxy_slow:ms=40", PROXY_SLOW, "ms"), Some(Some(40)));
        assert_eq!(after_in("proxy_thread_panic:after=2", PROXY_PANIC), None, "kinds match whole");
    }

    /// The simulator skips exactly the kinds the runtime acts on.
    #[test]
    fn the_simulator_skips_every_runtime_kind() {
        let mut sim = nrt_sim::fault::RUNTIME_KINDS.to_vec();
        sim.sort_unstable();
        let mut ours = KINDS.to_vec();
        ours.sort_unstable();
        assert_eq!(sim, ours);
    }
}
