//! The one runtime bring-up every entry point shares: libnrt.so's
//! `nrt_init`, Python's session and the `nrt` command all start the
//! runtime here, so they read the same configuration, honour
//! `NEURON_RT_VISIBLE_CORES` / `NEURON_LOGICAL_NC_CONFIG` and reserve
//! their cores the same way ([`Runtime::init`]), and get the same model
//! hosts and execution units around it.

use crate::load::ModelHost;
use crate::status::{NrtError, NrtResult};
use crate::xu::{XuSettings, Xus};
use crate::{Runtime, RuntimeOptions};
use std::sync::Arc;

/// An initialised runtime with what loading and running models needs:
/// one model host per device (sharing the runtime's model database; none
/// in no-device mode, where loads keep no device program) and the
/// execution units of the asynchronous paths.
pub struct RuntimeHosts {
    /// The runtime.
    pub rt: Arc<Runtime>,
    /// Model hosts by device position.
    pub hosts: Vec<ModelHost>,
    /// The execution units (explicit `nrta_*`, implicit async).
    pub xus: Xus,
}

impl RuntimeHosts {
    /// `nrt_init`: initialises the runtime from `options` and prepares it;
    /// on failure nothing stays initialised or reserved.
    pub fn start(options: RuntimeOptions) -> NrtResult<RuntimeHosts> {
        let rt = Arc::new(Runtime::init(options)?);
        RuntimeHosts::around(Arc::clone(&rt)).inspect_err(|_| {
            let _ = rt.close();
        })
    }

    /// The hosts and execution units around a runtime initialised
    /// elsewhere (the C ABI's lifecycle initialises it); the caller closes
    /// the runtime when this fails.
    pub fn around(rt: Arc<Runtime>) -> NrtResult<RuntimeHosts> {
        let hosts = if rt.is_fake() {
            Vec::new()
        } else {
            let models = rt.shared_models();
            (0..rt.devices().len()).map(|d| ModelHost::for_runtime_device(&rt, d, Arc::clone(&models))).collect::<NrtResult<Vec<_>>>()?
        };
        let xus = Xus::new(XuSettings::for_runtime(&rt));
        Ok(RuntimeHosts { rt, hosts, xus })
    }

    /// The host of device position `d`.
    pub fn host(&self, d: usize) -> NrtResult<&ModelHost> {
        host_of(&self.rt, &self.hosts, d)
    }

    /// Stops the execution units, closes the hosts, then the runtime.
    pub fn close(&self) -> NrtResult<()> {
        self.xus.shutdown();
        let hosts = close_hosts(&self.hosts);
        let rt = self.rt.close();
        hosts.and(rt)
    }
}

/// The host of device position `d` among `hosts`, with the message
/// libnrt's no-device mode gives.
pub fn host_of<'a>(rt: &Runtime, hosts: &'a [ModelHost], d: usize) -> NrtResult<&'a ModelHost> {
    hosts.get(d).ok_or_else(|| {
        if rt.is_fake() {
            NrtError::invalid("no device is attached in no-device mode (NEURON_RT_FAKE_INSTANCE_TYPE); models and device tensors need a device")
        } else {
            NrtError::invalid(format!("device {d} does not exist"))
        }
    })
}

/// The first device position among `hosts` with visible logical cores:
/// where a load onto "the first free logical core" (-1) goes.
pub fn first_visible_device(hosts: &[ModelHost]) -> NrtResult<usize> {
    hosts
        .iter()
        .position(|h| !h.vcores().is_empty())
        .ok_or_else(|| NrtError::new(crate::NrtStatus::LoadNotEnoughNc, "no logical cores are visible to load onto"))
}

/// Closes every host (their cores' state), returning the first error; the
/// runtime itself is closed by its owner.
pub fn close_hosts(hosts: &[ModelHost]) -> NrtResult<()> {
    let mut first = Ok(());
    for h in hosts {
        if let Err(e) = h.close()
            && first.is_ok()
        {
            first = Err(e);
        }
    }
    first
}
