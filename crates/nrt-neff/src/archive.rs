//! The NEFF payload: a tar archive, gzip-compressed or plain.
//!
//! Reading detects gzip by its magic bytes, walks the tar entries and keeps
//! every regular file in a sorted path -> bytes map. Paths that are absolute
//! or climb out with `..` are refused, as are links and device entries;
//! directories are skipped; a leading `./` is dropped. [`ReadLimits`] caps
//! the member count and the decompressed total so a hostile archive cannot
//! exhaust memory. Writing produces byte-stable archives: sorted members,
//! ustar headers with mtime 0, uid/gid 0, mode 0644, and a gzip header with
//! no file name and mtime 0.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::rc::Rc;

use crate::error::{NeffError, Result};

/// Archive members: normalized relative path -> file bytes, in path order.
pub type Members = BTreeMap<String, Vec<u8>>;

/// The two magic bytes that open a gzip stream.
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Guards against archive bombs; reading fails with a typed error as soon as
/// a limit would be crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Maximum number of regular-file members.
    pub max_members: usize,
    /// Maximum sum of the members' decompressed sizes, in bytes.
    pub max_total_bytes: u64,
}

impl Default for ReadLimits {
    /// 100 000 members and 16 GiB, far above any real NEFF.
    fn default() -> Self {
        ReadLimits { max_members: 100_000, max_total_bytes: 16 << 30 }
    }
}

/// How the tar payload is stored after the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PayloadFormat {
    /// gzip-compressed tar (what `pkg_version` 2 producers write).
    Gzip,
    /// Uncompressed tar (what `pkg_version` 1 producers write).
    PlainTar,
}

impl PayloadFormat {
    /// Detects the format of a payload from its first bytes.
    pub fn detect(payload: &[u8]) -> Self {
        if payload.starts_with(&GZIP_MAGIC) { PayloadFormat::Gzip } else { PayloadFormat::PlainTar }
    }
}

/// Normalizes an archive path: drops leading `./` and empty or `.`
/// components, and refuses absolute paths and `..`. Returns `None` for the
/// archive root itself.
pub fn normalize_member_path(raw: &str) -> Result<Option<String>> {
    if raw.starts_with('/') {
        return Err(NeffError::UnsafePath { path: raw.to_string(), reason: "absolute path" });
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(NeffError::UnsafePath {
                    path: raw.to_string(),
                    reason: "path traversal through '..'",
                });
            }
            p => parts.push(p),
        }
    }
    Ok(if parts.is_empty() { None } else { Some(parts.join("/")) })
}

fn corrupt(path: Option<&str>, err: impl std::fmt::Display) -> NeffError {
    NeffError::CorruptArchive { path: path.map(str::to_string), message: err.to_string() }
}

/// Reads every regular-file member of `payload` (gzip or plain tar).
pub fn read_members(payload: &[u8], limits: &ReadLimits) -> Result<Members> {
    let len = payload.len() as u64;
    match PayloadFormat::detect(payload) {
        PayloadFormat::Gzip => {
            read_tar(flate2::read::GzDecoder::new(payload), limits, len.saturating_mul(DEFLATE_MAX_RATIO))
        }
        PayloadFormat::PlainTar => read_tar(payload, limits, len),
    }
}

/// The most bytes one compressed byte can inflate to: deflate's longest
/// match (258 bytes) costs at least two bits, so a stream expands at most
/// 1032 times, and `GzDecoder` reads a single gzip member. What a payload
/// of n bytes can yield is therefore at most `n * 1032` bytes.
const DEFLATE_MAX_RATIO: u64 = 1032;

/// Caps the bytes pulled from the (decompressed) tar stream. Member sizes
/// are checked one by one below, but tar metadata entries (GNU long names,
/// pax headers) are read whole by the tar crate, so the stream itself needs
/// a ceiling too. Crossing it fails the read and raises `hit`.
struct CappedReader<R> {
    inner: R,
    remaining: u64,
    hit: Rc<Cell<bool>>,
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.remaining == 0 {
            // Only an error if the stream really has more to give.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.hit.set(true);
            return Err(std::io::Error::other("archive stream exceeds the size limit"));
        }
        let want = buf.len().min(self.remaining.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// Per-member allowance for tar headers and padding in the stream cap.
const TAR_OVERHEAD_PER_MEMBER: u64 = 2048;

/// The bytes to reserve for a member that declares `size` bytes when the
/// whole stream can yield at most `stream_bound` bytes. A header is
/// untrusted: a 49-byte NEFF can declare a 16 GiB member, and reserving
/// that up front costs 16 GiB of address space (an abort where memory is
/// not overcommitted) before the short read is noticed. A real member is
/// never larger than what the stream can yield, so it still gets one exact
/// allocation.
fn member_reservation(size: u64, stream_bound: u64) -> usize {
    size.min(stream_bound).min(usize::MAX as u64) as usize
}

/// Reads the members of a tar stream that can yield at most `stream_bound`
/// bytes (the payload's length, or its inflated bound when gzip).
fn read_tar<R: Read>(reader: R, limits: &ReadLimits, stream_bound: u64) -> Result<Members> {
    let hit = Rc::new(Cell::new(false));
    let cap = limits
        .max_total_bytes
        .saturating_add((limits.max_members as u64).saturating_add(16).saturating_mul(TAR_OVERHEAD_PER_MEMBER));
    let capped = CappedReader { inner: reader, remaining: cap, hit: Rc::clone(&hit) };
    let too_large = |path: Option<&str>| NeffError::TooLarge {
        path: path.unwrap_or("<archive stream>").to_string(),
        limit: limits.max_total_bytes,
    };
    let mut archive = tar::Archive::new(capped);
    let mut members = Members::new();
    let mut total: u64 = 0;
    let entries = archive.entries().map_err(|e| corrupt(None, e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| if hit.get() { too_large(None) } else { corrupt(None, e) })?;
        let raw = String::from_utf8(entry.path_bytes().into_owned())
            .map_err(|_| corrupt(None, "member path is not UTF-8"))?;
        let kind = entry.header().entry_type();
        if kind.is_dir() || kind.is_pax_global_extensions() {
            continue;
        }
        let Some(path) = normalize_member_path(&raw)? else { continue };
        if !(kind.is_file() || kind.is_contiguous()) {
            let name = if kind.is_symlink() {
                "symlink".to_string()
            } else if kind.is_hard_link() {
                "hard link".to_string()
            } else {
                format!("{:?}", kind)
            };
            return Err(NeffError::UnsupportedEntry { path, kind: name });
        }
        if members.len() >= limits.max_members {
            return Err(NeffError::TooManyMembers { limit: limits.max_members });
        }
        let size = entry.size();
        total = total.saturating_add(size);
        if total > limits.max_total_bytes {
            return Err(NeffError::TooLarge { path, limit: limits.max_total_bytes });
        }
        // One exact allocation saves growing (and copying) a large constant
        // step by step, but no more than the stream can yield is reserved, and a reservation the allocator refuses is an error,
        // not an abort. A short member fails below.
        let mut data = Vec::new();
        let reserve = member_reservation(size, stream_bound);
        data.try_reserve_exact(reserve).map_err(|_| {
            corrupt(Some(&path), format!("cannot reserve {reserve} bytes for the member's {size} declared bytes"))
        })?;
        (&mut entry)
            .take(size)
            .read_to_end(&mut data)
            .map_err(|e| if hit.get() { too_large(Some(&path)) } else { corrupt(Some(&path), e) })?;
        if data.len() as u64 != size {
            return Err(corrupt(
                Some(&path),
                format!("member declares {size} bytes but only {} are present", data.len()),
            ));
        }
        if members.contains_key(&path) {
            return Err(NeffError::DuplicateMember { path });
        }
        members.insert(path, data);
    }
    Ok(members)
}

/// Builds a byte-stable tar (optionally gzip-compressed) of `members`.
pub fn write_payload(members: &Members, format: PayloadFormat) -> Result<Vec<u8>> {
    let tar = write_tar(members)?;
    match format {
        PayloadFormat::PlainTar => Ok(tar),
        PayloadFormat::Gzip => {
            let mut gz = flate2::GzBuilder::new()
                .mtime(0)
                .operating_system(255)
                .write(Vec::new(), flate2::Compression::default());
            gz.write_all(&tar).map_err(|e| corrupt(None, e))?;
            gz.finish().map_err(|e| corrupt(None, e))
        }
    }
}

fn write_tar(members: &Members) -> Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.mode(tar::HeaderMode::Deterministic);
    for (path, data) in members {
        let normalized = normalize_member_path(path)?;
        if normalized.as_deref() != Some(path.as_str()) {
            return Err(NeffError::UnsafePath {
                path: path.clone(),
                reason: "not a normalized relative path (no leading './', empty or '.' parts)",
            });
        }
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        builder
            .append_data(&mut header, path, data.as_slice())
            .map_err(|e| corrupt(Some(path), e))?;
    }
    builder.into_inner().map_err(|e| corrupt(None, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A header naming `path` (raw bytes, so unsafe names reach the reader
    /// unchanged) that declares `size` bytes.
    fn header_for(path: &[u8], kind: tar::EntryType, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.as_old_mut().name[..path.len()].copy_from_slice(path);
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        header
    }

    fn tar_with(path: &[u8], kind: tar::EntryType, data: &[u8]) -> Vec<u8> {
        let header = header_for(path, kind, data.len() as u64);
        let mut b = tar::Builder::new(Vec::new());
        b.append(&header, data).unwrap();
        b.into_inner().unwrap()
    }

    #[test]
    fn plain_and_gzip_read_the_same() {
        let mut m = Members::new();
        m.insert("sg00/def.json".into(), b"{}".to_vec());
        m.insert("neff.json".into(), vec![1, 2, 3]);
        for f in [PayloadFormat::Gzip, PayloadFormat::PlainTar] {
            let p = write_payload(&m, f).unwrap();
            assert_eq!(PayloadFormat::detect(&p), f);
            assert_eq!(read_members(&p, &ReadLimits::default()).unwrap(), m);
        }
    }

    #[test]
    fn traversal_is_refused() {
        let p = tar_with(b"sg00/../../etc/passwd", tar::EntryType::Regular, b"x");
        assert!(matches!(
            read_members(&p, &ReadLimits::default()),
            Err(NeffError::UnsafePath { reason: "path traversal through '..'", .. })
        ));
    }

    #[test]
    fn absolute_path_is_refused() {
        let p = tar_with(b"/etc/passwd", tar::EntryType::Regular, b"x");
        assert!(matches!(
            read_members(&p, &ReadLimits::default()),
            Err(NeffError::UnsafePath { reason: "absolute path", .. })
        ));
    }

    #[test]
    fn links_are_refused() {
        let p = tar_with(b"sg00/def.json", tar::EntryType::Symlink, b"");
        assert!(matches!(
            read_members(&p, &ReadLimits::default()),
            Err(NeffError::UnsupportedEntry { .. })
        ));
        let p = tar_with(b"sg00/def.json", tar::EntryType::Link, b"");
        assert!(matches!(
            read_members(&p, &ReadLimits::default()),
            Err(NeffError::UnsupportedEntry { .. })
        ));
    }

    #[test]
    fn dot_slash_prefix_is_dropped_and_dirs_skipped() {
        let mut p = tar_with(b"./sg00/", tar::EntryType::Directory, b"");
        p.truncate(512); // keep only the directory header, then add a file
        p.extend_from_slice(&tar_with(b"./sg00/a.bin", tar::EntryType::Regular, b"abc"));
        let m = read_members(&p, &ReadLimits::default()).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), ["sg00/a.bin"]);
    }

    #[test]
    fn member_count_limit() {
        let mut m = Members::new();
        for i in 0..3 {
            m.insert(format!("f{i}"), vec![]);
        }
        let p = write_payload(&m, PayloadFormat::PlainTar).unwrap();
        let limits = ReadLimits { max_members: 2, ..ReadLimits::default() };
        assert!(matches!(read_members(&p, &limits), Err(NeffError::TooManyMembers { limit: 2 })));
    }

    #[test]
    fn total_size_limit() {
        let mut m = Members::new();
        m.insert("big".into(), vec![0; 4096]);
        let p = write_payload(&m, PayloadFormat::Gzip).unwrap();
        let limits = ReadLimits { max_total_bytes: 4095, ..ReadLimits::default() };
        assert!(matches!(read_members(&p, &limits), Err(NeffError::TooLarge { .. })));
    }

    #[test]
    fn oversized_long_name_entry_hits_the_stream_cap() {
        // A GNU long-name entry is buffered whole by the tar crate; the
        // stream cap must stop it even though it is not a member.
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..13].copy_from_slice(b"././@LongLink");
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_size(1 << 20);
        h.set_cksum();
        let mut b = tar::Builder::new(Vec::new());
        b.append(&h, std::io::repeat(b'a').take(1 << 20)).unwrap();
        let p = b.into_inner().unwrap();
        let limits = ReadLimits { max_members: 1, max_total_bytes: 4096 };
        assert!(matches!(read_members(&p, &limits), Err(NeffError::TooLarge { .. })));
    }

    /// A tar holding one member whose header declares `declared` bytes
    /// while only `data` follows (a hostile or truncated archive).
    fn tar_declaring(declared: u64, data: &[u8]) -> Vec<u8> {
        let mut p = header_for(b"a.bin", tar::EntryType::Regular, declared).as_bytes().to_vec();
        p.extend_from_slice(data);
        p
    }

    #[test]
    fn a_declared_size_reserves_no_more_than_the_stream_can_hold() {
        // Found by the capi_calls fuzz target: a 49-byte NEFF whose member
        // declared 4 GiB made the reader reserve 4 GiB before reading.
        assert_eq!(member_reservation(4 << 30, 49), 49);
        assert_eq!(member_reservation(1000, 1 << 20), 1000);
        assert_eq!(member_reservation(u64::MAX, u64::MAX), usize::MAX);
        let gz = {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&tar_declaring(12 << 30, b"short")).unwrap();
            e.finish().unwrap()
        };
        for p in [tar_declaring(12 << 30, b"short"), gz] {
            match read_members(&p, &ReadLimits::default()) {
                Err(NeffError::CorruptArchive { path, message }) => {
                    assert_eq!(path.as_deref(), Some("a.bin"));
                    assert!(message.contains("declares 12884901888 bytes"), "{message}");
                }
                other => panic!("expected a short member, got {other:?}"),
            }
        }
    }

    #[test]
    fn corrupt_gzip_is_reported() {
        let mut m = Members::new();
        m.insert("a".into(), vec![7; 1000]);
        let mut p = write_payload(&m, PayloadFormat::Gzip).unwrap();
        let n = p.len();
        p.truncate(n / 2);
        assert!(matches!(
            read_members(&p, &ReadLimits::default()),
            Err(NeffError::CorruptArchive { .. })
        ));
    }

    #[test]
    fn truncated_member_is_reported() {
        let p = tar_with(b"a", tar::EntryType::Regular, &[1; 600]);
        assert!(matches!(
            read_members(&p[..700], &ReadLimits::default()),
            Err(NeffError::CorruptArchive { .. })
        ));
    }

    #[test]
    fn writer_refuses_unnormalized_paths() {
        let mut m = Members::new();
        m.insert("./a".into(), vec![]);
        assert!(matches!(
            write_payload(&m, PayloadFormat::PlainTar),
            Err(NeffError::UnsafePath { .. })
        ));
    }

    #[test]
    fn long_paths_survive() {
        let mut m = Members::new();
        m.insert(format!("sg00/{}/x.bin", "d".repeat(200)), vec![5; 3]);
        let p = write_payload(&m, PayloadFormat::Gzip).unwrap();
        assert_eq!(read_members(&p, &ReadLimits::default()).unwrap(), m);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn round_trip(files in proptest::collection::btree_map("[a-z]{1,8}(/[a-z0-9_]{1,8}(\\.[a-z]{1,3})?){0,2}",
                                                               proptest::collection::vec(any::<u8>(), 0..600), 0..6),
                      gzip in any::<bool>()) {
            // A path cannot be both a file and a directory; drop such clashes.
            let members: Members = files.iter()
                .filter(|(p, _)| !files.keys().any(|q| q.starts_with(&format!("{p}/"))))
                .map(|(p, d)| (p.clone(), d.clone())).collect();
            let f = if gzip { PayloadFormat::Gzip } else { PayloadFormat::PlainTar };
            let a = write_payload(&members, f).unwrap();
            prop_assert_eq!(&a, &write_payload(&members, f).unwrap());
            prop_assert_eq!(read_members(&a, &ReadLimits::default()).unwrap(), members);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = read_members(&bytes, &ReadLimits::default());
        }
    }
}
