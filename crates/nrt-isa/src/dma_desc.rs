//! The 16-byte DMA descriptors the DMA engines walk (public UDMA layout).
//!
//! A plain copy is a pair: a TX (memory -> stream, "M2S") descriptor on the
//! queue's TX ring naming the source, and an RX (stream -> memory, "S2M")
//! descriptor on the RX ring naming the destination, with equal lengths.
//! Both are 16 bytes, little-endian:
//!
//! | bytes | TX (M2S) | RX (S2M) |
//! |---|---|---|
//! | 0..4 | `len_ctrl` ([`LenCtrl`]) | `len_ctrl` |
//! | 4..8 | `meta_ctrl` ([`MetaCtrl`]) | `buf2_ptr_lo` |
//! | 8..16 | `buf_ptr`: source address | `buf1_ptr`: destination address |
//!
//! The bytes do not say which side they are: the ring they sit on does,
//! so decoding takes a [`RingSide`].
//!
//! Submodules:
//! - [`pattern`]: our extension for shaped and computing transfers (cast,
//!   fma, add, min, max, transpose, access patterns up to 4 dims), which
//!   the public descriptor has no room for.
//! - [`ring`]: ring geometry rules and wrap-around index arithmetic.

pub mod pattern;
pub mod ring;

pub use pattern::{
    DmaOp, PATTERN_BLOCK_SIZE, PatternBlock, PatternConstant, PatternDim, PatternError, PatternSide, TransposeSpec,
};
pub use ring::{DescRing, RingCursor, RingError};

/// Size of one descriptor in bytes.
pub const DESC_SIZE: usize = 16;
/// Largest transfer one descriptor can describe (`SDMA_MAX_BD_LENGTH`);
/// encoded as length field 0.
pub const MAX_BD_LENGTH: u32 = 0x1_0000;
/// `meta_ctrl` the driver uses for every plain-copy TX descriptor: first and
/// last block, copy_source_data, ssmae_op = 0b010.
pub const DEFAULT_COPY_META_CTRL: u32 = 0x0108_0003;
/// Marker the driver's own copies write into a host completion slot.
pub const COMPLETION_MARKER: u32 = 0xABCD_EF01;

const LEN_MASK: u32 = 0xFFFF;
const RING_ID_SHIFT: u32 = 24;
const FIRST_BIT: u32 = 1 << 26;
const LAST_BIT: u32 = 1 << 27;
const INT_EN_BIT: u32 = 1 << 28;
const DMB_BIT: u32 = 1 << 30;
/// Ours: marks a descriptor whose buffer is a [`PatternBlock`], not data.
/// Bit 31 is reserved (zero) in the public layout.
pub const PATTERN_BIT: u32 = 1 << 31;
const LEN_CTRL_RESERVED: u32 = !(LEN_MASK | (0x3 << RING_ID_SHIFT) | FIRST_BIT | LAST_BIT | INT_EN_BIT | DMB_BIT | PATTERN_BIT);

/// Which ring a descriptor sits on, and so how its bytes read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RingSide {
    /// Memory -> stream (source side): word 1 is `meta_ctrl`.
    Tx,
    /// Stream -> memory (destination side): word 1 is `buf2_ptr_lo`.
    Rx,
}

/// Why 16 bytes (or a request to build a descriptor) were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DmaDescError {
    /// Fewer or more than 16 bytes were supplied.
    #[error("a DMA descriptor is 16 bytes, got {0}")]
    WrongSize(usize),
    /// A reserved bit of `len_ctrl` is set.
    #[error("len_ctrl {value:#010x} sets reserved bits {bits:#010x} (only 0..16, 24..29, 30, 31 are defined)")]
    ReservedLenCtrl {
        /// Whole field.
        value: u32,
        /// Offending bits.
        bits: u32,
    },
    /// A reserved bit of TX `meta_ctrl` is set.
    #[error("meta_ctrl {value:#010x} sets reserved bits {bits:#010x} (bit 2 and 27..32 are reserved)")]
    ReservedMetaCtrl {
        /// Whole field.
        value: u32,
        /// Offending bits.
        bits: u32,
    },
    /// A length outside 1..=65536 bytes.
    #[error("descriptor length {0} is out of range: expected 1..=65536 bytes")]
    BadLength(u32),
    /// A ring id / phase wider than 2 bits.
    #[error("ring id {0} does not fit the 2-bit ring id field")]
    BadRingId(u8),
}

/// The `len_ctrl` word shared by TX and RX descriptors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LenCtrl {
    /// Transfer length in bytes, 1..=65536 (65536 is stored as 0).
    pub length: u32,
    /// Ring id / phase (2 bits): starts at 1 and increments on every ring
    /// wrap, so the engine can tell fresh descriptors from stale ones.
    pub ring_id: u8,
    /// First descriptor of a packet (TX).
    pub first: bool,
    /// Last descriptor of a packet (TX).
    pub last: bool,
    /// Raise an interrupt on completion.
    pub int_en: bool,
    /// Memory barrier: wait for earlier transfers before this one.
    pub dmb: bool,
    /// Ours ([`PATTERN_BIT`]): `buf_ptr` addresses a [`PatternBlock`].
    pub pattern: bool,
}

impl LenCtrl {
    /// A control word for `length` bytes on ring phase `ring_id`, flags clear.
    pub fn new(length: u32, ring_id: u8) -> Result<Self, DmaDescError> {
        let ctrl = LenCtrl { length, ring_id, first: false, last: false, int_en: false, dmb: false, pattern: false };
        ctrl.to_u32()?;
        Ok(ctrl)
    }

    /// Pack into the 32-bit field, validating length and ring id.
    pub fn to_u32(&self) -> Result<u32, DmaDescError> {
        if self.length == 0 || self.length > MAX_BD_LENGTH {
            return Err(DmaDescError::BadLength(self.length));
        }
        if self.ring_id > 3 {
            return Err(DmaDescError::BadRingId(self.ring_id));
        }
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        Ok((self.length & LEN_MASK)
            | (u32::from(self.ring_id) << RING_ID_SHIFT)
            | flag(self.first, FIRST_BIT)
            | flag(self.last, LAST_BIT)
            | flag(self.int_en, INT_EN_BIT)
            | flag(self.dmb, DMB_BIT)
            | flag(self.pattern, PATTERN_BIT))
    }

    /// Unpack a 32-bit field; reserved bits must be zero.
    pub fn from_u32(value: u32) -> Result<Self, DmaDescError> {
        let reserved = value & LEN_CTRL_RESERVED;
        if reserved != 0 {
            return Err(DmaDescError::ReservedLenCtrl { value, bits: reserved });
        }
        let raw_len = value & LEN_MASK;
        Ok(LenCtrl {
            length: if raw_len == 0 { MAX_BD_LENGTH } else { raw_len },
            ring_id: ((value >> RING_ID_SHIFT) & 0x3) as u8,
            first: value & FIRST_BIT != 0,
            last: value & LAST_BIT != 0,
            int_en: value & INT_EN_BIT != 0,
            dmb: value & DMB_BIT != 0,
            pattern: value & PATTERN_BIT != 0,
        })
    }
}

/// The TX `meta_ctrl` word: packet framing, CRC and data-path options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MetaCtrl {
    /// Bit 0: last block of the packet.
    pub last_block: bool,
    /// Bit 1: first block of the packet.
    pub first_block: bool,
    /// Bits 3..6: CRC initial-value index.
    pub crc_iv_idx: u8,
    /// Bits 6..14: endianness swap controls.
    pub endian_swap: u8,
    /// Bit 14: validate CRC.
    pub validate_crc: bool,
    /// Bit 15: use the stored CRC initial value.
    pub use_stored_crc_iv: bool,
    /// Bit 16: send CRC.
    pub send_crc: bool,
    /// Bit 17: store CRC.
    pub store_crc: bool,
    /// Bit 18: store source CRC.
    pub store_src_crc: bool,
    /// Bit 19: copy the source data through (plain copies set it).
    pub copy_source_data: bool,
    /// Bits 20..23: op type.
    pub op_type: u8,
    /// Bits 23..26: SSMAE op (plain copies use 0b010).
    pub ssmae_op: u8,
    /// Bit 26: write barrier (SDMA "CME" view).
    pub write_barrier: bool,
}

const META_RESERVED: u32 = (1 << 2) | (0x1F << 27);

impl MetaCtrl {
    /// The driver's plain-copy value, [`DEFAULT_COPY_META_CTRL`].
    pub fn plain_copy() -> Self {
        MetaCtrl { last_block: true, first_block: true, copy_source_data: true, ssmae_op: 0b010, ..Default::default() }
    }

    /// Pack into the 32-bit field (over-wide sub-fields are masked).
    pub fn to_u32(&self) -> u32 {
        let b = |on: bool, bit: u32| u32::from(on) << bit;
        b(self.last_block, 0)
            | b(self.first_block, 1)
            | (u32::from(self.crc_iv_idx) & 0x7) << 3
            | u32::from(self.endian_swap) << 6
            | b(self.validate_crc, 14)
            | b(self.use_stored_crc_iv, 15)
            | b(self.send_crc, 16)
            | b(self.store_crc, 17)
            | b(self.store_src_crc, 18)
            | b(self.copy_source_data, 19)
            | (u32::from(self.op_type) & 0x7) << 20
            | (u32::from(self.ssmae_op) & 0x7) << 23
            | b(self.write_barrier, 26)
    }

    /// Unpack a 32-bit field; reserved bits must be zero.
    pub fn from_u32(value: u32) -> Result<Self, DmaDescError> {
        if value & META_RESERVED != 0 {
            return Err(DmaDescError::ReservedMetaCtrl { value, bits: value & META_RESERVED });
        }
        let bit = |n: u32| value & (1 << n) != 0;
        Ok(MetaCtrl {
            last_block: bit(0),
            first_block: bit(1),
            crc_iv_idx: ((value >> 3) & 0x7) as u8,
            endian_swap: ((value >> 6) & 0xFF) as u8,
            validate_crc: bit(14),
            use_stored_crc_iv: bit(15),
            send_crc: bit(16),
            store_crc: bit(17),
            store_src_crc: bit(18),
            copy_source_data: bit(19),
            op_type: ((value >> 20) & 0x7) as u8,
            ssmae_op: ((value >> 23) & 0x7) as u8,
            write_barrier: bit(26),
        })
    }
}

/// A TX (M2S) descriptor: read `len_ctrl.length` bytes from `buf_ptr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TxDescriptor {
    /// Length, ring id and flags.
    pub len_ctrl: LenCtrl,
    /// Framing and data-path options.
    pub meta_ctrl: MetaCtrl,
    /// Source address (or, with `len_ctrl.pattern`, the pattern block).
    pub buf_ptr: u64,
}

/// An RX (S2M) descriptor: write `len_ctrl.length` bytes at `buf_ptr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RxDescriptor {
    /// Length, ring id and flags.
    pub len_ctrl: LenCtrl,
    /// Low half of a second buffer pointer (unused by plain copies).
    pub buf2_ptr_lo: u32,
    /// Destination address (`buf1_ptr`).
    pub buf_ptr: u64,
}

/// One 16-byte descriptor, typed by the ring side it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaDescriptor {
    /// Sits on a TX ring.
    Tx(TxDescriptor),
    /// Sits on an RX ring.
    Rx(RxDescriptor),
}

fn le_u32(b: &[u8; DESC_SIZE], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl DmaDescriptor {
    /// Decode 16 bytes read from a ring of side `side`.
    pub fn from_bytes(bytes: &[u8; DESC_SIZE], side: RingSide) -> Result<Self, DmaDescError> {
        let len_ctrl = LenCtrl::from_u32(le_u32(bytes, 0))?;
        let word1 = le_u32(bytes, 4);
        let mut ptr = [0u8; 8];
        ptr.copy_from_slice(&bytes[8..16]);
        let buf_ptr = u64::from_le_bytes(ptr);
        Ok(match side {
            RingSide::Tx => DmaDescriptor::Tx(TxDescriptor { len_ctrl, meta_ctrl: MetaCtrl::from_u32(word1)?, buf_ptr }),
            RingSide::Rx => DmaDescriptor::Rx(RxDescriptor { len_ctrl, buf2_ptr_lo: word1, buf_ptr }),
        })
    }

    /// Decode from an untrusted slice that must be exactly 16 bytes.
    pub fn from_slice(bytes: &[u8], side: RingSide) -> Result<Self, DmaDescError> {
        let arr: &[u8; DESC_SIZE] = bytes.try_into().map_err(|_| DmaDescError::WrongSize(bytes.len()))?;
        Self::from_bytes(arr, side)
    }

    /// Encode to the 16 ring bytes; fails on an out-of-range length or ring id.
    pub fn to_bytes(&self) -> Result<[u8; DESC_SIZE], DmaDescError> {
        let (ctrl, word1, ptr) = match self {
            DmaDescriptor::Tx(d) => (d.len_ctrl, d.meta_ctrl.to_u32(), d.buf_ptr),
            DmaDescriptor::Rx(d) => (d.len_ctrl, d.buf2_ptr_lo, d.buf_ptr),
        };
        let mut out = [0u8; DESC_SIZE];
        out[0..4].copy_from_slice(&ctrl.to_u32()?.to_le_bytes());
        out[4..8].copy_from_slice(&word1.to_le_bytes());
        out[8..16].copy_from_slice(&ptr.to_le_bytes());
        Ok(out)
    }

    /// The shared `len_ctrl` word.
    pub fn len_ctrl(&self) -> LenCtrl {
        match self {
            DmaDescriptor::Tx(d) => d.len_ctrl,
            DmaDescriptor::Rx(d) => d.len_ctrl,
        }
    }

    /// The buffer address (source for TX, destination for RX).
    pub fn buf_ptr(&self) -> u64 {
        match self {
            DmaDescriptor::Tx(d) => d.buf_ptr,
            DmaDescriptor::Rx(d) => d.buf_ptr,
        }
    }

    /// The ring side this descriptor belongs to.
    pub fn side(&self) -> RingSide {
        match self {
            DmaDescriptor::Tx(_) => RingSide::Tx,
            DmaDescriptor::Rx(_) => RingSide::Rx,
        }
    }
}

/// Build the TX/RX pairs of a plain copy of `len` bytes from `src` to
/// `dst`, split into chunks of at most [`MAX_BD_LENGTH`], the way the driver
/// does: every TX descriptor is FIRST|LAST with [`DEFAULT_COPY_META_CTRL`].
/// A zero-length copy yields no pairs.
pub fn plain_copy_pairs(src: u64, dst: u64, len: u64, ring_id: u8) -> Result<Vec<(TxDescriptor, RxDescriptor)>, DmaDescError> {
    if ring_id > 3 {
        return Err(DmaDescError::BadRingId(ring_id));
    }
    let mut pairs = Vec::with_capacity(len.div_ceil(u64::from(MAX_BD_LENGTH)) as usize);
    let mut done = 0u64;
    while done < len {
        let chunk = (len - done).min(u64::from(MAX_BD_LENGTH)) as u32;
        let mut tx_ctrl = LenCtrl::new(chunk, ring_id)?;
        tx_ctrl.first = true;
        tx_ctrl.last = true;
        let rx_ctrl = LenCtrl::new(chunk, ring_id)?;
        pairs.push((
            TxDescriptor { len_ctrl: tx_ctrl, meta_ctrl: MetaCtrl::plain_copy(), buf_ptr: src.wrapping_add(done) },
            RxDescriptor { len_ctrl: rx_ctrl, buf2_ptr_lo: 0, buf_ptr: dst.wrapping_add(done) },
        ));
        done += u64::from(chunk);
    }
    Ok(pairs)
}

/// Build the TX/RX pair that runs the [`PatternBlock`] stored at
/// `block_addr` (ours; see [`pattern`]): both descriptors carry
/// [`PATTERN_BIT`], length [`PATTERN_BLOCK_SIZE`] and the block address;
/// the TX one is FIRST|LAST with the plain-copy `meta_ctrl`.
pub fn pattern_pair(block_addr: u64, ring_id: u8) -> Result<(TxDescriptor, RxDescriptor), DmaDescError> {
    let mut ctrl = LenCtrl::new(PATTERN_BLOCK_SIZE as u32, ring_id)?;
    ctrl.pattern = true;
    let rx = RxDescriptor { len_ctrl: ctrl, buf2_ptr_lo: 0, buf_ptr: block_addr };
    ctrl.first = true;
    ctrl.last = true;
    let tx = TxDescriptor { len_ctrl: ctrl, meta_ctrl: MetaCtrl::plain_copy(), buf_ptr: block_addr };
    Ok((tx, rx))
}

#[cfg(test)]
mod tests;
