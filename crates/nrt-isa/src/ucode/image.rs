//! The GPSIMD library image: a 32-byte UCPL header, a WebAssembly module as
//! the code segment, and a data segment holding the `kernel_info_table`
//! (`docs/gpsimd.md` §2). The IRAM image is the header plus code; the DRAM
//! image is the data segment.

use thiserror::Error;

/// Bytes of the UCPL header.
pub const UCPL_HEADER_BYTES: usize = 0x20;
/// The header magic: "UCPL " and three NUL bytes.
pub const UCPL_MAGIC: [u8; 8] = *b"UCPL \0\0\0";
/// Bytes of one `kernel_info_table` row.
pub const KERNEL_ROW_BYTES: usize = 8;
/// The EXTENDED_INST opcode byte custom kernels are registered under.
pub const EXTENDED_INST_OPCODE: u8 = 0xF0;

/// Why an image is not a GPSIMD library.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ImageError {
    /// Fewer bytes than the header or a segment needs.
    #[error("library image truncated: {what} needs bytes up to {needed}, the image has {have}")]
    Truncated {
        /// Which part did not fit.
        what: &'static str,
        /// End offset needed.
        needed: u64,
        /// Bytes available.
        have: u64,
    },
    /// The magic is not "UCPL ".
    #[error("not a UCPL image: magic {found:02x?}, expected \"UCPL \" + 3 NUL")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// `data_seg_off` is not `0x20 + align32(code_seg_len)`.
    #[error("data_seg_off {found:#x} should be {expected:#x} (0x20 + code length rounded up to 32)")]
    BadDataOffset {
        /// Value in the header.
        found: u32,
        /// Value the code length implies.
        expected: u32,
    },
    /// init_fn / fini_fn set (reserved for wasm images).
    #[error("init_fn/fini_fn must be 0 in a wasm image (found {init:#x}/{fini:#x})")]
    ReservedHooks {
        /// init_fn.
        init: u32,
        /// fini_fn.
        fini: u32,
    },
    /// The table does not fill the data segment with whole rows.
    #[error("kernel_info_table from {start:#x} to the data end {len:#x} is not whole 8-byte rows")]
    BadTable {
        /// start_sym.
        start: u32,
        /// data_seg_len.
        len: u32,
    },
    /// The code segment is not a WebAssembly module.
    #[error("code segment is not a WebAssembly module (no \\0asm version 1 preamble)")]
    NotWasm,
}

/// The 32-byte UCPL header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UcplHeader {
    /// Exact byte length of the wasm module.
    pub code_seg_len: u32,
    /// Offset of the data segment in the library file (and the IRAM
    /// image's length).
    pub data_seg_off: u32,
    /// Bytes of the data segment (the DRAM image).
    pub data_seg_len: u32,
    /// Reserved (0).
    pub init_fn: u32,
    /// Reserved (0).
    pub fini_fn: u32,
    /// Offset of `kernel_info_table` in the data segment.
    pub start_sym: u32,
}

const fn align32(n: u32) -> u32 {
    n.div_ceil(32) * 32
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

impl UcplHeader {
    /// The header of a library with a `code_len`-byte module and a
    /// `data_len`-byte data segment whose table starts at `start_sym`.
    pub fn new(code_len: u32, data_len: u32, start_sym: u32) -> UcplHeader {
        UcplHeader {
            code_seg_len: code_len,
            data_seg_off: UCPL_HEADER_BYTES as u32 + align32(code_len),
            data_seg_len: data_len,
            init_fn: 0,
            fini_fn: 0,
            start_sym,
        }
    }

    /// The 32 header bytes.
    pub fn encode(&self) -> [u8; UCPL_HEADER_BYTES] {
        let mut b = [0u8; UCPL_HEADER_BYTES];
        b[..8].copy_from_slice(&UCPL_MAGIC);
        for (i, v) in [self.code_seg_len, self.data_seg_off, self.data_seg_len, self.init_fn, self.fini_fn, self.start_sym]
            .into_iter()
            .enumerate()
        {
            b[8 + 4 * i..12 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    /// Parses and checks a header (magic, data offset, reserved hooks,
    /// whole table rows).
    pub fn decode(bytes: &[u8]) -> Result<UcplHeader, ImageError> {
        if bytes.len() < UCPL_HEADER_BYTES {
            return Err(ImageError::Truncated { what: "UCPL header", needed: UCPL_HEADER_BYTES as u64, have: bytes.len() as u64 });
        }
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&bytes[..8]);
        if magic != UCPL_MAGIC {
            return Err(ImageError::BadMagic { found: magic });
        }
        let h = UcplHeader {
            code_seg_len: u32_at(bytes, 8),
            data_seg_off: u32_at(bytes, 12),
            data_seg_len: u32_at(bytes, 16),
            init_fn: u32_at(bytes, 20),
            fini_fn: u32_at(bytes, 24),
            start_sym: u32_at(bytes, 28),
        };
        let expected = (UCPL_HEADER_BYTES as u64 + u64::from(h.code_seg_len).div_ceil(32) * 32).min(u64::from(u32::MAX)) as u32;
        if h.data_seg_off != expected {
            return Err(ImageError::BadDataOffset { found: h.data_seg_off, expected });
        }
        if h.init_fn != 0 || h.fini_fn != 0 {
            return Err(ImageError::ReservedHooks { init: h.init_fn, fini: h.fini_fn });
        }
        if h.start_sym > h.data_seg_len || !(h.data_seg_len - h.start_sym).is_multiple_of(KERNEL_ROW_BYTES as u32) {
            return Err(ImageError::BadTable { start: h.start_sym, len: h.data_seg_len });
        }
        Ok(h)
    }

    /// Bytes of the IRAM image (header and code, padded to 32).
    pub fn iram_len(&self) -> u64 {
        u64::from(self.data_seg_off)
    }

    /// Bytes of the whole library file.
    pub fn file_len(&self) -> u64 {
        u64::from(self.data_seg_off) + u64::from(self.data_seg_len)
    }
}

/// One `kernel_info_table` row: `{0, 0, spec, opcode, funcVA}`, where
/// funcVA is the kernel's index in the module's `get_func_*` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelRow {
    /// Spec column (the EXTENDED_INST record's spec byte).
    pub spec: u8,
    /// Opcode column (0xF0 for EXTENDED_INST).
    pub opcode: u8,
    /// Kernel index in the module's kernel list.
    pub func: u32,
}

impl KernelRow {
    /// The 8 row bytes.
    pub fn encode(&self) -> [u8; KERNEL_ROW_BYTES] {
        let f = self.func.to_le_bytes();
        [0, 0, self.spec, self.opcode, f[0], f[1], f[2], f[3]]
    }

    /// Decodes a row (the two leading bytes are ignored, as the dispatcher does).
    pub fn decode(b: &[u8; KERNEL_ROW_BYTES]) -> KernelRow {
        KernelRow { spec: b[2], opcode: b[3], func: u32::from_le_bytes([b[4], b[5], b[6], b[7]]) }
    }
}

/// A parsed library: header, wasm module bytes and kernel table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryImage {
    /// The header.
    pub header: UcplHeader,
    /// The WebAssembly module.
    pub wasm: Vec<u8>,
    /// The kernel table, in walk order.
    pub table: Vec<KernelRow>,
}

impl LibraryImage {
    /// A library of `wasm` with `table`.
    pub fn new(wasm: Vec<u8>, table: Vec<KernelRow>) -> LibraryImage {
        let header = UcplHeader::new(wasm.len() as u32, (table.len() * KERNEL_ROW_BYTES) as u32, 0);
        LibraryImage { header, wasm, table }
    }

    /// A library whose kernel `i` is registered as `{spec i, 0xF0, i}`.
    pub fn with_sequential_table(wasm: Vec<u8>, kernels: u32) -> LibraryImage {
        let table = (0..kernels).map(|i| KernelRow { spec: i as u8, opcode: EXTENDED_INST_OPCODE, func: i }).collect();
        LibraryImage::new(wasm, table)
    }

    /// The IRAM image: header, module, zero padding to `data_seg_off`.
    pub fn iram(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.header.iram_len() as usize);
        v.extend_from_slice(&self.header.encode());
        v.extend_from_slice(&self.wasm);
        v.resize(self.header.iram_len() as usize, 0);
        v
    }

    /// The DRAM image: the data segment (reserved bytes, then the table).
    pub fn dram(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.header.start_sym as usize];
        for r in &self.table {
            v.extend_from_slice(&r.encode());
        }
        v
    }

    /// The library file: IRAM image followed by DRAM image.
    pub fn to_file(&self) -> Vec<u8> {
        let mut v = self.iram();
        v.extend_from_slice(&self.dram());
        v
    }

    /// Parses an IRAM image and a DRAM image (installed form).
    pub fn from_parts(iram: &[u8], dram: &[u8]) -> Result<LibraryImage, ImageError> {
        let header = UcplHeader::decode(iram)?;
        let code_end = UCPL_HEADER_BYTES as u64 + u64::from(header.code_seg_len);
        if (iram.len() as u64) < code_end {
            return Err(ImageError::Truncated { what: "code segment", needed: code_end, have: iram.len() as u64 });
        }
        let wasm = &iram[UCPL_HEADER_BYTES..code_end as usize];
        if wasm.len() < 8 || wasm[..8] != [0, b'a', b's', b'm', 1, 0, 0, 0] {
            return Err(ImageError::NotWasm);
        }
        if (dram.len() as u64) < u64::from(header.data_seg_len) {
            return Err(ImageError::Truncated {
                what: "data segment",
                needed: u64::from(header.data_seg_len),
                have: dram.len() as u64,
            });
        }
        let table = dram[header.start_sym as usize..header.data_seg_len as usize]
            .chunks_exact(KERNEL_ROW_BYTES)
            .map(|c| KernelRow::decode(c.try_into().expect("chunks_exact gives 8 bytes")))
            .collect();
        Ok(LibraryImage { header, wasm: wasm.to_vec(), table })
    }

    /// Parses a library file.
    pub fn from_file(file: &[u8]) -> Result<LibraryImage, ImageError> {
        let header = UcplHeader::decode(file)?;
        if (file.len() as u64) < header.file_len() {
            return Err(ImageError::Truncated { what: "library file", needed: header.file_len(), have: file.len() as u64 });
        }
        let split = header.data_seg_off as usize;
        LibraryImage::from_parts(&file[..split], &file[split..])
    }

    /// Walks the table from row 0: the first row with `spec` and `opcode`.
    pub fn lookup(&self, spec: u8, opcode: u8) -> Option<KernelRow> {
        self.table.iter().copied().find(|r| r.spec == spec && r.opcode == opcode)
    }
}

/// The stock Q7 image's module: one kernel, `nrt_nop` (returns 0), at
/// spec 0. Hand-encoded WebAssembly (types, functions, memory, exports,
/// code, data "nrt_nop\0" at address 16).
const STOCK_WASM: [u8; 139] = [
    0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00, // preamble
    0x01, 0x0A, 0x02, 0x60, 0x00, 0x01, 0x7F, 0x60, 0x01, 0x7F, 0x01, 0x7F, // types: ()->i32, (i32)->i32
    0x03, 0x05, 0x04, 0x00, 0x01, 0x01, 0x00, // functions
    0x05, 0x03, 0x01, 0x00, 0x01, // memory: 1 page
    0x07, 0x42, 0x05, // exports
    0x06, b'm', b'e', b'm', b'o', b'r', b'y', 0x02, 0x00,
    0x0C, b'g', b'e', b't', b'_', b'f', b'u', b'n', b'c', b'_', b'c', b'n', b't', 0x00, 0x00,
    0x0D, b'g', b'e', b't', b'_', b'f', b'u', b'n', b'c', b'_', b'n', b'a', b'm', b'e', 0x00, 0x01,
    0x0C, b'g', b'e', b't', b'_', b'f', b'u', b'n', b'c', b'_', b'p', b't', b'r', 0x00, 0x02,
    0x07, b'n', b'r', b't', b'_', b'n', b'o', b'p', 0x00, 0x03,
    0x0A, 0x15, 0x04, // code
    0x04, 0x00, 0x41, 0x01, 0x0B, // get_func_cnt: 1
    0x04, 0x00, 0x41, 0x10, 0x0B, // get_func_name: 16
    0x04, 0x00, 0x41, 0x01, 0x0B, // get_func_ptr: 1
    0x04, 0x00, 0x41, 0x00, 0x0B, // nrt_nop: 0
    0x0B, 0x0E, 0x01, 0x00, 0x41, 0x10, 0x0B, 0x08, b'n', b'r', b't', b'_', b'n', b'o', b'p', 0x00, // data
];

/// The stock library the runtime installs when no custom image is
/// registered: kernel 0 `nrt_nop` at `{spec 0, 0xF0}`.
pub fn stock_library() -> LibraryImage {
    LibraryImage::with_sequential_table(STOCK_WASM.to_vec(), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn stock_library_round_trips_and_has_its_row() {
        let lib = stock_library();
        let file = lib.to_file();
        assert_eq!(&file[..8], b"UCPL \0\0\0");
        assert_eq!(lib.header.data_seg_off, 0x20 + 160);
        assert_eq!(file.len(), 0x20 + 160 + 8);
        assert_eq!(LibraryImage::from_file(&file).unwrap(), lib);
        assert_eq!(LibraryImage::from_parts(&lib.iram(), &lib.dram()).unwrap(), lib);
        assert_eq!(lib.lookup(0, 0xF0), Some(KernelRow { spec: 0, opcode: 0xF0, func: 0 }));
        assert_eq!(lib.lookup(1, 0xF0), None);
        assert_eq!(lib.lookup(0, 0x7E), None);
    }

    #[test]
    fn header_checks_name_the_problem() {
        let mut f = stock_library().to_file();
        assert!(matches!(UcplHeader::decode(&f[..10]), Err(ImageError::Truncated { .. })));
        f[12] ^= 0x20;
        assert!(matches!(UcplHeader::decode(&f), Err(ImageError::BadDataOffset { .. })));
        f[12] ^= 0x20;
        f[20] = 1;
        assert!(matches!(UcplHeader::decode(&f), Err(ImageError::ReservedHooks { .. })));
        f[20] = 0;
        f[28] = 3;
        assert!(matches!(UcplHeader::decode(&f), Err(ImageError::BadTable { .. })));
        f[28] = 0;
        f[0] = b'X';
        assert!(matches!(UcplHeader::decode(&f), Err(ImageError::BadMagic { .. })));
        let lib = stock_library();
        let mut iram = lib.iram();
        iram[0x20] = 1;
        assert_eq!(LibraryImage::from_parts(&iram, &lib.dram()), Err(ImageError::NotWasm));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), magic in any::<bool>()) {
            let mut b = bytes;
            if magic && b.len() >= 8 {
                b[..8].copy_from_slice(&UCPL_MAGIC);
            }
            let _ = LibraryImage::from_file(&b);
        }

        #[test]
        fn built_libraries_round_trip(code in prop::collection::vec(any::<u8>(), 0..100), rows in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u32>()), 0..12)) {
            let mut wasm = vec![0, b'a', b's', b'm', 1, 0, 0, 0];
            wasm.extend(code);
            let table: Vec<KernelRow> = rows.into_iter().map(|(spec, opcode, func)| KernelRow { spec, opcode, func }).collect();
            let lib = LibraryImage::new(wasm, table);
            prop_assert_eq!(lib.header.data_seg_off % 32, 0);
            prop_assert_eq!(LibraryImage::from_file(&lib.to_file()).unwrap(), lib);
        }
    }
}
