//! The cost model: how much virtual time each instruction and DMA takes.
//!
//! Numbers are plausible, not cycle-exact: engine clocks from the public
//! Trn2 figures (PE 2.4 GHz, ACT 1.2 GHz, DVE 0.96 GHz, POOL 1.4 GHz) and a
//! DMA engine of ~27 GB/s with a fixed setup latency. Times are in
//! picoseconds, the unit of the notification timestamps.

use nrt_hal::EngineId;

/// Picoseconds per cycle of an engine's clock.
pub const fn cycle_ps(engine: EngineId) -> u64 {
    match engine {
        EngineId::Pe => 417,
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
        assert_eq!(cycles(EngineId::Pe, 10), 4170);
    }
}
