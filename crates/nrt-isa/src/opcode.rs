//! Opcode numbers of the NeuronCore ISA, their names and engine classes.
//!
//! Every value the hardware enum, the runtime's lowering code or a real
//! compiler NEFF is known to use is listed once in the table below. Values
//! outside the table decode as [`Opcode::Unknown`] and are carried as raw
//! bytes, never rejected.

/// Which part of the NeuronCore an opcode belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineClass {
    /// Tensor engine (PE array): LDWEIGHTS/MATMUL.
    Pe,
    /// Scalar / activation engine.
    Act,
    /// Tensor ops shared by the vector (DVE) and GpSimd (POOL) engines, 0x41..0x5F.
    Tensor,
    /// DVE / POOL specials, 0x60..0x7F.
    Pool,
    /// Fixed-function decoders (JPEG).
    Decode,
    /// Sequencer control: sync, branches, register ALU, DMA triggers, 0xA0..0xBF.
    Control,
    /// Host-only pseudo-instructions, 0xC1..0xDF, rewritten by the runtime at load.
    Pseudo,
    /// Extended instructions, 0xE0..0xFF.
    Extended,
    /// A value we know nothing about.
    Unknown,
}

macro_rules! opcodes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $value:literal, $name:literal, $class:ident; )*) => {
        /// A record's opcode byte, named where the value is known.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Opcode {
            $( $(#[doc = $doc])* $variant, )*
            /// A value outside the table (kept verbatim).
            Unknown(u8),
        }

        impl Opcode {
            /// Every named opcode, in table order.
            pub const ALL: &'static [Opcode] = &[ $( Opcode::$variant, )* ];

            /// Maps an opcode byte to its name, or `Unknown`.
            pub const fn from_u8(v: u8) -> Opcode {
                match v {
                    $( $value => Opcode::$variant, )*
                    other => Opcode::Unknown(other),
                }
            }

            /// The opcode byte.
            pub const fn to_u8(self) -> u8 {
                match self {
                    $( Opcode::$variant => $value, )*
                    Opcode::Unknown(v) => v,
                }
            }

            /// The ISA name (upper case, as in the hardware enum), or `None` for `Unknown`.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $( Opcode::$variant => Some($name), )*
                    Opcode::Unknown(_) => None,
                }
            }

            /// Looks a name up (case-insensitive).
            pub fn from_name(name: &str) -> Option<Opcode> {
                $( if name.eq_ignore_ascii_case($name) { return Some(Opcode::$variant); } )*
                None
            }

            /// The engine class of the opcode.
            pub const fn engine_class(self) -> EngineClass {
                match self {
                    $( Opcode::$variant => EngineClass::$class, )*
                    Opcode::Unknown(v) if Opcode::in_pseudo_band(v) => EngineClass::Pseudo,
                    Opcode::Unknown(_) => EngineClass::Unknown,
                }
            }
        }
    };
}

opcodes! {
    /// Load the stationary (weights) operand into the PE array.
    LdWeights = 0x01, "LDWEIGHTS", Pe;
    /// Stream the moving operand through the PE array into PSUM.
    Matmul = 0x02, "MATMUL", Pe;
    /// Sparse matmul.
    MatmulSparse = 0x07, "MATMUL_SPARSE", Pe;
    /// Microscaling (MX) matmul.
    MatmulMx = 0x0A, "MATMUL_MX", Pe;
    /// Activation: func(in * scale + bias).
    Activate = 0x21, "ACTIVATE", Act;
    /// Activation with quantized output.
    ActivateQuantize = 0x22, "ACTIVATE_QUANTIZE", Act;
    /// Load an activation function table (completed by the runtime).
    ActivationTableLoad = 0x23, "ACTIVATION_TABLE_LOAD", Act;
    /// Dedicated exponential.
    Exponential = 0x30, "EXPONENTIAL", Act;
    /// Element-wise op of two tensors.
    TensorTensorArith = 0x41, "TENSOR_TENSOR_ARITH_OP", Tensor;
    /// Element-wise op of a tensor and scalars.
    TensorScalarArith = 0x43, "TENSOR_SCALAR_ARITH_OP", Tensor;
    /// Reduction along free dimensions.
    Pool = 0x45, "POOL", Tensor;
    /// Copy (bit-exact moves).
    Copy = 0x46, "COPY", Tensor;
    /// Copy with dtype conversion.
    Cast = 0x47, "CAST", Tensor;
    /// Fill a tensor with an immediate (observed on DVE in compiler NEFFs,
    /// initialising fp32 accumulators; name ours).
    Fill = 0x49, "FILL", Tensor;
    /// Random numbers.
    Rng = 0x4D, "RNG", Tensor;
    /// Batch-norm statistics.
    BatchNormStats = 0x60, "BATCH_NORM_STATS", Pool;
    /// Gather.
    Gather = 0x68, "GATHER", Pool;
    /// Transpose through the stream path.
    StreamTranspose = 0x6B, "STREAM_TRANSPOSE", Pool;
    /// Copy a tile into the engine's debug ring (ours: what NKI's
    /// `device_print` becomes; the compiler's encoding is not public).
    DebugTensorRead = 0x6F, "DEBUG_TENSOR_READ", Pool;
    /// Embedding-table update (GpSimd).
    EmbeddingUpdate = 0x79, "EMBEDDING_UPDATE", Pool;
    /// Marshal a custom op's argument block into the POOL engine (CTRL_MV form).
    LoadPoolArgument = 0x7A, "LOAD_POOL_ARGUMENT", Pool;
    /// Cross-lane reduce.
    CrossLaneReduce = 0x7C, "CROSS_LANE_REDUCE", Pool;
    /// Cross-lane reduce, second form.
    CrossLaneReduce2 = 0x7D, "CROSS_LANE_REDUCE_2", Pool;
    /// Fill with an index pattern.
    Iota = 0x7E, "IOTA", Pool;
    /// Dropout.
    Dropout = 0x7F, "DROPOUT", Pool;
    /// JPEG decode.
    JpegDecode = 0x81, "JPEG_DECODE", Decode;
    /// Wait on / signal semaphores and events (CTRL_ES).
    EventSemaphore = 0xA0, "EVENT_SEMAPHORE", Control;
    /// Stop the engine.
    Halt = 0xA1, "HALT", Control;
    /// Barrier until earlier work has finished.
    Drain = 0xA2, "DRAIN", Control;
    /// Store a 32-bit value at a device address (ours, provisional; lowers DMA triggers).
    Write = 0xA3, "WRITE", Control;
    /// No operation (used for its events).
    Nop = 0xA4, "NOP", Control;
    /// Emit a notification-queue record.
    Notify = 0xA6, "NOTIFY", Control;
    /// Sequencer register ALU.
    CtrlAl = 0xA8, "CTRL_AL", Control;
    /// Compare and branch.
    CtrlBr = 0xA9, "CTRL_BR", Control;
    /// Reset a range of events / semaphores.
    CtrlEr = 0xB0, "CTRL_ER", Control;
    /// First record of every compiled stream; payload all zero, meaning not pinned.
    PrologueB1 = 0xB1, "PROLOGUE_B1", Control;
    /// Poll an address into a register.
    CtrlPollSem = 0xB3, "CTRL_POLL_SEM", Control;
    /// Branch hint.
    BranchHint = 0xB5, "BRANCH_HINT", Control;
    /// Device-side memcpy DMA.
    DmaMemcpy = 0xB8, "DMAMEMCPY", Control;
    /// Indirect DMA.
    DmaIndirect = 0xBB, "DMA_INDIRECT", Control;
    /// Queue-tail write for a named DMA queue.
    PseudoDmaTrigger = 0xC1, "PSEUDO_DMA_TRIGGER", Pseudo;
    /// DMA memcpy fast path.
    PseudoDmaMemcpy = 0xC4, "PSEUDO_DMA_MEMCPY", Pseudo;
    /// Trigger a planned collective.
    PseudoTriggerCollective = 0xC8, "PSEUDO_TRIGGER_COLLECTIVE", Pseudo;
    /// Embedding update lowered to DMA config + LOAD_POOL_ARGUMENT + DRAIN + semaphore.
    PseudoEmbeddingUpdate = 0xCA, "PSEUDO_EMBEDDING_UPDATE", Pseudo;
    /// Single send/recv.
    PseudoSendRecv = 0xCB, "PSEUDO_SENDRECV", Pseudo;
    /// Block label (consumed, emits nothing).
    PseudoBranchLabel = 0xCC, "PSEUDO_BRANCH_LABEL", Pseudo;
    /// DMA queue-set swap.
    PseudoDmaSwapQueueSet = 0xCF, "PSEUDO_DMASWAP_QUEUE_SET", Pseudo;
    /// Function start marker.
    PseudoFunctionBegin = 0xD1, "PSEUDO_FUNCTION_BEGIN", Pseudo;
    /// Function return.
    PseudoFunctionReturn = 0xD2, "PSEUDO_FUNCTION_RETURN", Pseudo;
    /// Function call.
    PseudoFunctionCall = 0xD3, "PSEUDO_FUNCTION_CALL", Pseudo;
    /// Two-dimensional DMA on the issuing engine's dynamic queue set (seen in real NEFFs).
    PseudoDmaDirect2d = 0xD4, "PSEUDO_DMA_DIRECT2D", Pseudo;
    /// JPEG decode (v3, core 0 only).
    PseudoJpegDecode = 0xD7, "PSEUDO_JPEG_DECODE", Pseudo;
    /// Collective plan, second form (followed by PSEUDO_EXTENSION).
    PseudoTriggerCollective2 = 0xD9, "PSEUDO_TRIGGER_COLLECTIVE2", Pseudo;
    /// Extension record following 0xD9.
    PseudoExtension = 0xDA, "PSEUDO_EXTENSION", Pseudo;
    /// Load of the current rank id.
    PseudoCurProcessingRankId = 0xDB, "PSEUDO_CUR_PROCESSING_RANK_ID", Pseudo;
    /// Load of the global device id.
    PseudoGidLoad = 0xDC, "PSEUDO_GID_LOAD", Pseudo;
    /// Branch hint (pseudo form).
    PseudoBranchHint = 0xDD, "PSEUDO_BRANCH_HINT", Pseudo;
    /// Prefix with a sub-opcode (EXIT_EXECUTION, LIBRARY_RELOAD_INDEX).
    PseudoInst = 0xDF, "PSEUDO_INST", Pseudo;
    /// Sparsity compression.
    SparsityCompress = 0xE0, "SPARSITY_COMPRESS", Extended;
    /// Random numbers, second form.
    Rand2 = 0xE2, "RAND2", Extended;
    /// MX quantization.
    QuantizeMx = 0xE3, "QUANTIZE_MX", Extended;
    /// Indirect copy.
    IndirectCopy = 0xE7, "INDIRECT_COPY", Extended;
    /// Predicated copy (with optional reduce).
    CopyPredicatedReduce = 0xEA, "COPY_PREDICATED_REDUCE", Extended;
    /// Hand an op to a GpSimd core (custom ops).
    ExtendedInst = 0xF0, "EXTENDED_INST", Extended;
    /// Non-zero compaction with count.
    NonzeroWithCount = 0xF2, "NONZERO_WITH_COUNT", Extended;
    /// Explicitly invalid.
    Invalid = 0xFF, "INVALID", Extended;
}

/// First value of the pseudo band.
pub const PSEUDO_BAND_FIRST: u8 = 0xC1;
/// Last value of the pseudo band.
pub const PSEUDO_BAND_LAST: u8 = 0xDF;

impl Opcode {
    /// Whether a byte lies in the host-only pseudo band 0xC1..=0xDF.
    pub const fn in_pseudo_band(v: u8) -> bool {
        v >= PSEUDO_BAND_FIRST && v <= PSEUDO_BAND_LAST
    }

    /// Whether the runtime must rewrite this opcode before the device sees it.
    pub const fn is_pseudo(self) -> bool {
        Opcode::in_pseudo_band(self.to_u8())
    }

    /// The header word a host builder writes at +0: `0x10 << 8 | opcode`.
    pub const fn header_word(self) -> u16 {
        ((crate::record::INST_WORD_LEN as u16) << 8) | self.to_u8() as u16
    }
}

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:02X}", self.to_u8()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips() {
        for v in 0..=255u8 {
            assert_eq!(Opcode::from_u8(v).to_u8(), v);
        }
    }

    #[test]
    fn table_has_no_duplicates() {
        let mut seen = std::collections::HashSet::new();
        for op in Opcode::ALL {
            assert!(seen.insert(op.to_u8()), "duplicate value {op}");
            assert_eq!(Opcode::from_name(op.name().unwrap()), Some(*op));
        }
    }

    #[test]
    fn known_values_and_classes() {
        assert_eq!(Opcode::from_u8(0x7A), Opcode::LoadPoolArgument);
        assert_eq!(Opcode::LoadPoolArgument.header_word(), 0x107A);
        assert_eq!(Opcode::Drain.header_word(), 0x10A2);
        assert_eq!(Opcode::Matmul.engine_class(), EngineClass::Pe);
        assert_eq!(Opcode::Copy.engine_class(), EngineClass::Tensor);
        assert_eq!(
            Opcode::PseudoDmaDirect2d.engine_class(),
            EngineClass::Pseudo
        );
        assert!(Opcode::PseudoInst.is_pseudo());
        assert!(!Opcode::CtrlBr.is_pseudo());
        assert_eq!(Opcode::from_u8(0xC2), Opcode::Unknown(0xC2));
        assert!(Opcode::from_u8(0xC2).is_pseudo());
        assert_eq!(Opcode::from_u8(0xC2).engine_class(), EngineClass::Pseudo);
        assert_eq!(Opcode::from_u8(0x99).engine_class(), EngineClass::Unknown);
        assert_eq!(Opcode::Unknown(0x99).to_string(), "0x99");
    }
}
