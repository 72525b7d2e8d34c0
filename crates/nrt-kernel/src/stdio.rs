//! `printf!` / `eprintf!`: formatted text into this core's stdio ring
//! (the host prints it after the execution, "Printing stdout from
//! GPSIMD:"). Text is buffered per line and flushed at 240 bytes, at a
//! newline and by `customop_cleanup`.

use core::fmt::{self, Write};

/// Bytes one ring entry carries.
const LINE: usize = 0xF0;

/// A formatter that writes to one stdio stream.
pub struct Stdio {
    fd: i32,
    buf: [u8; LINE],
    len: usize,
}

impl Stdio {
    /// Standard output (fd 1).
    pub fn stdout() -> Stdio {
        Stdio { fd: 1, buf: [0; LINE], len: 0 }
    }

    /// Standard error (fd 2).
    pub fn stderr() -> Stdio {
        Stdio { fd: 2, buf: [0; LINE], len: 0 }
    }

    /// Sends what is buffered.
    pub fn flush(&mut self) {
        if self.len > 0 {
            crate::sys::stdio_write(self.fd, &self.buf[..self.len]);
            self.len = 0;
        }
    }
}

impl Write for Stdio {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            self.buf[self.len] = b;
            self.len += 1;
            if self.len == LINE || b == b'\n' {
                self.flush();
            }
        }
        Ok(())
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Writes formatted text to fd 1 (used by [`printf!`](crate::printf!)).
pub fn print_fmt(args: fmt::Arguments<'_>) {
    let mut out = Stdio::stdout();
    let _ = out.write_fmt(args);
}

/// Writes formatted text to fd 2 (used by [`eprintf!`](crate::eprintf!)).
pub fn eprint_fmt(args: fmt::Arguments<'_>) {
    let mut out = Stdio::stderr();
    let _ = out.write_fmt(args);
}

/// Nothing is held between calls (every `printf!` flushes on drop); kept
/// as the cleanup hook's flush point.
pub fn flush() {}

/// `printf!("x = {}\n", x)`: Rust formatting into the core's stdout ring.
#[macro_export]
macro_rules! printf {
    ($($arg:tt)*) => { $crate::stdio::print_fmt(format_args!($($arg)*)) };
}

/// `eprintf!(...)`: the same into the stderr ring.
#[macro_export]
macro_rules! eprintf {
    ($($arg:tt)*) => { $crate::stdio::eprint_fmt(format_args!($($arg)*)) };
}
