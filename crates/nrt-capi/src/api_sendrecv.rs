//! nrt_async_sendrecv.h: point-to-point tensor transfers between logical
//! cores of this and other hosts, over libfabric (the engine is
//! `nrt_net::sendrecv`; this module validates the C arguments, maps
//! handles and statuses, and stages tensor bytes through `CTensor`).
//!
//! Statuses follow libnrt's engine: a NULL tensor or communicator, a
//! transfer out of the tensor's bounds, a post on the wrong kind of
//! communicator or a failed transfer are NRT_FAILURE; a post on a
//! communicator not yet connected, or a stale handle, NRT_INVALID_HANDLE;
//! the communicator and pending-request limits NRT_RESOURCE; a connection
//! or transfer past its bound NRT_TIMEOUT. NULL output pointers are
//! NRT_INVALID.

use crate::ctensor::CTensor;
use crate::global::{self, TENSORS};
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::log::Module;
use nrt_core::{NrtError, NrtResult, NrtStatus};
use nrt_net::fabric::FabricTransport;
use nrt_net::limits::{BOOTSTRAP_TIMEOUT_VAR, Bound, NET_TIMEOUT_VAR};
use nrt_net::sendrecv::{self, CommId, ErrorKind, Payload, RequestId, SendRecv, Settings, SrError};
use nrt_net::Transport;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, LazyLock};

/// Opaque `nrt_async_sendrecv_comm_t`.
#[repr(C)]
pub struct SendRecvComm {
    _private: [u8; 0],
}

/// Opaque `nrt_async_sendrecv_request_t`.
#[repr(C)]
pub struct SendRecvRequest {
    _private: [u8; 0],
}

/// The engine of this process: each logical core opens a libfabric
/// endpoint (provider `FI_PROVIDER`, default tcp) when initialised.
static ENGINE: LazyLock<SendRecv> = LazyLock::new(|| {
    SendRecv::new(
        Box::new(|| FabricTransport::open().map(|t| Arc::new(t) as Arc<dyn Transport>)),
        Arc::new(|m: &str| nrt_core::log_warn!(Module::Nrt, "{m}")),
    )
});

fn status(e: SrError) -> NrtError {
    let s = match e.kind {
        ErrorKind::Failure => NrtStatus::Failure,
        ErrorKind::Invalid => NrtStatus::Invalid,
        ErrorKind::InvalidHandle => NrtStatus::InvalidHandle,
        ErrorKind::Resource => NrtStatus::Resource,
        ErrorKind::Timeout => NrtStatus::Timeout,
    };
    NrtError::new(s, e.message)
}

/// Ends every core still open (runtime close): libnrt requires each
/// `init` to be closed before `nrt_close`; a forgotten one is closed here
/// with a warning rather than left with threads touching freed tensors.
pub fn close_all() {
    if let Some(engine) = LazyLock::get(&ENGINE) {
        let open = engine.close_all();
        if !open.is_empty() {
            nrt_core::log_warn!(Module::Nrt, "nrt_close: async send/recv was still initialised on logical neuron core(s) {open:?}; closed them (call nrt_async_sendrecv_close first)");
        }
    }
}

/// A tensor as the engine reads and fills it.
struct TensorBytes(Arc<CTensor>);

impl Payload for TensorBytes {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        self.0.read(offset, buf).map_err(|e| e.to_string())
    }
    fn write(&self, offset: u64, data: &[u8]) -> Result<(), String> {
        self.0.write(offset, data).map_err(|e| e.to_string())
    }
}

fn comm_id(comm: *mut SendRecvComm) -> NrtResult<CommId> {
    if comm.is_null() {
        return Err(NrtError::failure("Expected a valid communicator: comm is NULL"));
    }
    CommId::from_raw(comm as u64)
        .ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("{comm:p} is not an async send/recv communicator")))
}

fn tensor(t: *mut c_void) -> NrtResult<Arc<CTensor>> {
    if t.is_null() {
        return Err(NrtError::failure("Expected a valid tensor: tensor is NULL"));
    }
    TENSORS.get(t as usize)
}

/// `nrt_async_sendrecv_get_max_num_communicators_per_lnc`.
///
/// # Safety
/// `num` must be NULL or point to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_get_max_num_communicators_per_lnc(num: *mut c_int) -> NRT_STATUS {
    call("nrt_async_sendrecv_get_max_num_communicators_per_lnc", || {
        non_null(num, "num")?;
        // SAFETY: checked non-NULL; the caller gives an int.
        unsafe { ptr::write(num, sendrecv::MAX_COMMS_PER_LNC as c_int) };
        Ok(())
    })
}

/// `nrt_async_sendrecv_get_max_num_pending_request`.
///
/// # Safety
/// `num` must be NULL or point to an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_get_max_num_pending_request(num: *mut c_int) -> NRT_STATUS {
    call("nrt_async_sendrecv_get_max_num_pending_request", || {
        non_null(num, "num")?;
        // SAFETY: checked non-NULL; the caller gives an int.
        unsafe { ptr::write(num, sendrecv::MAX_PENDING_REQUESTS as c_int) };
        Ok(())
    })
}

/// `nrt_async_sendrecv_init`: needs the runtime initialised,
/// `NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED=1` and
/// `NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_async_sendrecv_init(lnc: c_int) -> NRT_STATUS {
    call("nrt_async_sendrecv_init", || {
        let h = global::hosts()?;
        let cc = &h.rt.config().collectives;
        let settings = Settings::new(
            cc.sendrecv_enabled,
            cc.sendrecv_port,
            Bound::new(cc.bootstrap_timeout, BOOTSTRAP_TIMEOUT_VAR),
            Bound::new(cc.net_timeout, NET_TIMEOUT_VAR),
        )
        .map_err(status)?;
        ENGINE.init(lnc as i64, settings).map_err(status)
    })
}

/// `nrt_async_sendrecv_close`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_async_sendrecv_close(lnc: c_int) -> NRT_STATUS {
    call("nrt_async_sendrecv_close", || ENGINE.close(lnc as i64).map_err(status))
}

/// Shared body of connect and accept.
unsafe fn open_comm(api: &str, peer_ip: *const c_char, peer_lnc: c_int, lnc: c_int, out: *mut *mut SendRecvComm, send: bool) -> NRT_STATUS {
    call(api, || {
        non_null(out, if send { "send_comm" } else { "recv_comm" })?;
        // SAFETY: NULL or a NUL-terminated string, as the header requires.
        let ip = unsafe { ptr::string(peer_ip, "peer_ip") }.map_err(|e| NrtError::failure(e.message))?;
        let id = if send { ENGINE.connect(&ip, peer_lnc as i64, lnc as i64) } else { ENGINE.accept(&ip, peer_lnc as i64, lnc as i64) }
            .map_err(status)?;
        // SAFETY: checked non-NULL; the caller gives a pointer slot.
        unsafe { ptr::write(out, id.raw() as usize as *mut SendRecvComm) };
        Ok(())
    })
}

/// `nrt_async_sendrecv_connect`: a send communicator; the connection is
/// made in the background (poll `nrt_async_sendrecv_test_comm`).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_connect(peer_ip: *const c_char, peer_lnc: c_int, lnc: c_int, send_comm: *mut *mut SendRecvComm) -> NRT_STATUS {
    // SAFETY: forwarded from the caller.
    unsafe { open_comm("nrt_async_sendrecv_connect", peer_ip, peer_lnc, lnc, send_comm, true) }
}

/// `nrt_async_sendrecv_accept`: a receive communicator, connected in the
/// background.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_accept(peer_ip: *const c_char, peer_lnc: c_int, lnc: c_int, recv_comm: *mut *mut SendRecvComm) -> NRT_STATUS {
    // SAFETY: forwarded from the caller.
    unsafe { open_comm("nrt_async_sendrecv_accept", peer_ip, peer_lnc, lnc, recv_comm, false) }
}

/// `nrt_async_sendrecv_test_comm`.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_test_comm(comm: *mut SendRecvComm, done: *mut bool) -> NRT_STATUS {
    call("nrt_async_sendrecv_test_comm", || {
        non_null(done, "done")?;
        let id = comm_id(comm).map_err(|e| if comm.is_null() { NrtError::new(NrtStatus::InvalidHandle, e.message) } else { e })?;
        let connected = ENGINE.test_comm(id).map_err(status)?;
        // SAFETY: checked non-NULL; the caller gives a bool.
        unsafe { ptr::write(done, connected) };
        Ok(())
    })
}

/// Shared body of send_tensor and recv_tensor.
unsafe fn post(api: &str, t: *mut c_void, offset: usize, length: usize, comm: *mut SendRecvComm, out: *mut *mut SendRecvRequest, send: bool) -> NRT_STATUS {
    call(api, || {
        non_null(out, "request")?;
        let tensor = tensor(t)?;
        let id = comm_id(comm)?;
        let payload: Arc<dyn Payload> = Arc::new(TensorBytes(tensor));
        let req = if send { ENGINE.send(payload, offset as u64, length as u64, id) } else { ENGINE.recv(payload, offset as u64, length as u64, id) }
            .map_err(status)?;
        // SAFETY: checked non-NULL; the caller gives a pointer slot.
        unsafe { ptr::write(out, req.raw() as usize as *mut SendRecvRequest) };
        Ok(())
    })
}

/// `nrt_async_sendrecv_send_tensor`: posts `length` bytes of `tensor` at
/// `offset`; non-blocking.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_send_tensor(
    tensor: *mut c_void,
    offset: usize,
    length: usize,
    send_comm: *mut SendRecvComm,
    request: *mut *mut SendRecvRequest,
) -> NRT_STATUS {
    // SAFETY: forwarded from the caller.
    unsafe { post("nrt_async_sendrecv_send_tensor", tensor, offset, length, send_comm, request, true) }
}

/// `nrt_async_sendrecv_recv_tensor`: posts a receive of at most `length`
/// bytes into `tensor` at `offset`; non-blocking.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_recv_tensor(
    tensor: *mut c_void,
    offset: usize,
    length: usize,
    recv_comm: *mut SendRecvComm,
    request: *mut *mut SendRecvRequest,
) -> NRT_STATUS {
    // SAFETY: forwarded from the caller.
    unsafe { post("nrt_async_sendrecv_recv_tensor", tensor, offset, length, recv_comm, request, false) }
}

/// `nrt_async_sendrecv_test_request`: `*done` once the transfer finished
/// (then `*size` is the bytes moved and the request is gone).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_async_sendrecv_test_request(request: *mut SendRecvRequest, done: *mut bool, size: *mut usize) -> NRT_STATUS {
    call("nrt_async_sendrecv_test_request", || {
        non_null(done, "done")?;
        non_null(size, "size")?;
        let id = RequestId::from_raw(request as u64)
            .ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("{request:p} is not an async send/recv request")))?;
        let result = ENGINE.test_request(id).map_err(status)?;
        // SAFETY: checked non-NULL; the caller gives a bool and a size_t.
        unsafe {
            ptr::write(done, result.is_some());
            ptr::write(size, result.unwrap_or(0));
        }
        Ok(())
    })
}

/// `nrt_async_sendrecv_flush`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_async_sendrecv_flush(lnc: c_int) -> NRT_STATUS {
    call("nrt_async_sendrecv_flush", || ENGINE.flush(lnc as i64).map_err(status))
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_async_sendrecv_get_max_num_communicators_per_lnc,
    nrt_async_sendrecv_get_max_num_pending_request,
    nrt_async_sendrecv_init,
    nrt_async_sendrecv_close,
    nrt_async_sendrecv_connect,
    nrt_async_sendrecv_accept,
    nrt_async_sendrecv_test_comm,
    nrt_async_sendrecv_send_tensor,
    nrt_async_sendrecv_recv_tensor,
    nrt_async_sendrecv_test_request,
    nrt_async_sendrecv_flush,
);
