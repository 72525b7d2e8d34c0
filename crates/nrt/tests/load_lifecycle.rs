//! Load admission, gates, rollback, unload and fake-instance mode.

mod exec_support;

use exec_support::*;
use nrt::NrtStatus;
use nrt::load::LoadSettings;
use nrt::memory::MemUsage;
use nrt_neff::NeffHeader;

const BYTES: usize = 8 * 128 * 4;

/// The copy example with `edit` applied to its members / header.
fn copy_variant(edit: impl FnOnce(&mut nrt_neff::Members, &mut NeffHeader)) -> Vec<u8> {
    let contents = nrt_neff::read_dir(&examples_dir().join("copy")).unwrap();
    let mut members = contents.members;
    let mut header = contents.header.unwrap();
    edit(&mut members, &mut header);
    pack_members(&header, members)
}

#[test]
fn load_unload_100_times_leaves_the_ledger_unchanged() {
    let (_dev, host) = host();
    host.install_vcore(0).unwrap();
    let baseline = host.memory().ledger();
    let neff = copy_neff();
    let (ins, outs, out) = host_io(data(BYTES, 3), BYTES);
    for i in 0..100 {
        let id = host.load(&neff, 0, -1).unwrap();
        let loaded = host.memory().ledger();
        assert!(loaded.total() > baseline.total());
        // Every started engine's image is booked to the model (carved out
        // of the runtime's instruction arena, so the device total counts it
        // once). `copy` programs SP only; the other engines are not started
        // and get no image.
        let model = loaded.model(id);
        let instr = |t: &nrt::memory::UsageTotals| -> u64 { nrt_hal::EngineId::ALL.iter().map(|e| t.get(MemUsage::instructions_of(*e))).sum() };
        for engine in nrt_hal::EngineId::ALL {
            let booked = model.get(MemUsage::instructions_of(engine));
            if engine == nrt_hal::EngineId::Sp {
                assert!(booked >= 64, "cycle {i}: SP image not booked to the model: {model:?}");
            } else {
                assert_eq!(booked, 0, "cycle {i}: {engine:?} has no program in copy, so no image: {model:?}");
            }
        }
        assert_eq!(instr(&loaded.device_totals), instr(&baseline.device_totals), "cycle {i}: images are re-booked arena bytes, not new memory");
        assert_eq!(loaded.total() - baseline.total(), model.total() - instr(&model), "cycle {i}: every new byte is the model's");
        if i % 10 == 0 {
            host.execute(id, &ins, &outs).unwrap();
            assert_eq!(read_all(&out), data(BYTES, 3));
        }
        host.unload(id).unwrap();
        assert_eq!(host.memory().ledger(), baseline, "after cycle {i}");
    }
}

#[test]
fn admission_rules() {
    let (_dev, host) = host();
    let neff = copy_neff();
    let e = host.load(&neff, 0, 1).unwrap_err();
    assert_eq!((e.status, e.message.as_str()), (NrtStatus::Invalid, "vnc_count is deprecated. only use -1."));
    let e = host.load(&neff, 99, -1).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("99"), "{}", e.message);
    // -1 picks the first logical core without a model.
    let a = host.load(&neff, -1, -1).unwrap();
    let b = host.load(&neff, -1, -1).unwrap();
    let (ma, mb) = (host.models().get(a).unwrap(), host.models().get(b).unwrap());
    assert_eq!((ma.vnc, mb.vnc), (0, 1));
    assert_eq!(host.unload(12345).unwrap_err().status, NrtStatus::InvalidHandle);
}

#[test]
fn target_architecture_and_lnc_must_match_and_legacy_allows_only_older_neffs() {
    let sunda = copy_variant(|m, _| {
        m.insert("kelf-0.json".into(), br#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"version":"0.5","target":"sunda"}"#.to_vec());
    });
    let (_dev, host) = host();
    let e = host.load(&sunda, 0, -1).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("\"sunda\"") && e.message.contains("trn2"), "{}", e.message);
    assert_eq!(host.models().ids(), Vec::<u32>::new());

    let lnc1 = copy_variant(|_, h| h.lnc_size = 1);
    let e = host.load(&lnc1, 0, -1).unwrap_err();
    assert!(e.message.contains("(LNC) 1") && e.message.contains("2 physical cores"), "{}", e.message);
    assert!(e.message.contains("--lnc=2") && e.message.contains("NEURON_LOGICAL_NC_CONFIG=1"), "the message says what to change: {}", e.message);
    let mariana = copy_variant(|m, _| {
        m.insert("kelf-0.json".into(), br#"{"graphs":[{"definition":"sg00/def.json","name":"sg00"}],"version":"0.5","target":"mariana"}"#.to_vec());
    });

    let (_dev, legacy) = host_with(LoadSettings { allow_legacy_neff: true, ..LoadSettings::default() });
    // NEURON_RT_ALLOW_LEGACY_NEFF is for older NEFFs only: a NEFF for a
    // newer generation and an LNC mismatch still fail.
    let e = legacy.load(&mariana, 0, -1).unwrap_err();
    assert!(e.status == NrtStatus::Invalid && e.message.contains("newer NeuronCore"), "{}", e.message);
    assert_eq!(legacy.load(&lnc1, 0, -1).unwrap_err().status, NrtStatus::Invalid);
    let id = legacy.load(&sunda, 0, -1).expect("legacy NEFFs only warn");
    let (ins, outs, out) = host_io(data(BYTES, 4), BYTES);
    legacy.execute(id, &ins, &outs).unwrap();
    assert_eq!(read_all(&out), data(BYTES, 4));
}

#[test]
fn version_and_hash_gates() {
    let (_dev, host) = host();
    let newer = copy_variant(|_, h| h.neff_version_major = 99);
    assert_eq!(host.load(&newer, 0, -1).unwrap_err().status, NrtStatus::UnsupportedNeffVersion);

    let mut corrupt = copy_neff();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xFF;
    // Without VALIDATE_HASH the payload damage may or may not parse; with it
    // the load must fail before anything else.
    let (_dev, strict) = host_with(LoadSettings { validate_hash: true, ..LoadSettings::default() });
    let e = strict.load(&corrupt, 0, -1).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.to_lowercase().contains("hash"), "{}", e.message);
    strict.load(&copy_neff(), 0, -1).expect("an intact NEFF passes the hash check");
}

#[test]
fn a_failure_while_staging_rolls_everything_back() {
    // The trigger names a block no engine JSON defines: found while staging
    // rings, after IO buffers were allocated.
    let bad = copy_variant(|m, _| {
        m.insert("sg00/SP.asm".into(), b"dma_trigger queue=\"qCopy\" block_id=5\npseudo_inst sub=exit_execution\n".to_vec());
    });
    let (_dev, host) = host();
    host.install_vcore(0).unwrap();
    let baseline = host.memory().ledger();
    let e = host.load(&bad, 0, -1).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("block 5"), "{}", e.message);
    assert_eq!(host.memory().ledger(), baseline);
    assert!(host.models().ids().is_empty());
    // The core still works for a good model afterwards.
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    let (ins, outs, out) = host_io(data(BYTES, 5), BYTES);
    host.execute(id, &ins, &outs).unwrap();
    assert_eq!(read_all(&out), data(BYTES, 5));
}

#[test]
fn fake_instance_mode_loads_without_a_device_program() {
    let (_dev, host) = host_with(LoadSettings { fake_instance: true, ..LoadSettings::default() });
    let before = host.memory().ledger();
    let id = host.load(&copy_neff(), 0, -1).unwrap();
    assert_eq!(host.memory().ledger(), before, "no device memory in fake-instance mode");
    let (inputs, outputs) = host.tensor_info(id).unwrap();
    assert_eq!((inputs.len(), outputs.len()), (1, 1));
    assert_eq!(outputs[0].size_bytes(), Some(BYTES as u64));
    let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);
    host.execute(id, &ins, &outs).unwrap();
    host.unload(id).unwrap();
}

#[test]
fn no_device_mode_without_any_device() {
    // What the runtime does when NEURON_RT_FAKE_INSTANCE_TYPE leaves it with
    // no device at all.
    let models = nrt::model::ModelDb::default();
    let id = nrt::load::load_without_device(&models, &copy_neff(), 0, nrt_hal::Arch::Trn2, 2, &LoadSettings::default()).unwrap();
    let model = models.get(id).unwrap();
    assert_eq!(model.inputs[0].name, "input");
    assert!(model.program.is_none());
    let (ins, outs, _) = host_io(data(BYTES, 1), BYTES);
    nrt::exec::execute(&model, &ins, &outs).unwrap();
    let e = nrt::load::load_without_device(&models, &copy_neff(), 0, nrt_hal::Arch::Trn1, 1, &LoadSettings::default()).unwrap_err();
    assert!(e.message.contains("\"cayman\""), "{}", e.message);
}
