//! The 8-core Q7 relu over 1M fp32 elements (the example kernel built
//! from Rust with +simd128, run as WebAssembly on the simulated cluster)
//! against a native Rust loop over the same data, in the same run
//! (issue target: >= 0.5x native).
//!
//! Both sides report the median of 21 runs after a warm-up; the thread
//! waiting for the op waits as the runtime's harvest loop does: it
//! announces that it lends itself (`Device::lending_begin`), runs queued
//! simulator work itself (`Device::assist`), polls for 20 us, then blocks
//! on the POOL notification ring's interrupt line rather than spinning on
//! a core the simulator's workers need. Measured figures and
//! what limits them: `docs/gpsimd.md` §11.
//!
//! Run: `cargo bench -p nrt-sim --bench q7` (needs `rustup target add
//! wasm32-unknown-unknown`; skipped with a note if rustup is absent).
//! `Q7_BENCH_REPS=N` and `Q7_BENCH_MODE=pool|deterministic` make longer or
//! single-mode runs for profiling; `Q7_BENCH_DUMP=FILE` writes the kernels'
//! machine code instead of running.

use nrt_hal::arch::EVT_SEM_SEM_INC;
use nrt_hal::{CoreId, Device, EngineId, MemoryLocation, NqSpec, NqType};
use nrt_isa::instr::slots::{drain_slot, load_pool_argument_slot};
use nrt_isa::instr::{ExtendedInst, Head};
use nrt_isa::ucode::{ArgBlock, ArgKind, ArgTensor, csr, isa_dtype};
use nrt_sim::engine::RunState;
use nrt_sim::{SimConfig, SimDevice};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const C0: CoreId = CoreId(0);
const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("wasm-kernels"),
        None => std::env::current_exe().unwrap().ancestors().nth(3).unwrap().join("wasm-kernels"),
    }
}

/// The median of `reps` timed runs (after one untimed warm-up run).
fn median(reps: usize, f: &mut impl FnMut() -> Duration) -> Duration {
    f();
    let mut t: Vec<Duration> = (0..reps).map(|_| f()).collect();
    t.sort();
    t.get(t.len() / 2).copied().unwrap_or_default()
}

/// CPU time all threads of this process have run so far, in nanoseconds
/// (`CLOCK_PROCESS_CPUTIME_ID`), or `None` where that clock fails. Unlike
/// wall time it does not count time the threads waited for a core, so it
/// tells the work an op costs on a machine shared with other builds.
/// (Linux's per-thread `schedstat`, used before, only advances at
/// scheduler ticks: 4 ms, about 0.18 ms per op over a 22-op median.)
fn process_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (r == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `Q7_BENCH_DUMP=FILE`: writes the kernel library as wasmtime compiled
/// it (an ELF object; `objdump -d FILE` shows the machine code of each
/// kernel function, e.g. what cranelift made of `relu_slice`'s loop) and
/// runs nothing else.
fn dump_machine_code(lib: &nrt_isa::ucode::LibraryImage, path: &std::path::Path) {
    let compiled = nrt_sim::q7::wasm::compiled(lib).expect("compile the example kernels");
    let bytes = compiled.module.serialize().expect("serialize the compiled kernels");
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    println!("wrote the compiled kernels to {} (objdump -d shows the machine code)", path.display());
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let n: usize = if quick { 1 << 14 } else { 1 << 20 };
    // Q7_BENCH_REPS / Q7_BENCH_MODE (pool | deterministic): longer or
    // single-mode runs for profiling; the figures quoted use the defaults.
    // Q7_BENCH_DUMP: see `dump_machine_code`.
    let reps = std::env::var("Q7_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(if quick { 3 } else { 21 });
    let only = std::env::var("Q7_BENCH_MODE").ok();
    if std::process::Command::new("rustup").arg("--version").output().is_err() {
        println!("note: rustup is not installed; the Q7 bench needs the wasm32-unknown-unknown target");
        return;
    }
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../nrt-kernel/kernels/examples"));
    let (lib, _) = nrt_sim::q7::build::build_library(&dir, &target_dir()).expect("build the example kernels");
    if let Some(path) = std::env::var_os("Q7_BENCH_DUMP") {
        dump_machine_code(&lib, &PathBuf::from(path));
        return;
    }

    for deterministic in [false, true] {
        let mode = if deterministic { "deterministic" } else { "pool" };
        if only.as_deref().is_some_and(|m| m != mode) {
            continue;
        }
        let dev = SimDevice::new(&SimConfig::builder().deterministic(deterministic).build(), 0);
        let arch = dev.info().arch;
        for q in 0..8 {
            dev.write(arch.q7_dram_addr(C0, q), &lib.dram()).unwrap();
            dev.write(arch.q7_iram_addr(C0, q), &lib.iram()).unwrap();
        }
        dev.write(arch.q7_csr_addr(C0).offset(csr::RUN_STALL), &0u32.to_le_bytes()).unwrap();
        let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 2001) as f32 - 1000.0).collect();
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let xa = dev.alloc(HBM0, bytes.len() as u64, 64).unwrap();
        let ya = dev.alloc(HBM0, bytes.len() as u64, 64).unwrap();
        dev.write(xa, &bytes).unwrap();
        let dims = [n as u32];
        let blk = ArgBlock {
            args: vec![(ArgKind::Tensor, ArgTensor::hbm(xa.get(), isa_dtype::FP32, &dims))],
            dst: Some(ArgTensor::hbm(ya.get(), isa_dtype::FP32, &dims)),
        };
        let ba = dev.alloc(HBM0, 576, 64).unwrap();
        dev.write(ba, &blk.encode()).unwrap();
        let done = arch.semaphore_addr(C0, EVT_SEM_SEM_INC, 7).get();
        let ext = ExtendedInst { head: Head::default(), spec: 0, ..ExtendedInst::default() }.encode();
        let prog: Vec<u8> = [load_pool_argument_slot(0, ba.get(), 0, done, None), ext, drain_slot(None)].concat();
        let pa = dev.alloc(HBM0, prog.len() as u64, 64).unwrap();
        dev.write(pa, &prog).unwrap();
        // The POOL notify ring: the waiting thread blocks on its interrupt
        // line as the runtime does, instead of spinning on a core the
        // scheduler's workers need.
        let ring = dev.alloc(HBM0, 4096, 4096).unwrap();
        let nq = dev.nq_init(NqSpec { core: C0, engine_index: EngineId::Pool.index() as u8, nq_type: NqType::Notify, ring, size_bytes: 4096 }).unwrap();
        let mut runs = 0;
        let mut op = || {
            let t = Instant::now();
            // As the runtime announces it (`nrt::exec`): this thread will
            // wait and lend itself, so the first slices are left to it.
            dev.lending_begin();
            dev.start_engine(C0, EngineId::Pool, pa, prog.len() as u64).unwrap();
            runs += 1;
            loop {
                let seen = nq.signal_count();
                if dev.semaphore_read(C0, 7).unwrap() >= runs && dev.engine_state(C0, EngineId::Pool) != Some(RunState::Running) {
                    break;
                }
                // As the runtime's harvest loop waits (`nrt::exec`): lend
                // the thread to the device while it has queued work, poll
                // for the first 20 us, then block on the interrupt line.
                if dev.assist() {
                } else if t.elapsed() < Duration::from_micros(20) {
                    std::hint::spin_loop();
                } else {
                    // A blocked thread lends nothing.
                    dev.lending_end();
                    nq.wait_signal(seen, Duration::from_millis(1));
                    dev.lending_begin();
                }
                if t.elapsed() > Duration::from_secs(10) {
                    let csr = |o: u64| {
                        let mut w = [0u8; 4];
                        dev.read(arch.q7_csr_addr(C0).offset(o), &mut w).unwrap();
                        u32::from_le_bytes(w)
                    };
                    panic!(
                        "run {runs} did not finish in 10 s: completion semaphore {}, POOL {:?}, Q7 STATUS {:#x}, OPS_DONE {}, EXCEPTIONS {}",
                        dev.semaphore_read(C0, 7).unwrap(),
                        dev.engine_state(C0, EngineId::Pool),
                        csr(csr::STATUS),
                        csr(csr::OPS_DONE),
                        csr(csr::EXCEPTIONS)
                    );
                }
            }
            dev.lending_end();
            t.elapsed()
        };
        // The first op compiles and instantiates the kernel: CPU time is
        // counted from the second on (the median skips the first too).
        op();
        let cpu0 = process_cpu_ns();
        let q7 = median(reps, &mut op);
        let cpu_per_op = cpu0.zip(process_cpu_ns()).map(|(a, b)| (b - a) as f64 / (reps + 1) as f64 / 1e6);
        let mut y = vec![0u8; bytes.len()];
        dev.read(ya, &mut y).unwrap();
        let got: Vec<f32> = y.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
        assert_eq!(got, want, "Q7 relu result");
        // Native: the same relu over the same data into a separate buffer.
        let mut out = vec![0f32; n];
        let native = median(reps, &mut || {
            let t = Instant::now();
            for (o, v) in out.iter_mut().zip(std::hint::black_box(&x)) {
                *o = v.max(0.0);
            }
            std::hint::black_box(&out);
            t.elapsed()
        });
        // The Q7 access pattern natively: each element copied into an
        // 8 KiB buffer, relu'd there, copied out (what the kernel does
        // through tensor_to_tcm / tcm_to_tensor), on one thread.
        let mut tcm = vec![0f32; 2048];
        let staged = median(reps, &mut || {
            let t = Instant::now();
            for (src, dst) in std::hint::black_box(&x).chunks(2048).zip(out.chunks_mut(2048)) {
                let b = &mut tcm[..src.len()];
                b.copy_from_slice(src);
                for v in b.iter_mut() {
                    *v = v.max(0.0);
                }
                dst.copy_from_slice(b);
            }
            std::hint::black_box(&out);
            t.elapsed()
        });
        let ratio = native.as_secs_f64() / q7.as_secs_f64();
        println!(
            "q7 relu {n} fp32 ({}), medians of {reps}: 8 Q7 cores {:.3} ms ({:.2} Gelem/s), native loop {:.3} ms ({:.2} Gelem/s): {ratio:.2}x native",
            mode,
            q7.as_secs_f64() * 1e3,
            n as f64 / q7.as_secs_f64() / 1e9,
            native.as_secs_f64() * 1e3,
            n as f64 / native.as_secs_f64() / 1e9,
        );
        println!("  native loop through an 8 KiB staging buffer (the kernel's copy pattern, one thread): {:.3} ms", staged.as_secs_f64() * 1e3);
        if let Some(ms) = cpu_per_op {
            println!("  CPU time per Q7 op, all threads (mean; waits for a core not counted): {ms:.3} ms");
        }
    }
}
