//! The datastore as the tools read it, the way AWS's tools read the
//! Neuron driver's: the list of processes using the device (the driver's
//! table, what DEVICE_GET_ALL_APPS_INFO answers), then each process's
//! entry by pid (what ACQUIRE_NEURON_DS with that pid and a read-only
//! mmap of its offset give), decoded by `nrt_hal::status_read`.
//!
//! The store read here is the emulated driver's: the file that holds the
//! simulated device's driver memory, written by every process using the
//! device, whether its runtime reaches the simulator in-process
//! (`NRT_DEVICE=sim`) or through the emulated driver
//! (`NRT_DEVICE=emulated-driver`): both acquire their entry with the same
//! code (`docs/status-file.md`). Reading copies only the table and the
//! live entries, never the whole store.

use nrt_hal::status::{self, ENTRY_BYTES, TABLE_BYTES};
use nrt_hal::status_read::{self, DeviceStatus, Table};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One open datastore and its table as read at open.
pub struct Datastore {
    file: File,
    table: Table,
}

impl Datastore {
    /// Opens the store at `path` read-only and reads its table.
    pub fn open(path: &Path) -> Result<Datastore, String> {
        let file = File::open(path).map_err(|e| format!("datastore {}: {e}", path.display()))?;
        let mut page = vec![0u8; TABLE_BYTES];
        file.read_exact_at(&mut page, 0).map_err(|e| format!("datastore {}: reading its table: {e}", path.display()))?;
        let table = status_read::decode_table(&page).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Datastore { file, table })
    }

    /// The processes holding an entry: (entry, pid, start time).
    pub fn apps(&self) -> &[(u32, u32, u64)] {
        &self.table.entries
    }

    /// The bytes of `pid`'s entry, read-only (ACQUIRE_NEURON_DS with a
    /// pid: ENOENT when it has none).
    pub fn acquire(&self, pid: u32) -> Result<Vec<u8>, i32> {
        let &(e, _, _) = self.table.entries.iter().find(|&&(_, p, _)| p == pid).ok_or(libc::ENOENT)?;
        let mut bytes = vec![0u8; ENTRY_BYTES];
        self.file.read_exact_at(&mut bytes, status::entry_offset(e as usize)).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        Ok(bytes)
    }

    /// Every live process's entry decoded, stale entries (their process
    /// gone, or its pid reused) listed apart, and each live process's
    /// whole command line read from `/proc` (the entry keeps its first
    /// 63 bytes).
    pub fn read(&self) -> Result<DeviceStatus, String> {
        let mut d = self.table.device.clone();
        for &(e, pid, start) in self.apps() {
            if !status::process_alive(pid, start) {
                d.stale.push(e);
                continue;
            }
            let bytes = match self.acquire(pid) {
                Ok(b) => b,
                Err(errno) => return Err(format!("datastore entry {e} of pid {pid}: {}", std::io::Error::from_raw_os_error(errno))),
            };
            let mut p = status_read::decode_entry(&bytes, e, pid, start, d.physical_cores);
            // Read, then check the pid still names the owner: a pid reused
            // in between keeps the entry's own copy.
            if let Some(line) = status::command_line(pid).filter(|_| status::process_alive(pid, start)) {
                p.command = line;
            }
            d.processes.push(p);
        }
        Ok(d)
    }
}

/// Reads the store at `path` ([`Datastore::open`], then
/// [`Datastore::read`]).
pub fn read(path: &Path) -> Result<DeviceStatus, String> {
    Datastore::open(path)?.read()
}
