//! NEFF dtype names <-> numpy dtypes. numpy knows the integer and IEEE
//! types; bfloat16 and the fp8 formats come from `ml_dtypes` (what nrtpy
//! and JAX use).

use crate::errors::{nrtpy_error, value_error};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The element types numpy itself lacks, which `ml_dtypes` provides (what
/// nrtpy and JAX use): the NEFF names of each (the first is canonical) and
/// ml_dtypes' name for it. The others are the types `nrt_neff::dtype`
/// gives a `.npy` descriptor, under numpy's own names; `float32r` is
/// float32 to numpy.
const ML_DTYPES: &[(&[&str], &str)] = &[
    (&["bfloat16"], "bfloat16"),
    (&["float8e4", "float8_e4m3fn"], "float8_e4m3fn"),
    (&["float8_e4m3"], "float8_e4m3"),
    (&["float8e5", "float8_e5m2"], "float8_e5m2"),
    (&["float8e3"], "float8_e3m4"),
];

/// The numpy dtype for a NEFF dtype name.
pub fn numpy_dtype<'py>(py: Python<'py>, neff: &str) -> PyResult<Bound<'py, PyAny>> {
    let spec: Bound<'py, PyAny> = match ML_DTYPES.iter().find(|(names, _)| names.contains(&neff)) {
        Some((_, ml)) => {
            let m = py.import("ml_dtypes").map_err(|_| nrtpy_error(format!("dtype {neff} needs the ml_dtypes package (pip install ml_dtypes)")))?;
            m.getattr(*ml)?
        }
        None => {
            let name = if neff == "float32r" { "float32" } else { neff };
            if nrt_neff::dtype::npy_descr(name).is_none() {
                return Err(nrtpy_error(format!("the NEFF dtype {neff:?} has no numpy equivalent")));
            }
            pyo3::types::PyString::new(py, name).into_any()
        }
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
    let neff = ML_DTYPES.iter().find(|(_, ml)| *ml == name).map_or(name.as_str(), |(names, _)| names[0]);
    let known = nrt_neff::dtype::npy_descr(&name).is_some() || ML_DTYPES.iter().any(|(_, ml)| *ml == name);
    if !(known && numpy_dtype(py, neff).is_ok_and(|c| d.eq(&c).unwrap_or(false))) {
        let ml = ML_DTYPES.iter().map(|(_, ml)| *ml).collect::<Vec<_>>().join(", ");
        return Err(value_error(format!(
            "dtype {} cannot hold a tensor's bytes: expected an element type the runtime knows, in native byte order (bool, int8..int64, uint8..uint64, float16, float32, float64, or ml_dtypes' {ml})",
            d.str()?
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
