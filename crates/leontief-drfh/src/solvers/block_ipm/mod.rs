//! An interior point method for the max-min operator's LPs that uses their
//! structure: every pair's column touches the capacity rows of one entry
//! and one user's link row.
//!
//! Primal-dual, Mehrotra predictor-corrector, on the LP with a slack per
//! inequality row and every bound kept (a fixed column is a constant, a
//! free row is dropped). Each step solves the normal equations
//! `A D A^T dy = r`. Their rows split into *blocks* (one entry's capacity
//! rows, m of them) and *dense* rows (links, levels): no column touches two
//! blocks, so the block part is block diagonal. Each block's m x m matrix
//! is factored on its own and eliminated onto the dense rows it touches
//! (the users on its entry). The dense rows no block touches (the levels,
//! whose variables are their slacks, the users' level columns and theta)
//! are eliminated in closed form (`leaves`), which leaves one dense Schur
//! complement over the links (N for N users), factored by Cholesky (from
//! `normal::FAER_ROWS` rows by faer's blocked one on every core). At 100
//! users on 1,000 entries with 4 resources that is a few million flops a
//! step, where Clarabel's general sparse LDL of the same LP (with
//! iterative refinement) took 5-7 ms a step.
//!
//! The flops are not the cost of a step: cache misses, the scatter of
//! every block's W^T W into the Schur complement, and page faults of
//! buffers allocated afresh each step are. So the block variables'
//! entries sit in flat arrays in block order (`normal::BlockVars`), each
//! block's dense rows are in increasing order so that its W^T W lands in
//! the Schur complement's lower triangle along rows, that triangle is
//! formed by bands of rows that stay in a core's cache (each band on its
//! own thread, every entry summed in block order), and the factors and
//! step vectors live from step to step.
//!
//! Column generation solves one LP again and again, grown by the columns
//! priced in: a solve keeps the first iterate within `WARM_AT` of the
//! optimum, and the next solve of the grown LP starts there when the LP
//! has `WARM_FROM` columns, each new column just inside its bounds
//! (`ipm::Warm`). Once a warm solve takes more steps than the cold solve
//! that began the growth, the growth's later solves start cold: on the
//! one LP of weights and caps on half the users, 6 resources, 300 x
//! 3,000, seed 3, the warm solves took 95, 107 and 124 steps against 80
//! cold.
//!
//! Its answers are trusted no more than Clarabel's: they are interior, not
//! vertices ([`LpBackend::vertex_duals`] is false), and every verdict drawn
//! from them is proved by the prices it prints. A solve that does not reach
//! `TOLERANCE` (or, once its primal infeasibility has stalled with the
//! dual and gap converged, `PRIMAL_STALLED`) is handed to Clarabel
//! ([`crate::solvers::direct`]) as it stands.

use leontief_clarabel::ClarabelLp;
use leontief_model::{
    BackendError, Col, LoadedLp, LpBackend, NewCol, Problem, Row, Solution, Status,
};
use std::time::Instant;

mod chunks;
mod ipm;
mod leaves;
mod normal;

use ipm::solve;

/// A row outside every block (a dense row).
pub(crate) const DENSE: u32 = u32::MAX;

/// Relative primal and dual infeasibility and duality gap at which a
/// solve ends optimal: Clarabel's own. A round's prices must prove its
/// users blocked to 1e-7 of their level, and at 1e-11 they did not:
/// with placement by attribute, 6 resources, 1,000 x 5,000, seed 1, the
/// one LP at the pooled bound proved 986 of 1,000 users, the rounds'
/// round 1 none, and its growth LP took 139 steps (23.6 s in all); at
/// 1e-12 the one LP proves every user (5.6 s). The primal infeasibility
/// is relative to one plus the right-hand side's largest entry, or where
/// a row's terms are larger, to theirs (`ipm::rows_within`): the rows
/// summing a user's tasks over thousands of servers to its level column
/// held their residual near 1e-12 of the right-hand side for up to six
/// steps after the gap had closed (weights and caps on half the users,
/// 6 resources, 1,000 x 10,000, seed 1: 79 steps, 73 with the rows'
/// own scale).
const TOLERANCE: f64 = 1e-12;

/// Relative primal infeasibility (as [`TOLERANCE`]'s, row by row as
/// `ipm::rows_within`) within which a solve ends optimal when its dual
/// infeasibility and gap have stayed within [`TOLERANCE`] for more than
/// [`STALL_STEPS`] steps. Past that point the complementarity products
/// fall to 1e-25 and below, the normal equations' scaling spans 1e-25 to
/// 1e20, and the directions no longer carry the primal residual: on
/// k-DF's groups' LPs with placement by attribute, 6 resources, 10,000 x
/// 10,000, seed 3 (about 1,100 rows and 8,000 columns, 2,200 and 19,000),
/// the residual stayed at 3e-11 to 1.6e-10 of a saturated entry's
/// capacity row from step 25 to step 200, nearly every step going 0.99
/// of the way, and those LPs went on to Clarabel (`AlmostSolved`) and
/// HiGHS. 1e-9 is far inside the 1e-7 to which every answer's
/// feasibility is verified; the prices, which prove the rounds, are
/// converged to [`TOLERANCE`].
const PRIMAL_STALLED: f64 = 1e-9;

/// See [`PRIMAL_STALLED`].
const STALL_STEPS: usize = 5;

/// Steps before a solve gives up (and Clarabel solves the LP). The
/// groups' LPs with weights and caps on half the users and 6 resources
/// (about 170 users on 714 entries, theta's optimum just below 1) took
/// 109-151 steps of about 7 ms; at 80 Clarabel solved them again from
/// its start in 2-4 s.
const MAX_ITERATIONS: usize = 200;

/// Relative gap below which the corrector's normal equations get a step
/// of iterative refinement (earlier steps are far from the boundary and
/// lose no digits that matter). From 1e-6, the one LP of weights and caps
/// on half the users, 6 resources, 300 x 3,000, seed 2 (161,000
/// variables) lost its primal feasibility while the gap closed (1e-7 at
/// a gap of 5e-3, 3e-5 at 1e-12) and stalled there for the 200 steps,
/// and Clarabel solved it again: 35 s end to end. Refined from 1e-3, 1e-2
/// or from the start, it ends in 134-138 steps over both of its LPs (3.1-
/// 3.5 s). With placement by attribute (6 resources, 300 x 3,000, seeds
/// 1-3) the steps stay within 4% either way (260 / 288 / 392 from 1e-6,
/// 268 / 279 / 378 from 1e-2); the refinement costs a back solve and two
/// products with A a step.
const REFINE_BELOW: f64 = 1e-2;

/// Rounds of iterative refinement at most a refined direction gets: each
/// round solves the normal equations again for what the last left of
/// their right-hand side, until that is within [`REFINED`] of it. One
/// round from a gap of 1e-2 still left k-DF's one LP on the seed-2
/// instance of [`REFINE_BELOW`] at its 200-step limit (36 s end to end),
/// and which threshold converged changed from mechanism to mechanism;
/// with up to 3 rounds DRFH, k-DF and TSF there end in 116-161 steps
/// over both LPs (3.5-4.5 s end to end, against 32-34 s). The rounds
/// cost time a step: placement by attribute, 6 resources, 300 x 3,000,
/// seeds 1 / 2 / 3 went 4.67 / 4.98 / 6.93 s -> 5.78 / 5.73 / 6.55 s
/// (benches/REPORT.md).
const REFINE_ROUNDS: usize = 3;

/// See [`REFINE_ROUNDS`].
const REFINED: f64 = 1e-13;

/// Relative gap and infeasibilities of the iterate a solve keeps to start
/// the next solve of its LP grown by columns (`ipm::Warm`). Measured on
/// the one LP of placement by attribute with 6 resources (2,000 x 5,000,
/// seed 2; one column priced in after a cold solve of 36 steps): from
/// 1e-1 the next solve took 18 steps, from 1e-2 7 steps; from 1e-3 9
/// steps, but its prices did not prove the one round (they sat off the
/// centre of the optimal face) and a cold solve ran again.
const WARM_AT: f64 = 1e-2;

/// Columns from which a grown LP starts from the last solve's kept
/// iterate; below, from the method's own start. The groups' LPs (about
/// 10^4 columns each, a few columns priced in per pass) finished sooner
/// cold: k-DF (k = 2) at 1,000 x 10,000 with 3 resources, bimodal
/// demands, weights and caps, 21.8 -> 15.1 s end to end (DRFH 18.8 ->
/// 10.8 s), with 4 resources and GPUs on a fifth of the servers 7.4 ->
/// 6.4 s; 2 resources and the heterogeneous generator's 6 within noise
/// (release, AMD EPYC, `--verify never`). The one LP of placement by
/// attribute with 6 resources (433,000 columns at 2,000 x 5,000) starts
/// warm: k-DF's two solves 40 + 8 steps, 40 + 40 cold (16.8 against 26.2
/// s). Between lies what this costs: the pooled LPs of placement by
/// attribute at 300 x 3,000 with 4 resources, seed 2 (18,000-82,000
/// columns) took 9-13 steps warm against 17-25 cold; end to end that
/// cell took 2.31-2.67 s warm, 2.62-3.50 s cold. A rule by the steps
/// instead (warm while a warm solve takes fewer steps than the cold one)
/// was slower on the groups' LPs (docs/design/maxmin-operator.md).
const WARM_FROM: usize = 100_000;

/// Parts the blocks are split into for the parallel factorisation.
const PARTS: usize = 4;

/// Fraction of the way to the boundary a step goes.
const TO_BOUNDARY: f64 = 0.995;

/// Regularisation added to every diagonal of the normal equations,
/// relative to its largest diagonal entry.
const REGULARISATION: f64 = 1e-14;

/// Whether this method beats Clarabel on the pooled LP of `users` runnable
/// users and `m` resources: its dense Schur complement has a row per
/// user (a dense Cholesky, N^3 / 3 a step; the limits below were measured
/// with the levels in it, 2 N rows), Clarabel's sparse LDL
/// gains where few users share an entry (few resources). Measured:
/// up to [`FOUR_ENTRIES_USERS`] users when there are at least 4 entries
/// per user (`docs/design/maxmin-operator.md`), and up to 400 with more
/// than 4 resources and 2 entries per user: with 6, two groups merged
/// (313 users on 1,428 entries, 74,000 columns) took 1.7 s a solve
/// against Clarabel's 4.5 s, and a group of 204 users on 715 entries
/// 1.6 s against 4.0 s. With more than 4 resources and an entry per
/// user it takes LPs of any size the pooled path gives Clarabel: with
/// placement by attribute (`generate shaped --shape
/// placement=attribute:4`, on a machine about 2.6 times slower than
/// benches/REPORT.md's), the one LP of 1,000 users on 10,000 entries
/// (538,000 columns) took 14.5 s a solve against Clarabel's 66-77 s, and
/// 2,000 users on 5,000 entries 33-36 s against 41-49 s (with the
/// Schur complement's Cholesky on one core; `normal::cholesky`). At
/// 2,000 x 5,000 (seed 2) the list groups' LPs with more than 200 users
/// and 1-2 entries each, 8,772 rows and 80,000 columns, took 0.9-1.3 s a
/// solve against Clarabel's 7.2-8.7 s, and those of about 2,200 rows and
/// 17,000 columns 0.2-0.3 s against 0.7-1.1 s. With 4 resources or more
/// it also takes up to [`MANY_RESOURCES_USERS`] users on a quarter as
/// many entries or more: the groups of 10,000 x 10,000 (about 200 users
/// on 100 entries, 400 on 200 and 800 on 400 where groups merged). With
/// 6 resources, weights and caps on half the users, the 70 / 20 / 2 LPs
/// of each size that realised their share took 10.0 / 5.9 / 2.5 s in all
/// against Clarabel's 42.5 / 26.1 / 11.6 s; with 4 resources the groups'
/// LPs took 0.4 s in all against 5.6 s with those past 200 users on
/// Clarabel (weights and caps), 2.0 against 10.6 s (a GPU on a fifth of
/// the servers) and 14.0 against 17.6 s (bimodal demands). Measured up
/// to 2.2 users per entry; a quarter is the margin, since the dense Schur
/// complement's cost does not fall with the entries and Clarabel's does.
pub(crate) fn pays(users: usize, entries: usize, m: usize) -> bool {
    users <= 100
        || (m >= 4 && users <= 200)
        || (users <= FOUR_ENTRIES_USERS && entries >= 4 * users)
        || (m > 4 && entries >= users)
        || (m >= 4 && users <= MANY_RESOURCES_USERS && 4 * entries >= users)
        || (m > 4 && users <= SIX_RESOURCES_USERS && 4 * entries >= users)
}

/// Users up to which [`pays`] takes an LP with at least 4 entries per
/// user whatever its resources. Measured first up to 250 (the sizes in
/// its docs); past that, the one LP of k-DF with 3 resources, weights
/// and caps on half the users, 300 x 3,000, seed 2 (300 users on 3,000
/// entries, 9,600 rows, 37,000-47,000 columns) took Clarabel 0.9, 1.1,
/// 5.4 (198 steps, `AlmostSolved`) and 2.9 s over its four solves: 11.3
/// s end to end, 2.1-2.4 s on this method. Over the 10^7 grid with 2 and
/// 3 resources (1,000 x 10,000 and 2,000 x 5,000, every shape, seeds
/// 1-3, DRFH, k-DF and TSF, 288 runs) 400 against 250 changed 7 runs,
/// all faster (k-DF, placement by attribute, 2 resources, seed 3: 6.60
/// -> 2.29 s; weights and caps, 3 resources, seed 3: 4.78 -> 3.85 s),
/// and the 144 runs at 300 x 3,000 only that one; 600 and 1,000 were
/// within noise of 400 on the runs it changed.
const FOUR_ENTRIES_USERS: usize = 400;

/// Users up to which [`pays`] takes an LP with more than 4 resources on a
/// quarter as many entries as users: k-DF's two LPs of 927 users on 400
/// entries at 10,000 x 10,000 with 6 resources (seed 3). On them the
/// whole k-DF run went from 44.2 / 50.5 s to 41.2 / 44.7 s (placement by
/// attribute) and from 46.6 / 43.5 s to 36.4 / 34.6 s (weights and caps).
const SIX_RESOURCES_USERS: usize = 1_200;

/// Users up to which [`pays`] takes an LP with 4 resources or more on at
/// least a quarter as many entries as users (the largest measured: 786
/// users on 400 entries, 1.25 s a solve against Clarabel's 5.8 s). With
/// 4 resources it also reaches merged groups with more entries than
/// users (at 2,000 x 5,000 about 300 users on 376 entries).
const MANY_RESOURCES_USERS: usize = 800;

/// The block IPM as a backend: `blocks[r]` is row r's block (or
/// [`DENSE`]); `None`: every solve is Clarabel's.
pub(crate) struct BlockIpm {
    blocks: Option<Vec<u32>>,
    time_limit: Option<f64>,
    warm_from: usize,
    alone: bool,
}

impl BlockIpm {
    /// A backend for LPs whose rows split as `blocks` says, each solve
    /// within `time_limit` seconds.
    pub(crate) fn new(blocks: Option<Vec<u32>>, time_limit: Option<f64>) -> BlockIpm {
        BlockIpm {
            blocks,
            time_limit,
            warm_from: WARM_FROM,
            alone: false,
        }
    }

    /// The same, without Clarabel after a solve that does not converge:
    /// that solve ends with the method's own status and no solution, for
    /// a caller with a better next step than Clarabel on the LP as it
    /// stands (`maxmin::try_seeded_rounds`).
    pub(crate) fn alone(self) -> BlockIpm {
        BlockIpm {
            alone: true,
            ..self
        }
    }

    /// The same, a grown LP starting warm from `columns` columns (rather
    /// than [`WARM_FROM`]).
    #[cfg(test)]
    fn warm_from(self, columns: usize) -> BlockIpm {
        BlockIpm {
            warm_from: columns,
            ..self
        }
    }
}

impl LpBackend for BlockIpm {
    type Loaded = BlockLp;

    fn name(&self) -> &'static str {
        "block-ipm"
    }

    fn load(&self, problem: Problem) -> Result<BlockLp, BackendError> {
        Ok(BlockLp {
            clarabel: crate::solvers::direct::Direct::new(self.time_limit)?.load(problem)?,
            blocks: self.blocks.clone(),
            time_limit: self.time_limit,
            warm_from: self.warm_from,
            alone: self.alone,
            warm: None,
            warmed: false,
            cold_steps: None,
            warm_lost: false,
        })
    }

    fn can_add_cols(&self) -> bool {
        true
    }

    fn time_limit(&self) -> Option<f64> {
        self.time_limit
    }
}

/// A loaded LP: each solve takes the problem as it stands, which Clarabel
/// holds (and solves where this method does not); it starts from the
/// last solve's kept iterate while the LP has only grown by columns
/// since, else from the method's own start.
pub(crate) struct BlockLp {
    clarabel: ClarabelLp,
    blocks: Option<Vec<u32>>,
    time_limit: Option<f64>,
    /// Columns from which a grown LP starts from the last solve's iterate.
    warm_from: usize,
    /// See [`BlockIpm::alone`].
    alone: bool,
    /// Where the last solve passed on its way, while the LP has only
    /// grown by columns since.
    warm: Option<ipm::Warm>,
    /// Whether the last solve started from the one before it.
    warmed: bool,
    /// Steps of the last solve from the method's own start.
    cold_steps: Option<u64>,
    /// A warm solve took more steps than that cold one: until the LP
    /// changes otherwise than by columns, each solve starts cold.
    warm_lost: bool,
}

impl BlockLp {
    /// Whether the last solve started from an iterate of the one before
    /// it (the LP grown by columns since), not from the method's own start.
    pub(crate) fn started_warm(&self) -> bool {
        self.warmed
    }

    /// The next solve starts from the method's own start.
    pub(crate) fn go_cold(&mut self) {
        self.warm = None;
    }

    /// The LP changed otherwise than by columns: no iterate to start
    /// from, and the next growth tries warm starts afresh.
    fn forget_warm(&mut self) {
        self.warm = None;
        self.cold_steps = None;
        self.warm_lost = false;
    }
}

impl LoadedLp for BlockLp {
    fn solve(&mut self) -> Result<Solution, BackendError> {
        let t0 = Instant::now();
        let columns = self.clarabel.problem().num_cols();
        let warm = self
            .warm
            .take()
            .filter(|_| columns >= self.warm_from && !self.warm_lost);
        self.warmed = false;
        // Blocks laid out for another LP (a live part of the rounds, with
        // fewer rows): Clarabel's.
        let rows = self.clarabel.problem().num_rows();
        let tried = self.blocks.as_ref().filter(|b| b.len() == rows).map(|b| {
            let p = self.clarabel.problem();
            match warm.as_ref().map(|w| solve(p, b, self.time_limit, Some(w))) {
                Some(Ok(found)) => {
                    self.warmed = true;
                    Ok(found)
                }
                // A warm start that does not converge: from the method's
                // own start.
                Some(Err((Status::TimeLimit, steps))) => Err((Status::TimeLimit, steps)),
                _ => solve(p, b, self.time_limit, None),
            }
        });
        let why = match tried {
            Some(Ok((sol, keep))) => {
                if !self.warmed {
                    self.cold_steps = Some(sol.iterations);
                } else if self.cold_steps.is_some_and(|c| sol.iterations > c) {
                    self.warm_lost = true;
                }
                self.warm = keep;
                return Ok(sol);
            }
            // Out of time: no solution (Clarabel would take as long again);
            // not converged and alone, likewise.
            Some(Err((status, steps))) if status == Status::TimeLimit || self.alone => {
                return Ok(Solution {
                    status,
                    raw_status: format!(
                        "the block interior point method ended {} in {steps} steps",
                        status.as_str()
                    ),
                    objective: f64::NAN,
                    x: Vec::new(),
                    row_dual: Vec::new(),
                    col_dual: Vec::new(),
                    seconds: t0.elapsed().as_secs_f64(),
                    iterations: steps as u64,
                })
            }
            Some(Err((status, steps))) => Some(format!(
                " (Clarabel, after the block interior point method ended {} in {steps} steps)",
                status.as_str()
            )),
            None => None,
        };
        // Not converged (or a column across two blocks): Clarabel solves
        // the LP as it stands.
        let mut sol = self.clarabel.solve()?;
        if let Some(why) = why {
            sol.raw_status.push_str(&why);
            sol.seconds = t0.elapsed().as_secs_f64();
        }
        Ok(sol)
    }

    fn problem(&self) -> &Problem {
        self.clarabel.problem()
    }

    fn set_col_bounds(&mut self, col: Col, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.forget_warm();
        self.clarabel.set_col_bounds(col, lower, upper)
    }

    fn set_row_bounds(&mut self, row: Row, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.forget_warm();
        self.clarabel.set_row_bounds(row, lower, upper)
    }

    fn set_cost(&mut self, col: Col, cost: f64) -> Result<(), BackendError> {
        self.forget_warm();
        self.clarabel.set_cost(col, cost)
    }

    fn set_coefficient(&mut self, row: Row, col: Col, value: f64) -> Result<(), BackendError> {
        self.forget_warm();
        self.clarabel.set_coefficient(row, col, value)
    }

    fn add_cols(&mut self, cols: &[NewCol]) -> Result<Vec<Col>, BackendError> {
        self.clarabel.add_cols(cols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` within every row and bound of `p` (to 1e-9).
    fn assert_inside(p: &Problem, x: &[f64], what: &str) {
        let mut ax = vec![0.0; p.num_rows()];
        for j in 0..p.num_cols() {
            for e in p.a_start[j]..p.a_start[j + 1] {
                ax[p.a_index[e]] += p.a_value[e] * x[j];
            }
        }
        for r in 0..p.num_rows() {
            assert!(
                ax[r] <= p.row_upper[r] + 1e-9 && ax[r] >= p.row_lower[r] - 1e-9,
                "{what}: row {r}"
            );
        }
        for (j, &v) in x.iter().enumerate() {
            assert!(
                v >= p.col_lower[j] - 1e-9 && v <= p.col_upper[j] + 1e-9,
                "{what}: col {j}"
            );
        }
    }

    /// The optimum and its duals on a small LP with every row dense, grown
    /// by a column, and a bound change taking effect: each solve by this
    /// method, not Clarabel's.
    #[test]
    fn solves_a_small_lp_and_its_duals() {
        let ipm = BlockIpm::new(Some(vec![DENSE, DENSE]), None);
        let sols = crate::solvers::direct::tests::added_columns_and_bounds_reach(&ipm);
        for s in sols {
            assert!(s.raw_status.contains("block interior point"), "{s:?}");
        }
    }

    /// An LP the method cannot solve (infeasible: x0 + x1 <= -1 over
    /// x >= 0): by default Clarabel answers it as it stands; alone, the
    /// solve ends with the method's own status and no solution, and
    /// Clarabel is not asked.
    #[test]
    fn alone_ends_where_the_method_does_not_converge() {
        use leontief_model::{ProblemBuilder, Sense};
        let lp = || {
            let mut b = ProblemBuilder::new(Sense::Maximise);
            let row = b.add_row(f64::NEG_INFINITY, -1.0);
            b.add_col(1.0, 0.0, f64::INFINITY, [(row, 1.0)]);
            b.add_col(0.5, 0.0, f64::INFINITY, [(row, 1.0)]);
            b.build()
        };
        let ipm = || BlockIpm::new(Some(vec![DENSE]), None);
        let handed = ipm().load(lp()).unwrap().solve().unwrap();
        assert!(
            handed
                .raw_status
                .contains("(Clarabel, after the block interior point method ended"),
            "{handed:?}"
        );
        assert_eq!(handed.status, Status::Infeasible, "{handed:?}");
        let own = ipm().alone().load(lp()).unwrap().solve().unwrap();
        assert!(
            own.raw_status
                .starts_with("the block interior point method ended"),
            "{own:?}"
        );
        assert!(
            own.status != Status::Optimal && own.status != Status::Infeasible,
            "{own:?}"
        );
        assert!(own.x.is_empty() && own.objective.is_nan(), "{own:?}");
    }

    /// A column whose optimum sits on an upper bound far from 0 (a capped
    /// user's level at its cap): its distance to the bound is not lost in
    /// `upper - x`, and the method itself ends optimal inside the bound.
    #[test]
    fn ends_on_an_upper_bound_far_from_zero() {
        use leontief_model::{ProblemBuilder, Sense};
        for upper in [1.0, 1e3, 1e6, 1e9] {
            let mut b = ProblemBuilder::new(Sense::Maximise);
            let row = b.add_row(f64::NEG_INFINITY, 2.0 * upper);
            b.add_col(1.0, 0.0, upper, [(row, 1.0)]);
            b.add_col(0.5, 0.0, f64::INFINITY, [(row, 1.0)]);
            let mut lp = BlockIpm::new(Some(vec![DENSE]), None)
                .load(b.build())
                .unwrap();
            let s = lp.solve().unwrap();
            assert!(
                s.raw_status.contains("block interior point"),
                "{upper}: {s:?}"
            );
            assert!(
                s.x[0] <= upper && s.x[0] >= upper * (1.0 - 1e-9),
                "{upper}: {s:?}"
            );
            assert!(
                (s.objective - 1.5 * upper).abs() <= 1e-9 * upper,
                "{upper}: {s:?}"
            );
        }
    }

    /// The operator's own LP (blocks: each entry's capacity rows) on
    /// generated instances: the same optimum as Clarabel's, a solution
    /// inside every row and bound, and prices that price it (weak duality).
    ///
    /// Also with weights, task caps and zero demands, and with more users
    /// than entries (the groups' LPs at scale, 4 resources or more); it
    /// must converge on nearly every instance (Clarabel answers the
    /// others).
    #[test]
    fn matches_clarabel_on_the_operators_lp() {
        let mut converged = 0;
        let mut cases = Vec::new();
        for seed in 1..=8u64 {
            for (n, k, m) in [
                (20, 60, 2),
                (30, 100, 3),
                (25, 80, 4),
                (60, 24, 4),
                (50, 20, 6),
            ] {
                cases.push((n, k, m, seed));
            }
        }
        let total = cases.len();
        for (n, k, m, seed) in cases {
            let mut raw = leontief_core::generate::heterogeneous(n, k, m, seed).to_raw();
            if seed % 2 == 0 {
                for (j, u) in raw.users.iter_mut().enumerate() {
                    u.weight = Some(1.0 + (j % 5) as f64);
                    if j % 4 == 1 {
                        u.demand[0] = 0.0;
                    }
                    if j % 7 == 2 {
                        u.tasks = Some(0.5 + j as f64 / 10.0);
                    }
                }
            }
            let inst = leontief_core::Instance::new(raw).unwrap();
            let sigma = crate::dominant_sigma(&inst);
            let mm = crate::lp::build::build(&inst, &sigma, false, None);
            let blocks = crate::lp::build::row_blocks(&mm, m, mm.problem.num_rows());
            let mut ours = BlockIpm::new(Some(blocks), None)
                .load(mm.problem.clone())
                .unwrap();
            let mut theirs = crate::solvers::direct::Direct::new(None)
                .unwrap()
                .load(mm.problem.clone())
                .unwrap();
            let (a, c) = (ours.solve().unwrap(), theirs.solve().unwrap());
            let what = format!("{n} x {k}, {m} resources, seed {seed}");
            assert_eq!(a.status, Status::Optimal, "{what}");
            converged += usize::from(a.raw_status.contains("block interior point"));
            assert!(
                (a.objective - c.objective).abs() <= 1e-9 * c.objective.abs(),
                "{what}: {} against {}",
                a.objective,
                c.objective
            );
            let p = &mm.problem;
            assert_inside(p, &a.x, &what);
        }
        assert!(converged + 2 >= total, "{converged} of {total} converged");
    }

    /// The columns of each user's entries left out of `mm` (user u holds
    /// the entries i with i + u even).
    fn other_half(
        mm: &crate::lp::build::MaxMinLp,
        inst: &leontief_core::Instance,
    ) -> Vec<leontief_model::NewCol> {
        (0..inst.num_users())
            .flat_map(|u| {
                inst.server_ids()
                    .filter(move |i| (i.0 + u) % 2 == 1)
                    .map(move |i| leontief_model::NewCol {
                        cost: 0.0,
                        lower: 0.0,
                        upper: f64::INFINITY,
                        entries: crate::lp::build::column(
                            inst,
                            u,
                            i,
                            mm.coef[u],
                            &mm.cap_row,
                            &mm.row_scale,
                            mm.link[u],
                        ),
                    })
            })
            .collect()
    }

    /// A warm solve that takes more steps than the cold solve before it
    /// ends the warm starts of that growth: the next solve of the grown LP
    /// starts cold (and still ends at the full LP's optimum); a bound
    /// changed starts a new growth, warm again. The cold solve is made to
    /// have taken one step, so that any warm solve takes more.
    #[test]
    fn a_warm_start_slower_than_the_cold_one_is_not_repeated() {
        for seed in 1..=3u64 {
            let (n, k, m) = (30, 100, 3 + seed as usize % 2);
            let inst = leontief_core::generate::heterogeneous(n, k, m, seed);
            let sigma = crate::dominant_sigma(&inst);
            let half: Vec<Vec<leontief_core::ServerId>> = (0..n)
                .map(|u| inst.server_ids().filter(|i| (i.0 + u) % 2 == 0).collect())
                .collect();
            let mm = crate::lp::build::build(&inst, &sigma, false, Some(&half));
            let full = crate::lp::build::build(&inst, &sigma, false, None);
            let blocks = crate::lp::build::row_blocks(&mm, m, mm.problem.num_rows());
            let what = format!("{n} x {k}, {m} resources, seed {seed}");
            let mut ours = BlockIpm::new(Some(blocks), None)
                .warm_from(0)
                .load(mm.problem.clone())
                .unwrap();
            let first = ours.solve().unwrap();
            assert!(first.raw_status.contains("block interior point"), "{what}");
            assert_eq!(ours.cold_steps, Some(first.iterations), "{what}");
            ours.cold_steps = Some(1);
            let rest = other_half(&mm, &inst);
            let (a, b) = rest.split_at(rest.len() / 2);
            ours.add_cols(a).unwrap();
            ours.solve().unwrap();
            assert!(ours.started_warm(), "{what}");
            assert!(ours.warm_lost, "{what}");
            ours.add_cols(b).unwrap();
            let grown = ours.solve().unwrap();
            assert!(!ours.started_warm(), "{what}");
            assert_eq!(grown.status, Status::Optimal, "{what}");
            let c = crate::solvers::direct::Direct::new(None)
                .unwrap()
                .load(full.problem.clone())
                .unwrap()
                .solve()
                .unwrap();
            assert!(
                (grown.objective - c.objective).abs() <= 1e-9 * c.objective.abs(),
                "{what}: {} against {}",
                grown.objective,
                c.objective
            );
            let p = ours.problem().clone();
            ours.set_col_bounds(Col(0), p.col_lower[0], p.col_upper[0])
                .unwrap();
            assert!(!ours.warm_lost && ours.cold_steps.is_none(), "{what}");
        }
    }

    /// The operator's LP on half of each user's entries, then grown by the
    /// other half's columns: the second solve starts from the first one's
    /// iterate (these LPs are below `WARM_FROM`: the test lowers it) and
    /// ends at the full LP's optimum (Clarabel's), inside every row and
    /// bound, in fewer steps than from the method's own start; after a
    /// bound changes, a solve starts cold again. At the default threshold
    /// the same grown LP starts cold.
    #[test]
    fn a_grown_lp_starts_from_the_solve_before_and_ends_at_its_optimum() {
        for seed in 1..=4u64 {
            let (n, k, m) = (30, 100, 3 + seed as usize % 2);
            let inst = leontief_core::generate::heterogeneous(n, k, m, seed);
            let sigma = crate::dominant_sigma(&inst);
            let half: Vec<Vec<leontief_core::ServerId>> = (0..n)
                .map(|u| inst.server_ids().filter(|i| (i.0 + u) % 2 == 0).collect())
                .collect();
            let mm = crate::lp::build::build(&inst, &sigma, false, Some(&half));
            let full = crate::lp::build::build(&inst, &sigma, false, None);
            let blocks = crate::lp::build::row_blocks(&mm, m, mm.problem.num_rows());
            let mut ours = BlockIpm::new(Some(blocks.clone()), None)
                .warm_from(0)
                .load(mm.problem.clone())
                .unwrap();
            let first = ours.solve().unwrap();
            let what = format!("{n} x {k}, {m} resources, seed {seed}");
            assert!(first.raw_status.contains("block interior point"), "{what}");
            assert!(!ours.started_warm(), "{what}");
            let rest = other_half(&mm, &inst);
            ours.add_cols(&rest).unwrap();
            let grown = ours.solve().unwrap();
            assert!(ours.started_warm(), "{what}");
            assert!(grown.raw_status.contains("block interior point"), "{what}");
            assert_eq!(grown.status, Status::Optimal, "{what}");
            let c = crate::solvers::direct::Direct::new(None)
                .unwrap()
                .load(full.problem.clone())
                .unwrap()
                .solve()
                .unwrap();
            assert!(
                (grown.objective - c.objective).abs() <= 1e-9 * c.objective.abs(),
                "{what}: {} against {}",
                grown.objective,
                c.objective
            );
            assert!(grown.objective >= first.objective - 1e-9, "{what}");
            let p = ours.problem().clone();
            let cold = BlockIpm::new(Some(blocks.clone()), None)
                .load(p.clone())
                .unwrap()
                .solve()
                .unwrap();
            assert!(
                grown.iterations < cold.iterations,
                "{what}: {} steps warm, {} cold",
                grown.iterations,
                cold.iterations
            );
            assert_inside(&p, &grown.x, &what);
            ours.set_col_bounds(Col(0), p.col_lower[0], p.col_upper[0])
                .unwrap();
            ours.solve().unwrap();
            assert!(!ours.started_warm(), "{what}");
            // At the default threshold the same grown LP starts cold.
            let mut small = BlockIpm::new(Some(blocks), None)
                .load(mm.problem.clone())
                .unwrap();
            small.solve().unwrap();
            small.add_cols(&rest).unwrap();
            assert_eq!(small.solve().unwrap().status, Status::Optimal, "{what}");
            assert!(!small.started_warm(), "{what}");
        }
    }
}
