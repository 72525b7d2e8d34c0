//! The sequencer's scalar registers and its register instructions:
//! CTRL_AL (ALU), CTRL_BR (compare and branch) and CTRL_POLL_SEM, with
//! the layouts of `nrt_isa::instr::{CtrlAl, CtrlBr, CtrlPollSem}`.

use nrt_isa::instr::{BranchCmp, BranchTarget, CtrlAl, CtrlBr, DataSource};

/// Registers per sequencer (register numbers are one byte).
pub const REGISTERS: usize = 256;

const DTYPE_INT32: u8 = 8;

/// Why a register instruction cannot execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegFault {
    /// Division or modulo by zero.
    DivideByZero,
    /// An ALU op the register file does not implement.
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
pub fn ctrl_al(i: &CtrlAl, regs: &mut Registers) -> Result<(), RegFault> {
    let a = regs.get(i.src0_reg);
    let b = if i.src1 == DataSource::Imm { i.imm as u32 } else { regs.get(i.imm as u8) };
    let v = alu(i.op.to_u8(), a, b, i.dtype.0 == DTYPE_INT32)?;
    regs.set(i.dst_reg, v);
    Ok(())
}

/// Executes CTRL_BR. Returns the next record index of a taken branch,
/// `None` when it falls through. `base` is the stream address, `count` its
/// record count. Inline: the dispatcher and every model frame branch
/// once or twice per execution.
#[inline]
pub fn ctrl_br(i: &CtrlBr, regs: &Registers, pc: u64, base: u64, count: u64) -> Result<Option<u64>, RegFault> {
    let x = regs.get(i.cmp_reg);
    let imm = i.imm;
    let signed = i.dtype.0 == DTYPE_INT32;
    let (sx, si) = (x as i32, imm as i32);
    let pick = |s: bool, u: bool| if signed { s } else { u };
    let taken = match i.cmp {
        BranchCmp::Always => true,
        BranchCmp::Eq => x == imm,
        BranchCmp::Ne => x != imm,
        BranchCmp::Lt => pick(sx < si, x < imm),
        BranchCmp::Gt => pick(sx > si, x > imm),
        BranchCmp::Le => pick(sx <= si, x <= imm),
        BranchCmp::Ge => pick(sx >= si, x >= imm),
    };
    if !taken {
        return Ok(None);
    }
    let target = branch_target(i, regs, pc, base).filter(|&t| t <= count).ok_or(RegFault::BadTarget)?;
    Ok(Some(target))
}

/// The record index a taken CTRL_BR names (`None`: before the stream's
/// first record, between records, or past `u64`); the caller checks it
/// against the record count.
#[inline]
fn branch_target(i: &CtrlBr, regs: &Registers, pc: u64, base: u64) -> Option<u64> {
    let lo = regs.get(i.target_reg_lo);
    match i.target {
        BranchTarget::Register => {
            let addr = u64::from(lo) | (u64::from(regs.get(i.target_reg_hi)) << 32);
            let off = addr.checked_sub(base)?;
            off.is_multiple_of(64).then_some(off / 64)
        }
        BranchTarget::RelImm => pc.checked_add_signed(i.rel_offset),
        BranchTarget::RelRegister => pc.checked_add_signed(i64::from(lo as i32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::instr::{AluOp, DtypeCode};

    fn al(op: AluOp, dtype: u8, src0: u8, dst: u8, imm_src: bool, imm: u64) -> CtrlAl {
        let src1 = if imm_src { DataSource::Imm } else { DataSource::Reg };
        CtrlAl { op, dtype: DtypeCode(dtype), src1, src0_reg: src0, dst_reg: dst, imm, ..Default::default() }
    }

    fn br(cmp: BranchCmp, reg: u8, imm: u32, target: BranchTarget, rel: i64) -> CtrlBr {
        CtrlBr { cmp, dtype: DtypeCode(DTYPE_INT32), target, imm, cmp_reg: reg, rel_offset: rel, ..Default::default() }
    }

    #[test]
    fn alu_ops() {
        let mut r = Registers::default();
        ctrl_al(&al(AluOp::Add, 8, 1, 1, true, 5), &mut r).unwrap();
        assert_eq!(r.get(1), 5);
        ctrl_al(&al(AluOp::Sub, 8, 1, 2, true, 7), &mut r).unwrap();
        assert_eq!(r.get(2) as i32, -2);
        ctrl_al(&al(AluOp::IsLt, 8, 2, 3, false, 1), &mut r).unwrap();
        assert_eq!(r.get(3), 1, "-2 < 5 signed");
        ctrl_al(&al(AluOp::IsLt, 9, 2, 3, false, 1), &mut r).unwrap();
        assert_eq!(r.get(3), 0, "0xFFFFFFFE < 5 is false unsigned");
        assert_eq!(ctrl_al(&al(AluOp::Divide, 8, 1, 1, true, 0), &mut r), Err(RegFault::DivideByZero));
        assert_eq!(alu(99, 1, 1, true), Err(RegFault::BadCode(99)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Branch targets agree with wide (i128) arithmetic: negative or
        /// past the stream's end is a fault, anything else the target.
        #[test]
        fn branch_targets_match_wide_arithmetic(
            kind in 0u8..3,
            pc in proptest::prelude::any::<u64>(),
            rel in proptest::prelude::any::<i64>(),
            lo in proptest::prelude::any::<u32>(),
            hi in 0u32..4,
            base in 0u64..(1 << 34),
            count in proptest::prelude::any::<u64>(),
        ) {
            let target = [BranchTarget::Register, BranchTarget::RelImm, BranchTarget::RelRegister][usize::from(kind)];
            let mut r = Registers::default();
            r.set(1, lo);
            r.set(2, hi);
            let mut b = br(BranchCmp::Always, 0, 0, target, rel);
            b.target_reg_lo = 1;
            b.target_reg_hi = 2;
            let wide: Option<i128> = match target {
                BranchTarget::Register => {
                    let addr = u64::from(lo) | (u64::from(hi) << 32);
                    addr.checked_sub(base).filter(|o| o % 64 == 0).map(|o| i128::from(o / 64))
                }
                BranchTarget::RelImm => Some(i128::from(pc) + i128::from(rel)),
                BranchTarget::RelRegister => Some(i128::from(pc) + i128::from(lo as i32)),
            };
            let want = match wide {
                Some(t) if t >= 0 && t <= i128::from(count) => Ok(Some(t as u64)),
                _ => Err(RegFault::BadTarget),
            };
            proptest::prop_assert_eq!(ctrl_br(&b, &r, pc, base, count), want);
        }
    }

    #[test]
    fn branches() {
        let mut r = Registers::default();
        r.set(4, 3);
        assert_eq!(ctrl_br(&br(BranchCmp::Gt, 4, 2, BranchTarget::RelImm, -5), &r, 10, 0, 20), Ok(Some(5)));
        assert_eq!(ctrl_br(&br(BranchCmp::Gt, 4, 3, BranchTarget::RelImm, -5), &r, 10, 0, 20), Ok(None));
        assert_eq!(ctrl_br(&br(BranchCmp::Always, 4, 0, BranchTarget::RelImm, -11), &r, 10, 0, 20), Err(RegFault::BadTarget));
        r.set(7, 0x1000 + 64 * 3);
        let mut b = br(BranchCmp::Always, 0, 0, BranchTarget::Register, 0);
        b.target_reg_lo = 7;
        b.target_reg_hi = 8;
        assert_eq!(ctrl_br(&b, &r, 0, 0x1000, 20), Ok(Some(3)));
    }
}
