//! Hand-written programs on the simulated device: two engines handshaking
//! through semaphores around a DMA in and a DMA out, START/END records,
//! virtual time, determinism, and every injected fault's evidence.

use nrt_hal::arch::{DMA_M2S_GROUP, DMA_S2M_GROUP};
use nrt_hal::conformance::{udma_copy_pair, wait_until};
use nrt_hal::{CoreId, Device, DeviceAddr, DmaQueueId, DmaQueueStatus, DmaRingConfig, EngineId, MemoryLocation, NqRing, NqSpec, NqType};
use nrt_sim::engine::record::build;
use nrt_sim::engine::RunState;
use nrt_isa::notification::{EngineEvent, InferErrorSubtype, NotificType, NqEngine, RuntimeSubtype};
use nrt_sim::nq::record as nqr;
use nrt_sim::{FaultKind, FaultSpec, InstrSelector, SimConfig, SimDevice};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };
const C0: CoreId = CoreId(0);
const LEN: u32 = 4096;
// Semaphores of the handshake.
const DOORBELL: u8 = 1;
const S_IN: u8 = 2;
const S_OUT: u8 = 3;
const TO_ACT: u8 = 4;
const FROM_ACT: u8 = 5;
// Wait / update modes (seed-siblings §3.1).
const GE: u8 = 5;
const SUB_IMM: u8 = 7;
const INC_DONE: u8 = 19;
const Q_IN: DmaQueueId = DmaQueueId { engine: 0, queue: 0 };
const Q_OUT: DmaQueueId = DmaQueueId { engine: 1, queue: 0 };

struct Rig {
    dev: SimDevice,
    output: DeviceAddr,
    sp_nq: Arc<dyn NqRing>,
    act_nq: Arc<dyn NqRing>,
    err_nq: Arc<dyn NqRing>,
}

fn device(deterministic: bool, faults: &[FaultSpec]) -> SimDevice {
    let mut b = SimConfig::builder().deterministic(deterministic).hbm_bytes_per_channel(256 << 20);
    for f in faults {
        b = b.fault(f.clone());
    }
    SimDevice::new(&b.build(), 0)
}

fn stream(dev: &SimDevice, records: &[[u8; 64]]) -> (DeviceAddr, u64) {
    let bytes: Vec<u8> = records.iter().flatten().copied().collect();
    let a = dev.alloc(HBM0, bytes.len() as u64, 64).unwrap();
    dev.write(a, &bytes).unwrap();
    (a, bytes.len() as u64)
}

fn queue(dev: &SimDevice, q: DmaQueueId, src: DeviceAddr, dst: DeviceAddr, sem: u8) {
    let tx = dev.alloc(HBM0, 32 * 16, 256).unwrap();
    let rx = dev.alloc(HBM0, 32 * 16, 256).unwrap();
    let (t, r) = udma_copy_pair(src, dst, LEN);
    for slot in 0..32u64 {
        dev.write(tx.offset(slot * 16), &t).unwrap();
        dev.write(rx.offset(slot * 16), &r).unwrap();
    }
    let cfg = DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 32, completion_semaphore: Some(u32::from(sem)), completion_event: None };
    dev.dma_queue_init(C0, q, cfg).unwrap();
}

fn ring(dev: &SimDevice, engine: u8, ty: NqType, cap: u32) -> Arc<dyn NqRing> {
    let bytes = cap * 16;
    let r = dev.alloc(HBM0, u64::from(bytes), u64::from(bytes)).unwrap();
    dev.memset(r, 0, u64::from(bytes)).unwrap();
    dev.nq_init(NqSpec { core: C0, engine_index: engine, nq_type: ty, ring: r, size_bytes: bytes }).unwrap()
}

/// SP: doorbell wait, DMA in, hand over to ACT, wait for ACT, DMA out,
/// wait for it, exit. ACT: wait for SP, answer, exit.
fn rig(dev: SimDevice) -> Rig {
    let arch = dev.info().arch;
    let input = dev.alloc(HBM0, u64::from(LEN), 0).unwrap();
    let output = dev.alloc(HBM0, u64::from(LEN), 0).unwrap();
    let data: Vec<u8> = (0..LEN).map(|i| (i * 7 % 251) as u8).collect();
    dev.write(input, &data).unwrap();
    dev.memset(output, 0, u64::from(LEN)).unwrap();
    let sbuf = arch.sbuf_addr(C0).offset(3 * arch.sbuf_partition_bytes);
    queue(&dev, Q_IN, input, sbuf, S_IN);
    queue(&dev, Q_OUT, sbuf, output, S_OUT);
    let sp_nq = ring(&dev, EngineId::Sp.index() as u8, NqType::Notify, 16);
    let act_nq = ring(&dev, EngineId::Act.index() as u8, NqType::Notify, 16);
    let err_nq = ring(&dev, 0, NqType::Error, 16);
    let inc = |q, g| arch.dma_tail_inc_addr(C0, q, g).get();
    let sp = [
        build::record(0xA0, (GE, DOORBELL), (SUB_IMM, DOORBELL), 1),
        build::write(inc(Q_IN, DMA_M2S_GROUP), 1),
        build::write(inc(Q_IN, DMA_S2M_GROUP), 1),
        build::record(0xA0, (GE, S_IN), (SUB_IMM, S_IN), 1),
        build::record(0xA4, (0, 0), (INC_DONE, TO_ACT), 0),
        build::record(0xA0, (GE, FROM_ACT), (SUB_IMM, FROM_ACT), 1),
        build::write(inc(Q_OUT, DMA_M2S_GROUP), 1),
        build::write(inc(Q_OUT, DMA_S2M_GROUP), 1),
        build::record(0xA0, (GE, S_OUT), (SUB_IMM, S_OUT), 1),
        build::exit(),
    ];
    let act = [
        build::record(0xA0, (GE, TO_ACT), (SUB_IMM, TO_ACT), 1),
        build::record(0xA4, (0, 0), (INC_DONE, FROM_ACT), 0),
        build::exit(),
    ];
    let (sa, sl) = stream(&dev, &sp);
    let (aa, al) = stream(&dev, &act);
    dev.start_engine(C0, EngineId::Sp, sa, sl).unwrap();
    dev.start_engine(C0, EngineId::Act, aa, al).unwrap();
    Rig { dev, output, sp_nq, act_nq, err_nq }
}

fn records(nq: &Arc<dyn NqRing>) -> Vec<[u8; 16]> {
    let mut out = vec![[0u8; 16]; 64];
    let n = nq.read(0, &mut out);
    out.truncate(n);
    out
}

fn wait_records(nq: &Arc<dyn NqRing>, n: u64) {
    wait_until("notification records", || nq.produced() >= n);
}

/// Gives a device that must *not* make progress a moment to go wrong.
fn settle(dev: &SimDevice) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(50) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = dev.info();
}

fn run_once(deterministic: bool) -> (Vec<[u8; 16]>, Vec<[u8; 16]>, Vec<u8>) {
    let r = rig(device(deterministic, &[]));
    for exec in 1..=2u64 {
        r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
        wait_records(&r.sp_nq, 2 * exec);
        wait_records(&r.act_nq, 2 * exec);
    }
    let mut out = vec![0u8; LEN as usize];
    r.dev.read(r.output, &mut out).unwrap();
    (records(&r.sp_nq), records(&r.act_nq), out)
}

fn check_handshake(deterministic: bool) {
    let (sp, act, out) = run_once(deterministic);
    let expect: Vec<u8> = (0..LEN).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(out, expect, "DMA in then out must carry the input to the output");
    for (recs, e) in [(&sp, EngineId::Sp), (&act, EngineId::Act)] {
        assert_eq!(recs.len(), 4, "{e}: START, END per execution, two executions");
        let ne = NqEngine::from_index(e.index() as u8).unwrap();
        let start = (Some(NotificType::for_engine(ne, EngineEvent::InstStart)), Some(RuntimeSubtype::Start));
        let end = (Some(NotificType::for_engine(ne, EngineEvent::InstEnd)), Some(RuntimeSubtype::End));
        let kinds: Vec<_> = recs.iter().map(|r| (nqr::decode(r).kind(), nqr::decode(r).runtime_subtype())).collect();
        assert_eq!(kinds, vec![start, end, start, end], "{e} record sequence");
        let ts: Vec<u64> = recs.iter().map(|r| nqr::decode(r).timestamp_ps).collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{e}: timestamps must not go back: {ts:?}");
    }
    // ACT can only start after the DMA in completed, which takes virtual time.
    let ts = |r: &[u8; 16]| nqr::decode(r).timestamp_ps;
    assert!(ts(&act[0]) >= nrt_sim::cost::dma(u64::from(LEN)), "ACT START before the DMA could finish");
    // SP's END comes after ACT's END (it waits for ACT, then the DMA out).
    assert!(ts(&sp[1]) > ts(&act[1]));
    assert_eq!(nqr::decode(&sp[1]).program_counter, 9, "END carries the EXIT record's index");
}

#[test]
fn two_engines_handshake_with_dma_pool() {
    check_handshake(false);
}

#[test]
fn two_engines_handshake_with_dma_deterministic() {
    check_handshake(true);
}

#[test]
fn deterministic_runs_are_bit_identical() {
    let a = run_once(true);
    let b = run_once(true);
    assert_eq!(a, b, "records (with timestamps) and bytes must match run to run");
}

#[test]
fn idle_device_costs_nothing() {
    let dev = SimDevice::new(&SimConfig::default(), 0);
    assert!(dev.started_cores().is_empty());
    assert_eq!(dev.worker_threads(), 0);
    let mut held = Vec::new();
    for ch in 0..4 {
        held.push(dev.alloc(MemoryLocation::Hbm { channel: ch }, 23 << 30, 0).unwrap());
    }
    assert_eq!(dev.resident_pages(), 0, "92 GiB allocated, nothing touched");
    dev.write(held[2].offset(5 << 30), &[1, 2, 3]).unwrap();
    assert_eq!(dev.resident_pages(), 1);
    assert!(dev.started_cores().is_empty(), "memory traffic does not start cores");
}

fn error_records(r: &Rig) -> Vec<(InferErrorSubtype, u16)> {
    records(&r.err_nq)
        .iter()
        .map(|x| nqr::decode_error(x).expect("error ring holds error records"))
        .map(|e| (e.subtype, e.detail))
        .collect()
}

#[test]
fn hang_leaves_no_end_record() {
    let r = rig(device(true, &[FaultSpec::new(FaultKind::Hang).on_core(0).at(InstrSelector::Index(1))]));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 1);
    settle(&r.dev);
    let sp = records(&r.sp_nq);
    assert_eq!(sp.len(), 1, "START only: the hung engine never ends");
    assert_eq!(r.dev.engine_state(C0, EngineId::Sp), Some(RunState::Hung));
    assert!(error_records(&r).is_empty(), "a hang is silent");
}

#[test]
fn hbm_ue_writes_an_error_record_and_stops() {
    for (kind, sub) in [
        (FaultKind::HbmUe, InferErrorSubtype::HbmUncorrectable),
        (FaultKind::HbmUeRepairable, InferErrorSubtype::HbmRepairable),
        (FaultKind::SramParity, InferErrorSubtype::EccUncorrectable),
    ] {
        let r = rig(device(true, &[FaultSpec::new(kind).at(InstrSelector::Name("NOP".into()))]));
        r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
        wait_records(&r.err_nq, 1);
        settle(&r.dev);
        assert_eq!(error_records(&r)[0].0, sub, "{kind}");
        assert_eq!(records(&r.sp_nq).len(), 1, "{kind}: SP (first NOP) never reaches END");
    }
}

#[test]
fn dma_abort_leaves_an_aborted_queue() {
    let r = rig(device(true, &[FaultSpec::new(FaultKind::DmaAbort)]));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.err_nq, 1);
    settle(&r.dev);
    assert_eq!(r.dev.dma_queue_state(C0, Q_IN).unwrap().status, DmaQueueStatus::Aborted);
    assert_eq!(error_records(&r), vec![(InferErrorSubtype::DmaAbort, 0)]);
    assert_eq!(r.dev.semaphore_read(C0, u32::from(S_IN)).unwrap(), 0, "no completion increment");
    assert_eq!(records(&r.sp_nq).len(), 1, "SP waits forever: no END");
}

#[test]
fn nan_reaches_memory_and_the_error_ring() {
    // The first packet (DMA in) is clean, the second (DMA out) gets a NaN.
    let r = rig(device(false, &[FaultSpec::new(FaultKind::Nan).after(1)]));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 2);
    let mut out = [0u8; 4];
    r.dev.read(r.output, &mut out).unwrap();
    assert!(f32::from_le_bytes(out).is_nan());
    // The error record names the queue: DMA engine 1, queue 0 = index 16.
    assert_eq!(error_records(&r), vec![(InferErrorSubtype::Numerical, 16)]);
}

#[test]
fn nq_overflow_drops_a_record_and_raises_the_flag() {
    let r = rig(device(true, &[FaultSpec::new(FaultKind::NqOverflow).at(InstrSelector::Index(1))]));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.act_nq, 2);
    settle(&r.dev);
    let flagged = [&r.sp_nq, &r.act_nq].iter().filter(|q| q.overflowed()).count();
    assert_eq!(flagged, 1, "exactly one ring overflowed");
    let sp = records(&r.sp_nq);
    let act = records(&r.act_nq);
    assert_eq!(sp.len() + act.len(), 3, "one of the four START/END records was lost");
}

#[test]
fn oob_reports_a_custom_notification() {
    let r = rig(device(true, &[FaultSpec::new(FaultKind::Oob).on_core(0).at(InstrSelector::Index(1))]));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 3);
    let custom: Vec<_> = records(&r.sp_nq)
        .into_iter()
        .chain(records(&r.act_nq))
        .map(|x| nqr::decode(&x))
        .filter(|x| x.runtime_subtype() == Some(RuntimeSubtype::Custom))
        .map(|x| x.custom_sub_id())
        .collect();
    assert_eq!(custom, vec![Some(nqr::OOB_SUB_ID)]);
}

#[test]
fn unsupported_instruction_is_a_device_fault() {
    // MATMUL_MX (0x0A) has no layout: the device cannot execute it.
    let dev = device(true, &[]);
    let err = ring(&dev, 0, NqType::Error, 4);
    let (a, l) = stream(&dev, &[build::record(0x0A, (0, 0), (0, 0), 0), build::exit()]);
    dev.start_engine(C0, EngineId::Pe, a, l).unwrap();
    wait_until("error record", || err.produced() >= 1);
    let rec = nqr::decode_error(&records(&err)[0]).unwrap();
    assert_eq!((rec.subtype, rec.detail), (InferErrorSubtype::SwSequencer, 0x0A), "sequencer fault naming the opcode");
    assert_eq!(dev.engine_state(C0, EngineId::Pe), Some(RunState::Halted));
}

#[test]
fn dmamemcpy_is_a_device_fault() {
    // DMAMEMCPY (0xB8) has no public layout: the sequencer does not move
    // bytes on its own; transfers go through DMA queues.
    let dev = device(true, &[]);
    let err = ring(&dev, 0, NqType::Error, 4);
    let (a, l) = stream(&dev, &[build::record(0xB8, (0, 0), (0, 0), 0), build::exit()]);
    dev.start_engine(C0, EngineId::Pe, a, l).unwrap();
    wait_until("error record", || err.produced() >= 1);
    let rec = nqr::decode_error(&records(&err)[0]).unwrap();
    assert_eq!((rec.subtype, rec.detail), (InferErrorSubtype::SwSequencer, 0xB8), "sequencer fault naming the opcode");
    assert_eq!(dev.engine_state(C0, EngineId::Pe), Some(RunState::Halted));
}

#[test]
fn matmul_without_weights_is_a_bad_operand_fault() {
    let dev = device(true, &[]);
    let err = ring(&dev, 0, NqType::Error, 4);
    let (a, l) = stream(&dev, &[build::record(0x02, (0, 0), (0, 0), 0), build::exit()]);
    dev.start_engine(C0, EngineId::Pe, a, l).unwrap();
    wait_until("error record", || err.produced() >= 1);
    let rec = nqr::decode_error(&records(&err)[0]).unwrap();
    let detail = nrt_sim::engine::BAD_OPERANDS_DETAIL | 0x02;
    assert_eq!((rec.subtype, rec.detail), (InferErrorSubtype::SwSequencer, detail), "bad-operands fault naming MATMUL");
    assert_eq!(dev.engine_state(C0, EngineId::Pe), Some(RunState::Halted));
}

#[test]
fn runtime_injection_api_arms_faults() {
    let r = rig(device(true, &[]));
    r.dev.inject(FaultSpec::new(FaultKind::Hang).after(1));
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 2);
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 3);
    settle(&r.dev);
    // SP takes the second doorbell, starts, and hangs before handing over,
    // so ACT never starts its second execution.
    assert_eq!(records(&r.sp_nq).len(), 3, "SP: START, END, START");
    assert_eq!(records(&r.act_nq).len(), 2, "ACT: first execution only");
    assert_eq!(r.dev.engine_state(C0, EngineId::Sp), Some(RunState::Hung));
}

#[test]
fn pattern_dma_casts_and_transposes_through_the_ring() {
    use nrt_isa::dma_desc::{DmaOp, PATTERN_BIT, PATTERN_BLOCK_SIZE, PatternBlock, PatternDim, PatternSide, TransposeSpec};
    use nrt_isa::dtype::Dtype;
    let dev = device(false, &[]);
    let (rows, cols) = (3u32, 5u32);
    let n = rows * cols;
    let src = dev.alloc(HBM0, u64::from(4 * n), 0).unwrap();
    let mid = dev.alloc(HBM0, u64::from(4 * n), 0).unwrap();
    let dst = dev.alloc(HBM0, u64::from(2 * n), 0).unwrap();
    let vals: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    dev.write(src, &vals.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    let side = |addr: DeviceAddr, dtype: Dtype| {
        let mut dims = [PatternDim::default(); 4];
        dims[0] = PatternDim { step: dtype.size_bytes() as i32, size: n * dtype.size_bytes() as u32 };
        PatternSide { addr: addr.get(), dtype, ndims: 1, dims }
    };
    // Packet 1: transpose the 3x5 f32 matrix; packet 2: cast to bf16.
    let transpose = PatternBlock {
        op: DmaOp::Transpose,
        src: side(src, Dtype::Float32),
        dst: side(mid, Dtype::Float32),
        scale: 1.0,
        constant: None,
        transpose: Some(TransposeSpec { shape: [cols, rows, 0, 0], elem_size: 4 }),
    };
    let cast = PatternBlock::contiguous_copy(mid.get(), Dtype::Float32, dst.get(), Dtype::Bfloat16, n);
    let tx = dev.alloc(HBM0, 32 * 16, 256).unwrap();
    let rx = dev.alloc(HBM0, 32 * 16, 256).unwrap();
    for (slot, block) in [transpose, cast].iter().enumerate() {
        let at = dev.alloc(HBM0, PATTERN_BLOCK_SIZE as u64, 64).unwrap();
        dev.write(at, &block.to_bytes().unwrap()).unwrap();
        let (mut t, mut r) = udma_copy_pair(at, at, PATTERN_BLOCK_SIZE as u32);
        t[3] |= (PATTERN_BIT >> 24) as u8;
        r[3] |= (PATTERN_BIT >> 24) as u8;
        dev.write(tx.offset(slot as u64 * 16), &t).unwrap();
        dev.write(rx.offset(slot as u64 * 16), &r).unwrap();
    }
    let q = DmaQueueId { engine: 2, queue: 3 };
    dev.dma_queue_init(C0, q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 32, completion_semaphore: Some(9), completion_event: None }).unwrap();
    dev.dma_tail_increment(C0, q, 2, 2).unwrap();
    wait_until("two pattern packets", || dev.semaphore_read(C0, 9).unwrap() >= 2);
    let mut out = vec![0u8; 2 * n as usize];
    dev.read(dst, &mut out).unwrap();
    let got: Vec<f32> = out.chunks(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32()).collect();
    for r in 0..rows as usize {
        for c in 0..cols as usize {
            let want = half::bf16::from_f32(vals[r * cols as usize + c]).to_f32();
            assert_eq!(got[c * rows as usize + r], want, "element ({r},{c}) after transpose + cast");
        }
    }
}

#[test]
fn isa_encoded_control_stream_runs() {
    use nrt_isa::instr::{CtrlEr, EventSemaphore, Head, Notify, PseudoInst, PseudoSub, ResetTarget};
    use nrt_isa::record::{Events, UpdateMode, WaitMode};
    let dev = device(true, &[]);
    let pool = EngineId::Pool.index() as u8;
    let nq = ring(&dev, pool, NqType::Notify, 16);
    dev.semaphore_set(C0, 40, 7).unwrap();
    dev.semaphore_set(C0, 41, 8).unwrap();
    let wait = Events {
        wait_mode: WaitMode::SemGeImm,
        wait_idx: DOORBELL,
        update_mode: UpdateMode::SemSubImmRead,
        update_idx: DOORBELL,
        value: 1,
    };
    let stream_bytes: Vec<[u8; 64]> = vec![
        EventSemaphore { head: Head::with_events(wait), ..Default::default() }.encode(),
        Notify { queue: pool, subtype: 6, sub_id: 6, payload: 0, ..Default::default() }.encode(),
        CtrlEr { target: ResetTarget::Semaphores, first: 40, last: 41, ..Default::default() }.encode(),
        PseudoInst { sub: PseudoSub::ExitExecution, ..Default::default() }.encode(),
    ];
    let (a, l) = stream(&dev, &stream_bytes);
    dev.start_engine(C0, EngineId::Pool, a, l).unwrap();
    dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&nq, 3);
    let kinds: Vec<_> = records(&nq).iter().map(|r| nqr::decode(r).runtime_subtype()).collect();
    assert_eq!(kinds, vec![Some(RuntimeSubtype::Start), Some(RuntimeSubtype::Custom), Some(RuntimeSubtype::End)]);
    assert_eq!((dev.semaphore_read(C0, 40).unwrap(), dev.semaphore_read(C0, 41).unwrap()), (0, 0), "CTRL_ER reset the range");
}

#[test]
fn register_loop_runs_three_times() {
    use nrt_isa::instr::{AluOp, BranchCmp, BranchTarget, CtrlAl, CtrlBr, DataSource, DtypeCode, Notify, PseudoInst, PseudoSub};
    let dev = device(true, &[]);
    let sp = EngineId::Sp.index() as u8;
    let nq = ring(&dev, sp, NqType::Notify, 16);
    let int32 = DtypeCode(8);
    let program: Vec<[u8; 64]> = vec![
        build::record(0xA0, (GE, DOORBELL), (SUB_IMM, DOORBELL), 1),
        // r1 = r1 bypass (r1 starts at 0 every start)
        CtrlAl { op: AluOp::Bypass, dtype: int32, src1: DataSource::Imm, src0_reg: 1, dst_reg: 1, imm: 0, ..Default::default() }.encode(),
        Notify { queue: sp, subtype: 6, sub_id: 6, payload: 0, ..Default::default() }.encode(),
        CtrlAl { op: AluOp::Add, dtype: int32, src1: DataSource::Imm, src0_reg: 1, dst_reg: 1, imm: 1, ..Default::default() }.encode(),
        CtrlBr { cmp: BranchCmp::Lt, dtype: int32, target: BranchTarget::RelImm, imm: 3, cmp_reg: 1, rel_offset: -2, ..Default::default() }.encode(),
        PseudoInst { sub: PseudoSub::ExitExecution, ..Default::default() }.encode(),
    ];
    let (a, l) = stream(&dev, &program);
    dev.start_engine(C0, EngineId::Sp, a, l).unwrap();
    dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&nq, 5);
    settle(&dev);
    let subtypes: Vec<_> = records(&nq).iter().map(|r| nqr::decode(r).runtime_subtype()).collect();
    let (s, c, e) = (Some(RuntimeSubtype::Start), Some(RuntimeSubtype::Custom), Some(RuntimeSubtype::End));
    assert_eq!(subtypes, vec![s, c, c, c, e], "the loop body ran three times");
}

#[test]
fn deterministic_runaway_loop_does_not_capture_the_host() {
    use nrt_isa::instr::{BranchCmp, BranchTarget, CtrlBr, DtypeCode};
    let cfg = SimConfig::builder().deterministic(true).deterministic_drain_limit(1 << 10).hbm_bytes_per_channel(64 << 20).build();
    let dev = SimDevice::new(&cfg, 0);
    let spin = CtrlBr { cmp: BranchCmp::Always, dtype: DtypeCode(8), target: BranchTarget::RelImm, rel_offset: 0, ..Default::default() };
    let program = vec![build::record(0xA0, (GE, DOORBELL), (SUB_IMM, DOORBELL), 1), spin.encode()];
    let (a, l) = stream(&dev, &program);
    dev.start_engine(C0, EngineId::Dve, a, l).unwrap();
    let t = Instant::now();
    // Without the hand-off this call would never return.
    dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    assert!(t.elapsed() < Duration::from_secs(60));
    assert_eq!(dev.worker_threads(), 1, "the loop continues on one background worker");
    dev.reset_core(C0).unwrap();
}

#[test]
fn trace_rings_record_instructions_and_dma_packets() {
    let r = rig(device(true, &[]));
    let sp = EngineId::Sp.index() as u8;
    let trace = ring(&r.dev, sp, NqType::Trace, 64);
    let dma_trace = ring(&r.dev, Q_OUT.engine, NqType::TraceDma, 16);
    // Re-write SP's fourth record (the handover NOP) with debug_cmd START_END.
    let mut nop = build::record(0xA4, (0, 0), (INC_DONE, TO_ACT), 0);
    nop[2] = 7;
    let arch = r.dev.info().arch;
    let inc = |q, g| arch.dma_tail_inc_addr(C0, q, g).get();
    let sp_prog = [
        build::record(0xA0, (GE, DOORBELL), (SUB_IMM, DOORBELL), 1),
        build::write(inc(Q_IN, DMA_M2S_GROUP), 1),
        build::write(inc(Q_IN, DMA_S2M_GROUP), 1),
        build::record(0xA0, (GE, S_IN), (SUB_IMM, S_IN), 1),
        nop,
        build::record(0xA0, (GE, FROM_ACT), (SUB_IMM, FROM_ACT), 1),
        build::write(inc(Q_OUT, DMA_M2S_GROUP), 1),
        build::write(inc(Q_OUT, DMA_S2M_GROUP), 1),
        build::record(0xA0, (GE, S_OUT), (SUB_IMM, S_OUT), 1),
        build::exit(),
    ];
    let (a, l) = stream(&r.dev, &sp_prog);
    r.dev.start_engine(C0, EngineId::Sp, a, l).unwrap();
    r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
    wait_records(&r.sp_nq, 2);
    let t: Vec<_> = records(&trace).iter().map(nqr::decode).collect();
    assert_eq!(t.len(), 2, "START and END trace of the one traced record");
    assert_eq!(t[0].kind(), Some(NotificType::SpInstStart));
    assert_eq!(t[1].kind(), Some(NotificType::SpInstEnd));
    assert_eq!((t[0].program_counter, t[0].metadata_2), (4, 0xA4));
    assert!(t[1].timestamp_ps > t[0].timestamp_ps, "the instruction took virtual time");
    let d: Vec<_> = records(&dma_trace).iter().map(nqr::decode).collect();
    assert_eq!(d.len(), 2, "one packet on DMA engine 1 (the output queue): its start and end");
    assert!(d.iter().all(|r| r.kind() == Some(NotificType::Dma)));
    assert_eq!(d[0].metadata_2, 16 | (LEN << 8) | 1 << 31, "the start record");
    assert_eq!(d[1].metadata_2, 16 | (LEN << 8), "the end record");
    assert!(d[1].timestamp_ps > d[0].timestamp_ps, "the packet took virtual time");
}

#[test]
fn many_executions_in_pool_mode_lose_no_wakeup() {
    let r = rig(device(false, &[]));
    // 40 executions: the rings hold 16 records, so acknowledge as we go.
    let mut seen = [0u64; 2];
    for exec in 1..=40u64 {
        r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
        for (k, nq) in [&r.sp_nq, &r.act_nq].into_iter().enumerate() {
            wait_records(nq, 2 * exec);
            seen[k] = nq.produced();
            nq.set_consumed(seen[k]);
        }
    }
    assert_eq!(seen, [80, 80]);
    assert!(!r.sp_nq.overflowed() && !r.act_nq.overflowed());
    for s in [DOORBELL, S_IN, S_OUT, TO_ACT, FROM_ACT] {
        assert_eq!(r.dev.semaphore_read(C0, u32::from(s)).unwrap(), 0, "semaphore {s} balanced");
    }
}

#[test]
fn a_lost_device_fails_every_call_with_device_lost() {
    let r = rig(device(false, &[]));
    r.dev.lose("link down");
    let mut b = [0u8; 4];
    for res in [
        r.dev.read(r.output, &mut b).err(),
        r.dev.semaphore_increment(C0, u32::from(DOORBELL), 1).err(),
        r.dev.alloc(HBM0, 64, 0).err(),
        r.dev.reserve_cores(&[C0]).err(),
    ] {
        match res {
            Some(nrt_hal::HalError::DeviceLost { reason }) => assert!(reason.contains("link down"), "{reason}"),
            other => panic!("expected DeviceLost, got {other:?}"),
        }
    }
    assert!(r.dev.info().physical_cores > 0, "discovery still answers");
}

#[test]
fn a_record_that_does_not_fit_its_layout_is_a_device_fault() {
    // A NOP with a payload byte set: nrt-isa's decoder rejects it.
    let dev = device(true, &[]);
    let err = ring(&dev, 0, NqType::Error, 4);
    let mut nop = build::record(0xA4, (0, 0), (0, 0), 0);
    nop[0x30] = 1;
    let (a, l) = stream(&dev, &[nop, build::exit()]);
    dev.start_engine(C0, EngineId::Pe, a, l).unwrap();
    wait_until("error record", || err.produced() >= 1);
    let rec = nqr::decode_error(&records(&err)[0]).unwrap();
    let detail = nrt_sim::engine::MALFORMED_RECORD_DETAIL | 0xA4;
    assert_eq!((rec.subtype, rec.detail), (InferErrorSubtype::SwSequencer, detail));
    assert_eq!(dev.engine_state(C0, EngineId::Pe), Some(RunState::Halted));
}
