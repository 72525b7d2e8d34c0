//! NEFF dtype names <-> numpy dtypes. numpy knows the integer and IEEE
//! types; bfloat16 and the fp8 formats come from `ml_dtypes` (what nrtpy
//! and JAX use).

use crate::errors::nrtpy_error;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The numpy dtype for a NEFF dtype name.
pub fn numpy_dtype<'py>(py: Python<'py>, neff: &str) -> PyResult<Bound<'py, PyAny>> {
    let ml = |attr: &str| -> PyResult<Bound<'py, PyAny>> {
        let m = py.import("ml_dtypes").map_err(|_| nrtpy_error(format!("dtype {neff} needs the ml_dtypes package (pip install ml_dtypes)")))?;
        m.getattr(attr)
    };
    let spec: Bound<'py, PyAny> = match neff {
        "bfloat16" => ml("bfloat16")?,
        "float8e4" | "float8_e4m3fn" => ml("float8_e4m3fn")?,
        "float8_e4m3" => ml("float8_e4m3")?,
        "float8e5" | "float8_e5m2" => ml("float8_e5m2")?,
        "float8e3" => ml("float8_e3m4")?,
        "float32r" => pyo3::types::PyString::new(py, "float32").into_any(),
        other => {
            if nrt_neff::dtype::npy_descr(other).is_none() {
                return Err(nrtpy_error(format!("the NEFF dtype {other:?} has no numpy equivalent")));
            }
            pyo3::types::PyString::new(py, other).into_any()
        }
    };
    dtype_of(py, &spec)
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
