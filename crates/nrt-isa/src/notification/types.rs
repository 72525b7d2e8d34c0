//! Code tables carried in notification records.

/// The engines of one NeuronCore, in `al_hal_tpb_eng_type` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NqEngine {
    /// Tensor engine (PE array).
    Pe = 0,
    /// Scalar / activation engine.
    Act = 1,
    /// GpSimd engine.
    Pool = 2,
    /// Vector engine.
    Dve = 3,
    /// Sync engine (sequencer only).
    Sp = 4,
}

impl NqEngine {
    /// All engines in index order.
    pub const ALL: [NqEngine; 5] = [NqEngine::Pe, NqEngine::Act, NqEngine::Pool, NqEngine::Dve, NqEngine::Sp];

    /// The engine with index `i` (0..=4).
    pub fn from_index(i: u8) -> Option<Self> {
        Self::ALL.get(usize::from(i)).copied()
    }
}

/// Per-engine notification kinds, in code order within an engine's group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EngineEvent {
    /// An instruction started (implicit trace / infer-status START).
    InstStart = 0,
    /// An instruction ended (implicit trace / infer-status END).
    InstEnd = 1,
    /// A NOTIFY instruction ran.
    Explicit = 2,
    /// An event or semaphore changed.
    EvtSem = 3,
}

/// The hardware `notific_type` (5 bits in byte 3 of every record).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NotificType {
    /// A DMA queue completion.
    Dma = 0x02,
    /// An error record.
    Error = 0x03,
    /// PE instruction start.
    PeInstStart = 0x04,
    /// PE instruction end.
    PeInstEnd = 0x05,
    /// PE explicit NOTIFY.
    PeExplicit = 0x06,
    /// PE event/semaphore change.
    PeEvtSem = 0x07,
    /// ACT instruction start.
    ActInstStart = 0x08,
    /// ACT instruction end.
    ActInstEnd = 0x09,
    /// ACT explicit NOTIFY.
    ActExplicit = 0x0A,
    /// ACT event/semaphore change.
    ActEvtSem = 0x0B,
    /// POOL instruction start.
    PoolInstStart = 0x0C,
    /// POOL instruction end.
    PoolInstEnd = 0x0D,
    /// POOL explicit NOTIFY.
    PoolExplicit = 0x0E,
    /// POOL event/semaphore change.
    PoolEvtSem = 0x0F,
    /// DVE instruction start.
    DveInstStart = 0x10,
    /// DVE instruction end.
    DveInstEnd = 0x11,
    /// DVE explicit NOTIFY.
    DveExplicit = 0x12,
    /// DVE event/semaphore change.
    DveEvtSem = 0x13,
    /// SP instruction start.
    SpInstStart = 0x14,
    /// SP instruction end.
    SpInstEnd = 0x15,
    /// SP explicit NOTIFY.
    SpExplicit = 0x16,
    /// SP event/semaphore change.
    SpEvtSem = 0x17,
    /// Semaphore change through the AXI port.
    TpbAxiEvtSem = 0x1B,
    /// TPB HAM notification.
    TpbHam = 0x1E,
    /// TPB-level error.
    TpbError = 0x1F,
}

const ENGINE_BASE: u8 = 0x04;

impl NotificType {
    /// The type with 5-bit code `code`; `None` for unassigned codes.
    pub fn from_code(code: u8) -> Option<Self> {
        use NotificType::*;
        const TABLE: [Option<NotificType>; 32] = [
            None, None, Some(Dma), Some(Error),
            Some(PeInstStart), Some(PeInstEnd), Some(PeExplicit), Some(PeEvtSem),
            Some(ActInstStart), Some(ActInstEnd), Some(ActExplicit), Some(ActEvtSem),
            Some(PoolInstStart), Some(PoolInstEnd), Some(PoolExplicit), Some(PoolEvtSem),
            Some(DveInstStart), Some(DveInstEnd), Some(DveExplicit), Some(DveEvtSem),
            Some(SpInstStart), Some(SpInstEnd), Some(SpExplicit), Some(SpEvtSem),
            None, None, None, Some(TpbAxiEvtSem), None, None, Some(TpbHam), Some(TpbError),
        ];
        TABLE.get(usize::from(code)).copied().flatten()
    }

    /// The 5-bit code.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The per-engine type for `engine` and `event`.
    pub fn for_engine(engine: NqEngine, event: EngineEvent) -> Self {
        let code = ENGINE_BASE + 4 * engine as u8 + event as u8;
        // Every engine/event pair lands in 0x04..=0x17, all assigned.
        Self::from_code(code).unwrap_or(NotificType::Error)
    }

    /// The engine and event of a per-engine type; `None` for the others.
    pub fn engine_event(self) -> Option<(NqEngine, EngineEvent)> {
        let code = self.code();
        if !(ENGINE_BASE..ENGINE_BASE + 20).contains(&code) {
            return None;
        }
        let rel = code - ENGINE_BASE;
        let event = [EngineEvent::InstStart, EngineEvent::InstEnd, EngineEvent::Explicit, EngineEvent::EvtSem]
            [usize::from(rel % 4)];
        NqEngine::from_index(rel / 4).map(|e| (e, event))
    }
}

/// The runtime subtype in the high half of `metadata_2` of an infer-status
/// record (COMPL's u16 at +6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum RuntimeSubtype {
    /// The engine started the inference.
    Start = 2,
    /// The engine finished the inference.
    End = 3,
    /// A custom notification; see [`CustomSubId`].
    Custom = 6,
    /// A collectives operation started.
    CcStart = 7,
    /// A collectives operation ended.
    CcEnd = 8,
}

impl RuntimeSubtype {
    /// The subtype with code `code`; `None` for codes the runtime rejects
    /// as unexpected (0, 1, 4, 5, > 8).
    pub fn from_code(code: u16) -> Option<Self> {
        match code {
            2 => Some(Self::Start),
            3 => Some(Self::End),
            6 => Some(Self::Custom),
            7 => Some(Self::CcStart),
            8 => Some(Self::CcEnd),
            _ => None,
        }
    }
}

/// Sub-ids of [`RuntimeSubtype::Custom`] records (COMPL's u16 at +4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum CustomSubId {
    /// Out-of-bounds embedding-table update (text record).
    EmbeddingUpdateOob = 0,
    /// Out-of-bounds embedding-table update, with the ISA line number.
    EmbeddingUpdateOobLine = 1,
    /// Scatter/gather (indirect memory copy) out of bounds.
    IndirectCopyOob = 2,
    /// Scatter/gather out of bounds, second code of the same meaning.
    IndirectCopyOobAlt = 3,
    /// Scatter/gather through the scalar DGE out of bounds.
    ScalarDgeOob = 4,
    /// Scatter/gather through the vector DGE out of bounds.
    VectorDgeOob = 5,
    /// Custom debug value (non-fatal, logged).
    DebugValue = 6,
    /// An output tensor is complete (wakes tensor waiters early).
    TensorCompletion = 7,
    /// A debug-tensor read request.
    DebugTensorRead = 8,
    /// Scatter/gather transpose through the scalar DGE out of bounds.
    ScalarDgeTransposeOob = 9,
    /// Scatter/gather transpose through the vector DGE out of bounds.
    VectorDgeTransposeOob = 0xA,
}

impl CustomSubId {
    /// The sub-id with code `code`; `None` past 0xA (the runtime then
    /// reports "unknown custom notification type").
    pub fn from_code(code: u16) -> Option<Self> {
        use CustomSubId::*;
        [
            EmbeddingUpdateOob,
            EmbeddingUpdateOobLine,
            IndirectCopyOob,
            IndirectCopyOobAlt,
            ScalarDgeOob,
            VectorDgeOob,
            DebugValue,
            TensorCompletion,
            DebugTensorRead,
            ScalarDgeTransposeOob,
            VectorDgeTransposeOob,
        ]
        .get(usize::from(code))
        .copied()
    }

    /// True for the out-of-bounds kinds, which fail the inference with
    /// `NRT_EXEC_OOB` (1006).
    pub fn is_oob(self) -> bool {
        !matches!(self, CustomSubId::DebugValue | CustomSubId::TensorCompletion | CustomSubId::DebugTensorRead)
    }
}

/// Notification classes the runtime sets rings up for
/// (`notifications_get_nq_ids_for_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NqClass {
    /// Implicit per-instruction trace.
    Trace = 0,
    /// Event set/clear records.
    Event = 1,
    /// Error records (NQ #2).
    Error = 2,
    /// Per-engine inference START/END status.
    InferStatus = 3,
    /// DMA completion records.
    Dma = 4,
    /// Throttling records.
    Throttle = 5,
    /// Top-SP trace.
    TopSpTrace = 6,
    /// Top-SP events.
    TopSpEvent = 7,
    /// Top-SP errors.
    TopSpError = 8,
    /// Top-SP collectives.
    TopSpCc = 9,
}

impl NqClass {
    /// True for the classes the exec path may read directly (2, 3, 8, 9).
    pub fn allows_direct_read(self) -> bool {
        matches!(self, NqClass::Error | NqClass::InferStatus | NqClass::TopSpError | NqClass::TopSpCc)
    }
}
