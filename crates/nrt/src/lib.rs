//! The nrt-rs runtime core.
//!
//! Will hold, per ARCHITECTURE.md: configuration from NEURON_RT_* variables,
//! logging, topology (virtual cores, LNC, exclusive reservation), the device
//! memory allocator and ledger, the NEFF load pipeline (parse, program IR,
//! static memory plan, stage, lower/relocate, ready), execution (bind, stage,
//! doorbell, harvest) and the status/error model. It talks to devices only
//! through `nrt-hal`'s `Device` trait. Filled in by the runtime-core issue.
#![forbid(unsafe_code)]
