//! What the harvest saw of an execution: per physical core the first
//! START and last END device timestamps (every execution: its device
//! time, [`HwObservation::device_time_ps`]) and, for the hardware-group
//! events, the notable records (custom notifications, collective starts
//! and ends, numerical errors) in arrival order.
//!
//! Fixed-size and reset per execution, so an observed harvest allocates
//! nothing either; an unobserved one ([`HwObservation::on`] false) pays
//! one predictable branch per record.

use super::event::Phase;
use super::types::EventType;

/// Physical cores one execution can span.
pub const MAX_CORES: usize = crate::exec::harvest::MAX_CORES;
/// Notable records kept per execution (later ones are counted in
/// [`HwObservation::dropped`]).
pub const MAX_NOTES: usize = 32;

/// One notable record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwNote {
    /// The event it becomes.
    pub ty: EventType,
    /// Start / stop (collectives) or instant.
    pub phase: Phase,
    /// Core index within the execution.
    pub core: u8,
    /// Engine index that wrote it.
    pub engine: u8,
    /// The record's program counter field.
    pub pc: u32,
    /// Custom sub-id, error detail, or the output index of a completion.
    pub detail: u32,
    /// Device timestamp (ps).
    pub ts_ps: u64,
}

/// One execution's device-side timeline, as the records told it.
#[derive(Clone, Copy, Debug)]
pub struct HwObservation {
    /// Whether the harvest records anything (set per execution).
    pub on: bool,
    /// Per core, the earliest START timestamp (u64::MAX: none seen).
    pub first_start_ps: [u64; MAX_CORES],
    /// Per core, the latest END timestamp (0: none seen).
    pub last_end_ps: [u64; MAX_CORES],
    /// Notable records, `len` of them.
    pub notes: [HwNote; MAX_NOTES],
    /// Used entries of `notes`.
    pub len: usize,
    /// Notable records that did not fit.
    pub dropped: u32,
}

const EMPTY_NOTE: HwNote = HwNote { ty: EventType::HwNotify, phase: Phase::Instant, core: 0, engine: 0, pc: 0, detail: 0, ts_ps: 0 };

impl Default for HwObservation {
    fn default() -> HwObservation {
        HwObservation { on: false, first_start_ps: [u64::MAX; MAX_CORES], last_end_ps: [0; MAX_CORES], notes: [EMPTY_NOTE; MAX_NOTES], len: 0, dropped: 0 }
    }
}

impl HwObservation {
    /// Clears it for an execution that is (`on`) or is not observed.
    #[inline]
    pub fn reset(&mut self, on: bool) {
        self.on = on;
        self.first_start_ps = [u64::MAX; MAX_CORES];
        self.last_end_ps = [0; MAX_CORES];
        if on {
            self.len = 0;
            self.dropped = 0;
        }
    }

    /// The execution's device time: on the simulated device's clock,
    /// from the earliest START (the first engine to issue after the
    /// doorbell) to the latest END of its cores; `None` until both came.
    /// The one definition every tool reports (docs/performance.md,
    /// "Device time"); [`super::device_durations_ps`] computes the same
    /// from the system trace's `nc_exec_running` pairs.
    pub fn device_time_ps(&self) -> Option<u64> {
        self.device_time().map(|(_, t)| t)
    }

    /// The earliest START and the device time ([`HwObservation::device_time_ps`]).
    pub fn device_time(&self) -> Option<(u64, u64)> {
        let start = (0..MAX_CORES).filter_map(|c| self.span(c)).map(|s| s.0).min()?;
        let end = (0..MAX_CORES).filter_map(|c| self.span(c)).map(|s| s.1).max()?;
        Some((start, end - start))
    }

    /// A START record of `core` at `ts`.
    #[inline]
    pub fn start(&mut self, core: usize, ts: u64) {
        if let Some(s) = self.first_start_ps.get_mut(core) {
            *s = (*s).min(ts);
        }
    }

    /// An END record of `core` at `ts`.
    #[inline]
    pub fn end(&mut self, core: usize, ts: u64) {
        if let Some(s) = self.last_end_ps.get_mut(core) {
            *s = (*s).max(ts);
        }
    }

    /// Keeps a notable record (or counts it when full).
    pub fn note(&mut self, n: HwNote) {
        if self.len < MAX_NOTES {
            self.notes[self.len] = n;
            self.len += 1;
        } else {
            self.dropped += 1;
        }
    }

    /// The kept notes.
    pub fn notes(&self) -> &[HwNote] {
        &self.notes[..self.len]
    }

    /// The (start, end) device span of `core`, when both were seen.
    pub fn span(&self, core: usize) -> Option<(u64, u64)> {
        let (s, e) = (*self.first_start_ps.get(core)?, *self.last_end_ps.get(core)?);
        (s != u64::MAX && e >= s).then_some((s, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_take_the_earliest_start_and_latest_end() {
        let mut h = HwObservation::default();
        h.reset(true);
        assert_eq!(h.span(0), None);
        h.start(0, 50);
        h.start(0, 40);
        h.end(0, 90);
        h.end(0, 70);
        h.start(9, 1); // out of range: ignored
        assert_eq!(h.span(0), Some((40, 90)));
        for i in 0..MAX_NOTES + 3 {
            h.note(HwNote { ts_ps: i as u64, ..EMPTY_NOTE });
        }
        assert_eq!((h.notes().len(), h.dropped), (MAX_NOTES, 3));
        h.reset(true);
        assert_eq!((h.span(0), h.notes().len()), (None, 0));
    }
}
