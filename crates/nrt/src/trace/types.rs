//! The system-trace event types: their names (what
//! `nrt_sys_trace_get_event_types` lists and filters accept), their group
//! (hardware: from what the device wrote; software: from the runtime) and
//! the bit each one has in an enable mask.

/// One kind of system-trace event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventType {
    /// One physical core running one execution: from the first engine
    /// START record to the last END record the device wrote (device
    /// timestamps), one start/stop pair per physical core.
    NcExecRunning = 0,
    /// A collective operation on the device (CC_START / CC_END records).
    CcRunning,
    /// An execution that made the core switch models (its request asked
    /// for the MODEL_SWITCH region; stamped with SP's START record).
    NrtModelSwitch,
    /// A NUMERICAL error record (NaN / Inf) an engine wrote.
    NumericalErr,
    /// A custom notification record (tensor completion and the other
    /// custom sub-ids) an engine wrote.
    HwNotify,
    /// `nrt_load`: parse, plan, stage and lower one NEFF.
    NrtLoad,
    /// `nrt_unload`.
    NrtUnload,
    /// One execution, from the call to its harvest: a synchronous one, or
    /// one an execution unit runs.
    NrtExecute,
    /// A read of a device tensor to host memory.
    NrtTensorRead,
    /// A write of host bytes to a device tensor.
    NrtTensorWrite,
    /// A device tensor allocation.
    NrtTensorAllocate,
    /// A device tensor freed (its last reference dropped).
    NrtTensorFree,
    /// A request queued on an execution unit (`nrta_*`, implicit async).
    NrtaSubmit,
    /// A host thread waiting for an execution unit's sequence.
    NrtaWait,
}

/// Which source produces an event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// From records the device wrote (NQ records, device timestamps).
    Hardware,
    /// From the runtime on the host.
    Software,
}

impl EventType {
    /// Every event type, in mask-bit order.
    pub const ALL: [EventType; 14] = [
        EventType::NcExecRunning,
        EventType::CcRunning,
        EventType::NrtModelSwitch,
        EventType::NumericalErr,
        EventType::HwNotify,
        EventType::NrtLoad,
        EventType::NrtUnload,
        EventType::NrtExecute,
        EventType::NrtTensorRead,
        EventType::NrtTensorWrite,
        EventType::NrtTensorAllocate,
        EventType::NrtTensorFree,
        EventType::NrtaSubmit,
        EventType::NrtaWait,
    ];

    /// The mask of every type.
    pub const ALL_MASK: u32 = (1 << EventType::ALL.len()) - 1;

    /// The name users see in the fetched JSON and give to filters.
    pub fn name(self) -> &'static str {
        match self {
            EventType::NcExecRunning => "nc_exec_running",
            EventType::CcRunning => "cc_running",
            EventType::NrtModelSwitch => "nrt_model_switch",
            EventType::NumericalErr => "numerical_err",
            EventType::HwNotify => "hw_notify",
            EventType::NrtLoad => "nrt_load",
            EventType::NrtUnload => "nrt_unload",
            EventType::NrtExecute => "nrt_execute",
            EventType::NrtTensorRead => "nrt_tensor_read",
            EventType::NrtTensorWrite => "nrt_tensor_write",
            EventType::NrtTensorAllocate => "nrt_tensor_allocate",
            EventType::NrtTensorFree => "nrt_tensor_free",
            EventType::NrtaSubmit => "nrt_model_submit",
            EventType::NrtaWait => "nrt_async_sema_wait",
        }
    }

    /// The type named `name` (exact, as listed by [`EventType::name`]).
    pub fn from_name(name: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Which source produces it.
    pub fn group(self) -> Group {
        match self {
            EventType::NcExecRunning | EventType::CcRunning | EventType::NrtModelSwitch | EventType::NumericalErr | EventType::HwNotify => Group::Hardware,
            _ => Group::Software,
        }
    }

    /// Its bit in an enable mask.
    pub const fn bit(self) -> u32 {
        1 << self as u8
    }

    /// The mask of every type of `group`.
    pub fn group_mask(group: Group) -> u32 {
        EventType::ALL.into_iter().filter(|t| t.group() == group).fold(0, |m, t| m | t.bit())
    }

    /// The types set in `mask`, in bit order.
    pub fn in_mask(mask: u32) -> impl Iterator<Item = EventType> {
        EventType::ALL.into_iter().filter(move |t| mask & t.bit() != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bits_are_distinct() {
        let mut seen = 0u32;
        for t in EventType::ALL {
            assert_eq!(EventType::from_name(t.name()), Some(t));
            assert_eq!(seen & t.bit(), 0);
            seen |= t.bit();
        }
        assert_eq!(seen, EventType::ALL_MASK);
        assert_eq!(EventType::from_name("no_such_event"), None);
        assert_eq!(EventType::group_mask(Group::Hardware) | EventType::group_mask(Group::Software), EventType::ALL_MASK);
        assert_eq!(EventType::in_mask(EventType::group_mask(Group::Hardware)).count(), 5);
    }

    /// docs/trace-formats.md's hardware and software tables name exactly
    /// the types of each group.
    #[test]
    fn the_docs_tables_name_each_groups_types() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/trace-formats.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            nrt_test_support::skip!("{path} is absent (a crate packaged without the repository's docs)");
        };
        let table = |from: &str, to: &str| -> Vec<String> {
            let part = doc.split(from).nth(1).and_then(|p| p.split(to).next()).unwrap_or_else(|| panic!("no {from:?} section"));
            let mut names: Vec<String> = part
                .lines()
                .filter(|l| l.starts_with("| `"))
                .flat_map(|l| l.split('|').nth(1).unwrap().split('`').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>())
                .collect();
            names.sort();
            names
        };
        let names = |g: Group| {
            let mut v: Vec<String> = EventType::in_mask(EventType::group_mask(g)).map(|t| t.name().to_string()).collect();
            v.sort();
            v
        };
        assert_eq!(table("Hardware group", "Software group"), names(Group::Hardware));
        assert_eq!(table("Software group", "Filters"), names(Group::Software));
    }
}
