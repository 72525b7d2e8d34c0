//! Shared helpers of the load / execute / fault integration tests: a
//! simulated device, NEFFs packed in process, deterministic data.
#![allow(dead_code)]

use nrt::load::{LoadSettings, ModelHost};
use nrt::tensor::{Tensor, TensorSet};
use nrt_neff::{HashKind, Members, NeffHeader};
use nrt_sim::{SimConfig, SimDevice};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The repository's examples directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Packs a NEFF source tree the way `nrt neff pack` does: `*.asm` members
/// are assembled into `*.bin`.
pub fn pack_dir(dir: &Path) -> Vec<u8> {
    let contents = nrt_neff::read_dir(dir).expect("read example dir");
    let header = contents.header.unwrap_or_default();
    pack_members(&header, contents.members)
}

/// Packs members (assembling `.asm`) behind `header`.
pub fn pack_members(header: &NeffHeader, members: Members) -> Vec<u8> {
    let mut out = Members::new();
    for (path, bytes) in members {
        match path.strip_suffix(".asm") {
            Some(stem) => {
                let text = String::from_utf8(bytes).expect("asm is text");
                out.insert(format!("{stem}.bin"), nrt_isa::asm::assemble(&text).unwrap_or_else(|e| panic!("{path}: {e}")));
            }
            None => {
                out.insert(path, bytes);
            }
        }
    }
    nrt_neff::pack_members(header, &out, HashKind::Md5, nrt_neff::writer::default_format(HashKind::Md5)).expect("pack")
}

/// The copy example, packed.
pub fn copy_neff() -> Vec<u8> {
    pack_dir(&examples_dir().join("copy"))
}

/// A simulated trn2 device (LNC 2) in deterministic mode.
pub fn sim() -> Arc<SimDevice> {
    let cfg = SimConfig::builder().deterministic(true).build();
    Arc::new(SimDevice::new(&cfg, 0))
}

/// The model hosts of a simulated instance of `devices` devices of `arch`
/// at LNC `lnc`, one per device, sharing one model database as a
/// runtime's hosts do: their ranks' collectives meet and reach each other
/// through the peer window. The devices' simulators come first (for
/// fault injection).
pub fn instance(arch: nrt_hal::Arch, devices: u32, lnc: u32, settings: LoadSettings) -> (Vec<Arc<SimDevice>>, Vec<ModelHost>) {
    let cfg = SimConfig::builder().arch(arch).devices(devices).build();
    let sims: Vec<Arc<SimDevice>> = SimDevice::all(&cfg).into_iter().map(Arc::new).collect();
    let models = Arc::new(nrt::model::ModelDb::default());
    let hosts = sims.iter().map(|d| ModelHost::with_lnc_sharing(d.clone(), lnc, settings.clone(), models.clone()).expect("host")).collect();
    (sims, hosts)
}

/// A host over a fresh simulated device.
pub fn host_with(settings: LoadSettings) -> (Arc<SimDevice>, ModelHost) {
    let dev = sim();
    let host = ModelHost::with_lnc(dev.clone(), 2, settings).expect("host");
    (dev, host)
}

/// A host with default settings.
pub fn host() -> (Arc<SimDevice>, ModelHost) {
    host_with(LoadSettings::default())
}

/// Deterministic pseudo-random bytes.
pub fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// One-tensor sets for the copy example: host input and output.
pub fn host_io(input: Vec<u8>, size: usize) -> (TensorSet, TensorSet, Arc<Tensor>) {
    let mut ins = TensorSet::new();
    ins.add("input", Arc::new(Tensor::from_host_bytes(input, "input")));
    let out = Arc::new(Tensor::allocate_host(size as u64, "output").unwrap());
    let mut outs = TensorSet::new();
    outs.add("output", out.clone());
    (ins, outs, out)
}

/// Reads a tensor whole.
pub fn read_all(t: &Tensor) -> Vec<u8> {
    let mut b = vec![0u8; t.size() as usize];
    t.read(0, &mut b).unwrap();
    b
}

/// Resizes the copy example's `input` and `output` (float32, `[rows,
/// cols]`) in its def.json and neff.json, and rewrites its one DMA block as
/// a row-by-row copy of the new size. Tests that build larger programs on
/// the copy example's skeleton use it (the example itself is kept tiny, as
/// it measures the runtime's fixed cost).
pub fn resize_copy_io(m: &mut Members, rows: u64, cols: u64) {
    let bytes = rows * cols * 4;
    let mut def: serde_json::Value = serde_json::from_slice(&m["sg00/def.json"]).expect("def.json");
    for (name, ty, id) in [("input", "input", 0), ("output", "output", 1)] {
        def["var"][name] = serde_json::json!({"type": ty, "var_id": id, "size": bytes, "dtype": "float32", "shape": [rows, cols]});
    }
    m.insert("sg00/def.json".into(), serde_json::to_vec(&def).expect("def.json"));
    let mut g: serde_json::Value = serde_json::from_slice(&m["neff.json"]).expect("neff.json");
    g["attrs"]["shape"][1] = serde_json::json!([[rows, cols], [rows, cols]]);
    m.insert("neff.json".into(), serde_json::to_vec(&g).expect("neff.json"));
    let mut sp: serde_json::Value = serde_json::from_slice(&m["sg00/SP.json"]).expect("SP.json");
    let row = cols * 4;
    sp["dma"][0]["desc"] = serde_json::json!([{
        "from": "input", "from_off": 0, "from_sizes": [row, rows], "from_steps": [1, row], "from_dtype": "float32",
        "to": "output", "to_off": 0, "to_sizes": [row, rows], "to_steps": [1, row], "to_dtype": "float32"
    }]);
    m.insert("sg00/SP.json".into(), serde_json::to_vec(&sp).expect("SP.json"));
}

/// A global allocator that counts allocations (alloc, alloc_zeroed,
/// realloc) into [`ALLOCATIONS`], for the allocation-free tests; a test
/// binary installs it with
/// `#[global_allocator] static GLOBAL: CountingAlloc = CountingAlloc;`.
pub struct CountingAlloc;

/// Allocations seen by [`CountingAlloc`] so far.
pub static ALLOCATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { std::alloc::System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: forwarded unchanged.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

/// Executions before counting (the first fill the buffer pools).
pub const WARMUP: u64 = 10;

/// Executions per counted round.
pub const ROUND: u64 = 30;
/// Rounds the threaded device may take to reach its steady state.
pub const MAX_ROUNDS: usize = 20;

/// Allocations counted over rounds of [`ROUND`] executions of `neff`, on
/// device-resident tensors filled with deterministic data, after a
/// warm-up: the deterministic device runs every engine on one thread, so
/// its first round must read 0; on the threaded device an engine's first
/// instruction on a worker that never ran it fills that worker's buffer
/// pools, so rounds go on until one reads 0 (a kernel that allocates per
/// instruction never gets there). Returns every round's count.
pub fn steady_allocations(neff: &[u8], deterministic: bool) -> Vec<u64> {
    let cfg = SimConfig::builder().deterministic(deterministic).build();
    let dev = Arc::new(SimDevice::new(&cfg, 0));
    let host = ModelHost::with_lnc(dev, 2, LoadSettings::default()).expect("host");
    let id = host.load(neff, -1, -1).expect("load");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    let memory = host.memory().clone();
    let core = host.vcores()[0][0];
    let mut ins = TensorSet::new();
    for (i, sig) in inputs.iter().enumerate() {
        let size = sig.size_bytes().expect("sized input");
        let t = Arc::new(Tensor::allocate_device(&memory, core, size, &sig.name).unwrap());
        // Small values (high bytes below 0x3c in any 16-bit float format)
        // keep every dtype finite.
        let mut bytes = data(size as usize, 7 + i as u64);
        bytes.iter_mut().enumerate().for_each(|(k, b)| *b = if k % 2 == 1 { *b & 0x3b } else { *b });
        t.write(0, &bytes).unwrap();
        ins.add(&sig.name, t);
    }
    let mut outs = TensorSet::new();
    for sig in &outputs {
        let t = Arc::new(Tensor::allocate_device(&memory, core, sig.size_bytes().unwrap(), &sig.name).unwrap());
        outs.add(&sig.name, t);
    }
    for _ in 0..WARMUP {
        host.execute(id, &ins, &outs).unwrap();
    }
    let mut rounds = Vec::new();
    let max_rounds = if deterministic { 1 } else { MAX_ROUNDS };
    while rounds.len() < max_rounds && rounds.last() != Some(&0) {
        let before = ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed);
        for _ in 0..ROUND {
            host.execute(id, &ins, &outs).unwrap();
        }
        rounds.push(ALLOCATIONS.load(std::sync::atomic::Ordering::Relaxed) - before);
    }
    host.unload(id).unwrap();
    host.close().unwrap();
    rounds
}

/// `v` as little-endian bytes of `d` (fp16 and bf16 rounded to nearest
/// even; anything else as fp32).
pub fn encode(d: nrt_isa::dtype::Dtype, v: &[f32]) -> Vec<u8> {
    use half::{bf16, f16};
    use nrt_isa::dtype::Dtype;
    match d {
        Dtype::Float16 => v.iter().flat_map(|x| f16::from_f32(*x).to_le_bytes()).collect(),
        Dtype::Bfloat16 => v.iter().flat_map(|x| bf16::from_f32(*x).to_le_bytes()).collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// The inverse of [`encode`].
pub fn decode(d: nrt_isa::dtype::Dtype, b: &[u8]) -> Vec<f32> {
    use half::{bf16, f16};
    use nrt_isa::dtype::Dtype;
    match d {
        Dtype::Float16 => b.chunks(2).map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        Dtype::Bfloat16 => b.chunks(2).map(|c| bf16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        _ => b.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
    }
}
