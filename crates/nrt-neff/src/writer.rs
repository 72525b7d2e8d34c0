//! Writing NEFFs: byte-stable (same input, same bytes).
//!
//! [`pack_members`] is the low-level step: given a header template and the
//! members, it builds the payload ([`crate::archive::write_payload`]), then
//! fills `pkg_version`, `header_size`, `data_size` and `hash`.
//! [`NeffWriter`] collects members and header fields for it; see
//! [`crate::layout`] for emitting the compiler's manifest layout.

use serde::Serialize;

use crate::archive::{Members, PayloadFormat, normalize_member_path, write_payload};
use crate::error::{NeffError, Result};
use crate::hash::HashKind;
use crate::header::{HEADER_SIZE, NeffHeader};
use crate::neff::Neff;

/// The payload format producers pair with each digest: MD5 with gzip
/// (`pkg_version` 2), SHA-256 with a plain tar (`pkg_version` 1).
pub fn default_format(hash: HashKind) -> PayloadFormat {
    match hash {
        HashKind::Md5 => PayloadFormat::Gzip,
        HashKind::Sha256 => PayloadFormat::PlainTar,
    }
}

/// Packs `members` behind a copy of `header`, whose `pkg_version`,
/// `header_size`, `data_size` and `hash` are recomputed.
pub fn pack_members(
    header: &NeffHeader,
    members: &Members,
    hash: HashKind,
    format: PayloadFormat,
) -> Result<Vec<u8>> {
    let payload = write_payload(members, format)?;
    let mut h = header.clone();
    h.pkg_version = hash.pkg_version();
    h.header_size = HEADER_SIZE as u64;
    h.data_size = payload.len() as u64;
    h.hash = hash.compute(&payload);
    let mut out = Vec::with_capacity(HEADER_SIZE + payload.len());
    out.extend_from_slice(&h.to_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Collects header fields and members, then writes a NEFF.
#[derive(Clone, Debug, PartialEq)]
pub struct NeffWriter {
    header: NeffHeader,
    hash: HashKind,
    format: Option<PayloadFormat>,
    members: Members,
}

impl Default for NeffWriter {
    fn default() -> Self {
        NeffWriter::new()
    }
}

impl NeffWriter {
    /// A writer with [`NeffHeader::default`] and MD5/gzip packaging.
    pub fn new() -> Self {
        NeffWriter { header: NeffHeader::default(), hash: HashKind::Md5, format: None, members: Members::new() }
    }

    /// A writer that reproduces `neff`'s header fields and members, keeping
    /// its digest kind (MD5 if `pkg_version` is unknown) and payload format.
    pub fn from_neff(neff: &Neff) -> Self {
        NeffWriter {
            header: neff.header.clone(),
            hash: neff.hash_kind().unwrap_or(HashKind::Md5),
            format: Some(neff.payload_format),
            members: neff.members.clone(),
        }
    }

    /// The header template (`pkg_version`, `data_size`, `hash` are
    /// recomputed when writing).
    pub fn header(&self) -> &NeffHeader {
        &self.header
    }

    /// Mutable access to every header field.
    pub fn header_mut(&mut self) -> &mut NeffHeader {
        &mut self.header
    }

    /// Replaces the header template.
    pub fn set_header(&mut self, header: NeffHeader) -> &mut Self {
        self.header = header;
        self
    }

    /// Sets the model name (at most 255 bytes).
    pub fn set_name(&mut self, name: &str) -> Result<&mut Self> {
        self.header.set_name(name)?;
        Ok(self)
    }

    /// Chooses the digest; this also selects `pkg_version` and, unless
    /// [`NeffWriter::set_payload_format`] was called, the payload format.
    pub fn set_hash_kind(&mut self, hash: HashKind) -> &mut Self {
        self.hash = hash;
        self
    }

    /// Forces gzip or plain tar regardless of the digest kind.
    pub fn set_payload_format(&mut self, format: PayloadFormat) -> &mut Self {
        self.format = Some(format);
        self
    }

    /// Sets the logical NeuronCore size.
    pub fn set_lnc_size(&mut self, lnc_size: u32) -> &mut Self {
        self.header.lnc_size = lnc_size;
        self
    }

    /// Sets the incompatible-feature bits.
    pub fn set_feature_bits(&mut self, bits: u64) -> &mut Self {
        self.header.feature_bits = bits;
        self
    }

    /// Sets the model UUID.
    pub fn set_uuid(&mut self, uuid: [u8; 16]) -> &mut Self {
        self.header.uuid = uuid;
        self
    }

    /// Adds (or replaces) a member; the path must be normalized and relative.
    pub fn add_member(&mut self, path: &str, bytes: impl Into<Vec<u8>>) -> Result<&mut Self> {
        match normalize_member_path(path)? {
            Some(p) if p == path => {
                self.members.insert(p, bytes.into());
                Ok(self)
            }
            _ => Err(NeffError::UnsafePath {
                path: path.to_string(),
                reason: "not a normalized relative file path",
            }),
        }
    }

    /// Adds a member holding `value` as pretty-printed JSON.
    pub fn add_json<T: Serialize>(&mut self, path: &str, value: &T) -> Result<&mut Self> {
        let bytes = serde_json::to_vec_pretty(value).map_err(|e| NeffError::json(path, e))?;
        self.add_member(path, bytes)
    }

    /// The members collected so far.
    pub fn members(&self) -> &Members {
        &self.members
    }

    /// Writes the NEFF bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let format = self.format.unwrap_or(default_format(self.hash));
        pack_members(&self.header, &self.members, self.hash, format)
    }
}

impl Neff {
    /// Re-packs this NEFF with digest `hash` (and that digest's usual
    /// payload format); members and header fields are kept.
    pub fn to_bytes(&self, hash: HashKind) -> Result<Vec<u8>> {
        pack_members(&self.header, &self.members, hash, default_format(hash))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_member_refuses_unsafe_or_unnormalized_paths() {
        let mut w = NeffWriter::new();
        for bad in ["../x", "/abs", "./a", "a//b", ""] {
            assert!(matches!(w.add_member(bad, vec![]), Err(NeffError::UnsafePath { .. })), "{bad:?}");
        }
        w.add_member("sg00/def.json", b"{}".to_vec()).unwrap();
        assert_eq!(w.members().len(), 1);
    }

    #[test]
    fn computed_fields_are_filled_in() {
        let mut w = NeffWriter::new();
        w.add_member("a.bin", vec![1, 2, 3]).unwrap();
        w.header_mut().data_size = 999;
        for (kind, pkg) in [(HashKind::Md5, 2), (HashKind::Sha256, 1)] {
            let b = w.set_hash_kind(kind).to_bytes().unwrap();
            let h = NeffHeader::parse(&b).unwrap();
            assert_eq!(h.pkg_version, pkg);
            assert_eq!(h.header_size, 1024);
            assert_eq!(h.data_size as usize, b.len() - HEADER_SIZE);
            kind.verify(&h.hash, &b[HEADER_SIZE..]).unwrap();
        }
    }

    #[test]
    fn payload_format_can_be_forced() {
        let mut w = NeffWriter::new();
        w.add_member("a.bin", vec![0; 10]).unwrap();
        w.set_hash_kind(HashKind::Md5).set_payload_format(PayloadFormat::PlainTar);
        let b = w.to_bytes().unwrap();
        assert_eq!(PayloadFormat::detect(&b[HEADER_SIZE..]), PayloadFormat::PlainTar);
    }
}
