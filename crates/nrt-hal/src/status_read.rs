//! Decoding a device datastore ([`crate::status`]) read by any process:
//! the table and each entry's bytes into plain structs, with stale
//! entries (their process gone, or its pid reused) told apart. Reading
//! the bytes is the portal's (`nrt_ndl::nds`), as the tools reach the
//! driver's store.

use crate::status::{self, ENTRIES, ErrorClass, LATENCY_BUCKETS, MAX_CORES, MAX_MODELS, MemCategory, Outcome, nds, object, ours, table};

/// One device's status as read at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceStatus {
    /// Device index.
    pub device_index: u32,
    /// Physical cores.
    pub physical_cores: u32,
    /// Device memory bytes.
    pub memory_bytes: u64,
    /// Host-DMA window bytes.
    pub host_memory_bytes: u64,
    /// Architecture name.
    pub arch: String,
    /// Entries of live processes.
    pub processes: Vec<ProcessStatus>,
    /// Entries whose owner is gone (crashed without releasing).
    pub stale: Vec<u32>,
    /// The device's memory-error counters (since the file was created).
    pub hardware: HardwareCounters,
}

/// The memory errors a device counted (header words, device-written).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HardwareCounters {
    /// Uncorrectable HBM errors.
    pub mem_ecc_uncorrected: u64,
    /// Uncorrectable HBM errors row repair can fix.
    pub mem_ecc_repairable_uncorrected: u64,
    /// Uncorrectable on-chip SRAM errors.
    pub sram_ecc_uncorrected: u64,
}

/// Counters of one physical core in one process's entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    /// Engines inside an execution right now.
    pub running: u64,
    /// Busy ns so far.
    pub busy_ns: u64,
    /// Executions the device finished.
    pub device_executions: u64,
    /// Outcomes by [`Outcome`].
    pub outcomes: [u64; 6],
    /// Errors by [`ErrorClass`].
    pub errors: [u64; 6],
    /// Device bytes by [`MemCategory`].
    pub memory: [u64; MemCategory::COUNT],
    /// Floating-point operations of the PE array so far.
    pub flops: u64,
}

impl CoreCounters {
    /// One outcome counter.
    pub fn outcome(&self, o: Outcome) -> u64 {
        self.outcomes[o as usize]
    }
    /// One error counter.
    pub fn error(&self, e: ErrorClass) -> u64 {
        self.errors[e as usize]
    }
    /// One memory category.
    pub fn mem(&self, c: MemCategory) -> u64 {
        self.memory[c as usize]
    }
    /// All device bytes.
    pub fn memory_total(&self) -> u64 {
        self.memory.iter().sum()
    }
}

/// A loaded model as its process published it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelEntry {
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
    /// Host bytes (their sum).
    pub host_bytes: u64,
    /// UUID bytes.
    pub uuid: [u8; 16],
    /// Name.
    pub name: String,
}

/// One live process's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessStatus {
    /// Entry index in the datastore.
    pub slot: u32,
    /// Pid.
    pub pid: u32,
    /// Start time (clock ticks after boot).
    pub start_time: u64,
    /// Reserved physical cores (bit mask).
    pub cores_mask: u64,
    /// Logical NeuronCore config (0 when the runtime did not say).
    pub lnc: u32,
    /// Command line: the entry's copy (its first 63 bytes), which the
    /// portal's reader replaces by the whole line from `/proc` while the
    /// owner runs.
    pub command: String,
    /// `NEURON_PROCESS_TAG` or empty.
    pub tag: String,
    /// Runtime version.
    pub runtime_version: String,
    /// Per physical core.
    pub cores: Vec<CoreCounters>,
    /// Host bytes by [`MemCategory`].
    pub host_memory: [u64; MemCategory::COUNT],
    /// Total-latency histogram.
    pub total_latency: Vec<u64>,
    /// Device-latency histogram.
    pub device_latency: Vec<u64>,
    /// The most recent total latencies.
    pub total_samples: Samples,
    /// The most recent device latencies.
    pub device_samples: Samples,
    /// Loaded models.
    pub models: Vec<ModelEntry>,
}

/// A latency sample ring as read: how many samples were ever recorded
/// and the ring of the last [`status::LATENCY_SAMPLES`] (ns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Samples {
    /// Samples recorded since the slot was claimed.
    pub count: u64,
    /// The ring; sample `n` is at `n % LATENCY_SAMPLES`.
    pub ring: Vec<u64>,
}

impl Samples {
    /// The samples recorded after a read that had counted `before` (the
    /// most recent [`status::LATENCY_SAMPLES`] of them when more came),
    /// oldest first.
    pub fn since(&self, before: u64) -> Vec<u64> {
        let n = self.ring.len() as u64;
        if n == 0 {
            return Vec::new();
        }
        let new = self.count.saturating_sub(before).min(n);
        (self.count - new..self.count).map(|i| self.ring[(i % n) as usize]).collect()
    }
}

/// The percentile `p` (0..=100) of `samples` (ns), the sample of rank
/// `round(p / 100 * (len - 1))` in ascending order; `None` when empty.
/// Sorts `samples`.
pub fn percentile_of(samples: &mut [u64], p: f64) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let rank = ((p / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples.get(rank.min(samples.len() - 1)).copied()
}

impl ProcessStatus {
    /// The reserved physical cores, ascending.
    pub fn reserved_cores(&self) -> Vec<u32> {
        (0..64).filter(|c| self.cores_mask & (1 << c) != 0).collect()
    }
}

fn word(b: &[u8], i: usize) -> u64 {
    b.get(i * 8..i * 8 + 8).map_or(0, |s| u64::from_le_bytes(s.try_into().unwrap_or_default()))
}

fn text(b: &[u8], at: usize, bytes: usize) -> String {
    let bytes = b.get(at..at + bytes).unwrap_or(&[]);
    let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// The driver's table as read: the device and every taken entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// The device (its `processes` and `stale` empty).
    pub device: DeviceStatus,
    /// Taken entries: (entry index, pid, start time).
    pub entries: Vec<(u32, u32, u64)>,
}

/// Decodes the table page of a store ([`status::TABLE_BYTES`] bytes).
pub fn decode_table(bytes: &[u8]) -> Result<Table, String> {
    if bytes.len() < status::TABLE_BYTES {
        return Err(format!("datastore has {} bytes, at least {} expected", bytes.len(), status::TABLE_BYTES));
    }
    if word(bytes, table::MAGIC) != status::MAGIC {
        return Err("datastore has no NRTNDS01 magic (not initialised yet, or not a datastore)".into());
    }
    let v = word(bytes, table::VERSION);
    if v != status::VERSION {
        return Err(format!("datastore layout version {v} is not supported (supported: {})", status::VERSION));
    }
    let device = DeviceStatus {
        device_index: word(bytes, table::DEVICE_INDEX) as u32,
        physical_cores: word(bytes, table::PHYSICAL_CORES) as u32,
        memory_bytes: word(bytes, table::MEMORY_BYTES),
        host_memory_bytes: word(bytes, table::HOST_MEMORY_BYTES),
        arch: text(bytes, table::ARCH_NAME * 8, 16),
        processes: Vec::new(),
        stale: Vec::new(),
        hardware: HardwareCounters {
            mem_ecc_uncorrected: word(bytes, table::MEM_ECC_UNCORRECTED),
            mem_ecc_repairable_uncorrected: word(bytes, table::MEM_ECC_REPAIRABLE_UNCORRECTED),
            sram_ecc_uncorrected: word(bytes, table::SRAM_ECC_UNCORRECTED),
        },
    };
    let entries = (0..ENTRIES)
        .filter_map(|e| {
            let pid = word(bytes, table::record(e, table::PID)) as u32;
            (pid != 0).then(|| (e as u32, pid, word(bytes, table::record(e, table::START_TIME))))
        })
        .collect();
    Ok(Table { device, entries })
}

/// Decodes one entry's bytes ([`status::ENTRY_BYTES`]) of the process
/// `pid` (started at `start_time`) in entry `index` of a device with
/// `physical_cores` cores.
pub fn decode_entry(bytes: &[u8], index: u32, pid: u32, start_time: u64, physical_cores: u32) -> ProcessStatus {
    let w = |i: usize| word(bytes, i);
    let nc = |core: usize, k: usize| nds::nc_word(core, k).map_or(0, &w);
    let cores = (0..MAX_CORES.min(physical_cores as usize))
        .map(|c| {
            let cb = ours::CORES_BASE + c * ours::CORE_WORDS;
            let mut cc = CoreCounters {
                running: w(cb + status::core::RUNNING),
                busy_ns: w(cb + status::core::BUSY_NS),
                device_executions: w(cb + status::core::DEVICE_EXECUTIONS),
                flops: 2 * nc(c, nds::nc::MAC_COUNT),
                ..CoreCounters::default()
            };
            for (i, o) in cc.outcomes.iter_mut().enumerate() {
                *o = nc(c, nds::nc::INFER + i);
            }
            for (i, e) in ErrorClass::ALL.iter().enumerate() {
                cc.errors[i] = nc(c, e.nc_counter());
            }
            for i in 0..MemCategory::COUNT {
                cc.memory[i] = w(cb + status::core::MEMORY + i);
            }
            cc
        })
        .collect();
    let mut host_memory = [0; MemCategory::COUNT];
    for (i, m) in host_memory.iter_mut().enumerate() {
        *m = w(ours::HOST_MEMORY + i);
    }
    let models = (0..MAX_MODELS)
        .filter_map(|e| {
            let at = object::MODEL_NODES + e * object::NODE_WORDS;
            if w(at + object::STATE) != 2 || w(at + object::TYPE) != nds::OBJECT_TYPE_MODEL_NODE_INFO {
                return None;
            }
            let info = (at + object::NODE_INFO) * 8;
            let mut m = ModelEntry {
                id: w(at + object::NODE_INFO) & 0xffff_ffff,
                vnc: w(at + object::NODE_VNC) as u32,
                core: u32::from(bytes.get(info + 280).copied().unwrap_or(0)),
                host_bytes: w(at + object::NODE_HOST_BYTES),
                name: text(bytes, info + 8, 256),
                ..ModelEntry::default()
            };
            for i in 0..MemCategory::COUNT {
                m.memory[i] = w(at + object::NODE_MEMORY + i);
                m.host_memory[i] = w(at + object::NODE_HOST_MEMORY + i);
            }
            if let Some(u) = bytes.get(info + 264..info + 280) {
                m.uuid.copy_from_slice(u);
            }
            Some(m)
        })
        .collect();
    let tag = if w(object::PROCESS_INFO_EXT + object::STATE) == 2 {
        text(bytes, (object::PROCESS_INFO_EXT + object::PAYLOAD) * 8, 256)
    } else {
        String::new()
    };
    ProcessStatus {
        slot: index,
        pid,
        start_time,
        cores_mask: w(ours::CORES),
        lnc: w(ours::LNC) as u32,
        command: text(bytes, ours::COMMAND * 8, 64),
        tag,
        runtime_version: text(bytes, ours::RUNTIME_VERSION * 8, 32),
        cores,
        host_memory,
        total_latency: (0..LATENCY_BUCKETS).map(|b| w(ours::TOTAL_LATENCY + b)).collect(),
        device_latency: (0..LATENCY_BUCKETS).map(|b| w(ours::DEVICE_LATENCY + b)).collect(),
        total_samples: Samples { count: w(ours::TOTAL_SAMPLES), ring: (0..status::LATENCY_SAMPLES).map(|i| w(ours::TOTAL_SAMPLES + 1 + i)).collect() },
        device_samples: Samples { count: w(ours::DEVICE_SAMPLES), ring: (0..status::LATENCY_SAMPLES).map(|i| w(ours::DEVICE_SAMPLES + 1 + i)).collect() },
        models,
    }
}

/// Decodes a whole store file's bytes; `alive(pid, start_time)` decides
/// which entries are live ([`status::process_alive`] for real files).
pub fn decode(bytes: &[u8], alive: impl Fn(u32, u64) -> bool) -> Result<DeviceStatus, String> {
    if bytes.len() < status::FILE_BYTES {
        return Err(format!("datastore has {} bytes, expected {}", bytes.len(), status::FILE_BYTES));
    }
    let Table { mut device, entries } = decode_table(bytes)?;
    for (e, pid, start) in entries {
        if !alive(pid, start) {
            device.stale.push(e);
            continue;
        }
        let at = status::entry_offset(e as usize) as usize;
        device.processes.push(decode_entry(&bytes[at..at + status::ENTRY_BYTES], e, pid, start, device.physical_cores));
    }
    Ok(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_rejects_short_and_foreign_files() {
        assert!(decode(&[0; 8], |_, _| true).unwrap_err().contains("expected"));
        let b = vec![0u8; status::FILE_BYTES];
        assert!(decode(&b, |_, _| true).unwrap_err().contains("magic"));
        assert!(decode_table(&b[..16]).unwrap_err().contains("at least"));
        let mut b = b;
        b[..8].copy_from_slice(&status::MAGIC.to_le_bytes());
        b[8..16].copy_from_slice(&7u64.to_le_bytes());
        assert!(decode(&b, |_, _| true).unwrap_err().contains("version 7"));
    }

    #[test]
    fn percentiles_come_from_the_samples_of_the_period() {
        let mut ring = vec![0; status::LATENCY_SAMPLES];
        // 300 samples recorded: 1..=300 ns; the ring holds the last 256.
        for n in 0..300u64 {
            ring[(n % status::LATENCY_SAMPLES as u64) as usize] = n + 1;
        }
        let s = Samples { count: 300, ring };
        assert_eq!(s.since(290), (291..=300).collect::<Vec<_>>(), "the period's ten samples, oldest first");
        assert_eq!(s.since(300), Vec::<u64>::new());
        assert_eq!(s.since(0).len(), status::LATENCY_SAMPLES, "at most the ring");
        assert_eq!(s.since(0)[0], 300 - status::LATENCY_SAMPLES as u64 + 1);
        let mut period = s.since(290);
        assert_eq!(percentile_of(&mut period, 0.0), Some(291));
        assert_eq!(percentile_of(&mut period, 50.0), Some(296), "an exact sample, not a bucket edge");
        assert_eq!(percentile_of(&mut period, 100.0), Some(300));
        assert_eq!(percentile_of(&mut [], 50.0), None);
        // Two latencies that share a histogram bucket; the samples tell
        // them apart.
        let other = if status::latency_bucket(1001) == status::latency_bucket(1000) { 1001 } else { 999 };
        assert_eq!(status::latency_bucket(1000), status::latency_bucket(other));
        assert_eq!(percentile_of(&mut [1000, other, other], 50.0), Some(other));
    }
}
