//! Every record of the real compiler NEFF decodes into a typed instruction,
//! re-encodes byte for byte, survives the assembler round trip, and carries
//! the field values documented in spec/real-isa-observed.md.

use std::collections::BTreeMap;
use std::io::Read;

use nrt_isa::asm::{assemble, disassemble};
use nrt_isa::instr::{Accumulate, DmaAccess, Instruction, VarRef, decode_stream};
use nrt_isa::operand::{Addr4, Tensor3d, Tensor4d};
use nrt_isa::record::{Events, UpdateMode, WaitMode};

const NEFF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/neff/matmul_small.neff"
);

/// The `sgNN/<Engine>.bin` members of the sample, keyed by path; `None`
/// (the calling test reported skipped) when the sample is absent.
fn engine_streams() -> Option<BTreeMap<String, Vec<u8>>> {
    let Ok(file) = std::fs::read(NEFF) else {
        nrt_test_support::skip!(return None; "{NEFF} is absent (the compiler's sample lives beside the checkout)");
    };
    let gz = flate2::read::GzDecoder::new(&file[1024..]);
    let mut archive = tar::Archive::new(gz);
    let mut out = BTreeMap::new();
    for entry in archive.entries().expect("sample payload is a tar archive") {
        let mut entry = entry.expect("tar entry");
        let path = entry
            .path()
            .expect("entry path")
            .to_string_lossy()
            .into_owned();
        let engine_bin = ["PE.bin", "Activation.bin", "DVE.bin", "Pool.bin", "SP.bin"]
            .iter()
            .any(|e| path.ends_with(&format!("/{e}")));
        if engine_bin {
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("entry bytes");
            out.insert(path.trim_start_matches("./").to_string(), bytes);
        }
    }
    Some(out)
}

fn stream(streams: &BTreeMap<String, Vec<u8>>, name: &str) -> Vec<Instruction> {
    decode_stream(&streams[name]).expect("whole records")
}

#[test]
fn every_record_decodes_typed_and_round_trips() {
    let Some(streams) = engine_streams() else {
        return;
    };
    assert_eq!(
        streams.len(),
        10,
        "five engine streams in each of two subgraphs"
    );
    for (name, bytes) in &streams {
        let instrs = decode_stream(bytes).unwrap();
        for (i, instr) in instrs.iter().enumerate() {
            let rec: &[u8; 64] = bytes[i * 64..(i + 1) * 64].try_into().unwrap();
            assert_eq!(
                Instruction::decode(rec).as_ref(),
                Ok(instr),
                "{name}[{i}] decodes strictly"
            );
            assert!(
                instr.mnemonic().is_some(),
                "{name}[{i}] opcode {:#x} has no layout",
                rec[0]
            );
            assert_eq!(&instr.encode(), rec, "{name}[{i}] re-encodes");
        }
        let text = disassemble(bytes).unwrap();
        assert_eq!(
            &assemble(&text).unwrap(),
            bytes,
            "{name} asm round trip:\n{text}"
        );
        assert_eq!(disassemble(&assemble(&text).unwrap()).unwrap(), text);
    }
}

#[test]
fn pe_fields_match_the_observed_tables() {
    let Some(streams) = engine_streams() else {
        return;
    };
    let pe = stream(&streams, "sg00/PE.bin");
    assert_eq!(pe.len(), 12);
    assert!(matches!(pe[0], Instruction::PrologueB1(_)));
    assert!(matches!(pe[1], Instruction::PseudoBranchLabel(_)));
    let Instruction::EventSemaphore(es) = &pe[2] else {
        panic!("PE[2] is {:?}", pe[2])
    };
    assert_eq!(es.head.events, Events::wait_sem_ge(24, 16));

    let Instruction::LdWeights(lw) = &pe[3] else {
        panic!("PE[3] is {:?}", pe[3])
    };
    assert_eq!(lw.head.events, Events::wait_sem_ge(8, 16));
    assert_eq!(
        lw.weights,
        Tensor3d {
            start: Addr4(0x37cfe),
            step: [-1, 0, -32],
            num: [32, 1, 4]
        }
    );
    assert_eq!(
        (
            lw.dtype.0,
            lw.transpose,
            lw.rows,
            lw.cols,
            lw.row_mask,
            lw.col_mask
        ),
        (7, true, 128, 128, 0xf, 0xf)
    );

    let Instruction::Matmul(mm) = &pe[4] else {
        panic!("PE[4] is {:?}", pe[4])
    };
    assert_eq!(mm.head.events.update_mode, UpdateMode::SemIncComplete);
    assert_eq!(mm.head.events.update_idx, 5);
    assert_eq!(mm.moving, Tensor3d::contiguous(0x37b00, 128));
    assert_eq!(mm.psum, Tensor3d::contiguous(0x2000800, 128));
    assert!(mm.transpose);
    assert_eq!(mm.accumulate, Accumulate::Single);

    let Instruction::Matmul(mm6) = &pe[6] else {
        panic!()
    };
    assert_eq!(mm6.psum.start, Addr4(0x2000900));

    let Instruction::LdWeights(lw8) = &pe[8] else {
        panic!()
    };
    assert_eq!(lw8.head.events, Events::wait_sem_ge(4, 1));
    assert_eq!(lw8.weights.start, Addr4(0x40fe));
    assert!(!lw8.transpose);

    let accs: Vec<Accumulate> = [9, 11]
        .iter()
        .map(|&i| match &pe[i] {
            Instruction::Matmul(m) => m.accumulate,
            other => panic!("PE[{i}] is {other:?}"),
        })
        .collect();
    assert_eq!(accs, vec![Accumulate::Start, Accumulate::Stop]);
    let Instruction::Matmul(mm9) = &pe[9] else {
        panic!()
    };
    assert_eq!(mm9.moving, Tensor3d::contiguous(0x37f00, 64));
    assert_eq!(mm9.psum, Tensor3d::contiguous(0x2000000, 64));
    let Instruction::LdWeights(lw10) = &pe[10] else {
        panic!()
    };
    assert_eq!(lw10.head.events, Events::wait_sem_ge(26, 16));
}

#[test]
fn act_copies_match_the_observed_tables() {
    let Some(streams) = engine_streams() else {
        return;
    };
    let act = stream(&streams, "sg00/Activation.bin");
    assert!(matches!(act[2], Instruction::ActivationTableLoad(_)));
    let Instruction::Copy(c3) = &act[3] else {
        panic!("ACT[3] is {:?}", act[3])
    };
    assert_eq!(
        c3.head.events,
        Events {
            wait_mode: WaitMode::SemGeImm,
            wait_idx: 5,
            update_mode: UpdateMode::SemIncComplete,
            update_idx: 4,
            value: 2
        }
    );
    assert_eq!(c3.src, Tensor4d::contiguous(0x2000800, 128));
    assert_eq!(c3.dst, Tensor4d::contiguous(0x4000, 128));
    assert_eq!((c3.in_dtype.0, c3.out_dtype.0, c3.partitions), (8, 8, 128));
    let Instruction::Copy(c4) = &act[4] else {
        panic!()
    };
    assert_eq!(c4.head.events.value, 4);
    assert_eq!(c4.src, Tensor4d::contiguous(0x2000000, 64));
    assert_eq!(c4.dst, Tensor4d::contiguous(0x4200, 64));
    assert_eq!((c4.in_dtype.0, c4.out_dtype.0), (10, 10));
}

#[test]
fn pool_dmas_match_the_observed_tables() {
    let Some(streams) = engine_streams() else {
        return;
    };
    let pool = stream(&streams, "sg00/Pool.bin");
    let Instruction::PseudoDmaDirect2d(x) = &pool[2] else {
        panic!("Pool[2] is {:?}", pool[2])
    };
    assert_eq!((x.sem, x.sem_add), (24, 16));
    assert_eq!(
        x.src,
        DmaAccess {
            offset: 0,
            reference: VarRef::dge(0),
            step0: 0x200,
            step1: 1,
            num0: 128,
            num1: 1,
            row_bytes: 512
        }
    );
    assert_eq!(
        x.dst,
        DmaAccess {
            offset: 0x37c00,
            reference: VarRef::var(0),
            step0: 0x40000,
            step1: 1,
            num0: 128,
            num1: 1,
            row_bytes: 512
        }
    );
    let Instruction::PseudoDmaDirect2d(out) = &pool[5] else {
        panic!()
    };
    assert_eq!(out.head.events, Events::wait_sem_ge(4, 2));
    assert_eq!((out.src_dtype.0, out.dst_dtype.0), (10, 7));
    assert_eq!((out.src.row_bytes, out.dst.row_bytes), (256, 128));
    assert_eq!(out.dst.reference, VarRef::dge(2));
    let Instruction::Nop(nop) = &pool[6] else {
        panic!()
    };
    assert_eq!(nop.head.events, Events::wait_sem_ge(27, 16));

    // The second core differs only in the column offsets.
    let pool1 = stream(&streams, "sg01/Pool.bin");
    let Instruction::PseudoDmaDirect2d(y) = &pool1[3] else {
        panic!()
    };
    assert_eq!(y.src.offset, 0x80);
    let Instruction::PseudoDmaDirect2d(out1) = &pool1[5] else {
        panic!()
    };
    assert_eq!(out1.dst.offset, 0x80);

    let sp = stream(&streams, "sg00/SP.bin");
    let Instruction::PseudoDmaDirect2d(ident) = &sp[2] else {
        panic!()
    };
    assert_eq!(ident.src.reference, VarRef::var(4));
    assert_eq!(ident.dst.offset, 0x37b00);
}
