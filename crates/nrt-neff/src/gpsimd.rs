//! The GPSIMD (POOL engine, Q7 cores) custom-op libraries a subgraph's
//! def.json names under `ucode_lib`, resolved to their bytes and checked
//! the way the runtime checks them at load.
//!
//! A NEFF carries one base library plus up to eight op libraries, nine in
//! all; more is the load error "Exceeded max number of GPSIMD libs". A
//! model has custom ops exactly when it carries more than one library
//! ([`GpsimdLibSet::has_custom_ops`]). Each library entry names its code
//! member (`library`), its version (`ulib_to_ucode_version`, major must be
//! the runtime's), its opcode (-123 marks the baked default library),
//! `cpu_id` (must be 0), `total_cpus` (0 = unset, 1 or 8) and the functions
//! it exports ({name, opcode, sub_opcode}).
//!
//! In this implementation a library's code member is a WebAssembly module
//! instead of an Xtensa ELF; this module only moves its bytes.

use crate::json::def::{UcodeFunction, UcodeLib, UcodeLibRef};
use crate::json::parse_member;
use crate::neff::{Neff, Subgraph};

/// Most libraries one subgraph may carry: the base library plus eight op
/// libraries.
pub const MAX_GPSIMD_LIBS: usize = 9;
/// `opcode` value marking the baked default (base) library.
pub const DEFAULT_LIB_OPCODE: i64 = -123;
/// Library flags of the baked default library.
pub const DEFAULT_LIB_FLAGS: u32 = 0;
/// Library flags of a user extended-ISA (custom-op) library.
pub const EXT_ISA_LIB_FLAGS: u32 = 6;
/// The runtime's GPSIMD library version; a library's major must match.
pub const RUNTIME_ULIB_VERSION: &str = "1.21.1.0";
/// Longest function name a library may export.
pub const MAX_FUNCTION_NAME: usize = 64;
/// Most functions one library table may hold.
pub const MAX_TABLE_FUNCTIONS: usize = 97;

/// Why a subgraph's GPSIMD libraries were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpsimdError {
    /// More than [`MAX_GPSIMD_LIBS`] libraries.
    #[error("Exceeded max number of GPSIMD libs: {subgraph} carries {count}, at most {MAX_GPSIMD_LIBS} (one base library plus 8 op libraries)")]
    TooManyLibs {
        /// Subgraph.
        subgraph: String,
        /// Libraries found.
        count: usize,
    },
    /// A library entry without `ulib_to_ucode_version`.
    #[error("Missing GPSIMD lib version! ({library} in {subgraph}; expected \"X.Y.Z.W\")")]
    MissingVersion {
        /// Subgraph.
        subgraph: String,
        /// Library member.
        library: String,
    },
    /// A version whose major differs from the runtime's.
    #[error("Mismatch between GPSIMD lib version and NRT version! {library} has {version}, the runtime is {RUNTIME_ULIB_VERSION} (majors must match)")]
    VersionMismatch {
        /// Library member.
        library: String,
        /// The library's version.
        version: String,
    },
    /// `total_cpus` other than 0, 1 or 8.
    #[error("UCode Library {library} has invalid number of total cpus {total_cpus}; expected 1 or 8 (0 = unset)")]
    BadTotalCpus {
        /// Library member.
        library: String,
        /// The value found.
        total_cpus: u32,
    },
    /// `cpu_id` other than 0.
    #[error("UCode Library {library} has cpu_id {cpu_id}; expected 0")]
    BadCpuId {
        /// Library member.
        library: String,
        /// The value found.
        cpu_id: u32,
    },
    /// The same library named twice.
    #[error("UCode Library {library} has already been added")]
    Duplicate {
        /// Library member.
        library: String,
    },
    /// The library member (or the `ucode_lib` manifest) is not in the NEFF.
    #[error("{what} {path:?} named by {subgraph}/def.json is not in the NEFF")]
    MissingMember {
        /// Subgraph.
        subgraph: String,
        /// "GPSIMD library" or "ucode_lib manifest".
        what: &'static str,
        /// Member path looked for.
        path: String,
    },
    /// The `ucode_lib` manifest does not parse.
    #[error("ucode_lib manifest {path}: {message}")]
    BadManifest {
        /// Member path.
        path: String,
        /// Parser message.
        message: String,
    },
    /// A function entry that cannot be staged.
    #[error("UCode Library {library}: function {function:?}: {reason}")]
    BadFunction {
        /// Library member.
        library: String,
        /// Function name.
        function: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// More functions than one table holds.
    #[error("too many ucode functions in this table: {count}, at most {MAX_TABLE_FUNCTIONS}")]
    TooManyFunctions {
        /// Functions found.
        count: usize,
    },
}

/// One function a library exports: the kernel the POOL stream reaches by
/// (opcode, sub_opcode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpsimdFunction {
    /// Kernel name.
    pub name: String,
    /// Opcode byte (the one in the POOL stream).
    pub opcode: u8,
    /// Sub-opcode (the EXTENDED_INST `spec`).
    pub sub_opcode: u8,
}

/// One library with its code bytes, as the runtime stages it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpsimdLib {
    /// Library member name as def.json gives it.
    pub name: String,
    /// Archive path the bytes came from.
    pub path: String,
    /// Version string.
    pub version: String,
    /// [`DEFAULT_LIB_FLAGS`] for the baked default, [`EXT_ISA_LIB_FLAGS`] otherwise.
    pub flags: u32,
    /// CPU id (always 0).
    pub cpu_id: u8,
    /// Q7 cores the library's kernels run on: 0 (unset), 1 or 8.
    pub total_cpus: u8,
    /// Exported functions.
    pub functions: Vec<GpsimdFunction>,
    /// Code image (a WebAssembly module here).
    pub bytes: Vec<u8>,
}

/// The libraries of one subgraph, in def.json order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpsimdLibSet {
    /// The libraries.
    pub libs: Vec<GpsimdLib>,
}

impl GpsimdLibSet {
    /// Number of libraries (libnrt's `num_libs`).
    pub fn num_libs(&self) -> usize {
        self.libs.len()
    }

    /// Whether the model carries custom ops: more than one library
    /// (the base library plus at least one op library).
    pub fn has_custom_ops(&self) -> bool {
        self.num_libs() > 1
    }

    /// The library exporting the kernel for (opcode, sub_opcode), with the
    /// function entry.
    pub fn find(&self, opcode: u8, sub_opcode: u8) -> Option<(&GpsimdLib, &GpsimdFunction)> {
        self.libs
            .iter()
            .flat_map(|l| l.functions.iter().map(move |f| (l, f)))
            .find(|(_, f)| f.opcode == opcode && f.sub_opcode == sub_opcode)
    }
}

/// The library entries def.json's `ucode_lib` names (following a manifest
/// member), without their bytes.
pub fn lib_entries(neff: &Neff, sg: &Subgraph) -> Result<Vec<UcodeLib>, GpsimdError> {
    match &sg.def.ucode_lib {
        None => Ok(Vec::new()),
        Some(UcodeLibRef::Libraries(v)) => Ok(v.clone()),
        Some(UcodeLibRef::Library(l)) => Ok(vec![(**l).clone()]),
        Some(UcodeLibRef::File(name)) => {
            let (path, bytes) = find_member(neff, sg, name).ok_or_else(|| GpsimdError::MissingMember {
                subgraph: sg.name.clone(),
                what: "ucode_lib manifest",
                path: sg.member_path(name),
            })?;
            let parsed: UcodeLibRef = parse_member(&path, bytes).map_err(|e| GpsimdError::BadManifest { path: path.clone(), message: e.to_string() })?;
            match parsed {
                UcodeLibRef::Libraries(v) => Ok(v),
                UcodeLibRef::Library(l) => Ok(vec![*l]),
                UcodeLibRef::File(f) => Err(GpsimdError::BadManifest { path, message: format!("names another manifest {f:?}; expected library entries") }),
            }
        }
    }
}

/// A member named relative to the subgraph directory, else to the root.
fn find_member<'a>(neff: &'a Neff, sg: &Subgraph, name: &str) -> Option<(String, &'a [u8])> {
    [sg.member_path(name), name.to_string()]
        .into_iter()
        .find_map(|p| neff.member(&p).map(|b| (p, b)))
}

fn major(version: &str) -> Option<&str> {
    version.split('.').next().filter(|m| !m.is_empty())
}

/// Checks one entry and reads its bytes.
fn resolve(neff: &Neff, sg: &Subgraph, e: &UcodeLib) -> Result<GpsimdLib, GpsimdError> {
    let library = e.library.clone();
    let version = e
        .ulib_to_ucode_version
        .clone()
        .ok_or_else(|| GpsimdError::MissingVersion { subgraph: sg.name.clone(), library: library.clone() })?;
    if major(&version).is_none() || major(&version) != major(RUNTIME_ULIB_VERSION) {
        return Err(GpsimdError::VersionMismatch { library, version });
    }
    let cpu_id = e.cpu_id.unwrap_or(0);
    if cpu_id != 0 {
        return Err(GpsimdError::BadCpuId { library, cpu_id });
    }
    let total_cpus = e.total_cpus.unwrap_or(0);
    if !matches!(total_cpus, 0 | 1 | 8) {
        return Err(GpsimdError::BadTotalCpus { library, total_cpus });
    }
    let functions = e.functions.iter().map(|f| function(&library, f)).collect::<Result<Vec<_>, _>>()?;
    let (path, bytes) = find_member(neff, sg, &library).ok_or_else(|| GpsimdError::MissingMember {
        subgraph: sg.name.clone(),
        what: "GPSIMD library",
        path: sg.member_path(&library),
    })?;
    let flags = if e.opcode == Some(DEFAULT_LIB_OPCODE) { DEFAULT_LIB_FLAGS } else { EXT_ISA_LIB_FLAGS };
    Ok(GpsimdLib { name: library, path, version, flags, cpu_id: 0, total_cpus: total_cpus as u8, functions, bytes: bytes.to_vec() })
}

fn function(library: &str, f: &UcodeFunction) -> Result<GpsimdFunction, GpsimdError> {
    let bad = |reason: String| GpsimdError::BadFunction { library: library.to_string(), function: f.name.clone(), reason };
    if f.name.is_empty() || f.name.len() > MAX_FUNCTION_NAME {
        return Err(bad(format!("name must be 1..={MAX_FUNCTION_NAME} characters")));
    }
    let byte = |v: Option<i64>, what: &str| -> Result<u8, GpsimdError> {
        let v = v.unwrap_or(0);
        // Opcodes are signed in the compiler's enum; the stream byte is the low 8 bits.
        if (-128..=255).contains(&v) { Ok(v as u8) } else { Err(bad(format!("{what} {v} does not fit one byte"))) }
    };
    Ok(GpsimdFunction { name: f.name.clone(), opcode: byte(f.opcode, "opcode")?, sub_opcode: byte(f.sub_opcode, "sub_opcode")? })
}

/// The subgraph's libraries with their bytes, checked: at most
/// [`MAX_GPSIMD_LIBS`], versions, `cpu_id` 0, `total_cpus` in {0, 1, 8},
/// no duplicates, function names and table size.
pub fn lib_set(neff: &Neff, sg: &Subgraph) -> Result<GpsimdLibSet, GpsimdError> {
    let entries = lib_entries(neff, sg)?;
    if entries.len() > MAX_GPSIMD_LIBS {
        return Err(GpsimdError::TooManyLibs { subgraph: sg.name.clone(), count: entries.len() });
    }
    let mut libs: Vec<GpsimdLib> = Vec::with_capacity(entries.len());
    for e in &entries {
        if libs.iter().any(|l| l.name == e.library) {
            return Err(GpsimdError::Duplicate { library: e.library.clone() });
        }
        libs.push(resolve(neff, sg, e)?);
    }
    let count: usize = libs.iter().map(|l| l.functions.len()).sum();
    if count > MAX_TABLE_FUNCTIONS {
        return Err(GpsimdError::TooManyFunctions { count });
    }
    Ok(GpsimdLibSet { libs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_compare_on_the_first_component() {
        assert_eq!(major("1.2.3.4"), Some("1"));
        assert_eq!(major(""), None);
        assert_eq!(major(".1"), None);
    }

    #[test]
    fn custom_ops_need_more_than_one_library() {
        let lib = |n: &str| GpsimdLib { name: n.into(), path: n.into(), version: "1.0.0.0".into(), flags: 6, cpu_id: 0, total_cpus: 8, functions: vec![], bytes: vec![] };
        let mut set = GpsimdLibSet::default();
        assert!(!set.has_custom_ops());
        set.libs.push(lib("base"));
        assert!(!set.has_custom_ops());
        set.libs.push(lib("relu"));
        assert!(set.has_custom_ops());
    }
}
