//! The dense f32 working tile every compute kernel operates on.
//!
//! Engines read an operand out of SBUF/PSUM with [`super::pattern::gather`],
//! compute on a `Tile`, and write it back with [`super::pattern::scatter`].
//! Keeping the arithmetic on one contiguous f32 layout is what lets the loops
//! vectorise; dtype handling lives only at the gather/scatter boundary.

use super::error::{KernelError, KernelResult, shape};

/// A row-major `[partitions x free]` block of f32 values.
///
/// Row `p` holds the free-dimension elements of partition `p` of the operand
/// in access-pattern order.
///
/// A dropped tile returns its storage to [`super::scratch`], and new tiles
/// take storage from there, so steady-state execution does not allocate.
#[derive(Debug, PartialEq)]
pub struct Tile {
    partitions: usize,
    free: usize,
    data: Vec<f32>,
}

impl Clone for Tile {
    fn clone(&self) -> Self {
        let mut data = super::scratch::f32_filled(0, 0.0);
        data.extend_from_slice(&self.data);
        Self { partitions: self.partitions, free: self.free, data }
    }
}

impl Drop for Tile {
    fn drop(&mut self) {
        super::scratch::recycle_f32(std::mem::take(&mut self.data));
    }
}

impl Tile {
    /// A zero-filled tile, the starting point for outputs.
    pub fn zeros(partitions: usize, free: usize) -> Self {
        Self::filled(partitions, free, 0.0)
    }

    /// A tile with every element set to `value` (memset semantics).
    pub fn filled(partitions: usize, free: usize, value: f32) -> Self {
        Self {
            partitions,
            free,
            data: super::scratch::f32_filled(partitions * free, value),
        }
    }

    /// A tile whose values are unspecified (recycled storage, not
    /// cleared): for a destination every element of which is written
    /// before it is read.
    pub fn for_overwrite(partitions: usize, free: usize) -> Self {
        Self {
            partitions,
            free,
            data: super::scratch::f32_for_overwrite(partitions * free),
        }
    }

    /// Wraps existing row-major data, checking that its length matches.
    pub fn from_vec(partitions: usize, free: usize, data: Vec<f32>) -> KernelResult<Self> {
        let needed = partitions.checked_mul(free).ok_or_else(|| KernelError::ShapeMismatch {
            op: "Tile::from_vec",
            expected: "a shape whose element count fits in usize".into(),
            got: shape(partitions, free),
        })?;
        if data.len() != needed {
            return Err(KernelError::ShapeMismatch {
                op: "Tile::from_vec",
                expected: format!("{needed} elements for {}", shape(partitions, free)),
                got: format!("{} elements", data.len()),
            });
        }
        Ok(Self { partitions, free, data })
    }

    /// Builds a tile by evaluating `f(partition, free_index)` for each element;
    /// handy for tests and for generated constants such as identities.
    pub fn from_fn(partitions: usize, free: usize, mut f: impl FnMut(usize, usize) -> f32) -> Self {
        let mut data = super::scratch::f32_filled(partitions * free, 0.0);
        for p in 0..partitions {
            for j in 0..free {
                data[p * free + j] = f(p, j);
            }
        }
        Self { partitions, free, data }
    }

    /// The `n x n` identity, the moving operand of a PE transpose.
    pub fn identity(n: usize) -> Self {
        Self::from_fn(n, n, |p, j| if p == j { 1.0 } else { 0.0 })
    }

    /// Number of partitions (rows).
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// Number of free-dimension elements per partition (columns).
    pub fn free(&self) -> usize {
        self.free
    }

    /// `(partitions, free)`, for shape checks.
    pub fn shape(&self) -> (usize, usize) {
        (self.partitions, self.free)
    }

    /// All elements, row-major.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// All elements, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// Consumes the tile, returning its row-major data.
    pub fn into_vec(mut self) -> Vec<f32> {
        std::mem::take(&mut self.data)
    }

    /// The free-dimension elements of partition `p`.
    ///
    /// # Panics
    /// If `p >= self.partitions()` (a programming error, not bad input).
    pub fn row(&self, p: usize) -> &[f32] {
        &self.data[p * self.free..(p + 1) * self.free]
    }

    /// Mutable access to the elements of partition `p`.
    ///
    /// # Panics
    /// If `p >= self.partitions()`.
    pub fn row_mut(&mut self, p: usize) -> &mut [f32] {
        &mut self.data[p * self.free..(p + 1) * self.free]
    }

    /// Element `(p, j)`, or `None` outside the tile.
    pub fn get(&self, p: usize, j: usize) -> Option<f32> {
        (p < self.partitions && j < self.free).then(|| self.data[p * self.free + j])
    }

    /// Reinterprets the same row-major elements with another shape of equal
    /// size (e.g. `[P x F]` as `[1 x P*F]` before a whole-tile reduction).
    pub fn reshaped(self, partitions: usize, free: usize) -> KernelResult<Self> {
        Self::from_vec(partitions, free, self.into_vec())
    }

    /// Fails unless `self` has the given shape; used by kernels before writing.
    pub(crate) fn expect_shape(&self, op: &'static str, partitions: usize, free: usize) -> KernelResult<()> {
        if self.shape() != (partitions, free) {
            return Err(KernelError::ShapeMismatch {
                op,
                expected: shape(partitions, free),
                got: shape(self.partitions, self.free),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_length() {
        assert!(Tile::from_vec(2, 3, vec![0.0; 6]).is_ok());
        let err = Tile::from_vec(2, 3, vec![0.0; 5]).unwrap_err();
        assert!(matches!(err, KernelError::ShapeMismatch { .. }));
    }

    #[test]
    fn rows_and_identity() {
        let t = Tile::identity(3);
        assert_eq!(t.row(1), &[0.0, 1.0, 0.0]);
        assert_eq!(t.get(2, 2), Some(1.0));
        assert_eq!(t.get(3, 0), None);
    }
}
