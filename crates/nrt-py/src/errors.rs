//! The module's exceptions, as nrtpy has them: `NrtError` for a runtime
//! status other than success (`NRT Error <NAME>(<code>): <context>`) and
//! `NrtpyError` for misuse of the Python layer (a freed tensor, a model
//! used after `reset`, `configure` while the runtime runs). Both subclass
//! `RuntimeError`. Beyond nrtpy, an `NrtError` carries `.status`, a
//! [`Status`] with the code and the name.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pyo3::create_exception!(nrt, NrtError, PyRuntimeError, "A runtime status other than NRT_SUCCESS: `NRT Error <NAME>(<code>): <context>`; `.status` has the code and name.");
pyo3::create_exception!(nrt, NrtpyError, PyRuntimeError, "Misuse of the Python layer: a freed tensor, an unloaded model, use after reset().");

/// An `NRT_STATUS`: the numeric code and the C name (`NrtError.status`).
#[pyclass(module = "nrt", frozen, eq, hash)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Status {
    /// The numeric value (nrt_status.h).
    #[pyo3(get)]
    pub code: i32,
    /// The C name, e.g. `NRT_EXEC_BAD_INPUT`.
    #[pyo3(get)]
    pub name: String,
}

#[pymethods]
impl Status {
    /// The status with this numeric code (`ValueError` if there is none).
    #[new]
    fn py_new(code: i32) -> PyResult<Status> {
        nrt::NrtStatus::from_code(code)
            .map(Status::of)
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(format!("{code} is not an NRT_STATUS value")))
    }

    fn __int__(&self) -> i32 {
        self.code
    }

    fn __repr__(&self) -> String {
        format!("Status.{}({})", self.name, self.code)
    }

    fn __str__(&self) -> String {
        format!("{}({})", self.name, self.code)
    }
}

impl Status {
    /// The Python view of a runtime status.
    pub fn of(s: nrt::NrtStatus) -> Status {
        Status { code: s.code(), name: s.name().to_string() }
    }
}

/// An `NrtError` for a failed runtime call: `context` says what the call
/// was for ("Failed to load model"), the runtime's message why.
pub fn nrt_error(py: Python<'_>, context: &str, e: &nrt::NrtError) -> PyErr {
    let msg = format!("NRT Error {}({}): {context}: {}", e.status.name(), e.status.code(), e.message);
    let made = (|| -> PyResult<PyErr> {
        let value = py.get_type::<NrtError>().call1((msg.clone(),))?;
        value.setattr("status", Status::of(e.status))?;
        Ok(PyErr::from_value(value))
    })();
    made.unwrap_or_else(|err| err)
}

/// An `NrtpyError` (Python-layer misuse).
pub fn nrtpy_error(msg: impl std::fmt::Display) -> PyErr {
    NrtpyError::new_err(format!("Nrtpy Error: {msg}"))
}

/// A `ValueError`.
pub fn value_error(msg: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(msg.to_string())
}

/// A `MemoryError` for a host buffer the process cannot have (the
/// runtime's NRT_RESOURCE from `nrt::host_memory`, whose message names
/// the size).
pub fn memory_error(e: &nrt::NrtError) -> PyErr {
    pyo3::exceptions::PyMemoryError::new_err(e.message.clone())
}
