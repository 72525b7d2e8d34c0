//! The parsed NEFF: header, members and the manifest chain
//! `neff.json` -> `kelf-N.json` -> `sgNN/def.json` -> engine JSONs/streams.
//!
//! Where a producer left a manifest out, the reader falls back: subgraphs
//! are discovered from `sgNN/def.json` members, and the model's inputs and
//! outputs come from the `input`/`output` vars of the first def.json.

use crate::archive::{Members, PayloadFormat, ReadLimits, read_members};
use crate::error::{NeffError, Result};
use crate::hash::HashKind;
use crate::header::{HEADER_SIZE, NeffHeader};
use crate::json::def::{DefJson, EngineKind, VarType};
use crate::json::engine::{DmaBlock, EngineJson};
use crate::json::graph::NeffGraph;
use crate::json::kelf::{InfoJson, KelfJson};
use crate::json::parse_member;
use crate::npy::Constant;
use crate::signature::{TensorSignature, io_from_defs, io_from_graph};
use crate::validate::check_dma_blocks;

/// Name of the top-level graph member.
pub const GRAPH_MEMBER: &str = "neff.json";
/// Older name of the top-level graph member.
pub const LEGACY_GRAPH_MEMBER: &str = "kelp.json";
/// KELF descriptor names tried when neff.json does not name one.
pub const KELF_MEMBERS: [&str; 2] = ["kelf-0.json", "kelf-a.json"];
/// Bytes per instruction slot; every engine stream is a whole number of them.
pub const INSTRUCTION_SIZE: usize = 64;

/// How to read a NEFF.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Archive-bomb limits.
    pub limits: ReadLimits,
    /// Check the header hash against the payload (NEURON_RT_VALIDATE_HASH).
    pub verify_hash: bool,
}

/// One engine's program within a subgraph.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineProgram {
    /// Which engine.
    pub engine: EngineKind,
    /// Archive path of the engine JSON, if def.json names one.
    pub json_path: Option<String>,
    /// The parsed engine JSON.
    pub json: Option<EngineJson>,
    /// Archive path of the instruction stream, if any.
    pub instr_path: Option<String>,
    /// The headerless instruction stream (64-byte slots).
    pub instructions: Vec<u8>,
}

impl EngineProgram {
    /// Number of 64-byte instruction slots.
    pub fn instruction_count(&self) -> usize {
        self.instructions.len() / INSTRUCTION_SIZE
    }

    /// Number of DMA descriptors across the engine's blocks.
    pub fn descriptor_count(&self) -> usize {
        self.json.as_ref().map_or(0, |j| j.dma.iter().map(|b| b.desc.len()).sum())
    }
}

/// One subgraph (loaded onto its own physical NeuronCore).
#[derive(Clone, Debug, PartialEq)]
pub struct Subgraph {
    /// Name from the KELF descriptor (or the directory name).
    pub name: String,
    /// Directory holding its members, e.g. "sg00" (empty for the root).
    pub dir: String,
    /// Archive path of its def.json.
    pub def_path: String,
    /// The parsed definition.
    pub def: DefJson,
    /// Programs of the engines def.json names, in engine index order.
    pub engines: Vec<EngineProgram>,
}

impl Subgraph {
    /// The program of `engine`, if the subgraph has one.
    pub fn engine(&self, engine: EngineKind) -> Option<&EngineProgram> {
        self.engines.iter().find(|p| p.engine == engine)
    }

    /// Every DMA block of the subgraph with the engine that owns it (`None`
    /// for blocks listed in def.json itself) and the member it came from.
    pub fn dma_blocks(&self) -> impl Iterator<Item = (Option<EngineKind>, &str, &DmaBlock)> {
        let own = self.def.dma.iter().map(|b| (None, self.def_path.as_str(), b));
        let engines = self.engines.iter().flat_map(|p| {
            let path = p.json_path.as_deref().unwrap_or("");
            p.json.iter().flat_map(move |j| j.dma.iter().map(move |b| (Some(p.engine), path, b)))
        });
        own.chain(engines)
    }

    /// Archive path of a file named relative to this subgraph.
    pub fn member_path(&self, relative: &str) -> String {
        join(&self.dir, relative)
    }
}

fn join(dir: &str, relative: &str) -> String {
    if dir.is_empty() { relative.to_string() } else { format!("{dir}/{relative}") }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// A whole NEFF, parsed and validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Neff {
    /// The 1024-byte header.
    pub header: NeffHeader,
    /// Every archive member, path -> bytes.
    pub members: Members,
    /// How the payload was stored.
    pub payload_format: PayloadFormat,
    /// The top-level graph, when present.
    pub graph: Option<NeffGraph>,
    /// Archive path of the KELF descriptor used, when present.
    pub kelf_path: Option<String>,
    /// The KELF descriptor, when present.
    pub kelf: Option<KelfJson>,
    /// `info.json`, when present.
    pub info: Option<InfoJson>,
    /// Subgraphs in load order.
    pub subgraphs: Vec<Subgraph>,
    inputs: Vec<TensorSignature>,
    outputs: Vec<TensorSignature>,
}

impl Neff {
    /// Reads a NEFF file's bytes with default limits and no hash check.
    pub fn parse(bytes: &[u8]) -> Result<Neff> {
        Neff::parse_with(bytes, &ReadOptions::default())
    }

    /// Reads a NEFF file's bytes: header rules, optional hash check,
    /// archive, manifests and DMA cross-checks.
    pub fn parse_with(bytes: &[u8], options: &ReadOptions) -> Result<Neff> {
        let header = NeffHeader::parse(bytes)?;
        header.validate(bytes.len())?;
        let payload = &bytes[HEADER_SIZE..HEADER_SIZE + header.data_size as usize];
        let members = if options.verify_hash {
            let kind = HashKind::from_pkg_version(header.pkg_version)?;
            // Hash and unpack the payload at the same time (both read it
            // whole; on a machine with a spare core the load then costs the
            // longer of the two, not their sum). A hash mismatch wins over
            // whatever the unpacking found.
            let (verified, members) = std::thread::scope(|s| {
                let hashing = std::thread::Builder::new().name("neff-hash".into()).spawn_scoped(s, || kind.verify(&header.hash, payload));
                let members = read_members(payload, &options.limits);
                (hashing.ok().and_then(|h| h.join().ok()), members)
            });
            match verified {
                Some(r) => r?,
                // No thread could be started (or it died): hash here.
                None => kind.verify(&header.hash, payload)?,
            }
            members?
        } else {
            read_members(payload, &options.limits)?
        };
        Neff::from_parts(header, members, PayloadFormat::detect(payload))
    }

    /// Builds the model from an already-read header and member map.
    pub fn from_parts(header: NeffHeader, members: Members, payload_format: PayloadFormat) -> Result<Neff> {
        let graph_path = [GRAPH_MEMBER, LEGACY_GRAPH_MEMBER].into_iter().find(|p| members.contains_key(*p));
        let graph: Option<NeffGraph> =
            graph_path.map(|p| parse_member(p, &members[p])).transpose()?;
        let kelf_path = match graph.as_ref().and_then(|g| g.kelf_member()) {
            Some(named) => {
                if !members.contains_key(named) {
                    return Err(NeffError::MissingMember {
                        path: named.to_string(),
                        referenced_by: format!("{} (KELF node attrs.kelf)", graph_path.unwrap_or(GRAPH_MEMBER)),
                    });
                }
                Some(named.to_string())
            }
            None => KELF_MEMBERS.into_iter().find(|p| members.contains_key(*p)).map(str::to_string),
        };
        let kelf: Option<KelfJson> =
            kelf_path.as_deref().map(|p| parse_member(p, &members[p])).transpose()?;
        let info = members.get("info.json").map(|b| parse_member("info.json", b)).transpose()?;

        let listed: Vec<(String, String)> = match &kelf {
            Some(k) if !k.graphs.is_empty() => {
                k.graphs.iter().map(|g| (g.name.clone(), g.definition.clone())).collect()
            }
            _ => discover_subgraphs(&members),
        };
        if listed.is_empty() {
            return Err(NeffError::MissingDefJson { path: "sg00/def.json".to_string() });
        }
        let subgraphs = listed
            .into_iter()
            .map(|(name, def_path)| load_subgraph(&members, name, def_path))
            .collect::<Result<Vec<_>>>()?;

        let (inputs, outputs) = match &graph {
            Some(g) => io_from_graph(graph_path.unwrap_or(GRAPH_MEMBER), g)?,
            None => io_from_defs(&subgraphs[0].def),
        };
        Ok(Neff { header, members, payload_format, graph, kelf_path, kelf, info, subgraphs, inputs, outputs })
    }

    /// The model inputs in order: what `nrt_get_model_tensor_info` reports.
    pub fn inputs(&self) -> &[TensorSignature] {
        &self.inputs
    }

    /// The model outputs in order.
    pub fn outputs(&self) -> &[TensorSignature] {
        &self.outputs
    }

    /// A member's bytes.
    pub fn member(&self, path: &str) -> Option<&[u8]> {
        self.members.get(path).map(Vec::as_slice)
    }

    /// The constant backing `file` var `var` of `subgraph` (parsed `.npy`
    /// or raw bytes).
    pub fn constant(&self, subgraph: &Subgraph, var: &str) -> Result<Constant<'_>> {
        let v = subgraph.def.var.get(var).ok_or_else(|| {
            NeffError::manifest(&subgraph.def_path, format!("no var named {var:?}"))
        })?;
        let file = v.file_name.as_deref().filter(|_| v.ty == VarType::File).ok_or_else(|| {
            NeffError::manifest(&subgraph.def_path, format!("var {var:?} is not a `file` var with a file_name"))
        })?;
        let path = subgraph.member_path(file);
        let bytes = self.member(&path).ok_or_else(|| NeffError::MissingMember {
            path: path.clone(),
            referenced_by: format!("{} var {var:?} file_name", subgraph.def_path),
        })?;
        Constant::from_member(&path, bytes)
    }

    /// The digest kind the header's `pkg_version` selects.
    pub fn hash_kind(&self) -> Result<HashKind> {
        HashKind::from_pkg_version(self.header.pkg_version)
    }
}

/// `sgNN/def.json` members in name order, for NEFFs without a KELF list.
fn discover_subgraphs(members: &Members) -> Vec<(String, String)> {
    members
        .keys()
        .filter_map(|p| {
            let dir = p.strip_suffix("/def.json")?;
            let digits = dir.strip_prefix("sg")?;
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (dir.to_string(), p.clone()))
        })
        .collect()
}

fn load_subgraph(members: &Members, name: String, def_path: String) -> Result<Subgraph> {
    let bytes = members.get(&def_path).ok_or_else(|| NeffError::MissingDefJson { path: def_path.clone() })?;
    let def: DefJson = parse_member(&def_path, bytes)?;
    let dir = parent(&def_path).to_string();
    check_dma_blocks(&def_path, &def.dma, &def)?;
    let mut engines = Vec::new();
    for engine in EngineKind::ALL {
        let json_path = def.engine_json(engine).map(|f| join(&dir, f));
        let json: Option<EngineJson> = match &json_path {
            Some(p) => {
                let b = members.get(p).ok_or_else(|| NeffError::MissingMember {
                    path: p.clone(),
                    referenced_by: format!("{def_path} key {:?}", engine.key()),
                })?;
                let j: EngineJson = parse_member(p, b)?;
                check_dma_blocks(p, &j.dma, &def)?;
                Some(j)
            }
            None => None,
        };
        let instr_name = def.engine_instr(engine).or(json.as_ref().and_then(|j| j.instr.as_deref()));
        let instr_path = instr_name.map(|f| join(&dir, f));
        let instructions = match &instr_path {
            Some(p) => {
                let b = members.get(p).ok_or_else(|| NeffError::MissingMember {
                    path: p.clone(),
                    referenced_by: format!("{def_path} key \"{}_instr\"", engine.key()),
                })?;
                if b.len() % INSTRUCTION_SIZE != 0 {
                    return Err(NeffError::InstructionStreamSize { path: p.clone(), len: b.len() });
                }
                b.clone()
            }
            None => Vec::new(),
        };
        if json.is_some() || instr_path.is_some() {
            engines.push(EngineProgram { engine, json_path, json, instr_path, instructions });
        }
    }
    Ok(Subgraph { name, dir, def_path, def, engines })
}
