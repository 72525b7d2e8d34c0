//! The [`Field`] trait: one typed value at a fixed offset of a record, with
//! its binary codec and its assembler spelling. Every instruction layout is a
//! list of fields, so decode, encode, assembly and disassembly all derive
//! from the same table.

use crate::operand::{Addr4, Tensor3d, Tensor4d};
use crate::record::{RecordBytes, read_u16, read_u32, read_u64, write_u16, write_u32, write_u64};

/// A typed value stored at a fixed offset of a record.
pub trait Field: Sized + Default {
    /// Byte spans `(start, len)` relative to the field offset that the field
    /// owns; every other payload byte of a record must be zero.
    const SPANS: &'static [(usize, usize)];

    /// Reads the value; `Err` names what the bytes should have been.
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str>;

    /// Writes the value.
    fn write(&self, rec: &mut RecordBytes, off: usize);

    /// The assembler spelling of the value (parsed back by [`Field::from_asm`]).
    fn to_asm(&self) -> String;

    /// Parses the assembler spelling; `Err` names what was expected.
    fn from_asm(text: &str) -> Result<Self, &'static str>;

    /// Builds an arbitrary valid value from random bytes (property tests).
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self;
}

/// A cycling reader over random bytes, used to build arbitrary field values.
#[cfg(test)]
#[derive(Debug)]
pub struct Entropy {
    bytes: Vec<u8>,
    pos: usize,
}

#[cfg(test)]
impl Entropy {
    /// Wraps random bytes (at least one).
    pub fn new(bytes: Vec<u8>) -> Entropy {
        assert!(!bytes.is_empty());
        Entropy { bytes, pos: 0 }
    }

    /// Next byte.
    pub fn u8(&mut self) -> u8 {
        let b = self.bytes[self.pos % self.bytes.len()];
        self.pos += 1;
        b
    }

    /// Next `N` bytes.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.u8())
    }
}

/// Parses an unsigned integer written in decimal or `0x` hexadecimal.
pub fn parse_uint(text: &str) -> Option<u64> {
    let t = text.replace('_', "");
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if h.is_empty() {
            return None;
        }
        u64::from_str_radix(h, 16).ok()
    } else if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse().ok()
    } else {
        None
    }
}

/// Parses a signed integer in decimal or (optionally negated) hexadecimal.
pub fn parse_int(text: &str) -> Option<i64> {
    match text.strip_prefix('-') {
        Some(rest) => {
            let v = parse_uint(rest)?;
            if v <= i64::MAX as u64 + 1 {
                Some((v as i64).wrapping_neg())
            } else {
                None
            }
        }
        None => parse_uint(text).and_then(|v| i64::try_from(v).ok()),
    }
}

macro_rules! uint_field {
    ($ty:ty, $w:literal, $read:expr, $write:expr, $hex:literal, $expected:literal) => {
        impl Field for $ty {
            const SPANS: &'static [(usize, usize)] = &[(0, $w)];
            fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
                Ok($read(rec, off))
            }
            fn write(&self, rec: &mut RecordBytes, off: usize) {
                $write(rec, off, *self)
            }
            fn to_asm(&self) -> String {
                if $hex {
                    format!("{:#x}", self)
                } else {
                    self.to_string()
                }
            }
            fn from_asm(text: &str) -> Result<Self, &'static str> {
                parse_uint(text)
                    .and_then(|v| <$ty>::try_from(v).ok())
                    .ok_or($expected)
            }
            #[cfg(test)]
            fn from_entropy(e: &mut Entropy) -> Self {
                <$ty>::from_le_bytes(e.array())
            }
        }
    };
}

uint_field!(
    u8,
    1,
    |r: &RecordBytes, o: usize| r[o],
    |r: &mut RecordBytes, o: usize, v: u8| r[o] = v,
    false,
    "an integer 0..=255"
);
uint_field!(u16, 2, read_u16, write_u16, false, "an integer 0..=65535");
uint_field!(
    u32,
    4,
    read_u32,
    write_u32,
    true,
    "a 32-bit unsigned integer"
);
uint_field!(
    u64,
    8,
    read_u64,
    write_u64,
    true,
    "a 64-bit unsigned integer"
);

impl Field for i32 {
    const SPANS: &'static [(usize, usize)] = &[(0, 4)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(read_u32(rec, off) as i32)
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        write_u32(rec, off, *self as u32)
    }
    fn to_asm(&self) -> String {
        self.to_string()
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        parse_int(text)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or("a 32-bit signed integer")
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        i32::from_le_bytes(e.array())
    }
}

impl Field for i64 {
    const SPANS: &'static [(usize, usize)] = &[(0, 8)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(read_u64(rec, off) as i64)
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        write_u64(rec, off, *self as u64)
    }
    fn to_asm(&self) -> String {
        self.to_string()
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        parse_int(text).ok_or("a 64-bit signed integer")
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        i64::from_le_bytes(e.array())
    }
}

/// A flag byte: 0 or 1; any other value does not decode.
impl Field for bool {
    const SPANS: &'static [(usize, usize)] = &[(0, 1)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        match rec[off] {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err("a flag byte of 0 or 1"),
        }
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = u8::from(*self)
    }
    fn to_asm(&self) -> String {
        self.to_string()
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        match text {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err("true or false"),
        }
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        e.u8() & 1 == 1
    }
}

/// An f32 immediate kept as its bit pattern, so every encoding (NaN payloads
/// included) survives a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct F32Bits(pub u32);

impl F32Bits {
    /// Wraps a float.
    pub fn new(v: f32) -> F32Bits {
        F32Bits(v.to_bits())
    }

    /// The float value.
    pub fn get(self) -> f32 {
        f32::from_bits(self.0)
    }
}

impl Field for F32Bits {
    const SPANS: &'static [(usize, usize)] = &[(0, 4)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(F32Bits(read_u32(rec, off)))
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        write_u32(rec, off, self.0)
    }
    fn to_asm(&self) -> String {
        let text = format!("{:?}", self.get());
        match text.parse::<f32>() {
            Ok(back) if back.to_bits() == self.0 => text,
            _ => format!("{:#010x}", self.0),
        }
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        const EXPECTED: &str = "a float (e.g. 1.5, -inf) or its bits as 0x hexadecimal";
        if text.starts_with("0x") {
            return parse_uint(text)
                .and_then(|v| u32::try_from(v).ok())
                .map(F32Bits)
                .ok_or(EXPECTED);
        }
        text.parse::<f32>().map(F32Bits::new).map_err(|_| EXPECTED)
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        F32Bits(u32::from_le_bytes(e.array()))
    }
}

/// A NUL-padded ASCII name of at most `N` bytes (queue and function names).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Name<const N: usize>(pub String);

fn name_char_ok(b: u8) -> bool {
    b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' '
}

impl<const N: usize> Field for Name<N> {
    const SPANS: &'static [(usize, usize)] = &[(0, N)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        const EXPECTED: &str = "printable ASCII (no quote or backslash) padded with NUL bytes";
        let bytes = &rec[off..off + N];
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(N);
        if !bytes[..len].iter().all(|&b| name_char_ok(b)) || bytes[len..].iter().any(|&b| b != 0) {
            return Err(EXPECTED);
        }
        Ok(Name(bytes[..len].iter().map(|&b| b as char).collect()))
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        let bytes = self.0.as_bytes();
        let n = bytes.len().min(N);
        rec[off..off + n].copy_from_slice(&bytes[..n]);
        rec[off + n..off + N].fill(0);
    }
    fn to_asm(&self) -> String {
        format!("\"{}\"", self.0)
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        const EXPECTED: &str = "a quoted name of printable ASCII that fits the field";
        let inner = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .ok_or(EXPECTED)?;
        if inner.len() > N || !inner.bytes().all(name_char_ok) {
            return Err(EXPECTED);
        }
        Ok(Name(inner.to_string()))
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        let len = usize::from(e.u8()) % (N + 1);
        Name(
            (0..len)
                .map(|_| (b' ' + e.u8() % 95) as char)
                .filter(|&c| name_char_ok(c as u8))
                .collect(),
        )
    }
}

/// Splits a bracketed list `[a; b; c]` into trimmed parts.
pub fn bracket_parts(text: &str) -> Option<Vec<&str>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some(inner.split(';').map(str::trim).collect())
}

fn step_num(part: &str) -> Option<(i16, u16)> {
    let (s, n) = part.split_once(',')?;
    let s = parse_int(s.trim()).and_then(|v| i16::try_from(v).ok())?;
    let n = parse_uint(n.trim()).and_then(|v| u16::try_from(v).ok())?;
    Some((s, n))
}

const T3_EXPECTED: &str = "a pattern [start; step,num; step,num; step,num]";
const T4_EXPECTED: &str = "a pattern [start; step,num; step,num; step,num; step,num]";

fn parse_pattern<const K: usize>(text: &str) -> Option<(u32, [i16; K], [u16; K])> {
    let parts = bracket_parts(text)?;
    if parts.len() != K + 1 {
        return None;
    }
    let start = parse_uint(parts[0]).and_then(|v| u32::try_from(v).ok())?;
    let mut step = [0i16; K];
    let mut num = [0u16; K];
    for k in 0..K {
        (step[k], num[k]) = step_num(parts[k + 1])?;
    }
    Some((start, step, num))
}

fn print_pattern(start: u32, step: &[i16], num: &[u16]) -> String {
    let mut s = format!("[{start:#x}");
    for (st, n) in step.iter().zip(num) {
        s.push_str(&format!("; {st},{n}"));
    }
    s.push(']');
    s
}

impl Field for Tensor3d {
    const SPANS: &'static [(usize, usize)] = &[(0, Tensor3d::SIZE)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(Tensor3d::read_at(rec, off))
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        self.write_at(rec, off)
    }
    fn to_asm(&self) -> String {
        print_pattern(self.start.0, &self.step, &self.num)
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        let (start, step, num) = parse_pattern::<3>(text).ok_or(T3_EXPECTED)?;
        Ok(Tensor3d {
            start: Addr4(start),
            step,
            num,
        })
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        let b: [u8; 16] = e.array();
        let mut rec = [0u8; 64];
        rec[..16].copy_from_slice(&b);
        Tensor3d::read_at(&rec, 0)
    }
}

impl Field for Tensor4d {
    const SPANS: &'static [(usize, usize)] = &[(0, Tensor4d::SIZE)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(Tensor4d::read_at(rec, off))
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        self.write_at(rec, off)
    }
    fn to_asm(&self) -> String {
        print_pattern(self.start.0, &self.step, &self.num)
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        let (start, step, num) = parse_pattern::<4>(text).ok_or(T4_EXPECTED)?;
        Ok(Tensor4d {
            start: Addr4(start),
            step,
            num,
        })
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        let b: [u8; 20] = e.array();
        let mut rec = [0u8; 64];
        rec[..20].copy_from_slice(&b);
        Tensor4d::read_at(&rec, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_in_both_radixes() {
        assert_eq!(parse_uint("0x1F"), Some(31));
        assert_eq!(parse_uint("1_000"), Some(1000));
        assert_eq!(parse_uint("0x"), None);
        assert_eq!(parse_uint("-1"), None);
        assert_eq!(parse_int("-32"), Some(-32));
        assert_eq!(parse_int("-0x8000000000000000"), Some(i64::MIN));
        assert_eq!(u8::from_asm("256"), Err("an integer 0..=255"));
    }

    #[test]
    fn floats_keep_their_bits() {
        for bits in [
            0u32,
            0x8000_0000,
            0x3f80_0000,
            0x7f80_0000,
            0x7fc0_0001,
            0xffff_ffff,
            1,
        ] {
            let f = F32Bits(bits);
            assert_eq!(F32Bits::from_asm(&f.to_asm()).unwrap(), f, "{}", f.to_asm());
        }
        assert_eq!(F32Bits(0x3f80_0000).to_asm(), "1.0");
    }

    #[test]
    fn names_are_strict() {
        let mut rec = [0u8; 64];
        rec[0x0C..0x0C + 4].copy_from_slice(b"qSP0");
        assert_eq!(Name::<32>::read(&rec, 0x0C).unwrap().0, "qSP0");
        rec[0x0C + 10] = b'x';
        assert!(Name::<32>::read(&rec, 0x0C).is_err());
        assert!(Name::<4>::from_asm("\"toolong\"").is_err());
        assert_eq!(Name::<4>::from_asm("\"ab\"").unwrap().0, "ab");
    }

    #[test]
    fn patterns_print_and_parse() {
        let t = Tensor3d {
            start: Addr4(0x37cfe),
            step: [-1, 0, -32],
            num: [32, 1, 4],
        };
        assert_eq!(t.to_asm(), "[0x37cfe; -1,32; 0,1; -32,4]");
        assert_eq!(Tensor3d::from_asm(&t.to_asm()).unwrap(), t);
        assert_eq!(Tensor3d::from_asm("[0x10; 1,2]"), Err(T3_EXPECTED));
        let f = Tensor4d::contiguous(0x4000, 128);
        assert_eq!(Tensor4d::from_asm(&f.to_asm()).unwrap(), f);
    }
}
