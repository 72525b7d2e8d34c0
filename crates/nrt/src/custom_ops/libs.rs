//! Staging a model's GPSIMD libraries on a core (seed 001 §4.4):
//!
//! - more than nine libraries: "Exceeded max number of GPSIMD libs";
//! - exactly one (the extended-ISA library): staged once per core into
//!   runtime memory under the staging lock and shared by every model on
//!   that core; it lives until the core is torn down;
//! - two to nine (custom ops): staged per model into memory the model
//!   owns, freed when the model is unloaded. The free is bracketed by
//!   `has_custom_ops`, as libnrt's `ucode_free_libs`: a model whose set
//!   is the shared single library frees nothing.
//!
//! Staging writes each library's code and, after them, the resolver
//! table: one 280-byte row per exported function {+0 valid, +1 opcode,
//! +2 sub_opcode, +3 cpu_id flag, +4 total_cpus (1 or 8; an unset 0 is
//! written as 1), +0x0C flags, +0x10 u64
//! library device address, +0x18 `name[256]`} that every Q7 core of the
//! POOL engine resolves opcodes through.

use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::model::ModelId;
use crate::status::{NrtError, NrtResult};
use nrt_hal::{CoreId, DeviceAddr};
use nrt_neff::gpsimd::{GpsimdLibSet, MAX_GPSIMD_LIBS};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes per resolver-table row.
pub const TABLE_ROW_BYTES: usize = 280;
/// Bytes of a row's name field.
pub const TABLE_NAME_BYTES: usize = 256;
/// Offset of the library address in a row.
pub const TABLE_LIB_ADDR_OFFSET: usize = 0x10;
/// Offset of the name in a row.
pub const TABLE_NAME_OFFSET: usize = 0x18;
/// Alignment of staged library images.
pub const LIB_ALIGN: u64 = 256;

/// One staged library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedLib {
    /// Library member name.
    pub name: String,
    /// Device address of its code.
    pub addr: DeviceAddr,
    /// Code bytes.
    pub len: u64,
}

/// A library set on the device: the libraries and their resolver table.
#[derive(Debug, PartialEq, Eq)]
pub struct StagedLibSet {
    /// Core it was staged on.
    pub core: CoreId,
    /// Libraries, in def.json order.
    pub libs: Vec<StagedLib>,
    /// Device address of the resolver table.
    pub table: DeviceAddr,
    /// Rows in the table.
    pub table_rows: u32,
    /// libnrt's `num_libs`.
    pub num_libs: usize,
    /// Shared by every model on the core (the single extended-ISA library).
    pub shared: bool,
    allocations: Vec<DeviceAddr>,
}

impl StagedLibSet {
    /// `ucode_model_has_custom_ops`: more than one library.
    pub fn has_custom_ops(&self) -> bool {
        self.num_libs > 1
    }
}

/// The resolver table of `set`, with library `i` at `lib_addrs[i]`.
pub fn resolver_table(set: &GpsimdLibSet, lib_addrs: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for (lib, addr) in set.libs.iter().zip(lib_addrs) {
        for f in &lib.functions {
            let mut row = [0u8; TABLE_ROW_BYTES];
            row[0] = 1;
            row[1] = f.opcode;
            row[2] = f.sub_opcode;
            row[3] = lib.cpu_id;
            // An unset total_cpus (0) runs the kernel on one core.
            row[4] = if lib.total_cpus == 0 { 1 } else { lib.total_cpus };
            row[0x0C..0x10].copy_from_slice(&(lib.flags & 7).to_le_bytes());
            row[TABLE_LIB_ADDR_OFFSET..TABLE_LIB_ADDR_OFFSET + 8].copy_from_slice(&addr.to_le_bytes());
            let n = f.name.len().min(TABLE_NAME_BYTES - 1);
            row[TABLE_NAME_OFFSET..TABLE_NAME_OFFSET + n].copy_from_slice(&f.name.as_bytes()[..n]);
            out.extend_from_slice(&row);
        }
    }
    out
}

/// The per-core cache of shared single-library sets, and a count of
/// device stagings (what the sharing rule saves).
#[derive(Debug, Default)]
pub struct LibStaging {
    shared: Mutex<HashMap<CoreId, Arc<StagedLibSet>>>,
    stagings: AtomicU64,
}

impl LibStaging {
    /// Library sets written to the device so far.
    pub fn stagings(&self) -> u64 {
        self.stagings.load(Ordering::Relaxed)
    }

    /// The shared set of `core`, if one is staged.
    pub fn shared_set(&self, core: CoreId) -> Option<Arc<StagedLibSet>> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner()).get(&core).cloned()
    }

    /// Stages `set` for model `model` on `core` by the count rule; `None`
    /// when the model carries no libraries.
    pub fn stage(&self, memory: &DeviceMemory, core: CoreId, model: ModelId, set: &GpsimdLibSet) -> NrtResult<Option<Arc<StagedLibSet>>> {
        match set.num_libs() {
            0 => Ok(None),
            n if n > MAX_GPSIMD_LIBS => Err(NrtError::invalid(format!("Exceeded max number of GPSIMD libs: {n}, at most {MAX_GPSIMD_LIBS}"))),
            1 => {
                let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(s) = shared.get(&core) {
                    if s.libs[0].name == set.libs[0].name {
                        return Ok(Some(s.clone()));
                    }
                    return Err(NrtError::invalid(format!(
                        "NC {}: extended-ISA library {:?} is staged; a second single library {:?} cannot replace it while models share it",
                        core.0, s.libs[0].name, set.libs[0].name
                    )));
                }
                let s = Arc::new(self.write(memory, core, MemOwner::Runtime, set, true)?);
                shared.insert(core, s.clone());
                Ok(Some(s))
            }
            _ => Ok(Some(Arc::new(self.write(memory, core, MemOwner::Model(model), set, false)?))),
        }
    }

    fn write(&self, memory: &DeviceMemory, core: CoreId, owner: MemOwner, set: &GpsimdLibSet, shared: bool) -> NrtResult<StagedLibSet> {
        let mut taken = Vec::new();
        let r = Self::write_inner(memory, core, owner, set, &mut taken);
        match r {
            Ok((libs, table, table_rows)) => {
                self.stagings.fetch_add(1, Ordering::Relaxed);
                Ok(StagedLibSet { core, libs, table, table_rows, num_libs: set.num_libs(), shared, allocations: taken })
            }
            Err(e) => {
                for a in taken {
                    let _ = memory.free(a);
                }
                Err(e)
            }
        }
    }

    fn write_inner(memory: &DeviceMemory, core: CoreId, owner: MemOwner, set: &GpsimdLibSet, taken: &mut Vec<DeviceAddr>) -> NrtResult<(Vec<StagedLib>, DeviceAddr, u32)> {
        let device = memory.device();
        let mut libs = Vec::with_capacity(set.libs.len());
        for l in &set.libs {
            let len = l.bytes.len() as u64;
            let addr = memory.alloc(core, owner, MemUsage::UcodeLib, len.max(1), LIB_ALIGN)?;
            taken.push(addr);
            device.write(addr, &l.bytes).map_err(|e| NrtError::failure(format!("staging GPSIMD library {:?}: {e}", l.name)))?;
            libs.push(StagedLib { name: l.name.clone(), addr, len });
        }
        let addrs: Vec<u64> = libs.iter().map(|l| l.addr.get()).collect();
        let table = resolver_table(set, &addrs);
        let rows = (table.len() / TABLE_ROW_BYTES) as u32;
        let at = memory.alloc(core, owner, MemUsage::UcodeLib, (table.len() as u64).max(TABLE_ROW_BYTES as u64), 64)?;
        taken.push(at);
        if !table.is_empty() {
            device.write(at, &table).map_err(|e| NrtError::failure(format!("staging the GPSIMD resolver table: {e}")))?;
        }
        Ok((libs, at, rows))
    }

    /// Core teardown: frees every shared set.
    pub fn teardown(&self, memory: &DeviceMemory) -> NrtResult<()> {
        let sets: Vec<Arc<StagedLibSet>> = self.shared.lock().unwrap_or_else(|e| e.into_inner()).drain().map(|(_, s)| s).collect();
        let mut first = Ok(());
        for s in sets {
            if let Err(e) = free_all(memory, &s.allocations)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}

/// `ucode_free_libs` at model unload (or load rollback): frees the
/// model's set only when it carries custom ops; the shared single library
/// stays until the core is torn down.
pub fn release_model(memory: &DeviceMemory, set: &StagedLibSet) -> NrtResult<()> {
    if !set.has_custom_ops() {
        return Ok(());
    }
    free_all(memory, &set.allocations)
}

fn free_all(memory: &DeviceMemory, addrs: &[DeviceAddr]) -> NrtResult<()> {
    let mut first = Ok(());
    for a in addrs {
        if let Err(e) = memory.free(*a)
            && first.is_ok()
        {
            first = Err(e);
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_neff::gpsimd::{GpsimdFunction, GpsimdLib};

    #[test]
    fn table_rows_follow_the_resolver_layout() {
        let set = GpsimdLibSet {
            libs: vec![GpsimdLib {
                name: "relu.wasm".into(),
                path: "sg00/relu.wasm".into(),
                version: "1.0.0.0".into(),
                flags: 6,
                cpu_id: 0,
                total_cpus: 8,
                functions: vec![GpsimdFunction { name: "relu".into(), opcode: 0xF0, sub_opcode: 5 }, GpsimdFunction { name: "relu2".into(), opcode: 0xF0, sub_opcode: 6 }],
                bytes: vec![],
            }],
        };
        let t = resolver_table(&set, &[0x0012_3456_789A]);
        assert_eq!(t.len(), 2 * TABLE_ROW_BYTES);
        assert_eq!(&t[..5], &[1, 0xF0, 5, 0, 8]);
        assert_eq!(&t[0x0C..0x10], &[6, 0, 0, 0]);
        assert_eq!(u64::from_le_bytes(t[0x10..0x18].try_into().unwrap()), 0x0012_3456_789A);
        assert_eq!(&t[0x18..0x1C], b"relu");
        assert_eq!(t[0x1C], 0);
        assert_eq!(t[TABLE_ROW_BYTES + 2], 6);
    }
}
