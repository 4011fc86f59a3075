use crate::{Problem, Sense};
use serde::{Deserialize, Serialize};

/// Residuals of a primal-dual pair, recomputed from the problem data.
///
/// Everything is computed from `x` and the row duals `y` alone: the reduced
/// costs are recomputed as `z = c - A^T y`, never taken from the backend.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Residuals {
    /// Largest violation of a row or column bound by `x`, absolute.
    pub primal_infeasibility: f64,
    /// Largest dual sign violation: a multiplier that prices a bound that
    /// is infinite, or has the wrong sign for the sense.
    pub dual_infeasibility: f64,
    /// `|primal - dual| / (1 + |primal| + |dual|)`.
    pub relative_gap: f64,
    /// `c^T x + offset`.
    pub primal_objective: f64,
    /// The Lagrangian dual objective of `y` (and the recomputed `z`).
    pub dual_objective: f64,
}

impl Residuals {
    /// True when all three residuals are at most `tol`.
    pub fn within(&self, tol: f64) -> bool {
        self.primal_infeasibility <= tol
            && self.dual_infeasibility <= tol
            && self.relative_gap <= tol
    }
}

/// Multiplier `m` on the range `[lo, hi]` of a minimisation: its dual
/// objective contribution and its sign violation.
fn price(m: f64, lo: f64, hi: f64) -> (f64, f64) {
    if m > 0.0 {
        if lo.is_finite() {
            (m * lo, 0.0)
        } else {
            (0.0, m)
        }
    } else if m < 0.0 {
        if hi.is_finite() {
            (m * hi, 0.0)
        } else {
            (0.0, -m)
        }
    } else {
        (0.0, 0.0)
    }
}

fn violation(v: f64, lo: f64, hi: f64) -> f64 {
    (lo - v).max(v - hi).max(0.0)
}

/// Check `x` (primal) and `row_dual` (dual, with the convention of
/// [`crate::Solution`]) against the LP `problem`.
///
/// # Panics
/// If the vector lengths do not match the problem: a programming error.
pub fn residuals(problem: &Problem, x: &[f64], row_dual: &[f64]) -> Residuals {
    assert_eq!(x.len(), problem.num_cols(), "x has the wrong length");
    assert_eq!(row_dual.len(), problem.num_rows(), "y has the wrong length");
    let ax = problem.row_activity(x);
    let mut primal_inf = 0.0f64;
    for (i, &v) in ax.iter().enumerate() {
        primal_inf = primal_inf.max(violation(v, problem.row_lower[i], problem.row_upper[i]));
    }
    for (j, &v) in x.iter().enumerate() {
        primal_inf = primal_inf.max(violation(v, problem.col_lower[j], problem.col_upper[j]));
    }
    // Work as a minimisation: a maximisation of c is a minimisation of -c
    // whose multipliers are the negated ones.
    let flip = match problem.sense {
        Sense::Minimise => 1.0,
        Sense::Maximise => -1.0,
    };
    let aty = problem.transpose_times(row_dual);
    let mut dual_obj = 0.0;
    let mut dual_inf = 0.0f64;
    for (i, &y) in row_dual.iter().enumerate() {
        let (obj, inf) = price(flip * y, problem.row_lower[i], problem.row_upper[i]);
        dual_obj += obj;
        dual_inf = dual_inf.max(inf);
    }
    for (j, &atyj) in aty.iter().enumerate() {
        let z = flip * (problem.col_cost[j] - atyj);
        let (obj, inf) = price(z, problem.col_lower[j], problem.col_upper[j]);
        dual_obj += obj;
        dual_inf = dual_inf.max(inf);
    }
    let primal_obj = problem.objective_value(x);
    let dual_obj = flip * dual_obj + problem.offset;
    Residuals {
        primal_infeasibility: primal_inf,
        dual_infeasibility: dual_inf,
        relative_gap: (primal_obj - dual_obj).abs() / (1.0 + primal_obj.abs() + dual_obj.abs()),
        primal_objective: primal_obj,
        dual_objective: dual_obj,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProblemBuilder;

    /// max x + y s.t. x + 2y <= 4, 3x + y <= 6: optimum (8/5, 6/5), value
    /// 14/5, duals (2/5, 1/5) on the two rows.
    fn small() -> Problem {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r1 = b.add_row(f64::NEG_INFINITY, 4.0);
        let r2 = b.add_row(f64::NEG_INFINITY, 6.0);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 1.0), (r2, 3.0)]);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 2.0), (r2, 1.0)]);
        b.build()
    }

    #[test]
    fn optimal_pair_has_zero_residuals() {
        let r = residuals(&small(), &[1.6, 1.2], &[0.4, 0.2]);
        assert!(r.within(1e-12), "{r:?}");
        assert!((r.primal_objective - 2.8).abs() < 1e-12);
    }

    #[test]
    fn wrong_sign_dual_and_infeasible_primal_are_caught() {
        // A negative price on a `<=` row of a maximisation is dual infeasible.
        let r = residuals(&small(), &[1.6, 1.2], &[-0.4, 0.2]);
        assert!(r.dual_infeasibility > 0.1, "{r:?}");
        // Over capacity.
        let r = residuals(&small(), &[2.0, 2.0], &[0.4, 0.2]);
        assert!((r.primal_infeasibility - 2.0).abs() < 1e-12, "{r:?}");
        // Feasible but suboptimal: a gap.
        let r = residuals(&small(), &[1.0, 1.0], &[0.4, 0.2]);
        assert!(r.relative_gap > 0.1, "{r:?}");
    }

    #[test]
    fn minimisation_convention() {
        // min x s.t. x >= 2: y = 1 on the row, value 2.
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r = b.add_row(2.0, f64::INFINITY);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r, 1.0)]);
        let p = b.build();
        assert!(residuals(&p, &[2.0], &[1.0]).within(1e-12));
        assert!(residuals(&p, &[2.0], &[-1.0]).dual_infeasibility > 0.5);
    }
}
