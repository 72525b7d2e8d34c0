//! Fuzz target: the environment parsers a process starts with. Random
//! values for the runtime's known `NEURON_RT_*` variables (and a few
//! unknown names) go through `Config::from_env`, random `NEURON_SIM_*`
//! values through `SimConfig::from_vars`, and each value through the
//! `NEURON_SIM_INJECT` fault-list parser. Each must give a configuration or
//! a typed error naming the variable, never a panic.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use nrt_core::config::{Config, Env, KNOWN_VARIABLES};
use nrt_sim::SimConfig;
use nrt_sim::fault::parse_faults;

const SIM_VARIABLES: &[&str] =
    &["NEURON_SIM_INSTANCE", "NEURON_SIM_DETERMINISTIC", "NEURON_SIM_THREADS", "NEURON_SIM_INJECT"];
const OTHER_NAMES: &[&str] = &["NEURON_RT_LOG_LEVEL_NMGR", "NEURON_RT_LOG_LOCATION_TDRV", "NEURON_RT_NOT_A_VAR"];

#[derive(Arbitrary, Debug)]
struct Input {
    runtime: Vec<(u8, String)>,
    sim: Vec<(u8, String)>,
}

fuzz_target!(|input: Input| {
    let names: Vec<&str> = KNOWN_VARIABLES.iter().chain(OTHER_NAMES).copied().collect();
    let env = Env::from_pairs(
        input.runtime.iter().map(|(i, v)| (names[*i as usize % names.len()].to_string(), v.clone())),
    );
    if let Err(e) = Config::from_env(&env) {
        assert!(e.to_string().contains(&e.var), "an error names its variable: {e}");
    }
    let sim: Vec<(&str, &str)> =
        input.sim.iter().map(|(i, v)| (SIM_VARIABLES[*i as usize % SIM_VARIABLES.len()], v.as_str())).collect();
    let _ = SimConfig::from_vars(|k| sim.iter().rev().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()));
    for (_, v) in &sim {
        let _ = parse_faults(v);
    }
});
