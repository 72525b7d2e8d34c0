//! Collectives between ranks of this process (a rank is a logical core),
//! as device work: the ring schedule of the seeds ([`plan`]) composed
//! into DMA descriptors ([`compose`]) that the cores' DMA queues walk,
//! reducing in the DMA engines, ringing each other's queues and raising
//! each other's semaphores; the host only rings the first doorbells and
//! waits, bounded, for its core's semaphore ([`world`]).
//!
//! Ranks in other processes or machines: the world is bootstrapped at
//! `NEURON_RT_ROOT_COMM_ID` ([`net`]); each process keeps its own ranks'
//! steps, cut at the network ([`split`]), and a proxy thread moves the
//! cross-process bytes over libfabric between outboxes and inboxes the
//! devices' DMA fills and drains ([`proxy`]; a loaded NEFF's executions
//! run on the process's persistent proxy threads, [`proxy_threads`]).
//! In-NEFF collectives (`nrt_load_collectives`) are composed at load by
//! [`neff`] and run from the engines' instruction streams; `nrt_barrier`
//! runs a loaded barrier model ([`barrier`]).
//! docs/collectives.md describes the design and the encoding.

pub mod barrier;
pub mod compose;
mod host_calls;
pub mod neff;
pub mod neff_net;
pub mod net;
pub mod plan;
pub mod proxy;
pub mod proxy_threads;
pub mod proxy_work;
mod remote;
pub mod split;
pub mod world;

pub use barrier::BARRIER_BYTES;
pub use plan::CcKind;
pub use world::{Arrival, Collectives, CommContext, ReduceOp};
