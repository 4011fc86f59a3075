//! A step's loops over the variables on every core, with results that do
//! not depend on the threads: element-wise loops run in any order, the
//! smallest and largest values are exact in any order, and every sum is
//! taken over fixed chunks of [`CHUNK`] variables, then over the chunks in
//! their order.

use rayon::prelude::*;
use std::ops::Range;

/// Variables one task takes at least, and the chunk of a sum.
pub(super) const CHUNK: usize = 8192;

/// `f` on the fixed chunks of `0..n` in parallel, the results in chunk
/// order.
pub(super) fn by_chunks<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| f(c * CHUNK..((c + 1) * CHUNK).min(n)))
        .collect()
}

/// The sum of `f(j)` over `0..n`: per chunk in index order, then over
/// the chunks in their order.
pub(super) fn sum(n: usize, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    by_chunks(n, |r| r.map(&f).sum::<f64>()).into_iter().sum()
}

/// The largest of `start` and `f(j)` over `0..n` (a NaN is passed over,
/// as by `f64::max`).
pub(super) fn max(n: usize, start: f64, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    by_chunks(n, |r| r.map(&f).fold(start, f64::max))
        .into_iter()
        .fold(start, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_are_the_chunked_sums_whatever_the_threads() {
        let n = 3 * CHUNK + 17;
        let v: Vec<f64> = (0..n).map(|j| 1.0 / (1.0 + j as f64)).collect();
        let mut want = 0.0;
        for c in v.chunks(CHUNK) {
            want += c.iter().sum::<f64>();
        }
        for _ in 0..5 {
            assert_eq!(sum(n, |j| v[j]).to_bits(), want.to_bits());
        }
        assert_eq!(sum(0, |j| v[j]), 0.0);
    }

    #[test]
    fn max_passes_over_nan_and_keeps_its_start() {
        let v = [0.5, f64::NAN, 3.0, -7.0];
        assert_eq!(max(v.len(), 1.0, |j| v[j]), 3.0);
        assert_eq!(max(v.len(), 4.0, |j| v[j]), 4.0);
        assert_eq!(max(0, 1.0, |j| v[j]), 1.0);
    }
}
