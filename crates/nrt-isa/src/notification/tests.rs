use super::*;
use proptest::prelude::*;

#[test]
fn infer_status_start_bytes() {
    let mut rec = NotificationRecord::infer_status(
        NotificType::ActInstStart,
        RuntimeSubtype::Start,
        0,
        0x1_2345,
        0x0102_0304_0506_0708,
    );
    rec.phase = true;
    assert_eq!(
        rec.to_bytes().unwrap(),
        [0x45, 0x23, 0x01, 0x88, 0x00, 0x00, 0x02, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]
    );
}

#[test]
fn custom_record_bytes_and_views() {
    let mut rec = NotificationRecord::infer_status(
        NotificType::PoolExplicit,
        RuntimeSubtype::Custom,
        CustomSubId::TensorCompletion as u16,
        7,
        1000,
    );
    rec.debug_hint = 1;
    let bytes = rec.to_bytes().unwrap();
    assert_eq!(&bytes[0..8], &[0x07, 0x00, 0x10, 0x0E, 0x07, 0x00, 0x06, 0x00]);
    let view = rec.compl_view().unwrap();
    assert_eq!(view.isa_line, 7);
    assert_eq!(view.debug_hint(), 1);
    assert_eq!(view.nq_tag(), 0x0E);
    assert_eq!(view.custom_sub_id, 7);
    assert_eq!(view.subtype, 6);
    assert_eq!(rec.custom_sub_id(), Some(CustomSubId::TensorCompletion));
    assert!(!CustomSubId::TensorCompletion.is_oob());
    assert!(CustomSubId::VectorDgeTransposeOob.is_oob());
}

#[test]
fn pool_retag_keeps_flag_bits() {
    let mut rec = NotificationRecord { notific_type: NotificType::PoolInstEnd.code(), phase: true, hw_overflow: true, ..Default::default() };
    let mut bytes = rec.to_bytes().unwrap();
    ComplView::retag_pool_explicit(&mut bytes);
    rec.notific_type = NotificType::PoolExplicit.code();
    assert_eq!(NotificationRecord::from_bytes(&bytes), rec);
}

#[test]
fn oob_line_uses_byte2() {
    let rec = NotificationRecord { program_counter: 0xA_BCDE, ..Default::default() };
    assert_eq!(rec.compl_view().unwrap().oob_line(), 0xA_BCDE);
}

#[test]
fn field_widths_are_enforced() {
    let rec = NotificationRecord { program_counter: 1 << 20, ..Default::default() };
    assert_eq!(rec.to_bytes(), Err(NqError::FieldOverflow { field: "program_counter", value: 1 << 20, bits: 20 }));
    let rec = NotificationRecord { debug_hint: 16, ..Default::default() };
    assert!(matches!(rec.to_bytes(), Err(NqError::FieldOverflow { field: "debug_hint", .. })));
    let rec = NotificationRecord { notific_type: 32, ..Default::default() };
    assert!(matches!(rec.to_bytes(), Err(NqError::FieldOverflow { field: "notific_type", .. })));
    assert_eq!(NotificationRecord::from_slice(&[0; 12]), Err(NqError::WrongSize(12)));
}

#[test]
fn notific_type_table() {
    let mut assigned = 0;
    for code in 0..32u8 {
        if let Some(t) = NotificType::from_code(code) {
            assigned += 1;
            assert_eq!(t.code(), code);
        }
    }
    assert_eq!(assigned, 25);
    for engine in NqEngine::ALL {
        for event in [EngineEvent::InstStart, EngineEvent::InstEnd, EngineEvent::Explicit, EngineEvent::EvtSem] {
            let t = NotificType::for_engine(engine, event);
            assert_eq!(t.engine_event(), Some((engine, event)));
        }
    }
    assert_eq!(NotificType::for_engine(NqEngine::Sp, EngineEvent::InstEnd), NotificType::SpInstEnd);
    assert_eq!(NotificType::for_engine(NqEngine::Dve, EngineEvent::InstStart).code(), 0x10);
    assert_eq!(NotificType::TpbError.engine_event(), None);
    assert_eq!(RuntimeSubtype::from_code(4), None);
    assert_eq!(CustomSubId::from_code(0xB), None);
    assert!(NqClass::InferStatus.allows_direct_read() && !NqClass::Trace.allows_direct_read());
}

#[test]
fn error_records() {
    let e = ErrorRecord {
        kind: NotificType::Error,
        program_counter: 42,
        subtype: InferErrorSubtype::Numerical,
        engine: Some(NqEngine::Dve),
        detail: 0xBEEF,
        timestamp_ps: 5,
    };
    let rec = e.to_record();
    assert_eq!(rec.metadata_2, 0xBEEF_0301);
    assert_eq!(ErrorRecord::from_record(&rec), Ok(e));
    assert_eq!(e.subtype.nrt_status(), Some(1003));
    assert_eq!(InferErrorSubtype::EccCorrectable.nrt_status(), None);
    let mut bad = rec;
    bad.metadata_2 = 0x0000_0309;
    assert_eq!(ErrorRecord::from_record(&bad), Err(NqError::UnknownErrorSubtype(9)));
    bad.metadata_2 = 0x0000_0701;
    assert_eq!(ErrorRecord::from_record(&bad), Err(NqError::BadErrorEngine(7)));
    bad.notific_type = NotificType::Dma.code();
    assert_eq!(ErrorRecord::from_record(&bad), Err(NqError::NotAnErrorRecord(2)));
    let none = ErrorRecord { engine: None, kind: NotificType::TpbError, ..e };
    assert_eq!(ErrorRecord::from_record(&none.to_record()), Ok(none));
}

fn numbered(i: u32) -> NotificationRecord {
    NotificationRecord::infer_status(NotificType::PeInstEnd, RuntimeSubtype::End, 0, i, u64::from(i) * 10)
}

#[test]
fn phase_toggles_on_every_wrap() {
    let ring = NqRing::new(64).unwrap(); // 4 records
    let mut mem = vec![0u8; 64];
    let mut producer = NqProducer::new(ring);
    let mut consumer = NqConsumer::new(ring);
    assert_eq!(consumer.poll(&mem), Ok(None));
    let mut phases = Vec::new();
    for i in 0..12 {
        assert_eq!(producer.push(&mut mem, consumer.head(), numbered(i), OverflowPolicy::Lossless), Ok(PushOutcome::Written));
        let got = consumer.poll(&mem).unwrap().expect("record visible");
        assert_eq!(got.program_counter, i);
        phases.push(got.phase);
        assert_eq!(consumer.poll(&mem), Ok(None), "stale slot must not look new");
    }
    let expected: Vec<bool> = (0..12).map(|i| (i / 4) % 2 == 0).collect();
    assert_eq!(phases, expected);
}

#[test]
fn full_rings_block_or_overwrite() {
    let ring = NqRing::new(32).unwrap(); // 2 records
    let mut mem = vec![0u8; 32];
    let mut producer = NqProducer::new(ring);
    for i in 0..2 {
        producer.push(&mut mem, 0, numbered(i), OverflowPolicy::Lossless).unwrap();
    }
    assert_eq!(producer.push(&mut mem, 0, numbered(2), OverflowPolicy::Lossless), Err(NqError::RingFull { entries: 2 }));
    assert_eq!(producer.push(&mut mem, 0, numbered(2), OverflowPolicy::Lossy), Ok(PushOutcome::Overwrote));
    let slot0 = NotificationRecord::from_slice(&mem[0..16]).unwrap();
    assert!(slot0.sw_overflow && !slot0.phase && slot0.program_counter == 2);
}

#[test]
fn ring_sizes_are_checked() {
    assert_eq!(NqRing::new(48), Err(NqError::BadRingSize(48)));
    assert_eq!(NqRing::new(8), Err(NqError::BadRingSize(8)));
    let ring = NqRing::new(64).unwrap();
    let mut consumer = NqConsumer::new(ring);
    assert_eq!(consumer.poll(&[0; 32]), Err(NqError::RingMemorySize { expected: 64, got: 32 }));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_record_round_trips(bytes in any::<[u8; 16]>()) {
        let rec = NotificationRecord::from_bytes(&bytes);
        prop_assert_eq!(rec.to_bytes().unwrap(), bytes);
        let view = ComplView::from_bytes(&bytes);
        prop_assert_eq!(u32::from(view.isa_line), rec.program_counter & 0xFFFF);
        prop_assert_eq!(view.nq_tag(), rec.notific_type);
        prop_assert_eq!(view.debug_hint(), rec.debug_hint);
        prop_assert_eq!(view.custom_sub_id, rec.custom_sub_id_code());
        prop_assert_eq!(view.subtype, rec.subtype_code());
        prop_assert_eq!(view.timestamp, rec.timestamp_ps);
        prop_assert_eq!(view.oob_line() & 0xF_FFFF, rec.program_counter);
    }

    /// The unchecked encoder cuts each narrow field to its width and
    /// otherwise writes what `to_bytes` writes.
    #[test]
    fn truncated_encoding_masks_narrow_fields(pc in any::<u32>(), hint in any::<u8>(), ty in any::<u8>(), flags in any::<[bool; 3]>(), meta in any::<u32>(), ts in any::<u64>()) {
        let wide = NotificationRecord { program_counter: pc, debug_hint: hint, notific_type: ty, sw_overflow: flags[0], hw_overflow: flags[1], phase: flags[2], metadata_2: meta, timestamp_ps: ts };
        let cut = NotificationRecord { program_counter: pc & 0xF_FFFF, debug_hint: hint & 0xF, notific_type: ty & 0x1F, ..wide };
        prop_assert_eq!(wide.to_bytes_truncated(), cut.to_bytes().unwrap());
        prop_assert_eq!(NotificationRecord::from_bytes(&wide.to_bytes_truncated()), cut);
    }

    #[test]
    fn ring_delivers_in_order(log in 4usize..8, ops in proptest::collection::vec(0u8..3, 1..200)) {
        let ring = NqRing::new(1 << log).unwrap();
        let mut mem = vec![0u8; ring.size_bytes()];
        let mut producer = NqProducer::new(ring);
        let mut consumer = NqConsumer::new(ring);
        let (mut sent, mut received) = (0u32, Vec::new());
        for op in ops {
            if op < 2 {
                match producer.push(&mut mem, consumer.head(), numbered(sent), OverflowPolicy::Lossless) {
                    Ok(_) => sent += 1,
                    Err(NqError::RingFull { .. }) => prop_assert_eq!(ring.used(consumer.head(), producer.tail()), ring.entries()),
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                }
            } else {
                received.extend(consumer.drain(&mem, 16).unwrap().into_iter().map(|r| r.program_counter));
            }
        }
        received.extend(consumer.drain(&mem, usize::MAX).unwrap().into_iter().map(|r| r.program_counter));
        prop_assert_eq!(received, (0..sent).collect::<Vec<_>>());
    }
}
