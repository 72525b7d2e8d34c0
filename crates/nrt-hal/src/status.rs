//! The device datastore: what the driver keeps per process using a
//! device, for the tools (`nrt ls`, `nrt top`, `nrt monitor`) to read
//! from other processes, as AWS's tools read the Neuron driver's `nds`
//! store.
//!
//! One store per device (`docs/status-file.md` has the layout): a page
//! standing for the driver's own memory (the device description, its
//! memory-error counters and the table of [`ENTRIES`] entries: owner pid,
//! start time, clear tick), then the entries, each
//! `NEURON_DATASTORE_SIZE` (256 KiB) in `neuron_driver_shared.h`'s
//! layout: the `nds_header_t`, the per-device (ND) counters, the
//! per-NeuronCore (NC) counters with their extended sections, then
//! objects (process info, model nodes) and, past every published section,
//! what the tools need that the published layout has no place for.
//!
//! A process acquires its entry by pid (the driver's ACQUIRE_NEURON_DS
//! with pid 0; the emulated driver and the in-process simulator do it
//! with the same code), and every counter is then a plain atomic store or
//! add on the mapped words: no lock, no allocation, so the execute path
//! may publish. A reader copies the table and each live entry, checking
//! each owner's pid and start time against `/proc` ([`process_alive`]),
//! which stands for the driver's release of a process's entry when it
//! exits.
//!
//! Who writes what: the device backend maps the store, acquires the entry
//! and writes the process identity, the reserved cores, the per-core busy
//! time, device execution count and multiply-accumulates, and the
//! device's memory-error counters in the table; the runtime writes memory
//! by category, execution outcomes and latencies, and loaded models,
//! through the [`SlotWriter`] the device hands out
//! ([`crate::Device::status`]), as libnrt writes the driver's datastore.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first word of every store file: `NRTNDS01` in ASCII.
pub const MAGIC: u64 = u64::from_le_bytes(*b"NRTNDS01");
/// Layout version of the store file (table and entries); readers reject
/// other versions.
pub const VERSION: u64 = 1;
/// Bytes of the table page before the entries.
pub const TABLE_BYTES: usize = 4096;
/// Words of the table page.
pub const TABLE_WORDS: usize = TABLE_BYTES / 8;
/// Entries per device (`NEURON_MAX_DATASTORE_ENTRIES_PER_DEVICE`, which is
/// `NEURON_MAX_PROCESS_PER_DEVICE`).
pub const ENTRIES: usize = 16;
/// Bytes of one entry (`NEURON_DATASTORE_SIZE`).
pub const ENTRY_BYTES: usize = 256 * 1024;
/// Words of one entry.
pub const ENTRY_WORDS: usize = ENTRY_BYTES / 8;
/// Words of a whole store file.
pub const FILE_WORDS: usize = TABLE_WORDS + ENTRIES * ENTRY_WORDS;
/// Bytes of a whole store file.
pub const FILE_BYTES: usize = FILE_WORDS * 8;
/// Physical cores an entry has counters for (`NDS_MAX_NEURONCORE_COUNT`
/// plus `NDS_EXT_MAX_NEURONCORE_COUNT`).
pub const MAX_CORES: usize = nds::MAX_NEURONCORE_COUNT + nds::EXT_MAX_NEURONCORE_COUNT;
/// Model nodes an entry describes.
pub const MAX_MODELS: usize = 48;
/// Latency histogram buckets: four per power of two of nanoseconds.
pub const LATENCY_BUCKETS: usize = 160;
/// Latency samples each ring keeps (the most recent ones).
pub const LATENCY_SAMPLES: usize = 256;

/// The byte offset of entry `e` in the store file: what ACQUIRE_NEURON_DS
/// answers as its `mmap_offset`.
pub const fn entry_offset(e: usize) -> u64 {
    (TABLE_BYTES + e * ENTRY_BYTES) as u64
}

/// The entry whose [`entry_offset`] is `offset`, if one is.
pub fn entry_at(offset: u64) -> Option<usize> {
    let o = usize::try_from(offset.checked_sub(TABLE_BYTES as u64)?).ok()?;
    (o.is_multiple_of(ENTRY_BYTES) && o / ENTRY_BYTES < ENTRIES).then_some(o / ENTRY_BYTES)
}

/// Table page word indices (the driver's memory: `struct
/// neuron_datastore`, the device's description and its `stats/hardware`
/// counters).
pub mod table {
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
    /// Host-DMA window bytes.
    pub const HOST_MEMORY_BYTES: usize = 5;
    /// Architecture name, 16 bytes (words 6 and 7), NUL padded.
    pub const ARCH_NAME: usize = 6;
    /// Uncorrectable HBM errors the device detected (device-written; the
    /// driver's `stats/hardware/mem_ecc_uncorrected`).
    pub const MEM_ECC_UNCORRECTED: usize = 8;
    /// Uncorrectable HBM errors row repair can fix (device-written;
    /// `mem_ecc_repairable_uncorrected`).
    pub const MEM_ECC_REPAIRABLE_UNCORRECTED: usize = 9;
    /// Uncorrectable on-chip SRAM (SBUF / PSUM) errors (device-written;
    /// `sram_ecc_uncorrected`).
    pub const SRAM_ECC_UNCORRECTED: usize = 10;
    /// The last clear tick handed out (the driver's
    /// `ds_entry_clear_counter`).
    pub const CLEAR_COUNTER: usize = 11;
    /// First entry record; record `e` is at `ENTRY_TABLE + e * ENTRY_RECORD`.
    pub const ENTRY_TABLE: usize = 16;
    /// Words per entry record.
    pub const ENTRY_RECORD: usize = 4;
    /// Record word: owning pid, 0 = free (`neuron_datastore_entry.pid`).
    pub const PID: usize = 0;
    /// Record word: the owner's start time (clock ticks after boot,
    /// `/proc/<pid>/stat` field 22), telling a reused pid from the owner.
    pub const START_TIME: usize = 1;
    /// Record word: when the entry was last cleared (0 never;
    /// `neuron_datastore_entry.clear_tick`), so the least recently
    /// cleared free entry is reused first.
    pub const CLEAR_TICK: usize = 2;

    /// The table word of field `field` of entry `e`'s record.
    pub const fn record(e: usize, field: usize) -> usize {
        ENTRY_TABLE + e * ENTRY_RECORD + field
    }
}

/// `neuron_driver_shared.h`'s layout of an entry, in words (the published
/// offsets, checked against the driver's header by nrt-ndl's C layout
/// test), and the counter indices we write.
pub mod nds {
    /// `nds_header_t.signature`: `'n', 'd', 's', 0`.
    pub const SIGNATURE: [u8; 4] = *b"nds\0";
    /// `nds_header_t.version` as we write it (the value libnrt writes is
    /// not public).
    pub const HEADER_VERSION: u32 = 1;
    /// `NDS_ND_COUNTERS_START` (byte 8).
    pub const ND_COUNTERS: usize = 1;
    /// `NDS_ND_COUNTER_COUNT`.
    pub const ND_COUNTER_COUNT: usize = 31;
    /// `NDS_NEURONCORE_COUNTERS_START` (byte 256).
    pub const NC_COUNTERS: usize = ND_COUNTERS + ND_COUNTER_COUNT;
    /// `NDS_NC_COUNTER_COUNT`.
    pub const NC_COUNTER_COUNT: usize = 31;
    /// `NDS_MAX_NEURONCORE_COUNT`: cores of the original section.
    pub const MAX_NEURONCORE_COUNT: usize = 4;
    /// `NDS_EXT_NC_COUNTER_COUNT`: extended counters of those cores.
    pub const EXT_NC_COUNTER_COUNT: usize = 64;
    /// `NDS_TOTAL_NC_COUNTER_COUNT`.
    pub const TOTAL_NC_COUNTER_COUNT: usize = NC_COUNTER_COUNT + EXT_NC_COUNTER_COUNT;
    /// `NDS_EXT_MAX_NEURONCORE_COUNT`: cores stored whole in the new section.
    pub const EXT_MAX_NEURONCORE_COUNT: usize = 12;
    /// `NDS_EXT_NEURONCORE_COUNTERS_START` (byte 55936).
    pub const EXT_NC_COUNTERS: usize = 55_936 / 8;
    /// `NDS_EXT_NEURONCORE_NC_DATA_START` (byte 57984).
    pub const EXT_NC_DATA: usize = 57_984 / 8;
    /// `NDS_EXT_NEURONCORE_NC_DATA_COUNT`: words per core of the new section.
    pub const EXT_NC_DATA_COUNT: usize = TOTAL_NC_COUNTER_COUNT + 1;
    /// The end of the new section (byte 67200).
    pub const END: usize = EXT_NC_DATA + EXT_MAX_NEURONCORE_COUNT * EXT_NC_DATA_COUNT;
    /// Where the objects' area starts (after the original NC section).
    pub const OBJECTS: usize = NC_COUNTERS + MAX_NEURONCORE_COUNT * NC_COUNTER_COUNT;
    /// Where the objects' area ends (`NDS_EXT_OFFSET_OLD`, byte 44588,
    /// rounded down to a word).
    pub const OBJECTS_END: usize = 44_588 / 8;

    /// The word of NC counter `counter` of core `nc`, wherever
    /// `get_neuroncore_counter_value` finds it (original section, its
    /// extension, or the new per-core section); `None` past them.
    pub const fn nc_word(nc: usize, counter: usize) -> Option<usize> {
        if nc < MAX_NEURONCORE_COUNT {
            if counter < NC_COUNTER_COUNT {
                Some(NC_COUNTERS + nc * NC_COUNTER_COUNT + counter)
            } else if counter < TOTAL_NC_COUNTER_COUNT {
                Some(EXT_NC_COUNTERS + nc * EXT_NC_COUNTER_COUNT + counter - NC_COUNTER_COUNT)
            } else {
                None
            }
        } else if nc < MAX_NEURONCORE_COUNT + EXT_MAX_NEURONCORE_COUNT && counter < TOTAL_NC_COUNTER_COUNT {
            Some(EXT_NC_DATA + (nc - MAX_NEURONCORE_COUNT) * EXT_NC_DATA_COUNT + counter)
        } else {
            None
        }
    }

    /// ND counter indices (`NDS_ND_COUNTER_*`) we write.
    pub mod nd {
        /// `NDS_ND_COUNTER_RUNTIME_VERSION` (an `nmetric_version_t`).
        pub const RUNTIME_VERSION: usize = 0;
        /// `NDS_ND_COUNTER_MEM_USAGE_CODE_HOST`; the other host memory
        /// counters follow in [`super::MemSlot`] order.
        pub const MEM_USAGE_HOST: usize = 6;
    }

    /// NC counter indices (`NDS_NC_COUNTER_*`) we write.
    pub mod nc {
        /// `NDS_NC_COUNTER_INFER_COMPLETED`; the outcomes follow in
        /// [`crate::status::Outcome`] order.
        pub const INFER: usize = 1;
        /// `NDS_NC_COUNTER_ERR_GENERIC`, `_NUMERICAL`, `_MODEL`,
        /// `_TRANSIENT`, `_HW`, `_RT`.
        pub const ERR_GENERIC: usize = 7;
        /// `NDS_NC_COUNTER_ERR_NUMERICAL`.
        pub const ERR_NUMERICAL: usize = 8;
        /// `NDS_NC_COUNTER_ERR_MODEL`.
        pub const ERR_MODEL: usize = 9;
        /// `NDS_NC_COUNTER_ERR_TRANSIENT`.
        pub const ERR_TRANSIENT: usize = 10;
        /// `NDS_NC_COUNTER_ERR_HW`.
        pub const ERR_HW: usize = 11;
        /// `NDS_NC_COUNTER_ERR_RT`.
        pub const ERR_RT: usize = 12;
        /// `NDS_NC_COUNTER_MEM_USAGE_CODE_DEVICE`; the other device memory
        /// counters follow in [`super::MemSlot`] order.
        pub const MEM_USAGE_DEVICE: usize = 22;
        /// `NDS_NC_COUNTER_MODEL_LOAD_COUNT`.
        pub const MODEL_LOAD_COUNT: usize = 27;
        /// `NDS_NC_COUNTER_INFERENCE_COUNT`.
        pub const INFERENCE_COUNT: usize = 28;
        /// `NDS_NC_COUNTER_MAC_COUNT`.
        pub const MAC_COUNT: usize = 29;
    }

    /// The five memory usage slots (`NDS_DMA_MEM_USAGE_SLOT_*`, also the
    /// order of the `MEM_USAGE_*` counters).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(usize)]
    pub enum MemSlot {
        /// `CODE`.
        Code = 0,
        /// `TENSORS`.
        Tensors = 1,
        /// `CONSTANTS`.
        Constants = 2,
        /// `SCRATCHPAD`.
        Scratchpad = 3,
        /// `MISC`.
        Misc = 4,
    }

    /// `NDS_DMA_MEM_USAGE_SLOT_COUNT` (12; five are named).
    pub const MEM_USAGE_SLOT_COUNT: usize = 12;
    /// `MODEL_MEM_USAGE_LOCATION_COUNT`.
    pub const MEM_USAGE_LOCATION_COUNT: usize = 2;
    /// `OBJECT_TYPE_MODEL_NODE_INFO`.
    pub const OBJECT_TYPE_MODEL_NODE_INFO: u64 = 0;
    /// `OBJECT_TYPE_PROCESS_INFO`.
    pub const OBJECT_TYPE_PROCESS_INFO: u64 = 1;
    /// `OBJECT_TYPE_PROCESS_INFO_EXT`.
    pub const OBJECT_TYPE_PROCESS_INFO_EXT: u64 = 2;
}

/// The objects' area (inside `nds::OBJECTS .. nds::OBJECTS_END`; where
/// libnrt puts its objects is not public, so the places are ours, the
/// payloads are `neuron_ds.h`'s structs). Every object starts with a
/// state word (0 empty, 1 being written, 2 committed) and its
/// `OBJECT_TYPE_*`.
pub mod object {
    /// State word: 0 empty, 1 being written, 2 committed.
    pub const STATE: usize = 0;
    /// The object's `OBJECT_TYPE_*`.
    pub const TYPE: usize = 1;
    /// First payload word.
    pub const PAYLOAD: usize = 2;
    /// The process info object (`nds_process_info_t`, 60 bytes).
    pub const PROCESS_INFO: usize = 160;
    /// The extended process info object (`nds_process_info_ext_t`, 256 bytes).
    pub const PROCESS_INFO_EXT: usize = 176;
    /// The first model node object.
    pub const MODEL_NODES: usize = 216;
    /// Model node: `nds_model_node_info_t` (284 bytes) at the payload.
    pub const NODE_INFO: usize = PAYLOAD;
    /// Model node: `nds_model_node_mem_usage_info_t` (384 bytes).
    pub const NODE_MEM_USAGE: usize = NODE_INFO + 36;
    /// Model node (ours): the logical core.
    pub const NODE_VNC: usize = NODE_MEM_USAGE + 48;
    /// Model node (ours): device bytes by [`super::MemCategory`].
    pub const NODE_MEMORY: usize = NODE_VNC + 1;
    /// Model node (ours): host-DMA bytes by [`super::MemCategory`].
    pub const NODE_HOST_MEMORY: usize = NODE_MEMORY + super::MemCategory::COUNT;
    /// Model node (ours): host bytes (the sum of the above).
    pub const NODE_HOST_BYTES: usize = NODE_HOST_MEMORY + super::MemCategory::COUNT;
    /// Words per model node object.
    pub const NODE_WORDS: usize = NODE_HOST_BYTES + 1;
}

/// What the tools need that the published layout has no place for (ours,
/// past every published section of the entry).
pub mod ours {
    /// First word of the section (byte 69632).
    pub const BASE: usize = 69_632 / 8;
    /// Bit per physical core the owner reserved.
    pub const CORES: usize = BASE;
    /// Logical NeuronCore config (physical cores per logical core).
    pub const LNC: usize = BASE + 1;
    /// The owner's command line (64 bytes, 8 words).
    pub const COMMAND: usize = BASE + 2;
    /// Runtime version string (32 bytes, 4 words).
    pub const RUNTIME_VERSION: usize = BASE + 10;
    /// Host memory bytes by [`super::MemCategory`].
    pub const HOST_MEMORY: usize = BASE + 16;
    /// First per-core block ([`super::core`]).
    pub const CORES_BASE: usize = BASE + 32;
    /// Words per core block.
    pub const CORE_WORDS: usize = 16;
    /// Total-latency histogram (ns, [`super::latency_bucket`]).
    pub const TOTAL_LATENCY: usize = CORES_BASE + super::MAX_CORES * CORE_WORDS;
    /// Device-latency histogram.
    pub const DEVICE_LATENCY: usize = TOTAL_LATENCY + super::LATENCY_BUCKETS;
    /// The number of total latencies ever recorded (the ring's next
    /// position), then the ring of the last [`super::LATENCY_SAMPLES`]
    /// (ns), so readers compute a period's percentiles from samples.
    pub const TOTAL_SAMPLES: usize = DEVICE_LATENCY + super::LATENCY_BUCKETS;
    /// The device latencies' count and ring, as [`TOTAL_SAMPLES`].
    pub const DEVICE_SAMPLES: usize = TOTAL_SAMPLES + 1 + super::LATENCY_SAMPLES;
    /// The end of the section.
    pub const END: usize = DEVICE_SAMPLES + 1 + super::LATENCY_SAMPLES;
}

/// Per-core block word indices (in [`ours`], relative to the block).
pub mod core {
    /// Engines of the core inside an execution (device-written).
    pub const RUNNING: usize = 0;
    /// When `RUNNING` last went from 0 to 1 (writer-local ns).
    pub const SINCE_NS: usize = 1;
    /// Total ns with at least one engine in an execution (device-written).
    pub const BUSY_NS: usize = 2;
    /// Executions the device finished (device-written).
    pub const DEVICE_EXECUTIONS: usize = 3;
    /// Device memory bytes by [`super::MemCategory`] (runtime-written).
    pub const MEMORY: usize = 4;
}

/// A memory error the device counts in the store's table (the driver's
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

impl HardwareError {
    /// The table word counting it.
    pub const fn word(self) -> usize {
        match self {
            HardwareError::HbmUncorrectable => table::MEM_ECC_UNCORRECTED,
            HardwareError::HbmRepairable => table::MEM_ECC_REPAIRABLE_UNCORRECTED,
            HardwareError::SramUncorrectable => table::SRAM_ECC_UNCORRECTED,
        }
    }
}

impl ErrorClass {
    /// Every class in word order.
    pub const ALL: [ErrorClass; 6] =
        [ErrorClass::Generic, ErrorClass::Numerical, ErrorClass::Transient, ErrorClass::Model, ErrorClass::Runtime, ErrorClass::Hardware];

    /// The `NDS_NC_COUNTER_ERR_*` counting it.
    pub const fn nc_counter(self) -> usize {
        match self {
            ErrorClass::Generic => nds::nc::ERR_GENERIC,
            ErrorClass::Numerical => nds::nc::ERR_NUMERICAL,
            ErrorClass::Transient => nds::nc::ERR_TRANSIENT,
            ErrorClass::Model => nds::nc::ERR_MODEL,
            ErrorClass::Runtime => nds::nc::ERR_RT,
            ErrorClass::Hardware => nds::nc::ERR_HW,
        }
    }
}

impl MemCategory {
    /// The `NDS_DMA_MEM_USAGE_SLOT_*` (and `MEM_USAGE_*` counter) it is
    /// counted under: the tools' five columns (everything the runtime
    /// keeps for itself is misc).
    pub const fn slot(self) -> nds::MemSlot {
        match self {
            MemCategory::Tensors => nds::MemSlot::Tensors,
            MemCategory::Constants => nds::MemSlot::Constants,
            MemCategory::ModelCode => nds::MemSlot::Code,
            MemCategory::Scratchpad => nds::MemSlot::Scratchpad,
            MemCategory::RuntimeMemory
            | MemCategory::DmaRings
            | MemCategory::Notifications
            | MemCategory::Collectives
            | MemCategory::Uncategorized => nds::MemSlot::Misc,
        }
    }
}

/// `nmetric_version_t` of a `major.minor.patch` version string (the
/// patch as its `build_num`); 0 when it is not one.
pub fn nmetric_version(v: &str) -> u64 {
    let mut parts = v.split(['.', '-', '+']).map(|p| p.parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor), Some(build)) => (build & 0xffff_ffff) | (minor & 0xff) << 32 | (major & 0xff) << 40,
        _ => 0,
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

/// The mapped words of one store file; the backend that maps it
/// implements this.
pub trait StatusWords: Send + Sync + std::fmt::Debug {
    /// All [`FILE_WORDS`] words.
    fn words(&self) -> &[AtomicU64];
}

/// The words of one acquired entry: what the runtime and the device write
/// their counters through. Every method is a few atomic operations.
#[derive(Debug)]
pub struct SlotWriter {
    map: Box<dyn StatusWords>,
    base: usize,
    index: usize,
}

/// Stores `bytes` into the words from `at`, eight to a word (the last
/// word padded with NULs).
fn store_bytes(words: &[AtomicU64], at: usize, bytes: &[u8]) {
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let mut b = [0u8; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        words[at + i].store(u64::from_le_bytes(b), Ordering::Relaxed);
    }
}

/// `text` as a NUL-padded field of `len` bytes whose last byte stays NUL.
fn field(text: &str, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    let n = text.len().min(len - 1);
    b[..n].copy_from_slice(&text.as_bytes()[..n]);
    b
}

/// `nds_version_info_t` (8 bytes: major, minor, two pad bytes, build) of
/// an `nmetric_version_t`.
fn version_info(v: u64) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[0] = (v >> 40) as u8;
    b[1] = (v >> 32) as u8;
    b[4..].copy_from_slice(&(v as u32).to_le_bytes());
    b
}

impl SlotWriter {
    /// The writer of entry `index` of a mapped store (the backend has
    /// acquired it).
    pub fn new(map: Box<dyn StatusWords>, index: usize) -> SlotWriter {
        assert!(index < ENTRIES && map.words().len() >= FILE_WORDS, "datastore entry {index} outside the store");
        SlotWriter { map, base: TABLE_WORDS + index * ENTRY_WORDS, index }
    }

    /// The entry's words.
    fn w(&self, i: usize) -> &AtomicU64 {
        &self.map.words()[self.base + i]
    }

    fn nc(&self, core: u32, counter: usize) -> Option<&AtomicU64> {
        nds::nc_word(core as usize, counter).map(|i| self.w(i))
    }

    fn core_word(&self, core: u32, i: usize) -> Option<&AtomicU64> {
        ((core as usize) < MAX_CORES).then(|| self.w(ours::CORES_BASE + core as usize * ours::CORE_WORDS + i))
    }

    /// The entry index in the store.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The pid owning an entry of the store this writer's entry is in
    /// (the driver's lookup for ACQUIRE_NEURON_DS with a pid), if any.
    pub fn entry_of(&self, pid: u32) -> Option<usize> {
        let words = self.map.words();
        (0..ENTRIES).find(|&e| pid != 0 && words[table::record(e, table::PID)].load(Ordering::Acquire) == u64::from(pid))
    }

    /// Writes the entry's header and the process identity (device side,
    /// at acquire): the process info objects, the runtime version
    /// counter, and ours (the command line and the version string).
    pub fn set_identity(&self, command: &str, tag: &str, runtime_version: &str) {
        let words = self.map.words();
        let mut header = [0u8; 8];
        header[..4].copy_from_slice(&nds::SIGNATURE);
        header[4..].copy_from_slice(&nds::HEADER_VERSION.to_le_bytes());
        let v = nmetric_version(runtime_version);
        self.w(nds::ND_COUNTERS + nds::nd::RUNTIME_VERSION).store(v, Ordering::Relaxed);
        // nds_process_info_t: framework_type, tag[32], three versions.
        let mut info = [0u8; 64];
        info[1..33].copy_from_slice(&field(tag, 32));
        info[52..60].copy_from_slice(&version_info(v));
        self.commit(object::PROCESS_INFO, nds::OBJECT_TYPE_PROCESS_INFO, &info);
        self.commit(object::PROCESS_INFO_EXT, nds::OBJECT_TYPE_PROCESS_INFO_EXT, &field(tag, 256));
        store_bytes(words, self.base + ours::COMMAND, &field(command, 64));
        store_bytes(words, self.base + ours::RUNTIME_VERSION, &field(runtime_version, 32));
        self.w(0).store(u64::from_le_bytes(header), Ordering::Release);
    }

    /// Writes object `at` (state, type, payload) and commits it.
    fn commit(&self, at: usize, kind: u64, payload: &[u8]) {
        self.w(at + object::STATE).store(1, Ordering::Relaxed);
        self.w(at + object::TYPE).store(kind, Ordering::Relaxed);
        store_bytes(self.map.words(), self.base + at + object::PAYLOAD, payload);
        self.w(at + object::STATE).store(2, Ordering::Release);
    }

    /// Marks physical cores as reserved by the owner.
    pub fn add_cores(&self, mask: u64) {
        self.w(ours::CORES).fetch_or(mask, Ordering::Relaxed);
    }

    /// The logical NeuronCore config the owner runs with.
    pub fn set_lnc(&self, lnc: u32) {
        self.w(ours::LNC).store(u64::from(lnc), Ordering::Relaxed);
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

    /// Counts `n` multiply-accumulates performed by `core`'s PE array
    /// (device side; `NDS_NC_COUNTER_MAC_COUNT`).
    #[inline]
    pub fn add_macs(&self, core: u32, n: u64) {
        if let Some(w) = self.nc(core, nds::nc::MAC_COUNT) {
            w.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts one memory error the device detected (device side): a
    /// device-wide counter in the table, which outlives the entry.
    pub fn hardware_error(&self, e: HardwareError) {
        self.map.words()[e.word()].fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `delta` (may be negative) bytes of `category` on `core`, or on
    /// the host when `core` is `None`: the `MEM_USAGE_*` counter of its
    /// slot and ours by category.
    #[inline]
    pub fn add_memory(&self, core: Option<u32>, category: MemCategory, delta: i64) {
        let slot = category.slot() as usize;
        let (published, ours) = match core {
            Some(c) => (self.nc(c, nds::nc::MEM_USAGE_DEVICE + slot), self.core_word(c, core::MEMORY + category as usize)),
            None => (Some(self.w(nds::ND_COUNTERS + nds::nd::MEM_USAGE_HOST + slot)), Some(self.w(ours::HOST_MEMORY + category as usize))),
        };
        for w in [published, ours].into_iter().flatten() {
            w.fetch_add(delta as u64, Ordering::Relaxed);
        }
    }

    /// Counts one finished execution on `core` with its outcome, its error
    /// class when it failed, and its host-side latency.
    #[inline]
    pub fn execution(&self, core: u32, outcome: Outcome, error: Option<ErrorClass>, total_ns: u64) {
        for counter in [Some(nds::nc::INFER + outcome as usize), error.map(ErrorClass::nc_counter), Some(nds::nc::INFERENCE_COUNT)] {
            if let Some(w) = counter.and_then(|c| self.nc(core, c)) {
                w.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.w(ours::TOTAL_LATENCY + latency_bucket(total_ns)).fetch_add(1, Ordering::Relaxed);
        self.sample(ours::TOTAL_SAMPLES, total_ns);
    }

    /// Counts one device latency: the execution's device time (the
    /// device's clock from the first START to the last END).
    #[inline]
    pub fn device_latency(&self, ns: u64) {
        self.w(ours::DEVICE_LATENCY + latency_bucket(ns)).fetch_add(1, Ordering::Relaxed);
        self.sample(ours::DEVICE_SAMPLES, ns);
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

    /// Publishes a loaded model as a model node object (off the execute
    /// path) and counts the load on its first core; returns false when
    /// every model node object is taken.
    pub fn model_loaded(&self, m: &ModelStatus) -> bool {
        if let Some(w) = self.nc(m.core, nds::nc::MODEL_LOAD_COUNT) {
            w.fetch_add(1, Ordering::Relaxed);
        }
        for e in 0..MAX_MODELS {
            let at = object::MODEL_NODES + e * object::NODE_WORDS;
            if self.w(at + object::STATE).compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed).is_err() {
                continue;
            }
            self.w(at + object::TYPE).store(nds::OBJECT_TYPE_MODEL_NODE_INFO, Ordering::Relaxed);
            // nds_model_node_info_t: model_id, model_node_id, name[256],
            // uuid[16], nc_index, sg_index.
            let mut info = vec![0u8; 288];
            info[..4].copy_from_slice(&(m.id as u32).to_le_bytes());
            info[8..264].copy_from_slice(&field(&m.name, 256));
            info[264..280].copy_from_slice(&m.uuid);
            info[280] = m.core as u8;
            store_bytes(self.map.words(), self.base + at + object::NODE_INFO, &info);
            // nds_model_node_mem_usage_info_t [location][slot]: location
            // 0 the device, 1 the host (the order is ours); total_size by
            // slot (chunk counts are not kept).
            let mut usage = [[0u64; nds::MEM_USAGE_SLOT_COUNT]; nds::MEM_USAGE_LOCATION_COUNT];
            for c in MemCategory::ALL {
                usage[0][c.slot() as usize] += m.memory[c as usize];
                usage[1][c.slot() as usize] += m.host_memory[c as usize];
            }
            for (l, slots) in usage.iter().enumerate() {
                for (s, &bytes) in slots.iter().enumerate() {
                    self.w(at + object::NODE_MEM_USAGE + 2 * (l * nds::MEM_USAGE_SLOT_COUNT + s)).store(bytes, Ordering::Relaxed);
                }
            }
            self.w(at + object::NODE_VNC).store(u64::from(m.vnc), Ordering::Relaxed);
            for c in MemCategory::ALL {
                self.w(at + object::NODE_MEMORY + c as usize).store(m.memory[c as usize], Ordering::Relaxed);
                self.w(at + object::NODE_HOST_MEMORY + c as usize).store(m.host_memory[c as usize], Ordering::Relaxed);
            }
            self.w(at + object::NODE_HOST_BYTES).store(m.host_memory.iter().sum(), Ordering::Relaxed);
            self.w(at + object::STATE).store(2, Ordering::Release);
            return true;
        }
        false
    }

    /// Deletes a model's node object.
    pub fn model_unloaded(&self, id: u64) {
        for e in 0..MAX_MODELS {
            let at = object::MODEL_NODES + e * object::NODE_WORDS;
            let node_id = self.w(at + object::NODE_INFO).load(Ordering::Relaxed) & 0xffff_ffff;
            if self.w(at + object::STATE).load(Ordering::Acquire) == 2 && node_id == id & 0xffff_ffff {
                self.w(at + object::STATE).store(0, Ordering::Release);
            }
        }
    }

    /// Clears the entry and frees it (the driver's release by the owner:
    /// zeroed, stamped with the next clear tick, pid 0).
    pub fn release(&self) {
        for i in 0..ENTRY_WORDS {
            self.w(i).store(0, Ordering::Relaxed);
        }
        let words = self.map.words();
        let tick = words[table::CLEAR_COUNTER].fetch_add(1, Ordering::AcqRel) + 1;
        words[table::record(self.index, table::CLEAR_TICK)].store(tick, Ordering::Relaxed);
        words[table::record(self.index, table::START_TIME)].store(0, Ordering::Relaxed);
        words[table::record(self.index, table::PID)].store(0, Ordering::Release);
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

/// The datastore file of device `device` of the simulated instance
/// `namespace` (the core-lock namespace, e.g. `sim-trn2-1`).
pub fn status_file(dir: &Path, namespace: &str, device: u32) -> PathBuf {
    dir.join(format!("{namespace}-nd{device}.nds"))
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
        // The published sections, in bytes (neuron_driver_shared.h).
        assert_eq!((nds::ND_COUNTERS * 8, nds::NC_COUNTERS * 8, nds::OBJECTS * 8), (8, 256, 1248));
        assert_eq!((nds::EXT_NC_COUNTERS * 8, nds::EXT_NC_DATA * 8, nds::END * 8), (55_936, 57_984, 67_200));
        const { assert!(nds::EXT_NC_COUNTERS + nds::MAX_NEURONCORE_COUNT * nds::EXT_NC_COUNTER_COUNT <= nds::EXT_NC_DATA) };
        // Every NC counter of every core has its own word.
        let mut seen = std::collections::HashSet::new();
        for nc in 0..MAX_CORES {
            for k in 0..nds::TOTAL_NC_COUNTER_COUNT {
                let w = nds::nc_word(nc, k).unwrap();
                assert!(w < nds::END && seen.insert(w), "nc {nc} counter {k}");
                assert!(!(nds::OBJECTS..nds::EXT_NC_COUNTERS).contains(&w));
            }
        }
        assert_eq!(nds::nc_word(MAX_CORES, 0), None);
        assert_eq!(nds::nc_word(0, nds::TOTAL_NC_COUNTER_COUNT), None);
        // Objects inside their area, ours past every published section.
        const { assert!(object::PROCESS_INFO >= nds::OBJECTS && object::PROCESS_INFO + object::PAYLOAD + 8 <= object::PROCESS_INFO_EXT) };
        const { assert!(object::PROCESS_INFO_EXT + object::PAYLOAD + 32 <= object::MODEL_NODES) };
        const { assert!(object::MODEL_NODES + MAX_MODELS * object::NODE_WORDS <= nds::OBJECTS_END) };
        const { assert!(ours::BASE >= nds::END && ours::END <= ENTRY_WORDS) };
        const { assert!(ours::RUNTIME_VERSION + 4 <= ours::HOST_MEMORY && ours::HOST_MEMORY + MemCategory::COUNT <= ours::CORES_BASE) };
        const { assert!(core::MEMORY + MemCategory::COUNT <= ours::CORE_WORDS) };
        assert!(table::record(ENTRIES, 0) <= TABLE_WORDS && table::CLEAR_COUNTER < table::ENTRY_TABLE);
        assert_eq!(FILE_BYTES, 4_198_400);
        assert_eq!((entry_at(entry_offset(3)), entry_at(entry_offset(3) + 8), entry_at(entry_offset(ENTRIES))), (Some(3), None, None));
    }

    #[test]
    fn a_writer_fills_the_published_counters() {
        #[derive(Debug)]
        struct Words(Vec<AtomicU64>);
        impl StatusWords for Words {
            fn words(&self) -> &[AtomicU64] {
                &self.0
            }
        }
        let w = SlotWriter::new(Box::new(Words((0..FILE_WORDS).map(|_| AtomicU64::new(0)).collect())), 2);
        let at = |i: usize| w.map.words()[TABLE_WORDS + 2 * ENTRY_WORDS + i].load(Ordering::Relaxed);
        w.set_identity("app", "tag", "2.3.4");
        assert_eq!(&at(0).to_le_bytes()[..4], b"nds\0");
        assert_eq!(at(nds::ND_COUNTERS), 4 | 3 << 32 | 2 << 40, "nmetric_version_t of 2.3.4");
        w.execution(5, Outcome::TimedOut, Some(ErrorClass::Transient), 100);
        // Core 5 is stored whole in the new section: counter k at
        // NDS_EXT_NEURONCORE_NC_DATA(base, 1)[k].
        let nc5 = |k: usize| at(nds::EXT_NC_DATA + nds::EXT_NC_DATA_COUNT + k);
        assert_eq!((nc5(4), nc5(10), nc5(28)), (1, 1, 1), "INFER_TIMED_OUT, ERR_TRANSIENT, INFERENCE_COUNT");
        w.add_memory(Some(1), MemCategory::DmaRings, 4096);
        w.add_memory(None, MemCategory::Constants, 64);
        assert_eq!(at(nds::NC_COUNTERS + nds::NC_COUNTER_COUNT + 26), 4096, "core 1's MEM_USAGE_MISC_DEVICE");
        assert_eq!(at(nds::ND_COUNTERS + 8), 64, "MEM_USAGE_CONSTANTS_HOST");
        w.add_macs(0, 7);
        assert_eq!(at(nds::NC_COUNTERS + 29), 7, "core 0's MAC_COUNT");
        assert_eq!(nmetric_version("x"), 0);
    }

    /// docs/status-file.md states the layout these constants define.
    #[test]
    fn the_docs_state_this_layout() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/status-file.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            nrt_test_support::skip!("{path} is absent (a crate packaged without the repository's docs)");
        };
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let cat = MemCategory::COUNT;
        for says in [
            format!("## Layout (version {VERSION})"),
            format!("{ENTRIES} entries of {} KiB", ENTRY_BYTES / 1024),
            format!("entry `e` at byte `{TABLE_BYTES} + e * {ENTRY_BYTES}`"),
            format!("| {} + {} e .. | record of entry `e`: pid, start time, clear tick |", table::ENTRY_TABLE, table::ENTRY_RECORD),
            format!("| {} | process info object", object::PROCESS_INFO),
            format!("| {} | extended process info object", object::PROCESS_INFO_EXT),
            format!("| {} + {} m .. | model node object `m` (`m` < {MAX_MODELS})", object::MODEL_NODES, object::NODE_WORDS),
            format!("| {} | reserved physical cores (bit mask) |", ours::CORES),
            format!("| {}..{} | host bytes by category |", ours::HOST_MEMORY, ours::HOST_MEMORY + cat),
            format!("| {} + {} c .. | core block of physical core `c` (`c` < {MAX_CORES}), below |", ours::CORES_BASE, ours::CORE_WORDS),
            format!("| {}..{} | total-latency histogram ({LATENCY_BUCKETS} buckets) |", ours::TOTAL_LATENCY, ours::DEVICE_LATENCY),
            format!("| {}..{} | device-latency histogram ({LATENCY_BUCKETS} buckets) |", ours::DEVICE_LATENCY, ours::TOTAL_SAMPLES),
            format!("| {} | total latencies recorded so far |", ours::TOTAL_SAMPLES),
            format!("| {} | device latencies recorded so far |", ours::DEVICE_SAMPLES),
            format!("Memory categories ({cat} words, in order)"),
        ] {
            assert!(doc.contains(&says), "docs/status-file.md should say \"{says}\"");
        }
    }
}
