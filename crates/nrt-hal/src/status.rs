//! The device status file: what a device publishes about the processes
//! using it, for the tools (`nrt ls`, `nrt top`, `nrt monitor`) to read
//! from other processes, as the real tools read the driver's sysfs.
//!
//! One file per device, a fixed array of little-endian 64-bit words
//! (`docs/status-file.md` has the layout). A header describes the device;
//! each process that reserves cores on it owns one slot, claimed by a
//! compare-and-swap on the slot's pid word. Every counter is a plain
//! atomic store or add on the mapped words: no lock, no allocation, so the
//! execute path may publish. A reader copies the file and checks each
//! slot's pid and start time against `/proc` ([`process_alive`]): a slot
//! whose process died (or whose pid was reused) is stale and skipped.
//!
//! Who writes what: the device backend maps the file, claims the slot,
//! and writes the process identity, the reserved cores, the per-core busy
//! time, device execution count and FLOPs, and the device's memory-error
//! counters in the header; the runtime writes memory by category,
//! execution outcomes and latencies, and loaded models, through
//! the [`SlotWriter`] the device hands out ([`crate::Device::status`]) —
//! the way libnrt writes its counters into the driver's datastore.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first word of every status file: `NRTSTAT1` in ASCII.
pub const MAGIC: u64 = u64::from_le_bytes(*b"NRTSTAT1");
/// Layout version; readers reject other versions.
pub const VERSION: u64 = 3;
/// Words of the header.
pub const HEADER_WORDS: usize = 16;
/// Process slots per device file.
pub const SLOTS: usize = 32;
/// Physical cores a slot has counters for.
pub const MAX_CORES: usize = 8;
/// Loaded models a slot describes.
pub const MAX_MODELS: usize = 16;
/// Latency histogram buckets: four per power of two of nanoseconds.
pub const LATENCY_BUCKETS: usize = 160;
/// Latency samples each ring keeps (the most recent ones).
pub const LATENCY_SAMPLES: usize = 256;

/// Header word indices.
pub mod header {
    /// [`super::MAGIC`], stored last when the file is created.
    pub const MAGIC: usize = 0;
    /// [`super::VERSION`].
    pub const VERSION: usize = 1;
    /// Device index on the instance.
    pub const DEVICE_INDEX: usize = 2;
    /// Physical cores of the device.
    pub const PHYSICAL_CORES: usize = 3;
    /// Device memory (HBM) bytes.
    pub const MEMORY_BYTES: usize = 4;
    /// Number of slots ([`super::SLOTS`]).
    pub const SLOTS: usize = 5;
    /// Words per slot ([`super::SLOT_WORDS`]).
    pub const SLOT_WORDS: usize = 6;
    /// Architecture name, 16 bytes (words 7 and 8), NUL padded.
    pub const ARCH_NAME: usize = 7;
    /// Host-DMA window bytes.
    pub const HOST_MEMORY_BYTES: usize = 9;
    /// Uncorrectable HBM errors the device detected (device-written; the
    /// driver's `stats/hardware/mem_ecc_uncorrected`).
    pub const MEM_ECC_UNCORRECTED: usize = 10;
    /// Uncorrectable HBM errors row repair can fix (device-written;
    /// `mem_ecc_repairable_uncorrected`).
    pub const MEM_ECC_REPAIRABLE_UNCORRECTED: usize = 11;
    /// Uncorrectable on-chip SRAM (SBUF / PSUM) errors (device-written;
    /// `sram_ecc_uncorrected`).
    pub const SRAM_ECC_UNCORRECTED: usize = 12;
}

/// Slot word indices (relative to the slot's first word).
pub mod slot {
    /// Owning pid; 0 = free.
    pub const PID: usize = 0;
    /// The owner's start time (clock ticks after boot, `/proc/<pid>/stat`
    /// field 22), telling a reused pid from the owner.
    pub const START_TIME: usize = 1;
    /// Bumped on every claim.
    pub const GENERATION: usize = 2;
    /// Bit per physical core the owner reserved.
    pub const CORES: usize = 3;
    /// Logical NeuronCore config (physical cores per logical core).
    pub const LNC: usize = 4;
    /// The owner's command line (64 bytes, words 6..14).
    pub const COMMAND: usize = 6;
    /// `NEURON_PROCESS_TAG` (64 bytes, words 14..22).
    pub const TAG: usize = 14;
    /// Runtime version string (32 bytes, words 22..26).
    pub const RUNTIME_VERSION: usize = 22;
    /// First per-core block.
    pub const CORES_BASE: usize = 32;
}

/// Per-core block word indices (relative to the block).
pub mod core {
    /// Engines of the core inside an execution (device-written).
    pub const RUNNING: usize = 0;
    /// When `RUNNING` last went from 0 to 1 (writer-local ns).
    pub const SINCE_NS: usize = 1;
    /// Total ns with at least one engine in an execution (device-written).
    pub const BUSY_NS: usize = 2;
    /// Executions the device finished (device-written).
    pub const DEVICE_EXECUTIONS: usize = 3;
    /// [`super::Outcome`] counters, 6 words (runtime-written).
    pub const OUTCOMES: usize = 4;
    /// [`super::ErrorClass`] counters, 6 words (runtime-written).
    pub const ERRORS: usize = 10;
    /// Device memory bytes by [`super::MemCategory`] (runtime-written).
    pub const MEMORY: usize = 16;
    /// Floating-point operations the core's PE array performed, two per
    /// multiply-accumulate of every MATMUL (device-written).
    pub const FLOPS: usize = 25;
}
/// Words per core block.
pub const CORE_WORDS: usize = 32;

/// After the core blocks: host memory by category, then the histograms.
pub const HOST_MEMORY: usize = slot::CORES_BASE + MAX_CORES * CORE_WORDS;
/// Total-latency histogram (ns, [`latency_bucket`]).
pub const TOTAL_LATENCY: usize = HOST_MEMORY + 16;
/// Device-latency histogram.
pub const DEVICE_LATENCY: usize = TOTAL_LATENCY + LATENCY_BUCKETS;
/// First model entry.
pub const MODELS: usize = DEVICE_LATENCY + LATENCY_BUCKETS;

/// Model entry word indices (relative to the entry).
pub mod model {
    /// Odd while the entry is being written, 0 when empty.
    pub const SEQ: usize = 0;
    /// Model id.
    pub const ID: usize = 1;
    /// Logical core (vnc) index.
    pub const VNC: usize = 2;
    /// First physical core.
    pub const CORE: usize = 3;
    /// Device bytes by [`super::MemCategory`], 10 words.
    pub const MEMORY: usize = 4;
    /// Host bytes.
    pub const HOST_BYTES: usize = 14;
    /// UUID, 16 bytes (words 15, 16).
    pub const UUID: usize = 15;
    /// Name, 56 bytes (words 17..24).
    pub const NAME: usize = 17;
    /// Host-DMA bytes booked to the model by [`super::MemCategory`], 9
    /// words (their sum is `HOST_BYTES`).
    pub const HOST_MEMORY: usize = 24;
    /// End of the name field.
    pub const NAME_END: usize = 24;
}
/// Words per model entry.
pub const MODEL_WORDS: usize = model::HOST_MEMORY + MemCategory::COUNT;
/// After the model entries: the number of total latencies ever recorded
/// (the ring's next position), then the ring of the last
/// [`LATENCY_SAMPLES`] of them (ns), so readers compute a period's
/// percentiles from samples, not bucket edges.
pub const TOTAL_SAMPLES: usize = MODELS + MAX_MODELS * MODEL_WORDS;
/// The device latencies' count and ring, as [`TOTAL_SAMPLES`].
pub const DEVICE_SAMPLES: usize = TOTAL_SAMPLES + 1 + LATENCY_SAMPLES;
/// Words per slot.
pub const SLOT_WORDS: usize = DEVICE_SAMPLES + 1 + LATENCY_SAMPLES;
/// Words of a whole file.
pub const FILE_WORDS: usize = HEADER_WORDS + SLOTS * SLOT_WORDS;
/// Bytes of a whole file.
pub const FILE_BYTES: usize = FILE_WORDS * 8;

/// A memory error the device counts in its header (the driver's
/// `stats/hardware` counters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HardwareError {
    /// An uncorrectable HBM error.
    HbmUncorrectable,
    /// An uncorrectable HBM error that row repair can fix.
    HbmRepairable,
    /// An uncorrectable on-chip SRAM (SBUF / PSUM) error.
    SramUncorrectable,
}

impl HardwareError {
    /// The header word counting it.
    pub const fn word(self) -> usize {
        match self {
            HardwareError::HbmUncorrectable => header::MEM_ECC_UNCORRECTED,
            HardwareError::HbmRepairable => header::MEM_ECC_REPAIRABLE_UNCORRECTED,
            HardwareError::SramUncorrectable => header::SRAM_ECC_UNCORRECTED,
        }
    }
}

/// How an execution ended, as neuron-monitor's `execution_summary` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Outcome {
    /// Finished successfully.
    Completed = 0,
    /// Finished with an error.
    CompletedWithErr = 1,
    /// Finished with a numerical error (NaN / Inf).
    CompletedWithNumErr = 2,
    /// Timed out.
    TimedOut = 3,
    /// Refused for bad inputs.
    IncorrectInput = 4,
    /// Could not be queued.
    FailedToQueue = 5,
}

impl Outcome {
    /// neuron-monitor's field names, in word order.
    pub const NAMES: [&'static str; 6] =
        ["completed", "completed_with_err", "completed_with_num_err", "timed_out", "incorrect_input", "failed_to_queue"];
}

/// Error classes, as neuron-monitor's `error_summary` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum ErrorClass {
    /// Anything not classified further.
    Generic = 0,
    /// NaN / Inf results.
    Numerical = 1,
    /// Transient (retry may help: timeouts, queue full).
    Transient = 2,
    /// The model (bad NEFF, bad inputs).
    Model = 3,
    /// The runtime.
    Runtime = 4,
    /// Hardware faults (ECC, DMA abort).
    Hardware = 5,
}

impl ErrorClass {
    /// neuron-monitor's field names, in word order.
    pub const NAMES: [&'static str; 6] = ["generic", "numerical", "transient", "model", "runtime", "hardware"];
}

/// Memory categories a device reports (the driver's sysfs
/// `memory_usage` directories, folded to what the tools show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum MemCategory {
    /// Tensors (model IO and user tensors).
    Tensors = 0,
    /// Model constants (weights).
    Constants = 1,
    /// Instruction streams, activation tables, microcode.
    ModelCode = 2,
    /// Runtime-owned memory.
    RuntimeMemory = 3,
    /// Scratchpads (shared and private).
    Scratchpad = 4,
    /// DMA descriptor rings.
    DmaRings = 5,
    /// Notification rings.
    Notifications = 6,
    /// Collectives buffers.
    Collectives = 7,
    /// Not classified.
    Uncategorized = 8,
}

impl MemCategory {
    /// Number of categories.
    pub const COUNT: usize = 9;
    /// Every category in word order.
    pub const ALL: [MemCategory; 9] = [
        MemCategory::Tensors,
        MemCategory::Constants,
        MemCategory::ModelCode,
        MemCategory::RuntimeMemory,
        MemCategory::Scratchpad,
        MemCategory::DmaRings,
        MemCategory::Notifications,
        MemCategory::Collectives,
        MemCategory::Uncategorized,
    ];
    /// The sysfs-style name.
    pub const fn name(self) -> &'static str {
        match self {
            MemCategory::Tensors => "tensors",
            MemCategory::Constants => "constants",
            MemCategory::ModelCode => "model_code",
            MemCategory::RuntimeMemory => "runtime_memory",
            MemCategory::Scratchpad => "scratchpad",
            MemCategory::DmaRings => "dma_rings",
            MemCategory::Notifications => "notifications",
            MemCategory::Collectives => "collectives",
            MemCategory::Uncategorized => "uncategorized",
        }
    }
}

/// The histogram bucket of a latency: four buckets per power of two, so a
/// bucket spans at most 19% of its value; 0 ns falls into bucket 0.
pub fn latency_bucket(ns: u64) -> usize {
    if ns < 4 {
        return ns as usize;
    }
    let log = 63 - ns.leading_zeros() as usize;
    let sub = ((ns >> (log - 2)) & 3) as usize;
    (log * 4 + sub - 4).min(LATENCY_BUCKETS - 1)
}

/// The smallest latency (ns) bucket `b` holds.
pub fn bucket_floor(b: usize) -> u64 {
    if b < 4 {
        return b as u64;
    }
    let log = (b + 4) / 4;
    let sub = ((b + 4) % 4) as u64;
    (1u64 << log) + sub * (1u64 << (log - 2))
}

/// The mapped words of one status file; the backend that maps it
/// implements this.
pub trait StatusWords: Send + Sync + std::fmt::Debug {
    /// All [`FILE_WORDS`] words.
    fn words(&self) -> &[AtomicU64];
}

/// The words of one claimed slot: what the runtime and the device write
/// their counters through. Every method is a few atomic operations.
#[derive(Debug)]
pub struct SlotWriter {
    map: Box<dyn StatusWords>,
    base: usize,
}

fn pack(words: &[AtomicU64], at: usize, len_words: usize, text: &str) {
    let bytes = text.as_bytes();
    for w in 0..len_words {
        let mut b = [0u8; 8];
        for (i, byte) in b.iter_mut().enumerate() {
            // Keep the last byte of the field a NUL.
            let k = w * 8 + i;
            if k + 1 < len_words * 8
                && let Some(&c) = bytes.get(k)
            {
                *byte = c;
            }
        }
        words[at + w].store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
}

impl SlotWriter {
    /// The writer of slot `index` of a mapped file (the backend has
    /// claimed it).
    pub fn new(map: Box<dyn StatusWords>, index: usize) -> SlotWriter {
        assert!(index < SLOTS && map.words().len() >= FILE_WORDS, "status slot {index} outside the file");
        SlotWriter { map, base: HEADER_WORDS + index * SLOT_WORDS }
    }

    /// The slot's words.
    fn w(&self, i: usize) -> &AtomicU64 {
        &self.map.words()[self.base + i]
    }

    fn core_word(&self, core: u32, i: usize) -> Option<&AtomicU64> {
        ((core as usize) < MAX_CORES).then(|| self.w(slot::CORES_BASE + core as usize * CORE_WORDS + i))
    }

    /// The slot index in the file.
    pub fn index(&self) -> usize {
        (self.base - HEADER_WORDS) / SLOT_WORDS
    }

    /// Writes the process identity (device side, at claim).
    pub fn set_identity(&self, command: &str, tag: &str, runtime_version: &str) {
        let words = self.map.words();
        pack(words, self.base + slot::COMMAND, 8, command);
        pack(words, self.base + slot::TAG, 8, tag);
        pack(words, self.base + slot::RUNTIME_VERSION, 4, runtime_version);
    }

    /// Marks physical cores as reserved by the owner.
    pub fn add_cores(&self, mask: u64) {
        self.w(slot::CORES).fetch_or(mask, Ordering::Relaxed);
    }

    /// The logical NeuronCore config the owner runs with.
    pub fn set_lnc(&self, lnc: u32) {
        self.w(slot::LNC).store(u64::from(lnc), Ordering::Relaxed);
    }

    /// An engine of `core` entered an execution (device side); `now_ns`
    /// is any clock the writer keeps monotonic.
    #[inline]
    pub fn engine_started(&self, core: u32, now_ns: u64) {
        if let Some(r) = self.core_word(core, core::RUNNING)
            && r.fetch_add(1, Ordering::AcqRel) == 0
            && let Some(s) = self.core_word(core, core::SINCE_NS)
        {
            s.store(now_ns, Ordering::Release);
        }
    }

    /// An engine of `core` left its execution (device side).
    #[inline]
    pub fn engine_ended(&self, core: u32, now_ns: u64) {
        let Some(r) = self.core_word(core, core::RUNNING) else { return };
        let prev = r.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| v.checked_sub(1)).unwrap_or(0);
        if prev == 1 {
            let since = self.core_word(core, core::SINCE_NS).map_or(now_ns, |s| s.load(Ordering::Acquire));
            if let Some(b) = self.core_word(core, core::BUSY_NS) {
                b.fetch_add(now_ns.saturating_sub(since), Ordering::Relaxed);
            }
            if let Some(e) = self.core_word(core, core::DEVICE_EXECUTIONS) {
                e.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counts `n` floating-point operations performed by `core`'s PE
    /// array (device side).
    #[inline]
    pub fn add_flops(&self, core: u32, n: u64) {
        if let Some(w) = self.core_word(core, core::FLOPS) {
            w.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts one memory error the device detected (device side): a
    /// device-wide counter in the header, which outlives the slot.
    pub fn hardware_error(&self, e: HardwareError) {
        self.map.words()[e.word()].fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `delta` (may be negative) bytes of `category` on `core`, or on
    /// the host when `core` is `None`.
    #[inline]
    pub fn add_memory(&self, core: Option<u32>, category: MemCategory, delta: i64) {
        let w = match core {
            Some(c) => self.core_word(c, core::MEMORY + category as usize),
            None => Some(self.w(HOST_MEMORY + category as usize)),
        };
        if let Some(w) = w {
            w.fetch_add(delta as u64, Ordering::Relaxed);
        }
    }

    /// Counts one finished execution on `core` with its outcome, its error
    /// class when it failed, and its host-side latency.
    #[inline]
    pub fn execution(&self, core: u32, outcome: Outcome, error: Option<ErrorClass>, total_ns: u64) {
        if let Some(w) = self.core_word(core, core::OUTCOMES + outcome as usize) {
            w.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(e) = error
            && let Some(w) = self.core_word(core, core::ERRORS + e as usize)
        {
            w.fetch_add(1, Ordering::Relaxed);
        }
        self.w(TOTAL_LATENCY + latency_bucket(total_ns)).fetch_add(1, Ordering::Relaxed);
        self.sample(TOTAL_SAMPLES, total_ns);
    }

    /// Counts one device latency: the execution's device time (the
    /// device's clock from the first START to the last END).
    #[inline]
    pub fn device_latency(&self, ns: u64) {
        self.w(DEVICE_LATENCY + latency_bucket(ns)).fetch_add(1, Ordering::Relaxed);
        self.sample(DEVICE_SAMPLES, ns);
    }

    /// Appends `ns` to the sample ring at `ring` (its count word, then
    /// [`LATENCY_SAMPLES`] values): the count is bumped first, then the
    /// value stored, so a reader racing the writer may see one slot's
    /// previous sample.
    #[inline]
    fn sample(&self, ring: usize, ns: u64) {
        let n = self.w(ring).fetch_add(1, Ordering::Relaxed);
        self.w(ring + 1 + (n % LATENCY_SAMPLES as u64) as usize).store(ns, Ordering::Relaxed);
    }

    /// Publishes a loaded model (off the execute path); returns false
    /// when every model entry is taken.
    pub fn model_loaded(&self, m: &ModelStatus) -> bool {
        for e in 0..MAX_MODELS {
            let at = MODELS + e * MODEL_WORDS;
            if self.w(at + model::SEQ).compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                self.w(at + model::ID).store(m.id, Ordering::Relaxed);
                self.w(at + model::VNC).store(u64::from(m.vnc), Ordering::Relaxed);
                self.w(at + model::CORE).store(u64::from(m.core), Ordering::Relaxed);
                for (i, b) in m.memory.iter().enumerate() {
                    self.w(at + model::MEMORY + i).store(*b, Ordering::Relaxed);
                }
                for (i, b) in m.host_memory.iter().enumerate() {
                    self.w(at + model::HOST_MEMORY + i).store(*b, Ordering::Relaxed);
                }
                self.w(at + model::HOST_BYTES).store(m.host_memory.iter().sum(), Ordering::Relaxed);
                self.w(at + model::UUID).store(u64::from_le_bytes(m.uuid[..8].try_into().unwrap_or_default()), Ordering::Relaxed);
                self.w(at + model::UUID + 1).store(u64::from_le_bytes(m.uuid[8..].try_into().unwrap_or_default()), Ordering::Relaxed);
                pack(self.map.words(), self.base + at + model::NAME, model::NAME_END - model::NAME, &m.name);
                self.w(at + model::SEQ).store(2, Ordering::Release);
                return true;
            }
        }
        false
    }

    /// Removes a model's entry.
    pub fn model_unloaded(&self, id: u64) {
        for e in 0..MAX_MODELS {
            let at = MODELS + e * MODEL_WORDS;
            if self.w(at + model::SEQ).load(Ordering::Acquire) == 2 && self.w(at + model::ID).load(Ordering::Relaxed) == id {
                self.w(at + model::SEQ).store(0, Ordering::Release);
            }
        }
    }

    /// Frees the slot (the owner is done with the device).
    pub fn release(&self) {
        for i in 1..SLOT_WORDS {
            self.w(i).store(0, Ordering::Relaxed);
        }
        self.w(slot::PID).store(0, Ordering::Release);
    }
}

/// What the runtime publishes about one loaded model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelStatus {
    /// Model id.
    pub id: u64,
    /// Logical core.
    pub vnc: u32,
    /// First physical core.
    pub core: u32,
    /// Device bytes by [`MemCategory`].
    pub memory: [u64; MemCategory::COUNT],
    /// Host-DMA bytes by [`MemCategory`].
    pub host_memory: [u64; MemCategory::COUNT],
    /// NEFF UUID.
    pub uuid: [u8; 16],
    /// Model name.
    pub name: String,
}

/// The status directory: `NEURON_SIM_STATUS_DIR` when set (`off` turns
/// publishing off: `None`), else `$XDG_RUNTIME_DIR/nrt-sim`, else
/// `/dev/shm/nrt-sim-<uid>`, else `<tmp>/nrt-sim-<uid>`.
pub fn status_dir() -> Option<PathBuf> {
    status_dir_from(std::env::var_os("NEURON_SIM_STATUS_DIR").map(PathBuf::from), std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from))
}

/// [`status_dir`] over given variable values (for tests).
pub fn status_dir_from(over: Option<PathBuf>, xdg: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(d) = over.filter(|d| !d.as_os_str().is_empty()) {
        return (d.as_os_str() != "off").then_some(d);
    }
    if let Some(d) = xdg.filter(|d| !d.as_os_str().is_empty()) {
        return Some(d.join("nrt-sim"));
    }
    let uid = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
    };
    let shm = Path::new("/dev/shm");
    Some(if shm.is_dir() { shm.join(format!("nrt-sim-{uid}")) } else { std::env::temp_dir().join(format!("nrt-sim-{uid}")) })
}

/// The status file of device `device` of the simulated instance
/// `namespace` (the core-lock namespace, e.g. `sim-trn2-1`).
pub fn status_file(dir: &Path, namespace: &str, device: u32) -> PathBuf {
    dir.join(format!("{namespace}-nd{device}.status"))
}

/// A process's start time (`/proc/<pid>/stat` field 22), if it exists.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command (field 2) is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A process's whole command line as `ps` shows it (`/proc/<pid>/cmdline`,
/// arguments joined by spaces), if it exists: what the owner writes into
/// its slot (cut to the field) and what the tools show in full.
pub fn command_line(pid: u32) -> Option<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(bytes.split(|&c| c == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>().join(" "))
}

/// Whether the owner a slot names is still the running process `pid`.
pub fn process_alive(pid: u32, start_time: u64) -> bool {
    pid != 0 && process_start_time(pid) == Some(start_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for ns in [0u64, 1, 3, 4, 5, 7, 8, 100, 1000, 12_345, 1 << 30, 1 << 39] {
            let b = latency_bucket(ns);
            assert!(b >= last, "{ns}");
            last = b;
            let lo = bucket_floor(b);
            assert!(lo <= ns && (ns == 0 || ns - lo <= ns / 4 + 1), "{ns} in bucket {b} from {lo}");
        }
        assert_eq!(latency_bucket(u64::MAX), LATENCY_BUCKETS - 1);
    }

    #[test]
    fn own_process_is_alive_and_start_time_distinguishes() {
        let me = std::process::id();
        let t = process_start_time(me).expect("own /proc stat");
        assert!(process_alive(me, t));
        assert!(!process_alive(me, t + 1));
        assert!(!process_alive(0, t));
    }

    #[test]
    fn status_dir_precedence() {
        let d = status_dir_from(Some("/x".into()), Some("/run/u".into()));
        assert_eq!(d, Some(PathBuf::from("/x")));
        assert_eq!(status_dir_from(Some("off".into()), None), None);
        assert_eq!(status_dir_from(None, Some("/run/u".into())), Some(PathBuf::from("/run/u/nrt-sim")));
        assert!(status_dir_from(None, None).unwrap().to_string_lossy().contains("nrt-sim-"));
    }

    #[test]
    fn layout_fits() {
        assert!(core::MEMORY + MemCategory::COUNT <= core::FLOPS && core::FLOPS < CORE_WORDS);
        assert!(model::MEMORY + MemCategory::COUNT <= model::HOST_BYTES);
        assert!(model::NAME < model::NAME_END && model::NAME_END <= model::HOST_MEMORY);
        assert!(slot::RUNTIME_VERSION + 4 <= slot::CORES_BASE);
        assert!(MemCategory::COUNT <= 16);
        assert!(header::HOST_MEMORY_BYTES < header::MEM_ECC_UNCORRECTED && header::SRAM_ECC_UNCORRECTED < HEADER_WORDS);
        // The offsets docs/status-file.md states.
        assert_eq!((HOST_MEMORY, TOTAL_LATENCY, DEVICE_LATENCY, MODELS, MODEL_WORDS), (288, 304, 464, 624, 33));
        assert_eq!((TOTAL_SAMPLES, DEVICE_SAMPLES, SLOT_WORDS), (1152, 1409, 1666));
        assert_eq!(FILE_BYTES, 426_624);
    }

    /// docs/status-file.md states the layout these constants define.
    #[test]
    fn the_docs_state_this_layout() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/status-file.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            nrt_test_support::skip!("{path} is absent (a crate packaged without the repository's docs)");
        };
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let thousands = |n: usize| {
            let s = n.to_string();
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        let cat = MemCategory::COUNT;
        for says in [
            format!("Header ({HEADER_WORDS} words)"),
            format!("| 5 | slots ({SLOTS}) |"),
            format!("Then {SLOTS} slots. Slot `s` starts at word `{HEADER_WORDS} + s * words_per_slot`"),
            format!("| {} + {} c .. | core block of physical core `c` (`c` < {MAX_CORES}), below |", slot::CORES_BASE, CORE_WORDS),
            format!("| {HOST_MEMORY}..{} | host bytes by category (host-DMA allocations, and host tensors under tensors) |", HOST_MEMORY + cat),
            format!("| {TOTAL_LATENCY}..{DEVICE_LATENCY} | total-latency histogram ({LATENCY_BUCKETS} buckets) |"),
            format!("| {DEVICE_LATENCY}..{MODELS} | device-latency histogram ({LATENCY_BUCKETS} buckets) |"),
            format!("| {MODELS} + {} m .. | model entry `m` (`m` < {MAX_MODELS}), below |", MODEL_WORDS),
            format!("| {TOTAL_SAMPLES} | total latencies recorded so far |"),
            format!("| {}..{DEVICE_SAMPLES} | the last {LATENCY_SAMPLES} total latencies (ns), sample `n` at `{} + n mod {LATENCY_SAMPLES}` |", TOTAL_SAMPLES + 1, TOTAL_SAMPLES + 1),
            format!("| {DEVICE_SAMPLES} | device latencies recorded so far |"),
            format!("| {}..{SLOT_WORDS} | the last {LATENCY_SAMPLES} device latencies (ns), as above |", DEVICE_SAMPLES + 1),
            format!("## Layout (version {VERSION})"),
            format!("Core block ({CORE_WORDS} words)"),
            format!("Memory categories ({cat} words, in order)"),
            format!("Model entry ({} words)", MODEL_WORDS),
            format!("Each read copies the whole file ({} bytes)", thousands(FILE_BYTES)),
        ] {
            assert!(doc.contains(&says), "docs/status-file.md should say \"{says}\"");
        }
    }
}
