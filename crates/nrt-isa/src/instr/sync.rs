//! Assembler spelling of waits and updates, shared by the record's events
//! block and EVENT_SEMAPHORE's extended block.
//!
//! Waits: `none`, `sem3>=16` (also `==`, `<`, `<=`, `>`), `evt2:set`,
//! `evt2:set_then_clear`, `evt2:clear`, `evt2:clear_then_set`, and the
//! generic `mode9:3` / `mode9:3:7` (mode byte, index, optional value) for
//! anything else. Updates: `none`, `sem5++`, `sem5--`, `sem5+=16`,
//! `sem5-=2`, `sem5:=0`, `evt1:set`, `evt1:clear`, each optionally suffixed
//! `@read` for the at-read variants, and the same generic form.

#[cfg(test)]
use super::field::Entropy;
use super::field::Field;
use super::field::parse_uint;
use crate::record::{RecordBytes, UpdateMode, WaitMode, read_u32, write_u32};

/// One side (wait or update) of an events block as the assembler sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncText {
    /// Mode byte.
    pub mode: u8,
    /// Semaphore / event index.
    pub idx: u8,
    /// Value spelled in the text, if any.
    pub value: Option<u32>,
}

fn generic(mode: u8, idx: u8, value: Option<u32>) -> String {
    match value {
        Some(v) => format!("mode{mode}:{idx}:{v}"),
        None => format!("mode{mode}:{idx}"),
    }
}

/// Spells a wait. With `own_value`, a value the mode does not use is still
/// kept (generic form); otherwise the caller prints it separately.
pub fn wait_to_text(mode: WaitMode, idx: u8, value: u32, own_value: bool) -> String {
    let cmp = match mode {
        WaitMode::SemEqImm => Some("=="),
        WaitMode::SemLtImm => Some("<"),
        WaitMode::SemLeImm => Some("<="),
        WaitMode::SemGtImm => Some(">"),
        WaitMode::SemGeImm => Some(">="),
        _ => None,
    };
    if let Some(op) = cmp {
        return format!("sem{idx}{op}{value}");
    }
    if own_value && value != 0 {
        return generic(mode.to_u8(), idx, Some(value));
    }
    let evt = match mode {
        WaitMode::EvtSet => Some("set"),
        WaitMode::EvtSetThenClear => Some("set_then_clear"),
        WaitMode::EvtClear => Some("clear"),
        WaitMode::EvtClearThenSet => Some("clear_then_set"),
        _ => None,
    };
    match (mode, evt) {
        (_, Some(e)) => format!("evt{idx}:{e}"),
        (WaitMode::None, _) if idx == 0 => "none".to_string(),
        _ => generic(mode.to_u8(), idx, None),
    }
}

/// Spells an update (see [`wait_to_text`] for `own_value`).
pub fn update_to_text(mode: UpdateMode, idx: u8, value: u32, own_value: bool) -> String {
    use UpdateMode as U;
    let read = if mode.at_completion() { "" } else { "@read" };
    let with_value = match mode {
        U::SemAddImmRead | U::SemAddImmComplete => Some("+="),
        U::SemSubImmRead | U::SemSubImmComplete => Some("-="),
        U::SemWrImmRead | U::SemWrImmComplete => Some(":="),
        _ => None,
    };
    if let Some(op) = with_value {
        return format!("sem{idx}{op}{value}{read}");
    }
    if own_value && value != 0 {
        return generic(mode.to_u8(), idx, Some(value));
    }
    match mode {
        U::SemIncRead | U::SemIncComplete => format!("sem{idx}++{read}"),
        U::SemDecRead | U::SemDecComplete => format!("sem{idx}--{read}"),
        U::EvtSetRead | U::EvtSetComplete => format!("evt{idx}:set{read}"),
        U::EvtClrRead | U::EvtClrComplete => format!("evt{idx}:clear{read}"),
        U::None if idx == 0 => "none".to_string(),
        _ => generic(mode.to_u8(), idx, None),
    }
}

fn split_index(text: &str) -> Option<(u8, &str)> {
    let end = text
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(text.len());
    let idx = text[..end].parse::<u8>().ok()?;
    Some((idx, &text[end..]))
}

fn parse_u32(text: &str) -> Option<u32> {
    parse_uint(text).and_then(|v| u32::try_from(v).ok())
}

fn parse_generic(rest: &str) -> Option<SyncText> {
    let mut parts = rest.split(':');
    let mode = parts.next()?.parse::<u8>().ok()?;
    let idx = parts.next()?.parse::<u8>().ok()?;
    let value = match parts.next() {
        Some(v) => Some(parse_u32(v)?),
        None => None,
    };
    if parts.next().is_some() {
        return None;
    }
    Some(SyncText { mode, idx, value })
}

/// What a wait should look like, for error messages.
pub const WAIT_EXPECTED: &str = "a wait: none, semN>=V (==, <, <=, >), evtN:set|set_then_clear|clear|clear_then_set, or modeM:N[:V]";
/// What an update should look like, for error messages.
pub const UPDATE_EXPECTED: &str = "an update: none, semN++, semN--, semN+=V, semN-=V, semN:=V, evtN:set, evtN:clear (optionally @read), or modeM:N[:V]";

/// Parses a wait.
pub fn parse_wait(text: &str) -> Option<SyncText> {
    if text == "none" {
        return Some(SyncText {
            mode: 0,
            idx: 0,
            value: None,
        });
    }
    if let Some(rest) = text.strip_prefix("mode") {
        return parse_generic(rest);
    }
    if let Some(rest) = text.strip_prefix("sem") {
        let (idx, rest) = split_index(rest)?;
        let ops = [
            ("==", WaitMode::SemEqImm),
            ("<=", WaitMode::SemLeImm),
            (">=", WaitMode::SemGeImm),
            ("<", WaitMode::SemLtImm),
            (">", WaitMode::SemGtImm),
        ];
        for (op, mode) in ops {
            if let Some(v) = rest.strip_prefix(op) {
                return Some(SyncText {
                    mode: mode.to_u8(),
                    idx,
                    value: Some(parse_u32(v)?),
                });
            }
        }
        return None;
    }
    let rest = text.strip_prefix("evt")?;
    let (idx, rest) = split_index(rest)?;
    let mode = match rest.strip_prefix(':')? {
        "set" => WaitMode::EvtSet,
        "set_then_clear" => WaitMode::EvtSetThenClear,
        "clear" => WaitMode::EvtClear,
        "clear_then_set" => WaitMode::EvtClearThenSet,
        _ => return None,
    };
    Some(SyncText {
        mode: mode.to_u8(),
        idx,
        value: None,
    })
}

/// Parses an update.
pub fn parse_update(text: &str) -> Option<SyncText> {
    use UpdateMode as U;
    if text == "none" {
        return Some(SyncText {
            mode: 0,
            idx: 0,
            value: None,
        });
    }
    if let Some(rest) = text.strip_prefix("mode") {
        return parse_generic(rest);
    }
    let (body, read) = match text.strip_suffix("@read") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let pick = |r: UpdateMode, c: UpdateMode| if read { r } else { c };
    if let Some(rest) = body.strip_prefix("sem") {
        let (idx, rest) = split_index(rest)?;
        let (mode, value) = match rest {
            "++" => (pick(U::SemIncRead, U::SemIncComplete), None),
            "--" => (pick(U::SemDecRead, U::SemDecComplete), None),
            _ => {
                let (mode, v) = if let Some(v) = rest.strip_prefix("+=") {
                    (pick(U::SemAddImmRead, U::SemAddImmComplete), v)
                } else if let Some(v) = rest.strip_prefix("-=") {
                    (pick(U::SemSubImmRead, U::SemSubImmComplete), v)
                } else {
                    (
                        pick(U::SemWrImmRead, U::SemWrImmComplete),
                        rest.strip_prefix(":=")?,
                    )
                };
                (mode, Some(parse_u32(v)?))
            }
        };
        return Some(SyncText {
            mode: mode.to_u8(),
            idx,
            value,
        });
    }
    let rest = body.strip_prefix("evt")?;
    let (idx, rest) = split_index(rest)?;
    let mode = match rest.strip_prefix(':')? {
        "set" => pick(U::EvtSetRead, U::EvtSetComplete),
        "clear" => pick(U::EvtClrRead, U::EvtClrComplete),
        _ => return None,
    };
    Some(SyncText {
        mode: mode.to_u8(),
        idx,
        value: None,
    })
}

/// The wait half of an extended events block: mode and index at +0/+1,
/// its own compare value at +4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtWait {
    /// Wait condition.
    pub mode: WaitMode,
    /// Index waited on.
    pub idx: u8,
    /// Compare target.
    pub value: u32,
}

/// The update half of an extended events block: mode and index at +0/+1,
/// its own amount at +6 (block +2/+3 and +8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtUpdate {
    /// Update action.
    pub mode: UpdateMode,
    /// Index updated.
    pub idx: u8,
    /// Amount.
    pub value: u32,
}

impl Field for ExtWait {
    const SPANS: &'static [(usize, usize)] = &[(0, 2), (4, 4)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(ExtWait {
            mode: WaitMode::from_u8(rec[off]),
            idx: rec[off + 1],
            value: read_u32(rec, off + 4),
        })
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = self.mode.to_u8();
        rec[off + 1] = self.idx;
        write_u32(rec, off + 4, self.value);
    }
    fn to_asm(&self) -> String {
        wait_to_text(self.mode, self.idx, self.value, true)
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        let t = parse_wait(text).ok_or(WAIT_EXPECTED)?;
        Ok(ExtWait {
            mode: WaitMode::from_u8(t.mode),
            idx: t.idx,
            value: t.value.unwrap_or(0),
        })
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        ExtWait {
            mode: WaitMode::from_u8(e.u8()),
            idx: e.u8(),
            value: u32::from_le_bytes(e.array()),
        }
    }
}

impl Field for ExtUpdate {
    const SPANS: &'static [(usize, usize)] = &[(0, 2), (6, 4)];
    fn read(rec: &RecordBytes, off: usize) -> Result<Self, &'static str> {
        Ok(ExtUpdate {
            mode: UpdateMode::from_u8(rec[off]),
            idx: rec[off + 1],
            value: read_u32(rec, off + 6),
        })
    }
    fn write(&self, rec: &mut RecordBytes, off: usize) {
        rec[off] = self.mode.to_u8();
        rec[off + 1] = self.idx;
        write_u32(rec, off + 6, self.value);
    }
    fn to_asm(&self) -> String {
        update_to_text(self.mode, self.idx, self.value, true)
    }
    fn from_asm(text: &str) -> Result<Self, &'static str> {
        let t = parse_update(text).ok_or(UPDATE_EXPECTED)?;
        Ok(ExtUpdate {
            mode: UpdateMode::from_u8(t.mode),
            idx: t.idx,
            value: t.value.unwrap_or(0),
        })
    }
    #[cfg(test)]
    fn from_entropy(e: &mut Entropy) -> Self {
        ExtUpdate {
            mode: UpdateMode::from_u8(e.u8()),
            idx: e.u8(),
            value: u32::from_le_bytes(e.array()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(wait_to_text(WaitMode::SemGeImm, 24, 16, false), "sem24>=16");
        assert_eq!(
            update_to_text(UpdateMode::SemIncComplete, 5, 0, false),
            "sem5++"
        );
        assert_eq!(
            update_to_text(UpdateMode::SemAddImmRead, 5, 3, false),
            "sem5+=3@read"
        );
        assert_eq!(wait_to_text(WaitMode::Other(9), 3, 7, true), "mode9:3:7");
        assert_eq!(wait_to_text(WaitMode::None, 0, 7, true), "mode0:0:7");
        assert_eq!(wait_to_text(WaitMode::None, 0, 7, false), "none");
        assert_eq!(
            parse_wait("sem3>=1"),
            Some(SyncText {
                mode: 5,
                idx: 3,
                value: Some(1)
            })
        );
        assert_eq!(
            parse_update("sem5+=1"),
            Some(SyncText {
                mode: 21,
                idx: 5,
                value: Some(1)
            })
        );
        assert_eq!(
            parse_update("evt2:clear@read"),
            Some(SyncText {
                mode: 2,
                idx: 2,
                value: None
            })
        );
        assert_eq!(parse_wait("sem300>=1"), None);
        assert_eq!(parse_update("sem1+="), None);
    }

    #[test]
    fn every_mode_round_trips_with_own_value() {
        for m in 0..=255u8 {
            for (idx, value) in [(0u8, 0u32), (7, 0), (3, 99)] {
                let w = ExtWait {
                    mode: WaitMode::from_u8(m),
                    idx,
                    value,
                };
                assert_eq!(ExtWait::from_asm(&w.to_asm()), Ok(w), "{}", w.to_asm());
                let u = ExtUpdate {
                    mode: UpdateMode::from_u8(m),
                    idx,
                    value,
                };
                assert_eq!(ExtUpdate::from_asm(&u.to_asm()), Ok(u), "{}", u.to_asm());
            }
        }
    }
}
