//! Host buffers whose size comes from outside the runtime.
//!
//! A size a caller chose (a C client's `nrt_tensor_allocate(HOST, n)`, a
//! Python `tensor_read(size=n)`, a tensor size a NEFF declares, the
//! staging buffer of a slice) must never abort the process, yet
//! `vec![0; n]` aborts when the allocator refuses. Every such buffer comes
//! from here: a size beyond what this host can hold at all (its RAM and
//! swap, or its cgroup's limit when that is lower) is refused before
//! anything is allocated, and the allocation itself is fallible. Both
//! become NRT_RESOURCE with a message naming the size, which the C API
//! returns as is and Python raises as `MemoryError`.

use crate::status::{NrtError, NrtResult};
use std::fmt::Display;
use std::sync::OnceLock;

/// The most bytes one host allocation may ask for: RAM plus swap as
/// `/proc/meminfo` reports them, capped by the process's cgroup v2
/// `memory.max` (plus its swap allowance); `isize::MAX` (the most any
/// Rust allocation can hold) where neither is readable. Read once.
pub fn limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let cgroup = cgroup_dir().map(|d| (read_limit(&d.join("memory.max")), read_limit(&d.join("memory.swap.max"))));
        let (cg_ram, cg_swap) = cgroup.unwrap_or((None, None));
        from_sources(&meminfo, cg_ram, cg_swap)
    })
}

/// [`limit`] from the text of `/proc/meminfo` and the cgroup's
/// `memory.max` / `memory.swap.max` (`None`: unlimited or unreadable).
fn from_sources(meminfo: &str, cg_ram: Option<u64>, cg_swap: Option<u64>) -> u64 {
    let kib = |key: &str| {
        meminfo.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()).map(|k| k.saturating_mul(1024))
    };
    let ceiling = isize::MAX as u64;
    let Some(ram) = kib("MemTotal") else { return cg_ram.map_or(ceiling, |r| r.saturating_add(cg_swap.unwrap_or(0)).min(ceiling)) };
    let swap = kib("SwapTotal").unwrap_or(0);
    let ram = cg_ram.map_or(ram, |c| c.min(ram));
    let swap = cg_swap.map_or(swap, |c| c.min(swap));
    ram.saturating_add(swap).min(ceiling)
}

/// The process's cgroup v2 directory (`/proc/self/cgroup`'s `0::` line
/// under `/sys/fs/cgroup`).
fn cgroup_dir() -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(std::path::Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/')))
}

/// A cgroup limit file: bytes, or `None` for `max` or an unreadable file.
fn read_limit(path: &std::path::Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Checks that `bytes` of host memory can be asked for at all (see
/// [`limit`]); returns them as a `usize`. `what` names the buffer in the
/// error.
pub fn check(bytes: u64, what: impl Display) -> NrtResult<usize> {
    let limit = limit();
    if bytes > limit {
        return Err(NrtError::resource(format!("{what}: {bytes} bytes of host memory exceed what this host can hold ({limit} bytes of RAM and swap)")));
    }
    Ok(bytes as usize)
}

/// An empty vector with room for `n` elements, or NRT_RESOURCE naming the
/// size when the host cannot hold them or the allocator refuses.
pub fn with_capacity<T>(n: u64, what: impl Display) -> NrtResult<Vec<T>> {
    let bytes = n.saturating_mul(size_of::<T>() as u64);
    check(bytes, &what)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n as usize).map_err(|_| refused(bytes, &what))?;
    Ok(v)
}

/// `len` zero bytes, or NRT_RESOURCE naming the size when the host cannot
/// hold them or the allocator refuses.
pub fn zeroed(len: u64, what: impl Display) -> NrtResult<Vec<u8>> {
    let mut v = with_capacity::<u8>(len, what)?;
    v.resize(len as usize, 0);
    Ok(v)
}

/// A copy of `bytes` (fallible, as [`zeroed`]).
pub fn copy_of(bytes: &[u8], what: impl Display) -> NrtResult<Vec<u8>> {
    let mut v = with_capacity::<u8>(bytes.len() as u64, what)?;
    v.extend_from_slice(bytes);
    Ok(v)
}

fn refused(bytes: u64, what: &impl Display) -> NrtError {
    NrtError::resource(format!("{what}: the allocator refused {bytes} bytes of host memory"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NrtStatus;

    const MEMINFO: &str = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nSwapTotal:       1024 kB\n";

    #[test]
    fn the_limit_is_ram_and_swap_capped_by_the_cgroup() {
        assert_eq!(from_sources(MEMINFO, None, None), (24_576_000 + 1024) * 1024);
        assert_eq!(from_sources(MEMINFO, Some(4 << 30), None), (4 << 30) + 1024 * 1024);
        assert_eq!(from_sources(MEMINFO, Some(4 << 30), Some(0)), 4 << 30);
        assert_eq!(from_sources("", None, None), isize::MAX as u64);
        assert_eq!(from_sources("", Some(1 << 30), None), 1 << 30);
        assert!(limit() > 0 && limit() <= isize::MAX as u64);
    }

    #[test]
    fn sizes_the_host_cannot_hold_are_resource_errors_naming_the_size() {
        for n in [limit() + 1, 1 << 50, u64::MAX] {
            let e = zeroed(n, "host tensor \"x\"").unwrap_err();
            assert_eq!(e.status, NrtStatus::Resource);
            assert!(e.message.contains(&n.to_string()) && e.message.contains("host tensor \"x\""), "{}", e.message);
        }
        // Elements count by their size: the byte count is what is checked.
        let e = with_capacity::<u64>(u64::MAX / 4, "durations").unwrap_err();
        assert_eq!(e.status, NrtStatus::Resource);
        assert!(e.message.contains(&u64::MAX.to_string()), "{}", e.message);
    }

    #[test]
    fn sizes_it_can_hold_are_allocated() {
        assert_eq!(zeroed(3, "x").unwrap(), vec![0, 0, 0]);
        assert_eq!(copy_of(&[1, 2], "x").unwrap(), vec![1, 2]);
        assert!(with_capacity::<u32>(10, "x").unwrap().capacity() >= 10);
        assert!(zeroed(0, "x").unwrap().is_empty());
    }
}
