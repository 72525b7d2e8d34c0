//! Kernels that misbehave on purpose, for the sandbox tests: the device
//! must turn each into a status while the host process lives on.
#![no_std]

use nrt_kernel::KernelError;

/// Stores far outside the core's memory: a MEMORY_OOB GPSIMD exception.
fn oob_write() -> Result<(), KernelError> {
    let far = 0x7FFF_FFF0usize as *mut u32;
    // SAFETY: deliberately invalid; the wasm sandbox traps on it.
    unsafe { core::ptr::write_volatile(far, 0xDEAD) };
    Ok(())
}

/// Never returns: the device's watchdog stops it and the op never
/// completes (the runtime reports a timeout).
fn spin() -> Result<(), KernelError> {
    let mut n = 0u32;
    loop {
        // SAFETY: reads a live local; volatile keeps the loop observable.
        n = unsafe { core::ptr::read_volatile(&n) }.wrapping_add(1);
    }
}

nrt_kernel::kernels!(oob_write, spin);
