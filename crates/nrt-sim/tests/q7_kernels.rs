//! The example kernels built from Rust with the real wasm32 toolchain
//! (crates/nrt-kernel/kernels), run on the simulated Q7 cluster and
//! checked against references computed here.

mod q7rig;

use nrt_isa::notification::InferErrorSubtype;
use nrt_isa::ucode::{GpsimdCause, STDIO_ENTRY_BYTES, StdioEntryHeader, csr};
use nrt_hal::Device;
use nrt_sim::engine::RunState;
use q7rig::kernels::kernel_library;
use q7rig::{C0, Rig};

const RELU: u8 = 0;
const ADD: u8 = 1;
const SOFTMAX: u8 = 2;

fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 2000) as f32 / 100.0 - 10.0
        })
        .collect()
}

fn examples_rig(deterministic: bool) -> Option<Rig> {
    let (lib, names) = kernel_library("examples")?;
    assert_eq!(names, ["relu", "add", "softmax"]);
    let rig = Rig::new(deterministic);
    rig.install(&lib);
    Some(rig)
}

#[test]
fn relu_matches_the_reference_for_ragged_sizes() {
    let Some(rig) = examples_rig(true) else { return };
    for n in [1usize, 7, 1000, 4099, 70_001] {
        let x = values(n, n as u32);
        let (xa, ya) = (rig.put_f32(&x), rig.put_f32(&vec![f32::NAN; n]));
        let blk = Rig::block(vec![Rig::f32_tensor(xa, &[n as u32])], Some(Rig::f32_tensor(ya, &[n as u32])));
        rig.run(&rig.op_program(&blk, RELU, None));
        let want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
        assert_eq!(rig.get_f32(ya, n), want, "n = {n}");
        assert!(rig.error_records().is_empty());
    }
}

/// Ops of different kernels one after another on the same cores: each
/// core keeps its instance (and the kernel entry it last called) from op
/// to op, and must call the kernel each op names.
#[test]
fn alternating_kernels_on_the_same_cores_each_run_their_own() {
    let Some(rig) = examples_rig(true) else { return };
    let n = 5000usize;
    let (a, b) = (values(n, 11), values(n, 12));
    let (aa, ba, oa) = (rig.put_f32(&a), rig.put_f32(&b), rig.put_f32(&vec![0.0; n]));
    let relu = Rig::block(vec![Rig::f32_tensor(aa, &[n as u32])], Some(Rig::f32_tensor(oa, &[n as u32])));
    let add = Rig::block(vec![Rig::f32_tensor(aa, &[n as u32]), Rig::f32_tensor(ba, &[n as u32])], Some(Rig::f32_tensor(oa, &[n as u32])));
    for round in 0..2 {
        rig.run(&rig.op_program(&relu, RELU, None));
        assert_eq!(rig.get_f32(oa, n), a.iter().map(|v| v.max(0.0)).collect::<Vec<_>>(), "relu, round {round}");
        rig.run(&rig.op_program(&add, ADD, None));
        assert_eq!(rig.get_f32(oa, n), a.iter().zip(&b).map(|(x, y)| x + y).collect::<Vec<_>>(), "add, round {round}");
    }
    assert!(rig.error_records().is_empty());
}

#[test]
fn add_of_two_tensors_matches_the_reference() {
    let Some(rig) = examples_rig(false) else { return };
    let (a, b) = (values(3 * 1111, 1), values(3 * 1111, 2));
    let (aa, ba, oa) = (rig.put_f32(&a), rig.put_f32(&b), rig.put_f32(&vec![0.0; a.len()]));
    let blk = Rig::block(vec![Rig::f32_tensor(aa, &[3, 1111]), Rig::f32_tensor(ba, &[3, 1111])], Some(Rig::f32_tensor(oa, &[3, 1111])));
    rig.run(&rig.op_program(&blk, ADD, None));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(rig.get_f32(oa, a.len()), want);
    assert_eq!(rig.done_count(), 1);
}

fn softmax_ref(x: &[f32], cols: usize) -> Vec<f32> {
    x.chunks(cols)
        .flat_map(|r| {
            let m = r.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let e: Vec<f64> = r.iter().map(|&v| f64::from(v - m).exp()).collect();
            let s: f64 = e.iter().sum();
            e.into_iter().map(move |v| (v / s) as f32)
        })
        .collect()
}

#[test]
fn softmax_rows_split_across_cores_match_the_reference() {
    let Some(rig) = examples_rig(true) else { return };
    // 13 rows (not a multiple of 8) of 300; 3 rows of 5000 (longer than a TCM chunk).
    for (rows, cols) in [(13usize, 300usize), (3, 5000), (1, 1)] {
        let x = values(rows * cols, (rows * cols) as u32);
        let (xa, ya) = (rig.put_f32(&x), rig.put_f32(&vec![0.0; x.len()]));
        let dims = [rows as u32, cols as u32];
        let blk = Rig::block(vec![Rig::f32_tensor(xa, &dims)], Some(Rig::f32_tensor(ya, &dims)));
        rig.run(&rig.op_program(&blk, SOFTMAX, None));
        let got = rig.get_f32(ya, x.len());
        for (i, (g, w)) in got.iter().zip(softmax_ref(&x, cols)).enumerate() {
            assert!((g - w).abs() <= 1e-6 + 1e-5 * w.abs(), "[{rows}x{cols}] element {i}: {g} vs {w}");
        }
        for r in got.chunks(cols) {
            assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
    }
}

#[test]
fn relu_prints_through_the_stdio_ring() {
    let Some(rig) = examples_rig(true) else { return };
    let data = rig.install_stdout_ring(16);
    let x = rig.put_f32(&[1.0; 100]);
    let y = rig.put_f32(&[0.0; 100]);
    rig.run(&rig.op_program(&Rig::block(vec![Rig::f32_tensor(x, &[100])], Some(Rig::f32_tensor(y, &[100]))), RELU, None));
    let e = rig.get(data, STDIO_ENTRY_BYTES as usize);
    let h = StdioEntryHeader::decode(e[..16].try_into().unwrap());
    let text = std::str::from_utf8(&e[16..16 + h.len as usize]).unwrap();
    assert_eq!(text, "relu: 100 elements on 8 cores\n");
}

#[test]
fn buggy_kernels_fault_or_hang_and_the_device_lives_on() {
    let Some((buggy, names)) = kernel_library("buggy") else { return };
    assert_eq!(names, ["oob_write", "spin"]);
    let Some(rig) = examples_rig(true) else { return };
    rig.install(&buggy);
    rig.run(&rig.op_program(&Rig::block(vec![], None), 0, None));
    let e = rig.error_records();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].subtype, InferErrorSubtype::GpsimdException);
    assert_eq!(GpsimdCause::from_detail(e[0].detail).unwrap().0, GpsimdCause::MemoryOob);
    assert_eq!(rig.pool_state(), RunState::Halted);

    rig.dev.reset_core(C0).unwrap();
    rig.set_csr(csr::WATCHDOG_MS, 50);
    rig.start(&rig.op_program(&Rig::block(vec![], None), 1, None));
    nrt_hal::conformance::wait_until("the watchdog", || rig.csr(csr::STATUS) & csr::STATUS_HUNG != 0);
    assert_eq!(rig.pool_state(), RunState::Running);
    assert_eq!(rig.error_records().len(), 1, "the runaway adds no record");

    // The next model: reset, the good library, a correct result.
    rig.dev.reset_core(C0).unwrap();
    let (lib, _) = kernel_library("examples").expect("built above by examples_rig");
    rig.install(&lib);
    let x = rig.put_f32(&[-1.0, 2.0]);
    let y = rig.put_f32(&[0.0, 0.0]);
    rig.run(&rig.op_program(&Rig::block(vec![Rig::f32_tensor(x, &[2])], Some(Rig::f32_tensor(y, &[2]))), RELU, None));
    assert_eq!(rig.get_f32(y, 2), [0.0, 2.0]);
}
