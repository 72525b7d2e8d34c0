//! The decoder's weights: the whole (unsharded) model's, generated from a
//! seed, and each rank's Megatron shards as the NEFFs' weight inputs.

use super::{TpDecoderSpec, names};
use crate::GenError;

/// The unsharded model's weights, row-major float32 (`[in, out]` for
/// every projection, as `x @ W`).
#[derive(Clone, Debug, PartialEq)]
pub struct DecoderWeights {
    /// RMSNorm weights before attention, [L, D].
    pub attn_norm: Vec<f32>,
    /// Query projection [L, D, heads·head_dim] (head h in columns h·hd..).
    pub wq: Vec<f32>,
    /// Key projection, same shape.
    pub wk: Vec<f32>,
    /// Value projection, same shape.
    pub wv: Vec<f32>,
    /// Output projection [L, heads·head_dim, D].
    pub wo: Vec<f32>,
    /// RMSNorm weights before the MLP, [L, D].
    pub mlp_norm: Vec<f32>,
    /// SwiGLU gate projection [L, D, F].
    pub w_gate: Vec<f32>,
    /// SwiGLU up projection [L, D, F].
    pub w_up: Vec<f32>,
    /// Down projection [L, F, D].
    pub w_down: Vec<f32>,
    /// The final RMSNorm's weights, [D].
    pub final_norm: Vec<f32>,
}

/// splitmix64: a reproducible stream with no dependency.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), a multiple of 2^-23 (exact in fp32).
    fn unit(&mut self) -> f32 {
        ((self.next() >> 40) as f32) / (1u32 << 23) as f32 - 1.0
    }

    fn fill(&mut self, n: usize, scale: f32, offset: f32) -> Vec<f32> {
        (0..n).map(|_| offset + scale * self.unit()).collect()
    }

    /// `layers` row-major [rows, cols] projections, each column holding
    /// `NONZERO` entries at distinct rows, of magnitude in [0.5, 1) / sqrt(NONZERO)
    /// with a random sign (so a column has unit gain), zeros elsewhere.
    fn sparse(&mut self, layers: usize, rows: usize, cols: usize, gain: f32) -> Vec<f32> {
        let mut w = vec![0f32; layers * rows * cols];
        let amp = gain / (NONZERO as f32).sqrt();
        for l in 0..layers {
            for j in 0..cols {
                let mut taken = [usize::MAX; NONZERO];
                for slot in 0..NONZERO {
                    let mut k = (self.next() % rows as u64) as usize;
                    while taken.contains(&k) {
                        k = (k + 1) % rows;
                    }
                    taken[slot] = k;
                    let u = self.unit();
                    w[(l * rows + k) * cols + j] = amp * (0.75 + 0.25 * u.abs()).copysign(u);
                }
            }
        }
        w
    }
}

/// Nonzero entries per projection column.
pub const NONZERO: usize = 4;
/// Gain of the Q and K projections.
pub const QK_GAIN: f32 = 0.2;
/// Gain of the output and down projections (the residual branches).
pub const BRANCH_GAIN: f32 = 0.05;

/// The input hidden state of the token at `position` of sequence
/// `sequence`: what an embedding lookup of the token would give (exact
/// fp32 values in [-1, 1), drawn from `seed`), so a decode step starts from
/// an exact input as a language model's does (its next token is discrete),
/// not from the previous step's rounded output.
pub fn token(s: &TpDecoderSpec, seed: u64, sequence: usize, position: usize) -> Vec<f32> {
    let mut r = SplitMix(seed ^ (0xA076_1D64_78BD_642F_u64.wrapping_mul(1 + (sequence * s.context + position) as u64)));
    r.fill(s.d_model, 1.0, 0.0)
}

/// The prefill's `x` [batch, prompt, d_model]: every sequence's prompt
/// tokens.
pub fn prefill_input(s: &TpDecoderSpec, seed: u64) -> Vec<f32> {
    (0..s.batch()).flat_map(|b| (0..s.prompt).flat_map(move |t| token(s, seed, b, t))).collect()
}

/// A decode step's `x` [batch, 1, d_model]: every sequence's token at
/// `position`.
pub fn decode_input(s: &TpDecoderSpec, seed: u64, position: usize) -> Vec<f32> {
    (0..s.batch()).flat_map(|b| token(s, seed, b, position)).collect()
}

/// Writes what a runner outside Rust (a C or Python client) binds for
/// `steps` decode steps after the prefill, as `.npy` files under `dir`:
/// `rankR/NAME.npy` for each rank's weight shards, `x_prefill.npy`
/// [batch, prompt, d_model] and `x_decode.npy` [steps, batch, 1, d_model]
/// (step k at position `prompt + k`). The KV caches start as zeros.
pub fn write_data(s: &TpDecoderSpec, seed: u64, steps: usize, dir: &std::path::Path) -> std::io::Result<()> {
    let invalid = |e: GenError| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string());
    s.validate().map_err(invalid)?;
    if steps > s.context - s.prompt {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{steps} decode steps after a {}-token prompt overrun the {}-position cache", s.prompt, s.context)));
    }
    let npy = |shape: &[u64], v: &[f32]| nrt_neff::npy::encode_npy("<f4", shape, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    let w = DecoderWeights::generate(s, seed);
    for rank in 0..s.ranks {
        let d = dir.join(format!("rank{rank}"));
        std::fs::create_dir_all(&d)?;
        for (name, shape, values) in w.rank_inputs(s, rank).map_err(invalid)? {
            std::fs::write(d.join(format!("{name}.npy")), npy(&shape, &values))?;
        }
    }
    let (b, dm) = (s.batch() as u64, s.d_model as u64);
    std::fs::write(dir.join("x_prefill.npy"), npy(&[b, s.prompt as u64, dm], &prefill_input(s, seed)))?;
    let decode: Vec<f32> = (0..steps).flat_map(|k| decode_input(s, seed, s.prompt + k)).collect();
    std::fs::write(dir.join("x_decode.npy"), npy(&[steps as u64, b, 1, dm], &decode))
}

/// A rank's weight input: its name, shape and values.
pub type Shard = (String, Vec<u64>, Vec<f32>);

impl DecoderWeights {
    /// Weights drawn from `seed`: projections uniform with variance
    /// 1/fan-in (so activations keep unit scale through the layers), norm
    /// weights in [0.9, 1.1).
    pub fn generate(s: &TpDecoderSpec, seed: u64) -> DecoderWeights {
        let mut r = SplitMix(seed);
        let (l, d, a, f) = (s.layers, s.d_model, s.heads * s.head_dim, s.ffn);
        DecoderWeights {
            attn_norm: r.fill(l * d, 0.1, 1.0),
            wq: r.sparse(l, d, a, QK_GAIN),
            wk: r.sparse(l, d, a, QK_GAIN),
            wv: r.sparse(l, d, a, 1.0),
            wo: r.sparse(l, a, d, BRANCH_GAIN),
            mlp_norm: r.fill(l * d, 0.1, 1.0),
            w_gate: r.sparse(l, d, f, 1.0),
            w_up: r.sparse(l, d, f, 1.0),
            w_down: r.sparse(l, f, d, BRANCH_GAIN),
            final_norm: r.fill(d, 0.1, 1.0),
        }
    }

    /// Checks every array's length against the spec.
    pub fn check(&self, s: &TpDecoderSpec) -> Result<(), GenError> {
        let (l, d, a, f) = (s.layers, s.d_model, s.heads * s.head_dim, s.ffn);
        let arrays = [
            ("attn_norm", self.attn_norm.len(), l * d),
            ("wq", self.wq.len(), l * d * a),
            ("wk", self.wk.len(), l * d * a),
            ("wv", self.wv.len(), l * d * a),
            ("wo", self.wo.len(), l * a * d),
            ("mlp_norm", self.mlp_norm.len(), l * d),
            ("w_gate", self.w_gate.len(), l * d * f),
            ("w_up", self.w_up.len(), l * d * f),
            ("w_down", self.w_down.len(), l * f * d),
            ("final_norm", self.final_norm.len(), d),
        ];
        for (name, got, want) in arrays {
            if got != want {
                return Err(GenError::Param(format!("{name} has {got} elements; the spec needs {want}")));
            }
        }
        Ok(())
    }

    /// Rank `rank`'s weight inputs, in the NEFFs' input order: the norms
    /// whole; `wqkv` [L, D, 3·Hr·hd] the columns of its Hr heads of wq, wk
    /// and wv side by side (column-parallel); `wo` [L, Hr·hd, D] those
    /// heads' rows (row-parallel); `w_gate_up` [L, D, 2·Fr] its Fr gate
    /// then up columns; `w_down` [L, Fr, D] the matching rows.
    pub fn rank_inputs(&self, s: &TpDecoderSpec, rank: usize) -> Result<Vec<Shard>, GenError> {
        s.validate()?;
        self.check(s)?;
        if rank >= s.ranks {
            return Err(GenError::Param(format!("rank {rank} is not in 0..{}", s.ranks)));
        }
        let (l, d, hd, f) = (s.layers, s.d_model, s.head_dim, s.ffn);
        let (a, hr, fr) = (s.heads * hd, s.heads_per_rank(), s.ffn_per_rank());
        let (ar, h0, f0) = (hr * hd, rank * hr * hd, rank * fr);
        let mut wqkv = Vec::with_capacity(l * d * 3 * ar);
        let mut wgu = Vec::with_capacity(l * d * 2 * fr);
        for layer in 0..l {
            for k in 0..d {
                let row = (layer * d + k) * a + h0;
                for w in [&self.wq, &self.wk, &self.wv] {
                    wqkv.extend_from_slice(&w[row..row + ar]);
                }
                let row = (layer * d + k) * f + f0;
                wgu.extend_from_slice(&self.w_gate[row..row + fr]);
                wgu.extend_from_slice(&self.w_up[row..row + fr]);
            }
        }
        let rows = |w: &[f32], total: usize, first: usize, n: usize| -> Vec<f32> {
            (0..l).flat_map(|layer| w[(layer * total + first) * d..(layer * total + first + n) * d].iter().copied()).collect()
        };
        let (l, d) = (l as u64, d as u64);
        Ok(vec![
            (names::ATTN_NORM.into(), vec![l, d], self.attn_norm.clone()),
            (names::WQKV.into(), vec![l, d, 3 * ar as u64], wqkv),
            (names::WO.into(), vec![l, ar as u64, d], rows(&self.wo, a, h0, ar)),
            (names::MLP_NORM.into(), vec![l, d], self.mlp_norm.clone()),
            (names::W_GATE_UP.into(), vec![l, d, 2 * fr as u64], wgu),
            (names::W_DOWN.into(), vec![l, fr as u64, d], rows(&self.w_down, f, f0, fr)),
            (names::FINAL_NORM.into(), vec![d], self.final_norm.clone()),
        ])
    }
}
