//! Operand access patterns and the dtype boundary (gather / scatter).
//!
//! On-chip memories (SBUF, PSUM) are `[partition][bytes per partition]`. A
//! compute operand names a partition range plus a free-dimension access
//! pattern: a start byte offset inside each partition and up to four
//! `(step in elements, count)` axes, innermost first, exactly like the
//! TENSOR3D / TENSOR4D operand fields of the instruction records. The same
//! pattern applies to every partition of the range.
//!
//! [`gather`] reads such an operand into a dense f32 [`Tile`] (widening
//! bf16 / fp16 / fp8 / integers through `nrt_isa::dtype`), and [`scatter`]
//! writes a tile back, narrowing with round-to-nearest-even or seeded
//! stochastic rounding. Apart from the PE matmul's exact widening during GEMM
//! packing ([`super::lowp`]), this module is the only place kernels meet dtypes.
//! Memories are reached through the [`OnChipRead`] / [`OnChipWrite`] traits,
//! so the device's own SBUF/PSUM storage can be read in place; [`Memory`] and
//! [`MemoryMut`] implement them over plain byte slices.
//! [`gather_raw`] / [`scatter_raw`] move elements bit-exactly (a COPY whose
//! input and output dtypes match must not round-trip through f32: an int32
//! COPY may be carrying fp16 pairs).

use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32, f32_to_bytes};

use super::error::{KernelError, KernelResult, shape};
use super::tile::Tile;

/// Most free-dimension axes an operand pattern can have (TENSOR4D).
pub const MAX_AXES: usize = 4;

/// Most elements per partition a pattern may address (2^24). Far above any
/// real operand (a 192 KiB partition holds 196608 bytes), it keeps a
/// malformed broadcast pattern from asking for an absurd tile.
pub const MAX_FREE_ELEMS: usize = 1 << 24;

/// Elements per partition of `axes`, or an error if the product overflows
/// or exceeds [`MAX_FREE_ELEMS`].
pub(crate) fn checked_free_len(axes: &[Axis]) -> KernelResult<usize> {
    let n = axes.iter().try_fold(1usize, |acc, a| acc.checked_mul(a.count as usize));
    match n {
        Some(n) if n <= MAX_FREE_ELEMS => Ok(n),
        _ => Err(KernelError::InvalidPattern {
            detail: format!("axes {axes:?} address more than {MAX_FREE_ELEMS} elements per partition"),
        }),
    }
}

/// One free-dimension axis: `count` elements, `step` elements apart.
///
/// Steps may be negative (the PE's LDWEIGHTS walks its tile backwards) or
/// zero (broadcast).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// Distance between consecutive elements along this axis, in elements.
    pub step: i32,
    /// Number of elements along this axis.
    pub count: u32,
}

impl Axis {
    /// Shorthand constructor.
    pub const fn new(step: i32, count: u32) -> Self {
        Self { step, count }
    }
}

/// A compute operand's location: partitions plus a free-dim access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    start_partition: usize,
    partitions: usize,
    offset: usize,
    axes: [Axis; MAX_AXES],
    rank: usize,
}

impl Pattern {
    /// A pattern over `partitions` partitions starting at `start_partition`,
    /// whose first element sits `offset` bytes into each partition, walking
    /// `axes` (innermost first, 1 to [`MAX_AXES`] of them).
    pub fn new(start_partition: usize, partitions: usize, offset: usize, axes: &[Axis]) -> KernelResult<Self> {
        if axes.is_empty() || axes.len() > MAX_AXES {
            return Err(KernelError::InvalidPattern {
                detail: format!("{} axes given, expected 1 to {MAX_AXES}", axes.len()),
            });
        }
        checked_free_len(axes)?;
        let mut padded = [Axis::new(0, 1); MAX_AXES];
        padded[..axes.len()].copy_from_slice(axes);
        Ok(Self {
            start_partition,
            partitions,
            offset,
            axes: padded,
            rank: axes.len(),
        })
    }

    /// A unit-step run of `len` elements per partition (the common case).
    pub fn contiguous(start_partition: usize, partitions: usize, offset: usize, len: u32) -> Self {
        let mut axes = [Axis::new(0, 1); MAX_AXES];
        axes[0] = Axis::new(1, len);
        Self {
            start_partition,
            partitions,
            offset,
            axes,
            rank: 1,
        }
    }

    /// First partition addressed.
    pub fn start_partition(&self) -> usize {
        self.start_partition
    }

    /// Number of partitions addressed.
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Byte offset of the first element inside each partition.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The free-dimension axes, innermost first.
    pub fn axes(&self) -> &[Axis] {
        &self.axes[..self.rank]
    }

    /// Elements per partition (product of the axis counts).
    pub fn free_len(&self) -> usize {
        self.axes().iter().map(|a| a.count as usize).product()
    }

    /// Byte range `[lo, hi)` touched inside one partition for `esize`-byte
    /// elements, or an error if it starts before byte 0.
    pub fn byte_span(&self, esize: usize) -> KernelResult<(usize, usize)> {
        if self.free_len() == 0 {
            return Ok((self.offset, self.offset));
        }
        let (mut lo, mut hi) = (0i128, 0i128);
        for a in self.axes() {
            let reach = a.step as i128 * (a.count as i128 - 1);
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        let e = esize as i128;
        let lo = self.offset as i128 + lo * e;
        let hi = self.offset as i128 + (hi + 1) * e;
        if lo < 0 {
            return Err(KernelError::OutOfBounds {
                detail: format!(
                    "pattern reaches byte {lo} before the start of its partition (offset {})",
                    self.offset
                ),
            });
        }
        Ok((lo as usize, hi as usize))
    }

    /// For a walk that is one run of unit steps backwards per partition
    /// (the compiler's LDWEIGHTS walk, once its axes merge), the forward run
    /// over the same `esize`-byte elements: element `j` of it is element
    /// `n - 1 - j` of this walk. `None` for any other shape.
    pub fn reversed_as_forward(&self, esize: usize) -> Option<Pattern> {
        let (axes, rank) = self.canonical();
        let n = axes[0].count;
        if rank != 1 || axes[0].step != -1 || n < 2 {
            return None;
        }
        let back = (n as usize - 1).checked_mul(esize)?;
        let start = self.offset.checked_sub(back)?;
        Some(Pattern::contiguous(self.start_partition, self.partitions, start, n))
    }

    /// Merges axes that continue each other and drops unit axes, so that
    /// e.g. `[1 x 64][64 x 2]` becomes one run of 128 elements.
    fn canonical(&self) -> ([Axis; MAX_AXES], usize) {
        let mut out = [Axis::new(0, 1); MAX_AXES];
        let mut n = 0;
        for a in self.axes() {
            if a.count == 1 {
                continue;
            }
            if n > 0 {
                let last = out[n - 1];
                if a.step as i64 == last.step as i64 * last.count as i64
                    && let Some(count) = last.count.checked_mul(a.count)
                {
                    out[n - 1].count = count;
                    continue;
                }
            }
            out[n] = *a;
            n += 1;
        }
        if n == 0 {
            out[0] = Axis::new(1, 1);
            n = 1;
        }
        (out, n)
    }

    /// The runs along the innermost (canonical) axis: the axis, and an
    /// iterator over each run's position in the free dimension and element
    /// offset from the pattern start (computed on the fly, no allocation).
    fn runs(&self) -> (Axis, Runs) {
        let (axes, rank) = self.canonical();
        let mut outer = [Axis::new(0, 1); MAX_AXES - 1];
        outer[..rank - 1].copy_from_slice(&axes[1..rank]);
        let total = outer[..rank - 1].iter().map(|a| a.count as usize).product();
        (axes[0], Runs { outer, rank: rank - 1, inner_count: axes[0].count as usize, idx: [0; MAX_AXES - 1], r: 0, total })
    }
}

/// The runs of a pattern's innermost axis, in free order (see
/// [`Pattern::runs`]). `Copy`, so a walk can restart it per partition.
#[derive(Debug, Clone, Copy)]
struct Runs {
    outer: [Axis; MAX_AXES - 1],
    rank: usize,
    inner_count: usize,
    idx: [u32; MAX_AXES - 1],
    r: usize,
    total: usize,
}

impl Iterator for Runs {
    type Item = (usize, i64);
    fn next(&mut self) -> Option<(usize, i64)> {
        if self.r >= self.total {
            return None;
        }
        let outer = &self.outer[..self.rank];
        let elem: i64 = outer.iter().zip(&self.idx).map(|(a, &i)| a.step as i64 * i as i64).sum();
        let item = (self.r * self.inner_count, elem);
        for (a, i) in outer.iter().zip(self.idx.iter_mut()) {
            *i += 1;
            if *i < a.count {
                break;
            }
            *i = 0;
        }
        self.r += 1;
        Some(item)
    }
}

/// Read access to an on-chip memory laid out `[partition][bytes]`.
///
/// Implemented here for plain byte slices ([`Memory`], [`MemoryMut`]); the
/// device implements it over its lazily backed SBUF / PSUM pages so the
/// kernels read operands in place. Callers of `read_partition` have already
/// checked bounds against [`Self::partitions`] / [`Self::partition_bytes`].
pub trait OnChipRead {
    /// Number of partitions.
    fn partitions(&self) -> usize;
    /// Bytes per partition.
    fn partition_bytes(&self) -> usize;
    /// Fills `buf` with the bytes at `offset..offset + buf.len()` of `partition`.
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]);

    /// The whole of `partition` as one slice, when the storage is contiguous
    /// (lets gathers skip the copy into a staging buffer). The default says
    /// the storage cannot lend a slice.
    fn partition_slice(&self, _partition: usize) -> Option<&[u8]> {
        None
    }
}

/// Most partitions [`OnChipWrite::with_rows_mut`] lends at once (the PE
/// array's rows, SBUF's and PSUM's partitions).
pub const MAX_LENT_ROWS: usize = 128;

/// Write access to an on-chip memory laid out `[partition][bytes]`.
pub trait OnChipWrite: OnChipRead {
    /// Stores `data` at `offset..offset + data.len()` of `partition`.
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]);

    /// Lends bytes `offset..offset + len` of partitions `first..first +
    /// count` to `f`, all at once, so a kernel can update them in place
    /// (the PE multiplies into PSUM without gathering and scattering it);
    /// other users of those partitions wait until `f` returns. Returns
    /// false without calling `f` when the storage cannot lend them (the
    /// default), the range is outside the memory, or `count` exceeds
    /// [`MAX_LENT_ROWS`].
    fn with_rows_mut(&mut self, _first: usize, _count: usize, _offset: usize, _len: usize, _f: &mut dyn FnMut(&mut [&mut [u8]])) -> bool {
        false
    }
}

/// Whether partitions `first..first + count`, bytes `offset..offset +
/// len` of each, lie in a memory of `partitions x partition_bytes` and
/// fit in one lending.
pub fn lendable(partitions: usize, partition_bytes: usize, first: usize, count: usize, offset: usize, len: usize) -> bool {
    count <= MAX_LENT_ROWS
        && first.checked_add(count).is_some_and(|end| end <= partitions)
        && offset.checked_add(len).is_some_and(|end| end <= partition_bytes)
}

/// Views lent rows of fp32 elements as f32 slices: `out[i]` is `rows[i]`.
/// `None` when some row is not 4-byte aligned or not whole elements (the
/// caller then takes its copying path).
#[cfg(target_endian = "little")]
pub(crate) fn f32_rows_mut<'a>(rows: &'a mut [&mut [u8]], out: &mut [&'a mut [f32]; MAX_LENT_ROWS]) -> Option<usize> {
    let count = rows.len();
    if count > MAX_LENT_ROWS {
        return None;
    }
    for (o, r) in out.iter_mut().zip(rows.iter_mut()) {
        // SAFETY: every bit pattern is a valid f32 and a valid u8, so
        // reading and writing the bytes as f32 elements (little-endian
        // host: their fp32 encodings) cannot create an invalid value.
        let (head, mid, tail) = unsafe { r.align_to_mut::<f32>() };
        if !head.is_empty() || !tail.is_empty() {
            return None;
        }
        *o = mid;
    }
    Some(count)
}

/// A read-only view of a byte slice as `[partition][bytes]`.
#[derive(Debug, Clone, Copy)]
pub struct Memory<'a> {
    bytes: &'a [u8],
    partition_bytes: usize,
}

/// A mutable view of a byte slice as `[partition][bytes]`.
#[derive(Debug)]
pub struct MemoryMut<'a> {
    bytes: &'a mut [u8],
    partition_bytes: usize,
}

fn check_layout(len: usize, partition_bytes: usize) -> KernelResult<()> {
    if partition_bytes == 0 || !len.is_multiple_of(partition_bytes) {
        return Err(KernelError::RaggedMemory { len, partition_bytes });
    }
    Ok(())
}

impl<'a> Memory<'a> {
    /// Views `bytes` as partitions of `partition_bytes` each.
    pub fn new(bytes: &'a [u8], partition_bytes: usize) -> KernelResult<Self> {
        check_layout(bytes.len(), partition_bytes)?;
        Ok(Self { bytes, partition_bytes })
    }
}

impl<'a> MemoryMut<'a> {
    /// Views `bytes` as partitions of `partition_bytes` each.
    pub fn new(bytes: &'a mut [u8], partition_bytes: usize) -> KernelResult<Self> {
        check_layout(bytes.len(), partition_bytes)?;
        Ok(Self { bytes, partition_bytes })
    }

    /// A read-only view of the same memory.
    pub fn as_ref(&self) -> Memory<'_> {
        Memory {
            bytes: self.bytes,
            partition_bytes: self.partition_bytes,
        }
    }
}

impl OnChipRead for Memory<'_> {
    fn partitions(&self) -> usize {
        self.bytes.len() / self.partition_bytes
    }
    fn partition_bytes(&self) -> usize {
        self.partition_bytes
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        let at = partition * self.partition_bytes + offset;
        buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
    }
    fn partition_slice(&self, partition: usize) -> Option<&[u8]> {
        let at = partition * self.partition_bytes;
        self.bytes.get(at..at + self.partition_bytes)
    }
}

impl OnChipRead for MemoryMut<'_> {
    fn partitions(&self) -> usize {
        self.bytes.len() / self.partition_bytes
    }
    fn partition_bytes(&self) -> usize {
        self.partition_bytes
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        self.as_ref().read_partition(partition, offset, buf)
    }
    fn partition_slice(&self, partition: usize) -> Option<&[u8]> {
        let at = partition * self.partition_bytes;
        self.bytes.get(at..at + self.partition_bytes)
    }
}

impl OnChipWrite for MemoryMut<'_> {
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]) {
        let at = partition * self.partition_bytes + offset;
        self.bytes[at..at + data.len()].copy_from_slice(data);
    }

    fn with_rows_mut(&mut self, first: usize, count: usize, offset: usize, len: usize, f: &mut dyn FnMut(&mut [&mut [u8]])) -> bool {
        if !lendable(self.partitions(), self.partition_bytes, first, count, offset, len) {
            return false;
        }
        let mut rows: [&mut [u8]; MAX_LENT_ROWS] = std::array::from_fn(|_| Default::default());
        for (r, part) in rows.iter_mut().zip(self.bytes.chunks_exact_mut(self.partition_bytes).skip(first).take(count)) {
            *r = &mut part[offset..offset + len];
        }
        f(&mut rows[..count]);
        true
    }
}

fn element_size(dtype: Dtype, op: &'static str) -> KernelResult<usize> {
    if dtype == Dtype::Unknown {
        return Err(KernelError::UnsupportedDtype {
            dtype: format!("{dtype:?}"),
            op,
        });
    }
    Ok(dtype.size_bytes())
}

/// Checks that `pat` with `esize`-byte elements fits in `mem`; returns the
/// byte span `[lo, hi)` it touches inside each partition.
fn check_bounds<M: OnChipRead + ?Sized>(pat: &Pattern, esize: usize, mem: &M) -> KernelResult<(usize, usize)> {
    if esize == 0 {
        return Err(KernelError::InvalidPattern {
            detail: "element size 0".into(),
        });
    }
    let partitions = mem.partitions();
    let end = pat.start_partition.saturating_add(pat.partitions);
    if end > partitions {
        return Err(KernelError::OutOfBounds {
            detail: format!("partitions {}..{end} outside the {partitions} the memory has", pat.start_partition),
        });
    }
    checked_free_len(pat.axes())?;
    let (lo, hi) = pat.byte_span(esize)?;
    if hi > mem.partition_bytes() {
        return Err(KernelError::OutOfBounds {
            detail: format!("pattern reaches byte {hi} of a {}-byte partition", mem.partition_bytes()),
        });
    }
    Ok((lo, hi))
}

/// Walks the operand partition by partition, handing `visit(row, pos,
/// bytes)` the elements of each innermost run, in free order, as
/// contiguous bytes. Each partition's touched span is read once.
fn walk_read<M: OnChipRead + ?Sized>(
    mem: &M,
    pat: &Pattern,
    esize: usize,
    mut visit: impl FnMut(usize, usize, &[u8]) -> KernelResult<()>,
) -> KernelResult<()> {
    let (lo, hi) = check_bounds(pat, esize, mem)?;
    if pat.free_len() == 0 {
        return Ok(());
    }
    let (inner, runs) = pat.runs();
    let len = inner.count as usize;
    // Pooled buffers taken at their full size on first need (Vec::new
    // does not allocate; an empty vector is not pooled back).
    let mut staging = Vec::new();
    let mut strided = Vec::new();
    let first = (pat.offset - lo) as i64;
    for p in 0..pat.partitions {
        let part = pat.start_partition + p;
        let span: &[u8] = match mem.partition_slice(part) {
            Some(whole) => &whole[lo..hi],
            None => {
                if staging.capacity() < hi - lo {
                    staging = super::scratch::bytes_with_capacity(hi - lo);
                }
                staging.resize(hi - lo, 0);
                mem.read_partition(part, lo, &mut staging);
                &staging
            }
        };
        for (pos, elem) in runs {
            let start = first + elem * esize as i64;
            if inner.step == 1 {
                let s = start as usize;
                visit(p, pos, &span[s..s + len * esize])?;
            } else {
                if strided.capacity() < len * esize {
                    strided = super::scratch::bytes_with_capacity(len * esize);
                }
                strided.resize(len * esize, 0);
                gather_strided(span, start, inner.step as i64, esize, &mut strided);
                visit(p, pos, &strided)?;
            }
        }
    }
    super::scratch::recycle_bytes(staging);
    super::scratch::recycle_bytes(strided);
    Ok(())
}

/// Copies `out.len() / esize` elements of `span`, the first at byte `start`
/// and each next one `step` elements further, into `out`. A reversed unit
/// step (the compiler's LDWEIGHTS walk) copies one contiguous block backwards;
/// common element sizes copy fixed-size chunks, which the compiler inlines
/// instead of calling memcpy per element.
fn gather_strided(span: &[u8], start: i64, step: i64, esize: usize, out: &mut [u8]) {
    fn copy<const N: usize>(span: &[u8], start: i64, step: i64, out: &mut [u8]) {
        let len = out.len() / N;
        if step == -1 && len > 0 {
            let lo = (start - (len as i64 - 1) * N as i64) as usize;
            let src = &span[lo..lo + len * N];
            for (d, s) in out.chunks_exact_mut(N).zip(src.chunks_exact(N).rev()) {
                d.copy_from_slice(s);
            }
            return;
        }
        for (i, d) in out.chunks_exact_mut(N).enumerate() {
            let at = (start + i as i64 * step * N as i64) as usize;
            d.copy_from_slice(&span[at..at + N]);
        }
    }
    match esize {
        1 => copy::<1>(span, start, step, out),
        2 => copy::<2>(span, start, step, out),
        4 => copy::<4>(span, start, step, out),
        8 => copy::<8>(span, start, step, out),
        _ => {
            for (i, d) in out.chunks_exact_mut(esize).enumerate() {
                let at = (start + i as i64 * step * esize as i64) as usize;
                d.copy_from_slice(&span[at..at + esize]);
            }
        }
    }
}

/// Walks the operand partition by partition; `fill(row, pos, bytes)` writes
/// each innermost run's elements (free order) into `bytes`, which are then
/// stored. Unit-step and reversed unit-step runs are stored as one block;
/// other strides element by element, so bytes between elements are never
/// rewritten (another engine may own them).
fn walk_write<M: OnChipWrite + ?Sized>(
    mem: &mut M,
    pat: &Pattern,
    esize: usize,
    mut fill: impl FnMut(usize, usize, &mut [u8]) -> KernelResult<()>,
) -> KernelResult<()> {
    check_bounds(pat, esize, mem)?;
    if pat.free_len() == 0 {
        return Ok(());
    }
    let (inner, runs) = pat.runs();
    let len = inner.count as usize;
    let mut buf = super::scratch::bytes_zeroed(len * esize);
    let mut rev = if inner.step == -1 { super::scratch::bytes_zeroed(len * esize) } else { Vec::new() };
    for p in 0..pat.partitions {
        let part = pat.start_partition + p;
        for (pos, elem) in runs {
            let start = pat.offset as i64 + elem * esize as i64;
            fill(p, pos, &mut buf)?;
            match inner.step {
                1 => mem.write_partition(part, start as usize, &buf),
                -1 => {
                    for (d, s) in rev.chunks_exact_mut(esize).zip(buf.chunks_exact(esize).rev()) {
                        d.copy_from_slice(s);
                    }
                    mem.write_partition(part, (start - (len as i64 - 1) * esize as i64) as usize, &rev);
                }
                step => {
                    for (i, chunk) in buf.chunks_exact(esize).enumerate() {
                        let at = start + i as i64 * step as i64 * esize as i64;
                        mem.write_partition(part, at as usize, chunk);
                    }
                }
            }
        }
    }
    super::scratch::recycle_bytes(buf);
    super::scratch::recycle_bytes(rev);
    Ok(())
}

/// Reads the operand `pat` of element type `dtype` into a new f32 tile of
/// shape `[pat.partitions() x pat.free_len()]`.
pub fn gather<M: OnChipRead + ?Sized>(mem: &M, pat: &Pattern, dtype: Dtype) -> KernelResult<Tile> {
    // Validate before sizing the tile from the (untrusted) pattern.
    check_bounds(pat, element_size(dtype, "gather")?, mem)?;
    let mut tile = Tile::zeros(pat.partitions, pat.free_len());
    gather_into(mem, pat, dtype, &mut tile)?;
    Ok(tile)
}

/// The f32 storage of `row` as its bytes: on a little-endian host these
/// are the elements' fp32 encodings, so fp32 operands move between on-chip
/// memory and a tile with one copy and no conversion pass.
#[cfg(target_endian = "little")]
fn f32_bytes_mut(row: &mut [f32]) -> &mut [u8] {
    // SAFETY: u8 has no alignment requirement, the byte length covers
    // exactly the f32 storage, and every byte pattern is a valid f32, so
    // writes through the view cannot create an invalid value.
    unsafe { std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(row)) }
}

/// Read-only [`f32_bytes_mut`].
#[cfg(target_endian = "little")]
fn f32_bytes(row: &[f32]) -> &[u8] {
    // SAFETY: as `f32_bytes_mut`, read-only.
    unsafe { std::slice::from_raw_parts(row.as_ptr().cast::<u8>(), std::mem::size_of_val(row)) }
}

/// The in-partition byte offset of `pat` when it is one unit-step run per
/// partition of fp32 elements, the shape that moves as whole rows.
#[cfg(target_endian = "little")]
pub(crate) fn f32_rows(pat: &Pattern, dtype: Dtype) -> Option<usize> {
    let (axes, rank) = pat.canonical();
    (dtype == Dtype::Float32 && rank == 1 && axes[0].step == 1).then_some(pat.offset)
}

/// [`gather`] into an existing tile of the right shape.
pub fn gather_into<M: OnChipRead + ?Sized>(mem: &M, pat: &Pattern, dtype: Dtype, tile: &mut Tile) -> KernelResult<()> {
    let esize = element_size(dtype, "gather")?;
    tile.expect_shape("gather destination", pat.partitions, pat.free_len())?;
    #[cfg(target_endian = "little")]
    if let Some(offset) = f32_rows(pat, dtype) {
        // PSUM partials and fp32 SBUF rows: each partition's run lands in
        // its tile row directly (no staging buffer, no decode loop).
        check_bounds(pat, esize, mem)?;
        if pat.free_len() > 0 {
            for p in 0..pat.partitions {
                mem.read_partition(pat.start_partition + p, offset, f32_bytes_mut(tile.row_mut(p)));
            }
        }
        return Ok(());
    }
    walk_read(mem, pat, esize, |p, pos, bytes| {
        let n = bytes.len() / esize;
        bytes_to_f32(bytes, dtype, &mut tile.row_mut(p)[pos..pos + n])?;
        Ok(())
    })
}

/// Writes `tile` to the operand `pat` as elements of `dtype`, narrowing with
/// `rounding` (a stochastic rounder advances one draw per element, in
/// partition-major, free-order sequence, so results are reproducible).
///
/// If the pattern visits an address twice (a zero step), the later element
/// in free order wins.
pub fn scatter<M: OnChipWrite + ?Sized>(
    mem: &mut M,
    pat: &Pattern,
    dtype: Dtype,
    tile: &Tile,
    rounding: &mut Rounding,
) -> KernelResult<()> {
    let esize = element_size(dtype, "scatter")?;
    tile.expect_shape("scatter source", pat.partitions, pat.free_len())?;
    #[cfg(target_endian = "little")]
    if let Some(offset) = f32_rows(pat, dtype) {
        // fp32 to fp32 rounds nothing (the rounder draws only when it
        // narrows), so each tile row is stored as it is.
        check_bounds(pat, esize, mem)?;
        if pat.free_len() > 0 {
            for p in 0..pat.partitions {
                mem.write_partition(pat.start_partition + p, offset, f32_bytes(tile.row(p)));
            }
        }
        return Ok(());
    }
    walk_write(mem, pat, esize, |p, pos, bytes| {
        let n = bytes.len() / esize;
        f32_to_bytes(&tile.row(p)[pos..pos + n], dtype, bytes, rounding)?;
        Ok(())
    })
}

/// Elements moved bit-exactly: `[partitions x free]` elements of `esize`
/// bytes each, row-major. Its storage comes from and returns to
/// [`super::scratch`].
#[derive(Debug, PartialEq, Eq)]
pub struct RawTile {
    /// Number of partitions (rows).
    pub partitions: usize,
    /// Elements per partition.
    pub free: usize,
    /// Bytes per element.
    pub esize: usize,
    /// `partitions * free * esize` bytes.
    pub bytes: Vec<u8>,
}

impl Clone for RawTile {
    fn clone(&self) -> Self {
        let mut bytes = super::scratch::bytes_with_capacity(self.bytes.len());
        bytes.extend_from_slice(&self.bytes);
        Self { partitions: self.partitions, free: self.free, esize: self.esize, bytes }
    }
}

impl Drop for RawTile {
    fn drop(&mut self) {
        super::scratch::recycle_bytes(std::mem::take(&mut self.bytes));
    }
}

/// Reads the operand `pat` as raw `esize`-byte elements (no conversion).
pub fn gather_raw<M: OnChipRead + ?Sized>(mem: &M, pat: &Pattern, esize: usize) -> KernelResult<RawTile> {
    let free = pat.free_len();
    let (axes, rank) = pat.canonical();
    if rank == 1 && axes[0].step == 1 && free > 0 {
        // One unit-step run per partition (the common MATMUL operand): read
        // each partition's run straight into place, with no staging copy.
        check_bounds(pat, esize, mem)?;
        let row = free * esize;
        // Every byte is read into below.
        let mut bytes = super::scratch::bytes_for_overwrite(pat.partitions * row);
        if row > 0 {
            for (p, dst) in bytes.chunks_exact_mut(row).enumerate() {
                mem.read_partition(pat.start_partition + p, pat.offset, dst);
            }
        }
        return Ok(RawTile {
            partitions: pat.partitions,
            free,
            esize,
            bytes,
        });
    }
    let mut bytes = super::scratch::bytes_with_capacity(pat.partitions * free * esize);
    walk_read(mem, pat, esize, |_, _, run| {
        bytes.extend_from_slice(run);
        Ok(())
    })?;
    Ok(RawTile {
        partitions: pat.partitions,
        free,
        esize,
        bytes,
    })
}

/// Writes raw elements to the operand `pat` (no conversion).
pub fn scatter_raw<M: OnChipWrite + ?Sized>(mem: &mut M, pat: &Pattern, raw: &RawTile) -> KernelResult<()> {
    let esize = raw.esize;
    let expected_len = raw.partitions.checked_mul(raw.free).and_then(|n| n.checked_mul(esize));
    if (raw.partitions, raw.free) != (pat.partitions, pat.free_len()) || expected_len != Some(raw.bytes.len()) {
        return Err(KernelError::ShapeMismatch {
            op: "scatter_raw",
            expected: shape(pat.partitions, pat.free_len()),
            got: format!(
                "{} ({} bytes of {esize}-byte elements)",
                shape(raw.partitions, raw.free),
                raw.bytes.len()
            ),
        });
    }
    let row_bytes = raw.free * esize;
    walk_write(mem, pat, esize, |p, pos, out| {
        let at = p * row_bytes + pos * esize;
        out.copy_from_slice(&raw.bytes[at..at + out.len()]);
        Ok(())
    })
}

#[cfg(test)]
pub(crate) mod tests;
