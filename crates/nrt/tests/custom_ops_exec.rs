//! GPSIMD custom ops end to end on the simulated device: the
//! `examples/custom_ops` NEFF (relu and row-wise softmax on the eight Q7
//! cores) against references computed here, kernel printf in the log, and
//! misbehaving kernels (an out-of-bounds write, a runaway loop) that give
//! their status while the process lives on; unloading the poisoned model
//! recovers the core, and the next model runs on the same core.

mod exec_support;
#[path = "../../nrt-pack/src/custom_ops_data.rs"]
mod custom_ops_data;

use custom_ops_data as data;
use exec_support::{examples_dir, read_all};
use nrt::custom_ops::{Q7Image, Q7Setup};
use nrt::load::{LoadSettings, ModelHost};
use nrt::log::{self, Level};
use nrt::tensor::{Tensor, TensorSet};
use nrt::NrtStatus;
use nrt_neff::Members;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The generated members, built once per test binary.
fn generated() -> &'static Vec<(&'static str, Vec<u8>)> {
    static M: OnceLock<Vec<(&'static str, Vec<u8>)>> = OnceLock::new();
    M.get_or_init(|| data::members(&data::kernel_target_dir()).expect("build the example kernel library"))
}

/// The custom_ops example packed, with `edit` applied to its members.
fn neff(edit: impl FnOnce(&mut Members)) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("custom_ops")).unwrap();
    let mut members = contents.members;
    for (p, b) in generated() {
        members.insert((*p).to_string(), b.clone());
    }
    edit(&mut members);
    exec_support::pack_members(&contents.header.unwrap_or_default(), members)
}

fn host(timeout: Duration) -> ModelHost {
    let settings = LoadSettings { exec_timeout: timeout, ..LoadSettings::default() };
    let (_dev, h) = exec_support::host_with(settings);
    h.with_q7(Q7Setup { image: Q7Image::stock(), stdout_bytes: 4096 })
}

fn input() -> Vec<f32> {
    let mut r = 0x1234_5678u32;
    (0..(data::ROWS * data::COLS) as usize)
        .map(|_| {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            (r as f32 / u32::MAX as f32) * 8.0 - 4.0
        })
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs model `id` on `x`: (status, y, z).
fn run(h: &ModelHost, id: nrt::model::ModelId, x: &[f32]) -> (Result<(), nrt::NrtError>, Vec<f32>, Vec<f32>) {
    let n = x.len() * 4;
    let mut ins = TensorSet::new();
    ins.add("x", Arc::new(Tensor::from_host_bytes(bytes(x), "x")));
    let (y, z) = (Arc::new(Tensor::allocate_host(n as u64, "y").unwrap()), Arc::new(Tensor::allocate_host(n as u64, "z").unwrap()));
    let mut outs = TensorSet::new();
    outs.add("y", y.clone());
    outs.add("z", z.clone());
    let r = h.execute(id, &ins, &outs);
    (r, floats(&read_all(&y)), floats(&read_all(&z)))
}

fn check_outputs(x: &[f32], y: &[f32], z: &[f32]) {
    assert_eq!(y, data::relu_reference(x).as_slice(), "relu is exact");
    let want = data::softmax_reference(x, data::COLS as usize);
    for (i, (g, w)) in z.iter().zip(&want).enumerate() {
        assert!((g - w).abs() <= 1e-6 + 1e-4 * w.abs(), "softmax element {i}: got {g}, want {w}");
    }
}

#[test]
fn relu_and_softmax_run_on_the_q7_cores_and_print() {
    let h = host(Duration::from_secs(30));
    let cap = log::capture(Level::Info);
    let id = h.load(&neff(|_| {}), -1, -1).expect("load custom_ops");
    let x = input();
    for _ in 0..2 {
        let (r, y, z) = run(&h, id, &x);
        r.expect("execute");
        check_outputs(&x, &y, &z);
    }
    assert!(cap.contains("Printing stdout from GPSIMD:"), "{}", cap.text());
    assert!(cap.contains("relu: 65536 elements on 8 cores"), "{}", cap.text());
    h.unload(id).unwrap();
    h.close().unwrap();
}

/// The example with its POOL stream calling the buggy library's kernel
/// `spec` (oob_write 1, spin 2) instead of relu.
fn buggy_neff(spec: u8) -> Vec<u8> {
    let lib = data::buggy_library(&data::kernel_target_dir()).expect("build the buggy kernel library");
    neff(|m| {
        let mut def: serde_json::Value = serde_json::from_slice(&m["sg00/def.json"]).unwrap();
        def["ucode_lib"][1] = serde_json::json!({"library": "buggy.ucpl", "ulib_to_ucode_version": "1.0.0.0", "opcode": -16, "cpu_id": 0, "total_cpus": 8,
            "functions": [{"name": "oob_write", "opcode": -16, "sub_opcode": 1}, {"name": "spin", "opcode": -16, "sub_opcode": 2}]});
        m.insert("sg00/def.json".into(), serde_json::to_vec(&def).unwrap());
        m.insert("sg00/buggy.ucpl".into(), lib);
        let pool = String::from_utf8(m["sg00/POOL.asm"].clone()).unwrap().replace("extended_inst spec=1", &format!("extended_inst spec={spec}"));
        m.insert("sg00/POOL.asm".into(), pool.into_bytes());
    })
}

#[test]
fn an_out_of_bounds_kernel_gives_its_status_and_the_core_recovers_at_unload() {
    let h = host(Duration::from_secs(30));
    let cap = log::capture(Level::Error);
    // A good model shares logical core 0 with the buggy one.
    let resident = h.load(&neff(|_| {}), 0, -1).unwrap();
    let bad = h.load(&buggy_neff(1), 0, -1).expect("load the buggy model");
    let x = input();
    let (r, y, z) = run(&h, resident, &x);
    r.expect("the resident model runs before the fault");
    check_outputs(&x, &y, &z);
    let (r, _, _) = run(&h, bad, &x);
    let e = r.unwrap_err();
    assert_eq!(e.status, NrtStatus::ExecCompletedWithErr, "{}", e.message);
    assert!(cap.contains("GPSIMD EXCEPTION OCCURRED: MEMORY OUT OF BOUNDS"), "{}", cap.text());
    // The line names the NEFF instruction that dispatched the kernel.
    assert!(cap.contains("(at sg00 POOL instruction ") && cap.contains("(EXTENDED_INST))"), "{}", cap.text());
    // Fail-stop: the poisoned model is refused from now on.
    assert_eq!(run(&h, bad, &x).0.unwrap_err().status, NrtStatus::ExecCompletedWithErr);
    // Unloading it resets and re-arms core 0: the resident model (its DMA
    // queues reprogrammed) and a newly loaded one both run there.
    h.unload(bad).unwrap();
    let (r, y, z) = run(&h, resident, &x);
    r.expect("the resident model runs after the recovery");
    check_outputs(&x, &y, &z);
    next_model_runs_on_core_0(&h, &x);
    h.close().unwrap();
}

/// Loads a healthy custom-op model on core 0 (where a faulted one was just
/// unloaded) and checks two executions of it.
fn next_model_runs_on_core_0(h: &ModelHost, x: &[f32]) {
    let good = h.load(&neff(|_| {}), 0, -1).unwrap();
    for _ in 0..2 {
        let (r, y, z) = run(h, good, x);
        r.expect("the next model runs on the same core");
        check_outputs(x, &y, &z);
    }
}

#[test]
fn a_runaway_kernel_times_out_and_the_next_model_runs_on_the_same_core() {
    let h = host(Duration::from_millis(700));
    let bad = h.load(&buggy_neff(2), 0, -1).expect("load the runaway model");
    let x = input();
    let (r, _, _) = run(&h, bad, &x);
    assert_eq!(r.unwrap_err().status, NrtStatus::Timeout);
    // The poisoned model is unloaded; the core is reset and the next model
    // runs on the same logical core.
    h.unload(bad).unwrap();
    next_model_runs_on_core_0(&h, &x);
    h.close().unwrap();
}

/// Device-resident outputs in a set ordered unlike the model's outputs
/// (z before y), executed again and again as the same sets: the runtime
/// matches names once and finds each completion record's tensor by the
/// position it recorded, so each output counts exactly its own records.
#[test]
fn reused_sets_count_each_outputs_completion_records_on_its_own_tensor() {
    let h = host(Duration::from_secs(30));
    let id = h.load(&neff(|_| {}), -1, -1).expect("load custom_ops");
    let core = h.vcores()[0][0];
    let x = input();
    let n = (x.len() * 4) as u64;
    let din = Arc::new(Tensor::allocate_device(h.memory(), core, n, "x").unwrap());
    din.write(0, &bytes(&x)).unwrap();
    let (y, z) = (Arc::new(Tensor::allocate_device(h.memory(), core, n, "y").unwrap()), Arc::new(Tensor::allocate_device(h.memory(), core, n, "z").unwrap()));
    let mut ins = TensorSet::new();
    ins.add("x", din);
    let mut outs = TensorSet::new();
    outs.add("z", z.clone());
    outs.add("y", y.clone());
    for k in 1..=3u64 {
        h.execute(id, &ins, &outs).expect("execute");
        assert_eq!((y.output_completions(), z.output_completions()), (k, k), "after execution {k}");
    }
    check_outputs(&x, &floats(&read_all(&y)), &floats(&read_all(&z)));
    h.unload(id).unwrap();
    h.close().unwrap();
}
