//! Every instruction layout, one table entry each: mnemonic, origin and the
//! fields with their record offsets. Change a layout here and the codec,
//! assembler, disassembler and property tests follow.

use super::dma_operand::DmaAccess;
use super::enums::{
    Accumulate, ActFunc, AluOp, BranchCmp, BranchTarget, CollectiveType, DataSource, DtypeCode,
    DtypePair, PseudoSub, ReduceOp, ResetTarget,
};
#[cfg(test)]
use super::field::Entropy;
use super::field::{F32Bits, Field, Name};
use super::sync::{ExtUpdate, ExtWait};
use super::{DecodeError, FieldSpec, Head, LayoutInfo, LayoutOrigin, SetFieldError, check_layout};
use crate::opcode::Opcode;
use crate::operand::{Tensor3d, Tensor4d};
use crate::record::{RECORD_SIZE, RecordBytes};

macro_rules! instructions {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $opcode:ident, $mnemonic:literal, $origin:ident {
            $( $(#[doc = $fdoc:literal])* $field:ident : $ty:ty = $off:literal, )*
        }
    )*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Debug, Clone, PartialEq, Default)]
            pub struct $variant {
                /// Debug fields and the events block.
                pub head: Head,
                $( $(#[doc = $fdoc])* pub $field: $ty, )*
            }

            impl $variant {
                /// Opcode of this layout.
                pub const OPCODE: Opcode = Opcode::$opcode;
                /// Assembler mnemonic.
                pub const MNEMONIC: &'static str = $mnemonic;
                /// Where the layout comes from.
                pub const ORIGIN: LayoutOrigin = LayoutOrigin::$origin;
                /// The fields of the layout, in assembler order.
                pub const FIELDS: &'static [FieldSpec] = &[
                    $( FieldSpec {
                        name: stringify!($field),
                        offset: $off,
                        spans: <$ty as Field>::SPANS,
                        ty: stringify!($ty),
                        doc: concat!("" $(, $fdoc)*),
                    }, )*
                ];

                /// Encodes to a 64-byte record.
                pub fn encode(&self) -> RecordBytes {
                    let mut rec = [0u8; RECORD_SIZE];
                    self.head.write(&mut rec, Self::OPCODE.to_u8());
                    $( self.$field.write(&mut rec, $off); )*
                    rec
                }

                /// Decodes a record of this opcode, strictly.
                pub fn decode(rec: &RecordBytes) -> Result<Self, DecodeError> {
                    check_layout(rec, Self::MNEMONIC, Self::FIELDS)?;
                    Ok(Self {
                        head: Head::read(rec),
                        $( $field: <$ty as Field>::read(rec, $off).map_err(|expected| DecodeError::Field {
                            mnemonic: Self::MNEMONIC,
                            field: stringify!($field),
                            offset: $off,
                            expected,
                        })?, )*
                    })
                }
            }

            impl From<$variant> for Instruction {
                fn from(v: $variant) -> Instruction {
                    Instruction::$variant(v)
                }
            }
        )*

        /// A decoded record: a typed layout, or raw bytes.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Instruction {
            $( $(#[doc = $doc])* $variant($variant), )*
            /// A record kept as bytes: an opcode without a layout, or a record
            /// that does not fit its opcode's layout.
            Raw {
                /// The record.
                bytes: RecordBytes,
            },
        }

        impl Instruction {
            /// Every mnemonic the assembler knows, in table order.
            pub const MNEMONICS: &'static [&'static str] = &[ $( $mnemonic, )* ];

            /// Every layout, in table order (for documentation and tools).
            pub const LAYOUTS: &'static [LayoutInfo] = &[ $( LayoutInfo {
                mnemonic: $mnemonic,
                opcode: Opcode::$opcode,
                origin: LayoutOrigin::$origin,
                doc: concat!("" $(, $doc)*),
                fields: $variant::FIELDS,
            }, )* ];

            /// Encodes to a 64-byte record.
            pub fn encode(&self) -> RecordBytes {
                match self {
                    $( Instruction::$variant(v) => v.encode(), )*
                    Instruction::Raw { bytes } => *bytes,
                }
            }

            pub(super) fn decode_known(rec: &RecordBytes) -> Option<Result<Instruction, DecodeError>> {
                let op = Opcode::from_u8(rec[0]);
                $( if op == Opcode::$opcode {
                    return Some($variant::decode(rec).map(Instruction::$variant));
                } )*
                None
            }

            /// Whether an opcode has a typed layout.
            pub fn has_layout(op: Opcode) -> bool {
                $( if op == Opcode::$opcode { return true; } )*
                false
            }

            /// The opcode of the instruction.
            pub fn opcode(&self) -> Opcode {
                match self {
                    $( Instruction::$variant(_) => Opcode::$opcode, )*
                    Instruction::Raw { bytes } => Opcode::from_u8(bytes[0]),
                }
            }

            /// The assembler mnemonic (`None` for raw records).
            pub fn mnemonic(&self) -> Option<&'static str> {
                match self {
                    $( Instruction::$variant(_) => Some($mnemonic), )*
                    Instruction::Raw { .. } => None,
                }
            }

            /// Where the layout comes from (`None` for raw records).
            pub fn layout_origin(&self) -> Option<LayoutOrigin> {
                match self {
                    $( Instruction::$variant(_) => Some(LayoutOrigin::$origin), )*
                    Instruction::Raw { .. } => None,
                }
            }

            /// The layout's fields (empty for raw records).
            pub fn layout_fields(&self) -> &'static [FieldSpec] {
                match self {
                    $( Instruction::$variant(_) => $variant::FIELDS, )*
                    Instruction::Raw { .. } => &[],
                }
            }

            /// Debug fields and events (`None` for raw records).
            pub fn head(&self) -> Option<&Head> {
                match self {
                    $( Instruction::$variant(v) => Some(&v.head), )*
                    Instruction::Raw { .. } => None,
                }
            }

            /// Mutable debug fields and events (`None` for raw records).
            pub fn head_mut(&mut self) -> Option<&mut Head> {
                match self {
                    $( Instruction::$variant(v) => Some(&mut v.head), )*
                    Instruction::Raw { .. } => None,
                }
            }

            /// Field names and their assembler spellings, in layout order.
            #[allow(unused_variables)]
            pub fn fields_asm(&self) -> Vec<(&'static str, String)> {
                match self {
                    $( Instruction::$variant(v) => vec![ $( (stringify!($field), v.$field.to_asm()), )* ], )*
                    Instruction::Raw { .. } => Vec::new(),
                }
            }

            /// Sets a field from its assembler spelling.
            #[allow(unused_variables)]
            pub fn set_field(&mut self, name: &str, text: &str) -> Result<(), SetFieldError> {
                match self {
                    $( Instruction::$variant(v) => match name {
                        $( stringify!($field) => {
                            v.$field = <$ty as Field>::from_asm(text).map_err(SetFieldError::Value)?;
                            Ok(())
                        } )*
                        _ => Err(SetFieldError::Unknown),
                    }, )*
                    Instruction::Raw { .. } => Err(SetFieldError::Unknown),
                }
            }

            /// A default-valued instruction for a mnemonic.
            pub fn from_mnemonic(mnemonic: &str) -> Option<Instruction> {
                match mnemonic {
                    $( $mnemonic => Some(Instruction::$variant($variant::default())), )*
                    _ => None,
                }
            }

            /// Builders of arbitrary valid instructions, one per layout.
            #[cfg(test)]
            pub(crate) fn arbitrary_builders() -> Vec<(&'static str, fn(&mut Entropy) -> Instruction)> {
                vec![ $( ($mnemonic, |e: &mut Entropy| {
                    #[allow(unused_variables)]
                    let head = Head::from_entropy(e);
                    Instruction::$variant($variant {
                        head,
                        $( $field: <$ty as Field>::from_entropy(e), )*
                    })
                }), )* ]
            }
        }
    };
}

instructions! {
    // ----- PE (observed) -----
    /// LDWEIGHTS 0x01: load the stationary operand into the PE array.
    LdWeights = LdWeights, "ldweights", Observed {
        /// Stationary operand pattern (SBUF); its first element feeds the last PE column.
        weights: Tensor3d = 0x10,
        /// Element type of the weights.
        dtype: DtypeCode = 0x20,
        /// Transpose pass (set on both records of a PE transpose).
        transpose: bool = 0x22,
        /// First PE row used (unpinned; 0 in every sample).
        row_start: u8 = 0x24,
        /// First PE column used (unpinned; 0 in every sample).
        col_start: u8 = 0x25,
        /// Contraction rows = partitions read (K).
        rows: u8 = 0x26,
        /// PE columns = stationary free size (M).
        cols: u8 = 0x27,
        /// Row-group mask (four groups of 32).
        row_mask: u8 = 0x2C,
        /// Column-group mask (four groups of 32).
        col_mask: u8 = 0x2D,
    }
    /// MATMUL 0x02: stream the moving operand through the loaded weights into PSUM.
    Matmul = Matmul, "matmul", Observed {
        /// Moving operand pattern (SBUF), `num[0]` = moving free size (N).
        moving: Tensor3d = 0x10,
        /// Element type of the moving data.
        dtype: DtypeCode = 0x20,
        /// Transpose pass: PSUM receives the input dtype instead of fp32.
        transpose: bool = 0x22,
        /// First PE row used.
        row_start: u8 = 0x24,
        /// First PE column used.
        col_start: u8 = 0x25,
        /// Contraction rows (K).
        rows: u8 = 0x26,
        /// PE columns = output partitions (M).
        cols: u8 = 0x27,
        /// PSUM accumulation-group position.
        accumulate: Accumulate = 0x2B,
        /// Row-group mask.
        row_mask: u8 = 0x2C,
        /// Column-group mask.
        col_mask: u8 = 0x2D,
        /// PSUM output pattern.
        psum: Tensor3d = 0x30,
    }
    // ----- ACT / DVE / POOL compute -----
    /// ACTIVATE 0x21 (ours): out = func(in * scale + bias) per element.
    Activate = Activate, "activate", Ours {
        /// Function applied.
        func: ActFunc = 0x0C,
        /// Input element type.
        in_dtype: DtypeCode = 0x0D,
        /// Output element type.
        out_dtype: DtypeCode = 0x0E,
        /// Partitions processed, starting at partition 0 of each address.
        partitions: u8 = 0x0F,
        /// Input pattern.
        input: Tensor3d = 0x10,
        /// Output pattern.
        output: Tensor3d = 0x20,
        /// Multiplier applied before the bias.
        scale: F32Bits = 0x30,
        /// Immediate bias (used unless `bias_from_sbuf`).
        bias: F32Bits = 0x34,
        /// Per-partition fp32 bias address (SBUF offset) when `bias_from_sbuf`.
        bias_addr: u32 = 0x38,
        /// Take the bias from `bias_addr` in each partition.
        bias_from_sbuf: bool = 0x3C,
    }
    /// ACTIVATION_TABLE_LOAD 0x23: load the activation tables (no payload; a no-op for the simulator).
    ActivationTableLoad = ActivationTableLoad, "act_table_load", Observed {}
    /// TENSOR_TENSOR_ARITH_OP 0x41: out = in0 op in1, element-wise.
    TensorTensor = TensorTensorArith, "tensor_tensor", Observed {
        /// Input dtypes (low nibble in0, high nibble in1).
        in_dtypes: DtypePair = 0x0C,
        /// Output dtype.
        out_dtype: DtypeCode = 0x0D,
        /// ALU op.
        op: AluOp = 0x0E,
        /// Partitions processed.
        partitions: u8 = 0x0F,
        /// First input.
        in0: Tensor3d = 0x10,
        /// Second input.
        in1: Tensor3d = 0x20,
        /// Output.
        out: Tensor3d = 0x30,
    }
    /// TENSOR_SCALAR_ARITH_OP 0x43 (ours): t = in op0 scalar0 (operands swapped if reverse0); out = t op1 scalar1.
    TensorScalar = TensorScalarArith, "tensor_scalar", Ours {
        /// First ALU op.
        op0: AluOp = 0x0C,
        /// Input dtype.
        in_dtype: DtypeCode = 0x0D,
        /// Output dtype.
        out_dtype: DtypeCode = 0x0E,
        /// Partitions processed.
        partitions: u8 = 0x0F,
        /// Input.
        input: Tensor3d = 0x10,
        /// Output.
        output: Tensor3d = 0x20,
        /// First scalar.
        scalar0: F32Bits = 0x30,
        /// Compute scalar0 op0 in instead of in op0 scalar0.
        reverse0: bool = 0x34,
        /// Second ALU op (bypass = none).
        op1: AluOp = 0x35,
        /// Compute scalar1 op1 t instead of t op1 scalar1.
        reverse1: bool = 0x36,
        /// Second scalar.
        scalar1: F32Bits = 0x38,
    }
    /// POOL 0x45 (ours): reduce the input along the free dimensions set in `axes`.
    Pool = Pool, "pool", Ours {
        /// Reduction.
        op: ReduceOp = 0x0C,
        /// Input dtype.
        in_dtype: DtypeCode = 0x0D,
        /// Output dtype.
        out_dtype: DtypeCode = 0x0E,
        /// Partitions processed.
        partitions: u8 = 0x0F,
        /// Input.
        input: Tensor3d = 0x10,
        /// Output (the kept dimensions, in order).
        output: Tensor3d = 0x20,
        /// Bit k set = reduce input dimension k (0 innermost).
        axes: u8 = 0x30,
    }
    /// COPY 0x46: element-wise move (no conversion when the dtypes match).
    Copy = Copy, "copy", Observed {
        /// Source frame.
        src: Tensor4d = 0x0C,
        /// Source dtype.
        in_dtype: DtypeCode = 0x20,
        /// Destination dtype.
        out_dtype: DtypeCode = 0x21,
        /// Partitions processed.
        partitions: u8 = 0x22,
        /// Destination frame.
        dst: Tensor4d = 0x2C,
    }
    /// CAST 0x47: element-wise copy with dtype conversion.
    Cast = Cast, "cast", Observed {
        /// Source frame.
        src: Tensor4d = 0x0C,
        /// Source dtype.
        in_dtype: DtypeCode = 0x20,
        /// Destination dtype.
        out_dtype: DtypeCode = 0x21,
        /// Partitions processed.
        partitions: u8 = 0x22,
        /// Destination frame.
        dst: Tensor4d = 0x2C,
    }
    /// FILL 0x49 (observed on DVE; name ours): every element of the destination frame becomes `imm`.
    Fill = Fill, "fill", Observed {
        /// Fill value, an f32 converted to the destination dtype (where the source frame would start; 0.0 in every sample, position LOW).
        imm: F32Bits = 0x0C,
        /// Elements written per partition (u32 at +0x1C; equals the destination frame's element count).
        count: u32 = 0x1C,
        /// Value dtype (0x0A float32 in every sample).
        in_dtype: DtypeCode = 0x20,
        /// Destination dtype (0 = the value dtype).
        out_dtype: DtypeCode = 0x21,
        /// Partitions processed.
        partitions: u8 = 0x22,
        /// Destination frame.
        dst: Tensor4d = 0x2C,
    }
    /// STREAM_TRANSPOSE 0x6B (ours): `out[j][i] = in[i][j]` across partitions and the free dimension.
    StreamTranspose = StreamTranspose, "transpose", Ours {
        /// Input dtype.
        in_dtype: DtypeCode = 0x0D,
        /// Output dtype.
        out_dtype: DtypeCode = 0x0E,
        /// Input partitions (= output free size).
        partitions: u8 = 0x0F,
        /// Input (free size = output partitions).
        input: Tensor3d = 0x10,
        /// Output.
        output: Tensor3d = 0x20,
    }
    /// DEBUG_TENSOR_READ 0x6F (ours): copy a tile, bit-exact, into the engine's debug ring (what `device_print` becomes).
    DebugTensorRead = DebugTensorRead, "debug_print", Ours {
        /// Element type of the tile (recorded in the ring entry; no conversion).
        dtype: DtypeCode = 0x0C,
        /// Partitions read, starting at the partition of `input`'s address.
        partitions: u8 = 0x0F,
        /// The tile (SBUF or PSUM).
        input: Tensor3d = 0x10,
        /// Device address of the engine's debug ring; the runtime writes it at load (a NEFF leaves 0).
        ring: u64 = 0x20,
        /// The print's prefix (the host names the dump directory after it).
        prefix: Name<24> = 0x28,
    }
    /// EMBEDDING_UPDATE 0x79 (ours): `table[indices[i]] += updates[i]`, row by row.
    EmbeddingUpdate = EmbeddingUpdate, "embedding_update", Ours {
        /// Table and update element type.
        dtype: DtypeCode = 0x0C,
        /// Index element type.
        index_dtype: DtypeCode = 0x0D,
        /// Partitions holding indices/updates.
        partitions: u8 = 0x0F,
        /// Row indices.
        indices: Tensor3d = 0x10,
        /// Update rows.
        updates: Tensor3d = 0x20,
        /// Device address of the table.
        table_addr: u64 = 0x30,
        /// Elements per row.
        row_elems: u32 = 0x38,
        /// Rows in the table (bounds check).
        num_rows: u32 = 0x3C,
    }
    /// LOAD_POOL_ARGUMENT 0x7A: the runtime's CTRL_MV record carrying a custom op's arguments.
    LoadPoolArgument = LoadPoolArgument, "load_pool_argument", Runtime {
        /// CTRL_MV num_mov (0 from the builder).
        num_mov: u8 = 0x0C,
        /// CTRL_MV dtype (0 from the builder).
        dtype: DtypeCode = 0x0D,
        /// CTRL_MV move_source (3 from the builder).
        move_source: u8 = 0x0E,
        /// Embedding table SBUF byte offset.
        embedding_table_lo: u32 = 0x20,
        /// Second word of the split address: the builder writes lo + 4.
        embedding_table_hi: u32 = 0x24,
        /// SBUF base address for the op.
        sbuf_base_addr: u64 = 0x28,
        /// Address the kernel reads its scalar argument from.
        one_value_read_addr: u64 = 0x30,
        /// Semaphore-increment address the kernel writes on completion.
        completion_write_addr: u64 = 0x38,
    }
    /// IOTA 0x7E (ours): `out[p][i0][i1][i2] = base + p*partition_step + i0*step0 + i1*step1 + i2*step2` (f32 math); all steps 0 = memset.
    Iota = Iota, "iota", Ours {
        /// Output dtype.
        dtype: DtypeCode = 0x0D,
        /// Partitions written.
        partitions: u8 = 0x0F,
        /// Output pattern.
        output: Tensor3d = 0x10,
        /// Value at the first element.
        base: F32Bits = 0x20,
        /// Increment per partition.
        partition_step: F32Bits = 0x24,
        /// Increment per step of dimension 0.
        step0: F32Bits = 0x28,
        /// Increment per step of dimension 1.
        step1: F32Bits = 0x2C,
        /// Increment per step of dimension 2.
        step2: F32Bits = 0x30,
    }
    // ----- control -----
    /// EVENT_SEMAPHORE 0xA0: pure sync; the events block plus a second wait/update at +0x20.
    EventSemaphore = EventSemaphore, "event_semaphore", Observed {
        /// Second wait (+0x20/+0x21, value at +0x24).
        ext_wait: ExtWait = 0x20,
        /// Second update (+0x22/+0x23, value at +0x28).
        ext_update: ExtUpdate = 0x22,
    }
    /// HALT 0xA1: the engine stops (no payload).
    Halt = Halt, "halt", Ours {}
    /// DRAIN 0xA2: barrier until all earlier work of the engine (and its cores) has finished.
    Drain = Drain, "drain", Runtime {}
    /// WRITE 0xA3 (ours, provisional): store a 32-bit value at a device address; the runtime lowers DMA triggers to it (a queue's tail-increment register).
    Write = Write, "write", Ours {
        /// Device address written (a register or memory).
        addr: u64 = 0x10,
        /// Value stored (4 bytes, little-endian); named `data` because `value=` is the events-block key.
        data: u32 = 0x18,
    }
    /// NOP 0xA4: does nothing but its events.
    Nop = Nop, "nop", Observed {}
    /// NOTIFY 0xA6 (ours): write a 16-byte record into notification queue `queue`.
    Notify = Notify, "notify", Ours {
        /// Notification queue id.
        queue: u8 = 0x0C,
        /// Runtime subtype (2 START, 3 END, 6 CUSTOM, ...).
        subtype: u16 = 0x0E,
        /// Custom sub-id (subtype 6).
        sub_id: u16 = 0x10,
        /// Payload value.
        payload: u32 = 0x14,
    }
    /// CTRL_AL 0xA8: sequencer register ALU, dst = src0 op (imm or register).
    CtrlAl = CtrlAl, "alu", Runtime {
        /// ALU op.
        op: AluOp = 0x0C,
        /// Operand type.
        dtype: DtypeCode = 0x0D,
        /// Source of the second operand.
        src1: DataSource = 0x0E,
        /// First source register.
        src0_reg: u8 = 0x10,
        /// Destination register.
        dst_reg: u8 = 0x14,
        /// Immediate (or, with src1 = reg, the second register number; ours).
        imm: u64 = 0x18,
    }
    /// CTRL_BR 0xA9: compare a register with an immediate and branch.
    CtrlBr = CtrlBr, "branch", Runtime {
        /// Compare.
        cmp: BranchCmp = 0x0C,
        /// Compare type (int32 8, uint32 9).
        dtype: DtypeCode = 0x0D,
        /// Target mode.
        target: BranchTarget = 0x0E,
        /// Compare immediate.
        imm: u32 = 0x10,
        /// Register compared.
        cmp_reg: u8 = 0x20,
        /// Target register (low).
        target_reg_lo: u8 = 0x22,
        /// Target register (high).
        target_reg_hi: u8 = 0x23,
        /// Relative target in records (must fit 32 bits).
        rel_offset: i64 = 0x30,
    }
    /// CTRL_ER 0xB0 (ours): reset semaphores or events first..=last.
    CtrlEr = CtrlEr, "reset_range", Ours {
        /// What is reset.
        target: ResetTarget = 0x0C,
        /// First index.
        first: u8 = 0x0D,
        /// Last index (inclusive).
        last: u8 = 0x0E,
    }
    /// 0xB1: first record of every compiled stream, all-zero payload; a no-op.
    PrologueB1 = PrologueB1, "prologue_b1", Observed {}
    /// CTRL_POLL_SEM 0xB3 (ours): read `addr` `count` times, keep the minimum in `dst_reg`.
    CtrlPollSem = CtrlPollSem, "poll_sem", Ours {
        /// Destination register.
        dst_reg: u8 = 0x0C,
        /// Number of reads.
        count: u16 = 0x0E,
        /// Address polled.
        addr: u64 = 0x10,
    }
    // ----- pseudo band -----
    /// PSEUDO_DMA_TRIGGER 0xC1: becomes a queue-tail write for the named queue.
    PseudoDmaTrigger = PseudoDmaTrigger, "dma_trigger", Runtime {
        /// DMA queue name.
        queue: Name<32> = 0x0C,
        /// Use the raw descriptor count.
        use_raw_count: u32 = 0x2C,
        /// Block id or descriptor count.
        block_id: u32 = 0x30,
    }
    /// PSEUDO_TRIGGER_COLLECTIVE 0xC8: one collective trigger (needs update = sem++).
    PseudoTriggerCollective = PseudoTriggerCollective, "trigger_collective", Runtime {
        /// Reduction op (add 4).
        op: AluOp = 0x0C,
        /// Element type (float32 0x0A).
        dtype: DtypeCode = 0x0D,
        /// Replica group set (permute: source/target pair set), an index into def.json's list.
        group_id: u16 = 0x0E,
        /// Input tensor: a def.json var_id.
        input_tensor: u32 = 0x10,
        /// Output tensor: a def.json var_id.
        output_tensor: u32 = 0x14,
        /// Elements of the per-rank unit.
        num_elements: u64 = 0x18,
        /// Collective type (enc_op_type: all_gather 0, all_reduce 1, reduce_scatter 4, alltoall 7, permute 8).
        collective: CollectiveType = 0x20,
        /// Source offset in elements.
        src_offset: u64 = 0x30,
        /// Destination offset in elements.
        dst_offset: u64 = 0x38,
    }
    /// PSEUDO_EMBEDDING_UPDATE 0xCA (ours): lowered to DMA config, LOAD_POOL_ARGUMENT, DRAIN and a semaphore.
    PseudoEmbeddingUpdate = PseudoEmbeddingUpdate, "pseudo_embedding_update", Ours {
        /// DMA queue of the update.
        queue: u8 = 0x0C,
        /// Embedding table SBUF byte offset.
        embedding_table: u32 = 0x10,
        /// SBUF base address.
        sbuf_base_addr: u64 = 0x18,
        /// DMA source address.
        src_addr: u64 = 0x20,
        /// DMA destination address.
        dst_addr: u64 = 0x28,
        /// DMA byte count.
        bytes: u32 = 0x30,
    }
    /// PSEUDO_BRANCH_LABEL 0xCC: a block label, consumed at load.
    PseudoBranchLabel = PseudoBranchLabel, "branch_label", Observed {}
    /// PSEUDO_FUNCTION_BEGIN 0xD1: function split marker.
    PseudoFunctionBegin = PseudoFunctionBegin, "function_begin", Runtime {
        /// Function name.
        name: Name<36> = 0x0C,
        /// Semaphores to reset on return.
        return_reset_semaphores: u8 = 0x30,
        /// Return-address register (low).
        return_addr_reg_lo: u8 = 0x31,
        /// Return-address register (high).
        return_addr_reg_hi: u8 = 0x32,
    }
    /// PSEUDO_FUNCTION_RETURN 0xD2: drain, barrier, branch to the return address (no payload; ours).
    PseudoFunctionReturn = PseudoFunctionReturn, "function_return", Ours {}
    /// PSEUDO_FUNCTION_CALL 0xD3: call a function by name with an argument table.
    PseudoFunctionCall = PseudoFunctionCall, "function_call", Runtime {
        /// Function name.
        name: Name<36> = 0x0C,
        /// Var id of the argument table.
        args_table_var_id: u32 = 0x30,
    }
    /// 0xD4: two-dimensional DMA on the engine's dynamic queue set (observed; name MED).
    PseudoDmaDirect2d = PseudoDmaDirect2d, "dma2d", Observed {
        /// Reserved flags (0 in every sample).
        flags: u8 = 0x0C,
        /// Completion semaphore (= the queue slot).
        sem: u8 = 0x0D,
        /// Amount added to the semaphore at completion (16 = one per DMA engine).
        sem_add: u8 = 0x0E,
        /// Source side.
        src: DmaAccess = 0x10,
        /// Destination side.
        dst: DmaAccess = 0x28,
        /// Source dtype.
        src_dtype: DtypeCode = 0x3E,
        /// Destination dtype (the DMA converts).
        dst_dtype: DtypeCode = 0x3F,
    }
    /// PSEUDO_INST 0xDF: sub-opcode prefix (EXIT_EXECUTION ends a program).
    PseudoInst = PseudoInst, "pseudo_inst", Runtime {
        /// Sub-opcode.
        sub: PseudoSub = 0x0C,
        /// Library index for LIBRARY_RELOAD_INDEX (ours).
        index: u32 = 0x10,
    }
    // ----- extended -----
    /// COPY_PREDICATED 0xEA (ours): dst = src where mask != 0 (== 0 if invert); select is a copy then this.
    CopyPredicated = CopyPredicatedReduce, "copy_predicated", Ours {
        /// Mask dtype.
        mask_dtype: DtypeCode = 0x0C,
        /// Data dtype.
        dtype: DtypeCode = 0x0D,
        /// Copy where the mask is zero instead.
        invert: bool = 0x0E,
        /// Partitions processed.
        partitions: u8 = 0x0F,
        /// Mask.
        mask: Tensor3d = 0x10,
        /// Source.
        src: Tensor3d = 0x20,
        /// Destination (keeps its value where the mask says no).
        dst: Tensor3d = 0x30,
    }
    /// EXTENDED_INST 0xF0 (ours): hand an op to a GpSimd core (kernel table `spec`).
    ExtendedInst = ExtendedInst, "extended_inst", Ours {
        /// Kernel-table spec column.
        spec: u8 = 0x0C,
        /// The op reads memory.
        has_read: bool = 0x0D,
        /// The op writes memory.
        has_write: bool = 0x0E,
        /// Ports used.
        ports: u8 = 0x0F,
        /// First data word.
        data0: u64 = 0x10,
        /// Second data word.
        data1: u64 = 0x18,
    }
}
