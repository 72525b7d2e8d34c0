//! The text of 0xD4 (`dma2d`) records, shared by the generators: each side
//! walks `rows` rows `step` bytes apart, in each row `runs` runs
//! `run_step` bytes apart, each run `run_bytes` contiguous bytes
//! (docs/isa.md §5, `dma2d`).

/// One side of a 0xD4 record.
pub(crate) struct Side {
    /// The reference: `varN` (a def.json var) or `dgeN` (a DGE-table entry).
    pub at: String,
    /// Byte offset of the first row.
    pub offset: usize,
    /// Bytes between rows.
    pub step: usize,
    /// Rows.
    pub rows: usize,
    /// Bytes between the runs of a row.
    pub run_step: usize,
    /// Runs per row.
    pub runs: usize,
}

impl Side {
    /// `rows` rows of one run each.
    pub fn rows(at: String, offset: usize, step: usize, rows: usize) -> Side {
        Side { at, offset, step, rows, run_step: 1, runs: 1 }
    }

    /// The assembler form with runs of `run_bytes` bytes.
    pub fn text(&self, run_bytes: usize) -> String {
        format!("[{}+{:#x}; {:#x},{}; {:#x},{}; {run_bytes}]", self.at, self.offset, self.step, self.rows, self.run_step, self.runs)
    }
}

/// A `dma2d` record on the queue whose completion semaphore is `sem`,
/// adding `add` to it when the transfer has landed (the rows split into
/// `add` packets), converting `src_dtype` to `dst_dtype`.
pub(crate) fn dma2d(sem: u32, add: u32, src: &Side, dst: &Side, run_bytes: usize, src_dtype: &str, dst_dtype: &str) -> String {
    format!("dma2d flags=0 sem={sem} sem_add={add} src={} dst={} src_dtype={src_dtype} dst_dtype={dst_dtype}", src.text(run_bytes), dst.text(run_bytes))
}
