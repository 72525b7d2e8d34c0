//! Vars as memory references (libnrt's `kbin_mem_ref`): a typed view of
//! def.json's `var` map that the static memory plan places.

use super::ProgramError;
use nrt_neff::{Neff, Subgraph, VarType};

/// What a var is, with the type-specific data the plan needs. The numeric
/// codes of [`MemRefKind::mr_type`] are libnrt's `kbin_mr_type` values.
#[derive(Clone, Debug, PartialEq)]
pub enum MemRefKind {
    /// The core's state buffer (SBUF) window.
    StateBuffer,
    /// Model input number `index` (bound per execution).
    Input {
        /// Position in the model's input list.
        index: usize,
    },
    /// Model output number `index` (bound per execution).
    Output {
        /// Position in the model's output list.
        index: usize,
    },
    /// A constant staged from the NEFF member `file_name` (the bytes stay
    /// in the parsed NEFF until staging copies them to the device).
    File {
        /// Payload length (the `.npy` array data, or the raw member).
        payload_len: u64,
    },
    /// Private HBM scratch.
    TmpBuf,
    /// A window of the core's shared scratchpad.
    Virtual {
        /// Offset into the shared scratchpad.
        offset: u64,
    },
    /// An 8-byte slot holding the address of another var.
    Pointer {
        /// The var whose address is stored.
        referenced_var_id: u64,
    },
    /// A list of var ids (host-side only).
    List {
        /// Listed var ids.
        ids: Vec<u64>,
    },
    /// A descriptor-generation table: a device table of the listed vars' addresses.
    DgeTable {
        /// Listed var ids.
        ids: Vec<u64>,
    },
    /// A buffer of another core (LNC), shared or sharded; placed like private scratch.
    CrossCore,
}

impl MemRefKind {
    /// libnrt's `kbin_mr_type` code of this kind.
    pub fn mr_type(&self) -> u32 {
        match self {
            MemRefKind::StateBuffer => 1,
            MemRefKind::File { .. } => 2,
            MemRefKind::TmpBuf => 4,
            MemRefKind::Input { .. } => 5,
            MemRefKind::Output { .. } => 6,
            MemRefKind::Pointer { .. } => 7,
            MemRefKind::Virtual { .. } => 8,
            MemRefKind::List { .. } => 9,
            MemRefKind::DgeTable { .. } => 10,
            MemRefKind::CrossCore => 11,
        }
    }
}

/// One var of a subgraph.
#[derive(Clone, Debug, PartialEq)]
pub struct MemRef {
    /// The var's key in def.json (for inputs/outputs: the tensor name).
    pub name: String,
    /// Its `var_id`.
    pub var_id: u64,
    /// Size in bytes (state buffer: the reserved window, 0 if unknown).
    pub size: u64,
    /// Alignment in bytes (a power of two, at least 1).
    pub align: u64,
    /// Type and type-specific data.
    pub kind: MemRefKind,
}

fn bad(sg: &Subgraph, var: &str, reason: impl Into<String>) -> ProgramError {
    ProgramError::BadVar { subgraph: sg.name.clone(), var: var.to_string(), reason: reason.into() }
}

/// Builds the memory references of a subgraph in var-id order.
pub fn mem_refs(neff: &Neff, sg: &Subgraph) -> Result<Vec<MemRef>, ProgramError> {
    let mut out = Vec::with_capacity(sg.def.var.len());
    for (name, var) in sg.def.vars_of_type_all() {
        let size = var.size.unwrap_or(0);
        let align = match var.alignment {
            None | Some(0) => 1,
            Some(a) if a.is_power_of_two() => a,
            Some(a) => return Err(bad(sg, name, format!("alignment {a} is not a power of two"))),
        };
        let need_size = |what: &str| {
            if var.size.is_some_and(|s| s > 0) { Ok(()) } else { Err(bad(sg, name, format!("a {what} var needs a non-zero size"))) }
        };
        let kind = match &var.ty {
            VarType::StateBuffer => MemRefKind::StateBuffer,
            VarType::Input => {
                need_size("input")?;
                let index = neff.inputs().iter().position(|t| t.name == *name).ok_or_else(|| {
                    bad(sg, name, "an input var whose name is not among the model's inputs")
                })?;
                MemRefKind::Input { index }
            }
            VarType::Output => {
                need_size("output")?;
                let index = neff.outputs().iter().position(|t| t.name == *name).ok_or_else(|| {
                    bad(sg, name, "an output var whose name is not among the model's outputs")
                })?;
                MemRefKind::Output { index }
            }
            VarType::File => {
                let c = neff.constant(sg, name).map_err(|e| ProgramError::BadConstant {
                    subgraph: sg.name.clone(),
                    var: name.to_string(),
                    reason: e.to_string(),
                })?;
                let payload_len = c.data().len() as u64;
                if var.size.is_some_and(|s| s < payload_len) {
                    return Err(bad(sg, name, format!("size {size} is smaller than its {payload_len}-byte constant")));
                }
                MemRefKind::File { payload_len }
            }
            VarType::TmpBuf => {
                need_size("tmp-buf")?;
                MemRefKind::TmpBuf
            }
            VarType::Virtual => {
                need_size("virtual")?;
                MemRefKind::Virtual { offset: var.backing_variable_off.unwrap_or(0) }
            }
            VarType::Pointer => MemRefKind::Pointer {
                referenced_var_id: var
                    .referenced_var_id
                    .ok_or_else(|| bad(sg, name, "a pointer var needs referenced_var_id"))?,
            },
            VarType::List => MemRefKind::List { ids: var.list.clone().unwrap_or_default() },
            VarType::DgeTable => MemRefKind::DgeTable { ids: var.list.clone().unwrap_or_default() },
            VarType::Remote | VarType::Shared | VarType::Sharded => {
                need_size("cross-core")?;
                MemRefKind::CrossCore
            }
            other => return Err(bad(sg, name, format!("var type {other:?} is not supported by this runtime"))),
        };
        let size = match &kind {
            MemRefKind::Pointer { .. } => size.max(8),
            MemRefKind::DgeTable { ids } => size.max(8 * ids.len() as u64),
            MemRefKind::File { payload_len } => size.max(*payload_len),
            _ => size,
        };
        out.push(MemRef { name: name.to_string(), var_id: var.var_id, size, align, kind });
    }
    out.sort_by_key(|m| m.var_id);
    for w in out.windows(2) {
        if w[0].var_id == w[1].var_id {
            return Err(bad(sg, &w[1].name, format!("var_id {} is also used by {:?}", w[1].var_id, w[0].name)));
        }
    }
    for m in &out {
        let ids: &[u64] = match &m.kind {
            MemRefKind::Pointer { referenced_var_id } => std::slice::from_ref(referenced_var_id),
            MemRefKind::DgeTable { ids } | MemRefKind::List { ids } => ids,
            _ => &[],
        };
        if let Some(missing) = ids.iter().find(|id| out.iter().all(|o| o.var_id != **id)) {
            return Err(bad(sg, &m.name, format!("refers to var_id {missing}, which no var has")));
        }
    }
    Ok(out)
}

/// Iteration over every var of a def.json with its name.
trait AllVars {
    fn vars_of_type_all(&self) -> impl Iterator<Item = (&str, &nrt_neff::Var)>;
}

impl AllVars for nrt_neff::DefJson {
    fn vars_of_type_all(&self) -> impl Iterator<Item = (&str, &nrt_neff::Var)> {
        self.var.iter().map(|(k, v)| (k.as_str(), v))
    }
}
