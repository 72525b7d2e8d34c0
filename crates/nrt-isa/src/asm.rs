//! A line-oriented assembler and disassembler for instruction streams.
//!
//! One instruction per line: `[label:] mnemonic key=value ...`, comments
//! start with `#` or `;` (outside brackets and quotes). Values are decimal or
//! `0x` hex integers, dtype names, op names, patterns `[start; step,num; ...]`
//! and quoted names. The events block is spelled `wait=sem24>=16`,
//! `update=sem5++`, `value=N` (when neither side uses the value),
//! `dbg=N`, `hint=N`. Records without a layout are written
//! `.raw` followed by the 64 bytes in hex (file order). An IOTA whose steps
//! are all zero is spelled `memset dtype=.. partitions=.. output=.. fill=V`.
//! See docs/isa.md.
//!
//! The disassembler's output assembles back to the same bytes, and
//! disassembling the assembled text gives the same (canonical) text.

mod lex;

use crate::instr::sync::{
    UPDATE_EXPECTED, WAIT_EXPECTED, parse_update, parse_wait, update_to_text, wait_to_text,
};
use crate::instr::{Head, Instruction, SetFieldError, decode_stream};
use crate::opcode::Opcode;
use crate::record::{RECORD_SIZE, RecordBytes, StreamError, UpdateMode, WaitMode};
use thiserror::Error;

/// Keys every instruction line accepts for the header and events block;
/// layouts never use them as field names.
pub const HEAD_KEYS: &[&str] = &["wait", "update", "value", "dbg", "hint"];

/// What went wrong on a line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AsmErrorKind {
    /// The mnemonic is not known.
    #[error(
        "unknown mnemonic `{0}`, expected an instruction mnemonic (e.g. matmul, copy, nop) or .raw"
    )]
    UnknownMnemonic(String),
    /// The instruction has no such field.
    #[error("`{mnemonic}` has no field `{field}`, expected one of: {expected}")]
    UnknownField {
        /// Mnemonic of the line.
        mnemonic: String,
        /// Key found.
        field: String,
        /// Keys the instruction accepts.
        expected: String,
    },
    /// A value does not parse.
    #[error("bad value `{found}` for `{field}`, expected {expected}")]
    BadValue {
        /// Key.
        field: String,
        /// Text found.
        found: String,
        /// What was expected.
        expected: &'static str,
    },
    /// An operand is not `key=value`.
    #[error("`{0}` is not key=value")]
    MissingEquals(String),
    /// A key appears twice.
    #[error("`{0}` given twice, expected each key once")]
    DuplicateField(String),
    /// A bracket or string is not closed.
    #[error("unterminated {0}")]
    Unterminated(&'static str),
    /// A closing bracket without an opening one.
    #[error("`]` without a matching `[`")]
    Unbalanced,
    /// Wait, update and `value=` disagree on the shared events value.
    #[error("events value given as {first} and as {second}, expected one value")]
    ConflictingValue {
        /// First value seen.
        first: u32,
        /// Conflicting value.
        second: u32,
    },
    /// A `.raw` line does not hold exactly 64 bytes.
    #[error(".raw holds {0} bytes, expected exactly 64")]
    RawLength(usize),
    /// A `.raw` token is not hex.
    #[error("bad .raw token `{0}`, expected hex digits (pairs) or 0xNN bytes")]
    RawToken(String),
    /// A label is defined twice.
    #[error("label `{0}` defined twice, expected unique labels")]
    DuplicateLabel(String),
}

/// An assembler error with its position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, column {column}: {kind}")]
pub struct AsmError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What went wrong.
    pub kind: AsmErrorKind,
}

/// An assembled program: instructions plus the labels that named them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// Instructions in order.
    pub instructions: Vec<Instruction>,
    /// `(label, index of the next instruction)` in definition order.
    pub labels: Vec<(String, usize)>,
}

impl Program {
    /// The stream bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::instr::encode_stream(&self.instructions)
    }
}

/// Assembles text into stream bytes.
pub fn assemble(text: &str) -> Result<Vec<u8>, AsmError> {
    Ok(assemble_program(text)?.to_bytes())
}

/// Assembles text into instructions and labels.
pub fn assemble_program(text: &str) -> Result<Program, AsmError> {
    let mut prog = Program::default();
    for (n, line) in text.lines().enumerate() {
        let at = |column: usize, kind: AsmErrorKind| AsmError {
            line: n + 1,
            column,
            kind,
        };
        let tokens = lex::tokenize(line).map_err(|(c, k)| at(c, k))?;
        let mut rest = &tokens[..];
        if let Some(first) = rest.first()
            && let Some(label) = first.text.strip_suffix(':')
            && is_identifier(label)
        {
            if prog.labels.iter().any(|(l, _)| l == label) {
                return Err(at(
                    first.column,
                    AsmErrorKind::DuplicateLabel(label.to_string()),
                ));
            }
            prog.labels
                .push((label.to_string(), prog.instructions.len()));
            rest = &rest[1..];
        }
        let Some((mn, operands)) = rest.split_first() else {
            continue;
        };
        let instr = if mn.text == ".raw" {
            parse_raw(operands).map_err(|(c, k)| at(c, k))?
        } else {
            parse_line(mn, operands).map_err(|(c, k)| at(c, k))?
        };
        prog.instructions.push(instr);
    }
    Ok(prog)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

type LineError = (usize, AsmErrorKind);

fn parse_raw(operands: &[lex::Token<'_>]) -> Result<Instruction, LineError> {
    let mut bytes = Vec::with_capacity(RECORD_SIZE);
    for t in operands {
        let bad = || (t.column, AsmErrorKind::RawToken(t.text.to_string()));
        let digits = match t.text.strip_prefix("0x") {
            Some(d) if d.len() == 2 => d,
            Some(_) => return Err(bad()),
            None => t.text,
        };
        if digits.is_empty()
            || digits.len() % 2 != 0
            || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err(bad());
        }
        for i in (0..digits.len()).step_by(2) {
            bytes.push(u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| bad())?);
        }
    }
    let col = operands.first().map_or(1, |t| t.column);
    let bytes: RecordBytes = bytes
        .as_slice()
        .try_into()
        .map_err(|_| (col, AsmErrorKind::RawLength(bytes.len())))?;
    Ok(Instruction::Raw { bytes })
}

#[derive(Default)]
struct EventsText {
    wait: Option<(u8, u8)>,
    update: Option<(u8, u8)>,
    value: Option<u32>,
}

impl EventsText {
    fn set_value(&mut self, v: u32) -> Result<(), AsmErrorKind> {
        match self.value {
            Some(first) if first != v => Err(AsmErrorKind::ConflictingValue { first, second: v }),
            _ => {
                self.value = Some(v);
                Ok(())
            }
        }
    }
}

/// Spelling of an IOTA whose steps are all +0.0: a fill with one value.
const MEMSET: &str = "memset";
/// Fields `memset` accepts, as (its key, the IOTA field it sets).
const MEMSET_KEYS: &[(&str, &str)] = &[
    ("dtype", "dtype"),
    ("partitions", "partitions"),
    ("output", "output"),
    ("fill", "base"),
];

fn memset_view(instr: &Instruction) -> Option<&crate::instr::Iota> {
    match instr {
        Instruction::Iota(i)
            if [i.partition_step, i.step0, i.step1, i.step2]
                .iter()
                .all(|s| s.0 == 0) =>
        {
            Some(i)
        }
        _ => None,
    }
}

fn parse_line(mn: &lex::Token<'_>, operands: &[lex::Token<'_>]) -> Result<Instruction, LineError> {
    let memset = mn.text == MEMSET;
    let mnemonic = if memset {
        crate::instr::Iota::MNEMONIC
    } else {
        mn.text
    };
    let mut instr = Instruction::from_mnemonic(mnemonic).ok_or((
        mn.column,
        AsmErrorKind::UnknownMnemonic(mn.text.to_string()),
    ))?;
    let mut seen: Vec<&str> = Vec::new();
    let mut ev = EventsText::default();
    let mut head = Head::default();
    for t in operands {
        let (key, val) = t
            .text
            .split_once('=')
            .ok_or((t.column, AsmErrorKind::MissingEquals(t.text.to_string())))?;
        if seen.contains(&key) {
            return Err((t.column, AsmErrorKind::DuplicateField(key.to_string())));
        }
        seen.push(key);
        let vcol = t.column + key.chars().count() + 1;
        let bad = |expected: &'static str| {
            (
                vcol,
                AsmErrorKind::BadValue {
                    field: key.to_string(),
                    found: val.to_string(),
                    expected,
                },
            )
        };
        let byte = || crate::instr::field::parse_uint(val).and_then(|v| u8::try_from(v).ok());
        match key {
            "dbg" => head.debug_cmd = byte().ok_or_else(|| bad("an integer 0..=255"))?,
            "hint" => head.debug_hint = byte().ok_or_else(|| bad("an integer 0..=255"))?,
            "value" => {
                let v = crate::instr::field::parse_uint(val)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| bad("a 32-bit unsigned integer"))?;
                ev.set_value(v).map_err(|k| (vcol, k))?;
            }
            "wait" => {
                let w = parse_wait(val).ok_or_else(|| bad(WAIT_EXPECTED))?;
                ev.wait = Some((w.mode, w.idx));
                if let Some(v) = w.value {
                    ev.set_value(v).map_err(|k| (vcol, k))?;
                }
            }
            "update" => {
                let u = parse_update(val).ok_or_else(|| bad(UPDATE_EXPECTED))?;
                ev.update = Some((u.mode, u.idx));
                if let Some(v) = u.value {
                    ev.set_value(v).map_err(|k| (vcol, k))?;
                }
            }
            _ => match set_field(&mut instr, memset, key, val) {
                Ok(()) => {}
                Err(SetFieldError::Value(expected)) => return Err(bad(expected)),
                Err(SetFieldError::Unknown) => {
                    let mut names: Vec<&str> = if memset {
                        MEMSET_KEYS.iter().map(|(k, _)| *k).collect()
                    } else {
                        instr.layout_fields().iter().map(|f| f.name).collect()
                    };
                    names.extend(HEAD_KEYS);
                    return Err((
                        t.column,
                        AsmErrorKind::UnknownField {
                            mnemonic: mn.text.to_string(),
                            field: key.to_string(),
                            expected: names.join(", "),
                        },
                    ));
                }
            },
        }
    }
    let (wm, wi) = ev.wait.unwrap_or((0, 0));
    let (um, ui) = ev.update.unwrap_or((0, 0));
    head.events.wait_mode = WaitMode::from_u8(wm);
    head.events.wait_idx = wi;
    head.events.update_mode = UpdateMode::from_u8(um);
    head.events.update_idx = ui;
    head.events.value = ev.value.unwrap_or(0);
    if let Some(h) = instr.head_mut() {
        *h = head;
    }
    Ok(instr)
}

fn set_field(
    instr: &mut Instruction,
    memset: bool,
    key: &str,
    val: &str,
) -> Result<(), SetFieldError> {
    if !memset {
        return instr.set_field(key, val);
    }
    match MEMSET_KEYS.iter().find(|(k, _)| *k == key) {
        Some((_, field)) => instr.set_field(field, val),
        None => Err(SetFieldError::Unknown),
    }
}

/// The canonical text of one instruction (no trailing newline).
pub fn format_instruction(instr: &Instruction) -> String {
    let Some(mnemonic) = instr.mnemonic() else {
        let bytes = instr.encode();
        let mut s = String::from(".raw");
        for group in bytes.chunks(4) {
            s.push(' ');
            for b in group {
                s.push_str(&format!("{b:02x}"));
            }
        }
        return s;
    };
    let mut s;
    if memset_view(instr).is_some() {
        s = MEMSET.to_string();
        let fields = instr.fields_asm();
        for (key, field) in MEMSET_KEYS {
            if let Some((_, v)) = fields.iter().find(|(name, _)| name == field) {
                s.push_str(&format!(" {key}={v}"));
            }
        }
    } else {
        s = mnemonic.to_string();
        for (k, v) in instr.fields_asm() {
            s.push_str(&format!(" {k}={v}"));
        }
    }
    if let Some(h) = instr.head() {
        let e = h.events;
        let wait = wait_to_text(e.wait_mode, e.wait_idx, e.value, false);
        let update = update_to_text(e.update_mode, e.update_idx, e.value, false);
        if wait != "none" {
            s.push_str(&format!(" wait={wait}"));
        }
        if update != "none" {
            s.push_str(&format!(" update={update}"));
        }
        if e.value != 0 && !e.wait_mode.uses_value() && !e.update_mode.uses_value() {
            s.push_str(&format!(" value={}", e.value));
        }
        if h.debug_cmd != 0 {
            s.push_str(&format!(" dbg={}", h.debug_cmd));
        }
        if h.debug_hint != 0 {
            s.push_str(&format!(" hint={}", h.debug_hint));
        }
    }
    s
}

/// Displays an instruction in its canonical assembler spelling.
impl std::fmt::Display for Instruction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_instruction(self))
    }
}

/// Disassembles a stream; every record becomes one line.
pub fn disassemble(bytes: &[u8]) -> Result<String, StreamError> {
    disassemble_with_names(bytes, &[])
}

/// Disassembles a stream, appending `names[i]` (e.g. the compiler's debug
/// name of record `i`) as a comment where present. Raw records of a known
/// opcode get the opcode name as a comment.
pub fn disassemble_with_names(
    bytes: &[u8],
    names: &[Option<String>],
) -> Result<String, StreamError> {
    let mut out = String::new();
    for (i, instr) in decode_stream(bytes)?.iter().enumerate() {
        out.push_str(&format_instruction(instr));
        let mut notes = Vec::new();
        if instr.mnemonic().is_none() {
            match instr.opcode() {
                Opcode::Unknown(v) => notes.push(format!("opcode {v:#04x}")),
                op => notes.push(op.to_string()),
            }
        }
        if let Some(Some(name)) = names.get(i) {
            notes.push(name.replace(['\n', '\r'], " "));
        }
        if !notes.is_empty() {
            out.push_str(" # ");
            out.push_str(&notes.join(" | "));
        }
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
