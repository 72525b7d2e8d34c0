//! The `nrt` Python module (native part `nrt._nrt`): nrtpy's API over the
//! nrt-rs runtime, run in-process with the simulated device as the
//! backend (no libnrt.so).
//!
//! - [`session`]: the process's one runtime (nrtpy's singleton), started
//!   on first use, closed by `reset()`.
//! - [`tensor`], [`model`]: `Tensor` / `NrtTensor` and `Model`, with
//!   numpy in and out, the GIL released on every blocking call.
//! - [`bench`], [`trace`]: `BenchmarkResult`, `SystemTraceSession` and
//!   the boundary the runtime's system trace plugs into.
//! - [`sim`]: deterministic mode and fault injection of the simulator.
//! - [`errors`]: `NrtError` (with `.status`) and `NrtpyError`.
//!
//! The Python package (`python/nrt/__init__.py`) adds `configure`, the
//! warning of `reset`, the `Nrtpy*` aliases and the exit hook.

pub mod bench;
pub mod dtypes;
pub mod errors;
pub mod model;
pub mod session;
pub mod sim;
pub mod tensor;
pub mod trace;

use errors::{nrt_error, value_error};
use pyo3::prelude::*;

/// nrtpy's singleton object (`get_nrtpy_singleton()`): the low-level
/// calls on the process's runtime.
#[pyclass(module = "nrt", name = "Runtime", frozen)]
pub struct Runtime;

#[pymethods]
impl Runtime {
    /// The singleton (the runtime starts on first use).
    #[new]
    fn py_new() -> Runtime {
        Runtime
    }

    /// Frees a tensor's device memory now (`Tensor` or `NrtTensor`).
    fn free_tensor(&self, py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(t) = t.cast::<tensor::Tensor>() {
            return t.get().tensor_ref.get().free(py);
        }
        let r = t.cast::<tensor::NrtTensor>().map_err(|_| pyo3::exceptions::PyTypeError::new_err("free_tensor takes an nrt.Tensor or nrt.NrtTensor"))?;
        r.get().free(py)
    }

    /// Allocates `size` bytes of device memory for logical core `core_id`.
    #[pyo3(signature = (size, core_id=0, name=None))]
    fn allocate_tensor(&self, py: Python<'_>, size: u64, core_id: u32, name: Option<String>) -> PyResult<tensor::NrtTensor> {
        tensor::NrtTensor::allocate(py, size, core_id, name.as_deref().unwrap_or("unnamed_tensor"))
    }

    /// Writes `data` (bytes-like) into `t` at `offset`, bounds checked.
    #[pyo3(signature = (t, data, offset=0))]
    fn tensor_write(&self, py: Python<'_>, t: &tensor::NrtTensor, data: Vec<u8>, offset: u64) -> PyResult<()> {
        let rt = t.live()?;
        py.detach(|| rt.write(offset, &data)).map_err(|e| nrt_error(py, "Failed to write tensor", &e))
    }

    /// Reads `size` bytes (0: to the end) of `t` at `offset`.
    #[pyo3(signature = (t, offset=0, size=0))]
    fn tensor_read<'py>(&self, py: Python<'py>, t: &tensor::NrtTensor, offset: u64, size: u64) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let rt = t.live()?;
        let n = if size == 0 { rt.size().saturating_sub(offset) } else { size };
        let n = usize::try_from(n).map_err(|_| value_error(format!("read of {n} bytes is too large")))?;
        let mut buf = vec![0u8; n];
        py.detach(|| rt.read(offset, &mut buf)).map_err(|e| nrt_error(py, "Failed to read tensor", &e))?;
        Ok(pyo3::types::PyBytes::new(py, &buf))
    }

    /// Logical cores visible to the process (works before the runtime
    /// starts, as `nrt_get_visible_nc_count` does).
    #[staticmethod]
    fn get_visible_neuron_core_count() -> PyResult<u32> {
        session::visible_cores().map_err(errors::nrtpy_error)
    }

    /// Closes the runtime (as `nrt.reset()`, without the warning).
    fn close(&self, py: Python<'_>) -> PyResult<i32> {
        session::reset(py)?;
        Ok(0)
    }

    fn __repr__(&self) -> String {
        format!("nrt.Runtime({})", if session::is_active() { "active" } else { "not started" })
    }
}

/// Closes the runtime if it runs; returns whether it did.
#[pyfunction]
fn _reset(py: Python<'_>) -> PyResult<bool> {
    session::reset(py)
}

/// Whether the runtime is running.
#[pyfunction]
fn is_active() -> bool {
    session::is_active()
}

/// nrt-rs's version, and the libnrt version whose API it implements.
#[pyfunction]
fn version(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    let v = nrt::runtime::version();
    d.set_item("nrt_rs", format!("{}.{}.{}", v.major, v.minor, v.patch))?;
    d.set_item("git_sha", v.git_sha)?;
    Ok(d)
}

#[pymodule]
fn _nrt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("NrtError", py.get_type::<errors::NrtError>())?;
    m.add("NrtpyError", py.get_type::<errors::NrtpyError>())?;
    m.add_class::<errors::Status>()?;
    m.add_class::<tensor::NrtTensor>()?;
    m.add_class::<tensor::Tensor>()?;
    m.add_class::<tensor::TensorMetadata>()?;
    m.add_class::<model::Model>()?;
    m.add_class::<bench::BenchmarkResult>()?;
    m.add_class::<trace::SystemTraceSession>()?;
    m.add_class::<Runtime>()?;
    m.add_function(wrap_pyfunction!(_reset, m)?)?;
    m.add_function(wrap_pyfunction!(is_active, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_configure, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_settings, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_inject, m)?)?;
    // A second import in the same process finds it installed already.
    let _ = trace::install(Box::new(trace::RuntimeTrace));
    Ok(())
}
