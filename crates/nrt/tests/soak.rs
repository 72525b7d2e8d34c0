//! Soak (ignored: a long run, not a check of each commit): threads each
//! running thousands of executions, synchronous and asynchronous in turn,
//! over three models on one simulated device, with a fault injected every
//! few hundred executions; poisoned models are reloaded and unrecoverable
//! execution units replaced (see `soak_run`). Checked: every execution is
//! settled exactly once, every completion callback fires exactly once, the
//! memory ledger is back to its baseline at the end, and the resident set
//! stays within 5% over the second half of the run (the first is warm-up,
//! see `SoakReport::warm_rss`). Prints the counts and the RSS curve.
//!
//! `cargo test --release -p nrt --test soak -- --ignored --nocapture`
//! (`SOAK_THREADS`, `SOAK_EXECS` per thread, `SOAK_FAULT_EVERY`,
//! `SOAK_BURST`). The figures come from `cargo bench -p nrt --bench soak`.

mod exec_support;
mod soak_run;

#[test]
#[ignore = "a soak run: cargo test --release -p nrt --test soak -- --ignored --nocapture"]
fn soak_mixed_sync_async_faults_reloads_and_flat_memory() {
    let plan = soak_run::SoakPlan::from_env();
    let r = soak_run::run(plan);
    r.print(&plan);
    assert_eq!(r.ok + r.failed, r.total, "executions lost or counted twice");
    assert!(r.failed < r.total / 10, "most executions must succeed");
    assert!(r.async_execs >= r.total / 3, "about half the executions are asynchronous");
    assert!(r.callback_anomalies.is_empty(), "completion callbacks lost or repeated: {:?}", r.callback_anomalies);
    if plan.fault_every > 0 && r.total >= 10 * plan.fault_every {
        assert!(r.injected > 0 && r.reloads > 0, "faults were injected and poisoned models reloaded");
    }
    assert_eq!(r.ledger_models_left, 0, "memory still booked to models at the end");
    assert_eq!(r.ledger_end, r.ledger_baseline, "the memory ledger is back to its baseline");
    if let Some((lo, hi)) = r.warm_rss() {
        assert!(hi as f64 <= lo as f64 * 1.05, "RSS grew by more than 5% after warm-up");
    }
}

/// A short run of the same code in the normal test suite, so the soak's
/// machinery (async settling, reloads, unit restarts) cannot rot unseen.
#[test]
fn a_short_soak_settles_everything_once() {
    let plan = soak_run::SoakPlan { threads: 2, execs: 400, fault_every: 50, burst: 8 };
    let r = soak_run::run(plan);
    r.print(&plan);
    assert_eq!(r.ok + r.failed, r.total, "executions lost or counted twice");
    assert!(r.async_execs > 0 && r.callbacks > 0);
    assert!(r.callback_anomalies.is_empty(), "{:?}", r.callback_anomalies);
    assert_eq!(r.ledger_end, r.ledger_baseline);
}
