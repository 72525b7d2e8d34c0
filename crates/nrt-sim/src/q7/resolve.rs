//! EXTENDED_INST's kernel resolution (`docs/gpsimd.md` §4): the library
//! set's rows first, then the installed image's `kernel_info_table`.

use super::wasm::{self, CompiledLib};
use super::{Cluster, DispatchError, Q7_CORES};
use crate::port::Bus;
use nrt_hal::DeviceAddr;
use nrt_isa::ucode::exception::CLUSTER_Q7;
use nrt_isa::ucode::{EXTENDED_INST_OPCODE, GpsimdCause, LIBSET_ROW_BYTES, LibSetRow, LibraryImage, UCPL_HEADER_BYTES, UcplHeader};
use std::sync::Arc;

/// A resolved op: per invoked core, the library and kernel name.
#[derive(Debug)]
pub struct Resolved {
    /// Cores to run (1 or 8).
    pub total: u32,
    /// Library and kernel per invoked core.
    pub kernels: Vec<(Arc<CompiledLib>, String)>,
}

fn err(cause: GpsimdCause, q7: u8, why: String) -> DispatchError {
    DispatchError { cause, q7, why }
}

/// Reads and compiles the library file staged at `addr`, at most
/// `max_bytes` long.
fn staged_library(dev: &impl Bus, addr: u64, max_bytes: u64) -> Result<Arc<CompiledLib>, DispatchError> {
    let bad = |why: String| err(GpsimdCause::BadImage, CLUSTER_Q7, why);
    let mut head = [0u8; UCPL_HEADER_BYTES];
    dev.read(DeviceAddr(addr), &mut head).map_err(|e| bad(format!("library at {addr:#x}: {e}")))?;
    let h = UcplHeader::decode(&head).map_err(|e| bad(format!("library at {addr:#x}: {e}")))?;
    if h.file_len() > max_bytes {
        return Err(bad(format!("library at {addr:#x} is {} bytes; the Q7 memories hold {max_bytes}", h.file_len())));
    }
    let mut file = vec![0u8; h.file_len() as usize];
    dev.read(DeviceAddr(addr), &mut file).map_err(|e| bad(format!("library at {addr:#x}: {e}")))?;
    let lib = LibraryImage::from_file(&file).map_err(|e| bad(format!("library at {addr:#x}: {e}")))?;
    wasm::compiled(&lib).map_err(|e| bad(format!("library at {addr:#x}: {e}")))
}

/// The compiled image installed on Q7 core `q` (cached per IRAM/DRAM
/// generation).
fn installed(cluster: &Cluster, q: usize) -> Result<Arc<CompiledLib>, DispatchError> {
    let mut m = cluster.core_mem(q);
    if let Some((g, r)) = &m.compiled
        && *g == m.generation
    {
        return r.clone().map_err(|why| err(GpsimdCause::BadImage, q as u8, why));
    }
    let r = if m.iram.is_empty() {
        Err(format!("no image installed on Q7 core {q}"))
    } else {
        LibraryImage::from_parts(&m.iram, &m.dram).map_err(|e| format!("Q7 core {q}'s image: {e}")).and_then(|lib| wasm::compiled(&lib))
    };
    m.compiled = Some((m.generation, r.clone()));
    r.map_err(|why| err(GpsimdCause::BadImage, q as u8, why))
}

/// Finds the kernel for EXTENDED_INST `spec`.
pub fn resolve(dev: &impl Bus, cluster: &Cluster, spec: u8) -> Result<Resolved, DispatchError> {
    let (addr, rows) = cluster.libset();
    let op = EXTENDED_INST_OPCODE;
    if rows > 0 {
        let mut raw = vec![0u8; rows as usize * LIBSET_ROW_BYTES];
        dev.read(DeviceAddr(addr), &mut raw)
            .map_err(|e| err(GpsimdCause::BadLibSet, CLUSTER_Q7, format!("library set at {addr:#x}: {e}")))?;
        for (i, chunk) in raw.chunks_exact(LIBSET_ROW_BYTES).enumerate() {
            // Rows that are not in use are skipped without being checked.
            if chunk[0] != 1 || chunk[1] != op || chunk[2] != spec {
                continue;
            }
            let row = LibSetRow::decode(chunk).map_err(|e| err(GpsimdCause::BadLibSet, CLUSTER_Q7, format!("row {i}: {e}")))?;
            let lib = staged_library(dev, row.library_addr, cluster.iram_bytes + cluster.dram_bytes)?;
            let kernel = if row.func_name.is_empty() {
                match lib.lookup(spec, op) {
                    Some(Ok(k)) => k.to_string(),
                    Some(Err(why)) => return Err(err(GpsimdCause::BadImage, CLUSTER_Q7, why)),
                    None => return Err(err(GpsimdCause::NoKernel, CLUSTER_Q7, format!("row {i}'s library has no (spec {spec}, {op:#x}) row"))),
                }
            } else {
                lib.by_name(&row.func_name)
                    .ok_or_else(|| err(GpsimdCause::NoKernel, CLUSTER_Q7, format!("row {i}'s library has no kernel {:?}", row.func_name)))?
                    .to_string()
            };
            return Ok(Resolved { total: row.cores(), kernels: vec![(lib, kernel); row.cores() as usize] });
        }
    }
    let mut kernels = Vec::with_capacity(Q7_CORES);
    for q in 0..Q7_CORES {
        let lib = installed(cluster, q)?;
        let kernel = match lib.lookup(spec, op) {
            Some(Ok(k)) => k.to_string(),
            Some(Err(why)) => return Err(err(GpsimdCause::BadImage, q as u8, why)),
            None => {
                return Err(err(GpsimdCause::NoKernel, q as u8, format!("no kernel_info_table row for (spec {spec}, opcode {op:#x})")));
            }
        };
        kernels.push((lib, kernel));
    }
    Ok(Resolved { total: Q7_CORES as u32, kernels })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::arch::TRN2;
    use nrt_isa::ucode::stock_library;

    /// The stock library installed on core 0 resolves in the default build;
    /// without the `q7` feature it is refused as a bad image whose message
    /// names the missing feature (never a panic, never a silent no-op).
    #[test]
    fn installed_library_compiles_or_names_the_missing_feature() {
        let cluster = Cluster::new(&TRN2);
        {
            let lib = stock_library();
            let mut m = cluster.core_mem(0);
            m.iram = lib.iram();
            m.dram = lib.dram();
            m.generation += 1;
        }
        let r = installed(&cluster, 0);
        if cfg!(feature = "q7") {
            assert!(r.is_ok(), "{:?}", r.err());
        } else {
            let e = r.expect_err("a build without wasmtime refuses the library");
            assert_eq!(e.cause, GpsimdCause::BadImage);
            assert!(e.why.contains("`q7` cargo feature"), "{}", e.why);
        }
    }
}
