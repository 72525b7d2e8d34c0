//! Sequencer throughput: control instructions per second of a register
//! loop (CTRL_AL + CTRL_BR), deterministic and pooled.
//!
//! Run: `cargo bench -p nrt-sim --bench engine`.

use nrt_hal::conformance::wait_until;
use nrt_hal::{CoreId, Device, EngineId, MemoryLocation, NqSpec, NqType};
use nrt_isa::instr::{AluOp, BranchCmp, BranchTarget, CtrlAl, CtrlBr, DataSource, DtypeCode, PseudoInst, PseudoSub};
use nrt_sim::engine::record::build;
use nrt_sim::{SimConfig, SimDevice};
use std::time::Instant;

const ITERATIONS: u32 = 1_000_000;

fn main() {
    let int32 = DtypeCode(8);
    let program: Vec<[u8; 64]> = vec![
        build::record(0xA0, (5, 1), (7, 1), 1),
        CtrlAl { op: AluOp::Bypass, dtype: int32, src1: DataSource::Imm, src0_reg: 0, dst_reg: 1, imm: 0, ..Default::default() }.encode(),
        CtrlAl { op: AluOp::Add, dtype: int32, src1: DataSource::Imm, src0_reg: 1, dst_reg: 1, imm: 1, ..Default::default() }.encode(),
        CtrlBr { cmp: BranchCmp::Lt, dtype: int32, target: BranchTarget::RelImm, imm: ITERATIONS, cmp_reg: 1, rel_offset: -1, ..Default::default() }.encode(),
        PseudoInst { sub: PseudoSub::ExitExecution, ..Default::default() }.encode(),
    ];
    for deterministic in [true, false] {
        let cfg = SimConfig::builder().deterministic(deterministic).deterministic_drain_limit(u64::MAX).build();
        let dev = SimDevice::new(&cfg, 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let bytes: Vec<u8> = program.iter().flatten().copied().collect();
        let at = dev.alloc(hbm, bytes.len() as u64, 64).unwrap();
        dev.write(at, &bytes).unwrap();
        let ring = dev.alloc(hbm, 256, 256).unwrap();
        let nq = dev
            .nq_init(NqSpec { core: CoreId(0), engine_index: 4, nq_type: NqType::Notify, ring, size_bytes: 256 })
            .unwrap();
        dev.start_engine(CoreId(0), EngineId::Sp, at, bytes.len() as u64).unwrap();
        let t = Instant::now();
        dev.semaphore_increment(CoreId(0), 1, 1).unwrap();
        wait_until("END record", || nq.produced() >= 2);
        let secs = t.elapsed().as_secs_f64();
        let instrs = 2.0 * f64::from(ITERATIONS) + 3.0;
        println!(
            "sequencer ({}): {:.1} M control instructions/s ({instrs} in {:.3} s)",
            if deterministic { "deterministic" } else { "pool" },
            instrs / secs / 1e6,
            secs
        );
    }
}
