//! Logging configuration end to end: per-module levels and file
//! destinations from the environment, and libnrt's line format. One test,
//! because log settings are process-wide.

use nrt::config::{Config, Env};
use nrt::log::{self, Level, Module};
use nrt::{Runtime, RuntimeOptions};

/// Checks `YYYY-Mon-DD HH:MM:SS.ffffff PID:TID LEVEL MODULE:function message`
/// and returns (level, module, function, message).
fn parse_line(line: &str) -> (String, String, String, String) {
    let mut it = line.split_whitespace();
    let date = it.next().expect("date");
    let d: Vec<&str> = date.split('-').collect();
    assert_eq!(d.len(), 3, "{line}");
    assert!(d[0].len() == 4 && d[0].bytes().all(|b| b.is_ascii_digit()), "{line}");
    assert!(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].contains(&d[1]), "{line}");
    assert!(d[2].len() == 2 && d[2].bytes().all(|b| b.is_ascii_digit()), "{line}");
    let time = it.next().expect("time");
    let (hms, frac) = time.split_once('.').expect("fraction");
    assert!(hms.len() == 8 && hms.split(':').all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit())), "{line}");
    assert!(frac.len() == 6 && frac.bytes().all(|b| b.is_ascii_digit()), "{line}");
    let ids = it.next().expect("pid:tid");
    let (pid, tid) = ids.split_once(':').expect("pid:tid");
    assert_eq!(pid, std::process::id().to_string(), "{line}");
    assert!(tid.parse::<u64>().is_ok(), "{line}");
    let level = it.next().expect("level").to_string();
    let (module, function) = it.next().expect("module:function").split_once(':').expect("module:function");
    let message = it.collect::<Vec<_>>().join(" ");
    (level, module.to_string(), function.to_string(), message)
}

#[test]
fn per_module_levels_and_files() {
    let dir = std::env::temp_dir().join(format!("nrt-logtest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let all = dir.join("all.log");
    let tdrv = dir.join("tdrv.log");
    let _ = std::fs::remove_file(&all);
    let _ = std::fs::remove_file(&tdrv);
    let env = Env::new()
        .with("NEURON_RT_LOG_LEVEL", "WARNING")
        .with("NEURON_RT_LOG_LEVEL_TDRV", "debug")
        .with("NEURON_RT_LOG_LEVEL_NEFF", "QUIET")
        .with("NEURON_RT_LOG_LOCATION", all.to_str().unwrap())
        .with("NEURON_RT_LOG_LOCATION_TDRV", tdrv.to_str().unwrap());
    let config = Config::from_env(&env).unwrap();
    log::configure(&config.log).unwrap();
    assert_eq!(log::level_of(Module::Tdrv), Level::Debug);
    assert!(log::enabled(Module::Nrt, Level::Warn) && !log::enabled(Module::Nrt, Level::Info));

    fn program_stage() {
        nrt::log_debug!(Module::Tdrv, "staged {} bytes", 4096);
        nrt::log_trace!(Module::Tdrv, "not at trace");
    }
    program_stage();
    nrt::log_warn!(Module::Nrt, "a warning");
    nrt::log_info!(Module::Nrt, "below the NRT level");
    nrt::log_error!(Module::Neff, "quiet module");
    log::write(Level::Error, Module::Nmgr, "nrt_load", format_args!("Failed to load NN: {}, err: {}", "x.neff", 2));

    let tdrv_text = std::fs::read_to_string(&tdrv).unwrap();
    let tdrv_lines: Vec<&str> = tdrv_text.lines().collect();
    assert_eq!(tdrv_lines.len(), 1, "{tdrv_text}");
    assert_eq!(
        parse_line(tdrv_lines[0]),
        ("DEBUG".into(), "TDRV".into(), "program_stage".into(), "staged 4096 bytes".into())
    );
    let all_text = std::fs::read_to_string(&all).unwrap();
    let all_lines: Vec<&str> = all_text.lines().collect();
    assert_eq!(all_lines.len(), 2, "{all_text}");
    let (level, module, function, message) = parse_line(all_lines[0]);
    assert_eq!((level.as_str(), module.as_str(), message.as_str()), ("WARN", "NRT", "a warning"));
    assert!(function.starts_with("per_module_levels_and_files"), "{function}");
    assert_eq!(
        parse_line(all_lines[1]),
        ("ERROR".into(), "NMGR".into(), "nrt_load".into(), "Failed to load NN: x.neff, err: 2".into())
    );

    // A log file that cannot be opened fails init with NRT_INVALID naming the variable.
    let env = Env::new()
        .with("NEURON_RT_FAKE_INSTANCE_TYPE", "trn2")
        .with("NEURON_RT_LOG_LOCATION_TDRV", "/nonexistent-dir/x/tdrv.log");
    let err = Runtime::init(RuntimeOptions::new(Vec::new(), env)).unwrap_err();
    assert_eq!(err.status, nrt::NrtStatus::Invalid);
    assert!(err.message.starts_with("NEURON_RT_LOG_LOCATION_TDRV: cannot open log file /nonexistent-dir/x/tdrv.log"), "{err}");
    // ...and left the previous settings alone.
    assert_eq!(log::level_of(Module::Tdrv), Level::Debug);
    log::configure(&log::LogConfig::default()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
