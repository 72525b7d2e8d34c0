//! Accessors the C ABI layer (`nrt-capi`) needs and nothing else in the
//! runtime uses.

use crate::tensor::Tensor;

impl Tensor {
    /// Address of a host tensor's bytes, for `nrt_tensor_get_va`; `None`
    /// for a device tensor. A host tensor's buffer is allocated once and
    /// never resized, so the address stays valid for the tensor's life.
    pub fn host_va(&self) -> Option<usize> {
        self.with_host(|b| b.as_mut_ptr() as usize)
    }
}
