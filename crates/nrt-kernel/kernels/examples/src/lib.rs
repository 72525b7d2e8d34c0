//! Example GPSIMD kernels. Each core takes its share of the work by
//! `get_cpu_id()` and moves data through TCM with the TCM accessor.
#![no_std]

use nrt_kernel::tcm::TcmBuf;
use nrt_kernel::{KernelError, customop_next_tensor, get_dst_tensor, my_share, printf};

/// Elements per TCM chunk (8 KiB of f32).
const CHUNK: usize = 2048;

/// `y = max(x, 0)` over an fp32 tensor of any shape.
fn relu() -> Result<(), KernelError> {
    let x = customop_next_tensor()?;
    let y = get_dst_tensor()?;
    if x.numel() != y.numel() {
        return Err(KernelError::ShapeMismatch);
    }
    let (start, end) = my_share(x.numel());
    let mut buf = TcmBuf::<f32>::new(CHUNK).ok_or(KernelError::TcmExhausted)?;
    let (xa, ya) = (x.tcm_accessor(), y.tcm_accessor());
    let mut at = start;
    while at < end {
        let n = (end - at).min(CHUNK);
        let b = &mut buf[..n];
        xa.tensor_to_tcm(b, at)?;
        // Compare and select in simd128 (f32::max is a libcall per element
        // on wasm32 and never vectorises).
        nrt_kernel::math::relu_slice(b);
        ya.tcm_to_tensor(b, at)?;
        at += n;
    }
    if nrt_kernel::get_cpu_id() == 0 {
        printf!("relu: {} elements on {} cores\n", x.numel(), nrt_kernel::get_cpu_count());
    }
    Ok(())
}

/// `out = a + b` elementwise over two fp32 tensors of the same shape.
fn add() -> Result<(), KernelError> {
    let a = customop_next_tensor()?;
    let b = customop_next_tensor()?;
    let out = get_dst_tensor()?;
    if a.numel() != b.numel() || a.numel() != out.numel() {
        return Err(KernelError::ShapeMismatch);
    }
    let (start, end) = my_share(a.numel());
    let mut ba = TcmBuf::<f32>::new(CHUNK / 2).ok_or(KernelError::TcmExhausted)?;
    let mut bb = TcmBuf::<f32>::new(CHUNK / 2).ok_or(KernelError::TcmExhausted)?;
    let mut at = start;
    while at < end {
        let n = (end - at).min(CHUNK / 2);
        a.tcm_accessor().tensor_to_tcm(&mut ba[..n], at)?;
        b.tcm_accessor().tensor_to_tcm(&mut bb[..n], at)?;
        for (x, y) in ba[..n].iter_mut().zip(&bb[..n]) {
            *x += *y;
        }
        out.tcm_accessor().tcm_to_tensor(&ba[..n], at)?;
        at += n;
    }
    Ok(())
}

/// Row-wise softmax of an fp32 `[rows, cols]` tensor (any rank: the last
/// dimension is the row); core `c` takes rows `c, c + 8, ...`.
fn softmax() -> Result<(), KernelError> {
    let x = customop_next_tensor()?;
    let y = get_dst_tensor()?;
    if x.numel() != y.numel() || x.numel() == 0 {
        return Err(KernelError::ShapeMismatch);
    }
    let cols = *x.dims().last().ok_or(KernelError::ShapeMismatch)? as usize;
    let rows = x.numel() / cols;
    let (id, count) = (nrt_kernel::get_cpu_id() as usize, nrt_kernel::get_cpu_count() as usize);
    let mut buf = TcmBuf::<f32>::new(CHUNK).ok_or(KernelError::TcmExhausted)?;
    let (xa, ya) = (x.tcm_accessor(), y.tcm_accessor());
    let mut row = id;
    while row < rows {
        let base = row * cols;
        // Pass 1: the row maximum; pass 2: the sum of exponentials;
        // pass 3: the normalised values (a row may exceed one chunk).
        let mut max = f32::NEG_INFINITY;
        let mut at = 0;
        while at < cols {
            let n = (cols - at).min(CHUNK);
            xa.tensor_to_tcm(&mut buf[..n], base + at)?;
            max = buf[..n].iter().fold(max, |m, &v| nrt_kernel::math::max_select(m, v));
            at += n;
        }
        let mut sum = 0.0f32;
        at = 0;
        while at < cols {
            let n = (cols - at).min(CHUNK);
            xa.tensor_to_tcm(&mut buf[..n], base + at)?;
            sum += buf[..n].iter().map(|&v| nrt_kernel::math::expf(v - max)).sum::<f32>();
            at += n;
        }
        let inv = 1.0 / sum;
        at = 0;
        while at < cols {
            let n = (cols - at).min(CHUNK);
            xa.tensor_to_tcm(&mut buf[..n], base + at)?;
            for v in buf[..n].iter_mut() {
                *v = nrt_kernel::math::expf(*v - max) * inv;
            }
            ya.tcm_to_tensor(&buf[..n], base + at)?;
            at += n;
        }
        row += count;
    }
    Ok(())
}

nrt_kernel::kernels!(relu, add, softmax);
