//! The models and their mutation checks (see the crate docs).

mod dma_doorbell;
mod drain_claim;
mod event_count;
mod harvest_interrupt;
mod nq_ring;
mod sem_block;
mod wake;
mod xu_death;
mod xu_queue;
mod xu_watch;

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f` under loom: every interleaving up to the preemption bound
/// (`LOOM_MAX_PREEMPTIONS`, 3 when unset), every weak-memory outcome loom
/// models.
pub(crate) fn check(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

/// The mutation check of a model whose failure is a deadlock, which loom
/// reports by aborting the process: runs the `#[ignore]`d test `name` (the
/// weakened model) in a child process and returns its output, which must
/// show loom's abort naming `needle`.
pub(crate) fn must_abort(name: &str, needle: &str) -> String {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the weakened model {name} passed: loom found no execution that breaks it\n{text}"
    );
    assert!(
        text.to_lowercase().contains(needle),
        "the weakened model {name} failed, but not with {needle:?}:\n{text}"
    );
    text
}

/// The mutation check: `f` with a weakened ordering must fail under loom
/// (an assertion, a deadlock or a data race it reports); returns the
/// failure's message.
pub(crate) fn must_fail(f: impl Fn() + Sync + Send + 'static) -> String {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(|| check(f)));
    std::panic::set_hook(quiet);
    match r {
        Ok(()) => panic!(
            "the weakened model passed: loom found no execution that breaks it, so the model does not check the ordering it names"
        ),
        Err(e) => e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    }
}
