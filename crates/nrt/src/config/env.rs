//! The environment the runtime reads its configuration from, as a value:
//! tests build one from pairs instead of mutating the process environment.

use std::collections::BTreeMap;

/// A snapshot of environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl Env {
    /// An empty environment (every variable unset).
    pub fn new() -> Env {
        Env::default()
    }

    /// The process environment now (non-UTF-8 values are converted lossily).
    pub fn from_process() -> Env {
        Env {
            vars: std::env::vars_os()
                .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
                .collect(),
        }
    }

    /// An environment holding exactly these pairs.
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Env {
        Env { vars: pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect() }
    }

    /// Sets a variable (builder style).
    pub fn with(mut self, name: &str, value: &str) -> Env {
        self.vars.insert(name.to_string(), value.to_string());
        self
    }

    /// Sets a variable.
    pub fn set(&mut self, name: &str, value: &str) {
        self.vars.insert(name.to_string(), value.to_string());
    }

    /// Removes a variable.
    pub fn remove(&mut self, name: &str) {
        self.vars.remove(name);
    }

    /// A variable's value, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable whose name starts with `prefix`, sorted by name.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        self.vars
            .range(prefix.to_string()..)
            .take_while(move |(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_iteration() {
        let env = Env::from_pairs([("NEURON_RT_A", "1"), ("NEURON_X", "2"), ("PATH", "/bin"), ("NEURON_RT_B", "3")]);
        let rt: Vec<_> = env.with_prefix("NEURON_RT_").collect();
        assert_eq!(rt, vec![("NEURON_RT_A", "1"), ("NEURON_RT_B", "3")]);
        assert_eq!(env.with_prefix("NEURON_").count(), 3);
        assert_eq!(env.get("PATH"), Some("/bin"));
    }
}
