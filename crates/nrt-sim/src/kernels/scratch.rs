//! Recycled working buffers, so steady-state execution allocates nothing.
//!
//! Every compute instruction needs short-lived buffers: gathered operand
//! tiles, raw element copies, staging rows. Allocating them per instruction
//! cost a few hundred heap allocations per model execution. Instead, a
//! dropped [`super::Tile`] or [`super::pattern::RawTile`] hands its vector
//! back to a small per-thread pool, and the next buffer of a fitting size is
//! taken from there. Engines run on a fixed set of worker threads (or the
//! caller's, in deterministic mode), so after the first execution the pools
//! hold every size a program needs.
//!
//! Engines move between worker threads, and a buffer taken on one thread
//! is often dropped on another (weights loaded by one LDWEIGHTS, replaced
//! by the next on another worker), so per-thread pools alone would drain
//! on one thread and overflow on the other, allocating for ever. Each
//! thread's pool therefore spills into, and refills from, one shared pool
//! (a mutex taken only on a local miss or overflow): after warm-up the
//! pools together hold every buffer a program needs, whichever thread
//! runs which engine.
//!
//! The pools are bounded ([`MAX_POOLED`] vectors per thread,
//! [`MAX_SHARED`] shared, [`MAX_POOLED_BYTES`] each), so a one-off huge
//! operand does not stay resident.

use std::cell::RefCell;
use std::sync::Mutex;

/// Most vectors kept per element type and thread.
pub const MAX_POOLED: usize = 32;
/// Most vectors kept per element type in the shared pool.
pub const MAX_SHARED: usize = 64;
/// Largest vector (in bytes of capacity) worth keeping.
pub const MAX_POOLED_BYTES: usize = 64 << 20;

thread_local! {
    static F32: RefCell<Vec<Vec<f32>>> = const { RefCell::new(Vec::new()) };
    static BYTES: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The shared pools behind the per-thread ones.
static SHARED_F32: Mutex<Vec<Vec<f32>>> = Mutex::new(Vec::new());
static SHARED_BYTES: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Removes from `pool` the smallest vector with capacity for `len`
/// elements, among equals one that already holds `len` (a buffer taken
/// for overwriting then needs no fill); `None` when none is large enough.
fn take_best<T>(pool: &mut Vec<Vec<T>>, len: usize) -> Option<Vec<T>> {
    let best = pool
        .iter()
        .enumerate()
        .filter(|(_, v)| v.capacity() >= len)
        .min_by_key(|(_, v)| (v.capacity(), v.len() < len))
        .map(|(i, _)| i)?;
    Some(pool.swap_remove(best))
}

/// Takes a vector with capacity for `len` elements, emptied: from this
/// thread's pool, else from the shared one; `None` when neither has one.
fn take<T>(local: &RefCell<Vec<Vec<T>>>, shared: &Mutex<Vec<Vec<T>>>, len: usize) -> Option<Vec<T>> {
    let mut v = take_as_is(local, shared, len)?;
    v.clear();
    Some(v)
}

/// [`take`] without emptying: the vector keeps what its last user left.
fn take_as_is<T>(local: &RefCell<Vec<Vec<T>>>, shared: &Mutex<Vec<Vec<T>>>, len: usize) -> Option<Vec<T>> {
    match local.try_borrow_mut().ok().and_then(|mut p| take_best(&mut p, len)) {
        Some(v) => Some(v),
        None => take_best(&mut *shared.lock().ok()?, len),
    }
}

fn give<T>(local: &RefCell<Vec<Vec<T>>>, shared: &Mutex<Vec<Vec<T>>>, v: Vec<T>) {
    if v.capacity() == 0 || v.capacity() * size_of::<T>() > MAX_POOLED_BYTES {
        return;
    }
    if let Ok(mut pool) = local.try_borrow_mut()
        && pool.len() < MAX_POOLED
    {
        // The local pool was sized on first use; pushing within its
        // capacity does not allocate.
        if pool.capacity() == 0 {
            pool.reserve_exact(MAX_POOLED);
        }
        pool.push(v);
        return;
    }
    if let Ok(mut pool) = shared.lock()
        && pool.len() < MAX_SHARED
    {
        if pool.capacity() == 0 {
            pool.reserve_exact(MAX_SHARED);
        }
        pool.push(v);
    }
}

/// An f32 vector of `len` copies of `value`, reusing pooled storage.
pub fn f32_filled(len: usize, value: f32) -> Vec<f32> {
    match F32.with(|p| take(p, &SHARED_F32, len)) {
        Some(mut v) => {
            v.resize(len, value);
            v
        }
        // A fresh zeroed vector comes from the allocator's zeroed pages
        // without touching them.
        None => vec![value; len],
    }
}

/// An f32 vector of `len` elements whose values are whatever its pooled
/// storage last held (zeros where it grows): for an output every element
/// of which is written before it is read (a GEMM's destination), where
/// [`f32_filled`] would write the whole buffer once for nothing.
pub fn f32_for_overwrite(len: usize) -> Vec<f32> {
    match F32.with(|p| take_as_is(p, &SHARED_F32, len)) {
        Some(mut v) => {
            v.truncate(len);
            v.resize(len, 0.0);
            v
        }
        None => vec![0.0; len],
    }
}

/// Returns an f32 vector's storage to this thread's pool.
pub fn recycle_f32(v: Vec<f32>) {
    // During thread teardown the pool may be gone; the vector is then freed.
    let _ = F32.try_with(|p| give(p, &SHARED_F32, v));
}

/// A byte vector of `len` zeros, reusing pooled storage.
pub fn bytes_zeroed(len: usize) -> Vec<u8> {
    match BYTES.with(|p| take(p, &SHARED_BYTES, len)) {
        Some(mut v) => {
            v.resize(len, 0);
            v
        }
        None => vec![0; len],
    }
}

/// A byte vector of `len` bytes whose values are whatever its pooled
/// storage last held (zeros where it grows): for a buffer every byte of
/// which is written before it is read (a gathered operand, a transposed
/// tile), where [`bytes_zeroed`] would write the whole buffer once for
/// nothing.
pub fn bytes_for_overwrite(len: usize) -> Vec<u8> {
    match BYTES.with(|p| take_as_is(p, &SHARED_BYTES, len)) {
        Some(mut v) => {
            v.truncate(len);
            v.resize(len, 0);
            v
        }
        None => vec![0; len],
    }
}

/// An empty byte vector with room for `cap` bytes, reusing pooled storage.
pub fn bytes_with_capacity(cap: usize) -> Vec<u8> {
    BYTES.with(|p| take(p, &SHARED_BYTES, cap)).unwrap_or_else(|| Vec::with_capacity(cap))
}

/// Returns a byte vector's storage to this thread's pool.
pub fn recycle_bytes(v: Vec<u8>) {
    // During thread teardown the pool may be gone; the vector is then freed.
    let _ = BYTES.try_with(|p| give(p, &SHARED_BYTES, v));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_is_reused_and_contents_are_fresh() {
        let mut a = f32_filled(1000, 1.5);
        a[3] = 9.0;
        let ptr = a.as_ptr();
        recycle_f32(a);
        let b = f32_filled(800, 0.0);
        assert_eq!(b.as_ptr(), ptr, "the pooled vector is reused");
        assert!(b.iter().all(|x| *x == 0.0) && b.len() == 800);
        let e = f32_for_overwrite(700);
        assert_eq!(e.len(), 700);
        recycle_f32(e);
        let c = bytes_zeroed(10);
        assert_eq!(c, vec![0u8; 10]);
        recycle_bytes(c);
        let o = bytes_for_overwrite(7);
        assert_eq!(o.len(), 7);
        recycle_bytes(o);
        let d = bytes_with_capacity(5);
        assert!(d.is_empty() && d.capacity() >= 5);
    }

    /// Of two pooled vectors of one capacity, a buffer taken for
    /// overwriting is the one already that long (no zero fill), whichever
    /// came back first.
    #[test]
    fn overwriting_takes_a_vector_already_that_long() {
        // An unusual size, so no other buffer of this thread fits it.
        const CAP: usize = 1_234_567;
        let mut short = Vec::with_capacity(CAP);
        short.resize(10, 1u8);
        let long = vec![7u8; CAP];
        assert_eq!((short.capacity(), long.capacity()), (CAP, CAP));
        let want = long.as_ptr();
        recycle_bytes(short);
        recycle_bytes(long);
        let got = bytes_for_overwrite(CAP);
        assert_eq!((got.as_ptr(), got.len()), (want, CAP));
        recycle_bytes(got);
    }

    #[test]
    fn a_buffer_dropped_on_another_thread_is_reused() {
        // An unusual size, so no other test's buffer fits it better.
        const LEN: usize = 3_000_017;
        let ptr = std::thread::spawn(|| {
            // Fill this thread's pool, so the next vector spills to the
            // shared one.
            for _ in 0..MAX_POOLED {
                recycle_f32(vec![0.0; 4]);
            }
            let v = vec![1.0f32; LEN];
            let ptr = v.as_ptr() as usize;
            recycle_f32(v);
            ptr
        })
        .join()
        .unwrap();
        let got = std::thread::spawn(|| {
            let v = f32_filled(LEN, 0.0);
            (v.as_ptr() as usize, v.iter().all(|x| *x == 0.0))
        })
        .join()
        .unwrap();
        assert_eq!(got, (ptr, true), "the vector came back through the shared pool, refilled");
    }

    #[test]
    fn pools_are_bounded() {
        for _ in 0..(MAX_POOLED + 10) {
            recycle_f32(vec![0.0; 4]);
        }
        assert!(F32.with(|p| p.borrow().len()) <= MAX_POOLED);
        recycle_bytes(Vec::with_capacity(MAX_POOLED_BYTES + 1));
        assert!(BYTES.with(|p| p.borrow().iter().all(|v| v.capacity() <= MAX_POOLED_BYTES)));
    }
}
