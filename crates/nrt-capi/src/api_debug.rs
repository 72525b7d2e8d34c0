//! `ndebug_stream.h`: the per-logical-core debug stream over
//! [`nrt_core::debug_stream`]. A connection is the descriptor
//! `nrt_debug_client_connect` returns (pollable; readable while an event
//! waits); events are read one at a time into a malloc'd payload the
//! caller frees. All three need an initialised runtime.

use crate::cmem;
use crate::global;
use crate::ptr::{self, non_null};
use crate::shim::{call, value};
use crate::status::NRT_STATUS;
use nrt_core::NrtStatus;
use nrt_core::debug_stream::{self, event};
use std::ffi::c_void;

/// `nrt_debug_client_connect`: connects to logical core
/// `logical_nc_idx`'s stream. NRT_INVALID for a NULL `stream_fd`, a core
/// outside the visible ones, or a core that has a client already.
///
/// # Safety
/// `stream_fd` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_debug_client_connect(logical_nc_idx: i32, stream_fd: *mut i32) -> NRT_STATUS {
    call("nrt_debug_client_connect", || {
        global::hosts()?;
        non_null(stream_fd, "stream_fd")?;
        let fd = debug_stream::connect(logical_nc_idx)?.fd;
        // SAFETY: checked non-NULL; validity per the caller.
        unsafe { ptr::write(stream_fd, fd) };
        Ok(())
    })
}

/// `nrt_debug_client_connect_close`: ends the connection (its descriptor
/// is closed). An unknown descriptor is logged and ignored.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_debug_client_connect_close(stream_fd: i32) {
    value("nrt_debug_client_connect_close", || {
        global::hosts()?;
        debug_stream::disconnect(stream_fd)
    });
}

/// `nrt_debug_client_read_one_event`: the oldest waiting event: its header
/// into `*header` and a malloc'd payload (the caller frees it) into
/// `*payload`. NRT_QUEUE_EMPTY, outputs untouched, when none waits;
/// NRT_INVALID for NULL outputs or a descriptor that is not a connection.
///
/// # Safety
/// `header` must be NULL or valid for a 64-byte write, `payload` NULL or
/// valid for a pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_debug_client_read_one_event(stream_fd: i32, header: *mut c_void, payload: *mut *mut c_void) -> NRT_STATUS {
    let mut empty = false;
    let status = call("nrt_debug_client_read_one_event", || {
        global::hosts()?;
        non_null(header, "header")?;
        non_null(payload, "payload")?;
        let Some(e) = debug_stream::read_one(stream_fd)? else {
            empty = true;
            return Ok(());
        };
        let p = cmem::c_bytes(e.payload_len(), "a debug event payload", |b| e.write_payload(b))?;
        let h = e.header();
        // SAFETY: checked non-NULL; the caller's header holds 64 bytes and
        // its payload pointer is valid for a write.
        unsafe {
            std::ptr::copy_nonoverlapping(h.as_ptr(), header.cast::<u8>(), event::HEADER_BYTES);
            ptr::write(payload, p);
        }
        Ok(())
    });
    // Nothing waiting is not a failure: no log line, just the status.
    if empty { NrtStatus::QueueEmpty.code() } else { status }
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_debug_client_connect,
    nrt_debug_client_connect_close,
    nrt_debug_client_read_one_event,
);
