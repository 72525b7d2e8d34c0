//! Which device backend the runtime brings up (`NRT_DEVICE`): the one
//! table of backend names, shared by the parser (`nrt::config`) and the
//! bring-up that builds the device list (`nrt_ndl::devices`).

use std::fmt;

/// A device backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceBackend {
    /// The simulator in-process (the default).
    #[default]
    Sim,
    /// The simulator behind the emulated Neuron driver, reached through
    /// the driver's ioctl ABI (nrt-ndl).
    EmulatedDriver,
    /// `/dev/neuronN` through the kernel driver (nrt-ndl).
    Neuron,
}

impl DeviceBackend {
    /// Every backend with its `NRT_DEVICE` name.
    pub const ALL: [(DeviceBackend, &'static str); 3] =
        [(DeviceBackend::Sim, "sim"), (DeviceBackend::EmulatedDriver, "emulated-driver"), (DeviceBackend::Neuron, "neuron")];

    /// The `NRT_DEVICE` name.
    pub fn name(self) -> &'static str {
        DeviceBackend::ALL.iter().find(|(b, _)| *b == self).map_or("sim", |(_, n)| n)
    }

    /// The backend called `name`, if any.
    pub fn from_name(name: &str) -> Option<DeviceBackend> {
        DeviceBackend::ALL.iter().find(|(_, n)| *n == name).map(|(b, _)| *b)
    }
}

impl fmt::Display for DeviceBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (b, n) in DeviceBackend::ALL {
            assert_eq!(DeviceBackend::from_name(n), Some(b));
            assert_eq!(b.name(), n);
        }
        assert_eq!(DeviceBackend::from_name("Sim"), None);
    }
}
