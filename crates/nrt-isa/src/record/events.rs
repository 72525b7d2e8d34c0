//! The events block: how an instruction waits on, and signals, semaphores
//! and events. Mode values are the hardware's; values we have no name for are
//! kept as `Other` so any record decodes and re-encodes unchanged.

use super::{RecordBytes, read_u32, write_u32};

/// Condition an instruction waits for before it issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WaitMode {
    /// Issue immediately.
    #[default]
    None,
    /// Semaphore == value.
    SemEqImm,
    /// Semaphore < value.
    SemLtImm,
    /// Semaphore <= value.
    SemLeImm,
    /// Semaphore > value (compilers have been seen to rely on >= here; see docs/isa.md).
    SemGtImm,
    /// Semaphore >= value (what compiled code uses for cumulative counters).
    SemGeImm,
    /// Event is set.
    EvtSet,
    /// Event is set; clear it when the wait is satisfied.
    EvtSetThenClear,
    /// Event is clear.
    EvtClear,
    /// Event is clear; set it when the wait is satisfied.
    EvtClearThenSet,
    /// A mode value without a name here (e.g. the register-sourced variants).
    Other(u8),
}

impl WaitMode {
    /// Maps a mode byte to its variant.
    pub fn from_u8(v: u8) -> WaitMode {
        match v {
            0 => WaitMode::None,
            1 => WaitMode::SemEqImm,
            2 => WaitMode::SemLtImm,
            3 => WaitMode::SemLeImm,
            4 => WaitMode::SemGtImm,
            5 => WaitMode::SemGeImm,
            6 => WaitMode::EvtSet,
            7 => WaitMode::EvtSetThenClear,
            14 => WaitMode::EvtClear,
            15 => WaitMode::EvtClearThenSet,
            other => WaitMode::Other(other),
        }
    }

    /// The mode byte of this variant.
    pub const fn to_u8(self) -> u8 {
        match self {
            WaitMode::None => 0,
            WaitMode::SemEqImm => 1,
            WaitMode::SemLtImm => 2,
            WaitMode::SemLeImm => 3,
            WaitMode::SemGtImm => 4,
            WaitMode::SemGeImm => 5,
            WaitMode::EvtSet => 6,
            WaitMode::EvtSetThenClear => 7,
            WaitMode::EvtClear => 14,
            WaitMode::EvtClearThenSet => 15,
            WaitMode::Other(v) => v,
        }
    }

    /// Whether the mode compares a semaphore against the block's value.
    pub fn uses_value(self) -> bool {
        matches!(
            self,
            WaitMode::SemEqImm
                | WaitMode::SemLtImm
                | WaitMode::SemLeImm
                | WaitMode::SemGtImm
                | WaitMode::SemGeImm
        )
    }
}

/// What an instruction does to a semaphore or event when it is read
/// (`*Read`) or when it completes (`*Complete`, the read value + 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UpdateMode {
    /// No update.
    #[default]
    None,
    /// Set an event when the instruction is read.
    EvtSetRead,
    /// Clear an event when the instruction is read.
    EvtClrRead,
    /// Semaphore += 1 when read.
    SemIncRead,
    /// Semaphore -= 1 when read.
    SemDecRead,
    /// Semaphore += value when read.
    SemAddImmRead,
    /// Semaphore -= value when read.
    SemSubImmRead,
    /// Semaphore = value when read.
    SemWrImmRead,
    /// Set an event on completion.
    EvtSetComplete,
    /// Clear an event on completion.
    EvtClrComplete,
    /// Semaphore += 1 on completion (0x13, the compiler's usual signal).
    SemIncComplete,
    /// Semaphore -= 1 on completion.
    SemDecComplete,
    /// Semaphore += value on completion (0x15).
    SemAddImmComplete,
    /// Semaphore -= value on completion.
    SemSubImmComplete,
    /// Semaphore = value on completion.
    SemWrImmComplete,
    /// A mode value without a name here (e.g. the register-sourced variants).
    Other(u8),
}

/// Offset between a `*_READ` update mode and its `*_COMPLETE` twin.
pub const UPDATE_COMPLETE_OFFSET: u8 = 16;

impl UpdateMode {
    /// Maps a mode byte to its variant.
    pub fn from_u8(v: u8) -> UpdateMode {
        use UpdateMode::*;
        match v {
            0 => None,
            1 => EvtSetRead,
            2 => EvtClrRead,
            3 => SemIncRead,
            4 => SemDecRead,
            5 => SemAddImmRead,
            7 => SemSubImmRead,
            9 => SemWrImmRead,
            17 => EvtSetComplete,
            18 => EvtClrComplete,
            19 => SemIncComplete,
            20 => SemDecComplete,
            21 => SemAddImmComplete,
            23 => SemSubImmComplete,
            25 => SemWrImmComplete,
            other => Other(other),
        }
    }

    /// The mode byte of this variant.
    pub const fn to_u8(self) -> u8 {
        use UpdateMode::*;
        match self {
            None => 0,
            EvtSetRead => 1,
            EvtClrRead => 2,
            SemIncRead => 3,
            SemDecRead => 4,
            SemAddImmRead => 5,
            SemSubImmRead => 7,
            SemWrImmRead => 9,
            EvtSetComplete => 17,
            EvtClrComplete => 18,
            SemIncComplete => 19,
            SemDecComplete => 20,
            SemAddImmComplete => 21,
            SemSubImmComplete => 23,
            SemWrImmComplete => 25,
            Other(v) => v,
        }
    }

    /// Whether the update takes its amount from the block's value.
    pub fn uses_value(self) -> bool {
        use UpdateMode::*;
        matches!(
            self,
            SemAddImmRead
                | SemSubImmRead
                | SemWrImmRead
                | SemAddImmComplete
                | SemSubImmComplete
                | SemWrImmComplete
        )
    }

    /// Whether the update can raise a semaphore (an increment, an add or
    /// a write): what a `>=` wait on it waits for.
    pub fn raises_semaphore(self) -> bool {
        use UpdateMode::*;
        matches!(self, SemIncRead | SemAddImmRead | SemWrImmRead | SemIncComplete | SemAddImmComplete | SemWrImmComplete)
    }

    /// Whether the update happens at completion rather than at read time.
    pub fn at_completion(self) -> bool {
        (UPDATE_COMPLETE_OFFSET..2 * UPDATE_COMPLETE_OFFSET).contains(&self.to_u8())
    }
}

/// The 8-byte events block at record +4. One u32 value is shared by the
/// wait (compare target) and the update (immediate amount).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Events {
    /// Wait condition (+4).
    pub wait_mode: WaitMode,
    /// Semaphore or event index waited on (+5).
    pub wait_idx: u8,
    /// Update action (+6).
    pub update_mode: UpdateMode,
    /// Semaphore or event index updated (+7).
    pub update_idx: u8,
    /// Compare target / immediate (+8).
    pub value: u32,
}

impl Events {
    /// No wait, no update.
    pub const NONE: Events = Events {
        wait_mode: WaitMode::None,
        wait_idx: 0,
        update_mode: UpdateMode::None,
        update_idx: 0,
        value: 0,
    };

    /// Waits until semaphore `sem` >= `value`.
    pub fn wait_sem_ge(sem: u8, value: u32) -> Events {
        Events {
            wait_mode: WaitMode::SemGeImm,
            wait_idx: sem,
            value,
            ..Events::NONE
        }
    }

    /// Increments semaphore `sem` by one when the instruction completes.
    pub fn inc_on_complete(sem: u8) -> Events {
        Events {
            update_mode: UpdateMode::SemIncComplete,
            update_idx: sem,
            ..Events::NONE
        }
    }

    /// Adds this update to an existing events block.
    pub fn with_update(self, mode: UpdateMode, idx: u8) -> Events {
        Events {
            update_mode: mode,
            update_idx: idx,
            ..self
        }
    }

    /// Reads the block at `off` (normally [`super::EVENTS_OFFSET`]).
    pub fn read_at(rec: &RecordBytes, off: usize) -> Events {
        Events {
            wait_mode: WaitMode::from_u8(rec[off]),
            wait_idx: rec[off + 1],
            update_mode: UpdateMode::from_u8(rec[off + 2]),
            update_idx: rec[off + 3],
            value: read_u32(rec, off + 4),
        }
    }

    /// Writes the block at `off`.
    pub fn write_at(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = self.wait_mode.to_u8();
        rec[off + 1] = self.wait_idx;
        rec[off + 2] = self.update_mode.to_u8();
        rec[off + 3] = self.update_idx;
        write_u32(rec, off + 4, self.value);
    }

    /// The block packed as the u64 the host builders pass around:
    /// `value << 32 | update_idx << 24 | update_mode << 16 | wait_idx << 8 | wait_mode`.
    pub const fn to_u64(&self) -> u64 {
        (self.value as u64) << 32
            | (self.update_idx as u64) << 24
            | (self.update_mode.to_u8() as u64) << 16
            | (self.wait_idx as u64) << 8
            | self.wait_mode.to_u8() as u64
    }

    /// Unpacks the u64 form (inverse of [`Events::to_u64`]).
    pub fn from_u64(v: u64) -> Events {
        Events {
            wait_mode: WaitMode::from_u8(v as u8),
            wait_idx: (v >> 8) as u8,
            update_mode: UpdateMode::from_u8((v >> 16) as u8),
            update_idx: (v >> 24) as u8,
            value: (v >> 32) as u32,
        }
    }
}

/// The 12-byte extended events block (EVENT_SEMAPHORE carries one at +0x20):
/// a second wait and update, each with its own value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EventsExtended {
    /// Wait condition (+0).
    pub wait_mode: WaitMode,
    /// Index waited on (+1).
    pub wait_idx: u8,
    /// Update action (+2).
    pub update_mode: UpdateMode,
    /// Index updated (+3).
    pub update_idx: u8,
    /// Compare target of the wait (+4).
    pub wait_value: u32,
    /// Amount of the update (+8).
    pub update_value: u32,
}

impl EventsExtended {
    /// Size of the block in bytes.
    pub const SIZE: usize = 12;

    /// Reads the block at `off`.
    pub fn read_at(rec: &RecordBytes, off: usize) -> EventsExtended {
        EventsExtended {
            wait_mode: WaitMode::from_u8(rec[off]),
            wait_idx: rec[off + 1],
            update_mode: UpdateMode::from_u8(rec[off + 2]),
            update_idx: rec[off + 3],
            wait_value: read_u32(rec, off + 4),
            update_value: read_u32(rec, off + 8),
        }
    }

    /// Writes the block at `off`.
    pub fn write_at(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = self.wait_mode.to_u8();
        rec[off + 1] = self.wait_idx;
        rec[off + 2] = self.update_mode.to_u8();
        rec[off + 3] = self.update_idx;
        write_u32(rec, off + 4, self.wait_value);
        write_u32(rec, off + 8, self.update_value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn real_modes_have_their_values() {
        assert_eq!(WaitMode::SemGeImm.to_u8(), 5);
        assert_eq!(UpdateMode::SemIncComplete.to_u8(), 0x13);
        assert_eq!(UpdateMode::SemAddImmComplete.to_u8(), 0x15);
        assert!(UpdateMode::SemIncComplete.at_completion());
        assert!(!UpdateMode::SemIncRead.at_completion());
    }

    #[test]
    fn observed_block_decodes() {
        // MATMUL of the real sample: no wait, S[5] += 1 on completion.
        let mut rec = [0u8; 64];
        rec[4..12].copy_from_slice(&[0, 0, 0x13, 5, 0, 0, 0, 0]);
        let ev = Events::read_at(&rec, 4);
        assert_eq!(ev, Events::inc_on_complete(5));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn mode_bytes_round_trip(w in any::<u8>(), u in any::<u8>()) {
            prop_assert_eq!(WaitMode::from_u8(w).to_u8(), w);
            prop_assert_eq!(UpdateMode::from_u8(u).to_u8(), u);
        }

        #[test]
        fn events_round_trip(raw in any::<u64>()) {
            let ev = Events::from_u64(raw);
            prop_assert_eq!(ev.to_u64(), raw);
            let mut rec = [0u8; 64];
            ev.write_at(&mut rec, 4);
            prop_assert_eq!(u64::from_le_bytes(rec[4..12].try_into().unwrap()), raw);
            prop_assert_eq!(Events::read_at(&rec, 4), ev);
        }

        #[test]
        fn extended_round_trip(bytes in proptest::array::uniform12(any::<u8>())) {
            let mut rec = [0u8; 64];
            rec[0x20..0x2C].copy_from_slice(&bytes);
            let ext = EventsExtended::read_at(&rec, 0x20);
            let mut out = [0u8; 64];
            ext.write_at(&mut out, 0x20);
            prop_assert_eq!(out, rec);
        }
    }
}
