//! What `nrt run` and `nrt bench` share: turning FILE|DIR into NEFF bytes
//! (packing a source tree on the fly), a model loaded on a simulated
//! device, and input tensors from `.npy` files or deterministic data.

use nrt_pack::example_data;
use anyhow::{Context, Result, anyhow, bail};
use nrt::load::ModelHost;
use nrt::model::ModelId;
use nrt::{RuntimeHosts, RuntimeOptions};
use nrt_neff::TensorSignature;
use std::path::Path;
use std::sync::Arc;

/// NEFF bytes of `path`: a file is read as is; a directory is packed like
/// `nrt neff pack` ([`nrt_pack::source_tree`]: the examples' generated
/// members filled in, a missing constant refused), assembling `.asm`
/// programs.
pub fn neff_bytes(path: &Path) -> Result<Vec<u8>> {
    if path.is_dir() {
        let (header, members) = nrt_pack::source_tree(path)?;
        nrt_pack::pack_members(&header, members).with_context(|| format!("packing {}", path.display()))
    } else {
        std::fs::read(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// A model loaded on the runtime the `nrt` command brings up as
/// libnrt.so's `nrt_init` does ([`start_runtime`]), on the first free
/// logical core the configuration makes visible.
pub struct Loaded {
    /// The runtime, its model hosts and execution units.
    pub rt: RuntimeHosts,
    /// Position of the device whose host loaded the model.
    pub device: usize,
    /// The model.
    pub id: ModelId,
    /// Input signatures, in NEFF order.
    pub inputs: Vec<TensorSignature>,
    /// Output signatures, in NEFF order.
    pub outputs: Vec<TensorSignature>,
}

/// The runtime the `nrt` command runs models on: [`RuntimeHosts::start`]
/// (the bring-up libnrt.so's `nrt_init` and Python use) over the
/// simulated instance (`NEURON_SIM_*`) and the process environment, so
/// `NEURON_RT_VISIBLE_CORES`, `NEURON_LOGICAL_NC_CONFIG` and the other
/// processes' core reservations hold. `lnc` is the logical-core size to
/// use when the environment names none (the NEFF's, so an LNC 1 model
/// runs without a setting); `extra` are variables the command sets on top
/// (`--profile`'s inspect settings).
pub fn start_runtime(lnc: Option<u32>, extra: &[(&str, String)]) -> Result<RuntimeHosts> {
    let mut env = nrt::config::Env::from_process();
    let backend = nrt::config::device_backend(&env).map_err(|e| anyhow!("{e}"))?;
    let sims = || {
        let devs = nrt_sim::SimDevice::all_from_env().map_err(|e| format!("simulated device configuration: {e}"))?;
        Ok(devs.into_iter().map(|d| Arc::new(d) as Arc<dyn nrt_hal::Device>).collect())
    };
    let devices = nrt_ndl::devices(backend, sims).map_err(|e| anyhow!("{e}"))?;
    if let Some(l) = lnc
        && nrt::config::lnc_of(&env).map_err(|e| anyhow!("{e}"))?.is_none()
    {
        env.set("NEURON_LOGICAL_NC_CONFIG", &l.to_string());
    }
    for (k, v) in extra {
        env.set(k, v);
    }
    let mut options = RuntimeOptions::new(devices, env);
    options.framework_version = concat!("nrt ", env!("CARGO_PKG_VERSION")).to_string();
    // The command's `nrt: error:` line is the one report of a failure.
    options.caller_reports_errors = true;
    RuntimeHosts::start(options).map_err(|e| anyhow!("{}", e.message))
}

impl Loaded {
    /// Loads `bytes` with the logical-core size the NEFF header asks for
    /// (unless the environment sets one).
    pub fn new(bytes: &[u8], source: &Path) -> Result<Loaded> {
        Loaded::with_profile(bytes, source, None)
    }

    /// [`Loaded::new`], with a device instruction profile of the first
    /// execution written under `profile_dir` when one is given (what
    /// NEURON_RT_INSPECT_ENABLE=1 with NEURON_RT_INSPECT_OUTPUT_DIR does).
    pub fn with_profile(bytes: &[u8], source: &Path, profile_dir: Option<&Path>) -> Result<Loaded> {
        let header = nrt_neff::NeffHeader::parse(bytes).context("reading the NEFF header")?;
        let profile: Vec<(&str, String)> = match profile_dir {
            Some(dir) => vec![
                ("NEURON_RT_INSPECT_ENABLE", "1".into()),
                ("NEURON_RT_INSPECT_DEVICE_PROFILE", "model".into()),
                ("NEURON_RT_INSPECT_OUTPUT_DIR", dir.display().to_string()),
            ],
            None => Vec::new(),
        };
        let rt = start_runtime(Some(header.lnc_size.max(1)), &profile)?;
        let loaded = (|| {
            let device = nrt::hosts::first_visible_device(&rt.hosts).map_err(|e| anyhow!("load: {e}"))?;
            let host = &rt.hosts[device];
            let id = host.load_file(bytes, source, -1, -1).map_err(|e| anyhow!("load: {e}"))?;
            let (inputs, outputs) = host.tensor_info(id).map_err(|e| anyhow!("tensor info: {e}"))?;
            Ok((device, id, inputs, outputs))
        })();
        match loaded {
            Ok((device, id, inputs, outputs)) => Ok(Loaded { rt, device, id, inputs, outputs }),
            Err(e) => {
                let _ = rt.close();
                Err(e)
            }
        }
    }

    /// The host that loaded the model.
    pub fn host(&self) -> &ModelHost {
        &self.rt.hosts[self.device]
    }

    /// The process's logical core the model runs on (its debug stream's
    /// index).
    pub fn lnc(&self) -> Result<u32> {
        let model = self.host().models().get(self.id).ok_or_else(|| anyhow!("the model vanished after its load"))?;
        self.rt.rt.vnc_of(self.device, model.vnc).map_err(|e| anyhow!("{e}"))
    }

    /// Where the model runs: the logical core as NEURON_RT_VISIBLE_CORES
    /// numbers it, its device and physical cores.
    pub fn placement(&self) -> Result<String> {
        let model = self.host().models().get(self.id).ok_or_else(|| anyhow!("the model vanished after its load"))?;
        let vnc = self.rt.rt.vnc_of(self.device, model.vnc).map_err(|e| anyhow!("{e}"))?;
        let v = self.rt.rt.vcore(vnc).map_err(|e| anyhow!("{e}"))?;
        let cores: Vec<String> = v.physical.iter().map(|c| c.0.to_string()).collect();
        let nd = self.host().device().info().device_index;
        Ok(format!("NC {} (ND {nd}, physical cores {})", v.global, cores.join(",")))
    }

    /// Unloads the model and closes the runtime.
    pub fn close(self) -> Result<()> {
        let unloaded = self.host().unload(self.id).map_err(|e| anyhow!("unload: {e}"));
        let closed = self.rt.close().map_err(|e| anyhow!("close: {e}"));
        unloaded.and(closed)
    }
}

/// Byte size of a signature, or an error naming it.
pub fn size_of(sig: &TensorSignature) -> Result<usize> {
    sig.size_bytes()
        .and_then(|s| usize::try_from(s).ok())
        .ok_or_else(|| anyhow!("tensor {:?} has dtype {:?}, whose size is unknown", sig.name, sig.dtype))
}

/// The `.npy` descriptor used for a dtype ([`nrt_neff::npy::descr_of`]).
pub fn npy_descr(dtype: &str) -> String {
    nrt_neff::npy::descr_of(dtype)
}

/// Bytes moved per step when streaming a tensor between a file and the
/// device: large enough to amortise the calls, small beside any tensor
/// worth streaming.
pub const STREAM_CHUNK: usize = 16 << 20;

/// An input `.npy` whose header was checked against its signature; its
/// data is read only when streamed, a chunk at a time, so an input of
/// several GiB never sits in host memory whole.
pub struct NpyInput {
    file: std::fs::File,
    shown: String,
    data_offset: u64,
    len: u64,
}

/// Opens an input `.npy` for `sig`: shape and element size must match (and
/// the dtype, when numpy knows it), and the file must hold exactly the
/// data the signature needs. Reads the header only.
pub fn open_input_npy(sig: &TensorSignature, path: &Path) -> Result<NpyInput> {
    use std::io::Read;
    let shown = path.display().to_string();
    let mut file = std::fs::File::open(path).with_context(|| format!("reading input {:?} from {shown}", sig.name))?;
    let file_len = file.metadata().with_context(|| format!("reading input {:?} from {shown}", sig.name))?.len();
    // A version-1 header is at most 10 + 65535 bytes; later versions say
    // their length in the first 12 bytes.
    let mut head = vec![0u8; file_len.min(65_546) as usize];
    file.read_exact(&mut head).with_context(|| format!("reading the header of {shown}"))?;
    if head.len() >= 12 && head[..6] == *b"\x93NUMPY" && head[6] >= 2 {
        let want = (12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64).min(file_len);
        if want > head.len() as u64 {
            if want > 16 << 20 {
                bail!("input {:?}: {shown} claims a header of {want} bytes; expected a .npy header under 16 MiB", sig.name);
            }
            let have = head.len();
            head.resize(want as usize, 0);
            file.read_exact(&mut head[have..]).with_context(|| format!("reading the header of {shown}"))?;
        }
    }
    let header = nrt_neff::npy::parse_npy_header_of(&shown, &head, file_len).map_err(|e| anyhow!("input {:?}: {e}", sig.name))?;
    if header.fortran_order {
        bail!("input {:?}: {shown} is in Fortran order; write it C-contiguous", sig.name);
    }
    if header.shape != sig.shape {
        bail!("input {:?}: {shown} has shape {:?}, the model expects {:?}", sig.name, header.shape, sig.shape);
    }
    let expected = npy_descr(&sig.dtype);
    // A type numpy lacks may also come as opaque bytes of its size
    // (`|V2` for bfloat16 written through ml_dtypes).
    let element = nrt_isa::dtype::element_type(&sig.dtype);
    let opaque = element.filter(|t| t.npy_descr.is_none()).map(|t| format!("V{}", t.size));
    let body = |d: &str| d.trim_start_matches(['<', '|', '=']).to_string();
    let same_kind = body(&header.descr) == body(&expected) || opaque.is_some_and(|v| body(&header.descr) == v);
    if !same_kind {
        bail!("input {:?}: {shown} holds {}, the model expects {} ({expected})", sig.name, header.descr, sig.dtype);
    }
    let data_offset = header.data_offset as u64;
    let len = file_len - data_offset;
    let want = size_of(sig)? as u64;
    if len != want {
        bail!("input {:?}: {shown} holds {len} data bytes, the model expects {want}", sig.name);
    }
    Ok(NpyInput { file, shown, data_offset, len })
}

impl NpyInput {
    /// Data bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Feeds the data to `sink` in order, `(offset, chunk)` at a time,
    /// through one reused buffer; returns the data's [`checksum`].
    pub fn stream(&mut self, mut sink: impl FnMut(u64, &[u8]) -> Result<()>) -> Result<u64> {
        use std::io::{Read, Seek, SeekFrom};
        self.file.seek(SeekFrom::Start(self.data_offset)).with_context(|| format!("reading {}", self.shown))?;
        let mut buf = vec![0u8; STREAM_CHUNK.min(self.len as usize)];
        let mut sum = Fnv::new();
        let mut off = 0u64;
        while off < self.len {
            let n = (self.len - off).min(buf.len() as u64) as usize;
            self.file.read_exact(&mut buf[..n]).with_context(|| format!("reading {} at data offset {off}", self.shown))?;
            sum.update(&buf[..n]);
            sink(off, &buf[..n])?;
            off += n as u64;
        }
        Ok(sum.finish())
    }
}

/// Reads an input `.npy` for `sig` whole (checked as [`open_input_npy`]
/// checks it); returns the array bytes.
pub fn read_input_npy(sig: &TensorSignature, path: &Path) -> Result<Vec<u8>> {
    let mut input = open_input_npy(sig, path)?;
    let mut data = nrt::host_memory::with_capacity(input.len(), format_args!("input {:?}", sig.name)).map_err(|e| anyhow!("{}", e.message))?;
    input.stream(|_, chunk| {
        data.extend_from_slice(chunk);
        Ok(())
    })?;
    Ok(data)
}

/// Input bytes for every model input: the `--input NAME=PATH` files, and
/// deterministic pseudo-random data (seeded by the input's position) for
/// inputs not given. Unknown names are errors.
pub fn input_bytes(inputs: &[TensorSignature], given: &[(String, std::path::PathBuf)]) -> Result<Vec<Vec<u8>>> {
    check_input_names(inputs, given)?;
    inputs
        .iter()
        .enumerate()
        .map(|(i, sig)| match given.iter().rev().find(|(n, _)| n == &sig.name) {
            Some((_, path)) => read_input_npy(sig, path),
            None => {
                // The NEFF says the size: checked before it is generated.
                let n = size_of(sig)?;
                nrt::host_memory::check(n as u64, format_args!("generated input {:?}", sig.name)).map_err(|e| anyhow!("{}", e.message))?;
                Ok(example_data::pseudo_random_tensor(&sig.dtype, n, 1 + i as u64))
            }
        })
        .collect()
}

/// Refuses `--input` names the model does not have, listing the real ones.
pub fn check_input_names(inputs: &[TensorSignature], given: &[(String, std::path::PathBuf)]) -> Result<()> {
    for (name, _) in given {
        if !inputs.iter().any(|s| &s.name == name) {
            let names: Vec<&str> = inputs.iter().map(|s| s.name.as_str()).collect();
            bail!("--input {name:?}: the model has no input of that name (inputs: {})", names.join(", "));
        }
    }
    Ok(())
}

/// Parses `NAME=PATH`.
pub fn parse_input_arg(s: &str) -> Result<(String, std::path::PathBuf), String> {
    match s.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok((n.to_string(), p.into())),
        _ => Err(format!("expected NAME=PATH.npy, got {s:?}")),
    }
}

/// FNV-1a 64 of bytes: a checksum that needs no dependency and is stable
/// across platforms, printed by `nrt run` so runs can be compared.
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut f = Fnv::new();
    f.update(bytes);
    f.finish()
}

/// [`checksum`] over bytes that arrive in pieces.
pub struct Fnv(u64);

impl Fnv {
    /// The empty checksum.
    pub fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    /// Adds bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    }

    /// The checksum of everything added.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sig(dtype: &str, shape: &[u64]) -> TensorSignature {
        TensorSignature { name: "x".into(), dtype: dtype.into(), shape: shape.to_vec() }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// NAME=PATH splits at the first '='; anything without a name or a
        /// path is refused, never a panic.
        #[test]
        fn input_args_split_at_the_first_equals(name in "[a-z_][a-z0-9_]{0,8}", path in "[a-z0-9_./=]{1,12}", junk in ".{0,16}") {
            let (n, p) = parse_input_arg(&format!("{name}={path}")).unwrap();
            prop_assert_eq!(n, name);
            prop_assert_eq!(p, std::path::PathBuf::from(path));
            let _ = parse_input_arg(&junk);
        }

        /// An .npy for a signature is accepted exactly when shape, kind and
        /// size agree; random bytes are refused without panicking.
        #[test]
        fn npy_inputs_must_match_the_signature(rows in 1u64..6, cols in 1u64..6, other in 1u64..6, bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let dir = std::env::temp_dir().join(format!("nrt-cli-npy-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("{rows}-{cols}-{other}.npy"));
            let data = vec![1u8; (rows * cols * 4) as usize];
            std::fs::write(&path, nrt_neff::npy::encode_npy("<f4", &[rows, cols], &data)).unwrap();
            prop_assert_eq!(read_input_npy(&sig("float32", &[rows, cols]), &path).unwrap(), data);
            prop_assert!(read_input_npy(&sig("int32", &[rows, cols]), &path).is_err());
            if other != cols {
                prop_assert!(read_input_npy(&sig("float32", &[rows, other]), &path).is_err());
            }
            std::fs::write(&path, &bytes).unwrap();
            prop_assert!(read_input_npy(&sig("float32", &[rows, cols]), &path).is_err());
        }
    }

    #[test]
    fn large_inputs_stream_in_chunks_with_the_whole_file_checksum() {
        let dir = std::env::temp_dir().join(format!("nrt-cli-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.npy");
        let n = 2 * STREAM_CHUNK + 3;
        let data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 4096) as u8).collect();
        std::fs::write(&path, nrt_neff::npy::encode_npy("|u1", &[n as u64], &data)).unwrap();
        let mut input = open_input_npy(&sig("uint8", &[n as u64]), &path).unwrap();
        assert_eq!(input.len(), n as u64);
        let mut chunks = Vec::new();
        let mut back = Vec::new();
        let sum = input
            .stream(|off, c| {
                chunks.push((off, c.len()));
                back.extend_from_slice(c);
                Ok(())
            })
            .unwrap();
        assert_eq!(chunks, [(0, STREAM_CHUNK), (STREAM_CHUNK as u64, STREAM_CHUNK), (2 * STREAM_CHUNK as u64, 3)]);
        assert!(back == data && sum == checksum(&data));
        // A file that ends early is refused from its header alone.
        std::fs::write(&path, &nrt_neff::npy::encode_npy("|u1", &[n as u64], &data)[..1000]).unwrap();
        let e = open_input_npy(&sig("uint8", &[n as u64]), &path).err().unwrap().to_string();
        assert!(e.contains("needs") && e.contains("found"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn version_2_headers_are_read_past_the_first_block() {
        let dir = std::env::temp_dir().join(format!("nrt-cli-npy2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("v2.npy");
        let mut dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }".to_string();
        // Pad the header past 64 KiB, as a v2 writer may.
        dict.push_str(&" ".repeat(70_000));
        dict.push('\n');
        let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
        bytes.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        bytes.extend_from_slice(&[0u8; 16]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_input_npy(&sig("float32", &[2, 2]), &path).unwrap(), vec![0u8; 16]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bfloat16_inputs_take_raw_bits() {
        let dir = std::env::temp_dir().join(format!("nrt-cli-bf16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.npy");
        std::fs::write(&path, nrt_neff::npy::encode_npy("<u2", &[2, 2], &[0u8; 8])).unwrap();
        assert_eq!(read_input_npy(&sig("bfloat16", &[2, 2]), &path).unwrap().len(), 8);
        assert!(read_input_npy(&sig("float16", &[2, 2]), &path).is_err());
    }

    #[test]
    fn unknown_input_names_list_the_real_ones() {
        let err = input_bytes(&[sig("float32", &[1])], &[("y".into(), "a.npy".into())]).unwrap_err().to_string();
        assert!(err.contains("\"y\"") && err.contains("inputs: x"), "{err}");
        let data = input_bytes(&[sig("float32", &[3])], &[]).unwrap();
        assert_eq!(data[0].len(), 12);
    }
}
