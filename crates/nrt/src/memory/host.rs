//! Host memory of the process's host tensors, for the tools: libnrt takes
//! host tensors from the driver, which counts them as host memory of
//! category `tensors` (`stats/memory_usage/host_mem/tensors`). Here they
//! are heap buffers; every one made or dropped moves one process-wide
//! count, published into the datastore of the device the running
//! runtime named ([`publish_to`]), where `nrt monitor` and `nrt top` read
//! the process's host memory.

use nrt_hal::Device;
use nrt_hal::status::MemCategory;
use std::sync::{Arc, Mutex, Weak};

struct Sink {
    /// Bytes of live host tensors.
    bytes: u64,
    /// The device whose datastore entry shows them.
    device: Option<Weak<dyn Device>>,
}

static SINK: Mutex<Sink> = Mutex::new(Sink { bytes: 0, device: None });

fn publish(device: &Option<Weak<dyn Device>>, delta: i64) {
    if let Some(d) = device.as_ref().and_then(Weak::upgrade)
        && let Some(s) = d.status()
    {
        s.add_memory(None, MemCategory::Tensors, delta);
    }
}

/// A host tensor of `bytes` was made (`delta` > 0) or dropped.
pub fn tensor_bytes_changed(delta: i64) {
    let mut s = SINK.lock().unwrap_or_else(|e| e.into_inner());
    s.bytes = s.bytes.saturating_add_signed(delta);
    publish(&s.device, delta);
}

/// Publishes the host tensors (those alive now and every later change) to
/// `device`'s datastore entry, as runtime init does with its first device.
pub fn publish_to(device: &Arc<dyn Device>) {
    let mut s = SINK.lock().unwrap_or_else(|e| e.into_inner());
    s.device = Some(Arc::downgrade(device));
    let now = s.bytes as i64;
    publish(&s.device, now);
}

/// Bytes of the process's live host tensors.
pub fn tensor_bytes() -> u64 {
    SINK.lock().unwrap_or_else(|e| e.into_inner()).bytes
}
