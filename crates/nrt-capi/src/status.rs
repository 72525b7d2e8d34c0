//! The C status type and its names.

use nrt_core::{NrtError, NrtStatus};

/// `NRT_STATUS` as the C ABI passes it (a C `int` enum).
#[allow(non_camel_case_types)]
pub type NRT_STATUS = i32;

/// NRT_SUCCESS.
pub const SUCCESS: NRT_STATUS = 0;

/// The C code of a runtime status.
pub fn code(s: NrtStatus) -> NRT_STATUS {
    s.code()
}

/// The C code an error maps to.
pub fn of_error(e: &NrtError) -> NRT_STATUS {
    e.status.code()
}
