//! libnrt's log line: `YYYY-Mon-DD HH:MM:SS.ffffff PID:TID LEVEL MODULE:function message`.

use super::{Level, Module};
use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Formats a UTC time as `YYYY-Mon-DD HH:MM:SS.ffffff`.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{}-{day:02} {:02}:{:02}:{:02}.{:06}",
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), proleptic
/// Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
}

/// The kernel thread id of the calling thread (from `/proc/thread-self`,
/// cached per thread), or the process id where that is unavailable.
pub fn thread_id() -> u64 {
    TID.with(|c| {
        if c.get() == 0 {
            let tid = std::fs::read_link("/proc/thread-self")
                .ok()
                .and_then(|p| p.file_name().and_then(|n| n.to_str()).and_then(|n| n.parse().ok()))
                .unwrap_or_else(|| u64::from(std::process::id()));
            c.set(tid);
        }
        c.get()
    })
}

/// One complete log line (without the trailing newline).
pub fn line(level: Level, module: Module, function: &str, message: &str) -> String {
    format!(
        "{} {:>6}:{:<6} {:>5}  {:>5}:{:<32} {}",
        timestamp(SystemTime::now()),
        std::process::id(),
        thread_id(),
        level.tag(),
        module.tag(),
        function,
        message
    )
}

/// The enclosing function's name from `type_name_of_val` of a nested item
/// (`crate::module::func::f` -> `func`), skipping closure segments.
pub fn function_from_type_name(name: &'static str) -> &'static str {
    let name = name.strip_suffix("::f").unwrap_or(name);
    name.rsplit("::").find(|s| !s.starts_with("{{")).unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamp_is_libnrts_format() {
        // 2025-09-19 18:57:20.782962 UTC
        let t = UNIX_EPOCH + Duration::from_micros(1_758_308_240_782_962);
        assert_eq!(timestamp(t), "2025-Sep-19 18:57:20.782962");
        assert_eq!(timestamp(UNIX_EPOCH), "1970-Jan-01 00:00:00.000000");
        // Leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(timestamp(t), "2000-Feb-29 00:00:00.000000");
    }

    #[test]
    fn function_names() {
        assert_eq!(function_from_type_name("nrt::runtime::Runtime::init::f"), "init");
        assert_eq!(function_from_type_name("nrt::load::load::{{closure}}::f"), "load");
        assert_eq!(function_from_type_name("f"), "f");
    }

    #[test]
    fn thread_ids_differ_between_threads() {
        let here = thread_id();
        let there = std::thread::spawn(thread_id).join().unwrap();
        assert_ne!(here, 0);
        assert_ne!(here, there);
    }
}
