//! An HBM channel's bytes as host memory the process can map: one memfd
//! of the channel's size, mapped `MAP_SHARED | MAP_NORESERVE`.
//!
//! Why: `nrt_get_hbm_mmap_va`, device tensors' VAs under
//! `NEURON_RT_MAP_HBM`, `nrt_memcpy_to_device` and `nrt_get_dmabuf_fd`
//! hand clients host addresses (and a descriptor) that are the device
//! memory itself. Once a channel is mapped ([`super::Pool::map`]), its
//! pages' bytes ([`super::slab::PageBytes::mapped`]) are blocks of this
//! mapping; the page table keeps its locks and versions over them.
//!
//! Lazily backed like the slabs: the kernel gives a page of the memfd
//! memory on first touch, and reading an untouched range through
//! [`ChannelMap::read_at`] (`pread`) returns zeros without allocating
//! any. [`ChannelMap::zero`] punches the range out of the file (zero
//! again, memory returned). The mapping is advised `MADV_HUGEPAGE`, which
//! shmem honours where `/sys/kernel/mm/transparent_hugepage/shmem_enabled`
//! allows it (not by default on most distributions: the slab pool's huge
//! pages are what an unmapped channel keeps).
//!
//! What the descriptor is ([`ChannelMap::open_at`]): a new open file
//! description of the channel's memfd whose file position is the
//! channel offset of the requested address. Unlike a dma-buf it spans
//! the whole channel (`fstat` gives the channel's size), its byte 0 is
//! the channel's first byte (map at the position rounded down to a page
//! and add the rest), and it has no DMA_BUF ioctls; a NIC driver cannot
//! import it. `pread`/`pwrite` at the position, and `mmap` as said, reach
//! the same bytes as the device.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

/// One mapped channel (see the module docs). Dropping it unmaps the
/// channel; pages hold it by `Arc` while they point into it.
#[derive(Debug)]
pub struct ChannelMap {
    fd: OwnedFd,
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is process memory shared by every thread; the
// struct only hands out its address and derived block pointers, and the
// page table's locks order the simulator's own accesses to the bytes.
unsafe impl Send for ChannelMap {}
// SAFETY: as above; every method takes `&self` and touches the bytes only
// through system calls or pointers the caller locks.
unsafe impl Sync for ChannelMap {}

fn os_error(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl ChannelMap {
    /// A zero-filled channel of `len` bytes (a multiple of the OS page
    /// size), named `name` in `/proc/<pid>/maps`.
    pub fn new(len: u64, name: &str) -> io::Result<ChannelMap> {
        let size = usize::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, format!("{len} bytes do not fit the address space")))?;
        if size == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "an empty channel cannot be mapped"));
        }
        let cname = CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a mapping name holds no NUL"))?;
        // SAFETY: a valid C string; the flags are a plain bit set.
        let raw = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(os_error("memfd_create"));
        }
        // SAFETY: `raw` is a descriptor this call just created and owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let off = libc::off_t::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "channel size exceeds off_t"))?;
        // SAFETY: a descriptor we own; sizing a fresh memfd makes a hole.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), off) } != 0 {
            return Err(os_error("ftruncate of the channel memfd"));
        }
        // SAFETY: a new shared mapping of the memfd at an address of the
        // kernel's choosing touches no existing memory.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_NORESERVE, fd.as_raw_fd(), 0)
        };
        if p == libc::MAP_FAILED {
            return Err(os_error("mmap of the channel memfd"));
        }
        // SAFETY: advice on the mapping just made; MADV_HUGEPAGE does not
        // change its contents, and refused advice leaves small pages.
        unsafe { libc::madvise(p, size, libc::MADV_HUGEPAGE) };
        let base = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(ChannelMap { fd, base, len: size })
    }

    /// Host address of the channel's first byte.
    pub fn va(&self) -> usize {
        self.base.as_ptr().addr()
    }

    /// Bytes mapped.
    pub fn len(&self) -> u64 {
        self.len as u64
    }

    /// Whether the mapping is empty (never: [`ChannelMap::new`] refuses).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pointer to the byte at `offset` (derived from the mapping's
    /// pointer, so it keeps the mapping's provenance); `None` past the end.
    pub(crate) fn at(&self, offset: usize) -> Option<NonNull<u8>> {
        (offset < self.len).then(|| {
            // In bounds of the mapping, so not null.
            NonNull::new(self.base.as_ptr().wrapping_add(offset)).expect("inside a mapping")
        })
    }

    /// Copies the channel bytes at `offset` into `buf` with `pread`: a
    /// range no page of the table holds yet, whose memory may never have
    /// been touched (reads of a hole give zeros without allocating).
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) {
        let mut done = 0usize;
        while done < buf.len() {
            let Ok(at) = libc::off_t::try_from(offset + done as u64) else { break };
            // SAFETY: `buf[done..]` is writable for its length; the fd is ours.
            let n = unsafe { libc::pread(self.fd.as_raw_fd(), buf[done..].as_mut_ptr().cast(), buf.len() - done, at) };
            if n > 0 {
                done += n as usize;
            } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            } else {
                break;
            }
        }
        // Past the end of the file (never, for in-bounds reads) or a failed
        // read: what no write put there reads as zero.
        buf[done..].fill(0);
    }

    /// Zeroes `len` bytes at `offset` by punching them out of the file
    /// (whole OS pages are returned to the system; partial ones are
    /// cleared). Falls back to writing zeros where punching is refused.
    pub fn zero(&self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (Ok(at), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else { return };
        // SAFETY: the fd is ours; punching a hole changes only file bytes.
        let r = unsafe { libc::fallocate(self.fd.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, at, n) };
        if r != 0 {
            let zeros = vec![0u8; (len as usize).min(1 << 20)];
            let mut done = 0u64;
            while done < len {
                let k = (len - done).min(zeros.len() as u64) as usize;
                let Ok(pos) = libc::off_t::try_from(offset + done) else { return };
                // SAFETY: `zeros[..k]` is readable; the fd is ours.
                let w = unsafe { libc::pwrite(self.fd.as_raw_fd(), zeros.as_ptr().cast(), k, pos) };
                if w <= 0 {
                    return;
                }
                done += w as u64;
            }
        }
    }

    /// A new open file description of the channel's memfd (read-write,
    /// close-on-exec) with its file position at `offset`: what
    /// `nrt_get_dmabuf_fd` hands out (see the module docs). The caller
    /// owns it.
    pub fn open_at(&self, offset: u64) -> io::Result<OwnedFd> {
        let path = CString::new(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).map_err(|_| io::Error::other("fd path"))?;
        // SAFETY: a valid C string; opening our own memfd again makes a
        // new description of the same file.
        let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if raw < 0 {
            return Err(os_error("reopening the channel memfd through /proc/self/fd"));
        }
        // SAFETY: a descriptor this call just created and owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let pos = libc::off_t::try_from(offset).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset exceeds off_t"))?;
        // SAFETY: the fd is ours.
        if unsafe { libc::lseek(fd.as_raw_fd(), pos, libc::SEEK_SET) } < 0 {
            return Err(os_error("positioning the channel memfd"));
        }
        Ok(fd)
    }
}

#[cfg(test)]
impl ChannelMap {
    /// Stores `data` at `offset` through the mapping, as a client does
    /// (tests of the page table over a mapped region).
    pub(crate) fn store(&self, offset: u64, data: &[u8]) {
        let end = offset.checked_add(data.len() as u64).expect("in range");
        assert!(end <= self.len as u64, "a store inside the mapping");
        let p = self.at(offset as usize).expect("inside the mapping");
        // SAFETY: `offset .. offset + len` lies inside the live mapping.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.as_ptr(), data.len()) };
    }
}

impl Drop for ChannelMap {
    fn drop(&mut self) {
        // SAFETY: the range is exactly the mapping made in `new`; no page
        // points into it any more (pages hold the map by `Arc`).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom};

    #[test]
    fn bytes_stored_through_the_mapping_are_the_files_and_holes_read_zero() {
        let m = ChannelMap::new(1 << 20, "test-channel").unwrap();
        let p = m.at(4096 + 5).unwrap();
        // SAFETY: inside the mapping, which lives to the end of the test.
        unsafe { p.as_ptr().write(0xAB) };
        let mut b = [0u8; 3];
        m.read_at(4096 + 4, &mut b);
        assert_eq!(b, [0, 0xAB, 0]);
        m.read_at((1 << 20) - 2, &mut b);
        assert_eq!(b, [0, 0, 0], "the last bytes, and past the end, read as zero");
        let mut f = std::fs::File::from(m.open_at(4096 + 5).unwrap());
        let mut one = [0u8; 1];
        f.read_exact(&mut one).unwrap();
        assert_eq!(one[0], 0xAB, "the descriptor starts at the asked offset");
        assert_eq!(f.metadata().unwrap().len(), 1 << 20, "and spans the channel");
        m.zero(4096, 4096);
        // SAFETY: as above.
        assert_eq!(unsafe { p.as_ptr().read() }, 0, "punched bytes read as zero through the mapping");
        f.seek(SeekFrom::Start(4096 + 5)).unwrap();
        f.read_exact(&mut one).unwrap();
        assert_eq!(one[0], 0);
        assert!(m.at(1 << 20).is_none());
    }
}
