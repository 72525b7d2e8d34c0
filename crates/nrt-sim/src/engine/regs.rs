//! The sequencer's scalar registers and its register instructions:
//! CTRL_AL (ALU), CTRL_BR (compare and branch) and CTRL_POLL_SEM, with
//! the layouts of `nrt_isa::instr::{CtrlAl, CtrlBr, CtrlPollSem}`.

use crate::engine::record::Record;

/// Registers per sequencer (register numbers are one byte).
pub const REGISTERS: usize = 256;

/// CTRL_AL opcode.
pub const CTRL_AL: u8 = 0xA8;
/// CTRL_BR opcode.
pub const CTRL_BR: u8 = 0xA9;
/// CTRL_POLL_SEM opcode.
pub const CTRL_POLL_SEM: u8 = 0xB3;

const DTYPE_INT32: u8 = 8;

/// Why a register instruction cannot execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegFault {
    /// Division or modulo by zero.
    DivideByZero,
    /// An ALU op, compare or target mode the sequencer does not know.
    BadCode(u8),
    /// A branch target outside the stream.
    BadTarget,
}

/// The 32-bit scalar register file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registers(Box<[u32; REGISTERS]>);

impl Default for Registers {
    fn default() -> Self {
        Registers(Box::new([0; REGISTERS]))
    }
}

impl Registers {
    /// Register value.
    pub fn get(&self, r: u8) -> u32 {
        self.0[usize::from(r)]
    }
    /// Sets a register.
    pub fn set(&mut self, r: u8, v: u32) {
        self.0[usize::from(r)] = v;
    }
}

fn alu(op: u8, a: u32, b: u32, signed: bool) -> Result<u32, RegFault> {
    let (sa, sb) = (a as i32, b as i32);
    let cmp = |s: bool, u: bool| u32::from(if signed { s } else { u });
    Ok(match op {
        0 => a,
        1 => a & b,
        2 => a | b,
        3 => a ^ b,
        4 => a.wrapping_add(b),
        5 => a.wrapping_sub(b),
        6 => a.wrapping_mul(b),
        7 | 11 if b == 0 => return Err(RegFault::DivideByZero),
        7 if signed => sa.wrapping_div(sb) as u32,
        7 => a / b,
        8 if signed => sa.max(sb) as u32,
        8 => a.max(b),
        9 if signed => sa.min(sb) as u32,
        9 => a.min(b),
        10 => a.wrapping_pow(b),
        11 if signed => sa.wrapping_rem(sb) as u32,
        11 => a % b,
        12 => a.wrapping_shl(b),
        13 if signed => sa.wrapping_shr(b) as u32,
        13 => a.wrapping_shr(b),
        16 => u32::from(a == b),
        17 => u32::from(a != b),
        18 => cmp(sa < sb, a < b),
        19 => cmp(sa <= sb, a <= b),
        20 => cmp(sa > sb, a > b),
        21 => cmp(sa >= sb, a >= b),
        22 if signed => sa.abs_diff(sb),
        22 => a.abs_diff(b),
        other => return Err(RegFault::BadCode(other)),
    })
}

/// Executes CTRL_AL: `dst = src0 op (imm | register)`.
pub fn ctrl_al(rec: &Record, regs: &mut Registers) -> Result<(), RegFault> {
    let a = regs.get(rec.u8_at(0x10));
    let imm = rec.u64_at(0x18);
    let b = if rec.u8_at(0x0E) == 1 { imm as u32 } else { regs.get(imm as u8) };
    let v = alu(rec.u8_at(0x0C), a, b, rec.u8_at(0x0D) == DTYPE_INT32)?;
    regs.set(rec.u8_at(0x14), v);
    Ok(())
}

/// Executes CTRL_BR. Returns the next record index of a taken branch,
/// `None` when it falls through. `base` is the stream address, `count` its
/// record count.
pub fn ctrl_br(rec: &Record, regs: &Registers, pc: u64, base: u64, count: u64) -> Result<Option<u64>, RegFault> {
    let x = regs.get(rec.u8_at(0x20));
    let imm = rec.u32_at(0x10);
    let signed = rec.u8_at(0x0D) == DTYPE_INT32;
    let (sx, si) = (x as i32, imm as i32);
    let pick = |s: bool, u: bool| if signed { s } else { u };
    let taken = match rec.u8_at(0x0C) {
        0 => true,
        3 => x == imm,
        4 => x != imm,
        5 => pick(sx < si, x < imm),
        6 => pick(sx > si, x > imm),
        7 => pick(sx <= si, x <= imm),
        8 => pick(sx >= si, x >= imm),
        other => return Err(RegFault::BadCode(other)),
    };
    if !taken {
        return Ok(None);
    }
    let (lo, hi) = (regs.get(rec.u8_at(0x22)), regs.get(rec.u8_at(0x23)));
    let target = match rec.u8_at(0x0E) {
        1 => {
            let addr = u64::from(lo) | (u64::from(hi) << 32);
            let off = addr.checked_sub(base).ok_or(RegFault::BadTarget)?;
            if off % 64 != 0 {
                return Err(RegFault::BadTarget);
            }
            i128::from(off / 64)
        }
        3 => i128::from(pc) + i128::from(rec.u64_at(0x30) as i64),
        4 => i128::from(pc) + i128::from(lo as i32),
        other => return Err(RegFault::BadCode(other)),
    };
    if target < 0 || target > i128::from(count) {
        return Err(RegFault::BadTarget);
    }
    Ok(Some(target as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::build;

    fn al(op: u8, dtype: u8, src0: u8, dst: u8, imm_src: bool, imm: u64) -> Record {
        let mut b = build::record(CTRL_AL, (0, 0), (0, 0), 0);
        b[0x0C] = op;
        b[0x0D] = dtype;
        b[0x0E] = u8::from(imm_src);
        b[0x10] = src0;
        b[0x14] = dst;
        b[0x18..0x20].copy_from_slice(&imm.to_le_bytes());
        Record::decode(&b)
    }

    fn br(cmp: u8, reg: u8, imm: u32, mode: u8, rel: i64) -> Record {
        let mut b = build::record(CTRL_BR, (0, 0), (0, 0), 0);
        b[0x0C] = cmp;
        b[0x0D] = DTYPE_INT32;
        b[0x0E] = mode;
        b[0x10..0x14].copy_from_slice(&imm.to_le_bytes());
        b[0x20] = reg;
        b[0x30..0x38].copy_from_slice(&rel.to_le_bytes());
        Record::decode(&b)
    }

    #[test]
    fn alu_ops() {
        let mut r = Registers::default();
        ctrl_al(&al(4, 8, 1, 1, true, 5), &mut r).unwrap();
        assert_eq!(r.get(1), 5);
        ctrl_al(&al(5, 8, 1, 2, true, 7), &mut r).unwrap();
        assert_eq!(r.get(2) as i32, -2);
        ctrl_al(&al(18, 8, 2, 3, false, 1), &mut r).unwrap();
        assert_eq!(r.get(3), 1, "-2 < 5 signed");
        ctrl_al(&al(18, 9, 2, 3, false, 1), &mut r).unwrap();
        assert_eq!(r.get(3), 0, "0xFFFFFFFE < 5 is false unsigned");
        assert_eq!(ctrl_al(&al(7, 8, 1, 1, true, 0), &mut r), Err(RegFault::DivideByZero));
        assert_eq!(ctrl_al(&al(99, 8, 1, 1, true, 0), &mut r), Err(RegFault::BadCode(99)));
    }

    #[test]
    fn branches() {
        let mut r = Registers::default();
        r.set(4, 3);
        assert_eq!(ctrl_br(&br(6, 4, 2, 3, -5), &r, 10, 0, 20), Ok(Some(5)));
        assert_eq!(ctrl_br(&br(6, 4, 3, 3, -5), &r, 10, 0, 20), Ok(None));
        assert_eq!(ctrl_br(&br(0, 4, 0, 3, -11), &r, 10, 0, 20), Err(RegFault::BadTarget));
        r.set(7, 0x1000 + 64 * 3);
        let mut b = br(0, 0, 0, 1, 0).bytes;
        b[0x22] = 7;
        b[0x23] = 8;
        assert_eq!(ctrl_br(&Record::decode(&b), &r, 0, 0x1000, 20), Ok(Some(3)));
    }
}
