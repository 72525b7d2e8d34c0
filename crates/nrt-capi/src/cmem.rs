//! Memory handed to C callers that they free with `free(3)` (or our
//! matching free calls): string lists and NUL-terminated buffers.

use nrt_core::{NrtError, NrtResult};
use std::ffi::{c_char, c_void};

unsafe extern "C" {
    fn malloc(size: usize) -> *mut c_void;
    fn free(p: *mut c_void);
}

fn no_memory(what: &str, bytes: usize) -> NrtError {
    NrtError::new(nrt_core::NrtStatus::FailHostMemAlloc, format!("allocating {bytes} bytes of host memory for {what} failed"))
}

/// A malloc'd NUL-terminated copy of `s`.
pub fn c_string(s: &str, what: &str) -> NrtResult<*mut c_char> {
    let n = s.len() + 1;
    // SAFETY: plain allocation; checked for NULL below.
    let p = unsafe { malloc(n) }.cast::<u8>();
    if p.is_null() {
        return Err(no_memory(what, n));
    }
    // SAFETY: `p` holds `n` bytes; the source holds `n - 1`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr(), p, s.len());
        *p.add(s.len()) = 0;
    }
    Ok(p.cast())
}

/// A malloc'd buffer of `n` bytes (at least one) that `fill` writes; the
/// caller frees it with `free(3)`.
pub fn c_bytes(n: usize, what: &str, fill: impl FnOnce(&mut [u8])) -> NrtResult<*mut c_void> {
    // SAFETY: plain allocation; checked for NULL below.
    let p = unsafe { malloc(n.max(1)) }.cast::<u8>();
    if p.is_null() {
        return Err(no_memory(what, n));
    }
    // SAFETY: `p` holds `n` bytes, initialised here before the slice is made.
    let buf = unsafe {
        std::ptr::write_bytes(p, 0, n);
        std::slice::from_raw_parts_mut(p, n)
    };
    fill(buf);
    Ok(p.cast())
}

/// A malloc'd array of malloc'd NUL-terminated strings (what the
/// `*_get_*_types` calls return; the caller frees each and the array).
pub fn c_string_list(items: &[&str], what: &str) -> NrtResult<*mut *const c_char> {
    let n = items.len().max(1) * size_of::<*const c_char>();
    // SAFETY: plain allocation; checked for NULL below.
    let arr = unsafe { malloc(n) }.cast::<*const c_char>();
    if arr.is_null() {
        return Err(no_memory(what, n));
    }
    for (i, s) in items.iter().enumerate() {
        match c_string(s, what) {
            // SAFETY: `arr` holds `items.len()` pointers.
            Ok(p) => unsafe { *arr.add(i) = p },
            Err(e) => {
                // SAFETY: the first `i` entries were allocated above.
                unsafe { free_list(arr, i) };
                return Err(e);
            }
        }
    }
    Ok(arr)
}

/// Frees a list from [`c_string_list`] (`count` entries).
///
/// # Safety
/// `arr` must be NULL or a list of `count` strings allocated with malloc.
pub unsafe fn free_list(arr: *mut *const c_char, count: usize) {
    if arr.is_null() {
        return;
    }
    for i in 0..count {
        // SAFETY: per the caller.
        unsafe { free((*arr.add(i)).cast_mut().cast()) };
    }
    // SAFETY: per the caller.
    unsafe { free(arr.cast()) };
}

/// Frees one buffer from [`c_string`].
///
/// # Safety
/// `p` must be NULL or a pointer from [`c_string`] not freed yet.
pub unsafe fn free_string(p: *mut c_char) {
    // SAFETY: per the caller (free(NULL) does nothing).
    unsafe { free(p.cast()) };
}
