//! Fuzz target: the protobuf wire-format reader behind the NEFF's
//! `debug_info/` members (instruction names for profiles). Arbitrary bytes
//! must give fields or a typed `DebugInfoError`, never a panic, and every
//! length-delimited value must be a view inside the input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_neff::debug_info;

fuzz_target!(|data: &[u8]| {
    let _ = debug_info::packed_varints(data);
    let _ = debug_info::asm_record_ids(data);
    let _ = debug_info::backend_names(data);
    if let Ok(fields) = debug_info::parse_message(data) {
        let (lo, hi) = (data.as_ptr() as usize, data.as_ptr() as usize + data.len());
        for f in &fields {
            if let debug_info::WireValue::Bytes(b) = f.value {
                let at = b.as_ptr() as usize;
                assert!(at >= lo && at + b.len() <= hi, "field {} lies outside the message", f.number);
            }
        }
    }
});
