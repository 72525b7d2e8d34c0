//! Reading a device status file ([`crate::status`]) from any process: a
//! copy of the file's bytes decoded into plain structs, with stale slots
//! (their process gone, or its pid reused) told apart.

use crate::status::{
    self, CORE_WORDS, ErrorClass, LATENCY_BUCKETS, MAX_CORES, MAX_MODELS, MODEL_WORDS, MemCategory, Outcome,
    HEADER_WORDS, SLOT_WORDS, SLOTS,
};
use std::path::Path;

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
    /// Slots of live processes.
    pub processes: Vec<ProcessStatus>,
    /// Slots whose owner is gone (crashed without releasing).
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

/// Counters of one physical core in one process's slot.
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

/// One live process's slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessStatus {
    /// Slot index.
    pub slot: u32,
    /// Pid.
    pub pid: u32,
    /// Start time (clock ticks after boot).
    pub start_time: u64,
    /// Reserved physical cores (bit mask).
    pub cores_mask: u64,
    /// Logical NeuronCore config (0 when the runtime did not say).
    pub lnc: u32,
    /// Command line: the slot's copy (its first 63 bytes), which
    /// [`read`] replaces by the whole line from `/proc` while the owner runs.
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

fn text(b: &[u8], at: usize, words: usize) -> String {
    let bytes = b.get(at * 8..(at + words) * 8).unwrap_or(&[]);
    let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Decodes a status file's bytes; `alive(pid, start_time)` decides which
/// slots are live ([`status::process_alive`] for real files).
pub fn decode(bytes: &[u8], alive: impl Fn(u32, u64) -> bool) -> Result<DeviceStatus, String> {
    if bytes.len() < status::FILE_BYTES {
        return Err(format!("status file has {} bytes, expected {}", bytes.len(), status::FILE_BYTES));
    }
    if word(bytes, status::header::MAGIC) != status::MAGIC {
        return Err("status file has no NRTSTAT1 magic (not initialised yet, or not a status file)".into());
    }
    let v = word(bytes, status::header::VERSION);
    if v != status::VERSION {
        return Err(format!("status file layout version {v} is not supported (supported: {})", status::VERSION));
    }
    let mut d = DeviceStatus {
        device_index: word(bytes, status::header::DEVICE_INDEX) as u32,
        physical_cores: word(bytes, status::header::PHYSICAL_CORES) as u32,
        memory_bytes: word(bytes, status::header::MEMORY_BYTES),
        host_memory_bytes: word(bytes, status::header::HOST_MEMORY_BYTES),
        arch: text(bytes, status::header::ARCH_NAME, 2),
        processes: Vec::new(),
        stale: Vec::new(),
        hardware: HardwareCounters {
            mem_ecc_uncorrected: word(bytes, status::header::MEM_ECC_UNCORRECTED),
            mem_ecc_repairable_uncorrected: word(bytes, status::header::MEM_ECC_REPAIRABLE_UNCORRECTED),
            sram_ecc_uncorrected: word(bytes, status::header::SRAM_ECC_UNCORRECTED),
        },
    };
    for s in 0..SLOTS {
        let base = HEADER_WORDS + s * SLOT_WORDS;
        let w = |i: usize| word(bytes, base + i);
        let pid = w(status::slot::PID) as u32;
        if pid == 0 {
            continue;
        }
        let start_time = w(status::slot::START_TIME);
        if !alive(pid, start_time) {
            d.stale.push(s as u32);
            continue;
        }
        let cores = (0..MAX_CORES.min(d.physical_cores as usize))
            .map(|c| {
                let cb = status::slot::CORES_BASE + c * CORE_WORDS;
                let mut cc = CoreCounters {
                    running: w(cb + status::core::RUNNING),
                    busy_ns: w(cb + status::core::BUSY_NS),
                    device_executions: w(cb + status::core::DEVICE_EXECUTIONS),
                    flops: w(cb + status::core::FLOPS),
                    ..CoreCounters::default()
                };
                for i in 0..6 {
                    cc.outcomes[i] = w(cb + status::core::OUTCOMES + i);
                    cc.errors[i] = w(cb + status::core::ERRORS + i);
                }
                for i in 0..MemCategory::COUNT {
                    cc.memory[i] = w(cb + status::core::MEMORY + i);
                }
                cc
            })
            .collect();
        let mut host_memory = [0; MemCategory::COUNT];
        for (i, m) in host_memory.iter_mut().enumerate() {
            *m = w(status::HOST_MEMORY + i);
        }
        let models = (0..MAX_MODELS)
            .filter_map(|e| {
                let at = status::MODELS + e * MODEL_WORDS;
                if w(at + status::model::SEQ) != 2 {
                    return None;
                }
                let mut m = ModelEntry {
                    id: w(at + status::model::ID),
                    vnc: w(at + status::model::VNC) as u32,
                    core: w(at + status::model::CORE) as u32,
                    host_bytes: w(at + status::model::HOST_BYTES),
                    name: text(bytes, base + at + status::model::NAME, status::model::NAME_END - status::model::NAME),
                    ..ModelEntry::default()
                };
                for i in 0..MemCategory::COUNT {
                    m.memory[i] = w(at + status::model::MEMORY + i);
                    m.host_memory[i] = w(at + status::model::HOST_MEMORY + i);
                }
                m.uuid[..8].copy_from_slice(&w(at + status::model::UUID).to_le_bytes());
                m.uuid[8..].copy_from_slice(&w(at + status::model::UUID + 1).to_le_bytes());
                Some(m)
            })
            .collect();
        d.processes.push(ProcessStatus {
            slot: s as u32,
            pid,
            start_time,
            cores_mask: w(status::slot::CORES),
            lnc: w(status::slot::LNC) as u32,
            command: text(bytes, base + status::slot::COMMAND, 8),
            tag: text(bytes, base + status::slot::TAG, 8),
            runtime_version: text(bytes, base + status::slot::RUNTIME_VERSION, 4),
            cores,
            host_memory,
            total_latency: (0..LATENCY_BUCKETS).map(|b| w(status::TOTAL_LATENCY + b)).collect(),
            device_latency: (0..LATENCY_BUCKETS).map(|b| w(status::DEVICE_LATENCY + b)).collect(),
            total_samples: Samples { count: w(status::TOTAL_SAMPLES), ring: (0..status::LATENCY_SAMPLES).map(|i| w(status::TOTAL_SAMPLES + 1 + i)).collect() },
            device_samples: Samples { count: w(status::DEVICE_SAMPLES), ring: (0..status::LATENCY_SAMPLES).map(|i| w(status::DEVICE_SAMPLES + 1 + i)).collect() },
            models,
        });
    }
    Ok(d)
}

/// Reads and decodes one status file, with live slots judged by `/proc`
/// and each live process's whole command line read from there (the slot
/// holds only its first 63 bytes).
pub fn read(path: &Path) -> Result<DeviceStatus, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("reading status file {}: {e}", path.display()))?;
    let mut d = decode(&bytes, status::process_alive).map_err(|e| format!("{}: {e}", path.display()))?;
    for p in &mut d.processes {
        // Read, then check the pid still names the owner: a pid reused in
        // between keeps the slot's own copy.
        if let Some(line) = status::command_line(p.pid).filter(|_| status::process_alive(p.pid, p.start_time)) {
            p.command = line;
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_rejects_short_and_foreign_files() {
        assert!(decode(&[0; 8], |_, _| true).unwrap_err().contains("expected"));
        let b = vec![0u8; status::FILE_BYTES];
        assert!(decode(&b, |_, _| true).unwrap_err().contains("magic"));
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
