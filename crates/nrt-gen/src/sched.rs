//! Bookkeeping for generated programs: one assembler text per engine, the
//! cumulative semaphore counts the compiler's streams synchronise on, and
//! the round-robin dynamic DMA queues.
//!
//! Instructions are emitted in one global order that is itself a valid
//! execution (every wait names an event emitted earlier), so the engines,
//! each running its own subsequence in order, cannot deadlock.

use crate::GenError;
use nrt_neff::DefJson;
use serde_json::json;
use std::fmt::Write as _;

/// Completion semaphore of ACT compute records (`real-isa-observed` §4).
pub const SEM_ACT: u32 = 4;
/// Completion semaphore of PE MATMULs.
pub const SEM_PE: u32 = 5;
/// Completion semaphore of DVE compute records.
pub const SEM_DVE: u32 = 6;
/// Queues (and semaphores) per dynamic queue set.
pub const QUEUES: usize = 16;
/// What a DMA adds to its semaphore at completion (one per DMA engine).
pub const DMA_SEM_ADD: u32 = 16;

/// A `sem >= value` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// Semaphore.
    pub sem: u32,
    /// Target of the cumulative count.
    pub value: u32,
}

/// An engine's dynamic queue set: 16 queues taken round-robin, each with
/// its own completion semaphore.
#[derive(Clone, Debug)]
pub struct QueueSet {
    /// First semaphore of the set.
    pub first_sem: u32,
    next: usize,
    counts: [u32; QUEUES],
}

impl QueueSet {
    /// A set whose semaphores are `first_sem..first_sem + 16`.
    pub fn new(first_sem: u32) -> QueueSet {
        QueueSet { first_sem, next: 0, counts: [0; QUEUES] }
    }

    /// Takes the next queue: its semaphore and the wait that means "this DMA has landed".
    pub fn issue(&mut self) -> Wait {
        let slot = self.next % QUEUES;
        self.next += 1;
        self.counts[slot] += DMA_SEM_ADD;
        Wait { sem: self.first_sem + slot as u32, value: self.counts[slot] }
    }

    /// Waits that cover every DMA issued so far.
    pub fn all_done(&self) -> Vec<Wait> {
        (0..QUEUES).filter(|s| self.counts[*s] > 0).map(|s| Wait { sem: self.first_sem + s as u32, value: self.counts[s] }).collect()
    }
}

/// A subgraph's def.json: `vars`, SP's dynamic queue set on the
/// semaphores `first_sem..first_sem + 16`, and with several `ranks` the
/// collectives' world: one replica group of every rank in order, one cc
/// stream.
pub fn sp_definition(vars: serde_json::Map<String, serde_json::Value>, first_sem: u32, ranks: usize) -> Result<DefJson, GenError> {
    let mut def = json!({
        "name": "definition",
        "version": "0.6",
        "var": vars,
        "dma_queue": {"qSPDynamicHW": {"type": "dynamic", "num_queues": QUEUES, "owner": "sp", "fabric_path": "main", "semaphore_set": (first_sem..first_sem + QUEUES as u32).collect::<Vec<u32>>()}},
    });
    if ranks > 1 {
        let n = ranks as u32;
        def["#rank_world_size"] = json!(n);
        def["cc_streams"] = json!({"num_streams": 1});
        def["replica_groups"] = json!([[(0..n).collect::<Vec<u32>>()]]);
    }
    serde_json::from_value(def).map_err(|e| GenError::Internal(format!("def.json: {e}")))
}

/// One engine's stream under construction.
#[derive(Clone, Debug, Default)]
pub struct Stream {
    text: String,
}

impl Stream {
    /// A stream opening with the compiler's prologue (0xB1, the block label).
    pub fn new() -> Stream {
        Stream { text: String::from("prologue_b1\nbranch_label\n") }
    }

    /// Appends `line` (no newline) after the waits in `waits`: the
    /// strongest wait per semaphore is kept, trivially true ones are
    /// dropped, and all but one go into EVENT_SEMAPHORE records of two
    /// waits each before the instruction, which carries the last.
    pub fn push(&mut self, line: &str, waits: &[Wait]) {
        let mut ws: Vec<Wait> = Vec::new();
        for w in waits.iter().filter(|w| w.value > 0) {
            match ws.iter_mut().find(|x| x.sem == w.sem) {
                Some(x) => x.value = x.value.max(w.value),
                None => ws.push(*w),
            }
        }
        while ws.len() > 1 {
            let a = ws.remove(0);
            let ext = if ws.len() > 1 { Some(ws.remove(0)) } else { None };
            match ext {
                Some(b) => writeln!(self.text, "event_semaphore wait=sem{}>={} ext_wait=sem{}>={}", a.sem, a.value, b.sem, b.value),
                None => writeln!(self.text, "event_semaphore wait=sem{}>={}", a.sem, a.value),
            }
            .expect("writing to a String");
        }
        match ws.first() {
            Some(w) => writeln!(self.text, "{line} wait=sem{}>={}", w.sem, w.value),
            None => writeln!(self.text, "{line}"),
        }
        .expect("writing to a String");
    }

    /// Ends the stream with the compiler's closing form: EVENT_SEMAPHOREs
    /// of two waits and a final NOP, together covering `waits`.
    pub fn finish(&mut self, waits: &[Wait]) {
        if !waits.is_empty() {
            self.push("nop", waits);
        }
    }

    /// The assembler text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_round_robin_and_count_in_sixteens() {
        let mut q = QueueSet::new(24);
        let first: Vec<Wait> = (0..17).map(|_| q.issue()).collect();
        assert_eq!(first[0], Wait { sem: 24, value: 16 });
        assert_eq!(first[15], Wait { sem: 39, value: 16 });
        assert_eq!(first[16], Wait { sem: 24, value: 32 });
        assert_eq!(q.all_done().len(), 16);
    }

    #[test]
    fn extra_waits_become_event_semaphores() {
        let mut s = Stream::default();
        s.push("nop", &[Wait { sem: 4, value: 1 }, Wait { sem: 5, value: 2 }, Wait { sem: 4, value: 3 }, Wait { sem: 6, value: 0 }, Wait { sem: 30, value: 16 }]);
        assert_eq!(s.text(), "event_semaphore wait=sem4>=3 ext_wait=sem5>=2\nnop wait=sem30>=16\n");
    }
}
