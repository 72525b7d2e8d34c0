//! The "infodump" block libnrt prints on any API failure: version,
//! instance, failing call, LNC, visible cores and every NEURON_*
//! variable, fenced by "cut here" rulers so users paste it whole into
//! support requests.

use crate::status::NrtStatus;
use std::fmt::Write;

/// The ruler above and below the block.
pub const CUT_HERE: &str = "-------------8<-----------[ cut here ]-----------8<-------------";
/// The block's title line.
pub const TITLE: &str = "Neuron runtime information - please include in any support request";

/// Everything the block shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Infodump {
    /// Runtime version text (`nrt-rs 0.1.0.0`).
    pub version: String,
    /// Git hash the runtime was built from.
    pub git_sha: String,
    /// Device backend (`sim`, `neuron`, or `none` in no-device mode).
    pub backend: String,
    /// Instance description.
    pub instance: String,
    /// The failing status and API call, if any.
    pub failure: Option<(NrtStatus, String)>,
    /// LNC size, if known.
    pub lnc: Option<u32>,
    /// Visible logical cores (`0-3`), if known.
    pub visible_cores: Option<String>,
    /// NEURON_* variables, sorted.
    pub env: Vec<(String, String)>,
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

impl Infodump {
    /// The block, one item per line.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{CUT_HERE}");
        let _ = writeln!(s, "{TITLE}");
        let _ = writeln!(s, "NRT version: {} (git {})", self.version, self.git_sha);
        let _ = writeln!(s, "Device backend: {}", self.backend);
        let _ = writeln!(s, "Instance: {}", self.instance);
        let _ = writeln!(s, "Kernel: {}", read_trimmed("/proc/sys/kernel/osrelease"));
        let _ = writeln!(s, "Node name: {}", read_trimmed("/proc/sys/kernel/hostname"));
        if let Some((status, api)) = &self.failure {
            let _ = writeln!(s, "Failure: {} in {api}()", status.name());
        }
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
        let _ = writeln!(s, "LNC: {}", opt(&self.lnc.map(|l| l.to_string())));
        let _ = writeln!(s, "Visible cores: {}", opt(&self.visible_cores));
        let _ = writeln!(s, "Environment:");
        if self.env.is_empty() {
            let _ = writeln!(s, "  (no NEURON_* variables set)");
        }
        for (k, v) in &self.env {
            let _ = writeln!(s, "  {k}={v}");
        }
        let _ = writeln!(s, "{CUT_HERE}");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_is_fenced_and_complete() {
        let d = Infodump {
            version: "nrt-rs 0.1.0.0".into(),
            git_sha: "abc".into(),
            backend: "sim".into(),
            instance: "trn2".into(),
            failure: Some((NrtStatus::ExecOob, "nrt_execute".into())),
            lnc: Some(2),
            visible_cores: Some("0-3".into()),
            env: vec![("NEURON_RT_LOG_LEVEL".into(), "INFO".into())],
        };
        let text = d.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CUT_HERE);
        assert_eq!(lines[1], TITLE);
        assert_eq!(*lines.last().unwrap(), CUT_HERE);
        assert!(text.contains("Failure: NRT_EXEC_OOB in nrt_execute()"));
        assert!(text.contains("LNC: 2\nVisible cores: 0-3\n"));
        assert!(text.contains("  NEURON_RT_LOG_LEVEL=INFO"));
    }
}
