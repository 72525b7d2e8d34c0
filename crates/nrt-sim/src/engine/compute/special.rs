//! POOL / DVE specials: STREAM_TRANSPOSE, IOTA (memset is IOTA with all
//! steps zero), EMBEDDING_UPDATE and DEBUG_TENSOR_READ (a tile into the
//! engine's debug ring, `nrt_isa::debug_ring`).

use super::operand;
use super::context::{ComputeContext, Done, OpError, OpResult};
use crate::port::Bus;
use crate::cost;
use crate::kernels::elementwise::memset;
use crate::kernels::iota::iota as k_iota;
use crate::kernels::pattern::{Axis, gather, gather_raw, scatter, scatter_raw};
use crate::kernels::tile::Tile;
use crate::kernels::transpose::{transpose, transpose_raw};
use crate::kernels::KernelError;
use crate::kernels::elementwise::{AluOp, tensor_tensor};
use nrt_hal::DeviceAddr;
use nrt_isa::dtype::{Rounding, bytes_to_f32, f32_to_bytes};
use nrt_isa::debug_ring::{self, EntryHead, Header};
use nrt_isa::instr::{DebugTensorRead, EmbeddingUpdate, Fill, Iota, StreamTranspose};
use nrt_isa::notification::CustomSubId;

/// STREAM_TRANSPOSE: the `partitions x F` input becomes `F x partitions`;
/// a bit-exact move when the dtypes match.
pub(crate) fn stream_transpose(i: &StreamTranspose, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let input = operand::tensor3d("input", &i.input, parts, operand::dtype("in_dtype", i.in_dtype)?)?;
    let f = input.pattern.free_len();
    let output = operand::tensor3d("output", &i.output, f, operand::dtype("out_dtype", i.out_dtype)?)?;
    let chip = ctx.onchip();
    chip.check("input", &input)?;
    chip.check("output", &output)?;
    if output.pattern.free_len() != parts {
        return Err(OpError::Bad(format!(
            "output has {} elements per partition, expected {parts} (the input partitions)",
            output.pattern.free_len()
        )));
    }
    let mut dst = chip.view(output.space);
    if input.dtype == output.dtype {
        let raw = gather_raw(&chip.view(input.space), &input.pattern, input.dtype.size_bytes())?;
        scatter_raw(&mut dst, &output.pattern, &transpose_raw(&raw)?)?;
    } else {
        let x = gather(&chip.view(input.space), &input.pattern, input.dtype)?;
        scatter(&mut dst, &output.pattern, output.dtype, &transpose(&x), &mut Rounding::NearestEven)?;
    }
    Ok(Done { cycles: cost::lane_cycles(f.max(parts) as u64), output: Some(output), oob: None, flops: 0 })
}

/// An f32 that is an integer small enough for the exact i64 iota kernel.
fn integral(v: f32) -> Option<i64> {
    (v.is_finite() && v.fract() == 0.0 && v.abs() <= (1u64 << 30) as f32).then_some(v as i64)
}

/// IOTA: `base + p·partition_step + Σ i_k·step_k`, converted to `dtype`.
///
/// All steps zero is memset (any base). Integer base and steps go through
/// the exact index kernel; fractional ones are evaluated in f32 in the
/// documented order `((base + p·ps) + i0·s0) + i1·s1) + i2·s2`.
pub(crate) fn iota(i: &Iota, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let out = operand::tensor3d("output", &i.output, parts, operand::dtype("dtype", i.dtype)?)?;
    let chip = ctx.onchip();
    chip.check("output", &out)?;
    let (base, ps) = (i.base.get(), i.partition_step.get());
    let steps = [i.step0.get(), i.step1.get(), i.step2.get()];
    let counts = [i.output.num[0], i.output.num[1], i.output.num[2]].map(u32::from);
    let free = out.pattern.free_len();
    let tile = if ps == 0.0 && steps.iter().all(|s| *s == 0.0) {
        memset(parts, free, base)
    } else if let (Some(b), Some(p), Some(s0), Some(s1), Some(s2)) =
        (integral(base), integral(ps), integral(steps[0]), integral(steps[1]), integral(steps[2]))
    {
        let axes = [(s0, counts[0]), (s1, counts[1]), (s2, counts[2])].map(|(s, c)| Axis::new(s as i32, c));
        k_iota(parts, b, p, &axes)?
    } else {
        let (n0, n1) = (counts[0] as usize, counts[1] as usize);
        Tile::from_fn(parts, free, |p, j| {
            let (i0, i1, i2) = (j % n0.max(1), (j / n0.max(1)) % n1.max(1), j / (n0 * n1).max(1));
            base + p as f32 * ps + i0 as f32 * steps[0] + i1 as f32 * steps[1] + i2 as f32 * steps[2]
        })
    };
    let mut dst = chip.view(out.space);
    scatter(&mut dst, &out.pattern, out.dtype, &tile, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(free as u64), output: Some(out), oob: None, flops: 0 })
}

/// FILL (0x49): every element of the destination frame becomes `imm`,
/// converted to the destination dtype (`out_dtype`, or `in_dtype` when
/// that byte is 0; a 0 `in_dtype` is accepted, the immediate being f32).
/// `count` must equal the frame's elements per partition: the two say the
/// same thing in every observed record, and a record where they differ
/// has a meaning we do not know.
pub(crate) fn fill(i: &Fill, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let code = if i.out_dtype.0 == 0 { i.in_dtype } else { i.out_dtype };
    if i.in_dtype.0 != 0 {
        operand::dtype("in_dtype", i.in_dtype)?;
    }
    let out = operand::tensor4d("dst", &i.dst, parts, operand::dtype("out_dtype", code)?)?;
    let chip = ctx.onchip();
    chip.check("dst", &out)?;
    let free = out.pattern.free_len();
    if i.count as usize != free {
        return Err(OpError::Bad(format!("count is {} but the destination frame has {free} elements per partition; expected them equal", i.count)));
    }
    let tile = memset(parts, free, i.imm.get());
    let mut dst = chip.view(out.space);
    scatter(&mut dst, &out.pattern, out.dtype, &tile, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(free as u64), output: Some(out), oob: None, flops: 0 })
}

/// EMBEDDING_UPDATE: for index `i` (partition-major over the indices
/// pattern), table row `indices[i]` in device memory gets `+= updates[i]`
/// (the `row_elems`-element chunk `i` of the updates, same order). Rows
/// are read, added in f32 and written back one at a time, so repeated
/// indices accumulate. An index that is not an integer below `num_rows` is
/// skipped and raises the EmbeddingUpdateOob custom notification.
pub(crate) fn embedding_update(i: &EmbeddingUpdate, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let dt = operand::dtype("dtype", i.dtype)?;
    let idx = operand::tensor3d("indices", &i.indices, parts, operand::dtype("index_dtype", i.index_dtype)?)?;
    let upd = operand::tensor3d("updates", &i.updates, parts, dt)?;
    let chip = ctx.onchip();
    chip.check("indices", &idx)?;
    chip.check("updates", &upd)?;
    let (n, row) = (idx.pattern.free_len(), i.row_elems as usize);
    if row == 0 || upd.pattern.free_len() != n.saturating_mul(row) {
        return Err(OpError::Bad(format!(
            "updates have {} elements per partition, expected {n} indices x row_elems {row}",
            upd.pattern.free_len()
        )));
    }
    let ix = gather(&chip.view(idx.space), &idx.pattern, idx.dtype)?;
    let up = gather(&chip.view(upd.space), &upd.pattern, dt)?;
    let row_bytes = (row * dt.size_bytes()) as u64;
    let mut bytes = vec![0u8; row_bytes as usize];
    let mut cur = Tile::zeros(1, row);
    let mut oob = None;
    for p in 0..parts {
        for (j, &v) in ix.row(p).iter().enumerate() {
            if !(v >= 0.0 && v.fract() == 0.0 && (v as u64) < u64::from(i.num_rows)) {
                oob = Some(CustomSubId::EmbeddingUpdateOob);
                continue;
            }
            let at = (v as u64).checked_mul(row_bytes).and_then(|o| i.table_addr.checked_add(o));
            let addr = DeviceAddr(at.ok_or_else(|| format!("table row {v} overflows the address space"))?);
            ctx.dev.read(addr, &mut bytes).map_err(|e| format!("table row {v}: {e}"))?;
            bytes_to_f32(&bytes, dt, cur.row_mut(0)).map_err(KernelError::from)?;
            let delta = Tile::from_vec(1, row, up.row(p)[j * row..(j + 1) * row].to_vec())?;
            let sum = tensor_tensor(&cur, &delta, AluOp::Add)?;
            f32_to_bytes(sum.row(0), dt, &mut bytes, &mut Rounding::NearestEven).map_err(KernelError::from)?;
            ctx.dev.write_at(addr, &bytes, 0).map_err(|e| format!("table row {v}: {e}"))?;
        }
    }
    Ok(Done { cycles: cost::lane_cycles((n * row) as u64), output: None, oob, flops: 0 })
}

/// DEBUG_TENSOR_READ: the tile's bytes, unconverted, become one entry of
/// the debug ring at `ring` (header and layout in `nrt_isa::debug_ring`):
/// the entry's bytes first, then `produced`; with no room beside the
/// unread entries the tile is dropped and `dropped` counts it. A ring
/// address that cannot be read or written is a bad operand.
pub(crate) fn debug_tensor_read(i: &DebugTensorRead, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let dt = operand::dtype("dtype", i.dtype)?;
    let input = operand::tensor3d("input", &i.input, parts, dt)?;
    let chip = ctx.onchip();
    chip.check("input", &input)?;
    let raw = gather_raw(&chip.view(input.space), &input.pattern, dt.size_bytes())?;
    let ring = DeviceAddr(i.ring);
    let mut words = [0u8; 32];
    ctx.dev.read(ring, &mut words).map_err(|e| format!("debug ring at {:#x}: {e}", i.ring))?;
    let mut header = Header::read(&words);
    let data_bytes = raw.bytes.len() as u64;
    let entry_bytes = EntryHead::entry_bytes_for(data_bytes);
    let cycles = cost::lane_cycles(input.pattern.free_len() as u64);
    if !header.fits(entry_bytes) || u32::try_from(entry_bytes).is_err() {
        header.dropped += 1;
        let at = ring.offset(debug_ring::DROPPED);
        ctx.dev.write_at(at, &header.dropped.to_le_bytes(), 0).map_err(|e| format!("debug ring at {:#x}: {e}", i.ring))?;
        return Ok(Done { cycles, output: None, oob: None, flops: 0 });
    }
    let head = EntryHead {
        entry_bytes: entry_bytes as u32,
        dtype: i.dtype.0,
        engine: ctx.engine.index() as u8,
        partitions: u16::from(i.partitions),
        num: i.input.num,
        data_bytes,
        prefix: i.prefix.0.clone(),
    };
    let mut entry = Vec::with_capacity(entry_bytes as usize);
    entry.extend_from_slice(&head.to_bytes());
    entry.extend_from_slice(&raw.bytes);
    entry.resize(entry_bytes as usize, 0);
    // The entry area wraps: at most two writes.
    let area = ring.offset(debug_ring::HEADER_BYTES);
    let start = header.produced % header.capacity;
    let first = (header.capacity - start).min(entry_bytes) as usize;
    let bad = |e: nrt_hal::HalError| format!("debug ring at {:#x}: {e}", i.ring);
    ctx.dev.write_at(area.offset(start), &entry[..first], 0).map_err(bad)?;
    if first < entry.len() {
        ctx.dev.write_at(area, &entry[first..], 0).map_err(bad)?;
    }
    header.produced += entry_bytes;
    ctx.dev.write_at(ring.offset(debug_ring::PRODUCED), &header.produced.to_le_bytes(), 0).map_err(bad)?;
    Ok(Done { cycles, output: None, oob: None, flops: 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_detection() {
        assert_eq!(integral(3.0), Some(3));
        assert_eq!(integral(-64.0), Some(-64));
        assert_eq!(integral(0.5), None);
        assert_eq!(integral(f32::NAN), None);
        assert_eq!(integral(1e12), None);
    }
}
