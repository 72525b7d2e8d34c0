//! SDK for GPSIMD custom-op kernels (`docs/gpsimd.md`).
//!
//! Kernels are Rust functions compiled to `wasm32-unknown-unknown` (with
//! `+simd128`) and run on the simulated POOL engine's eight Q7 cores, all
//! eight running the same kernel (SPMD: split the work by [`get_cpu_id`]).
//!
//! - [`abi`]: the device-side ABI of libnrt's custom-op library:
//!   `customop_setup`, `customop_next_tensor`, `customop_next_int`,
//!   `customop_next_float`, `get_dst_tensor`, `customop_return_tensor`,
//!   `customop_cleanup`.
//! - [`tensor`]: [`Tensor`] handles with the kernel-author accessors:
//!   read/write stream accessors and the TCM accessor (`tensor_to_tcm` /
//!   `tcm_to_tensor`).
//! - [`tcm`]: `tcm_malloc` / `tcm_free` over the 16 KiB TCM pool, and the
//!   RAII [`tcm::TcmBuf`].
//! - [`stdio`]: `printf!` / `eprintf!` into the core's stdio ring.
//! - [`limits`]: argument, rank, dimension and pool limits.
//! - [`kernels!`]: declares the library's kernels and generates the
//!   `get_func_cnt` / `get_func_name` / `get_func_ptr` table and one
//!   exported entry per kernel.
//! - [`host`] (not on wasm): a native harness that backs the imports with
//!   in-memory tensors, so kernels can be unit-tested without the device.
//!
//! A library crate is a `cdylib` depending on this crate; `nrt kernel
//! build <dir>` compiles it and packs the library file.
#![no_std]

#[cfg(not(target_arch = "wasm32"))]
extern crate std;

pub mod abi;
pub mod error;
#[cfg(not(target_arch = "wasm32"))]
pub mod host;
pub mod limits;
pub mod math;
pub mod stdio;
mod sys;
pub mod tcm;
pub mod tensor;

pub use abi::{
    customop_cleanup, customop_next_float, customop_next_int, customop_next_tensor, customop_return_tensor,
    customop_setup, get_dst_tensor,
};
pub use error::KernelError;
pub use tensor::{Element, Tensor};

/// This core's rank, `0..get_cpu_count()`.
pub fn get_cpu_id() -> u32 {
    sys::get_cpu_id() as u32
}

/// Cores running this op: 8 for a multicore library, 1 otherwise.
pub fn get_cpu_count() -> u32 {
    sys::get_cpu_count().max(1) as u32
}

/// The word the device read from the op's `one_value_read_addr`.
pub fn one_value() -> u32 {
    sys::one_value() as u32
}

/// The half-open element range `[start, end)` this core owns when `n`
/// elements are split as evenly as possible over the cores.
pub fn my_share(n: usize) -> (usize, usize) {
    let (id, count) = (get_cpu_id() as usize, get_cpu_count() as usize);
    let per = n / count;
    let extra = n % count;
    let start = id * per + id.min(extra);
    (start, start + per + usize::from(id < extra))
}

/// Runs one kernel body between `customop_setup` and `customop_cleanup`
/// and turns its result into the entry's status (0 = success). Used by
/// [`kernels!`].
pub fn entry(body: fn() -> Result<(), KernelError>) -> i32 {
    customop_setup(true);
    let r = body();
    customop_cleanup();
    match r {
        Ok(()) => 0,
        Err(e) => e.code(),
    }
}

/// Declares the library's kernels, in table order: kernel `i` is exported
/// under its own name and registered as `{spec i, 0xF0, i}` by
/// `nrt kernel build`. Each is a `fn() -> Result<(), KernelError>`.
///
/// ```
/// fn relu() -> Result<(), nrt_kernel::KernelError> {
///     let x = nrt_kernel::customop_next_tensor()?;
///     let _ = x.numel();
///     Ok(())
/// }
/// nrt_kernel::kernels!(relu);
/// # fn main() { assert_eq!((get_func_cnt(), get_func_ptr(0)), (1, 1)); }
/// ```
#[macro_export]
macro_rules! kernels {
    ($($name:ident),+ $(,)?) => {
        const __NRT_KERNEL_NAMES: &[&str] = &[$(concat!(stringify!($name), "\0")),+];

        /// Number of kernels in this library (the device's `get_func_cnt`).
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_cnt() -> i32 {
            __NRT_KERNEL_NAMES.len() as i32
        }

        /// Address of kernel `i`'s NUL-terminated name, 0 if out of range.
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_name(i: i32) -> i32 {
            match usize::try_from(i).ok().and_then(|i| __NRT_KERNEL_NAMES.get(i)) {
                Some(n) => n.as_ptr() as usize as i32,
                None => 0,
            }
        }

        /// Nonzero handle of kernel `i` (`i + 1`), 0 if out of range.
        #[unsafe(no_mangle)]
        pub extern "C" fn get_func_ptr(i: i32) -> i32 {
            if i >= 0 && (i as usize) < __NRT_KERNEL_NAMES.len() { i + 1 } else { 0 }
        }

        $(
            const _: () = {
                #[unsafe(export_name = stringify!($name))]
                extern "C" fn __nrt_kernel_entry() -> i32 {
                    $crate::entry($name)
                }
            };
        )+
    };
}

/// Halts the core on a Rust panic: `unreachable` traps, which the device
/// reports as an ILLEGAL INSTRUCTION GPSIMD exception.
#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}
