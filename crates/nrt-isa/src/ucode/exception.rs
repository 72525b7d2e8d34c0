//! Why a GPSIMD op failed: the cause in the low byte of a GpsimdException
//! error record's detail (`docs/gpsimd.md` §8).

/// Cause of a GPSIMD exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum GpsimdCause {
    /// WebAssembly out-of-bounds memory or table access.
    MemoryOob = 1,
    /// `unreachable`, integer divide by zero / overflow, bad conversion or
    /// indirect call.
    IllegalInstruction = 2,
    /// The kernel exhausted its stack.
    StackOverflow = 3,
    /// A tensor access outside its tensor or the guest memory.
    TensorOob = 4,
    /// The kernel entry returned a nonzero status.
    KernelStatus = 5,
    /// The image, its table or its module is invalid.
    BadImage = 6,
    /// No kernel for (spec, opcode).
    NoKernel = 7,
    /// A needed Q7 core is held in run-stall.
    Stalled = 8,
    /// A library-set row is invalid or unreadable.
    BadLibSet = 9,
    /// The simulated Q7 core failed inside the simulator itself (its
    /// invocation panicked); no kernel fault.
    SimulatorFault = 10,
}

/// Q7-index nibble used for causes that belong to the whole cluster.
pub const CLUSTER_Q7: u8 = 0xF;

impl GpsimdCause {
    /// Every cause, by code.
    pub const ALL: [GpsimdCause; 10] = [
        GpsimdCause::MemoryOob,
        GpsimdCause::IllegalInstruction,
        GpsimdCause::StackOverflow,
        GpsimdCause::TensorOob,
        GpsimdCause::KernelStatus,
        GpsimdCause::BadImage,
        GpsimdCause::NoKernel,
        GpsimdCause::Stalled,
        GpsimdCause::BadLibSet,
        GpsimdCause::SimulatorFault,
    ];

    /// The cause with code `code`.
    pub fn from_code(code: u8) -> Option<GpsimdCause> {
        GpsimdCause::ALL.into_iter().find(|c| *c as u8 == code)
    }

    /// The upper-case name the runtime logs after "GPSIMD EXCEPTION OCCURRED: ".
    pub fn name(self) -> &'static str {
        match self {
            GpsimdCause::MemoryOob => "MEMORY OUT OF BOUNDS",
            GpsimdCause::IllegalInstruction => "ILLEGAL INSTRUCTION",
            GpsimdCause::StackOverflow => "STACK OVERFLOW",
            GpsimdCause::TensorOob => "TENSOR ACCESS OUT OF BOUNDS",
            GpsimdCause::KernelStatus => "KERNEL RETURNED FAILURE",
            GpsimdCause::BadImage => "INVALID KERNEL IMAGE",
            GpsimdCause::NoKernel => "NO KERNEL FOR OPCODE",
            GpsimdCause::Stalled => "CORE IN RUN-STALL",
            GpsimdCause::BadLibSet => "INVALID LIBRARY SET",
            GpsimdCause::SimulatorFault => "SIMULATOR FAULT",
        }
    }

    /// Error-record detail: `(q7 << 8) | cause` (`q7` 0..8, or
    /// [`CLUSTER_Q7`]).
    pub fn detail(self, q7: u8) -> u16 {
        u16::from(q7 & 0xF) << 8 | self as u16
    }

    /// Splits an error-record detail into (cause, Q7 index).
    pub fn from_detail(detail: u16) -> Option<(GpsimdCause, u8)> {
        Some((GpsimdCause::from_code(detail as u8)?, ((detail >> 8) & 0xF) as u8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_round_trip() {
        for c in GpsimdCause::ALL {
            for q in [0u8, 7, CLUSTER_Q7] {
                assert_eq!(GpsimdCause::from_detail(c.detail(q)), Some((c, q)));
            }
        }
        assert_eq!(GpsimdCause::from_detail(0x0700), None);
        assert_eq!(GpsimdCause::MemoryOob.detail(3), 0x301);
    }
}
