//! The device-side custom-op ABI (`seed-siblings` §8.2-8.3): the wrapper
//! pulls its arguments positionally from the argument block the device
//! handed over (`customop_setup` → `customop_next_*` → body →
//! `customop_return_tensor` → `customop_cleanup`).

use crate::error::KernelError;
use crate::limits::{ARG_BLOCK_BYTES, ARG_DST, MAX_ARGS};
use crate::sys;
use crate::tensor::Tensor;

/// The parsed argument block and the pull cursor (libnrt's ArgParser).
#[derive(Clone, Copy)]
pub(crate) struct ArgParser {
    block: [u8; ARG_BLOCK_BYTES],
    cursor: usize,
    ready: bool,
}

impl ArgParser {
    const EMPTY: ArgParser = ArgParser { block: [0; ARG_BLOCK_BYTES], cursor: 0, ready: false };

    fn num_args(&self) -> usize {
        let n = u64::from_le_bytes(self.block[..8].try_into().unwrap_or([0; 8]));
        (n as usize).min(MAX_ARGS)
    }

    fn descriptor(&self, at: usize) -> &[u8] {
        &self.block[at..at + 48]
    }
}

#[cfg(target_arch = "wasm32")]
mod state {
    use super::ArgParser;
    use core::cell::UnsafeCell;

    struct Global(UnsafeCell<ArgParser>);
    // SAFETY: a wasm instance is single-threaded.
    unsafe impl Sync for Global {}
    static STATE: Global = Global(UnsafeCell::new(ArgParser::EMPTY));

    pub(crate) fn with<R>(f: impl FnOnce(&mut ArgParser) -> R) -> R {
        // SAFETY: single-threaded, and `f` cannot re-enter `with` (the ABI
        // functions do not call each other while holding the state).
        f(unsafe { &mut *STATE.0.get() })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod state {
    use super::ArgParser;
    use core::cell::RefCell;

    std::thread_local! {
        static STATE: RefCell<ArgParser> = const { RefCell::new(ArgParser::EMPTY) };
    }

    pub(crate) fn with<R>(f: impl FnOnce(&mut ArgParser) -> R) -> R {
        STATE.with(|s| f(&mut s.borrow_mut()))
    }
}

/// Fetches the argument block and rewinds the cursor. `has_return` is the
/// libnrt wrapper flag (generated wrappers pass `true`); kept for the ABI.
pub fn customop_setup(has_return: bool) {
    let _ = has_return;
    let mut block = [0u8; ARG_BLOCK_BYTES];
    sys::arg_block(&mut block);
    state::with(|s| {
        s.block = block;
        s.cursor = 0;
        s.ready = true;
    });
}

/// Pulls the next positional argument's descriptor and kind.
fn next(kind_ok: impl Fn(u8) -> bool) -> Result<Tensor, KernelError> {
    state::with(|s| {
        if !s.ready {
            return Err(KernelError::BadArgs);
        }
        let i = s.cursor;
        if i >= s.num_args() {
            return Err(KernelError::NoMoreArgs);
        }
        let kind = s.block[0x1E8 + i];
        if !kind_ok(kind) {
            return Err(KernelError::WrongKind);
        }
        let t = Tensor::from_descriptor(i as u32, s.descriptor(8 + 48 * i))?;
        s.cursor += 1;
        Ok(t)
    })
}

/// The next argument, which must be a tensor.
pub fn customop_next_tensor() -> Result<Tensor, KernelError> {
    next(|k| k == 1)
}

/// The next argument as an integer scalar (a 1-element tensor of any
/// integer or float dtype, converted).
pub fn customop_next_int() -> Result<i64, KernelError> {
    next(|k| k == 2 || k == 3)?.scalar_f64().map(|v| v as i64)
}

/// The next argument as a floating-point scalar (a 1-element tensor).
pub fn customop_next_float() -> Result<f64, KernelError> {
    next(|k| k == 2 || k == 3)?.scalar_f64()
}

/// The op's output tensor (pre-shaped by the host); the only output path
/// in multicore mode.
pub fn get_dst_tensor() -> Result<Tensor, KernelError> {
    state::with(|s| {
        if !s.ready {
            return Err(KernelError::BadArgs);
        }
        if s.block[0x1F8] != 1 {
            return Err(KernelError::NoDst);
        }
        Tensor::from_descriptor(ARG_DST, s.descriptor(0x200))
    })
}

/// Returns `t` as the op's result: a no-op when `t` is the destination,
/// otherwise core 0 copies `t` into the destination (same byte size).
pub fn customop_return_tensor(t: &Tensor) -> Result<(), KernelError> {
    let dst = get_dst_tensor()?;
    if t.arg() == ARG_DST {
        return Ok(());
    }
    if t.byte_len() != dst.byte_len() {
        return Err(KernelError::ShapeMismatch);
    }
    if crate::get_cpu_id() != 0 {
        return Ok(());
    }
    let mut chunk = [0u8; 1024];
    let mut off = 0u64;
    while off < t.byte_len() {
        let n = (t.byte_len() - off).min(chunk.len() as u64) as usize;
        t.read_bytes(off, &mut chunk[..n])?;
        dst.write_bytes(off, &chunk[..n])?;
        off += n as u64;
    }
    Ok(())
}

/// Ends the op: flushes stdio and forgets the arguments. Results must be
/// written before it.
pub fn customop_cleanup() {
    crate::stdio::flush();
    state::with(|s| s.ready = false);
}
