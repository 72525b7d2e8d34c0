//! Library-set rows: libnrt's per-core resolver table (280-byte
//! `LIBRARY_TABLE_ENTRY` rows, `seed-siblings` §8.1) that maps an
//! EXTENDED_INST (opcode, spec) to a staged library and kernel name.

use thiserror::Error;

/// Bytes of one row.
pub const LIBSET_ROW_BYTES: usize = 280;
/// Rows a library set may hold.
pub const MAX_LIBSET_ROWS: u32 = 97;
/// Bytes of the function-name field.
pub const FUNC_NAME_BYTES: usize = 256;

/// Why a row is unusable.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum LibSetError {
    /// Fewer than 280 bytes.
    #[error("library-set row needs 280 bytes, got {0}")]
    Truncated(usize),
    /// cpu_id not 0.
    #[error("library-set row: cpu_id {0}, expected 0")]
    CpuId(u8),
    /// total_cpus not 0, 1 or 8.
    #[error("library-set row: total_cpus {0}, expected 1 or 8 (0 reads as 1)")]
    TotalCpus(u32),
    /// func_name without a NUL or not UTF-8.
    #[error("library-set row: func_name is not a NUL-terminated UTF-8 string")]
    Name,
    /// A name longer than the field.
    #[error("function name of {0} bytes does not fit the 255-byte field")]
    NameTooLong(usize),
}

/// One resolver row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LibSetRow {
    /// Row in use.
    pub valid: bool,
    /// Opcode column (0xF0).
    pub opcode: u8,
    /// Sub-opcode column (the EXTENDED_INST spec).
    pub sub_opcode: u8,
    /// Cores the library runs on (1 or 8; 0, which NEFFs may carry, reads
    /// as 1: see [`LibSetRow::cores`]).
    pub total_cpus: u32,
    /// Library flags (& 7).
    pub flags: u32,
    /// Device address of the staged library file.
    pub library_addr: u64,
    /// Kernel name; empty = use the library's own table.
    pub func_name: String,
}

impl LibSetRow {
    /// Cores an op of this row runs on: `total_cpus`, with 0 read as 1.
    pub fn cores(&self) -> u32 {
        self.total_cpus.max(1)
    }

    /// The 280 row bytes (refuses names of 256 bytes or more).
    pub fn encode(&self) -> Result<[u8; LIBSET_ROW_BYTES], LibSetError> {
        if self.func_name.len() >= FUNC_NAME_BYTES {
            return Err(LibSetError::NameTooLong(self.func_name.len()));
        }
        let mut b = [0u8; LIBSET_ROW_BYTES];
        b[0] = u8::from(self.valid);
        b[1] = self.opcode;
        b[2] = self.sub_opcode;
        b[4..8].copy_from_slice(&self.total_cpus.to_le_bytes());
        b[0x0C..0x10].copy_from_slice(&(self.flags & 7).to_le_bytes());
        b[0x10..0x18].copy_from_slice(&self.library_addr.to_le_bytes());
        b[0x18..0x18 + self.func_name.len()].copy_from_slice(self.func_name.as_bytes());
        Ok(b)
    }

    /// Decodes a row; validity of cpu_id / total_cpus is checked only for
    /// valid rows (an invalid row is skipped by the walk).
    pub fn decode(b: &[u8]) -> Result<LibSetRow, LibSetError> {
        if b.len() < LIBSET_ROW_BYTES {
            return Err(LibSetError::Truncated(b.len()));
        }
        let valid = b[0] == 1;
        let total_cpus = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        if valid {
            if b[3] != 0 {
                return Err(LibSetError::CpuId(b[3]));
            }
            if !matches!(total_cpus, 0 | 1 | 8) {
                return Err(LibSetError::TotalCpus(total_cpus));
            }
        }
        let name = &b[0x18..0x18 + FUNC_NAME_BYTES];
        let end = name.iter().position(|&c| c == 0).ok_or(LibSetError::Name)?;
        let func_name = std::str::from_utf8(&name[..end]).map_err(|_| LibSetError::Name)?.to_string();
        Ok(LibSetRow {
            valid,
            opcode: b[1],
            sub_opcode: b[2],
            total_cpus,
            flags: u32::from_le_bytes([b[0x0C], b[0x0D], b[0x0E], b[0x0F]]),
            library_addr: u64::from_le_bytes(b[0x10..0x18].try_into().expect("8 bytes")),
            func_name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn row_layout_is_byte_exact() {
        let r = LibSetRow { valid: true, opcode: 0xF0, sub_opcode: 3, total_cpus: 8, flags: 5, library_addr: 0x4000_0000_1000, func_name: "relu".into() };
        let b = r.encode().unwrap();
        assert_eq!(&b[..8], &[1, 0xF0, 3, 0, 8, 0, 0, 0]);
        assert_eq!(b[0x0C], 5);
        assert_eq!(u64::from_le_bytes(b[0x10..0x18].try_into().unwrap()), 0x4000_0000_1000);
        assert_eq!(&b[0x18..0x1D], b"relu\0");
        assert_eq!(LibSetRow::decode(&b).unwrap(), r);
        let mut bad = b;
        bad[4] = 2;
        assert_eq!(LibSetRow::decode(&bad), Err(LibSetError::TotalCpus(2)));
        bad[4] = 0;
        assert_eq!(LibSetRow::decode(&bad).unwrap().cores(), 1);
        bad[4] = 8;
        bad[3] = 1;
        assert_eq!(LibSetRow::decode(&bad), Err(LibSetError::CpuId(1)));
        let long = LibSetRow { func_name: "x".repeat(256), ..r };
        assert_eq!(long.encode(), Err(LibSetError::NameTooLong(256)));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_rows_never_panic(b in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = LibSetRow::decode(&b);
        }
    }
}
