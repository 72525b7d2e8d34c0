//! Pinning the calling thread to one CPU: libnrt's
//! `NEURON_RT_ONE_THREAD_PER_CORE` gives each network proxy thread a CPU
//! of its own. The runtime crate has no `unsafe`; the system calls live
//! here, beside the transport's.

/// Pins the calling thread to the `index`-th CPU (modulo their number)
/// of those the process may run on; returns that CPU's number.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(index: usize) -> Result<usize, String> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain bytes; all zeroes is the empty set.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer and size describe `allowed`; pid 0 is this thread.
    if unsafe { libc::sched_getaffinity(0, size, &mut allowed) } != 0 {
        return Err(format!("sched_getaffinity: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: CPU_ISSET reads `allowed` within CPU_SETSIZE.
    let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) }).collect();
    let Some(&cpu) = cpus.get(index % cpus.len().max(1)) else {
        return Err("the process may run on no CPU".to_string());
    };
    // SAFETY: as above.
    let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` < CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu, &mut one) };
    // SAFETY: the pointer and size describe `one`.
    if unsafe { libc::sched_setaffinity(0, size, &one) } != 0 {
        return Err(format!("sched_setaffinity to CPU {cpu}: {}", std::io::Error::last_os_error()));
    }
    Ok(cpu)
}

/// Pinning is Linux's here; elsewhere it is refused with the reason.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_index: usize) -> Result<usize, String> {
    Err("pinning a thread to a CPU is implemented for Linux only".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_on_an_allowed_cpu() {
        // In a thread of its own, so the test runner's thread keeps its mask.
        let cpu = std::thread::spawn(|| pin_current_thread(1)).join().unwrap().unwrap();
        let now = std::thread::spawn(move || {
            pin_current_thread(1).unwrap();
            // SAFETY: sched_getcpu has no arguments.
            unsafe { libc::sched_getcpu() }
        })
        .join()
        .unwrap();
        assert_eq!(now as usize, cpu);
    }
}
