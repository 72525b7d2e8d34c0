//! Fuzz target: arbitrary bytes through the NEFF reader must only ever
//! produce `Ok` or a typed `NeffError`, never a panic or runaway allocation.
//!
//! Two entry points are exercised: the whole-file reader (header rules,
//! archive, manifests) and, so the fuzzer reaches the archive and JSON
//! layers without first having to discover a valid header, the same input
//! wrapped behind a well-formed header.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_neff::{Neff, NeffHeader, ReadLimits, ReadOptions};

fuzz_target!(|data: &[u8]| {
    // Tight limits keep each run small; exceeding them is a typed error.
    let options = ReadOptions {
        limits: ReadLimits { max_members: 256, max_total_bytes: 16 << 20 },
        verify_hash: data.first().is_some_and(|b| b & 1 == 1),
    };
    let _ = Neff::parse_with(data, &options);

    let header = NeffHeader { data_size: data.len() as u64, ..NeffHeader::default() };
    let mut wrapped = header.to_bytes().to_vec();
    wrapped.extend_from_slice(data);
    if let Ok(neff) = Neff::parse_with(&wrapped, &options) {
        // Whatever parsed must also re-pack.
        let _ = neff.to_bytes(nrt_neff::HashKind::Md5);
    }
});
