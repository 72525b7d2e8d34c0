//! The nrt-hal conformance suite, run against the simulator in its
//! configurations: trn2 with worker threads (the default), trn2
//! deterministic, and a small trn1.

use nrt_hal::Device;
use nrt_sim::{SimConfig, SimDevice};
use std::sync::atomic::{AtomicU32, Ordering};

fn unique_namespace(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("conf-{tag}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

fn lock_dir() -> std::path::PathBuf {
    std::env::temp_dir().join("nrt-sim-conformance")
}

mod trn2_pool {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder().locks(lock_dir(), &unique_namespace("pool")).build();
        Box::new(SimDevice::new(&cfg, 0))
    }
    nrt_hal::device_conformance_tests!(make);
}

mod trn2_deterministic {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder().deterministic(true).locks(lock_dir(), &unique_namespace("det")).build();
        Box::new(SimDevice::new(&cfg, 0))
    }
    nrt_hal::device_conformance_tests!(make);
}

mod trn1_small {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder()
            .instance("trn1.2xlarge")
            .unwrap()
            .hbm_bytes_per_channel(64 << 20)
            .host_memory_bytes(16 << 20)
            .threads(1)
            .locks(lock_dir(), &unique_namespace("trn1"))
            .build();
        Box::new(SimDevice::new(&cfg, 0))
    }
    nrt_hal::device_conformance_tests!(make);
}

mod inf2_deterministic {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder()
            .instance("inf2.xlarge")
            .unwrap()
            .deterministic(true)
            .hbm_bytes_per_channel(32 << 20)
            .locks(lock_dir(), &unique_namespace("inf2"))
            .build();
        Box::new(SimDevice::new(&cfg, 0))
    }
    nrt_hal::device_conformance_tests!(make);
}

mod trn3_pool {
    use super::*;
    fn make() -> Box<dyn Device> {
        let cfg = SimConfig::builder().arch(nrt_hal::Arch::Trn3).locks(lock_dir(), &unique_namespace("trn3")).build();
        Box::new(SimDevice::new(&cfg, 0))
    }
    nrt_hal::device_conformance_tests!(make);
}
