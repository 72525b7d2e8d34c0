//! Operand sub-structs embedded in instruction records.
//!
//! * [`Addr4`]: a 4-byte address, immediate (29 bits) or register/indirect form.
//! * [`Addr8`]: the 8-byte address form.
//! * [`ImmReg`]: a register number padded to 4 bytes.
//! * [`BoundCheckReg`]: the 1-byte bounds-check selector.
//! * [`Tensor3d`]: the 16-byte access pattern PE (and DVE arithmetic) uses:
//!   start address, then three (step, count) pairs, steps in elements.
//! * [`Tensor4d`]: the 20-byte ACT/DVE operand frame seen in COPY/CAST:
//!   start address, four i16 steps, four u16 counts.

use crate::record::{RecordBytes, read_u16, read_u32, read_u64, write_u16, write_u32, write_u64};

/// Mask of the immediate part of an [`Addr4`].
pub const ADDR4_IMM_MASK: u32 = 0x1FFF_FFFF;

/// How an [`Addr4`] or [`Addr8`] names its location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrForm {
    /// A direct byte address (29 bits for ADDR4).
    Immediate(u64),
    /// The address is held in a sequencer register; the low byte names it.
    Register {
        /// Register number (low byte of the operand; our reading).
        reg: u8,
    },
    /// The address is loaded through a register (indirect); the low byte names it.
    Indirect {
        /// Register number (low byte of the operand; our reading).
        reg: u8,
    },
}

fn classify_marker(marker: u8) -> Option<bool> {
    if marker & 0xA0 == 0x80 {
        Some(true)
    } else if marker & 0x60 == 0x20 {
        Some(false)
    } else {
        None
    }
}

/// A 4-byte address operand, kept as its raw little-endian u32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Addr4(pub u32);

impl Addr4 {
    /// An immediate address (masked to 29 bits).
    pub const fn immediate(addr: u32) -> Addr4 {
        Addr4(addr & ADDR4_IMM_MASK)
    }

    /// The marker byte (+3) that selects register / indirect forms.
    pub const fn marker(self) -> u8 {
        (self.0 >> 24) as u8
    }

    /// Which form the operand takes.
    pub fn form(self) -> AddrForm {
        match classify_marker(self.marker()) {
            Some(true) => AddrForm::Register { reg: self.0 as u8 },
            Some(false) => AddrForm::Indirect { reg: self.0 as u8 },
            None => AddrForm::Immediate(u64::from(self.0 & ADDR4_IMM_MASK)),
        }
    }
}

/// An 8-byte address operand, kept as its raw little-endian u64; the marker
/// byte of the register form sits at +7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Addr8(pub u64);

impl Addr8 {
    /// The marker byte (+7).
    pub const fn marker(self) -> u8 {
        (self.0 >> 56) as u8
    }

    /// Which form the operand takes (register form: reg_lo at +0, reg_hi at +1).
    pub fn form(self) -> AddrForm {
        match classify_marker(self.marker()) {
            Some(true) => AddrForm::Register { reg: self.0 as u8 },
            Some(false) => AddrForm::Indirect { reg: self.0 as u8 },
            None => AddrForm::Immediate(self.0),
        }
    }

    /// Reads the operand at `off`.
    pub fn read_at(rec: &RecordBytes, off: usize) -> Addr8 {
        Addr8(read_u64(rec, off))
    }

    /// Writes the operand at `off`.
    pub fn write_at(self, rec: &mut RecordBytes, off: usize) {
        write_u64(rec, off, self.0)
    }
}

/// A register operand: register number then three zero bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ImmReg {
    /// Sequencer register number.
    pub regnum: u8,
}

/// The 1-byte bounds-check selector: `bc_reg:6, disable_oob_notif:1, enabled:1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BoundCheckReg(pub u8);

impl BoundCheckReg {
    /// Register holding the bound (bits 5:0).
    pub const fn reg(self) -> u8 {
        self.0 & 0x3F
    }

    /// Whether an out-of-bounds access stays silent (bit 6).
    pub const fn oob_notification_disabled(self) -> bool {
        self.0 & 0x40 != 0
    }

    /// Whether the check is on (bit 7).
    pub const fn enabled(self) -> bool {
        self.0 & 0x80 != 0
    }
}

/// The 16-byte three-dimensional access pattern: element `(i0, i1, i2)` sits
/// at `start + (i0*step[0] + i1*step[1] + i2*step[2]) * element_size`, with
/// `i_k < num[k]`; dimension 0 is the innermost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tensor3d {
    /// Start address (+0).
    pub start: Addr4,
    /// Steps in elements (+4, +6, +8).
    pub step: [i16; 3],
    /// Counts (+10, +12, +14).
    pub num: [u16; 3],
}

impl Tensor3d {
    /// Size in bytes.
    pub const SIZE: usize = 16;

    /// A contiguous run of `n` elements starting at `start`.
    pub fn contiguous(start: u32, n: u16) -> Tensor3d {
        Tensor3d {
            start: Addr4(start),
            step: [1, 0, 0],
            num: [n, 1, 1],
        }
    }

    /// Number of elements the pattern visits.
    pub fn elements(&self) -> u64 {
        self.num.iter().map(|&n| u64::from(n)).product()
    }

    /// Element offsets (in elements, relative to `start`) in enumeration
    /// order, dimension 0 innermost.
    pub fn element_offsets(&self) -> impl Iterator<Item = i64> + '_ {
        pattern_offsets(&self.step, &self.num)
    }

    /// Reads the pattern at `off`.
    pub fn read_at(rec: &RecordBytes, off: usize) -> Tensor3d {
        let mut t = Tensor3d {
            start: Addr4(read_u32(rec, off)),
            ..Tensor3d::default()
        };
        for k in 0..3 {
            t.step[k] = read_u16(rec, off + 4 + 2 * k) as i16;
            t.num[k] = read_u16(rec, off + 10 + 2 * k);
        }
        t
    }

    /// Writes the pattern at `off`.
    pub fn write_at(&self, rec: &mut RecordBytes, off: usize) {
        write_u32(rec, off, self.start.0);
        for k in 0..3 {
            write_u16(rec, off + 4 + 2 * k, self.step[k] as u16);
            write_u16(rec, off + 10 + 2 * k, self.num[k]);
        }
    }
}

/// The 20-byte ACT/DVE operand frame: start address, then `step[4]` and
/// `num[4]`; element `(i0..i3)` sits at `start + Σ i_k*step[k]*esize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tensor4d {
    /// Start address (+0).
    pub start: Addr4,
    /// Steps in elements (+4..+11).
    pub step: [i16; 4],
    /// Counts (+12..+19).
    pub num: [u16; 4],
}

impl Tensor4d {
    /// Size in bytes.
    pub const SIZE: usize = 20;

    /// A contiguous run of `n` elements starting at `start`, with the unit
    /// steps the compiler writes for unused dimensions.
    pub fn contiguous(start: u32, n: u16) -> Tensor4d {
        Tensor4d {
            start: Addr4(start),
            step: [1, 1, 1, 1],
            num: [n, 1, 1, 1],
        }
    }

    /// Number of elements the pattern visits.
    pub fn elements(&self) -> u64 {
        self.num.iter().map(|&n| u64::from(n)).product()
    }

    /// Element offsets (in elements, relative to `start`) in enumeration
    /// order, dimension 0 innermost.
    pub fn element_offsets(&self) -> impl Iterator<Item = i64> + '_ {
        pattern_offsets(&self.step, &self.num)
    }

    /// Reads the frame at `off`.
    pub fn read_at(rec: &RecordBytes, off: usize) -> Tensor4d {
        let mut t = Tensor4d {
            start: Addr4(read_u32(rec, off)),
            ..Tensor4d::default()
        };
        for k in 0..4 {
            t.step[k] = read_u16(rec, off + 4 + 2 * k) as i16;
            t.num[k] = read_u16(rec, off + 12 + 2 * k);
        }
        t
    }

    /// Writes the frame at `off`.
    pub fn write_at(&self, rec: &mut RecordBytes, off: usize) {
        write_u32(rec, off, self.start.0);
        for k in 0..4 {
            write_u16(rec, off + 4 + 2 * k, self.step[k] as u16);
            write_u16(rec, off + 12 + 2 * k, self.num[k]);
        }
    }
}

/// Walks a step/count pattern, innermost dimension first. A zero count
/// anywhere yields no element.
fn pattern_offsets<'a>(step: &'a [i16], num: &'a [u16]) -> impl Iterator<Item = i64> + 'a {
    let total: u64 = num.iter().map(|&n| u64::from(n)).product();
    (0..total).map(move |mut linear| {
        let mut off = 0i64;
        for (&s, &n) in step.iter().zip(num) {
            let n = u64::from(n);
            off += i64::from(s) * (linear % n) as i64;
            linear /= n;
        }
        off
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rec_with(off: usize, bytes: &[u8]) -> RecordBytes {
        let mut rec = [0u8; 64];
        rec[off..off + bytes.len()].copy_from_slice(bytes);
        rec
    }

    #[test]
    fn observed_ldweights_pattern() {
        // fe7c0300 ffff0000 e0ff2000 01000400 from the real sample's LDWEIGHTS.
        let rec = rec_with(
            0x10,
            &[
                0xfe, 0x7c, 3, 0, 0xff, 0xff, 0, 0, 0xe0, 0xff, 0x20, 0, 1, 0, 4, 0,
            ],
        );
        let t = Tensor3d::read_at(&rec, 0x10);
        assert_eq!(t.start, Addr4(0x37cfe));
        assert_eq!(t.step, [-1, 0, -32]);
        assert_eq!(t.num, [32, 1, 4]);
        assert_eq!(t.elements(), 128);
    }

    #[test]
    fn observed_copy_frame() {
        // 00080002 01000100 01000100 80000100 01000100 from ACT COPY.
        let rec = rec_with(
            0x0C,
            &[
                0, 8, 0, 2, 1, 0, 1, 0, 1, 0, 1, 0, 0x80, 0, 1, 0, 1, 0, 1, 0,
            ],
        );
        let t = Tensor4d::read_at(&rec, 0x0C);
        assert_eq!(t, Tensor4d::contiguous(0x2000800, 128));
    }

    #[test]
    fn offsets_follow_the_reversed_ldweights_walk() {
        let t = Tensor3d {
            start: Addr4(0x37cfe),
            step: [-1, 0, -32],
            num: [32, 1, 4],
        };
        let offs: Vec<i64> = t.element_offsets().collect();
        assert_eq!(offs.len(), 128);
        assert_eq!(&offs[..3], &[0, -1, -2]);
        assert_eq!(offs[32], -32);
        assert_eq!(offs[127], -127);
        let empty = Tensor3d {
            num: [4, 0, 1],
            ..t
        };
        assert_eq!(empty.element_offsets().count(), 0);
        let f = Tensor4d {
            start: Addr4(0),
            step: [1, 8, 0, 0],
            num: [2, 3, 1, 1],
        };
        assert_eq!(
            f.element_offsets().collect::<Vec<_>>(),
            vec![0, 1, 8, 9, 16, 17]
        );
    }

    #[test]
    fn address_forms() {
        assert_eq!(Addr4(0x2000800).form(), AddrForm::Immediate(0x2000800));
        assert_eq!(Addr4(0x8000_0005).form(), AddrForm::Register { reg: 5 });
        assert_eq!(Addr4(0x2000_0007).form(), AddrForm::Indirect { reg: 7 });
        assert_eq!(Addr4::immediate(0xFFFF_FFFF).0, ADDR4_IMM_MASK);
        assert_eq!(
            Addr8(0x8000_0000_0000_0102).form(),
            AddrForm::Register { reg: 2 }
        );
        let bc = BoundCheckReg(0xC5);
        assert_eq!(
            (bc.reg(), bc.oob_notification_disabled(), bc.enabled()),
            (5, true, true)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn tensor3d_round_trips(bytes in proptest::array::uniform16(any::<u8>())) {
            let rec = rec_with(0x30, &bytes);
            let mut out = [0u8; 64];
            Tensor3d::read_at(&rec, 0x30).write_at(&mut out, 0x30);
            prop_assert_eq!(out, rec);
        }

        #[test]
        fn tensor4d_round_trips(bytes in proptest::collection::vec(any::<u8>(), 20)) {
            let rec = rec_with(0x2C, &bytes);
            let mut out = [0u8; 64];
            Tensor4d::read_at(&rec, 0x2C).write_at(&mut out, 0x2C);
            prop_assert_eq!(out, rec);
        }

        #[test]
        fn addr8_round_trips(v in any::<u64>()) {
            let mut rec = [0u8; 64];
            Addr8(v).write_at(&mut rec, 8);
            prop_assert_eq!(Addr8::read_at(&rec, 8), Addr8(v));
        }
    }
}
