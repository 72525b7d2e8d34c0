//! A cache-blocked, register-blocked single-precision GEMM.
//!
//! The PE array's work (`PSUM += stationaryᵀ · moving`) is the hottest loop of
//! the simulator, so it gets a real GEMM: the operands are packed into panels
//! sized for the caches (`KC` deep, `MC` rows of A, `NC` columns of B), and a
//! `MR x NR` = 6 x 16 micro-kernel accumulates in registers. On x86-64 with
//! AVX2 + FMA (detected at run time) the micro-kernel uses explicit 256-bit
//! FMAs; everywhere else a portable version written so LLVM vectorises the
//! 16-wide inner loop is used. Accumulation is always fp32, as in PSUM.
//!
//! # Accumulation order
//!
//! The result is defined element by element, not just up to rounding: each
//! `C[i][j]` starts from its old value (when accumulating) or from +0.0, and
//! the products `A[i][p] · B[p][j]` are added to it one at a time in
//! ascending `p`, each step a fused multiply-add (`acc = fma(a, b, acc)`,
//! one rounding). Cache blocking never changes that order: a `KC` block
//! resumes from the partial sum the previous block left in C, loaded into
//! the micro-kernel's registers (not added to a separately computed block
//! product), and a micro-tile starts from C rather than from zero. Both
//! micro-kernels (AVX2 `vfmadd` and the portable `f32::mul_add`) therefore
//! give bit-identical results, equal to a plain sequential loop
//! `for p in 0..k { c = a[i][p].mul_add(b[p][j], c) }`.
//!
//! For operands that widen from bf16 / fp16 / fp8 the products are exact in
//! fp32 (at most 11 + 11 significant bits), so the fused step equals
//! `c + a * b` rounded once: the same as an unfused sequential reference.
//! For fp32 operands the fused step rounds once where `c + a * b` written
//! out rounds twice, so an unfused fp32 reference may differ in the last
//! bit; a reference using `mul_add` matches exactly.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::Mutex;

use super::error::{KernelError, KernelResult};
use super::split;

/// Rows of C produced by one micro-kernel call.
const MR: usize = 6;
/// Columns of C produced by one micro-kernel call.
const NR: usize = 16;
/// Depth of a packed panel (shared dimension per block).
const KC: usize = 256;
/// Rows of A packed per block (multiple of `MR`, sized for L2).
const MC: usize = 96;
/// Columns of B packed per block (multiple of `NR`).
const NC: usize = 2048;

/// A read-only strided view of an f32 matrix.
///
/// Element `(i, j)` lives at `data[i * row_stride + j * col_stride]`; strides
/// let callers pass transposed operands (such as the stationary tile, whose
/// transpose is what the PE multiplies) without copying.
#[derive(Debug, Clone, Copy)]
pub struct MatRef<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

/// A mutable strided view of an f32 matrix (the GEMM destination).
#[derive(Debug)]
pub struct MatMut<'a> {
    data: &'a mut [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

/// Checks that the largest index a strided view can touch is inside `len`.
fn check_extent(what: &'static str, len: usize, rows: usize, cols: usize, rs: usize, cs: usize) -> KernelResult<()> {
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let last = (rows - 1)
        .checked_mul(rs)
        .and_then(|r| (cols - 1).checked_mul(cs).and_then(|c| r.checked_add(c)))
        .ok_or(KernelError::BufferTooSmall {
            what,
            needed: usize::MAX,
            have: len,
        })?;
    if last >= len {
        return Err(KernelError::BufferTooSmall {
            what,
            needed: last + 1,
            have: len,
        });
    }
    Ok(())
}

impl<'a> MatRef<'a> {
    /// A general strided view; fails if the view would read past `data`.
    pub fn new(data: &'a [f32], rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> KernelResult<Self> {
        check_extent("matrix operand", data.len(), rows, cols, row_stride, col_stride)?;
        Ok(Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A dense row-major `rows x cols` view.
    pub fn row_major(data: &'a [f32], rows: usize, cols: usize) -> KernelResult<Self> {
        Self::new(data, rows, cols, cols, 1)
    }

    /// The transpose of this view (no data movement).
    pub fn t(self) -> Self {
        Self {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
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
}

impl<'a> MatMut<'a> {
    /// A general strided mutable view; fails if it would reach past `data`.
    pub fn new(data: &'a mut [f32], rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> KernelResult<Self> {
        check_extent("matrix destination", data.len(), rows, cols, row_stride, col_stride)?;
        Ok(Self {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A dense row-major `rows x cols` destination.
    pub fn row_major(data: &'a mut [f32], rows: usize, cols: usize) -> KernelResult<Self> {
        Self::new(data, rows, cols, cols, 1)
    }
}

/// A destination whose rows are separate slices: the PE's PSUM, one
/// slice per partition, multiplied into in place instead of being
/// gathered into a tile and scattered back (two passes over C per
/// MATMUL). Row `i`, column `j` is `rows[i][j]`.
#[derive(Debug)]
pub struct RowsMut<'r, 'a> {
    rows: &'r mut [&'a mut [f32]],
    cols: usize,
}

impl<'r, 'a> RowsMut<'r, 'a> {
    /// `rows.len() x cols`; fails if a row is shorter than `cols`.
    pub fn new(rows: &'r mut [&'a mut [f32]], cols: usize) -> KernelResult<Self> {
        if let Some(short) = rows.iter().find(|r| r.len() < cols) {
            return Err(KernelError::BufferTooSmall { what: "matrix destination row", needed: cols, have: short.len() });
        }
        Ok(Self { rows, cols })
    }
}

/// C as the blocked loops reach it: element `(i, j)` at `row(i) + j * cs`.
/// Built from a `&mut` destination ([`MatMut`] or [`RowsMut`]) whose
/// extent was checked, and used only while that borrow lasts; the parts
/// of a split GEMM write disjoint row bands through copies of it.
#[derive(Clone, Copy)]
struct Out<'c> {
    rows: usize,
    cols: usize,
    cs: usize,
    at: RowsAt,
    _borrow: PhantomData<&'c mut f32>,
}

/// Where [`Out`]'s rows start.
#[derive(Clone, Copy)]
enum RowsAt {
    /// One buffer, rows `rs` elements apart.
    Strided { base: *mut f32, rs: usize },
    /// Row `i` is the slice at `rows[i]` (a [`RowsMut`]'s).
    Slices(*mut &'static mut [f32]),
}

// SAFETY: an `Out` stands for a `&mut` borrow of C held by the GEMM's
// caller for the whole call; copies on other threads (the parts of a
// split GEMM) write only their own rows, so no element is reached from
// two threads.
unsafe impl Send for Out<'_> {}
// SAFETY: as above.
unsafe impl Sync for Out<'_> {}

impl<'c> Out<'c> {
    fn mat(c: &'c mut MatMut<'_>) -> Self {
        Out {
            rows: c.rows,
            cols: c.cols,
            cs: c.col_stride,
            at: RowsAt::Strided { base: c.data.as_mut_ptr(), rs: c.row_stride },
            _borrow: PhantomData,
        }
    }

    fn slices(c: &'c mut RowsMut<'_, '_>) -> Self {
        Out {
            rows: c.rows.len(),
            cols: c.cols,
            cs: 1,
            at: RowsAt::Slices(c.rows.as_mut_ptr().cast()),
            _borrow: PhantomData,
        }
    }

    /// The first element of row `i < rows`.
    #[inline(always)]
    fn row(&self, i: usize) -> *mut f32 {
        debug_assert!(i < self.rows);
        match self.at {
            RowsAt::Strided { base, rs } => base.wrapping_add(i * rs),
            // SAFETY: `i < rows`, the length of the slice array the
            // `RowsMut` lent for this borrow.
            RowsAt::Slices(rows) => unsafe { (*rows.add(i)).as_mut_ptr() },
        }
    }

    /// A pointer to element `(i, j)` (`i < rows`, `j < cols`).
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> *mut f32 {
        self.row(i).wrapping_add(j * self.cs)
    }

    /// Whether each row's elements are adjacent.
    fn unit_cols(&self) -> bool {
        self.cs == 1
    }
}

/// Which micro-kernel implementation this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MicroKernel {
    /// Explicit AVX2 + FMA intrinsics (x86-64 with AVX2, FMA and F16C).
    Avx2Fma,
    /// Portable Rust that LLVM auto-vectorises for the baseline target.
    Portable,
}

/// The micro-kernel [`gemm`] will use on this machine (for reports/benches).
pub fn micro_kernel() -> MicroKernel {
    #[cfg(target_arch = "x86_64")]
    {
        // F16C comes with every AVX2 CPU; the packers compiled for this
        // kernel widen fp16 with it.
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("f16c") {
            return MicroKernel::Avx2Fma;
        }
    }
    MicroKernel::Portable
}

thread_local! {
    /// Packing buffers reused across calls so a matmul never allocates in steady state.
    static PACK: RefCell<(Vec<f32>, Vec<f32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// `C = A · B` (or `C += A · B` when `accumulate`), all in fp32.
///
/// Shapes: A is `m x k`, B is `k x n`, C is `m x n`; a mismatch is an error.
/// With `k == 0` the product is zero, so C is zeroed (or left alone when
/// accumulating).
pub fn gemm(a: MatRef<'_>, b: MatRef<'_>, c: &mut MatMut<'_>, accumulate: bool) -> KernelResult<()> {
    gemm_with(micro_kernel(), a, b, c, accumulate)
}

/// [`gemm`] with an explicit micro-kernel choice (tests compare both paths).
///
/// Asking for [`MicroKernel::Avx2Fma`] on a CPU without it falls back to the
/// portable kernel rather than faulting.
pub fn gemm_with(kernel: MicroKernel, a: MatRef<'_>, b: MatRef<'_>, c: &mut MatMut<'_>, accumulate: bool) -> KernelResult<()> {
    gemm_sources(kernel, &a, &b, Dest::Mat(c), accumulate)
}

/// The destination of a GEMM: one strided buffer or separate rows.
pub(crate) enum Dest<'c, 'r, 'a> {
    /// A [`MatMut`].
    Mat(&'c mut MatMut<'a>),
    /// A [`RowsMut`].
    Rows(&'c mut RowsMut<'r, 'a>),
}

/// An operand the packers can read: a strided `rows x cols` matrix whose
/// elements widen exactly to f32 as they are packed.
///
/// [`MatRef`] (f32) and the low-precision views of [`super::lowp`] implement
/// it, so a bf16 / fp16 / fp8 operand is widened straight into the packed
/// panels instead of into a separate f32 tile first.
pub(crate) trait PanelSource: Sync {
    /// Number of rows.
    fn rows(&self) -> usize;
    /// Number of columns.
    fn cols(&self) -> usize;
    /// Storage distance between rows, in elements.
    fn row_stride(&self) -> usize;
    /// Storage distance between columns, in elements.
    fn col_stride(&self) -> usize;
    /// Widens the elements at storage indices `start, start + step, ...`
    /// into `out` (one per slot). The view's constructor has checked that
    /// every index of the matrix is inside its storage.
    fn read_run(&self, start: usize, step: usize, out: &mut [f32]);
}

impl PanelSource for MatRef<'_> {
    fn rows(&self) -> usize {
        self.rows
    }
    fn cols(&self) -> usize {
        self.cols
    }
    fn row_stride(&self) -> usize {
        self.row_stride
    }
    fn col_stride(&self) -> usize {
        self.col_stride
    }
    #[inline(always)]
    fn read_run(&self, start: usize, step: usize, out: &mut [f32]) {
        if step == 1 {
            out.copy_from_slice(&self.data[start..start + out.len()]);
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.data[start + i * step];
            }
        }
    }
}

/// The GEMM over any pair of packable operands (monomorphised per pair, so
/// the f32 path compiles to the same packing loops as before).
pub(crate) fn gemm_sources<A: PanelSource, B: PanelSource>(
    kernel: MicroKernel,
    a: &A,
    b: &B,
    c: Dest<'_, '_, '_>,
    accumulate: bool,
) -> KernelResult<()> {
    let c = match c {
        Dest::Mat(c) => Out::mat(c),
        Dest::Rows(c) => Out::slices(c),
    };
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    if b.rows() != k || c.rows != m || c.cols != n {
        return Err(KernelError::ShapeMismatch {
            op: "gemm",
            expected: format!("A {m}x{k}, B {k}x{n}, C {m}x{n}"),
            got: format!("A {}x{}, B {}x{}, C {}x{}", a.rows(), a.cols(), b.rows(), b.cols(), c.rows, c.cols),
        });
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 {
        if !accumulate {
            for i in 0..m {
                for j in 0..n {
                    // SAFETY: (i, j) is inside C, whose extent the
                    // destination's constructor checked.
                    unsafe { *c.at(i, j) = 0.0 };
                }
            }
        }
        return Ok(());
    }
    let kernel = if kernel == MicroKernel::Avx2Fma && micro_kernel() != MicroKernel::Avx2Fma {
        MicroKernel::Portable
    } else {
        kernel
    };
    let parts = split_parts(m, n, k, &c);
    if parts <= 1 {
        blocked_here(kernel, a, b, &c, accumulate);
    } else {
        blocked_split(kernel, a, b, &c, accumulate, parts);
    }
    Ok(())
}

/// Multiply-adds from which a GEMM is offered to idle threads
/// ([`split::run_parts`]): below it the hand-off and the parts' separate
/// passes over the packed B cost more than a second CPU gains. A PE
/// MATMUL of the compiler's largest shape (128 x 128 x 512) is 8 M.
pub const SPLIT_MIN_MACS: usize = 1 << 21;

/// Most parts a split GEMM has (row bands of C; each also packs a share
/// of B).
const MAX_SPLIT_PARTS: usize = 8;

/// Parts a GEMM of this shape is offered in: 1 unless it is large, C is
/// row-major with unit columns, and there are at least two `MR` row
/// panels. Twice the CPUs, so a helper that joins late still finds work
/// and the caller's last wait is for a small part.
fn split_parts(m: usize, n: usize, k: usize, c: &Out<'_>) -> usize {
    let macs = m.saturating_mul(n).saturating_mul(k);
    let overlapping = matches!(c.at, RowsAt::Strided { rs, .. } if rs < c.cols);
    if macs < SPLIT_MIN_MACS || !c.unit_cols() || overlapping {
        return 1;
    }
    (2 * cpus()).min(m.div_ceil(MR)).min(MAX_SPLIT_PARTS)
}

/// CPUs this process may run on (read once).
fn cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// [`blocked`] with this thread's packing buffers.
fn blocked_here<A: PanelSource, B: PanelSource>(kernel: MicroKernel, a: &A, b: &B, c: &Out<'_>, accumulate: bool) {
    PACK.with(|cell| {
        let mut bufs = cell.borrow_mut();
        let (pa, pb) = &mut *bufs;
        blocked(kernel, a, b, c, accumulate, pa, pb);
    });
}

/// The three-level blocking loop (Goto/BLIS order: jc, pc, ic, jr, ir).
fn blocked<A: PanelSource, B: PanelSource>(
    kernel: MicroKernel,
    a: &A,
    b: &B,
    c: &Out<'_>,
    accumulate: bool,
    pa: &mut Vec<f32>,
    pb: &mut Vec<f32>,
) {
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            grow(pb, nc.div_ceil(NR) * NR * kc);
            let block = Block { jc, nc, pc, kc, add: accumulate || pc > 0 };
            pack_b(kernel, b, &block, 0..nc.div_ceil(NR), pb);
            multiply_rows(kernel, a, pb, c, 0..m, &block, pa);
        }
    }
}

/// One (jc, pc) block of the blocking loop: columns `jc..jc + nc` of B
/// and C, depth `pc..pc + kc`, and whether C's values are resumed.
struct Block {
    jc: usize,
    nc: usize,
    pc: usize,
    kc: usize,
    add: bool,
}

/// The block's product for rows `rows` of A and C, against the packed B
/// block `pb` (the ic, jr, ir loops).
fn multiply_rows<A: PanelSource>(kernel: MicroKernel, a: &A, pb: &[f32], c: &Out<'_>, rows: std::ops::Range<usize>, blk: &Block, pa: &mut Vec<f32>) {
    let Block { jc, nc, pc, kc, add } = *blk;
    let mut acc = [0.0f32; MR * NR];
    for ic in rows.clone().step_by(MC) {
        let mc = MC.min(rows.end - ic);
        pack_a(kernel, a, ic, mc, pc, kc, pa);
        for jr in (0..nc).step_by(NR) {
            let nr = NR.min(nc - jr);
            let bp = &pb[jr * kc..jr * kc + kc * NR];
            for ir in (0..mc).step_by(MR) {
                let mr = MR.min(mc - ir);
                let ap = &pa[ir * kc..ir * kc + kc * MR];
                let (i0, j0) = (ic + ir, jc + jr);
                if kernel == MicroKernel::Avx2Fma && mr == MR && nr == NR && c.unit_cols() {
                    // Full tile, unit columns: the kernel updates C from registers.
                    let tile: [*mut f32; MR] = std::array::from_fn(|ii| c.at(i0 + ii, j0));
                    run_kernel_direct(kc, ap, bp, &tile, add);
                } else {
                    load(c, i0, j0, mr, nr, &mut acc, add);
                    run_kernel(kernel, kc, ap, bp, &mut acc);
                    store(c, i0, j0, mr, nr, &acc);
                }
            }
        }
    }
}

/// [`blocked`] in `parts` parts that idle threads may take
/// ([`split::run_parts`]): per (jc, pc) block, the parts first pack
/// shares of B's panels into the caller's buffer, then multiply bands of
/// `MR`-row panels of A and C against it, each packing its own rows of A.
/// Every element is computed as in [`blocked`] (same blocking over k, same
/// kernel, same starting value), so the result is bit-identical whoever
/// runs which part.
fn blocked_split<A: PanelSource, B: PanelSource>(kernel: MicroKernel, a: &A, b: &B, c: &Out<'_>, accumulate: bool, parts: usize) {
    let (m, k, n) = (a.rows(), a.cols(), b.cols());
    let parts = parts.min(MAX_SPLIT_PARTS);
    // Row bands of C, whole MR panels each (rounding can leave fewer
    // bands, never an empty one); each part owns its band's rows of C.
    let band = m.div_ceil(MR).div_ceil(parts) * MR;
    let parts = m.div_ceil(band);
    PACK.with(|cell| {
        let mut bufs = cell.borrow_mut();
        let pb = &mut bufs.1;
        for jc in (0..n).step_by(NC) {
            let nc = NC.min(n - jc);
            let panels = nc.div_ceil(NR);
            for pc in (0..k).step_by(KC) {
                let kc = KC.min(k - pc);
                grow(pb, panels * NR * kc);
                // Shares of B's panels, each part's slice of the buffer
                // handed over whole.
                let share = panels.div_ceil(parts);
                let blk = Block { jc, nc, pc, kc, add: accumulate || pc > 0 };
                {
                    let mut slices: [Mutex<Option<&mut [f32]>>; MAX_SPLIT_PARTS] = Default::default();
                    let mut left: &mut [f32] = &mut pb[..panels * NR * kc];
                    for slot in slices.iter_mut().take(parts) {
                        let take = (share * NR * kc).min(left.len());
                        let (mine, tail) = std::mem::take(&mut left).split_at_mut(take);
                        left = tail;
                        *slot.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(mine);
                    }
                    split::run_parts(parts, &|i| {
                        let lo = (i * share).min(panels);
                        if let Some(out) = slices[i].lock().unwrap_or_else(|e| e.into_inner()).take() {
                            pack_b(kernel, b, &blk, lo..(lo + share).min(panels), out);
                        }
                    });
                }
                let packed: &[f32] = &pb[..panels * NR * kc];
                split::run_parts(parts, &|i| {
                    let rows = i * band..m.min((i + 1) * band);
                    // This thread's own A buffer (a helper's fills on its
                    // first part, then is reused).
                    A_PACK.with(|pa| multiply_rows(kernel, a, packed, c, rows, &blk, &mut pa.borrow_mut()));
                });
            }
        }
    });
}

thread_local! {
    /// The A panels of a split GEMM's part (apart from [`PACK`], which the
    /// caller holds for B while its parts run).
    static A_PACK: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Makes `buf` at least `len` long without rewriting what it holds: every
/// packed element is overwritten before use, so only growth needs zeroing.
fn grow(buf: &mut Vec<f32>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
}

/// Packs `A[ic..ic+mc, pc..pc+kc]` into `MR`-row panels (widening as it
/// reads), zero-padding the last.
fn pack_a<A: PanelSource>(kernel: MicroKernel, a: &A, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut Vec<f32>) {
    grow(out, mc.div_ceil(MR) * MR * kc);
    #[cfg(target_arch = "x86_64")]
    if kernel == MicroKernel::Avx2Fma {
        // SAFETY: `Avx2Fma` is chosen only after run-time detection of
        // AVX2, FMA and F16C (`micro_kernel`).
        unsafe { pack_a_avx2(a, ic, mc, pc, kc, out) };
        return;
    }
    let _ = kernel;
    pack_a_body(a, ic, mc, pc, kc, out);
}

/// [`pack_a_body`] compiled for AVX2 / F16C, so the widening of each run
/// inlines into the loop instead of being a call per run.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn pack_a_avx2<A: PanelSource>(a: &A, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut [f32]) {
    pack_a_body(a, ic, mc, pc, kc, out);
}

#[inline(always)]
fn pack_a_body<A: PanelSource>(a: &A, ic: usize, mc: usize, pc: usize, kc: usize, out: &mut [f32]) {
    let panels = mc.div_ceil(MR);
    let (rs, cs) = (a.row_stride(), a.col_stride());
    for panel in 0..panels {
        let i0 = ic + panel * MR;
        let rows = MR.min(ic + mc - i0);
        let dst = &mut out[panel * MR * kc..(panel + 1) * MR * kc];
        if rows < MR {
            dst.fill(0.0); // zero padding rows of the last panel
        }
        // One k step is a run of `rows` elements of a column of A. Full
        // panels use fixed-size runs so the copies inline (no memcpy calls).
        let (steps, _) = dst.as_chunks_mut::<MR>();
        if rows == MR {
            for (p, chunk) in steps.iter_mut().enumerate() {
                a.read_run(i0 * rs + (pc + p) * cs, rs, chunk);
            }
        } else {
            for (p, chunk) in steps.iter_mut().enumerate() {
                a.read_run(i0 * rs + (pc + p) * cs, rs, &mut chunk[..rows]);
            }
        }
    }
}

/// Packs panels `panels` of `B[pc..pc+kc, jc..jc+nc]` (`NR` columns
/// each, widening as it reads) into `out`, which holds exactly those
/// panels; the last panel of the block is zero-padded.
fn pack_b<B: PanelSource>(kernel: MicroKernel, b: &B, blk: &Block, panels: std::ops::Range<usize>, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if kernel == MicroKernel::Avx2Fma {
        // SAFETY: as in `pack_a`.
        unsafe { pack_b_avx2(b, blk, panels, out) };
        return;
    }
    let _ = kernel;
    pack_b_body(b, blk, panels, out);
}

/// [`pack_b_body`] compiled for AVX2 / F16C (see [`pack_a_avx2`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn pack_b_avx2<B: PanelSource>(b: &B, blk: &Block, panels: std::ops::Range<usize>, out: &mut [f32]) {
    pack_b_body(b, blk, panels, out);
}

#[inline(always)]
fn pack_b_body<B: PanelSource>(b: &B, blk: &Block, panels: std::ops::Range<usize>, out: &mut [f32]) {
    let Block { jc, nc, pc, kc, .. } = *blk;
    let (rs, cs) = (b.row_stride(), b.col_stride());
    for (dst, panel) in out.chunks_exact_mut(NR * kc).zip(panels) {
        let j0 = jc + panel * NR;
        let cols = NR.min(jc + nc - j0);
        if cols < NR {
            dst.fill(0.0); // zero padding columns of the last panel
        }
        // One k step is a run of `cols` elements of a row of B (fixed-size
        // runs for full panels, as in `pack_a`).
        let (steps, _) = dst.as_chunks_mut::<NR>();
        if cols == NR {
            for (p, chunk) in steps.iter_mut().enumerate() {
                b.read_run((pc + p) * rs + j0 * cs, cs, chunk);
            }
        } else {
            for (p, chunk) in steps.iter_mut().enumerate() {
                b.read_run((pc + p) * rs + j0 * cs, cs, &mut chunk[..cols]);
            }
        }
    }
}

/// Fills the micro-tile accumulator with the valid `mr x nr` corner of C
/// (when `add`; zeros otherwise, and in the padding), so the kernel resumes
/// each element's running sum instead of starting a separate one.
#[inline]
fn load(c: &Out<'_>, i0: usize, j0: usize, mr: usize, nr: usize, acc: &mut [f32; MR * NR], add: bool) {
    acc.fill(0.0);
    if !add {
        return;
    }
    for ii in 0..mr {
        for jj in 0..nr {
            // SAFETY: the corner lies inside C (the caller's tile bounds).
            acc[ii * NR + jj] = unsafe { *c.at(i0 + ii, j0 + jj) };
        }
    }
}

/// Writes the valid `mr x nr` corner of a micro-tile into C.
#[inline]
fn store(c: &Out<'_>, i0: usize, j0: usize, mr: usize, nr: usize, acc: &[f32; MR * NR]) {
    for ii in 0..mr {
        for jj in 0..nr {
            // SAFETY: as in `load`; this thread owns these rows of C.
            unsafe { *c.at(i0 + ii, j0 + jj) = acc[ii * NR + jj] };
        }
    }
}

/// Runs the micro-kernel: `acc[i][j] = fma(a[i][p], b[p][j], acc[i][j])` for
/// `p` ascending, starting from the values `acc` holds.
#[inline]
fn run_kernel(kernel: MicroKernel, kc: usize, ap: &[f32], bp: &[f32], acc: &mut [f32; MR * NR]) {
    debug_assert!(ap.len() >= kc * MR && bp.len() >= kc * NR);
    match kernel {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Avx2Fma` is only selected after run-time detection of both
        // features (see `gemm_with`); slice lengths are asserted above and the
        // kernel reads exactly kc*MR and kc*NR elements.
        MicroKernel::Avx2Fma => unsafe { avx2::kernel(kc, ap.as_ptr(), bp.as_ptr(), acc) },
        _ => portable_kernel(kc, ap, bp, acc),
    }
}

/// The AVX2 kernel writing straight into a full `MR x NR` tile of C:
/// row `i` of the tile is the `NR` floats at `tile[i]`.
#[inline]
fn run_kernel_direct(kc: usize, ap: &[f32], bp: &[f32], tile: &[*mut f32; MR], add: bool) {
    assert!(ap.len() >= kc * MR && bp.len() >= kc * NR);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: only called when `gemm_with` selected Avx2Fma after run-time
    // detection; the assert above bounds every read of the panels, and the
    // caller hands only full tiles, whose rows' NR elements lie inside C.
    unsafe {
        avx2::kernel_direct(kc, ap.as_ptr(), bp.as_ptr(), tile, add)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut acc = [0.0f32; MR * NR];
        for (i, row) in tile.iter().enumerate() {
            for j in 0..NR {
                // SAFETY: as above.
                acc[i * NR + j] = if add { unsafe { *row.add(j) } } else { 0.0 };
            }
        }
        portable_kernel(kc, ap, bp, &mut acc);
        for (i, row) in tile.iter().enumerate() {
            for j in 0..NR {
                // SAFETY: as above.
                unsafe { *row.add(j) = acc[i * NR + j] };
            }
        }
    }
}

/// Portable 6x16 micro-kernel, resuming from `acc`. Each step is
/// `f32::mul_add` (one rounding), like the AVX2 kernel's `vfmadd`, so the
/// two agree bit for bit; it is the fallback for CPUs without FMA, where
/// correctness of the documented order matters more than speed.
fn portable_kernel(kc: usize, ap: &[f32], bp: &[f32], acc: &mut [f32; MR * NR]) {
    let mut c = [[0.0f32; NR]; MR];
    for i in 0..MR {
        c[i].copy_from_slice(&acc[i * NR..(i + 1) * NR]);
    }
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)).take(kc) {
        let b: &[f32; NR] = b.try_into().expect("chunk of NR");
        for i in 0..MR {
            let ai = a[i];
            for j in 0..NR {
                c[i][j] = ai.mul_add(b[j], c[i][j]);
            }
        }
    }
    for i in 0..MR {
        acc[i * NR..(i + 1) * NR].copy_from_slice(&c[i]);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{MR, NR};
    use std::arch::x86_64::*;

    /// The register-blocked product of one A panel and one B panel, added
    /// step by step (ascending `p`, one fused multiply-add each) onto the
    /// starting accumulators `c`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `a` must be valid for `kc * MR`
    /// reads and `b` for `kc * NR` reads.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn product(kc: usize, a: *const f32, b: *const f32, mut c: [[__m256; 2]; MR]) -> [[__m256; 2]; MR] {
        for p in 0..kc {
            // SAFETY: p < kc, so every offset is inside the caller's panels.
            unsafe {
                let b0 = _mm256_loadu_ps(b.add(p * NR));
                let b1 = _mm256_loadu_ps(b.add(p * NR + 8));
                let ap = a.add(p * MR);
                for (i, ci) in c.iter_mut().enumerate() {
                    let ai = _mm256_broadcast_ss(&*ap.add(i));
                    ci[0] = _mm256_fmadd_ps(ai, b0, ci[0]);
                    ci[1] = _mm256_fmadd_ps(ai, b1, ci[1]);
                }
            }
        }
        c
    }

    /// 6x16 FMA micro-kernel (12 accumulators, two B vectors, one
    /// broadcast) resuming from and storing into a packed 6x16 buffer.
    ///
    /// # Safety
    /// As [`product`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn kernel(kc: usize, a: *const f32, b: *const f32, acc: &mut [f32; MR * NR]) {
        let mut init = [[_mm256_setzero_ps(); 2]; MR];
        for (i, ci) in init.iter_mut().enumerate() {
            // SAFETY: acc has MR*NR elements; row i occupies [i*NR, i*NR+16).
            unsafe {
                ci[0] = _mm256_loadu_ps(acc.as_ptr().add(i * NR));
                ci[1] = _mm256_loadu_ps(acc.as_ptr().add(i * NR + 8));
            }
        }
        // SAFETY: forwarded from the caller.
        let c = unsafe { product(kc, a, b, init) };
        for (i, ci) in c.iter().enumerate() {
            // SAFETY: acc has MR*NR elements; row i occupies [i*NR, i*NR+16).
            unsafe {
                _mm256_storeu_ps(acc.as_mut_ptr().add(i * NR), ci[0]);
                _mm256_storeu_ps(acc.as_mut_ptr().add(i * NR + 8), ci[1]);
            }
        }
    }

    /// The same micro-kernel updating C in place: row `i` of the tile is the
    /// 16 floats at `tile[i]`. With `add` the accumulators start from
    /// those values (C is loaded into the registers, then the products are
    /// added in order), otherwise from zero; the result overwrites C.
    ///
    /// # Safety
    /// As [`product`], and each `tile[i]` must be valid for reads and
    /// writes of `NR` floats.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn kernel_direct(kc: usize, a: *const f32, b: *const f32, tile: &[*mut f32; MR], add: bool) {
        let mut init = [[_mm256_setzero_ps(); 2]; MR];
        if add {
            for (ci, &row) in init.iter_mut().zip(tile) {
                // SAFETY: row i is valid for NR floats (the caller's contract).
                unsafe {
                    ci[0] = _mm256_loadu_ps(row);
                    ci[1] = _mm256_loadu_ps(row.add(8));
                }
            }
        }
        // SAFETY: forwarded from the caller.
        let c = unsafe { product(kc, a, b, init) };
        for (ci, &row) in c.iter().zip(tile) {
            // SAFETY: as above.
            unsafe {
                _mm256_storeu_ps(row, ci[0]);
                _mm256_storeu_ps(row.add(8), ci[1]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The simplest possible reference: a triple loop accumulating in f64.
    fn naive(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> (Vec<f64>, Vec<f64>) {
        let mut c = vec![0.0f64; m * n];
        let mut mag = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    let prod = a[i * k + p] as f64 * b[p * n + j] as f64;
                    c[i * n + j] += prod;
                    mag[i * n + j] += prod.abs();
                }
            }
        }
        (c, mag)
    }

    /// fp32 summation of k products errs by at most about k·u·Σ|aᵢbᵢ|
    /// (u = 2⁻²⁴); allow (k + 2)·ε to cover FMA vs separate rounding.
    fn assert_close(got: &[f32], want: &[f64], mag: &[f64], k: usize) {
        let tol_scale = (k as f64 + 2.0) * f32::EPSILON as f64;
        for (idx, ((g, w), s)) in got.iter().zip(want).zip(mag).enumerate() {
            let tol = tol_scale * s + f32::MIN_POSITIVE as f64;
            assert!((*g as f64 - w).abs() <= tol, "element {idx}: got {g}, want {w}, tol {tol}");
        }
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        (0..len)
            .map(|i| (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 2001) as f32 / 1000.0 - 1.0)
            .collect()
    }

    fn check(kernel: MicroKernel, m: usize, n: usize, k: usize) {
        let a = values(m * k, 1);
        let b = values(k * n, 7);
        let (want, mag) = naive(m, n, k, &a, &b);
        let mut c = vec![f32::NAN; m * n];
        gemm_with(
            kernel,
            MatRef::row_major(&a, m, k).unwrap(),
            MatRef::row_major(&b, k, n).unwrap(),
            &mut MatMut::row_major(&mut c, m, n).unwrap(),
            false,
        )
        .unwrap();
        assert_close(&c, &want, &mag, k);
    }

    #[test]
    fn matches_naive_on_edge_shapes() {
        for kernel in [MicroKernel::Avx2Fma, MicroKernel::Portable] {
            for &(m, n, k) in &[(1, 1, 1), (6, 16, 3), (7, 17, 300), (128, 128, 128), (97, 33, 513), (5, 2100, 4)] {
                check(kernel, m, n, k);
            }
        }
    }

    #[test]
    fn accumulate_adds_onto_existing() {
        let (m, n, k) = (13, 19, 21);
        let a = values(m * k, 3);
        let b = values(k * n, 5);
        let (want, mag) = naive(m, n, k, &a, &b);
        let mut c = vec![1.5f32; m * n];
        gemm(
            MatRef::row_major(&a, m, k).unwrap(),
            MatRef::row_major(&b, k, n).unwrap(),
            &mut MatMut::row_major(&mut c, m, n).unwrap(),
            true,
        )
        .unwrap();
        let want: Vec<f64> = want.iter().map(|w| w + 1.5).collect();
        assert_close(&c, &want, &mag, k + 1);
    }

    #[test]
    fn zero_depth_zeroes_or_keeps() {
        let mut c = vec![3.0f32; 4];
        let a: [f32; 0] = [];
        gemm(
            MatRef::new(&a, 2, 0, 0, 1).unwrap(),
            MatRef::new(&a, 0, 2, 2, 1).unwrap(),
            &mut MatMut::row_major(&mut c, 2, 2).unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(c, vec![3.0; 4]);
        gemm(
            MatRef::new(&a, 2, 0, 0, 1).unwrap(),
            MatRef::new(&a, 0, 2, 2, 1).unwrap(),
            &mut MatMut::row_major(&mut c, 2, 2).unwrap(),
            false,
        )
        .unwrap();
        assert_eq!(c, vec![0.0; 4]);
    }

    #[test]
    fn shape_mismatch_is_an_error() {
        let a = vec![0.0f32; 6];
        let mut c = vec![0.0f32; 4];
        let err = gemm(
            MatRef::row_major(&a, 2, 3).unwrap(),
            MatRef::row_major(&a, 2, 3).unwrap(),
            &mut MatMut::row_major(&mut c, 2, 2).unwrap(),
            false,
        );
        assert!(matches!(err, Err(KernelError::ShapeMismatch { .. })));
        assert!(MatRef::row_major(&a, 3, 3).is_err());
    }

    #[test]
    fn transposed_and_strided_views() {
        // C = Aᵀ·B where A is stored k x m, as the PE's stationary operand is.
        let (m, n, k) = (9, 11, 14);
        let at = values(k * m, 9);
        let b = values(k * n, 2);
        let a: Vec<f32> = (0..m * k).map(|idx| at[(idx % k) * m + idx / k]).collect();
        let (want, mag) = naive(m, n, k, &a, &b);
        // Column-major destination exercises the strided store path.
        let mut c = vec![0.0f32; m * n];
        let mut cv = MatMut::new(&mut c, m, n, 1, m).unwrap();
        gemm(
            MatRef::row_major(&at, k, m).unwrap().t(),
            MatRef::row_major(&b, k, n).unwrap(),
            &mut cv,
            false,
        )
        .unwrap();
        let c_rm: Vec<f32> = (0..m * n).map(|idx| c[(idx % n) * m + idx / n]).collect();
        assert_close(&c_rm, &want, &mag, k);
    }

    /// The documented order: each element starts from C (or +0.0) and takes
    /// `fma(a[i][p], b[p][j], acc)` for ascending `p`.
    fn sequential(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32], accumulate: bool) {
        for i in 0..m {
            for j in 0..n {
                let mut acc = if accumulate { c[i * n + j] } else { 0.0 };
                for p in 0..k {
                    acc = a[i * k + p].mul_add(b[p * n + j], acc);
                }
                c[i * n + j] = acc;
            }
        }
    }

    /// A thread taking parts of split GEMMs until `stop` (the role of the
    /// simulator's idle worker).
    fn helper(stop: &std::sync::atomic::AtomicBool) {
        while !stop.load(std::sync::atomic::Ordering::Acquire) {
            if !split::help() {
                std::hint::spin_loop();
            }
        }
    }

    #[test]
    fn split_across_threads_is_bit_identical() {
        use std::sync::atomic::{AtomicBool, Ordering};
        // Above SPLIT_MIN_MACS, with row counts that leave a ragged band,
        // K over several KC blocks, N over several NC blocks and ragged
        // panels of B; without a helper (the caller runs every part) and
        // with one.
        let stop = AtomicBool::new(false);
        for with_helper in [false, true] {
            std::thread::scope(|s| {
                if with_helper {
                    s.spawn(|| helper(&stop));
                }
                for (m, n, k, accumulate) in [(128, 512, 128, false), (101, 300, 130, true), (13, 2100, 200, true), (40, NC + 40, 2 * KC + 3, true)] {
                    assert!(m * n * k >= SPLIT_MIN_MACS);
                    let a = values(m * k, 3);
                    let b = values(k * n, 4);
                    let start = values(m * n, 5);
                    let mut split_c = start.clone();
                    let mut one_c = start.clone();
                    let (ar, br) = (MatRef::row_major(&a, m, k).unwrap(), MatRef::row_major(&b, k, n).unwrap());
                    let parts = split_parts(m, n, k, &Out::mat(&mut MatMut::row_major(&mut split_c, m, n).unwrap()));
                    assert!(parts > 1, "{m}x{n}x{k} splits");
                    for parts in [parts, 2, MAX_SPLIT_PARTS] {
                        split_c.copy_from_slice(&start);
                        blocked_split(micro_kernel(), &ar, &br, &Out::mat(&mut MatMut::row_major(&mut split_c, m, n).unwrap()), accumulate, parts);
                        one_c.copy_from_slice(&start);
                        blocked_here(micro_kernel(), &ar, &br, &Out::mat(&mut MatMut::row_major(&mut one_c, m, n).unwrap()), accumulate);
                        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&split_c), bits(&one_c), "{m}x{n}x{k} in {parts} parts, helper {with_helper}");
                    }
                }
                stop.store(true, Ordering::Release);
            });
            stop.store(false, Ordering::Release);
        }
    }

    #[test]
    fn blocked_depth_keeps_the_sequential_order() {
        // k spans three KC blocks; m and n leave edge tiles on both sides.
        let (m, n, k) = (13, 37, 2 * KC + 17);
        let a = values(m * k, 11);
        let b = values(k * n, 12);
        let init = values(m * n, 13);
        for kernel in [MicroKernel::Avx2Fma, MicroKernel::Portable] {
            for accumulate in [false, true] {
                let mut want = init.clone();
                sequential(m, n, k, &a, &b, &mut want, accumulate);
                let mut got = init.clone();
                gemm_with(kernel, MatRef::row_major(&a, m, k).unwrap(), MatRef::row_major(&b, k, n).unwrap(), &mut MatMut::row_major(&mut got, m, n).unwrap(), accumulate).unwrap();
                let same = got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits());
                assert!(same, "{kernel:?} accumulate={accumulate}: result differs from the sequential fma order");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn random_shapes_match_naive(m in 1usize..40, n in 1usize..40, k in 1usize..300, seed in any::<u32>()) {
            let a = values(m * k, seed);
            let b = values(k * n, seed ^ 0x5555);
            let (want, mag) = naive(m, n, k, &a, &b);
            let init = values(m * n, seed ^ 0xAAAA);
            for kernel in [MicroKernel::Avx2Fma, MicroKernel::Portable] {
                let mut c = vec![0.0f32; m * n];
                gemm_with(kernel, MatRef::row_major(&a, m, k).unwrap(), MatRef::row_major(&b, k, n).unwrap(), &mut MatMut::row_major(&mut c, m, n).unwrap(), false).unwrap();
                assert_close(&c, &want, &mag, k);
                // Bit for bit the documented sequential order, from C too.
                let mut exact = init.clone();
                sequential(m, n, k, &a, &b, &mut exact, true);
                let mut c = init.clone();
                gemm_with(kernel, MatRef::row_major(&a, m, k).unwrap(), MatRef::row_major(&b, k, n).unwrap(), &mut MatMut::row_major(&mut c, m, n).unwrap(), true).unwrap();
                prop_assert!(c.iter().zip(&exact).all(|(g, w)| g.to_bits() == w.to_bits()), "{:?}: not the sequential fma order", kernel);
            }
        }
    }
}
