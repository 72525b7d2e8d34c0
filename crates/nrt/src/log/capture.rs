//! In-memory capture of log lines for tests: a capture collects every line
//! logged on the thread that created it, at its own level, independently
//! of the process-wide settings (so parallel tests do not see each other's
//! lines or depend on each other's configuration).

use super::Level;
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};

thread_local! {
    static CAPTURE_LEVEL: Cell<u8> = const { Cell::new(0) };
    static CAPTURE: RefCell<Option<Arc<Mutex<Vec<String>>>>> = const { RefCell::new(None) };
}

/// An active capture; lines logged on this thread at or above its level
/// are kept until it is dropped (which restores any outer capture).
#[derive(Debug)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<String>>>,
    previous: Option<Arc<Mutex<Vec<String>>>>,
    previous_level: u8,
}

/// Starts capturing this thread's log lines up to `level` of verbosity.
pub fn capture(level: Level) -> LogCapture {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let previous = CAPTURE.with(|c| c.replace(Some(Arc::clone(&lines))));
    let previous_level = CAPTURE_LEVEL.with(|c| c.replace(level as u8));
    LogCapture { lines, previous, previous_level }
}

impl LogCapture {
    /// The lines captured so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether any captured line contains `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|l| l.contains(needle))
    }

    /// Everything captured, one line per line.
    pub fn text(&self) -> String {
        let mut s = self.lines().join("\n");
        s.push('\n');
        s
    }
}

impl Drop for LogCapture {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CAPTURE.with(|c| *c.borrow_mut() = previous);
        CAPTURE_LEVEL.with(|c| c.set(self.previous_level));
    }
}

#[inline]
pub(super) fn wants(level: Level) -> bool {
    CAPTURE_LEVEL.with(|c| level as u8 <= c.get())
}

pub(super) fn record(level: Level, line: &str) {
    if !wants(level) {
        return;
    }
    CAPTURE.with(|c| {
        if let Some(buf) = c.borrow().as_ref() {
            buf.lock().unwrap_or_else(|e| e.into_inner()).push(line.to_string());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_captures_restore() {
        let outer = capture(Level::Error);
        {
            let inner = capture(Level::Info);
            record(Level::Info, "inner");
            assert_eq!(inner.lines(), vec!["inner"]);
        }
        record(Level::Info, "dropped: outer is ERROR only");
        record(Level::Error, "outer");
        assert_eq!(outer.lines(), vec!["outer"]);
        drop(outer);
        assert!(!wants(Level::Error));
    }
}
