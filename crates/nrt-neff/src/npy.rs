//! Constants: `.npy` arrays and raw files referenced by `file` vars.
//!
//! A `.npy` starts with the magic `\x93NUMPY`, a version, a header length
//! (u16 for v1, u32 for v2/v3) and a Python-literal dict with `descr`,
//! `fortran_order` and `shape`; the array data follows. libnrt writes the
//! data bytes to device memory, so that is what [`Constant::data`] returns.

use crate::error::{NeffError, Result};

/// The six magic bytes opening every `.npy` file.
pub const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The decoded `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// Format version (major, minor).
    pub version: (u8, u8),
    /// Element descriptor, e.g. "<f2".
    pub descr: String,
    /// Whether the data is column-major.
    pub fortran_order: bool,
    /// Dimensions (empty for a scalar).
    pub shape: Vec<u64>,
    /// Byte offset of the data within the file.
    pub data_offset: usize,
}

impl NpyHeader {
    /// Bytes per element from the descriptor's trailing digits.
    pub fn item_size(&self) -> Option<u64> {
        let digits: String = self.descr.chars().skip_while(|c| !c.is_ascii_digit()).collect();
        digits.parse().ok()
    }

    /// Number of elements (product of the shape), `None` on overflow.
    pub fn element_count(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }
}

/// A constant member: a parsed `.npy` or raw bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Constant<'a> {
    /// A `.npy` array.
    Npy {
        /// Its header.
        header: NpyHeader,
        /// The array bytes after the header.
        data: &'a [u8],
    },
    /// Any other file, used as-is.
    Raw(&'a [u8]),
}

impl<'a> Constant<'a> {
    /// Interprets member `path`: `.npy` files are parsed, others are raw.
    pub fn from_member(path: &str, bytes: &'a [u8]) -> Result<Self> {
        if path.ends_with(".npy") {
            let header = parse_npy_header(path, bytes)?;
            Ok(Constant::Npy { data: &bytes[header.data_offset..], header })
        } else {
            Ok(Constant::Raw(bytes))
        }
    }

    /// The bytes the runtime copies to device memory.
    pub fn data(&self) -> &'a [u8] {
        match self {
            Constant::Npy { data, .. } => data,
            Constant::Raw(d) => d,
        }
    }
}

fn npy_err(path: &str, message: impl Into<String>) -> NeffError {
    NeffError::Npy { path: path.to_string(), message: message.into() }
}

/// Parses and checks a `.npy` header; the data length must match the shape.
pub fn parse_npy_header(path: &str, bytes: &[u8]) -> Result<NpyHeader> {
    parse_npy_header_of(path, bytes, bytes.len() as u64)
}

/// Parses and checks the header of a `.npy` file of `file_len` bytes from
/// its first bytes (`head`: at least the whole header; 64 KiB always is
/// for version 1), so a large file's data need not be read to check it.
pub fn parse_npy_header_of(path: &str, bytes: &[u8], file_len: u64) -> Result<NpyHeader> {
    if file_len < bytes.len() as u64 {
        return Err(npy_err(path, format!("{} header bytes given for a file of {file_len}", bytes.len())));
    }
    if bytes.len() < 10 || &bytes[..6] != NPY_MAGIC {
        return Err(npy_err(path, "missing \\x93NUMPY magic, expected a NumPy .npy file"));
    }
    let version = (bytes[6], bytes[7]);
    let (len, start): (usize, usize) = match version.0 {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(npy_err(path, "truncated v2 header length"));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(npy_err(path, format!("format version {v} is not supported, expected 1, 2 or 3"))),
    };
    let end = start
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| npy_err(path, format!("header length {len} runs past the end of the file")))?;
    let text = std::str::from_utf8(&bytes[start..end])
        .map_err(|_| npy_err(path, "header is not UTF-8/ASCII text"))?;
    let dict = literal::parse_dict(text).map_err(|m| npy_err(path, m))?;
    let header = NpyHeader {
        version,
        descr: dict.descr,
        fortran_order: dict.fortran_order,
        shape: dict.shape,
        data_offset: end,
    };
    let data_len = file_len - end as u64;
    if let (Some(item), Some(count)) = (header.item_size(), header.element_count()) {
        let expected = count.checked_mul(item);
        if expected != Some(data_len) {
            return Err(npy_err(
                path,
                format!(
                    "shape {:?} of {} needs {} data bytes, found {data_len}",
                    header.shape,
                    header.descr,
                    expected.map_or("too many".to_string(), |e| e.to_string())
                ),
            ));
        }
    }
    Ok(header)
}

/// Encodes a version-1 `.npy` (C order) with the header padded to 64 bytes.
pub fn encode_npy(descr: &str, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let mut out = encode_npy_header(descr, shape);
    out.reserve(data.len());
    out.extend_from_slice(data);
    out
}

/// The `.npy` descriptor for elements of dtype `dtype` (a name of the
/// element-type table): numpy's own where it has the type; otherwise the
/// raw bits as the unsigned integer of the element's size (bfloat16 as
/// `<u2`, the fp8 formats as `|u1`), which numpy reads and `.view()`
/// reinterprets.
pub fn descr_of(dtype: &str) -> String {
    let t = nrt_isa::dtype::element_type(dtype);
    match (t.and_then(|t| t.npy_descr), t.map_or(1, |t| t.size)) {
        (Some(d), _) => d.to_string(),
        (None, 1) => "|u1".to_string(),
        (None, n @ (2 | 4 | 8)) => format!("<u{n}"),
        (None, n) => format!("|V{n}"),
    }
}

/// The header [`encode_npy`] writes before the data, for writers that
/// stream the data after it.
pub fn encode_npy_header(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dims = match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}");
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    dict.push('\n');
    let mut out = Vec::with_capacity(10 + dict.len());
    out.extend_from_slice(NPY_MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

/// A tiny reader for the Python dict literal of a `.npy` header.
mod literal {
    pub struct Dict {
        pub descr: String,
        pub fortran_order: bool,
        pub shape: Vec<u64>,
    }

    struct Cursor<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Cursor<'_> {
        fn skip_ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn eat(&mut self, c: u8) -> bool {
            self.skip_ws();
            if self.s.get(self.i) == Some(&c) {
                self.i += 1;
                true
            } else {
                false
            }
        }
        fn expect(&mut self, c: u8) -> Result<(), String> {
            if self.eat(c) { Ok(()) } else { Err(format!("expected '{}' at byte {}", c as char, self.i)) }
        }
        fn string(&mut self) -> Result<String, String> {
            self.skip_ws();
            let q = *self.s.get(self.i).ok_or("unexpected end of header")?;
            if q != b'\'' && q != b'"' {
                return Err(format!("expected a quoted string at byte {}", self.i));
            }
            let start = self.i + 1;
            let len = self.s[start..].iter().position(|&c| c == q).ok_or("unterminated string")?;
            self.i = start + len + 1;
            Ok(String::from_utf8_lossy(&self.s[start..start + len]).into_owned())
        }
        fn word(&mut self) -> &[u8] {
            self.skip_ws();
            let start = self.i;
            while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
                self.i += 1;
            }
            &self.s[start..self.i]
        }
    }

    pub fn parse_dict(text: &str) -> Result<Dict, String> {
        let mut c = Cursor { s: text.as_bytes(), i: 0 };
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        c.expect(b'{')?;
        while !c.eat(b'}') {
            let key = c.string()?;
            c.expect(b':')?;
            match key.as_str() {
                "descr" => descr = Some(c.string()?),
                "fortran_order" => {
                    fortran = Some(match c.word() {
                        b"True" => true,
                        b"False" => false,
                        _ => return Err("fortran_order must be True or False".into()),
                    })
                }
                "shape" => {
                    c.expect(b'(')?;
                    let mut dims = Vec::new();
                    while !c.eat(b')') {
                        let w = c.word();
                        let d = std::str::from_utf8(w)
                            .ok()
                            .and_then(|w| w.parse::<u64>().ok())
                            .ok_or("shape entries must be non-negative integers")?;
                        dims.push(d);
                        if !c.eat(b',') {
                            c.expect(b')')?;
                            break;
                        }
                    }
                    shape = Some(dims);
                }
                other => return Err(format!("unexpected header key {other:?}")),
            }
            if !c.eat(b',') {
                c.expect(b'}')?;
                break;
            }
        }
        Ok(Dict {
            descr: descr.ok_or("header lacks 'descr'")?,
            fortran_order: fortran.ok_or("header lacks 'fortran_order'")?,
            shape: shape.ok_or("header lacks 'shape'")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_numpy_written_header() {
        let mut f = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
        let mut dict = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 1, 1), }".to_string();
        dict.push_str(&" ".repeat(0x76 - dict.len() - 1));
        dict.push('\n');
        f.extend_from_slice(dict.as_bytes());
        f.extend_from_slice(&[0; 12]);
        let h = parse_npy_header("c.npy", &f).unwrap();
        assert_eq!(h.descr, "<f2");
        assert_eq!(h.shape, vec![2, 3, 1, 1]);
        assert!(!h.fortran_order);
        assert_eq!(h.data_offset, 128);
    }

    #[test]
    fn data_length_must_match_shape() {
        let mut f = encode_npy("<f4", &[4], &[0; 16]);
        f.pop();
        assert!(matches!(parse_npy_header("c.npy", &f), Err(NeffError::Npy { .. })));
    }

    #[test]
    fn bad_magic_is_reported() {
        assert!(matches!(
            Constant::from_member("w.npy", b"NOTNUMPYxxxxxxxxx"),
            Err(NeffError::Npy { .. })
        ));
        assert_eq!(Constant::from_member("w.bin", b"raw").unwrap().data(), b"raw");
    }

    #[test]
    fn scalar_and_one_dim_shapes() {
        let h = parse_npy_header("s.npy", &encode_npy("<i4", &[], &[0; 4])).unwrap();
        assert!(h.shape.is_empty());
        let f = encode_npy("|u1", &[3], &[1, 2, 3]);
        assert_eq!(f.len() % 64, 3);
        assert_eq!(Constant::from_member("v.npy", &f).unwrap().data(), &[1, 2, 3]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn encode_parse_round_trip(shape in proptest::collection::vec(0u64..5, 0..4), item in prop::sample::select(vec![1u64, 2, 4, 8])) {
            let n: u64 = shape.iter().product::<u64>() * item;
            let descr = format!("<f{item}");
            let data = vec![0xA5; n as usize];
            let f = encode_npy(&descr, &shape, &data);
            let c = Constant::from_member("x.npy", &f).unwrap();
            match c {
                Constant::Npy { header, data: d } => {
                    prop_assert_eq!(header.shape, shape);
                    prop_assert_eq!(header.descr, descr);
                    prop_assert_eq!(d, &data[..]);
                }
                Constant::Raw(_) => prop_assert!(false, "parsed as raw"),
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if bytes.len() >= 8 { bytes[..6].copy_from_slice(NPY_MAGIC); bytes[6] = 1; }
            let _ = parse_npy_header("f.npy", &bytes);
        }
    }
}
