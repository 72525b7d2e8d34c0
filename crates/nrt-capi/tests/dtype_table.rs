//! The element-type table (`nrt_isa::dtype::ELEMENT_TYPES`) against the
//! header's `nrt_dtype_t`: every enumerator of include/nrt/nrt_experimental.h
//! names a row whose code is its value, every code has one, and
//! `nrt_get_model_tensor_info` reports every name the table knows as its
//! row's code.

use nrt::api_experimental::dtype_code;
use nrt_isa::dtype::{Dtype, ELEMENT_TYPES, element_type};

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../include/nrt/nrt_experimental.h");

/// (enumerator suffix, value) of `typedef enum nrt_dtype { ... } nrt_dtype_t;`.
fn header_dtypes() -> Vec<(String, u8)> {
    let h = std::fs::read_to_string(HEADER).unwrap();
    let start = h.find("typedef enum nrt_dtype {").expect("nrt_dtype_t in the header");
    let end = start + h[start..].find("} nrt_dtype_t;").unwrap();
    h[start..end]
        .lines()
        .filter_map(|l| l.trim().strip_prefix("NRT_DTYPE_"))
        .map(|l| {
            let (name, value) = l.trim_end_matches(',').split_once(" = 0x").unwrap_or_else(|| panic!("unexpected enumerator {l:?}"));
            (name.to_string(), u8::from_str_radix(value.trim(), 16).unwrap())
        })
        .collect()
}

#[test]
fn every_header_enumerator_names_its_rows_code() {
    let dtypes = header_dtypes();
    assert_eq!(dtypes.len(), 17, "16 codes and INVALID: {dtypes:?}");
    for (name, value) in &dtypes {
        let t = element_type(&name.to_ascii_lowercase()).unwrap_or_else(|| panic!("NRT_DTYPE_{name} names no element type"));
        assert_eq!(t.dtype.code(), *value, "NRT_DTYPE_{name}");
    }
    for d in Dtype::ALL {
        assert!(dtypes.iter().any(|(_, v)| *v == d.code()), "code {} ({d}) is not in the header", d.code());
    }
}

#[test]
fn tensor_info_reports_every_known_name_as_its_rows_code() {
    for t in &ELEMENT_TYPES {
        for name in std::iter::once(&t.name).chain(t.aliases) {
            assert_eq!(dtype_code(name), u32::from(t.dtype.code()), "{name}");
        }
    }
    // The names some layers knew and others reported as 0.
    assert_eq!(dtype_code("float8_e3m4"), 0xD);
    assert_eq!(dtype_code("float8_e4m3fn"), 0xE);
    assert_eq!(dtype_code("bool"), 0x3);
    assert_eq!(dtype_code("float4_e2m1fn"), 0);
}
