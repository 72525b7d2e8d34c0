//! Property and unit tests of the typed codec and its assembler spelling.

use super::field::Entropy;
use super::*;
use crate::asm::{assemble, disassemble, format_instruction};
use crate::opcode::Opcode;
use crate::record::{RECORD_SIZE, UpdateMode, WaitMode};
use proptest::prelude::*;

fn entropy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 1..160)
}

#[test]
fn layouts_stay_inside_the_payload_and_do_not_overlap() {
    for (mnemonic, build) in Instruction::arbitrary_builders() {
        let instr = build(&mut Entropy::new(vec![0]));
        assert_eq!(instr.mnemonic(), Some(mnemonic));
        let mut owner: [Option<&str>; RECORD_SIZE] = [None; RECORD_SIZE];
        for f in instr.layout_fields() {
            assert!(
                !crate::asm::HEAD_KEYS.contains(&f.name),
                "{mnemonic}.{} shadows an events key",
                f.name
            );
            for &(start, len) in f.spans {
                for (b, slot) in owner
                    .iter_mut()
                    .enumerate()
                    .skip(f.offset + start)
                    .take(len)
                {
                    assert!(b >= 0x0C, "{mnemonic}.{} reaches into the header", f.name);
                    assert!(
                        slot.is_none(),
                        "{mnemonic}.{} overlaps {:?} at {b:#x}",
                        f.name,
                        slot
                    );
                    *slot = Some(f.name);
                }
                assert!(
                    f.offset + start + len <= RECORD_SIZE,
                    "{mnemonic}.{} runs past the record",
                    f.name
                );
            }
        }
    }
}

#[test]
fn every_layout_opcode_is_unique_and_named() {
    let mut seen = std::collections::HashSet::new();
    for (mnemonic, build) in Instruction::arbitrary_builders() {
        let op = build(&mut Entropy::new(vec![0])).opcode();
        assert!(op.name().is_some(), "{mnemonic} has an unnamed opcode");
        assert!(seen.insert(op), "two layouts share {op}");
        assert!(Instruction::has_layout(op));
    }
    assert_eq!(seen.len(), Instruction::MNEMONICS.len());
}

#[test]
fn opcodes_without_layout_stay_raw() {
    let mut rec = [0u8; 64];
    rec[0] = Opcode::MatmulSparse.to_u8();
    rec[1] = 0x10;
    rec[40] = 7;
    assert_eq!(
        Instruction::decode(&rec).unwrap(),
        Instruction::Raw { bytes: rec }
    );
}

#[test]
fn strict_decode_names_the_problem() {
    let mut rec = Nop::default().encode();
    rec[0x30] = 1;
    assert_eq!(
        Instruction::decode(&rec),
        Err(DecodeError::Reserved {
            mnemonic: "nop",
            offset: 0x30,
            found: 1
        })
    );
    assert_eq!(
        Instruction::decode_or_raw(&rec),
        Instruction::Raw { bytes: rec }
    );

    let mut rec = Nop::default().encode();
    rec[1] = 0x11;
    assert_eq!(
        Instruction::decode(&rec),
        Err(DecodeError::WordLen {
            mnemonic: "nop",
            found: 0x11
        })
    );

    let mut rec = Matmul::default().encode();
    rec[0x2B] = 4;
    let err = Instruction::decode(&rec).unwrap_err();
    assert!(
        matches!(
            err,
            DecodeError::Field {
                field: "accumulate",
                offset: 0x2B,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("accumulate"));

    let mut rec = LdWeights::default().encode();
    rec[0x22] = 2;
    assert!(matches!(
        Instruction::decode(&rec),
        Err(DecodeError::Field {
            field: "transpose",
            ..
        })
    ));
}

#[test]
fn builder_style_construction_encodes_as_expected() {
    let mm = Matmul {
        head: Head::with_events(Events::inc_on_complete(5)),
        moving: crate::operand::Tensor3d::contiguous(0x37f00, 64),
        dtype: DtypeCode(7),
        rows: 128,
        cols: 128,
        accumulate: Accumulate::Start,
        row_mask: 0xf,
        col_mask: 0xf,
        psum: crate::operand::Tensor3d::contiguous(0x2000000, 64),
        ..Matmul::default()
    };
    let rec = mm.encode();
    assert_eq!(&rec[..8], &[0x02, 0x10, 0, 0, 0, 0, 0x13, 5]);
    assert_eq!(rec[0x2B], 1);
    assert_eq!(Instruction::decode(&rec).unwrap(), Instruction::Matmul(mm));
    let text = format_instruction(&Instruction::decode(&rec).unwrap());
    assert_eq!(
        text,
        "matmul moving=[0x37f00; 1,64; 0,1; 0,1] dtype=float16 transpose=false row_start=0 col_start=0 \
         rows=128 cols=128 accumulate=start row_mask=15 col_mask=15 psum=[0x2000000; 1,64; 0,1; 0,1] update=sem5++"
    );
}

#[test]
fn events_spelling_covers_shared_values() {
    let mut nop = Nop::default();
    nop.head.events = Events {
        wait_mode: WaitMode::SemGeImm,
        wait_idx: 3,
        update_mode: UpdateMode::SemAddImmComplete,
        update_idx: 5,
        value: 9,
    };
    let text = format_instruction(&nop.clone().into());
    assert_eq!(text, "nop wait=sem3>=9 update=sem5+=9");
    assert_eq!(assemble(&text).unwrap(), nop.encode().to_vec());
    nop.head.events = Events {
        wait_mode: WaitMode::Other(11),
        wait_idx: 2,
        value: 77,
        ..Events::NONE
    };
    let text = format_instruction(&nop.clone().into());
    assert_eq!(text, "nop wait=mode11:2 value=77");
    assert_eq!(assemble(&text).unwrap(), nop.encode().to_vec());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every case builds one arbitrary instance of every layout from the
    /// same random bytes, so each variant sees all 256 cases.
    #[test]
    fn every_layout_round_trips(bytes in entropy()) {
        for (mnemonic, build) in Instruction::arbitrary_builders() {
            let instr = build(&mut Entropy::new(bytes.clone()));
            let rec = instr.encode();
            prop_assert_eq!(Instruction::decode(&rec), Ok(instr.clone()), "{}", mnemonic);
            let text = format_instruction(&instr);
            let back = assemble(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&back[..], &rec[..], "{}", text);
            let canonical = disassemble(&back).unwrap();
            prop_assert_eq!(canonical.trim_end(), text.as_str());
        }
    }

    #[test]
    fn any_record_round_trips(bytes in proptest::array::uniform32(any::<u8>()), tail in proptest::array::uniform32(any::<u8>()), op in any::<u8>(), typed_header in any::<bool>()) {
        let mut rec = [0u8; 64];
        rec[..32].copy_from_slice(&bytes);
        rec[32..].copy_from_slice(&tail);
        rec[0] = op;
        if typed_header {
            rec[1] = 0x10;
            rec[12..].fill(0);
        }
        let instr = Instruction::decode_or_raw(&rec);
        prop_assert_eq!(instr.encode(), rec);
        let text = disassemble(&rec).unwrap();
        prop_assert_eq!(assemble(&text).unwrap(), rec.to_vec(), "{}", text);
        prop_assert_eq!(disassemble(&assemble(&text).unwrap()).unwrap(), text);
    }
}

/// The generated layout reference that docs/isa.md embeds between markers.
fn layout_markdown() -> String {
    let mut md = String::new();
    for l in Instruction::LAYOUTS {
        let origin = match l.origin {
            LayoutOrigin::Observed => "observed-real",
            LayoutOrigin::Runtime => "runtime builder (seed)",
            LayoutOrigin::Ours => "**ours**",
        };
        md.push_str(&format!(
            "#### `{}`: {} {:#04X} ({:?}), layout {}\n\n{}\n\n",
            l.mnemonic,
            l.opcode,
            l.opcode.to_u8(),
            l.opcode.engine_class(),
            origin,
            l.doc.trim()
        ));
        if l.fields.is_empty() {
            md.push_str("No payload: bytes +0x0C..+0x3F are zero.\n\n");
            continue;
        }
        md.push_str("| Offset | Width | Field | Type | Meaning |\n|---|---|---|---|---|\n");
        for f in l.fields {
            let offsets: Vec<String> = f
                .spans
                .iter()
                .map(|&(s, len)| match len {
                    1 => format!("+0x{:02X}", f.offset + s),
                    _ => format!("+0x{:02X}..+0x{:02X}", f.offset + s, f.offset + s + len - 1),
                })
                .collect();
            md.push_str(&format!(
                "| {} | {} | `{}` | `{}` | {} |\n",
                offsets.join(", "),
                f.width(),
                f.name,
                f.ty.replace(' ', ""),
                f.doc.trim()
            ));
        }
        md.push('\n');
    }
    md
}

#[test]
fn docs_layout_reference_matches_the_code() {
    const BEGIN: &str = "<!-- layouts:begin (generated by `NRT_ISA_BLESS=1 cargo test -p nrt-isa docs_layout`) -->\n";
    const END: &str = "<!-- layouts:end -->";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/isa.md");
    let Ok(doc) = std::fs::read_to_string(path) else {
        nrt_test_support::skip!("{path} is absent (a crate packaged without the repository's docs)");
    };
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/isa.md lacks the layout markers")
    };
    let generated = layout_markdown();
    let current = &doc[b + BEGIN.len()..e];
    if current != generated {
        if std::env::var_os("NRT_ISA_BLESS").is_some() {
            let updated = format!("{}{}{}", &doc[..b + BEGIN.len()], generated, &doc[e..]);
            std::fs::write(path, updated).expect("write docs/isa.md");
        } else {
            panic!("docs/isa.md layout tables are stale; rerun with NRT_ISA_BLESS=1");
        }
    }
}
