//! The collectives' and point-to-point transfers' variables: where the
//! ranks of a multi-process world meet (`NEURON_RT_ROOT_COMM_ID`), how
//! long their waits last (`NEURON_RT_CC_*_TIMEOUT`, this runtime's own
//! bounds), the network proxy threads (`NEURON_RT_RANKS_PER_NETWORK_PROXY`,
//! `NEURON_RT_ONE_THREAD_PER_CORE`) and the async send/recv switch and
//! port. `nrt-net` reads no
//! environment: the runtime hands it these values.

use super::parse::{ConfigError, parse_bool, parse_seconds, parse_u64_in};
use nrt_net::bootstrap::RootCommId;
use std::time::Duration;

/// Default of both collectives bounds (`NEURON_RT_CC_NET_TIMEOUT`,
/// `NEURON_RT_CC_BOOTSTRAP_TIMEOUT`): libnrt's execution timeout, so a
/// peer is given as long as a device.
pub const DEFAULT_CC_TIMEOUT: Duration = Duration::from_secs(600);

/// Default of `NEURON_RT_RANKS_PER_NETWORK_PROXY`: a proxy thread per rank.
pub const DEFAULT_RANKS_PER_PROXY: u32 = 1;
/// The most ranks one proxy thread may serve (a trn2.48xlarge's 64
/// logical cores at LNC 2, twice over).
pub const MAX_RANKS_PER_PROXY: u64 = 128;

/// Default of `NEURON_RT_CC_CHUNK_SIZE` (libnrt's, 0x200000 bytes).
pub const DEFAULT_CHUNK_BYTES: u64 = 0x20_0000;
/// The range `NEURON_RT_CC_CHUNK_SIZE` accepts (ours: 4 KiB, so a
/// message of half a chunk goes without staging, to 64 MiB).
pub const CHUNK_BYTES_RANGE: (u64, u64) = (4096, 1 << 26);

/// `NEURON_RT_ROOT_COMM_ID` as read at init.
///
/// libnrt stores the value at init and its collectives library refuses a
/// malformed one when a world bootstraps; frameworks export it to every
/// process whether or not that process runs collectives across processes
/// (NxD training sets `localhost:48620`). So a malformed value does not
/// fail init: it is kept with libnrt's message, logged as a warning at
/// init, and returned by the first bootstrap that needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RootComm {
    /// A well-formed address.
    Addr(RootCommId),
    /// A value the bootstrap cannot use, with the reason.
    Malformed {
        /// The value as given.
        value: String,
        /// libnrt's message (`Invalid NEURON_RT_ROOT_COMM_ID [...]: ...`).
        message: String,
    },
}

/// The collectives' settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcConfig {
    /// NEURON_RT_ROOT_COMM_ID (None: unset, every world stays in process).
    pub root_comm_id: Option<RootComm>,
    /// NEURON_RT_CC_NET_TIMEOUT: how long a rank waits for its peers (to
    /// arrive at an operation, to load, for a transport step).
    pub net_timeout: Duration,
    /// NEURON_RT_CC_BOOTSTRAP_TIMEOUT: how long the rendezvous at the root
    /// may take, and a send/recv communicator to connect.
    pub bootstrap_timeout: Duration,
    /// NEURON_RT_RANKS_PER_NETWORK_PROXY: how many of the process's ranks
    /// share one network proxy thread (libnrt 2.31; its default is not
    /// documented, ours is 1: a thread per rank).
    pub ranks_per_proxy: u32,
    /// NEURON_RT_ONE_THREAD_PER_CORE: pin each network proxy thread to a
    /// CPU of its own (libnrt 2.31).
    pub one_thread_per_core: bool,
    /// NEURON_RT_CC_CHUNK_SIZE: bytes of a ring pass's chunk of a group
    /// that spans processes (a network message is half of it; libnrt's
    /// ring chunk, default 2 MiB).
    pub chunk_bytes: u64,
    /// NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED.
    pub sendrecv_enabled: bool,
    /// NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT.
    pub sendrecv_port: Option<u16>,
}

impl Default for CcConfig {
    fn default() -> CcConfig {
        CcConfig {
            root_comm_id: None,
            net_timeout: DEFAULT_CC_TIMEOUT,
            bootstrap_timeout: DEFAULT_CC_TIMEOUT,
            ranks_per_proxy: DEFAULT_RANKS_PER_PROXY,
            one_thread_per_core: false,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            sendrecv_enabled: false,
            sendrecv_port: None,
        }
    }
}

impl CcConfig {
    /// Reads the variables through `get` (empty values already dropped);
    /// a malformed root address goes into `warnings`.
    pub(super) fn read(get: impl Fn(&str) -> Option<String>, warnings: &mut Vec<String>) -> Result<CcConfig, ConfigError> {
        let seconds = |var: &str| get(var).map_or(Ok(DEFAULT_CC_TIMEOUT), |v| parse_seconds(var, &v));
        let root_comm_id = get("NEURON_RT_ROOT_COMM_ID").map(|v| match v.parse::<RootCommId>() {
            Ok(a) => RootComm::Addr(a),
            Err(e) => {
                warnings.push(format!("{e}; collectives with ranks in other processes cannot bootstrap"));
                RootComm::Malformed { value: v, message: e.to_string() }
            }
        });
        let port_var = "NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT";
        let proxy_var = "NEURON_RT_RANKS_PER_NETWORK_PROXY";
        let pin_var = "NEURON_RT_ONE_THREAD_PER_CORE";
        let chunk_var = "NEURON_RT_CC_CHUNK_SIZE";
        Ok(CcConfig {
            root_comm_id,
            net_timeout: seconds("NEURON_RT_CC_NET_TIMEOUT")?,
            bootstrap_timeout: seconds("NEURON_RT_CC_BOOTSTRAP_TIMEOUT")?,
            ranks_per_proxy: get(proxy_var).map_or(Ok(DEFAULT_RANKS_PER_PROXY), |v| parse_u64_in(proxy_var, &v, 1, MAX_RANKS_PER_PROXY).map(|n| n as u32))?,
            one_thread_per_core: get(pin_var).map_or(Ok(false), |v| parse_bool(pin_var, &v))?,
            chunk_bytes: get(chunk_var).map_or(Ok(DEFAULT_CHUNK_BYTES), |v| parse_u64_in(chunk_var, &v, CHUNK_BYTES_RANGE.0, CHUNK_BYTES_RANGE.1))?,
            sendrecv_enabled: get("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED")
                .map_or(Ok(false), |v| parse_bool("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", &v))?,
            sendrecv_port: get(port_var).map(|v| parse_u64_in(port_var, &v, 1, 65535).map(|p| p as u16)).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> (Result<CcConfig, ConfigError>, Vec<String>) {
        let mut w = Vec::new();
        let r = CcConfig::read(|k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()), &mut w);
        (r, w)
    }

    #[test]
    fn bounds_default_and_parse_as_seconds() {
        let (c, _) = read(&[]);
        assert_eq!(c.unwrap(), CcConfig::default());
        let (c, _) = read(&[("NEURON_RT_CC_NET_TIMEOUT", "0.3"), ("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "20")]);
        let c = c.unwrap();
        assert_eq!((c.net_timeout, c.bootstrap_timeout), (Duration::from_millis(300), Duration::from_secs(20)));
        assert_eq!(read(&[("NEURON_RT_CC_NET_TIMEOUT", "0")]).0.unwrap_err().var, "NEURON_RT_CC_NET_TIMEOUT");
    }

    #[test]
    fn a_malformed_root_is_kept_with_libnrts_message() {
        let (c, w) = read(&[("NEURON_RT_ROOT_COMM_ID", "localhost:48620")]);
        match c.unwrap().root_comm_id {
            Some(RootComm::Malformed { value, message }) => {
                assert_eq!(value, "localhost:48620");
                assert!(message.starts_with("Invalid NEURON_RT_ROOT_COMM_ID [localhost:48620]"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(w[0].contains("cannot bootstrap"), "{w:?}");
        let (c, w) = read(&[("NEURON_RT_ROOT_COMM_ID", "10.0.0.1:62001")]);
        assert_eq!(c.unwrap().root_comm_id, Some(RootComm::Addr("10.0.0.1:62001".parse().unwrap())));
        assert!(w.is_empty());
    }

    #[test]
    fn proxy_threads_ranks_and_pinning() {
        let (c, _) = read(&[("NEURON_RT_RANKS_PER_NETWORK_PROXY", "4"), ("NEURON_RT_ONE_THREAD_PER_CORE", "true")]);
        let c = c.unwrap();
        assert_eq!((c.ranks_per_proxy, c.one_thread_per_core), (4, true));
        let (c, _) = read(&[("NEURON_RT_CC_CHUNK_SIZE", "65536")]);
        assert_eq!(c.unwrap().chunk_bytes, 65536);
        assert_eq!(read(&[("NEURON_RT_CC_CHUNK_SIZE", "64")]).0.unwrap_err().var, "NEURON_RT_CC_CHUNK_SIZE");
        for bad in ["0", "129", "all"] {
            let e = read(&[("NEURON_RT_RANKS_PER_NETWORK_PROXY", bad)]).0.unwrap_err();
            assert!(e.var == "NEURON_RT_RANKS_PER_NETWORK_PROXY" && e.accepted.contains("1 to 128"), "{bad}: {e}");
        }
        assert_eq!(read(&[("NEURON_RT_ONE_THREAD_PER_CORE", "maybe")]).0.unwrap_err().var, "NEURON_RT_ONE_THREAD_PER_CORE");
    }

    #[test]
    fn sendrecv_switch_and_port() {
        let (c, _) = read(&[("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "1"), ("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", "5000")]);
        let c = c.unwrap();
        assert!(c.sendrecv_enabled);
        assert_eq!(c.sendrecv_port, Some(5000));
        for bad in ["0", "70000", "port"] {
            let e = read(&[("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", bad)]).0.unwrap_err();
            assert!(e.var == "NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT" && e.accepted.contains("1 to 65535"), "{bad}: {e}");
        }
    }
}
