//! Fuzz target: the `.npy` reader that `nrt run --input` and NEFF constants
//! go through. Arbitrary bytes give a header or a typed error; a header
//! that parses leaves its data offset inside the file, and what
//! `encode_npy` writes for that header's shape and data parses back to the
//! same shape and data.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nrt_neff::npy::{Constant, encode_npy, parse_npy_header};

fuzz_target!(|data: &[u8]| {
    let _ = Constant::from_member("c.npy", data);
    let Ok(header) = parse_npy_header("x.npy", data) else { return };
    assert!(header.data_offset <= data.len());
    let body = &data[header.data_offset..];
    if header.item_size().is_some() && !header.fortran_order {
        let again = encode_npy(&header.descr, &header.shape, body);
        let back = parse_npy_header("y.npy", &again).expect("an encoded .npy parses");
        assert_eq!(back.shape, header.shape);
        assert_eq!(back.descr, header.descr);
        assert_eq!(&again[back.data_offset..], body);
    }
});
