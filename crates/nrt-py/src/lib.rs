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
//! - [`compute`]: `tensor_cast` / `tensor_compute` (device work without
//!   a NEFF).
//! - [`debug`]: `DebugStream` / `DebugEvent`, the debug stream of a
//!   logical core (device prints).
//! - [`sim`]: deterministic mode and fault injection of the simulator.
//! - [`pack`]: the source-tree packer behind `python -m nrt neff pack`.
//! - [`errors`]: `NrtError` (with `.status`) and `NrtpyError`.
//!
//! The Python package (`python/nrt/__init__.py`) adds `configure`, the
//! warning of `reset`, the `Nrtpy*` aliases and the exit hook.

pub mod bench;
pub mod compute;
pub mod debug;
pub mod dtypes;
pub mod errors;
pub mod model;
pub mod pack;
pub mod session;
pub mod sim;
pub mod tensor;
pub mod trace;

use errors::nrt_error;
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

    /// Writes `data` (any bytes-like object: bytes, bytearray, memoryview,
    /// a C-contiguous array) into `t` at `offset`, bounds checked. The
    /// bytes are read in place, never copied.
    #[pyo3(signature = (t, data, offset=0))]
    fn tensor_write(&self, py: Python<'_>, t: &tensor::NrtTensor, data: &Bound<'_, PyAny>, offset: u64) -> PyResult<()> {
        let rt = t.live()?;
        let bytes = py
            .import("builtins")?
            .getattr("memoryview")?
            .call1((data,))
            .and_then(|m| m.call_method1("cast", ("B",)))
            .map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("data must be a C-contiguous bytes-like object, got {}", data.get_type().name().map(|n| n.to_string()).unwrap_or_default())))?;
        let buf = pyo3::buffer::PyBuffer::<u8>::get(&bytes)?;
        let src = tensor::RawBuf(buf.buf_ptr().cast::<u8>(), buf.len_bytes());
        py.detach(move || {
            let b = src;
            // SAFETY: `buf` (held until this returns) keeps the exporter's
            // C-contiguous bytes (a `cast("B")` memoryview) alive and
            // unmoved; an empty buffer may have a dangling pointer.
            let data: &[u8] = if b.1 == 0 { &[] } else { unsafe { std::slice::from_raw_parts(b.0, b.1) } };
            rt.write(offset, data)
        })
        .map_err(|e| nrt_error(py, "Failed to write tensor", &e))
    }

    /// Reads `size` bytes (0: to the end) of `t` at `offset`. The range is
    /// checked before anything is allocated (`NrtError`, NRT_INVALID), and
    /// a size the host cannot hold is a `MemoryError`.
    #[pyo3(signature = (t, offset=0, size=0))]
    fn tensor_read<'py>(&self, py: Python<'py>, t: &tensor::NrtTensor, offset: u64, size: u64) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let rt = t.live()?;
        let n = if size == 0 { rt.size().saturating_sub(offset) } else { size };
        rt.check_range(offset, n).map_err(|e| nrt_error(py, "Failed to read tensor", &e))?;
        let len = nrt::host_memory::check(n, format_args!("read of {n} bytes of tensor {:?}", rt.name())).map_err(|e| errors::memory_error(&e))?;
        pyo3::types::PyBytes::new_with(py, len, |dst| py.detach(|| rt.read(offset, dst)).map_err(|e| nrt_error(py, "Failed to read tensor", &e))).map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyMemoryError>(py) {
                pyo3::exceptions::PyMemoryError::new_err(format!("read of {n} bytes of tensor {:?}: Python could not allocate the bytes object", rt.name()))
            } else {
                e
            }
        })
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
    m.add_class::<debug::DebugStream>()?;
    m.add_class::<debug::DebugEvent>()?;
    m.add_class::<Runtime>()?;
    m.add_function(wrap_pyfunction!(_reset, m)?)?;
    m.add_function(wrap_pyfunction!(compute::tensor_cast, m)?)?;
    m.add_function(wrap_pyfunction!(compute::tensor_compute, m)?)?;
    m.add_function(wrap_pyfunction!(is_active, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_configure, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_settings, m)?)?;
    m.add_function(wrap_pyfunction!(sim::sim_inject, m)?)?;
    m.add_function(wrap_pyfunction!(pack::_pack_source_tree, m)?)?;
    // A second import in the same process finds it installed already.
    let _ = trace::install(Box::new(trace::RuntimeTrace));
    Ok(())
}
