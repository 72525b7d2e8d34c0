//! Exclusive core reservation through flock'ed lock files.
//!
//! The driver's NC_RANGE_MARK claims cores for a process and releases them
//! when the process exits. Backends without a kernel driver (the simulator)
//! get the same guarantee from advisory `flock` locks: one file per
//! (namespace, device, core), locked exclusively while reserved. The kernel
//! drops the lock when the file is closed, so a crashed process never
//! leaves a core reserved. `flock` locks belong to the open file
//! description, so two reservations inside one process conflict as well.

use crate::addr::CoreId;
use crate::error::{HalError, HalResult};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How a driver-backed reservation is released (the backend's unmark call
/// for the cores), run once when the reservation drops.
pub type Release = Box<dyn FnOnce(&[CoreId]) + Send + Sync>;

/// A set of reserved cores. Dropping it releases them.
pub struct CoreReservation {
    device: u32,
    cores: Vec<CoreId>,
    // The open, exclusively locked files; closing them releases the locks.
    _locks: Vec<File>,
    // A driver's release (NC_RANGE_UNMARK), for reservations the driver holds.
    release: Option<Release>,
}

impl std::fmt::Debug for CoreReservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreReservation").field("device", &self.device).field("cores", &self.cores).finish()
    }
}

impl Drop for CoreReservation {
    fn drop(&mut self) {
        if let Some(r) = self.release.take() {
            r(&self.cores);
        }
    }
}

impl CoreReservation {
    /// Reserves `cores` of `device` in the lock directory `dir` under
    /// `namespace` (which separates unrelated device instances, e.g. two
    /// simulated instance types). All-or-nothing: if any core is taken,
    /// nothing stays reserved and the error lists every taken core.
    pub fn acquire(dir: &Path, namespace: &str, device: u32, cores: &[CoreId]) -> HalResult<CoreReservation> {
        let lost = |what: &str, path: &Path, e: std::io::Error| HalError::DeviceLost {
            reason: format!("cannot {what} core lock file {}: {e}", path.display()),
        };
        std::fs::create_dir_all(dir).map_err(|e| lost("create directory for", dir, e))?;
        let mut locks = Vec::with_capacity(cores.len());
        let mut busy = Vec::new();
        let mut holders = Vec::new();
        let mut sorted: Vec<CoreId> = cores.to_vec();
        sorted.sort();
        sorted.dedup();
        for &core in &sorted {
            let path = lock_path(dir, namespace, device, core);
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| lost("open", &path, e))?;
            match file.try_lock() {
                Ok(()) => {
                    // Record the owner for the Busy message of the next contender.
                    let _ = file.set_len(0);
                    let _ = file.seek(SeekFrom::Start(0));
                    let _ = write!(file, "{}", std::process::id());
                    locks.push(file);
                }
                Err(TryLockError::WouldBlock) => {
                    busy.push(core.0);
                    let mut owner = String::new();
                    let _ = file.read_to_string(&mut owner);
                    let owner = owner.trim();
                    if !owner.is_empty() && !holders.iter().any(|h: &String| h == owner) {
                        holders.push(owner.to_string());
                    }
                }
                Err(TryLockError::Error(e)) => return Err(lost("lock", &path, e)),
            }
        }
        if !busy.is_empty() {
            let holder = if holders.is_empty() {
                "holder unknown".to_string()
            } else {
                format!("held by pid {}", holders.join(", pid "))
            };
            return Err(HalError::Busy { device, cores: busy, holder });
        }
        Ok(CoreReservation { device, cores: sorted, _locks: locks, release: None })
    }

    /// A reservation a driver holds (its NC_RANGE_MARK claim): `release`
    /// runs once, with the cores, when the reservation drops; the driver
    /// also drops the claim when the process exits.
    pub fn with_release(device: u32, mut cores: Vec<CoreId>, release: Release) -> CoreReservation {
        cores.sort();
        cores.dedup();
        CoreReservation { device, cores, _locks: Vec::new(), release: Some(release) }
    }

    /// The device the cores belong to.
    pub fn device(&self) -> u32 {
        self.device
    }

    /// The reserved cores, sorted.
    pub fn cores(&self) -> &[CoreId] {
        &self.cores
    }
}

/// The lock file of one core.
pub fn lock_path(dir: &Path, namespace: &str, device: u32, core: CoreId) -> PathBuf {
    let ns: String = namespace
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .collect();
    dir.join(format!("nrt-{ns}-nd{device}-nc{}.lock", core.0))
}

/// The default directory for lock files: `$XDG_RUNTIME_DIR/nrt-rs`, else
/// `/dev/shm/nrt-rs`, else the temp dir.
pub fn default_lock_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("nrt-rs");
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        return shm.join("nrt-rs");
    }
    std::env::temp_dir().join("nrt-rs")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("nrt-hal-test-{}-{name}", std::process::id()))
    }

    #[test]
    fn second_reservation_conflicts_and_names_cores() {
        let dir = scratch("conflict");
        let a = CoreReservation::acquire(&dir, "t", 0, &[CoreId(0), CoreId(1)]).unwrap();
        let err = CoreReservation::acquire(&dir, "t", 0, &[CoreId(1), CoreId(2)]).unwrap_err();
        match err {
            HalError::Busy { device, cores, holder } => {
                assert_eq!(device, 0);
                assert_eq!(cores, vec![1]);
                assert!(holder.contains(&std::process::id().to_string()), "{holder}");
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        // Core 2 was not left reserved by the failed attempt.
        let c = CoreReservation::acquire(&dir, "t", 0, &[CoreId(2)]).unwrap();
        drop(a);
        let b = CoreReservation::acquire(&dir, "t", 0, &[CoreId(1)]).unwrap();
        assert_eq!(b.cores(), &[CoreId(1)]);
        drop((b, c));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn namespaces_and_devices_are_independent() {
        let dir = scratch("ns");
        let _a = CoreReservation::acquire(&dir, "x", 0, &[CoreId(0)]).unwrap();
        let _b = CoreReservation::acquire(&dir, "y", 0, &[CoreId(0)]).unwrap();
        let _c = CoreReservation::acquire(&dir, "x", 1, &[CoreId(0)]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn lock_path_sanitises_namespace() {
        let p = lock_path(Path::new("/d"), "a/b c", 3, CoreId(7));
        assert_eq!(p, PathBuf::from("/d/nrt-a_b_c-nd3-nc7.lock"));
    }
}
