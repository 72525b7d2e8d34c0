//! Logging in libnrt's format and with its controls.
//!
//! Lines look like libnrt's (`YYYY-Mon-DD HH:MM:SS.ffffff PID:TID LEVEL
//! MODULE:function message`); levels and destinations are set per module
//! from `NEURON_RT_LOG_LEVEL[_MOD]` and `NEURON_RT_LOG_LOCATION[_MOD]`
//! (see [`crate::config`]). The settings are process-global, like
//! libnrt's. A disabled message costs one atomic load (plus one
//! thread-local read): the macros check [`enabled`] before formatting.
//!
//! Use the macros: `log_error!(Module::Nrt, "bad {x}")`, `log_warn!`,
//! `log_info!`, `log_debug!`, `log_trace!`; they fill in the calling
//! function's name. [`write`](fn@write) takes an explicit function name (the C layer
//! passes `nrt_init` and friends). Tests capture lines with [`capture`].

mod capture;
mod format;
pub mod infodump;
mod sink;

pub use capture::{LogCapture, capture};
pub use infodump::Infodump;
pub use format::{function_from_type_name, line, thread_id, timestamp};
pub use sink::{LogConfig, LogSetupError, Location, configure, current_config};

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU8, Ordering};

/// A log level. Ordered by verbosity: a module set to `Info` prints
/// `Error`, `Warn` and `Info` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Nothing is printed (only valid as a setting).
    Quiet = 0,
    /// Failures.
    Error = 1,
    /// Suspicious but tolerated conditions.
    Warn = 2,
    /// Progress and configuration.
    Info = 3,
    /// API tracing and decisions.
    Debug = 4,
    /// Everything.
    Trace = 5,
}

impl Level {
    /// The tag printed in a line.
    pub const fn tag(self) -> &'static str {
        match self {
            Level::Quiet => "QUIET",
            Level::Error => "ERROR",
            Level::Warn => "WARN",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Trace => "TRACE",
        }
    }

    const fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Quiet,
            1 => Level::Error,
            2 => Level::Warn,
            3 => Level::Info,
            4 => Level::Debug,
            _ => Level::Trace,
        }
    }

    /// What the level variables accept, for error messages.
    pub const ACCEPTED: &'static str = "ERROR, WARNING (or WARN), INFO, DEBUG, TRACE or QUIET (case-insensitive)";
}

impl FromStr for Level {
    type Err = ();
    fn from_str(s: &str) -> Result<Level, ()> {
        match s.trim().to_ascii_uppercase().as_str() {
            "QUIET" => Ok(Level::Quiet),
            "ERROR" => Ok(Level::Error),
            "WARNING" | "WARN" => Ok(Level::Warn),
            "INFO" => Ok(Level::Info),
            "DEBUG" => Ok(Level::Debug),
            "TRACE" => Ok(Level::Trace),
            _ => Err(()),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

/// A runtime component with its own log level and destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Module {
    /// The public API layer.
    Nrt = 0,
    /// The low-level driver layer (device memory, rings, completion).
    Tdrv = 1,
    /// The model manager (load/unload bookkeeping).
    Nmgr = 2,
    /// The execution manager (libnrt's other spelling of the model manager).
    Kmgr = 3,
    /// The NEFF parser.
    Neff = 4,
    /// The device portal.
    Hal = 5,
}

/// Number of modules.
pub const MODULE_COUNT: usize = 6;

impl Module {
    /// Every module.
    pub const ALL: [Module; MODULE_COUNT] = [Module::Nrt, Module::Tdrv, Module::Nmgr, Module::Kmgr, Module::Neff, Module::Hal];

    /// The tag printed in a line and used in the per-module variables.
    pub const fn tag(self) -> &'static str {
        match self {
            Module::Nrt => "NRT",
            Module::Tdrv => "TDRV",
            Module::Nmgr => "NMGR",
            Module::Kmgr => "KMGR",
            Module::Neff => "NEFF",
            Module::Hal => "HAL",
        }
    }

    /// The module named by a variable suffix (`NRT`, `TDRV`, ...).
    pub fn from_tag(tag: &str) -> Option<Module> {
        Module::ALL.into_iter().find(|m| m.tag().eq_ignore_ascii_case(tag))
    }

    /// Per-module suffixes that also configure this module: NMGR and KMGR
    /// name the same manager in libnrt's docs, so each accepts the other's
    /// variables when its own is unset.
    pub const fn alias(self) -> Option<Module> {
        match self {
            Module::Nmgr => Some(Module::Kmgr),
            Module::Kmgr => Some(Module::Nmgr),
            _ => None,
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

static LEVELS: [AtomicU8; MODULE_COUNT] = [const { AtomicU8::new(Level::Error as u8) }; MODULE_COUNT];

/// The level a module is currently set to.
pub fn level_of(module: Module) -> Level {
    Level::from_u8(LEVELS[module.index()].load(Ordering::Relaxed))
}

pub(crate) fn set_level(module: Module, level: Level) {
    LEVELS[module.index()].store(level as u8, Ordering::Relaxed);
}

/// Whether a message of `level` from `module` would go anywhere (the
/// module's destination or a capture on this thread).
#[inline]
pub fn enabled(module: Module, level: Level) -> bool {
    level != Level::Quiet && (level as u8 <= LEVELS[module.index()].load(Ordering::Relaxed) || capture::wants(level))
}

/// Formats and writes one message; `function` is the function name shown
/// after the module tag.
pub fn write(level: Level, module: Module, function: &str, args: fmt::Arguments<'_>) {
    if !enabled(module, level) {
        return;
    }
    let message = match args.as_str() {
        Some(s) => s.to_string(),
        None => args.to_string(),
    };
    let text = line(level, module, function, &message);
    capture::record(level, &text);
    if level as u8 <= LEVELS[module.index()].load(Ordering::Relaxed) {
        sink::deliver(module, level, &text);
    }
}

/// Writes a preformatted block (the OOM table, the infodump) line by line
/// without the per-line prefix, as libnrt prints its tables.
pub fn emit_block(level: Level, module: Module, block: &str) {
    if !enabled(module, level) {
        return;
    }
    let to_sink = level as u8 <= LEVELS[module.index()].load(Ordering::Relaxed);
    for l in block.lines() {
        capture::record(level, l);
        if to_sink {
            sink::deliver(module, level, l);
        }
    }
}

/// Logs at a level, filling in the calling function's name.
#[macro_export]
macro_rules! nrt_log {
    ($level:expr, $module:expr, $($arg:tt)+) => {{
        let (level, module) = ($level, $module);
        if $crate::log::enabled(module, level) {
            fn f() {}
            let function = $crate::log::function_from_type_name(::std::any::type_name_of_val(&f));
            $crate::log::write(level, module, function, format_args!($($arg)+));
        }
    }};
}

/// Logs an ERROR line: `log_error!(Module::Nrt, "fmt", args...)`.
#[macro_export]
macro_rules! log_error {
    ($module:expr, $($arg:tt)+) => { $crate::nrt_log!($crate::log::Level::Error, $module, $($arg)+) };
}

/// Logs a WARN line.
#[macro_export]
macro_rules! log_warn {
    ($module:expr, $($arg:tt)+) => { $crate::nrt_log!($crate::log::Level::Warn, $module, $($arg)+) };
}

/// Logs an INFO line.
#[macro_export]
macro_rules! log_info {
    ($module:expr, $($arg:tt)+) => { $crate::nrt_log!($crate::log::Level::Info, $module, $($arg)+) };
}

/// Logs a DEBUG line.
#[macro_export]
macro_rules! log_debug {
    ($module:expr, $($arg:tt)+) => { $crate::nrt_log!($crate::log::Level::Debug, $module, $($arg)+) };
}

/// Logs a TRACE line.
#[macro_export]
macro_rules! log_trace {
    ($module:expr, $($arg:tt)+) => { $crate::nrt_log!($crate::log::Level::Trace, $module, $($arg)+) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse() {
        for (s, l) in [("error", Level::Error), ("WARNING", Level::Warn), ("warn", Level::Warn), (" Info ", Level::Info), ("DEBUG", Level::Debug), ("trace", Level::Trace), ("QUIET", Level::Quiet)] {
            assert_eq!(s.parse::<Level>(), Ok(l), "{s}");
        }
        assert!("verbose".parse::<Level>().is_err());
        assert!(Level::Error < Level::Debug);
    }

    #[test]
    fn modules_by_tag() {
        assert_eq!(Module::from_tag("tdrv"), Some(Module::Tdrv));
        assert_eq!(Module::from_tag("KMGR"), Some(Module::Kmgr));
        assert_eq!(Module::from_tag("CCOM"), None);
        assert_eq!(Module::Nmgr.alias(), Some(Module::Kmgr));
    }

    #[test]
    fn macro_records_function_name_and_format() {
        let cap = capture(Level::Debug);
        fn some_api_call(n: u32) {
            crate::log_info!(Module::Nrt, "loaded {n} models");
        }
        some_api_call(3);
        crate::log_trace!(Module::Nrt, "not captured");
        let lines = cap.lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert!(l.contains("  INFO") && l.contains("  NRT:some_api_call "), "{l}");
        assert!(l.ends_with(" loaded 3 models"), "{l}");
    }
}
