//! Admission checks before anything touches the device: the NEFF's target
//! architecture and LNC size against the device and the logical core.

use crate::program::Program;
use crate::status::{NrtError, NrtResult};
use nrt_hal::Arch;

/// The architectures a kelf `target` names (compiler code names and
/// generation tags).
pub fn target_arches(target: &str) -> Option<&'static [Arch]> {
    match target.to_ascii_lowercase().as_str() {
        "sunda" | "v2" | "trn1" | "inf2" => Some(&[Arch::Trn1, Arch::Inf2]),
        "cayman" | "v3" | "trn2" => Some(&[Arch::Trn2]),
        "mariana" | "v4" | "trn3" => Some(&[Arch::Trn3]),
        _ => None,
    }
}

/// A mismatch found by [`check`]: fatal unless legacy NEFFs are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch(pub String);

/// The compiler's code name of an architecture (what a kelf `target` says).
pub fn code_name(arch: Arch) -> &'static str {
    match arch {
        Arch::Trn1 | Arch::Inf2 => "sunda",
        Arch::Trn2 => "cayman",
        Arch::Trn3 => "mariana",
    }
}

/// Checks the NEFF's target against the device, its LNC size against the
/// logical core, and the subgraph count (libnrt 2.32's load checks).
///
/// - Target: the kelf `target` is the only revision a NEFF carries that
///   any public source shows (the compiler's revision-ID field is not
///   published), so the check is by generation. A NEFF for an older
///   generation is a [`Mismatch`], which NEURON_RT_ALLOW_LEGACY_NEFF
///   downgrades to a warning (its documented meaning: an older-arch NEFF
///   on a newer device); one for a newer generation cannot run and is
///   always NRT_INVALID; an unknown target is a [`Mismatch`].
/// - LNC: the compiler's `--lnc` must equal the runtime's logical core size
///   (NEURON_LOGICAL_NC_CONFIG); a mismatch is always NRT_INVALID, with
///   the two ways out.
/// - A subgraph count the logical core cannot run is NRT_LOAD_NOT_ENOUGH_NC.
pub fn check(program: &Program, device_arch: Arch, vcore_cores: usize) -> NrtResult<Vec<Mismatch>> {
    let mut out = Vec::new();
    if let Some(t) = &program.target {
        match target_arches(t) {
            Some(arches) if arches.contains(&device_arch) => {}
            Some(arches) => {
                let neff = arches[0];
                let (have, want) = (device_arch.desc().driver_arch, neff.desc().driver_arch);
                let text = format!(
                    "NEFF target architecture {t:?} ({neff}) does not match the device architecture {device_arch} ({})",
                    code_name(device_arch)
                );
                if want > have {
                    return Err(NrtError::invalid(format!("{text}: the NEFF was compiled for a newer NeuronCore than this device has; recompile it for {device_arch}")));
                }
                out.push(Mismatch(format!("{text}: the NEFF was compiled for an older NeuronCore; recompile it for {device_arch}, or set NEURON_RT_ALLOW_LEGACY_NEFF=1 to run it")));
            }
            None => out.push(Mismatch(format!("NEFF target architecture {t:?} is unknown; the device is {device_arch} ({})", code_name(device_arch)))),
        }
    }
    if program.lnc_size as usize != vcore_cores {
        let n = program.lnc_size;
        let rerun = if matches!(device_arch, Arch::Trn1 | Arch::Inf2) {
            format!(" ({device_arch} logical cores are always one physical core)")
        } else {
            format!(", or run with NEURON_LOGICAL_NC_CONFIG={n} to match the NEFF")
        };
        return Err(NrtError::invalid(format!(
            "LNC mismatch: the NEFF was compiled for logical core size (LNC) {n} but the logical core has {vcore_cores} physical cores (NEURON_LOGICAL_NC_CONFIG={vcore_cores}); recompile it with --lnc={vcore_cores}{rerun}"
        )));
    }
    let n = program.subgraphs.len();
    if n != 1 && n != vcore_cores {
        return Err(NrtError::new(
            crate::NrtStatus::LoadNotEnoughNc,
            format!("Insufficient number of pncs, required {n}, available {vcore_cores}"),
        ));
    }
    if n > crate::exec::harvest::MAX_CORES {
        return Err(NrtError::invalid(format!("{n} subgraphs; at most {} are supported", crate::exec::harvest::MAX_CORES)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(target: Option<&str>, lnc: u32, sgs: usize) -> Program {
        Program {
            name: "m".into(),
            target: target.map(str::to_string),
            lnc_size: lnc,
            inputs: vec![],
            outputs: vec![],
            subgraphs: (0..sgs)
                .map(|i| crate::program::SubgraphProgram { name: format!("sg0{i}"), vars: vec![], queue_sets: vec![], dma_blocks: vec![], streams: vec![], dma2d: vec![] })
                .collect(),
        }
    }

    #[test]
    fn arch_and_lnc_mismatches_name_both_sides_and_what_to_change() {
        assert!(check(&prog(Some("cayman"), 2, 2), Arch::Trn2, 2).unwrap().is_empty());
        // An older NEFF: a mismatch NEURON_RT_ALLOW_LEGACY_NEFF may allow.
        let m = check(&prog(Some("sunda"), 2, 1), Arch::Trn2, 2).unwrap();
        assert_eq!(m.len(), 1);
        assert!(m[0].0.contains("\"sunda\"") && m[0].0.contains("trn2") && m[0].0.contains("NEURON_RT_ALLOW_LEGACY_NEFF=1"), "{:?}", m[0]);
        // A newer NEFF never runs.
        let e = check(&prog(Some("mariana"), 2, 1), Arch::Trn2, 2).unwrap_err();
        assert!(e.status == crate::NrtStatus::Invalid && e.message.contains("newer NeuronCore") && e.message.contains("recompile it for trn2"), "{}", e.message);
        // LNC: always an error, naming the compiler flag and the variable.
        let e = check(&prog(Some("cayman"), 1, 1), Arch::Trn2, 2).unwrap_err();
        assert!(e.message.contains("(LNC) 1") && e.message.contains("2 physical"), "{}", e.message);
        assert!(e.message.contains("--lnc=2") && e.message.contains("NEURON_LOGICAL_NC_CONFIG=1"), "{}", e.message);
        let e = check(&prog(Some("sunda"), 2, 1), Arch::Trn1, 1).unwrap_err();
        assert!(e.message.contains("--lnc=1") && !e.message.contains("NEURON_LOGICAL_NC_CONFIG=2"), "{}", e.message);
        assert_eq!(check(&prog(None, 1, 3), Arch::Trn1, 1).unwrap_err().status, crate::NrtStatus::LoadNotEnoughNc);
    }
}
