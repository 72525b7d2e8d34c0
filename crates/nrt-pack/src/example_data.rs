//! Deterministic data for the examples: the constants of `examples/mlp`
//! and `examples/mlp-bf16` (W [512, 512], b [512], too large to commit as
//! `.npy` files) and the pseudo-random inputs `nrt run` / `nrt bench` use
//! when none are given.
//!
//! Only std and nrt-neff: the runtime's integration tests include this file
//! too (`#[path]`), so the constants they check against are the ones every
//! packer fills in.

use std::path::{Path, PathBuf};

/// Rows of W (the contraction size K) and columns of y (N) in the mlp examples.
pub const MLP_K: usize = 512;
/// Columns of W and elements of b.
pub const MLP_N: usize = 512;
/// Rows of x and y (the batch M).
pub const MLP_M: usize = 128;

/// A xorshift64 stream: reproducible on every machine, no dependency.
#[derive(Clone, Debug)]
pub struct Xorshift(u64);

impl Xorshift {
    /// A stream for `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Xorshift {
        Xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A float uniformly in [-1, 1), a multiple of 2^-23.
    pub fn next_unit(&mut self) -> f32 {
        let bits = (self.next_u64() >> 40) as u32; // 24 bits
        (bits as f32 / (1u32 << 23) as f32) - 1.0
    }
}

/// f32 -> bfloat16 bits, round to nearest even (NaN stays NaN).
pub fn bf16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    if v.is_nan() {
        return ((b >> 16) | 0x40) as u16;
    }
    let round = 0x7FFF + ((b >> 16) & 1);
    (b.wrapping_add(round) >> 16) as u16
}

/// bfloat16 bits -> f32 (exact).
pub fn bf16_value(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// W of the mlp examples, row-major [K, N], in [-1/16, 1/16).
pub fn mlp_weights() -> Vec<f32> {
    let mut r = Xorshift::new(0x5157);
    (0..MLP_K * MLP_N).map(|_| r.next_unit() / 16.0).collect()
}

/// b of the mlp examples, [N], in [-1/2, 1/2).
pub fn mlp_bias() -> Vec<f32> {
    let mut r = Xorshift::new(0xB1A5);
    (0..MLP_N).map(|_| r.next_unit() / 2.0).collect()
}

/// Rows of x in the tensor-parallel mlp example (`examples/tp-mlp`).
pub const TP_M: usize = 128;
/// Input and output features of the tensor-parallel mlp.
pub const TP_D: usize = 256;
/// Hidden units of the tensor-parallel mlp (split over the ranks).
pub const TP_H: usize = 512;
/// Ranks of the tensor-parallel mlp example.
pub const TP_RANKS: usize = 2;

/// The whole tensor-parallel mlp's constants, row-major: W1 [D, H] and W2
/// [H, D] in [-1/16, 1/16), b1 [H] and b2 [D] in [-1/2, 1/2).
pub fn tp_mlp_constants() -> [Vec<f32>; 4] {
    let mut r = Xorshift::new(0x7E45);
    let mut take = |n: usize, scale: f32| (0..n).map(|_| r.next_unit() * scale).collect::<Vec<f32>>();
    [take(TP_D * TP_H, 1.0 / 16.0), take(TP_H, 0.5), take(TP_H * TP_D, 1.0 / 16.0), take(TP_D, 0.5)]
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn bf16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| bf16_bits(*x).to_le_bytes()).collect()
}

/// The constant members of an mlp example (archive path, `.npy` bytes):
/// W in the example's dtype (bfloat16 stored as its raw `<u2` bits, since
/// numpy has no bfloat16) and b in float32.
pub fn mlp_constants(bf16: bool) -> Vec<(&'static str, Vec<u8>)> {
    let w = mlp_weights();
    let w_npy = if bf16 {
        nrt_neff::npy::encode_npy("<u2", &[MLP_K as u64, MLP_N as u64], &bf16_bytes(&w))
    } else {
        nrt_neff::npy::encode_npy("<f4", &[MLP_K as u64, MLP_N as u64], &f32_bytes(&w))
    };
    let b_npy = nrt_neff::npy::encode_npy("<f4", &[MLP_N as u64], &f32_bytes(&mlp_bias()));
    vec![("sg00/W.npy", w_npy), ("sg00/b.npy", b_npy)]
}

/// The example directories whose constants this module generates, with
/// whether they are the bfloat16 variant.
pub const GENERATED_EXAMPLES: [(&str, bool); 2] = [("mlp", false), ("mlp-bf16", true)];

/// The constants of example directory `dir` if it is one this module
/// generates (matched by its final name).
pub fn constants_for(dir: &Path) -> Option<Vec<(&'static str, Vec<u8>)>> {
    let name = dir.file_name()?.to_str()?;
    GENERATED_EXAMPLES.iter().find(|(n, _)| *n == name).map(|(_, bf16)| mlp_constants(*bf16))
}

/// Writes the constants of every generated example under `examples`
/// (skipping files that already hold the same bytes); returns the paths
/// written.
pub fn write_all(examples: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (name, bf16) in GENERATED_EXAMPLES {
        let dir = examples.join(name);
        if !dir.join("sg00/def.json").is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} is not an example source tree (no sg00/def.json)", dir.display()),
            ));
        }
        for (member, bytes) in mlp_constants(bf16) {
            let path = dir.join(member);
            if std::fs::read(&path).is_ok_and(|old| old == bytes) {
                continue;
            }
            std::fs::write(&path, &bytes)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Deterministic pseudo-random contents for a tensor of `dtype` (numpy
/// style name) and `bytes` bytes: floats in [-1, 1), integers over their
/// whole range.
pub fn pseudo_random_tensor(dtype: &str, bytes: usize, seed: u64) -> Vec<u8> {
    let mut r = Xorshift::new(seed);
    match dtype {
        "float32" => (0..bytes / 4).flat_map(|_| r.next_unit().to_le_bytes()).collect(),
        "bfloat16" => (0..bytes / 2).flat_map(|_| bf16_bits(r.next_unit()).to_le_bytes()).collect(),
        "float64" => (0..bytes / 8).flat_map(|_| f64::from(r.next_unit()).to_le_bytes()).collect(),
        _ => (0..bytes).map(|_| (r.next_u64() >> 56) as u8).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3F80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), 0x3F80);
        // 1 + 3*2^-8 is halfway between 1+2^-7 and 1+2^-6: ties to even.
        assert_eq!(bf16_bits(1.0 + 3.0 / 256.0), 0x3F82);
        assert_eq!(bf16_value(bf16_bits(-2.5)), -2.5);
        assert!(bf16_value(bf16_bits(f32::NAN)).is_nan());
    }

    /// Rounding to bfloat16 keeps 8 significant bits: the error is at most
    /// half a unit in the last place, at most 2^-8 relative for normal values.
    #[test]
    fn bf16_error_is_at_most_half_an_ulp() {
        let mut r = Xorshift::new(42);
        for _ in 0..10_000 {
            let v = f32::from_bits((r.next_u64() >> 32) as u32);
            if !v.is_normal() || v.abs() > 1e38 {
                continue;
            }
            let back = bf16_value(bf16_bits(v));
            assert!(((back - v) / v).abs() <= 1.0 / 256.0, "{v} -> {back}");
        }
    }

    #[test]
    fn constants_are_deterministic_npy_of_the_declared_shapes() {
        let a = mlp_constants(false);
        assert_eq!(a, mlp_constants(false));
        let w = nrt_neff::npy::parse_npy_header("W.npy", &a[0].1).unwrap();
        assert_eq!((w.descr.as_str(), w.shape.as_slice()), ("<f4", &[512u64, 512][..]));
        let b16 = mlp_constants(true);
        let w16 = nrt_neff::npy::parse_npy_header("W.npy", &b16[0].1).unwrap();
        assert_eq!(b16[0].1.len() - w16.data_offset, 512 * 512 * 2);
        let unit: Vec<f32> = { let mut r = Xorshift::new(3); (0..1000).map(|_| r.next_unit()).collect() };
        assert!(unit.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(unit.iter().any(|v| *v < -0.5) && unit.iter().any(|v| *v > 0.5));
    }
}
