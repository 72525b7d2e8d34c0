//! The cost model: how much virtual time each instruction and DMA takes.
//!
//! Numbers are plausible, not cycle-exact: engine clocks (PE 1.4 GHz,
//! ACT 1.2 GHz, DVE 0.96 GHz, POOL 1.4 GHz), a 128x128 PE array that
//! retires one moving column per cycle when fully used, ACT / DVE / POOL
//! lanes that process one element per partition per cycle, and a DMA
//! engine of ~27 GB/s with a fixed setup latency. Times are in
//! picoseconds, the unit of the notification timestamps.

use nrt_hal::EngineId;

/// Picoseconds per cycle of an engine's clock.
pub const fn cycle_ps(engine: EngineId) -> u64 {
    match engine {
        EngineId::Pe => 714,
        EngineId::Act => 833,
        EngineId::Pool => 714,
        EngineId::Dve => 1042,
        EngineId::Sp => 714,
    }
}

/// Cycles a sequencer spends on a control instruction (fetch, decode,
/// semaphore handshake).
pub const CONTROL_CYCLES: u64 = 16;

/// Virtual duration of a control instruction on `engine`.
pub const fn control(engine: EngineId) -> u64 {
    CONTROL_CYCLES * cycle_ps(engine)
}

/// Virtual duration of `cycles` engine cycles (for compute instructions,
/// whose kernels report cycles).
pub const fn cycles(engine: EngineId, cycles: u64) -> u64 {
    cycles.saturating_mul(cycle_ps(engine))
}

/// Fixed cycles of every compute instruction (operand fetch, pipeline fill).
pub const COMPUTE_FIXED_CYCLES: u64 = 64;

/// PE array side: rows (contraction) and columns (outputs).
pub const PE_ARRAY: u64 = 128;

/// Cycles of a MATMUL: `rows x cols` PEs used, `moving` columns streamed;
/// a full 128x128 array retires one moving column per cycle.
pub const fn matmul_cycles(rows: u64, cols: u64, moving: u64) -> u64 {
    let macs = rows.saturating_mul(cols).saturating_mul(moving);
    COMPUTE_FIXED_CYCLES + macs.div_ceil(PE_ARRAY * PE_ARRAY)
}

/// Cycles of an LDWEIGHTS: one weight row (partition) enters per cycle.
pub const fn ldweights_cycles(rows: u64) -> u64 {
    COMPUTE_FIXED_CYCLES + rows
}

/// Cycles of an ACT / DVE / POOL instruction streaming `free` elements per
/// partition (all partitions in parallel, one element per lane per cycle).
pub const fn lane_cycles(free: u64) -> u64 {
    COMPUTE_FIXED_CYCLES + free
}

/// Fixed cost of one DMA descriptor pair (descriptor fetch and setup).
pub const DMA_SETUP_PS: u64 = 200_000;
/// Picoseconds per byte moved by one DMA engine (~27 GB/s).
pub const DMA_PS_PER_BYTE: u64 = 37;

/// Virtual duration of a DMA transfer of `bytes`.
pub const fn dma(bytes: u64) -> u64 {
    DMA_SETUP_PS + bytes.saturating_mul(DMA_PS_PER_BYTE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_grow_with_work() {
        assert!(dma(1 << 20) > dma(4096));
        assert!(control(EngineId::Dve) > control(EngineId::Pe));
        assert_eq!(cycles(EngineId::Pe, 10), 7140);
        assert_eq!(matmul_cycles(128, 128, 512), COMPUTE_FIXED_CYCLES + 512);
        assert!(matmul_cycles(32, 32, 512) < matmul_cycles(128, 128, 512));
        assert_eq!(lane_cycles(100), COMPUTE_FIXED_CYCLES + 100);
        assert!(ldweights_cycles(128) > ldweights_cycles(1));
    }
}
