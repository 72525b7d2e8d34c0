//! The soak's figures (harness = false): executions per second, failures
//! by status, reloads, unit restarts and the RSS curve of the soak run
//! (see `tests/soak_run`), with the checks of the ignored soak test.
//!
//! `cargo bench -p nrt --bench soak` runs the sizes (4 threads x
//! 10,000 executions, a fault every 300, `SOAK_*` to change them). Any
//! other invocation (`cargo test --all-targets` runs bench targets without
//! `--bench`) does a tiny pass so the test suite stays fast.

#[path = "../tests/exec_support/mod.rs"]
mod exec_support;
#[path = "../tests/soak_run/mod.rs"]
mod soak_run;

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let plan = if full { soak_run::SoakPlan::from_env() } else { soak_run::SoakPlan { threads: 2, execs: 100, fault_every: 40, burst: 4 } };
    let r = soak_run::run(plan);
    r.print(&plan);
    let mut bad = Vec::new();
    if r.ok + r.failed != r.total {
        bad.push(format!("{} executions settled of {}", r.ok + r.failed, r.total));
    }
    if !r.callback_anomalies.is_empty() {
        bad.push(format!("callbacks lost or repeated: {:?}", r.callback_anomalies));
    }
    if r.ledger_end != r.ledger_baseline || r.ledger_models_left != 0 {
        bad.push(format!("ledger {} B at the end against baseline {} B ({} models still booked)", r.ledger_end, r.ledger_baseline, r.ledger_models_left));
    }
    if let Some((lo, hi)) = r.warm_rss() {
        if hi as f64 > lo as f64 * 1.05 {
            bad.push(format!("RSS grew {:+.1}% after warm-up", (hi as f64 / lo as f64 - 1.0) * 100.0));
        }
    }
    if !bad.is_empty() {
        eprintln!("soak: FAILED: {}", bad.join("; "));
        std::process::exit(1);
    }
    println!("soak: passed");
}
