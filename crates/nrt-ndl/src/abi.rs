//! The driver's ioctl ABI as Rust types: command numbers, argument
//! structs, enums and the versions we speak.
//!
//! Numbers and layouts are those of aws-neuronx-dkms's `neuron_ioctl.h`
//! and `share/neuron_driver_shared.h` (`spec/neuron-facts.md` §3.2–3.3).
//! Every struct here is `#[repr(C)]` with the C field names, and encodes
//! itself into the exact bytes the kernel reads (native endianness, C
//! offsets, padding zeroed): `tests/c_layout.rs` compiles a C program
//! against the driver's own header and checks every command number, size
//! and field offset listed in [`COMMANDS`] and [`STRUCTS`].
//!
//! Pointer fields (`__u64 *mem_handle`, `void *buffer`) are carried as
//! `u64` addresses: what the kernel sees is the address.

/// `NEURON_IOCTL_BASE`, the driver's ioctl magic ('N').
pub const MAGIC: u8 = b'N';

/// Linux `_IOC` direction bits.
const IOC_NONE: u32 = 0;
const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// Linux `_IOC(dir, type, nr, size)`.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    (dir << 30) | ((size as u32 & 0x3FFF) << 16) | ((ty as u32) << 8) | nr as u32
}

/// The command number's `_IOC_NR` (the driver dispatches some families on
/// it alone).
pub const fn nr(cmd: u32) -> u8 {
    (cmd & 0xFF) as u8
}

/// The command number's `_IOC_SIZE` (the size-overloaded siblings differ
/// only there).
pub const fn size(cmd: u32) -> usize {
    ((cmd >> 16) & 0x3FFF) as usize
}

/// Most of the driver's older commands were declared with a pointer type
/// as the size argument, so their encoded size is a pointer's, not the
/// struct's (`neuron-facts` §3.2).
const PTR: usize = std::mem::size_of::<u64>();

/// `_IOR('N', nr, size)`.
const fn ior(nr: u8, size: usize) -> u32 {
    ioc(IOC_READ, MAGIC, nr, size)
}
/// `_IOW('N', nr, size)`.
const fn iow(nr: u8, size: usize) -> u32 {
    ioc(IOC_WRITE, MAGIC, nr, size)
}
/// `_IOWR('N', nr, size)`.
const fn iowr(nr: u8, size: usize) -> u32 {
    ioc(IOC_READ | IOC_WRITE, MAGIC, nr, size)
}

/// One encodable field type: how it is put into and read out of the
/// argument bytes at its C offset.
pub trait Field: Copy {
    /// Writes the value at the start of `b` (native endianness).
    fn put(&self, b: &mut [u8]);
    /// Reads a value from the start of `b`.
    fn get(b: &[u8]) -> Self;
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn put(&self, b: &mut [u8]) {
                b[..std::mem::size_of::<$t>()].copy_from_slice(&self.to_ne_bytes());
            }
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                <$t>::from_ne_bytes(a)
            }
        }
    )*};
}
int_field!(u8, u16, u32, u64, i8, i32);

impl<T: Field, const N: usize> Field for [T; N] {
    fn put(&self, b: &mut [u8]) {
        let w = std::mem::size_of::<T>();
        for (i, v) in self.iter().enumerate() {
            v.put(&mut b[i * w..]);
        }
    }
    fn get(b: &[u8]) -> Self {
        let w = std::mem::size_of::<T>();
        std::array::from_fn(|i| T::get(&b[i * w..]))
    }
}

/// An ioctl argument struct: its C name, size and field offsets, and its
/// encoding into the bytes the kernel reads.
pub trait Arg: Copy + Sized {
    /// The struct's name in `neuron_ioctl.h`.
    const C_NAME: &'static str;
    /// `sizeof` the struct.
    const SIZE: usize = std::mem::size_of::<Self>();
    /// `(field, offsetof)` of every field.
    const FIELDS: &'static [(&'static str, usize)];
    /// Writes the struct's bytes into `b[..SIZE]` (padding zeroed).
    fn encode(&self, b: &mut [u8]);
    /// Reads the struct back from `b[..SIZE]`.
    fn decode(b: &[u8]) -> Self;
}

/// The largest argument struct this crate passes (the stack buffer every
/// call encodes into, so no call allocates).
pub const MAX_ARG: usize = 320;

macro_rules! abi_struct {
    ($(#[$m:meta])* $c:literal, $name:ident { $($(#[$fm:meta])* $f:ident : $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fm])* #[doc = concat!("The C struct's `", stringify!($f), "` (`neuron_ioctl.h` says what it carries).")] pub $f: $t,)*
        }
        const _: () = assert!(std::mem::size_of::<$name>() <= MAX_ARG);
        impl Arg for $name {
            const C_NAME: &'static str = $c;
            const FIELDS: &'static [(&'static str, usize)] = &[$((stringify!($f), std::mem::offset_of!($name, $f))),*];
            fn encode(&self, b: &mut [u8]) {
                b[..Self::SIZE].fill(0);
                $( Field::put(&self.$f, &mut b[std::mem::offset_of!($name, $f)..]); )*
            }
            fn decode(b: &[u8]) -> Self {
                $name { $($f: Field::get(&b[std::mem::offset_of!($name, $f)..]),)* }
            }
        }
    };
}

abi_struct!(
    /// SEMAPHORE_* and EVENT_* arguments (`struct neuron_ioctl_semaphore`;
    /// `neuron_ioctl_event` has the same layout).
    "neuron_ioctl_semaphore", Semaphore { nc_id: u32, semaphore_index: u32, value: u32 }
);
abi_struct!(
    /// EVENT_SET / EVENT_GET arguments.
    "neuron_ioctl_event", Event { nc_id: u32, event_index: u32, value: u32 }
);
abi_struct!(
    /// MEM_ALLOC_V2MT64: the allocation the runtime makes (the `pad` field
    /// tells the driver the caller handles allocations of 4 GiB and more).
    "neuron_ioctl_mem_alloc_v2_mem_type64", MemAllocV2Mt64 {
        size: u64, align: u64, host_memory: u32, dram_channel: u32, dram_region: u32, nc_id: u32,
        mem_type: u32,
        /// Where the driver writes the `u64` handle.
        mem_handle: u64,
        pad: u32,
    }
);
abi_struct!(
    /// MEM_FREE.
    "neuron_ioctl_mem_free", MemFree { mem_handle: u64 }
);
abi_struct!(
    /// MEM_GET_EXTENDED_INFO: a handle's physical address and size.
    "neuron_ioctl_mem_get_extended_info", MemGetExtendedInfo {
        mem_handle: u64, version: u32, host_memory: u32, mmap_offset: u64, pa: u64, pid: u64, size: u64,
    }
);
abi_struct!(
    /// MEM_COPY64: device-side copy between two handles.
    "neuron_ioctl_mem_copy64", MemCopy64 {
        src_mem_handle: u64, dst_mem_handle: u64, size: u64, src_offset: u64, dst_offset: u64,
    }
);
abi_struct!(
    /// MEM_BUF_COPY64: copy between a user buffer and a handle.
    "neuron_ioctl_mem_buf_copy64", MemBufCopy64 {
        mem_handle: u64,
        /// The user buffer's address.
        buffer: u64,
        size: u64, offset: u64,
        /// 1: buffer → handle; 0: handle → buffer.
        copy_to_mem_handle: u32,
    }
);
abi_struct!(
    /// MEMSET64.
    "neuron_ioctl_memset64", Memset64 { mem_handle: u64, offset: u64, value: u32, size: u64 }
);
abi_struct!(
    /// BAR_READ / BAR_WRITE: 32-bit register accesses.
    "neuron_ioctl_bar_rw", BarRw {
        bar: u32,
        /// Address of the array of `u64` register addresses.
        address: u64,
        /// Address of the array of `u32` values.
        data: u64,
        count: u32,
    }
);
abi_struct!(
    /// PROGRAM_ENGINE_NC64: bytes into an engine's address space.
    "neuron_ioctl_program_engine_nc64", ProgramEngineNc64 { nc_id: u32, dst: u64, buffer: u64, size: u64, offset: u64 }
);
abi_struct!(
    /// DMA_QUEUE_INIT.
    "neuron_ioctl_dma_queue_init", DmaQueueInit {
        eng_id: u32, qid: u32, tx_desc_count: u32, rx_desc_count: u32,
        tx_handle: u64, rx_handle: u64, rxc_handle: u64, axi_port: u32,
    }
);
abi_struct!(
    /// DMA_QUEUE_RELEASE.
    "neuron_ioctl_dma_queue_release", DmaQueueRelease { eng_id: u32, qid: u32 }
);
abi_struct!(
    /// DMA_QUEUE_COPY_START: the tail increments.
    "neuron_ioctl_dma_queue_copy_start", DmaQueueCopyStart { eng_id: u32, qid: u32, tx_desc_count: u32, rx_desc_count: u32 }
);
abi_struct!(
    /// DMA_ACK_COMPLETED.
    "neuron_ioctl_dma_ack_completed", DmaAckCompleted { eng_id: u32, qid: u32, count: u32 }
);
abi_struct!(
    /// DMA_QUEUE_GET_STATE: `tx` and `rx` point at [`DmaQueueStateOut`]s.
    "neuron_ioctl_dma_queue_get_state", DmaQueueGetState { eng_id: u32, qid: u32, tx: u64, rx: u64 }
);
abi_struct!(
    /// `struct neuron_dma_queue_state`, what DMA_QUEUE_GET_STATE writes.
    "neuron_dma_queue_state", DmaQueueStateOut {
        hw_status: u32, sw_status: u32, base_addr: u64, length: u32, head_pointer: u32, tail_pointer: u32,
        completion_base_addr: u64, completion_head: u32,
    }
);
abi_struct!(
    /// NOTIFICATIONS_INIT_V2 (the driver allocates the ring).
    "neuron_ioctl_notifications_init_v2", NotificationsInitV2 {
        nq_dev_id: u32, nq_dev_type: u32, nq_type: u32, engine_index: u32, size: u32, on_host_memory: u32,
        dram_channel: u32, dram_region: u32, mmap_offset: u64, mem_handle: u64,
    }
);
abi_struct!(
    /// NOTIFICATIONS_DESTROY_V1.
    "neuron_ioctl_notifications_destroy", NotificationsDestroy { mmap_offset: u64 }
);
abi_struct!(
    /// NC_RESET: `nc_map` is a core bitmap (`NEURON_NC_MAP_DEVICE` for all).
    "neuron_ioctl_device_reset", DeviceReset { nc_map: u32, request_id: u32 }
);
abi_struct!(
    /// NC_RESET_READY.
    "neuron_ioctl_device_ready", DeviceReady { request_id: u32, result: i32 }
);
abi_struct!(
    /// CRWL_NC_RANGE_MARK_EXT0 / UNMARK_EXT0: up to 512 cores.
    "neuron_ioctl_crwl_nc_map_ext", CrwlNcMapExt {
        nc_count: u32, start_nc_index: u32, end_nc_index: u32, max_nc_available: u32, bitmap: [u64; 8],
    }
);
abi_struct!(
    /// COMPATIBLE_VERSION (note the order: max first).
    "neuron_ioctl_compatible_version", CompatibleVersion { max: u32, min: u32 }
);
abi_struct!(
    /// DEVICE_BASIC_INFO.
    "neuron_ioctl_device_basic_info", DeviceBasicInfo { architecture: u32, revision: u32 }
);
abi_struct!(
    /// DRIVER_INFO_GET.
    "neuron_ioctl_device_driver_info", DriverInfo {
        architecture: u32, revision: u32, version: u32, size: u32, feature_flags1: u64,
    }
);
abi_struct!(
    /// DEVICE_BDF_EXT.
    "neuron_ioctl_device_bdf_ext", DeviceBdfExt { nd_index: u32, domain: u32, bus_number: u32, slot: u8, func: u8 }
);
abi_struct!(
    /// ACQUIRE_NEURON_DS / RELEASE_NEURON_DS: the datastore of a process.
    "neuron_ioctl_neuron_ds_info", NeuronDsInfo { pid: i32, mmap_offset: u64, size: u32 }
);
abi_struct!(
    /// RESOURCE_MMAP_INFO: where a special device resource (an HBM
    /// channel's memory, a block's semaphores) can be mmapped.
    "neuron_ioctl_resource_mmap_info", ResourceMmapInfo { block: u32, block_id: u32, resource: u32, offset: u64, size: u64 }
);
abi_struct!(
    /// DMABUF_FD: a dma-buf file descriptor for mapped device memory.
    "neuron_ioctl_dmabuf_fd", DmabufFd {
        va: u64, size: u64,
        /// Where the driver writes the `int` descriptor.
        fd: u64,
    }
);
abi_struct!(
    /// HOST_DEVICE_ID_TO_RID_MAP: routing ids of the instance's devices.
    "neuron_ioctl_host_device_id_to_rid_map", HostDeviceIdToRidMap { count: u32, host_did_to_rid_map: [u32; 64] }
);

/// `NEURON_NC_MAP_DEVICE`: every core of the device.
pub const NC_MAP_DEVICE: u32 = 0xFFFF_FFFF;
/// `NEURON_DRIVER_FEATURE_MEM_ALLOC64`: the driver takes MEM_ALLOC_V2MT64.
pub const FEATURE_MEM_ALLOC64: u64 = 1 << 6;
/// `NEURON_DRIVER_FEATURE_DMABUF`.
pub const FEATURE_DMABUF: u64 = 1;
/// `NEURON_DM_BLOCK_HBM` (`enum neuron_dm_block_type`).
pub const DM_BLOCK_HBM: u32 = 2;
/// `NEURON_DM_RESOURCE_DMEM` (`enum neuron_dm_resource_type`): device memory.
pub const DM_RESOURCE_DMEM: u32 = 3;
/// `NQ_DEVICE_TYPE_NEURON_CORE`.
pub const NQ_DEVICE_TYPE_NEURON_CORE: u32 = 0;
/// `enum neuron_arch`: Trn1 / Inf2.
pub const ARCH_V2: u32 = 2;
/// `enum neuron_arch`: Trn2.
pub const ARCH_V3: u32 = 3;
/// `enum neuron_dma_queue_type`.
pub const DMA_QUEUE_TYPE_TX: u32 = 0;
/// DMA queue software status `ENABLED` (`udma` `UDMA_QUEUE_SW_STATUS`).
pub const QUEUE_SW_DISABLED: u32 = 1;
/// Queue enabled.
pub const QUEUE_SW_ENABLED: u32 = 2;
/// Queue aborted.
pub const QUEUE_SW_ABORTED: u32 = 3;
/// `MEM_LOC_HOST` / `MEM_LOC_DEVICE` of `neuron_ioctl_mem_get_extended_info`'s version.
pub const MEM_GET_EXTENDED_INFO_VERSION: u32 = 1;

/// The runtime compatibility version nrt-rs speaks per architecture: the
/// newest the driver accepts for it (`neuron-facts` §3.1's
/// COMPATIBLE_VERSION table). A driver whose `max` is below it is older
/// than the ABI we speak and is refused at open.
pub const fn rt_version(architecture: u32) -> u32 {
    match architecture {
        ARCH_V3 => 11,
        _ => 7,
    }
}

/// `NEURON_IOCTL_*` command numbers (the ones nrt-rs issues or the
/// emulated driver serves).
pub mod cmd {
    use super::*;

    /// MEM_ALLOC_V2MT64 (#102, the 56-byte sibling): the first ioctl of a load.
    pub const MEM_ALLOC_V2MT64: u32 = ior(102, std::mem::size_of::<MemAllocV2Mt64>());
    /// MEM_ALLOC_V2 (#102, pointer-sized), the older sibling.
    pub const MEM_ALLOC_V2: u32 = ior(102, PTR);
    /// MEM_FREE (#22).
    pub const MEM_FREE: u32 = ior(22, PTR);
    /// MEM_COPY64 (#23).
    pub const MEM_COPY64: u32 = ior(23, std::mem::size_of::<MemCopy64>());
    /// MEM_BUF_COPY64 (#24).
    pub const MEM_BUF_COPY64: u32 = iowr(24, std::mem::size_of::<MemBufCopy64>());
    /// MEMSET64 (#28).
    pub const MEMSET64: u32 = ior(28, std::mem::size_of::<Memset64>());
    /// MEM_GET_EXTENDED_INFO (#29).
    pub const MEM_GET_EXTENDED_INFO: u32 = ior(29, PTR);
    /// BAR_READ (#11).
    pub const BAR_READ: u32 = ior(11, PTR);
    /// BAR_WRITE (#12).
    pub const BAR_WRITE: u32 = iow(12, PTR);
    /// PROGRAM_ENGINE_NC64 (#105).
    pub const PROGRAM_ENGINE_NC64: u32 = iowr(105, std::mem::size_of::<ProgramEngineNc64>());
    /// DMA_QUEUE_INIT (#33).
    pub const DMA_QUEUE_INIT: u32 = ior(33, PTR);
    /// DMA_QUEUE_RELEASE (#34).
    pub const DMA_QUEUE_RELEASE: u32 = ior(34, PTR);
    /// DMA_QUEUE_COPY_START (#35).
    pub const DMA_QUEUE_COPY_START: u32 = ior(35, PTR);
    /// DMA_ACK_COMPLETED (#36).
    pub const DMA_ACK_COMPLETED: u32 = ior(36, PTR);
    /// DMA_QUEUE_GET_STATE (#37).
    pub const DMA_QUEUE_GET_STATE: u32 = iowr(37, PTR);
    /// SEMAPHORE_INCREMENT (#41): the execute doorbell, 0x80084E29.
    pub const SEMAPHORE_INCREMENT: u32 = ior(41, PTR);
    /// SEMAPHORE_DECREMENT (#42).
    pub const SEMAPHORE_DECREMENT: u32 = ior(42, PTR);
    /// SEMAPHORE_READ (#43).
    pub const SEMAPHORE_READ: u32 = iowr(43, PTR);
    /// SEMAPHORE_WRITE (#44).
    pub const SEMAPHORE_WRITE: u32 = ior(44, PTR);
    /// EVENT_SET (#45).
    pub const EVENT_SET: u32 = ior(45, PTR);
    /// EVENT_GET (#46).
    pub const EVENT_GET: u32 = iowr(46, PTR);
    /// NOTIFICATIONS_INIT_V2 (#53).
    pub const NOTIFICATIONS_INIT_V2: u32 = ior(53, PTR);
    /// NOTIFICATIONS_DESTROY_V1 (#52).
    pub const NOTIFICATIONS_DESTROY_V1: u32 = ior(52, PTR);
    /// ACQUIRE_NEURON_DS (#71).
    pub const ACQUIRE_NEURON_DS: u32 = ior(71, PTR);
    /// RELEASE_NEURON_DS (#72).
    pub const RELEASE_NEURON_DS: u32 = ior(72, PTR);
    /// CRWL_NC_RANGE_MARK_EXT0 (#85, the 80-byte sibling).
    pub const CRWL_NC_RANGE_MARK_EXT0: u32 = iowr(85, std::mem::size_of::<CrwlNcMapExt>());
    /// CRWL_NC_RANGE_UNMARK_EXT0 (#86, the 80-byte sibling).
    pub const CRWL_NC_RANGE_UNMARK_EXT0: u32 = iow(86, std::mem::size_of::<CrwlNcMapExt>());
    /// COMPATIBLE_VERSION (#93).
    pub const COMPATIBLE_VERSION: u32 = iow(93, PTR);
    /// DEVICE_BASIC_INFO (#100).
    pub const DEVICE_BASIC_INFO: u32 = iow(100, PTR);
    /// NC_RESET (#103).
    pub const NC_RESET: u32 = ior(103, PTR);
    /// NC_RESET_READY (#104).
    pub const NC_RESET_READY: u32 = ior(104, PTR);
    /// DEVICE_BDF_EXT (#106, pointer-sized; the 1-byte sibling is the
    /// deprecated DEVICE_RESET_STATUS).
    pub const DEVICE_BDF_EXT: u32 = ior(106, PTR);
    /// DMABUF_FD (#107, pointer-sized).
    pub const DMABUF_FD: u32 = ior(107, PTR);
    /// RESOURCE_MMAP_INFO (#112).
    pub const RESOURCE_MMAP_INFO: u32 = iowr(112, std::mem::size_of::<ResourceMmapInfo>());
    /// DRIVER_INFO_GET (#110).
    pub const DRIVER_INFO_GET: u32 = ior(110, std::mem::size_of::<DriverInfo>());
    /// HOST_DEVICE_ID_TO_RID_MAP (#115).
    pub const HOST_DEVICE_ID_TO_RID_MAP: u32 = iowr(115, std::mem::size_of::<HostDeviceIdToRidMap>());
    /// DEVICE_RESET (#1, no argument; deprecated): named only to show the
    /// direction-none encoding in the layout test.
    pub const DEVICE_RESET: u32 = ioc(IOC_NONE, MAGIC, 1, 0);
}

/// Every command number above with its `neuron_ioctl.h` macro name (the
/// name an ioctl failure's status carries, and what the layout test checks).
pub const COMMANDS: &[(&str, u32)] = &[
    ("NEURON_IOCTL_MEM_ALLOC_V2MT64", cmd::MEM_ALLOC_V2MT64),
    ("NEURON_IOCTL_MEM_ALLOC_V2", cmd::MEM_ALLOC_V2),
    ("NEURON_IOCTL_MEM_FREE", cmd::MEM_FREE),
    ("NEURON_IOCTL_MEM_COPY64", cmd::MEM_COPY64),
    ("NEURON_IOCTL_MEM_BUF_COPY64", cmd::MEM_BUF_COPY64),
    ("NEURON_IOCTL_MEMSET64", cmd::MEMSET64),
    ("NEURON_IOCTL_MEM_GET_EXTENDED_INFO", cmd::MEM_GET_EXTENDED_INFO),
    ("NEURON_IOCTL_BAR_READ", cmd::BAR_READ),
    ("NEURON_IOCTL_BAR_WRITE", cmd::BAR_WRITE),
    ("NEURON_IOCTL_PROGRAM_ENGINE_NC64", cmd::PROGRAM_ENGINE_NC64),
    ("NEURON_IOCTL_DMA_QUEUE_INIT", cmd::DMA_QUEUE_INIT),
    ("NEURON_IOCTL_DMA_QUEUE_RELEASE", cmd::DMA_QUEUE_RELEASE),
    ("NEURON_IOCTL_DMA_QUEUE_COPY_START", cmd::DMA_QUEUE_COPY_START),
    ("NEURON_IOCTL_DMA_ACK_COMPLETED", cmd::DMA_ACK_COMPLETED),
    ("NEURON_IOCTL_DMA_QUEUE_GET_STATE", cmd::DMA_QUEUE_GET_STATE),
    ("NEURON_IOCTL_SEMAPHORE_INCREMENT", cmd::SEMAPHORE_INCREMENT),
    ("NEURON_IOCTL_SEMAPHORE_DECREMENT", cmd::SEMAPHORE_DECREMENT),
    ("NEURON_IOCTL_SEMAPHORE_READ", cmd::SEMAPHORE_READ),
    ("NEURON_IOCTL_SEMAPHORE_WRITE", cmd::SEMAPHORE_WRITE),
    ("NEURON_IOCTL_EVENT_SET", cmd::EVENT_SET),
    ("NEURON_IOCTL_EVENT_GET", cmd::EVENT_GET),
    ("NEURON_IOCTL_NOTIFICATIONS_INIT_V2", cmd::NOTIFICATIONS_INIT_V2),
    ("NEURON_IOCTL_NOTIFICATIONS_DESTROY_V1", cmd::NOTIFICATIONS_DESTROY_V1),
    ("NEURON_IOCTL_ACQUIRE_NEURON_DS", cmd::ACQUIRE_NEURON_DS),
    ("NEURON_IOCTL_RELEASE_NEURON_DS", cmd::RELEASE_NEURON_DS),
    ("NEURON_IOCTL_CRWL_NC_RANGE_MARK_EXT0", cmd::CRWL_NC_RANGE_MARK_EXT0),
    ("NEURON_IOCTL_CRWL_NC_RANGE_UNMARK_EXT0", cmd::CRWL_NC_RANGE_UNMARK_EXT0),
    ("NEURON_IOCTL_COMPATIBLE_VERSION", cmd::COMPATIBLE_VERSION),
    ("NEURON_IOCTL_DEVICE_BASIC_INFO", cmd::DEVICE_BASIC_INFO),
    ("NEURON_IOCTL_NC_RESET", cmd::NC_RESET),
    ("NEURON_IOCTL_NC_RESET_READY", cmd::NC_RESET_READY),
    ("NEURON_IOCTL_DEVICE_BDF_EXT", cmd::DEVICE_BDF_EXT),
    ("NEURON_IOCTL_DMABUF_FD", cmd::DMABUF_FD),
    ("NEURON_IOCTL_RESOURCE_MMAP_INFO", cmd::RESOURCE_MMAP_INFO),
    ("NEURON_IOCTL_DRIVER_INFO_GET", cmd::DRIVER_INFO_GET),
    ("NEURON_IOCTL_HOST_DEVICE_ID_TO_RID_MAP", cmd::HOST_DEVICE_ID_TO_RID_MAP),
    ("NEURON_IOCTL_DEVICE_RESET", cmd::DEVICE_RESET),
];

/// The `NEURON_IOCTL_*` name of a command number (an extension command's
/// name for [`ext`] numbers), for messages.
pub fn command_name(cmd: u32) -> &'static str {
    COMMANDS
        .iter()
        .chain(ext::COMMANDS)
        .find(|(_, c)| *c == cmd)
        .map_or("an unknown neuron ioctl", |(n, _)| n)
}

/// A struct's name, size and field offsets, as [`STRUCTS`] lists them.
pub struct StructLayout {
    /// The C struct name.
    pub c_name: &'static str,
    /// `sizeof`.
    pub size: usize,
    /// `(field, offsetof)`.
    pub fields: &'static [(&'static str, usize)],
}

const fn layout<A: Arg>() -> StructLayout {
    StructLayout { c_name: A::C_NAME, size: A::SIZE, fields: A::FIELDS }
}

/// Every driver struct above, for the layout test.
pub const STRUCTS: &[StructLayout] = &[
    layout::<Semaphore>(),
    layout::<Event>(),
    layout::<MemAllocV2Mt64>(),
    layout::<MemFree>(),
    layout::<MemGetExtendedInfo>(),
    layout::<MemCopy64>(),
    layout::<MemBufCopy64>(),
    layout::<Memset64>(),
    layout::<BarRw>(),
    layout::<ProgramEngineNc64>(),
    layout::<DmaQueueInit>(),
    layout::<DmaQueueRelease>(),
    layout::<DmaQueueCopyStart>(),
    layout::<DmaAckCompleted>(),
    layout::<DmaQueueGetState>(),
    layout::<DmaQueueStateOut>(),
    layout::<NotificationsInitV2>(),
    layout::<NotificationsDestroy>(),
    layout::<DeviceReset>(),
    layout::<DeviceReady>(),
    layout::<CrwlNcMapExt>(),
    layout::<CompatibleVersion>(),
    layout::<DeviceBasicInfo>(),
    layout::<DriverInfo>(),
    layout::<ResourceMmapInfo>(),
    layout::<DmabufFd>(),
    layout::<DeviceBdfExt>(),
    layout::<NeuronDsInfo>(),
    layout::<HostDeviceIdToRidMap>(),
];

/// nrt-rs's extension commands: what the HAL asks of a device and the
/// driver's published ABI has no command for (the simulator's queue
/// completion semaphores, starting a sequencer on a stream, its debug
/// registers, a notification queue on memory the caller allocated, a
/// ring inside a larger allocation).
/// Only the emulated driver serves them; they use their own magic ('n')
/// so they can never be mistaken for a driver command, and on
/// `/dev/neuronN` the device refuses the HAL calls that need them
/// (`docs/hardware.md`).
pub mod ext {
    use super::*;

    /// The extension magic.
    pub const MAGIC: u8 = b'n';

    abi_struct!(
        /// What DMA_QUEUE_INIT cannot say of an initialised queue: its
        /// completion semaphore and event (`value + 1`; 0 = none), and
        /// where in the ring handles' memory the rings start.
        "nrt_ext_dma_queue_config", DmaQueueConfig { eng_id: u32, qid: u32, semaphore: u32, event: u32, tx_offset: u64, rx_offset: u64 }
    );
    abi_struct!(
        /// Start a sequencer on a stream of `len` bytes at `addr`.
        "nrt_ext_engine_start", EngineStart { nc_id: u32, engine: u32, addr: u64, len: u64 }
    );
    abi_struct!(
        /// A sequencer's debug registers: `run` (0 none, 1 idle, 2
        /// running, 3 halted, 4 hung), `pc`, `wait_kind` (0 nothing, 1
        /// semaphore, 2 event, 3 DMA idle, 4 custom op), `wait_index`.
        "nrt_ext_engine_state", EngineState { nc_id: u32, engine: u32, run: u32, wait_kind: u32, pc: u64, wait_index: u32 }
    );
    abi_struct!(
        /// A notification queue on caller memory: `pa` of `size` bytes;
        /// `mmap_offset` out.
        "nrt_ext_nq_init", NqInit { nc_id: u32, engine_index: u32, nq_type: u32, size: u32, pa: u64, mmap_offset: u64 }
    );
    abi_struct!(
        /// Disable a notification queue.
        "nrt_ext_nq_destroy", NqDestroy { nc_id: u32, engine_index: u32, nq_type: u32 }
    );

    /// The extension command numbers.
    pub const DMA_QUEUE_CONFIG: u32 = ioc(IOC_WRITE, MAGIC, 1, std::mem::size_of::<DmaQueueConfig>());
    /// Start an engine.
    pub const ENGINE_START: u32 = ioc(IOC_WRITE, MAGIC, 2, std::mem::size_of::<EngineStart>());
    /// Read an engine's debug registers.
    pub const ENGINE_STATE: u32 = ioc(IOC_READ | IOC_WRITE, MAGIC, 3, std::mem::size_of::<EngineState>());
    /// Initialise an NQ on caller memory.
    pub const NQ_INIT: u32 = ioc(IOC_READ | IOC_WRITE, MAGIC, 4, std::mem::size_of::<NqInit>());
    /// Destroy an NQ.
    pub const NQ_DESTROY: u32 = ioc(IOC_WRITE, MAGIC, 5, std::mem::size_of::<NqDestroy>());

    /// Names, for messages.
    pub const COMMANDS: &[(&str, u32)] = &[
        ("NRT_EXT_DMA_QUEUE_CONFIG", DMA_QUEUE_CONFIG),
        ("NRT_EXT_ENGINE_START", ENGINE_START),
        ("NRT_EXT_ENGINE_STATE", ENGINE_STATE),
        ("NRT_EXT_NQ_INIT", NQ_INIT),
        ("NRT_EXT_NQ_DESTROY", NQ_DESTROY),
    ];

    /// Whether `cmd` is an extension (not a driver) command.
    pub const fn is_ext(cmd: u32) -> bool {
        (cmd >> 8) & 0xFF == MAGIC as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_command_numbers() {
        assert_eq!(cmd::SEMAPHORE_INCREMENT, 0x8008_4E29);
        assert_eq!(cmd::MEM_ALLOC_V2MT64, 0x8038_4E66);
        assert_eq!(cmd::MEM_ALLOC_V2, 0x8008_4E66);
        assert_eq!(cmd::CRWL_NC_RANGE_MARK_EXT0, 0xC050_4E55);
        assert_eq!(cmd::DRIVER_INFO_GET, 0x8018_4E6E);
        assert_eq!(nr(cmd::MEM_ALLOC_V2MT64), 102);
        assert_eq!(size(cmd::MEM_ALLOC_V2MT64), 56);
    }

    #[test]
    fn encode_decode_round_trips_at_the_c_offsets() {
        let a = MemAllocV2Mt64 {
            size: 0x1122_3344_5566_7788, align: 64, host_memory: 1, dram_channel: 2, dram_region: 3,
            nc_id: 4, mem_type: 5, mem_handle: 0xDEAD_BEEF, pad: 9,
        };
        let mut b = [0xFFu8; MAX_ARG];
        a.encode(&mut b);
        assert_eq!(&b[40..48], &0xDEAD_BEEFu64.to_ne_bytes(), "mem_handle at 40");
        assert_eq!(&b[36..40], &[0; 4], "padding after mem_type zeroed");
        assert_eq!(MemAllocV2Mt64::decode(&b), a);
        assert_eq!(MemAllocV2Mt64::SIZE, 56);
    }
}
