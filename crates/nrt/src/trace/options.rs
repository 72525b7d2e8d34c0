//! What a system-trace session captures ([`TraceConfig`]) and what one
//! fetch returns ([`FetchOptions`]), with libnrt's defaults, plus the
//! event-type filter grammar of `NEURON_RT_INSPECT_EVENT_FILTER_TYPE`
//! (read by `crate::config::InspectSession`).

use super::types::{EventType, Group};
use crate::status::{NrtError, NrtResult};
use std::collections::BTreeSet;

/// Ring capacity per logical core when nothing says otherwise
/// (NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC's default).
pub const DEFAULT_MAX_EVENTS_PER_NC: u64 = 1_000_000;

/// A session's configuration (`nrt_sys_trace_config_t`): all cores and
/// all event types enabled, [`DEFAULT_MAX_EVENTS_PER_NC`] events per core.
/// A session copies it at start; the caller may free it right after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// Ring capacity per logical core (0 is taken as 1).
    pub max_events_per_nc: u64,
    /// Logical cores whose capture was turned off (default: none).
    pub disabled_cores: BTreeSet<u32>,
    /// When set, only these logical cores are captured (the
    /// NEURON_RT_INSPECT_EVENT_FILTER_NC list); `disabled_cores` still applies.
    pub only_cores: Option<BTreeSet<u32>>,
    /// Enabled event types ([`EventType::bit`] mask).
    pub types: u32,
}

impl Default for TraceConfig {
    fn default() -> TraceConfig {
        TraceConfig { max_events_per_nc: DEFAULT_MAX_EVENTS_PER_NC, disabled_cores: BTreeSet::new(), only_cores: None, types: EventType::ALL_MASK }
    }
}

impl TraceConfig {
    /// Turns capture on core `nc` on or off.
    pub fn set_core(&mut self, nc: u32, enabled: bool) {
        if enabled {
            self.disabled_cores.remove(&nc);
            if let Some(only) = self.only_cores.as_mut() {
                only.insert(nc);
            }
        } else {
            self.disabled_cores.insert(nc);
        }
    }

    /// Whether core `nc` is captured.
    pub fn core_enabled(&self, nc: u32) -> bool {
        !self.disabled_cores.contains(&nc) && self.only_cores.as_ref().is_none_or(|o| o.contains(&nc))
    }

    /// Turns one event type on or off by name; NRT_INVALID naming the
    /// known types for anything else.
    pub fn set_type(&mut self, name: &str, enabled: bool) -> NrtResult<()> {
        let t = EventType::from_name(name).ok_or_else(|| unknown_type(name))?;
        if enabled {
            self.types |= t.bit();
        } else {
            self.types &= !t.bit();
        }
        Ok(())
    }

    /// The enabled types, in list order.
    pub fn enabled_types(&self) -> Vec<EventType> {
        EventType::in_mask(self.types).collect()
    }
}

/// What one fetch returns (`nrt_sys_trace_fetch_options_t`): every
/// captured core, every event (0 = no cap per core).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FetchOptions {
    /// At most this many events per core (0: all).
    pub max_events_per_nc: u64,
    /// Only this logical core.
    pub nc_idx: Option<u32>,
}

fn unknown_type(name: &str) -> NrtError {
    let known: Vec<&str> = EventType::ALL.iter().map(|t| t.name()).collect();
    NrtError::invalid(format!("unknown system trace event type {name:?}; known types: {}", known.join(", ")))
}

/// Names, the groups `hardware` / `software`, and `^name` / `^group`
/// exclusions (`hardware,^cc_running`). Only exclusions means "everything
/// but".
pub fn parse_type_filter(v: &str) -> NrtResult<u32> {
    let mut include = 0u32;
    let mut exclude = 0u32;
    let mut any_include = false;
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (neg, name) = match part.strip_prefix('^') {
            Some(n) => (true, n.trim()),
            None => (false, part),
        };
        let mask = match name {
            "hardware" => EventType::group_mask(Group::Hardware),
            "software" => EventType::group_mask(Group::Software),
            n => EventType::from_name(n).map(EventType::bit).ok_or_else(|| unknown_type(n))?,
        };
        if neg {
            exclude |= mask;
        } else {
            any_include = true;
            include |= mask;
        }
    }
    let base = if any_include { include } else { EventType::ALL_MASK };
    Ok(base & !exclude)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_capture_everything_everywhere() {
        let c = TraceConfig::default();
        assert_eq!(c.max_events_per_nc, 1_000_000);
        assert!(c.core_enabled(0) && c.core_enabled(63));
        assert_eq!(c.enabled_types().len(), EventType::ALL.len());
    }

    #[test]
    fn cores_and_types_toggle() {
        let mut c = TraceConfig::default();
        c.set_core(1, false);
        assert!(!c.core_enabled(1) && c.core_enabled(0));
        c.set_core(1, true);
        assert!(c.core_enabled(1));
        c.set_type("nrt_execute", false).unwrap();
        assert!(!c.enabled_types().contains(&EventType::NrtExecute));
        let e = c.set_type("bogus", true).unwrap_err();
        assert!(e.message.contains("bogus") && e.message.contains("nc_exec_running"), "{}", e.message);
    }

    #[test]
    fn type_filters_parse_as_documented() {
        let hw = parse_type_filter("hardware,^cc_running").unwrap();
        assert!(hw & EventType::NcExecRunning.bit() != 0 && hw & EventType::CcRunning.bit() == 0 && hw & EventType::NrtLoad.bit() == 0);
        assert_eq!(parse_type_filter("^software").unwrap(), EventType::group_mask(Group::Hardware));
        assert!(parse_type_filter("nope").unwrap_err().message.contains("nc_exec_running"));
    }
}
