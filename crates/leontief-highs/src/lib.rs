//! The HiGHS backend of leontief.
//!
//! A [`Problem`] is passed to HiGHS in one call (`Highs_passLp`, column-wise,
//! straight from the builder's CSC arrays), and stays loaded: bounds, costs
//! and stored coefficients can be changed and the LP re-solved, warm-started
//! from the previous basis. This is what the max-min rounds and the BBF
//! subset LPs need.
//!
//! HiGHS is quiet by default ([`HighsSettings::verbose`]). Its model
//! statuses map onto [`Status`] without loss (see [`map_status`]): in
//! particular "unbounded or infeasible" stays
//! [`Status::InfeasibleOrUnbounded`], and an "optimal" answer whose unscaled
//! solution still has infeasibilities is [`Status::ReducedAccuracy`].
#![deny(missing_docs)]

use highs::HighsModelStatus;
use highs_sys as ffi;
use leontief_model::{
    BackendError, BasisStatus, Col, LoadedLp, LpBackend, NewCol, Problem, Row, Sense, Solution,
    Status,
};
use std::ffi::{c_void, CString};
use std::time::Instant;

mod pool;
mod settings;

use pool::{pool_put, pool_take, POOL_UP_TO};

const NAME: &str = "highs";

/// HiGHS's finest primal and dual feasibility tolerance
/// ([`LoadedLp::finest_tolerances`]).
const FINEST_TOLERANCE: f64 = 1e-10;

pub use settings::{
    Algorithm, HighsSettings, SettingsError, AUTO_IPM_COLUMNS, AUTO_IPM_ROWS, AUTO_IPM_WIDTH,
};

/// The HiGHS LP backend.
#[derive(Debug, Clone, Default)]
pub struct Highs {
    settings: HighsSettings,
}

impl Highs {
    /// A backend with the given settings.
    pub fn new(settings: HighsSettings) -> Result<Self, SettingsError> {
        settings.validate()?;
        Ok(Highs { settings })
    }

    /// The settings.
    pub fn settings(&self) -> &HighsSettings {
        &self.settings
    }
}

/// Map a HiGHS model status onto [`Status`], losslessly.
///
/// Returns `Err` for the statuses that mean the model could not be loaded
/// at all (load error, model error): those are "could not run".
pub fn map_status(s: HighsModelStatus, unscaled_infeasible: bool) -> Result<Status, String> {
    use HighsModelStatus as H;
    Ok(match s {
        H::Optimal | H::ModelEmpty => {
            if unscaled_infeasible {
                Status::ReducedAccuracy
            } else {
                Status::Optimal
            }
        }
        H::Infeasible => Status::Infeasible,
        H::Unbounded => Status::Unbounded,
        H::UnboundedOrInfeasible => Status::InfeasibleOrUnbounded,
        H::ReachedTimeLimit => Status::TimeLimit,
        H::ReachedIterationLimit => Status::IterationLimit,
        H::ObjectiveBound
        | H::ObjectiveTarget
        | H::ReachedSolutionLimit
        | H::ReachedInterrupt
        | H::ReachedMemoryLimit => Status::OtherLimit,
        H::PresolveError | H::SolveError | H::PostsolveError => Status::NumericalFailure,
        H::NotSet | H::Unknown => Status::Unknown,
        H::LoadError | H::ModelError => return Err(format!("{s:?}")),
        _ => Status::Unknown,
    })
}

/// An LP loaded into a HiGHS instance.
pub struct HighsLp {
    ptr: *mut c_void,
    problem: Problem,
    /// The algorithm was left to [`Algorithm::Auto`].
    auto: bool,
    /// The settings' time limit (per solve).
    time_limit: Option<f64>,
    /// Every solve from scratch ([`LoadedLp::prefer_cold_start`]).
    cold: bool,
    /// The settings' primal and dual feasibility tolerances.
    tolerances: (f64, f64),
}

// SAFETY: a HiGHS instance is a self-contained C++ object with no thread
// affinity; `HighsLp` owns it exclusively and never shares the pointer, so
// moving it to another thread is sound (it is not `Sync`).
unsafe impl Send for HighsLp {}

impl Drop for HighsLp {
    fn drop(&mut self) {
        let small = self.problem.num_rows() + self.problem.num_cols() <= POOL_UP_TO;
        // SAFETY: `ptr` came from Highs_create (or the pool) and is owned
        // here; it is either cleared and handed to the pool, which owns it
        // from then on, or destroyed, once.
        unsafe {
            if !(small && ffi::Highs_clear(self.ptr) != ffi::STATUS_ERROR && pool_put(self.ptr)) {
                ffi::Highs_destroy(self.ptr)
            }
        }
    }
}

fn int(v: usize, what: &str) -> Result<ffi::HighsInt, BackendError> {
    ffi::HighsInt::try_from(v).map_err(|_| BackendError::TooLarge {
        backend: NAME,
        what: format!("{what} = {v} exceeds HiGHS's index type"),
    })
}

fn check(ret: ffi::HighsInt, call: &'static str) -> Result<(), BackendError> {
    if ret == ffi::STATUS_ERROR {
        Err(BackendError::Native {
            backend: NAME,
            call,
            detail: "returned an error status".into(),
        })
    } else {
        Ok(())
    }
}

impl HighsLp {
    fn set_bool(&mut self, key: &str, v: bool) -> Result<(), BackendError> {
        let k = CString::new(key).expect("option names have no NUL");
        // SAFETY: valid instance and NUL-terminated key.
        check(
            unsafe { ffi::Highs_setBoolOptionValue(self.ptr, k.as_ptr(), v as ffi::HighsInt) },
            "Highs_setBoolOptionValue",
        )
    }
    fn set_double(&mut self, key: &str, v: f64) -> Result<(), BackendError> {
        let k = CString::new(key).expect("option names have no NUL");
        // SAFETY: as above.
        check(
            unsafe { ffi::Highs_setDoubleOptionValue(self.ptr, k.as_ptr(), v) },
            "Highs_setDoubleOptionValue",
        )
    }
    fn set_int(&mut self, key: &str, v: i32) -> Result<(), BackendError> {
        let k = CString::new(key).expect("option names have no NUL");
        // SAFETY: as above.
        check(
            unsafe { ffi::Highs_setIntOptionValue(self.ptr, k.as_ptr(), v as ffi::HighsInt) },
            "Highs_setIntOptionValue",
        )
    }
    fn set_string(&mut self, key: &str, v: &str) -> Result<(), BackendError> {
        let k = CString::new(key).expect("option names have no NUL");
        let v = CString::new(v).expect("option values have no NUL");
        // SAFETY: as above.
        check(
            unsafe { ffi::Highs_setStringOptionValue(self.ptr, k.as_ptr(), v.as_ptr()) },
            "Highs_setStringOptionValue",
        )
    }
    fn int_info(&self, key: &str) -> Option<i64> {
        let k = CString::new(key).expect("info names have no NUL");
        let mut v: ffi::HighsInt = 0;
        // SAFETY: valid instance, key and out-pointer.
        let ret = unsafe { ffi::Highs_getIntInfoValue(self.ptr, k.as_ptr(), &mut v) };
        (ret != ffi::STATUS_ERROR).then_some(v as i64)
    }

    fn load(problem: Problem, settings: &HighsSettings) -> Result<Self, BackendError> {
        if !problem.is_lp() {
            return Err(BackendError::UnsupportedCone {
                backend: NAME,
                kind: format!("{:?}", problem.cones),
            });
        }
        let nc = int(problem.num_cols(), "columns")?;
        let nr = int(problem.num_rows(), "rows")?;
        let nz = int(problem.num_nonzeros(), "nonzeros")?;
        let start: Vec<ffi::HighsInt> = problem.a_start[..problem.num_cols()]
            .iter()
            .map(|&s| s as ffi::HighsInt)
            .collect();
        let index: Vec<ffi::HighsInt> = problem
            .a_index
            .iter()
            .map(|&r| r as ffi::HighsInt)
            .collect();
        let ptr = pool_take();
        if ptr.is_null() {
            return Err(BackendError::Native {
                backend: NAME,
                call: "Highs_create",
                detail: "returned null".into(),
            });
        }
        let mut lp = HighsLp {
            ptr,
            problem,
            auto: settings.algorithm == Algorithm::Auto,
            time_limit: settings.time_limit,
            cold: false,
            tolerances: (
                settings.primal_feasibility_tolerance,
                settings.dual_feasibility_tolerance,
            ),
        };
        lp.set_bool("output_flag", settings.verbose)?;
        lp.set_bool("log_to_console", settings.verbose)?;
        lp.set_double(
            "primal_feasibility_tolerance",
            settings.primal_feasibility_tolerance,
        )?;
        lp.set_double(
            "dual_feasibility_tolerance",
            settings.dual_feasibility_tolerance,
        )?;
        // HiGHS drops |coefficients| below 1e-9 by default; leontief's
        // models hold legitimate ones below that (a user of weight 1 beside
        // one of weight 1e9, in level units), and a dropped coefficient
        // turns a bounded LP unbounded. 1e-12 is HiGHS's smallest setting.
        lp.set_double("small_matrix_value", 1e-12)?;
        if let Some(t) = settings.time_limit {
            lp.set_double("time_limit", t)?;
        }
        if let Some(n) = settings.iteration_limit {
            lp.set_int("simplex_iteration_limit", n.min(i32::MAX as u32) as i32)?;
        }
        if let Some(t) = settings.threads {
            lp.set_int("threads", t.min(i32::MAX as u32) as i32)?;
        }
        lp.set_string("presolve", if settings.presolve { "choose" } else { "off" })?;
        let many_cols = lp.problem.num_cols() >= AUTO_IPM_COLUMNS;
        let short = lp.problem.num_rows() < AUTO_IPM_ROWS;
        let large =
            many_cols && !short && lp.problem.num_cols() >= AUTO_IPM_WIDTH * lp.problem.num_rows();
        if settings.algorithm == Algorithm::Auto && many_cols && short {
            // Wide and short (NFC on a few server classes: 20 rows,
            // 10,000 columns): primal simplex without presolve, 6 ms,
            // against 40 ms for HiGHS's default (presolve, dual simplex)
            // and 119 ms by interior point.
            lp.set_int("simplex_strategy", 4)?;
            lp.set_string("presolve", "off")?;
        }
        lp.set_string(
            "solver",
            match settings.algorithm {
                Algorithm::Auto if large => "ipm",
                Algorithm::Auto if many_cols => "simplex",
                Algorithm::Auto | Algorithm::Choose => "choose",
                Algorithm::Simplex => "simplex",
                Algorithm::InteriorPoint => "ipm",
            },
        )?;
        let p = &lp.problem;
        let sense = match p.sense {
            Sense::Minimise => ffi::OBJECTIVE_SENSE_MINIMIZE,
            Sense::Maximise => ffi::OBJECTIVE_SENSE_MAXIMIZE,
        };
        // SAFETY: every array has the length HiGHS reads (nc, nr, nz, nc
        // starts) and outlives the call; HiGHS copies the data.
        let ret = unsafe {
            ffi::Highs_passLp(
                lp.ptr,
                nc,
                nr,
                nz,
                ffi::MATRIX_FORMAT_COLUMN_WISE,
                sense,
                p.offset,
                p.col_cost.as_ptr(),
                p.col_lower.as_ptr(),
                p.col_upper.as_ptr(),
                p.row_lower.as_ptr(),
                p.row_upper.as_ptr(),
                start.as_ptr(),
                index.as_ptr(),
                p.a_value.as_ptr(),
            )
        };
        check(ret, "Highs_passLp")?;
        Ok(lp)
    }
}

impl LpBackend for Highs {
    type Loaded = HighsLp;

    fn name(&self) -> &'static str {
        NAME
    }

    /// `Highs_addCols`; the next run starts from the current basis.
    fn can_add_cols(&self) -> bool {
        true
    }

    /// HiGHS returns basic solutions (simplex, or IPM with crossover, which
    /// leontief never turns off).
    fn vertex_duals(&self) -> bool {
        true
    }

    fn load(&self, problem: Problem) -> Result<HighsLp, BackendError> {
        HighsLp::load(problem, &self.settings)
    }

    fn time_limit(&self) -> Option<f64> {
        self.settings.time_limit
    }
}

impl HighsLp {
    /// Make `cols` integer (a MILP from here on: HiGHS's branch and bound;
    /// row duals are then not meaningful). HiGHS-only, not on the trait.
    pub fn set_integer(&mut self, cols: &[Col]) -> Result<(), BackendError> {
        if cols.is_empty() {
            return Ok(());
        }
        let mut set = cols
            .iter()
            .map(|c| int(c.0, "column"))
            .collect::<Result<Vec<_>, _>>()?;
        set.sort_unstable();
        let kinds = vec![ffi::kHighsVarTypeInteger; set.len()];
        let n = int(set.len(), "column count")?;
        // SAFETY: valid instance; both buffers hold n entries.
        check(
            unsafe {
                ffi::Highs_changeColsIntegralityBySet(self.ptr, n, set.as_ptr(), kinds.as_ptr())
            },
            "Highs_changeColsIntegralityBySet",
        )
    }
}

impl HighsLp {
    /// Start the next solve from a basis: `col_basic[j]` and `row_basic[r]`
    /// say which columns and rows (their slacks) are basic; nonbasic
    /// columns and rows sit at their lower bound (the upper one when the
    /// lower is infinite, zero when both are): a shorthand for
    /// [`LoadedLp::set_basis`].
    /// Slices of the wrong length are an `Err`; HiGHS checks the rest (one
    /// basic variable per row, nonsingular) and may refuse the basis or
    /// start elsewhere. It takes effect with presolve off.
    pub fn set_basic(
        &mut self,
        col_basic: &[bool],
        row_basic: &[bool],
    ) -> Result<(), BackendError> {
        let status = |basic: bool, lower: f64, upper: f64| {
            if basic {
                BasisStatus::Basic
            } else if lower.is_finite() {
                BasisStatus::Lower
            } else if upper.is_finite() {
                BasisStatus::Upper
            } else {
                BasisStatus::Zero
            }
        };
        // Statuses for as many entries as given: a slice of the wrong
        // length is refused by `set_basis`, naming both sizes.
        let p = &self.problem;
        let bound = |v: &[f64], j: usize| v.get(j).copied().unwrap_or(0.0);
        let cols: Vec<BasisStatus> = col_basic
            .iter()
            .enumerate()
            .map(|(j, &b)| status(b, bound(&p.col_lower, j), bound(&p.col_upper, j)))
            .collect();
        let rows: Vec<BasisStatus> = row_basic
            .iter()
            .enumerate()
            .map(|(r, &b)| status(b, bound(&p.row_lower, r), bound(&p.row_upper, r)))
            .collect();
        LoadedLp::set_basis(self, &cols, &rows)
    }
}

impl LoadedLp for HighsLp {
    fn solve(&mut self) -> Result<Solution, BackendError> {
        let t0 = Instant::now();
        // HiGHS's run clock adds up over the runs of an instance (and over
        // the pool's reuses): the time limit is per solve only from zero.
        // SAFETY: valid instance; its clocks are stopped between runs.
        let ret = unsafe {
            if self.cold {
                ffi::Highs_clearSolver(self.ptr);
            }
            ffi::Highs_zeroAllClocks(self.ptr);
            ffi::Highs_run(self.ptr)
        };
        let seconds = t0.elapsed().as_secs_f64();
        // SAFETY: valid instance.
        let raw = unsafe { ffi::Highs_getModelStatus(self.ptr) };
        let typed = HighsModelStatus::try_from(raw).map_err(|_| BackendError::Native {
            backend: NAME,
            call: "Highs_getModelStatus",
            detail: format!("unknown model status {raw}"),
        })?;
        if ret == ffi::STATUS_ERROR && typed != HighsModelStatus::Optimal {
            // Highs_run itself failed; the model status says how.
            let status = map_status(typed, false).unwrap_or(Status::NumericalFailure);
            return Ok(Solution {
                status,
                raw_status: format!("HiGHS run error, model status {typed:?}"),
                objective: f64::NAN,
                x: Vec::new(),
                row_dual: Vec::new(),
                col_dual: Vec::new(),
                seconds,
                iterations: 0,
            });
        }
        let unscaled = self.int_info("num_primal_infeasibilities").unwrap_or(0) > 0
            || self.int_info("num_dual_infeasibilities").unwrap_or(0) > 0;
        let status = map_status(typed, unscaled).map_err(|detail| BackendError::Native {
            backend: NAME,
            call: "Highs_run",
            detail,
        })?;
        let iterations = self.int_info("simplex_iteration_count").unwrap_or(0).max(0) as u64
            + self.int_info("ipm_iteration_count").unwrap_or(0).max(0) as u64;
        let (nc, nr) = (self.problem.num_cols(), self.problem.num_rows());
        let (mut x, mut col_dual, mut row_val, mut row_dual) =
            (vec![0.0; nc], vec![0.0; nc], vec![0.0; nr], vec![0.0; nr]);
        let objective = if status.has_solution() {
            // SAFETY: the buffers have nc / nr entries as HiGHS expects.
            unsafe {
                ffi::Highs_getSolution(
                    self.ptr,
                    x.as_mut_ptr(),
                    col_dual.as_mut_ptr(),
                    row_val.as_mut_ptr(),
                    row_dual.as_mut_ptr(),
                );
                ffi::Highs_getObjectiveValue(self.ptr)
            }
        } else {
            x.clear();
            col_dual.clear();
            row_dual.clear();
            f64::NAN
        };
        Ok(Solution {
            status,
            raw_status: format!("{typed:?}"),
            objective,
            x,
            row_dual,
            col_dual,
            seconds,
            iterations,
        })
    }

    fn problem(&self) -> &Problem {
        &self.problem
    }

    /// HiGHS's `time_limit` option: `seconds`, or the settings' limit
    /// when that is less.
    fn limit_time(&mut self, seconds: f64) -> Result<(), BackendError> {
        let t = self.time_limit.map_or(seconds, |s| s.min(seconds));
        self.set_double("time_limit", t.max(0.0))
    }

    /// `Highs_clearSolver` before each run: no basis, presolve as the
    /// settings say.
    fn prefer_cold_start(&mut self) -> Result<(), BackendError> {
        self.cold = true;
        Ok(())
    }

    /// Simplex without presolve, unless the settings chose an algorithm,
    /// from the last basis (no longer cold).
    fn prefer_warm_simplex(&mut self) -> Result<(), BackendError> {
        self.cold = false;
        if self.auto {
            self.set_string("solver", "simplex")?;
            self.set_string("presolve", "off")?;
        }
        Ok(())
    }

    /// Primal and dual feasibility tolerances at 1e-10, HiGHS's finest
    /// (the settings' where finer). At the default 1e-9 the pattern
    /// master's prices left 10,000 users in one round (10,000 x 150, 3
    /// resources) up to 5.6e-6 of room (relative), past the audit's 1e-6;
    /// at 1e-10, 3.4e-7, at the same cost.
    fn finest_tolerances(&mut self) -> Result<(), BackendError> {
        let (primal, dual) = self.tolerances;
        self.set_double("primal_feasibility_tolerance", primal.min(FINEST_TOLERANCE))?;
        self.set_double("dual_feasibility_tolerance", dual.min(FINEST_TOLERANCE))
    }

    /// Primal simplex without presolve from the last basis, unless the
    /// settings chose an algorithm (no longer cold).
    fn prefer_warm_primal(&mut self) -> Result<(), BackendError> {
        self.cold = false;
        if self.auto {
            self.set_string("solver", "simplex")?;
            self.set_string("presolve", "off")?;
            self.set_int("simplex_strategy", 4)?;
        }
        Ok(())
    }

    /// Interior point without crossover whatever the size, unless the
    /// settings chose an algorithm, with the optimality tolerance at
    /// 1e-11. HiGHS's default 1e-8 left the pooled LP's smallest users
    /// up to 6.2e-7 of their tasks short in the certificate at 1,000 x 100
    /// (the capacity repair turns the LP's infeasibility into slack);
    /// 1e-10 left 3.3e-8 at 3,000 x 300 and 1.2e-7 on the Google cell,
    /// 1e-11 leaves 6.5e-10 and 1e-8 at the same cost (1e-12 gains
    /// nothing more), all cheaper than the crossover it replaces.
    fn interior_point_primal(&mut self) -> Result<(), BackendError> {
        if self.auto {
            self.set_string("solver", "ipm")?;
            self.set_string("run_crossover", "off")?;
            self.set_double("ipm_optimality_tolerance", 1e-11)?;
        }
        Ok(())
    }

    fn basis(&self) -> Option<(Vec<BasisStatus>, Vec<BasisStatus>)> {
        let (nc, nr) = (self.problem.num_cols(), self.problem.num_rows());
        let mut cols: Vec<ffi::HighsInt> = vec![0; nc];
        let mut rows: Vec<ffi::HighsInt> = vec![0; nr];
        // SAFETY: valid instance; the arrays hold num_col and num_row
        // entries.
        let ret = unsafe { ffi::Highs_getBasis(self.ptr, cols.as_mut_ptr(), rows.as_mut_ptr()) };
        if ret == ffi::STATUS_ERROR {
            return None;
        }
        let map = |s: ffi::HighsInt| match s {
            s if s == ffi::kHighsBasisStatusBasic => Some(BasisStatus::Basic),
            s if s == ffi::kHighsBasisStatusLower => Some(BasisStatus::Lower),
            s if s == ffi::kHighsBasisStatusUpper => Some(BasisStatus::Upper),
            s if s == ffi::kHighsBasisStatusZero => Some(BasisStatus::Zero),
            _ => None,
        };
        let c: Option<Vec<BasisStatus>> = cols.into_iter().map(map).collect();
        let r: Option<Vec<BasisStatus>> = rows.into_iter().map(map).collect();
        Some((c?, r?))
    }

    fn set_basis(
        &mut self,
        cols: &[BasisStatus],
        rows: &[BasisStatus],
    ) -> Result<(), BackendError> {
        let p = &self.problem;
        if cols.len() != p.num_cols() || rows.len() != p.num_rows() {
            return Err(BackendError::Native {
                backend: NAME,
                call: "Highs_setBasis",
                detail: format!(
                    "basis of {} columns and {} rows for an LP of {} and {}",
                    cols.len(),
                    rows.len(),
                    p.num_cols(),
                    p.num_rows()
                ),
            });
        }
        let map = |s: &BasisStatus| match s {
            BasisStatus::Basic => ffi::kHighsBasisStatusBasic,
            BasisStatus::Lower => ffi::kHighsBasisStatusLower,
            BasisStatus::Upper => ffi::kHighsBasisStatusUpper,
            BasisStatus::Zero => ffi::kHighsBasisStatusZero,
        };
        let c: Vec<ffi::HighsInt> = cols.iter().map(map).collect();
        let r: Vec<ffi::HighsInt> = rows.iter().map(map).collect();
        // SAFETY: valid instance; the arrays hold num_col and num_row
        // entries.
        check(
            unsafe { ffi::Highs_setBasis(self.ptr, c.as_ptr(), r.as_ptr()) },
            "Highs_setBasis",
        )
    }

    fn add_cols(&mut self, cols: &[NewCol]) -> Result<Vec<Col>, BackendError> {
        let n = int(cols.len(), "columns")?;
        let (mut cost, mut lo, mut up) = (
            Vec::with_capacity(cols.len()),
            Vec::with_capacity(cols.len()),
            Vec::with_capacity(cols.len()),
        );
        let (mut start, mut index, mut value) =
            (Vec::with_capacity(cols.len()), Vec::new(), Vec::new());
        let nr = self.problem.num_rows();
        for c in cols {
            cost.push(c.cost);
            lo.push(c.lower);
            up.push(c.upper);
            start.push(int(index.len(), "nonzeros")?);
            for &(r, v) in &c.entries {
                if r.0 >= nr {
                    return Err(BackendError::Native {
                        backend: NAME,
                        call: "Highs_addCols",
                        detail: format!("column entry names row {} of {nr}", r.0),
                    });
                }
                index.push(r.0 as ffi::HighsInt);
                value.push(v);
            }
        }
        let nz = int(index.len(), "nonzeros")?;
        int(self.problem.num_cols() + cols.len(), "columns")?;
        // SAFETY: every array has the length HiGHS reads (n columns, n
        // starts, nz entries) and outlives the call; HiGHS copies them.
        check(
            unsafe {
                ffi::Highs_addCols(
                    self.ptr,
                    n,
                    cost.as_ptr(),
                    lo.as_ptr(),
                    up.as_ptr(),
                    nz,
                    start.as_ptr(),
                    index.as_ptr(),
                    value.as_ptr(),
                )
            },
            "Highs_addCols",
        )?;
        Ok(cols.iter().map(|c| self.problem.push_col(c)).collect())
    }

    fn set_col_bounds(&mut self, col: Col, lower: f64, upper: f64) -> Result<(), BackendError> {
        let c = int(col.0, "column")?;
        // SAFETY: valid instance; HiGHS checks the index.
        check(
            unsafe { ffi::Highs_changeColBounds(self.ptr, c, lower, upper) },
            "Highs_changeColBounds",
        )?;
        self.problem.col_lower[col.0] = lower;
        self.problem.col_upper[col.0] = upper;
        Ok(())
    }

    fn set_cols_bounds(
        &mut self,
        cols: &[Col],
        lower: &[f64],
        upper: &[f64],
    ) -> Result<(), BackendError> {
        assert!(
            cols.len() == lower.len() && cols.len() == upper.len(),
            "set_cols_bounds: slices of different lengths"
        );
        if cols.is_empty() {
            return Ok(());
        }
        // HiGHS wants the set in ascending order.
        let mut order: Vec<usize> = (0..cols.len()).collect();
        order.sort_by_key(|&k| cols[k].0);
        let set = order
            .iter()
            .map(|&k| int(cols[k].0, "column"))
            .collect::<Result<Vec<_>, _>>()?;
        let lo: Vec<f64> = order.iter().map(|&k| lower[k]).collect();
        let hi: Vec<f64> = order.iter().map(|&k| upper[k]).collect();
        let n = int(set.len(), "column count")?;
        // SAFETY: valid instance; the three buffers hold n entries each.
        check(
            unsafe {
                ffi::Highs_changeColsBoundsBySet(
                    self.ptr,
                    n,
                    set.as_ptr(),
                    lo.as_ptr(),
                    hi.as_ptr(),
                )
            },
            "Highs_changeColsBoundsBySet",
        )?;
        for (k, &c) in cols.iter().enumerate() {
            self.problem.col_lower[c.0] = lower[k];
            self.problem.col_upper[c.0] = upper[k];
        }
        Ok(())
    }

    fn set_row_bounds(&mut self, row: Row, lower: f64, upper: f64) -> Result<(), BackendError> {
        let r = int(row.0, "row")?;
        // SAFETY: valid instance; HiGHS checks the index.
        check(
            unsafe { ffi::Highs_changeRowBounds(self.ptr, r, lower, upper) },
            "Highs_changeRowBounds",
        )?;
        self.problem.row_lower[row.0] = lower;
        self.problem.row_upper[row.0] = upper;
        Ok(())
    }

    fn set_cost(&mut self, col: Col, cost: f64) -> Result<(), BackendError> {
        let c = int(col.0, "column")?;
        // SAFETY: valid instance; HiGHS checks the index.
        check(
            unsafe { ffi::Highs_changeColCost(self.ptr, c, cost) },
            "Highs_changeColCost",
        )?;
        self.problem.col_cost[col.0] = cost;
        Ok(())
    }

    fn set_coefficient(&mut self, row: Row, col: Col, value: f64) -> Result<(), BackendError> {
        let pos = self
            .problem
            .entry_position(row, col)
            .ok_or(BackendError::NotInPattern {
                row: row.0,
                col: col.0,
            })?;
        let (r, c) = (int(row.0, "row")?, int(col.0, "column")?);
        // SAFETY: valid instance; HiGHS checks the indices.
        check(
            unsafe { ffi::Highs_changeCoeff(self.ptr, r, c, value) },
            "Highs_changeCoeff",
        )?;
        self.problem.a_value[pos] = value;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
