//! `NEURON_RT_ROOT_COMM_ID`: where rank 0 listens. libnrt accepts
//! `<ipv4>:<port>` or `[<ipv6>]:<port>` and rejects anything else with an
//! explicit message; so do we (a host name is not accepted: libnrt's
//! message names only the two address forms). The runtime reads the
//! variable (`nrt::config`) and parses its value with [`RootCommId`]'s
//! `FromStr`; this crate never reads the environment.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use crate::error::{NetError, NetResult};

/// The variable naming rank 0's address.
pub const ROOT_COMM_ID_VAR: &str = "NEURON_RT_ROOT_COMM_ID";

/// A parsed `NEURON_RT_ROOT_COMM_ID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootCommId {
    addr: SocketAddr,
}

impl RootCommId {
    /// The socket address rank 0 listens at.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl FromStr for RootCommId {
    type Err = NetError;

    fn from_str(s: &str) -> NetResult<RootCommId> {
        let bad = |reason: &str| NetError::InvalidRootCommId { value: s.to_string(), reason: reason.to_string() };
        let t = s.trim();
        let (host, port) = if let Some(rest) = t.strip_prefix('[') {
            let (h, p) = rest.split_once("]:").ok_or_else(|| bad("an IPv6 address needs the form [address]:port"))?;
            let ip: std::net::Ipv6Addr = h.parse().map_err(|_| bad("the part in brackets is not an IPv6 address"))?;
            (IpAddr::V6(ip), p)
        } else {
            let (h, p) = t.rsplit_once(':').ok_or_else(|| bad("no port"))?;
            if h.contains(':') {
                return Err(bad("an IPv6 address must be in brackets"));
            }
            let ip: std::net::Ipv4Addr =
                h.parse().map_err(|_| bad("the host is not an IPv4 address (host names are not accepted)"))?;
            (IpAddr::V4(ip), p)
        };
        let port: u16 = port.parse().map_err(|_| bad("the port is not a number from 1 to 65535"))?;
        if port == 0 {
            return Err(bad("port 0 is not a port rank 0 can be found at"));
        }
        if host.is_unspecified() {
            return Err(bad("0.0.0.0 / [::] is not an address the other ranks can connect to"));
        }
        Ok(RootCommId { addr: SocketAddr::new(host, port) })
    }
}

impl std::fmt::Display for RootCommId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_libnrt_forms() {
        let a: RootCommId = "10.0.1.2:46820".parse().unwrap();
        assert_eq!(a.addr(), "10.0.1.2:46820".parse().unwrap());
        let b: RootCommId = "[fd00::1]:62001".parse().unwrap();
        assert_eq!(b.addr().port(), 62001);
        assert_eq!(b.to_string(), "[fd00::1]:62001");
    }

    #[test]
    fn rejects_others_naming_the_expected_form() {
        for v in ["localhost:48620", "10.0.0.1", "fd00::1:5", "[fd00::1]", "1.2.3.4:0", "1.2.3.4:99999", "0.0.0.0:5", "", "[zz]:1"] {
            let e = v.parse::<RootCommId>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("Invalid NEURON_RT_ROOT_COMM_ID [{v}]"))
                    && e.contains("please use format: <ipv4>:<port> or [<ipv6>]:<port>"),
                "{v}: {e}"
            );
        }
    }
}
