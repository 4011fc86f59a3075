//! Clarabel as the max-min operator's LP backend where it is fastest:
//! the LPs of up to [`crate::settings::CLARABEL_MAX_USERS`] users, grown by column generation.
//!
//! Clarabel is an interior point method whose every step is one sparse
//! LDL factorisation of the KKT system. The operator's LPs suit it: each
//! entry's m capacity rows touch only its own columns, each user's link
//! row only that user's. HiGHS's interior point (IPX) solves the same
//! normal equations by preconditioned conjugate gradients (10 ms per
//! iteration on a 500-row LP) and its simplex pivots through a massively
//! degenerate optimum. The factorisation fills in a dense block over the
//! users (each entry's columns join its users), about N^3 / 3 per step,
//! so past [`crate::settings::CLARABEL_MAX_USERS`] HiGHS is faster (measured in [`crate::paths::pooled`]).
//!
//! Columns are appended to the loaded problem and the next solve starts
//! over (no warm start; an interior point method gains little from one). Its solutions are interior, not vertices
//! ([`LpBackend::vertex_duals`] is false): a round's
//! prices prove blocked users by weak duality over every pair
//! (`crate::lp::duality::dual_blocked`), its point shows those that rise, and
//! growth LPs decide the rest.

use leontief_clarabel::{Clarabel, ClarabelLp, ClarabelSettings, Ldl};
use leontief_model::{BackendError, LpBackend, Problem};

use crate::settings::PARALLEL_LDL_THREADS;

/// Clarabel's tolerances (gap and feasibility). At 1e-10 the Google cell
/// forced through the pooled path (1,000 users on 10 entries) left 1.1e-8
/// of a user's level unproved by the pooled prices after the snap and the
/// capacity repair (its test asks 1e-8); 1e-12 costs 10%.
const TOLERANCE: f64 = 1e-12;

/// Clarabel, saying it grows its LPs (it does, without a warm start).
pub(crate) struct Direct {
    clarabel: Clarabel,
    time_limit: Option<f64>,
}

impl Direct {
    /// Clarabel at [`TOLERANCE`], each solve within `time_limit` seconds
    /// (the run's limit per LP, [`LpBackend::time_limit`]).
    pub(crate) fn new(time_limit: Option<f64>) -> Result<Direct, BackendError> {
        Direct::with_ldl(time_limit, Ldl::Qdldl, 0)
    }

    /// [`Direct::new`] with Clarabel's choice of LDL factorisation
    /// ([`Ldl::Auto`]): for an LP over thousands of users on a few
    /// hundred servers, whose factor holds a dense block (the groups'
    /// first step at 10,000 x 10,000 with 6 resources: 10,000 users on
    /// 400 servers, 73 s by QDLDL, 23 s by faer's supernodal one), on
    /// one thread where rayon's pool has fewer than
    /// [`PARALLEL_LDL_THREADS`].
    pub(crate) fn dense_block(time_limit: Option<f64>) -> Result<Direct, BackendError> {
        let threads = if rayon::current_num_threads() < PARALLEL_LDL_THREADS {
            1
        } else {
            0
        };
        Direct::with_ldl(time_limit, Ldl::Auto, threads)
    }

    fn with_ldl(time_limit: Option<f64>, ldl: Ldl, threads: u32) -> Result<Direct, BackendError> {
        let clarabel = Clarabel::new(ClarabelSettings {
            tol_gap_abs: TOLERANCE,
            tol_gap_rel: TOLERANCE,
            tol_feas: TOLERANCE,
            time_limit,
            ldl,
            ldl_threads: threads,
            ..Default::default()
        })
        .map_err(|e| BackendError::Native {
            backend: "clarabel",
            call: "ClarabelSettings",
            detail: e.to_string(),
        })?;
        Ok(Direct {
            clarabel,
            time_limit,
        })
    }
}

impl LpBackend for Direct {
    type Loaded = ClarabelLp;

    fn name(&self) -> &'static str {
        self.clarabel.name()
    }

    fn load(&self, problem: Problem) -> Result<ClarabelLp, BackendError> {
        self.clarabel.load(problem)
    }

    fn can_add_cols(&self) -> bool {
        true
    }

    fn time_limit(&self) -> Option<f64> {
        self.time_limit
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use leontief_model::{Col, LoadedLp, NewCol, ProblemBuilder, Sense, Solution, Status};

    const INF: f64 = f64::INFINITY;

    /// Grown by a column, re-solved from the changed problem: the
    /// optimum of the grown LP, its duals, and bound changes take effect.
    /// Shared by the backends of the operator's LPs; returns the three
    /// solutions.
    pub(crate) fn added_columns_and_bounds_reach<B: LpBackend>(backend: &B) -> Vec<Solution> {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r1 = b.add_row(-INF, 4.0);
        let r2 = b.add_row(-INF, 6.0);
        let x = b.add_col(1.0, 0.0, INF, [(r1, 1.0), (r2, 3.0)]);
        let mut lp = backend.load(b.build()).unwrap();
        let first = lp.solve().unwrap();
        assert_eq!(first.status, Status::Optimal);
        assert!((first.objective - 2.0).abs() < 1e-9, "{first:?}");
        let y = lp
            .add_cols(&[NewCol {
                cost: 1.0,
                lower: 0.0,
                upper: INF,
                entries: vec![(r1, 2.0), (r2, 1.0)],
            }])
            .unwrap();
        assert_eq!(y, vec![Col(1)]);
        let grown = lp.solve().unwrap();
        assert!((grown.objective - 2.8).abs() < 1e-9, "{grown:?}");
        // Row duals price the grown LP: x and y both at reduced cost 0.
        assert!(
            (grown.row_dual[0] - 0.4).abs() < 1e-8 && (grown.row_dual[1] - 0.2).abs() < 1e-8,
            "{grown:?}"
        );
        lp.set_col_bounds(x, 0.0, 0.0).unwrap();
        let bounded = lp.solve().unwrap();
        assert!((bounded.objective - 2.0).abs() < 1e-9, "{bounded:?}");
        assert_eq!(lp.problem().num_cols(), 2);
        vec![first, grown, bounded]
    }

    #[test]
    fn added_columns_and_bounds_reach_the_solver() {
        let direct = Direct::new(None).unwrap();
        assert!(direct.can_add_cols() && !direct.vertex_duals());
        added_columns_and_bounds_reach(&direct);
    }
}
