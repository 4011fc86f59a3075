//! Dense least-squares solves that always end.
//!
//! nalgebra's `svd` iterates until convergence with no bound, and on a
//! matrix holding an infinity or a NaN (a gradient that overflowed at
//! alpha = 90) it never converges: the run hangs. Every Newton polish of
//! leontief solves through [`min_norm_solve`], which refuses non-finite
//! data and bounds the SVD's iterations.

use nalgebra::{DMatrix, DVector};

/// Iterations of the SVD at most (it needs a few dozen per singular value
/// on the small systems leontief polishes).
const MAX_SVD_ITERATIONS: usize = 10_000;

/// The minimum-norm least-squares solution of `a z = b`, singular values
/// below `eps` (relative to the largest) treated as zero; `None` when `a`
/// or `b` holds a non-finite number or the SVD does not converge.
pub fn min_norm_solve(a: DMatrix<f64>, b: &DVector<f64>, eps: f64) -> Option<DVector<f64>> {
    if !a.iter().all(|v| v.is_finite()) || !b.iter().all(|v| v.is_finite()) {
        return None;
    }
    let svd = a.try_svd(true, true, f64::EPSILON, MAX_SVD_ITERATIONS)?;
    let z = svd.solve(b, eps).ok()?;
    z.iter().all(|v| v.is_finite()).then_some(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_refuses_non_finite_data() {
        let a = DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 0.0, 4.0]);
        let z = min_norm_solve(a.clone(), &DVector::from_vec(vec![2.0, 2.0]), 1e-14).unwrap();
        assert_eq!(z.as_slice(), &[1.0, 0.5]);
        let mut bad = a;
        bad[(0, 1)] = f64::NAN;
        assert!(min_norm_solve(bad, &DVector::from_vec(vec![1.0, 1.0]), 1e-14).is_none());
        let a = DMatrix::from_row_slice(1, 1, &[f64::INFINITY]);
        assert!(min_norm_solve(a, &DVector::from_vec(vec![1.0]), 1e-14).is_none());
    }
}
