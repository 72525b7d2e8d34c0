//! The Q7 cluster driven with the bytes the host writes: image install
//! through the portal, LOAD_POOL_ARGUMENT + EXTENDED_INST + DRAIN, the
//! table walk, the library set, SPMD, stdio, traps and runaways. Kernels
//! are hand-written WebAssembly text.

mod q7rig;

use nrt_hal::{Device, EngineId};
use nrt_isa::notification::{InferErrorSubtype, NqEngine, RuntimeSubtype};
use nrt_isa::ucode::stdio::{STDIO_DESC_BYTES, TAG_STDOUT};
use nrt_isa::ucode::{
    ArgBlock, GpsimdCause, KernelRow, LibSetRow, LibraryImage, STDIO_ENTRY_BYTES, StdioEntryHeader, StdioQueueDesc, csr, stock_library,
};
use nrt_isa::instr::slots::load_pool_argument_slot;
use nrt_sim::engine::RunState;
use q7rig::{C0, Rig};
use std::time::{Duration, Instant};

/// Kernels: ids 0, oob 1, unreachable 2, recurse 3, tensor_oob 4, fail 5,
/// spin 6, hello 7, copy 8.
const KERNELS_WAT: &str = r#"
(module
  (import "env" "get_cpu_id" (func $id (result i32)))
  (import "env" "get_cpu_count" (func $cnt (result i32)))
  (import "env" "tensor_read" (func $rd (param i32 i64 i32 i32) (result i32)))
  (import "env" "tensor_write" (func $wr (param i32 i64 i32 i32) (result i32)))
  (import "env" "stdio_write" (func $out (param i32 i32 i32) (result i32)))
  (import "env" "one_value" (func $one (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0x100) "ids\00")
  (data (i32.const 0x110) "oob\00")
  (data (i32.const 0x120) "unreachable\00")
  (data (i32.const 0x130) "recurse\00")
  (data (i32.const 0x140) "tensor_oob\00")
  (data (i32.const 0x150) "fail\00")
  (data (i32.const 0x160) "spin\00")
  (data (i32.const 0x170) "hello\00")
  (data (i32.const 0x180) "copy\00")
  (data (i32.const 0x200) "hello from core ")
  (func (export "get_func_cnt") (result i32) i32.const 9)
  (func (export "get_func_name") (param i32) (result i32)
    local.get 0 i32.const 16 i32.mul i32.const 0x100 i32.add)
  (func (export "get_func_ptr") (param i32) (result i32) local.get 0 i32.const 1 i32.add)
  (func (export "ids") (result i32)
    (i32.store (i32.const 0) (call $id))
    (i32.store (i32.const 4) (i32.add (i32.mul (call $cnt) (i32.const 1000)) (call $one)))
    (drop (call $wr (i32.const 10) (i64.extend_i32_u (i32.mul (call $id) (i32.const 8))) (i32.const 0) (i32.const 8)))
    i32.const 0)
  (func (export "oob") (result i32) (i32.store (i32.const 0x7ffffff0) (i32.const 1)) i32.const 0)
  (func (export "unreachable") (result i32) unreachable)
  (func $r (export "recurse") (result i32) call $r i32.const 1 i32.add)
  (func (export "tensor_oob") (result i32) (call $rd (i32.const 0) (i64.const 1000000) (i32.const 0) (i32.const 4)))
  (func (export "fail") (result i32) i32.const 3)
  (func (export "spin") (result i32) (loop $l (br $l)) i32.const 0)
  (func (export "hello") (result i32)
    (i32.store8 (i32.const 0x210) (i32.add (i32.const 48) (call $id)))
    (i32.store8 (i32.const 0x211) (i32.const 10))
    (drop (call $out (i32.const 1) (i32.const 0x200) (i32.const 18)))
    i32.const 0)
  (func (export "copy") (result i32)
    (local $off i64)
    (local.set $off (i64.extend_i32_u (i32.mul (call $id) (i32.const 64))))
    (drop (call $rd (i32.const 0) (local.get $off) (i32.const 0x400) (i32.const 64)))
    (drop (call $wr (i32.const 10) (local.get $off) (i32.const 0x400) (i32.const 64)))
    i32.const 0)
)
"#;

const IDS: u8 = 0;
const SPIN: u8 = 6;
const HELLO: u8 = 7;

fn wasm() -> Vec<u8> {
    wat::parse_str(KERNELS_WAT).unwrap()
}

fn library() -> LibraryImage {
    LibraryImage::with_sequential_table(wasm(), 9)
}

/// Runs `ids` (spec `spec`) and returns the 8 (cpu id, count*1000 + one) pairs.
fn run_ids(rig: &Rig, spec: u8, one: u32) -> Vec<(u32, u32)> {
    let dst = rig.put(&[0u8; 64]);
    let blk = Rig::block(vec![], Some(Rig::f32_tensor(dst, &[16])));
    rig.run(&rig.op_program(&blk, spec, Some(one)));
    rig.get(dst, 64).chunks_exact(8).map(|c| (u32::from_le_bytes(c[..4].try_into().unwrap()), u32::from_le_bytes(c[4..].try_into().unwrap()))).collect()
}

#[test]
fn spmd_op_runs_on_all_eight_cores_and_completes() {
    for deterministic in [true, false] {
        let rig = Rig::new(deterministic);
        rig.install(&library());
        assert_eq!(rig.csr(csr::ID), csr::ID_VALUE);
        let got = run_ids(&rig, IDS, 5);
        let want: Vec<(u32, u32)> = (0..8).map(|i| (i, 8005)).collect();
        assert_eq!(got, want, "deterministic={deterministic}");
        assert_eq!(rig.done_count(), 1, "completion_write_addr incremented once");
        assert_eq!(rig.pool_state(), RunState::Idle);
        assert_eq!(rig.notify_subtypes(), vec![Some(RuntimeSubtype::Start), Some(RuntimeSubtype::End)]);
        assert!(rig.error_records().is_empty());
        assert_eq!(rig.csr(csr::OPS_DONE), 1);
        assert_eq!(rig.csr(csr::STATUS), 0);
    }
}

#[test]
fn table_walk_hits_first_and_last_rows_and_misses_report() {
    let rig = Rig::new(true);
    let table = vec![
        KernelRow { spec: 5, opcode: 0xF0, func: 0 },
        KernelRow { spec: 9, opcode: 0x7E, func: 0 },
        KernelRow { spec: 9, opcode: 0xF0, func: 8 },
        KernelRow { spec: 9, opcode: 0xF0, func: 0 },
        KernelRow { spec: 255, opcode: 0xF0, func: 0 },
    ];
    rig.install(&LibraryImage::new(wasm(), table));
    assert_eq!(run_ids(&rig, 5, 0)[3], (3, 8000), "first row");
    assert_eq!(run_ids(&rig, 255, 0)[7], (7, 8000), "last row");
    // spec 9: the 0x7E row does not match the opcode; the first 0xF0 row
    // (copy, kernel 8) wins over the later ids row.
    let src = rig.put(&(0..=255u8).cycle().take(512).collect::<Vec<_>>());
    let dst = rig.put(&[0u8; 512]);
    let blk = Rig::block(vec![Rig::f32_tensor(src, &[128])], Some(Rig::f32_tensor(dst, &[128])));
    rig.run(&rig.op_program(&blk, 9, None));
    assert_eq!(rig.get(dst, 512), rig.get(src, 512));
    assert_eq!(rig.done_count(), 3);
    for miss in [0u8, 4, 6, 254] {
        let rig = Rig::new(true);
        rig.install(&LibraryImage::new(wasm(), vec![KernelRow { spec: 5, opcode: 0xF0, func: 0 }, KernelRow { spec: 255, opcode: 0xF0, func: 0 }]));
        let blk = Rig::block(vec![], None);
        rig.run(&rig.op_program(&blk, miss, None));
        let e = rig.error_records();
        assert_eq!(e.len(), 1, "spec {miss}");
        assert_eq!(e[0].subtype, InferErrorSubtype::GpsimdException);
        assert_eq!(e[0].engine, Some(NqEngine::Pool));
        assert_eq!(e[0].program_counter, 1, "the EXTENDED_INST record");
        assert_eq!(GpsimdCause::from_detail(e[0].detail).unwrap().0, GpsimdCause::NoKernel);
        assert_eq!(rig.pool_state(), RunState::Halted);
        assert_eq!(rig.done_count(), 0);
    }
}

fn expect_exception(rig: &Rig, spec: u8, cause: GpsimdCause) {
    let src = rig.put(&[0u8; 16]);
    let blk = Rig::block(vec![Rig::f32_tensor(src, &[4])], Some(Rig::f32_tensor(rig.put(&[0u8; 64]), &[16])));
    rig.run(&rig.op_program(&blk, spec, None));
    let e = rig.error_records();
    assert_eq!(e.len(), 1, "one record per op, whichever core trapped first (spec {spec})");
    assert_eq!(e[0].subtype, InferErrorSubtype::GpsimdException);
    let (c, q7) = GpsimdCause::from_detail(e[0].detail).unwrap();
    assert_eq!(c, cause, "spec {spec}");
    assert!(q7 < 8);
    assert_eq!(rig.pool_state(), RunState::Halted);
    assert_eq!(rig.done_count(), 0, "no completion after an exception");
    assert_eq!(rig.notify_subtypes(), vec![Some(RuntimeSubtype::Start)], "no END");
    assert_ne!(rig.csr(csr::STATUS) & csr::STATUS_FAULTED, 0);
    assert_eq!(u32::from(e[0].detail), rig.csr(csr::LAST_CAUSE));
}

#[test]
fn traps_become_gpsimd_exceptions_and_the_device_keeps_working() {
    let cases = [
        (1, GpsimdCause::MemoryOob),
        (2, GpsimdCause::IllegalInstruction),
        (3, GpsimdCause::StackOverflow),
        (4, GpsimdCause::TensorOob),
        (5, GpsimdCause::KernelStatus),
    ];
    for (spec, cause) in cases {
        let rig = Rig::new(true);
        rig.install(&library());
        expect_exception(&rig, spec, cause);
        rig.dev.reset_core(C0).unwrap();
        assert_eq!(rig.csr(csr::STATUS), 0, "reset clears the cluster state");
        assert_eq!(run_ids(&rig, IDS, 1)[6], (6, 8001), "after {cause:?} the next op runs");
    }
}

#[test]
fn runaway_kernel_is_stopped_and_never_completes() {
    for deterministic in [true, false] {
        let rig = Rig::new(deterministic);
        rig.install(&library());
        rig.set_csr(csr::WATCHDOG_MS, 100);
        let t = Instant::now();
        let blk = Rig::block(vec![], None);
        rig.start(&rig.op_program(&blk, SPIN, None));
        nrt_hal::conformance::wait_until("the watchdog", || rig.csr(csr::STATUS) & csr::STATUS_HUNG != 0);
        assert!(t.elapsed() >= Duration::from_millis(100));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(rig.pool_state(), RunState::Running, "POOL waits at the join forever");
        assert_eq!(rig.notify_subtypes(), vec![Some(RuntimeSubtype::Start)]);
        assert!(rig.error_records().is_empty(), "a runaway reports nothing");
        assert_eq!(rig.done_count(), 0);
        assert_ne!(rig.csr(csr::STATUS) & csr::STATUS_BUSY, 0);
        rig.dev.reset_core(C0).unwrap();
        assert_eq!(run_ids(&rig, IDS, 0)[0], (0, 8000), "deterministic={deterministic}");
    }
}

#[test]
fn printf_lands_in_each_cores_stdout_ring() {
    let rig = Rig::new(true);
    rig.install(&library());
    let cap = 4u32;
    let table = rig.dev.alloc(q7rig::HBM0, 1024, 64).unwrap();
    let mut descs = Vec::new();
    for q in 0..8u32 {
        let data = rig.dev.alloc(q7rig::HBM0, u64::from(cap) * STDIO_ENTRY_BYTES + 4, 64).unwrap();
        rig.dev.memset(data, 0, u64::from(cap) * STDIO_ENTRY_BYTES + 4).unwrap();
        let read = rig.put(&[0u8; 4]);
        let d = StdioQueueDesc { q7: q as u16, tag: TAG_STDOUT, capacity: cap, data_addr: data.get(), read_counter_addr: read.get() };
        rig.dev.write(table.offset(StdioQueueDesc::table_index(q, false) as u64 * STDIO_DESC_BYTES as u64), &d.encode()).unwrap();
        descs.push(d);
    }
    rig.dev.memset(table.offset(8 * STDIO_DESC_BYTES as u64), 0, 8 * STDIO_DESC_BYTES as u64).unwrap();
    rig.set_csr(csr::STDIO_LO, table.get() as u32);
    rig.set_csr(csr::STDIO_HI, (table.get() >> 32) as u32);
    for round in 1..=5u32 {
        rig.run(&rig.op_program(&Rig::block(vec![], None), HELLO, None));
        for (q, d) in descs.iter().enumerate() {
            let w = u32::from_le_bytes(rig.get(nrt_hal::DeviceAddr(d.write_counter_addr()), 4).try_into().unwrap());
            assert_eq!(w, round, "one entry per printf");
            let slot = u64::from((round - 1) % cap);
            let e = rig.get(nrt_hal::DeviceAddr(d.data_addr + slot * STDIO_ENTRY_BYTES), STDIO_ENTRY_BYTES as usize);
            let h = StdioEntryHeader::decode(e[..16].try_into().unwrap());
            assert_eq!((h.len, h.q7, h.tag), (18, q as u16, 3));
            assert_eq!(&e[16..34], format!("hello from core {q}\n").as_bytes());
        }
    }
}

#[test]
fn library_set_rows_select_staged_libraries_and_core_counts() {
    let rig = Rig::new(true);
    rig.install(&stock_library());
    let lib = rig.put(&library().to_file());
    let rows = [
        LibSetRow { valid: false, opcode: 0xF0, sub_opcode: 40, total_cpus: 3, flags: 0, library_addr: 0, func_name: String::new() },
        LibSetRow { valid: true, opcode: 0xF0, sub_opcode: 40, total_cpus: 1, flags: 0, library_addr: lib.get(), func_name: "copy".into() },
        LibSetRow { valid: true, opcode: 0xF0, sub_opcode: 41, total_cpus: 8, flags: 0, library_addr: lib.get(), func_name: "copy".into() },
        LibSetRow { valid: true, opcode: 0xF0, sub_opcode: 0, total_cpus: 8, flags: 0, library_addr: lib.get(), func_name: String::new() },
    ];
    let bytes: Vec<u8> = rows.iter().flat_map(|r| r.encode().unwrap()).collect();
    let set = rig.put(&bytes);
    rig.set_csr(csr::LIBSET_LO, set.get() as u32);
    rig.set_csr(csr::LIBSET_HI, (set.get() >> 32) as u32);
    rig.set_csr(csr::LIBSET_ROWS, rows.len() as u32);
    let src = rig.put(&(1..=255u8).cycle().take(512).collect::<Vec<_>>());
    for (spec, cores) in [(40u8, 1usize), (41, 8)] {
        let dst = rig.put(&[0u8; 512]);
        let blk = Rig::block(vec![Rig::f32_tensor(src, &[128])], Some(Rig::f32_tensor(dst, &[128])));
        rig.run(&rig.op_program(&blk, spec, None));
        let got = rig.get(dst, 512);
        assert_eq!(got[..64 * cores], rig.get(src, 64 * cores)[..], "spec {spec}");
        assert!(got[64 * cores..].iter().all(|&b| b == 0), "spec {spec}: only {cores} core(s) ran");
    }
    // Row 3: no func_name, so the staged library's own table (spec 0 = ids).
    assert_eq!(run_ids(&rig, 0, 2)[4], (4, 8002));
    // A spec no row names falls back to the installed stock image.
    let blk = ArgBlock::default();
    rig.run(&rig.op_program(&blk, 77, None));
    assert_eq!(GpsimdCause::from_detail(rig.error_records()[0].detail).unwrap().0, GpsimdCause::NoKernel);
}

#[test]
fn dispatch_refusals_name_their_cause() {
    // EXTENDED_INST without LOAD_POOL_ARGUMENT.
    let rig = Rig::new(true);
    rig.install(&library());
    let prog = rig.op_program(&ArgBlock::default(), IDS, None);
    rig.run(&prog[1..]);
    let e = rig.error_records();
    assert_eq!((e[0].subtype, e[0].detail), (InferErrorSubtype::SwSequencer, 0x400 | 0xF0));
    // A LOAD_POOL_ARGUMENT whose hi word is not lo + 4.
    let rig = Rig::new(true);
    rig.install(&library());
    let mut prog = rig.op_program(&ArgBlock::default(), IDS, None);
    prog[0][0x24] ^= 1;
    rig.run(&prog);
    let e = rig.error_records();
    assert_eq!((e[0].subtype, e[0].detail), (InferErrorSubtype::SwSequencer, 0x400 | 0x7A));
    // An argument block with 11 arguments.
    let rig = Rig::new(true);
    rig.install(&library());
    let mut bad = ArgBlock::default().encode();
    bad[0] = 11;
    let at = rig.put(&bad);
    let mut prog = rig.op_program(&ArgBlock::default(), IDS, None);
    prog[0] = load_pool_argument_slot(0, at.get(), 0, 0, None);
    rig.run(&prog);
    assert_eq!(rig.error_records()[0].detail, 0x400 | 0x7A);
    // Cores left in run-stall.
    let rig = Rig::new(true);
    rig.install(&library());
    rig.set_csr(csr::RUN_STALL, 0x10);
    rig.run(&rig.op_program(&ArgBlock::default(), IDS, None));
    assert_eq!(GpsimdCause::from_detail(rig.error_records()[0].detail), Some((GpsimdCause::Stalled, 4)));
    // No image at all.
    let rig = Rig::new(true);
    rig.set_csr(csr::RUN_STALL, 0);
    rig.run(&rig.op_program(&ArgBlock::default(), IDS, None));
    assert_eq!(GpsimdCause::from_detail(rig.error_records()[0].detail).unwrap().0, GpsimdCause::BadImage);
    // An image whose module does not follow the ABI (no get_func_ptr).
    let rig = Rig::new(true);
    let bad = wat::parse_str(r#"(module (memory (export "memory") 1) (func (export "get_func_cnt") (result i32) i32.const 0) (func (export "get_func_name") (param i32) (result i32) i32.const 0))"#).unwrap();
    rig.install(&LibraryImage::with_sequential_table(bad, 1));
    rig.run(&rig.op_program(&ArgBlock::default(), 0, None));
    assert_eq!(GpsimdCause::from_detail(rig.error_records()[0].detail).unwrap().0, GpsimdCause::BadImage);
}

#[test]
fn stock_image_runs_and_a_rewritten_iram_is_picked_up() {
    let rig = Rig::new(true);
    rig.install(&stock_library());
    rig.run(&rig.op_program(&ArgBlock::default(), 0, None));
    assert_eq!(rig.done_count(), 1, "nrt_nop completes");
    rig.install(&library());
    assert_eq!(run_ids(&rig, IDS, 9)[1], (1, 8009), "spec 0 is now ids");
}

#[test]
fn portal_bounds_and_csrs() {
    let rig = Rig::new(true);
    let a = rig.arch();
    let iram = a.q7_iram_addr(C0, 7);
    assert!(rig.dev.write(iram.offset(a.q7_iram_bytes - 4), &[1, 2, 3, 4]).is_ok());
    assert!(rig.dev.write(iram.offset(a.q7_iram_bytes - 2), &[1, 2, 3, 4]).is_err(), "straddles the IRAM end");
    assert!(rig.dev.write(a.q7_dram_addr(C0, 7).offset(a.q7_dram_bytes), &[0]).is_err(), "past the last DRAM");
    assert!(rig.dev.write(a.q7_iram_addr(C0, 0).offset(a.q7_iram_bytes), &[0]).is_err(), "in the gap after an IRAM");
    let mut b = [0u8; 4];
    rig.dev.read(iram.offset(a.q7_iram_bytes - 4), &mut b).unwrap();
    assert_eq!(b, [1, 2, 3, 4]);
    assert_eq!(rig.csr(csr::RUN_STALL), csr::RUN_STALL_RESET);
    assert_eq!(u64::from(rig.csr(csr::IRAM_BYTES)), a.q7_iram_bytes);
    assert!(rig.dev.write(rig.csr_addr(csr::STATUS), &[0; 4]).is_err(), "read-only");
    assert!(rig.dev.write(rig.csr_addr(csr::LIBSET_ROWS), &98u32.to_le_bytes()).is_err(), "more than 97 rows");
    assert!(rig.dev.write(rig.csr_addr(0x100), &[0; 4]).is_err(), "no such CSR");
    assert!(rig.dev.write(rig.csr_addr(csr::WATCHDOG_MS), &[0; 2]).is_err(), "whole words only");
    // A compiled library is reused for identical bytes.
    rig.install(&library());
    let before = nrt_sim::q7::wasm::compile_count();
    let rig2 = Rig::new(true);
    rig2.install(&library());
    run_ids(&rig2, IDS, 0);
    run_ids(&rig, IDS, 0);
    assert!(nrt_sim::q7::wasm::compile_count() <= before + 1);
    assert_eq!(rig.dev.engine_state(C0, EngineId::Pool), Some(RunState::Idle));
}

/// The completion gate of the lowered micro-program (EVENT_SEMAPHORE
/// SEM_INC_COMPLETE on the semaphore `completion_write_addr` increments,
/// after LOAD_POOL_ARGUMENT and DRAIN, before EXTENDED_INST).
fn gate(sem: u32) -> [u8; 64] {
    use nrt_isa::record::{Events, UpdateMode};
    let ev = Events { update_mode: UpdateMode::SemIncComplete, update_idx: sem as u8, ..Events::NONE };
    nrt_isa::instr::EventSemaphore { head: nrt_isa::instr::Head::with_events(ev), ..Default::default() }.encode()
}

/// [0x107A][DRAIN][gate][0xF0][DRAIN], the order the runtime stages.
fn gated_program(rig: &Rig, spec: u8, dst: Option<nrt_hal::DeviceAddr>) -> Vec<[u8; 64]> {
    let blk = Rig::block(vec![], dst.map(|d| Rig::f32_tensor(d, &[16])));
    let p = rig.op_program(&blk, spec, Some(0));
    vec![p[0], nrt_isa::instr::slots::drain_slot(None), gate(q7rig::DONE_SEM), p[1], p[2]]
}

#[test]
fn the_completion_gate_counts_once_per_op_and_only_when_the_op_is_done() {
    for deterministic in [true, false] {
        let rig = Rig::new(deterministic);
        rig.install(&library());
        let dst = rig.put(&[0u8; 64]);
        for ops in 1..=2 {
            rig.run(&gated_program(&rig, IDS, Some(dst)));
            assert_eq!(rig.done_count(), ops, "deterministic={deterministic}: one increment per op");
        }
        // A gate on another semaphore is an ordinary EVENT_SEMAPHORE: it
        // counts at once, and the op still increments its own.
        let blk = Rig::block(vec![], Some(Rig::f32_tensor(dst, &[16])));
        let p = rig.op_program(&blk, IDS, None);
        rig.run(&[p[0], gate(3), p[1], p[2]]);
        assert_eq!((rig.done_count(), rig.dev.semaphore_read(C0, 3).unwrap()), (3, 1));
    }
    // The increment waits for the op: a runaway op never makes it.
    let rig = Rig::new(false);
    rig.install(&library());
    rig.set_csr(csr::WATCHDOG_MS, 100);
    rig.start(&gated_program(&rig, SPIN, None));
    nrt_hal::conformance::wait_until("the watchdog", || rig.csr(csr::STATUS) & csr::STATUS_HUNG != 0);
    assert_eq!(rig.done_count(), 0, "the gate passed, the op never completed: no increment");
    rig.dev.reset_core(C0).unwrap();
}
