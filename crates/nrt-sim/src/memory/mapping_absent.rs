//! Where a channel cannot be mapped (not Linux, or under Miri, which has
//! no memfd): [`ChannelMap`] has no values, so a region is never mapped
//! and `Device::map_hbm` answers that the device cannot map its memory.

use std::io;
use std::os::fd::OwnedFd;
use std::ptr::NonNull;

/// A mapped channel; none can exist here.
#[derive(Debug)]
pub enum ChannelMap {}

impl ChannelMap {
    /// Always an error: memory cannot be mapped on this target.
    pub fn new(len: u64, name: &str) -> io::Result<ChannelMap> {
        let _ = (len, name);
        Err(io::Error::new(io::ErrorKind::Unsupported, "HBM channels are mapped only on Linux (memfd)"))
    }

    /// Host address of the channel's first byte.
    pub fn va(&self) -> usize {
        match *self {}
    }

    /// Bytes mapped.
    pub fn len(&self) -> u64 {
        match *self {}
    }

    /// Whether the mapping is empty.
    pub fn is_empty(&self) -> bool {
        match *self {}
    }

    pub(crate) fn at(&self, offset: usize) -> Option<NonNull<u8>> {
        let _ = offset;
        match *self {}
    }

    /// Copies the channel bytes at `offset` into `buf`.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) {
        let _ = (offset, buf);
        match *self {}
    }

    /// Zeroes `len` bytes at `offset`.
    pub fn zero(&self, offset: u64, len: u64) {
        let _ = (offset, len);
        match *self {}
    }

    /// A descriptor of the channel positioned at `offset`.
    pub fn open_at(&self, offset: u64) -> io::Result<OwnedFd> {
        let _ = offset;
        match *self {}
    }
}
