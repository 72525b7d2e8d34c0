//! The 16 KiB user TCM pool: `tcm_malloc` / `tcm_free` (first fit over
//! 64-byte blocks) and the RAII [`TcmBuf`]. Stream accessors take their
//! 4 KiB buffers from the same pool.

use crate::limits::TCM_POOL_BYTES;
use core::cell::UnsafeCell;
use core::marker::PhantomData;

/// Allocation granule.
const BLOCK: usize = 64;
const BLOCKS: usize = TCM_POOL_BYTES / BLOCK;

#[repr(C, align(64))]
struct Pool {
    bytes: [u8; TCM_POOL_BYTES],
    /// For each block: 0 free, else the block count of the allocation that
    /// starts here (continuation blocks hold `u16::MAX`).
    map: [u16; BLOCKS],
}

struct Global(UnsafeCell<Pool>);
// SAFETY: a wasm instance is single-threaded; on the host each thread
// gets its own pool (see `pool`).
unsafe impl Sync for Global {}

#[cfg(target_arch = "wasm32")]
fn pool() -> *mut Pool {
    static POOL: Global = Global(UnsafeCell::new(Pool { bytes: [0; TCM_POOL_BYTES], map: [0; BLOCKS] }));
    POOL.0.get()
}

#[cfg(not(target_arch = "wasm32"))]
fn pool() -> *mut Pool {
    std::thread_local! {
        static POOL: Global = const { Global(UnsafeCell::new(Pool { bytes: [0; TCM_POOL_BYTES], map: [0; BLOCKS] })) };
    }
    POOL.with(|p| p.0.get())
}

/// Allocates `size` bytes (64-byte aligned) from the TCM pool; null when
/// it does not fit.
pub fn tcm_malloc(size: usize) -> *mut u8 {
    if size == 0 || size > TCM_POOL_BYTES {
        return core::ptr::null_mut();
    }
    let need = size.div_ceil(BLOCK);
    // SAFETY: single-threaded access to this thread's pool.
    let p = unsafe { &mut *pool() };
    let mut i = 0;
    while i + need <= BLOCKS {
        match p.map[i] {
            0 => {
                let run = p.map[i..i + need].iter().take_while(|&&m| m == 0).count();
                if run == need {
                    p.map[i] = need as u16;
                    p.map[i + 1..i + need].fill(u16::MAX);
                    return p.bytes[i * BLOCK..].as_mut_ptr();
                }
                i += run;
            }
            u16::MAX => i += 1,
            n => i += usize::from(n),
        }
    }
    core::ptr::null_mut()
}

/// Returns an allocation of [`tcm_malloc`]; null and foreign pointers are
/// ignored.
pub fn tcm_free(ptr: *mut u8) {
    // SAFETY: single-threaded access to this thread's pool.
    let p = unsafe { &mut *pool() };
    let base = p.bytes.as_mut_ptr() as usize;
    let a = ptr as usize;
    if ptr.is_null() || a < base || a >= base + TCM_POOL_BYTES || !(a - base).is_multiple_of(BLOCK) {
        return;
    }
    let i = (a - base) / BLOCK;
    let n = p.map[i];
    if n == 0 || n == u16::MAX {
        return;
    }
    p.map[i..i + usize::from(n)].fill(0);
}

/// Bytes of the pool currently free.
pub fn tcm_free_bytes() -> usize {
    // SAFETY: single-threaded read of this thread's pool.
    let p = unsafe { &*pool() };
    p.map.iter().filter(|&&m| m == 0).count() * BLOCK
}

/// A typed TCM buffer, freed on drop.
pub struct TcmBuf<T: Copy> {
    ptr: *mut T,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Copy + Default> TcmBuf<T> {
    /// `len` elements, zero-initialised; `None` when the pool is full.
    pub fn new(len: usize) -> Option<TcmBuf<T>> {
        debug_assert!(core::mem::align_of::<T>() <= BLOCK);
        let ptr = tcm_malloc(len.checked_mul(core::mem::size_of::<T>())?.max(1)) as *mut T;
        if ptr.is_null() {
            return None;
        }
        for i in 0..len {
            // SAFETY: `ptr` has room for `len` elements and is aligned.
            unsafe { ptr.add(i).write(T::default()) };
        }
        Some(TcmBuf { ptr, len, _t: PhantomData })
    }
}

impl<T: Copy> core::ops::Deref for TcmBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised elements owned by this buffer.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> core::ops::DerefMut for TcmBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for TcmBuf<T> {
    fn drop(&mut self) {
        tcm_free(self.ptr as *mut u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_allocates_first_fit_and_coalesces() {
        let full = tcm_free_bytes();
        assert_eq!(full, TCM_POOL_BYTES);
        let a = tcm_malloc(4096);
        let b = tcm_malloc(100);
        let c = tcm_malloc(TCM_POOL_BYTES);
        assert!(!a.is_null() && !b.is_null() && c.is_null());
        assert_eq!(b as usize - a as usize, 4096);
        assert_eq!(tcm_free_bytes(), TCM_POOL_BYTES - 4096 - 128);
        tcm_free(a);
        let d = tcm_malloc(64);
        assert_eq!(d, a, "first fit reuses the freed hole");
        tcm_free(d);
        tcm_free(b);
        tcm_free(b); // double free is ignored
        assert_eq!(tcm_free_bytes(), TCM_POOL_BYTES);
        assert!(tcm_malloc(0).is_null());
        let big = tcm_malloc(TCM_POOL_BYTES);
        assert!(!big.is_null());
        assert!(tcm_malloc(1).is_null());
        tcm_free(big);
        {
            let mut buf = TcmBuf::<f32>::new(1000).unwrap();
            buf[999] = 2.0;
            assert_eq!(buf.iter().sum::<f32>(), 2.0);
        }
        assert_eq!(tcm_free_bytes(), TCM_POOL_BYTES);
    }
}
