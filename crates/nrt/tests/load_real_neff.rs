//! The real compiler NEFF (shared/data/neff/matmul_small.neff): it parses
//! and plans (LNC 2, two subgraphs, dge-table, state buffer, constant), and
//! until its 0xD4 DMA records are lowered the load fails with libnrt's
//! unsupported-opcode message naming engine and index, rolling back.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::plan::{self, Placement};
use nrt::program::{MemRefKind, Program};

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

fn real() -> Option<Vec<u8>> {
    match std::fs::read(NEFF) {
        Ok(b) => Some(b),
        Err(e) => {
            println!("skipping: {NEFF} is not available ({e})");
            None
        }
    }
}

#[test]
fn real_neff_parses_and_plans() {
    let Some(bytes) = real() else { return };
    let neff = nrt::load::parse(&bytes, false).unwrap();
    let program = Program::from_neff(&neff).unwrap();
    assert_eq!((program.lnc_size, program.subgraphs.len()), (2, 2));
    assert_eq!(program.target.as_deref(), Some("cayman"));
    let sg = &program.subgraphs[0];
    assert!(matches!(sg.var("SB").unwrap().kind, MemRefKind::StateBuffer));
    assert!(matches!(sg.var("DGETable0").unwrap().kind, MemRefKind::DgeTable { ref ids } if ids == &[1, 2, 3]));
    assert!(matches!(sg.var("identity_82_sg0000").unwrap().kind, MemRefKind::File { payload_len } if payload_len > 0));
    assert_eq!(sg.queue_sets.len(), 2);
    assert!(sg.queue_sets.iter().all(|q| q.queues == 16 && q.semaphores.len() == 16));
    let plans = plan::plan(&program);
    let p = &plans[0];
    assert_eq!(p.var(0).unwrap().placement, Placement::StateBuffer);
    assert_eq!(p.var(1).unwrap().placement, Placement::Io(0));
    assert_eq!(p.var(3).unwrap().placement, Placement::Io(2));
    assert!(matches!(p.var(4).unwrap().placement, Placement::Private(_)));
    assert!(matches!(p.var(5).unwrap().placement, Placement::Private(_)));
}

#[test]
fn real_neff_load_fails_cleanly_on_its_dma_pseudo_records() {
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    host.install_vcore(0).unwrap();
    let baseline = host.memory().ledger();
    let e = host.load(&bytes, 0, -1).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.starts_with("Unsupported hardware operator code 212 found in neff"), "{}", e.message);
    assert!(e.message.contains("POOL instruction 2"), "{}", e.message);
    assert_eq!(host.memory().ledger(), baseline);
    assert!(host.models().ids().is_empty());
}
