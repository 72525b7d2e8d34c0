//! A native harness for kernels (not built for wasm): it plays the Q7
//! core's part with in-memory tensors so a kernel's logic can be tested
//! with `cargo test` on the host. Each thread has its own harness.
//!
//! ```
//! use nrt_kernel::host::{Harness, HostTensor};
//! let mut h = Harness::new(0, 1);
//! h.push_tensor(HostTensor::f32(&[2], &[1.0, -2.0]));
//! h.set_dst(HostTensor::f32(&[2], &[0.0, 0.0]));
//! h.install();
//! nrt_kernel::customop_setup(true);
//! let x = nrt_kernel::customop_next_tensor().unwrap();
//! assert_eq!(x.numel(), 2);
//! ```

use std::cell::RefCell;
use std::vec::Vec;

/// A tensor the harness serves: ISA dtype, dims and bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// ISA dtype code.
    pub dtype: u8,
    /// Dimensions.
    pub dims: Vec<u32>,
    /// Contents.
    pub bytes: Vec<u8>,
    /// Argument kind: 1 tensor, 2 int scalar, 3 float scalar.
    pub kind: u8,
}

impl HostTensor {
    /// An fp32 tensor.
    pub fn f32(dims: &[u32], data: &[f32]) -> HostTensor {
        HostTensor { dtype: 10, dims: dims.to_vec(), bytes: data.iter().flat_map(|v| v.to_le_bytes()).collect(), kind: 1 }
    }

    /// An int64 scalar argument.
    pub fn int(v: i64) -> HostTensor {
        HostTensor { dtype: 12, dims: std::vec![1], bytes: v.to_le_bytes().to_vec(), kind: 2 }
    }

    /// The contents as fp32.
    pub fn to_f32(&self) -> Vec<f32> {
        self.bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    fn descriptor(&self) -> [u8; 48] {
        let mut d = [0u8; 48];
        d[0] = 2;
        d[2] = self.dtype;
        let four = self.dims.iter().any(|&x| x > 0xFFFF);
        d[1] = if four { 2 } else { 0 };
        for (i, &x) in self.dims.iter().enumerate() {
            if four {
                d[8 + 4 * i..12 + 4 * i].copy_from_slice(&x.to_le_bytes());
            } else {
                d[8 + 2 * i..10 + 2 * i].copy_from_slice(&(x as u16).to_le_bytes());
            }
        }
        let n: u64 = self.dims.iter().map(|&x| u64::from(x)).product();
        d[32..36].copy_from_slice(&(n as u32).to_le_bytes());
        d
    }
}

/// The simulated core: rank, core count, arguments, stdout.
#[derive(Clone, Debug, Default)]
pub struct Harness {
    /// Rank returned by `get_cpu_id`.
    pub cpu_id: u32,
    /// Count returned by `get_cpu_count`.
    pub cpu_count: u32,
    /// Positional arguments.
    pub args: Vec<HostTensor>,
    /// Destination tensor.
    pub dst: Option<HostTensor>,
    /// Everything printed (fd 1 and 2).
    pub stdout: Vec<u8>,
}

std::thread_local! {
    static CURRENT: RefCell<Harness> = RefCell::new(Harness::default());
}

impl Harness {
    /// A harness for core `cpu_id` of `cpu_count`.
    pub fn new(cpu_id: u32, cpu_count: u32) -> Harness {
        Harness { cpu_id, cpu_count, ..Harness::default() }
    }

    /// Appends a positional argument.
    pub fn push_tensor(&mut self, t: HostTensor) {
        self.args.push(t);
    }

    /// Sets the destination tensor.
    pub fn set_dst(&mut self, t: HostTensor) {
        self.dst = Some(t);
    }

    /// Makes this the current thread's core.
    pub fn install(self) {
        CURRENT.with(|c| *c.borrow_mut() = self);
    }

    /// Takes the current thread's core back (with results and output).
    pub fn take() -> Harness {
        CURRENT.with(|c| std::mem::take(&mut *c.borrow_mut()))
    }

    /// Sets only the rank of the installed core (SPMD tests).
    pub fn set_cpu(cpu_id: u32) {
        CURRENT.with(|c| c.borrow_mut().cpu_id = cpu_id);
    }

    fn block(&self) -> [u8; 576] {
        let mut b = [0u8; 576];
        b[..8].copy_from_slice(&(self.args.len() as u64).to_le_bytes());
        for (i, t) in self.args.iter().take(10).enumerate() {
            b[8 + 48 * i..56 + 48 * i].copy_from_slice(&t.descriptor());
            b[0x1E8 + i] = t.kind;
        }
        if let Some(d) = &self.dst {
            b[0x1F8] = 1;
            b[0x200..0x230].copy_from_slice(&d.descriptor());
        }
        b
    }
}

/// The import implementations the SDK calls on the host.
pub(crate) mod sys {
    use super::CURRENT;

    pub fn cpu_id() -> i32 {
        CURRENT.with(|c| c.borrow().cpu_id as i32)
    }
    pub fn cpu_count() -> i32 {
        CURRENT.with(|c| c.borrow().cpu_count as i32)
    }
    pub fn value() -> i32 {
        0
    }
    pub fn args(buf: &mut [u8]) -> i32 {
        CURRENT.with(|c| {
            let b = c.borrow().block();
            let n = buf.len().min(b.len());
            buf[..n].copy_from_slice(&b[..n]);
            b.len() as i32
        })
    }
    /// Out-of-range accesses panic, as the device traps.
    pub fn read(arg: u32, off: u64, buf: &mut [u8]) -> i32 {
        CURRENT.with(|c| {
            let h = c.borrow();
            let t = if arg == 10 { h.dst.as_ref() } else { h.args.get(arg as usize) };
            let t = t.expect("tensor_read: no such argument (the device traps: TENSOR_OOB)");
            let off = off as usize;
            buf.copy_from_slice(&t.bytes[off..off + buf.len()]);
            0
        })
    }
    pub fn write(arg: u32, off: u64, buf: &[u8]) -> i32 {
        CURRENT.with(|c| {
            let mut h = c.borrow_mut();
            let t = if arg == 10 { h.dst.as_mut() } else { h.args.get_mut(arg as usize) };
            let t = t.expect("tensor_write: no such argument (the device traps: TENSOR_OOB)");
            let off = off as usize;
            t.bytes[off..off + buf.len()].copy_from_slice(buf);
            0
        })
    }
    pub fn stdio(_fd: i32, text: &[u8]) -> i32 {
        CURRENT.with(|c| c.borrow_mut().stdout.extend_from_slice(text));
        text.len() as i32
    }
}
