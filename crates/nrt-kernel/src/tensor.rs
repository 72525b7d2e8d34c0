//! Tensor handles and the kernel-author accessors: raw byte access, the
//! TCM accessor (`tensor_to_tcm` / `tcm_to_tensor`, the only accessor
//! allowed in multicore mode) and the sequential read / write stream
//! accessors (4 KiB of TCM each).

use crate::error::KernelError;
use crate::limits::{MAX_RANK, STREAM_BUFFER_BYTES};
use crate::sys;
use crate::tcm::TcmBuf;

/// An element type a tensor can hold, tied to its ISA dtype code.
pub trait Element: Copy + Default {
    /// ISA dtype code (`NEURON_ISA_TPB_DTYPE`).
    const DTYPE: u8;
    /// Decodes one element from little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
    /// Encodes one element as little-endian bytes into `out`.
    fn to_le(self, out: &mut [u8]);
}

macro_rules! element {
    ($t:ty, $code:expr) => {
        impl Element for $t {
            const DTYPE: u8 = $code;
            fn from_le(b: &[u8]) -> Self {
                let mut a = [0u8; core::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..core::mem::size_of::<$t>()]);
                <$t>::from_le_bytes(a)
            }
            fn to_le(self, out: &mut [u8]) {
                out[..core::mem::size_of::<$t>()].copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}
element!(i8, 2);
element!(u8, 3);
element!(i16, 4);
element!(u16, 5);
element!(i32, 8);
element!(u32, 9);
element!(f32, 10);
element!(i64, 12);
element!(u64, 1);

/// Bytes of one element of an ISA dtype. The same table as
/// `nrt_isa::ucode::args::dtype_bytes`, kept here because this SDK builds
/// for wasm32 with no dependencies (nrt-isa is a std host crate).
fn dtype_bytes(code: u8) -> Option<u64> {
    Some(match code {
        2 | 3 | 13 | 14 | 15 => 1,
        4..=7 => 2,
        8..=11 => 4,
        1 | 12 => 8,
        _ => return None,
    })
}

/// One argument (or the destination) of the running op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    arg: u32,
    dtype: u8,
    dims: [u32; MAX_RANK],
    rank: usize,
    numel: u64,
}

impl Tensor {
    /// Parses a 48-byte descriptor (only the fields a kernel needs; the
    /// device has already validated it).
    pub(crate) fn from_descriptor(arg: u32, d: &[u8]) -> Result<Tensor, KernelError> {
        let dtype = d[2];
        dtype_bytes(dtype).ok_or(KernelError::BadArgs)?;
        let mut dims = [0u32; MAX_RANK];
        match d[1] {
            0 => {
                for (i, x) in dims.iter_mut().enumerate() {
                    *x = u32::from(u16::from_le_bytes([d[8 + 2 * i], d[9 + 2 * i]]));
                }
            }
            2 => {
                for (i, x) in dims.iter_mut().take(4).enumerate() {
                    *x = u32::from_le_bytes([d[8 + 4 * i], d[9 + 4 * i], d[10 + 4 * i], d[11 + 4 * i]]);
                }
            }
            _ => return Err(KernelError::BadArgs),
        }
        let rank = dims.iter().take_while(|&&x| x != 0).count();
        if rank == 0 {
            return Err(KernelError::BadArgs);
        }
        let numel = dims[..rank].iter().map(|&x| u64::from(x)).product();
        Ok(Tensor { arg, dtype, dims, rank, numel })
    }

    /// Argument index (0..10; 10 = destination).
    pub fn arg(&self) -> u32 {
        self.arg
    }

    /// ISA dtype code.
    pub fn dtype(&self) -> u8 {
        self.dtype
    }

    /// Dimensions, outermost first.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.rank]
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.numel as usize
    }

    /// Bytes of one element.
    pub fn elem_bytes(&self) -> u64 {
        dtype_bytes(self.dtype).unwrap_or(0)
    }

    /// Total bytes.
    pub fn byte_len(&self) -> u64 {
        self.numel * self.elem_bytes()
    }

    /// Copies bytes `off..off + buf.len()` of the tensor into `buf`.
    pub fn read_bytes(&self, off: u64, buf: &mut [u8]) -> Result<(), KernelError> {
        if off.checked_add(buf.len() as u64).is_none_or(|e| e > self.byte_len()) {
            return Err(KernelError::OutOfRange);
        }
        sys::tensor_read(self.arg, off, buf);
        Ok(())
    }

    /// Copies `buf` into bytes `off..` of the tensor.
    pub fn write_bytes(&self, off: u64, buf: &[u8]) -> Result<(), KernelError> {
        if off.checked_add(buf.len() as u64).is_none_or(|e| e > self.byte_len()) {
            return Err(KernelError::OutOfRange);
        }
        sys::tensor_write(self.arg, off, buf);
        Ok(())
    }

    fn check<T: Element>(&self) -> Result<(), KernelError> {
        if T::DTYPE == self.dtype { Ok(()) } else { Err(KernelError::DtypeMismatch) }
    }

    /// The value of a 1-element tensor as f64 (scalar arguments).
    pub fn scalar_f64(&self) -> Result<f64, KernelError> {
        if self.numel != 1 {
            return Err(KernelError::WrongKind);
        }
        let mut b = [0u8; 8];
        let n = self.elem_bytes() as usize;
        self.read_bytes(0, &mut b[..n])?;
        Ok(match self.dtype {
            2 => f64::from(b[0] as i8),
            3 => f64::from(b[0]),
            4 => f64::from(i16::from_le_bytes([b[0], b[1]])),
            5 => f64::from(u16::from_le_bytes([b[0], b[1]])),
            8 => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            9 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            10 | 11 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            12 => i64::from_le_bytes(b) as f64,
            1 => u64::from_le_bytes(b) as f64,
            _ => return Err(KernelError::DtypeMismatch),
        })
    }

    /// The TCM accessor (bulk copies with flattened element indexing).
    pub fn tcm_accessor(&self) -> TcmAccessor {
        TcmAccessor { t: *self }
    }

    /// A sequential reader of `T` elements from element 0.
    pub fn read_stream_accessor<T: Element>(&self) -> Result<ReadStream<T>, KernelError> {
        self.check::<T>()?;
        let buf = TcmBuf::new(STREAM_BUFFER_BYTES / core::mem::size_of::<T>()).ok_or(KernelError::TcmExhausted)?;
        Ok(ReadStream { t: *self, buf, next: 0, have: 0, at: 0 })
    }

    /// A sequential writer of `T` elements from element 0; flushed on
    /// `close` or drop.
    pub fn write_stream_accessor<T: Element>(&self) -> Result<WriteStream<T>, KernelError> {
        self.check::<T>()?;
        let buf = TcmBuf::new(STREAM_BUFFER_BYTES / core::mem::size_of::<T>()).ok_or(KernelError::TcmExhausted)?;
        Ok(WriteStream { t: *self, buf, len: 0, at: 0 })
    }
}

/// Bulk copies between a tensor and TCM.
#[derive(Clone, Copy, Debug)]
pub struct TcmAccessor {
    t: Tensor,
}

fn as_bytes<T: Element>(s: &[T]) -> &[u8] {
    // SAFETY: every `Element` is a plain integer or float (no padding).
    unsafe { core::slice::from_raw_parts(s.as_ptr() as *const u8, core::mem::size_of_val(s)) }
}

fn as_bytes_mut<T: Element>(s: &mut [T]) -> &mut [u8] {
    // SAFETY: as above, and every bit pattern is a valid element.
    unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut u8, core::mem::size_of_val(s)) }
}

impl TcmAccessor {
    /// Copies `tcm.len()` elements starting at flat element `elem_off` of
    /// the tensor into `tcm`.
    pub fn tensor_to_tcm<T: Element>(&self, tcm: &mut [T], elem_off: usize) -> Result<(), KernelError> {
        self.t.check::<T>()?;
        let off = (elem_off as u64).checked_mul(core::mem::size_of::<T>() as u64).ok_or(KernelError::OutOfRange)?;
        self.t.read_bytes(off, as_bytes_mut(tcm))
    }

    /// Copies `tcm` into the tensor starting at flat element `elem_off`.
    pub fn tcm_to_tensor<T: Element>(&self, tcm: &[T], elem_off: usize) -> Result<(), KernelError> {
        self.t.check::<T>()?;
        let off = (elem_off as u64).checked_mul(core::mem::size_of::<T>() as u64).ok_or(KernelError::OutOfRange)?;
        self.t.write_bytes(off, as_bytes(tcm))
    }
}

/// Sequential reader (a 4 KiB TCM window refilled on demand).
pub struct ReadStream<T: Element> {
    t: Tensor,
    buf: TcmBuf<T>,
    next: usize,
    have: usize,
    at: usize,
}

impl<T: Element> ReadStream<T> {
    /// The next element; `OutOfRange` past the end.
    pub fn read(&mut self) -> Result<T, KernelError> {
        if self.next == self.have {
            let left = self.t.numel().saturating_sub(self.at);
            if left == 0 {
                return Err(KernelError::OutOfRange);
            }
            let n = left.min(self.buf.len());
            self.t.tcm_accessor().tensor_to_tcm(&mut self.buf[..n], self.at)?;
            self.at += n;
            self.have = n;
            self.next = 0;
        }
        let v = self.buf[self.next];
        self.next += 1;
        Ok(v)
    }

    /// Ends the stream (returns 0, as the C++ API does).
    pub fn close(self) -> i32 {
        0
    }
}

/// Sequential writer (a 4 KiB TCM window flushed when full).
pub struct WriteStream<T: Element> {
    t: Tensor,
    buf: TcmBuf<T>,
    len: usize,
    at: usize,
}

impl<T: Element> WriteStream<T> {
    /// Appends one element; `OutOfRange` past the end of the tensor.
    pub fn write(&mut self, v: T) -> Result<(), KernelError> {
        if self.at + self.len >= self.t.numel() {
            return Err(KernelError::OutOfRange);
        }
        self.buf[self.len] = v;
        self.len += 1;
        if self.len == self.buf.len() {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), KernelError> {
        if self.len > 0 {
            self.t.tcm_accessor().tcm_to_tensor(&self.buf[..self.len], self.at)?;
            self.at += self.len;
            self.len = 0;
        }
        Ok(())
    }

    /// Flushes and ends the stream (0 on success, else the error code).
    pub fn close(mut self) -> i32 {
        match self.flush() {
            Ok(()) => 0,
            Err(e) => e.code(),
        }
    }
}

impl<T: Element> Drop for WriteStream<T> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use crate::host::{Harness, HostTensor};
    use crate::*;

    #[test]
    fn abi_pulls_arguments_in_order_and_accessors_move_data() {
        let mut h = Harness::new(0, 1);
        let x: std::vec::Vec<f32> = (0..5000).map(|i| i as f32 - 2500.0).collect();
        h.push_tensor(HostTensor::f32(&[50, 100], &x));
        h.push_tensor(HostTensor::int(7));
        h.set_dst(HostTensor::f32(&[50, 100], &[0.0; 5000]));
        h.install();
        customop_setup(true);
        let t = customop_next_tensor().unwrap();
        assert_eq!((t.dims(), t.numel(), t.dtype()), (&[50u32, 100][..], 5000, 10));
        assert_eq!(customop_next_tensor(), Err(KernelError::WrongKind));
        assert_eq!(customop_next_int(), Ok(7));
        assert_eq!(customop_next_int(), Err(KernelError::NoMoreArgs));
        let y = get_dst_tensor().unwrap();
        let mut rs = t.read_stream_accessor::<f32>().unwrap();
        let mut ws = y.write_stream_accessor::<f32>().unwrap();
        for _ in 0..5000 {
            ws.write(rs.read().unwrap().max(0.0)).unwrap();
        }
        assert_eq!(rs.read(), Err(KernelError::OutOfRange));
        assert_eq!(ws.write(1.0), Err(KernelError::OutOfRange));
        assert_eq!(ws.close(), 0);
        assert_eq!(rs.close(), 0);
        assert_eq!(t.read_stream_accessor::<i32>().err(), Some(KernelError::DtypeMismatch));
        let mut tcm = [0f32; 4];
        t.tcm_accessor().tensor_to_tcm(&mut tcm, 4998).err().unwrap();
        t.tcm_accessor().tensor_to_tcm(&mut tcm, 4996).unwrap();
        assert_eq!(tcm, [2496.0, 2497.0, 2498.0, 2499.0]);
        printf!("done {}\n", 5);
        customop_cleanup();
        let h = Harness::take();
        let want: std::vec::Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
        assert_eq!(h.dst.unwrap().to_f32(), want);
        assert_eq!(h.stdout, b"done 5\n");
        assert_eq!(crate::tcm::tcm_free_bytes(), crate::limits::TCM_POOL_BYTES);
    }

    #[test]
    fn shares_cover_the_range_once() {
        for n in [0usize, 1, 7, 8, 9, 1000] {
            let mut covered = 0;
            let mut prev_end = 0;
            for id in 0..8 {
                let mut h = Harness::new(id, 8);
                h.cpu_id = id;
                h.install();
                let (s, e) = my_share(n);
                assert_eq!(s, prev_end);
                covered += e - s;
                prev_end = e;
            }
            assert_eq!(covered, n);
        }
    }
}
