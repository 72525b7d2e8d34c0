//! `python -m nrt neff pack DIR FILE` (`python/nrt/__main__.py`): the
//! packer of `nrt neff pack` ([`nrt_pack::pack_file`]), so a Python user
//! packs an example tree into the NEFF `Model.load_from_neff` takes with
//! the wheel alone. Private to the extension module (`_pack_source_tree`):
//! `dir(nrt)` stays the nrtpy API.

use crate::errors::value_error;
use pyo3::prelude::*;
use std::path::PathBuf;

/// Packs the NEFF source tree `dir` into the NEFF `file` exactly as `nrt
/// neff pack DIR FILE [--name NAME] [--hash HASH]` does (the examples'
/// generated members filled in, `.asm` programs assembled); returns the
/// line that command prints. Raises ValueError with the command's message
/// on failure. The GIL is released while it packs.
#[pyfunction]
#[pyo3(signature = (dir, file, name = None, hash = None))]
pub fn _pack_source_tree(py: Python<'_>, dir: PathBuf, file: PathBuf, name: Option<String>, hash: Option<String>) -> PyResult<String> {
    py.detach(|| nrt_pack::pack_file(&dir, &file, name.as_deref(), hash.as_deref()))
        .map_err(|e| value_error(format!("{e:#}").replace('\n', " ")))
}
