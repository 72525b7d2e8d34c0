//! PSEUDO_TRIGGER_COLLECTIVE (0xC8) as a collective the runtime can plan:
//! the record's fields checked against what the runtime accepts, so a bad
//! record is refused at load with a message naming the field and what was
//! expected (docs/collectives.md, "NEFF encoding").
//!
//! From the spec (collectives spec §9, seed siblings §11.5): the offsets
//! of every field; update mode SEM_INC_COMPLETE is required; a reducing
//! op's ALU is one of add, mult, max, min; `num_elements` is the per-rank
//! unit (the input holds `num_elements x rank_n` for reduce-scatter and
//! all-to-all, the output for all-gather and all-to-all). Ours: the
//! collective-type byte holds `enc_op_type` values
//! ([`CollectiveType`]), the dtype byte holds `nrt_dtype_t`, the tensor
//! ids are def.json `var_id`s and the offsets count elements.

use crate::dtype::Dtype;
use crate::instr::{AluOp, CollectiveType, PseudoTriggerCollective};
use crate::opcode::Opcode;
use crate::record::{RecordBytes, UpdateMode};

/// The reduction of a reducing collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// Sum.
    Add,
    /// Product.
    Mult,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

impl Reduction {
    /// Its assembler name.
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Add => "add",
            Reduction::Mult => "mult",
            Reduction::Max => "max",
            Reduction::Min => "min",
        }
    }
}

/// One checked collective trigger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveTrigger {
    /// What it computes.
    pub kind: CollectiveType,
    /// The reduction (`None` for ops that do not reduce).
    pub reduction: Option<Reduction>,
    /// Element type.
    pub dtype: Dtype,
    /// Index of the replica group set (permute: of the source/target pair
    /// set) in the subgraph's def.json.
    pub group_set: u16,
    /// `var_id` of the input.
    pub input_var: u32,
    /// `var_id` of the output.
    pub output_var: u32,
    /// Elements of the per-rank unit.
    pub num_elements: u64,
    /// Where the input starts in its var, in elements.
    pub src_offset: u64,
    /// Where the output starts in its var, in elements.
    pub dst_offset: u64,
}

impl CollectiveTrigger {
    /// Whether the collective reduces.
    pub fn reduces(&self) -> bool {
        reduces(self.kind)
    }

    /// Elements of the input and the output for a group of `rank_n` ranks
    /// (`None` when they overflow).
    pub fn elements(&self, rank_n: u64) -> Option<(u64, u64)> {
        let n = self.num_elements;
        let scaled = n.checked_mul(rank_n)?;
        Some(match self.kind {
            CollectiveType::AllReduce | CollectiveType::Permute => (n, n),
            CollectiveType::AllGather => (n, scaled),
            CollectiveType::ReduceScatter => (scaled, n),
            CollectiveType::AllToAll => (scaled, scaled),
        })
    }

    /// Decodes and checks a 0xC8 record. The error names the field and
    /// what was expected.
    pub fn decode(rec: &RecordBytes) -> Result<CollectiveTrigger, String> {
        if Opcode::from_u8(rec[0]) != Opcode::PseudoTriggerCollective {
            return Err(format!("opcode {:#04x}: expected PSEUDO_TRIGGER_COLLECTIVE (0xc8)", rec[0]));
        }
        let t = PseudoTriggerCollective::decode(rec).map_err(|e| format!("PSEUDO_TRIGGER_COLLECTIVE does not decode: {e}"))?;
        let ev = t.head.events;
        if ev.update_mode != UpdateMode::SemIncComplete {
            return Err(format!(
                "update mode {:?}: PSEUDO_TRIGGER_COLLECTIVE must signal its completion with SEM_INC_COMPLETE (update=semN++)",
                ev.update_mode
            ));
        }
        let dtype = t.dtype.dtype().ok_or_else(|| format!("dtype code {:#x} (+0x0d): expected an nrt_dtype_t code 0x1..=0xf", t.dtype.0))?;
        if dtype == Dtype::Unknown {
            return Err("dtype NRT_DTYPE_UNKNOWN (+0x0d): expected an integer or floating-point nrt_dtype_t".to_string());
        }
        let reduction = if reduces(t.collective) {
            Some(match t.op {
                AluOp::Add => Reduction::Add,
                AluOp::Mult => Reduction::Mult,
                AluOp::Max => Reduction::Max,
                AluOp::Min => Reduction::Min,
                other => {
                    return Err(format!("op {other:?} (+0x0c) of a {:?}: expected a reduction add, mult, max or min", t.collective));
                }
            })
        } else {
            None
        };
        if t.num_elements == 0 {
            return Err("num_elements 0 (+0x18): expected at least one element".to_string());
        }
        let trig = CollectiveTrigger {
            kind: t.collective,
            reduction,
            dtype,
            group_set: t.group_id,
            input_var: t.input_tensor,
            output_var: t.output_tensor,
            num_elements: t.num_elements,
            src_offset: t.src_offset,
            dst_offset: t.dst_offset,
        };
        let esize = dtype.size_bytes() as u64;
        for (what, off) in [("src_offset", trig.src_offset), ("dst_offset", trig.dst_offset)] {
            if off.checked_mul(esize).is_none() {
                return Err(format!("{what} {off}: expected an element offset whose byte offset fits 64 bits"));
            }
        }
        if trig.num_elements.checked_mul(esize).is_none() {
            return Err(format!("num_elements {}: expected a count whose byte size fits 64 bits", trig.num_elements));
        }
        Ok(trig)
    }
}

/// Whether a collective type reduces.
pub fn reduces(kind: CollectiveType) -> bool {
    matches!(kind, CollectiveType::AllReduce | CollectiveType::ReduceScatter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::assemble;

    fn rec(text: &str) -> RecordBytes {
        assemble(text).unwrap().try_into().unwrap()
    }

    #[test]
    fn a_good_all_reduce_decodes() {
        let t = CollectiveTrigger::decode(&rec("trigger_collective op=add dtype=float32 group_id=1 input_tensor=5 output_tensor=6 num_elements=1024 collective=all_reduce dst_offset=8 update=sem3++\n")).unwrap();
        assert_eq!((t.kind, t.reduction, t.dtype, t.group_set, t.input_var, t.output_var, t.num_elements, t.dst_offset), (CollectiveType::AllReduce, Some(Reduction::Add), Dtype::Float32, 1, 5, 6, 1024, 8));
        assert_eq!(t.elements(4), Some((1024, 1024)));
    }

    #[test]
    fn sizes_scale_as_the_spec_says() {
        for (kind, want) in [("all_gather", (10, 40)), ("reduce_scatter", (40, 10)), ("alltoall", (40, 40)), ("permute", (10, 10))] {
            let t = CollectiveTrigger::decode(&rec(&format!("trigger_collective op=max dtype=int32 num_elements=10 collective={kind} update=sem0++\n"))).unwrap();
            assert_eq!(t.elements(4), Some(want), "{kind}");
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let cases = [
            ("trigger_collective op=add dtype=float32 num_elements=4 collective=all_reduce\n", "SEM_INC_COMPLETE"),
            ("trigger_collective op=sub dtype=float32 num_elements=4 collective=all_reduce update=sem1++\n", "expected a reduction add, mult, max or min"),
            ("trigger_collective op=add dtype=float32 num_elements=0 collective=all_reduce update=sem1++\n", "num_elements 0"),
            ("trigger_collective op=add dtype=0 num_elements=4 collective=all_reduce update=sem1++\n", "NRT_DTYPE_UNKNOWN"),
            ("trigger_collective op=add dtype=float32 num_elements=4 collective=all_reduce src_offset=0xffffffffffffffff update=sem1++\n", "src_offset"),
        ];
        for (text, want) in cases {
            let e = CollectiveTrigger::decode(&rec(text)).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        // An unknown collective type byte is the decoder's field error.
        let mut r = rec("trigger_collective op=add dtype=float32 num_elements=4 collective=all_reduce update=sem1++\n");
        r[0x20] = 3;
        assert!(CollectiveTrigger::decode(&r).unwrap_err().contains("collective"), "names the field");
        r[0x20] = 1;
        r[0x0D] = 0x40;
        assert!(CollectiveTrigger::decode(&r).unwrap_err().contains("+0x0d"));
        r[0] = 0xC1;
        assert!(CollectiveTrigger::decode(&r).unwrap_err().contains("expected PSEUDO_TRIGGER_COLLECTIVE"));
    }

    #[test]
    fn an_all_gather_ignores_the_alu_byte() {
        let t = CollectiveTrigger::decode(&rec("trigger_collective op=bypass dtype=bfloat16 num_elements=3 collective=all_gather update=sem2++\n")).unwrap();
        assert_eq!(t.reduction, None);
    }

    proptest::proptest! {
        /// Any record either decodes to a trigger whose sizes are sane or is
        /// refused with a message; never a panic.
        #[test]
        fn random_records_decode_or_fail_cleanly(mut raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 64)) {
            raw[0] = 0xC8;
            let r: RecordBytes = raw.as_slice().try_into().unwrap();
            if let Ok(t) = CollectiveTrigger::decode(&r) {
                proptest::prop_assert!(t.num_elements > 0);
                proptest::prop_assert!(t.dtype != Dtype::Unknown);
            }
        }
    }
}
