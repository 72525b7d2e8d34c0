//! Which libfabric provider carries the bytes to each peer: the
//! shared-memory provider (`shm`) between processes of one host, the
//! network (`efa` where the instance has it, else `tcp`) between hosts.
//! `FI_PROVIDER` set names the one provider for every peer (libfabric
//! itself then offers no other), as before.
//!
//! A peer is on this host when the bootstrap reports the same host name
//! and the same [`host_key`] (the kernel's boot id), so two machines
//! that share a name are not taken for one.

use super::FabricTransport;
use crate::error::NetResult;
use crate::limits::WarnSink;

/// The provider of peers on this host when `FI_PROVIDER` is unset.
pub const SAME_HOST: &str = "shm";
/// The providers tried, in order, for peers on other hosts when
/// `FI_PROVIDER` is unset.
pub const OTHER_HOSTS: [&str; 2] = ["efa", "tcp"];

/// The providers a process opens for its peers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Providers {
    /// `FI_PROVIDER`: the one provider for every peer.
    pub forced: Option<String>,
    /// `FI_TCP_IFACE`: the tcp provider's interface.
    pub iface: Option<String>,
}

/// The transports of [`Providers::open`].
pub struct PeerTransports {
    /// For peers on other hosts (and for every peer when `FI_PROVIDER` is
    /// set or this host's provider does not open).
    pub network: FabricTransport,
    /// For peers on this host, when not forced and `shm` opened.
    pub same_host: Option<FabricTransport>,
    /// Why there is no same-host transport although none was forced.
    pub same_host_missing: Option<String>,
}

impl Providers {
    /// libfabric's own variables, `FI_PROVIDER` and `FI_TCP_IFACE` (read
    /// by libfabric too: this names what it will offer).
    pub fn from_env() -> Providers {
        let set = |v: Result<String, std::env::VarError>| v.ok().filter(|v| !v.is_empty());
        Providers { forced: set(std::env::var("FI_PROVIDER")), iface: set(std::env::var("FI_TCP_IFACE")) }
    }

    /// Opens the network transport (the forced provider, else the first of
    /// [`OTHER_HOSTS`] that opens) and, when nothing is forced, the
    /// same-host one ([`SAME_HOST`]; its failure is reported in
    /// [`PeerTransports::same_host_missing`], not an error: every peer
    /// then goes over the network provider).
    pub fn open(&self, sink: WarnSink) -> NetResult<PeerTransports> {
        let iface = self.iface.as_deref();
        let network = match &self.forced {
            Some(p) => FabricTransport::open_provider(p, iface, sink.clone())?,
            None => {
                let mut last = None;
                let mut opened = None;
                for p in OTHER_HOSTS {
                    match FabricTransport::open_provider(p, iface, sink.clone()) {
                        Ok(t) => {
                            opened = Some(t);
                            break;
                        }
                        Err(e) => last = Some(e),
                    }
                }
                match opened {
                    Some(t) => t,
                    None => return Err(last.expect("a provider was tried")),
                }
            }
        };
        let (same_host, same_host_missing) = match &self.forced {
            Some(_) => (None, None),
            None => match FabricTransport::open_provider(SAME_HOST, None, sink) {
                Ok(t) => (Some(t), None),
                Err(e) => (None, Some(e.to_string())),
            },
        };
        Ok(PeerTransports { network, same_host, same_host_missing })
    }
}

/// This boot of this machine: the kernel's boot id
/// (`/proc/sys/kernel/random/boot_id`), 16 bytes; zeros where there is
/// none (then the host name alone tells hosts apart).
pub fn host_key() -> [u8; 16] {
    let mut key = [0u8; 16];
    let Ok(text) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") else { return key };
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    if hex.len() != 32 {
        return key;
    }
    for (k, pair) in key.iter_mut().zip(hex.chunks(2)) {
        let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
        *k = digit(pair[0]) << 4 | digit(pair[1]);
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_key_is_this_boot_and_stable() {
        let k = host_key();
        assert_eq!(k, host_key());
        if std::path::Path::new("/proc/sys/kernel/random/boot_id").exists() {
            assert_ne!(k, [0u8; 16]);
        }
    }

    #[test]
    fn a_forced_provider_opens_alone_and_shm_opens_beside_the_network() {
        if let Err(e) = super::super::available() {
            nrt_test_support::skip!("{e}");
        }
        let sink = crate::limits::stderr_sink();
        let forced = Providers { forced: Some("tcp".into()), iface: Some("lo".into()) }.open(sink.clone()).unwrap();
        assert!(forced.same_host.is_none() && forced.same_host_missing.is_none());
        assert!(forced.network.provider().contains("tcp"), "{}", forced.network.provider());
        let chosen = Providers { forced: None, iface: Some("lo".into()) }.open(sink).unwrap();
        assert!(chosen.network.provider().contains("tcp") || chosen.network.provider().contains("efa"), "{}", chosen.network.provider());
        match (&chosen.same_host, &chosen.same_host_missing) {
            (Some(t), None) => assert!(t.provider().contains("shm"), "{}", t.provider()),
            (None, Some(why)) => eprintln!("note: shm did not open here: {why}"),
            other => panic!("{:?}", other.1),
        }
    }
}
