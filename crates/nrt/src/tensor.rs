//! Tensors and tensor sets: the buffers an execution reads and writes.
//!
//! A tensor lives either on a device (an allocation booked under usage
//! TENSOR on one physical core) or in host memory. Executions bind device
//! tensors in place; host tensors are staged through the model's IO
//! buffers (synchronous path only), as libnrt does. A device tensor's
//! bytes move only through its core's DMA queues ([`crate::transfer`]).

use crate::cache_line::CacheLine;
use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::status::{NrtError, NrtResult};
use crate::trace::EventType;
use nrt_hal::{CoreId, DeviceAddr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Where a tensor's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Device memory near a physical core.
    Device {
        /// The core it is booked to.
        core: CoreId,
        /// Device address of byte 0.
        addr: DeviceAddr,
    },
    /// Host memory.
    Host,
}

enum Storage {
    Device { memory: Arc<DeviceMemory>, core: CoreId, addr: DeviceAddr },
    Host(Mutex<Vec<u8>>),
}

/// Whether a host access of a tensor waits for the implicit-async
/// executions using it (libnrt's tensor tracking).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tracking {
    /// Wait until no execution uses the tensor (`nrt_tensor_read` /
    /// `write`, and the batch calls by default).
    Wait,
    /// Do not wait: the batch calls' `unsafe` ("skip tensor
    /// tracking/blocking"); the access sees or changes the bytes as they
    /// are, while an execution may be using them.
    Skip,
}

/// One tensor (`nrt_tensor_t`).
pub struct Tensor {
    name: String,
    size: u64,
    storage: Storage,
    /// Implicit-async executions using the tensor that have not completed.
    /// (Counters sit on their own cache lines: the worker moves them on
    /// every execution while submitters read the fields above.)
    in_flight: CacheLine<AtomicU32>,
    /// Executions that completed this tensor as an output (streaming
    /// completion records, or the end of an execution that does not stream).
    output_completions: CacheLine<AtomicU64>,
}

/// Moves whenever any tensor's output-completion count does (libnrt has
/// one mutex + condvar for all tensors).
pub static OUTPUT_COMPLETIONS: crate::xu::signal::EventCount = crate::xu::signal::EventCount::new();

/// Moves whenever an in-flight mark is released (host accesses waiting for
/// an implicit-async execution block on it).
static RELEASED: crate::xu::signal::EventCount = crate::xu::signal::EventCount::new();

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor").field("name", &self.name).field("size", &self.size).field("placement", &self.placement()).finish()
    }
}

fn range(name: &str, size: u64, offset: u64, len: usize) -> NrtResult<()> {
    match offset.checked_add(len as u64) {
        Some(end) if end <= size => Ok(()),
        _ => Err(NrtError::invalid(format!(
            "tensor {name:?}: {len} bytes at offset {offset} exceed its size of {size} bytes"
        ))),
    }
}

impl Tensor {
    /// A tensor over `storage`, not in flight, no output completions yet.
    fn with_storage(name: &str, size: u64, storage: Storage) -> Tensor {
        Tensor { name: name.to_string(), size, storage, in_flight: CacheLine(AtomicU32::new(0)), output_completions: CacheLine(AtomicU64::new(0)) }
    }

    /// A device tensor of `size` bytes on `core` (usage TENSOR, global tier).
    pub fn allocate_device(memory: &Arc<DeviceMemory>, core: CoreId, size: u64, name: &str) -> NrtResult<Tensor> {
        let t0 = crate::trace::wants(EventType::NrtTensorAllocate).then(crate::trace::now_ns);
        let r = memory.alloc(core, MemOwner::Runtime, MemUsage::Tensor, size, 64);
        if let Some(t0) = t0 {
            trace_span(EventType::NrtTensorAllocate, memory, core, t0, size, r.as_ref().err());
        }
        let addr = r?;
        Ok(Tensor::with_storage(name, size, Storage::Device { memory: memory.clone(), core, addr }))
    }

    /// A zero-filled host tensor of `size` bytes (NRT_RESOURCE, nothing
    /// allocated, when the host cannot hold them).
    pub fn allocate_host(size: u64, name: &str) -> NrtResult<Tensor> {
        let bytes = crate::host_memory::zeroed(size, format_args!("host tensor {name:?}"))?;
        Ok(Tensor::from_host_bytes(bytes, name))
    }

    /// A host tensor holding `bytes` (counted as the process's host
    /// memory for the tools, [`crate::memory::host`]).
    pub fn from_host_bytes(bytes: Vec<u8>, name: &str) -> Tensor {
        crate::memory::host::tensor_bytes_changed(bytes.len() as i64);
        Tensor::with_storage(name, bytes.len() as u64, Storage::Host(Mutex::new(bytes)))
    }

    /// The index of the device holding a device tensor (`None` for a
    /// host tensor): what a collective checks before it names the
    /// tensor's address in another core's descriptors.
    pub fn device_index(&self) -> Option<u32> {
        match &self.storage {
            Storage::Device { memory, .. } => Some(memory.device_index()),
            Storage::Host(_) => None,
        }
    }

    /// The device memory a device tensor lives in (`None` for a host
    /// tensor).
    pub fn device_memory(&self) -> Option<&Arc<DeviceMemory>> {
        match &self.storage {
            Storage::Device { memory, .. } => Some(memory),
            Storage::Host(_) => None,
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Where it lives.
    pub fn placement(&self) -> Placement {
        match &self.storage {
            Storage::Device { core, addr, .. } => Placement::Device { core: *core, addr: *addr },
            Storage::Host(_) => Placement::Host,
        }
    }

    fn host(m: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts one completed write of this tensor as an execution output
    /// and wakes the threads waiting for output completions.
    pub fn complete_output(&self) {
        self.output_completions.fetch_add(1, Ordering::AcqRel);
        OUTPUT_COMPLETIONS.notify();
    }

    /// Output completions since creation or the last reset.
    pub fn output_completions(&self) -> u64 {
        self.output_completions.load(Ordering::Acquire)
    }

    /// Sets the output-completion count to 0.
    pub fn reset_output_completions(&self) {
        self.output_completions.store(0, Ordering::Release);
    }

    /// Marks the tensor as used by an in-flight implicit-async execution.
    pub fn mark_in_flight(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
    }

    /// Releases one [`Tensor::mark_in_flight`] and wakes waiting accesses.
    pub fn unmark_in_flight(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        RELEASED.notify();
    }

    /// Whether an implicit-async execution using the tensor is in flight.
    pub fn is_in_flight(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) > 0
    }

    /// Blocks until no implicit-async execution uses the tensor (what
    /// `nrt_tensor_read` / `write` do in implicit async mode). NRT_TIMEOUT
    /// when no implicit-async execution anywhere completes for the
    /// execution units' request limit ([`crate::xu::request_limit`]): the
    /// ones ahead of the tensor's run one after another, each within it
    /// (a worker that dies releases the marks of everything it had).
    pub fn wait_idle(&self) -> NrtResult<()> {
        let mut since: Option<std::time::Instant> = None;
        loop {
            let seen = RELEASED.count();
            if !self.is_in_flight() {
                return Ok(());
            }
            let limit = crate::xu::request_limit();
            let waited = since.get_or_insert_with(std::time::Instant::now).elapsed();
            if waited >= limit {
                return Err(NrtError::new(
                    crate::status::NrtStatus::Timeout,
                    format!(
                        "tensor {:?}: the implicit-async execution using it did not complete, and no other did, within {:.1} sec (NEURON_RT_EXEC_TIMEOUT + NEURON_RT_CC_NET_TIMEOUT)",
                        self.name,
                        limit.as_secs_f64()
                    ),
                ));
            }
            if RELEASED.wait(seen, limit - waited) != seen {
                since = None;
            }
        }
    }

    /// Copies `buf.len()` bytes at `offset` out of the tensor, once no
    /// implicit-async execution uses it.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> NrtResult<()> {
        self.read_with(offset, buf, Tracking::Wait)
    }

    /// [`Tensor::read`], waiting for the executions using the tensor or
    /// not as `tracking` says.
    pub fn read_with(&self, offset: u64, buf: &mut [u8], tracking: Tracking) -> NrtResult<()> {
        self.read_via(offset, buf, tracking, None)
    }

    /// [`Tensor::read_with`] through the DMA queues of physical core `via`
    /// of the tensor's device (`None`: its own core's). Any core's engine
    /// reaches all of its device's memory; a core the device does not have
    /// is NRT_INVALID.
    pub fn read_via(&self, offset: u64, buf: &mut [u8], tracking: Tracking, via: Option<CoreId>) -> NrtResult<()> {
        range(&self.name, self.size, offset, buf.len())?;
        if tracking == Tracking::Wait {
            self.wait_idle()?;
        }
        match &self.storage {
            Storage::Device { memory, addr, core } => {
                let engines = via.unwrap_or(*core);
                let t0 = crate::trace::wants(EventType::NrtTensorRead).then(crate::trace::now_ns);
                let r = memory.dma(engines).read(addr.offset(offset), buf).map_err(|e| e.context(format_args!("reading tensor {:?}", self.name)));
                if let Some(t0) = t0 {
                    trace_span(EventType::NrtTensorRead, memory, engines, t0, buf.len() as u64, r.as_ref().err());
                }
                r
            }
            Storage::Host(m) => {
                let o = offset as usize;
                buf.copy_from_slice(&Self::host(m)[o..o + buf.len()]);
                Ok(())
            }
        }
    }

    /// Copies `data` into the tensor at `offset`, once no implicit-async
    /// execution uses it.
    pub fn write(&self, offset: u64, data: &[u8]) -> NrtResult<()> {
        self.write_with(offset, data, Tracking::Wait)
    }

    /// [`Tensor::write`], waiting for the executions using the tensor or
    /// not as `tracking` says.
    pub fn write_with(&self, offset: u64, data: &[u8], tracking: Tracking) -> NrtResult<()> {
        self.write_via(offset, data, tracking, None)
    }

    /// [`Tensor::write_with`] through the DMA queues of physical core
    /// `via` of the tensor's device (`None`: its own core's), as
    /// [`Tensor::read_via`].
    pub fn write_via(&self, offset: u64, data: &[u8], tracking: Tracking, via: Option<CoreId>) -> NrtResult<()> {
        range(&self.name, self.size, offset, data.len())?;
        if tracking == Tracking::Wait {
            self.wait_idle()?;
        }
        match &self.storage {
            Storage::Device { memory, addr, core } => {
                let engines = via.unwrap_or(*core);
                let t0 = crate::trace::wants(EventType::NrtTensorWrite).then(crate::trace::now_ns);
                let r = memory.dma(engines).write(addr.offset(offset), data).map_err(|e| e.context(format_args!("writing tensor {:?}", self.name)));
                if let Some(t0) = t0 {
                    trace_span(EventType::NrtTensorWrite, memory, engines, t0, data.len() as u64, r.as_ref().err());
                }
                r
            }
            Storage::Host(m) => {
                let o = offset as usize;
                Self::host(m)[o..o + data.len()].copy_from_slice(data);
                Ok(())
            }
        }
    }

    /// Fills `len` bytes at `offset` with `value`.
    pub fn memset(&self, offset: u64, value: u8, len: u64) -> NrtResult<()> {
        range(&self.name, self.size, offset, usize::try_from(len).unwrap_or(usize::MAX))?;
        self.wait_idle()?;
        match &self.storage {
            Storage::Device { memory, addr, core } => {
                memory.dma(*core).fill(addr.offset(offset), value, len).map_err(|e| e.context(format_args!("memset of tensor {:?}", self.name)))
            }
            Storage::Host(m) => {
                let o = offset as usize;
                Self::host(m)[o..o + len as usize].fill(value);
                Ok(())
            }
        }
    }

    /// Copies `len` bytes from `src` at `src_offset` into this tensor at
    /// `dst_offset` (between tensors of one device by its device-to-device
    /// queue, without a host bounce). Device tensors of different devices
    /// are NRT_INVALID: one device's copy engine cannot address another's
    /// memory.
    pub fn copy_from(&self, dst_offset: u64, src: &Tensor, src_offset: u64, len: u64) -> NrtResult<()> {
        let n = usize::try_from(len).map_err(|_| NrtError::invalid(format!("copy of {len} bytes is too large")))?;
        range(&src.name, src.size, src_offset, n)?;
        range(&self.name, self.size, dst_offset, n)?;
        if let (Some(sd), Some(dd)) = (src.device_index(), self.device_index())
            && sd != dd
        {
            return Err(NrtError::invalid(format!(
                "tensor copy from {:?} (ND {sd}) to {:?} (ND {dd}): device tensors must be on the same device",
                src.name, self.name
            )));
        }
        src.wait_idle()?;
        self.wait_idle()?;
        match (&src.storage, &self.storage) {
            (Storage::Device { memory, addr: s, .. }, Storage::Device { memory: dm, addr: d, core }) if memory.device_index() == dm.device_index() => dm
                .dma(*core)
                .copy(s.offset(src_offset), d.offset(dst_offset), len)
                .map_err(|e| e.context(format_args!("copying tensor {:?} to {:?}", src.name, self.name))),
            _ => {
                let mut tmp = crate::host_memory::zeroed(n as u64, format_args!("copy of tensor {:?} to {:?}", src.name, self.name))?;
                src.read(src_offset, &mut tmp)?;
                self.write(dst_offset, &tmp)
            }
        }
    }

    /// NRT_INVALID unless `len` bytes at `offset` lie inside the tensor:
    /// what [`Tensor::read`] checks, for callers that size a host buffer
    /// for the read first.
    pub fn check_range(&self, offset: u64, len: u64) -> NrtResult<()> {
        range(&self.name, self.size, offset, usize::try_from(len).unwrap_or(usize::MAX))
    }

    /// Host bytes, for staging (None for device tensors).
    pub(crate) fn with_host<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
        match &self.storage {
            Storage::Host(m) => Some(f(&mut Self::host(m))),
            Storage::Device { .. } => None,
        }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        if let Storage::Host(_) = &self.storage {
            crate::memory::host::tensor_bytes_changed(-(self.size as i64));
        }
        if let Storage::Device { memory, addr, core } = &self.storage {
            let t0 = crate::trace::wants(EventType::NrtTensorFree).then(crate::trace::now_ns);
            let r = memory.free(*addr);
            if let Some(t0) = t0 {
                trace_span(EventType::NrtTensorFree, memory, *core, t0, self.size, r.as_ref().err());
            }
            if let Err(e) = r {
                crate::log_error!(crate::log::Module::Nrt, "freeing tensor {:?}: {e}", self.name);
            }
        }
    }
}

/// Records a device tensor operation of `size` bytes on `core` that began
/// at `t0` (system trace, only while the type is captured).
#[inline(never)]
fn trace_span(ty: EventType, memory: &DeviceMemory, core: CoreId, t0: u64, size: u64, err: Option<&NrtError>) {
    let device = memory.device().info().device_index;
    let data = crate::trace::EventData {
        device_core_idx: Some(core.0),
        device_idx: Some(device),
        size: Some(size),
        seq_id: crate::trace::current_seq(),
        status: Some(err.map_or(0, |e| e.status as i32)),
        ..Default::default()
    };
    crate::trace::record_span(ty, crate::trace::nc_of(device, core.0), t0, data);
}

/// Named tensors (`nrt_tensor_set_t`): what an execution's inputs or
/// outputs are matched against by name.
///
/// Cloning shares the entries (copy on write): an asynchronous schedule
/// keeps a copy of the caller's sets for the queued request, and that copy
/// must not cost allocations on the submitting thread nor frees on the
/// unit's worker, which runs the executions back to back.
#[derive(Debug, Default, Clone)]
pub struct TensorSet {
    entries: Arc<Vec<(Arc<str>, Arc<Tensor>)>>,
}

impl TensorSet {
    /// An empty set.
    pub fn new() -> TensorSet {
        TensorSet::default()
    }

    /// Adds or replaces the tensor under `name`.
    pub fn add(&mut self, name: &str, tensor: Arc<Tensor>) {
        let entries = Arc::make_mut(&mut self.entries);
        match entries.iter_mut().find(|(n, _)| &**n == name) {
            Some(e) => e.1 = tensor,
            None => entries.push((Arc::from(name), tensor)),
        }
    }

    /// The tensor under `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Tensor>> {
        self.entries.iter().find(|(n, _)| &**n == name).map(|(_, t)| t)
    }

    /// The tensor at position `i` in insertion order: what a caller that
    /// matched names once (and holds the set's token) uses afterwards.
    pub fn at(&self, i: usize) -> Option<&Arc<Tensor>> {
        self.entries.get(i).map(|(_, t)| t)
    }

    /// Position of the tensor under `name` in insertion order.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|(n, _)| &**n == name)
    }

    /// Removes the tensor under `name`.
    pub fn remove(&mut self, name: &str) -> Option<Arc<Tensor>> {
        let i = self.entries.iter().position(|(n, _)| &**n == name)?;
        Some(Arc::make_mut(&mut self.entries).remove(i).1)
    }

    /// Entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Names and tensors in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Arc<Tensor>)> {
        self.entries.iter().map(|(n, t)| (&**n, t))
    }

    /// A token that recognises these exact entries later
    /// ([`TensorSet::has_token`]) without keeping their tensors alive.
    pub fn token(&self) -> SetToken {
        SetToken(Arc::downgrade(&self.entries))
    }

    /// Whether this set holds exactly the entries `token` was taken from:
    /// the same names bound to the same tensors. Any change to a set
    /// (add, replace, remove) moves its entries to a new allocation
    /// (copy on write; `Arc::make_mut` also moves them when only tokens
    /// point at them), and the token keeps the old allocation from being
    /// reused, so an equal address means equal contents.
    pub fn has_token(&self, token: &SetToken) -> bool {
        std::ptr::eq(Arc::as_ptr(&self.entries), token.0.as_ptr())
    }
}

/// Recognises one state of a [`TensorSet`] (see [`TensorSet::token`]): an
/// execution that sees the same sets as the last one skips matching them
/// by name and re-binding their addresses.
#[derive(Debug, Clone)]
pub struct SetToken(std::sync::Weak<Vec<(Arc<str>, Arc<Tensor>)>>);

#[cfg(test)]
mod tests {
    use super::*;

    /// An access that waits for the executions using the tensor blocks
    /// while one is marked in flight; one that skips tracking does not,
    /// and sees the bytes as they are.
    #[test]
    fn skipping_tracking_does_not_wait_for_executions_in_flight() {
        let t = Arc::new(Tensor::allocate_host(8, "t").unwrap());
        t.write(0, &[1; 8]).unwrap();
        t.mark_in_flight();
        let run = |tracking: Tracking, write: bool| {
            let (tx, rx) = std::sync::mpsc::channel();
            let t = Arc::clone(&t);
            std::thread::spawn(move || {
                let mut b = [0u8; 8];
                let r = if write { t.write_with(0, &[2; 8], tracking) } else { t.read_with(0, &mut b, tracking) };
                let _ = tx.send((r, b));
            });
            rx
        };
        let long = std::time::Duration::from_secs(30);
        let (r, b) = run(Tracking::Skip, false).recv_timeout(long).expect("an untracked read returns while the tensor is in flight");
        assert!(r.is_ok() && b == [1; 8]);
        run(Tracking::Skip, true).recv_timeout(long).expect("an untracked write returns while the tensor is in flight").0.unwrap();
        let waiting = run(Tracking::Wait, false);
        assert!(waiting.recv_timeout(std::time::Duration::from_millis(200)).is_err(), "a tracked read waits for the execution");
        t.unmark_in_flight();
        let (r, b) = waiting.recv_timeout(long).expect("and returns once it is released");
        assert!(r.is_ok() && b == [2; 8], "seeing the untracked write");
    }

    #[test]
    fn a_set_token_recognises_only_the_unchanged_set() {
        let t = |name: &str| Arc::new(Tensor::allocate_host(4, name).unwrap());
        let mut a = TensorSet::new();
        a.add("x", t("x"));
        let tok = a.token();
        assert!(a.has_token(&tok));
        assert!(a.clone().has_token(&tok), "a clone shares the entries");
        let mut b = a.clone();
        b.add("y", t("y"));
        assert!(!b.has_token(&tok) && a.has_token(&tok), "a change copies on write");
        drop(b);
        // Sole owner, only the token besides: the change still moves the entries.
        a.add("x", t("x"));
        assert!(!a.has_token(&tok));
        let tok = a.token();
        a.remove("x");
        assert!(!a.has_token(&tok));
        assert!(!TensorSet::new().has_token(&tok));
    }

    #[test]
    fn a_cloned_set_is_unaffected_by_later_changes_to_the_original() {
        let (a, b) = (Arc::new(Tensor::allocate_host(4, "a").unwrap()), Arc::new(Tensor::allocate_host(4, "b").unwrap()));
        let mut set = TensorSet::new();
        set.add("x", a.clone());
        let queued = set.clone();
        set.add("x", b.clone());
        set.add("y", a.clone());
        assert!(Arc::ptr_eq(queued.get("x").unwrap(), &a));
        assert_eq!((queued.len(), set.len()), (1, 2));
        assert!(Arc::ptr_eq(set.get("x").unwrap(), &b));
        assert!(set.remove("x").is_some() && queued.get("x").is_some());
        assert_eq!(set.iter().map(|(n, _)| n).collect::<Vec<_>>(), vec!["y"]);
    }

    #[test]
    fn host_tensor_read_write_memset_copy() {
        let a = Tensor::allocate_host(16, "a").unwrap();
        a.write(4, &[1, 2, 3]).unwrap();
        a.memset(0, 9, 2).unwrap();
        let mut b = [0u8; 8];
        a.read(0, &mut b).unwrap();
        assert_eq!(b, [9, 9, 0, 0, 1, 2, 3, 0]);
        let c = Tensor::from_host_bytes(vec![0; 4], "c");
        c.copy_from(0, &a, 4, 4).unwrap();
        let mut d = [0u8; 4];
        c.read(0, &mut d).unwrap();
        assert_eq!(d, [1, 2, 3, 0]);
        assert_eq!(a.write(15, &[0, 0]).unwrap_err().status, crate::NrtStatus::Invalid);
    }

    /// `via` moves a tensor's bytes with another core's engines (libnrt
    /// 2.31's `lnc_idx`): the records land on that core's transfer trace
    /// ring, none on the tensor's own; a core the device lacks is refused.
    #[test]
    fn another_cores_dma_queues_move_a_tensor() {
        let cfg = nrt_sim::SimConfig::builder().deterministic(true).hbm_bytes_per_channel(64 << 20).build();
        let mem = Arc::new(DeviceMemory::new(Arc::new(nrt_sim::SimDevice::new(&cfg, 0))));
        let t = Tensor::allocate_device(&mem, CoreId(0), 4096, "t").unwrap();
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        t.write_via(0, &data, Tracking::Wait, Some(CoreId(3))).unwrap();
        let mut back = vec![0u8; 4096];
        t.read_via(0, &mut back, Tracking::Wait, Some(CoreId(2))).unwrap();
        assert_eq!(back, data);
        let records = |c: u32| {
            let mut v = Vec::new();
            mem.transfers().read_trace(CoreId(c), &mut v);
            v.len()
        };
        assert!(records(3) > 0 && records(2) > 0, "the chosen cores' engines moved the bytes");
        assert_eq!(records(0), 0, "the tensor's own core moved nothing");
        let cores = mem.device().info().physical_cores;
        assert_eq!(t.write_via(0, &data, Tracking::Wait, Some(CoreId(cores))).unwrap_err().status, crate::NrtStatus::Invalid);
    }

    #[test]
    fn a_copy_between_devices_is_refused_and_writes_nothing() {
        let cfg = nrt_sim::SimConfig::builder().deterministic(true).devices(2).hbm_bytes_per_channel(64 << 20).build();
        let mems: Vec<Arc<DeviceMemory>> = nrt_sim::SimDevice::all(&cfg).into_iter().map(|d| Arc::new(DeviceMemory::new(Arc::new(d)))).collect();
        let on = |d: usize, name: &str| Tensor::allocate_device(&mems[d], CoreId(0), 64, name).unwrap();
        let (a0, b0, c1) = (on(0, "a0"), on(0, "b0"), on(1, "c1"));
        a0.write(0, &[7; 64]).unwrap();
        b0.write(0, &[2; 64]).unwrap();
        c1.write(0, &[1; 64]).unwrap();
        let e = c1.copy_from(0, &a0, 0, 64).unwrap_err();
        assert_eq!(e.status, crate::NrtStatus::Invalid);
        assert!(e.message.contains("(ND 0) to \"c1\" (ND 1)") && e.message.contains("same device"), "{}", e.message);
        let e = a0.copy_from(0, &c1, 0, 64).unwrap_err();
        assert_eq!(e.status, crate::NrtStatus::Invalid);
        let read = |t: &Tensor| {
            let mut b = [0u8; 64];
            t.read(0, &mut b).unwrap();
            b
        };
        assert_eq!((read(&a0), read(&b0), read(&c1)), ([7; 64], [2; 64], [1; 64]), "a refused copy writes nowhere");
        b0.copy_from(0, &a0, 0, 64).unwrap();
        assert_eq!(read(&b0), [7; 64]);
        // Host tensors still copy to and from either device.
        let h = Tensor::from_host_bytes(vec![9; 64], "h");
        c1.copy_from(0, &h, 0, 64).unwrap();
        assert_eq!(read(&c1), [9; 64]);
    }

    #[test]
    fn sets_match_by_name() {
        let mut s = TensorSet::new();
        s.add("x", Arc::new(Tensor::allocate_host(4, "x").unwrap()));
        s.add("x", Arc::new(Tensor::allocate_host(8, "x2").unwrap()));
        assert_eq!(s.len(), 1);
        assert_eq!(s.get("x").unwrap().size(), 8);
        assert!(s.remove("x").is_some());
        assert!(s.is_empty());
    }
}
