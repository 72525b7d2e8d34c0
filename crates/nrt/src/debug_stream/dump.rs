//! The runtime's own consumer of the debug stream (NEURON_RT_DEBUG_OUTPUT_DIR
//! set and no client connected to the core): each event becomes
//! `<dir>/<prefix>/core_<lnc>/<iteration>/tensor.npy`, the directory
//! layout NKI's `device_print` documents. What libnrt writes inside that
//! directory is not public; we write one `.npy` of the tile (dtype and
//! shape of the event; bfloat16 and the fp8 formats as their raw bits,
//! `nrt_neff::npy::descr_of`). `<iteration>` counts the events of that
//! prefix on that core, from 0, for the life of the runtime.

use super::event::DebugEvent;
use std::path::{Path, PathBuf};

/// File name of a dumped tile inside its iteration directory.
pub const TENSOR_FILE: &str = "tensor.npy";

/// A prefix as one path component: ASCII letters, digits, `_`, `-` and
/// `.` kept, anything else `_`; `.`, `..` and the empty prefix become `_`
/// so a prefix never leaves the output directory.
pub fn component(prefix: &str) -> String {
    let s: String = prefix.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if s.is_empty() || s.chars().all(|c| c == '.') { "_".to_string() } else { s }
}

/// Where event `e`'s tile goes for `iteration`.
pub fn path_of(dir: &Path, e: &DebugEvent, iteration: u64) -> PathBuf {
    dir.join(component(&e.prefix)).join(format!("core_{}", e.logical_nc_id)).join(iteration.to_string()).join(TENSOR_FILE)
}

/// Writes event `e` at `path` (creating its directories).
pub fn write(path: &Path, e: &DebugEvent) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, nrt_neff::npy::encode_npy(&nrt_neff::npy::descr_of(e.dtype.name()), &e.shape, &e.data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_stay_inside_the_directory() {
        assert_eq!(component("a_tile"), "a_tile");
        assert_eq!(component("../x/y"), ".._x_y");
        assert_eq!(component(".."), "_");
        assert_eq!(component(""), "_");
        let e = DebugEvent { prefix: "p".into(), logical_nc_id: 2, pipe: 0, dtype: nrt_isa::dtype::Dtype::Float32, shape: vec![1, 1], data: vec![0; 4] };
        assert_eq!(path_of(Path::new("/d"), &e, 5), PathBuf::from("/d/p/core_2/5/tensor.npy"));
    }
}
