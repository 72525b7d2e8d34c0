//! A tensor as the C API sees it: libnrt tensors can be empty, views into
//! another tensor's storage (slices share and keep alive the parent's
//! storage) or wrap caller memory (`nrt_tensor_attach_buffer`). The
//! runtime core's [`Tensor`] owns device or host storage; this type adds
//! those views on top and routes reads, writes and copies to the right
//! bytes.

use nrt_core::tensor::{Placement, Tensor, Tracking};
use nrt_core::{NrtError, NrtResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a C tensor's bytes are.
#[derive(Clone, Debug)]
pub enum View {
    /// No storage yet (`nrt_tensor_allocate_empty`).
    Empty,
    /// `size` bytes at `offset` of a runtime tensor (the whole of it for an
    /// allocated tensor, part of it for a slice).
    Runtime {
        /// The storage owner (shared by slices).
        root: Arc<Tensor>,
        /// Device position for device storage, `None` for host storage.
        device: Option<usize>,
        /// First byte in `root`.
        offset: u64,
        /// Bytes visible through this tensor.
        size: u64,
    },
    /// Caller memory (`nrt_tensor_attach_buffer`), which the caller keeps
    /// alive for the tensor's life.
    Attached {
        /// Address of byte 0.
        addr: usize,
        /// Length in bytes.
        size: u64,
    },
}

/// One `nrt_tensor_t`.
#[derive(Debug)]
pub struct CTensor {
    /// The name given at allocation (logs only).
    pub name: String,
    view: Mutex<View>,
    completions: AtomicU64,
}

fn check_range(name: &str, size: u64, offset: u64, len: u64) -> NrtResult<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(NrtError::invalid(format!("tensor {name:?}: {len} bytes at offset {offset} exceed its size of {size} bytes"))),
    }
}

impl CTensor {
    /// A tensor with this storage.
    pub fn new(name: String, view: View) -> CTensor {
        CTensor { name, view: Mutex::new(view), completions: AtomicU64::new(0) }
    }

    /// A tensor owning a whole runtime tensor.
    pub fn owning(name: String, t: Tensor, device: Option<usize>) -> CTensor {
        let size = t.size();
        CTensor::new(name, View::Runtime { root: Arc::new(t), device, offset: 0, size })
    }

    fn lock(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A snapshot of the storage (cheap: an `Arc` clone).
    pub fn view(&self) -> View {
        self.lock().clone()
    }

    /// Replaces the storage, dropping the old one.
    pub fn set_view(&self, v: View) {
        *self.lock() = v;
    }

    /// Drops the storage (the tensor becomes empty).
    pub fn release(&self) {
        self.set_view(View::Empty);
    }

    /// Size in bytes (0 when empty).
    pub fn size(&self) -> u64 {
        match &*self.lock() {
            View::Empty => 0,
            View::Runtime { size, .. } | View::Attached { size, .. } => *size,
        }
    }

    fn storage(&self) -> NrtResult<View> {
        match self.view() {
            View::Empty => Err(NrtError::invalid(format!("tensor {:?} has no storage (allocate_empty without attach_buffer)", self.name))),
            v => Ok(v),
        }
    }

    /// Copies bytes at `offset` into `buf`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> NrtResult<()> {
        self.read_with(offset, buf, Tracking::Wait)
    }

    /// [`CTensor::read`] with the runtime tensor's tracking as given
    /// (caller memory has none).
    pub fn read_with(&self, offset: u64, buf: &mut [u8], tracking: Tracking) -> NrtResult<()> {
        self.read_via(offset, buf, tracking, None)
    }

    /// [`CTensor::read_with`] through the DMA queues of physical core
    /// `via` for device storage ([`Tensor::read_via`]).
    pub fn read_via(&self, offset: u64, buf: &mut [u8], tracking: Tracking, via: Option<nrt_hal::CoreId>) -> NrtResult<()> {
        let v = self.storage()?;
        match v {
            View::Runtime { root, offset: base, size, .. } => {
                check_range(&self.name, size, offset, buf.len() as u64)?;
                root.read_via(base + offset, buf, tracking, via)
            }
            View::Attached { addr, size } => {
                check_range(&self.name, size, offset, buf.len() as u64)?;
                // SAFETY: the caller attached `size` bytes at `addr` and keeps
                // them alive; the range is inside them.
                let src = unsafe { std::slice::from_raw_parts((addr as *const u8).add(offset as usize), buf.len()) };
                buf.copy_from_slice(src);
                Ok(())
            }
            View::Empty => unreachable_empty(),
        }
    }

    /// Copies `data` into the tensor at `offset`.
    pub fn write(&self, offset: u64, data: &[u8]) -> NrtResult<()> {
        self.write_with(offset, data, Tracking::Wait)
    }

    /// [`CTensor::write`] with the runtime tensor's tracking as given
    /// (caller memory has none).
    pub fn write_with(&self, offset: u64, data: &[u8], tracking: Tracking) -> NrtResult<()> {
        self.write_via(offset, data, tracking, None)
    }

    /// [`CTensor::write_with`] through the DMA queues of physical core
    /// `via` for device storage ([`Tensor::write_via`]).
    pub fn write_via(&self, offset: u64, data: &[u8], tracking: Tracking, via: Option<nrt_hal::CoreId>) -> NrtResult<()> {
        let v = self.storage()?;
        match v {
            View::Runtime { root, offset: base, size, .. } => {
                check_range(&self.name, size, offset, data.len() as u64)?;
                root.write_via(base + offset, data, tracking, via)
            }
            View::Attached { addr, size } => {
                check_range(&self.name, size, offset, data.len() as u64)?;
                // SAFETY: as in `read`; the caller's buffer is writable.
                let dst = unsafe { std::slice::from_raw_parts_mut((addr as *mut u8).add(offset as usize), data.len()) };
                dst.copy_from_slice(data);
                Ok(())
            }
            View::Empty => unreachable_empty(),
        }
    }

    /// Fills `len` bytes at `offset` with `value`.
    pub fn memset(&self, offset: u64, value: u8, len: u64) -> NrtResult<()> {
        let v = self.storage()?;
        match v {
            View::Runtime { root, offset: base, size, .. } => {
                check_range(&self.name, size, offset, len)?;
                root.memset(base + offset, value, len)
            }
            View::Attached { addr, size } => {
                check_range(&self.name, size, offset, len)?;
                // SAFETY: as in `write`.
                let dst = unsafe { std::slice::from_raw_parts_mut((addr as *mut u8).add(offset as usize), len as usize) };
                dst.fill(value);
                Ok(())
            }
            View::Empty => unreachable_empty(),
        }
    }

    /// Copies `len` bytes from `src` at `src_offset` to `self` at
    /// `dst_offset`: between device tensors the runtime tensor's copy
    /// (device to device on one device without a host bounce, NRT_INVALID
    /// across devices); otherwise through a host buffer.
    pub fn copy_from(&self, dst_offset: u64, src: &CTensor, src_offset: u64, len: u64) -> NrtResult<()> {
        let (sv, dv) = (src.storage()?, self.storage()?);
        if let (
            View::Runtime { root: sr, device: Some(_), offset: so, size: ss },
            View::Runtime { root: dr, device: Some(_), offset: d_o, size: ds },
        ) = (&sv, &dv)
        {
            check_range(&src.name, *ss, src_offset, len)?;
            check_range(&self.name, *ds, dst_offset, len)?;
            return dr.copy_from(d_o + dst_offset, sr, so + src_offset, len);
        }
        let n = usize::try_from(len).map_err(|_| NrtError::invalid(format!("copy of {len} bytes is too large")))?;
        check_range(&src.name, src.size(), src_offset, len)?;
        check_range(&self.name, self.size(), dst_offset, len)?;
        let mut tmp = nrt_core::host_memory::zeroed(n as u64, format_args!("copy of tensor {:?} to {:?}", src.name, self.name))?;
        src.read(src_offset, &mut tmp)?;
        self.write(dst_offset, &tmp)
    }

    /// Host address of the bytes, or `None` (device storage whose HBM is
    /// not mapped into the process, empty).
    pub fn va(&self) -> Option<usize> {
        match self.view() {
            View::Runtime { root, offset, .. } => root.va().map(|a| a + offset as usize),
            View::Attached { addr, .. } => Some(addr),
            View::Empty => None,
        }
    }

    /// The runtime tensor to bind for an execution when this tensor is a
    /// whole runtime tensor; `None` when it must be staged (slice,
    /// attached buffer).
    pub fn whole(&self) -> NrtResult<Option<Arc<Tensor>>> {
        match self.storage()? {
            View::Runtime { root, offset: 0, size, .. } if size == root.size() => Ok(Some(root)),
            _ => Ok(None),
        }
    }

    /// Device placement: (device position, core, device address of byte 0).
    pub fn device_placement(&self) -> Option<(usize, nrt_hal::CoreId, u64)> {
        match self.view() {
            View::Runtime { root, device: Some(d), offset, .. } => match root.placement() {
                Placement::Device { core, addr } => Some((d, core, addr.get() + offset)),
                Placement::Host => None,
            },
            _ => None,
        }
    }

    /// Executions that completed with this tensor as an output since the
    /// last reset: the runtime tensor's own count when this handle is the
    /// whole of it (bound in place: the device's streaming completion
    /// records land there), plus the completions this handle was given
    /// after host staging.
    pub fn completions(&self) -> u64 {
        let own = self.completions.load(Ordering::Acquire);
        match self.whole() {
            Ok(Some(root)) => own + root.output_completions(),
            _ => own,
        }
    }

    /// Counts one completed execution writing this tensor through host
    /// staging and wakes the threads waiting in
    /// `nrt_tensor_check_output_completion`.
    pub fn complete_one(&self) {
        self.completions.fetch_add(1, Ordering::AcqRel);
        nrt_core::tensor::OUTPUT_COMPLETIONS.notify();
    }

    /// `nrt_tensor_reset_output_completion`.
    pub fn reset_completions(&self) {
        self.completions.store(0, Ordering::Release);
        if let Ok(Some(root)) = self.whole() {
            root.reset_output_completions();
        }
    }
}

fn unreachable_empty<T>() -> NrtResult<T> {
    Err(NrtError::failure("tensor storage vanished while in use"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_storage_and_attached_buffers_are_used_in_place() {
        let parent = CTensor::owning("p".into(), Tensor::allocate_host(16, "p").unwrap(), None);
        let View::Runtime { root, .. } = parent.view() else { panic!() };
        let slice = CTensor::new("s".into(), View::Runtime { root, device: None, offset: 4, size: 8 });
        slice.write(0, &[1, 2, 3]).unwrap();
        let mut b = [0u8; 8];
        parent.read(2, &mut b).unwrap();
        assert_eq!(b, [0, 0, 1, 2, 3, 0, 0, 0]);
        assert!(slice.write(6, &[0; 3]).is_err());
        parent.release();
        slice.read(0, &mut b[..3]).unwrap();
        assert_eq!(&b[..3], &[1, 2, 3]);

        let mut mem = vec![0u8; 8];
        let att = CTensor::new("a".into(), View::Attached { addr: mem.as_mut_ptr() as usize, size: 8 });
        att.copy_from(1, &slice, 0, 3).unwrap();
        att.memset(6, 9, 2).unwrap();
        assert_eq!(mem, [0, 1, 2, 3, 0, 0, 9, 9]);
        assert!(CTensor::new("e".into(), View::Empty).read(0, &mut []).is_err());
    }

    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Write(u64, Vec<u8>),
        Memset(u64, u8, u64),
        Read(u64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..80, proptest::collection::vec(any::<u8>(), 0..24)).prop_map(|(o, d)| Op::Write(o, d)),
            (0u64..80, any::<u8>(), 0u64..24).prop_map(|(o, v, n)| Op::Memset(o, v, n)),
            (0u64..80, 0u64..24).prop_map(|(o, n)| Op::Read(o, n)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// A slice at any offset behaves like the same window of a plain
        /// byte vector: in-range operations agree, out-of-range ones fail
        /// and change nothing.
        #[test]
        fn slice_views_match_a_byte_vector(base in 0u64..32, len in 1u64..48, ops in proptest::collection::vec(op(), 1..24)) {
            let parent = CTensor::owning("p".into(), Tensor::allocate_host(80, "p").unwrap(), None);
            let View::Runtime { root, .. } = parent.view() else { panic!("host tensor") };
            let slice = CTensor::new("s".into(), View::Runtime { root, device: None, offset: base, size: len });
            let mut model = vec![0u8; 80];
            for op in ops {
                match op {
                    Op::Write(o, d) => {
                        let ok = o + d.len() as u64 <= len;
                        prop_assert_eq!(slice.write(o, &d).is_ok(), ok);
                        if ok {
                            let s = (base + o) as usize;
                            model[s..s + d.len()].copy_from_slice(&d);
                        }
                    }
                    Op::Memset(o, v, n) => {
                        let ok = o + n <= len;
                        prop_assert_eq!(slice.memset(o, v, n).is_ok(), ok);
                        if ok {
                            let s = (base + o) as usize;
                            model[s..s + n as usize].fill(v);
                        }
                    }
                    Op::Read(o, n) => {
                        let mut b = vec![0u8; n as usize];
                        let ok = o + n <= len;
                        prop_assert_eq!(slice.read(o, &mut b).is_ok(), ok);
                        if ok {
                            let s = (base + o) as usize;
                            prop_assert_eq!(&b[..], &model[s..s + n as usize]);
                        }
                    }
                }
            }
            let mut all = vec![0u8; 80];
            parent.read(0, &mut all).unwrap();
            prop_assert_eq!(all, model);
        }
    }
}
