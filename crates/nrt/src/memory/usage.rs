//! Usage categories of device memory (libnrt's `dma_mem_usage_type`) and
//! the coarser columns of the OOM report.
//!
//! Every allocation is booked under one [`MemUsage`]; the ledger sums by
//! it, and the OOM report folds the 22 usage types into the handful of
//! columns users know from libnrt's table ([`ReportColumn`]).

use std::fmt;

macro_rules! usages {
    ($( $(#[doc = $doc:literal])* $variant:ident = $value:literal, $name:literal, $column:ident, $host:literal; )*) => {
        /// What a piece of device memory is for (`dma_mem_usage_type`; the
        /// numbers are libnrt's and index the ledger).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum MemUsage {
            $( $(#[doc = $doc])* $variant = $value, )*
        }

        impl MemUsage {
            /// Every usage type in numeric order.
            pub const ALL: [MemUsage; MEM_USAGE_COUNT] = [ $( MemUsage::$variant, )* ];

            /// The libnrt enum name without its prefix, e.g. `INSTR_PE`.
            pub const fn name(self) -> &'static str {
                match self { $( MemUsage::$variant => $name, )* }
            }

            /// The OOM-report column this usage is summed into.
            pub const fn column(self) -> ReportColumn {
                match self { $( MemUsage::$variant => ReportColumn::$column, )* }
            }

            /// Whether libnrt accepts this usage for host-DMA memory
            /// (scratchpads and collectives buffers are device-only).
            pub const fn allowed_on_host(self) -> bool {
                match self { $( MemUsage::$variant => $host, )* }
            }
        }
    };
}

/// Number of usage types (`DMA_MEM_USAGE_TYPE_MAX`).
pub const MEM_USAGE_COUNT: usize = 22;

usages! {
    /// Anything the runtime did not classify further.
    Generic = 0, "GENERIC", Runtime, true;
    /// PE engine instruction stream.
    InstrPe = 1, "INSTR_PE", Code, true;
    /// ACT engine instruction stream.
    InstrAct = 2, "INSTR_ACT", Code, true;
    /// POOL engine instruction stream.
    InstrPool = 3, "INSTR_POOL", Code, true;
    /// Model input/output buffers.
    Io = 4, "IO", Tensors, true;
    /// Spill space private to a model.
    DramSpill = 5, "DRAM_SPILL", NonSharedScratchpad, true;
    /// Model constants (weights).
    Weight = 6, "WEIGHT", Constants, true;
    /// Notification-queue rings.
    Notification = 7, "NOTIFICATION", Notifications, true;
    /// Activation function tables.
    ActTable = 8, "ACT_TABLE", Code, true;
    /// DVE engine instruction stream.
    InstrDve = 9, "INSTR_DVE", Code, true;
    /// SP engine instruction stream.
    InstrSp = 10, "INSTR_SP", Code, true;
    /// The scratchpad shared by every model on a core.
    Scratchpad = 11, "SCRATCHPAD", SharedScratchpad, false;
    /// User tensors (`nrt_tensor_allocate`).
    Tensor = 12, "TENSOR", Tensors, true;
    /// Microcode libraries (POOL custom ops).
    UcodeLib = 13, "UCODE_LIB", Code, true;
    /// The POOL printf back-channel.
    PoolStdio = 14, "POOL_STDIO", Runtime, true;
    /// Collectives buffers.
    Cc = 15, "CC", Collectives, false;
    /// Scratch too large for the shared pages, private to a model.
    ScratchpadNotShared = 16, "SCRATCHPAD_NOT_SHARED", NonSharedScratchpad, false;
    /// Cross-instance collectives buffers.
    XtCc = 17, "XT_CC", XtCc, true;
    /// Runtime-owned DMA descriptor rings.
    DmaRing = 18, "DMA_RING", DmaRingsRuntime, true;
    /// DMA rings of spill transfers.
    DmaRingSpill = 19, "DMA_RING_SPILL", DmaRingsSpill, true;
    /// DMA rings of model input/output transfers.
    DmaRingIo = 20, "DMA_RING_IO", DmaRingsIo, true;
    /// DMA rings of collectives transfers.
    DmaRingCollectives = 21, "DMA_RING_COLLECTIVES", DmaRingsCollectives, true;
}

impl MemUsage {
    /// The numeric `dma_mem_usage_type` value.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The category the device's datastore shows this usage under
    /// (`docs/status-file.md`).
    pub const fn status_category(self) -> nrt_hal::status::MemCategory {
        use nrt_hal::status::MemCategory as C;
        match self {
            MemUsage::Io | MemUsage::Tensor => C::Tensors,
            MemUsage::Weight => C::Constants,
            MemUsage::InstrPe | MemUsage::InstrAct | MemUsage::InstrPool | MemUsage::InstrDve | MemUsage::InstrSp | MemUsage::ActTable | MemUsage::UcodeLib => C::ModelCode,
            MemUsage::PoolStdio => C::RuntimeMemory,
            MemUsage::DramSpill | MemUsage::Scratchpad | MemUsage::ScratchpadNotShared => C::Scratchpad,
            MemUsage::DmaRing | MemUsage::DmaRingSpill | MemUsage::DmaRingIo | MemUsage::DmaRingCollectives => C::DmaRings,
            MemUsage::Notification => C::Notifications,
            MemUsage::Cc | MemUsage::XtCc => C::Collectives,
            MemUsage::Generic => C::Uncategorized,
        }
    }

    /// The category a booking of this usage by `owner` shows under: the
    /// usage's ([`MemUsage::status_category`]), except that model code no
    /// model owns (a core's instruction arena: the dispatchers and the
    /// room the models' images are carved from as they load) is the
    /// runtime's memory.
    pub fn status_category_of(self, owner: super::MemOwner) -> nrt_hal::status::MemCategory {
        use nrt_hal::status::MemCategory as C;
        match (owner, self.status_category()) {
            (super::MemOwner::Runtime, C::ModelCode) => C::RuntimeMemory,
            (_, c) => c,
        }
    }

    /// Ledger index (same as the code).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The usage type with this numeric value, if any.
    pub fn from_code(code: u8) -> Option<MemUsage> {
        MemUsage::ALL.get(usize::from(code)).copied()
    }

    /// The instruction-stream usage of an engine (a lookup, not
    /// `InstrPe + index`: DVE and SP come after other types).
    pub const fn instructions_of(engine: nrt_hal::EngineId) -> MemUsage {
        match engine {
            nrt_hal::EngineId::Pe => MemUsage::InstrPe,
            nrt_hal::EngineId::Act => MemUsage::InstrAct,
            nrt_hal::EngineId::Pool => MemUsage::InstrPool,
            nrt_hal::EngineId::Dve => MemUsage::InstrDve,
            nrt_hal::EngineId::Sp => MemUsage::InstrSp,
        }
    }
}

impl fmt::Display for MemUsage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The columns of libnrt's memory table (users-and-tools §2.12): the
/// categories people read when an allocation fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReportColumn {
    /// User tensors and model I/O buffers.
    Tensors,
    /// Model constants.
    Constants,
    /// Instruction streams, activation tables, microcode.
    Code,
    /// The shared scratchpad.
    SharedScratchpad,
    /// Private scratch and spill.
    NonSharedScratchpad,
    /// Runtime-internal buffers.
    Runtime,
    /// I/O DMA rings.
    DmaRingsIo,
    /// Spill DMA rings.
    DmaRingsSpill,
    /// Collectives DMA rings.
    DmaRingsCollectives,
    /// Runtime DMA rings.
    DmaRingsRuntime,
    /// Collectives buffers.
    Collectives,
    /// Cross-instance collectives buffers.
    XtCc,
    /// Notification rings.
    Notifications,
}

impl ReportColumn {
    /// Every column in table order.
    pub const ALL: [ReportColumn; 13] = [
        ReportColumn::Tensors,
        ReportColumn::Constants,
        ReportColumn::Code,
        ReportColumn::SharedScratchpad,
        ReportColumn::NonSharedScratchpad,
        ReportColumn::Runtime,
        ReportColumn::DmaRingsIo,
        ReportColumn::DmaRingsSpill,
        ReportColumn::DmaRingsCollectives,
        ReportColumn::DmaRingsRuntime,
        ReportColumn::Collectives,
        ReportColumn::XtCc,
        ReportColumn::Notifications,
    ];

    /// The header text of the column.
    pub const fn label(self) -> &'static str {
        match self {
            ReportColumn::Tensors => "tensors",
            ReportColumn::Constants => "model constants",
            ReportColumn::Code => "model code",
            ReportColumn::SharedScratchpad => "shared scratchpad",
            ReportColumn::NonSharedScratchpad => "nonshared scratchpad",
            ReportColumn::Runtime => "runtime",
            ReportColumn::DmaRingsIo => "dma rings io",
            ReportColumn::DmaRingsSpill => "dma rings spill",
            ReportColumn::DmaRingsCollectives => "dma rings collectives",
            ReportColumn::DmaRingsRuntime => "dma rings runtime",
            ReportColumn::Collectives => "collectives",
            ReportColumn::XtCc => "xt cc",
            ReportColumn::Notifications => "notifications",
        }
    }
}

/// Formats a byte count as libnrt's OOM line does: three decimals in the
/// largest unit that keeps the value at or above one (`4.000GB`, `512.000KB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)];
    for (unit, scale) in UNITS {
        if bytes >= scale && scale > 1 {
            return format!("{:.3}{unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/status-file.md counts the usage types it maps.
    #[test]
    fn the_status_file_doc_counts_the_usage_types() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/status-file.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            nrt_test_support::skip!("{path} is absent (a crate packaged without the repository's docs)");
        };
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let says = format!("The runtime maps its {MEM_USAGE_COUNT} usage types onto them");
        assert!(doc.contains(&says), "docs/status-file.md should say \"{says}\"");
    }

    #[test]
    fn codes_are_libnrts() {
        let names = [
            "GENERIC", "INSTR_PE", "INSTR_ACT", "INSTR_POOL", "IO", "DRAM_SPILL", "WEIGHT",
            "NOTIFICATION", "ACT_TABLE", "INSTR_DVE", "INSTR_SP", "SCRATCHPAD", "TENSOR",
            "UCODE_LIB", "POOL_STDIO", "CC", "SCRATCHPAD_NOT_SHARED", "XT_CC", "DMA_RING",
            "DMA_RING_SPILL", "DMA_RING_IO", "DMA_RING_COLLECTIVES",
        ];
        assert_eq!(MemUsage::ALL.len(), names.len());
        for (i, name) in names.iter().enumerate() {
            let u = MemUsage::from_code(i as u8).unwrap();
            assert_eq!((u.code() as usize, u.name()), (i, *name));
        }
        assert_eq!(MemUsage::from_code(22), None);
    }

    #[test]
    fn instruction_usage_is_a_lookup() {
        use nrt_hal::EngineId;
        let got: Vec<u8> = EngineId::ALL.iter().map(|&e| MemUsage::instructions_of(e).code()).collect();
        assert_eq!(got, vec![1, 2, 3, 9, 10]);
    }

    #[test]
    fn device_only_usages() {
        let device_only: Vec<MemUsage> =
            MemUsage::ALL.into_iter().filter(|u| !u.allowed_on_host()).collect();
        assert_eq!(device_only, vec![MemUsage::Scratchpad, MemUsage::Cc, MemUsage::ScratchpadNotShared]);
    }

    #[test]
    fn human_bytes_formats() {
        assert_eq!(human_bytes(4 << 30), "4.000GB");
        assert_eq!(human_bytes(1536 << 10), "1.500MB");
        assert_eq!(human_bytes(1024), "1.000KB");
        assert_eq!(human_bytes(7), "7B");
        assert_eq!(human_bytes(0), "0B");
    }
}
