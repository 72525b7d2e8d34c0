//! Why a NEFF cannot become a program.

use thiserror::Error;

/// A NEFF that parsed but does not describe a program this runtime can
/// build. Every variant names the subgraph and the offending item.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProgramError {
    /// A var's declaration is incomplete or contradictory.
    #[error("{subgraph}: var {var:?}: {reason}")]
    BadVar {
        /// Subgraph.
        subgraph: String,
        /// Var name.
        var: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// A `file` var's constant could not be read.
    #[error("{subgraph}: constant of var {var:?}: {reason}")]
    BadConstant {
        /// Subgraph.
        subgraph: String,
        /// Var name.
        var: String,
        /// The reader's error.
        reason: String,
    },
    /// A queue set or DMA block is not usable.
    #[error("{subgraph}: {what}: {reason}")]
    BadDma {
        /// Subgraph.
        subgraph: String,
        /// Which queue set / block / descriptor.
        what: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// An engine binary is not a whole number of 64-byte records.
    #[error("{subgraph}: {engine} instruction stream is {len} bytes, not a multiple of 64")]
    BadStream {
        /// Subgraph.
        subgraph: String,
        /// Engine name.
        engine: &'static str,
        /// Stream length.
        len: usize,
    },
}
