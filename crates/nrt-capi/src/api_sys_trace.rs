//! `nrt_sys_trace.h`: the system-trace session over the runtime core's
//! [`nrt_core::trace`]. Configurations and fetch options are handles
//! (registry cells, never dereferenced) usable in any state; starting,
//! stopping and fetching need an initialised runtime. A session copies
//! its configuration, so the caller may free it right after start (as
//! nrtpy does). The void setters log and ignore a NULL or unknown handle.

use crate::cmem;
use crate::global;
use crate::handles::Registry;
use crate::ptr::{self, non_null};
use crate::shim::{call, value};
use crate::status::NRT_STATUS;
use nrt_core::trace::{EventType, FetchOptions, TraceConfig};
use nrt_core::{NrtError, NrtResult};
use std::ffi::{c_char, c_void};
use std::sync::{LazyLock, Mutex};

/// Live `nrt_sys_trace_config_t` handles.
pub static CONFIGS: LazyLock<Registry<Mutex<TraceConfig>>> = LazyLock::new(|| Registry::new("nrt_sys_trace_config_t"));
/// Live `nrt_sys_trace_fetch_options_t` handles.
pub static FETCH_OPTIONS: LazyLock<Registry<Mutex<FetchOptions>>> = LazyLock::new(|| Registry::new("nrt_sys_trace_fetch_options_t"));

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the configuration behind `h`.
pub fn with_config<R>(h: *mut c_void, f: impl FnOnce(&mut TraceConfig) -> NrtResult<R>) -> NrtResult<R> {
    let c = CONFIGS.get(h as usize)?;
    let mut g = lock(&c);
    f(&mut g)
}

fn with_fetch<R>(h: *const c_void, f: impl FnOnce(&mut FetchOptions) -> R) -> NrtResult<R> {
    let c = FETCH_OPTIONS.get(h as usize)?;
    let mut g = lock(&c);
    Ok(f(&mut g))
}

/// Writes a malloc'd list of `names` to the caller's out-parameters.
///
/// # Safety
/// `out` and `count` must be valid for writes (checked non-NULL).
pub unsafe fn write_list(names: &[&str], out: *mut *mut *const c_char, count: *mut usize, what: &str) -> NrtResult<()> {
    non_null(out, "the list output")?;
    non_null(count, "count")?;
    let list = cmem::c_string_list(names, what)?;
    // SAFETY: checked non-NULL; validity per the caller.
    unsafe {
        ptr::write(out, list);
        ptr::write(count, names.len());
    }
    Ok(())
}

/// `nrt_sys_trace_config_allocate`: a configuration with the defaults
/// (every core, every event type, 1,000,000 events per core).
///
/// # Safety
/// `options` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_config_allocate(options: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_sys_trace_config_allocate", || {
        non_null(options, "options")?;
        let h = CONFIGS.insert(Mutex::new(TraceConfig::default()));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(options, h as *mut c_void) };
        Ok(())
    })
}

/// `nrt_sys_trace_config_set_defaults`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_config_set_defaults(options: *mut c_void) {
    value("nrt_sys_trace_config_set_defaults", || {
        with_config(options, |c| {
            *c = TraceConfig::default();
            Ok(())
        })
    });
}

/// `nrt_sys_trace_config_free`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_config_free(options: *mut c_void) {
    value("nrt_sys_trace_config_free", || CONFIGS.remove(options as usize).map(drop));
}

/// `nrt_sys_trace_config_set_max_events_per_nc`: ring capacity per core.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_config_set_max_events_per_nc(options: *mut c_void, max_events: u64) {
    value("nrt_sys_trace_config_set_max_events_per_nc", || {
        with_config(options, |c| {
            c.max_events_per_nc = max_events;
            Ok(())
        })
    });
}

/// `nrt_sys_trace_config_set_capture_enabled_for_nc`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_config_set_capture_enabled_for_nc(options: *mut c_void, nc_idx: u32, enabled: bool) {
    value("nrt_sys_trace_config_set_capture_enabled_for_nc", || {
        with_config(options, |c| {
            c.set_core(nc_idx, enabled);
            Ok(())
        })
    });
}

/// `nrt_sys_trace_config_set_capture_enabled_for_event_type`: NRT_INVALID
/// for a NULL or unknown name (the message lists the known ones).
///
/// # Safety
/// `event_type` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_config_set_capture_enabled_for_event_type(options: *mut c_void, event_type: *const c_char, enabled: bool) -> NRT_STATUS {
    call("nrt_sys_trace_config_set_capture_enabled_for_event_type", || {
        // SAFETY: per the caller.
        let name = unsafe { ptr::string(event_type, "event_type") }?;
        with_config(options, |c| c.set_type(&name, enabled))
    })
}

/// `nrt_sys_trace_get_event_types`: every type the runtime emits.
///
/// # Safety
/// Pointer arguments must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_get_event_types(event_types: *mut *mut *const c_char, count: *mut usize) -> NRT_STATUS {
    call("nrt_sys_trace_get_event_types", || {
        let names: Vec<&str> = EventType::ALL.iter().map(|t| t.name()).collect();
        // SAFETY: per the caller.
        unsafe { write_list(&names, event_types, count, "the event type list") }
    })
}

/// `nrt_sys_trace_free_event_types`.
///
/// # Safety
/// `event_types` must be NULL or a list from this library of `count` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_free_event_types(event_types: *mut *const c_char, count: usize) {
    // SAFETY: per the caller.
    unsafe { cmem::free_list(event_types, count) };
}

/// `nrt_sys_trace_config_get_enabled_event_types`.
///
/// # Safety
/// Pointer arguments must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_config_get_enabled_event_types(options: *mut c_void, event_types: *mut *mut *const c_char, count: *mut usize) -> NRT_STATUS {
    call("nrt_sys_trace_config_get_enabled_event_types", || {
        let types = with_config(options, |c| Ok(c.enabled_types()))?;
        let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
        // SAFETY: per the caller.
        unsafe { write_list(&names, event_types, count, "the event type list") }
    })
}

/// `nrt_sys_trace_start`: starts capture with a copy of `options`.
/// NRT_INVALID for a NULL configuration or while a session runs.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_start(options: *mut c_void) -> NRT_STATUS {
    call("nrt_sys_trace_start", || {
        let h = global::hosts()?;
        if options.is_null() {
            return Err(NrtError::invalid("options is NULL; expected a configuration from nrt_sys_trace_config_allocate"));
        }
        let cfg = with_config(options, |c| Ok(c.clone()))?;
        nrt_core::trace::start(&cfg, h.rt.trace_core_map())
    })
}

/// `nrt_sys_trace_stop`: stops capture and frees the rings (nothing to do
/// when no session runs).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_stop() -> NRT_STATUS {
    call("nrt_sys_trace_stop", || {
        global::hosts()?;
        nrt_core::trace::stop();
        Ok(())
    })
}

/// `nrt_sys_trace_fetch_options_allocate`: every core, every event.
///
/// # Safety
/// `options` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_fetch_options_allocate(options: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_sys_trace_fetch_options_allocate", || {
        non_null(options, "options")?;
        let h = FETCH_OPTIONS.insert(Mutex::new(FetchOptions::default()));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(options, h as *mut c_void) };
        Ok(())
    })
}

/// `nrt_sys_trace_fetch_options_set_defaults`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_fetch_options_set_defaults(options: *mut c_void) {
    value("nrt_sys_trace_fetch_options_set_defaults", || with_fetch(options, |o| *o = FetchOptions::default()));
}

/// `nrt_sys_trace_fetch_options_free`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_fetch_options_free(options: *mut c_void) {
    value("nrt_sys_trace_fetch_options_free", || FETCH_OPTIONS.remove(options as usize).map(drop));
}

/// `nrt_sys_trace_fetch_options_set_max_events_per_nc` (0: no cap).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_fetch_options_set_max_events_per_nc(options: *mut c_void, max_events: u64) {
    value("nrt_sys_trace_fetch_options_set_max_events_per_nc", || with_fetch(options, |o| o.max_events_per_nc = max_events));
}

/// `nrt_sys_trace_fetch_options_set_nc_idx`: fetch only this core.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_sys_trace_fetch_options_set_nc_idx(options: *mut c_void, nc_idx: u64) {
    value("nrt_sys_trace_fetch_options_set_nc_idx", || {
        let nc = u32::try_from(nc_idx).map_err(|_| NrtError::invalid(format!("nc_idx {nc_idx} is not a logical core index")))?;
        with_fetch(options, |o| o.nc_idx = Some(nc))
    });
}

/// `nrt_sys_trace_fetch_events`: a malloc'd NUL-terminated JSON document
/// of the captured events (each returned once), its length without the
/// NUL in `written_size`. `options` NULL means every core, every event.
/// NRT_INVALID before `nrt_sys_trace_start` or after stop.
///
/// # Safety
/// Pointer arguments must be NULL or valid for writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_fetch_events(buffer: *mut *mut c_char, written_size: *mut usize, options: *const c_void) -> NRT_STATUS {
    call("nrt_sys_trace_fetch_events", || {
        global::hosts()?;
        non_null(buffer, "buffer")?;
        non_null(written_size, "written_size")?;
        let opts = if options.is_null() { FetchOptions::default() } else { with_fetch(options, |o| *o)? };
        let json = nrt_core::trace::fetch(&opts)?;
        let p = cmem::c_string(&json, "the fetched events")?;
        // SAFETY: checked non-NULL.
        unsafe {
            ptr::write(buffer, p);
            ptr::write(written_size, json.len());
        }
        Ok(())
    })
}

/// `nrt_sys_trace_buffer_free`.
///
/// # Safety
/// `buffer` must be NULL or a buffer from `nrt_sys_trace_fetch_events`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_sys_trace_buffer_free(buffer: *mut c_char) {
    // SAFETY: per the caller.
    unsafe { cmem::free_string(buffer) };
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_sys_trace_config_allocate,
    nrt_sys_trace_config_set_defaults,
    nrt_sys_trace_config_free,
    nrt_sys_trace_config_set_max_events_per_nc,
    nrt_sys_trace_config_set_capture_enabled_for_nc,
    nrt_sys_trace_config_set_capture_enabled_for_event_type,
    nrt_sys_trace_get_event_types,
    nrt_sys_trace_free_event_types,
    nrt_sys_trace_config_get_enabled_event_types,
    nrt_sys_trace_start,
    nrt_sys_trace_stop,
    nrt_sys_trace_fetch_options_allocate,
    nrt_sys_trace_fetch_options_set_defaults,
    nrt_sys_trace_fetch_options_free,
    nrt_sys_trace_fetch_options_set_max_events_per_nc,
    nrt_sys_trace_fetch_options_set_nc_idx,
    nrt_sys_trace_fetch_events,
    nrt_sys_trace_buffer_free,
);
