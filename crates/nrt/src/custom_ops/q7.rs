//! Bring-up of one NeuronCore's Q7 cluster, as libnrt's
//! `tpb_eng_init_hals_v2` / `aws_hal_q7_ucode_eng_init` /
//! `pool_stdio_block_init` do it, through the device portal
//! (`docs/gpsimd.md`):
//!
//! 1. the size gate: an IRAM (DRAM) image larger than one core's IRAM
//!    (DRAM) is "IRAM ucode too big!" ("DRAM ucode too big!");
//! 2. for each of the eight Q7 cores: the DRAM image, then the IRAM
//!    image;
//! 3. the stdio rings (NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES; 0 turns
//!    them off): one table of 16 queue descriptors (stdout of cores 0..8,
//!    then stderr), a ring per queue, a host read counter per queue;
//! 4. the cores are released from run-stall.
//!
//! [`Q7Cluster::drain_stdio`] is libnrt's
//! `pool_stdio_queue_consume_all_entries`: every progress step it copies
//! what the kernels printed into the runtime log.

use super::ucode::Q7Image;
use crate::log::{self, Level, Module};
use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::status::{NrtError, NrtResult};
use nrt_hal::{ArchDesc, CoreId, DeviceAddr};
use nrt_isa::ucode::stdio::{STDERR_ENTRIES, STDIO_DESC_BYTES, TAG_STDERR, TAG_STDOUT};
use nrt_isa::ucode::{STDIO_ENTRY_BYTES, STDIO_TABLE_BYTES, STDIO_TEXT_BYTES, StdioEntryHeader, StdioQueueDesc, csr};
use std::sync::{Arc, Mutex};

/// Q7 cores of one POOL engine.
pub const Q7_CORES: u32 = 8;
/// Largest stdout ring NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES allows.
pub const MAX_STDOUT_BYTES: u32 = 131_072;
/// Log function name of the stdio drain (libnrt's).
pub const STDIO_LOG_FUNCTION: &str = "pool_stdio_queue_consume_all_entries";
/// The line that introduces kernel output in the log.
pub const STDIO_LOG_HEADER: &str = "Printing stdout from GPSIMD:";

/// What a core's Q7 cluster is brought up with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Q7Setup {
    /// The image every Q7 core runs.
    pub image: Q7Image,
    /// Bytes of each core's stdout ring (0 = no stdio).
    pub stdout_bytes: u32,
}

impl Default for Q7Setup {
    fn default() -> Q7Setup {
        Q7Setup { image: Q7Image::stock(), stdout_bytes: 0 }
    }
}

/// libnrt's size gate: each half must fit one core's memory.
pub fn check_image_fits(arch: &ArchDesc, image: &Q7Image) -> NrtResult<()> {
    if image.iram.len() as u64 > arch.q7_iram_bytes {
        return Err(NrtError::invalid(format!(
            "IRAM ucode too big! doesn't fit, size={} (a Q7 core's IRAM holds {} bytes)",
            image.iram.len(),
            arch.q7_iram_bytes
        )));
    }
    if image.dram.len() as u64 > arch.q7_dram_bytes {
        return Err(NrtError::invalid(format!(
            "DRAM ucode too big! doesn't fit, size={} (a Q7 core's DRAM holds {} bytes)",
            image.dram.len(),
            arch.q7_dram_bytes
        )));
    }
    Ok(())
}

/// One stdio queue as the host tracks it.
#[derive(Debug)]
struct HostQueue {
    desc: StdioQueueDesc,
    /// Entries consumed so far (libnrt's host read counter).
    read: u32,
}

/// A core's brought-up Q7 cluster: its stdio block and queues.
#[derive(Debug)]
pub struct Q7Cluster {
    core: CoreId,
    memory: Arc<DeviceMemory>,
    /// The image installed (written again by [`Q7Cluster::reinstall`]).
    image: Q7Image,
    stdio_block: Option<DeviceAddr>,
    queues: Mutex<Vec<HostQueue>>,
}

fn hal(core: CoreId, what: String, e: impl std::fmt::Display) -> NrtError {
    NrtError::failure(format!("NC {}: {what}: {e}", core.0))
}

/// Writes one 32-bit Q7 cluster CSR.
fn write_csr(memory: &DeviceMemory, core: CoreId, offset: u64, value: u32) -> NrtResult<()> {
    let arch = memory.device().info().arch;
    memory
        .device()
        .write(arch.q7_csr_addr(core).offset(offset), &value.to_le_bytes())
        .map_err(|e| hal(core, format!("Q7 CSR {offset:#x} write"), e))
}

/// Writes `image` to the eight Q7 cores of `core`: for each, the DRAM
/// image, then the IRAM image. The images are written as they are
/// (padding the apertures is optional in the device contract and would
/// cost 3 MiB per core).
fn write_image(memory: &DeviceMemory, core: CoreId, image: &Q7Image) -> NrtResult<()> {
    let device = memory.device();
    let arch = device.info().arch;
    for q in 0..Q7_CORES {
        device.write(arch.q7_dram_addr(core, q), &image.dram).map_err(|e| hal(core, format!("Failed to load pooling q7 dram core {q}"), e))?;
        device.write(arch.q7_iram_addr(core, q), &image.iram).map_err(|e| hal(core, format!("Failed to load pooling q7 iram core {q}"), e))?;
    }
    Ok(())
}

impl Q7Cluster {
    /// Brings up `core`'s cluster with `setup` (steps 1-4 above). On
    /// failure nothing stays allocated.
    pub fn install(memory: &Arc<DeviceMemory>, core: CoreId, setup: &Q7Setup) -> NrtResult<Q7Cluster> {
        check_image_fits(memory.device().info().arch, &setup.image)?;
        write_image(memory, core, &setup.image)?;
        let mut cluster = Q7Cluster { core, memory: memory.clone(), image: setup.image.clone(), stdio_block: None, queues: Mutex::new(Vec::new()) };
        if setup.stdout_bytes > 0 {
            cluster.init_stdio(setup.stdout_bytes)?;
        } else {
            write_csr(memory, core, csr::STDIO_LO, 0)?;
            write_csr(memory, core, csr::STDIO_HI, 0)?;
        }
        // Release the run-stall of all eight cores at once.
        if let Err(e) = write_csr(memory, core, csr::RUN_STALL, 0) {
            cluster.free();
            return Err(e);
        }
        Ok(cluster)
    }

    /// Brings the cluster up again after a core reset (`RESET_NCS` of a
    /// poisoned core): the image to all eight cores (DRAM, then IRAM),
    /// the stdio table CSRs (the table and rings stay where they are, in
    /// device memory a reset keeps), then the run-stall release. Nothing
    /// is allocated.
    pub fn reinstall(&self) -> NrtResult<()> {
        write_image(&self.memory, self.core, &self.image)?;
        let table = self.stdio_block.map_or(0, |b| b.get());
        write_csr(&self.memory, self.core, csr::STDIO_LO, table as u32)?;
        write_csr(&self.memory, self.core, csr::STDIO_HI, (table >> 32) as u32)?;
        write_csr(&self.memory, self.core, csr::RUN_STALL, 0)
    }

    /// Allocates and publishes the stdio table and rings.
    fn init_stdio(&mut self, stdout_bytes: u32) -> NrtResult<()> {
        if !stdout_bytes.is_power_of_two() || stdout_bytes > MAX_STDOUT_BYTES || u64::from(stdout_bytes) < STDIO_ENTRY_BYTES {
            return Err(NrtError::invalid(format!(
                "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES={stdout_bytes}: expected 0 or a power of two from {STDIO_ENTRY_BYTES} to {MAX_STDOUT_BYTES}"
            )));
        }
        let core = self.core;
        let stdout_entries = (u64::from(stdout_bytes) / STDIO_ENTRY_BYTES) as u32;
        // Layout: table, 16 read counters (4 B each, 64 B), then the rings.
        let ring = |entries: u32| (u64::from(entries) * STDIO_ENTRY_BYTES + 4).next_multiple_of(64);
        let rings_at = STDIO_TABLE_BYTES as u64 + 64;
        let total = rings_at + u64::from(Q7_CORES) * (ring(stdout_entries) + ring(STDERR_ENTRIES));
        let block = self.memory.alloc(core, MemOwner::Runtime, MemUsage::PoolStdio, total, 0x800)?;
        self.stdio_block = Some(block);
        let r = self.publish_stdio(block, stdout_entries, rings_at, total, &ring);
        if r.is_err() {
            self.free();
        }
        r
    }

    fn publish_stdio(&self, block: DeviceAddr, stdout_entries: u32, rings_at: u64, total: u64, ring: &dyn Fn(u32) -> u64) -> NrtResult<()> {
        let core = self.core;
        let device = self.memory.device();
        device.memset(block, 0, total).map_err(|e| hal(core, "clearing the stdio block".into(), e))?;
        let mut table = vec![0u8; STDIO_TABLE_BYTES];
        let mut queues = Vec::new();
        let mut at = rings_at;
        for stderr in [false, true] {
            for q in 0..Q7_CORES {
                let capacity = if stderr { STDERR_ENTRIES } else { stdout_entries };
                let index = StdioQueueDesc::table_index(q, stderr);
                let desc = StdioQueueDesc {
                    q7: q as u16,
                    tag: if stderr { TAG_STDERR } else { TAG_STDOUT },
                    capacity,
                    data_addr: block.get() + at,
                    read_counter_addr: block.get() + STDIO_TABLE_BYTES as u64 + 4 * index as u64,
                };
                table[index * STDIO_DESC_BYTES..(index + 1) * STDIO_DESC_BYTES].copy_from_slice(&desc.encode());
                queues.push(HostQueue { desc, read: 0 });
                at += ring(capacity);
            }
        }
        device.write(block, &table).map_err(|e| hal(core, "writing the stdio table".into(), e))?;
        write_csr(&self.memory, core, csr::STDIO_LO, block.get() as u32)?;
        write_csr(&self.memory, core, csr::STDIO_HI, (block.get() >> 32) as u32)?;
        *self.queues.lock().unwrap_or_else(|e| e.into_inner()) = queues;
        Ok(())
    }

    /// Whether the stdio rings are on.
    pub fn has_stdio(&self) -> bool {
        self.stdio_block.is_some()
    }

    /// Copies every pending entry of every queue (stdout of cores 0..8,
    /// then stderr) into the log and returns the texts in that order. A
    /// queue that overran its ring loses its oldest entries (logged, not
    /// fatal).
    pub fn drain_stdio(&self) -> Vec<String> {
        let mut out = Vec::new();
        let device = self.memory.device();
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        for hq in queues.iter_mut() {
            let d = hq.desc;
            let mut w = [0u8; 4];
            if device.read(DeviceAddr(d.write_counter_addr()), &mut w).is_err() {
                continue;
            }
            let written = u32::from_le_bytes(w);
            let mut pending = written.wrapping_sub(hq.read);
            if pending == 0 {
                continue;
            }
            if pending > d.capacity {
                log::write(
                    Level::Warn,
                    Module::Tdrv,
                    STDIO_LOG_FUNCTION,
                    format_args!("[NC {}] GPSIMD core {} stdio queue overran: {} entries lost", self.core.0, d.q7, pending - d.capacity),
                );
                hq.read = written.wrapping_sub(d.capacity);
                pending = d.capacity;
            }
            let mut text = Vec::new();
            let mut entry = [0u8; STDIO_ENTRY_BYTES as usize];
            for k in 0..pending {
                let slot = u64::from(hq.read.wrapping_add(k) % d.capacity);
                if device.read(DeviceAddr(d.data_addr + slot * STDIO_ENTRY_BYTES), &mut entry).is_err() {
                    break;
                }
                let h = StdioEntryHeader::decode(entry[..16].try_into().expect("16-byte header"));
                let n = (h.len as usize).min(STDIO_TEXT_BYTES);
                text.extend_from_slice(&entry[16..16 + n]);
            }
            hq.read = written;
            let _ = device.write(DeviceAddr(d.read_counter_addr), &written.to_le_bytes());
            let s = String::from_utf8_lossy(&text).into_owned();
            let stream = if d.tag == TAG_STDERR { "stderr" } else { "stdout" };
            log::write(Level::Info, Module::Tdrv, STDIO_LOG_FUNCTION, format_args!("{STDIO_LOG_HEADER} [NC {}] core {} {stream}:\n{}", self.core.0, d.q7, s.trim_end_matches('\n')));
            out.push(s);
        }
        out
    }

    fn free(&mut self) {
        if let Some(b) = self.stdio_block.take() {
            let _ = self.memory.free(b);
        }
    }

    /// Teardown: stalls the cores, turns stdio off and frees the block.
    pub fn teardown(&mut self) -> NrtResult<()> {
        let stall = write_csr(&self.memory, self.core, csr::RUN_STALL, csr::RUN_STALL_RESET);
        let off = write_csr(&self.memory, self.core, csr::STDIO_LO, 0).and(write_csr(&self.memory, self.core, csr::STDIO_HI, 0));
        let freed = match self.stdio_block.take() {
            Some(b) => self.memory.free(b),
            None => Ok(()),
        };
        stall.and(off).and(freed)
    }
}
