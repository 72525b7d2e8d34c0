//! From instruction operand fields to kernel access patterns.
//!
//! Compute operands carry a 29-bit immediate address (`real-isa-observed`
//! §3.1): below `0x200_0000` it is SBUF, `partition << 18 | byte offset`;
//! from `0x200_0000` on it is PSUM, encoded the same way relative to that
//! base. The instruction's partition count says how many partitions, from
//! the address's partition on, the pattern covers. Every operand is checked
//! against the memory it names before a kernel touches it, because the
//! memory views drop out-of-range accesses silently.

use crate::kernels::pattern::{Axis, OnChipRead, Pattern};
use crate::memory::onchip::OnChipView;
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::DtypeCode;
use nrt_isa::operand::{Addr4, AddrForm, Tensor3d, Tensor4d};

/// First PSUM address of a compute operand.
pub const PSUM_BASE: u64 = 0x200_0000;
/// Bit position of the partition index in an operand address.
pub const PARTITION_SHIFT: u32 = 18;
/// Mask of the in-partition byte offset of an operand address.
pub const OFFSET_MASK: u64 = (1 << PARTITION_SHIFT) - 1;

/// Most elements one operand may enumerate per partition (2^18). The
/// largest real operand is a full SBUF partition of 1-byte elements
/// (196608); the cap keeps a broadcast (zero-step) pattern in an untrusted
/// record from asking for gigabytes of tile.
pub const MAX_OPERAND_ELEMS: usize = 1 << 18;

/// Which on-chip memory an operand lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// State buffer.
    Sbuf,
    /// Partial-sum buffer.
    Psum,
}

impl Space {
    /// Lower-case name for error text.
    pub fn name(self) -> &'static str {
        match self {
            Space::Sbuf => "SBUF",
            Space::Psum => "PSUM",
        }
    }
}

/// A resolved operand: memory, access pattern and element type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Operand {
    /// The memory addressed.
    pub space: Space,
    /// Partitions and free-dimension walk.
    pub pattern: Pattern,
    /// Element type.
    pub dtype: Dtype,
}

/// The SBUF and PSUM of the executing core.
#[derive(Clone, Copy)]
pub struct OnChip<'a> {
    /// SBUF view.
    pub sbuf: OnChipView<'a>,
    /// PSUM view.
    pub psum: OnChipView<'a>,
}

impl<'a> OnChip<'a> {
    /// The view of `space`.
    pub fn view(&self, space: Space) -> OnChipView<'a> {
        match space {
            Space::Sbuf => self.sbuf,
            Space::Psum => self.psum,
        }
    }

    /// Checks that `op` lies inside its memory: partitions and bytes.
    pub fn check(&self, role: &str, op: &Operand) -> Result<(), String> {
        let v = self.view(op.space);
        let p = &op.pattern;
        let last = p.start_partition().checked_add(p.partitions());
        if last.is_none_or(|l| l > v.partitions()) {
            return Err(format!(
                "{role}: partitions {}..{} exceed the {} {} partitions",
                p.start_partition(),
                p.start_partition().saturating_add(p.partitions()),
                v.partitions(),
                op.space.name()
            ));
        }
        let (_, hi) = p.byte_span(op.dtype.size_bytes()).map_err(|e| format!("{role}: {e}"))?;
        if hi > v.partition_bytes() {
            return Err(format!(
                "{role}: pattern reaches byte {hi:#x} of a {} partition of {:#x} bytes",
                op.space.name(),
                v.partition_bytes()
            ));
        }
        Ok(())
    }
}

/// The dtype named by a code byte (0 and unknown codes are errors).
pub fn dtype(role: &str, code: DtypeCode) -> Result<Dtype, String> {
    match code.dtype() {
        Some(d) if d != Dtype::Unknown => Ok(d),
        _ => Err(format!("{role}: dtype code {} is not a known nrt_dtype_t element type", code.0)),
    }
}

/// Splits an operand address into memory, first partition and byte offset.
pub fn locate(role: &str, addr: Addr4) -> Result<(Space, usize, usize), String> {
    let raw = match addr.form() {
        AddrForm::Immediate(a) => a,
        other => return Err(format!("{role}: address {:#010x} is {other:?}; compute operands must be immediate", addr.0)),
    };
    let (space, rel) = if raw >= PSUM_BASE { (Space::Psum, raw - PSUM_BASE) } else { (Space::Sbuf, raw) };
    Ok((space, (rel >> PARTITION_SHIFT) as usize, (rel & OFFSET_MASK) as usize))
}

fn build(role: &str, addr: Addr4, partitions: usize, axes: &[Axis], dt: Dtype) -> Result<Operand, String> {
    if partitions == 0 {
        return Err(format!("{role}: partition count is 0, expected 1..=128"));
    }
    let (space, start, offset) = locate(role, addr)?;
    let pattern = Pattern::new(start, partitions, offset, axes).map_err(|e| format!("{role}: {e}"))?;
    if pattern.free_len() > MAX_OPERAND_ELEMS {
        return Err(format!(
            "{role}: pattern enumerates {} elements per partition, more than the {MAX_OPERAND_ELEMS} an operand may have",
            pattern.free_len()
        ));
    }
    Ok(Operand { space, pattern, dtype: dt })
}

/// A TENSOR3D operand over `partitions` partitions.
pub fn tensor3d(role: &str, t: &Tensor3d, partitions: usize, dt: Dtype) -> Result<Operand, String> {
    let axes: [Axis; 3] = std::array::from_fn(|k| Axis::new(i32::from(t.step[k]), u32::from(t.num[k])));
    build(role, t.start, partitions, &axes, dt)
}

/// A TENSOR4D (ACT/DVE frame) operand over `partitions` partitions.
pub fn tensor4d(role: &str, t: &Tensor4d, partitions: usize, dt: Dtype) -> Result<Operand, String> {
    let axes: [Axis; 4] = std::array::from_fn(|k| Axis::new(i32::from(t.step[k]), u32::from(t.num[k])));
    build(role, t.start, partitions, &axes, dt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sbuf_and_psum_addresses() {
        assert_eq!(locate("x", Addr4(0x37b00)).unwrap(), (Space::Sbuf, 0, 0x37b00));
        assert_eq!(locate("x", Addr4(5 << 18 | 0x40)).unwrap(), (Space::Sbuf, 5, 0x40));
        assert_eq!(locate("x", Addr4(0x200_0800)).unwrap(), (Space::Psum, 0, 0x800));
        assert_eq!(locate("x", Addr4(0x200_0000 | 3 << 18 | 8)).unwrap(), (Space::Psum, 3, 8));
        assert!(locate("x", Addr4(0x8000_0005)).unwrap_err().contains("immediate"));
        assert!(dtype("in", DtypeCode(0)).is_err());
        assert!(dtype("in", DtypeCode(0x42)).unwrap_err().contains("66"));
        assert_eq!(dtype("in", DtypeCode(7)).unwrap(), Dtype::Float16);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any address either resolves into a partition/offset that
        /// re-encodes to itself, or is a named error.
        #[test]
        fn locate_round_trips(raw in any::<u32>()) {
            if let Ok((space, p, off)) = locate("op", Addr4(raw)) {
                let base = if space == Space::Psum { PSUM_BASE } else { 0 };
                prop_assert_eq!(base + ((p as u64) << PARTITION_SHIFT) + off as u64, u64::from(raw & 0x1FFF_FFFF));
            }
        }
    }
}
