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

/// Checks target architecture, LNC size and subgraph count. Returns the
/// mismatches that NEURON_RT_ALLOW_LEGACY_NEFF may downgrade to warnings;
/// a subgraph count the logical core cannot run is always an error.
pub fn check(program: &Program, device_arch: Arch, vcore_cores: usize) -> NrtResult<Vec<Mismatch>> {
    let mut out = Vec::new();
    if let Some(t) = &program.target {
        match target_arches(t) {
            Some(arches) if arches.contains(&device_arch) => {}
            Some(_) => out.push(Mismatch(format!(
                "NEFF target architecture {t:?} does not match the device architecture {device_arch} ({})",
                match device_arch {
                    Arch::Trn1 | Arch::Inf2 => "sunda",
                    Arch::Trn2 => "cayman",
                    Arch::Trn3 => "mariana",
                }
            ))),
            None => out.push(Mismatch(format!("NEFF target architecture {t:?} is unknown; the device is {device_arch}"))),
        }
    }
    if program.lnc_size as usize != vcore_cores {
        out.push(Mismatch(format!(
            "NEFF was compiled for logical core size (LNC) {} but the logical core has {vcore_cores} physical cores",
            program.lnc_size
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
    fn arch_and_lnc_mismatches_name_both_sides() {
        assert!(check(&prog(Some("cayman"), 2, 2), Arch::Trn2, 2).unwrap().is_empty());
        let m = check(&prog(Some("sunda"), 1, 1), Arch::Trn2, 2).unwrap();
        assert_eq!(m.len(), 2);
        assert!(m[0].0.contains("\"sunda\"") && m[0].0.contains("trn2"), "{:?}", m[0]);
        assert!(m[1].0.contains("LNC) 1") && m[1].0.contains("2 physical"), "{:?}", m[1]);
        assert_eq!(check(&prog(None, 1, 3), Arch::Trn1, 2).unwrap_err().status, crate::NrtStatus::LoadNotEnoughNc);
    }
}
