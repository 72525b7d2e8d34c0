//! The libfabric transport: one reliable-datagram endpoint (`FI_EP_RDM`)
//! per transport, tagged messages (`FI_TAGGED`), an address vector of the
//! peers and one completion queue, from the provider `FI_PROVIDER` names
//! (default `tcp`; `efa` on AWS).
//!
//! Connections are a naming scheme over the one endpoint, as NCCL's OFI
//! plugin does it. Every tag a process receives is unique to it:
//!
//! * `listen` picks a listener id and posts a receive for hellos
//!   (`HELLO | id`); the handle carries the endpoint's name and the id.
//! * `connect` inserts the listener's endpoint into the address vector,
//!   sends a hello (our name and a reply key of ours) and posts a receive
//!   for the ack (`ACK | reply key`). Sends posted before the ack are held
//!   and go out, in order, once it comes.
//! * `accept` takes a hello, inserts the sender, picks a receive key and
//!   sends it in the ack.
//! * Data of a connection is tagged `key << 32 | sequence`: the n-th send
//!   matches the n-th receive whatever the order of posting.
//!
//! All calls into libfabric run under one lock per transport; any waiting
//! call drives the provider's progress (manual progress, as tcp needs).

mod ffi;
mod lib;
pub mod providers;

pub use lib::{LIBRARY, available};
pub use providers::{PeerTransports, Providers, host_key};

use std::cell::UnsafeCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::{CStr, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ffi::*;
use lib::Lib;

use crate::error::{NetError, NetResult};
use crate::limits::{Bound, WarnSink, Waiting, stderr_sink};
use crate::slots::Slots;
use crate::transport::{HANDLE_BYTES, Handle, Listener, MAX_REQUESTS, RecvComm, Registration, Request, SendComm, Transport};

/// The provider used when `FI_PROVIDER` is unset.
pub const DEFAULT_PROVIDER: &str = "tcp";

/// How long dropping a comm (or cancelling a request) waits for the
/// provider to give its buffers back before it closes the whole endpoint
/// to make sure it does.
pub const CANCEL_DRAIN: Duration = Duration::from_secs(2);

const MAGIC: &[u8; 8] = b"NRTOFI01";
const MAX_NAME: usize = HANDLE_BYTES - 14;
const HELLO_BYTES: usize = 6 + MAX_NAME;
const KIND_HELLO: u64 = 1 << 62;
const KIND_ACK: u64 = 2 << 62;
const KEY_LIMIT: u32 = 1 << 30;

static NEXT_TRANSPORT: AtomicU64 = AtomicU64::new(1 << 32);

/// A libfabric endpoint and everything opened for it.
#[derive(Clone)]
pub struct FabricTransport {
    ep: Arc<Endpoint>,
}

struct Endpoint {
    lib: &'static Lib,
    id: u64,
    provider: String,
    name: Vec<u8>,
    mr_local: bool,
    max_msg: usize,
    sink: WarnSink,
    /// Registration keys: providers without `FI_MR_PROV_KEY` (tcp) want
    /// a distinct key per registration from the caller.
    next_mr_key: AtomicU64,
    state: Mutex<EpState>,
}

struct EpState {
    info: *mut fi_info,
    fabric: *mut fid_fabric,
    domain: *mut fid_domain,
    av: *mut fid_av,
    cq: *mut fid_cq,
    ep: *mut fid_ep,
    /// Why the endpoint was closed early, if it was.
    dead: Option<String>,
    addrs: HashMap<Vec<u8>, fi_addr_t>,
    next_key: u32,
    next_listen: u32,
    /// The sending side of each connection, by its reply key: kept here
    /// so that any progress on the endpoint can post sends that waited
    /// for the ack (or for room in the provider).
    outgoing: HashMap<u32, Box<Outgoing>>,
    /// Sends waiting in `outgoing`, so progress skips the scan when none.
    held_total: usize,
}

/// A connection's sending side: its control messages and the sends not
/// yet handed to the provider (their ops belong to the comm).
struct Outgoing {
    dest: fi_addr_t,
    recv_key: Option<u32>,
    hello: OpCell,
    hello_buf: [u8; HELLO_BYTES],
    ack: OpCell,
    ack_buf: [u8; 8],
    held: VecDeque<*mut Op>,
    mrs: Vec<*mut fid_mr>,
    /// The hello still to post (the provider may refuse it until its
    /// connection is set up): (length, descriptor, tag).
    hello_pending: Option<(usize, *mut c_void, u64)>,
}

// SAFETY: the raw objects are only used under the Mutex that owns them.
unsafe impl Send for EpState {}

/// One operation's state; its first field is the context libfabric gets
/// back in the completion, so a completion finds its operation.
#[repr(C)]
struct Op {
    ctx: fi_context2,
    state: OpState,
    seq: u32,
    mr: *mut fid_mr,
    /// For a send, its length (send completions carry none).
    sent_len: Option<usize>,
}

enum OpState {
    Idle,
    Held { ptr: usize, len: usize, desc: *mut c_void },
    Posted,
    Done(usize),
    Failed(NetError),
}

type OpCell = UnsafeCell<Op>;

/// The outcome of a finished op (its state back to idle), or `None`
/// with the op left as it was while it is still in flight.
///
/// # Safety
/// `op` is one of the caller's ops and the endpoint lock is held, so the
/// provider's progress does not touch it meanwhile.
unsafe fn take_outcome(op: *mut Op) -> Option<NetResult<usize>> {
    // SAFETY: per the caller.
    match unsafe { std::mem::replace(&mut (*op).state, OpState::Idle) } {
        OpState::Done(n) => Some(Ok(n)),
        OpState::Failed(e) => Some(Err(e)),
        s => {
            // SAFETY: per the caller.
            unsafe { (*op).state = s };
            None
        }
    }
}

fn new_op() -> OpCell {
    UnsafeCell::new(Op {
        ctx: fi_context2 { internal: [std::ptr::null_mut(); 8] },
        state: OpState::Idle,
        seq: 0,
        mr: std::ptr::null_mut(),
        sent_len: None,
    })
}

fn new_ops() -> Box<[OpCell]> {
    (0..MAX_REQUESTS).map(|_| new_op()).collect()
}

impl FabricTransport {
    /// Opens the provider named by `FI_PROVIDER` (default `tcp`) on the
    /// interface `FI_TCP_IFACE` names (tcp only; else libfabric's
    /// choice); waits warn on stderr.
    pub fn open() -> NetResult<FabricTransport> {
        let provider = std::env::var("FI_PROVIDER").ok().filter(|p| !p.is_empty());
        let iface = std::env::var("FI_TCP_IFACE").ok().filter(|p| !p.is_empty());
        FabricTransport::open_provider(provider.as_deref().unwrap_or(DEFAULT_PROVIDER), iface.as_deref(), stderr_sink())
    }

    /// Opens `provider` (a libfabric provider name, e.g. `tcp`, `efa`,
    /// `shm`); for tcp, on interface `iface` when given (e.g. `lo`);
    /// waits warn through `sink`.
    pub fn open_provider(provider: &str, iface: Option<&str>, sink: WarnSink) -> NetResult<FabricTransport> {
        let lib = lib::lib()?;
        let cprov = std::ffi::CString::new(provider)
            .map_err(|_| NetError::Invalid(format!("provider name {provider:?} contains NUL")))?;
        // The tcp provider names its domains after interfaces.
        let iface = iface.filter(|_| provider == "tcp" || provider.starts_with("tcp;"));
        let ciface = iface
            .map(|i| std::ffi::CString::new(i).map_err(|_| NetError::Invalid(format!("interface name {i:?} contains NUL"))))
            .transpose()?;
        // SAFETY: the sequence of libfabric calls of fi_getinfo(3),
        // fi_fabric(3), fi_domain(3), fi_av(3), fi_cq(3), fi_endpoint(3),
        // with objects checked non-null before use; on error everything
        // opened so far is closed by EpState's Drop.
        unsafe {
            let hints = (lib.dupinfo)(std::ptr::null());
            if hints.is_null() {
                return Err(lib.err("fi_allocinfo", -(libc::ENOMEM as i64)));
            }
            let h = &mut *hints;
            h.caps = FI_TAGGED | FI_SEND | FI_RECV;
            h.mode = FI_CONTEXT | FI_CONTEXT2;
            (*h.ep_attr).type_ = FI_EP_RDM;
            (*h.domain_attr).mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
            (*h.fabric_attr).prov_name = libc::strdup(cprov.as_ptr());
            if let Some(i) = &ciface {
                (*h.domain_attr).name = libc::strdup(i.as_ptr());
            }
            let mut info = std::ptr::null_mut();
            let rc = (lib.getinfo)(FI_VERSION_1_17, std::ptr::null(), std::ptr::null(), 0, hints, &mut info);
            (lib.freeinfo)(hints);
            if rc != 0 || info.is_null() {
                return Err(NetError::Fabric {
                    call: format!(
                        "fi_getinfo(FI_VERSION(1,17), provider {provider}{}, FI_EP_RDM, FI_TAGGED)",
                        iface.map(|i| format!(", interface {i}")).unwrap_or_default()
                    ),
                    code: rc as i64,
                    message: format!(
                        "{}; is the provider in this libfabric build (fi_info -l), and FI_PROVIDER right?",
                        lib.error_text(rc as i64)
                    ),
                });
            }
            // The layered tcp;ofi_rxm ignores the domain hint; take the
            // entry of that interface ourselves, or say which there are.
            let head = info;
            let info = match pick_interface(head, iface) {
                Ok(i) => i,
                Err(found) => {
                    (lib.freeinfo)(head);
                    return Err(NetError::Fabric {
                        call: format!("fi_getinfo(FI_VERSION(1,17), provider {provider}, interface {})", iface.unwrap_or("")),
                        code: -(libc::ENODATA as i64),
                        message: format!("the provider offers no endpoint on that interface (FI_TCP_IFACE); it has: {found}"),
                    });
                }
            };
            let mut st = EpState {
                info: head,
                fabric: std::ptr::null_mut(),
                domain: std::ptr::null_mut(),
                av: std::ptr::null_mut(),
                cq: std::ptr::null_mut(),
                ep: std::ptr::null_mut(),
                dead: None,
                addrs: HashMap::new(),
                next_key: 1,
                next_listen: 1,
                outgoing: HashMap::new(),
                held_total: 0,
            };
            let i = &*info;
            let prov_name = CStr::from_ptr((*i.fabric_attr).prov_name).to_string_lossy().into_owned();
            let check = |call: &str, rc: i32| if rc != 0 { Err(lib.err(format!("{call} ({prov_name})"), rc as i64)) } else { Ok(()) };
            check("fi_fabric", (lib.fabric)(i.fabric_attr, &mut st.fabric, std::ptr::null_mut()))?;
            let fops = &*(*st.fabric).ops;
            check("fi_domain", fops.domain.expect("fi_domain")(st.fabric, info, &mut st.domain, std::ptr::null_mut()))?;
            let dops = &*(*st.domain).ops;
            let mut av_attr = fi_av_attr {
                type_: FI_AV_TABLE,
                rx_ctx_bits: 0,
                count: 64,
                ep_per_node: 0,
                name: std::ptr::null(),
                map_addr: std::ptr::null_mut(),
                flags: 0,
            };
            check("fi_av_open", dops.av_open.expect("fi_av_open")(st.domain, &mut av_attr, &mut st.av, std::ptr::null_mut()))?;
            let mut cq_attr = fi_cq_attr {
                size: 0,
                flags: 0,
                format: FI_CQ_FORMAT_TAGGED,
                wait_obj: FI_WAIT_NONE,
                signaling_vector: 0,
                wait_cond: 0,
                wait_set: std::ptr::null_mut(),
            };
            check("fi_cq_open", dops.cq_open.expect("fi_cq_open")(st.domain, &mut cq_attr, &mut st.cq, std::ptr::null_mut()))?;
            check("fi_endpoint", dops.endpoint.expect("fi_endpoint")(st.domain, info, &mut st.ep, std::ptr::null_mut()))?;
            let eops = &*(*st.ep).fid.ops;
            let bind = eops.bind.expect("fi_ep_bind");
            check("fi_ep_bind(av)", bind(&mut (*st.ep).fid, &mut (*st.av).fid, 0))?;
            check("fi_ep_bind(cq)", bind(&mut (*st.ep).fid, &mut (*st.cq).fid, FI_TRANSMIT | FI_RECV))?;
            check("fi_enable", eops.control.expect("fi_control")(&mut (*st.ep).fid, FI_ENABLE, std::ptr::null_mut()))?;
            let mut name = vec![0u8; MAX_NAME];
            let mut len = name.len();
            let getname = (*(*st.ep).cm).getname.expect("fi_getname");
            check("fi_getname", getname(&mut (*st.ep).fid, name.as_mut_ptr().cast(), &mut len))?;
            name.truncate(len);
            let mr_local = (*i.domain_attr).mr_mode & FI_MR_LOCAL != 0 || i.mode & (1 << 55) != 0;
            let max_msg = (*i.ep_attr).max_msg_size;
            Ok(FabricTransport {
                ep: Arc::new(Endpoint {
                    lib,
                    id: NEXT_TRANSPORT.fetch_add(1, Ordering::Relaxed),
                    provider: prov_name,
                    name,
                    mr_local,
                    max_msg,
                    sink,
                    next_mr_key: AtomicU64::new(1),
                    state: Mutex::new(st),
                }),
            })
        }
    }

    /// The provider libfabric chose (e.g. `tcp;ofi_rxm`).
    pub fn provider(&self) -> &str {
        &self.ep.provider
    }

    /// This endpoint's address, printable.
    pub fn address(&self) -> String {
        fmt_name(&self.ep.name)
    }
}

impl Drop for EpState {
    fn drop(&mut self) {
        // SAFETY: each object is closed once, children before parents.
        unsafe {
            close_ep(self);
            for f in [
                self.cq as *mut fid,
                self.av as *mut fid,
                self.domain as *mut fid,
                self.fabric as *mut fid,
            ] {
                fi_close(f);
            }
            if !self.info.is_null()
                && let Ok(lib) = lib::lib()
            {
                (lib.freeinfo)(self.info);
            }
        }
    }
}

/// The entry of `list` whose domain is `iface` (the first entry when no
/// interface is asked for); else the domain names there are.
unsafe fn pick_interface(list: *mut fi_info, iface: Option<&str>) -> Result<*mut fi_info, String> {
    let Some(want) = iface else { return Ok(list) };
    let mut names: Vec<String> = Vec::new();
    let mut p = list;
    // SAFETY: a list from fi_getinfo, walked through `next`.
    unsafe {
        while !p.is_null() {
            let d = (*p).domain_attr;
            if !d.is_null() && !(*d).name.is_null() {
                let name = CStr::from_ptr((*d).name).to_string_lossy();
                if name == want {
                    return Ok(p);
                }
                if !names.iter().any(|n| *n == name) {
                    names.push(name.into_owned());
                }
            }
            p = (*p).next;
        }
    }
    Err(names.join(", "))
}

/// `fi_close` on a fid, ignoring null.
unsafe fn fi_close(f: *mut fid) -> i32 {
    if f.is_null() {
        return 0;
    }
    // SAFETY: a live fid from libfabric.
    unsafe { (*(*f).ops).close.expect("fi_close")(f) }
}

unsafe fn close_ep(st: &mut EpState) {
    if !st.ep.is_null() {
        // SAFETY: live endpoint, closed once.
        unsafe { fi_close(st.ep as *mut fid) };
        st.ep = std::ptr::null_mut();
    }
}

impl Endpoint {
    fn lock(&self) -> MutexGuard<'_, EpState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn dead_error(&self, st: &EpState, what: &str) -> Option<NetError> {
        st.dead.as_ref().map(|why| NetError::Fabric {
            call: what.to_string(),
            code: -(libc::EPIPE as i64),
            message: format!("the {} endpoint was closed: {why}", self.provider),
        })
    }

    /// Reads every completion available and records it in its operation.
    fn progress(&self, st: &mut EpState) -> NetResult<()> {
        let lib = self.lib;
        // SAFETY: the CQ is live; entries are plain data; each op_context
        // is an Op posted by this crate that stays allocated while posted
        // (comms drain their operations before freeing them).
        unsafe {
            let cq = st.cq;
            let ops = &*(*cq).ops;
            let mut entries: [fi_cq_tagged_entry; 16] = std::mem::zeroed();
            loop {
                let n = ops.read.expect("fi_cq_read")(cq, entries.as_mut_ptr().cast(), entries.len());
                if n > 0 {
                    for e in &entries[..n as usize] {
                        finish(e.op_context.cast(), OpState::Done(e.len));
                    }
                    continue;
                }
                if n == -FI_EAGAIN {
                    self.flush_held(st);
                    return Ok(());
                }
                if n == -FI_EAVAIL {
                    let mut err: fi_cq_err_entry = std::mem::zeroed();
                    if ops.readerr.expect("fi_cq_readerr")(cq, &mut err, 0) > 0 {
                        let detail = ops
                            .strerror
                            .map(|f| f(cq, err.prov_errno, err.err_data, std::ptr::null_mut(), 0))
                            .filter(|p| !p.is_null())
                            .map(|p| CStr::from_ptr(p).to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let e = if err.err == FI_ETRUNC {
                            NetError::Invalid(format!(
                                "a message of {} bytes arrived for a receive of {} bytes (truncated)",
                                err.len + err.olen,
                                err.len
                            ))
                        } else {
                            NetError::Fabric {
                                call: "a transfer".into(),
                                code: -(err.err as i64),
                                message: format!("{} ({detail})", lib.error_text(err.err as i64)),
                            }
                        };
                        finish(err.op_context.cast(), OpState::Failed(e));
                    }
                    continue;
                }
                return Err(lib.err(format!("fi_cq_read ({})", self.provider), n as i64));
            }
        }
    }

    /// Inserts a peer's name into the address vector (once per name).
    fn insert(&self, st: &mut EpState, name: &[u8]) -> NetResult<fi_addr_t> {
        if let Some(a) = st.addrs.get(name) {
            return Ok(*a);
        }
        let mut addr: fi_addr_t = FI_ADDR_UNSPEC;
        // SAFETY: live AV; `name` is an endpoint name of this provider.
        let rc = unsafe {
            (*(*st.av).ops).insert.expect("fi_av_insert")(st.av, name.as_ptr().cast(), 1, &mut addr, 0, std::ptr::null_mut())
        };
        if rc != 1 {
            return Err(self.lib.err(format!("fi_av_insert({})", fmt_name(name)), if rc < 0 { rc as i64 } else { -22 }));
        }
        st.addrs.insert(name.to_vec(), addr);
        Ok(addr)
    }

    /// Registers memory with the domain.
    fn reg(&self, st: &EpState, base: *const u8, len: usize) -> NetResult<*mut fid_mr> {
        let mut mr = std::ptr::null_mut();
        // SAFETY: live domain; the caller keeps the range allocated while
        // registered.
        let rc = unsafe {
            (*(*st.domain).mr).reg.expect("fi_mr_reg")(
                &mut (*st.domain).fid,
                base.cast(),
                len,
                FI_SEND | FI_RECV,
                0,
                self.next_mr_key.fetch_add(1, Ordering::Relaxed),
                0,
                &mut mr,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(self.lib.err(format!("fi_mr_reg({len} bytes)"), rc as i64));
        }
        Ok(mr)
    }

    /// The descriptor for a transfer: from the caller's registration, or
    /// (providers that need registered memory) a registration for this
    /// transfer alone, kept in the op and closed when it ends.
    fn desc(&self, st: &EpState, op: *mut Op, reg: Option<&Registration>, ptr: usize, len: usize) -> NetResult<*mut c_void> {
        if let Some(r) = reg {
            return r.desc_for(self.id, ptr, len);
        }
        if !self.mr_local || len == 0 {
            return Ok(std::ptr::null_mut());
        }
        let mr = self.reg(st, ptr as *const u8, len)?;
        // SAFETY: `op` is an idle op of the caller; `mr` is live.
        unsafe {
            (*op).mr = mr;
            Ok((*mr).mem_desc)
        }
    }

    /// Posts a tagged send; `Ok(false)` when the provider is full (retry
    /// after progress).
    #[allow(clippy::too_many_arguments)] // fi_tsend's own arguments
    fn post_send(&self, st: &mut EpState, op: *mut Op, ptr: usize, len: usize, desc: *mut c_void, dest: fi_addr_t, tag: u64) -> NetResult<bool> {
        if let Some(e) = self.dead_error(st, "fi_tsend") {
            return Err(e);
        }
        // SAFETY: live endpoint; the buffer stays valid while posted (the
        // isend contract); `op` stays allocated while posted.
        let rc = unsafe {
            (*op).sent_len = Some(len);
            (*(*st.ep).tagged).send.expect("fi_tsend")(st.ep, ptr as *const c_void, len, desc, dest, tag, op.cast())
        };
        self.posted(st, op, rc, "fi_tsend")
    }

    /// Posts a tagged receive (any source); `Ok(false)` when full.
    fn post_recv(&self, st: &mut EpState, op: *mut Op, ptr: usize, len: usize, desc: *mut c_void, tag: u64) -> NetResult<bool> {
        if let Some(e) = self.dead_error(st, "fi_trecv") {
            return Err(e);
        }
        // SAFETY: as post_send.
        let rc = unsafe {
            (*op).sent_len = None;
            (*(*st.ep).tagged).recv.expect("fi_trecv")(st.ep, ptr as *mut c_void, len, desc, FI_ADDR_UNSPEC, tag, 0, op.cast())
        };
        self.posted(st, op, rc, "fi_trecv")
    }

    fn posted(&self, _st: &mut EpState, op: *mut Op, rc: isize, call: &str) -> NetResult<bool> {
        if rc == 0 {
            // SAFETY: `op` is the caller's op.
            unsafe { (*op).state = OpState::Posted };
            return Ok(true);
        }
        if rc == -FI_EAGAIN {
            return Ok(false);
        }
        Err(self.lib.err(format!("{call} ({})", self.provider), rc as i64))
    }

    /// Posts the sends that were waiting for their connection's ack or
    /// for room in the provider, in order; stops at the first the
    /// provider cannot take yet.
    fn flush_held(&self, st: &mut EpState) {
        if st.held_total == 0 {
            return;
        }
        let mut out = std::mem::take(&mut st.outgoing);
        for o in out.values_mut() {
            if let Some((len, desc, tag)) = o.hello_pending {
                let op = o.hello.get();
                let ptr = o.hello_buf.as_ptr() as usize;
                match self.post_send(st, op, ptr, len, desc, o.dest, tag) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    // SAFETY: our op, under the lock.
                    Err(e) => unsafe { (*op).state = OpState::Failed(e) },
                }
                o.hello_pending = None;
                st.held_total -= 1;
            }
            if o.held.is_empty() {
                continue;
            }
            if o.recv_key.is_none() {
                // SAFETY: ops of `o`, under the lock.
                let failed = unsafe {
                    match &(*o.ack.get()).state {
                        OpState::Done(_) => {
                            o.recv_key = Some(u32::from_le_bytes(o.ack_buf[..4].try_into().expect("4")));
                            None
                        }
                        OpState::Failed(e) => Some(e.clone()),
                        _ => match &(*o.hello.get()).state {
                            OpState::Failed(e) => Some(e.clone()),
                            _ => None,
                        },
                    }
                };
                if let Some(e) = failed {
                    for op in o.held.drain(..) {
                        // SAFETY: a held op of this connection.
                        unsafe { (*op).state = OpState::Failed(e.clone()) };
                        st.held_total -= 1;
                    }
                    continue;
                }
            }
            let Some(key) = o.recv_key else { continue };
            while let Some(&op) = o.held.front() {
                // SAFETY: a held op of this connection, under the lock.
                let (ptr, len, desc, seq) = match unsafe { &(*op).state } {
                    OpState::Held { ptr, len, desc } => (*ptr, *len, *desc, unsafe { (*op).seq }),
                    _ => {
                        o.held.pop_front();
                        st.held_total -= 1;
                        continue;
                    }
                };
                let tag = (key as u64) << 32 | seq as u64;
                match self.post_send(st, op, ptr, len, desc, o.dest, tag) {
                    Ok(false) => break,
                    Ok(true) => {}
                    // SAFETY: as above.
                    Err(e) => unsafe { (*op).state = OpState::Failed(e) },
                }
                o.held.pop_front();
                st.held_total -= 1;
            }
        }
        st.outgoing = out;
    }

    /// Withdraws posted operations and waits (at most [`CANCEL_DRAIN`])
    /// until the provider reports each finished; if it does not, closes
    /// the endpoint so that it touches none of their buffers again.
    fn drain(&self, st: &mut EpState, ops: &[*mut Op]) {
        let is_posted = |op: *mut Op| unsafe { matches!((*op).state, OpState::Posted) };
        if st.ep.is_null() {
            return;
        }
        for &op in ops {
            if is_posted(op) {
                // SAFETY: live endpoint; `op` is a posted context.
                unsafe { (*(*st.ep).ops).cancel.expect("fi_cancel")(&mut (*st.ep).fid, op.cast()) };
            }
        }
        let start = Instant::now();
        while ops.iter().any(|&op| is_posted(op)) {
            if self.progress(st).is_err() || start.elapsed() > CANCEL_DRAIN {
                let n = ops.iter().filter(|&&op| is_posted(op)).count();
                // SAFETY: closing the endpoint ends every operation on it.
                unsafe { close_ep(st) };
                st.dead = Some(format!(
                    "{n} transfer(s) could not be withdrawn within {} s after their comm was closed or cancelled",
                    CANCEL_DRAIN.as_secs()
                ));
                break;
            }
            std::thread::yield_now();
        }
        for &op in ops {
            // SAFETY: no longer posted (or the endpoint is closed).
            unsafe {
                if matches!((*op).state, OpState::Posted) {
                    (*op).state = OpState::Failed(NetError::Invalid("cancelled".into()));
                }
                release_mr(op);
            }
        }
    }

    /// Waits for `op` to leave the posted state, at most `bound`.
    fn wait_op(&self, op: *mut Op, bound: Bound, what: &dyn Fn() -> String) -> NetResult<usize> {
        let mut w = Waiting::start(bound, &self.sink);
        loop {
            {
                let mut st = self.lock();
                self.progress(&mut st)?;
                // SAFETY: `op` belongs to the caller and is read under the lock.
                match unsafe { std::mem::replace(&mut (*op).state, OpState::Idle) } {
                    OpState::Done(n) => return Ok(n),
                    OpState::Failed(e) => return Err(e),
                    s => unsafe { (*op).state = s },
                }
                if let Some(e) = self.dead_error(&st, "a wait") {
                    return Err(e);
                }
            }
            if w.expired() {
                return Err(w.timeout(what()));
            }
            w.tick(|| format!("Timeout waiting for {}", what()));
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Records the end of an operation (completion or error).
unsafe fn finish(op: *mut Op, state: OpState) {
    if op.is_null() {
        return;
    }
    // SAFETY: a posted Op of this crate (see `progress`).
    unsafe {
        if matches!((*op).state, OpState::Posted) {
            (*op).state = match (state, (*op).sent_len) {
                (OpState::Done(_), Some(len)) => OpState::Done(len),
                (s, _) => s,
            };
        }
        release_mr(op);
    }
}

/// Closes an op's own registration, if it has one.
unsafe fn release_mr(op: *mut Op) {
    // SAFETY: `op` is valid; its mr, when set, is live and only ours.
    unsafe {
        if !(*op).mr.is_null() && !matches!((*op).state, OpState::Posted) {
            fi_close((*op).mr as *mut fid);
            (*op).mr = std::ptr::null_mut();
        }
    }
}

fn fabric_handle(name: &[u8], listen_id: u32) -> NetResult<Handle> {
    if name.len() > MAX_NAME {
        return Err(NetError::Invalid(format!("endpoint name of {} bytes does not fit a handle", name.len())));
    }
    let mut h = Handle::zeroed();
    let b = h.bytes_mut();
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&listen_id.to_le_bytes());
    b[12..14].copy_from_slice(&(name.len() as u16).to_le_bytes());
    b[14..14 + name.len()].copy_from_slice(name);
    Ok(h)
}

fn parse_handle(h: &Handle) -> NetResult<(u32, &[u8])> {
    let b = h.as_bytes();
    if &b[..8] != MAGIC {
        return Err(NetError::Invalid("the handle is not a libfabric transport handle".into()));
    }
    let id = u32::from_le_bytes(b[8..12].try_into().expect("4 bytes"));
    let len = u16::from_le_bytes(b[12..14].try_into().expect("2 bytes")) as usize;
    if len == 0 || len > MAX_NAME {
        return Err(NetError::Invalid(format!("corrupt libfabric handle (name length {len})")));
    }
    Ok((id, &b[14..14 + len]))
}

/// A printable endpoint name: `ip:port` for socket addresses, else hex.
fn fmt_name(n: &[u8]) -> String {
    let family = n.get(..2).map(|f| u16::from_ne_bytes([f[0], f[1]]));
    match family {
        Some(f) if f == libc::AF_INET as u16 && n.len() >= 8 => {
            format!("{}.{}.{}.{}:{}", n[4], n[5], n[6], n[7], u16::from_be_bytes([n[2], n[3]]))
        }
        Some(f) if f == libc::AF_INET6 as u16 && n.len() >= 24 => {
            let ip: [u8; 16] = n[8..24].try_into().expect("16 bytes");
            format!("[{}]:{}", std::net::Ipv6Addr::from(ip), u16::from_be_bytes([n[2], n[3]]))
        }
        _ => n.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

impl Transport for FabricTransport {
    fn name(&self) -> String {
        format!("libfabric {}", self.ep.provider)
    }

    fn progress(&self) -> NetResult<()> {
        let mut st = self.ep.lock();
        self.ep.progress(&mut st)
    }

    fn listen(&self) -> NetResult<(Handle, Box<dyn Listener>)> {
        let id = {
            let mut st = self.ep.lock();
            let id = st.next_listen;
            st.next_listen = st.next_listen.wrapping_add(1) % KEY_LIMIT;
            id
        };
        let handle = fabric_handle(&self.ep.name, id)?;
        let mut l = FabricListener {
            ep: self.ep.clone(),
            id,
            hello: Box::new(new_op()),
            buf: Box::new([0; HELLO_BYTES]),
            buf_mr: std::ptr::null_mut(),
        };
        l.post_hello()?;
        Ok((handle, Box::new(l)))
    }

    fn connect(&self, handle: &Handle) -> NetResult<Box<dyn SendComm>> {
        let (listen_id, name) = parse_handle(handle)?;
        let ep = &self.ep;
        let mut st = ep.lock();
        if let Some(e) = ep.dead_error(&st, "connect") {
            return Err(e);
        }
        let dest = ep.insert(&mut st, name)?;
        let key = st.next_key;
        st.next_key = (st.next_key + 1) % KEY_LIMIT;
        let mut o = Box::new(Outgoing {
            dest,
            recv_key: None,
            hello: new_op(),
            hello_buf: [0; HELLO_BYTES],
            ack: new_op(),
            ack_buf: [0; 8],
            held: VecDeque::with_capacity(MAX_REQUESTS),
            mrs: Vec::new(),
            hello_pending: None,
        });
        o.hello_buf[..4].copy_from_slice(&key.to_le_bytes());
        o.hello_buf[4..6].copy_from_slice(&(ep.name.len() as u16).to_le_bytes());
        o.hello_buf[6..6 + ep.name.len()].copy_from_slice(&ep.name);
        let hello_len = 6 + ep.name.len();
        let (mut hdesc, mut adesc) = (std::ptr::null_mut(), std::ptr::null_mut());
        if ep.mr_local {
            let h = ep.reg(&st, o.hello_buf.as_ptr(), HELLO_BYTES)?;
            o.mrs.push(h);
            let a = ep.reg(&st, o.ack_buf.as_ptr(), 8)?;
            o.mrs.push(a);
            // SAFETY: live mrs.
            unsafe { (hdesc, adesc) = ((*h).mem_desc, (*a).mem_desc) };
        }
        let ack = o.ack.get();
        let ack_ptr = o.ack_buf.as_mut_ptr() as usize;
        o.hello_pending = Some((hello_len, hdesc, KIND_HELLO | (listen_id as u64) << 32));
        // The box is in the map before anything is posted, so a failure
        // below is cleaned up by the comm's drop like any other.
        st.outgoing.insert(key, o);
        let comm = FabricSend {
            ep: ep.clone(),
            key,
            peer: format!("listener {listen_id} at {}", fmt_name(name)),
            seq: 0,
            slots: Slots::new(),
            ops: new_ops(),
        };
        st.held_total += 1;
        let posted = post_until(ep, &mut st, |ep, st| ep.post_recv(st, ack, ack_ptr, 8, adesc, KIND_ACK | (key as u64) << 32));
        // The hello goes out now if the provider takes it, else from a
        // later progress of this endpoint.
        ep.flush_held(&mut st);
        // Unlock before `comm` may drop (its drop takes the lock).
        drop(st);
        posted.map(|_| Box::new(comm) as Box<dyn SendComm>)
    }

    unsafe fn register(&self, base: *const u8, len: usize) -> NetResult<Registration> {
        let st = self.ep.lock();
        let mr = self.ep.reg(&st, base, len)?;
        drop(st);
        // SAFETY: live mr.
        let desc = unsafe { (*mr).mem_desc };
        Ok(Registration {
            transport: self.ep.id,
            base: base as usize,
            len,
            desc,
            _owner: Some(Box::new(OwnedMr { mr, ep: self.ep.clone() })),
        })
    }
}

/// Keeps a registration open; closes it on drop.
struct OwnedMr {
    mr: *mut fid_mr,
    ep: Arc<Endpoint>,
}

// SAFETY: the mr is only closed, under the endpoint lock.
unsafe impl Send for OwnedMr {}
// SAFETY: never used through a shared reference.
unsafe impl Sync for OwnedMr {}

impl Drop for OwnedMr {
    fn drop(&mut self) {
        let _st = self.ep.lock();
        // SAFETY: live mr, closed once.
        unsafe { fi_close(self.mr as *mut fid) };
    }
}

/// Posts with `post` until the provider takes it (bounded).
fn post_until(
    ep: &Endpoint,
    st: &mut EpState,
    mut post: impl FnMut(&Endpoint, &mut EpState) -> NetResult<bool>,
) -> NetResult<()> {
    let start = Instant::now();
    loop {
        if post(ep, st)? {
            return Ok(());
        }
        ep.progress(st)?;
        if start.elapsed() > CANCEL_DRAIN {
            return Err(NetError::Fabric {
                call: "posting a control message".into(),
                code: -FI_EAGAIN as i64,
                message: format!("the {} provider stayed full for {} s", ep.provider, CANCEL_DRAIN.as_secs()),
            });
        }
    }
}

struct FabricListener {
    ep: Arc<Endpoint>,
    id: u32,
    hello: Box<OpCell>,
    buf: Box<[u8; HELLO_BYTES]>,
    buf_mr: *mut fid_mr,
}

// SAFETY: the raw parts are only touched under the endpoint lock.
unsafe impl Send for FabricListener {}

impl FabricListener {
    fn post_hello(&mut self) -> NetResult<()> {
        let ep = &self.ep;
        let mut st = ep.lock();
        let mut desc = std::ptr::null_mut();
        if ep.mr_local {
            if self.buf_mr.is_null() {
                self.buf_mr = ep.reg(&st, self.buf.as_ptr(), HELLO_BYTES)?;
            }
            // SAFETY: live mr.
            desc = unsafe { (*self.buf_mr).mem_desc };
        }
        let op = self.hello.get();
        let ptr = self.buf.as_mut_ptr() as usize;
        let tag = KIND_HELLO | (self.id as u64) << 32;
        post_until(ep, &mut st, |ep, st| ep.post_recv(st, op, ptr, HELLO_BYTES, desc, tag))
    }
}

impl Listener for FabricListener {
    fn accept(&mut self, bound: Bound) -> NetResult<Box<dyn RecvComm>> {
        let id = self.id;
        let what = move || format!("incoming connection on listener {id}");
        let len = self.ep.wait_op(self.hello.get(), bound, &what)?;
        if len < 6 {
            return Err(NetError::Invalid(format!("a hello of {len} bytes on listener {id} is too short")));
        }
        let sender_key = u32::from_le_bytes(self.buf[..4].try_into().expect("4 bytes"));
        let nlen = u16::from_le_bytes(self.buf[4..6].try_into().expect("2 bytes")) as usize;
        if 6 + nlen > len {
            return Err(NetError::Invalid(format!("a corrupt hello on listener {id}")));
        }
        let name = self.buf[6..6 + nlen].to_vec();
        let comm = {
            let ep = &self.ep;
            let mut st = ep.lock();
            let src = ep.insert(&mut st, &name)?;
            let key = st.next_key;
            st.next_key = (st.next_key + 1) % KEY_LIMIT;
            let mut c = FabricRecv {
                ep: ep.clone(),
                peer: fmt_name(&name),
                key,
                seq: 0,
                slots: Slots::new(),
                ops: new_ops(),
                held: VecDeque::with_capacity(MAX_REQUESTS),
                ack: Box::new(new_op()),
                ack_buf: Box::new(key.to_le_bytes().iter().copied().chain([0; 4]).collect::<Vec<u8>>().try_into().expect("8")),
                ack_mr: std::ptr::null_mut(),
            };
            let mut posted = Ok(());
            let mut desc = std::ptr::null_mut();
            if ep.mr_local {
                match ep.reg(&st, c.ack_buf.as_ptr(), 8) {
                    // SAFETY: live mr.
                    Ok(mr) => unsafe {
                        c.ack_mr = mr;
                        desc = (*mr).mem_desc;
                    },
                    Err(e) => posted = Err(e),
                }
            }
            let op = c.ack.get();
            let ptr = c.ack_buf.as_ptr() as usize;
            if posted.is_ok() {
                posted = post_until(ep, &mut st, |ep, st| {
                    ep.post_send(st, op, ptr, 4, desc, src, KIND_ACK | (sender_key as u64) << 32)
                });
            }
            // Unlock before `c` may drop (its drop takes the lock).
            drop(st);
            posted?;
            c
        };
        self.post_hello()?;
        Ok(Box::new(comm))
    }
}

impl Drop for FabricListener {
    fn drop(&mut self) {
        let mut st = self.ep.lock();
        self.ep.drain(&mut st, &[self.hello.get()]);
        if !self.buf_mr.is_null() {
            // SAFETY: live mr, closed once, its buffer no longer posted.
            unsafe { fi_close(self.buf_mr as *mut fid) };
        }
    }
}

struct FabricSend {
    ep: Arc<Endpoint>,
    /// Our reply key: names this connection's entry in `outgoing`.
    key: u32,
    peer: String,
    seq: u32,
    slots: Slots<()>,
    ops: Box<[OpCell]>,
}

// SAFETY: the raw parts are only touched under the endpoint lock.
unsafe impl Send for FabricSend {}

impl SendComm for FabricSend {
    fn peer(&self) -> String {
        self.peer.clone()
    }

    unsafe fn isend(&mut self, buf: *const u8, len: usize, reg: Option<&Registration>) -> NetResult<Request> {
        if len > self.ep.max_msg {
            return Err(NetError::Invalid(format!(
                "a send of {len} bytes exceeds the {} provider's message limit of {} bytes",
                self.ep.provider, self.ep.max_msg
            )));
        }
        let ep = self.ep.clone();
        let mut st = ep.lock();
        if let Some(e) = ep.dead_error(&st, "isend") {
            return Err(e);
        }
        let req = self.slots.insert(())?;
        let op = self.ops[req.slot as usize].get();
        let desc = match ep.desc(&st, op, reg, buf as usize, len) {
            Ok(d) => d,
            Err(e) => {
                self.slots.remove(req)?;
                return Err(e);
            }
        };
        // SAFETY: our idle op, under the lock.
        unsafe {
            (*op).seq = self.seq;
            (*op).state = OpState::Held { ptr: buf as usize, len, desc };
        }
        self.seq = self.seq.wrapping_add(1);
        st.outgoing.get_mut(&self.key).expect("a live comm has its entry").held.push_back(op);
        st.held_total += 1;
        ep.flush_held(&mut st);
        Ok(req)
    }

    fn test(&mut self, req: Request) -> NetResult<Option<usize>> {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        self.slots.get_mut(req)?;
        let progressed = ep.progress(&mut st);
        // SAFETY: our op, and the endpoint lock is held.
        let out = unsafe { take_outcome(self.ops[req.slot as usize].get()) };
        match out {
            Some(r) => {
                self.slots.remove(req)?;
                r.map(Some)
            }
            None => progressed.map(|_| None),
        }
    }

    fn cancel(&mut self, req: Request) -> NetResult<()> {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        self.slots.get_mut(req)?;
        let op = self.ops[req.slot as usize].get();
        if let Some(o) = st.outgoing.get_mut(&self.key) {
            let before = o.held.len();
            o.held.retain(|h| *h != op);
            let removed = before - o.held.len();
            st.held_total -= removed;
        }
        ep.drain(&mut st, &[op]);
        // SAFETY: our op, no longer posted.
        unsafe {
            release_mr_any(op);
            (*op).state = OpState::Idle;
        }
        self.slots.remove(req)?;
        Ok(())
    }
}

/// Closes an op's own registration whatever its state (it is not posted).
unsafe fn release_mr_any(op: *mut Op) {
    // SAFETY: valid op whose mr, when set, is live and only ours.
    unsafe {
        if !(*op).mr.is_null() {
            fi_close((*op).mr as *mut fid);
            (*op).mr = std::ptr::null_mut();
        }
    }
}

impl Drop for FabricSend {
    fn drop(&mut self) {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        let Some(o) = st.outgoing.remove(&self.key) else { return };
        st.held_total -= o.held.len() + o.hello_pending.is_some() as usize;
        let mut ops: Vec<*mut Op> = self.ops.iter().map(|o| o.get()).collect();
        ops.push(o.hello.get());
        ops.push(o.ack.get());
        ep.drain(&mut st, &ops);
        for &op in &ops {
            // SAFETY: nothing is posted any more.
            unsafe { release_mr_any(op) };
        }
        for &mr in &o.mrs {
            // SAFETY: live mrs whose buffers are no longer posted.
            unsafe { fi_close(mr as *mut fid) };
        }
    }
}

struct FabricRecv {
    ep: Arc<Endpoint>,
    peer: String,
    key: u32,
    seq: u32,
    slots: Slots<()>,
    ops: Box<[OpCell]>,
    held: VecDeque<u16>,
    ack: Box<OpCell>,
    ack_buf: Box<[u8; 8]>,
    ack_mr: *mut fid_mr,
}

// SAFETY: the raw parts are only touched under the endpoint lock.
unsafe impl Send for FabricRecv {}

impl FabricRecv {
    fn drive(&mut self, st: &mut EpState) -> NetResult<()> {
        self.ep.progress(st)?;
        while let Some(&slot) = self.held.front() {
            let op = self.ops[slot as usize].get();
            // SAFETY: our op, under the lock.
            let (ptr, len, desc, seq) = match unsafe { &(*op).state } {
                OpState::Held { ptr, len, desc } => (*ptr, *len, *desc, unsafe { (*op).seq }),
                _ => {
                    self.held.pop_front();
                    continue;
                }
            };
            let tag = (self.key as u64) << 32 | seq as u64;
            if !self.ep.post_recv(st, op, ptr, len, desc, tag)? {
                break;
            }
            self.held.pop_front();
        }
        Ok(())
    }
}

impl RecvComm for FabricRecv {
    fn peer(&self) -> String {
        self.peer.clone()
    }

    unsafe fn irecv(&mut self, buf: *mut u8, cap: usize, reg: Option<&Registration>) -> NetResult<Request> {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        let req = self.slots.insert(())?;
        let op = self.ops[req.slot as usize].get();
        let desc = match ep.desc(&st, op, reg, buf as usize, cap) {
            Ok(d) => d,
            Err(e) => {
                self.slots.remove(req)?;
                return Err(e);
            }
        };
        // SAFETY: our idle op, under the lock.
        unsafe {
            (*op).seq = self.seq;
            (*op).state = OpState::Held { ptr: buf as usize, len: cap, desc };
        }
        self.seq = self.seq.wrapping_add(1);
        self.held.push_back(req.slot);
        if let Err(e) = self.drive(&mut st) {
            // SAFETY: our op.
            unsafe {
                if matches!((*op).state, OpState::Held { .. }) {
                    (*op).state = OpState::Failed(e);
                }
            }
        }
        Ok(req)
    }

    fn test(&mut self, req: Request) -> NetResult<Option<usize>> {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        self.slots.get_mut(req)?;
        let drove = self.drive(&mut st);
        // SAFETY: our op, and the endpoint lock is held.
        let out = unsafe { take_outcome(self.ops[req.slot as usize].get()) };
        match out {
            Some(r) => {
                self.slots.remove(req)?;
                r.map(Some)
            }
            None => drove.map(|_| None),
        }
    }

    fn cancel(&mut self, req: Request) -> NetResult<()> {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        self.slots.get_mut(req)?;
        let op = self.ops[req.slot as usize].get();
        ep.drain(&mut st, &[op]);
        self.held.retain(|s| *s != req.slot);
        // SAFETY: our op, no longer posted.
        unsafe {
            release_mr_any(op);
            (*op).state = OpState::Idle;
        }
        self.slots.remove(req)?;
        Ok(())
    }

    fn flush(&mut self) -> NetResult<()> {
        // Host memory: a completed receive's bytes are already in place.
        std::sync::atomic::fence(Ordering::SeqCst);
        Ok(())
    }
}

impl Drop for FabricRecv {
    fn drop(&mut self) {
        let ep = self.ep.clone();
        let mut st = ep.lock();
        let mut ops: Vec<*mut Op> = self.ops.iter().map(|o| o.get()).collect();
        ops.push(self.ack.get());
        ep.drain(&mut st, &ops);
        for &op in &ops {
            // SAFETY: nothing is posted any more.
            unsafe { release_mr_any(op) };
        }
        if !self.ack_mr.is_null() {
            // SAFETY: live mr whose buffer is no longer posted.
            unsafe { fi_close(self.ack_mr as *mut fid) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{recv, send};

    fn open() -> Option<FabricTransport> {
        if let Err(e) = available() {
            nrt_test_support::skip!(return None; "{e}");
        }
        let t = FabricTransport::open_provider("tcp", Some("lo"), stderr_sink()).expect("libfabric tcp opens on lo");
        assert!(t.address().starts_with("127.0.0.1:") || t.address().starts_with("[::1]:"), "{}", t.address());
        Some(t)
    }

    fn bound(ms: u64) -> Bound {
        Bound::new(Duration::from_millis(ms), "NEURON_RT_CC_NET_TIMEOUT")
    }

    #[test]
    fn handles_round_trip_and_names_print() {
        let name = [2u8, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let name = {
            let mut n = name;
            n[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
            n
        };
        let h = fabric_handle(&name, 7).unwrap();
        let (id, n) = parse_handle(&h).unwrap();
        assert_eq!((id, n), (7, &name[..]));
        assert_eq!(fmt_name(&name), "127.0.0.1:8080");
        assert!(parse_handle(&Handle::zeroed()).is_err());
    }

    #[test]
    fn two_endpoints_of_one_process_exchange_in_order() {
        // Two endpoints stand for two processes: each is driven by its own
        // thread, as each process drives its own.
        let Some(a) = open() else { return };
        let b = FabricTransport::open_provider("tcp", Some("lo"), stderr_sink()).unwrap();
        let (h, mut l) = b.listen().unwrap();
        let msgs: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 1000 + i as usize]).collect();
        let big: Vec<u8> = (0..4u32 << 20).map(|i| (i * 7) as u8).collect();
        let (m2, big2) = (msgs.clone(), big.clone());
        let receiver = std::thread::spawn(move || {
            let sink = stderr_sink();
            let mut r = l.accept(bound(10_000)).unwrap();
            for m in &m2 {
                let mut buf = vec![0u8; 4096];
                let n = recv(&mut *r, &mut buf, bound(10_000), &sink).unwrap();
                assert_eq!(&buf[..n], &m[..]);
            }
            let mut got = vec![0u8; big2.len()];
            let reg = unsafe { b.register(got.as_mut_ptr(), got.len()).unwrap() };
            let req = unsafe { r.irecv(got.as_mut_ptr(), got.len(), Some(&reg)).unwrap() };
            let n = crate::transport::wait(|| r.test(req), bound(10_000), &sink, &|| "recv".into()).unwrap();
            assert_eq!(n, big2.len());
            assert!(got == big2);
            r.flush().unwrap();
            let mut small = [0u8; 8];
            let e = recv(&mut *r, &mut small, bound(10_000), &sink).unwrap_err().to_string();
            assert!(e.contains("truncated"), "{e}");
        });
        let sink = stderr_sink();
        let mut s = a.connect(&h).unwrap();
        // Sends posted before the peer accepts are held, then delivered.
        let reqs: Vec<Request> = msgs.iter().map(|m| unsafe { s.isend(m.as_ptr(), m.len(), None).unwrap() }).collect();
        for q in reqs {
            let n = crate::transport::wait(|| s.test(q), bound(10_000), &sink, &|| "send".into()).unwrap();
            assert!(n >= 1000);
        }
        let reg = unsafe { a.register(big.as_ptr(), big.len()).unwrap() };
        let req = unsafe { s.isend(big.as_ptr(), big.len(), Some(&reg)).unwrap() };
        crate::transport::wait(|| s.test(req), bound(10_000), &sink, &|| "send".into()).unwrap();
        send(&mut *s, &[1u8; 64], bound(10_000), &sink).unwrap();
        receiver.join().unwrap();
    }

    #[test]
    fn an_unknown_interface_or_provider_is_named() {
        if open().is_none() {
            return;
        }
        let e = FabricTransport::open_provider("tcp", Some("nosuch0"), stderr_sink()).err().unwrap().to_string();
        assert!(e.contains("interface nosuch0") && e.contains("fi_getinfo"), "{e}");
        let e = FabricTransport::open_provider("nosuchprov", None, stderr_sink()).err().unwrap().to_string();
        assert!(e.contains("provider nosuchprov") && e.contains("fi_info -l"), "{e}");
    }

    #[test]
    fn accept_without_peer_times_out_naming_the_listener() {
        let Some(a) = open() else { return };
        let (_h, mut l) = a.listen().unwrap();
        let e = l.accept(bound(100)).err().unwrap().to_string();
        assert!(e.contains("incoming connection on listener") && e.contains("NEURON_RT_CC_NET_TIMEOUT"), "{e}");
    }
}
