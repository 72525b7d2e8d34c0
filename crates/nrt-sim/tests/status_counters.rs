//! What the device itself publishes in its datastore for the tools
//! (`docs/status-file.md`): the PE array's multiply-accumulates per
//! physical core (`NDS_NC_COUNTER_MAC_COUNT`, shown as two floating-point
//! operations each), and the memory errors it detected, counted in the
//! store's table by kind (the driver's `stats/hardware` counters).

mod common;

use common::{C0, PSUM, Rig, t3};
use nrt_hal::EngineId;
use nrt_hal::status_read::{DeviceStatus, decode};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{Accumulate, DtypeCode, EventSemaphore, Instruction, LdWeights, Matmul};
use nrt_isa::operand::{Addr4, Tensor3d};
use nrt_sim::{FaultKind, FaultSpec};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("nrt-sim-status-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn status(dir: &Path, ns: &str) -> DeviceStatus {
    let bytes = std::fs::read(nrt_hal::status::status_file(dir, ns, 0)).unwrap();
    decode(&bytes, nrt_hal::status::process_alive).unwrap()
}

fn own(s: &DeviceStatus) -> &nrt_hal::status_read::ProcessStatus {
    s.processes.iter().find(|p| p.pid == std::process::id()).expect("this process's entry")
}

#[test]
fn matmuls_count_two_flops_per_multiply_accumulate_on_their_core() {
    let d = dir("flops");
    let rig = Rig::publishing(&[], Some((d.clone(), "flops")));
    let (k, m, n) = (64u8, 32u8, 48u16);
    let dt = Dtype::Float32;
    let code = DtypeCode::of(dt);
    let last = (u32::from(m) - 1) * dt.size_bytes() as u32;
    let weights = Tensor3d { start: Addr4(last), step: [-1, 0, 0], num: [u16::from(m), 1, 1] };
    let ld = LdWeights { weights, dtype: code, rows: k, cols: m, row_mask: 0xF, col_mask: 0xF, ..Default::default() };
    let mm = |accumulate| Matmul { moving: t3(0x1000, n), dtype: code, rows: k, cols: m, accumulate, row_mask: 0xF, col_mask: 0xF, psum: t3(PSUM, n), ..Default::default() };
    rig.run(EngineId::Pe, &[Instruction::from(ld), Instruction::from(mm(Accumulate::Start)), Instruction::from(mm(Accumulate::Stop))]);
    let s = status(&d, "flops");
    let p = own(&s);
    let one = 2 * u64::from(k) * u64::from(m) * u64::from(n);
    assert_eq!(p.cores[C0.0 as usize].flops, 2 * one, "two MATMULs of {k}x{m}x{n}");
    assert!(p.cores.iter().skip(1).all(|c| c.flops == 0), "only the core that ran them");
    // Work without a MATMUL counts none.
    rig.run(EngineId::Act, &[Instruction::from(EventSemaphore::default())]);
    assert_eq!(own(&status(&d, "flops")).cores[0].flops, 2 * one);
}

#[test]
fn memory_errors_are_counted_by_kind_in_the_table() {
    for (kind, which) in [(FaultKind::HbmUe, 0), (FaultKind::HbmUeRepairable, 1), (FaultKind::SramParity, 2)] {
        let d = dir(kind.name());
        let rig = Rig::publishing(&[FaultSpec::new(kind)], Some((d.clone(), kind.name())));
        rig.load(EngineId::Pe, &[Instruction::from(EventSemaphore::default())]);
        assert_eq!(status(&d, kind.name()).hardware, Default::default(), "nothing counted before the fault");
        rig.ring();
        assert!(!rig.error_records().is_empty(), "{kind}: the fault was reported");
        let h = status(&d, kind.name()).hardware;
        let got = [h.mem_ecc_uncorrected, h.mem_ecc_repairable_uncorrected, h.sram_ecc_uncorrected];
        let mut want = [0u64; 3];
        want[which] = 1;
        assert_eq!(got, want, "{kind}");
    }
}
