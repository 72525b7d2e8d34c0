//! The debug stream from Python: `DebugStream(core_id=0)` is the one
//! client of a logical core's stream (`nrt::debug_stream`, what
//! `nrt_debug_client_*` drive), and `DebugEvent` one device print (what a
//! DEBUG_TENSOR_READ, NKI's `device_print`, copied off the device). nrtpy
//! has no such API; the names follow `ndebug_stream.h`.

use crate::errors::{nrt_error, nrtpy_error};
use nrt::debug_stream::Connection;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// One device print: the tile a DEBUG_TENSOR_READ record copied, with its
/// prefix, logical core, engine (`pipe`), dtype and shape.
#[pyclass(module = "nrt", frozen)]
pub struct DebugEvent {
    event: nrt::debug_stream::DebugEvent,
}

#[pymethods]
impl DebugEvent {
    /// The print's prefix.
    #[getter]
    fn prefix(&self) -> &str {
        &self.event.prefix
    }

    /// The logical core the model ran on.
    #[getter]
    fn logical_nc_id(&self) -> u32 {
        self.event.logical_nc_id
    }

    /// The engine that printed (PE 0, ACT 1, POOL 2, DVE 3, SP 4).
    #[getter]
    fn pipe(&self) -> u32 {
        self.event.pipe
    }

    /// The element type's name (`float32`, `bfloat16`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.event.dtype.name()
    }

    /// The tile's shape (partitions first).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.event.shape)
    }

    /// The tile's bytes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.event.data)
    }

    /// The tile as a new numpy array of its dtype and shape.
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let dtype = crate::dtypes::numpy_dtype(py, self.event.dtype.name())?;
        let np = py.import("numpy")?;
        np.call_method1("frombuffer", (self.data(py), dtype))?.call_method1("reshape", (self.shape(py)?,))?.call_method0("copy")
    }

    fn __repr__(&self) -> String {
        let e = &self.event;
        format!("DebugEvent(prefix={:?}, logical_nc_id={}, pipe={}, dtype={}, shape={:?})", e.prefix, e.logical_nc_id, e.pipe, e.dtype.name(), e.shape)
    }
}

/// The client of logical core `core_id`'s debug stream (one per core):
/// events printed after it connects, read one at a time; `fileno()` is
/// readable while one waits (for `select` / `selectors`). A context
/// manager; `close()` is idempotent. `nrt.reset()` ends the connection:
/// the stream then raises `NrtpyError`, and its `close()` touches nothing
/// (the descriptor's number may belong to a later connection by then).
#[pyclass(module = "nrt")]
pub struct DebugStream {
    core_id: u32,
    /// The connection (its descriptor and serial number), until `close()`.
    conn: Option<Connection>,
}

impl DebugStream {
    /// The connection, while it is open.
    fn conn(&self) -> PyResult<Connection> {
        let c = self.conn.ok_or_else(|| nrtpy_error(format!("the debug stream of core {} was closed", self.core_id)))?;
        if !nrt::debug_stream::is_open(c) {
            return Err(nrtpy_error(format!("the debug stream of core {} ended when the runtime was closed (nrt.reset()); connect a new DebugStream", self.core_id)));
        }
        Ok(c)
    }
}

#[pymethods]
impl DebugStream {
    /// Connects to `core_id`'s stream (`NrtError` NRT_INVALID when the
    /// core is not visible or has a client already).
    #[new]
    #[pyo3(signature = (core_id=0))]
    fn py_new(py: Python<'_>, core_id: u32) -> PyResult<DebugStream> {
        crate::session::get()?;
        let lnc = i32::try_from(core_id).unwrap_or(i32::MAX);
        let conn = nrt::debug_stream::connect(lnc).map_err(|e| nrt_error(py, "Failed to connect to the debug stream", &e))?;
        Ok(DebugStream { core_id, conn: Some(conn) })
    }

    /// The descriptor to poll (readable while an event waits).
    fn fileno(&self) -> PyResult<i32> {
        self.conn().map(|c| c.fd)
    }

    /// The oldest waiting event, or None.
    fn read(&self, py: Python<'_>) -> PyResult<Option<DebugEvent>> {
        let c = self.conn()?;
        let e = nrt::debug_stream::read_one(c).map_err(|e| nrt_error(py, "Failed to read the debug stream", &e))?;
        Ok(e.map(|event| DebugEvent { event }))
    }

    /// Every waiting event, oldest first.
    fn read_all(&self, py: Python<'_>) -> PyResult<Vec<DebugEvent>> {
        let mut out = Vec::new();
        while let Some(e) = self.read(py)? {
            out.push(e);
        }
        Ok(out)
    }

    /// Events dropped so far because NEURON_RT_DEBUG_STREAM_BUFFER_SIZE
    /// events waited unread.
    #[getter]
    fn dropped(&self, py: Python<'_>) -> PyResult<u64> {
        nrt::debug_stream::dropped(self.conn()?).map_err(|e| nrt_error(py, "Failed to read the debug stream", &e))
    }

    /// The logical core.
    #[getter]
    fn core_id(&self) -> u32 {
        self.core_id
    }

    /// Ends the connection (idempotent). After `nrt.reset()`, which ended
    /// it already, nothing is closed: the serial number tells this
    /// connection from a later one that reuses its descriptor.
    fn close(&mut self) {
        if let Some(c) = self.conn.take() {
            let _ = nrt::debug_stream::disconnect(c);
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&mut self, _t: &Bound<'_, PyAny>, _v: &Bound<'_, PyAny>, _tb: &Bound<'_, PyAny>) -> bool {
        self.close();
        false
    }

    fn __repr__(&self) -> String {
        let state = match self.conn {
            Some(c) if nrt::debug_stream::is_open(c) => "connected",
            Some(_) => "ended",
            None => "closed",
        };
        format!("DebugStream(core_id={}, {state})", self.core_id)
    }
}

impl Drop for DebugStream {
    fn drop(&mut self) {
        self.close();
    }
}
