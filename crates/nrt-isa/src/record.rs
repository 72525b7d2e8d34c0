//! The 64-byte instruction record every engine stream is made of.
//!
//! A stream is a flat array of records with a fixed stride of 0x40 bytes and
//! no length prefix. Every record starts with the same 4-byte header
//! (opcode, `inst_word_len` = 0x10, debug_cmd, debug_hint) followed by the
//! 8-byte events block at +4 that gates the instruction on a semaphore or
//! event (wait) and signals one when it is read or completes (update).

mod events;
mod fields;

pub use events::{Events, EventsExtended, UpdateMode, WaitMode};
pub use fields::{
    read_u8, read_u16, read_u32, read_u64, write_u8, write_u16, write_u32, write_u64,
};

use thiserror::Error;

/// Size of one record and the stride between records in a stream.
pub const RECORD_SIZE: usize = 0x40;

/// The `inst_word_len` every record carries: 16 dwords = 64 bytes.
pub const INST_WORD_LEN: u8 = 0x10;

/// Byte offset of the events block inside a record.
pub const EVENTS_OFFSET: usize = 4;

/// Byte offset of EVENT_SEMAPHORE's extended events block (a second wait
/// and update, [`EventsExtended`]).
pub const EXTENDED_EVENTS_OFFSET: usize = 0x20;

/// Offset of the first byte after the common header and events block, where
/// per-opcode fields start.
pub const PAYLOAD_OFFSET: usize = 0x0C;

/// One 64-byte record as it sits in a stream.
pub type RecordBytes = [u8; RECORD_SIZE];

/// `debug_cmd` values of the record header; the sequencer uses them to emit
/// trace notifications around an instruction.
pub mod debug_cmd {
    /// No tracing.
    pub const NONE: u8 = 0;
    /// Emit a notification.
    pub const NOTIFY: u8 = 1;
    /// Emit a START trace record.
    pub const START: u8 = 3;
    /// Emit an END trace record.
    pub const END: u8 = 5;
    /// Emit both START and END trace records.
    pub const START_END: u8 = 7;
    /// Insert fields into the trace record.
    pub const INS_FIELD: u8 = 9;
}

/// The 4-byte header at the start of every record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Opcode byte (+0).
    pub opcode: u8,
    /// Record length in dwords (+1); 0x10 in every record we know of.
    pub inst_word_len: u8,
    /// Trace command (+2), see [`debug_cmd`].
    pub debug_cmd: u8,
    /// Free-form hint carried into notifications (+3).
    pub debug_hint: u8,
}

impl Header {
    /// Reads the header of a record.
    pub fn read(rec: &RecordBytes) -> Header {
        Header {
            opcode: rec[0],
            inst_word_len: rec[1],
            debug_cmd: rec[2],
            debug_hint: rec[3],
        }
    }

    /// Writes the header into the first four bytes of a record.
    pub fn write(&self, rec: &mut RecordBytes) {
        rec[0] = self.opcode;
        rec[1] = self.inst_word_len;
        rec[2] = self.debug_cmd;
        rec[3] = self.debug_hint;
    }
}

/// Why a byte slice is not a stream of records.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamError {
    /// The length is not a whole number of 64-byte records.
    #[error(
        "instruction stream is {len} bytes, expected a multiple of 64 (trailing {trailing} bytes)"
    )]
    Misaligned {
        /// Length of the slice in bytes.
        len: usize,
        /// Bytes past the last whole record.
        trailing: usize,
    },
}

/// A borrowed engine stream: `n * 64` bytes, viewed record by record.
#[derive(Debug, Clone, Copy)]
pub struct RecordStream<'a> {
    bytes: &'a [u8],
}

impl<'a> RecordStream<'a> {
    /// Wraps a byte slice, refusing lengths that are not a multiple of 64.
    pub fn new(bytes: &'a [u8]) -> Result<Self, StreamError> {
        let trailing = bytes.len() % RECORD_SIZE;
        if trailing != 0 {
            return Err(StreamError::Misaligned {
                len: bytes.len(),
                trailing,
            });
        }
        Ok(RecordStream { bytes })
    }

    /// Number of records in the stream.
    pub fn len(&self) -> usize {
        self.bytes.len() / RECORD_SIZE
    }

    /// Whether the stream holds no record.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The record at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&'a RecordBytes> {
        let start = index.checked_mul(RECORD_SIZE)?;
        self.bytes.get(start..start + RECORD_SIZE)?.try_into().ok()
    }

    /// Iterates over the records in stream order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a RecordBytes> + 'a {
        self.bytes
            .chunks_exact(RECORD_SIZE)
            .map(|c| c.try_into().expect("chunks_exact yields 64 bytes"))
    }

    /// The underlying bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_rejects_partial_records() {
        let err = RecordStream::new(&[0u8; 65]).unwrap_err();
        assert_eq!(
            err,
            StreamError::Misaligned {
                len: 65,
                trailing: 1
            }
        );
    }

    #[test]
    fn stream_iterates_records_in_order() {
        let mut bytes = vec![0u8; 3 * RECORD_SIZE];
        for i in 0..3 {
            bytes[i * RECORD_SIZE] = i as u8 + 1;
        }
        let s = RecordStream::new(&bytes).unwrap();
        assert_eq!(s.len(), 3);
        let ops: Vec<u8> = s.iter().map(|r| r[0]).collect();
        assert_eq!(ops, vec![1, 2, 3]);
        assert_eq!(s.get(2).unwrap()[0], 3);
        assert!(s.get(3).is_none());
    }

    #[test]
    fn header_round_trips() {
        let mut rec = [0u8; RECORD_SIZE];
        let h = Header {
            opcode: 0xA9,
            inst_word_len: INST_WORD_LEN,
            debug_cmd: 3,
            debug_hint: 2,
        };
        h.write(&mut rec);
        assert_eq!(&rec[..4], &[0xA9, 0x10, 3, 2]);
        assert_eq!(Header::read(&rec), h);
    }
}
