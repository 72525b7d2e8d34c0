//! Loading `libfabric.so.1` at run time, as libnrt loads libnccom: the
//! build has no link-time dependency, and a machine without libfabric
//! still runs in-process collectives; only a cross-process world fails,
//! with a message naming the package.
//!
//! The library versions its symbols; the layouts in [`super::ffi`] are
//! those of `fi_getinfo@FABRIC_1.3` (the current one in 1.17), so the
//! functions are looked up at exactly those versions.

use std::ffi::{CStr, CString, c_void};
use std::sync::OnceLock;

use super::ffi::{FiDupinfo, FiFabric, FiFreeinfo, FiGetinfo, FiStrerror};
use crate::error::{NetError, NetResult};

/// The library file we load.
pub const LIBRARY: &str = "libfabric.so.1";

/// The exported functions we call.
pub(crate) struct Lib {
    pub getinfo: FiGetinfo,
    pub freeinfo: FiFreeinfo,
    pub dupinfo: FiDupinfo,
    pub fabric: FiFabric,
    pub strerror: FiStrerror,
}

// SAFETY: function pointers into a library that is never unloaded.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

static LOADED: OnceLock<Result<Lib, String>> = OnceLock::new();

/// The loaded library (loaded on first use, kept for the process).
pub(crate) fn lib() -> NetResult<&'static Lib> {
    LOADED.get_or_init(load).as_ref().map_err(|reason| NetError::LibfabricMissing { reason: reason.clone() })
}

/// Whether libfabric can be loaded here (tests use it to skip with a note).
pub fn available() -> NetResult<()> {
    lib().map(|_| ())
}

fn load() -> Result<Lib, String> {
    avoid_shared_receive_context();
    load_from(LIBRARY)
}

/// The variable that makes libfabric's `tcp;ofi_rxm` give every
/// connection its own receive queue instead of one shared receive context.
pub const RXM_USE_SRX: &str = "FI_OFI_RXM_USE_SRX";

/// Turns off ofi_rxm's shared receive context (`FI_OFI_RXM_USE_SRX=0`)
/// unless the user chose a value. With it on (the tcp default of
/// libfabric 1.17, Debian 12's), a process whose peer is killed while
/// messages are in flight can crash with SIGSEGV inside `fi_trecv`: the
/// survivor of `cc_processes.rs`'s killed-peer test did in 1 of 4 runs
/// (1 of 3 to 5 under load), with it off in none of 14. libfabric reads its
/// variables once, when the first `fi_getinfo` initialises the providers,
/// so this runs before the library is opened.
fn avoid_shared_receive_context() {
    if std::env::var_os(RXM_USE_SRX).is_none() {
        // SAFETY: runs once (under the OnceLock of `lib`), before libfabric
        // exists in the process; the runtime reads its own variables when it
        // initialises, before any collective opens the transport, so no
        // thread of ours reads the environment concurrently.
        unsafe { std::env::set_var(RXM_USE_SRX, "0") };
    }
}

fn load_from(library: &str) -> Result<Lib, String> {
    let name = CString::new(library).map_err(|_| format!("library name {library:?} contains NUL"))?;
    // SAFETY: dlopen with a valid C string; the handle is never closed.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(format!("dlopen({library}) failed: {}", dlerror()));
    }
    let sym = |f: &str, version: &str| -> Result<*mut c_void, String> {
        let cf = CString::new(f).expect("no NUL");
        let cv = CString::new(version).expect("no NUL");
        // SAFETY: valid handle and C strings.
        let p = unsafe { libc::dlvsym(handle, cf.as_ptr(), cv.as_ptr()) };
        if p.is_null() {
            Err(format!("{library} has no {f}@{version} ({})", dlerror()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol has the C signature declared for its type (see
    // ffi.rs, checked against the headers).
    unsafe {
        Ok(Lib {
            getinfo: std::mem::transmute::<*mut c_void, FiGetinfo>(sym("fi_getinfo", "FABRIC_1.3")?),
            freeinfo: std::mem::transmute::<*mut c_void, FiFreeinfo>(sym("fi_freeinfo", "FABRIC_1.3")?),
            dupinfo: std::mem::transmute::<*mut c_void, FiDupinfo>(sym("fi_dupinfo", "FABRIC_1.3")?),
            fabric: std::mem::transmute::<*mut c_void, FiFabric>(sym("fi_fabric", "FABRIC_1.1")?),
            strerror: std::mem::transmute::<*mut c_void, FiStrerror>(sym("fi_strerror", "FABRIC_1.0")?),
        })
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local C string or NULL.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "no detail".into()
    } else {
        // SAFETY: non-null C string from dlerror.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

impl Lib {
    /// fi_strerror's text for a (negative or positive) libfabric code.
    pub(crate) fn error_text(&self, code: i64) -> String {
        // SAFETY: fi_strerror accepts any int and returns a static string.
        let p = unsafe { (self.strerror)(code.unsigned_abs() as i32) };
        if p.is_null() {
            return format!("error {code}");
        }
        // SAFETY: non-null static C string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// A [`NetError::Fabric`] for `call` returning `code`.
    pub(crate) fn err(&self, call: impl Into<String>, code: i64) -> NetError {
        NetError::Fabric { call: call.into(), code, message: self.error_text(code) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_the_package() {
        let reason = load_from("libfabric-not-installed.so.1").err().expect("no such library");
        let e = NetError::LibfabricMissing { reason }.to_string();
        assert!(e.contains("dlopen(libfabric-not-installed.so.1) failed"), "{e}");
        assert!(e.contains("apt-get install libfabric1"), "{e}");
    }

    #[test]
    fn a_library_without_the_versions_is_refused() {
        // libc is loadable but has no fi_getinfo@FABRIC_1.3.
        let reason = load_from("libc.so.6").err().expect("libc is not libfabric");
        assert!(reason.contains("has no fi_getinfo@FABRIC_1.3"), "{reason}");
    }
}
