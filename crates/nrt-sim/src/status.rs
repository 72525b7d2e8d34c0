//! The simulated machine's datastore (`docs/status-file.md`): the
//! memory-mapped words of [`nrt_hal::status`], the Neuron driver's `nds`
//! store of the simulated device, which the tools read.
//!
//! The driver's memory is a file, `<dir>/<namespace>-nd<d>.nds` (created
//! on first use, shared by every process simulating that device), so that
//! every process sees one store, as every process sees one driver. The
//! device acquires this process's entry when the process first uses it
//! ([`acquire`], with the driver's rules: by pid, a compare-and-swap on
//! the entry's pid word) and writes the process's identity and reserved
//! cores. Its engines then count busy time, executions and
//! multiply-accumulates into the entry ([`CoreActivity`]); the runtime
//! writes the rest through [`nrt_hal::Device::status`], and the emulated
//! driver hands the same entry out for ACQUIRE_NEURON_DS
//! ([`nrt_hal::Device::datastore`]). The entry is released when the last
//! device holding it is dropped; a process that dies keeps its entry,
//! which readers and the next acquirer see as stale by its pid and start
//! time (the kernel driver would clear it at the process's exit).
//!
//! The mapping is the one `unsafe` of this module: `mmap` of the file and
//! the view of its bytes as `AtomicU64` words.

#![allow(unsafe_code)]

use nrt_hal::status::{self, SlotWriter, StatusWords, table};
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// A shared, writable mapping of one datastore file.
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

/// What the device knows of itself, for the table.
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

/// The entries this process holds, with how many devices hold each (the
/// driver's reference count on an entry: one process has one entry per
/// device, however many times it acquires it).
static HELD: Mutex<Vec<(PathBuf, Arc<SlotWriter>, usize)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(PathBuf, Arc<SlotWriter>, usize)>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Acquires this process's entry in the datastore at `path`, as the
/// driver's ACQUIRE_NEURON_DS with pid 0 does: the entry this process
/// already holds (one more reference), else a free one (never used first,
/// then the least recently cleared; an entry whose owner died counts as
/// free and is cleared, as the driver clears it when its owner exits).
/// Writes the table's device description and the process identity. Fails
/// (with the reason) when the store cannot be mapped or every entry
/// belongs to a live process (the driver's ENOMEM).
pub(crate) fn acquire(path: &Path, h: &HeaderInfo<'_>) -> Result<Arc<SlotWriter>, String> {
    let mut held = held();
    if let Some((_, w, n)) = held.iter_mut().find(|(p, _, _)| p == path) {
        *n += 1;
        return Ok(Arc::clone(w));
    }
    let m = map(path).map_err(|e| format!("datastore {}: {e}", path.display()))?;
    let words = m.words();
    let hw = |i: usize, v: u64| words[i].store(v, Ordering::Relaxed);
    // Every process simulating this device writes the same values.
    hw(table::VERSION, status::VERSION);
    hw(table::DEVICE_INDEX, u64::from(h.device_index));
    hw(table::PHYSICAL_CORES, u64::from(h.physical_cores));
    hw(table::MEMORY_BYTES, h.memory_bytes);
    hw(table::HOST_MEMORY_BYTES, h.host_memory_bytes);
    let [a0, a1] = pack_arch(h.arch);
    hw(table::ARCH_NAME, a0);
    hw(table::ARCH_NAME + 1, a1);
    words[table::MAGIC].store(status::MAGIC, Ordering::Release);
    let me = std::process::id();
    let start = status::process_start_time(me).ok_or("no /proc/self/stat: cannot name this process in the datastore")?;
    let rec = |e: usize, f: usize| &words[table::record(e, f)];
    // Races with other processes are settled by the compare-and-swap on
    // the pid word; a lost race looks again, a bounded number of times.
    for _ in 0..4 * status::ENTRIES {
        let mine = (0..status::ENTRIES).find(|&e| {
            rec(e, table::PID).load(Ordering::Acquire) == u64::from(me) && rec(e, table::START_TIME).load(Ordering::Acquire) == start
        });
        let (e, was) = match mine {
            Some(e) => (e, u64::from(me)),
            None => {
                let free = (0..status::ENTRIES)
                    .filter_map(|e| {
                        let pid = rec(e, table::PID).load(Ordering::Acquire);
                        let stale = pid != 0 && !status::process_alive(pid as u32, rec(e, table::START_TIME).load(Ordering::Acquire));
                        (pid == 0 || stale).then(|| (stale, rec(e, table::CLEAR_TICK).load(Ordering::Relaxed), e, pid))
                    })
                    .min();
                let Some((_, _, e, pid)) = free else {
                    return Err(format!("datastore {}: all {} entries belong to live processes", path.display(), status::ENTRIES));
                };
                if rec(e, table::PID).compare_exchange(pid, u64::from(me), Ordering::AcqRel, Ordering::Relaxed).is_err() {
                    continue;
                }
                (e, pid)
            }
        };
        let at = status::TABLE_WORDS + e * status::ENTRY_WORDS;
        if was != u64::from(me) {
            // A new entry, or a dead owner's: cleared for us.
            for w in &words[at..at + status::ENTRY_WORDS] {
                w.store(0, Ordering::Relaxed);
            }
        }
        rec(e, table::START_TIME).store(start, Ordering::Release);
        let writer = Arc::new(SlotWriter::new(Box::new(m), e));
        let tag = std::env::var("NEURON_PROCESS_TAG").unwrap_or_default();
        writer.set_identity(&status::command_line(me).unwrap_or_default(), &tag, env!("CARGO_PKG_VERSION"));
        held.push((path.to_path_buf(), Arc::clone(&writer), 1));
        return Ok(writer);
    }
    Err(format!("datastore {}: other processes kept taking the free entries", path.display()))
}

/// Drops one reference to an entry [`acquire`] gave; the last clears and
/// frees it (the driver's RELEASE_NEURON_DS by its owner).
pub(crate) fn release(w: &Arc<SlotWriter>) {
    let mut held = held();
    let Some(i) = held.iter().position(|(_, h, _)| Arc::ptr_eq(h, w)) else { return };
    held[i].2 -= 1;
    if held[i].2 == 0 {
        let (_, w, _) = held.swap_remove(i);
        w.release();
    }
}

/// The per-core view of the acquired entry the engines count into.
#[derive(Debug, Default)]
pub struct CoreActivity {
    slot: OnceLock<std::sync::Arc<SlotWriter>>,
}

impl CoreActivity {
    /// Points the core's counters at the process's entry (once).
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

    /// Physical core `core`'s PE array performed `n` multiply-accumulates.
    #[inline]
    pub(crate) fn macs(&self, core: u32, n: u64) {
        if let Some(s) = self.slot.get() {
            s.add_macs(core, n);
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

    fn read(path: &Path) -> status_read::DeviceStatus {
        status_read::decode(&std::fs::read(path).unwrap(), status::process_alive).unwrap()
    }

    #[test]
    fn acquire_publish_and_release_an_entry() {
        let dir = std::env::temp_dir().join(format!("nrt-sim-status-test-{}", std::process::id()));
        let path = dir.join("t-nd3.nds");
        let _ = std::fs::remove_file(&path);
        let a = acquire(&path, &header()).unwrap();
        let b = acquire(&path, &header()).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one process has one entry per device, acquired twice");
        a.add_cores(0b11);
        a.engine_started(1, 100);
        a.engine_started(1, 150);
        a.engine_ended(1, 180);
        a.engine_ended(1, 400);
        a.add_memory(Some(1), status::MemCategory::Constants, 4096);
        a.add_memory(Some(1), status::MemCategory::Constants, -1024);
        let d = read(&path);
        assert_eq!((d.device_index, d.physical_cores, d.arch.as_str()), (3, 8, "trn2"));
        assert_eq!(d.processes.len(), 1);
        let p = &d.processes[0];
        assert_eq!((p.pid, p.slot), (std::process::id(), a.index() as u32));
        assert_eq!(p.reserved_cores(), vec![0, 1]);
        assert_eq!((p.cores[1].busy_ns, p.cores[1].device_executions), (300, 1));
        assert_eq!(p.cores[1].mem(status::MemCategory::Constants), 3072);
        assert!(p.command.contains("nrt_sim"), "{}", p.command);
        release(&b);
        assert_eq!(read(&path).processes.len(), 1, "one reference is left");
        // An entry whose owner looks dead is stale to readers.
        let d = status_read::decode(&std::fs::read(&path).unwrap(), |_, _| false).unwrap();
        assert_eq!((d.processes.len(), d.stale.len()), (0, 1));
        release(&a);
        let bytes = std::fs::read(&path).unwrap();
        let d = status_read::decode(&bytes, |_, _| true).unwrap();
        assert_eq!((d.processes.len(), d.stale.len()), (0, 0), "the last reference clears the entry");
        let e = a.index();
        let rec = |f| u64::from_le_bytes(bytes[table::record(e, f) * 8..][..8].try_into().unwrap());
        assert!(rec(table::CLEAR_TICK) > 0, "stamped with a clear tick");
        let at = status::entry_offset(e) as usize;
        assert!(bytes[at..at + status::ENTRY_BYTES].iter().all(|&b| b == 0), "zeroed");
        // The next acquire prefers a never-used entry over the cleared one.
        let c = acquire(&path, &header()).unwrap();
        assert_ne!(c.index(), e);
        release(&c);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
