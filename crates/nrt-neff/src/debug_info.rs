//! The compiler's debug-info members, read without a schema: a small
//! protobuf wire-format reader (varint, 64-bit, length-delimited, 32-bit
//! fields; packed varints) and the two files that name instructions.
//!
//! `sgNN/debug_info_asm_<Engine>.dbg` has one entry (top-level field 3) per
//! 64-byte record of the engine's binary, in order, each holding the packed
//! ids (field 3) of the backend instructions it came from.
//! `sgNN/debug_info_backend_<Engine>.dbg` (and `_DMA`) map a backend id
//! (entry field 1, 0 when absent) to its name (field 2, `I-87-0`,
//! `Block1-final-DMA-NOP`, ...). Together they give every record the
//! compiler's instruction name, for error messages, disassembly and traces.

use crate::{EngineKind, Neff, Subgraph};
use std::collections::HashMap;
use thiserror::Error;

/// Why a debug-info member does not decode.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DebugInfoError {
    /// The bytes end inside a field.
    #[error("protobuf message ends inside a field at byte {at} (needed {needed} more bytes)")]
    Truncated {
        /// Offset where the field started.
        at: usize,
        /// Bytes missing.
        needed: usize,
    },
    /// A varint longer than 10 bytes.
    #[error("varint at byte {at} is longer than 10 bytes")]
    VarintTooLong {
        /// Offset of the varint.
        at: usize,
    },
    /// A wire type protobuf does not define (or the deprecated groups).
    #[error("field {field} at byte {at} has wire type {wire_type}; expected 0 (varint), 1 (64-bit), 2 (length-delimited) or 5 (32-bit)")]
    BadWireType {
        /// Field number.
        field: u64,
        /// Wire type.
        wire_type: u8,
        /// Offset of the key.
        at: usize,
    },
    /// A field whose wire type is not the one its meaning needs.
    #[error("{what}: expected {expected}")]
    Unexpected {
        /// The member and field.
        what: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// One field value as it appears on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: a string, bytes, a nested message or a packed list.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// One decoded field: its number and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireField<'a> {
    /// Field number (tag).
    pub number: u64,
    /// Value.
    pub value: WireValue<'a>,
}

/// Reads a varint at `*pos`, advancing it.
fn varint(bytes: &[u8], pos: &mut usize) -> Result<u64, DebugInfoError> {
    let start = *pos;
    let mut v = 0u64;
    for i in 0..10 {
        let b = *bytes.get(*pos).ok_or(DebugInfoError::Truncated { at: start, needed: 1 })?;
        *pos += 1;
        v |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DebugInfoError::VarintTooLong { at: start })
}

fn take<'a>(bytes: &'a [u8], pos: &mut usize, n: usize, at: usize) -> Result<&'a [u8], DebugInfoError> {
    let end = pos.checked_add(n).filter(|e| *e <= bytes.len()).ok_or(DebugInfoError::Truncated { at, needed: n.saturating_sub(bytes.len() - *pos) })?;
    let s = &bytes[*pos..end];
    *pos = end;
    Ok(s)
}

/// Decodes every top-level field of a protobuf message, in wire order.
pub fn parse_message(bytes: &[u8]) -> Result<Vec<WireField<'_>>, DebugInfoError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let at = pos;
        let key = varint(bytes, &mut pos)?;
        let (number, wire_type) = (key >> 3, (key & 7) as u8);
        let value = match wire_type {
            0 => WireValue::Varint(varint(bytes, &mut pos)?),
            1 => WireValue::Fixed64(u64::from_le_bytes(take(bytes, &mut pos, 8, at)?.try_into().expect("8 bytes"))),
            2 => {
                let len = varint(bytes, &mut pos)?;
                let len = usize::try_from(len).map_err(|_| DebugInfoError::Truncated { at, needed: usize::MAX })?;
                WireValue::Bytes(take(bytes, &mut pos, len, at)?)
            }
            5 => WireValue::Fixed32(u32::from_le_bytes(take(bytes, &mut pos, 4, at)?.try_into().expect("4 bytes"))),
            _ => return Err(DebugInfoError::BadWireType { field: number, wire_type, at }),
        };
        out.push(WireField { number, value });
    }
    Ok(out)
}

/// Decodes a packed repeated varint field.
pub fn packed_varints(bytes: &[u8]) -> Result<Vec<u64>, DebugInfoError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        out.push(varint(bytes, &mut pos)?);
    }
    Ok(out)
}

/// The values of repeated varint field `number` of a message, whether
/// packed or not.
fn varints_of(fields: &[WireField<'_>], number: u64, what: &str) -> Result<Vec<u64>, DebugInfoError> {
    let mut out = Vec::new();
    for f in fields.iter().filter(|f| f.number == number) {
        match f.value {
            WireValue::Varint(v) => out.push(v),
            WireValue::Bytes(b) => out.extend(packed_varints(b)?),
            _ => return Err(DebugInfoError::Unexpected { what: format!("{what} field {number}"), expected: "varints (packed or not)" }),
        }
    }
    Ok(out)
}

/// The backend-instruction ids of each record, from an asm debug file.
pub fn asm_record_ids(bytes: &[u8]) -> Result<Vec<Vec<u64>>, DebugInfoError> {
    parse_message(bytes)?
        .iter()
        .filter(|f| f.number == 3)
        .map(|f| match f.value {
            WireValue::Bytes(entry) => varints_of(&parse_message(entry)?, 3, "asm entry"),
            _ => Err(DebugInfoError::Unexpected { what: "asm debug field 3".to_string(), expected: "a length-delimited entry" }),
        })
        .collect()
}

/// The (backend id, name) pairs of a backend debug file.
pub fn backend_names(bytes: &[u8]) -> Result<Vec<(u64, String)>, DebugInfoError> {
    let mut out = Vec::new();
    for f in parse_message(bytes)?.iter().filter(|f| f.number == 3) {
        let WireValue::Bytes(entry) = f.value else {
            return Err(DebugInfoError::Unexpected { what: "backend debug field 3".to_string(), expected: "a length-delimited entry" });
        };
        let fields = parse_message(entry)?;
        let id = varints_of(&fields, 1, "backend entry")?.first().copied().unwrap_or(0);
        let name = fields.iter().find(|f| f.number == 2).and_then(|f| match f.value {
            WireValue::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        });
        if let Some(name) = name {
            out.push((id, name));
        }
    }
    Ok(out)
}

/// The compiler's name of each record of `engine`'s stream in `subgraph`
/// (`None` where the record has no backend origin, e.g. the prologue
/// records). Empty when the NEFF carries no asm debug file for it. With
/// several backend ids, the first one that has a name wins.
pub fn instruction_names(neff: &Neff, subgraph: &Subgraph, engine: EngineKind) -> Result<Vec<Option<String>>, DebugInfoError> {
    let stem = engine.file_stem();
    let Some(asm) = neff.member(&subgraph.member_path(&format!("debug_info_asm_{stem}.dbg"))) else {
        return Ok(Vec::new());
    };
    let ids = asm_record_ids(asm)?;
    // The engine's own backend file first, then the others (the DMA file
    // names the DMA instructions).
    let mut names: HashMap<u64, String> = HashMap::new();
    let prefix = subgraph.member_path("debug_info_backend_");
    let own = subgraph.member_path(&format!("debug_info_backend_{stem}.dbg"));
    let mut files: Vec<(&String, &Vec<u8>)> = neff.members.iter().filter(|(p, _)| p.starts_with(&prefix) && p.ends_with(".dbg")).collect();
    files.sort_by_key(|(p, _)| **p != own);
    for (_, bytes) in files {
        for (id, name) in backend_names(bytes)? {
            names.entry(id).or_insert(name);
        }
    }
    Ok(ids.iter().map(|rec| rec.iter().find_map(|id| names.get(id).cloned())).collect())
}

impl Neff {
    /// The compiler's instruction names of `engine`'s stream in subgraph
    /// `sg` (by name), one per record; see [`instruction_names`].
    pub fn instruction_names(&self, sg: &str, engine: EngineKind) -> Result<Vec<Option<String>>, DebugInfoError> {
        match self.subgraphs.iter().find(|s| s.name == sg) {
            Some(s) => instruction_names(self, s, engine),
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7F) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn put_bytes(out: &mut Vec<u8>, number: u64, b: &[u8]) {
        put_varint(out, number << 3 | 2);
        put_varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    #[test]
    fn asm_and_backend_files_name_records() {
        let mut asm = Vec::new();
        put_bytes(&mut asm, 1, b"asm");
        put_bytes(&mut asm, 3, &[]);
        let mut packed = Vec::new();
        put_varint(&mut packed, 300);
        put_varint(&mut packed, 7);
        let mut entry = Vec::new();
        put_bytes(&mut entry, 3, &packed);
        put_bytes(&mut asm, 3, &entry);
        assert_eq!(asm_record_ids(&asm).unwrap(), vec![vec![], vec![300, 7]]);
        let mut be = Vec::new();
        let mut e1 = Vec::new();
        put_varint(&mut e1, 1 << 3);
        put_varint(&mut e1, 300);
        put_bytes(&mut e1, 2, b"I-87-0");
        put_bytes(&mut be, 3, &e1);
        let mut e0 = Vec::new();
        put_bytes(&mut e0, 2, b"first");
        put_bytes(&mut be, 3, &e0);
        assert_eq!(backend_names(&be).unwrap(), vec![(300, "I-87-0".to_string()), (0, "first".to_string())]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(parse_message(&[0x0A, 5, 1]), Err(DebugInfoError::Truncated { .. })));
        assert!(matches!(parse_message(&[0x0B]), Err(DebugInfoError::BadWireType { wire_type: 3, .. })));
        assert!(matches!(parse_message(&[0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), Err(DebugInfoError::VarintTooLong { .. })));
        assert!(matches!(asm_record_ids(&[0x18, 1]), Err(DebugInfoError::Unexpected { .. })));
    }

    #[test]
    fn the_real_sample_names_its_records() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");
        let Ok(bytes) = std::fs::read(path) else {
            nrt_test_support::skip!("{path} is absent (the compiler's sample lives beside the checkout)");
        };
        let neff = Neff::parse(&bytes).unwrap();
        let pool = neff.instruction_names("sg00", EngineKind::Pool).unwrap();
        let want = [None, None, Some("I-76-0"), Some("I-71-0"), Some("I-71-1"), Some("I-74-0"), Some("Block1-final-DMA-NOP")];
        assert_eq!(pool, want.map(|n| n.map(str::to_string)));
        let pe = neff.instruction_names("sg01", EngineKind::Pe).unwrap();
        assert_eq!((pe.len(), pe[2].as_deref(), pe[11].as_deref()), (12, Some("I-87-0-wait-0"), Some("I-72-1")));
        assert_eq!(neff.instruction_names("sg00", EngineKind::Sp).unwrap()[2].as_deref(), Some("I-86-0"));
        assert!(neff.instruction_names("sg07", EngineKind::Sp).unwrap().is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any bytes decode or fail cleanly; encoded fields decode back.
        #[test]
        fn wire_reader_never_panics_and_round_trips(junk in prop::collection::vec(any::<u8>(), 0..200), vals in prop::collection::vec((1u64..1000, any::<u64>(), prop::collection::vec(any::<u8>(), 0..20)), 0..8)) {
            let _ = parse_message(&junk);
            let _ = packed_varints(&junk);
            let _ = asm_record_ids(&junk);
            let _ = backend_names(&junk);
            let mut msg = Vec::new();
            for (n, v, b) in &vals {
                put_varint(&mut msg, n << 3);
                put_varint(&mut msg, *v);
                put_bytes(&mut msg, *n, b);
            }
            let fields = parse_message(&msg).unwrap();
            prop_assert_eq!(fields.len(), vals.len() * 2);
            for (pair, (n, v, b)) in fields.chunks(2).zip(&vals) {
                prop_assert_eq!(pair[0], WireField { number: *n, value: WireValue::Varint(*v) });
                prop_assert_eq!(pair[1], WireField { number: *n, value: WireValue::Bytes(b) });
            }
        }
    }
}
