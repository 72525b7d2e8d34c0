//! The synchronisation view of a 64-byte instruction record the sequencer
//! needs before it executes anything: opcode, debug fields, the waits and
//! updates of the events block at +4 and of EVENT_SEMAPHORE's extended
//! block at +0x20, all read with nrt-isa's decoders. Payloads are decoded
//! by `nrt_isa::instr::Instruction` at execution. [`build`] encodes raw
//! records for tests and hand-written programs.

/// Bytes per record.
pub const RECORD_BYTES: usize = nrt_isa::record::RECORD_SIZE;

pub use nrt_isa::record::EXTENDED_EVENTS_OFFSET;

/// Opcodes the sequencer executes itself.
pub mod op {
    /// EVENT_SEMAPHORE / CTRL_ES: pure wait and update (with a second,
    /// extended wait/update at +0x20).
    pub const EVENT_SEMAPHORE: u8 = 0xA0;
    /// HALT: stop the sequencer.
    pub const HALT: u8 = 0xA1;
    /// DRAIN: wait until the core's DMA queues have no pending work.
    pub const DRAIN: u8 = 0xA2;
    /// WRITE (ours, provisional; the real number is not public): a 32-bit
    /// store of the u32 at +0x18 to the device address u64 at +0x10. This
    /// is the lowered DMA trigger (a write to a queue's tail-increment
    /// register) and the generic register poke.
    pub const WRITE: u8 = 0xA3;
    /// NOP.
    pub const NOP: u8 = 0xA4;
    /// NOTIFY (layout of `nrt_isa::instr::Notify`): target ring u8 at +0x0C
    /// (the engine index of the NOTIFY-type queue), runtime subtype u16 at
    /// +0x0E, custom sub-id u16 at +0x10.
    pub const NOTIFY: u8 = 0xA6;
    /// CTRL_ER (layout of `nrt_isa::instr::CtrlEr`): target u8 at +0x0C
    /// (0 semaphores, 1 events), first index at +0x0D, last at +0x0E.
    pub const CTRL_ER: u8 = 0xB0;
    /// The compiler's per-stream prologue record; a no-op.
    pub const PROLOGUE_B1: u8 = 0xB1;
    /// PSEUDO_INST: sub-op u8 at +0x0C, 1 = EXIT_EXECUTION.
    pub const PSEUDO_INST: u8 = 0xDF;
    /// PSEUDO_INST sub-op: end of execution.
    pub const PSEUDO_EXIT: u8 = 1;

    /// Opcode names for `at=NAME` fault triggers and error text: the names
    /// of `nrt_isa::opcode::Opcode` (which include our provisional WRITE).
    pub fn name(op: u8) -> Option<&'static str> {
        nrt_isa::opcode::Opcode::from_u8(op).name()
    }
}

/// A wait condition (mode, register index, compare value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// Wait mode (0 = none).
    pub mode: u8,
    /// Semaphore or event index.
    pub index: u8,
    /// Compare value.
    pub value: u32,
}

/// An update applied at issue or at completion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Update {
    /// Update mode (0 = none; +16 = at completion).
    pub mode: u8,
    /// Semaphore or event index.
    pub index: u8,
    /// Immediate operand.
    pub value: u32,
}

/// A decoded record header plus its synchronisation fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Opcode (byte 0).
    pub opcode: u8,
    /// Debug command (byte 2).
    pub debug_cmd: u8,
    /// Debug hint (byte 3).
    pub debug_hint: u8,
    /// Waits that must hold before issue (the events block, plus the
    /// extended block for EVENT_SEMAPHORE).
    pub waits: [Wait; 2],
    /// Updates (same sources).
    pub updates: [Update; 2],
}

impl Record {
    /// Decodes a record's header and events with nrt-isa's decoders
    /// (`record::Header`, `record::Events`, and the extended block of
    /// EVENT_SEMAPHORE); every byte pattern decodes (semantic checks happen
    /// at execution).
    pub fn decode(b: &[u8; RECORD_BYTES]) -> Record {
        use nrt_isa::record::{Events, EventsExtended, Header};
        let h = Header::read(b);
        let ev = Events::read_at(b, nrt_isa::record::EVENTS_OFFSET);
        let value = ev.value;
        let mut waits = [
            Wait { mode: ev.wait_mode.to_u8(), index: ev.wait_idx, value },
            Wait { mode: 0, index: 0, value: 0 },
        ];
        let mut updates = [
            Update { mode: ev.update_mode.to_u8(), index: ev.update_idx, value },
            Update { mode: 0, index: 0, value: 0 },
        ];
        if b[0] == op::EVENT_SEMAPHORE {
            let x = EventsExtended::read_at(b, EXTENDED_EVENTS_OFFSET);
            waits[1] = Wait { mode: x.wait_mode.to_u8(), index: x.wait_idx, value: x.wait_value };
            updates[1] = Update { mode: x.update_mode.to_u8(), index: x.update_idx, value: x.update_value };
        }
        Record { opcode: h.opcode, debug_cmd: h.debug_cmd, debug_hint: h.debug_hint, waits, updates }
    }

    /// Whether the record neither waits nor updates anything (most
    /// records): the sequencer then skips the semaphore handshake, which
    /// would find nothing to check, take, apply or wake.
    pub fn is_unsynchronised(&self) -> bool {
        self.waits.iter().all(|w| w.mode == 0) && self.updates.iter().all(|u| u.mode == 0)
    }
}

/// Builders of raw records for tests and hand-written programs.
pub mod build {
    use super::{RECORD_BYTES, op};

    /// A record with an opcode and an events block.
    pub fn record(opcode: u8, wait: (u8, u8), update: (u8, u8), value: u32) -> [u8; RECORD_BYTES] {
        let mut r = [0u8; RECORD_BYTES];
        r[0] = opcode;
        r[1] = 0x10;
        r[4] = wait.0;
        r[5] = wait.1;
        r[6] = update.0;
        r[7] = update.1;
        r[8..12].copy_from_slice(&value.to_le_bytes());
        r
    }
    /// A WRITE of `value` to `addr`.
    pub fn write(addr: u64, value: u32) -> [u8; RECORD_BYTES] {
        let mut r = record(op::WRITE, (0, 0), (0, 0), 0);
        r[0x10..0x18].copy_from_slice(&addr.to_le_bytes());
        r[0x18..0x1C].copy_from_slice(&value.to_le_bytes());
        r
    }
    /// A NOTIFY of a CUSTOM (subtype 6) record with `sub_id` into the
    /// NOTIFY queue of engine index `queue`.
    pub fn notify(queue: u8, sub_id: u16) -> [u8; RECORD_BYTES] {
        let mut r = record(op::NOTIFY, (0, 0), (0, 0), 0);
        r[0x0C] = queue;
        r[0x0E..0x10].copy_from_slice(&6u16.to_le_bytes());
        r[0x10..0x12].copy_from_slice(&sub_id.to_le_bytes());
        r
    }
    /// EXIT_EXECUTION.
    pub fn exit() -> [u8; RECORD_BYTES] {
        let mut r = record(op::PSEUDO_INST, (0, 0), (0, 0), 0);
        r[0x0C] = op::PSEUDO_EXIT;
        r
    }
    /// CTRL_ER over semaphores (`events` false) or events `first..=last`.
    pub fn reset_range(events: bool, first: u8, last: u8) -> [u8; RECORD_BYTES] {
        let mut r = record(op::CTRL_ER, (0, 0), (0, 0), 0);
        r[0x0C] = u8::from(events);
        r[0x0D] = first;
        r[0x0E] = last;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_blocks_decode() {
        let mut b = build::record(op::EVENT_SEMAPHORE, (5, 24), (0x13, 3), 16);
        b[0x20] = 5;
        b[0x21] = 6;
        b[0x24..0x28].copy_from_slice(&12u32.to_le_bytes());
        let r = Record::decode(&b);
        assert_eq!(r.waits[0], Wait { mode: 5, index: 24, value: 16 });
        assert_eq!(r.waits[1], Wait { mode: 5, index: 6, value: 12 });
        assert_eq!(r.updates[0], Update { mode: 0x13, index: 3, value: 16 });
        let wb = build::write(0x1234_5678_9ABC, 7);
        let w = Record::decode(&wb);
        assert_eq!(w.waits[1].mode, 0, "only EVENT_SEMAPHORE has the extended block");
        let typed = nrt_isa::instr::Instruction::decode(&wb).unwrap();
        assert_eq!(typed, nrt_isa::instr::Write { addr: 0x1234_5678_9ABC, data: 7, ..Default::default() }.into());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn any_bytes_decode(b in prop::collection::vec(any::<u8>(), 64)) {
            let arr: [u8; 64] = b.try_into().unwrap();
            let r = Record::decode(&arr);
            prop_assert_eq!(r.opcode, arr[0]);
            prop_assert_eq!(r.waits[0].value, u32::from_le_bytes([arr[8], arr[9], arr[10], arr[11]]));
        }
    }
}
