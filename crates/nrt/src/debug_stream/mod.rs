//! The debug stream (`ndebug_stream.h`): device debug events per logical
//! core, consumed by at most one client per core through a pollable file
//! descriptor, or written to files by the runtime's own consumer.
//!
//! Where the events come from: a DEBUG_TENSOR_READ record (what NKI's
//! `device_print` becomes) makes the engine copy a tile into its debug
//! ring ([`ring`]); after each execution the runtime drains the model's
//! rings ([`drain`]) and hands the events of its logical core to
//! [`deliver`]:
//!
//! - a connected client's queue, up to `NEURON_RT_DEBUG_STREAM_BUFFER_SIZE`
//!   events (default 64 K); past that, events are dropped, counted per
//!   connection and logged once per run of drops;
//! - with no client and NEURON_RT_DEBUG_OUTPUT_DIR set, files ([`dump`]);
//! - otherwise nowhere: events exist only after a client connects.
//!
//! The descriptor a client polls is one end of a socket pair: readable
//! exactly while its queue holds an event (one byte is written when the
//! queue stops being empty and read back when it empties). Everything
//! else goes through [`read_one`] and [`disconnect`]. The state is the
//! process's (libnrt's streams are per process too); the runtime's init
//! sets it up ([`configure`]) and its close ends every connection
//! ([`close_all`]).
//!
//! A connection is named by its descriptor (the C API's handle) or by a
//! [`Connection`]: the descriptor and a serial number no other connection
//! of the process shares. A holder that may outlive its connection (a
//! Python object across `nrt.reset()`) uses the latter, so once the
//! runtime's close ended it, a later connection that reuses the
//! descriptor's number is never read or closed in its name.

mod dump;
pub mod event;
pub mod ring;

pub use dump::{TENSOR_FILE, component, path_of};
pub use event::DebugEvent;
pub use ring::DebugRing;

use crate::log::Module;
use crate::model::DeviceProgram;
use crate::status::{NrtError, NrtResult};
use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex, MutexGuard};

/// Default NEURON_RT_DEBUG_STREAM_BUFFER_SIZE: 64 K events per stream.
pub const DEFAULT_BUFFER_EVENTS: u32 = 64 * 1024;

/// What the runtime's configuration says about the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Events a connection's queue holds before it drops
    /// (NEURON_RT_DEBUG_STREAM_BUFFER_SIZE).
    pub buffer_events: u32,
    /// The runtime's own consumer's directory (NEURON_RT_DEBUG_OUTPUT_DIR).
    pub output_dir: Option<PathBuf>,
    /// Logical cores a client may connect to (`0..n`); `None` accepts any
    /// (a model host without a runtime, as the tests build).
    pub logical_cores: Option<u32>,
    /// (device index, physical core, process-local logical core) of every
    /// visible core ([`crate::Runtime::trace_core_map`]): how a program's
    /// core names its stream. A core not listed uses its model host's
    /// logical core index.
    pub cores: crate::trace::CoreMap,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { buffer_events: DEFAULT_BUFFER_EVENTS, output_dir: None, logical_cores: None, cores: Vec::new() }
    }
}

/// A connection as its holder knows it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connection {
    /// The descriptor the client polls.
    pub fd: i32,
    /// The connection's serial number, unique for the life of the process.
    pub serial: u64,
}

/// The connection a call means: its descriptor alone (the C API's
/// handle), or a [`Connection`], which must still be the one the
/// descriptor belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Whatever connection the descriptor belongs to.
    Fd(i32),
    /// That connection, if it has not ended.
    Connection(Connection),
}

impl From<i32> for Target {
    fn from(fd: i32) -> Target {
        Target::Fd(fd)
    }
}

impl From<Connection> for Target {
    fn from(c: Connection) -> Target {
        Target::Connection(c)
    }
}

/// One connection.
struct Client {
    lnc: u32,
    serial: u64,
    /// The end the client polls (its descriptor is the connection's handle).
    reader: UnixStream,
    /// The end the runtime marks readiness on.
    writer: UnixStream,
    queue: VecDeque<DebugEvent>,
    /// Events dropped because the queue was full.
    dropped: u64,
    /// Whether the last event delivered was dropped (a run of drops is
    /// logged once).
    dropping: bool,
}

#[derive(Default)]
struct Hub {
    settings: Settings,
    /// Connections by descriptor.
    clients: HashMap<i32, Client>,
    /// Events of each (core, prefix) the runtime's consumer has written.
    iterations: HashMap<(u32, String), u64>,
    /// Connections made so far (the next one's serial number).
    connections: u64,
}

static HUB: LazyLock<Mutex<Hub>> = LazyLock::new(|| Mutex::new(Hub::default()));

fn hub() -> MutexGuard<'static, Hub> {
    HUB.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes the runtime's settings (at init).
pub fn configure(settings: Settings) {
    let mut h = hub();
    h.settings = settings;
    h.iterations.clear();
}

/// Ends every connection (at the runtime's close), logging what each
/// dropped; their descriptors are closed.
pub fn close_all() {
    let clients: Vec<Client> = hub().clients.drain().map(|(_, c)| c).collect();
    for c in clients {
        report_close(&c);
    }
}

fn report_close(c: &Client) {
    if c.dropped > 0 {
        crate::log_warn!(Module::Nrt, "debug stream of logical core {} closed; {} events were dropped (the buffer was full)", c.lnc, c.dropped);
    }
}

/// `nrt_debug_client_connect`: a connection to logical core `lnc`'s
/// stream (its pollable descriptor is the C API's handle). NRT_INVALID
/// for a core outside the visible ones or one that has a client already.
pub fn connect(lnc: i32) -> NrtResult<Connection> {
    hub().connect(lnc)
}

/// Whether `c` is still open (the runtime's close has not ended it).
pub fn is_open(c: Connection) -> bool {
    hub().client(c.into()).is_ok()
}

/// `nrt_debug_client_read_one_event`: the oldest waiting event of the
/// connection, `None` when none waits (NRT_QUEUE_EMPTY in C).
pub fn read_one(c: impl Into<Target>) -> NrtResult<Option<DebugEvent>> {
    hub().read_one(c.into())
}

/// Events dropped so far on the connection because its queue was full.
pub fn dropped(c: impl Into<Target>) -> NrtResult<u64> {
    hub().client(c.into()).map(|c| c.dropped)
}

/// `nrt_debug_client_connect_close`: ends the connection (its descriptor
/// is closed; waiting events are discarded).
pub fn disconnect(c: impl Into<Target>) -> NrtResult<()> {
    let c = hub().disconnect(c.into())?;
    report_close(&c);
    crate::log_debug!(Module::Nrt, "debug stream of logical core {} closed", c.lnc);
    Ok(())
}

/// Hands the events of logical core `lnc` to its client, the runtime's
/// consumer, or nobody (see the module docs).
pub fn deliver(lnc: u32, events: Vec<DebugEvent>) {
    if events.is_empty() {
        return;
    }
    // Files are written after the lock is released.
    let files = hub().deliver(lnc, events);
    for (path, e) in files {
        if let Err(err) = dump::write(&path, &e) {
            crate::log_warn!(Module::Nrt, "debug print {:?} of logical core {lnc}: writing {} failed: {err}", e.prefix, path.display());
        }
    }
}

fn unknown(fd: i32) -> NrtError {
    NrtError::invalid(format!("stream_fd {fd} is not an open debug stream connection (see nrt_debug_client_connect)"))
}

fn ended(c: Connection) -> NrtError {
    NrtError::invalid(format!("debug stream connection {} (stream_fd {}) has ended: the runtime was closed; connect again", c.serial, c.fd))
}

impl Hub {
    /// The open connection `t` means.
    fn client(&mut self, t: Target) -> NrtResult<&mut Client> {
        match t {
            Target::Fd(fd) => self.clients.get_mut(&fd).ok_or_else(|| unknown(fd)),
            Target::Connection(c) => self.clients.get_mut(&c.fd).filter(|x| x.serial == c.serial).ok_or_else(|| ended(c)),
        }
    }

    fn disconnect(&mut self, t: Target) -> NrtResult<Client> {
        let fd = match t {
            Target::Fd(fd) => fd,
            Target::Connection(c) => c.fd,
        };
        self.client(t)?;
        self.clients.remove(&fd).ok_or_else(|| unknown(fd))
    }

    fn connect(&mut self, lnc: i32) -> NrtResult<Connection> {
        let visible = self.settings.logical_cores;
        let Some(lnc) = u32::try_from(lnc).ok().filter(|&l| visible.is_none_or(|n| l < n)) else {
            let range = visible.map_or_else(|| "a logical core index >= 0".to_string(), |n| format!("0..{}", n.saturating_sub(1)));
            return Err(NrtError::invalid(format!("logical_nc_idx {lnc} is not a visible logical core; expected {range}")));
        };
        if let Some(fd) = self.clients.iter().find(|(_, c)| c.lnc == lnc).map(|(fd, _)| *fd) {
            return Err(NrtError::invalid(format!(
                "logical core {lnc}'s debug stream already has a client (stream_fd {fd}); one connection per core: close it first"
            )));
        }
        let io = |e: std::io::Error| NrtError::failure(format!("creating the debug stream of logical core {lnc}: {e}"));
        let (reader, writer) = UnixStream::pair().map_err(io)?;
        reader.set_nonblocking(true).map_err(io)?;
        writer.set_nonblocking(true).map_err(io)?;
        let fd = reader.as_raw_fd();
        self.connections += 1;
        let serial = self.connections;
        self.clients.insert(fd, Client { lnc, serial, reader, writer, queue: VecDeque::new(), dropped: 0, dropping: false });
        crate::log_debug!(Module::Nrt, "debug stream of logical core {lnc} connected (stream_fd {fd})");
        Ok(Connection { fd, serial })
    }

    fn read_one(&mut self, t: impl Into<Target>) -> NrtResult<Option<DebugEvent>> {
        let c = self.client(t.into())?;
        let e = c.queue.pop_front();
        if c.queue.is_empty() {
            let mut buf = [0u8; 16];
            // Nonblocking: ends at WouldBlock (nothing left to read).
            while matches!(c.reader.read(&mut buf), Ok(n) if n > 0) {}
        }
        Ok(e)
    }

    /// Queues `events` for the core's client; with none, the files the
    /// runtime's consumer writes (empty when it is off).
    fn deliver(&mut self, lnc: u32, events: Vec<DebugEvent>) -> Vec<(PathBuf, DebugEvent)> {
        let cap = self.settings.buffer_events as usize;
        if let Some(c) = self.clients.values_mut().find(|c| c.lnc == lnc) {
            for e in events {
                if c.queue.len() >= cap {
                    c.dropped += 1;
                    if !c.dropping {
                        crate::log_warn!(
                            Module::Nrt,
                            "debug stream of logical core {lnc}: {cap} events wait unread; dropping events (raise NEURON_RT_DEBUG_STREAM_BUFFER_SIZE or read faster)"
                        );
                    }
                    c.dropping = true;
                    continue;
                }
                c.dropping = false;
                if c.queue.is_empty() {
                    match c.writer.write(&[1]) {
                        Ok(_) => {}
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => crate::log_warn!(Module::Nrt, "debug stream of logical core {lnc}: signalling its descriptor failed: {e}"),
                    }
                }
                c.queue.push_back(e);
            }
            return Vec::new();
        }
        let Some(dir) = self.settings.output_dir.clone() else { return Vec::new() };
        let mut files = Vec::with_capacity(events.len());
        for e in events {
            let n = self.iterations.entry((lnc, e.prefix.clone())).or_insert(0);
            files.push((path_of(&dir, &e, *n), e));
            *n += 1;
        }
        files
    }
}

/// After an execution of a model on its host's logical core `vnc`:
/// drains the debug rings of its program into the stream of the
/// process's logical core it runs on. Nothing to do (and nothing
/// allocated) for a program without prints.
pub fn drain(prog: &DeviceProgram, vnc: u32) {
    if prog.cores.iter().all(|c| c.debug_rings.is_empty()) {
        return;
    }
    let first = &prog.cores[0].core;
    let key = (first.device().info().device_index, first.core().0);
    let lnc = hub().settings.cores.iter().find(|&&(d, p, _)| (d, p) == key).map_or(vnc, |&(_, _, l)| l);
    let mut events = Vec::new();
    for c in &prog.cores {
        for r in &c.debug_rings {
            r.drain(c.core.device().as_ref(), lnc, &mut events);
        }
    }
    deliver(lnc, events);
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::dtype::Dtype;

    fn ev(prefix: &str, lnc: u32, v: u8) -> DebugEvent {
        DebugEvent { prefix: prefix.into(), logical_nc_id: lnc, pipe: 1, dtype: Dtype::Uint8, shape: vec![1, 1], data: vec![v] }
    }

    /// Whether the client's end polls readable: a byte waits (read, then
    /// put back).
    fn readable(h: &mut Hub, fd: i32) -> bool {
        let c = h.clients.get_mut(&fd).unwrap();
        let mut b = [0u8; 1];
        match c.reader.read(&mut b) {
            Ok(1) => {
                c.writer.write_all(&b).unwrap();
                true
            }
            _ => false,
        }
    }

    #[test]
    fn one_client_per_core_events_after_connect_readiness_follows_the_queue() {
        let mut h = Hub { settings: Settings { logical_cores: Some(2), ..Settings::default() }, ..Hub::default() };
        assert!(h.deliver(0, vec![ev("before", 0, 0)]).is_empty(), "no consumer: nothing written");
        assert_eq!(h.connect(2).unwrap_err().status, crate::status::NrtStatus::Invalid);
        assert_eq!(h.connect(-1).unwrap_err().status, crate::status::NrtStatus::Invalid);
        let fd = h.connect(0).unwrap().fd;
        let e = h.connect(0).unwrap_err();
        assert!(e.status == crate::status::NrtStatus::Invalid && e.message.contains("already has a client"), "{e}");
        assert_eq!(h.read_one(fd).unwrap(), None, "events before the connection are not kept");
        assert!(!readable(&mut h, fd));
        h.deliver(0, vec![ev("a", 0, 1), ev("b", 0, 2)]);
        h.deliver(1, vec![ev("other core", 1, 3)]);
        assert!(readable(&mut h, fd));
        assert_eq!(h.read_one(fd).unwrap().map(|e| e.data), Some(vec![1]));
        assert!(readable(&mut h, fd), "one event still waits");
        assert_eq!(h.read_one(fd).unwrap().map(|e| e.prefix), Some("b".into()));
        assert!(!readable(&mut h, fd));
        assert_eq!(h.read_one(fd).unwrap(), None);
        assert!(h.clients.remove(&fd).is_some());
        assert_eq!(h.read_one(fd).unwrap_err().status, crate::status::NrtStatus::Invalid);
        let again = h.connect(0).unwrap();
        assert!(h.clients.contains_key(&again.fd));
    }

    /// A holder whose connection ended (the runtime closed) never reads
    /// or closes a later connection that reuses its descriptor's number.
    #[test]
    fn an_ended_connection_never_acts_on_a_later_one_with_its_number() {
        let mut h = Hub::default();
        let old = h.connect(0).unwrap();
        // The runtime's close ends it; a new client gets a connection.
        h.clients.clear();
        let new = h.connect(0).unwrap();
        assert_ne!(new.serial, old.serial);
        h.deliver(0, vec![ev("p", 0, 5)]);
        // The old holder's view, should the number come back to it.
        let stale = Connection { fd: new.fd, ..old };
        let e = h.read_one(stale).unwrap_err();
        assert!(e.status == crate::status::NrtStatus::Invalid && e.message.contains("has ended"), "{e}");
        assert!(h.disconnect(stale.into()).is_err());
        assert!(h.client(stale.into()).is_err());
        // The new connection is untouched: its event waits, its descriptor is open.
        assert_eq!(h.read_one(new).unwrap().map(|e| e.data), Some(vec![5]));
        assert!(h.disconnect(new.into()).is_ok());
        assert!(h.read_one(new.fd).is_err(), "closed by its own holder");
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let mut h = Hub { settings: Settings { buffer_events: 4, ..Settings::default() }, ..Hub::default() };
        let fd = h.connect(7).unwrap().fd;
        h.deliver(7, (0..7).map(|i| ev("x", 7, i)).collect());
        assert_eq!(h.clients[&fd].dropped, 3);
        assert_eq!(h.read_one(fd).unwrap().map(|e| e.data), Some(vec![0]), "the oldest are kept");
        h.deliver(7, vec![ev("x", 7, 9)]);
        assert_eq!(h.clients[&fd].queue.len(), 4);
    }

    #[test]
    fn without_a_client_the_output_dir_gets_one_iteration_per_event_of_a_prefix() {
        let mut h = Hub { settings: Settings { output_dir: Some("/d".into()), ..Settings::default() }, ..Hub::default() };
        let files = h.deliver(3, vec![ev("p", 3, 0), ev("q", 3, 1), ev("p", 3, 2)]);
        let paths: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(paths, ["/d/p/core_3/0/tensor.npy", "/d/q/core_3/0/tensor.npy", "/d/p/core_3/1/tensor.npy"]);
        let fd = h.connect(3).unwrap().fd;
        assert!(h.deliver(3, vec![ev("p", 3, 0)]).is_empty(), "a connected client takes the events");
        assert_eq!(h.clients[&fd].queue.len(), 1);
    }
}
