//! Float helpers `core` lacks on wasm32 (no libm): `expf`.

/// e^x in f32, relative error below 2e-7 over the finite range
/// (range reduction x = k·ln2 + r, |r| ≤ ln2/2, degree-7 polynomial).
pub fn expf(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.72284 {
        return f32::INFINITY;
    }
    if x < -103.97208 {
        return 0.0;
    }
    let xd = f64::from(x);
    let k = (xd * core::f64::consts::LOG2_E + if xd >= 0.0 { 0.5 } else { -0.5 }) as i32;
    let r = xd - f64::from(k) * core::f64::consts::LN_2;
    // Taylor terms to r^7: |r| <= 0.35 keeps the remainder below 1e-8.
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    // 2^k as f64 bits, then scale (f64 covers f32's whole exponent range).
    let scale = f64::from_bits(((1023 + i64::from(k)) as u64) << 52);
    (p * scale) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expf_matches_std() {
        let mut x = -100.0f32;
        while x < 88.0 {
            let (a, b) = (expf(x), x.exp());
            assert!(((a - b) / b).abs() < 1e-6, "exp({x}) = {a}, std {b}");
            x += 0.173;
        }
        assert_eq!(expf(0.0), 1.0);
        assert_eq!(expf(-200.0), 0.0);
        assert_eq!(expf(100.0), f32::INFINITY);
        assert!(expf(f32::NAN).is_nan());
    }
}
