//! The one table of element types: every name any layer knows (the
//! device's `nrt_dtype_t` set, and the names NEFFs and numpy use beyond
//! it), with the `nrt_dtype_t` each is reported as, its size, and how
//! numpy holds it. The NEFF reader, the runtime, the C API, Python and the
//! `nrt` command all look types up here; [`super::Dtype`]'s names and
//! sizes are its first sixteen rows.

use super::Dtype;

/// How numpy holds an element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numpy {
    /// numpy's own dtype of this name.
    Native(&'static str),
    /// The `ml_dtypes` type of this name (bfloat16 and the fp8 formats,
    /// what nrtpy and JAX use).
    MlDtypes(&'static str),
}

/// One element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementType {
    /// The NEFF spelling.
    pub name: &'static str,
    /// Other spellings accepted for it (def.json's fp8 names, ml_dtypes
    /// names, the short forms tools print).
    pub aliases: &'static [&'static str],
    /// The `nrt_dtype_t` it is reported as (`nrt_get_model_tensor_info`);
    /// [`Dtype::Unknown`] when the device has no such type.
    pub dtype: Dtype,
    /// Bytes per element.
    pub size: usize,
    /// numpy's type for it, if numpy can hold it.
    pub numpy: Option<Numpy>,
    /// Its little-endian `.npy` descriptor, when numpy has it natively.
    pub npy_descr: Option<&'static str>,
}

const fn row(
    name: &'static str,
    aliases: &'static [&'static str],
    dtype: Dtype,
    size: usize,
    numpy: Option<Numpy>,
    npy_descr: Option<&'static str>,
) -> ElementType {
    ElementType { name, aliases, dtype, size, numpy, npy_descr }
}

use Numpy::{MlDtypes, Native};

/// Every element type: the sixteen `nrt_dtype_t` codes in code order
/// (row `i` is the type of code `i`), then the names some NEFFs and numpy
/// use that the device has no code for.
pub const ELEMENT_TYPES: [ElementType; 19] = [
    // libnrt sizes a tensor of an unrecognised dtype at one byte per element.
    row("unknown", &["invalid"], Dtype::Unknown, 1, None, None),
    row("uint64", &[], Dtype::Uint64, 8, Some(Native("uint64")), Some("<u8")),
    row("int8", &[], Dtype::Int8, 1, Some(Native("int8")), Some("|i1")),
    row("uint8", &[], Dtype::Uint8, 1, Some(Native("uint8")), Some("|u1")),
    row("int16", &[], Dtype::Int16, 2, Some(Native("int16")), Some("<i2")),
    row("uint16", &[], Dtype::Uint16, 2, Some(Native("uint16")), Some("<u2")),
    row("bfloat16", &["bf16"], Dtype::Bfloat16, 2, Some(MlDtypes("bfloat16")), None),
    row("float16", &["fp16", "half"], Dtype::Float16, 2, Some(Native("float16")), Some("<f2")),
    row("int32", &[], Dtype::Int32, 4, Some(Native("int32")), Some("<i4")),
    row("uint32", &[], Dtype::Uint32, 4, Some(Native("uint32")), Some("<u4")),
    row("float32", &["fp32", "float"], Dtype::Float32, 4, Some(Native("float32")), Some("<f4")),
    // Stored exactly like float32 (it only selects the PE's fp32 mode).
    row("float32r", &["fp32r"], Dtype::Float32r, 4, Some(Native("float32")), Some("<f4")),
    row("int64", &[], Dtype::Int64, 8, Some(Native("int64")), Some("<i8")),
    row("float8e3", &["float8_e3m4", "fp8e3", "fp8_e3"], Dtype::Fp8E3, 1, Some(MlDtypes("float8_e3m4")), None),
    row("float8e4", &["float8_e4m3fn", "fp8e4", "fp8_e4"], Dtype::Fp8E4, 1, Some(MlDtypes("float8_e4m3fn")), None),
    row("float8e5", &["float8_e5m2", "fp8e5", "fp8_e5"], Dtype::Fp8E5, 1, Some(MlDtypes("float8_e5m2")), None),
    // numpy's bool: one byte, reported as uint8.
    row("bool", &[], Dtype::Uint8, 1, Some(Native("bool")), Some("|b1")),
    row("float64", &[], Dtype::Unknown, 8, Some(Native("float64")), Some("<f8")),
    // The IEEE-style e4m3 (with infinities) is not the device's FP8_E4,
    // which is OCP e4m3fn: no code.
    row("float8_e4m3", &[], Dtype::Unknown, 1, Some(MlDtypes("float8_e4m3")), None),
];

impl ElementType {
    /// Whether `name` (ASCII case ignored) is this type's name or an alias.
    pub fn is_named(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name) || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// The element type named `name` (a NEFF, def.json, ml_dtypes or tool
/// spelling; ASCII case ignored), or `None` for a name no layer knows.
pub fn element_type(name: &str) -> Option<&'static ElementType> {
    let name = name.trim();
    ELEMENT_TYPES.iter().find(|t| t.is_named(name))
}

/// The element type numpy stores under `.npy` descriptor `descr` (`<f2`:
/// float16), accepting `<`, `|` and `=` byte-order marks.
pub fn element_type_of_npy(descr: &str) -> Option<&'static ElementType> {
    let body = descr.strip_prefix(['<', '|', '=']).unwrap_or(descr);
    ELEMENT_TYPES.iter().find(|t| t.npy_descr.is_some_and(|d| d[1..] == *body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_rows_are_the_dtype_codes() {
        for (i, t) in ELEMENT_TYPES.iter().enumerate().take(16) {
            assert_eq!(t.dtype.code() as usize, i, "{}", t.name);
        }
        for t in &ELEMENT_TYPES[16..] {
            assert!(Dtype::ALL.iter().all(|d| d.name() != t.name), "{} is also a code's name", t.name);
        }
    }

    #[test]
    fn names_are_unique_and_descriptors_agree_with_sizes() {
        let mut seen = std::collections::BTreeSet::new();
        for t in &ELEMENT_TYPES {
            for n in std::iter::once(&t.name).chain(t.aliases) {
                assert!(seen.insert(n.to_ascii_lowercase()), "{n} names two types");
            }
            if let Some(d) = t.npy_descr {
                assert_eq!(d[2..].parse::<usize>().unwrap(), t.size, "{}", t.name);
            }
            assert!(t.numpy.is_some() || t.dtype == Dtype::Unknown, "{} has no numpy type", t.name);
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(element_type("float8_e3m4").map(|t| (t.dtype, t.size)), Some((Dtype::Fp8E3, 1)));
        assert_eq!(element_type("BF16").map(|t| t.name), Some("bfloat16"));
        assert_eq!(element_type("bool").map(|t| (t.dtype, t.size)), Some((Dtype::Uint8, 1)));
        assert_eq!(element_type("float64").map(|t| (t.dtype, t.size)), Some((Dtype::Unknown, 8)));
        assert_eq!(element_type("float4_e2m1fn"), None);
        assert_eq!(element_type_of_npy("<f4").map(|t| t.name), Some("float32"));
        assert_eq!(element_type_of_npy("|u1").map(|t| t.name), Some("uint8"));
        assert_eq!(element_type_of_npy("=b1").map(|t| t.name), Some("bool"));
        assert_eq!(element_type_of_npy("<c8"), None);
        for t in &ELEMENT_TYPES {
            if let Some(d) = t.npy_descr
                && t.dtype != Dtype::Float32r
            {
                assert_eq!(element_type_of_npy(d).map(|x| x.name), Some(t.name));
            }
        }
    }
}
