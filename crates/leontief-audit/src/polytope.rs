//! The polytope of feasible allocations as an LP, shared by the checks
//! that search for a better allocation (max-min, Pareto).

use leontief_core::{Instance, ResourceId, ServerId};
use leontief_model::{
    BackendError, Col, LoadedLp, LpBackend, ProblemBuilder, Row, Sense, Solution,
};

const INF: f64 = f64::INFINITY;

/// The polytope of feasible allocations as an LP: columns x_{n,i}, one
/// total column y_n per user (bounds set by each check), capacity rows.
pub(crate) struct Polytope<L: LoadedLp> {
    pub(crate) lp: L,
    pub(crate) y: Vec<Col>,
    /// (user, server entry, column) of every x_{n,i}.
    pub(crate) pairs: Vec<(usize, usize, Col)>,
    /// Its LPs are made exact ([`solve`]) and protected users get 1e-15
    /// of room ([`protect`]): where the instance has placement lists and
    /// the LP at most [`EXACT_ROWS`] rows and fewer than [`EXACT_WIDTH`]
    /// columns per row, as in the max-min rounds.
    pub(crate) exact: bool,
    /// The last [`solve`] wanted exactness (`exact`) and fell back to the
    /// backend's floating-point answer: what it finds there cannot be
    /// resolved from the LP's tolerances (measured at 1,000 x 10,000 with
    /// 10 eligible each, 4 resources: a Pareto "gain" of 87% for one user
    /// where the exact LP cannot even hold the allocation's own tasks,
    /// infeasible by 2.5e-15 in the printed floats, and HiGHS's 1e-10
    /// tolerances bought the rest).
    pub(crate) inexact: bool,
    /// The capacity rows (each divided by its capacity; bound 1, or 0
    /// where the capacity is 0).
    cap: Vec<(Row, f64)>,
    /// How far the capacity rows are relaxed ([`Polytope::relax`]).
    pub(crate) slack: f64,
}

impl<L: LoadedLp> Polytope<L> {
    /// Let every capacity row hold `slack` of its capacity more: an
    /// allocation the audit calls feasible may overfill by its
    /// feasibility tolerance, and the exact rows then hold no allocation
    /// as good as it (its LP ends infeasible).
    pub(crate) fn relax(&mut self, slack: f64) -> Result<(), BackendError> {
        for &(row, upper) in &self.cap {
            self.lp
                .set_row_bounds(row, -INF, if upper > 0.0 { upper + slack } else { 0.0 })?;
        }
        self.slack = slack;
        Ok(())
    }
}

/// Up to this many rows a polytope of an instance with placement lists is
/// solved exactly (as the max-min rounds' `EXACT_PIVOTS_ROWS`).
const EXACT_ROWS: usize = 50_000;

/// ... with fewer than this many columns per row (as the rounds'
/// `EXACT_PIVOTS_WIDTH`: the sparse lists whose LPs chain users).
const EXACT_WIDTH: usize = 4;

pub(crate) fn polytope<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    placement: bool,
) -> Result<Polytope<B::Loaded>, BackendError> {
    let (m, k, nu) = (
        instance.num_resources(),
        instance.num_entries(),
        instance.num_users(),
    );
    let mut b = ProblemBuilder::new(Sense::Maximise);
    // Each capacity row divided by its capacity: the LP's tolerance is then
    // the same fraction of every server, whatever its size.
    let capacity = |j: usize| instance.class_capacity(ServerId(j / m), ResourceId(j % m));
    let cap: Vec<Row> = (0..k * m)
        .map(|j| b.add_row(-INF, if capacity(j) > 0.0 { 1.0 } else { 0.0 }))
        .collect();
    let cap_bounds = cap
        .iter()
        .enumerate()
        .map(|(j, &row)| (row, if capacity(j) > 0.0 { 1.0 } else { 0.0 }))
        .collect();
    let link: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
    let mut pairs = Vec::new();
    for n in instance.user_ids() {
        let d = &instance.user(n).demand;
        for i in instance.runnable_entries(n, placement) {
            let e = (0..m)
                .filter(|&r| d[r] > 0.0)
                .map(|r| {
                    let c = capacity(i.0 * m + r);
                    (cap[i.0 * m + r], if c > 0.0 { d[r] / c } else { d[r] })
                })
                .chain([(link[n.0], 1.0)]);
            pairs.push((n.0, i.0, b.add_col(0.0, 0.0, INF, e)));
        }
    }
    let y = instance
        .user_ids()
        .map(|n| {
            b.add_col(
                0.0,
                0.0,
                instance.user(n).tasks.unwrap_or(INF),
                [(link[n.0], -1.0)],
            )
        })
        .collect();
    let problem = b.build();
    let exact = placement
        && instance.has_placement()
        && problem.num_rows() <= EXACT_ROWS
        && problem.num_cols() < EXACT_WIDTH * problem.num_rows();
    Ok(Polytope {
        lp: backend.load(problem)?,
        y,
        pairs,
        exact,
        inexact: false,
        cap: cap_bounds,
        slack: 0.0,
    })
}

/// Pivots allowed when a check's LP is made exact from the backend's
/// basis.
const EXACT_PIVOTS: usize = 5_000;

/// Solve the polytope's LP as the checks have set it and, where
/// `p.exact`, make it exact to double-double precision by the simplex
/// continued from the backend's final basis ([`leontief_model::polish`],
/// also where HiGHS ends without a solution). With placement lists the
/// checks' LPs are as ill-conditioned as the rounds they check: on
/// placement 100 x 1,000 (10 eligible, 3 resources, seed 1) HiGHS's 1e-9
/// tolerances and a room of 1e-11 let a user "rise" 16% that the exact
/// LP keeps to 4e-7. Without a
/// basis, or when the pivots fail, the backend's own solution; when that
/// has none, once more by simplex without presolve (HiGHS's presolve
/// called a feasible LP infeasible where two resources were saturated to
/// 1e-16: a 5-user k-DF instance from the property tests).
pub(crate) fn solve<L: LoadedLp>(p: &mut Polytope<L>) -> Result<Solution, BackendError> {
    let on = p.exact;
    let exact = |lp: &mut L| {
        on.then(|| leontief_model::polish::polish_loaded(lp, EXACT_PIVOTS, None))
            .flatten()
    };
    p.inexact = false;
    let s = p.lp.solve()?;
    if let Some(e) = exact(&mut p.lp) {
        return Ok(e);
    }
    p.inexact = on;
    if s.status.has_solution() {
        return Ok(s);
    }
    p.lp.prefer_warm_simplex()?;
    let s = p.lp.solve()?;
    match exact(&mut p.lp) {
        Some(e) => {
            p.inexact = false;
            Ok(e)
        }
        None => Ok(s),
    }
}

/// [`solve`], and where the LP ends infeasible, again with the capacity
/// rows relaxed by `slack` (the audit's feasibility tolerance).
pub(crate) fn solve_within<L: LoadedLp>(
    p: &mut Polytope<L>,
    slack: f64,
) -> Result<Solution, BackendError> {
    let s = solve(p)?;
    use leontief_model::Status::{Infeasible, InfeasibleOrUnbounded, InfeasibleReducedAccuracy};
    let infeasible = matches!(
        s.status,
        Infeasible | InfeasibleReducedAccuracy | InfeasibleOrUnbounded
    );
    if !infeasible || p.slack >= slack {
        return Ok(s);
    }
    p.relax(slack)?;
    solve(p)
}

pub(crate) fn protect<L: LoadedLp>(
    p: &mut Polytope<L>,
    instance: &Instance,
    x: &[f64],
    n: usize,
    on: bool,
) -> Result<(), BackendError> {
    let cap = instance.users()[n].tasks.unwrap_or(INF);
    // Protected users may give up 1e-9 / N of their tasks (room for the
    // rounding of a solver's output; summed over all users that frees at
    // most about 1e-9 of one user's tasks, far below the rise tolerance),
    // or 1e-15 where the LP is exact (see [`solve`]): with 1e-9 / N a
    // slope of about 1e10 on placement lists let a user rise 16% out of
    // that room.
    let relax = if p.exact {
        1e-15
    } else {
        1e-9 / instance.num_users() as f64
    };
    let lo = if on {
        (x[n] * (1.0 - relax)).max(0.0).min(cap)
    } else {
        0.0
    };
    p.lp.set_col_bounds(p.y[n], lo, cap)
}

/// mu_n, the global dominant share of one task of user n (0 if it demands
/// a resource no server has: it cannot run, so it cannot gain).
pub(crate) fn mu(instance: &Instance, n: usize) -> f64 {
    let m = instance.mu(leontief_core::UserId(n));
    if m.is_finite() {
        m
    } else {
        0.0
    }
}

/// The flat LPs' feasibility tolerance (HiGHS: 1e-7 of every capacity row,
/// the rows being divided by their capacities) plus the protected users'
/// rounding room (1e-9), doubled for safety.
const LP_SLACK: f64 = 2.0 * (1e-7 + 1e-9);

/// The smallest gain of user n, in dominant shares, that a flat LP check
/// resolves. The LP's tolerances let it overfill every capacity row by
/// LP_SLACK of the capacity; user n can turn that into up to LP_SLACK C_r /
/// D_{n,r} tasks through resource r, a dominant-share gain of LP_SLACK
/// mu_n C_r / D_{n,r}: the user's demand imbalance (its dominant share over
/// its least share per task, up to 1e12 by the instance rules) amplifies
/// the tolerance. (Found by the fuzzer: a user needing 3.3e6 times more
/// memory than CPU per unit of capacity "rose" 0.8% on CPU the LP did not
/// have.)
pub fn resolution(instance: &Instance, n: usize) -> f64 {
    resolution_at(instance, n, 0.0)
}

/// [`resolution`] on a polytope whose capacity rows are relaxed by
/// `slack` ([`Polytope::relax`]): the room grows by twice that.
pub(crate) fn resolution_at(instance: &Instance, n: usize, slack: f64) -> f64 {
    let cap = instance.total_capacity();
    let least = instance.users()[n]
        .demand
        .iter()
        .zip(cap)
        .filter(|(&d, &c)| d > 0.0 && c > 0.0)
        .map(|(&d, &c)| d / c)
        .fold(INF, f64::min);
    let m = mu(instance, n);
    if m > 0.0 && least.is_finite() {
        (LP_SLACK + 2.0 * slack) * m / least
    } else {
        0.0
    }
}
