//! Every NEURON_RT_* variable the runtime reads: accepted forms and every
//! invalid form (the error names the variable, the value and what is
//! accepted).

use nrt::config::{Config, Env, NumericalErrors};
use nrt::log::{Level, Location, Module};
use std::time::Duration;

fn parse(pairs: &[(&str, &str)]) -> Config {
    Config::from_env(&Env::from_pairs(pairs.iter().copied())).unwrap_or_else(|e| panic!("{pairs:?}: {e}"))
}

#[test]
fn accepted_values_of_every_variable() {
    let c = parse(&[("NEURON_RT_VISIBLE_CORES", "3-5,6")]);
    assert_eq!(c.visible_cores, Some(vec![3, 4, 5, 6]));
    assert_eq!(parse(&[("NEURON_RT_VISIBLE_CORES", "2")]).visible_cores, Some(vec![2]));
    assert_eq!(parse(&[("NEURON_RT_VISIBLE_CORES", "0-3")]).visible_cores, Some(vec![0, 1, 2, 3]));
    assert_eq!(parse(&[("NEURON_RT_VISIBLE_CORES", "5,3,4")]).visible_cores, Some(vec![3, 4, 5]));
    assert_eq!(parse(&[("NEURON_RT_NUM_CORES", "4")]).num_cores, Some(4));
    assert_eq!(parse(&[("NEURON_RT_NUM_CORES", "0")]).num_cores, None);
    assert_eq!(parse(&[("NEURON_RT_VIRTUAL_CORE_SIZE", "1")]).lnc, Some(1));
    assert_eq!(parse(&[("NEURON_LOGICAL_NC_CONFIG", "2")]).lnc, Some(2));
    assert_eq!(parse(&[("NEURON_RT_EXEC_TIMEOUT", "600")]).exec_timeout, Duration::from_secs(600));
    assert_eq!(parse(&[("NEURON_RT_EXEC_TIMEOUT", "0")]).exec_timeout, Duration::ZERO);
    assert!(parse(&[("NEURON_RT_VALIDATE_HASH", "true")]).validate_hash);
    assert!(parse(&[("NEURON_RT_STOCHASTIC_ROUNDING_EN", "1")]).stochastic_rounding);
    assert_eq!(parse(&[("NEURON_RT_STOCHASTIC_ROUNDING_SEED", "4294967295")]).stochastic_rounding_seed, u32::MAX);
    assert!(!parse(&[("NEURON_RT_RESET_CORES", "0")]).reset_cores);
    assert_eq!(parse(&[("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "32")]).xu_compute_max_queued_requests, 32);
    assert_eq!(parse(&[("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "63")]).xu_compute_max_queued_requests, 63);
    assert_eq!(parse(&[("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "100")]).async_exec_max_inflight_requests, 63);
    assert_eq!(parse(&[("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "CRITICAL")]).numerical_errors, NumericalErrors::Critical);
    assert_eq!(parse(&[("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "none")]).numerical_errors, NumericalErrors::Off);
    assert_eq!(parse(&[("NEURON_FAIL_ON_NAN", "1")]).numerical_errors, NumericalErrors::Critical);
    assert!(parse(&[("NEURON_RT_FAKE_INSTANCE_TYPE", "inf2.xlarge")]).fake_instance.is_some());
    assert!(parse(&[("NEURON_RT_ALLOW_LEGACY_NEFF", "TRUE")]).allow_legacy_neff);
    assert!(!parse(&[("NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG", "0")]).oom_log);
    assert!(parse(&[]).oom_log, "the OOM report is on by default");
    assert_eq!(parse(&[("NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "3")]).device_profile_warmup, 3);
    assert_eq!(parse(&[]).device_profile_warmup, 0);
    assert!(parse(&[("NEURON_RT_MULTI_INSTANCE_SHARED_WEIGHTS", "1")]).shared_weights);
    assert_eq!(parse(&[("NEURON_RT_IO_RING_CACHE_SIZE", "32")]).io_ring_cache_size, 32);
    assert_eq!(parse(&[("NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", "0")]).memlog_entries, 0);
    assert_eq!(parse(&[]).memlog_entries, 1 << 20);
    assert_eq!(parse(&[("NEURON_RT_DBG_DMA_PACKETIZATION_SIZE", "65536")]).dma_packetization_size, 65536);
    assert_eq!(parse(&[("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", "4096")]).gpsimd_stdout_queue_bytes, 4096);
    assert!(parse(&[("NEURON_RT_ENABLE_DGE_NOTIFICATIONS", "1")]).dge_notifications);
    assert_eq!(parse(&[("NEURON_RT_CC_NET_TIMEOUT", "0.3")]).collectives.net_timeout, Duration::from_millis(300));
    assert_eq!(parse(&[("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "20")]).collectives.bootstrap_timeout, Duration::from_secs(20));
    assert_eq!(parse(&[]).collectives.net_timeout, Duration::from_secs(600));
    assert!(parse(&[("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "1")]).collectives.sendrecv_enabled);
    assert_eq!(parse(&[("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", "62000")]).collectives.sendrecv_port, Some(62000));
    assert!(!parse(&[("NEURON_RT_INSPECT_HOST_MEMORY", "off")]).inspect.host_memory);
    let c = parse(&[("NEURON_RT_LOG_LEVEL", "QUIET"), ("NEURON_RT_LOG_LEVEL_NRT", "trace"), ("NEURON_RT_LOG_LOCATION_KMGR", "nmgr.log")]);
    assert_eq!((c.log.level(Module::Tdrv), c.log.level(Module::Nrt)), (Level::Quiet, Level::Trace));
    assert_eq!(c.log.location(Module::Nmgr), &Location::File("nmgr.log".into()));
    assert!(c.warnings.is_empty() || c.warnings.iter().all(|w| !w.is_empty()));
}

#[test]
fn every_invalid_form_names_variable_value_and_accepted() {
    let cases: &[(&str, &str, &str)] = &[
        ("NEURON_RT_VISIBLE_CORES", "one", "inclusive range"),
        ("NEURON_RT_VISIBLE_CORES", "1,,2", "inclusive range"),
        ("NEURON_RT_VISIBLE_CORES", "4-2", "ranges must ascend"),
        ("NEURON_RT_VISIBLE_CORES", "-3", "inclusive range"),
        ("NEURON_RT_VISIBLE_CORES", "100000", "each at most 4095"),
        ("NEURON_RT_NUM_CORES", "-1", "a decimal integer from 0 to 4096"),
        ("NEURON_RT_NUM_CORES", "all", "a decimal integer from 0 to 4096"),
        ("NEURON_RT_NUM_CORES", "5000", "a decimal integer from 0 to 4096"),
        ("NEURON_RT_VIRTUAL_CORE_SIZE", "4", "1 or 2"),
        ("NEURON_RT_VIRTUAL_CORE_SIZE", "0", "1 or 2"),
        ("NEURON_LOGICAL_NC_CONFIG", "3", "1 or 2"),
        ("NEURON_LOGICAL_NC_CONFIG", "two", "1 or 2"),
        ("NEURON_RT_EXEC_TIMEOUT", "30s", "a decimal integer from 0 to 2147483647"),
        ("NEURON_RT_EXEC_TIMEOUT", "-5", "a decimal integer from 0 to 2147483647"),
        ("NEURON_RT_EXEC_TIMEOUT", "3000000000", "a decimal integer from 0 to 2147483647"),
        ("NEURON_RT_VALIDATE_HASH", "maybe", "0 or 1"),
        ("NEURON_RT_LOG_LEVEL", "verbose", "ERROR, WARNING (or WARN), INFO, DEBUG, TRACE or QUIET"),
        ("NEURON_RT_LOG_LEVEL_TDRV", "5", "ERROR, WARNING (or WARN)"),
        ("NEURON_RT_LOG_LEVEL_NMGR", "loud", "ERROR, WARNING (or WARN)"),
        ("NEURON_RT_STOCHASTIC_ROUNDING_EN", "2", "0 or 1"),
        ("NEURON_RT_STOCHASTIC_ROUNDING_SEED", "-1", "a decimal integer from 0 to 4294967295"),
        ("NEURON_RT_STOCHASTIC_ROUNDING_SEED", "0x10", "a decimal integer from 0 to 4294967295"),
        ("NEURON_RT_RESET_CORES", "maybe", "0 or 1"),
        ("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "0", "at least 1"),
        ("NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS", "eight", "at least 1"),
        ("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "-3", "at least 0"),
        ("NEURON_RT_NUMERICAL_ERRORS_VERBOSITY", "loud", "critical or none"),
        ("NEURON_FAIL_ON_NAN", "yes please", "0 or 1"),
        ("NEURON_RT_FAKE_INSTANCE_TYPE", "p4d.24xlarge", "trn2.48xlarge"),
        ("NEURON_RT_ALLOW_LEGACY_NEFF", "sometimes", "0 or 1"),
        ("NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG", "x", "0 or 1"),
        ("NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "-1", "from 0 to 2147483647"),
        ("NEURON_RT_INSPECT_DEVICE_PROFILE_NUM_WARMUP", "many", "from 0 to 2147483647"),
        ("NEURON_RT_MULTI_INSTANCE_SHARED_WEIGHTS", "x", "0 or 1"),
        ("NEURON_RT_IO_RING_CACHE_SIZE", "2000", "from 0 to 1024"),
        ("NEURON_RT_DEBUG_MEMLOG_MAX_SIZE", "lots", "from 0 to 16777216"),
        ("NEURON_RT_DBG_DMA_PACKETIZATION_SIZE", "1024", "from 4096 to 1048575"),
        ("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", "3000", "power of two up to 131072"),
        ("NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES", "262144", "from 0 to 131072"),
        ("NEURON_RT_ENABLE_DGE_NOTIFICATIONS", "x", "0 or 1"),
        ("NEURON_RT_CC_NET_TIMEOUT", "0", "a number of seconds greater than 0"),
        ("NEURON_RT_CC_NET_TIMEOUT", "abc", "a number of seconds greater than 0"),
        ("NEURON_RT_CC_BOOTSTRAP_TIMEOUT", "-1", "a number of seconds greater than 0"),
        ("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "maybe", "0 or 1"),
        ("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", "0", "from 1 to 65535"),
        ("NEURON_RT_INSPECT_SYS_TRACE_MAX_EVENTS_PER_NC", "many", "at least 0"),
        ("NEURON_RT_INSPECT_EVENT_FILTER_NC", "a-b", "inclusive range"),
        ("NEURON_RT_INSPECT_EVENT_FILTER_TYPE", "bogus_event", "nc_exec_running"),
        ("NEURON_RT_INSPECT_CPU_UTIL", "sometimes", "0 or 1"),
        ("NEURON_RT_INSPECT_DEVICE_PROFILE", "always", "session"),
    ];
    for &(var, value, accepted) in cases {
        let err = Config::from_env(&Env::new().with(var, value)).expect_err(&format!("{var}={value} accepted"));
        assert_eq!((err.var.as_str(), err.value.as_str()), (var, value));
        assert!(err.accepted.contains(accepted), "{var}={value}: {err}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("{var}=\"{value}\" is not valid: expected ")), "{text}");
        let status: nrt::NrtError = err.into();
        assert_eq!(status.status, nrt::NrtStatus::Invalid);
    }
}

#[test]
fn unknown_names_are_ignored_and_listed() {
    let env = Env::new()
        .with("NEURON_RT_NUM_SOFTWARE_NQS", "??")
        .with("NEURON_RT_INSPECT_PRECACHE_ENABLE", "1")
        .with("NEURON_CC_FLAGS", "--lnc 2")
        .with("NEURON_RT_LOG_LEVEL", "info");
    let c = Config::from_env(&env).unwrap();
    assert_eq!(c.ignored, vec!["NEURON_RT_INSPECT_PRECACHE_ENABLE", "NEURON_RT_NUM_SOFTWARE_NQS"]);
    assert_eq!(c.log.level(Module::Nrt), Level::Info);
}

#[test]
fn the_collectives_variables_are_read_not_ignored() {
    let env = Env::new().with("NEURON_RT_ROOT_COMM_ID", "10.0.0.1:62182").with("NEURON_RT_CC_NET_TIMEOUT", "5");
    let c = Config::from_env(&env).unwrap();
    assert!(c.ignored.is_empty(), "{:?}", c.ignored);
    assert_eq!(c.collectives.root_comm_id, Some(nrt::config::RootComm::Addr("10.0.0.1:62182".parse().unwrap())));
    assert_eq!(c.collectives.net_timeout, Duration::from_secs(5));
    // A malformed root does not fail init (launchers export it to every
    // process); it is a warning now and the bootstrap's error later.
    let c = Config::from_env(&Env::new().with("NEURON_RT_ROOT_COMM_ID", "localhost:48620")).unwrap();
    assert!(matches!(c.collectives.root_comm_id, Some(nrt::config::RootComm::Malformed { .. })));
    assert!(c.warnings.iter().any(|w| w.contains("Invalid NEURON_RT_ROOT_COMM_ID [localhost:48620]")), "{:?}", c.warnings);
}

#[test]
fn every_known_variable_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md"))
        .expect("docs/configuration.md");
    for var in nrt::config::KNOWN_VARIABLES {
        assert!(doc.contains(&format!("`{var}`")), "{var} missing from docs/configuration.md");
    }
    for form in ["NEURON_RT_LOG_LEVEL_<MOD>", "NEURON_RT_LOG_LOCATION_<MOD>"] {
        assert!(doc.contains(form), "{form} missing from docs/configuration.md");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn known_name() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(nrt::config::KNOWN_VARIABLES).prop_map(str::to_string),
            proptest::sample::select(&["NRT", "TDRV", "NMGR", "KMGR", "NEFF", "HAL", "CCOM"][..])
                .prop_flat_map(|m| proptest::sample::select(&["NEURON_RT_LOG_LEVEL_", "NEURON_RT_LOG_LOCATION_"][..]).prop_map(move |p| format!("{p}{m}"))),
            "NEURON_RT_[A-Z_]{1,12}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any environment either parses or yields an error naming one of
        /// its variables and that variable's value; nothing panics.
        #[test]
        fn any_environment_parses_or_names_the_culprit(
            vars in proptest::collection::btree_map(known_name(), "[ -~]{0,12}", 0..8)
        ) {
            let env = Env::from_pairs(vars.clone());
            match Config::from_env(&env) {
                Ok(c) => {
                    prop_assert!(c.xu_compute_max_queued_requests >= 1 && c.xu_compute_max_queued_requests <= 63);
                    prop_assert!(c.async_exec_max_inflight_requests <= 63);
                    prop_assert!(matches!(c.lnc, None | Some(1) | Some(2)));
                    if let Some(v) = &c.visible_cores {
                        prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
                    }
                }
                Err(e) => {
                    prop_assert_eq!(vars.get(&e.var).map(String::as_str), Some(e.value.as_str()));
                    prop_assert!(!e.accepted.is_empty());
                }
            }
        }

        /// Level and location parsing never panic, and levels round-trip
        /// through their tags.
        #[test]
        fn levels_and_locations(s in "[ -~]{0,10}") {
            if let Ok(l) = s.parse::<Level>() {
                prop_assert_eq!(l.tag().parse::<Level>(), Ok(l));
            }
            let _ = Location::parse(&s);
        }
    }
}
