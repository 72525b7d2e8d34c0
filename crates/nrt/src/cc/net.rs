//! The collectives world across processes: which global ranks
//! (`g_device_id`s) live in this process, the bootstrap that meets the
//! others at `NEURON_RT_ROOT_COMM_ID`, the libfabric transport and the
//! cached connections the proxy moves bytes over.
//!
//! Ranks register through the global communicator
//! (`nrt_build_global_comm` / `nrt_cc_global_comm_init`, or
//! [`super::Collectives::register_rank`]). When an operation names a rank
//! this process did not register and `NEURON_RT_ROOT_COMM_ID` is set, the
//! first local rank to get there bootstraps the world: every registered
//! local rank joins the rendezvous (one thread each), publishing one
//! transport listen handle per (source rank, connection) it may receive
//! from: a data and a credit connection per lane of each ring channel,
//! one channel per physical core of the process's logical cores (LNC 2:
//! two, so a NEFF's collectives on its second physical core run on
//! connections of their own).
//! A world that failed once (bootstrap, a dead peer, a mismatch) stays
//! failed until the runtime is re-initialised.
//!
//! The transport is chosen per peer ([`nrt_net::fabric::providers`]):
//! libfabric's shared-memory provider between processes of one host, the
//! network provider between hosts, one provider for all when
//! `FI_PROVIDER` names it. Each rank publishes, after its host key and
//! its channel count, one listen handle per (source rank, connection) for
//! each transport it opened;
//! both ends of a connection derive the same choice from the bootstrap's
//! table, so the sender connects to the listener the receiver accepts on.

use crate::log::{Level, Module};
use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::config::RootComm;
use nrt_net::bootstrap::{BootstrapConfig, Joining, Member, ROOT_COMM_ID_VAR, rendezvous};
use nrt_net::limits::{BOOTSTRAP_TIMEOUT_VAR, Bound, NET_TIMEOUT_VAR, WarnSink};
use nrt_net::{Handle, Listener, NetError, RecvComm, SendComm, Transport};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Lanes of one ring channel (the ring's two half-chunk lanes).
pub const LANES: usize = super::plan::RING_LANES;
/// Ring channels a rank may run at most: one per physical core of its
/// logical core (LNC 2), each a ring of its own over the same physical
/// core of every rank, on connections of its own (NCCL's channels, each
/// "a separate directed cycle on mutually exclusive links").
pub const MAX_CHANNELS: usize = 2;
/// Data connections between two ranks in each direction: one per lane of
/// each channel ([`data_conn`]); the credit connections follow
/// ([`credit_link`]).
pub const DATA_CONNS: usize = LANES * MAX_CHANNELS;

/// The connection index of lane `lane` of ring channel `channel` (the
/// physical core of the logical core whose collectives it carries).
pub fn data_conn(channel: usize, lane: usize) -> usize {
    channel * LANES + lane
}

/// The connection that carries the credits of data connection `data`:
/// from its receiver back to its sender, at `DATA_CONNS + ` its index.
pub fn credit_link(data: Link) -> Link {
    (data.1, data.0, DATA_CONNS + data.2)
}

/// The data connection whose credits `link` carries, when it is a credit
/// connection.
pub fn data_link(link: Link) -> Option<Link> {
    (link.2 >= DATA_CONNS).then(|| (link.1, link.0, link.2 - DATA_CONNS))
}

/// A connection: (source global rank, destination global rank,
/// connection index: [`data_conn`] of a channel's lane, or a credit
/// connection's).
pub type Link = (u32, u32, usize);

/// Connections a rank of a process running `channels` ring channels (its
/// LNC) listens on per source rank: the data connections of its
/// channels' lanes, then their credit connections.
fn conns_published(channels: usize) -> usize {
    2 * LANES * channels
}

/// Where connection `conn` sits among the `conns_published(channels)`
/// listen handles a rank publishes per source; `None` when that rank runs
/// fewer channels than `conn` needs.
fn handle_slot(conn: usize, channels: usize) -> Option<usize> {
    let per = LANES * channels;
    match conn.checked_sub(DATA_CONNS) {
        None => (conn < per).then_some(conn),
        Some(c) => (c < per).then_some(per + c),
    }
}

/// The connection of listen handle `slot` (the inverse of [`handle_slot`]).
fn slot_conn(slot: usize, channels: usize) -> usize {
    let per = LANES * channels;
    if slot < per { slot } else { DATA_CONNS + slot - per }
}

/// A connection's lane for messages: `lane 1`, or on the second physical
/// core's channel `lane 1 of physical core 1`.
#[derive(Clone, Copy, Debug)]
pub struct LaneName(pub usize);

impl std::fmt::Display for LaneName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let conn = self.0 % DATA_CONNS;
        match conn / LANES {
            0 => write!(f, "lane {}", conn % LANES),
            c => write!(f, "lane {} of physical core {c}", conn % LANES),
        }
    }
}

/// Index of the network transport in [`NetWorld`]'s transports (every
/// peer on another host; every peer when `FI_PROVIDER` names one).
const NETWORK: usize = 0;
/// Index of the same-host transport (libfabric `shm`), when opened.
const SAME_HOST: usize = 1;
/// An endpoint's header: the host key, how many transports' handle
/// tables follow, and how many ring channels (the process's LNC) each
/// table has connections for.
const ENDPOINT_HEADER: usize = 18;
/// Where the header says how many ring channels the tables cover.
const ENDPOINT_CHANNELS: usize = 17;

/// The bootstrapped world.
pub struct NetWorld {
    /// Ranks in the world.
    pub size: u32,
    /// Global ranks of this process -> their logical core.
    pub local: BTreeMap<u32, u32>,
    /// Every rank's process.
    pub members: Vec<Member>,
    /// [`NETWORK`], then [`SAME_HOST`] when this process opened it.
    transports: Vec<Arc<dyn Transport>>,
    endpoints: Vec<Vec<u8>>,
    listeners: Mutex<HashMap<Link, Box<dyn Listener>>>,
    sends: Mutex<HashMap<Link, Box<dyn SendComm>>>,
    recvs: Mutex<HashMap<Link, Box<dyn RecvComm>>>,
    failed: Mutex<Option<NrtError>>,
    /// Whether "the proxy stages messages" was logged.
    staged_logged: std::sync::atomic::AtomicBool,
    /// Data messages the proxies moved: staged through a host buffer, and
    /// sent from or received into registered device memory where it is
    /// (sends and receives each count).
    moved: [std::sync::atomic::AtomicU64; 2],
    /// Times a device step or a send waited for its receiver (a slot or a
    /// credit), and the largest proxy area registered (bytes).
    held: std::sync::atomic::AtomicU64,
    largest_area: std::sync::atomic::AtomicU64,
    /// Bytes of a ring pass's chunk across processes
    /// (`NEURON_RT_CC_CHUNK_SIZE`): a message is half of it.
    pub chunk_bytes: u64,
    /// Bounds each transport wait.
    pub net: Bound,
    /// Where the waits' warnings go.
    pub sink: WarnSink,
    /// The persistent proxy threads the loaded NEFFs' executions run on.
    pub proxies: super::proxy_threads::ProxyThreads,
}

impl std::fmt::Debug for NetWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetWorld").field("size", &self.size).field("local", &self.local).field("transports", &self.transports.iter().map(|t| t.name()).collect::<Vec<_>>()).finish()
    }
}

/// The runtime's net state: registered ranks and, once made, the world.
#[derive(Debug, Default)]
pub struct NetSlot {
    state: Mutex<SlotState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct SlotState {
    registered: BTreeMap<u32, u32>,
    world_size: Option<u32>,
    phase: Phase,
}

#[derive(Debug, Default)]
enum Phase {
    #[default]
    Idle,
    Running,
    Ready(Arc<NetWorld>),
    Failed(NrtError),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The runtime's sink for CCOM-style warnings.
pub fn runtime_sink() -> WarnSink {
    Arc::new(|m: &str| crate::log::write(Level::Warn, Module::Nrt, "ccom", format_args!("{m}")))
}

/// The transport waits' bound: the configuration's NEURON_RT_CC_NET_TIMEOUT.
pub fn net_bound(rt: &Runtime) -> Bound {
    Bound::new(rt.config().collectives.net_timeout, NET_TIMEOUT_VAR)
}

/// The runtime status of a network error.
pub fn status_of(e: &NetError) -> NrtStatus {
    match e {
        NetError::Timeout { .. } => NrtStatus::Timeout,
        NetError::Mismatch(_) | NetError::InvalidRootCommId { .. } | NetError::Invalid(_) => NrtStatus::Invalid,
        NetError::PeerClosed { .. } | NetError::Fabric { .. } => NrtStatus::NetworkProxyFailure,
        _ => NrtStatus::Failure,
    }
}

/// A runtime error from a network error, prefixed with what we did.
pub fn net_err(what: &str, e: &NetError) -> NrtError {
    NrtError::new(status_of(e), format!("{what}: {e}"))
}

impl NetSlot {
    /// Records that global rank `gid` of a world of `size` ranks runs on
    /// logical core `vnc` of this process (a rank on two cores, or a core
    /// with two ranks, is an error).
    pub fn register(&self, gid: u32, vnc: u32, size: u32) -> NrtResult<()> {
        let mut st = lock(&self.state);
        if let Some(&v) = st.registered.get(&gid)
            && v != vnc
        {
            return Err(NrtError::invalid(format!("g_device_id {gid} is already logical core {v} of this process; it cannot also be logical core {vnc}")));
        }
        if let Some((&g, _)) = st.registered.iter().find(|(g, v)| **v == vnc && **g != gid) {
            return Err(NrtError::invalid(format!("logical core {vnc} is already g_device_id {g}; it cannot also be g_device_id {gid}")));
        }
        // The two communicator contexts may name different sizes (the
        // C layer checks each); the world is the larger.
        st.world_size = Some(st.world_size.map_or(size, |s| s.max(size)));
        st.registered.insert(gid, vnc);
        Ok(())
    }

    /// Whether every rank of `group` is registered in this process.
    pub fn registered_all(&self, group: &[u32]) -> bool {
        let st = lock(&self.state);
        group.iter().all(|g| st.registered.contains_key(g))
    }

    /// The world a group of global ranks needs, or `None` when every rank
    /// of the group runs here (or nothing says where the others are: no
    /// registered world or no `NEURON_RT_ROOT_COMM_ID`; then it runs in
    /// process as before).
    pub fn world_for(&self, rt: &Runtime, group: &[u32]) -> NrtResult<Option<Arc<NetWorld>>> {
        let mut st = lock(&self.state);
        let Some(size) = st.world_size else { return Ok(None) };
        if group.iter().all(|g| st.registered.contains_key(g)) {
            return Ok(None);
        }
        if rt.config().collectives.root_comm_id.is_none() {
            return Ok(None);
        }
        if let Some(&g) = group.iter().find(|&&g| g >= size) {
            return Err(NrtError::invalid(format!("replica group {group:?} names rank {g}, outside the collectives world of {size} ranks")));
        }
        let bootstrap = Bound::new(rt.config().collectives.bootstrap_timeout, BOOTSTRAP_TIMEOUT_VAR);
        let deadline = Instant::now() + bootstrap.limit + bootstrap.limit / 2 + Duration::from_secs(1);
        loop {
            match &st.phase {
                Phase::Ready(w) => return Ok(Some(w.clone())),
                Phase::Failed(e) => return Err(e.clone()),
                Phase::Running => {
                    if Instant::now() >= deadline {
                        return Err(NrtError::new(NrtStatus::Timeout, format!("the collectives bootstrap did not finish within {:.1} sec ({BOOTSTRAP_TIMEOUT_VAR})", bootstrap.limit.as_secs_f64())));
                    }
                    st = self.changed.wait_timeout(st, Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
                }
                Phase::Idle => {
                    st.phase = Phase::Running;
                    let registered = st.registered.clone();
                    drop(st);
                    // Other callers wait for this outcome: a panic here is one.
                    let r = crate::worker::guarded("the collectives bootstrap", NrtStatus::Failure, || bootstrap_world(rt, size, &registered, bootstrap));
                    st = lock(&self.state);
                    st.phase = match r {
                        Ok(w) => Phase::Ready(Arc::new(w)),
                        Err(e) => Phase::Failed(e),
                    };
                    self.changed.notify_all();
                }
            }
        }
    }
}

fn bootstrap_world(rt: &Runtime, size: u32, registered: &BTreeMap<u32, u32>, bootstrap: Bound) -> NrtResult<NetWorld> {
    let root = match &rt.config().collectives.root_comm_id {
        Some(RootComm::Addr(a)) => *a,
        Some(RootComm::Malformed { message, .. }) => return Err(NrtError::invalid(format!("collectives bootstrap: {message}"))),
        None => return Err(NrtError::invalid(format!("collectives bootstrap: {ROOT_COMM_ID_VAR} is not set"))),
    };
    let root_text = root.to_string();
    let net = net_bound(rt);
    let sink = runtime_sink();
    let opened = nrt_net::fabric::Providers::from_env().open(sink.clone()).map_err(|e| net_err("ranks in other processes need the libfabric transport", &e))?;
    if let Some(why) = &opened.same_host_missing {
        crate::log::write(Level::Info, Module::Nrt, "cc_bootstrap", format_args!("no shared-memory transport for ranks on this host ({why}); they use {}", opened.network.provider()));
    }
    let mut transports: Vec<Arc<dyn Transport>> = vec![Arc::new(opened.network)];
    transports.extend(opened.same_host.map(|t| Arc::new(t) as Arc<dyn Transport>));
    let mut listeners: HashMap<(Link, usize), Box<dyn Listener>> = HashMap::new();
    let mut mine: Vec<(u32, Vec<u8>)> = Vec::new();
    let key = nrt_net::fabric::host_key();
    // One ring channel per physical core of a logical core: a collective
    // on the second physical core runs on connections of its own.
    let channels = (rt.topology().lnc() as usize).clamp(1, MAX_CHANNELS);
    let per_src = conns_published(channels);
    for &gid in registered.keys() {
        let mut endpoint = Vec::with_capacity(ENDPOINT_HEADER + transports.len() * size as usize * per_src * nrt_net::transport::HANDLE_BYTES);
        endpoint.extend_from_slice(&key);
        endpoint.push(transports.len() as u8);
        endpoint.push(channels as u8);
        for (kind, transport) in transports.iter().enumerate() {
            for src in 0..size {
                for slot in 0..per_src {
                    // A rank of this process never sends to us over the network.
                    if registered.contains_key(&src) {
                        endpoint.extend_from_slice(&[0u8; nrt_net::transport::HANDLE_BYTES]);
                        continue;
                    }
                    let (h, l) = transport.listen().map_err(|e| net_err(&format!("rank {gid}: listening for rank {src}"), &e))?;
                    endpoint.extend_from_slice(h.as_bytes());
                    listeners.insert(((src, gid, slot_conn(slot, channels)), kind), l);
                }
            }
        }
        mine.push((gid, endpoint));
    }
    let cfg = BootstrapConfig { root, bound: bootstrap, sink: sink.clone() };
    let names = transports.iter().map(|t| t.name()).collect::<Vec<_>>().join(" (other hosts), ") + if transports.len() > 1 { " (this host)" } else { "" };
    crate::log::write(Level::Info, Module::Nrt, "cc_bootstrap", format_args!("ranks {:?} of a world of {size} meet at {root_text} over {names}", registered.keys().collect::<Vec<_>>()));
    let results: Vec<(u32, Result<nrt_net::bootstrap::World, NetError>)> = std::thread::scope(|s| {
        let hs: Vec<_> = mine
            .into_iter()
            .map(|(gid, endpoint)| {
                let cfg = cfg.clone();
                (gid, s.spawn(move || rendezvous(&cfg, Joining { rank: gid, world_size: size, endpoint, signatures: Vec::new() })))
            })
            .collect();
        hs.into_iter().map(|(g, h)| (g, h.join().unwrap_or_else(|_| Err(NetError::Bootstrap("the rendezvous thread panicked".into()))))).collect()
    });
    let mut world = None;
    for (gid, r) in results {
        let w = r.map_err(|e| net_err(&format!("collectives bootstrap of rank {gid} at {root_text} ({ROOT_COMM_ID_VAR})"), &e))?;
        world.get_or_insert(w);
    }
    let world = world.ok_or_else(|| NrtError::invalid("no rank of this process is registered in the collectives world"))?;
    let me = Member::this_process();
    let local: Vec<u32> = (0..size).filter(|&g| world.members[g as usize] == me).collect();
    if local != registered.keys().copied().collect::<Vec<_>>() {
        return Err(NrtError::invalid(format!("the bootstrap placed ranks {local:?} in this process, but it registered {:?}", registered.keys().collect::<Vec<_>>())));
    }
    for (r, e) in world.endpoints.iter().enumerate() {
        let kinds = e.get(16).copied().unwrap_or(0) as usize;
        let theirs = e.get(ENDPOINT_CHANNELS).copied().unwrap_or(0) as usize;
        if kinds == 0 || !(1..=MAX_CHANNELS).contains(&theirs) || e.len() != ENDPOINT_HEADER + kinds * size as usize * conns_published(theirs) * nrt_net::transport::HANDLE_BYTES {
            return Err(NrtError::failure(format!(
                "{} published an endpoint of {} bytes that is not this release's (a host key, 1 or 2 tables of {size} x {} or {} listen handles: 1 or 2 ring channels)",
                world.members[r],
                e.len(),
                conns_published(1),
                conns_published(MAX_CHANNELS)
            )));
        }
    }
    let mut w = NetWorld {
        size,
        local: registered.clone(),
        members: world.members,
        transports,
        endpoints: world.endpoints,
        listeners: Mutex::new(HashMap::new()),
        sends: Mutex::new(HashMap::new()),
        recvs: Mutex::new(HashMap::new()),
        failed: Mutex::new(None),
        staged_logged: std::sync::atomic::AtomicBool::new(false),
        moved: Default::default(),
        held: Default::default(),
        largest_area: Default::default(),
        chunk_bytes: rt.config().collectives.chunk_bytes,
        net,
        sink,
        proxies: super::proxy_threads::ProxyThreads::new(rt.config().collectives.ranks_per_proxy, rt.config().collectives.one_thread_per_core)
            .with_injected_panic(crate::inject::after(rt.env(), crate::inject::PROXY_THREAD_PANIC)),
    };
    // Keep the listener each source will connect to; the others go.
    let chosen: HashMap<Link, Box<dyn Listener>> = listeners.into_iter().filter(|((link, kind), _)| w.route(link.0, link.1) == *kind).map(|((link, _), l)| (link, l)).collect();
    w.listeners = Mutex::new(chosen);
    Ok(w)
}

impl NetWorld {
    /// Who global rank `g` is, for messages: `rank 1 (host pid 42)`.
    pub fn who(&self, g: u32) -> String {
        match self.members.get(g as usize) {
            Some(m) => format!("rank {g} ({m})"),
            None => format!("rank {g}"),
        }
    }

    /// Which transport carries rank `src`'s bytes to rank `dst`: the
    /// same-host one when both are on one host (same host name and host
    /// key) and both opened it, else the network one. Both ends compute
    /// it from the same table.
    pub fn route(&self, src: u32, dst: u32) -> usize {
        let (Some(a), Some(b)) = (self.endpoints.get(src as usize), self.endpoints.get(dst as usize)) else { return NETWORK };
        let offers = |e: &[u8]| e.get(16).is_some_and(|&k| k as usize > SAME_HOST);
        let same_host = self.members[src as usize].host == self.members[dst as usize].host && a.get(..16) == b.get(..16);
        if same_host && offers(a) && offers(b) && self.transports.len() > SAME_HOST { SAME_HOST } else { NETWORK }
    }

    /// Registers the device ranges `areas` (address, bytes) with each of
    /// the world's transports, mapping the device's HBM into the process
    /// if it is not yet: the proxy then sends from and receives into them
    /// where they are. Empty (every message staged through host buffers,
    /// logged once per world) when the device cannot map its memory.
    pub fn register_areas(&self, device: &Arc<dyn nrt_hal::Device>, areas: &[(u64, u64)]) -> Vec<(usize, Arc<nrt_net::queue::Region>)> {
        for &(_, len) in areas {
            self.largest_area.fetch_max(len, std::sync::atomic::Ordering::Relaxed);
        }
        let mut out = Vec::with_capacity(areas.len() * self.transports.len());
        for (kind, t) in self.transports.iter().enumerate() {
            for &(addr, len) in areas {
                match nrt_net::queue::Region::in_device(&**t, device.clone(), nrt_hal::DeviceAddr(addr), len) {
                    Ok(r) => out.push((kind, Arc::new(r))),
                    Err(e) => {
                        if !self.staged_logged.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            crate::log::write(Level::Info, Module::Nrt, "cc_proxy", format_args!("the proxy stages messages through host buffers: {e}"));
                        }
                        return Vec::new();
                    }
                }
            }
        }
        out
    }

    /// Counts a data message the proxy sent or received: `in_place` when
    /// it went from or into registered device memory without a staging
    /// buffer.
    pub fn count_message(&self, in_place: bool) {
        self.moved[usize::from(in_place)].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Data messages moved so far: (staged through host buffers, in place
    /// in registered device memory); sends and receives each count.
    pub fn messages_moved(&self) -> (u64, u64) {
        let n = |i: usize| self.moved[i].load(std::sync::atomic::Ordering::Relaxed);
        (n(0), n(1))
    }

    /// Counts a device step or a send that waited for its receiver to
    /// free a slot (a credit).
    pub fn count_held(&self) {
        self.held.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Device steps and sends that waited for a credit so far, and the
    /// largest proxy area (bytes of one rank's outboxes, inboxes and
    /// words for one collective) registered.
    pub fn credit_stats(&self) -> (u64, u64) {
        (self.held.load(std::sync::atomic::Ordering::Relaxed), self.largest_area.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The name of the transport between `src` and `dst`, for messages.
    pub fn transport_name(&self, src: u32, dst: u32) -> String {
        self.transports[self.route(src, dst)].name()
    }

    /// Moves every transport's own work along ([`Transport::progress`]).
    pub fn progress(&self) -> Result<(), NetError> {
        for t in &self.transports {
            t.progress()?;
        }
        Ok(())
    }

    /// Fails when an earlier operation broke the world.
    pub fn check(&self) -> NrtResult<()> {
        match &*lock(&self.failed) {
            Some(e) => Err(NrtError::new(e.status, format!("the collectives world failed in an earlier operation ({}); re-initialize the runtime (nrt_close, nrt_init) to run collectives across processes again", e.message))),
            None => Ok(()),
        }
    }

    /// Marks the world broken (its connections may hold stray messages).
    pub fn poison(&self, e: &NrtError) {
        lock(&self.failed).get_or_insert_with(|| e.clone());
        lock(&self.sends).clear();
        lock(&self.recvs).clear();
    }

    /// The sending comm of `link`, connecting on first use.
    pub fn take_send(&self, link: Link) -> NrtResult<Box<dyn SendComm>> {
        if let Some(c) = lock(&self.sends).remove(&link) {
            return Ok(c);
        }
        let (src, dst, conn) = link;
        let kind = self.route(src, dst);
        let endpoint = self.endpoints.get(dst as usize).map_or(&[][..], |e| e.as_slice());
        let theirs = endpoint.get(ENDPOINT_CHANNELS).copied().unwrap_or(0) as usize;
        let Some(slot) = handle_slot(conn, theirs) else {
            return Err(NrtError::invalid(format!(
                "rank {src} sends on {} to {}, which runs {theirs} ring channel(s) (its logical cores have {theirs} physical core(s)): every process of a collectives world needs the same NEURON_LOGICAL_NC_CONFIG",
                LaneName(conn),
                self.who(dst)
            )));
        };
        let per_src = conns_published(theirs);
        let table = (self.size as usize) * per_src * nrt_net::transport::HANDLE_BYTES;
        let at = ENDPOINT_HEADER + kind * table + ((src as usize) * per_src + slot) * nrt_net::transport::HANDLE_BYTES;
        let bytes = endpoint.get(at..at + nrt_net::transport::HANDLE_BYTES).ok_or_else(|| NrtError::failure(format!("{} published no endpoint for rank {src} {}", self.who(dst), LaneName(conn))))?;
        let h = Handle::from_bytes(bytes).map_err(|e| net_err("endpoint handle", &e))?;
        let t = &self.transports[kind];
        t.connect(&h).map_err(|e| net_err(&format!("rank {src} connecting to {} over {}", self.who(dst), t.name()), &e))
    }

    /// The receiving comm of `link`, accepting (at most the net bound) on
    /// first use.
    pub fn take_recv(&self, link: Link) -> NrtResult<Box<dyn RecvComm>> {
        if let Some(c) = lock(&self.recvs).remove(&link) {
            return Ok(c);
        }
        let Some(mut l) = lock(&self.listeners).remove(&link) else {
            return Err(NrtError::failure(format!("no listener of rank {} for {} {}", link.1, self.who(link.0), LaneName(link.2))));
        };
        let r = l.accept(self.net).map_err(|e| net_err(&format!("rank {} waiting for {} to connect ({})", link.1, self.who(link.0), LaneName(link.2)), &e));
        if r.is_err() {
            lock(&self.listeners).insert(link, l);
        }
        r
    }

    /// Returns comms for the next operation.
    pub fn give_back(&self, sends: Vec<(Link, Box<dyn SendComm>)>, recvs: Vec<(Link, Box<dyn RecvComm>)>) {
        if lock(&self.failed).is_some() {
            return;
        }
        lock(&self.sends).extend(sends);
        lock(&self.recvs).extend(recvs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_channel_has_its_own_connections_and_every_one_a_listen_handle() {
        let mut seen = std::collections::BTreeSet::new();
        for channel in 0..MAX_CHANNELS {
            for lane in 0..LANES {
                let data = (3, 5, data_conn(channel, lane));
                let credit = credit_link(data);
                assert_eq!(data_link(credit), Some(data));
                assert_eq!(data_link(data), None);
                assert!(seen.insert(data.2) && seen.insert(credit.2), "channel {channel} lane {lane} shares a connection");
            }
        }
        for channels in 1..=MAX_CHANNELS {
            let slots: Vec<usize> = (0..conns_published(channels)).map(|s| slot_conn(s, channels)).collect();
            for (s, &conn) in slots.iter().enumerate() {
                assert_eq!(handle_slot(conn, channels), Some(s));
            }
            // Exactly the connections of the first `channels` channels.
            let want: Vec<usize> = seen.iter().copied().filter(|&c| (c % DATA_CONNS) / LANES < channels).collect();
            let mut got = slots.clone();
            got.sort_unstable();
            assert_eq!(got, want);
        }
        assert_eq!(handle_slot(data_conn(1, 0), 1), None, "a process at LNC 1 has no second channel");
        assert_eq!(LaneName(data_conn(0, 1)).to_string(), "lane 1");
        assert_eq!(LaneName(credit_link((0, 1, data_conn(1, 1))).2).to_string(), "lane 1 of physical core 1");
    }
}
