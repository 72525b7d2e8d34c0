//! The compiler's 0xD4 DMA pseudo-instruction (`dma2d`) as IR: which var
//! bytes one record moves, on which queue of the issuing engine's `dynamic`
//! queue set, and which semaphore its completion raises.
//!
//! A record names each side by var id (fixed at load: state buffer,
//! constants, scratch) or through the DGE table (inputs and outputs, whose
//! addresses change every execution). Both resolve here to var ids, so the
//! load treats the IO sides exactly like any other IO endpoint (patched at
//! bind time). The completion semaphore doubles as the queue slot
//! (`sem - semaphore_set[0]`), and it grows by `sem_add` (16: one per DMA
//! engine) when the whole transfer has landed: the load splits the rows
//! into `sem_add` packets, each of which bumps the queue's semaphore once.
//!
//! Each side walks three levels: `num0` rows `step0` bytes apart (the
//! outer dimension), in each row `num1` runs `step1` bytes apart, each run
//! `row_bytes` contiguous bytes. Every observed record has `num1 = 1` (so
//! `step1` is unused); a record with `num1 > 1` walks the runs of a row in
//! order before the next row, on both sides alike. On the state buffer a
//! step that is a multiple of the operand's partition stride (`1 << 18`)
//! moves across partitions, any other step moves inside the partition.

use super::{MemRef, MemRefKind, ProgramError, QueueSetIr, Transfer, VarSlice};
use nrt_hal::EngineId;
use nrt_isa::dma_desc::pattern::{self as pat, MAX_PATTERN_DIMS, PatternBlock, PatternDim, PatternSide};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::PseudoDmaDirect2d;
use nrt_isa::instr::dma_operand::{DmaAccess, REF_KIND_DGE, REF_KIND_VAR};
use nrt_isa::record::RecordBytes;
use nrt_neff::QueueType;

/// Partition stride of state-buffer addresses in DMA operands
/// (`partition << 18 | offset`).
pub const DMA_SB_PARTITION_STRIDE: u64 = 0x40000;

/// The device's state-buffer shape, which the SB side of a DMA is mapped
/// onto (partition-major, `partition_bytes` per partition).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SbufGeometry {
    /// Partitions.
    pub partitions: u64,
    /// Bytes per partition.
    pub partition_bytes: u64,
}

/// One side of a 0xD4 record with its reference resolved to a var.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dma2dSide {
    /// The var read or written (for DGE references: the listed var).
    pub var_id: u64,
    /// Whether that var is the state buffer (operand offsets then carry the partition).
    pub state_buffer: bool,
    /// Byte offset of row 0 inside the var.
    pub offset: u64,
    /// Bytes between rows.
    pub row_step: u64,
    /// Rows.
    pub rows: u64,
    /// Bytes between the runs of one row (the second dimension).
    pub run_step: u64,
    /// Runs per row (1 in every observed record).
    pub runs: u64,
    /// Contiguous bytes per run.
    pub row_bytes: u64,
    /// Element type on this side.
    pub dtype: Dtype,
}

/// One 0xD4 record of an engine stream, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dma2dIr {
    /// The issuing engine.
    pub engine: EngineId,
    /// Record index in the engine's stream.
    pub index: usize,
    /// The dynamic queue set it runs on.
    pub queue_set: String,
    /// Completion semaphore (and queue slot).
    pub semaphore: u32,
    /// Slot in the queue set (`semaphore - semaphore_set[0]`).
    pub slot: usize,
    /// Amount the semaphore grows when the transfer completes (= packets).
    pub packets: u32,
    /// Source.
    pub src: Dma2dSide,
    /// Destination.
    pub dst: Dma2dSide,
}

/// The engine a def.json `owner` string names.
fn owner_engine(owner: &str) -> Option<EngineId> {
    match owner.to_ascii_lowercase().as_str() {
        "pe" => Some(EngineId::Pe),
        "act" | "activation" => Some(EngineId::Act),
        "pool" => Some(EngineId::Pool),
        "dve" => Some(EngineId::Dve),
        "sp" => Some(EngineId::Sp),
        _ => None,
    }
}

impl Dma2dIr {
    /// Resolves the 0xD4 record `rec` (instruction `index` of `engine`).
    pub fn resolve(
        subgraph: &str,
        engine: EngineId,
        index: usize,
        rec: &RecordBytes,
        vars: &[MemRef],
        sets: &[QueueSetIr],
    ) -> Result<Dma2dIr, ProgramError> {
        let what = format!("{} instruction {index} (dma2d)", engine.name());
        let bad = |reason: String| ProgramError::BadDma { subgraph: subgraph.to_string(), what: what.clone(), reason };
        let d = PseudoDmaDirect2d::decode(rec).map_err(|e| bad(format!("does not decode: {e}")))?;
        let sem = u32::from(d.sem);
        let set = sets
            .iter()
            .filter(|s| s.ty == QueueType::Dynamic)
            .filter(|s| s.owner.as_deref().and_then(owner_engine).is_none_or(|o| o == engine))
            .find(|s| s.semaphores.contains(&sem))
            .ok_or_else(|| bad(format!("completion semaphore {sem} belongs to no dynamic queue set of {}", engine.name())))?;
        let slot = set.semaphores.iter().position(|s| *s == sem).unwrap_or(0);
        if d.sem_add == 0 {
            return Err(bad("completion increment is 0; expected the per-DMA increment (16)".to_string()));
        }
        let side = |a: &DmaAccess, code: u8, dir: &str| -> Result<Dma2dSide, ProgramError> {
            let dtype = Dtype::from_code(code).filter(|t| t.size_bytes() > 0).ok_or_else(|| bad(format!("{dir} dtype code {code} is not a known element type")))?;
            let var_id = match a.reference.kind() {
                REF_KIND_VAR => u64::from(a.reference.index()),
                REF_KIND_DGE => {
                    let table = vars.iter().find_map(|v| match &v.kind {
                        MemRefKind::DgeTable { ids } => Some(ids),
                        _ => None,
                    });
                    let ids = table.ok_or_else(|| bad(format!("{dir} goes through the DGE table, but def.json has no dge-table var")))?;
                    *ids.get(a.reference.index() as usize).ok_or_else(|| {
                        bad(format!("{dir} names DGE entry {}, but the dge-table lists {} vars", a.reference.index(), ids.len()))
                    })?
                }
                k => return Err(bad(format!("{dir} reference kind {k:#x} is neither a var (0x10) nor a DGE entry (0x20)"))),
            };
            let v = vars.iter().find(|v| v.var_id == var_id).ok_or_else(|| bad(format!("{dir} names var {var_id}, which def.json does not declare")))?;
            if matches!(v.kind, MemRefKind::List { .. } | MemRefKind::DgeTable { .. }) {
                return Err(bad(format!("{dir} names var {:?}, a table, which is not DMA data", v.name)));
            }
            if a.num0 == 0 || a.num1 == 0 || a.row_bytes == 0 {
                return Err(bad(format!("{dir} moves nothing ({} rows of {} runs of {} bytes)", a.num0, a.num1, a.row_bytes)));
            }
            if !u64::from(a.row_bytes).is_multiple_of(dtype.size_bytes() as u64) {
                return Err(bad(format!("{dir} row of {} bytes is not whole {} elements", a.row_bytes, dtype.name())));
            }
            let s = Dma2dSide {
                var_id,
                state_buffer: matches!(v.kind, MemRefKind::StateBuffer),
                offset: u64::from(a.offset),
                row_step: u64::from(a.step0),
                rows: u64::from(a.num0),
                run_step: if a.num1 > 1 { u64::from(a.step1) } else { 0 },
                runs: u64::from(a.num1),
                row_bytes: u64::from(a.row_bytes),
                dtype,
            };
            if !s.state_buffer {
                let end = s.offset + (s.rows - 1) * s.row_step + (s.runs - 1) * s.run_step + s.row_bytes;
                if end > v.size {
                    return Err(bad(format!("{dir} reaches byte {end} of var {:?}, which is {} bytes", v.name, v.size)));
                }
            }
            Ok(s)
        };
        let src = side(&d.src, d.src_dtype.0, "source")?;
        let dst = side(&d.dst, d.dst_dtype.0, "destination")?;
        if src.rows != dst.rows {
            return Err(bad(format!("reads {} rows but writes {}", src.rows, dst.rows)));
        }
        if src.runs != dst.runs {
            return Err(bad(format!("reads {} runs per row but writes {}; both sides must walk the same shape", src.runs, dst.runs)));
        }
        let (se, de) = (src.row_bytes / src.dtype.size_bytes() as u64, dst.row_bytes / dst.dtype.size_bytes() as u64);
        if se != de {
            return Err(bad(format!("a source row has {se} elements but a destination row {de}")));
        }
        if src.rows < u64::from(d.sem_add) {
            return Err(bad(format!("{} rows cannot complete in {} parts (one per DMA engine)", src.rows, d.sem_add)));
        }
        Ok(Dma2dIr { engine, index, queue_set: set.name.clone(), semaphore: sem, slot, packets: u32::from(d.sem_add), src, dst })
    }

    /// The transfers of the record, one per packet: rows split evenly into
    /// `packets` parts, each a pattern transfer (so dtype conversion and
    /// row pitches are done by the DMA). State-buffer offsets are mapped
    /// from the operand's `partition << 18` form onto `sbuf`.
    pub fn packets(&self, subgraph: &str, sbuf: SbufGeometry) -> Result<Vec<Transfer>, ProgramError> {
        let bad = |reason: String| ProgramError::BadDma {
            subgraph: subgraph.to_string(),
            what: format!("{} instruction {} (dma2d)", self.engine.name(), self.index),
            reason,
        };
        // (start offset, row step, run step) of a side in device terms.
        let map = |s: &Dma2dSide, dir: &str| -> Result<(u64, i64, i64), ProgramError> {
            let fits = |v: u64, what: &str| i64::try_from(v).map_err(|_| bad(format!("{dir} {what} step is too large")));
            if !s.state_buffer {
                return Ok((s.offset, fits(s.row_step, "row")?, fits(s.run_step, "run")?));
            }
            let (part, inner) = (s.offset / DMA_SB_PARTITION_STRIDE, s.offset % DMA_SB_PARTITION_STRIDE);
            // A dimension steps across partitions when its step is a whole
            // number of partition strides, else inside the partition.
            let (mut last_part, mut last_inner) = (part, inner + s.row_bytes);
            let mut dim = |step: u64, count: u64| -> u64 {
                if count > 1 && step.is_multiple_of(DMA_SB_PARTITION_STRIDE) {
                    let k = step / DMA_SB_PARTITION_STRIDE;
                    last_part += k * (count - 1);
                    k * sbuf.partition_bytes
                } else {
                    last_inner += step * (count - 1);
                    step
                }
            };
            let row_step = dim(s.row_step, s.rows);
            let run_step = dim(s.run_step, s.runs);
            if last_inner > sbuf.partition_bytes || last_part >= sbuf.partitions {
                return Err(bad(format!(
                    "{dir} state-buffer access reaches partition {last_part} byte {last_inner}; the state buffer has {} partitions of {} bytes",
                    sbuf.partitions, sbuf.partition_bytes
                )));
            }
            Ok((part * sbuf.partition_bytes + inner, fits(row_step, "row")?, fits(run_step, "run")?))
        };
        let (src_off, src_step, src_run) = map(&self.src, "source")?;
        let (dst_off, dst_step, dst_run) = map(&self.dst, "destination")?;
        let rows = self.src.rows;
        let parts = u64::from(self.packets);
        let mut out = Vec::with_capacity(self.packets as usize);
        for p in 0..parts {
            let (r0, r1) = (rows * p / parts, rows * (p + 1) / parts);
            let side = |s: &Dma2dSide, step: i64, run: i64| -> Result<PatternSide, ProgramError> {
                let fit = |v: i64| i32::try_from(v).map_err(|_| bad(format!("step {v} does not fit a pattern block")));
                let mut dims = [PatternDim::default(); MAX_PATTERN_DIMS];
                dims[0] = PatternDim { step: s.dtype.size_bytes() as i32, size: s.row_bytes as u32 };
                let mut ndims = 1;
                if s.runs > 1 {
                    dims[ndims] = PatternDim { step: fit(run)?, size: s.runs as u32 };
                    ndims += 1;
                }
                dims[ndims] = PatternDim { step: fit(step)?, size: (r1 - r0) as u32 };
                Ok(PatternSide { addr: 0, dtype: s.dtype, ndims: ndims as u8 + 1, dims })
            };
            let block = PatternBlock {
                op: pat::DmaOp::Copy,
                src: side(&self.src, src_step, src_run)?,
                dst: side(&self.dst, dst_step, dst_run)?,
                scale: 1.0,
                constant: None,
                transpose: None,
            };
            block.validate().map_err(|e| bad(e.to_string()))?;
            let at = |off: u64, step: i64| off.wrapping_add_signed(step * r0 as i64);
            out.push(Transfer {
                src: VarSlice { var_id: self.src.var_id, offset: at(src_off, src_step) },
                dst: VarSlice { var_id: self.dst.var_id, offset: at(dst_off, dst_step) },
                len: (r1 - r0) * self.src.runs * self.src.row_bytes,
                pattern: Some(block),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::asm::assemble;
    use proptest::prelude::*;

    fn vars() -> Vec<MemRef> {
        let m = |name: &str, id: u64, size: u64, kind: MemRefKind| MemRef { name: name.into(), var_id: id, size, align: 1, kind };
        vec![
            m("SB", 0, 0, MemRefKind::StateBuffer),
            m("x", 1, 128 * 512, MemRefKind::Input { index: 0 }),
            m("out", 2, 128 * 256, MemRefKind::Output { index: 0 }),
            m("DGE", 3, 16, MemRefKind::DgeTable { ids: vec![1, 2] }),
        ]
    }

    fn sets() -> Vec<QueueSetIr> {
        vec![QueueSetIr { name: "qPool".into(), ty: QueueType::Dynamic, queues: 16, semaphores: (24..40).collect(), instances: vec![], owner: Some("pool".into()) }]
    }

    fn rec(text: &str) -> RecordBytes {
        assemble(text).unwrap().as_slice().try_into().unwrap()
    }

    const GEOM: SbufGeometry = SbufGeometry { partitions: 128, partition_bytes: 0x38000 };

    #[test]
    fn dge_and_sb_sides_resolve_and_split_into_packets() {
        let r = rec("dma2d flags=0 sem=26 sem_add=16 src=[var0+0x4200; 0x40000,128; 0x1,1; 256] dst=[dge1+0x80; 0x100,128; 0x1,1; 128] src_dtype=float32 dst_dtype=float16");
        let d = Dma2dIr::resolve("sg00", EngineId::Pool, 5, &r, &vars(), &sets()).unwrap();
        assert_eq!((d.slot, d.semaphore, d.packets, d.src.var_id, d.dst.var_id, d.src.state_buffer), (2, 26, 16, 0, 2, true));
        let p = d.packets("sg00", GEOM).unwrap();
        assert_eq!(p.len(), 16);
        // Packet 1 covers rows 8..16: SB partition 8, output row 8.
        assert_eq!((p[1].src.offset, p[1].dst.offset), (8 * 0x38000 + 0x4200, 0x80 + 8 * 0x100));
        let b = p[1].pattern.unwrap();
        assert_eq!((b.src.dims[1].step, b.src.dims[1].size, b.dst.dims[1].step), (0x38000, 8, 0x100));
        assert_eq!((b.src.dtype, b.dst.dtype, b.src.elements()), (Dtype::Float32, Dtype::Float16, 8 * 64));
    }

    #[test]
    fn a_second_dimension_walks_runs_inside_each_row() {
        // x [128 rows x 512 B] read as 2 runs of 128 B, 256 B apart, per
        // row; written to SB partition r as 2 runs of 128 B, 0x400 apart.
        let r = rec("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 0x100,2; 128] dst=[var0+0x1000; 0x40000,128; 0x400,2; 128] src_dtype=float16 dst_dtype=float16");
        let d = Dma2dIr::resolve("sg00", EngineId::Pool, 0, &r, &vars(), &sets()).unwrap();
        assert_eq!((d.src.runs, d.src.run_step, d.dst.runs, d.dst.run_step), (2, 0x100, 2, 0x400));
        let p = d.packets("sg00", GEOM).unwrap();
        assert_eq!(p.len(), 16);
        assert_eq!((p[2].src.offset, p[2].dst.offset, p[2].len), (16 * 0x200, 16 * 0x38000 + 0x1000, 8 * 2 * 128));
        let b = p[2].pattern.unwrap();
        assert_eq!((b.src.ndims, b.src.dims[1], b.src.dims[2]), (3, PatternDim { step: 0x100, size: 2 }, PatternDim { step: 0x200, size: 8 }));
        assert_eq!((b.dst.dims[1], b.dst.dims[2]), (PatternDim { step: 0x400, size: 2 }, PatternDim { step: 0x38000, size: 8 }));
        // A second dimension across partitions maps onto the device stride.
        let r = rec("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x80,16; 0x800,8; 128] dst=[var0+0x0; 0x80,16; 0x40000,8; 128] src_dtype=float16 dst_dtype=float16");
        let d = Dma2dIr::resolve("sg00", EngineId::Pool, 0, &r, &vars(), &sets()).unwrap();
        let b = d.packets("sg00", GEOM).unwrap()[0].pattern.unwrap();
        assert_eq!((b.dst.dims[1], b.dst.dims[2]), (PatternDim { step: 0x38000, size: 8 }, PatternDim { step: 0x80, size: 1 }));
        // Shapes must agree, and the walk must stay inside its var.
        let err = |t: &str| Dma2dIr::resolve("sg00", EngineId::Pool, 0, &rec(t), &vars(), &sets()).unwrap_err().to_string();
        assert!(err("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 0x100,2; 128] dst=[var0+0x0; 0x40000,128; 0x1,1; 256] src_dtype=float16 dst_dtype=float16").contains("runs per row"));
        assert!(err("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 0x200,2; 512] dst=[var0+0x0; 0x40000,128; 0x200,2; 512] src_dtype=float16 dst_dtype=float16").contains("reaches byte"));
        let r = rec("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 0x100,2; 128] dst=[var0+0x37f00; 0x40000,128; 0x100,2; 128] src_dtype=float16 dst_dtype=float16");
        let d = Dma2dIr::resolve("sg00", EngineId::Pool, 0, &r, &vars(), &sets()).unwrap();
        assert!(d.packets("sg00", GEOM).unwrap_err().to_string().contains("state buffer has 128 partitions"));
    }

    #[test]
    fn bad_records_are_refused_with_reasons() {
        let vars = vars();
        let err = |t: &str| Dma2dIr::resolve("sg00", EngineId::Pool, 0, &rec(t), &vars, &sets()).unwrap_err().to_string();
        assert!(err("dma2d flags=0 sem=8 sem_add=16 src=[dge0+0x0; 0x200,128; 0x1,1; 512] dst=[var0+0x0; 0x40000,128; 0x1,1; 512] src_dtype=float16 dst_dtype=float16").contains("no dynamic queue set"));
        assert!(err("dma2d flags=0 sem=24 sem_add=16 src=[dge5+0x0; 0x200,128; 0x1,1; 512] dst=[var0+0x0; 0x40000,128; 0x1,1; 512] src_dtype=float16 dst_dtype=float16").contains("DGE entry 5"));
        assert!(err("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x200; 0x200,128; 0x1,1; 512] dst=[var0+0x0; 0x40000,128; 0x1,1; 512] src_dtype=float16 dst_dtype=float16").contains("reaches byte"));
        assert!(err("dma2d flags=0 sem=24 sem_add=16 src=[dge0+0x0; 0x200,128; 0x1,1; 512] dst=[var0+0x0; 0x40000,128; 0x1,1; 256] src_dtype=float16 dst_dtype=float16").contains("elements"));
        let r = rec("dma2d flags=0 sem=24 sem_add=16 src=[var0+0x37f00; 0x40000,128; 0x1,1; 512] dst=[dge0+0x0; 0x200,128; 0x1,1; 512] src_dtype=float16 dst_dtype=float16");
        let d = Dma2dIr::resolve("sg00", EngineId::Pool, 0, &r, &vars, &sets()).unwrap();
        assert!(d.packets("sg00", GEOM).unwrap_err().to_string().contains("state buffer has 128 partitions"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any 0xD4 record resolves or is refused, never panics; resolved
        /// ones split into `packets` transfers or are refused.
        #[test]
        fn random_records_resolve_or_fail_cleanly(bytes in prop::collection::vec(any::<u8>(), 64), sem in 20u8..44, rows in 0u16..300, add in 0u8..20) {
            let mut r: RecordBytes = bytes.as_slice().try_into().unwrap();
            r[0] = 0xD4;
            r[0x0D] = sem;
            r[0x0E] = add;
            r[0x20..0x22].copy_from_slice(&rows.to_le_bytes());
            r[0x38..0x3A].copy_from_slice(&rows.to_le_bytes());
            if let Ok(d) = Dma2dIr::resolve("sg00", EngineId::Pool, 0, &r, &vars(), &sets())
                && let Ok(p) = d.packets("sg00", GEOM)
            {
                prop_assert_eq!(p.len(), d.packets as usize);
            }
        }
    }
}
