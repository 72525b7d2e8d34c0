//! Typed readers for single NEURON_RT_* values. Each returns a
//! [`ConfigError`] naming the variable, the value and what is accepted.

use std::fmt;

/// A NEURON_RT_* variable with a value the runtime does not accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?} is not valid: expected {accepted}")]
pub struct ConfigError {
    /// The variable.
    pub var: String,
    /// Its value.
    pub value: String,
    /// What would have been accepted.
    pub accepted: String,
}

impl ConfigError {
    /// An error for `var`=`value`, accepting `accepted`.
    pub fn new(var: &str, value: &str, accepted: impl fmt::Display) -> ConfigError {
        ConfigError { var: var.to_string(), value: value.to_string(), accepted: accepted.to_string() }
    }
}

impl From<ConfigError> for crate::status::NrtError {
    fn from(e: ConfigError) -> Self {
        crate::status::NrtError::invalid(e.to_string())
    }
}

/// What boolean variables accept.
pub const BOOL_ACCEPTED: &str = "0 or 1 (also true/false, yes/no, on/off; case-insensitive)";

/// A boolean: 0/1, true/false, yes/no, on/off.
pub fn parse_bool(var: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(var, value, BOOL_ACCEPTED)),
    }
}

/// A decimal unsigned integer in `min..=max`.
pub fn parse_u64_in(var: &str, value: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let accepted = || format!("a decimal integer from {min} to {max}");
    let v: u64 = value.trim().parse().map_err(|_| ConfigError::new(var, value, accepted()))?;
    if v < min || v > max {
        return Err(ConfigError::new(var, value, accepted()));
    }
    Ok(v)
}

/// A decimal unsigned integer of at least `min` (no upper bound besides
/// u64), for values that are clamped rather than rejected when large.
pub fn parse_u64_min(var: &str, value: &str, min: u64) -> Result<u64, ConfigError> {
    let accepted = || format!("a decimal integer of at least {min}");
    let v: u64 = value.trim().parse().map_err(|_| ConfigError::new(var, value, accepted()))?;
    if v < min {
        return Err(ConfigError::new(var, value, accepted()));
    }
    Ok(v)
}

/// What the collectives' bounds accept.
pub const SECONDS_ACCEPTED: &str = "a number of seconds greater than 0 and below 1e9 (decimals allowed, e.g. 30 or 0.5)";

/// A duration in seconds, decimals allowed, greater than 0 and below 1e9:
/// the rule of this runtime's own bounds (`NEURON_RT_CC_*_TIMEOUT`), which
/// tests and launch scripts set below a second.
pub fn parse_seconds(var: &str, value: &str) -> Result<std::time::Duration, ConfigError> {
    let bad = || ConfigError::new(var, value, SECONDS_ACCEPTED);
    let s: f64 = value.trim().parse().map_err(|_| bad())?;
    if !(s.is_finite() && s > 0.0 && s < 1e9) {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs_f64(s))
}

/// What NEURON_RT_VISIBLE_CORES accepts.
pub const CORE_LIST_ACCEPTED: &str =
    "core indices as a single index (2), an inclusive range (0-3), a comma list (3,4,5) or a mix (3-5,6)";

/// Largest core index accepted in a core list (keeps ranges bounded).
pub const MAX_CORE_INDEX: u32 = 4095;

/// A core list like `3-5,6`: sorted, duplicates removed.
pub fn parse_core_list(var: &str, value: &str) -> Result<Vec<u32>, ConfigError> {
    let err = || ConfigError::new(var, value, CORE_LIST_ACCEPTED);
    let index = |s: &str| -> Result<u32, ConfigError> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let v: u32 = s.parse().map_err(|_| err())?;
        if v > MAX_CORE_INDEX {
            return Err(ConfigError::new(var, value, format!("{CORE_LIST_ACCEPTED}, each at most {MAX_CORE_INDEX}")));
        }
        Ok(v)
    };
    let mut cores = Vec::new();
    for part in value.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (index(a)?, index(b)?);
                if a > b {
                    return Err(ConfigError::new(var, value, format!("{CORE_LIST_ACCEPTED}; ranges must ascend")));
                }
                cores.extend(a..=b);
            }
            None => cores.push(index(part)?),
        }
    }
    cores.sort_unstable();
    cores.dedup();
    Ok(cores)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bools() {
        for t in ["1", "true", "TRUE", "yes", "On"] {
            assert_eq!(parse_bool("V", t), Ok(true));
        }
        for f in ["0", "false", "FALSE", "no", "off"] {
            assert_eq!(parse_bool("V", f), Ok(false));
        }
        let e = parse_bool("NEURON_RT_VALIDATE_HASH", "maybe").unwrap_err();
        assert_eq!(e.to_string(), format!("NEURON_RT_VALIDATE_HASH=\"maybe\" is not valid: expected {BOOL_ACCEPTED}"));
    }

    #[test]
    fn core_lists() {
        assert_eq!(parse_core_list("V", "2"), Ok(vec![2]));
        assert_eq!(parse_core_list("V", "0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_core_list("V", "5,3,4"), Ok(vec![3, 4, 5]));
        assert_eq!(parse_core_list("V", "3-5,6"), Ok(vec![3, 4, 5, 6]));
        assert_eq!(parse_core_list("V", " 1 , 1-2 "), Ok(vec![1, 2]));
        for bad in ["", "a", "1,", "-1", "3-1", "1-2-3", "1 2", "+1", "99999"] {
            let e = parse_core_list("NEURON_RT_VISIBLE_CORES", bad).unwrap_err();
            assert_eq!(e.var, "NEURON_RT_VISIBLE_CORES");
            assert_eq!(e.value, bad);
            assert!(e.accepted.contains("inclusive range"), "{e}");
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_u64_in("V", "30", 0, 100), Ok(30));
        assert!(parse_u64_in("V", "101", 0, 100).unwrap_err().accepted.contains("from 0 to 100"));
        assert!(parse_u64_in("V", "-1", 0, 100).is_err());
        assert!(parse_u64_in("V", "1.5", 0, 100).is_err());
        assert_eq!(parse_u64_min("V", "64", 1), Ok(64));
        assert!(parse_u64_min("V", "0", 1).is_err());
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("V", "30"), Ok(std::time::Duration::from_secs(30)));
        assert_eq!(parse_seconds("V", " 0.5 "), Ok(std::time::Duration::from_millis(500)));
        for bad in ["0", "-1", "abc", "", "inf", "NaN", "1e9"] {
            let e = parse_seconds("NEURON_RT_CC_NET_TIMEOUT", bad).unwrap_err();
            assert!(e.var == "NEURON_RT_CC_NET_TIMEOUT" && e.accepted.contains("greater than 0"), "{bad}: {e}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn core_list_never_panics(s in "[0-9,\\- a]{0,16}") {
            let _ = parse_core_list("V", &s);
        }

        #[test]
        fn core_list_roundtrips(set in proptest::collection::btree_set(0u32..64, 1..12)) {
            let text = set.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
            let parsed = parse_core_list("V", &text).unwrap();
            prop_assert_eq!(parsed, set.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn ranges_expand(a in 0u32..100, len in 0u32..20) {
            let parsed = parse_core_list("V", &format!("{a}-{}", a + len)).unwrap();
            prop_assert_eq!(parsed, (a..=a + len).collect::<Vec<_>>());
        }
    }
}
