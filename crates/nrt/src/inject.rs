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
/// An execution unit's worker thread panics.
pub const XU_PANIC: &str = "xu_panic";
/// Every runtime kind.
pub const KINDS: [&str; 3] = [PROXY_FAIL, PROXY_PANIC, XU_PANIC];

/// The `after=` count of `kind` in `env`'s `NEURON_SIM_INJECT` (0 when
/// not given), `None` when the kind is not listed.
pub fn after(env: &Env, kind: &str) -> Option<u64> {
    after_in(env.get(VARIABLE)?, kind)
}

fn after_in(list: &str, kind: &str) -> Option<u64> {
    list.split(',').find_map(|spec| {
        let mut parts = spec.trim().split(':');
        if parts.next()?.split('@').next()? != kind {
            return None;
        }
        Some(parts.find_map(|p| p.strip_prefix("after=")).and_then(|n| n.parse().ok()).unwrap_or(0))
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
