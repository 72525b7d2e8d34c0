//! The `Device` trait: what the runtime may ask of a NeuronCore device.
//!
//! It mirrors what libnrt's ndl layer gets from `/dev/neuronN` (one method
//! per ioctl or register window) and nothing more. Backends implement it
//! once; the runtime holds a `Box<dyn Device>` or `Arc<dyn Device>`.
//!
//! Two ways bytes reach device memory, kept apart:
//!
//! - **DMA queues** ([`Device::dma_queue_init`], [`Device::dma_tail_increment`]):
//!   descriptors in rings, a tail bumped, completion reported by the
//!   device (a semaphore, an event, a marker it copies, NQ records). Every
//!   byte of the data path goes this way: executions, collectives, and
//!   the runtime's tensor reads, writes, fills and copies (`nrt::transfer`).
//! - **Direct accesses** ([`Device::read`], [`Device::write`],
//!   [`Device::memset`], [`Device::copy`]): what libnrt does without the
//!   queues. On device memory these are the driver's copy ioctls
//!   (MEM_BUF_COPY and kin): staging at load (instructions, rings, weights,
//!   tables), request buffers, register windows (semaphores, DMA and Q7
//!   registers). On host-DMA memory ([`MemoryLocation::Host`]) they are the
//!   process's own loads and stores through its mapping of that memory (an
//!   mmap of a host memory chunk): how the host fills a bounce buffer or
//!   reads a completion slot the device wrote.

use crate::addr::{CoreId, DeviceAddr, DmaQueueId, EngineId};
use crate::arch::{ArchDesc, HbmChannelDesc};
use crate::error::HalResult;
use crate::reservation::CoreReservation;
use std::fmt;
use std::sync::Arc;

/// Which memory pool an allocation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryLocation {
    /// Device HBM of one channel (stack), `0..info().hbm.len()`.
    Hbm {
        /// HBM channel index.
        channel: u32,
    },
    /// Host memory the device reaches by DMA (addresses carry the
    /// architecture's PCI host tag).
    Host,
}

impl fmt::Display for MemoryLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryLocation::Hbm { channel } => write!(f, "HBM channel {channel}"),
            MemoryLocation::Host => f.write_str("host-DMA memory"),
        }
    }
}

/// What discovery tells the runtime about one device (the DEVICE_BASIC_INFO
/// / DRIVER_INFO ioctls plus the architecture table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Backend name, e.g. `sim` or `neuron`.
    pub backend: &'static str,
    /// Static architecture numbers.
    pub arch: &'static ArchDesc,
    /// Device index on the instance (`/dev/neuronN`).
    pub device_index: u32,
    /// Physical cores present (may be fewer than the arch maximum).
    pub physical_cores: u32,
    /// HBM channels with the sizes this device actually offers.
    pub hbm: Vec<HbmChannelDesc>,
    /// The host-DMA window (base carries the PCI host tag).
    pub host_memory: HbmChannelDesc,
    /// The instance the device belongs to: PCI addresses, routing ids,
    /// links, EFA NICs ([`crate::topology`]).
    pub topology: crate::topology::Topology,
}

impl DeviceInfo {
    /// The engines of every core.
    pub fn engines(&self) -> &'static [EngineId] {
        self.arch.engines
    }
    /// Semaphores per core.
    pub fn semaphores(&self) -> u32 {
        self.arch.semaphores
    }
    /// Events per core.
    pub fn events(&self) -> u32 {
        self.arch.events
    }
    /// DMA engines per core.
    pub fn dma_engines(&self) -> u32 {
        self.arch.dma_engines_per_core
    }
    /// Queues per DMA engine.
    pub fn dma_queues_per_engine(&self) -> u32 {
        self.arch.queues_per_dma_engine
    }
}

/// Notification-queue classes (ndl `NQ_TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum NqType {
    /// Implicit per-instruction trace records.
    Trace = 0,
    /// Explicit NOTIFY records and the per-execution START / END records.
    Notify = 1,
    /// Event set / clear records.
    Event = 2,
    /// Error records (NaN, parity, DMA abort, ...).
    Error = 3,
    /// DMA-generated trace records.
    TraceDma = 4,
    /// Throttling notifications.
    Throttle = 5,
}

impl NqType {
    /// All types in numeric order.
    pub const ALL: [NqType; 6] = [
        NqType::Trace,
        NqType::Notify,
        NqType::Event,
        NqType::Error,
        NqType::TraceDma,
        NqType::Throttle,
    ];
}

/// Where and what a notification queue is: the arguments of
/// `ndl_notification_init`, with the ring memory allocated by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NqSpec {
    /// Core whose engines write this queue.
    pub core: CoreId,
    /// Engine index (0..16; the five sequencer engines use 0..5).
    pub engine_index: u8,
    /// Notification class.
    pub nq_type: NqType,
    /// Ring memory (device or host-DMA memory), aligned to its size.
    pub ring: DeviceAddr,
    /// Ring size in bytes: a power of two, a multiple of 16.
    pub size_bytes: u32,
}

/// Device memory mapped into this process: host addresses
/// `va .. va + len` are the device bytes `base .. base + len` (an HBM
/// channel mapped by [`Device::map_hbm`], as `ndl_get_hbm_va` maps it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostWindow {
    /// Host address of the first byte.
    pub va: usize,
    /// Bytes mapped.
    pub len: u64,
    /// Device address of the first byte.
    pub base: DeviceAddr,
}

impl HostWindow {
    /// The device address of host address `va` when `va .. va + len` lies
    /// inside the window.
    pub fn device_addr(&self, va: usize, len: u64) -> Option<DeviceAddr> {
        let off = (va as u64).checked_sub(self.va as u64)?;
        (off < self.len && len <= self.len - off).then(|| self.base.offset(off))
    }

    /// The host address of device address `addr`, when it lies inside the
    /// window.
    pub fn host_addr(&self, addr: DeviceAddr) -> Option<usize> {
        let off = addr.get().checked_sub(self.base.get())?;
        (off < self.len).then(|| self.va + off as usize)
    }
}

/// Size of one notification record.
pub const NQ_RECORD_BYTES: usize = 16;

/// A mapped notification ring: the runtime reads records straight from it,
/// without a device call per record (the equivalent of the mmap'd ring plus
/// the tail register).
///
/// Indices are free-running record counters; the slot of record `i` is
/// `i % capacity()`. The device publishes a record's bytes before it
/// publishes the advanced tail (Release), and `produced` loads it with
/// Acquire, so every record below the returned count is complete.
pub trait NqRing: Send + Sync {
    /// The queue this ring belongs to.
    fn spec(&self) -> NqSpec;
    /// Records the ring holds.
    fn capacity(&self) -> u32;
    /// Records written by the device so far (hardware tail, Acquire).
    fn produced(&self) -> u64;
    /// Records acknowledged by the consumer (the head register).
    fn consumed(&self) -> u64;
    /// Acknowledges records up to `count` (writes the head register), which
    /// frees their slots for the producer.
    fn set_consumed(&self, count: u64);
    /// Copies records `from..` into `out` (at most `out.len()`, at most up
    /// to `produced()`), returning how many were copied. Records that were
    /// already overwritten are not returned: the copy starts no earlier than
    /// `produced() - capacity()`.
    fn read(&self, from: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize;
    /// [`NqRing::read`] followed, when it copied any record, by
    /// [`NqRing::set_consumed`] of the count after the last one copied:
    /// the consumer's usual harvest step as one call (one dynamic call
    /// per ring with records instead of two). Returns how many were
    /// copied, as `read` does.
    fn read_and_consume(&self, from: u64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let n = self.read(from, out);
        if n > 0 {
            self.set_consumed(from + n as u64);
        }
        n
    }
    /// The software-queue-overflow flag (the INTC "SW NQ overflowed" bit):
    /// set when the device had to drop or overwrite an unacknowledged record.
    fn overflowed(&self) -> bool;
    /// A counter of the ring's interrupt line: it moves every time the
    /// device writes a record to this ring or to any ring sharing the line
    /// (on the simulator: every ring of the same core). A waiter reads it,
    /// polls the rings, and passes the value to [`NqRing::wait_signal`].
    /// The default (no interrupt line) is the ring's own record count.
    fn signal_count(&self) -> u64 {
        self.produced()
    }
    /// Blocks until [`NqRing::signal_count`] differs from `seen` or
    /// `timeout` passes, and returns the current count: the model of the
    /// driver's notification interrupt plus a `poll()` on its fd, so a
    /// waiting host thread wakes when the device writes instead of
    /// sleeping a guessed interval. Must not allocate. The default (a
    /// device without an interrupt line) returns at once, leaving the
    /// caller to poll.
    fn wait_signal(&self, seen: u64, timeout: std::time::Duration) -> u64 {
        let _ = (seen, timeout);
        self.signal_count()
    }
}

/// Descriptor-ring programming of one DMA queue (`DMA_QUEUE_INIT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaRingConfig {
    /// M2S (source side) ring of 16-byte descriptors.
    pub tx_ring: DeviceAddr,
    /// S2M (destination side) ring of 16-byte descriptors.
    pub rx_ring: DeviceAddr,
    /// Descriptors per ring (both rings have the same length).
    pub descriptors: u32,
    /// Semaphore incremented by one each time a packet (a descriptor pair
    /// whose TX descriptor has the LAST bit) completes.
    pub completion_semaphore: Option<u32>,
    /// Event set each time a packet completes.
    pub completion_event: Option<u32>,
}

/// Software status of a DMA queue (`neuron_dma_queue_state.sw_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaQueueStatus {
    /// Not initialised (or reset).
    Disabled,
    /// Programmed and accepting descriptors.
    Enabled,
    /// Stopped by a transfer error; descriptors are no longer processed.
    Aborted,
}

/// The registers of one DMA queue as `DMA_QUEUE_GET_STATE` reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaQueueState {
    /// Software status.
    pub status: DmaQueueStatus,
    /// Descriptors the M2S side has processed (free-running).
    pub tx_head: u64,
    /// Descriptors submitted on the M2S side (free-running).
    pub tx_tail: u64,
    /// Descriptors the S2M side has processed (free-running).
    pub rx_head: u64,
    /// Descriptors submitted on the S2M side (free-running).
    pub rx_tail: u64,
}

/// Where a sequencer is, as its debug registers report it: what a hang
/// report names (which instruction an engine is stuck on, and on what).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineState {
    /// Whether it runs.
    pub run: EngineRun,
    /// The record it executes next (or waits at), counted from the start of
    /// its instruction stream.
    pub pc: u64,
    /// What it is blocked on, if anything.
    pub waiting_on: EngineWaitOn,
}

/// A sequencer's run state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineRun {
    /// No program, or ran off the end of its stream.
    Idle,
    /// Fetching and executing (possibly blocked, see [`EngineState::waiting_on`]).
    Running,
    /// Stopped by HALT or a fatal fault.
    Halted,
    /// Stopped without a word (a hang).
    Hung,
}

/// What a sequencer waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineWaitOn {
    /// Nothing: it is executing.
    Nothing,
    /// A compare on semaphore `n`.
    Semaphore(u32),
    /// Event `n`.
    Event(u32),
    /// The core's DMA queues going idle (DRAIN).
    DmaIdle,
    /// A custom operator on the POOL engine's cores.
    CustomOp,
}

impl std::fmt::Display for EngineWaitOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineWaitOn::Nothing => write!(f, "nothing"),
            EngineWaitOn::Semaphore(n) => write!(f, "semaphore {n}"),
            EngineWaitOn::Event(n) => write!(f, "event {n}"),
            EngineWaitOn::DmaIdle => write!(f, "its DMA queues to drain"),
            EngineWaitOn::CustomOp => write!(f, "a custom operator"),
        }
    }
}

/// A NeuronCore device as the runtime sees it.
///
/// Thin and trusting: no policy, no validation beyond what keeps the
/// device itself consistent. Every method is one driver call (or one
/// register access) on real hardware; the doc of each says which.
pub trait Device: Send + Sync {
    /// Discovery: architecture, cores, memory (DEVICE_BASIC_INFO,
    /// DRIVER_INFO, sysfs `core_count`).
    fn info(&self) -> &DeviceInfo;

    /// Allocates `size` bytes aligned to `align` (a power of two; 0 = page)
    /// from `location` (MEM_ALLOC_V2MT64). Contents are unspecified.
    fn alloc(&self, location: MemoryLocation, size: u64, align: u64) -> HalResult<DeviceAddr>;

    /// Frees an allocation by its start address (MEM_FREE).
    fn free(&self, addr: DeviceAddr) -> HalResult<()>;

    /// Copies the bytes at `addr` into `buf`: of device memory, MEM_BUF_COPY
    /// out or a read through the BAR4 mapping (every mapped window,
    /// including SBUF/PSUM and the semaphore READ alias); of host-DMA
    /// memory, a load through the process's mapping. A direct access (see
    /// the module docs): tensor data goes through the DMA queues instead.
    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()>;

    /// Copies `data` to `addr`: into device memory, MEM_BUF_COPY in (what
    /// load-time staging uses); into host-DMA memory, a store through the
    /// process's mapping. A write to a register window has the register's
    /// side effect (e.g. the semaphore INC alias increments). A direct
    /// access (see the module docs).
    fn write(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()>;

    /// Fills `len` bytes at `addr` with `value` (MEMSET; a fill through the
    /// mapping for host-DMA memory). A direct access (see the module docs).
    fn memset(&self, addr: DeviceAddr, value: u8, len: u64) -> HalResult<()>;

    /// Copy of `len` bytes without a DMA queue of the caller (MEM_COPY). A
    /// direct access (see the module docs).
    fn copy(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<()>;

    /// Reads a semaphore (SEMAPHORE_READ).
    fn semaphore_read(&self, core: CoreId, index: u32) -> HalResult<i32>;

    /// Assigns a semaphore (SEMAPHORE_WRITE).
    fn semaphore_set(&self, core: CoreId, index: u32, value: i32) -> HalResult<()>;

    /// Adds to a semaphore (SEMAPHORE_INCREMENT, ioctl 0x80084E29): the
    /// execute doorbell.
    fn semaphore_increment(&self, core: CoreId, index: u32, by: u32) -> HalResult<()>;

    /// Subtracts from a semaphore (SEMAPHORE_DECREMENT).
    fn semaphore_decrement(&self, core: CoreId, index: u32, by: u32) -> HalResult<()>;

    /// Reads an event register (EVENT_GET).
    fn event_read(&self, core: CoreId, index: u32) -> HalResult<bool>;

    /// Sets an event (EVENT_SET with 1).
    fn event_set(&self, core: CoreId, index: u32) -> HalResult<()>;

    /// Clears an event (EVENT_SET with 0).
    fn event_clear(&self, core: CoreId, index: u32) -> HalResult<()>;

    /// Programs a DMA queue's descriptor rings (DMA_QUEUE_INIT); resets its
    /// head and tail and enables it.
    fn dma_queue_init(&self, core: CoreId, queue: DmaQueueId, config: DmaRingConfig) -> HalResult<()>;

    /// Reads a DMA queue's registers (DMA_QUEUE_GET_STATE).
    fn dma_queue_state(&self, core: CoreId, queue: DmaQueueId) -> HalResult<DmaQueueState>;

    /// Submits `tx` new M2S and `rx` new S2M descriptors by bumping the
    /// tails (DMA_QUEUE_COPY_START, i.e. the drtp_inc registers). The same
    /// effect is reachable by a 32-bit device write to
    /// [`ArchDesc::dma_tail_inc_addr`], which is how trigger descriptors do it.
    fn dma_tail_increment(&self, core: CoreId, queue: DmaQueueId, tx: u32, rx: u32) -> HalResult<()>;

    /// Programs a notification queue on caller-allocated ring memory
    /// (NOTIFICATIONS_INIT + mmap) and returns the mapped ring. Re-initialising
    /// the same (core, engine, type) replaces the previous ring.
    fn nq_init(&self, spec: NqSpec) -> HalResult<Arc<dyn NqRing>>;

    /// Disables a notification queue (base/size written to 0); records for
    /// it are dropped afterwards.
    fn nq_destroy(&self, spec: NqSpec) -> HalResult<()>;

    /// Reserves physical cores exclusively for this process (NC_RANGE_MARK /
    /// CRWL); released when the returned guard drops or the process exits.
    fn reserve_cores(&self, cores: &[CoreId]) -> HalResult<CoreReservation>;

    /// Points an engine's sequencer at an instruction stream of `len` bytes
    /// (64-byte records) at `addr` and lets it run (the instruction-pointer
    /// registers loaded by the bring-up path). The stream is expected to
    /// block on a semaphore at its top; at PSEUDO EXIT the sequencer
    /// reports END and branches back to the top.
    fn start_engine(&self, core: CoreId, engine: EngineId, addr: DeviceAddr, len: u64) -> HalResult<()>;

    /// Reads a sequencer's debug registers (its program counter, run state
    /// and what it waits on), for a hang report. A device without them
    /// reports `None`.
    fn engine_state(&self, core: CoreId, engine: EngineId) -> HalResult<Option<EngineState>> {
        let _ = (core, engine);
        Ok(None)
    }

    /// Maps HBM channel `channel` into this process, once (later calls
    /// return the same window), and returns where: afterwards the
    /// channel's bytes are host memory at the window for the life of the
    /// device, what the device-open `map_hbm` parameter and
    /// `ndl_get_hbm_va` do. `Ok(None)`: there is no channel `channel` (the
    /// driver's -ENOENT, "no more regions"). A device whose memory cannot
    /// be mapped answers [`HalError::Unsupported`] (the default).
    ///
    /// The device does not snoop host stores to the window: what it
    /// caches of the bytes (a sequencer's decoded instructions) it keeps
    /// until the bytes change through the device (a write, memset, copy or
    /// DMA), as hardware does.
    fn map_hbm(&self, channel: u32) -> HalResult<Option<HostWindow>> {
        let _ = channel;
        Err(crate::HalError::Unsupported { reason: format!("the {} backend cannot map device memory into the process", self.info().backend) })
    }

    /// A file descriptor for `len` bytes of mapped device memory at host
    /// address `va` (inside a window [`Device::map_hbm`] returned), for a
    /// NIC to register it (DMABUF_FD). The caller owns and closes it. What
    /// the descriptor is, is the backend's to document: a dma-buf on
    /// hardware. The default answers [`HalError::Unsupported`].
    fn dmabuf_fd(&self, va: usize, len: u64) -> HalResult<std::os::fd::OwnedFd> {
        let _ = (va, len);
        Err(crate::HalError::Unsupported { reason: format!("the {} backend has no dma-buf export", self.info().backend) })
    }

    /// Resets a core (RESET_NCS for one core): stops its sequencers and DMA
    /// queues, clears semaphores and events. Memory is kept.
    fn reset_core(&self, core: CoreId) -> HalResult<()>;

    /// Lends the calling thread to the device for one bounded slice of its
    /// pending work; returns whether there was any. A thread waiting for an
    /// execution calls this instead of idling: a device that runs on host
    /// CPUs (the simulator) then makes progress on the waiter's own core,
    /// with no cross-thread hand-off, even when its workers are parked or
    /// their cores are busy. Hardware has nothing to lend a thread to: the
    /// default does nothing.
    fn assist(&self) -> bool {
        false
    }

    /// Announces that the calling thread is about to start work on the
    /// device and will then lend itself ([`Device::assist`]) until that
    /// work ends, when it calls [`Device::lending_end`]. A device that runs
    /// on host CPUs can then leave the first slices of the work to this
    /// thread instead of waking, or handing them to, a worker on another
    /// core: for a small execution the hand-off costs more than the work.
    /// Hardware does not care: the default does nothing.
    fn lending_begin(&self) {}

    /// Ends what [`Device::lending_begin`] announced: work the device still
    /// has queued is its workers' again. Called once per `lending_begin`.
    fn lending_end(&self) {}

    /// This process's datastore entry on the device ([`crate::status`]):
    /// where the runtime publishes its memory, execution and model
    /// counters for the tools, as libnrt does through the driver's `nds`
    /// store. `None` when the backend publishes nothing (the default) or
    /// publishing is off.
    fn status(&self) -> Option<&crate::status::SlotWriter> {
        None
    }

    /// The same entry to hold beyond a borrow: what a driver in front of
    /// the device hands out for ACQUIRE_NEURON_DS (the emulated driver maps
    /// it into its caller). The device keeps its own reference; the entry
    /// is cleared when the device lets go of it. `None` as for
    /// [`Device::status`].
    fn datastore(&self) -> Option<std::sync::Arc<crate::status::SlotWriter>> {
        None
    }
}
