//! Engine instruction streams as 64-byte records.

use super::ProgramError;
use nrt_hal::EngineId;
use nrt_isa::record::{RECORD_SIZE, RecordBytes};

/// One engine's instruction stream from the NEFF (before lowering).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineStream {
    /// The engine that runs it.
    pub engine: EngineId,
    /// Its records in order.
    pub records: Vec<RecordBytes>,
    /// The compiler's name of each record, from the NEFF's debug info
    /// (empty when the NEFF has none), for messages, disassembly and traces.
    pub names: Vec<Option<String>>,
}

impl EngineStream {
    /// Splits an engine binary into records; its length must be a
    /// multiple of 64.
    pub fn decode(subgraph: &str, engine: EngineId, bytes: &[u8]) -> Result<EngineStream, ProgramError> {
        if !bytes.len().is_multiple_of(RECORD_SIZE) {
            return Err(ProgramError::BadStream { subgraph: subgraph.to_string(), engine: engine.name(), len: bytes.len() });
        }
        let records = bytes
            .chunks_exact(RECORD_SIZE)
            .map(|c| {
                let mut r = [0u8; RECORD_SIZE];
                r.copy_from_slice(c);
                r
            })
            .collect();
        Ok(EngineStream { engine, records, names: Vec::new() })
    }

    /// The compiler's name of record `index`, if the debug info gives one.
    pub fn name(&self, index: usize) -> Option<&str> {
        self.names.get(index).and_then(|n| n.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any byte string either splits into whole records that concatenate
        /// back to it, or is refused for its length.
        #[test]
        fn decode_round_trips_or_refuses(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            match EngineStream::decode("sg00", EngineId::Sp, &bytes) {
                Ok(s) => prop_assert_eq!(s.records.concat(), bytes),
                Err(ProgramError::BadStream { len, .. }) => prop_assert!(len % 64 != 0),
                Err(e) => prop_assert!(false, "unexpected {e}"),
            }
        }
    }
}
