//! NEFF dtype names <-> numpy dtypes. numpy knows the integer and IEEE
//! types; bfloat16 and the fp8 formats come from `ml_dtypes` (what nrtpy
//! and JAX use).

use crate::errors::{nrtpy_error, value_error};
use nrt_isa::dtype::{ELEMENT_TYPES, Numpy, element_type};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The numpy dtype for a NEFF dtype name, from the element-type table
/// (`nrt_isa::dtype::ELEMENT_TYPES`).
pub fn numpy_dtype<'py>(py: Python<'py>, neff: &str) -> PyResult<Bound<'py, PyAny>> {
    let none = || nrtpy_error(format!("the NEFF dtype {neff:?} has no numpy equivalent"));
    let spec: Bound<'py, PyAny> = match element_type(neff).ok_or_else(none)?.numpy.ok_or_else(none)? {
        Numpy::Native(name) => pyo3::types::PyString::new(py, name).into_any(),
        Numpy::MlDtypes(attr) => py
            .import("ml_dtypes")
            .map_err(|_| nrtpy_error(format!("dtype {neff} needs the ml_dtypes package (pip install ml_dtypes)")))?
            .getattr(attr)?,
    };
    dtype_of(py, &spec)
}

/// `numpy.dtype(x)` when it is one of the runtime's plain-old-data
/// element types in native byte order (exactly the dtype
/// [`numpy_dtype`] gives for it), with numpy's name for it; `ValueError`
/// for anything else (`object`, strings, structured, big-endian,
/// subarray dtypes...). Every numpy view over a tensor's bytes takes its
/// dtype from here: device bytes must never land in `PyObject*` slots.
pub fn runtime_dtype<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, String)> {
    let d = dtype_of(py, x)?;
    let name: String = d.getattr("name")?.extract()?;
    let numpy_name = |t: &nrt_isa::dtype::ElementType| match t.numpy {
        Some(Numpy::Native(n) | Numpy::MlDtypes(n)) => Some(n),
        None => None,
    };
    let row = ELEMENT_TYPES.iter().find(|t| numpy_name(t) == Some(name.as_str()));
    if !row.is_some_and(|t| numpy_dtype(py, t.name).is_ok_and(|c| d.eq(&c).unwrap_or(false))) {
        let names = |ml: bool| {
            let mut v: Vec<&str> = ELEMENT_TYPES.iter().filter(|t| matches!(t.numpy, Some(Numpy::MlDtypes(_))) == ml).filter_map(numpy_name).collect();
            v.dedup();
            v.join(", ")
        };
        return Err(value_error(format!(
            "dtype {} cannot hold a tensor's bytes: expected an element type the runtime knows, in native byte order ({}, or ml_dtypes' {})",
            d.str()?,
            names(false),
            names(true)
        )));
    }
    Ok((d, name))
}

/// `numpy.dtype(x)`.
pub fn dtype_of<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    DTYPE.import(py, "numpy", "dtype")?.call1((x,))
}

/// `numpy.empty`.
pub fn empty<'py>(py: Python<'py>, shape: &[usize], dtype: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static EMPTY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    EMPTY.import(py, "numpy", "empty")?.call1((shape.to_vec(), dtype))
}

/// `numpy.ascontiguousarray`.
pub fn contiguous<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static F: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    F.import(py, "numpy", "ascontiguousarray")?.call1((x,))
}

/// Whether a tensor of numpy dtype `have` may be bound where the NEFF
/// says `want` (both as numpy dtype names): equal names, or an fp8 array
/// for a tensor libnrt reports as int8 (its known fp8 quirk).
pub fn compatible(have: &str, want: &str) -> bool {
    have == want || (want == "int8" && have.starts_with("float8"))
}
