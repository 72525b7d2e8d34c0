//! Tensors: `NrtTensor` (a device allocation, nrtpy's `tensor_ref`) and
//! `Tensor` (an allocation with a shape, dtype and name: nrtpy's
//! `NrtpyTensor`), with numpy in and out. Writes go from the array's own
//! buffer to the device (no intermediate host copy) when the array is
//! C-contiguous; reads land directly in the new array's buffer. The GIL
//! is released for both.

use crate::dtypes;
use crate::errors::{nrt_error, nrtpy_error, value_error};
use crate::session::{self, Cell, Slot};
use numpy::{PyUntypedArray, PyUntypedArrayMethods, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::sync::Arc;

/// A device allocation (`nrt_tensor_t`), owned jointly by Python and the
/// session (which frees it at `reset()`).
#[pyclass(module = "nrt", name = "NrtTensor", frozen)]
pub struct NrtTensor {
    pub(crate) cell: Arc<Cell<Arc<nrt::tensor::Tensor>>>,
    /// Logical core it was allocated for.
    #[pyo3(get)]
    pub core_id: u32,
    /// Size in bytes.
    #[pyo3(get)]
    pub size: u64,
    /// Allocation name.
    #[pyo3(get)]
    pub name: String,
}

impl NrtTensor {
    /// Allocates `size` bytes of device memory for logical core `core_id`.
    pub fn allocate(py: Python<'_>, size: u64, core_id: u32, name: &str) -> PyResult<NrtTensor> {
        let s = session::get()?;
        let made = py.detach(|| -> nrt::NrtResult<_> {
            let (memory, core) = s.tensor_home(core_id)?;
            let t = nrt::tensor::Tensor::allocate_device(&memory, core, size, name)?;
            Ok(s.tensor_cell(t))
        });
        let cell = made.map_err(|e| nrt_error(py, "Failed to allocate tensor", &e))?;
        Ok(NrtTensor { cell, core_id, size, name: name.to_string() })
    }

    /// The live runtime tensor, or `NrtpyError` if freed or reset.
    pub fn live(&self) -> PyResult<Arc<nrt::tensor::Tensor>> {
        match &*session::lock(&self.cell) {
            Slot::Live(t) => Ok(Arc::clone(t)),
            Slot::Freed => Err(nrtpy_error(format!("tensor {:?} was freed; it cannot be used any more", self.name))),
            Slot::Reset => Err(nrtpy_error(format!("tensor {:?} was freed by nrt.reset(); allocate a new one", self.name))),
        }
    }

    /// Frees the allocation now (`free_tensor`); `NrtpyError` if it was
    /// already freed.
    pub fn free(&self, py: Python<'_>) -> PyResult<()> {
        let t = {
            let mut s = session::lock(&self.cell);
            match std::mem::replace(&mut *s, Slot::Freed) {
                Slot::Live(t) => t,
                other => {
                    *s = other;
                    drop(s);
                    return self.live().map(|_| ());
                }
            }
        };
        // An execution still holding the tensor keeps it until it ends.
        py.detach(move || drop(t));
        Ok(())
    }

    fn state(&self) -> &'static str {
        match &*session::lock(&self.cell) {
            Slot::Live(_) => "live",
            Slot::Freed => "freed",
            Slot::Reset => "reset",
        }
    }
}

#[pymethods]
impl NrtTensor {
    /// Device virtual address of byte 0 (`nrt_tensor_get_va`).
    #[getter]
    fn va(&self) -> PyResult<u64> {
        match self.live()?.placement() {
            nrt::tensor::Placement::Device { addr, .. } => Ok(addr.0),
            nrt::tensor::Placement::Host => Ok(0),
        }
    }

    fn __repr__(&self) -> String {
        format!("NrtTensor(name={:?}, size={}, core_id={}, {})", self.name, self.size, self.core_id, self.state())
    }
}

/// A raw pointer and length that may cross `detach` (the owning Python
/// object is kept alive by the caller for the duration).
pub(crate) struct RawBuf(pub(crate) *mut u8, pub(crate) usize);
// SAFETY: the buffer's owner outlives the detached closure (the caller
// holds a reference to it), and only this closure touches it meanwhile.
unsafe impl Send for RawBuf {}

/// A C-contiguous view of `array` (converted with
/// `numpy.ascontiguousarray` only when it is not already one).
fn contiguous_array<'py>(py: Python<'py>, array: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyUntypedArray>> {
    if let Ok(a) = array.cast::<PyUntypedArray>()
        && a.is_c_contiguous()
    {
        return Ok(a.clone());
    }
    let c = dtypes::contiguous(py, array)?;
    Ok(c.cast_into::<PyUntypedArray>()?)
}

fn nbytes(a: &Bound<'_, PyUntypedArray>) -> usize {
    a.len() * a.dtype().itemsize()
}

/// Copies a C-contiguous array's bytes into `t` at offset 0, GIL released.
fn write_array(py: Python<'_>, t: &nrt::tensor::Tensor, a: &Bound<'_, PyUntypedArray>) -> nrt::NrtResult<()> {
    // SAFETY: numpy's array struct; `data` is valid for nbytes bytes of a
    // C-contiguous array, which `a` keeps alive across the call.
    let buf = RawBuf(unsafe { (*a.as_array_ptr()).fields.data.cast::<u8>() }, nbytes(a));
    py.detach(move || {
        let b = buf;
        // SAFETY: see RawBuf; a zero-length array may have a dangling
        // data pointer, so it is not turned into a slice.
        let data: &[u8] = if b.1 == 0 { &[] } else { unsafe { std::slice::from_raw_parts(b.0, b.1) } };
        t.write(0, data)
    })
}

/// Reads `t` into a new array of `shape` and `dtype`, GIL released.
fn read_array<'py>(py: Python<'py>, t: &nrt::tensor::Tensor, shape: &[usize], dtype: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let out = dtypes::empty(py, shape, dtype)?;
    let a = out.cast::<PyUntypedArray>()?;
    let n = nbytes(a);
    if n as u64 != t.size() {
        return Err(value_error(format!("tensor {:?} holds {} bytes; shape {shape:?} of {} needs {n}", t.name(), t.size(), dtype.str()?)));
    }
    // SAFETY: a fresh C-contiguous array of n bytes, kept alive by `out`.
    let buf = RawBuf(unsafe { (*a.as_array_ptr()).fields.data.cast::<u8>() }, n);
    py.detach(move || {
        let b = buf;
        if b.1 == 0 {
            return Ok(());
        }
        // SAFETY: see RawBuf.
        let dst = unsafe { std::slice::from_raw_parts_mut(b.0, b.1) };
        t.read(0, dst)
    })
    .map_err(|e| nrt_error(py, "Failed to read tensor", &e))?;
    Ok(out)
}

/// A device tensor with a shape, a numpy dtype and a name (nrtpy's
/// `NrtpyTensor`); freed when the last reference goes (or by
/// `free_tensor`, `reset`, or leaving a `with` block).
#[pyclass(module = "nrt", name = "Tensor", frozen, subclass)]
pub struct Tensor {
    /// The allocation.
    #[pyo3(get)]
    pub tensor_ref: Py<NrtTensor>,
    pub(crate) shape: Vec<usize>,
    /// The numpy dtype.
    #[pyo3(get)]
    pub dtype: Py<PyAny>,
    pub(crate) dtype_name: String,
    /// The tensor's name (None if not given).
    #[pyo3(get)]
    pub name: Option<String>,
}

impl Tensor {
    /// A tensor over an allocation: `dtype` must be one of the runtime's
    /// element types ([`dtypes::runtime_dtype`]) and the shape's bytes
    /// must not exceed the allocation (`ValueError` otherwise), so no
    /// view of it ever reaches past its bytes or over object slots.
    pub fn over(py: Python<'_>, tensor_ref: Py<NrtTensor>, shape: Vec<usize>, dtype: Bound<'_, PyAny>, name: Option<String>) -> PyResult<Tensor> {
        let (dtype, dtype_name) = dtypes::runtime_dtype(py, &dtype)?;
        let itemsize: usize = dtype.getattr("itemsize")?.extract()?;
        let size = tensor_ref.get().size;
        match view_bytes(&shape, itemsize) {
            Some(n) if n <= size => {}
            n => {
                let need = n.map_or_else(|| "more bytes than a u64 holds".to_string(), |n| format!("{n} bytes"));
                return Err(value_error(format!("shape {shape:?} of {dtype_name} needs {need}; tensor {:?} holds {size}", tensor_ref.get().name)));
            }
        }
        Ok(Tensor { tensor_ref, shape, dtype: dtype.unbind(), dtype_name, name })
    }

    /// The live runtime tensor (or `NrtpyError`).
    pub fn live(&self) -> PyResult<Arc<nrt::tensor::Tensor>> {
        self.tensor_ref.get().live()
    }
}

/// Bytes of a view of `shape` with `itemsize`-byte elements (`None` on
/// overflow).
fn view_bytes(shape: &[usize], itemsize: usize) -> Option<u64> {
    shape.iter().try_fold(itemsize as u64, |acc, &d| acc.checked_mul(d as u64))
}

/// Most dimensions a shape may have (numpy's `NPY_MAXDIMS`).
const MAX_DIMS: usize = 64;

/// A shape from an int or an iterable of ints, each non-negative, at most
/// [`MAX_DIMS`] of them (read one by one: a sequence's `len()` is never
/// trusted to size anything); `ValueError` otherwise.
fn shape_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let shown = || shape.repr().map(|r| r.to_string()).unwrap_or_default();
    let bad = || value_error(format!("shape must be an int or a sequence of non-negative ints, got {}", shown()));
    let dim = |d: &Bound<'_, PyAny>| -> PyResult<usize> {
        let v: i128 = d.extract().map_err(|_| bad())?;
        usize::try_from(v).map_err(|_| value_error(format!("shape {}: dimension {v} is {}", shown(), if v < 0 { "negative" } else { "too large" })))
    };
    if shape.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(vec![dim(shape)?]);
    }
    let mut dims = Vec::new();
    for d in shape.try_iter().map_err(|_| bad())? {
        if dims.len() == MAX_DIMS {
            return Err(value_error(format!("shape {} has more than {MAX_DIMS} dimensions", shown())));
        }
        dims.push(dim(&d?)?);
    }
    Ok(dims)
}

#[pymethods]
impl Tensor {
    /// `NrtpyTensor(tensor_ref, shape, dtype, name=None)`.
    #[new]
    #[pyo3(signature = (tensor_ref, shape, dtype, name=None))]
    fn py_new(py: Python<'_>, tensor_ref: Py<NrtTensor>, shape: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>, name: Option<String>) -> PyResult<Tensor> {
        Tensor::over(py, tensor_ref, shape_of(shape)?, dtype.clone(), name)
    }

    /// Allocates a device tensor on `core_id` and writes `array` into it
    /// (made C-contiguous first if it is not).
    #[classmethod]
    #[pyo3(signature = (array, name=None, core_id=0))]
    fn from_numpy(_cls: &Bound<'_, pyo3::types::PyType>, py: Python<'_>, array: &Bound<'_, PyAny>, name: Option<String>, core_id: u32) -> PyResult<Tensor> {
        let a = contiguous_array(py, array)?;
        dtypes::runtime_dtype(py, a.dtype().as_any())?;
        let size = nbytes(&a) as u64;
        let alloc_name = name.clone().unwrap_or_else(|| "unnamed_tensor".to_string());
        let r = NrtTensor::allocate(py, size, core_id, &alloc_name)?;
        let t = r.live()?;
        write_array(py, &t, &a).map_err(|e| nrt_error(py, "Failed to write tensor", &e))?;
        let dtype = a.dtype().into_any();
        Tensor::over(py, Py::new(py, r)?, a.shape().to_vec(), dtype, name)
    }

    /// Overwrites the tensor with `array` (same byte size, else
    /// `ValueError`).
    fn write_from_numpy(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = self.live()?;
        let a = contiguous_array(py, array)?;
        dtypes::runtime_dtype(py, a.dtype().as_any())?;
        let n = nbytes(&a) as u64;
        if n != t.size() {
            return Err(value_error(format!("array of {n} bytes does not match tensor {:?} of {} bytes", self.name.as_deref().unwrap_or(t.name()), t.size())));
        }
        write_array(py, &t, &a).map_err(|e| nrt_error(py, "Failed to write tensor", &e))
    }

    /// The contents as a new numpy array of the tensor's shape and dtype.
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = self.live()?;
        read_array(py, &t, &self.shape, self.dtype.bind(py))
    }

    /// The shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// Size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.tensor_ref.get().size
    }

    /// Logical core.
    #[getter]
    fn core_id(&self) -> u32 {
        self.tensor_ref.get().core_id
    }

    /// Where the bytes are: `"device ND<d>:NC<c> @0x<addr>"`, or the
    /// state of a freed tensor.
    #[getter]
    fn placement(&self) -> String {
        match self.live() {
            Ok(t) => match t.placement() {
                nrt::tensor::Placement::Device { core, addr } => format!("device NC{} @{:#x}", core.0, addr.0),
                nrt::tensor::Placement::Host => "host".to_string(),
            },
            Err(_) => self.tensor_ref.get().state().to_string(),
        }
    }

    /// Frees the device memory now.
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        self.tensor_ref.get().free(py)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, py: Python<'_>, _t: &Bound<'_, PyAny>, _v: &Bound<'_, PyAny>, _tb: &Bound<'_, PyAny>) -> PyResult<bool> {
        if matches!(&*session::lock(&self.tensor_ref.get().cell), Slot::Live(_)) {
            self.free(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Tensor(name={:?}, shape={:?}, dtype={}, size={}, core_id={}, placement={})",
            self.name.as_deref().unwrap_or(""),
            self.shape,
            self.dtype_name,
            self.size(),
            self.core_id(),
            self.placement()
        )
    }
}

/// nrtpy's `TensorMetadata`: one model input or output as the NEFF
/// declares it.
#[pyclass(module = "nrt", frozen, get_all)]
pub struct TensorMetadata {
    /// Dimensions.
    pub shape: Vec<u64>,
    /// Size in bytes.
    pub size: u64,
    /// numpy-style dtype name.
    pub dtype: String,
}

#[pymethods]
impl TensorMetadata {
    fn __repr__(&self) -> String {
        format!("TensorMetadata(shape={:?}, size={}, dtype={:?})", self.shape, self.size, self.dtype)
    }
}

impl TensorMetadata {
    /// Metadata of a signature.
    pub fn of(sig: &nrt_neff::TensorSignature) -> TensorMetadata {
        TensorMetadata { shape: sig.shape.clone(), size: sig.size_bytes().unwrap_or(0), dtype: sig.dtype.clone() }
    }
}
