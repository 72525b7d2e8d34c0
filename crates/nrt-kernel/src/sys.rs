//! The device imports (module `env`, `docs/gpsimd.md` §3). On wasm they
//! are the Q7 core's host functions; elsewhere they are served by the
//! [`crate::host`] harness.

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "env")]
    unsafe extern "C" {
        fn get_cpu_id() -> i32;
        fn get_cpu_count() -> i32;
        fn arg_block(ptr: i32, len: i32) -> i32;
        fn tensor_read(arg: i32, off: i64, ptr: i32, len: i32) -> i32;
        fn tensor_write(arg: i32, off: i64, ptr: i32, len: i32) -> i32;
        fn stdio_write(fd: i32, ptr: i32, len: i32) -> i32;
        fn one_value() -> i32;
    }

    pub fn cpu_id() -> i32 {
        // SAFETY: host function without memory arguments.
        unsafe { get_cpu_id() }
    }
    pub fn cpu_count() -> i32 {
        // SAFETY: as above.
        unsafe { get_cpu_count() }
    }
    pub fn value() -> i32 {
        // SAFETY: as above.
        unsafe { one_value() }
    }
    pub fn args(buf: &mut [u8]) -> i32 {
        // SAFETY: the device writes at most `len` bytes into `buf`.
        unsafe { arg_block(buf.as_mut_ptr() as i32, buf.len() as i32) }
    }
    pub fn read(arg: u32, off: u64, buf: &mut [u8]) -> i32 {
        // SAFETY: the device writes exactly `len` bytes into `buf` (or traps).
        unsafe { tensor_read(arg as i32, off as i64, buf.as_mut_ptr() as i32, buf.len() as i32) }
    }
    pub fn write(arg: u32, off: u64, buf: &[u8]) -> i32 {
        // SAFETY: the device only reads `buf`.
        unsafe { tensor_write(arg as i32, off as i64, buf.as_ptr() as i32, buf.len() as i32) }
    }
    pub fn stdio(fd: i32, text: &[u8]) -> i32 {
        // SAFETY: the device only reads `text`.
        unsafe { stdio_write(fd, text.as_ptr() as i32, text.len() as i32) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub use crate::host::sys::*;
}

pub use imp::{
    args as arg_block, cpu_count as get_cpu_count, cpu_id as get_cpu_id, read as tensor_read, stdio as stdio_write,
    value as one_value, write as tensor_write,
};
