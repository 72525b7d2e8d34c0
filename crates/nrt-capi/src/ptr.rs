//! Checked access to the raw pointers C callers pass in. Every export
//! validates its pointers here before touching them; a NULL where a value
//! is required is NRT_INVALID naming the parameter.

use nrt_core::{NrtError, NrtResult};
use std::ffi::{CStr, c_char, c_void};

/// NRT_INVALID for a NULL `name`.
pub fn non_null<T>(p: *const T, name: &str) -> NrtResult<()> {
    if p.is_null() { Err(NrtError::invalid(format!("{name} is NULL; expected a valid pointer"))) } else { Ok(()) }
}

/// Writes `v` through an output pointer already checked by [`non_null`].
///
/// # Safety
/// `p` must be non-NULL, aligned and valid for a write of `T`.
pub unsafe fn write<T>(p: *mut T, v: T) {
    // SAFETY: the caller guarantees `p` is valid for writes.
    unsafe { p.write_unaligned(v) }
}

/// A C string argument as Rust text (invalid UTF-8 is replaced).
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string.
pub unsafe fn string(p: *const c_char, name: &str) -> NrtResult<String> {
    non_null(p, name)?;
    // SAFETY: non-NULL and NUL-terminated per the caller.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// An optional C string: NULL reads as the empty string.
///
/// # Safety
/// As [`string`].
pub unsafe fn string_or_empty(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL and NUL-terminated per the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `len` bytes at `p` (NULL is allowed only for `len == 0`).
///
/// # Safety
/// `p` must be valid for reads of `len` bytes for `'a`.
pub unsafe fn bytes<'a>(p: *const c_void, len: usize, name: &str) -> NrtResult<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    non_null(p, name)?;
    check_len(len, name)?;
    // SAFETY: non-NULL, length checked, validity per the caller.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// `len` writable bytes at `p` (NULL is allowed only for `len == 0`).
///
/// # Safety
/// `p` must be valid for writes of `len` bytes for `'a` and not aliased.
pub unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize, name: &str) -> NrtResult<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    non_null(p, name)?;
    check_len(len, name)?;
    // SAFETY: non-NULL, length checked, validity per the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<u8>(), len) })
}

fn check_len(len: usize, name: &str) -> NrtResult<()> {
    if len > isize::MAX as usize {
        return Err(NrtError::invalid(format!("{name}: size {len} is larger than any buffer can be")));
    }
    Ok(())
}

/// Copies `s` into a fixed C char array, truncated to leave a NUL.
pub fn fill_chars(dst: &mut [c_char], s: &str) {
    dst.fill(0);
    let room = dst.len().saturating_sub(1);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(room)) {
        *d = b as c_char;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_sizes() {
        assert!(non_null(std::ptr::null::<u8>(), "x").unwrap_err().message.contains("x is NULL"));
        let b = unsafe { bytes(std::ptr::null(), 0, "b") }.unwrap();
        assert!(b.is_empty());
        assert!(unsafe { bytes(std::ptr::null(), 3, "b") }.is_err());
        let mut a = [1 as c_char; 4];
        fill_chars(&mut a, "abcdef");
        assert_eq!(a, [b'a' as c_char, b'b' as c_char, b'c' as c_char, 0]);
    }
}
