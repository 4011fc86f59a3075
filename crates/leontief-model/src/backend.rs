use crate::{Col, NewCol, Problem, Row, Status};
use serde::{Deserialize, Serialize};

/// What a backend returns for one solve.
///
/// Dual values follow one convention whatever the backend or the sense:
/// `col_dual = c - A^T row_dual` (reduced costs), so that for a
/// minimisation a positive `row_dual` prices a row at its lower bound and a
/// negative one a row at its upper bound; for a maximisation the signs are
/// reversed. [`crate::residuals`] checks exactly this convention.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Solution {
    /// The lossless outcome.
    pub status: Status,
    /// The backend's own status, verbatim.
    pub raw_status: String,
    /// Objective value reported by the backend (NaN when there is none).
    pub objective: f64,
    /// Primal values, one per column (empty when there is none).
    pub x: Vec<f64>,
    /// Row duals, one per row (empty when there are none).
    pub row_dual: Vec<f64>,
    /// Column duals (reduced costs), one per column (empty when none).
    pub col_dual: Vec<f64>,
    /// Wall-clock seconds spent in the backend's solve call.
    pub seconds: f64,
    /// Iterations, as the backend counts them.
    pub iterations: u64,
}

/// The backend could not run: the problem is malformed for it, the native
/// library refused it, or the backend does not support its cones.
///
/// An infeasible or unbounded problem is *not* an error: it is a
/// [`Status`] inside `Ok`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The backend cannot solve problems with these cones.
    #[error("backend {backend} does not support cone kind {kind}")]
    UnsupportedCone {
        /// Backend name.
        backend: &'static str,
        /// The offending cone kind.
        kind: String,
    },
    /// The native library rejected a call.
    #[error("backend {backend}: {call} failed: {detail}")]
    Native {
        /// Backend name.
        backend: &'static str,
        /// The native call.
        call: &'static str,
        /// What it said.
        detail: String,
    },
    /// The problem is too large for the backend's index type.
    #[error("backend {backend}: problem too large ({what})")]
    TooLarge {
        /// Backend name.
        backend: &'static str,
        /// What overflowed.
        what: String,
    },
    /// The backend cannot do this operation.
    #[error("backend {backend} does not support {what}")]
    Unsupported {
        /// Backend name.
        backend: &'static str,
        /// The operation.
        what: &'static str,
    },
    /// A refill named a row/column pair that is not stored in the pattern.
    #[error("entry (row {row}, col {col}) is not in the problem's sparsity pattern")]
    NotInPattern {
        /// Row index.
        row: usize,
        /// Column index.
        col: usize,
    },
}

/// A backend that solves LPs.
///
/// Mechanisms are generic over this trait; the CLI picks the backend.
pub trait LpBackend: Sync {
    /// A problem loaded into the backend, ready to be solved and re-solved.
    type Loaded: LoadedLp;

    /// Short name of the backend, for output and errors.
    fn name(&self) -> &'static str;

    /// Load a problem (copying it into the native solver once).
    fn load(&self, problem: Problem) -> Result<Self::Loaded, BackendError>;

    /// True when an optimal [`Solution`] is a vertex with complementary
    /// duals (a simplex basis, or interior point followed by crossover), so
    /// a positive dual proves its row binds in every optimum. Interior-point
    /// answers without crossover are not: their duals are only near a
    /// complementary pair. Default false: callers must not lean on duals
    /// for combinatorial decisions unless the backend says so.
    fn vertex_duals(&self) -> bool {
        false
    }

    /// True when loaded problems can grow by [`LoadedLp::add_cols`] and
    /// re-solve warm-started (column generation). Default false.
    fn can_add_cols(&self) -> bool {
        false
    }

    /// Seconds each solve may take, where the backend has a limit: a
    /// caller that solves an LP with another method (an interior point of
    /// its own, say) gives it the same limit. Default none.
    fn time_limit(&self) -> Option<f64> {
        None
    }

    /// Load and solve once.
    fn solve(&self, problem: Problem) -> Result<Solution, BackendError> {
        self.load(problem)?.solve()
    }
}

/// Where a variable of a simplex basis stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BasisStatus {
    /// In the basis.
    Basic,
    /// Nonbasic at its lower bound.
    Lower,
    /// Nonbasic at its upper bound.
    Upper,
    /// Nonbasic free, at zero.
    Zero,
}

/// A problem living inside a backend: change numbers, not structure, and
/// re-solve (warm-started where the backend can).
///
/// The loaded problem keeps its own [`Problem`] copy in step with every
/// change, so [`crate::residuals`] can check a solution against exactly the
/// data that was solved.
pub trait LoadedLp {
    /// Solve (or re-solve) the current problem.
    fn solve(&mut self) -> Result<Solution, BackendError>;
    /// The problem as currently loaded.
    fn problem(&self) -> &Problem;
    /// Change the bounds of a column.
    fn set_col_bounds(&mut self, col: Col, lower: f64, upper: f64) -> Result<(), BackendError>;
    /// Change the bounds of many columns at once (one native call where
    /// the backend has one). `cols`, `lower` and `upper` have equal length.
    fn set_cols_bounds(
        &mut self,
        cols: &[Col],
        lower: &[f64],
        upper: &[f64],
    ) -> Result<(), BackendError> {
        for ((&c, &l), &u) in cols.iter().zip(lower).zip(upper) {
            self.set_col_bounds(c, l, u)?;
        }
        Ok(())
    }
    /// Change the bounds of a row.
    fn set_row_bounds(&mut self, row: Row, lower: f64, upper: f64) -> Result<(), BackendError>;
    /// Change the objective coefficient of a column.
    fn set_cost(&mut self, col: Col, cost: f64) -> Result<(), BackendError>;
    /// Change a stored matrix entry (the pattern never changes: the entry
    /// must exist; setting it to zero keeps it stored).
    fn set_coefficient(&mut self, row: Row, col: Col, value: f64) -> Result<(), BackendError>;
    /// Solve by an interior point method, without crossover to a vertex,
    /// where the backend has one and the caller's settings leave the
    /// choice open. For LPs whose caller reads only the primal point (and
    /// the duals as a guide for pricing, never as a certificate or a
    /// vertex's verdict): the max-min operator's pooled-first LP, 0.33 s
    /// with crossover against 0.61 s by simplex at 100 x 1,000, and about
    /// half that again without crossover (docs/design/maxmin-operator.md). The primal
    /// must still be accurate: the backend tightens its optimality
    /// tolerance to make up for the crossover. Default: nothing.
    fn interior_point_primal(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Solve by simplex without presolve where the caller's settings leave
    /// the choice open: a small LP re-solved many times from its last
    /// basis (the pattern master: about 12 rows, 6 solves per simulator
    /// event; presolve cost a fifth of each solve). Default: nothing.
    fn prefer_warm_simplex(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Solve with the finest feasibility tolerances the backend has, or
    /// the caller's settings where finer: an LP whose duals certify many
    /// users at once (the pattern master, one round holding 10,000 users:
    /// each user's room in the certificate is the duality gap over its
    /// own share of the total, about 1e-4 of it). Default: nothing.
    fn finest_tolerances(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Solve by primal simplex without presolve from the last solve's
    /// basis, where the caller's settings leave the choice open: an LP
    /// whose changes keep the last optimum feasible and only open room
    /// for the objective (the max-min rounds: freezing users and raising
    /// their bounds to their levels, closing columns at 0). Dual simplex
    /// from such a basis starts over. Default: nothing.
    fn prefer_warm_primal(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Solve every time from scratch, not from the last solve's basis:
    /// an LP whose bound changes move its optimum far in an
    /// ill-conditioned region (the max-min rounds with placement lists at
    /// 1,000 x 10,000: HiGHS warm-started without presolve took 10-37 s
    /// on LPs it solves in 0.5-1.6 s from scratch). Default: nothing.
    fn prefer_cold_start(&mut self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Let the next solves run at most `seconds` each (the least of this
    /// and the backend's own time limit): a caller that runs many solves
    /// under one deadline sets what is left of it before each (the
    /// max-min rounds, where one LP of a 900 s run took 152 s with the
    /// whole limit its own). Default: nothing.
    fn limit_time(&mut self, seconds: f64) -> Result<(), BackendError> {
        let _ = seconds;
        Ok(())
    }
    /// The basis of the last solve, where the backend solves to a vertex
    /// and has one: each column's, then each row's status (a row's
    /// variable is its activity). Default: none.
    fn basis(&self) -> Option<(Vec<BasisStatus>, Vec<BasisStatus>)> {
        None
    }
    /// Start the next solve from this basis (each column's status, then
    /// each row's, as [`LoadedLp::basis`] gives them), where the backend
    /// can. Default: nothing.
    fn set_basis(
        &mut self,
        cols: &[BasisStatus],
        rows: &[BasisStatus],
    ) -> Result<(), BackendError> {
        let _ = (cols, rows);
        Ok(())
    }
    /// Append columns (the next re-solve starts from the current basis
    /// where the backend can). Default: [`BackendError::Unsupported`];
    /// backends that implement it say so by [`LpBackend::can_add_cols`].
    fn add_cols(&mut self, cols: &[NewCol]) -> Result<Vec<Col>, BackendError> {
        let _ = cols;
        Err(BackendError::Unsupported {
            backend: "this backend",
            what: "adding columns",
        })
    }
}
