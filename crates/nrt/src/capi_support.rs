//! Accessors the C ABI layer (`nrt-capi`) needs and nothing else in the
//! runtime uses.

use crate::tensor::Tensor;

impl Tensor {
    /// Address of the tensor's bytes in the process, for
    /// `nrt_tensor_get_va`: a host tensor's buffer (allocated once and
    /// never resized, so the address stays valid for the tensor's life),
    /// or a device tensor's bytes in its mapped HBM window
    /// (NEURON_RT_MAP_HBM); `None` for a device tensor whose HBM is not
    /// mapped.
    pub fn va(&self) -> Option<usize> {
        match self.placement() {
            crate::tensor::Placement::Host => self.with_host(|b| b.as_mut_ptr() as usize),
            crate::tensor::Placement::Device { addr, .. } => self.device_memory()?.host_va(addr),
        }
    }
}
