//! nrtpy's `BenchmarkResult`: statistics of timed executions, in ms.

use pyo3::prelude::*;

/// Result of `Model.benchmark`; all times in milliseconds, `std_dev_ms`
/// the population standard deviation, `iterations` the number of timed
/// events (device events in device mode).
#[pyclass(module = "nrt", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct BenchmarkResult {
    /// Mean duration.
    pub mean_ms: f64,
    /// Shortest.
    pub min_ms: f64,
    /// Longest.
    pub max_ms: f64,
    /// Population standard deviation (divided by n).
    pub std_dev_ms: f64,
    /// Timed events.
    pub iterations: usize,
    /// Untimed executions before them.
    pub warmup_iterations: u32,
    /// Every duration, in order.
    pub durations_ms: Vec<f64>,
}

impl BenchmarkResult {
    /// Statistics of `durations_ms` (not empty).
    pub fn of(durations_ms: Vec<f64>, warmup_iterations: u32) -> BenchmarkResult {
        let n = durations_ms.len().max(1) as f64;
        let min_ms = durations_ms.iter().copied().fold(f64::INFINITY, f64::min);
        let max_ms = durations_ms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // The sum's rounding can put the mean of equal durations one ulp
        // below them; a mean lies between the extremes.
        let mean = (durations_ms.iter().sum::<f64>() / n).clamp(min_ms.min(max_ms), max_ms.max(min_ms));
        let var = durations_ms.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / n;
        BenchmarkResult {
            mean_ms: mean,
            min_ms,
            max_ms,
            std_dev_ms: var.sqrt(),
            iterations: durations_ms.len(),
            warmup_iterations,
            durations_ms,
        }
    }
}

#[pymethods]
impl BenchmarkResult {
    fn __repr__(&self) -> String {
        format!(
            "BenchmarkResult(mean_ms={:.6}, min_ms={:.6}, max_ms={:.6}, std_dev_ms={:.6}, iterations={}, warmup_iterations={})",
            self.mean_ms, self.min_ms, self.max_ms, self.std_dev_ms, self.iterations, self.warmup_iterations
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_use_the_population_deviation() {
        let r = BenchmarkResult::of(vec![1.0, 3.0], 5);
        assert_eq!((r.mean_ms, r.min_ms, r.max_ms, r.std_dev_ms, r.iterations), (2.0, 1.0, 3.0, 1.0, 2));
        // Six equal durations whose float sum / 6 lands one ulp low.
        let d = 0.000442944;
        let r = BenchmarkResult::of(vec![d; 6], 0);
        assert!(r.min_ms <= r.mean_ms && r.mean_ms <= r.max_ms, "{r:?}");
    }
}
