//! Where log lines go: the console (stderr), syslog (the `/dev/log`
//! datagram socket) or a file, chosen per module.

use super::{Level, MODULE_COUNT, Module, set_level};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// A log destination (`NEURON_RT_LOG_LOCATION[_MOD]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// Standard error.
    Console,
    /// The system log (falls back to the console if `/dev/log` is absent).
    Syslog,
    /// A file, appended to.
    File(PathBuf),
}

impl Location {
    /// Parses a location value: `console`, `syslog` (case-insensitive) or
    /// a file path (anything else that is not empty).
    pub fn parse(value: &str) -> Option<Location> {
        let v = value.trim();
        match v.to_ascii_lowercase().as_str() {
            "" => None,
            "console" | "stdout" | "stderr" => Some(Location::Console),
            "syslog" => Some(Location::Syslog),
            _ => Some(Location::File(PathBuf::from(v))),
        }
    }

    /// What the location variables accept.
    pub const ACCEPTED: &'static str = "console, syslog or a file path";
}

/// The resolved logging settings: a level and a destination per module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// Level of each module, indexed like [`Module::ALL`].
    pub levels: [Level; MODULE_COUNT],
    /// Destination of each module, indexed like [`Module::ALL`].
    pub locations: [Location; MODULE_COUNT],
}

impl Default for LogConfig {
    fn default() -> LogConfig {
        LogConfig {
            levels: [Level::Error; MODULE_COUNT],
            locations: std::array::from_fn(|_| Location::Console),
        }
    }
}

impl LogConfig {
    /// The level of one module.
    pub fn level(&self, m: Module) -> Level {
        self.levels[m as usize]
    }

    /// The destination of one module.
    pub fn location(&self, m: Module) -> &Location {
        &self.locations[m as usize]
    }
}

/// A log destination that could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot open log file {path} for module {module}: {source}")]
pub struct LogSetupError {
    /// The module whose destination failed.
    pub module: Module,
    /// The file.
    pub path: String,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

enum Sink {
    Console,
    Syslog(Option<UnixDatagram>),
    File(Arc<Mutex<File>>),
}

struct Routes {
    config: LogConfig,
    sinks: Vec<Sink>,
}

static ROUTES: RwLock<Option<Routes>> = RwLock::new(None);

/// Applies logging settings process-wide (nrt_init does this). Files are
/// opened first; on failure nothing changes.
pub fn configure(config: &LogConfig) -> Result<(), LogSetupError> {
    let mut files: Vec<(PathBuf, Arc<Mutex<File>>)> = Vec::new();
    let mut sinks = Vec::with_capacity(MODULE_COUNT);
    for m in Module::ALL {
        let sink = match config.location(m) {
            Location::Console => Sink::Console,
            Location::Syslog => Sink::Syslog(open_syslog(Path::new(SYSLOG_SOCKET))),
            Location::File(path) => {
                if let Some((_, f)) = files.iter().find(|(p, _)| p == path) {
                    Sink::File(Arc::clone(f))
                } else {
                    let f = OpenOptions::new().create(true).append(true).open(path).map_err(|source| LogSetupError {
                        module: m,
                        path: path.display().to_string(),
                        source,
                    })?;
                    let f = Arc::new(Mutex::new(f));
                    files.push((path.clone(), Arc::clone(&f)));
                    Sink::File(f)
                }
            }
        };
        sinks.push(sink);
    }
    let mut routes = ROUTES.write().unwrap_or_else(|e| e.into_inner());
    for m in Module::ALL {
        set_level(m, config.level(m));
    }
    *routes = Some(Routes { config: config.clone(), sinks });
    Ok(())
}

/// The settings in force (the defaults before any [`configure`]).
pub fn current_config() -> LogConfig {
    ROUTES
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|r| r.config.clone())
        .unwrap_or_default()
}

/// The local syslog socket.
const SYSLOG_SOCKET: &str = "/dev/log";

/// A datagram socket connected to a syslog socket, if there is one.
fn open_syslog(path: &Path) -> Option<UnixDatagram> {
    let sock = UnixDatagram::unbound().ok()?;
    sock.connect(path).ok()?;
    Some(sock)
}

/// One syslog datagram (RFC 3164 style, as `syslog(3)` sends it to the
/// local socket): priority, tag with pid, then the log line.
fn syslog_message(level: Level, text: &str) -> String {
    format!("<{}>nrt[{}]: {text}", syslog_priority(level), std::process::id())
}

/// syslog priority of a level (facility user = 1).
fn syslog_priority(level: Level) -> u8 {
    let severity = match level {
        Level::Quiet | Level::Error => 3,
        Level::Warn => 4,
        Level::Info => 6,
        Level::Debug | Level::Trace => 7,
    };
    8 + severity
}

pub(super) fn deliver(module: Module, level: Level, text: &str) {
    let routes = ROUTES.read().unwrap_or_else(|e| e.into_inner());
    let sink = routes.as_ref().and_then(|r| r.sinks.get(module as usize));
    match sink {
        None | Some(Sink::Console) | Some(Sink::Syslog(None)) => {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
        Some(Sink::Syslog(Some(sock))) => {
            if sock.send(syslog_message(level, text).as_bytes()).is_err() {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
        Some(Sink::File(f)) => {
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(f, "{text}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse() {
        assert_eq!(Location::parse("CONSOLE"), Some(Location::Console));
        assert_eq!(Location::parse("syslog"), Some(Location::Syslog));
        assert_eq!(Location::parse("tdrv.log"), Some(Location::File("tdrv.log".into())));
        assert_eq!(Location::parse("  "), None);
    }

    #[test]
    fn syslog_datagrams_reach_the_socket() {
        let path = std::env::temp_dir().join(format!("nrt-syslog-test-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let server = UnixDatagram::bind(&path).unwrap();
        let client = open_syslog(&path).expect("connect");
        client.send(syslog_message(Level::Warn, "hello").as_bytes()).unwrap();
        let mut buf = [0u8; 256];
        let n = server.recv(&mut buf).unwrap();
        assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), format!("<12>nrt[{}]: hello", std::process::id()));
        let _ = std::fs::remove_file(&path);
        assert!(open_syslog(&path).is_none());
    }

    #[test]
    fn syslog_priorities() {
        assert_eq!(syslog_priority(Level::Error), 11);
        assert_eq!(syslog_priority(Level::Debug), 15);
    }
}
