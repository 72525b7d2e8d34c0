//! A Llama-style decoder, Megatron-sharded over tensor-parallel ranks, as
//! the two NEFFs an inference server loads per rank: a context-encoding
//! (prefill) NEFF that runs a prompt of `prompt` tokens, and a
//! token-generation (decode) NEFF that runs one token against the KV cache
//! the earlier executions left in device memory.
//!
//! Each layer is `h += attn(rmsnorm(h))`, `h += mlp(rmsnorm(h))`:
//! column-parallel Q, K and V projections (each rank holds `heads / ranks`
//! heads), causal softmax attention over the rank's heads, a row-parallel
//! output projection whose partial sums an in-NEFF all-reduce adds; a
//! SwiGLU MLP `down(silu(gate(x)) · up(x))` with gate and up
//! column-parallel and down row-parallel, again an all-reduce. So a NEFF
//! carries `2 · layers` collectives (none with one rank). The model ends
//! with a final RMSNorm; its output `hidden` is the last hidden state
//! (there is no vocabulary: the examples feed a step's output back as the
//! next token's input).
//!
//! **Weights and the KV cache are inputs** bound to device tensors, as
//! neuronx-distributed does it: its context-encoding and token-generation
//! models share one set of weight tensors passed to both, and the KV cache
//! is state, an input the program updates in place. Both NEFFs of a rank
//! take the same weight inputs (`attn_norm`, `wqkv`, `wo`, `mlp_norm`,
//! `w_gate_up`, `w_down`, `final_norm`: the rank's shards, see
//! [`weights::DecoderWeights::rank_inputs`]) and the same `k_cache` /
//! `v_cache`; a runner binds one device tensor per name to both models.
//! Prefill writes the whole cache (zeros past the prompt); each decode
//! execution reads it, writes the new token's K and V at `position` and
//! writes it back. Every rank's NEFF is the same program (SPMD): only the
//! bound weights differ.
//!
//! **LNC 2** splits the batch: a NEFF for logical cores of two physical
//! cores has two subgraphs, subgraph `b` running sequence `b` of a batch of
//! two, and each subgraph's collectives reduce its own sequence's partial
//! sums over the ring of the `b`-th physical cores of the ranks. With
//! LNC 1 the batch is one sequence.
//!
//! Layout on the device: activations are kept transposed (features on the
//! partitions, tokens along the free dimension), so every projection is a
//! PE matmul whose stationary operand is a weight tile as it lies in
//! memory and whose result is the next projection's moving operand.
//! Scores are [tokens, context] (softmax along the free dimension); the K
//! cache holds each head as `Kᵀ` [head_dim, context] and the V cache as
//! `V` [context, head_dim], the operands the two attention matmuls take.
//! Masks are built on the device from IOTA and the position; a decode step
//! updates the caches with COPY_PREDICATED against a one-hot of the
//! position (no address depends on data). [`reference`] computes the same
//! model in f64 with a derived worst-case bound on any fp32 evaluation.

pub mod bounded;
mod program;
pub mod reference;
pub mod weights;

use crate::GenError;
use nrt_neff::TensorSignature;

/// The names of the NEFFs' tensors.
pub mod names {
    /// Input: the tokens' input hidden states [batch, tokens, d_model].
    pub const X: &str = "x";
    /// Decode input: each sequence's position, int32 [batch].
    pub const POSITION: &str = "position";
    /// Output: the final hidden states [batch, tokens, d_model].
    pub const HIDDEN: &str = "hidden";
    /// RMSNorm weights before attention [layers, d_model].
    pub const ATTN_NORM: &str = "attn_norm";
    /// The rank's Q, K and V columns [layers, d_model, 3 · heads_per_rank · head_dim].
    pub const WQKV: &str = "wqkv";
    /// The rank's output-projection rows [layers, heads_per_rank · head_dim, d_model].
    pub const WO: &str = "wo";
    /// RMSNorm weights before the MLP [layers, d_model].
    pub const MLP_NORM: &str = "mlp_norm";
    /// The rank's gate then up columns [layers, d_model, 2 · ffn_per_rank].
    pub const W_GATE_UP: &str = "w_gate_up";
    /// The rank's down-projection rows [layers, ffn_per_rank, d_model].
    pub const W_DOWN: &str = "w_down";
    /// The final RMSNorm's weights [d_model].
    pub const FINAL_NORM: &str = "final_norm";
    /// The K cache, `Kᵀ` per head: [layers, batch, heads_per_rank, head_dim, context].
    pub const K_CACHE: &str = "k_cache";
    /// The V cache: [layers, batch, heads_per_rank, context, head_dim].
    pub const V_CACHE: &str = "v_cache";
    /// The weight inputs, in input order.
    pub const WEIGHTS: [&str; 7] = [ATTN_NORM, WQKV, WO, MLP_NORM, W_GATE_UP, W_DOWN, FINAL_NORM];
    /// The state inputs (updated in place), in input order.
    pub const CACHES: [&str; 2] = [K_CACHE, V_CACHE];
}

/// RMSNorm's epsilon.
pub const EPS: f32 = 1e-5;

/// Partitions: PE rows and columns, the transpose tile.
pub(crate) const P: usize = 128;

/// Which of the two NEFFs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Context encoding: `prompt` tokens from position 0; fills the cache.
    Prefill,
    /// Token generation: one token at `position` against the cache.
    Decode,
}

impl Phase {
    /// The directory of this phase's rank trees (`DIR/prefill`, `DIR/decode`).
    pub fn dir_name(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
        }
    }
}

/// The decoder's shape and its sharding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpDecoderSpec {
    /// Tensor-parallel ranks (the NEFFs' world).
    pub ranks: usize,
    /// Decoder layers.
    pub layers: usize,
    /// Physical cores per logical core (1 or 2); also the batch.
    pub lnc: usize,
    /// Model width (a multiple of 128).
    pub d_model: usize,
    /// Attention heads (a multiple of `ranks`).
    pub heads: usize,
    /// Width of a head (16..=128).
    pub head_dim: usize,
    /// MLP hidden units (a multiple of 16 · `ranks`).
    pub ffn: usize,
    /// Tokens of the prefill NEFF.
    pub prompt: usize,
    /// KV cache positions (prompt plus generated tokens at most).
    pub context: usize,
}

/// First SBUF byte the program uses in each partition.
pub(crate) const SB_BASE: usize = 0x1000;
/// SBUF bytes per partition the program may use (the runtime keeps the top).
pub(crate) const SB_LIMIT: usize = 0x37000;

impl TpDecoderSpec {
    /// The example's shape (d_model 256, 8 heads of 32, ffn 768, a
    /// 16-token prompt, 32 cache positions) over `ranks`, `layers` and `lnc`.
    pub fn new(ranks: usize, layers: usize, lnc: usize) -> TpDecoderSpec {
        TpDecoderSpec { ranks, layers, lnc, d_model: 256, heads: 8, head_dim: 32, ffn: 768, prompt: 16, context: 32 }
    }

    /// Heads per rank.
    pub fn heads_per_rank(&self) -> usize {
        self.heads / self.ranks.max(1)
    }

    /// MLP hidden units per rank.
    pub fn ffn_per_rank(&self) -> usize {
        self.ffn / self.ranks.max(1)
    }

    /// Sequences per execution (one per physical core).
    pub fn batch(&self) -> usize {
        self.lnc
    }

    /// Tokens per execution of `phase`.
    pub fn tokens(&self, phase: Phase) -> usize {
        match phase {
            Phase::Prefill => self.prompt,
            Phase::Decode => 1,
        }
    }

    /// Cache positions a token of `phase` attends over (masked causally).
    pub fn attended(&self, phase: Phase) -> usize {
        match phase {
            Phase::Prefill => self.prompt,
            Phase::Decode => self.context,
        }
    }

    /// Checks the shape; the message names the bad parameter and what is accepted.
    pub fn validate(&self) -> Result<(), GenError> {
        let bad = |s: String| Err(GenError::Param(s));
        if !(1..=64).contains(&self.ranks) {
            return bad(format!("ranks = {} must be in 1..=64", self.ranks));
        }
        if !(1..=64).contains(&self.layers) {
            return bad(format!("layers = {} must be in 1..=64", self.layers));
        }
        if !matches!(self.lnc, 1 | 2) {
            return bad(format!("lnc = {} must be 1 or 2", self.lnc));
        }
        if self.d_model == 0 || !self.d_model.is_multiple_of(P) || self.d_model > 8 * P {
            return bad(format!("d_model = {} must be a multiple of {P} up to {}", self.d_model, 8 * P));
        }
        if !(16..=P).contains(&self.head_dim) {
            return bad(format!("head_dim = {} must be in 16..={P} (a head's rows sit on the partitions; a DMA moves at least 16 rows)", self.head_dim));
        }
        if self.heads == 0 || !self.heads.is_multiple_of(self.ranks) {
            return bad(format!("heads = {} must be a positive multiple of ranks ({})", self.heads, self.ranks));
        }
        if self.ffn == 0 || !self.ffn.is_multiple_of(16 * self.ranks) {
            return bad(format!("ffn = {} must be a positive multiple of 16 x ranks ({}): every rank holds a multiple of 16 units", self.ffn, 16 * self.ranks));
        }
        if !(16..=P).contains(&self.context) {
            return bad(format!("context = {} must be in 16..={P} (cache positions sit on the partitions of V)", self.context));
        }
        if self.prompt == 0 || self.prompt >= self.context {
            return bad(format!("prompt = {} must be in 1..{} (below context, so a decode step has a position left)", self.prompt, self.context));
        }
        for phase in [Phase::Prefill, Phase::Decode] {
            let need = program::sbuf_bytes(self, phase);
            if need > SB_LIMIT - SB_BASE {
                return bad(format!(
                    "the {} NEFF needs {need:#x} bytes of each SBUF partition ({} layers of this width per rank); {:#x} are available: use more ranks or fewer layers",
                    phase.dir_name(),
                    self.layers,
                    SB_LIMIT - SB_BASE
                ));
            }
        }
        Ok(())
    }

    /// The spec as the JSON a decoder tree carries (`decoder.json`), with
    /// the seed its weights were drawn from.
    pub fn to_json(&self, seed: u64) -> serde_json::Value {
        serde_json::json!({
            "model": "tp-decoder",
            "ranks": self.ranks, "layers": self.layers, "lnc": self.lnc,
            "d_model": self.d_model, "heads": self.heads, "head_dim": self.head_dim, "ffn": self.ffn,
            "prompt": self.prompt, "context": self.context,
            "eps": EPS, "seed": seed,
        })
    }

    /// Reads [`TpDecoderSpec::to_json`]'s form back: the spec and the seed.
    pub fn from_json(v: &serde_json::Value) -> Result<(TpDecoderSpec, u64), GenError> {
        if v.get("model").and_then(|m| m.as_str()) != Some("tp-decoder") {
            return Err(GenError::Param("not a tp-decoder description (\"model\" is not \"tp-decoder\")".into()));
        }
        let field = |k: &str| -> Result<u64, GenError> {
            v.get(k).and_then(serde_json::Value::as_u64).ok_or_else(|| GenError::Param(format!("\"{k}\" is missing or not a non-negative integer")))
        };
        let size = |k: &str| -> Result<usize, GenError> { usize::try_from(field(k)?).map_err(|_| GenError::Param(format!("\"{k}\" is too large"))) };
        let s = TpDecoderSpec {
            ranks: size("ranks")?,
            layers: size("layers")?,
            lnc: size("lnc")?,
            d_model: size("d_model")?,
            heads: size("heads")?,
            head_dim: size("head_dim")?,
            ffn: size("ffn")?,
            prompt: size("prompt")?,
            context: size("context")?,
        };
        s.validate()?;
        Ok((s, field("seed")?))
    }

    /// The inputs and outputs of `phase`'s NEFF, in order.
    pub fn signatures(&self, phase: Phase) -> (Vec<TensorSignature>, Vec<TensorSignature>) {
        let sig = |name: &str, dtype: &str, shape: &[usize]| TensorSignature { name: name.into(), dtype: dtype.into(), shape: shape.iter().map(|&n| n as u64).collect() };
        let (l, b, d, hd, t) = (self.layers, self.batch(), self.d_model, self.head_dim, self.tokens(phase));
        let (hr, fr, c) = (self.heads_per_rank(), self.ffn_per_rank(), self.context);
        let mut ins = vec![sig(names::X, "float32", &[b, t, d])];
        if phase == Phase::Decode {
            ins.push(sig(names::POSITION, "int32", &[b]));
        }
        ins.extend([
            sig(names::ATTN_NORM, "float32", &[l, d]),
            sig(names::WQKV, "float32", &[l, d, 3 * hr * hd]),
            sig(names::WO, "float32", &[l, hr * hd, d]),
            sig(names::MLP_NORM, "float32", &[l, d]),
            sig(names::W_GATE_UP, "float32", &[l, d, 2 * fr]),
            sig(names::W_DOWN, "float32", &[l, fr, d]),
            sig(names::FINAL_NORM, "float32", &[d]),
            sig(names::K_CACHE, "float32", &[l, b, hr, hd, c]),
            sig(names::V_CACHE, "float32", &[l, b, hr, c, hd]),
        ]);
        (ins, vec![sig(names::HIDDEN, "float32", &[b, t, d])])
    }
}

/// The NEFF of `phase` (the same for every rank).
pub fn tp_decoder_neff(spec: &TpDecoderSpec, phase: Phase) -> Result<Vec<u8>, GenError> {
    spec.validate()?;
    program::neff(spec, phase)
}

#[cfg(test)]
mod tests;
