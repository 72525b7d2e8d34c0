//! The payload digest stored in the header's 32-byte `hash` field.
//!
//! `pkg_version` 1 stores a SHA-256 of the payload (all 32 bytes); version 2
//! stores an MD5 in the first 16 bytes. Producers fill the rest of an MD5 hash
//! field differently (zeros from our writer, ASCII `'0'` from some others), so
//! only the digest bytes are compared.

use md5::Md5;
use sha2::{Digest, Sha256};

use crate::error::{NeffError, Result};

/// Which digest a NEFF carries, selected by `pkg_version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashKind {
    /// `pkg_version` 1: SHA-256 over the payload, 32 bytes.
    Sha256,
    /// `pkg_version` 2: MD5 over the payload, 16 bytes then padding.
    Md5,
}

impl HashKind {
    /// Maps a header `pkg_version` to its digest kind.
    pub fn from_pkg_version(pkg_version: u64) -> Result<Self> {
        match pkg_version {
            1 => Ok(HashKind::Sha256),
            2 => Ok(HashKind::Md5),
            other => Err(NeffError::UnsupportedPackager { pkg_version: other }),
        }
    }

    /// The `pkg_version` a writer stores for this digest kind.
    pub fn pkg_version(self) -> u64 {
        match self {
            HashKind::Sha256 => 1,
            HashKind::Md5 => 2,
        }
    }

    /// Number of meaningful bytes at the start of the hash field.
    pub fn digest_len(self) -> usize {
        match self {
            HashKind::Sha256 => 32,
            HashKind::Md5 => 16,
        }
    }

    /// Computes the 32-byte hash field for `payload` (MD5 is zero-padded).
    pub fn compute(self, payload: &[u8]) -> [u8; 32] {
        let mut field = [0u8; 32];
        match self {
            HashKind::Sha256 => field.copy_from_slice(&Sha256::digest(payload)),
            HashKind::Md5 => field[..16].copy_from_slice(&Md5::digest(payload)),
        }
        field
    }

    /// Checks `payload` against the header's hash field, reporting both
    /// digests in hex on mismatch.
    pub fn verify(self, stored: &[u8; 32], payload: &[u8]) -> Result<()> {
        let computed = self.compute(payload);
        let n = self.digest_len();
        if stored[..n] == computed[..n] {
            Ok(())
        } else {
            Err(NeffError::HashMismatch {
                kind: self,
                expected: to_hex(&stored[..n]),
                found: to_hex(&computed[..n]),
            })
        }
    }
}

impl std::fmt::Display for HashKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            HashKind::Sha256 => "sha256",
            HashKind::Md5 => "md5",
        })
    }
}

impl std::str::FromStr for HashKind {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "sha256" | "sha-256" => Ok(HashKind::Sha256),
            "md5" => Ok(HashKind::Md5),
            other => Err(format!("unknown hash kind {other:?}, expected sha256 or md5")),
        }
    }
}

/// Lower-case hex of `bytes`, used for digests and UUIDs in messages and JSON.
pub fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Parses hex produced by [`to_hex`] (either case); `None` on odd length or a
/// non-hex digit.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_field_is_digest_then_zeros() {
        let f = HashKind::Md5.compute(b"abc");
        assert_eq!(to_hex(&f[..16]), "900150983cd24fb0d6963f7d28e17f72");
        assert!(f[16..].iter().all(|&b| b == 0));
    }

    #[test]
    fn sha256_field_is_full_digest() {
        let f = HashKind::Sha256.compute(b"abc");
        assert_eq!(
            to_hex(&f),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn md5_ignores_padding_bytes() {
        let mut f = HashKind::Md5.compute(b"payload");
        f[16..].fill(b'0');
        HashKind::Md5.verify(&f, b"payload").unwrap();
    }

    #[test]
    fn mismatch_reports_both_digests() {
        let f = HashKind::Sha256.compute(b"one");
        match HashKind::Sha256.verify(&f, b"two") {
            Err(NeffError::HashMismatch { expected, found, .. }) => {
                assert_eq!(expected, to_hex(&f));
                assert_ne!(expected, found);
            }
            other => panic!("expected HashMismatch, got {other:?}"),
        }
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(from_hex(&to_hex(&[0, 1, 0xab, 0xff])).unwrap(), vec![0, 1, 0xab, 0xff]);
        assert!(from_hex("abc").is_none());
        assert!(from_hex("zz").is_none());
    }
}
