//! Fuzz target: random sequences of libnrt C API calls over the simulated
//! device, as a careless or hostile client makes them: calls before init
//! and after close, NULL outputs, stale and foreign handles, double frees,
//! sizes and offsets past the end, unknown tensor names, wrong placements
//! and cores, executes with missing or wrong tensors, and NEFF bytes with
//! flipped bytes. Every call must return a status (never panic: the
//! libfuzzer panic hook aborts on any panic, also one the C shim would
//! catch), and the runtime must stay usable: each input ends by closing it,
//! and the next input initialises it again.
//!
//! Sizes and offsets reach the extremes as well (`Size::Huge`): host,
//! virtual and device tensors of sizes no host holds, slices, copies,
//! memsets and reads or writes past any end, collectives worlds larger
//! than any instance. A size the library would hand to the allocator
//! unchecked aborts the run (or trips libFuzzer's malloc limit), so the
//! class of caller-sized host allocations stays closed.
//!
//! Buffers handed to the API are always as large as the size passed with
//! them (a shorter buffer is a client bug libnrt cannot detect either),
//! except sizes above `isize::MAX`, which no buffer can have and the
//! library refuses before it looks at the buffer; everything else is fair
//! game. Handles are never dereferenced by the library (handles.rs), so
//! stale ones are safe to pass.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use libnrt::api_async::nrta_tensor_write;
use libnrt::api_cc::nrt_barrier;
use libnrt::api_core::*;
use libnrt::api_experimental::{nrt_free_model_tensor_info, nrt_get_model_tensor_info};
use libnrt::api_tensor::*;
use std::ffi::{CString, c_void};
use std::path::Path;
use std::ptr::{null, null_mut};
use std::sync::LazyLock;

/// The example models, packed once (source trees assembled as `nrt run` does).
static MODELS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    // SAFETY: set before any thread of the runtime exists (first input).
    unsafe {
        std::env::set_var("NEURON_SIM_DETERMINISTIC", "1");
        std::env::set_var("NEURON_RT_LOG_LEVEL", "QUIET");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    ["copy", "all-engines"].iter().map(|m| pack(&root.join(m))).collect()
});

fn pack(dir: &Path) -> Vec<u8> {
    let contents = nrt_neff::read_dir(dir).expect("example tree reads");
    let header = contents.header.unwrap_or_default();
    let mut members = nrt_neff::Members::new();
    for (path, bytes) in contents.members {
        match path.strip_suffix(".asm") {
            Some(stem) => {
                let text = String::from_utf8(bytes).expect("utf-8 program");
                members.insert(format!("{stem}.bin"), nrt_isa::asm::assemble(&text).expect("example assembles"));
            }
            None => {
                members.insert(path, bytes);
            }
        }
    }
    let hash = nrt_neff::HashKind::Md5;
    nrt_neff::pack_members(&header, &members, hash, nrt_neff::writer::default_format(hash)).expect("packs")
}

const NAMES: &[&str] = &["input", "output", "x", "y", "output0", "", "no such tensor"];

/// Sizes beyond any host: each must be refused before it is allocated.
const HUGE: &[u64] = &[1 << 50, 1 << 62, (isize::MAX as u64) + 1, u64::MAX / 2, u64::MAX - 63, u64::MAX];

/// A size or offset: small (within or just past the tensors this target
/// makes), or one of [`HUGE`].
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Size {
    Small(u16),
    Huge(u8),
}

impl Size {
    fn get(self) -> u64 {
        match self {
            Size::Small(n) => u64::from(n),
            Size::Huge(i) => HUGE[usize::from(i) % HUGE.len()],
        }
    }

    fn usize(self) -> usize {
        usize::try_from(self.get()).unwrap_or(usize::MAX)
    }

    /// A buffer of this size when one can exist (small sizes), else none:
    /// such sizes exceed `isize::MAX` only when the buffer is never read.
    fn buffer(self, fill: u8) -> Option<Vec<u8>> {
        match self {
            Size::Small(n) => Some(vec![fill; usize::from(n)]),
            Size::Huge(_) if self.get() > isize::MAX as u64 => Some(Vec::new()),
            Size::Huge(_) => None,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Init { framework: u8 },
    Close,
    Load { model: u8, vnc: i8, vnc_count: i8, flips: Vec<(u16, u8)>, null_out: bool },
    Unload { slot: u8 },
    Counts { null_out: bool },
    ModelInfo { slot: u8 },
    Alloc { placement: u8, vnc: i8, size: Size, name: u8, null_out: bool },
    Free { slot: u8 },
    Write { slot: u8, offset: Size, size: Size },
    Read { slot: u8, offset: Size, size: Size },
    AsyncWrite { slot: u8, offset: Size, size: Size },
    Memset { slot: u8, offset: Size, size: Size, value: i8 },
    Copy { src: u8, dst: u8, src_off: Size, dst_off: Size, size: Size },
    Slice { slot: u8, offset: Size, size: Size },
    Attach { slot: u8, size: u16 },
    Barrier { vnc: i8, count: u8 },
    NewSet,
    DestroySet { slot: u8 },
    AddToSet { set: u8, name: u8, tensor: u8 },
    GetFromSet { set: u8, name: u8 },
    Execute { model: u8, inputs: u8, outputs: u8, repeat: u8 },
}

#[derive(Default)]
struct Handles {
    models: Vec<*mut c_void>,
    tensors: Vec<*mut c_void>,
    sets: Vec<*mut c_void>,
    /// Buffers attached to tensors, alive until the input's last call.
    lent: Vec<Vec<u8>>,
}

/// A live or stale handle from `list`, or NULL when the list is empty.
fn pick(list: &[*mut c_void], slot: u8) -> *mut c_void {
    if list.is_empty() || slot == u8::MAX { null_mut() } else { list[slot as usize % list.len()] }
}

fn run(op: &Op, h: &mut Handles) {
    // SAFETY (all calls below): every pointer passed is NULL, a handle this
    // loop got from the library (possibly stale), or a live buffer at least
    // as large as the size passed with it.
    unsafe {
        match op {
            Op::Init { framework } => {
                nrt_init(u32::from(*framework % 7), null(), null());
            }
            Op::Close => nrt_close(),
            Op::Load { model, vnc, vnc_count, flips, null_out } => {
                let mut bytes = MODELS[*model as usize % MODELS.len()].clone();
                for (at, x) in flips.iter().take(8) {
                    let i = *at as usize % bytes.len();
                    bytes[i] ^= x;
                }
                let mut m = null_mut();
                let out = if *null_out { null_mut() } else { &mut m };
                if nrt_load(bytes.as_ptr().cast(), bytes.len(), i32::from(*vnc), i32::from(*vnc_count), out) == 0 {
                    assert!(!m.is_null(), "nrt_load succeeded without a model");
                    h.models.push(m);
                }
            }
            Op::Unload { slot } => {
                nrt_unload(pick(&h.models, *slot));
            }
            Op::Counts { null_out } => {
                let mut n = 0u32;
                let out = if *null_out { null_mut() } else { &mut n };
                nrt_get_total_nc_count(out);
                nrt_get_visible_vnc_count(out);
            }
            Op::ModelInfo { slot } => {
                let mut info = null_mut();
                if nrt_get_model_tensor_info(pick(&h.models, *slot), &mut info) == 0 {
                    assert_eq!(nrt_free_model_tensor_info(info), 0);
                }
            }
            Op::Alloc { placement, vnc, size, name, null_out } => {
                let name = CString::new(NAMES[*name as usize % NAMES.len()]).expect("no NUL");
                let mut t = null_mut();
                let out = if *null_out { null_mut() } else { &mut t };
                if nrt_tensor_allocate(u32::from(*placement % 4), i32::from(*vnc), size.usize(), name.as_ptr(), out) == 0 {
                    assert_eq!(nrt_tensor_get_size(t), size.usize());
                    h.tensors.push(t);
                }
            }
            Op::Free { slot } => {
                let mut t = pick(&h.tensors, *slot);
                nrt_tensor_free(&mut t);
            }
            Op::Write { slot, offset, size } => {
                if let Some(buf) = size.buffer(0x5a) {
                    nrt_tensor_write(pick(&h.tensors, *slot), buf.as_ptr().cast(), offset.usize(), size.usize());
                }
            }
            Op::Read { slot, offset, size } => {
                if let Some(mut buf) = size.buffer(0) {
                    nrt_tensor_read(pick(&h.tensors, *slot), buf.as_mut_ptr().cast(), offset.usize(), size.usize());
                }
            }
            Op::AsyncWrite { slot, offset, size } => {
                if let Some(buf) = size.buffer(0x3c) {
                    // No status pointer: the write completes after this call.
                    let mut seq = 0;
                    nrta_tensor_write(pick(&h.tensors, *slot), buf.as_ptr().cast(), offset.get(), size.get(), 0, 0, null_mut(), &mut seq);
                }
            }
            Op::Memset { slot, offset, size, value } => {
                nrt_tensor_memset(pick(&h.tensors, *slot), offset.get(), i32::from(*value), size.usize());
            }
            Op::Copy { src, dst, src_off, dst_off, size } => {
                nrt_tensor_copy(pick(&h.tensors, *src), src_off.usize(), pick(&h.tensors, *dst), dst_off.usize(), size.usize());
            }
            Op::Slice { slot, offset, size } => {
                let mut s = null_mut();
                if nrt_tensor_allocate_slice(pick(&h.tensors, *slot), offset.usize(), size.usize(), null(), &mut s) == 0 {
                    h.tensors.push(s);
                }
            }
            Op::Attach { slot, size } => {
                let mut buf = vec![0u8; usize::from(*size)];
                if nrt_tensor_attach_buffer(pick(&h.tensors, *slot), buf.as_mut_ptr().cast(), buf.len()) == 0 {
                    h.lent.push(buf);
                }
            }
            Op::Barrier { vnc, count } => {
                // One participant runs alone; more than MAX_WORLD are
                // refused. (2..=MAX_WORLD would wait for absent peers.)
                let n = match count % 3 {
                    0 => 1,
                    1 => (nrt_neff::cc::MAX_WORLD as u32) + 1,
                    _ => u32::MAX,
                };
                nrt_barrier(i32::from(*vnc), 0, n);
            }
            Op::NewSet => {
                let mut s = null_mut();
                if nrt_allocate_tensor_set(&mut s) == 0 {
                    h.sets.push(s);
                }
            }
            Op::DestroySet { slot } => {
                let mut s = pick(&h.sets, *slot);
                nrt_destroy_tensor_set(&mut s);
            }
            Op::AddToSet { set, name, tensor } => {
                let name = CString::new(NAMES[*name as usize % NAMES.len()]).expect("no NUL");
                nrt_add_tensor_to_tensor_set(pick(&h.sets, *set), name.as_ptr(), pick(&h.tensors, *tensor));
            }
            Op::GetFromSet { set, name } => {
                let name = CString::new(NAMES[*name as usize % NAMES.len()]).expect("no NUL");
                let mut t = null_mut();
                nrt_get_tensor_from_tensor_set(pick(&h.sets, *set), name.as_ptr(), &mut t);
            }
            Op::Execute { model, inputs, outputs, repeat } => {
                let m = pick(&h.models, *model);
                let (i, o) = (pick(&h.sets, *inputs), pick(&h.sets, *outputs));
                if *repeat % 4 == 0 {
                    nrt_execute(m, i, o);
                } else {
                    nrt_execute_repeat(m, i, o, i32::from(*repeat % 4));
                }
            }
        }
    }
}

fuzz_target!(|ops: Vec<Op>| {
    LazyLock::force(&MODELS);
    let mut h = Handles::default();
    for op in ops.iter().take(64) {
        run(op, &mut h);
    }
    // Leave nothing behind for the next input: close frees every handle
    // (and waits for queued writes) before the lent buffers go.
    nrt_close();
    drop(h);
});
