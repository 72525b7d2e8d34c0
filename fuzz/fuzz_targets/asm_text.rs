//! Fuzz target: the text assembler (`nrt asm`, `*.asm` members packed by
//! `nrt neff pack`). Arbitrary text gives records or a typed `AsmError`
//! with a line number; whatever assembles must disassemble and assemble
//! again to the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_isa::asm::{assemble, disassemble};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(bytes) = assemble(text) else { return };
    let listing = disassemble(&bytes).expect("assembled records are whole");
    assert_eq!(assemble(&listing).expect("a disassembly assembles"), bytes);
});
