//! Untrusted compute records never panic the device: random field values
//! (biased towards valid dtypes, small partition counts and addresses
//! near SBUF / PSUM) in every compute layout either execute or end in an
//! error record.

mod common;

use common::*;
use nrt_hal::EngineId;
use nrt_isa::instr::Instruction;
use nrt_isa::opcode::Opcode;

use proptest::prelude::*;

const COMPUTE: [Opcode; 12] = [
    Opcode::LdWeights,
    Opcode::Matmul,
    Opcode::Activate,
    Opcode::ActivationTableLoad,
    Opcode::TensorTensorArith,
    Opcode::TensorScalarArith,
    Opcode::Pool,
    Opcode::Copy,
    Opcode::Cast,
    Opcode::StreamTranspose,
    Opcode::Iota,
    Opcode::CopyPredicatedReduce,
];

/// A record of `op` whose layout fields take values from `noise`.
fn record(op: Opcode, noise: &[u8]) -> [u8; 64] {
    let layout = Instruction::LAYOUTS.iter().find(|l| l.opcode == op).expect("compute layout");
    let mut r = [0u8; 64];
    r[0] = op.to_u8();
    r[1] = 0x10;
    let mut n = noise.iter().copied().cycle();
    let mut next = || n.next().unwrap_or(0);
    for f in layout.fields {
        let at = f.offset;
        match f.ty {
            "DtypeCode" => r[at] = [6, 7, 8, 10, 14, 15, 3, 0][usize::from(next()) % 8],
            "DtypePair" => r[at] = [0x77, 0xAA, 0x88, 0x6A, 0xE7][usize::from(next()) % 5],
            _ if matches!(f.name, "row_start" | "col_start") => {}
            "Accumulate" => r[at] = next() % 4,
            "u8" if f.name == "axes" => r[at] = next() % 8,
            "u8" | "bool" => r[at] = if f.ty == "bool" { next() & 1 } else { next() % 130 },
            "Tensor3d" | "Tensor4d" => {
                let dims = if f.ty == "Tensor3d" { 3 } else { 4 };
                let start: u32 = (u32::from(next()) << 18 | u32::from(next()) << 8) & 0x3FF_FFFF;
                r[at..at + 4].copy_from_slice(&start.to_le_bytes());
                for d in 0..dims {
                    let step = i16::from(next() as i8 % 5);
                    let num = u16::from(next() % 70);
                    r[at + 4 + 2 * d..at + 6 + 2 * d].copy_from_slice(&step.to_le_bytes());
                    r[at + 4 + 2 * dims + 2 * d..at + 6 + 2 * dims + 2 * d].copy_from_slice(&num.to_le_bytes());
                }
            }
            _ => {
                for &(s, l) in f.spans {
                    for b in s..s + l {
                        r[at + b] = next() % 8;
                    }
                }
            }
        }
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_compute_records_execute_or_fault(which in 0usize..COMPUTE.len(), noise in prop::collection::vec(any::<u8>(), 8..64)) {
        let rig = Rig::new(&[]);
        let mut bytes = doorbell().encode().to_vec();
        // Weights first, so MATMUL records can get past the empty-array check.
        let weights = nrt_isa::operand::Tensor3d { start: nrt_isa::operand::Addr4(7 * 4), step: [-1, 0, 0], num: [8, 1, 1] };
        let dtype = nrt_isa::instr::DtypeCode(10);
        bytes.extend_from_slice(&nrt_isa::instr::LdWeights { weights, dtype, rows: 8, cols: 8, ..Default::default() }.encode());
        bytes.extend_from_slice(&record(COMPUTE[which], &noise));
        rig.load_bytes(EngineId::Pool, &bytes);
        rig.ring();
        let state = rig.dev.engine_state(C0, EngineId::Pool);
        let errors = rig.error_records().len();
        prop_assert!(
            state == Some(nrt_sim::engine::RunState::Idle) && errors == 0 || state == Some(nrt_sim::engine::RunState::Halted) && errors == 1,
            "state {:?} with {} error records", state, errors
        );
    }
}
