//! Execution-unit identities and sequence ids (`nrta_xu_t`, `nrta_seq_t`).
//!
//! An XU id is 16 bits: `[3:0]` the XU kind, `[7:4]` the queue, `[15:8]`
//! the logical core. A sequence id is `xu_id << 48 | n`, where `n` is the
//! XU's 48-bit submission counter: 1 for the first request (0 means
//! "nothing completed yet"), never above [`SEQ_NUM_MAX`], never wrapping.

use crate::status::{NrtError, NrtResult};

/// `NRTA_SEQ_NUM_MASK`: the sequence-number bits of a sequence id.
pub const SEQ_NUM_MASK: u64 = (1 << 48) - 1;
/// The largest sequence number a submission may take (libnrt asserts
/// `n <= 0xFFFF_FFFF_FFFE` on every submit, keeping the mask value free).
pub const SEQ_NUM_MAX: u64 = SEQ_NUM_MASK - 1;

/// The kinds of execution unit (`nrta_xu_t`, the current header's order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum XuKind {
    /// Tensor reads, writes and copies (`NRTA_XU_TENSOR_OP`).
    TensorOp = 0,
    /// Model executions (`NRTA_XU_COMPUTE`).
    Compute = 1,
    /// Collectives outside a NEFF (`NRTA_XU_COLLECTIVES`).
    Collectives = 2,
}

impl XuKind {
    /// Every kind, in code order.
    pub const ALL: [XuKind; 3] = [XuKind::TensorOp, XuKind::Compute, XuKind::Collectives];

    /// The kind with C enum value `code`.
    pub fn from_code(code: u32) -> Option<XuKind> {
        XuKind::ALL.into_iter().find(|k| *k as u32 == code)
    }

    /// Queues per logical core of this kind (the documented counts:
    /// compute 1, collectives 3, tensor-op 2).
    pub fn queues(self) -> u8 {
        match self {
            XuKind::TensorOp => 2,
            XuKind::Compute => 1,
            XuKind::Collectives => 3,
        }
    }

    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            XuKind::TensorOp => "TENSOR_OP",
            XuKind::Compute => "COMPUTE",
            XuKind::Collectives => "COLLECTIVES",
        }
    }
}

/// One execution unit: (logical core, kind, queue).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct XuId {
    /// Logical core (0..=255).
    pub vnc: u8,
    /// Kind.
    pub kind: XuKind,
    /// Queue within the kind (below [`XuKind::queues`]).
    pub queue: u8,
}

impl XuId {
    /// Checks `vnc` and `queue` against the id's field widths and the
    /// kind's queue count.
    pub fn new(vnc: u32, kind: XuKind, queue: i64) -> NrtResult<XuId> {
        let vnc = u8::try_from(vnc).map_err(|_| NrtError::invalid(format!("logical core {vnc} does not fit an execution-unit id (at most 255)")))?;
        let q = u8::try_from(queue).ok().filter(|q| *q < kind.queues()).ok_or_else(|| {
            NrtError::invalid(format!("queue {queue} does not exist on the {} execution unit (queues 0..{})", kind.name(), kind.queues()))
        })?;
        Ok(XuId { vnc, kind, queue: q })
    }

    /// The 16-bit id.
    pub fn code(self) -> u16 {
        (u16::from(self.vnc) << 8) | (u16::from(self.queue) << 4) | self.kind as u16
    }

    /// Decodes a 16-bit id (`None` for an unknown kind or queue).
    pub fn from_code(code: u16) -> Option<XuId> {
        let kind = XuKind::from_code(u32::from(code & 0xF))?;
        let queue = ((code >> 4) & 0xF) as u8;
        (queue < kind.queues()).then_some(XuId { vnc: (code >> 8) as u8, kind, queue })
    }

    /// The sequence id of submission `n` on this unit.
    pub fn seq(self, n: u64) -> u64 {
        (u64::from(self.code()) << 48) | (n & SEQ_NUM_MASK)
    }
}

impl std::fmt::Display for XuId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XU {:#06x} ({} queue {} of vnc {})", self.code(), self.kind.name(), self.queue, self.vnc)
    }
}

/// The sequence number of a sequence id (`NRTA_SEQ_GET_SEQ_NUM`).
pub fn seq_num(seq: u64) -> u64 {
    seq & SEQ_NUM_MASK
}

/// The XU id bits of a sequence id (`NRTA_SEQ_GET_XU_ID`).
pub fn seq_xu(seq: u64) -> u16 {
    (seq >> 48) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_pack_kind_queue_and_core() {
        let id = XuId::new(3, XuKind::TensorOp, 1).unwrap();
        assert_eq!(id.code(), 0x0310);
        let c = XuId::new(5, XuKind::Compute, 0).unwrap();
        assert_eq!(c.seq(7), 0x0501_0000_0000_0007);
        assert_eq!((seq_xu(c.seq(7)), seq_num(c.seq(7))), (0x0501, 7));
        assert!(XuId::new(0, XuKind::Compute, 1).is_err());
        assert!(XuId::new(0, XuKind::Collectives, 3).is_err());
        assert!(XuId::new(0, XuKind::TensorOp, -1).is_err());
        assert!(XuId::new(256, XuKind::Compute, 0).is_err());
        assert_eq!(XuId::from_code(0x0003), None);
        assert_eq!(XuId::from_code(0x0011), None, "compute has one queue");
        assert_eq!(SEQ_NUM_MAX, 0xFFFF_FFFF_FFFE);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn codes_round_trip(code: u16, n in 0u64..=SEQ_NUM_MAX) {
            if let Some(id) = XuId::from_code(code) {
                prop_assert_eq!(id.code(), code);
                let s = id.seq(n);
                prop_assert_eq!((seq_xu(s), seq_num(s)), (code, n));
            }
        }
    }
}
