//! The exact records the runtime's micro-op builders emit, for lowering and
//! for byte-exact tests against the seeds.

use crate::opcode::Opcode;
use crate::record::{EVENTS_OFFSET, Events, RECORD_SIZE, RecordBytes};

/// `move_source` value the LOAD_POOL_ARGUMENT builder stores at +0x0E.
pub const LOAD_POOL_ARGUMENT_MOVE_SOURCE: u8 = 0x03;

const fn put_u32(rec: &mut RecordBytes, off: usize, v: u32) {
    let b = v.to_le_bytes();
    let mut i = 0;
    while i < 4 {
        rec[off + i] = b[i];
        i += 1;
    }
}

const fn put_u64(rec: &mut RecordBytes, off: usize, v: u64) {
    let b = v.to_le_bytes();
    let mut i = 0;
    while i < 8 {
        rec[off + i] = b[i];
        i += 1;
    }
}

const fn header(op: Opcode, events: Option<Events>) -> RecordBytes {
    let mut rec = [0u8; RECORD_SIZE];
    let word = op.header_word().to_le_bytes();
    rec[0] = word[0];
    rec[1] = word[1];
    if let Some(ev) = events {
        put_u64(&mut rec, EVENTS_OFFSET, ev_u64(ev));
    }
    rec
}

const fn ev_u64(ev: Events) -> u64 {
    (ev.value as u64) << 32
        | (ev.update_idx as u64) << 24
        | (ev.update_mode.to_u8() as u64) << 16
        | (ev.wait_idx as u64) << 8
        | ev.wait_mode.to_u8() as u64
}

/// The 0x107A LOAD_POOL_ARGUMENT record as the runtime builds it: header
/// 0x107A, events at +4 if given, move_source 3 at +0x0E, then the argument
/// union at +0x20: table offset lo, lo + 4, sbuf base, scalar-read address,
/// completion (semaphore-increment) address. Everything else is zero.
pub const fn load_pool_argument_slot(
    embedding_table_sb_offset: u32,
    sbuf_base_addr: u64,
    one_value_read_addr: u64,
    completion_write_addr: u64,
    events: Option<Events>,
) -> RecordBytes {
    let mut rec = header(Opcode::LoadPoolArgument, events);
    rec[0x0E] = LOAD_POOL_ARGUMENT_MOVE_SOURCE;
    put_u32(&mut rec, 0x20, embedding_table_sb_offset);
    put_u32(&mut rec, 0x24, embedding_table_sb_offset.wrapping_add(4));
    put_u64(&mut rec, 0x28, sbuf_base_addr);
    put_u64(&mut rec, 0x30, one_value_read_addr);
    put_u64(&mut rec, 0x38, completion_write_addr);
    rec
}

/// The 0x10A2 DRAIN record: header word 0x10A2, events at +4 if given,
/// all other bytes zero.
pub const fn drain_slot(events: Option<Events>) -> RecordBytes {
    header(Opcode::Drain, events)
}
