//! Byte-exact checks of the runtime-built 0x107A LOAD_POOL_ARGUMENT and
//! 0x10A2 DRAIN records against the layout in seed 000 §3.

use nrt_isa::instr::slots::{drain_slot, load_pool_argument_slot};
use nrt_isa::instr::{Instruction, LoadPoolArgument};
use nrt_isa::record::{Events, UpdateMode, WaitMode};

const EVENTS: Events = Events {
    wait_mode: WaitMode::SemGeImm,
    wait_idx: 0x21,
    update_mode: UpdateMode::SemIncComplete,
    update_idx: 0x22,
    value: 0x0000_0003,
};

#[test]
fn load_pool_argument_slot_is_byte_exact() {
    let rec = load_pool_argument_slot(
        0x0001_2340,
        0x1122_3344_5566_7788,
        0x0000_00AA_BBCC_DDEE,
        0x0102_0304_0506_0708,
        Some(EVENTS),
    );
    #[rustfmt::skip]
    let expected: [u8; 64] = [
        // +0x00 header word 0x107A, debug_cmd 0, debug_hint 0
        0x7A, 0x10, 0x00, 0x00,
        // +0x04 events: wait_mode, wait_idx, update_mode, update_idx, u32 value
        0x05, 0x21, 0x13, 0x22, 0x03, 0x00, 0x00, 0x00,
        // +0x0C num_mov 0, +0x0D dtype 0, +0x0E move_source 3, +0x0F reserved
        0x00, 0x00, 0x03, 0x00,
        // +0x10 src_registers[8], +0x18 dst_registers[8]: zero
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        // +0x20 embedding_table_base_addr_lo
        0x40, 0x23, 0x01, 0x00,
        // +0x24 embedding_table_base_addr_hi = lo + 4
        0x44, 0x23, 0x01, 0x00,
        // +0x28 sbuf_base_addr
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
        // +0x30 one_value_read_addr
        0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x00, 0x00, 0x00,
        // +0x38 completion_write_addr
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
    ];
    assert_eq!(rec, expected);
    assert_eq!(u16::from_le_bytes([rec[0], rec[1]]), 0x107A);

    let Instruction::LoadPoolArgument(lpa) = Instruction::decode(&rec).unwrap() else {
        panic!("not 0x7A")
    };
    assert_eq!(lpa.move_source, 3);
    assert_eq!(lpa.embedding_table_hi, lpa.embedding_table_lo + 4);
    assert_eq!(lpa.completion_write_addr, 0x0102_0304_0506_0708);
    assert_eq!(lpa.head.events, EVENTS);
}

#[test]
fn load_pool_argument_without_events_leaves_them_zero() {
    let rec = load_pool_argument_slot(0, 0, 0, 0, None);
    let mut expected = [0u8; 64];
    expected[0] = 0x7A;
    expected[1] = 0x10;
    expected[0x0E] = 0x03;
    expected[0x24] = 0x04;
    assert_eq!(rec, expected);
    let typed = LoadPoolArgument::decode(&rec).unwrap();
    assert_eq!(typed.encode(), rec);
}

#[test]
fn drain_slot_is_byte_exact() {
    let mut expected = [0u8; 64];
    expected[0] = 0xA2;
    expected[1] = 0x10;
    assert_eq!(drain_slot(None), expected);

    #[rustfmt::skip]
    let with_events: [u8; 64] = [
        0xA2, 0x10, 0x00, 0x00,
        0x05, 0x21, 0x13, 0x22, 0x03, 0x00, 0x00, 0x00,
        // +0x0C..+0x40: no payload
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let rec = drain_slot(Some(EVENTS));
    assert_eq!(rec, with_events);
    assert!(matches!(
        Instruction::decode(&rec),
        Ok(Instruction::Drain(_))
    ));
}

#[test]
fn slots_are_const_evaluable() {
    const DRAIN: [u8; 64] = drain_slot(None);
    const LPA: [u8; 64] = load_pool_argument_slot(8, 0, 0, 0, None);
    assert_eq!(DRAIN[0], 0xA2);
    assert_eq!(LPA[0x24], 12);
}
