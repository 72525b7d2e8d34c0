//! Element types the device computes on and moves, and conversions between them.
//!
//! [`Dtype`] carries exactly the `nrt_dtype_t` set. Its numeric codes are the
//! hardware dtype codes: the same byte appears in the dtype fields of PE, ACT,
//! DVE and DMA instruction records, and in `nrt_tensor_info` reports.
//!
//! Submodules:
//! - [`table`]: the one table of element types every layer uses: names,
//!   `nrt_dtype_t` codes, sizes, numpy types (including the names the
//!   device has no code for: `bool`, `float64`, `float8_e4m3`).
//! - [`minifloat`]: bit-level encode/decode for the narrow float formats
//!   (fp8 e3/e4/e5, plus fp16/bf16 for stochastic rounding), with the
//!   saturation and NaN rules of each format.
//! - [`rounding`]: round-to-nearest-even vs seeded stochastic rounding.
//! - [`convert`]: bulk converters over byte slices and typed fast paths.

pub mod convert;
pub mod minifloat;
pub mod rounding;
pub mod table;

pub use convert::{
    ConvertError, bf16_to_f32_slice, bytes_to_f32, convert, f32_to_bytes, f16_to_f32_slice, f32_to_bf16_slice,
    f32_to_f16_slice, f32_to_fp8_slice, fp8_to_f32_slice,
};
pub use minifloat::{FP8_E3, FP8_E4, FP8_E5, Fp8Kind, MiniFloat};
pub use rounding::{Rounding, StochasticRounder};
pub use table::{ELEMENT_TYPES, ElementType, Numpy, element_type, element_type_of_npy};

use std::fmt;
use std::str::FromStr;

/// An element type, numbered exactly like libnrt's `nrt_dtype_t`.
///
/// The runtime reports these codes for model tensors and the device reads
/// the same codes from instruction and DMA records, so one enum serves both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Dtype {
    /// `NRT_DTYPE_UNKNOWN` (alias `INVALID`): the type could not be named.
    /// libnrt still sizes it at one byte per element.
    Unknown = 0x0,
    /// Unsigned 64-bit integer.
    Uint64 = 0x1,
    /// Signed 8-bit integer.
    Int8 = 0x2,
    /// Unsigned 8-bit integer.
    Uint8 = 0x3,
    /// Signed 16-bit integer.
    Int16 = 0x4,
    /// Unsigned 16-bit integer.
    Uint16 = 0x5,
    /// bfloat16: 1 sign, 8 exponent, 7 mantissa bits.
    Bfloat16 = 0x6,
    /// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits.
    Float16 = 0x7,
    /// Signed 32-bit integer.
    Int32 = 0x8,
    /// Unsigned 32-bit integer.
    Uint32 = 0x9,
    /// IEEE binary32.
    Float32 = 0xA,
    /// "fp32 round" (`FP32R`): stored exactly like fp32. It only tells the
    /// PE array to run a matmul in its multi-pass fp32 mode; as an element
    /// format it converts to and from f32 bit for bit.
    Float32r = 0xB,
    /// Signed 64-bit integer.
    Int64 = 0xC,
    /// fp8 with 3 exponent and 4 mantissa bits (see [`FP8_E3`]).
    Fp8E3 = 0xD,
    /// fp8 with 4 exponent and 3 mantissa bits, OCP e4m3fn (see [`FP8_E4`]).
    Fp8E4 = 0xE,
    /// fp8 with 5 exponent and 2 mantissa bits, OCP e5m2 (see [`FP8_E5`]).
    Fp8E5 = 0xF,
}

impl Dtype {
    /// Every dtype, in code order, for tables and exhaustive tests.
    pub const ALL: [Dtype; 16] = [
        Dtype::Unknown,
        Dtype::Uint64,
        Dtype::Int8,
        Dtype::Uint8,
        Dtype::Int16,
        Dtype::Uint16,
        Dtype::Bfloat16,
        Dtype::Float16,
        Dtype::Int32,
        Dtype::Uint32,
        Dtype::Float32,
        Dtype::Float32r,
        Dtype::Int64,
        Dtype::Fp8E3,
        Dtype::Fp8E4,
        Dtype::Fp8E5,
    ];

    /// The dtype with hardware/`nrt_dtype_t` code `code`, or `None` for
    /// codes outside 0..=15.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The hardware/`nrt_dtype_t` code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// This type's row of [`ELEMENT_TYPES`].
    pub fn element(self) -> &'static ElementType {
        &ELEMENT_TYPES[self as usize]
    }

    /// The NEFF-style name: the tier-1 neff.json strings for the types
    /// listed there (`float32`, `float16`, `bfloat16`, `int8`..`uint64`),
    /// the def.json DMA dtype strings for the rest (`float32r`,
    /// `float8e3`, `float8e4`, `float8e5`), and `unknown` for code 0.
    pub fn name(self) -> &'static str {
        self.element().name
    }

    /// Parse a dtype name as written in neff.json, def.json or by tools.
    ///
    /// Accepts every [`Dtype::name`] and the aliases of [`ELEMENT_TYPES`]:
    /// the def.json fp8 spellings `float8_e4m3fn` / `float8_e5m2` (and
    /// `float8_e3m4`), and short forms such as `fp16`, `bf16`, `fp32`,
    /// `fp8e4`. Matching ignores ASCII case. Names of types without an
    /// `nrt_dtype_t` code of their own (`bool`, `float64`,
    /// `float4_e2m1fn`, the packed `_x4` variants) return `None`.
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim();
        ELEMENT_TYPES[..Self::ALL.len()].iter().find(|t| t.is_named(name)).map(|t| t.dtype)
    }

    /// Bytes per element. `Unknown` counts as one byte, as libnrt does when
    /// it sizes a tensor whose dtype string it did not recognise.
    pub fn size_bytes(self) -> usize {
        self.element().size
    }

    /// True for the floating-point types (fp8, fp16, bf16, fp32, fp32r).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::Bfloat16
                | Dtype::Float16
                | Dtype::Float32
                | Dtype::Float32r
                | Dtype::Fp8E3
                | Dtype::Fp8E4
                | Dtype::Fp8E5
        )
    }

    /// True for the integer types (signed and unsigned, 8 to 64 bits).
    pub fn is_int(self) -> bool {
        self != Dtype::Unknown && !self.is_float()
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64)
    }

    /// The fp8 format of an fp8 dtype, `None` for every other dtype.
    pub fn fp8_kind(self) -> Option<Fp8Kind> {
        match self {
            Dtype::Fp8E3 => Some(Fp8Kind::E3),
            Dtype::Fp8E4 => Some(Fp8Kind::E4),
            Dtype::Fp8E5 => Some(Fp8Kind::E5),
            _ => None,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a code or a name did not denote a [`Dtype`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DtypeError {
    /// The byte is not an `nrt_dtype_t` code (valid codes are 0..=15).
    #[error("unknown dtype code {0:#x}: expected an nrt_dtype_t code 0x0..=0xF")]
    UnknownCode(u8),
    /// The string is not a dtype name this crate knows.
    #[error(
        "unknown dtype name {0:?}: expected float32, float16, bfloat16, float32r, \
         float8e3/e4/e5 (or float8_e4m3fn, float8_e5m2), int8..int64 or uint8..uint64"
    )]
    UnknownName(String),
}

impl TryFrom<u8> for Dtype {
    type Error = DtypeError;

    fn try_from(code: u8) -> Result<Self, Self::Error> {
        Dtype::from_code(code).ok_or(DtypeError::UnknownCode(code))
    }
}

impl From<Dtype> for u8 {
    fn from(d: Dtype) -> u8 {
        d.code()
    }
}

impl FromStr for Dtype {
    type Err = DtypeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dtype::from_name(s).ok_or_else(|| DtypeError::UnknownName(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_nrt_dtype_t() {
        assert_eq!(Dtype::Uint64.code(), 0x1);
        assert_eq!(Dtype::Bfloat16.code(), 0x6);
        assert_eq!(Dtype::Float16.code(), 0x7);
        assert_eq!(Dtype::Float32.code(), 0xA);
        assert_eq!(Dtype::Float32r.code(), 0xB);
        assert_eq!(Dtype::Int64.code(), 0xC);
        assert_eq!(Dtype::Fp8E3.code(), 0xD);
        assert_eq!(Dtype::Fp8E5.code(), 0xF);
        for code in 0..=255u8 {
            match Dtype::from_code(code) {
                Some(d) => assert_eq!(d.code(), code),
                None => assert!(code > 0xF),
            }
        }
        assert_eq!(Dtype::try_from(0x10), Err(DtypeError::UnknownCode(0x10)));
    }

    #[test]
    fn tier1_names_map_to_documented_codes() {
        let tier1 = [
            ("float32", 10),
            ("float16", 7),
            ("bfloat16", 6),
            ("int8", 2),
            ("int16", 4),
            ("int32", 8),
            ("int64", 12),
            ("uint8", 3),
            ("uint16", 5),
            ("uint32", 9),
            ("uint64", 1),
        ];
        for (name, code) in tier1 {
            let d = Dtype::from_name(name).expect(name);
            assert_eq!(d.code(), code, "{name}");
            assert_eq!(d.name(), name);
        }
    }

    #[test]
    fn def_json_spellings_parse() {
        assert_eq!(Dtype::from_name("float32r"), Some(Dtype::Float32r));
        assert_eq!(Dtype::from_name("float8e3"), Some(Dtype::Fp8E3));
        assert_eq!(Dtype::from_name("float8e4"), Some(Dtype::Fp8E4));
        assert_eq!(Dtype::from_name("float8e5"), Some(Dtype::Fp8E5));
        assert_eq!(Dtype::from_name("float8_e4m3fn"), Some(Dtype::Fp8E4));
        assert_eq!(Dtype::from_name("float8_e5m2"), Some(Dtype::Fp8E5));
        assert_eq!(Dtype::from_name("BF16"), Some(Dtype::Bfloat16));
        assert_eq!(Dtype::from_name("float4_e2m1fn"), None);
        assert!("nonsense".parse::<Dtype>().is_err());
        for d in Dtype::ALL {
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
        }
    }

    #[test]
    fn sizes_and_classes() {
        assert_eq!(Dtype::Unknown.size_bytes(), 1);
        assert_eq!(Dtype::Fp8E4.size_bytes(), 1);
        assert_eq!(Dtype::Bfloat16.size_bytes(), 2);
        assert_eq!(Dtype::Float32r.size_bytes(), 4);
        assert_eq!(Dtype::Uint64.size_bytes(), 8);
        assert!(Dtype::Fp8E3.is_float() && !Dtype::Fp8E3.is_int());
        assert!(Dtype::Uint8.is_int() && !Dtype::Uint8.is_signed_int());
        assert!(!Dtype::Unknown.is_int() && !Dtype::Unknown.is_float());
    }
}
