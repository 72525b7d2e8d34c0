//! Unpacking a NEFF into a directory and packing a directory back, so that
//! every member is reproduced byte for byte. The header travels as
//! [`HEADER_JSON`] next to the members.

use std::fs;
use std::path::{Path, PathBuf};

use crate::archive::{Members, PayloadFormat, normalize_member_path, read_members};
use crate::error::{NeffError, Result};
use crate::hash::HashKind;
use crate::header::{HEADER_SIZE, HeaderFields, NeffHeader};
use crate::neff::ReadOptions;
use crate::writer::{default_format, pack_members};

/// File holding the header fields in an unpacked NEFF directory.
pub const HEADER_JSON: &str = "neff-header.json";

fn io_err(path: &Path, source: std::io::Error) -> NeffError {
    NeffError::Io { path: path.display().to_string(), source }
}

/// Writes every member of `neff_bytes` under `dir` (created if needed) and
/// the header fields to `dir/neff-header.json`. The header rules are
/// checked; the manifests are not, so damaged NEFFs can be inspected.
pub fn unpack_to_dir(neff_bytes: &[u8], dir: &Path, options: &ReadOptions) -> Result<NeffHeader> {
    let header = NeffHeader::parse(neff_bytes)?;
    header.validate(neff_bytes.len())?;
    let payload = &neff_bytes[HEADER_SIZE..HEADER_SIZE + header.data_size as usize];
    if options.verify_hash {
        HashKind::from_pkg_version(header.pkg_version)?.verify(&header.hash, payload)?;
    }
    let members = read_members(payload, &options.limits)?;
    if members.contains_key(HEADER_JSON) {
        return Err(NeffError::UnsafePath {
            path: HEADER_JSON.to_string(),
            reason: "member name collides with the unpacked header file",
        });
    }
    for (path, bytes) in &members {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err(parent, e))?;
        }
        fs::write(&target, bytes).map_err(|e| io_err(&target, e))?;
    }
    fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let text = serde_json::to_vec_pretty(&header.fields()).map_err(|e| NeffError::json(HEADER_JSON, e))?;
    let hp = dir.join(HEADER_JSON);
    fs::write(&hp, text).map_err(|e| io_err(&hp, e))?;
    Ok(header)
}

/// What [`read_dir`] found: the saved header (if any) and the members.
#[derive(Clone, Debug, PartialEq)]
pub struct DirContents {
    /// Header from `neff-header.json`, when the file exists.
    pub header: Option<NeffHeader>,
    /// Every other regular file, keyed by its `/`-separated relative path.
    pub members: Members,
}

/// Reads an unpacked NEFF directory. Symlinks are refused so a pack never
/// picks up files from outside `dir`.
pub fn read_dir(dir: &Path) -> Result<DirContents> {
    let mut members = Members::new();
    let mut header = None;
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).map_err(|e| io_err(&d, e))? {
            let entry = entry.map_err(|e| io_err(&d, e))?;
            let path = entry.path();
            let ty = entry.file_type().map_err(|e| io_err(&path, e))?;
            let rel = path
                .strip_prefix(dir)
                .ok()
                .and_then(|r| r.to_str())
                .map(|r| r.replace(std::path::MAIN_SEPARATOR, "/"))
                .ok_or_else(|| NeffError::UnsafePath {
                    path: path.display().to_string(),
                    reason: "file name is not UTF-8",
                })?;
            if ty.is_dir() {
                stack.push(path);
            } else if ty.is_file() {
                let bytes = fs::read(&path).map_err(|e| io_err(&path, e))?;
                if rel == HEADER_JSON {
                    let fields: HeaderFields =
                        serde_json::from_slice(&bytes).map_err(|e| NeffError::json(HEADER_JSON, e))?;
                    header = Some(NeffHeader::from_fields(&fields)?);
                } else if let Some(p) = normalize_member_path(&rel)? {
                    members.insert(p, bytes);
                }
            } else {
                return Err(NeffError::UnsupportedEntry { path: rel, kind: "symlink or special file".into() });
            }
        }
    }
    Ok(DirContents { header, members })
}

/// Options for [`pack_dir`]; `None` keeps what `neff-header.json` says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackOptions {
    /// Override the model name.
    pub name: Option<String>,
    /// Override the digest (and with it `pkg_version` and the format).
    pub hash: Option<HashKind>,
}

/// Packs an unpacked NEFF directory back into NEFF bytes. The header comes
/// from `neff-header.json` (defaults when absent), `data_size` and `hash`
/// are recomputed; members are written in path order.
pub fn pack_dir(dir: &Path, options: &PackOptions) -> Result<Vec<u8>> {
    let contents = read_dir(dir)?;
    let mut header = contents.header.unwrap_or_default();
    if let Some(name) = &options.name {
        header.set_name(name)?;
    }
    let hash = match options.hash {
        Some(h) => h,
        None => HashKind::from_pkg_version(header.pkg_version)?,
    };
    let format: PayloadFormat = default_format(hash);
    pack_members(&header, &contents.members, hash, format)
}
