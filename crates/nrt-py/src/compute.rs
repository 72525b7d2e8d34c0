//! nrtpy's `tensor_cast` and `tensor_compute` over [`nrt::tensor_ops`]:
//! element-wise cast and ADD / MIN / MAX of device tensors without a NEFF,
//! run by the device's DMA engine, the GIL released while it works. Each
//! tensor's device dtype is its numpy dtype (what `Tensor.from_numpy` or
//! `Tensor(tensor_ref, shape, dtype)` attached).

use crate::errors::{nrt_error, value_error};
use crate::tensor::Tensor;
use nrt::tensor_ops::{self, ComputeOp, Typed};
use nrt_isa::dtype::Dtype;
use pyo3::prelude::*;
use std::sync::Arc;

/// The device dtype of `t` and its allocation.
fn typed(t: &Tensor) -> PyResult<(Arc<nrt::tensor::Tensor>, Dtype)> {
    let dtype = Dtype::from_name(&t.dtype_name).ok_or_else(|| value_error(format!("dtype {} has no device dtype", t.dtype_name)))?;
    Ok((t.live()?, dtype))
}

/// `ComputeOp` from nrtpy's enum member (its `name`) or a string.
fn op_of(op: &Bound<'_, PyAny>) -> PyResult<ComputeOp> {
    let name: String = match op.getattr("name") {
        Ok(n) => n.extract()?,
        Err(_) => op.extract().map_err(|_| value_error("op must be an nrt.NrtComputeOp (ADD, MIN, MAX) or its name"))?,
    };
    ComputeOp::from_name(&name).ok_or_else(|| value_error(format!("op {name:?} is not one of ADD, MIN, MAX")))
}

/// `tensor_cast(src, dst, num_elements)`: converts `num_elements`
/// elements of `src` from its dtype to `dst`'s and writes them to `dst`.
#[pyfunction]
pub fn tensor_cast(py: Python<'_>, src: PyRef<'_, Tensor>, dst: PyRef<'_, Tensor>, num_elements: u64) -> PyResult<()> {
    let (s, sd) = typed(&src)?;
    let (d, dd) = typed(&dst)?;
    py.detach(|| tensor_ops::cast(Typed { tensor: &s, dtype: sd }, Typed { tensor: &d, dtype: dd }, num_elements))
        .map_err(|e| nrt_error(py, "Failed to cast tensor", &e))
}

/// `tensor_compute(op, srcs, dst, num_elements)`: the element-wise `op`
/// (ADD, MIN, MAX) of all `srcs` into `dst`.
#[pyfunction]
pub fn tensor_compute(py: Python<'_>, op: &Bound<'_, PyAny>, srcs: Vec<PyRef<'_, Tensor>>, dst: PyRef<'_, Tensor>, num_elements: u64) -> PyResult<()> {
    let op = op_of(op)?;
    let sources = srcs.iter().map(|t| typed(t)).collect::<PyResult<Vec<_>>>()?;
    let (d, dd) = typed(&dst)?;
    py.detach(|| {
        let typed: Vec<Typed<'_>> = sources.iter().map(|(t, dtype)| Typed { tensor: t, dtype: *dtype }).collect();
        tensor_ops::compute(op, &typed, Typed { tensor: &d, dtype: dd }, num_elements)
    })
    .map_err(|e| nrt_error(py, "Failed to compute tensor", &e))
}
