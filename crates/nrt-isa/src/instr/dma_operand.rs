//! The two-dimensional access (22 bytes) each side of the 0xD4 DMA
//! pseudo-instruction carries, and the var reference it names memory by.

#[cfg(test)]
use super::field::Entropy;
use super::field::{Field, bracket_parts, parse_uint};
use crate::record::{RecordBytes, read_u16, read_u32, write_u16, write_u32};

/// Reference kind: the low 24 bits are a def.json var id.
pub const REF_KIND_VAR: u8 = 0x10;
/// Reference kind: the low 24 bits index the per-execution DGE table.
pub const REF_KIND_DGE: u8 = 0x20;

/// What a DMA side reads or writes: top byte = kind, low 24 bits = index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VarRef(pub u32);

impl VarRef {
    /// A direct def.json var reference.
    pub const fn var(id: u32) -> VarRef {
        VarRef((REF_KIND_VAR as u32) << 24 | (id & 0xFF_FFFF))
    }

    /// A reference through entry `i` of the DGE table.
    pub const fn dge(i: u32) -> VarRef {
        VarRef((REF_KIND_DGE as u32) << 24 | (i & 0xFF_FFFF))
    }

    /// The kind byte.
    pub const fn kind(self) -> u8 {
        (self.0 >> 24) as u8
    }

    /// The var id or DGE index.
    pub const fn index(self) -> u32 {
        self.0 & 0xFF_FFFF
    }

    fn to_text(self) -> String {
        match self.kind() {
            REF_KIND_VAR => format!("var{}", self.index()),
            REF_KIND_DGE => format!("dge{}", self.index()),
            k => format!("ref{k}:{}", self.index()),
        }
    }

    fn parse(text: &str) -> Option<VarRef> {
        let idx = |t: &str| {
            parse_uint(t)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v <= 0xFF_FFFF)
        };
        if let Some(r) = text.strip_prefix("var") {
            return Some(VarRef::var(idx(r)?));
        }
        if let Some(r) = text.strip_prefix("dge") {
            return Some(VarRef::dge(idx(r)?));
        }
        let (k, i) = text.strip_prefix("ref")?.split_once(':')?;
        let k = parse_uint(k).and_then(|v| u8::try_from(v).ok())?;
        Some(VarRef(u32::from(k) << 24 | idx(i)?))
    }
}

/// One side of a 0xD4 DMA: `num0` rows of `row_bytes` bytes, row `r` at
/// `offset + r*step0` inside the referenced var (second dimension kept for
/// fidelity; every sample has it degenerate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DmaAccess {
    /// Byte offset into the referenced var (+0).
    pub offset: u32,
    /// The var (+4).
    pub reference: VarRef,
    /// Row step in bytes (+8).
    pub step0: u32,
    /// Second-dimension step (+12).
    pub step1: u32,
    /// Row count (+16).
    pub num0: u16,
    /// Second-dimension count (+18).
    pub num1: u16,
    /// Contiguous bytes per row (+20).
    pub row_bytes: u16,
}

const EXPECTED: &str = "a DMA access [varN|dgeN|refK:N+offset; step0,num0; step1,num1; row_bytes]";

impl Field for DmaAccess {
    const SPANS: &'static [(usize, usize)] = &[(0, 22)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(DmaAccess {
            offset: read_u32(rec, off),
            reference: VarRef(read_u32(rec, off + 4)),
            step0: read_u32(rec, off + 8),
            step1: read_u32(rec, off + 12),
            num0: read_u16(rec, off + 16),
            num1: read_u16(rec, off + 18),
            row_bytes: read_u16(rec, off + 20),
        })
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        write_u32(rec, off, self.offset);
        write_u32(rec, off + 4, self.reference.0);
        write_u32(rec, off + 8, self.step0);
        write_u32(rec, off + 12, self.step1);
        write_u16(rec, off + 16, self.num0);
        write_u16(rec, off + 18, self.num1);
        write_u16(rec, off + 20, self.row_bytes);
    }
    fn to_asm(&self) -> String {
        format!(
            "[{}+{:#x}; {:#x},{}; {:#x},{}; {}]",
            self.reference.to_text(),
            self.offset,
            self.step0,
            self.num0,
            self.step1,
            self.num1,
            self.row_bytes
        )
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        let parse = || -> Option<DmaAccess> {
            let parts = bracket_parts(text)?;
            if parts.len() != 4 {
                return None;
            }
            let (r, o) = parts[0].split_once('+')?;
            let u32_of = |t: &str| parse_uint(t.trim()).and_then(|v| u32::try_from(v).ok());
            let u16_of = |t: &str| parse_uint(t.trim()).and_then(|v| u16::try_from(v).ok());
            let (s0, n0) = parts[1].split_once(',')?;
            let (s1, n1) = parts[2].split_once(',')?;
            Some(DmaAccess {
                offset: u32_of(o)?,
                reference: VarRef::parse(r.trim())?,
                step0: u32_of(s0)?,
                step1: u32_of(s1)?,
                num0: u16_of(n0)?,
                num1: u16_of(n1)?,
                row_bytes: u16_of(parts[3])?,
            })
        };
        parse().ok_or(EXPECTED)
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        let mut rec = [0u8; 64];
        for b in rec.iter_mut().take(22) {
            *b = e.u8();
        }
        DmaAccess::read(&rec, 0).expect("every 22-byte pattern is a DMA access")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_print_by_kind() {
        let a = DmaAccess {
            offset: 0x37c00,
            reference: VarRef::var(0),
            step0: 0x40000,
            step1: 1,
            num0: 128,
            num1: 1,
            row_bytes: 512,
        };
        assert_eq!(a.to_asm(), "[var0+0x37c00; 0x40000,128; 0x1,1; 512]");
        assert_eq!(DmaAccess::from_asm(&a.to_asm()), Ok(a));
        let b = DmaAccess {
            reference: VarRef(0x3300_0005),
            ..a
        };
        assert_eq!(DmaAccess::from_asm(&b.to_asm()), Ok(b));
        assert_eq!(VarRef::dge(2).0, 0x2000_0002);
        assert!(DmaAccess::from_asm("[var0; 1,1; 1,1; 1]").is_err());
    }
}
