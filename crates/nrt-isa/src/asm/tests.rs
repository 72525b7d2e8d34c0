//! Assembler behaviour: syntax, errors with positions, labels, raw records.

use super::*;
use crate::instr::{F32Bits, Iota, Nop};
use crate::record::Events;

fn err(text: &str) -> AsmError {
    assemble(text).unwrap_err()
}

#[test]
fn assembles_a_small_program_with_labels_and_comments() {
    let text = "\
# a comment line
start:  nop wait=sem3>=1 update=sem5+=1   ; trailing comment
        matmul psum=[0x2000000; 1,64; 0,1; 0,1] accumulate=start update=sem5++
done:
        .raw a4100000 051b0000 10000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
";
    let prog = assemble_program(text).unwrap();
    assert_eq!(prog.instructions.len(), 3);
    assert_eq!(
        prog.labels,
        vec![("start".to_string(), 0), ("done".to_string(), 2)]
    );
    let bytes = prog.to_bytes();
    // `wait=sem3>=1 update=sem5+=1` share the events value 1.
    assert_eq!(&bytes[..12], &[0xA4, 0x10, 0, 0, 5, 3, 0x15, 5, 1, 0, 0, 0]);
    assert_eq!(
        &bytes[128..140],
        &[0xA4, 0x10, 0, 0, 5, 0x1b, 0, 0, 0x10, 0, 0, 0]
    );
    // The raw NOP is a valid NOP, so the disassembler names it.
    let text = disassemble(&bytes).unwrap();
    assert!(
        text.lines()
            .nth(2)
            .unwrap()
            .starts_with("nop wait=sem27>=16"),
        "{text}"
    );
}

#[test]
fn raw_accepts_byte_tokens() {
    let mut line = String::from(".raw");
    for i in 0..64u8 {
        line.push_str(&format!(" 0x{:02x}", i.wrapping_mul(37)));
    }
    let bytes = assemble(&line).unwrap();
    assert_eq!(bytes[1], 37);
    assert_eq!(assemble(&disassemble(&bytes).unwrap()).unwrap(), bytes);
}

#[test]
fn unknown_opcodes_print_raw_with_a_note() {
    let mut rec = [0u8; 64];
    rec[0] = 0x99;
    rec[1] = 0x10;
    let text = disassemble(&rec).unwrap();
    assert!(text.starts_with(".raw 99100000 "), "{text}");
    assert!(text.trim_end().ends_with("# opcode 0x99"), "{text}");
    rec[0] = 0x07;
    assert!(disassemble(&rec).unwrap().contains("# MATMUL_SPARSE"));
}

#[test]
fn names_become_comments() {
    let bytes = [Nop::default().encode(), Nop::default().encode()].concat();
    let names = vec![Some("I-87-0".to_string()), None];
    let text = disassemble_with_names(&bytes, &names).unwrap();
    assert_eq!(text, "nop # I-87-0\nnop\n");
    assert_eq!(Instruction::from(Nop::default()).to_string(), "nop");
    assert_eq!(assemble(&text).unwrap(), bytes);
}

#[test]
fn memset_is_a_zero_step_iota() {
    let text = "memset dtype=float32 partitions=128 output=[0x5000; 1,512; 0,1; 0,1] fill=-inf";
    let bytes = assemble(text).unwrap();
    let Ok(Instruction::Iota(i)) = Instruction::decode(bytes[..].try_into().unwrap()) else {
        panic!()
    };
    assert_eq!(i.base, F32Bits::new(f32::NEG_INFINITY));
    assert_eq!(disassemble(&bytes).unwrap().trim_end(), text);
    let iota = Iota {
        step0: F32Bits::new(1.0),
        ..Iota::default()
    };
    assert!(format_instruction(&iota.into()).starts_with("iota "));
    assert!(matches!(
        err("memset step0=1.0").kind,
        AsmErrorKind::UnknownField { .. }
    ));
}

#[test]
fn errors_carry_line_column_and_expectation() {
    let e = err("nop\n  frobnicate x=1");
    assert_eq!((e.line, e.column), (2, 3));
    assert_eq!(e.kind, AsmErrorKind::UnknownMnemonic("frobnicate".into()));

    let e = err("matmul accumulate=sometimes");
    assert_eq!((e.line, e.column), (1, 19));
    assert!(matches!(&e.kind, AsmErrorKind::BadValue { field, .. } if field == "accumulate"));
    assert!(e.to_string().contains("expected an accumulate mode"), "{e}");

    let e = err("matmul bogus=1");
    assert_eq!(e.column, 8);
    assert!(
        matches!(&e.kind, AsmErrorKind::UnknownField { expected, .. } if expected.contains("psum"))
    );

    assert_eq!(
        err("nop wait").kind,
        AsmErrorKind::MissingEquals("wait".into())
    );
    assert_eq!(
        err("nop hint=1 hint=2").kind,
        AsmErrorKind::DuplicateField("hint".into())
    );
    assert_eq!(
        err("nop wait=sem1>=3 update=sem2+=4").kind,
        AsmErrorKind::ConflictingValue {
            first: 3,
            second: 4
        }
    );
    assert!(matches!(
        err("nop wait=sem1~3").kind,
        AsmErrorKind::BadValue { .. }
    ));
    assert_eq!(err(".raw 00").kind, AsmErrorKind::RawLength(1));
    assert_eq!(
        err(".raw 0xabc").kind,
        AsmErrorKind::RawToken("0xabc".into())
    );
    assert_eq!(
        err("a: nop\na: nop").kind,
        AsmErrorKind::DuplicateLabel("a".into())
    );
    let e = err("ldweights weights=[0x10; 1,2");
    assert_eq!(
        (e.column, e.kind),
        (19, AsmErrorKind::Unterminated("bracket"))
    );
    assert!(matches!(
        err("dma_trigger queue=\"this name is far too long for the field\"").kind,
        AsmErrorKind::BadValue { .. }
    ));
}

#[test]
fn explicit_value_agreeing_with_wait_is_accepted() {
    let bytes = assemble("nop wait=sem1>=3 value=3").unwrap();
    let expected = Nop {
        head: crate::instr::Head::with_events(Events::wait_sem_ge(1, 3)),
    };
    assert_eq!(bytes, expected.encode().to_vec());
}

mod fuzzish {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = assemble(&text);
        }

        #[test]
        fn arbitrary_lines_from_the_vocabulary_never_panic(
            mn in proptest::sample::select(Instruction::MNEMONICS.to_vec()),
            key in "[a-z_0-9]{1,12}",
            val in "[\\[\\]0-9a-fx;, .:+=<>\"-]{0,24}",
        ) {
            let _ = assemble(&format!("{mn} {key}={val} wait={val} update={val}"));
        }

        #[test]
        fn arbitrary_bytes_disassemble_or_report_length(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            match disassemble(&bytes) {
                Ok(text) => prop_assert_eq!(assemble(&text).unwrap(), bytes),
                Err(StreamError::Misaligned { len, trailing }) => {
                    prop_assert_eq!(len, bytes.len());
                    prop_assert_eq!(trailing, bytes.len() % 64);
                }
            }
        }
    }
}
