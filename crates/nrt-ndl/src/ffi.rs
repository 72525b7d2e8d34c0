//! The crate's only `unsafe` code: the system calls of the kernel
//! transport (`ioctl(2)` on `/dev/neuronN`) and the emulated driver's
//! access to the caller's memory through the pointers an ioctl argument
//! carries (what the kernel does with `copy_from_user` / `copy_to_user`).
//!
//! The pointer contract: every argument struct this crate encodes is
//! built by [`crate::ops`] from borrows it holds across the call (an out
//! `u64` for a handle, the caller's buffer for a copy), so every address
//! inside an argument is valid for the length the argument states for
//! the duration of the call. The transports are crate-private: nothing
//! outside this crate can hand them an argument.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `ioctl(fd, cmd, arg)`: `Ok` on success, the `errno` otherwise.
pub(crate) fn ioctl(fd: &OwnedFd, cmd: u32, arg: &mut [u8]) -> Result<(), i32> {
    // SAFETY: `arg` is a live, exclusively borrowed buffer of the struct
    // size the command encodes (ops.rs encodes exactly `A::SIZE` bytes);
    // the pointers inside it follow the module's pointer contract, and
    // the kernel validates them again (EFAULT) before it touches them.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), cmd as libc::c_ulong, arg.as_mut_ptr()) };
    if rc < 0 { Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)) } else { Ok(()) }
}

/// Reads `buf.len()` bytes of caller memory at `ptr` into `buf` without
/// allocating (the small arrays an argument points at).
pub(crate) fn read_user(ptr: u64, buf: &mut [u8]) -> Option<()> {
    if buf.is_empty() {
        return Some(());
    }
    if ptr == 0 {
        return None;
    }
    // SAFETY: by the module's pointer contract `ptr` addresses at least
    // `buf.len()` live bytes the caller borrowed for the call; only read.
    let src = unsafe { std::slice::from_raw_parts(ptr as *const u8, buf.len()) };
    buf.copy_from_slice(src);
    Some(())
}

/// Copies `data` into caller memory at address `ptr` (the emulated
/// driver's `copy_to_user`). `None` for a null pointer.
pub(crate) fn copy_to_user(ptr: u64, data: &[u8]) -> Option<()> {
    if data.is_empty() {
        return Some(());
    }
    if ptr == 0 {
        return None;
    }
    // SAFETY: by the module's pointer contract `ptr` is the address of a
    // live, exclusively borrowed buffer of at least `data.len()` bytes
    // (an out field or the destination of a copy) that nothing else
    // reads or writes during the ioctl.
    let dst = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, data.len()) };
    dst.copy_from_slice(data);
    Some(())
}

/// Runs `f` on a mutable view of caller memory (a copy-out target),
/// without allocating: the emulated driver reads device bytes straight
/// into the caller's buffer.
pub(crate) fn with_user_mut<R>(ptr: u64, len: usize, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
    if len == 0 {
        return Some(f(&mut []));
    }
    if ptr == 0 {
        return None;
    }
    // SAFETY: as in `copy_to_user`: `ptr` addresses `len` live bytes the
    // caller borrowed exclusively for the call.
    let dst = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, len) };
    Some(f(dst))
}

/// Runs `f` on a view of caller memory (a copy-in source), without
/// allocating.
pub(crate) fn with_user<R>(ptr: u64, len: usize, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
    if len == 0 {
        return Some(f(&[]));
    }
    if ptr == 0 {
        return None;
    }
    // SAFETY: by the module's pointer contract `ptr` addresses `len`
    // live bytes the caller borrowed for the call; only read.
    let src = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
    Some(f(src))
}

/// `mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)`: the
/// address of the new mapping, or the `errno`.
pub(crate) fn mmap(fd: &OwnedFd, offset: u64, len: u64) -> Result<usize, i32> {
    let len = usize::try_from(len).map_err(|_| libc::EINVAL)?;
    let offset = libc::off_t::try_from(offset).map_err(|_| libc::EINVAL)?;
    // SAFETY: a new shared mapping at an address the kernel picks: it
    // aliases no Rust object. Its bytes are device memory the caller only
    // reaches through raw addresses (nrt_hal::HostWindow), and it stays
    // mapped until `munmap` below.
    let va = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), offset) };
    if va == libc::MAP_FAILED { Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)) } else { Ok(va as usize) }
}

/// `munmap(va, len)` of a mapping [`mmap`] made.
pub(crate) fn munmap(va: usize, len: u64) {
    // SAFETY: `va .. va + len` is a mapping `mmap` returned that the
    // device owns and unmaps once, when it is dropped, after the runtime
    // that used its windows has gone.
    unsafe { libc::munmap(va as *mut libc::c_void, len as usize) };
}

/// Takes ownership of the descriptor a driver call just created for this
/// process (DMABUF_FD's out field).
pub(crate) fn own_fd(fd: i32) -> Option<OwnedFd> {
    // SAFETY: the driver created `fd` for this call and handed it to
    // nobody else; checked non-negative.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}
