//! numpy-style dtype names as NEFF JSON spells them, and their sizes.
//!
//! neff.json and def.json name element types in numpy style ("float16",
//! "bfloat16", "float8e4"...). These helpers give the element size and the
//! `.npy` descriptor for them, which the runtime needs to report tensor
//! sizes and load constants.

/// Bytes per element of a NEFF dtype name, `None` if unknown.
pub fn dtype_size(name: &str) -> Option<usize> {
    Some(match name {
        "float8e3" | "float8e4" | "float8e5" | "float8_e4m3fn" | "float8_e5m2" | "float8_e4m3"
        | "uint8" | "int8" | "bool" => 1,
        "float16" | "bfloat16" | "uint16" | "int16" => 2,
        "float32" | "float32r" | "uint32" | "int32" => 4,
        "float64" | "uint64" | "int64" => 8,
        _ => return None,
    })
}

/// The `.npy` descriptor (little-endian) of a dtype name numpy itself knows.
pub fn npy_descr(name: &str) -> Option<&'static str> {
    Some(match name {
        "bool" => "|b1",
        "uint8" => "|u1",
        "int8" => "|i1",
        "float16" => "<f2",
        "uint16" => "<u2",
        "int16" => "<i2",
        "float32" => "<f4",
        "uint32" => "<u4",
        "int32" => "<i4",
        "float64" => "<f8",
        "uint64" => "<u8",
        "int64" => "<i8",
        _ => return None,
    })
}

/// The dtype name of a `.npy` descriptor ("<f2" -> "float16"), accepting
/// `<`, `|` and `=` byte-order marks.
pub fn dtype_from_npy_descr(descr: &str) -> Option<&'static str> {
    let body = descr.strip_prefix(['<', '|', '=']).unwrap_or(descr);
    Some(match body {
        "b1" => "bool",
        "u1" => "uint8",
        "i1" => "int8",
        "f2" => "float16",
        "u2" => "uint16",
        "i2" => "int16",
        "f4" => "float32",
        "u4" => "uint32",
        "i4" => "int32",
        "f8" => "float64",
        "u8" => "uint64",
        "i8" => "int64",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descr_round_trip_and_sizes_agree() {
        for name in ["bool", "uint8", "int8", "float16", "uint16", "int16", "float32", "uint32",
                     "int32", "float64", "uint64", "int64"] {
            let d = npy_descr(name).unwrap();
            assert_eq!(dtype_from_npy_descr(d), Some(name));
            let bytes: usize = d[2..].parse().unwrap();
            assert_eq!(dtype_size(name), Some(bytes));
        }
        assert_eq!(dtype_size("bfloat16"), Some(2));
        assert_eq!(dtype_size("float8e3"), Some(1));
        assert_eq!(dtype_size("complex"), None);
    }
}
