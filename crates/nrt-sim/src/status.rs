//! The simulated device's status file (`docs/status-file.md`): the
//! memory-mapped words of [`nrt_hal::status`] that the device publishes
//! for the tools, as the driver publishes sysfs.
//!
//! The device maps `<dir>/<namespace>-nd<d>.status` (created on first
//! use, shared by every process simulating that device) when the process
//! first reserves cores on it, claims a free or stale slot by a
//! compare-and-swap on the slot's pid word, and writes the process's
//! identity and reserved cores. Its engines then count busy time and
//! executions into the slot ([`CoreActivity`]); the runtime writes the
//! rest through [`nrt_hal::Device::status`]. The slot is released when the
//! device is dropped; a process that dies keeps its slot, which readers
//! and the next claimer see as stale by its pid and start time.
//!
//! The mapping is the one `unsafe` of this module: `mmap` of the file and
//! the view of its bytes as `AtomicU64` words.

#![allow(unsafe_code)]

use nrt_hal::status::{self, SlotWriter, StatusWords};
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// A shared, writable mapping of one status file.
#[derive(Debug)]
struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is only ever accessed as `AtomicU64` words, which
// are safe to share between threads (and processes).
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl StatusWords for Mapping {
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: `ptr` is a live MAP_SHARED mapping of `len` bytes (a
        // multiple of 8, page aligned) for the lifetime of `self`; other
        // processes touch it only through atomic operations too.
        unsafe { std::slice::from_raw_parts(self.ptr as *const AtomicU64, self.len / 8) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping the region mapped in `map`, exactly once.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

fn map(path: &Path) -> std::io::Result<Mapping> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
    {
        use std::os::unix::fs::PermissionsExt;
        // Other users' tools may read it (sysfs is world-readable too).
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    if file.metadata()?.len() < status::FILE_BYTES as u64 {
        file.set_len(status::FILE_BYTES as u64)?;
    }
    let len = status::FILE_BYTES;
    // SAFETY: a fresh shared mapping of an open file of at least `len`
    // bytes; the result is checked below.
    let ptr = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0)
    };
    if ptr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Mapping { ptr, len })
}

/// The writer-local clock of busy spans (only differences are published).
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// What the device knows of itself, for the header.
pub(crate) struct HeaderInfo<'a> {
    pub device_index: u32,
    pub physical_cores: u32,
    pub memory_bytes: u64,
    pub host_memory_bytes: u64,
    pub arch: &'a str,
}

fn pack_arch(name: &str) -> [u64; 2] {
    let mut b = [0u8; 16];
    for (d, s) in b.iter_mut().zip(name.bytes().take(15)) {
        *d = s;
    }
    [u64::from_le_bytes(b[..8].try_into().unwrap_or_default()), u64::from_le_bytes(b[8..].try_into().unwrap_or_default())]
}

/// Maps the status file at `path`, writes its header and claims a slot for
/// this process. `None` (with the reason) when the file cannot be mapped
/// or every slot belongs to a live process.
pub(crate) fn claim(path: &Path, h: &HeaderInfo<'_>) -> Result<SlotWriter, String> {
    let m = map(path).map_err(|e| format!("status file {}: {e}", path.display()))?;
    let words = m.words();
    let hw = |i: usize, v: u64| words[i].store(v, Ordering::Relaxed);
    // Every process simulating this device writes the same header values.
    hw(status::header::VERSION, status::VERSION);
    hw(status::header::DEVICE_INDEX, u64::from(h.device_index));
    hw(status::header::PHYSICAL_CORES, u64::from(h.physical_cores));
    hw(status::header::MEMORY_BYTES, h.memory_bytes);
    hw(status::header::HOST_MEMORY_BYTES, h.host_memory_bytes);
    hw(status::header::SLOTS, status::SLOTS as u64);
    hw(status::header::SLOT_WORDS, status::SLOT_WORDS as u64);
    let [a0, a1] = pack_arch(h.arch);
    hw(status::header::ARCH_NAME, a0);
    hw(status::header::ARCH_NAME + 1, a1);
    words[status::header::MAGIC].store(status::MAGIC, Ordering::Release);
    let me = std::process::id();
    let start = status::process_start_time(me).ok_or("no /proc/self/stat: cannot name this process in the status file")?;
    for s in 0..status::SLOTS {
        let base = status::HEADER_WORDS + s * status::SLOT_WORDS;
        let pid_w = &words[base + status::slot::PID];
        let pid = pid_w.load(Ordering::Acquire);
        let free = pid == 0
            || !status::process_alive(pid as u32, words[base + status::slot::START_TIME].load(Ordering::Acquire));
        if !free || pid_w.compare_exchange(pid, u64::from(me), Ordering::AcqRel, Ordering::Relaxed).is_err() {
            continue;
        }
        // Ours: clear what a dead owner left, then name ourselves.
        let generation = words[base + status::slot::GENERATION].load(Ordering::Relaxed);
        for w in &words[base + 1..base + status::SLOT_WORDS] {
            w.store(0, Ordering::Relaxed);
        }
        words[base + status::slot::GENERATION].store(generation + 1, Ordering::Relaxed);
        words[base + status::slot::START_TIME].store(start, Ordering::Release);
        let writer = SlotWriter::new(Box::new(m), s);
        let tag = std::env::var("NEURON_PROCESS_TAG").unwrap_or_default();
        writer.set_identity(&status::command_line(std::process::id()).unwrap_or_default(), &tag, env!("CARGO_PKG_VERSION"));
        return Ok(writer);
    }
    Err(format!("status file {}: all {} slots belong to live processes", path.display(), status::SLOTS))
}

/// The per-core view of the claimed slot the engines count into.
#[derive(Debug, Default)]
pub struct CoreActivity {
    slot: OnceLock<std::sync::Arc<SlotWriter>>,
}

impl CoreActivity {
    /// Points the core's counters at the process's slot (once).
    pub(crate) fn attach(&self, w: std::sync::Arc<SlotWriter>) {
        let _ = self.slot.set(w);
    }

    /// An engine of physical core `core` entered an execution.
    #[inline]
    pub(crate) fn started(&self, core: u32) {
        if let Some(s) = self.slot.get() {
            s.engine_started(core, now_ns());
        }
    }

    /// An engine of physical core `core` finished its execution.
    #[inline]
    pub(crate) fn ended(&self, core: u32) {
        if let Some(s) = self.slot.get() {
            s.engine_ended(core, now_ns());
        }
    }

    /// Physical core `core`'s PE array performed `n` floating-point
    /// operations.
    #[inline]
    pub(crate) fn flops(&self, core: u32, n: u64) {
        if let Some(s) = self.slot.get() {
            s.add_flops(core, n);
        }
    }

    /// The core detected a memory error (counted device-wide).
    pub(crate) fn hardware_error(&self, e: status::HardwareError) {
        if let Some(s) = self.slot.get() {
            s.hardware_error(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::status_read;

    fn header() -> HeaderInfo<'static> {
        HeaderInfo { device_index: 3, physical_cores: 8, memory_bytes: 1 << 30, host_memory_bytes: 1 << 20, arch: "trn2" }
    }

    #[test]
    fn claim_publish_and_release_a_slot() {
        let dir = std::env::temp_dir().join(format!("nrt-sim-status-test-{}", std::process::id()));
        let path = dir.join("t-nd3.status");
        let _ = std::fs::remove_file(&path);
        let a = claim(&path, &header()).unwrap();
        let b = claim(&path, &header()).unwrap();
        assert_ne!(a.index(), b.index(), "two devices of one process own two slots");
        a.add_cores(0b11);
        a.engine_started(1, 100);
        a.engine_started(1, 150);
        a.engine_ended(1, 180);
        a.engine_ended(1, 400);
        a.add_memory(Some(1), status::MemCategory::Constants, 4096);
        a.add_memory(Some(1), status::MemCategory::Constants, -1024);
        let d = status_read::read(&path).unwrap();
        assert_eq!((d.device_index, d.physical_cores, d.arch.as_str()), (3, 8, "trn2"));
        assert_eq!(d.processes.len(), 2);
        let p = d.processes.iter().find(|p| p.slot == a.index() as u32).unwrap();
        assert_eq!(p.pid, std::process::id());
        assert_eq!(p.reserved_cores(), vec![0, 1]);
        assert_eq!((p.cores[1].busy_ns, p.cores[1].device_executions), (300, 1));
        assert_eq!(p.cores[1].mem(status::MemCategory::Constants), 3072);
        assert!(p.command.contains("nrt_sim"), "{}", p.command);
        b.release();
        assert_eq!(status_read::read(&path).unwrap().processes.len(), 1);
        // A slot whose owner looks dead is stale to readers and reclaimed.
        let bytes = std::fs::read(&path).unwrap();
        let d = status_read::decode(&bytes, |_, _| false).unwrap();
        assert_eq!((d.processes.len(), d.stale.len()), (0, 1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
