//! One rule per variable: a scan of every crate's library sources (test
//! code excluded) for reads of the runtime's variables. `nrt::config` is
//! the only reader of `NEURON_RT_*`, `NEURON_LOGICAL_NC_CONFIG` and
//! `NEURON_FAIL_ON_NAN`; every such name a source mentions is one it
//! knows (and so one docs/configuration.md documents, see tests/config.rs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CRATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Environment reads whose variable is not a literal, each with why it is
/// not one of the runtime's variables.
const NON_LITERAL_READS: &[(&str, &str, &str)] = &[
    ("nrt-sim/src/config.rs", "k", "SimConfig::from_vars asks for NEURON_SIM_* names only"),
    ("nrt-py/src/sim.rs", "k", "the NEURON_SIM_* names SimConfig::from_vars asks for"),
    ("nrt-cli/src/cc_cmd.rs", "var", "NRT_CC_TEST_WORKER or Open MPI's rank variable"),
    ("nrt-cli/src/local_workers.rs", "var", "the launcher's worker-index variable (NRT_CC_TEST_WORKER, NRT_RUN_RANKS_WORKER)"),
];

fn is_runtime_variable(name: &str) -> bool {
    (name.starts_with("NEURON_RT_") && !name.ends_with('_')) || name == "NEURON_LOGICAL_NC_CONFIG" || name == "NEURON_FAIL_ON_NAN"
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") && p.file_name().is_some_and(|n| n != "tests.rs") {
            out.push(p);
        }
    }
}

/// Every library source file (relative name, text without its test
/// module) outside `nrt::config`.
fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(CRATES).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    let root = Path::new(CRATES).canonicalize().unwrap();
    let mut out = Vec::new();
    for f in files {
        let rel = f.canonicalize().unwrap().strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        if rel.starts_with("nrt/src/config/") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        out.push((rel, text));
    }
    assert!(out.len() > 100, "found only {} source files under {CRATES}", out.len());
    out
}

/// `const NAME: &str = "VALUE";` across the sources.
fn string_consts(sources: &[(String, String)]) -> BTreeMap<String, String> {
    let mut consts = BTreeMap::new();
    for (_, text) in sources {
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("pub ").or(Some(line.trim())).and_then(|l| l.strip_prefix("const ")) else { continue };
            if let Some((name, value)) = rest.split_once(": &str = \"").or_else(|| rest.split_once(": &'static str = \"")) {
                if let Some(v) = value.strip_suffix("\";") {
                    consts.insert(name.trim().to_string(), v.to_string());
                }
            }
        }
    }
    consts
}

/// The first argument of each call `name(` in `text`, with its line.
fn first_args<'a>(text: &'a str, call: &str) -> Vec<(usize, &'a str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(call) {
        let start = from + i;
        let arg_start = start + call.len();
        let before = text[..start].chars().next_back();
        from = arg_start;
        if call.starts_with(char::is_alphanumeric) && before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // part of a longer name (`forget(`, `env::vars(`)
        }
        let rest = &text[arg_start..];
        let end = rest.find([',', ')']).unwrap_or(rest.len());
        let line = text[..start].lines().count();
        out.push((line, rest[..end].trim()));
    }
    out
}

#[test]
fn no_crate_but_config_reads_a_runtime_variable() {
    let sources = sources();
    let consts = string_consts(&sources);
    let names = |arg: &str| -> Option<String> {
        let arg = arg.trim_start_matches('&');
        match arg.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
            Some(lit) => Some(lit.to_string()),
            None => consts.get(arg.rsplit("::").next().unwrap_or(arg)).cloned(),
        }
    };
    let mut bad = Vec::new();
    for (file, text) in &sources {
        for call in ["env::var(", "env::var_os(", "getenv(", ".env().get(", "get(", "get_or("] {
            for (line, arg) in first_args(text, call) {
                match names(arg) {
                    Some(v) if is_runtime_variable(&v) => bad.push(format!("{file}:{line}: {call}{arg}) reads {v}")),
                    Some(_) => {}
                    None if call.contains("env") && !NON_LITERAL_READS.iter().any(|(f, a, _)| f == file && *a == arg) => {
                        bad.push(format!("{file}:{line}: {call}{arg}) reads a variable the scan cannot name"))
                    }
                    None => {}
                }
            }
        }
        if text.contains("with_prefix(\"NEURON_RT_") {
            bad.push(format!("{file}: lists the NEURON_RT_* variables"));
        }
    }
    assert!(bad.is_empty(), "runtime variables read outside nrt::config (read them there and pass the value):\n{}", bad.join("\n"));
}

#[test]
fn every_runtime_variable_a_source_names_is_one_config_knows() {
    let mut unknown = std::collections::BTreeSet::new();
    for (file, text) in sources() {
        let bytes = text.as_bytes();
        let mut from = 0;
        while let Some(i) = text[from..].find("NEURON_") {
            let start = from + i;
            let end = start + bytes[start..].iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_').count();
            from = end;
            let name = &text[start..end];
            let per_module = ["NEURON_RT_LOG_LEVEL_", "NEURON_RT_LOG_LOCATION_"].iter().any(|p| name.starts_with(p));
            if is_runtime_variable(name) && !per_module && !nrt::config::KNOWN_VARIABLES.contains(&name) {
                unknown.insert(format!("{name} ({file})"));
            }
        }
    }
    assert!(unknown.is_empty(), "variables the sources name but nrt::config does not read:\n{}", unknown.into_iter().collect::<Vec<_>>().join("\n"));
}
