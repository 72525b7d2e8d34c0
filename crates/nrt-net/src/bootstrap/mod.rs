//! The bootstrap rendezvous, as libnrt does it: rank 0 listens at
//! `NEURON_RT_ROOT_COMM_ID`, every other rank connects to it; each sends
//! its rank, the world size it expects, its transport endpoint and the op
//! signature of each of its replica groups. Rank 0 checks that they agree
//! and sends everyone the table of endpoints, or the reason it stops.
//!
//! This is a control exchange over `std::net` TCP, as NCCL's own
//! bootstrap is; the data path is the [`crate::transport`].
//!
//! Every wait is bounded by `NEURON_RT_CC_BOOTSTRAP_TIMEOUT` (see
//! [`crate::limits`]) and logs libnrt-style warnings while it lasts:
//! rank 0 "Timeout waiting for incoming connection (waited N sec) -
//! retrying", the others "Connect to ADDR failed - retrying" and
//! "Timeout waiting for RX from rank 0". Rank 0 gives up naming the ranks
//! that never arrived; a rank whose connection closes during the exchange
//! (it died) is named at once, and rank 0 tells every other rank why it
//! stops. Ranks other than 0 allow rank 0 a quarter of the limit more, so
//! that rank 0's verdict reaches them before they give up on their own.
//!
//! The exchange ends with a confirmation round (`Ready`, then `Go`), so
//! when it returns on one rank every rank had the table and was alive.

mod root_id;
mod wire;

pub use root_id::{ROOT_COMM_ID_VAR, RootCommId};

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use crate::error::{NetError, NetResult, secs};
use crate::limits::{Bound, WarnSink, Waiting};
use wire::{FailKind, Hello, Msg};

/// The op signature of one replica group: a digest the runtime computes
/// over the group's participants and ops (libnrt uses MD5). Ranks must
/// report the same groups with the same digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    /// The replica group's id.
    pub group: u32,
    /// The digest.
    pub digest: [u8; 16],
}

impl Signature {
    fn hex(&self) -> String {
        self.digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Which process a rank is, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
}

impl Member {
    /// This process.
    pub fn this_process() -> Member {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most buf.len() bytes.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        let host = if rc == 0 {
            let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).into_owned()
        } else {
            "unknown-host".into()
        };
        Member { host, pid: std::process::id() }
    }
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} pid {}", self.host, self.pid)
    }
}

/// What one rank brings to the rendezvous.
#[derive(Clone, Debug)]
pub struct Joining {
    /// This rank.
    pub rank: u32,
    /// The world size this rank expects.
    pub world_size: u32,
    /// Opaque bytes the others need to reach this rank (a transport
    /// listen handle).
    pub endpoint: Vec<u8>,
    /// The op signature of each replica group this rank runs.
    pub signatures: Vec<Signature>,
}

/// Where and how long.
#[derive(Clone)]
pub struct BootstrapConfig {
    /// Rank 0's address.
    pub root: RootCommId,
    /// The bound on the whole exchange.
    pub bound: Bound,
    /// Where the waiting warnings go.
    pub sink: WarnSink,
}

/// The result: every rank's endpoint, in rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// This rank.
    pub rank: u32,
    /// Every rank's endpoint bytes, indexed by rank.
    pub endpoints: Vec<Vec<u8>>,
    /// Every rank's process, indexed by rank.
    pub members: Vec<Member>,
}

impl World {
    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.endpoints.len() as u32
    }
}

/// Meets the other ranks; see the module documentation.
pub fn rendezvous(cfg: &BootstrapConfig, me: Joining) -> NetResult<World> {
    if me.world_size == 0 || me.rank >= me.world_size {
        return Err(NetError::Invalid(format!(
            "rank {} is outside a world of {} ranks",
            me.rank, me.world_size
        )));
    }
    let member = Member::this_process();
    let hello = Hello {
        rank: me.rank,
        world_size: me.world_size,
        member: member.clone(),
        endpoint: me.endpoint,
        signatures: me.signatures,
    };
    if me.world_size == 1 {
        return Ok(World { rank: 0, endpoints: vec![hello.endpoint], members: vec![member] });
    }
    if me.rank == 0 { root(cfg, hello) } else { leaf(cfg, hello) }
}

/// A rank's connection at rank 0.
struct Conn {
    stream: TcpStream,
    from: SocketAddr,
    buf: Vec<u8>,
    hello: Option<Hello>,
    ready: bool,
}

impl Conn {
    fn who(&self) -> String {
        match &self.hello {
            Some(h) => format!("rank {} ({})", h.rank, h.member),
            None => format!("a peer at {} that had not yet said its rank", self.from),
        }
    }

    /// Reads what has arrived; `Ok(false)` on end of stream.
    fn fill(&mut self) -> NetResult<bool> {
        let mut chunk = [0u8; 4096];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    if self.buf.len() > wire::MAX_FRAME + 4 {
                        return Err(NetError::Bootstrap(format!("{} sent an oversized message", self.who())));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(true),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) => return Ok(false),
                Err(e) => return Err(NetError::io(format!("reading from {}", self.who()), &e)),
            }
        }
    }
}

fn root(cfg: &BootstrapConfig, me: Hello) -> NetResult<World> {
    let addr = cfg.root.addr();
    let listener = TcpListener::bind(addr).map_err(|e| {
        NetError::Bootstrap(format!(
            "rank 0 cannot listen at {addr} ({ROOT_COMM_ID_VAR}): {e}; it must be an address of rank 0's host \
             and a free port"
        ))
    })?;
    listener.set_nonblocking(true).map_err(|e| NetError::io("setting the root listener non-blocking", &e))?;
    let n = me.world_size as usize;
    let mut conns: Vec<Conn> = Vec::with_capacity(n - 1);
    let mut wait = Waiting::start(cfg.bound, &cfg.sink);

    // Phase 1: every rank's hello.
    loop {
        loop {
            match listener.accept() {
                Ok((stream, from)) => {
                    stream.set_nonblocking(true).map_err(|e| NetError::io("accepting a rank", &e))?;
                    let _ = stream.set_nodelay(true);
                    conns.push(Conn { stream, from, buf: Vec::new(), hello: None, ready: false });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return fail_all(&mut conns, NetError::io(format!("accepting at {addr}"), &e)),
            }
        }
        if let Err(e) = poll_hellos(&mut conns, &me) {
            return fail_all(&mut conns, e);
        }
        let arrived = conns.iter().filter(|c| c.hello.is_some()).count();
        if arrived == n - 1 {
            break;
        }
        if wait.expired() {
            let e = NetError::Bootstrap(format!(
                "{} never arrived at {addr} within {} ({}); arrived: {}",
                ranks_phrase(&missing(&conns, n)),
                secs(cfg.bound.limit),
                cfg.bound.variable,
                list(&present(&conns))
            ));
            return fail_all(&mut conns, e);
        }
        wait.tick(|| {
            format!(
                "Timeout waiting for incoming connection at {addr}: {} of {n} ranks here, missing {}",
                arrived + 1,
                list(&missing(&conns, n))
            )
        });
        std::thread::sleep(Duration::from_millis(2));
    }

    // Agreement.
    let mut rows: Vec<Option<Hello>> = vec![None; n];
    rows[0] = Some(me.clone());
    for c in &conns {
        let h = c.hello.clone().expect("all arrived");
        let r = h.rank as usize;
        rows[r] = Some(h);
    }
    let hellos: Vec<Hello> = rows.into_iter().map(|r| r.expect("ranks checked unique and in range")).collect();
    if let Err(e) = agree(&hellos) {
        return fail_all(&mut conns, e);
    }
    let table = Msg::Table(hellos.iter().map(|h| (h.member.clone(), h.endpoint.clone())).collect()).encode();
    for i in 0..conns.len() {
        if let Err(e) = write_all(&mut conns[i], &table, wait.remaining()) {
            return fail_all(&mut conns, e);
        }
    }

    // Phase 2: every rank confirms.
    loop {
        for c in conns.iter_mut() {
            if c.ready {
                continue;
            }
            let alive = match c.fill() {
                Ok(a) => a,
                Err(e) => return fail_all_owned(conns, e),
            };
            match Msg::take(&mut c.buf) {
                Ok(Some(Msg::Ready)) => c.ready = true,
                Ok(Some(other)) => {
                    let e = NetError::Bootstrap(format!("{} sent {other:?} instead of Ready", c.who()));
                    return fail_all_owned(conns, e);
                }
                Ok(None) if !alive => {
                    let e = NetError::Bootstrap(format!(
                        "{} closed its connection during the exchange (it exited or failed)",
                        c.who()
                    ));
                    return fail_all_owned(conns, e);
                }
                Ok(None) => {}
                Err(e) => return fail_all_owned(conns, e),
            }
        }
        if conns.iter().all(|c| c.ready) {
            break;
        }
        if wait.expired() {
            let late: Vec<u32> = conns.iter().filter(|c| !c.ready).filter_map(|c| c.hello.as_ref().map(|h| h.rank)).collect();
            let e = NetError::Bootstrap(format!(
                "{} did not confirm the endpoint table within {} ({})",
                ranks_phrase(&late),
                secs(cfg.bound.limit),
                cfg.bound.variable
            ));
            return fail_all_owned(conns, e);
        }
        wait.tick(|| "Timeout waiting for RX (confirmations of the endpoint table)".into());
        std::thread::sleep(Duration::from_millis(2));
    }
    let go = Msg::Go.encode();
    for c in conns.iter_mut() {
        // A rank that dies now fails on the data path, within its bound.
        let _ = write_all(c, &go, Duration::from_secs(1));
    }
    Ok(World {
        rank: 0,
        endpoints: hellos.iter().map(|h| h.endpoint.clone()).collect(),
        members: hellos.into_iter().map(|h| h.member).collect(),
    })
}

/// Reads hellos; checks each rank number as it comes.
fn poll_hellos(conns: &mut [Conn], me: &Hello) -> NetResult<()> {
    let n = me.world_size;
    for i in 0..conns.len() {
        let alive = conns[i].fill()?;
        if conns[i].hello.is_none() {
            match Msg::take(&mut conns[i].buf)? {
                Some(Msg::Hello(h)) => {
                    if h.rank == 0 || h.rank >= n {
                        return Err(NetError::Mismatch(format!(
                            "rank {} ({}) is outside the world of {n} ranks of rank 0 ({}), or claims rank 0",
                            h.rank, h.member, me.member
                        )));
                    }
                    if let Some(other) = conns.iter().filter_map(|c| c.hello.as_ref()).find(|o| o.rank == h.rank) {
                        return Err(NetError::Mismatch(format!(
                            "two processes claim rank {}: {} and {}",
                            h.rank, other.member, h.member
                        )));
                    }
                    conns[i].hello = Some(h);
                }
                Some(other) => {
                    return Err(NetError::Bootstrap(format!("{} sent {other:?} instead of its hello", conns[i].who())));
                }
                None => {}
            }
        }
        if !alive {
            return Err(NetError::Bootstrap(format!(
                "{} closed its connection during the exchange (it exited or failed)",
                conns[i].who()
            )));
        }
    }
    Ok(())
}

/// World sizes and signatures must agree with rank 0's.
fn agree(h: &[Hello]) -> NetResult<()> {
    let root = &h[0];
    for o in &h[1..] {
        if o.world_size != root.world_size {
            return Err(NetError::Mismatch(format!(
                "world size mismatch: rank 0 ({}) has {} ranks but rank {} ({}) has {}",
                root.member, root.world_size, o.rank, o.member, o.world_size
            )));
        }
    }
    for o in &h[1..] {
        for s in &root.signatures {
            match o.signatures.iter().find(|t| t.group == s.group) {
                None => {
                    return Err(NetError::Mismatch(format!(
                        "mismatched collectives between the peers: rank 0 ({}) has replica group {} but rank {} ({}) does not",
                        root.member, s.group, o.rank, o.member
                    )));
                }
                Some(t) if t.digest != s.digest => {
                    return Err(NetError::Mismatch(format!(
                        "mismatched collectives between the peers: replica group {} has op signature {} on rank 0 ({}) \
                         but {} on rank {} ({})",
                        s.group,
                        s.hex(),
                        root.member,
                        t.hex(),
                        o.rank,
                        o.member
                    )));
                }
                Some(_) => {}
            }
        }
        if let Some(t) = o.signatures.iter().find(|t| !root.signatures.iter().any(|s| s.group == t.group)) {
            return Err(NetError::Mismatch(format!(
                "mismatched collectives between the peers: rank {} ({}) has replica group {} but rank 0 ({}) does not",
                o.rank, o.member, t.group, root.member
            )));
        }
    }
    Ok(())
}

fn present(conns: &[Conn]) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::once(0).chain(conns.iter().filter_map(|c| c.hello.as_ref().map(|h| h.rank))).collect();
    v.sort_unstable();
    v
}

fn missing(conns: &[Conn], n: usize) -> Vec<u32> {
    let p = present(conns);
    (0..n as u32).filter(|r| !p.contains(r)).collect()
}

fn list(v: &[u32]) -> String {
    v.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
}

fn ranks_phrase(v: &[u32]) -> String {
    match v {
        [one] => format!("rank {one}"),
        _ => format!("ranks {}", list(v)),
    }
}

fn write_all(c: &mut Conn, bytes: &[u8], limit: Duration) -> NetResult<()> {
    let _ = c.stream.set_nonblocking(false);
    let _ = c.stream.set_write_timeout(Some(limit.max(Duration::from_millis(100))));
    let r = c.stream.write_all(bytes);
    let _ = c.stream.set_nonblocking(true);
    r.map_err(|e| NetError::Bootstrap(format!("sending to {} failed ({e}): it exited or failed", c.who())))
}

/// Tells every connected rank why rank 0 stops, then returns the error.
fn fail_all<T>(conns: &mut [Conn], e: NetError) -> NetResult<T> {
    let kind = if matches!(e, NetError::Mismatch(_)) { FailKind::Mismatch } else { FailKind::Bootstrap };
    let text = match &e {
        NetError::Mismatch(m) | NetError::Bootstrap(m) => m.clone(),
        other => other.to_string(),
    };
    let msg = Msg::Fail(kind, text).encode();
    for c in conns.iter_mut() {
        let _ = write_all(c, &msg, Duration::from_millis(500));
    }
    Err(e)
}

fn fail_all_owned<T>(mut conns: Vec<Conn>, e: NetError) -> NetResult<T> {
    fail_all(&mut conns, e)
}

fn leaf(cfg: &BootstrapConfig, me: Hello) -> NetResult<World> {
    let addr = cfg.root.addr();
    let rank = me.rank;
    let grace = Bound::new(cfg.bound.limit + cfg.bound.limit / 4, cfg.bound.variable);
    let mut wait = Waiting::start(grace, &cfg.sink);
    let mut last_err = String::new();
    let mut stream = loop {
        if wait.elapsed() >= cfg.bound.limit {
            return Err(NetError::Bootstrap(format!(
                "rank {rank} could not reach rank 0 at {addr} ({ROOT_COMM_ID_VAR}) within {} ({}): {last_err}; \
                 is rank 0 running, and is the address right?",
                secs(cfg.bound.limit),
                cfg.bound.variable
            )));
        }
        match TcpStream::connect_timeout(&addr, wait.remaining().clamp(Duration::from_millis(10), Duration::from_secs(1))) {
            Ok(s) => break s,
            Err(e) => last_err = e.to_string(),
        }
        wait.tick(|| format!("Connect to {addr} failed ({last_err})"));
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = stream.set_nodelay(true);
    let send = |s: &mut TcpStream, m: &Msg| {
        s.write_all(&m.encode()).map_err(|e| {
            NetError::Bootstrap(format!("rank {rank}: sending to rank 0 at {addr} failed ({e}): rank 0 exited or failed"))
        })
    };
    send(&mut stream, &Msg::Hello(me.clone()))?;
    let mut buf = Vec::new();
    let table = match read_msg(&mut stream, &mut buf, &mut wait, rank, addr)? {
        Msg::Table(t) => t,
        other => return Err(unexpected(other, rank)),
    };
    if table.len() != me.world_size as usize {
        return Err(NetError::Bootstrap(format!(
            "rank 0 sent a table of {} ranks; this rank expects {}",
            table.len(),
            me.world_size
        )));
    }
    send(&mut stream, &Msg::Ready)?;
    match read_msg(&mut stream, &mut buf, &mut wait, rank, addr)? {
        Msg::Go => {}
        other => return Err(unexpected(other, rank)),
    }
    let (members, endpoints) = table.into_iter().unzip();
    Ok(World { rank, endpoints, members })
}

fn unexpected(m: Msg, rank: u32) -> NetError {
    match m {
        Msg::Fail(FailKind::Mismatch, text) => NetError::Mismatch(format!("rank 0 stopped the exchange: {text}")),
        Msg::Fail(FailKind::Bootstrap, text) => NetError::Bootstrap(format!("rank 0 stopped the exchange: {text}")),
        other => NetError::Bootstrap(format!("rank {rank} got {other:?} from rank 0 out of turn")),
    }
}

/// Reads one message from rank 0 within the wait's remaining time.
fn read_msg(s: &mut TcpStream, buf: &mut Vec<u8>, wait: &mut Waiting<'_>, rank: u32, addr: SocketAddr) -> NetResult<Msg> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(m) = Msg::take(buf)? {
            return Ok(m);
        }
        if wait.expired() {
            return Err(wait.timeout(format!("an answer from rank 0 at {addr} to rank {rank}")));
        }
        let _ = s.set_read_timeout(Some(wait.remaining().clamp(Duration::from_millis(1), Duration::from_millis(200))));
        match s.read(&mut chunk) {
            Ok(0) => {
                return Err(NetError::Bootstrap(format!(
                    "rank 0 at {addr} closed the connection during the exchange (it exited or failed)"
                )));
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::BrokenPipe) => {
                return Err(NetError::Bootstrap(format!(
                    "rank 0 at {addr} reset the connection during the exchange (it exited or failed)"
                )));
            }
            Err(e) => return Err(NetError::io(format!("rank {rank} reading from rank 0 at {addr}"), &e)),
        }
        wait.tick(|| format!("Timeout waiting for RX from rank 0 at {addr}"));
    }
}

#[cfg(test)]
mod tests;
