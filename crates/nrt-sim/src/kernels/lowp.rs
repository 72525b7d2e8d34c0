//! Low-precision GEMM operands widened during panel packing.
//!
//! The PE multiplies bf16 / fp16 / fp8 tiles with fp32 accumulation. Every
//! such element widens to f32 exactly, so instead of first building a
//! widened f32 tile (a full extra pass over memory, as costly as the
//! multiply itself on PE-sized shapes) the GEMM's packers read the element
//! storage directly and write f32 panels. The packed panels hold the very
//! values a widened tile would, and the blocking and accumulation order are
//! those of the f32 path, so results are bit-identical to widen-then-multiply.

use half::f16;
use nrt_isa::dtype::Dtype;

use super::error::{KernelError, KernelResult};
use super::gemm::{Dest, MatMut, MatRef, MicroKernel, PanelSource, RowsMut, gemm_sources, micro_kernel};

/// An element encoding the packers can widen on the fly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LowFormat {
    /// bfloat16, little-endian (widening is a 16-bit shift).
    Bfloat16,
    /// IEEE binary16, little-endian.
    Float16,
    /// One of the fp8 formats, decoded through its exact 256-entry table.
    Fp8(nrt_isa::dtype::Fp8Kind),
}

impl LowFormat {
    /// The format of `dtype`, or `None` for dtypes the fused path does not
    /// cover (f32 and integers keep the gather path).
    pub fn of(dtype: Dtype) -> Option<Self> {
        match dtype {
            Dtype::Bfloat16 => Some(Self::Bfloat16),
            Dtype::Float16 => Some(Self::Float16),
            _ => dtype.fp8_kind().map(Self::Fp8),
        }
    }

    /// The dtype this format encodes.
    pub fn dtype(self) -> Dtype {
        match self {
            Self::Bfloat16 => Dtype::Bfloat16,
            Self::Float16 => Dtype::Float16,
            Self::Fp8(kind) => kind.dtype(),
        }
    }

    /// Bytes per element.
    pub fn size_bytes(self) -> usize {
        match self {
            Self::Bfloat16 | Self::Float16 => 2,
            Self::Fp8(_) => 1,
        }
    }
}

/// A read-only strided view of a low-precision matrix stored as raw bytes.
///
/// Element `(i, j)` is the `i * row_stride + j * col_stride`-th element of
/// `bytes` (strides in elements, not bytes), like [`MatRef`].
#[derive(Debug, Clone, Copy)]
pub struct LowRef<'a> {
    bytes: &'a [u8],
    format: LowFormat,
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> LowRef<'a> {
    /// A general strided view; fails if the view would read past `bytes`.
    pub fn new(
        bytes: &'a [u8],
        format: LowFormat,
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> KernelResult<Self> {
        let elems = bytes.len() / format.size_bytes();
        if rows > 0 && cols > 0 {
            let last = (rows - 1)
                .checked_mul(row_stride)
                .and_then(|r| (cols - 1).checked_mul(col_stride).and_then(|c| r.checked_add(c)));
            match last {
                Some(last) if last < elems => {}
                _ => {
                    return Err(KernelError::BufferTooSmall {
                        what: "low-precision matrix operand",
                        needed: last.map_or(usize::MAX, |l| (l + 1).saturating_mul(format.size_bytes())),
                        have: bytes.len(),
                    });
                }
            }
        }
        Ok(Self {
            bytes,
            format,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A dense row-major `rows x cols` view.
    pub fn row_major(bytes: &'a [u8], format: LowFormat, rows: usize, cols: usize) -> KernelResult<Self> {
        Self::new(bytes, format, rows, cols, cols, 1)
    }

    /// The transpose of this view (no data movement).
    pub fn t(self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The element encoding.
    pub fn format(&self) -> LowFormat {
        self.format
    }
}

/// A GEMM operand of any element type the packers read.
#[derive(Debug, Clone, Copy)]
pub enum Operand<'a> {
    /// Plain f32 elements.
    F32(MatRef<'a>),
    /// bf16 / fp16 / fp8 elements, widened while packing.
    Low(LowRef<'a>),
}

/// Exact widening of one encoding, chosen once per GEMM call so the packing
/// loops are specialised per format.
trait Widen: Copy {
    const SIZE: usize;
    /// Whether a fixed block of 8 widens faster than a short run (true
    /// where the block conversion is a couple of vector instructions).
    const BLOCKED: bool;
    fn one(self, b: &[u8], at: usize) -> f32;
    /// Widens consecutive elements `src` (exactly `out.len()` of them).
    fn slice(self, src: &[u8], out: &mut [f32]);
}

#[derive(Clone, Copy)]
struct Bf16;
/// IEEE binary16; `hw` says the CPU converts 8 at a time (F16C), chosen
/// once per GEMM call.
#[derive(Clone, Copy)]
struct F16 {
    hw: bool,
}

impl F16 {
    fn for_this_cpu() -> Self {
        #[cfg(target_arch = "x86_64")]
        let hw = std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("avx");
        #[cfg(not(target_arch = "x86_64"))]
        let hw = false;
        Self { hw }
    }
}
#[derive(Clone, Copy)]
struct Fp8(&'static [f32; 256]);

impl Widen for Bf16 {
    const SIZE: usize = 2;
    const BLOCKED: bool = true;
    #[inline(always)]
    fn one(self, b: &[u8], at: usize) -> f32 {
        f32::from_bits(u32::from(u16::from_le_bytes([b[at], b[at + 1]])) << 16)
    }
    #[inline(always)]
    fn slice(self, src: &[u8], out: &mut [f32]) {
        let (blocks, src_rest) = src.as_chunks::<16>();
        let (out_blocks, out_rest) = out.as_chunks_mut::<8>();
        for (o, b) in out_blocks.iter_mut().zip(blocks) {
            bf16_block(b, o);
        }
        // `src` holds exactly two bytes per output, so the tails line up.
        for (o, w) in out_rest.iter_mut().zip(src_rest.as_chunks::<2>().0) {
            *o = f32::from_bits(u32::from(u16::from_le_bytes(*w)) << 16);
        }
    }
}

/// Widens 8 bf16 values: each 16-bit code becomes the high half of an f32.
#[inline(always)]
fn bf16_block(src: &[u8; 16], out: &mut [f32; 8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi16, _mm_unpacklo_epi16};
        // SAFETY: SSE2 is part of the x86-64 baseline; `src` is 16 readable
        // bytes and `out` 32 writable bytes, both accessed unaligned.
        unsafe {
            let v = _mm_loadu_si128(src.as_ptr().cast());
            let z = _mm_setzero_si128();
            // Interleaving zero words below each code puts code << 16 in
            // every 32-bit lane (little-endian).
            _mm_storeu_si128(out.as_mut_ptr().cast(), _mm_unpacklo_epi16(z, v));
            _mm_storeu_si128(out.as_mut_ptr().add(4).cast(), _mm_unpackhi_epi16(z, v));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (o, w) in out.iter_mut().zip(src.as_chunks::<2>().0) {
        *o = f32::from_bits(u32::from(u16::from_le_bytes(*w)) << 16);
    }
}

impl Widen for F16 {
    const SIZE: usize = 2;
    const BLOCKED: bool = true;
    #[inline(always)]
    fn one(self, b: &[u8], at: usize) -> f32 {
        f16::from_bits(u16::from_le_bytes([b[at], b[at + 1]])).to_f32()
    }
    #[inline(always)]
    fn slice(self, src: &[u8], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if self.hw {
            // SAFETY: `hw` is set only after run-time detection of F16C and AVX.
            unsafe { f16_slice_f16c(src, out) };
            return;
        }
        for (o, w) in out.iter_mut().zip(src.as_chunks::<2>().0) {
            *o = f16::from_bits(u16::from_le_bytes(*w)).to_f32();
        }
    }
}

/// Widens `out.len()` fp16 codes of `src` (two bytes each) with F16C, 8 per
/// instruction; the conversion is exact, like the scalar one (subnormals
/// included, a NaN stays a NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "f16c,avx")]
#[inline]
unsafe fn f16_slice_f16c(src: &[u8], out: &mut [f32]) {
    use std::arch::x86_64::{_mm_loadu_si128, _mm256_cvtph_ps, _mm256_storeu_ps};
    let (blocks, src_rest) = src.as_chunks::<16>();
    let (out_blocks, out_rest) = out.as_chunks_mut::<8>();
    for (o, b) in out_blocks.iter_mut().zip(blocks) {
        // SAFETY: `b` is 16 readable bytes, `o` 32 writable bytes (unaligned
        // accesses); the caller guarantees the CPU features.
        unsafe { _mm256_storeu_ps(o.as_mut_ptr(), _mm256_cvtph_ps(_mm_loadu_si128(b.as_ptr().cast()))) };
    }
    for (o, w) in out_rest.iter_mut().zip(src_rest.as_chunks::<2>().0) {
        *o = f16::from_bits(u16::from_le_bytes(*w)).to_f32();
    }
}

impl Widen for Fp8 {
    const SIZE: usize = 1;
    const BLOCKED: bool = false;
    #[inline(always)]
    fn one(self, b: &[u8], at: usize) -> f32 {
        self.0[usize::from(b[at])]
    }
    #[inline(always)]
    fn slice(self, src: &[u8], out: &mut [f32]) {
        for (o, b) in out.iter_mut().zip(src) {
            *o = self.0[usize::from(*b)];
        }
    }
}

/// A [`LowRef`] with its format fixed at compile time.
#[derive(Clone, Copy)]
struct Typed<'a, W: Widen> {
    view: LowRef<'a>,
    widen: W,
}

impl<W: Widen + Sync> PanelSource for Typed<'_, W> {
    fn rows(&self) -> usize {
        self.view.rows
    }
    fn cols(&self) -> usize {
        self.view.cols
    }
    fn row_stride(&self) -> usize {
        self.view.row_stride
    }
    fn col_stride(&self) -> usize {
        self.view.col_stride
    }
    #[inline(always)]
    fn read_run(&self, start: usize, step: usize, out: &mut [f32]) {
        let bytes = self.view.bytes;
        if step == 1 {
            let at = start * W::SIZE;
            let n = out.len();
            if W::BLOCKED && n < 8 && at + 8 * W::SIZE <= bytes.len() {
                // Short runs (A panels are MR = 6 wide): widen a fixed block
                // of 8, which vectorises, and keep the first `n`. The extra
                // elements read are inside the storage and are discarded.
                let mut block = [0.0f32; 8];
                self.widen.slice(&bytes[at..at + 8 * W::SIZE], &mut block);
                out.copy_from_slice(&block[..n]);
                return;
            }
            self.widen.slice(&bytes[at..at + n * W::SIZE], out);
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.widen.one(bytes, (start + i * step) * W::SIZE);
            }
        }
    }
}

/// Binds `$s` to the operand's concrete packable type and evaluates `$body`.
macro_rules! with_source {
    ($op:expr, $s:ident => $body:expr) => {
        match $op {
            Operand::F32(m) => {
                let $s = m;
                $body
            }
            Operand::Low(view) => match view.format {
                LowFormat::Bfloat16 => {
                    let $s = Typed { view, widen: Bf16 };
                    $body
                }
                LowFormat::Float16 => {
                    let $s = Typed { view, widen: F16::for_this_cpu() };
                    $body
                }
                LowFormat::Fp8(kind) => {
                    let $s = Typed {
                        view,
                        widen: Fp8(kind.decode_table()),
                    };
                    $body
                }
            },
        }
    };
}

/// `C = A · B` (or `C += A · B`) with fp32 accumulation, widening
/// low-precision operands during packing. Bit-identical to widening both
/// operands to f32 first and calling [`super::gemm::gemm`].
pub fn gemm_mixed(a: Operand<'_>, b: Operand<'_>, c: &mut MatMut<'_>, accumulate: bool) -> KernelResult<()> {
    gemm_mixed_with(micro_kernel(), a, b, c, accumulate)
}

/// [`gemm_mixed`] with an explicit micro-kernel choice.
pub fn gemm_mixed_with(
    kernel: MicroKernel,
    a: Operand<'_>,
    b: Operand<'_>,
    c: &mut MatMut<'_>,
    accumulate: bool,
) -> KernelResult<()> {
    with_source!(a, sa => with_source!(b, sb => gemm_sources(kernel, &sa, &sb, Dest::Mat(&mut *c), accumulate)))
}

/// [`gemm_mixed`] into a destination whose rows are separate slices (the
/// PE's PSUM partitions, multiplied into in place).
pub fn gemm_mixed_rows(a: Operand<'_>, b: Operand<'_>, c: &mut RowsMut<'_, '_>, accumulate: bool) -> KernelResult<()> {
    let kernel = micro_kernel();
    with_source!(a, sa => with_source!(b, sb => gemm_sources(kernel, &sa, &sb, Dest::Rows(&mut *c), accumulate)))
}

#[cfg(test)]
mod tests;
