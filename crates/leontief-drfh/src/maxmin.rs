//! The lexicographic weighted max-min operator (progressive filling).
//!
//! Every mechanism of the max-min family gives each user a share linear in
//! its task count, `s_n = sigma_n x_n`, and a weight `w_n`; the operator
//! maximises the smallest `s_n / w_n`, then the second smallest, and so on
//! (`shared/docs/mechanisms.md`, "Max-min family").
//!
//! ## The LP, built once
//!
//! ```text
//!   columns  x_{n,i} >= 0     user n on entry i (only where n may run on i)
//!            y_n in [lo_n, T_n]  user n's total
//!            theta >= 0        the level of the active users
//!   rows     sum_n D_{n,r} x_{n,i} <= c_{i,r}     (i, r) demanded by someone
//!            sum_i x_{n,i} - y_n = 0               link
//!            y_n - (w_n / sigma_n) theta >= 0      level (active users)
//!   maximise theta
//! ```
//!
//! A round solves the LP. When the backend returns vertex solutions
//! ([`leontief_model::LpBackend::vertex_duals`]), an active user whose level
//! row carries a positive dual cannot rise above the level theta* without pushing another user
//! below its own (LP duality: theta* - theta >= sum_n y_n slack_n for every
//! feasible point, so a positive y_n forbids slack there at theta = theta*).
//! A zero dual proves nothing under degeneracy, the normal case here, so the
//! remaining active users go to a *growth* LP: theta fixed at theta*, the
//! objective the sum of their levels. Users that end above theta* can rise
//! and stay active; if none does, none of them can rise (one that could
//! would raise the sum), so all are frozen. Iterating on the undecided
//! users gives the same verdicts as one growth LP per user, with far fewer
//! solves. Freezing user n sets its level row free and `lo_n = w_n theta* /
//! sigma_n`: only bounds change, so the pattern is built once and every
//! re-solve is warm-started. Some user freezes every round (averaging the
//! growth witnesses of all active users would beat theta*), so at most N
//! rounds run.
//!
//! On a single pool the same operator has a closed form,
//! [`progressive_filling`]: raise theta until a resource saturates or a user
//! reaches its cap, freeze the users touching it, repeat.

use leontief_core::{Instance, ResourceId, ServerId, UserId};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend, ProblemBuilder, Row, Sense, Status};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// Tolerances of the max-min operator.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxMinSettings {
    /// A user "can rise" when the growth LP lifts its level above theta* by
    /// more than this, relative to max(theta*, 1e-12). Default 1e-7.
    pub level_tolerance: f64,
    /// A level-row dual counts as positive when |dual| times the row's theta
    /// coefficient exceeds this (its share of theta's unit price).
    /// Default 1e-9.
    pub dual_tolerance: f64,
    /// Frozen users keep at least (1 - this) of their level, so rounding in
    /// one round never makes the next infeasible. Default 1e-10.
    pub freeze_relaxation: f64,
}

impl Default for MaxMinSettings {
    fn default() -> Self {
        MaxMinSettings {
            level_tolerance: 1e-7,
            dual_tolerance: 1e-9,
            freeze_relaxation: 1e-10,
        }
    }
}

impl MaxMinSettings {
    /// Check every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), crate::DrfhError> {
        for (name, v) in [
            ("level_tolerance", self.level_tolerance),
            ("dual_tolerance", self.dual_tolerance),
            ("freeze_relaxation", self.freeze_relaxation),
        ] {
            if v.is_nan() || v <= 0.0 || v >= 1e-2 {
                return Err(crate::DrfhError::InvalidParameter {
                    name: format!("MaxMinSettings.{name}"),
                    reason: format!("must be in (0, 0.01) (got {v})"),
                });
            }
        }
        Ok(())
    }
}

/// Why a user stopped rising.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freeze {
    /// It cannot run anywhere it may be placed (fixed at 0 before round 1).
    CannotRun,
    /// It reached its task cap.
    Capped,
    /// Raising it would lower a user whose level is no larger.
    Blocked,
}

/// The result of the max-min operator.
#[derive(Debug, Clone)]
pub struct MaxMinOutcome {
    /// Worst status over all solves.
    pub status: Status,
    /// Raw backend status of the solve that decided `status`.
    pub raw_status: String,
    /// x_{n,i} (empty rows when there is no solution).
    pub tasks: Vec<Vec<f64>>,
    /// Level s_n / w_n of each user.
    pub levels: Vec<f64>,
    /// Round in which each user froze (0: could not run).
    pub frozen_round: Vec<usize>,
    /// Why each user froze.
    pub freeze: Vec<Freeze>,
    /// theta* of round 1 (the paper's single-LP value).
    pub first_level: Option<f64>,
    /// Rounds run.
    pub rounds: usize,
    /// LPs solved.
    pub lps: usize,
    /// Seconds building the LP.
    pub build_seconds: f64,
    /// Seconds in solves.
    pub solve_seconds: f64,
}

impl MaxMinOutcome {
    /// Account for one solve; false when it left no solution.
    fn record(&mut self, sol: &leontief_model::Solution) -> bool {
        self.lps += 1;
        self.solve_seconds += sol.seconds;
        self.status = self.status.worst(sol.status);
        // Keep the raw status of the solve that decided `status`.
        if sol.status != Status::Optimal || self.raw_status.is_empty() {
            self.raw_status = sol.raw_status.clone();
        }
        sol.status.has_solution()
    }
}

/// The entries user `n` may run on: eligible (when `placement`) and having
/// every resource it demands.
pub fn runnable_entries(instance: &Instance, n: UserId, placement: bool) -> Vec<ServerId> {
    instance
        .server_ids()
        .filter(|&i| {
            if placement {
                instance.can_run_on(n, i)
            } else {
                instance
                    .user(n)
                    .demand
                    .iter()
                    .zip(instance.class_capacities(i))
                    .all(|(&d, &c)| d == 0.0 || c > 0.0)
            }
        })
        .collect()
}

/// The operator's LP with the indices of its rows and columns.
pub struct MaxMinLp {
    /// The LP (round 1: every runnable user active).
    pub problem: leontief_model::Problem,
    entries: Vec<Vec<ServerId>>,
    runnable: Vec<bool>,
    xcols: Vec<Vec<Col>>,
    ycols: Vec<Col>,
    level: Vec<Row>,
    theta: Col,
    coef: Vec<f64>,
    scale: f64,
}

/// Build the operator's LP (see the module docs) in one column-wise pass.
pub fn build(instance: &Instance, sigma: &[f64], placement: bool) -> MaxMinLp {
    let (m, k, nu) = (
        instance.num_resources(),
        instance.num_entries(),
        instance.num_users(),
    );
    let entries: Vec<Vec<ServerId>> = instance
        .user_ids()
        .map(|n| {
            if sigma[n.0].is_finite() && sigma[n.0] > 0.0 {
                runnable_entries(instance, n, placement)
            } else {
                Vec::new()
            }
        })
        .collect();
    // Which capacity rows are needed: (i, r) demanded by a user that may run on i.
    let mut cap_row = vec![usize::MAX; k * m];
    for (n, list) in entries.iter().enumerate() {
        let d = &instance.users()[n].demand;
        for &i in list {
            for r in 0..m {
                if d[r] > 0.0 {
                    cap_row[i.0 * m + r] = 0;
                }
            }
        }
    }
    let ncols: usize = entries.iter().map(Vec::len).sum();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    b.reserve(k * m + 2 * nu, ncols + nu + 1, ncols * (m + 1) + 3 * nu);
    for i in 0..k {
        for r in 0..m {
            if cap_row[i * m + r] == 0 {
                let c = instance.class_capacity(ServerId(i), ResourceId(r));
                cap_row[i * m + r] = b.add_row(-INF, c).0;
            }
        }
    }
    let link: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
    let runnable: Vec<bool> = entries.iter().map(|e| !e.is_empty()).collect();
    let level: Vec<Row> = (0..nu)
        .map(|n| {
            if runnable[n] {
                b.add_row(0.0, INF)
            } else {
                b.add_row(-INF, INF)
            }
        })
        .collect();
    let mut xcols: Vec<Vec<Col>> = Vec::with_capacity(nu);
    let mut scratch = Vec::with_capacity(m + 1);
    for (n, list) in entries.iter().enumerate() {
        let d = &instance.users()[n].demand;
        let mut cols = Vec::with_capacity(list.len());
        for &i in list {
            scratch.clear();
            for r in 0..m {
                if d[r] > 0.0 {
                    scratch.push((Row(cap_row[i.0 * m + r]), d[r]));
                }
            }
            scratch.push((link[n], 1.0));
            cols.push(b.add_col(0.0, 0.0, INF, scratch.iter().copied()));
        }
        xcols.push(cols);
    }
    // Max-min is invariant to a common scale of sigma; pick the scale that
    // makes the smallest "alone" level (the level a user reaches with every
    // server to itself) equal to 1, so theta* lies in about [1/N, 1] and is
    // well above the LP's absolute tolerances whatever the units of sigma
    // (k-DF shares are products of k small ratios).
    let alone_level = |n: usize| {
        let alone: f64 = entries[n]
            .iter()
            .map(|&i| instance.gamma(UserId(n), i))
            .sum();
        let alone = alone.min(instance.users()[n].tasks.unwrap_or(INF));
        sigma[n] * alone / instance.users()[n].weight
    };
    let reference = (0..nu)
        .filter(|&n| runnable[n])
        .map(alone_level)
        .fold(INF, f64::min);
    let scale = if reference.is_finite() && reference > 0.0 {
        1.0 / reference
    } else {
        1.0
    };
    let coef: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                instance.users()[n].weight / (sigma[n] * scale)
            } else {
                0.0
            }
        })
        .collect();
    let ycols: Vec<Col> = (0..nu)
        .map(|n| {
            let cap = if runnable[n] {
                instance.users()[n].tasks.unwrap_or(INF)
            } else {
                0.0
            };
            b.add_col(0.0, 0.0, cap, [(link[n], -1.0), (level[n], 1.0)])
        })
        .collect();
    let theta = b.add_col(
        1.0,
        0.0,
        INF,
        (0..nu)
            .filter(|&n| runnable[n])
            .map(|n| (level[n], -coef[n])),
    );
    MaxMinLp {
        problem: b.build(),
        entries,
        runnable,
        xcols,
        ycols,
        level,
        theta,
        coef,
        scale,
    }
}

/// Run the operator with shares `s_n = sigma[n] x_n` on `instance`.
///
/// `sigma[n]` must be positive and finite for every user that can run
/// somewhere; users with no runnable entry are fixed at 0.
pub fn lex_max_min<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
) -> Result<MaxMinOutcome, BackendError> {
    let t_build = Instant::now();
    let (k, nu) = (instance.num_entries(), instance.num_users());
    let MaxMinLp {
        problem,
        entries,
        runnable,
        xcols,
        ycols,
        level,
        theta,
        coef,
        scale,
    } = build(instance, sigma, placement);
    let ncols = problem.num_cols();
    let mut lp = backend.load(problem)?;
    let build_seconds = t_build.elapsed().as_secs_f64();

    let mut out = MaxMinOutcome {
        status: Status::Optimal,
        raw_status: String::new(),
        tasks: Vec::new(),
        levels: vec![0.0; nu],
        frozen_round: vec![0; nu],
        freeze: vec![Freeze::CannotRun; nu],
        first_level: None,
        rounds: 0,
        lps: 0,
        build_seconds,
        solve_seconds: 0.0,
    };
    let mut active: Vec<bool> = runnable.clone();
    let mut last = None;
    let level_of = |x: &[f64], n: usize| x[ycols[n].0] / coef[n];
    while active.iter().any(|&a| a) {
        out.rounds += 1;
        let sol = lp.solve()?;
        if !out.record(&sol) {
            return Ok(out);
        }
        let t_star = sol.x[theta.0];
        out.first_level.get_or_insert(t_star / scale);
        let tol = settings.level_tolerance * t_star.max(1e-12);
        let mut blocked: Vec<usize> = Vec::new();
        let mut undecided: Vec<usize> = Vec::new();
        // Duals decide only where they are exact (a vertex solution);
        // otherwise every active user goes to the growth LPs.
        let trust_duals = backend.vertex_duals();
        for n in (0..nu).filter(|&n| active[n]) {
            if trust_duals && sol.row_dual[level[n].0].abs() * coef[n] > settings.dual_tolerance {
                blocked.push(n);
            } else {
                undecided.push(n);
            }
        }
        if !undecided.is_empty() {
            // Growth LPs: theta fixed, maximise the undecided users' levels.
            let fixed = t_star * (1.0 - settings.freeze_relaxation);
            lp.set_col_bounds(theta, fixed, fixed)?;
            lp.set_cost(theta, 0.0)?;
            for &n in &undecided {
                lp.set_cost(ycols[n], 1.0 / coef[n])?;
            }
            loop {
                let g = lp.solve()?;
                if !out.record(&g) {
                    return Ok(out);
                }
                let (free, stuck): (Vec<usize>, Vec<usize>) = undecided
                    .iter()
                    .partition(|&&n| level_of(&g.x, n) > t_star + tol);
                for &n in &free {
                    lp.set_cost(ycols[n], 0.0)?;
                }
                undecided = stuck;
                if free.is_empty() || undecided.is_empty() {
                    break;
                }
            }
            for &n in &undecided {
                lp.set_cost(ycols[n], 0.0)?;
            }
            blocked.extend(undecided);
            lp.set_col_bounds(theta, 0.0, INF)?;
            lp.set_cost(theta, 1.0)?;
        }
        if blocked.is_empty() {
            // Cannot happen in exact arithmetic (see the module docs); stop
            // rather than loop, and say so through the status.
            out.status = out.status.worst(Status::NumericalFailure);
            out.raw_status = "max-min: no user froze in a round".into();
            return Ok(out);
        }
        for n in blocked {
            active[n] = false;
            out.frozen_round[n] = out.rounds;
            out.levels[n] = t_star;
            let cap = instance.users()[n].tasks.unwrap_or(INF);
            let at = coef[n] * t_star;
            out.freeze[n] = if at >= cap * (1.0 - settings.level_tolerance) {
                Freeze::Capped
            } else {
                Freeze::Blocked
            };
            lp.set_row_bounds(level[n], -INF, INF)?;
            lp.set_col_bounds(
                ycols[n],
                (at * (1.0 - settings.freeze_relaxation)).min(cap),
                cap,
            )?;
        }
        last = Some(sol);
    }
    let x = match last {
        Some(sol) => sol.x,
        // No user could run at all: everything is zero.
        None => vec![0.0; ncols],
    };
    out.tasks = (0..nu)
        .map(|n| {
            let mut row = vec![0.0; k];
            for (c, &i) in xcols[n].iter().zip(&entries[n]) {
                row[i.0] = x[c.0];
            }
            row
        })
        .collect();
    for n in 0..nu {
        out.levels[n] = if runnable[n] {
            out.tasks[n].iter().sum::<f64>() * sigma[n] / instance.users()[n].weight
        } else {
            0.0
        };
    }
    Ok(out)
}

/// Closed-form progressive filling on one pool of capacity `capacity`.
///
/// `sigma[n]` as for [`lex_max_min`] (non-positive or infinite: the user
/// cannot run); `caps[n]` the task caps (`INF` for none). Returns the task
/// counts, levels, freeze rounds and reasons.
pub fn progressive_filling(
    demand: &[&[f64]],
    weight: &[f64],
    caps: &[f64],
    sigma: &[f64],
    capacity: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<usize>, Vec<Freeze>) {
    let (nu, m) = (demand.len(), capacity.len());
    let mut x = vec![0.0; nu];
    let mut level = vec![0.0; nu];
    let mut round = vec![0usize; nu];
    let mut why = vec![Freeze::CannotRun; nu];
    // A user runs if sigma is usable and every resource it needs exists.
    let mut active: Vec<bool> = (0..nu)
        .map(|n| {
            sigma[n].is_finite()
                && sigma[n] > 0.0
                && demand[n]
                    .iter()
                    .zip(capacity)
                    .all(|(&d, &c)| d == 0.0 || c > 0.0)
        })
        .collect();
    let mut frozen_use = vec![0.0; m];
    let mut theta = 0.0;
    let mut r_count = 0;
    while active.iter().any(|&a| a) {
        r_count += 1;
        // Consumption per unit of theta by the active users.
        let mut rate = vec![0.0; m];
        for n in (0..nu).filter(|&n| active[n]) {
            let c = weight[n] / sigma[n];
            for r in 0..m {
                rate[r] += demand[n][r] * c;
            }
        }
        // theta at which each resource saturates / each cap binds.
        let mut t_next = INF;
        for r in 0..m {
            if rate[r] > 0.0 {
                t_next = t_next.min((capacity[r] - frozen_use[r]) / rate[r]);
            }
        }
        for n in (0..nu).filter(|&n| active[n]) {
            t_next = t_next.min(caps[n] * sigma[n] / weight[n]);
        }
        theta = t_next.max(theta);
        let mut use_now = frozen_use.clone();
        for n in (0..nu).filter(|&n| active[n]) {
            x[n] = (weight[n] * theta / sigma[n]).min(caps[n]);
            for r in 0..m {
                use_now[r] += demand[n][r] * x[n];
            }
        }
        let saturated: Vec<bool> = (0..m)
            .map(|r| rate[r] > 0.0 && use_now[r] >= capacity[r] * (1.0 - 1e-12))
            .collect();
        let mut any = false;
        for n in 0..nu {
            if !active[n] {
                continue;
            }
            let capped = x[n] >= caps[n] * (1.0 - 1e-12);
            let touches = (0..m).any(|r| saturated[r] && demand[n][r] > 0.0);
            if capped || touches {
                active[n] = false;
                any = true;
                round[n] = r_count;
                why[n] = if capped {
                    Freeze::Capped
                } else {
                    Freeze::Blocked
                };
                level[n] = x[n] * sigma[n] / weight[n];
                for r in 0..m {
                    frozen_use[r] += demand[n][r] * x[n];
                }
            }
        }
        if !any {
            // Rounding left no binding event; freeze everyone at theta.
            for n in 0..nu {
                if !active[n] {
                    continue;
                }
                active[n] = false;
                round[n] = r_count;
                why[n] = Freeze::Blocked;
                level[n] = x[n] * sigma[n] / weight[n];
            }
        }
    }
    (x, level, round, why)
}
