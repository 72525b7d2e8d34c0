//! NEFF container: read, validate and write the files the Neuron compiler
//! produces and the runtime loads.
//!
//! # The container
//!
//! A NEFF is a fixed 1024-byte little-endian header ([`NeffHeader`]) followed
//! by `data_size` bytes of payload: a tar archive, gzip-compressed or plain.
//! `pkg_version` 1 means the header's `hash` is a SHA-256 of the payload,
//! 2 an MD5 (first 16 bytes). Inside the archive, compiler output has:
//!
//! * `neff.json`: a TVM-style graph whose `__kelf` node names the KELF
//!   descriptor, with per-entry dtypes/shapes and `metadata.signatures`
//!   (the model's input and output tensors);
//! * `kelf-0.json`: the list of subgraphs (`sgNN/def.json` per NeuronCore);
//! * `info.json`, `hlo_stats.json`, `debug_info/`;
//! * per subgraph `sgNN/`: `def.json` (vars, DMA queue sets, engine files,
//!   runtime reservations), one engine JSON per engine (`PE.json`,
//!   `Activation.json`, `Pool.json`, `DVE.json`, `SP.json`: DMA blocks and
//!   tables) with its headerless instruction stream (`PE.bin`, ...: 64-byte
//!   slots), activation and DVE tables, `tensor_map.json`, constants (`.npy`
//!   or raw).
//!
//! [`Neff::parse`] checks the header, unpacks the archive with limits,
//! follows that manifest chain (with fallbacks for producers that omit
//! parts), cross-checks DMA descriptors against def.json and exposes
//! [`Neff::inputs`] / [`Neff::outputs`]. [`NeffWriter`] writes byte-stable
//! NEFFs; [`unpack_to_dir`] / [`pack_dir`] round-trip through a directory.
//!
//! # Modules
//!
//! * [`header`]: the 1024-byte header, parse/serialize/validate, JSON form.
//! * [`hash`]: SHA-256 / MD5 payload digests.
//! * [`archive`]: tar (+gzip) reading with [`ReadLimits`], byte-stable writing.
//! * [`json`]: typed serde models of every JSON member (unknown keys kept).
//! * [`npy`]: `.npy` headers and constants.
//! * [`signature`]: the model's I/O tensors.
//! * [`validate`]: DMA descriptor cross-checks.
//! * [`summary`]: the serializable overview behind `nrt neff inspect`.
//! * [`neff`]: the parsed [`Neff`] with subgraphs and engine programs.
//! * [`writer`], [`layout`]: writing NEFFs and the compiler's member layout.
//! * [`dir`]: unpack to / pack from a directory.
//! * [`error`]: the [`NeffError`] type and its [`Result`] alias.
//! * [`gpsimd`]: the GPSIMD custom-op libraries (`ucode_lib`), checked and resolved.
//! * [`cc`]: the collectives a def.json declares (world size, streams, replica groups, pairs), checked.

pub mod archive;
pub mod cc;
pub mod debug_info;
pub mod dir;
pub mod error;
pub mod gpsimd;
pub mod hash;
pub mod header;
pub mod json;
pub mod layout;
pub mod neff;
pub mod npy;
pub mod signature;
pub mod summary;
pub mod validate;
pub mod writer;

pub use archive::{Members, PayloadFormat, ReadLimits};
pub use dir::{DirContents, HEADER_JSON, PackOptions, pack_dir, read_dir, unpack_to_dir};
pub use error::{NeffError, Result};
pub use hash::HashKind;
pub use header::{HeaderFields, NeffHeader};
pub use json::def::{DefJson, EngineKind, QueueSet, QueueType, Var, VarType};
pub use json::engine::{DmaBlock, DmaDesc, DmaOp, EngineJson};
pub use layout::EngineFiles;
pub use neff::{EngineProgram, Neff, ReadOptions, Subgraph};
pub use npy::{Constant, NpyHeader};
pub use signature::TensorSignature;
pub use summary::NeffSummary;
pub use writer::{NeffWriter, pack_members};
