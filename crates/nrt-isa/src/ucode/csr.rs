//! Q7 cluster CSR offsets inside the portal's CSR page (ours,
//! `docs/gpsimd.md` §6). All are 32-bit registers.

/// Read-only identification word.
pub const ID: u64 = 0x000;
/// Value of [`ID`]: "Q7" and the core count.
pub const ID_VALUE: u32 = 0x5137_0008;
/// Read-only IRAM bytes per Q7 core.
pub const IRAM_BYTES: u64 = 0x004;
/// Read-only DRAM bytes per Q7 core.
pub const DRAM_BYTES: u64 = 0x008;
/// Library-set table address, low word.
pub const LIBSET_LO: u64 = 0x010;
/// Library-set table address, high word.
pub const LIBSET_HI: u64 = 0x014;
/// Library-set rows (0 = none, at most [`crate::ucode::MAX_LIBSET_ROWS`]).
pub const LIBSET_ROWS: u64 = 0x018;
/// Stdio table address, low word (0 with [`STDIO_HI`] 0: no stdio).
pub const STDIO_LO: u64 = 0x020;
/// Stdio table address, high word.
pub const STDIO_HI: u64 = 0x024;
/// Runaway bound per kernel invocation in milliseconds (0 = default).
pub const WATCHDOG_MS: u64 = 0x030;
/// Default of [`WATCHDOG_MS`].
pub const DEFAULT_WATCHDOG_MS: u32 = 2000;
/// Read-only status: [`STATUS_BUSY`], [`STATUS_HUNG`], [`STATUS_FAULTED`].
pub const STATUS: u64 = 0x040;
/// STATUS bit: an op is in flight.
pub const STATUS_BUSY: u32 = 1;
/// STATUS bit: a runaway kernel was stopped; the op never completes.
pub const STATUS_HUNG: u32 = 2;
/// STATUS bit: an exception was raised since the last reset.
pub const STATUS_FAULTED: u32 = 4;
/// Read-only count of completed ops.
pub const OPS_DONE: u64 = 0x044;
/// Read-only count of exceptions.
pub const EXCEPTIONS: u64 = 0x048;
/// Read-only error-record detail of the last exception.
pub const LAST_CAUSE: u64 = 0x04C;
/// Run-stall mask: bit `q` stalls Q7 core `q`.
pub const RUN_STALL: u64 = 0x3000;
/// [`RUN_STALL`] out of reset: every core stalled.
pub const RUN_STALL_RESET: u32 = 0xFF;
