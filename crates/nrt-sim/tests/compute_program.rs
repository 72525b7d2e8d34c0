//! Whole compute programs through the sequencers: the real compiler
//! sample's PE / ACT streams (`matmul_small.neff`, real-isa-observed §1 and
//! §4) checked against x @ y computed here, a hand-written PE <-> ACT
//! semaphore handshake on real compute, and determinism of both.

mod common;

use common::*;
use nrt_hal::{Device, EngineId};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::*;
use nrt_isa::operand::{Addr4, Tensor3d};
use nrt_isa::record::{Events, UpdateMode};

const NEFF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/neff/matmul_small.neff");

/// sg00's PE and Activation streams, without the PSEUDO_BRANCH_LABEL
/// records the runtime consumes at load; `None` (the calling test
/// reported skipped) when the sample is absent.
fn real_streams() -> Option<(Vec<u8>, Vec<u8>)> {
    let Ok(bytes) = std::fs::read(NEFF) else {
        nrt_test_support::skip!(return None; "{NEFF} is absent (the compiler's sample lives beside the checkout)");
    };
    let neff = nrt_neff::Neff::parse(&bytes).expect("the sample parses");
    let strip = |name: &str| -> Vec<u8> {
        let raw = neff.member(name).unwrap_or_else(|| panic!("{name} in the sample"));
        raw.chunks_exact(64).filter(|r| r[0] != 0xCC).flatten().copied().collect()
    };
    Some((strip("sg00/PE.bin"), strip("sg00/Activation.bin")))
}

struct Real {
    x: Vec<Vec<f32>>,
    y: Vec<Vec<f32>>,
}

/// Stages x, y and the identity as the sample's DMAs would, runs PE and
/// ACT, and releases them by setting the DMA completion semaphores.
fn run_real(rig: &Rig, pe: &[u8], act: &[u8]) -> Real {
    let f16 = Dtype::Float16;
    let x = matrix(100, 128, 256, 1.0, f16);
    let y = matrix(101, 256, 128, 1.0, f16);
    let eye: Vec<Vec<f32>> = (0..128).map(|i| (0..128).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    rig.stage(0x37b00, f16, &eye);
    rig.stage(0x37c00, f16, &x);
    // sg00 computes output columns 0..64: y[0:128, 0:64] at 0x37f00, y[128:256, 0:64] at 0x37e00.
    let half = |rows: std::ops::Range<usize>| -> Vec<Vec<f32>> { rows.map(|k| y[k][..64].to_vec()).collect() };
    rig.stage(0x37f00, f16, &half(0..128));
    rig.stage(0x37e00, f16, &half(128..256));
    rig.load_bytes(EngineId::Pe, pe);
    rig.load_bytes(EngineId::Act, act);
    for sem in [8, 24, 25, 26] {
        rig.dev.semaphore_set(C0, sem, 16).unwrap();
    }
    Real { x, y }
}

#[test]
fn real_sample_pe_and_act_streams_compute_x_at_y() {
    let Some((pe, act)) = real_streams() else { return };
    let rig = Rig::new(&[]);
    let Real { x, y } = run_real(&rig, &pe, &act);
    rig.assert_clean(EngineId::Pe);
    rig.assert_clean(EngineId::Act);
    assert_eq!((rig.dev.semaphore_read(C0, 4).unwrap(), rig.dev.semaphore_read(C0, 5).unwrap()), (2, 4), "final S4 / S5 (§4)");

    // xᵀ, made by the PE transposes and copied by ACT as int32 words, is bit-exact.
    for k in 0..256 {
        let col: Vec<f32> = x.iter().map(|r| r[k]).collect();
        let (p, off) = (k % 128, 0x4000 + (k / 128) * 0x100);
        assert_eq!(rig.read_sbuf(p, off, 256), encode(&col, Dtype::Float16), "xT row {k} in SBUF");
    }
    // out = x @ y[:, 0:64], accumulated in fp32 over both K tiles.
    let want: Vec<Vec<f32>> = x
        .iter()
        .map(|xr| (0..64).map(|n| xr.iter().zip(&y).map(|(a, yr)| f64::from(*a) * f64::from(yr[n])).sum::<f64>() as f32).collect())
        .collect();
    assert_close(&rig.psum_values(0, Dtype::Float32, 128, 64), &want, 1e-5, "PSUM bank 0");
    assert_close(&rig.sbuf_values(0x4200, Dtype::Float32, 128, 64), &want, 1e-5, "fp32 copy at SBUF 0x4200");
}

#[test]
fn real_sample_is_deterministic() {
    let Some((pe, act)) = real_streams() else { return };
    let snapshot = || {
        let rig = Rig::new(&[]);
        run_real(&rig, &pe, &act);
        let sbuf: Vec<Vec<u8>> = (0..128).map(|p| rig.read_sbuf(p, 0x4000, 0x300)).collect();
        let psum: Vec<Vec<u8>> = (0..128).map(|p| rig.read_psum(p, 0, 0xA00)).collect();
        (sbuf, psum, rig.notify_records(EngineId::Pe), rig.notify_records(EngineId::Act))
    };
    let a = snapshot();
    assert_eq!(a, snapshot(), "bytes and NQ records (with timestamps) repeat exactly");
    assert!(!a.2.is_empty() && !a.3.is_empty(), "START/END records were written");
}

/// Rows of f32 values, one per partition.
type Matrix = Vec<Vec<f32>>;

fn events(wait: Option<(u8, u32)>, inc_on_complete: Option<u8>) -> Head {
    let mut e = match wait {
        Some((s, v)) => Events::wait_sem_ge(s, v),
        None => Events::NONE,
    };
    if let Some(s) = inc_on_complete {
        e = e.with_update(UpdateMode::SemIncComplete, s);
    }
    Head::with_events(e)
}

fn ldw(base: u32, k: u8, m: u8, head: Head) -> Instruction {
    let weights = Tensor3d { start: Addr4(base + (u32::from(m) - 1) * 4), step: [-1, 0, 0], num: [u16::from(m), 1, 1] };
    LdWeights { head, weights, dtype: DtypeCode::of(Dtype::Float32), rows: k, cols: m, ..Default::default() }.into()
}

fn mm(moving: u32, n: u16, k: u8, m: u8, psum: u32, head: Head) -> Instruction {
    let f32c = DtypeCode::of(Dtype::Float32);
    Matmul { head, moving: t3(moving, n), dtype: f32c, rows: k, cols: m, accumulate: Accumulate::Single, psum: t3(psum, n), ..Default::default() }
        .into()
}

/// PE: h = Wᵀx into PSUM (S5++), then waits for ACT (S4 >= 1) and computes
/// Vᵀ relu(h - 0.5). ACT: waits for S5 >= 1, relu(h - 0.5) PSUM -> SBUF (S4++).
fn handshake(rig: &Rig) -> [Matrix; 3] {
    let f32d = Dtype::Float32;
    let (w, x, v) = (matrix(200, 32, 16, 1.0, f32d), matrix(201, 32, 8, 1.0, f32d), matrix(202, 16, 12, 1.0, f32d));
    rig.stage(0x0, f32d, &w);
    rig.stage(0x200, f32d, &x);
    rig.stage(0x400, f32d, &v);
    let act = Activate {
        head: events(Some((5, 1)), Some(4)),
        func: ActFunc::Relu,
        in_dtype: DtypeCode::of(f32d),
        out_dtype: DtypeCode::of(f32d),
        partitions: 16,
        input: t3(PSUM, 8),
        output: t3(0x600, 8),
        scale: F32Bits::new(1.0),
        bias: F32Bits::new(-0.5),
        ..Default::default()
    };
    rig.load(EngineId::Act, &[act.into()]);
    rig.load(
        EngineId::Pe,
        &[
            ldw(0x0, 32, 16, Head::default()),
            mm(0x200, 8, 32, 16, PSUM, events(None, Some(5))),
            ldw(0x400, 16, 12, events(Some((4, 1)), None)),
            mm(0x600, 8, 16, 12, PSUM + 0x100, Head::default()),
        ],
    );
    rig.ring();
    rig.ring();
    [w, x, v]
}

#[test]
fn pe_and_act_handshake_through_semaphores_on_real_compute() {
    let rig = Rig::new(&[]);
    let [w, x, v] = handshake(&rig);
    rig.assert_clean(EngineId::Pe);
    rig.assert_clean(EngineId::Act);
    let h: Vec<Vec<f32>> =
        (0..16).map(|m| (0..8).map(|n| ((0..32).map(|k| w[k][m] * x[k][n]).sum::<f32>() - 0.5).max(0.0)).collect()).collect();
    assert_close(&rig.sbuf_values(0x600, Dtype::Float32, 16, 8), &h, 1e-5, "ACT output");
    let out: Vec<Vec<f32>> = (0..12).map(|j| (0..8).map(|n| (0..16).map(|m| v[m][j] * h[m][n]).sum::<f32>()).collect()).collect();
    assert_close(&rig.psum_values(0x100, Dtype::Float32, 12, 8), &out, 1e-5, "second matmul saw ACT's result");
    assert_eq!((rig.dev.semaphore_read(C0, 4).unwrap(), rig.dev.semaphore_read(C0, 5).unwrap()), (1, 1));
}

#[test]
fn hand_written_compute_program_is_deterministic() {
    let snapshot = || {
        let rig = Rig::new(&[]);
        handshake(&rig);
        let psum: Vec<Vec<u8>> = (0..16).map(|p| rig.read_psum(p, 0, 0x200)).collect();
        (psum, rig.notify_records(EngineId::Pe), rig.notify_records(EngineId::Act))
    };
    assert_eq!(snapshot(), snapshot());
}
