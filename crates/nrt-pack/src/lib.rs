//! NEFF source trees into NEFFs: the one packer behind `nrt neff pack`,
//! `nrt run DIR` / `nrt bench DIR` (which pack a tree on the fly) and
//! `python -m nrt neff pack` (so a Python user packs an example with the
//! wheel alone, without building the `nrt` command).
//!
//! A source tree is what `nrt neff unpack` writes: every member as a file
//! and the header as `neff-header.json`, with engine programs as `.bin`
//! records or `.asm` text. [`source_tree`] reads one as every packer takes
//! it: the examples' generated members (too large or too build-dependent
//! to commit: the mlp examples' constants, the tp-mlp ranks' shards,
//! custom_ops' argument blocks and kernel libraries) are generated when
//! absent, and any other constant a `def.json` names but the tree lacks is
//! refused, naming it. [`pack_file`] is `nrt neff pack`; [`pack_members`]
//! what a loader packs.

pub mod custom_ops_data;
pub mod example_data;
pub mod tp_mlp_data;
mod tree;

pub use tree::{pack_file, pack_members, source_tree};
