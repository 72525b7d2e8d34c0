//! The ACT engine's activation: `out = func(in * scale + bias)`, with an
//! optional sum of the activated values along the free dimension into the
//! engine's per-lane reduce registers (NKI `activation` with `reduce_cmd`).
//!
//! The function is matched once per call; each arm runs a tight generic loop
//! over the rows, so the per-element work is straight-line code that
//! vectorises (see [`super::math`] for the fast `exp` / `tanh` and their
//! accuracy).
//!
//! GELU comes in two forms, as in NKI: [`ActFunc::Gelu`] is the exact
//! `0.5·x·erfc(-x/√2)` and [`ActFunc::GeluTanh`] the tanh approximation
//! `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.

use super::error::{KernelError, KernelResult};
use super::math;
use super::simd::{ScalarOperand, multiversion, sum_row};
use super::tile::Tile;

/// Activation functions of the ACT engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActFunc {
    /// `x` (scale and bias still apply): also the ACT copy path.
    Identity,
    /// `max(x, 0)`.
    Relu,
    /// Exact GELU, `0.5·x·erfc(-x/√2)`.
    Gelu,
    /// Tanh-approximated GELU.
    GeluTanh,
    /// Hyperbolic tangent.
    Tanh,
    /// Logistic sigmoid `1 / (1 + e^-x)`.
    Sigmoid,
    /// `e^x`.
    Exp,
    /// Natural logarithm (NaN below 0, -inf at 0).
    Log,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `1 / x`.
    Reciprocal,
    /// `x · sigmoid(x)` (a.k.a. swish).
    Silu,
    /// `x²`.
    Square,
    /// `sqrt(x)`.
    Sqrt,
    /// `|x|`.
    Abs,
    /// `-1`, `0` or `1` by the sign of `x` (zero and NaN pass through).
    Sign,
    /// `ln(1 + e^x)` (returns `x` itself above 20, where they agree in f32).
    Softplus,
    /// `x · tanh(softplus(x))`.
    Mish,
}

impl ActFunc {
    /// Every function, for tests and benchmarks.
    pub const ALL: [ActFunc; 17] = [
        ActFunc::Identity,
        ActFunc::Relu,
        ActFunc::Gelu,
        ActFunc::GeluTanh,
        ActFunc::Tanh,
        ActFunc::Sigmoid,
        ActFunc::Exp,
        ActFunc::Log,
        ActFunc::Rsqrt,
        ActFunc::Reciprocal,
        ActFunc::Silu,
        ActFunc::Square,
        ActFunc::Sqrt,
        ActFunc::Abs,
        ActFunc::Sign,
        ActFunc::Softplus,
        ActFunc::Mish,
    ];

    /// The lower-case name used by NKI-style listings and disassembly.
    pub fn name(self) -> &'static str {
        match self {
            ActFunc::Identity => "identity",
            ActFunc::Relu => "relu",
            ActFunc::Gelu => "gelu",
            ActFunc::GeluTanh => "gelu_apprx_tanh",
            ActFunc::Tanh => "tanh",
            ActFunc::Sigmoid => "sigmoid",
            ActFunc::Exp => "exp",
            ActFunc::Log => "log",
            ActFunc::Rsqrt => "rsqrt",
            ActFunc::Reciprocal => "reciprocal",
            ActFunc::Silu => "silu",
            ActFunc::Square => "square",
            ActFunc::Sqrt => "sqrt",
            ActFunc::Abs => "abs",
            ActFunc::Sign => "sign",
            ActFunc::Softplus => "softplus",
            ActFunc::Mish => "mish",
        }
    }

    /// Applies the function to one value (the same code the loops inline).
    pub fn apply(self, x: f32) -> f32 {
        let mut v = [x];
        dispatch(self, &mut v, 1.0, 0.0);
        v[0]
    }
}

/// What the ACT reduce registers do during this instruction (NKI `reduce_cmd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReduceCmd {
    /// Leave the registers as they are.
    #[default]
    Idle,
    /// Zero the registers; do not add this instruction's values.
    Reset,
    /// Add this instruction's row sums onto the registers.
    Reduce,
    /// Zero the registers, then store this instruction's row sums.
    ResetReduce,
}

/// Applies `func(v * scale + bias)` in place over one row. A macro rather
/// than a generic function taking a closure: the expression is expanded
/// inside the loop, so even the largest (mish: two exps, a log, a division)
/// is inlined and vectorised instead of being called per element.
macro_rules! map_row {
    ($row:expr, $scale:expr, $bias:expr, |$x:ident| $body:expr) => {
        for v in $row.iter_mut() {
            let $x = *v * $scale + $bias;
            *v = $body;
        }
    };
}

/// Matches the function once and runs the matching loop over one row with
/// scale `s` and bias `b`.
#[inline(always)]
fn dispatch(func: ActFunc, row: &mut [f32], s: f32, b: f32) {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    const FRAC_1_SQRT_2: f32 = std::f32::consts::FRAC_1_SQRT_2;
    match func {
        ActFunc::Identity => map_row!(row, s, b, |x| x),
        ActFunc::Relu => map_row!(row, s, b, |x| if x > 0.0 { x } else { 0.0 }),
        ActFunc::Gelu => map_row!(row, s, b, |x| 0.5 * x * math::erfc(-x * FRAC_1_SQRT_2)),
        ActFunc::GeluTanh => map_row!(row, s, b, |x| {
            0.5 * x * (1.0 + math::tanh(SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)))
        }),
        ActFunc::Tanh => map_row!(row, s, b, |x| math::tanh(x)),
        ActFunc::Sigmoid => map_row!(row, s, b, |x| math::sigmoid(x)),
        ActFunc::Exp => map_row!(row, s, b, |x| math::exp(x)),
        ActFunc::Log => map_row!(row, s, b, |x| math::ln(x)),
        ActFunc::Rsqrt => map_row!(row, s, b, |x| 1.0 / x.sqrt()),
        ActFunc::Reciprocal => map_row!(row, s, b, |x| 1.0 / x),
        ActFunc::Silu => map_row!(row, s, b, |x| x * math::sigmoid(x)),
        ActFunc::Square => map_row!(row, s, b, |x| x * x),
        ActFunc::Sqrt => map_row!(row, s, b, |x| f32::sqrt(x)),
        ActFunc::Abs => map_row!(row, s, b, |x| f32::abs(x)),
        ActFunc::Sign => map_row!(row, s, b, |x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        }),
        ActFunc::Softplus => map_row!(row, s, b, |x| math::softplus(x)),
        ActFunc::Mish => map_row!(row, s, b, |x| x * math::tanh(math::softplus(x))),
    }
}

/// `func(input * scale + bias)` for every element; `scale` / `bias` are
/// immediates or per-partition vectors.
pub fn activation(input: &Tile, func: ActFunc, scale: ScalarOperand<'_>, bias: ScalarOperand<'_>) -> KernelResult<Tile> {
    scale.check("activation scale", input.partitions())?;
    bias.check("activation bias", input.partitions())?;
    let mut out = input.clone();
    activation_rows(&mut out, func, scale, bias);
    Ok(out)
}

multiversion! {
    /// The per-row loops of [`activation`], in place.
    fn activation_rows(out: &mut Tile, func: ActFunc, scale: ScalarOperand<'_>, bias: ScalarOperand<'_>) {
        for p in 0..out.partitions() {
            let (s, b) = (scale.at(p), bias.at(p));
            dispatch(func, out.row_mut(p), s, b);
        }
    }
}

/// [`activation`] plus the reduce-register update selected by `cmd`.
///
/// `regs` holds one register per partition of `input` (the caller passes the
/// slice of the engine's 128 registers for the lanes in use). The sum of a
/// row is taken over the activated f32 values, before any narrowing by the
/// scatter of the output.
pub fn activation_reduce(
    input: &Tile,
    func: ActFunc,
    scale: ScalarOperand<'_>,
    bias: ScalarOperand<'_>,
    regs: &mut [f32],
    cmd: ReduceCmd,
) -> KernelResult<Tile> {
    if regs.len() != input.partitions() {
        return Err(KernelError::ShapeMismatch {
            op: "activation reduce registers",
            expected: format!("{} registers", input.partitions()),
            got: format!("{}", regs.len()),
        });
    }
    let out = activation(input, func, scale, bias)?;
    match cmd {
        ReduceCmd::Idle => {}
        ReduceCmd::Reset => regs.fill(0.0),
        ReduceCmd::Reduce | ReduceCmd::ResetReduce => {
            for (p, r) in regs.iter_mut().enumerate() {
                let s = sum_row(out.row(p));
                *r = if cmd == ReduceCmd::Reduce { *r + s } else { s };
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
