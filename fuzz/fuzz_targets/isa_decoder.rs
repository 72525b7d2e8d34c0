//! Fuzz target: arbitrary bytes through the instruction decoder and the
//! disassembler must never panic, and whatever decodes must re-encode and
//! re-assemble to the same bytes.
//!
//! The input is padded to whole 64-byte records so the fuzzer spends its
//! time inside records rather than on the length check; the unpadded input
//! is also offered to the text assembler, which must only ever return a
//! typed error.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_isa::asm::{assemble, disassemble};
use nrt_isa::instr::{Instruction, decode_stream, encode_stream};
use nrt_isa::record::RecordStream;

fuzz_target!(|data: &[u8]| {
    // Misaligned input is a typed error, not a panic.
    let _ = decode_stream(data);

    let mut padded = data.to_vec();
    padded.resize(data.len().div_ceil(64) * 64, 0);
    let instrs = decode_stream(&padded).expect("padded input is whole records");
    assert_eq!(encode_stream(&instrs), padded);
    for rec in RecordStream::new(&padded).expect("whole records").iter() {
        if let Ok(instr) = Instruction::decode(rec) {
            assert_eq!(&instr.encode(), rec);
        }
        // The collectives check of the runtime's load: a trigger or a
        // message, never a panic (any record, as if its opcode were 0xC8).
        let mut cc = *rec;
        cc[0] = 0xC8;
        if let Ok(t) = nrt_isa::collective::CollectiveTrigger::decode(&cc) {
            assert!(t.num_elements > 0);
            let _ = t.elements(u64::from(rec[1]));
        }
    }
    let text = disassemble(&padded).expect("whole records");
    assert_eq!(assemble(&text).expect("disassembly assembles"), padded);

    if let Ok(text) = std::str::from_utf8(data) {
        let _ = assemble(text);
    }
});
