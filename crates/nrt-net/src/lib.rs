//! The network under collectives: a transport interface shaped like
//! NCCL's net plugin, its two implementations, and the bootstrap
//! rendezvous at `NEURON_RT_ROOT_COMM_ID`.
//!
//! This crate sits below the runtime, beside `nrt-hal`: the runtime
//! depends on [`Transport`]; the simulator knows nothing of the network.
//!
//! * [`transport`]: listen / connect / accept / isend / irecv / test /
//!   flush / register, with bounded blocking helpers.
//! * [`InProcTransport`]: ranks that are threads of one process; one copy
//!   per transfer.
//! * [`fabric::FabricTransport`]: libfabric, loaded at run time from
//!   `libfabric.so.1` (RDM endpoints, tagged messages), provider from
//!   `FI_PROVIDER` (default `tcp`).
//! * [`bootstrap`]: rank 0 listens at `NEURON_RT_ROOT_COMM_ID`, the others
//!   connect; they exchange endpoints, world size and op signatures.
//! * [`limits`]: every wait is bounded by a documented variable.
//! * [`queue`]: owning send and receive queues over a comm, for callers
//!   that keep many transfers in flight without `unsafe`.
//! * [`affinity`]: pinning a proxy thread to a CPU of its own.
//! * [`sendrecv`]: point-to-point tensor transfers between logical cores
//!   (the engine of `nrt_async_sendrecv.h`) and its rendezvous store.

pub mod affinity;
pub mod bootstrap;
pub mod error;
pub mod fabric;
pub mod inproc;
pub mod limits;
pub mod queue;
pub mod sendrecv;
mod slots;
pub mod transport;

pub use error::{NetError, NetResult};
pub use inproc::InProcTransport;
pub use limits::{Bound, WarnSink};
pub use transport::{Handle, Listener, RecvComm, Registration, Request, SendComm, Transport};
