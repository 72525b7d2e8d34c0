//! Small selector fields (one byte each) used inside instruction layouts:
//! dtype codes, ALU ops, activation functions, reductions and the control
//! selectors of branches and pseudo-instructions.
//!
//! A selector byte with no name here does not decode: the record falls back
//! to a raw record, so nothing is lost and nothing is guessed.

#[cfg(test)]
use super::field::Entropy;
use super::field::{Field, parse_uint};
use crate::dtype::Dtype;
use crate::record::RecordBytes;

/// A dtype byte (`nrt_dtype_t` numbering) as found in a record. Kept raw so
/// codes outside the known set still round-trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DtypeCode(pub u8);

impl DtypeCode {
    /// The code of a known dtype.
    pub fn of(d: Dtype) -> DtypeCode {
        DtypeCode(d.code())
    }

    /// The dtype, if the code is one we know.
    pub fn dtype(self) -> Option<Dtype> {
        Dtype::from_code(self.0)
    }
}

impl Field for DtypeCode {
    const SPANS: &'static [(usize, usize)] = &[(0, 1)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(DtypeCode(rec[off]))
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = self.0
    }
    fn to_asm(&self) -> String {
        match self.dtype() {
            Some(d) => d.name().to_string(),
            None => self.0.to_string(),
        }
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        if let Some(v) = parse_uint(text) {
            return u8::try_from(v)
                .map(DtypeCode)
                .map_err(|_| "a dtype name or code 0..=255");
        }
        Dtype::from_name(text)
            .map(DtypeCode::of)
            .ok_or("a dtype name (float16, bfloat16, float32, int32, ...) or code")
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        DtypeCode(e.u8())
    }
}

/// Two dtype codes packed as nibbles in one byte (low nibble = first input,
/// high nibble = second input), as TENSOR_TENSOR stores its input types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DtypePair {
    /// Dtype of the first input (low nibble).
    pub first: DtypeCode,
    /// Dtype of the second input (high nibble).
    pub second: DtypeCode,
}

impl Field for DtypePair {
    const SPANS: &'static [(usize, usize)] = &[(0, 1)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(DtypePair {
            first: DtypeCode(rec[off] & 0xF),
            second: DtypeCode(rec[off] >> 4),
        })
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = (self.first.0 & 0xF) | (self.second.0 << 4)
    }
    fn to_asm(&self) -> String {
        format!("{}/{}", self.first.to_asm(), self.second.to_asm())
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        const EXPECTED: &str = "two dtypes with codes below 16, as first/second";
        let (a, b) = text.split_once('/').ok_or(EXPECTED)?;
        let first = DtypeCode::from_asm(a).map_err(|_| EXPECTED)?;
        let second = DtypeCode::from_asm(b).map_err(|_| EXPECTED)?;
        if first.0 > 0xF || second.0 > 0xF {
            return Err(EXPECTED);
        }
        Ok(DtypePair { first, second })
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        let b = e.u8();
        DtypePair {
            first: DtypeCode(b & 0xF),
            second: DtypeCode(b >> 4),
        }
    }
}

macro_rules! byte_enum {
    (
        $(#[doc = $doc:literal])*
        $name:ident, $expected:literal {
            $( $(#[doc = $vdoc:literal])* $variant:ident = $value:literal, $asm:literal; )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[doc = $vdoc])* $variant, )*
        }

        impl $name {
            /// Every value, in table order (the first is the default).
            pub const ALL: &'static [$name] = &[ $( $name::$variant, )* ];

            /// Maps a byte to its variant.
            pub fn from_u8(v: u8) -> Option<$name> {
                match v {
                    $( $value => Some($name::$variant), )*
                    _ => None,
                }
            }

            /// The byte of this variant.
            pub fn to_u8(self) -> u8 {
                match self {
                    $( $name::$variant => $value, )*
                }
            }

            /// The assembler spelling.
            pub fn asm_name(self) -> &'static str {
                match self {
                    $( $name::$variant => $asm, )*
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::ALL[0]
            }
        }

        impl Field for $name {
            const SPANS: &'static [(usize, usize)] = &[(0, 1)];
            fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
                $name::from_u8(rec[off]).ok_or($expected)
            }
            fn write(&self, rec: &mut RecordBytes, off: usize) {
                rec[off] = self.to_u8()
            }
            fn to_asm(&self) -> String {
                self.asm_name().to_string()
            }
            fn from_asm(text: &str) -> Result<Self, &'static str> {
                $name::ALL.iter().copied().find(|v| v.asm_name() == text).ok_or($expected)
            }
            #[cfg(test)]
            fn from_entropy(e: &mut Entropy) -> Self {
                $name::ALL[usize::from(e.u8()) % $name::ALL.len()]
            }
        }
    };
}

byte_enum! {
    /// The ALU selector shared by tensor arithmetic, the sequencer register
    /// ALU (CTRL_AL) and collectives. ADD 4, SUB 5, MAX 8 and MIN 9 are the
    /// runtime's values; the rest are ours (docs/isa.md).
    AluOp, "an ALU op (bypass, and, or, xor, add, sub, mult, divide, max, min, pow, mod, shl, shr, is_eq, not_eq, is_lt, is_le, is_gt, is_ge, abs_diff)" {
        /// Pass the first operand through.
        Bypass = 0, "bypass";
        /// Bitwise and (integers; floats by bit pattern).
        And = 1, "and";
        /// Bitwise or.
        Or = 2, "or";
        /// Bitwise exclusive or.
        Xor = 3, "xor";
        /// a + b.
        Add = 4, "add";
        /// a - b.
        Sub = 5, "sub";
        /// a * b.
        Mult = 6, "mult";
        /// a / b.
        Divide = 7, "divide";
        /// max(a, b).
        Max = 8, "max";
        /// min(a, b).
        Min = 9, "min";
        /// a ** b.
        Pow = 10, "pow";
        /// a mod b (sign of b, like numpy).
        Mod = 11, "mod";
        /// a << b (integers).
        ShiftLeft = 12, "shl";
        /// a >> b (integers; arithmetic for signed types).
        ShiftRight = 13, "shr";
        /// 1 if a == b else 0.
        IsEq = 16, "is_eq";
        /// 1 if a != b else 0.
        NotEq = 17, "not_eq";
        /// 1 if a < b else 0.
        IsLt = 18, "is_lt";
        /// 1 if a <= b else 0.
        IsLe = 19, "is_le";
        /// 1 if a > b else 0.
        IsGt = 20, "is_gt";
        /// 1 if a >= b else 0.
        IsGe = 21, "is_ge";
        /// |a - b|.
        AbsDiff = 22, "abs_diff";
    }
}

byte_enum! {
    /// Activation function of ACTIVATE (ours).
    ActFunc, "an activation function (identity, relu, gelu, gelu_tanh, tanh, sigmoid, exp, log, rsqrt, reciprocal, silu, sqrt, square, abs, sign, softplus, erf, sin, cos)" {
        /// f(x) = x.
        Identity = 0, "identity";
        /// max(x, 0).
        Relu = 1, "relu";
        /// x * Phi(x), exact (erf) form.
        Gelu = 2, "gelu";
        /// GELU, tanh approximation.
        GeluTanh = 3, "gelu_tanh";
        /// tanh(x).
        Tanh = 4, "tanh";
        /// 1 / (1 + e^-x).
        Sigmoid = 5, "sigmoid";
        /// e^x.
        Exp = 6, "exp";
        /// ln(x).
        Log = 7, "log";
        /// 1 / sqrt(x).
        Rsqrt = 8, "rsqrt";
        /// 1 / x.
        Reciprocal = 9, "reciprocal";
        /// x * sigmoid(x).
        Silu = 10, "silu";
        /// sqrt(x).
        Sqrt = 11, "sqrt";
        /// x * x.
        Square = 12, "square";
        /// |x|.
        Abs = 13, "abs";
        /// -1, 0 or 1.
        Sign = 14, "sign";
        /// ln(1 + e^x).
        Softplus = 15, "softplus";
        /// erf(x).
        Erf = 16, "erf";
        /// sin(x).
        Sin = 17, "sin";
        /// cos(x).
        Cos = 18, "cos";
    }
}

byte_enum! {
    /// Reduction of POOL (ours).
    ReduceOp, "a reduction (sum, max, min, mean)" {
        /// Sum of the reduced elements.
        Sum = 0, "sum";
        /// Largest element.
        Max = 1, "max";
        /// Smallest element.
        Min = 2, "min";
        /// Sum divided by the number of reduced elements.
        Mean = 3, "mean";
    }
}

byte_enum! {
    /// PSUM accumulation flags of MATMUL: bit 0 starts a group (overwrite),
    /// bit 1 ends it. Observed in real NEFFs.
    Accumulate, "an accumulate mode (mid, start, stop, single)" {
        /// Neither first nor last: add into PSUM.
        Middle = 0, "mid";
        /// First of a group: overwrite PSUM.
        Start = 1, "start";
        /// Last of a group: add, then the group is complete.
        Stop = 2, "stop";
        /// A one-step group: overwrite and complete.
        Single = 3, "single";
    }
}

impl Accumulate {
    /// Whether this step overwrites PSUM instead of adding to it.
    pub fn overwrites(self) -> bool {
        self.to_u8() & 1 != 0
    }

    /// Whether this step closes the accumulation group.
    pub fn closes_group(self) -> bool {
        self.to_u8() & 2 != 0
    }
}

byte_enum! {
    /// Compare of CTRL_BR. EQ_IMM 3 and GT_IMM 6 are the runtime's values;
    /// the others are ours.
    BranchCmp, "a branch compare (always, eq, ne, lt, gt, le, ge)" {
        /// Branch unconditionally.
        Always = 0, "always";
        /// register == immediate.
        Eq = 3, "eq";
        /// register != immediate.
        Ne = 4, "ne";
        /// register < immediate.
        Lt = 5, "lt";
        /// register > immediate.
        Gt = 6, "gt";
        /// register <= immediate.
        Le = 7, "le";
        /// register >= immediate.
        Ge = 8, "ge";
    }
}

byte_enum! {
    /// How CTRL_BR names its target (runtime values).
    BranchTarget, "a branch target mode (register, rel_imm, rel_register)" {
        /// Absolute address in a register pair.
        Register = 1, "register";
        /// Relative offset in records from the immediate at +0x30.
        RelImm = 3, "rel_imm";
        /// Relative offset held in a register.
        RelRegister = 4, "rel_register";
    }
}

byte_enum! {
    /// Where CTRL_AL takes its second operand (runtime values).
    DataSource, "a data source (reg, imm)" {
        /// From a register.
        Reg = 0, "reg";
        /// From the immediate at +0x18.
        Imm = 1, "imm";
    }
}

byte_enum! {
    /// Sub-opcode of PSEUDO_INST (runtime values).
    PseudoSub, "a pseudo sub-opcode (exit_execution, library_reload_index)" {
        /// End of the program: the runtime's terminator scan looks for it.
        ExitExecution = 1, "exit_execution";
        /// Reload the GpSimd library with the given index.
        LibraryReloadIndex = 2, "library_reload_index";
    }
}

byte_enum! {
    /// Collective type of PSEUDO_TRIGGER_COLLECTIVE: libnrt's `enc_op_type`
    /// values (collectives spec §5.1; all-gather and all-reduce coincide with
    /// `nrt_cc_op_type_t`). docs/collectives.md, "NEFF encoding".
    CollectiveType, "a collective (all_gather, all_reduce, reduce_scatter, alltoall, permute)" {
        /// All-gather.
        AllGather = 0, "all_gather";
        /// All-reduce.
        AllReduce = 1, "all_reduce";
        /// Reduce-scatter.
        ReduceScatter = 4, "reduce_scatter";
        /// All-to-all.
        AllToAll = 7, "alltoall";
        /// Permute over a source/target pair set (send/recv is a permute of pairs).
        Permute = 8, "permute";
    }
}

byte_enum! {
    /// What CTRL_ER resets (ours).
    ResetTarget, "a reset target (semaphores, events)" {
        /// Semaphores first..=last become 0.
        Semaphores = 0, "semaphores";
        /// Events first..=last are cleared.
        Events = 1, "events";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_every_byte() {
        for v in 0..=255u8 {
            if let Some(op) = AluOp::from_u8(v) {
                assert_eq!(op.to_u8(), v);
                assert_eq!(AluOp::from_asm(op.asm_name()), Ok(op));
            }
        }
        assert_eq!(AluOp::Add.to_u8(), 4);
        assert_eq!(AluOp::Min.to_u8(), 9);
        assert_eq!(BranchCmp::Gt.to_u8(), 6);
        assert!(Accumulate::Single.overwrites() && Accumulate::Single.closes_group());
        assert!(!Accumulate::Middle.overwrites());
    }

    #[test]
    fn dtype_codes_print_names() {
        assert_eq!(DtypeCode(7).to_asm(), "float16");
        assert_eq!(DtypeCode(0x42).to_asm(), "66");
        assert_eq!(DtypeCode::from_asm("float32"), Ok(DtypeCode(10)));
        assert_eq!(DtypeCode::from_asm("66"), Ok(DtypeCode(66)));
        let p = DtypePair {
            first: DtypeCode(10),
            second: DtypeCode(7),
        };
        assert_eq!(DtypePair::from_asm(&p.to_asm()), Ok(p));
        assert!(DtypePair::from_asm("66/float16").is_err());
    }
}
