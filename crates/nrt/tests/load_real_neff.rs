//! The real compiler NEFF (shared/data/neff/matmul_small.neff): it parses
//! and plans (LNC 2, two subgraphs, dge-table, state buffer, constant), its
//! 0xD4 DMA records resolve against the dynamic queue sets, and it loads
//! (execution is tested in real_neff.rs).

mod exec_support;

use exec_support::*;
use nrt::load::plan::{self, Placement};
use nrt::program::{MemRefKind, Program};

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

/// The compiler's sample NEFF; `None` (the calling test reported skipped)
/// when it cannot be read.
fn real() -> Option<Vec<u8>> {
    match std::fs::read(NEFF) {
        Ok(b) => Some(b),
        Err(e) => nrt_test_support::skip!(return None; "{NEFF} cannot be read ({e}; the compiler's sample lives beside the checkout)"),
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
fn real_neff_dma_records_resolve_to_dynamic_queue_slots() {
    let Some(bytes) = real() else { return };
    let neff = nrt::load::parse(&bytes, false).unwrap();
    let program = Program::from_neff(&neff).unwrap();
    let sg = &program.subgraphs[1];
    let got: Vec<(&str, usize, u32, usize, u64, u64)> =
        sg.dma2d.iter().map(|d| (d.engine.name(), d.index, d.semaphore, d.slot, d.src.var_id, d.dst.var_id)).collect();
    // Pool: x, y (two halves) into SB, the result out to output0 (through
    // DGE entries 0, 1, 1, 2 = vars 1, 2, 2, 3); SP: the identity constant.
    assert_eq!(
        got,
        vec![("POOL", 2, 24, 0, 1, 0), ("POOL", 3, 25, 1, 2, 0), ("POOL", 4, 26, 2, 2, 0), ("POOL", 5, 27, 3, 0, 3), ("SP", 2, 8, 0, 4, 0)]
    );
    // sg01 computes the second column half: the offsets that differ from sg00.
    assert_eq!((sg.dma2d[1].src.offset, sg.dma2d[2].src.offset, sg.dma2d[3].dst.offset), (0x80, 0x8080, 0x80));
    let out = &sg.dma2d[3];
    assert_eq!((out.src.dtype, out.dst.dtype, out.src.row_bytes, out.dst.row_bytes), (nrt_isa::dtype::Dtype::Float32, nrt_isa::dtype::Dtype::Float16, 256, 128));
}

#[test]
fn real_neff_loads_and_unloads_without_leaking() {
    let Some(bytes) = real() else { return };
    let (_dev, host) = host();
    host.install_vcore(0).unwrap();
    let baseline = host.memory().ledger();
    let id = host.load(&bytes, 0, -1).unwrap_or_else(|e| panic!("{} {}", e.status, e.message));
    host.unload(id).unwrap();
    assert_eq!(host.memory().ledger(), baseline);
    assert!(host.models().ids().is_empty());
}
