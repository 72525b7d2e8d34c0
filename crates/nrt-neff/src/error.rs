//! The one error type of this crate.
//!
//! Every variant names what was wrong, where (the archive member path when
//! there is one) and what was expected, so a caller can print it as a single
//! line. The runtime maps most variants to `NRT_INVALID` and the
//! version/feature/packager family to `NRT_UNSUPPORTED_NEFF_VERSION`; use
//! [`NeffError::is_unsupported_version`] to tell them apart.

use crate::hash::HashKind;

/// Why a NEFF could not be read, validated or written.
#[derive(Debug, thiserror::Error)]
pub enum NeffError {
    /// The file is shorter than the fixed 1024-byte header.
    #[error("truncated NEFF header: got {len} bytes, expected at least 1024")]
    TruncatedHeader {
        /// Bytes available.
        len: usize,
    },
    /// `header_size` is not the only value NEFFs use.
    #[error("invalid NEFF header_size {found}, expected 1024")]
    BadHeaderSize {
        /// Value found in the header.
        found: u64,
    },
    /// `data_size` claims more payload than the file holds.
    #[error("NEFF data_size {declared} exceeds the {available} bytes after the header")]
    DataSizeMismatch {
        /// Value of the header's `data_size`.
        declared: u64,
        /// Bytes actually present after the header.
        available: u64,
    },
    /// Hash verification was requested and the payload digest differs.
    #[error("NEFF {kind} hash mismatch: header holds {expected}, payload hashes to {found}")]
    HashMismatch {
        /// Digest kind selected by `pkg_version`.
        kind: HashKind,
        /// Hex digest stored in the header.
        expected: String,
        /// Hex digest computed over the payload.
        found: String,
    },
    /// `neff_version_major` is newer than this reader understands.
    #[error("NEFF version {major}.{minor} is not supported, accepted major versions 0..=2")]
    UnsupportedVersion {
        /// Major version from the header.
        major: u64,
        /// Minor version from the header.
        minor: u64,
    },
    /// A version-2 NEFF sets incompatible-feature bits this runtime lacks.
    #[error(
        "NEFF feature_bits {feature_bits:#x} use unknown bits {unknown:#x}; supported mask is {supported:#x}"
    )]
    UnsupportedFeatureBits {
        /// The header's `feature_bits`.
        feature_bits: u64,
        /// The offending bits.
        unknown: u64,
        /// Bits this reader accepts.
        supported: u64,
    },
    /// `pkg_version` selects a packaging this reader does not know.
    #[error("unsupported NEFF packager version {pkg_version}, expected 1 (SHA-256) or 2 (MD5)")]
    UnsupportedPackager {
        /// The header's `pkg_version`.
        pkg_version: u64,
    },
    /// The payload is not a readable (gzip-compressed or plain) tar archive.
    #[error("corrupt NEFF archive{}: {message}", at(path))]
    CorruptArchive {
        /// Member being read when the problem appeared, if any.
        path: Option<String>,
        /// What the decoder reported.
        message: String,
    },
    /// A member path escapes the archive root (`..`) or is absolute.
    #[error("refused archive member {path:?}: {reason}; expected a relative path inside the NEFF")]
    UnsafePath {
        /// The offending path as stored.
        path: String,
        /// Which rule it broke.
        reason: &'static str,
    },
    /// A member is a link, device or other non-regular entry.
    #[error("refused archive member {path:?} of type {kind}; expected a regular file or directory")]
    UnsupportedEntry {
        /// The member path.
        path: String,
        /// The tar entry type found.
        kind: String,
    },
    /// The same path appears twice in the archive.
    #[error("duplicate archive member {path:?}; expected every path once")]
    DuplicateMember {
        /// The repeated path.
        path: String,
    },
    /// More members than [`crate::ReadLimits::max_members`].
    #[error("NEFF archive has more than {limit} members")]
    TooManyMembers {
        /// The configured limit.
        limit: usize,
    },
    /// Decompressed content exceeds [`crate::ReadLimits::max_total_bytes`].
    #[error("NEFF archive member {path:?} takes the decompressed size past the {limit}-byte limit")]
    TooLarge {
        /// Member that crossed the limit.
        path: String,
        /// The configured limit.
        limit: u64,
    },
    /// No subgraph definition could be found, or a listed one is absent.
    #[error("missing subgraph definition {path:?} in the NEFF archive")]
    MissingDefJson {
        /// The path that was expected.
        path: String,
    },
    /// A manifest names a member that is not in the archive.
    #[error("member {path:?} referenced by {referenced_by} is missing from the NEFF archive")]
    MissingMember {
        /// The missing path.
        path: String,
        /// Which file and key named it.
        referenced_by: String,
    },
    /// A JSON member does not parse or does not fit its schema.
    #[error("invalid JSON in {path}: {message}")]
    Json {
        /// The member path.
        path: String,
        /// What serde reported.
        message: String,
    },
    /// A manifest is well-formed JSON but inconsistent (bad index, etc.).
    #[error("invalid manifest {path}: {message}")]
    Manifest {
        /// The member path.
        path: String,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A DMA descriptor names a var that def.json does not declare.
    #[error("{path}: DMA block {block} descriptor {desc} names var {var:?}, which def.json does not declare")]
    UndeclaredVar {
        /// Engine JSON (or def.json) holding the descriptor.
        path: String,
        /// DMA block id.
        block: i64,
        /// Index of the descriptor in the block.
        desc: usize,
        /// The unknown var name.
        var: String,
    },
    /// A DMA block names a queue set that def.json does not declare.
    #[error("{path}: DMA block {block} names queue {queue:?}, which def.json's dma_queue does not declare")]
    UndeclaredQueue {
        /// Engine JSON (or def.json) holding the block.
        path: String,
        /// DMA block id.
        block: i64,
        /// The unknown queue or instance name.
        queue: String,
    },
    /// A descriptor's steps and sizes lists differ in length.
    #[error("{path}: DMA block {block} descriptor {desc}: {side}_steps has {steps} entries but {side}_sizes has {sizes}; expected equal lengths")]
    StepsSizesMismatch {
        /// Engine JSON (or def.json) holding the descriptor.
        path: String,
        /// DMA block id.
        block: i64,
        /// Index of the descriptor in the block.
        desc: usize,
        /// `from` or `to`.
        side: &'static str,
        /// Length of the steps list.
        steps: usize,
        /// Length of the sizes list.
        sizes: usize,
    },
    /// A descriptor access pattern has more than four dimensions.
    #[error("{path}: DMA block {block} descriptor {desc}: {side} access pattern has {dims} dimensions, at most 4 are allowed")]
    TooManyDims {
        /// Engine JSON (or def.json) holding the descriptor.
        path: String,
        /// DMA block id.
        block: i64,
        /// Index of the descriptor in the block.
        desc: usize,
        /// `from` or `to`.
        side: &'static str,
        /// Number of dimensions found.
        dims: usize,
    },
    /// An engine instruction stream is not a whole number of 64-byte slots.
    #[error("instruction stream {path} is {len} bytes, expected a multiple of 64")]
    InstructionStreamSize {
        /// The `.bin` member.
        path: String,
        /// Its length.
        len: usize,
    },
    /// A `.npy` constant has a malformed header or wrong data length.
    #[error("invalid .npy constant {path}: {message}")]
    Npy {
        /// The member path.
        path: String,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A header field cannot hold the value the writer was given.
    #[error("invalid NEFF header field {field}: {message}")]
    InvalidHeaderField {
        /// The documented field name.
        field: &'static str,
        /// What was wrong and what was expected.
        message: String,
    },
    /// Reading or writing an unpacked NEFF directory failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

fn at(path: &Option<String>) -> String {
    match path {
        Some(p) => format!(" at member {p:?}"),
        None => String::new(),
    }
}

impl NeffError {
    /// True for the errors libnrt reports as `NRT_UNSUPPORTED_NEFF_VERSION`
    /// (unsupported major version, unknown feature bits, unknown packager).
    pub fn is_unsupported_version(&self) -> bool {
        matches!(
            self,
            NeffError::UnsupportedVersion { .. }
                | NeffError::UnsupportedFeatureBits { .. }
                | NeffError::UnsupportedPackager { .. }
        )
    }

    /// Builds a [`NeffError::Json`] from a serde error for `path`.
    pub(crate) fn json(path: &str, err: impl std::fmt::Display) -> Self {
        NeffError::Json { path: path.to_string(), message: err.to_string() }
    }

    /// Builds a [`NeffError::Manifest`] for `path`.
    pub(crate) fn manifest(path: &str, message: impl Into<String>) -> Self {
        NeffError::Manifest { path: path.to_string(), message: message.into() }
    }
}

/// Result alias used throughout the crate.
pub type Result<T, E = NeffError> = std::result::Result<T, E>;
