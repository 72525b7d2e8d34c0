//! The errors of the transport and the bootstrap.
//!
//! Every variant says what was asked, what happened instead and, for a
//! wait, what never came, how long we waited and which variable sets that
//! bound, so that a user who sees the message knows what to change.

use std::time::Duration;

/// Result alias for this crate.
pub type NetResult<T> = Result<T, NetError>;

/// A transport or bootstrap failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// A bounded wait ran out.
    #[error("{what} did not happen within {} (the limit set by {variable})", secs(*waited))]
    Timeout {
        /// What never came, e.g. "a receive of 4096 bytes from 127.0.0.1:5000".
        what: String,
        /// How long we waited.
        waited: Duration,
        /// The environment variable that sets the bound.
        variable: &'static str,
    },
    /// The other side of a connection went away (closed, died) while
    /// something was still expected from it.
    #[error("{what}: the peer {peer} closed the connection (it exited or failed)")]
    PeerClosed {
        /// What was in progress.
        what: String,
        /// The peer, as far as we know it.
        peer: String,
    },
    /// `libfabric.so.1` could not be loaded, or lacks a function we need.
    #[error(
        "libfabric is not available: {reason}; cross-process collectives need it \
         (on Debian/Ubuntu: apt-get install libfabric1)"
    )]
    LibfabricMissing {
        /// What dlopen/dlvsym said.
        reason: String,
    },
    /// A libfabric call failed.
    #[error("libfabric {call} failed: {message} (error {code})")]
    Fabric {
        /// The call, e.g. "fi_getinfo(provider tcp)".
        call: String,
        /// libfabric's negative error code (as returned).
        code: i64,
        /// fi_strerror's text, plus provider detail where there is one.
        message: String,
    },
    /// A value the caller passed does not fit (a handle of another
    /// transport, a buffer outside its registration, too many requests).
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// `NEURON_RT_ROOT_COMM_ID` (or a value meant for it) is malformed.
    #[error("Invalid NEURON_RT_ROOT_COMM_ID [{value}]: {reason}; please use format: <ipv4>:<port> or [<ipv6>]:<port>")]
    InvalidRootCommId {
        /// The value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The ranks disagree (world size, rank numbers, op signatures).
    #[error("bootstrap failed: {0}")]
    Mismatch(String),
    /// The bootstrap could not complete for another reason (a rank died, a
    /// socket failed); the message names the ranks concerned.
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),
    /// An operating-system call failed.
    #[error("{what}: {message}")]
    Io {
        /// What we were doing.
        what: String,
        /// The OS error text.
        message: String,
    },
}

impl NetError {
    /// An [`NetError::Io`] from a std error, naming what we were doing.
    pub fn io(what: impl Into<String>, err: &std::io::Error) -> NetError {
        NetError::Io { what: what.into(), message: err.to_string() }
    }

    /// True for the errors that mean "a peer is gone or never came": the
    /// runtime maps those to its collectives statuses (timeout, proxy
    /// failure) rather than to an invalid-argument status.
    pub fn is_peer_failure(&self) -> bool {
        matches!(self, NetError::Timeout { .. } | NetError::PeerClosed { .. } | NetError::Bootstrap(_))
    }
}

/// Formats a duration the way the messages print it: whole seconds when
/// it is whole, else milliseconds.
pub(crate) fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} sec", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
