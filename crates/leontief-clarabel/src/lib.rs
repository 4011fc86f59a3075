//! The Clarabel backend of leontief: conic programs, and LPs for
//! cross-checks against HiGHS.
//!
//! Clarabel solves `min 1/2 x'Px + q'x` subject to `A x + s = b`, `s in K`.
//! A [`Problem`] maps onto it row by row, in order:
//!
//! * a linear row `lo <= a x <= hi` becomes `a x + s = hi, s >= 0` and/or
//!   `-a x + s = -lo, s >= 0` (one zero-cone row `a x + s = lo` when
//!   `lo = hi`); a free row disappears;
//! * the rows of a cone block keep their meaning `s = row_upper - A x in K`;
//! * finite column bounds become non-negative rows at the end.
//!
//! Adjacent rows of one cone type are merged into one cone. Row duals are
//! mapped back to the convention of [`leontief_model::Solution`]
//! (`col_dual = c - A^T row_dual`), so [`leontief_model::residuals`] checks
//! Clarabel's LP answers exactly as it checks HiGHS's.
//!
//! Statuses map without loss: "almost solved" is
//! [`Status::ReducedAccuracy`], "almost primal / dual infeasible" are
//! [`Status::InfeasibleReducedAccuracy`] / [`Status::UnboundedReducedAccuracy`].
//!
//! Refills (`set_row_bounds`, `set_col_bounds`, `set_cost`,
//! `set_coefficient`) change the loaded problem, which is assembled again
//! (O(nnz)) at the next solve. With [`ClarabelSettings::reuse_solver`] the
//! loaded problem also keeps its Clarabel solver: if the assembled pattern
//! (matrix pattern and cone list) is the one the solver was built for, the
//! values go in place (`update_q`, `update_b`, `update_A`; presolve is then
//! off, which changes nothing for these problems: it only drops rows with
//! infinite bounds and the assembly never emits one) and the symbolic
//! set-up is kept; otherwise (a bound turned finite or infinite, an
//! equality opened) a new solver is built. [`ClarabelLp::reused`] counts
//! the in-place solves. It is off by default; the setting says why.
#![deny(missing_docs)]

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};
use leontief_model::{
    BackendError, Col, ConeKind, LoadedLp, LpBackend, NewCol, Problem, Row, Sense, Solution, Status,
};

const NAME: &str = "clarabel";

/// Typed Clarabel settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ClarabelSettings {
    /// Absolute duality-gap tolerance. Default 1e-9.
    pub tol_gap_abs: f64,
    /// Relative duality-gap tolerance. Default 1e-9.
    pub tol_gap_rel: f64,
    /// Feasibility tolerance. Default 1e-9.
    pub tol_feas: f64,
    /// Iteration limit. Default 200.
    pub max_iter: u32,
    /// Time limit in seconds (`None`: none).
    pub time_limit: Option<f64>,
    /// Print Clarabel's log. Default false.
    pub verbose: bool,
    /// Keep the solver between solves of a loaded problem and refill
    /// changed values in place (presolve off). Default false: Clarabel
    /// equilibrates the first data and keeps that scaling for every refill,
    /// which changes the iterates of later solves; the region-N search
    /// refilling only the row that fixes S measured about 5% faster at 1,000
    /// users but reported a face slice `optimal` that a fresh solve calls
    /// `reduced_accuracy`, and certified a wrong profile (a property test
    /// caught it), so nothing in leontief turns it on.
    pub reuse_solver: bool,
    /// The KKT system's LDL factorisation. Default [`Ldl::Qdldl`].
    pub ldl: Ldl,
    /// Threads of faer's supernodal factorisation (with [`Ldl::Auto`]
    /// where it takes faer); 0 lets Clarabel choose (rayon's pool), 1
    /// factorises on the calling thread. Default 0.
    pub ldl_threads: u32,
}

/// Which LDL factorisation Clarabel runs on its KKT system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ldl {
    /// QDLDL, a simplicial factorisation: fastest where the factor
    /// fills in little.
    #[default]
    Qdldl,
    /// Clarabel's own choice per problem: faer's supernodal
    /// factorisation where the factor's flops per nonzero reach 40 (a
    /// dense block, as over thousands of users on a few hundred servers),
    /// QDLDL below.
    Auto,
}

impl Ldl {
    /// Clarabel's name of the method.
    fn method(self) -> &'static str {
        match self {
            Ldl::Qdldl => "qdldl",
            Ldl::Auto => "auto",
        }
    }
}

impl Default for ClarabelSettings {
    fn default() -> Self {
        ClarabelSettings {
            tol_gap_abs: 1e-9,
            tol_gap_rel: 1e-9,
            tol_feas: 1e-9,
            max_iter: 200,
            time_limit: None,
            verbose: false,
            reuse_solver: false,
            ldl: Ldl::Qdldl,
            ldl_threads: 0,
        }
    }
}

/// A setting is out of range.
#[derive(Debug, thiserror::Error)]
#[error("ClarabelSettings.{field} {reason}")]
pub struct SettingsError {
    /// The field.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl ClarabelSettings {
    /// Check every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        for (field, v) in [
            ("tol_gap_abs", self.tol_gap_abs),
            ("tol_gap_rel", self.tol_gap_rel),
            ("tol_feas", self.tol_feas),
        ] {
            if v.is_nan() || v <= 0.0 || v >= 1.0 {
                return Err(SettingsError {
                    field,
                    reason: format!("must be in (0, 1) (got {v})"),
                });
            }
        }
        if self.max_iter == 0 {
            return Err(SettingsError {
                field: "max_iter",
                reason: "must be >= 1".into(),
            });
        }
        if let Some(t) = self.time_limit {
            if t.is_nan() || t <= 0.0 {
                return Err(SettingsError {
                    field: "time_limit",
                    reason: format!("must be > 0 seconds (got {t})"),
                });
            }
        }
        Ok(())
    }
}

/// The Clarabel backend.
#[derive(Debug, Clone, Default)]
pub struct Clarabel {
    settings: ClarabelSettings,
}

impl Clarabel {
    /// A backend with the given settings.
    pub fn new(settings: ClarabelSettings) -> Result<Self, SettingsError> {
        settings.validate()?;
        Ok(Clarabel { settings })
    }
}

/// Map Clarabel's status onto [`Status`], losslessly.
pub fn map_status(s: SolverStatus) -> Status {
    match s {
        SolverStatus::Solved => Status::Optimal,
        SolverStatus::AlmostSolved => Status::ReducedAccuracy,
        SolverStatus::PrimalInfeasible => Status::Infeasible,
        SolverStatus::DualInfeasible => Status::Unbounded,
        SolverStatus::AlmostPrimalInfeasible => Status::InfeasibleReducedAccuracy,
        SolverStatus::AlmostDualInfeasible => Status::UnboundedReducedAccuracy,
        SolverStatus::MaxIterations => Status::IterationLimit,
        SolverStatus::MaxTime => Status::TimeLimit,
        SolverStatus::NumericalError | SolverStatus::InsufficientProgress => {
            Status::NumericalFailure
        }
        SolverStatus::CallbackTerminated => Status::OtherLimit,
        SolverStatus::Unsolved => Status::Unknown,
    }
}

/// A problem held for Clarabel, with the solver of its last solve.
pub struct ClarabelLp {
    problem: Problem,
    settings: ClarabelSettings,
    cache: Option<Cache>,
    reused: usize,
}

/// The solver of the last solve and the pattern it was built for.
struct Cache {
    solver: DefaultSolver<f64>,
    colptr: Vec<usize>,
    rowval: Vec<usize>,
    cones: Vec<SupportedConeT<f64>>,
}

impl Clone for ClarabelLp {
    /// The problem and settings (the next solve builds its own solver).
    fn clone(&self) -> Self {
        ClarabelLp {
            problem: self.problem.clone(),
            settings: self.settings.clone(),
            cache: None,
            reused: 0,
        }
    }
}

impl std::fmt::Debug for ClarabelLp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClarabelLp")
            .field("problem", &self.problem)
            .field("settings", &self.settings)
            .field("cached_solver", &self.cache.is_some())
            .field("reused", &self.reused)
            .finish()
    }
}

impl ClarabelLp {
    /// How many solves refilled the previous solver's data in place
    /// instead of building a new one.
    pub fn reused(&self) -> usize {
        self.reused
    }
}

/// The kind of row `i` (from the run-length cone list).
fn row_kind(p: &Problem, i: usize) -> ConeKind {
    p.cones
        .iter()
        .find(|b| i >= b.start && i < b.start + b.len)
        .map_or(ConeKind::Linear, |b| b.kind)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Zero,
    NonNeg,
    Soc,
    Exp,
    Pow(f64),
}

/// Problem in Clarabel's form, with the map from our rows to its rows.
struct Assembled {
    a: CscMatrix<f64>,
    b: Vec<f64>,
    q: Vec<f64>,
    cones: Vec<SupportedConeT<f64>>,
    /// For each of our rows, its Clarabel rows with their signs.
    row_map: Vec<Vec<(usize, f64)>>,
}

fn assemble(p: &Problem) -> Result<Assembled, BackendError> {
    let (nr, nc) = (p.num_rows(), p.num_cols());
    let mut row_map: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nr];
    let mut b = Vec::new();
    let mut kinds: Vec<Kind> = Vec::new();
    let mut next = 0usize;
    let mut push = |kind: Kind, rhs: f64, b: &mut Vec<f64>, kinds: &mut Vec<Kind>| {
        b.push(rhs);
        kinds.push(kind);
        next += 1;
        next - 1
    };
    for i in 0..nr {
        let (lo, hi) = (p.row_lower[i], p.row_upper[i]);
        match row_kind(p, i) {
            ConeKind::Linear => {
                if lo == hi && lo.is_finite() {
                    let k = push(Kind::Zero, hi, &mut b, &mut kinds);
                    row_map[i].push((k, 1.0));
                } else {
                    if hi.is_finite() {
                        let k = push(Kind::NonNeg, hi, &mut b, &mut kinds);
                        row_map[i].push((k, 1.0));
                    }
                    if lo.is_finite() {
                        let k = push(Kind::NonNeg, -lo, &mut b, &mut kinds);
                        row_map[i].push((k, -1.0));
                    }
                }
            }
            kind => {
                let k = match kind {
                    ConeKind::SecondOrder => Kind::Soc,
                    ConeKind::Exponential => Kind::Exp,
                    ConeKind::Power { alpha } => Kind::Pow(alpha),
                    _ => {
                        return Err(BackendError::UnsupportedCone {
                            backend: NAME,
                            kind: format!("{kind:?}"),
                        })
                    }
                };
                let r = push(k, hi, &mut b, &mut kinds);
                row_map[i].push((r, 1.0));
            }
        }
    }
    // Column bounds as non-negative rows.
    let mut bound_rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nc];
    for j in 0..nc {
        if p.col_upper[j].is_finite() {
            let k = push(Kind::NonNeg, p.col_upper[j], &mut b, &mut kinds);
            bound_rows[j].push((k, 1.0));
        }
        if p.col_lower[j].is_finite() {
            let k = push(Kind::NonNeg, -p.col_lower[j], &mut b, &mut kinds);
            bound_rows[j].push((k, -1.0));
        }
    }
    // The matrix, column by column (rows stay sorted: our rows map
    // monotonically, bound rows come last).
    let mut colptr = Vec::with_capacity(nc + 1);
    let mut rowval = Vec::new();
    let mut nzval = Vec::new();
    colptr.push(0);
    for j in 0..nc {
        for k in p.a_start[j]..p.a_start[j + 1] {
            for &(r, sign) in &row_map[p.a_index[k]] {
                rowval.push(r);
                nzval.push(sign * p.a_value[k]);
            }
        }
        for &(r, sign) in &bound_rows[j] {
            rowval.push(r);
            nzval.push(sign);
        }
        colptr.push(rowval.len());
    }
    // Run-length cones; SOC, exp and pow blocks keep their own sizes.
    let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
    let mut r = 0;
    while r < kinds.len() {
        let kind = kinds[r];
        let run = match kind {
            Kind::Exp | Kind::Pow(_) => 3,
            Kind::Soc => {
                // The whole SOC block of our problem.
                let ours = row_map
                    .iter()
                    .position(|m| m.first().is_some_and(|x| x.0 == r))
                    .expect("soc row");
                let block = p
                    .cones
                    .iter()
                    .find(|b| ours >= b.start && ours < b.start + b.len)
                    .expect("block");
                block.len
            }
            _ => kinds[r..].iter().take_while(|&&k| k == kind).count(),
        };
        cones.push(match kind {
            Kind::Zero => SupportedConeT::ZeroConeT(run),
            Kind::NonNeg => SupportedConeT::NonnegativeConeT(run),
            Kind::Soc => SupportedConeT::SecondOrderConeT(run),
            Kind::Exp => SupportedConeT::ExponentialConeT(),
            Kind::Pow(a) => SupportedConeT::PowerConeT(a),
        });
        r += run;
    }
    let flip = if p.sense == Sense::Maximise {
        -1.0
    } else {
        1.0
    };
    Ok(Assembled {
        a: CscMatrix::new(b.len(), nc, colptr, rowval, nzval),
        b,
        q: p.col_cost.iter().map(|c| flip * c).collect(),
        cones,
        row_map,
    })
}

impl LpBackend for Clarabel {
    type Loaded = ClarabelLp;

    fn name(&self) -> &'static str {
        NAME
    }

    fn load(&self, problem: Problem) -> Result<ClarabelLp, BackendError> {
        Ok(ClarabelLp {
            problem,
            settings: self.settings.clone(),
            cache: None,
            reused: 0,
        })
    }
}

impl LoadedLp for ClarabelLp {
    fn solve(&mut self) -> Result<Solution, BackendError> {
        let p = &self.problem;
        let asm = assemble(p)?;
        let nc = p.num_cols();
        let same = self.settings.reuse_solver
            && self.cache.as_ref().is_some_and(|c| {
                c.colptr == asm.a.colptr && c.rowval == asm.a.rowval && c.cones == asm.cones
            });
        if same {
            let c = self.cache.as_mut().expect("checked");
            let native = |e: clarabel::solver::DataUpdateError| BackendError::Native {
                backend: NAME,
                call: "DefaultSolver::update_*",
                detail: format!("{e:?}"),
            };
            c.solver.update_q(&asm.q).map_err(native)?;
            c.solver.update_b(&asm.b).map_err(native)?;
            c.solver.update_A(&asm.a.nzval).map_err(native)?;
            self.reused += 1;
        } else {
            let settings = DefaultSettings {
                tol_gap_abs: self.settings.tol_gap_abs,
                tol_gap_rel: self.settings.tol_gap_rel,
                tol_feas: self.settings.tol_feas,
                max_iter: self.settings.max_iter,
                time_limit: self.settings.time_limit.unwrap_or(f64::INFINITY),
                verbose: self.settings.verbose,
                presolve_enable: !self.settings.reuse_solver,
                direct_solve_method: self.settings.ldl.method().into(),
                max_threads: self.settings.ldl_threads,
                ..DefaultSettings::default()
            };
            let pmat = CscMatrix::zeros((nc, nc));
            let solver = DefaultSolver::new(&pmat, &asm.q, &asm.a, &asm.b, &asm.cones, settings)
                .map_err(|e| BackendError::Native {
                    backend: NAME,
                    call: "DefaultSolver::new",
                    detail: format!("{e:?}"),
                })?;
            self.cache = Some(Cache {
                solver,
                colptr: asm.a.colptr.clone(),
                rowval: asm.a.rowval.clone(),
                cones: asm.cones.clone(),
            });
        }
        let p = &self.problem;
        let solver = &mut self.cache.as_mut().expect("built above").solver;
        solver.solve();
        let sol = &solver.solution;
        let status = map_status(sol.status);
        let flip = if p.sense == Sense::Maximise {
            -1.0
        } else {
            1.0
        };
        let (x, row_dual, objective) = if status.has_solution() {
            let y: Vec<f64> = asm
                .row_map
                .iter()
                .map(|m| -flip * m.iter().map(|&(r, sign)| sign * sol.z[r]).sum::<f64>())
                .collect();
            (sol.x.clone(), y, flip * sol.obj_val + p.offset)
        } else {
            (Vec::new(), Vec::new(), f64::NAN)
        };
        let col_dual = if x.is_empty() {
            Vec::new()
        } else {
            let aty = p.transpose_times(&row_dual);
            p.col_cost.iter().zip(aty).map(|(c, a)| c - a).collect()
        };
        let out = Solution {
            status,
            raw_status: format!("{:?}", sol.status),
            objective,
            x,
            row_dual,
            col_dual,
            seconds: sol.solve_time,
            iterations: sol.iterations as u64,
        };
        if !self.settings.reuse_solver {
            self.cache = None;
        }
        Ok(out)
    }

    fn problem(&self) -> &Problem {
        &self.problem
    }

    fn set_col_bounds(&mut self, col: Col, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.problem.col_lower[col.0] = lower;
        self.problem.col_upper[col.0] = upper;
        Ok(())
    }

    fn set_row_bounds(&mut self, row: Row, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.problem.row_lower[row.0] = lower;
        self.problem.row_upper[row.0] = upper;
        Ok(())
    }

    fn set_cost(&mut self, col: Col, cost: f64) -> Result<(), BackendError> {
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
        self.problem.a_value[pos] = value;
        Ok(())
    }
    /// Columns are appended to the problem; the next solve starts over
    /// (no warm start, so [`LpBackend::can_add_cols`] stays false for
    /// this backend: callers that grow an LP by many small passes want
    /// HiGHS; `leontief-drfh` grows Clarabel's LPs where a direct
    /// factorisation pays).
    fn add_cols(&mut self, cols: &[NewCol]) -> Result<Vec<Col>, BackendError> {
        self.cache = None;
        Ok(cols.iter().map(|c| self.problem.push_col(c)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leontief_model::{residuals, ProblemBuilder};

    const INF: f64 = f64::INFINITY;

    fn small(sense: Sense) -> Problem {
        let mut b = ProblemBuilder::new(sense);
        let r1 = b.add_row(-INF, 4.0);
        let r2 = b.add_row(-INF, 6.0);
        b.add_col(1.0, 0.0, INF, [(r1, 1.0), (r2, 3.0)]);
        b.add_col(1.0, 0.0, INF, [(r1, 2.0), (r2, 1.0)]);
        b.build()
    }

    #[test]
    fn lp_matches_the_model_convention() {
        let p = small(Sense::Maximise);
        let s = Clarabel::default().solve(p.clone()).unwrap();
        assert_eq!(s.status, Status::Optimal, "{}", s.raw_status);
        assert!((s.objective - 2.8).abs() < 1e-7, "{s:?}");
        let r = residuals(&p, &s.x, &s.row_dual);
        assert!(r.within(1e-7), "{r:?}");
        // Ranged and equality rows, minimisation.
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r1 = b.add_row(1.0, 3.0);
        let r2 = b.add_row(2.0, 2.0);
        b.add_col(1.0, 0.0, INF, [(r1, 1.0), (r2, 1.0)]);
        b.add_col(2.0, 0.0, 5.0, [(r1, 1.0), (r2, -1.0)]);
        let p = b.build();
        let s = Clarabel::default().solve(p.clone()).unwrap();
        let h = leontief_highs::Highs::default().solve(p.clone()).unwrap();
        assert!(
            (s.objective - h.objective).abs() < 1e-7,
            "{} vs {}",
            s.objective,
            h.objective
        );
        assert!(residuals(&p, &s.x, &s.row_dual).within(1e-7));
    }

    /// An LP whose KKT factor is dense (100 rows over every one of 120
    /// columns: flops per nonzero far past 40, so `Ldl::Auto` takes
    /// faer's supernodal LDL, on rayon's pool or on one thread): the same
    /// optimum as QDLDL and HiGHS, and its own residuals hold.
    #[test]
    fn either_ldl_solves_an_lp_with_a_dense_factor() {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let rows: Vec<_> = (0..100)
            .map(|i| b.add_row(f64::NEG_INFINITY, 50.0 + (i % 7) as f64))
            .collect();
        for j in 0..120usize {
            let entries = rows
                .iter()
                .enumerate()
                .map(|(i, &r)| (r, 0.1 + ((i * 7 + j * 13) % 11) as f64));
            b.add_col(1.0 + (j % 5) as f64, 0.0, INF, entries);
        }
        let p = b.build();
        let h = leontief_highs::Highs::default().solve(p.clone()).unwrap();
        for (ldl, ldl_threads) in [(Ldl::Qdldl, 0), (Ldl::Auto, 0), (Ldl::Auto, 1)] {
            let s = Clarabel::new(ClarabelSettings {
                ldl,
                ldl_threads,
                ..ClarabelSettings::default()
            })
            .unwrap()
            .solve(p.clone())
            .unwrap();
            let on = format!("{ldl:?} on {ldl_threads} threads");
            assert_eq!(s.status, Status::Optimal, "{on}");
            assert!(
                (s.objective - h.objective).abs() < 1e-7 * h.objective.abs(),
                "{on}: {} vs {}",
                s.objective,
                h.objective
            );
            assert!(residuals(&p, &s.x, &s.row_dual).within(1e-7), "{on}");
        }
    }

    #[test]
    fn refilled_values_reuse_the_solver_and_give_the_fresh_answers() {
        // max log-ish: a cone program (the point of keeping the solver):
        // max t s.t. (a, 1, t) in K_pow(0.5), i.e. t <= sqrt(a), with a
        // refilled from 4 to 9 and a cost refilled from 1 to 2.
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r0 = b.add_row(f64::NEG_INFINITY, 4.0);
        b.add_row(f64::NEG_INFINITY, 1.0);
        let r2 = b.add_row(f64::NEG_INFINITY, 0.0);
        b.add_cone(r0, 3, ConeKind::Power { alpha: 0.5 });
        let t = b.add_col(1.0, -INF, INF, [(r2, -1.0)]);
        let reuse = Clarabel::new(ClarabelSettings {
            reuse_solver: true,
            ..ClarabelSettings::default()
        })
        .unwrap();
        let mut lp = reuse.load(b.build()).unwrap();
        let s = lp.solve().unwrap();
        assert!((s.x[0] - 2.0).abs() < 1e-7, "{:?}", s.x);
        lp.set_row_bounds(r0, f64::NEG_INFINITY, 9.0).unwrap();
        lp.set_cost(t, 2.0).unwrap();
        let s = lp.solve().unwrap();
        assert_eq!(lp.reused(), 1, "same pattern: updated in place");
        assert_eq!(s.status, Status::Optimal);
        assert!((s.x[0] - 3.0).abs() < 1e-7, "{:?}", s.x);
        assert!((s.objective - 6.0).abs() < 1e-6, "{}", s.objective);
        let fresh = Clarabel::default().solve(lp.problem().clone()).unwrap();
        assert!((fresh.x[0] - s.x[0]).abs() < 1e-9);
        // A linear row turned into an equality changes the cone list: a new
        // solver, the same answers as a fresh one.
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r = b.add_row(-INF, 4.0);
        let x = b.add_col(1.0, 0.0, INF, [(r, 1.0)]);
        let mut lp = reuse.load(b.build()).unwrap();
        lp.solve().unwrap();
        lp.set_row_bounds(r, 3.0, 3.0).unwrap();
        lp.set_col_bounds(x, 0.0, 10.0).unwrap();
        let s = lp.solve().unwrap();
        assert_eq!(lp.reused(), 0, "the pattern changed: rebuilt");
        assert!((s.x[0] - 3.0).abs() < 1e-7, "{:?}", s.x);
        // Off by default: every solve builds its own solver.
        let mut lp = Clarabel::default().load(lp.problem().clone()).unwrap();
        lp.solve().unwrap();
        lp.set_row_bounds(r, 2.0, 2.0).unwrap();
        let s = lp.solve().unwrap();
        assert_eq!(lp.reused(), 0);
        assert!((s.x[0] - 2.0).abs() < 1e-7, "{:?}", s.x);
    }

    #[test]
    fn exponential_and_power_cones() {
        // max u s.t. (u, 1, 5) in K_exp, i.e. u <= log 5.
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r0 = b.add_row(f64::NEG_INFINITY, 0.0); // s0 = -(-u) = u
        b.add_row(f64::NEG_INFINITY, 1.0); // s1 = 1
        b.add_row(f64::NEG_INFINITY, 5.0); // s2 = 5
        b.add_cone(r0, 3, ConeKind::Exponential);
        b.add_col(1.0, -INF, INF, [(r0, -1.0)]);
        let s = Clarabel::default().solve(b.build()).unwrap();
        assert_eq!(s.status, Status::Optimal);
        assert!((s.x[0] - 5f64.ln()).abs() < 1e-7, "{:?}", s.x);
        // max t s.t. (4, 1, t) in K_pow(0.5): t <= sqrt(4) = 2.
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r0 = b.add_row(f64::NEG_INFINITY, 4.0);
        b.add_row(f64::NEG_INFINITY, 1.0);
        let r2 = b.add_row(f64::NEG_INFINITY, 0.0);
        b.add_cone(r0, 3, ConeKind::Power { alpha: 0.5 });
        b.add_col(1.0, -INF, INF, [(r2, -1.0)]);
        let s = Clarabel::default().solve(b.build()).unwrap();
        assert!((s.x[0] - 2.0).abs() < 1e-7, "{:?}", s.x);
    }

    #[test]
    fn infeasible_is_reported_as_a_status() {
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r = b.add_row(1.0, INF);
        b.add_col(1.0, 0.0, 0.0, [(r, 1.0)]);
        let s = Clarabel::default().solve(b.build()).unwrap();
        assert!(
            matches!(
                s.status,
                Status::Infeasible | Status::InfeasibleReducedAccuracy
            ),
            "{}",
            s.raw_status
        );
    }

    #[test]
    fn settings_are_validated_by_name() {
        let e = Clarabel::new(ClarabelSettings {
            tol_feas: 0.0,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e.field, "tol_feas");
    }
}
