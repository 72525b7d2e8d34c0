//! The fixed 1024-byte NEFF header (`neff_header_t`), little-endian, no magic.
//!
//! Offsets follow the SDK documentation: `pkg_version`@0, `header_size`@8,
//! `data_size`@16, `neff_version_major`@24, `neff_version_minor`@32,
//! `neff_build_version[128]`@40, `num_tpb`@168, `hash[32]`@172, `uuid[16]`@204,
//! `name[256]`@220, `requested_tpb_count`@476, `tpb_per_node[64]`@480,
//! `feature_bits`@544, `lnc_size` (libnrt's `vnc_size`)@552 and 468 reserved
//! bytes to 1024. Text and byte-array fields are kept as raw arrays and the
//! reserved tail is kept too, so parse followed by [`NeffHeader::to_bytes`]
//! reproduces the input exactly.

use serde::{Deserialize, Serialize};

use crate::error::{NeffError, Result};
use crate::hash::{from_hex, to_hex};

/// Size of the header and the only accepted `header_size`.
pub const HEADER_SIZE: usize = 1024;

/// Feature bits that make a version-2 NEFF unloadable (bits 27..=62); libnrt
/// rejects any of them, so this reader does too.
pub const UNKNOWN_FEATURE_MASK: u64 = 0x7FFF_FFFF_F800_0000;

/// Feature bits understood by the runtime (bits 0..=26), reported in errors.
pub const SUPPORTED_FEATURE_MASK: u64 = 0x07FF_FFFF;

/// Highest `neff_version_major` accepted.
pub const MAX_MAJOR_VERSION: u64 = 2;

const OFF_PKG_VERSION: usize = 0;
const OFF_HEADER_SIZE: usize = 8;
const OFF_DATA_SIZE: usize = 16;
const OFF_MAJOR: usize = 24;
const OFF_MINOR: usize = 32;
const OFF_BUILD: usize = 40;
const OFF_NUM_TPB: usize = 168;
const OFF_HASH: usize = 172;
const OFF_UUID: usize = 204;
const OFF_NAME: usize = 220;
const OFF_REQ_TPB: usize = 476;
const OFF_TPB_PER_NODE: usize = 480;
const OFF_FEATURE_BITS: usize = 544;
const OFF_LNC_SIZE: usize = 552;
const OFF_RESERVED: usize = 556;

/// A decoded NEFF header. Every byte of the 1024 is represented, so the
/// struct round-trips exactly; use the accessor methods for text fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeffHeader {
    /// Packaging version: 1 = SHA-256, 2 = MD5 (see [`crate::HashKind`]).
    pub pkg_version: u64,
    /// Header size; must be 1024.
    pub header_size: u64,
    /// Payload bytes after the header.
    pub data_size: u64,
    /// NEFF format major version (0, 1 or 2 are accepted).
    pub neff_version_major: u64,
    /// NEFF format minor version (never checked).
    pub neff_version_minor: u64,
    /// Producer build string, NUL-padded.
    pub neff_build_version: [u8; 128],
    /// TPBs (NeuronCores) the NEFF needs.
    pub num_tpb: u32,
    /// Payload digest (SHA-256, or MD5 in the first 16 bytes).
    pub hash: [u8; 32],
    /// Model UUID; libnrt keys its parse cache on it.
    pub uuid: [u8; 16],
    /// Model name, NUL-padded.
    pub name: [u8; 256],
    /// Requested TPB count.
    pub requested_tpb_count: u32,
    /// TPBs per node, one byte per node.
    pub tpb_per_node: [u8; 64],
    /// Incompatible-feature bits (meanings not public).
    pub feature_bits: u64,
    /// Logical NeuronCore size the NEFF was built for (libnrt: `vnc_size`).
    pub lnc_size: u32,
    /// Trailing reserved bytes, normally zero, kept verbatim.
    pub reserved: [u8; HEADER_SIZE - OFF_RESERVED],
}

impl Default for NeffHeader {
    /// A header as our writer starts it: MD5 packaging, version 2.0, one TPB,
    /// LNC size 1, everything else zero.
    fn default() -> Self {
        let mut tpb_per_node = [0u8; 64];
        tpb_per_node[0] = 1;
        NeffHeader {
            pkg_version: 2,
            header_size: HEADER_SIZE as u64,
            data_size: 0,
            neff_version_major: 2,
            neff_version_minor: 0,
            neff_build_version: [0; 128],
            num_tpb: 1,
            hash: [0; 32],
            uuid: [0; 16],
            name: [0; 256],
            requested_tpb_count: 1,
            tpb_per_node,
            feature_bits: 0,
            lnc_size: 1,
            reserved: [0; HEADER_SIZE - OFF_RESERVED],
        }
    }
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(a)
}

fn array_at<const N: usize>(b: &[u8], off: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[off..off + N]);
    a
}

/// Text up to the first NUL, with invalid UTF-8 replaced.
fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Stores `text` NUL-padded; it must leave room for the terminating NUL.
fn set_c_string<const N: usize>(field: &'static str, text: &str) -> Result<[u8; N]> {
    let bytes = text.as_bytes();
    if bytes.len() >= N || bytes.contains(&0) {
        return Err(NeffError::InvalidHeaderField {
            field,
            message: format!(
                "{} bytes given, expected at most {} bytes without NUL characters",
                bytes.len(),
                N - 1
            ),
        });
    }
    let mut a = [0u8; N];
    a[..bytes.len()].copy_from_slice(bytes);
    Ok(a)
}

impl NeffHeader {
    /// Decodes the first 1024 bytes of `bytes`. Only the length is checked
    /// here; [`NeffHeader::validate`] applies the loader's rules.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        if bytes.len() < HEADER_SIZE {
            return Err(NeffError::TruncatedHeader { len: bytes.len() });
        }
        let b = &bytes[..HEADER_SIZE];
        Ok(NeffHeader {
            pkg_version: u64_at(b, OFF_PKG_VERSION),
            header_size: u64_at(b, OFF_HEADER_SIZE),
            data_size: u64_at(b, OFF_DATA_SIZE),
            neff_version_major: u64_at(b, OFF_MAJOR),
            neff_version_minor: u64_at(b, OFF_MINOR),
            neff_build_version: array_at(b, OFF_BUILD),
            num_tpb: u32_at(b, OFF_NUM_TPB),
            hash: array_at(b, OFF_HASH),
            uuid: array_at(b, OFF_UUID),
            name: array_at(b, OFF_NAME),
            requested_tpb_count: u32_at(b, OFF_REQ_TPB),
            tpb_per_node: array_at(b, OFF_TPB_PER_NODE),
            feature_bits: u64_at(b, OFF_FEATURE_BITS),
            lnc_size: u32_at(b, OFF_LNC_SIZE),
            reserved: array_at(b, OFF_RESERVED),
        })
    }

    /// Encodes the header into its 1024-byte form.
    pub fn to_bytes(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[OFF_PKG_VERSION..][..8].copy_from_slice(&self.pkg_version.to_le_bytes());
        b[OFF_HEADER_SIZE..][..8].copy_from_slice(&self.header_size.to_le_bytes());
        b[OFF_DATA_SIZE..][..8].copy_from_slice(&self.data_size.to_le_bytes());
        b[OFF_MAJOR..][..8].copy_from_slice(&self.neff_version_major.to_le_bytes());
        b[OFF_MINOR..][..8].copy_from_slice(&self.neff_version_minor.to_le_bytes());
        b[OFF_BUILD..][..128].copy_from_slice(&self.neff_build_version);
        b[OFF_NUM_TPB..][..4].copy_from_slice(&self.num_tpb.to_le_bytes());
        b[OFF_HASH..][..32].copy_from_slice(&self.hash);
        b[OFF_UUID..][..16].copy_from_slice(&self.uuid);
        b[OFF_NAME..][..256].copy_from_slice(&self.name);
        b[OFF_REQ_TPB..][..4].copy_from_slice(&self.requested_tpb_count.to_le_bytes());
        b[OFF_TPB_PER_NODE..][..64].copy_from_slice(&self.tpb_per_node);
        b[OFF_FEATURE_BITS..][..8].copy_from_slice(&self.feature_bits.to_le_bytes());
        b[OFF_LNC_SIZE..][..4].copy_from_slice(&self.lnc_size.to_le_bytes());
        b[OFF_RESERVED..].copy_from_slice(&self.reserved);
        b
    }

    /// Applies the loader's header rules: `header_size` is 1024, the payload
    /// fits in `file_len`, the packager, major version and feature bits are
    /// supported.
    pub fn validate(&self, file_len: usize) -> Result<()> {
        if self.header_size != HEADER_SIZE as u64 {
            return Err(NeffError::BadHeaderSize { found: self.header_size });
        }
        let available = (file_len.saturating_sub(HEADER_SIZE)) as u64;
        if self.data_size > available {
            return Err(NeffError::DataSizeMismatch { declared: self.data_size, available });
        }
        self.validate_compatibility()
    }

    /// The version/feature/packager checks alone (the ones libnrt reports as
    /// `NRT_UNSUPPORTED_NEFF_VERSION`).
    pub fn validate_compatibility(&self) -> Result<()> {
        crate::hash::HashKind::from_pkg_version(self.pkg_version)?;
        if self.neff_version_major > MAX_MAJOR_VERSION {
            return Err(NeffError::UnsupportedVersion {
                major: self.neff_version_major,
                minor: self.neff_version_minor,
            });
        }
        let unknown = self.feature_bits & UNKNOWN_FEATURE_MASK;
        if self.neff_version_major == 2 && unknown != 0 {
            return Err(NeffError::UnsupportedFeatureBits {
                feature_bits: self.feature_bits,
                unknown,
                supported: SUPPORTED_FEATURE_MASK,
            });
        }
        Ok(())
    }

    /// The model name up to its NUL.
    pub fn name(&self) -> String {
        c_string(&self.name)
    }

    /// Sets the model name (at most 255 bytes, no NUL).
    pub fn set_name(&mut self, name: &str) -> Result<()> {
        self.name = set_c_string("name", name)?;
        Ok(())
    }

    /// The producer build string up to its NUL.
    pub fn build_version(&self) -> String {
        c_string(&self.neff_build_version)
    }

    /// Sets the producer build string (at most 127 bytes, no NUL).
    pub fn set_build_version(&mut self, text: &str) -> Result<()> {
        self.neff_build_version = set_c_string("neff_build_version", text)?;
        Ok(())
    }

    /// The header fields as the JSON form used by `neff-header.json` and
    /// `nrt neff inspect --json`.
    pub fn fields(&self) -> HeaderFields {
        let nodes = self.tpb_per_node.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        HeaderFields {
            pkg_version: self.pkg_version,
            header_size: self.header_size,
            data_size: self.data_size,
            neff_version_major: self.neff_version_major,
            neff_version_minor: self.neff_version_minor,
            neff_build_version: self.build_version(),
            num_tpb: self.num_tpb,
            hash: to_hex(&self.hash),
            uuid: to_hex(&self.uuid),
            name: self.name(),
            requested_tpb_count: self.requested_tpb_count,
            tpb_per_node: self.tpb_per_node[..nodes].to_vec(),
            feature_bits: self.feature_bits,
            lnc_size: self.lnc_size,
            reserved: if self.reserved.iter().all(|&b| b == 0) {
                None
            } else {
                Some(to_hex(&self.reserved))
            },
        }
    }

    /// Rebuilds a header from its JSON form, checking every length.
    pub fn from_fields(f: &HeaderFields) -> Result<Self> {
        let mut h = NeffHeader {
            pkg_version: f.pkg_version,
            header_size: f.header_size,
            data_size: f.data_size,
            neff_version_major: f.neff_version_major,
            neff_version_minor: f.neff_version_minor,
            num_tpb: f.num_tpb,
            requested_tpb_count: f.requested_tpb_count,
            feature_bits: f.feature_bits,
            lnc_size: f.lnc_size,
            ..NeffHeader::default()
        };
        h.set_build_version(&f.neff_build_version)?;
        h.set_name(&f.name)?;
        h.hash = hex_array("hash", &f.hash)?;
        h.uuid = hex_array("uuid", &f.uuid)?;
        if f.tpb_per_node.len() > 64 {
            return Err(NeffError::InvalidHeaderField {
                field: "tpb_per_node",
                message: format!("{} entries given, expected at most 64", f.tpb_per_node.len()),
            });
        }
        h.tpb_per_node = [0; 64];
        h.tpb_per_node[..f.tpb_per_node.len()].copy_from_slice(&f.tpb_per_node);
        if let Some(r) = &f.reserved {
            h.reserved = hex_array("reserved", r)?;
        }
        Ok(h)
    }
}

fn hex_array<const N: usize>(field: &'static str, text: &str) -> Result<[u8; N]> {
    let bytes = from_hex(text).ok_or_else(|| NeffError::InvalidHeaderField {
        field,
        message: format!("{text:?} is not hex, expected {} hex digits", 2 * N),
    })?;
    bytes.try_into().map_err(|b: Vec<u8>| NeffError::InvalidHeaderField {
        field,
        message: format!("{} bytes given, expected {N}", b.len()),
    })
}

/// The header as JSON: keys are the documented struct field names, hash and
/// uuid in hex, text fields as strings, `tpb_per_node` without trailing
/// zeros, `reserved` only when non-zero.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderFields {
    /// See [`NeffHeader::pkg_version`].
    pub pkg_version: u64,
    /// See [`NeffHeader::header_size`].
    pub header_size: u64,
    /// See [`NeffHeader::data_size`].
    pub data_size: u64,
    /// See [`NeffHeader::neff_version_major`].
    pub neff_version_major: u64,
    /// See [`NeffHeader::neff_version_minor`].
    pub neff_version_minor: u64,
    /// See [`NeffHeader::neff_build_version`].
    pub neff_build_version: String,
    /// See [`NeffHeader::num_tpb`].
    pub num_tpb: u32,
    /// Hex of [`NeffHeader::hash`] (64 digits).
    pub hash: String,
    /// Hex of [`NeffHeader::uuid`] (32 digits).
    pub uuid: String,
    /// See [`NeffHeader::name`].
    pub name: String,
    /// See [`NeffHeader::requested_tpb_count`].
    pub requested_tpb_count: u32,
    /// See [`NeffHeader::tpb_per_node`] (trailing zeros dropped).
    pub tpb_per_node: Vec<u8>,
    /// See [`NeffHeader::feature_bits`].
    pub feature_bits: u64,
    /// See [`NeffHeader::lnc_size`].
    pub lnc_size: u32,
    /// Hex of [`NeffHeader::reserved`] when any byte is non-zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn default_round_trips() {
        let h = NeffHeader::default();
        assert_eq!(NeffHeader::parse(&h.to_bytes()).unwrap(), h);
    }

    #[test]
    fn field_offsets_are_documented_ones() {
        let mut h = NeffHeader::default();
        h.set_name("abc").unwrap();
        h.feature_bits = 0x0102_0304;
        h.lnc_size = 2;
        h.requested_tpb_count = 7;
        h.uuid[0] = 0xEE;
        h.hash[0] = 0xDD;
        h.num_tpb = 5;
        let b = h.to_bytes();
        assert_eq!(&b[220..224], b"abc\0");
        assert_eq!(b[544], 0x04);
        assert_eq!(b[552], 2);
        assert_eq!(b[476], 7);
        assert_eq!(b[204], 0xEE);
        assert_eq!(b[172], 0xDD);
        assert_eq!(b[168], 5);
        assert_eq!(b[480], 1);
    }

    #[test]
    fn truncated_header_is_reported() {
        assert!(matches!(
            NeffHeader::parse(&[0u8; 1023]),
            Err(NeffError::TruncatedHeader { len: 1023 })
        ));
    }

    #[test]
    fn bad_header_size_is_reported() {
        let h = NeffHeader { header_size: 512, ..NeffHeader::default() };
        assert!(matches!(h.validate(2048), Err(NeffError::BadHeaderSize { found: 512 })));
    }

    #[test]
    fn data_size_past_end_is_reported() {
        let h = NeffHeader { data_size: 100, ..NeffHeader::default() };
        assert!(matches!(
            h.validate(1024 + 99),
            Err(NeffError::DataSizeMismatch { declared: 100, available: 99 })
        ));
        h.validate(1024 + 100).unwrap();
    }

    #[test]
    fn major_version_above_two_is_unsupported() {
        let h = NeffHeader { neff_version_major: 3, ..NeffHeader::default() };
        let e = h.validate(1024).unwrap_err();
        assert!(matches!(e, NeffError::UnsupportedVersion { major: 3, .. }));
        assert!(e.is_unsupported_version());
    }

    #[test]
    fn unknown_feature_bits_only_matter_for_major_two() {
        let h = NeffHeader { feature_bits: 1 << 27, ..NeffHeader::default() };
        let e = h.validate(1024).unwrap_err();
        assert!(matches!(e, NeffError::UnsupportedFeatureBits { unknown: 0x800_0000, .. }));
        assert!(e.is_unsupported_version());
        // Bit 63 is never tested, bits below 27 are known.
        NeffHeader { feature_bits: (1 << 63) | 0x209c00, ..NeffHeader::default() }
            .validate(1024)
            .unwrap();
        NeffHeader { feature_bits: 1 << 40, neff_version_major: 1, ..NeffHeader::default() }
            .validate(1024)
            .unwrap();
    }

    #[test]
    fn unknown_packager_is_unsupported() {
        let h = NeffHeader { pkg_version: 3, ..NeffHeader::default() };
        let e = h.validate(1024).unwrap_err();
        assert!(matches!(e, NeffError::UnsupportedPackager { pkg_version: 3 }));
        assert!(e.is_unsupported_version());
    }

    #[test]
    fn overlong_name_is_refused() {
        let mut h = NeffHeader::default();
        assert!(matches!(
            h.set_name(&"n".repeat(256)),
            Err(NeffError::InvalidHeaderField { field: "name", .. })
        ));
        h.set_name(&"n".repeat(255)).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_1024_bytes_round_trip(bytes in proptest::collection::vec(any::<u8>(), 1024)) {
            let h = NeffHeader::parse(&bytes).unwrap();
            prop_assert_eq!(&h.to_bytes()[..], &bytes[..]);
        }

        #[test]
        fn json_fields_round_trip(name in "[a-zA-Z0-9._-]{0,40}", uuid in any::<[u8; 16]>(),
                                  bits in any::<u64>(), lnc in 1u32..8, tpn in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut h = NeffHeader { feature_bits: bits, lnc_size: lnc, uuid, ..NeffHeader::default() };
            h.set_name(&name).unwrap();
            h.tpb_per_node = [0; 64];
            h.tpb_per_node[..tpn.len()].copy_from_slice(&tpn);
            h.reserved[3] = 9;
            let f = h.fields();
            let text = serde_json::to_string(&f).unwrap();
            let back: HeaderFields = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(NeffHeader::from_fields(&back).unwrap(), h);
        }
    }
}
