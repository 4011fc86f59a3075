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
//!   columns  x'_{n,i} >= 0    user n on entry i (only where n may run on i)
//!            y'_n in [lo_n, T_n / coef_n]  user n's level
//!            theta >= 0        the level of the active users
//!   rows     sum_n D_{n,r} coef_n x'_{n,i} / c_{i,r} <= 1   (i, r) demanded by someone
//!            sum_i x'_{n,i} - y'_n = 0              link
//!            y'_n - theta >= 0                      level (active users)
//!   maximise theta
//! ```
//!
//! Every column of user n is in level units: x_{n,i} = coef_n x'_{n,i}
//! with coef_n = w_n / (sigma_n s), s making the smallest "alone" level 1.
//! So the LP's absolute tolerances are the same fraction of every user's
//! level whatever the weights (a ratio of 1e9 included) and the size of a
//! task, and, each capacity row being divided by its capacity, the same
//! fraction of every server. (With tasks as columns, a user of weight 1
//! next to one of weight 1e9 held 2e-8 tasks, inside HiGHS's 1e-7
//! feasibility tolerance, and came out 10% off.)

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

/// The smallest capacity-row coefficient kept, absolute and relative to
/// the row's largest (HiGHS drops entries below 1e-12; one decade of
/// margin).
const MIN_COEFFICIENT: f64 = 1e-11;

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
    /// A user "can rise" only when, besides `level_tolerance`, its share
    /// gain w_n (level - theta*) exceeds this times the total share held,
    /// sum_n w_n level_n (frozen users at their round's level, active ones
    /// at theta*): the freeze relaxation frees at most
    /// `freeze_relaxation` of that, and a user of weight 1e-9 next to one
    /// of weight 1 would otherwise "rise" into the relaxed capacity of the
    /// heavy user. (Measured against the largest weight times theta* it
    /// froze a light user whose heavy neighbour had capped out at a tiny
    /// level: found by the fuzzer.) Default 1e-8.
    pub share_tolerance: f64,
}

impl Default for MaxMinSettings {
    fn default() -> Self {
        MaxMinSettings {
            level_tolerance: 1e-7,
            dual_tolerance: 1e-9,
            freeze_relaxation: 1e-10,
            share_tolerance: 1e-8,
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
            ("share_tolerance", self.share_tolerance),
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
    /// Why the LP cannot hold the instance (a capacity row's coefficients
    /// too far apart), if it cannot.
    pub too_wide: Option<String>,
    /// The LP (round 1: every runnable user active).
    pub problem: leontief_model::Problem,
    entries: Vec<Vec<ServerId>>,
    runnable: Vec<bool>,
    xcols: Vec<Vec<Col>>,
    ycols: Vec<Col>,
    y_upper: Vec<f64>,
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
    let runnable: Vec<bool> = entries.iter().map(|e| !e.is_empty()).collect();
    // Max-min is invariant to a common scale of sigma; pick the scale that
    // makes the smallest "alone" level (the level a user reaches with every
    // server to itself) equal to 1, so theta* lies in about [1/N, 1] and is
    // well above the LP's absolute tolerances whatever the units of sigma
    // (k-DF shares are products of k small ratios).
    // Tasks each user runs with every entry it may use to itself (capped):
    // the scale below and the bound on its level column.
    let alone: Vec<f64> = (0..nu)
        .map(|n| {
            let sum: f64 = entries[n]
                .iter()
                .map(|&i| instance.gamma(UserId(n), i))
                .sum();
            sum.min(instance.users()[n].tasks.unwrap_or(INF))
        })
        .collect();
    let alone_level = |n: usize| sigma[n] * alone[n] / instance.users()[n].weight;
    let reference = (0..nu)
        .filter(|&n| runnable[n])
        .map(alone_level)
        .fold(INF, f64::min);
    let scale = if reference.is_finite() && reference > 0.0 {
        1.0 / reference
    } else {
        1.0
    };
    // coef_n: tasks of user n per unit of level. Every column of user n is
    // in level units (x = coef_n x'), so each user's level row reads
    // y'_n >= theta and the LP's absolute tolerances are the same fraction
    // of every user's level, whatever the weights (1e9 apart) or the size
    // of a task; every capacity row is divided by its capacity, so its
    // tolerance is the same fraction of every server.
    let coef: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                instance.users()[n].weight / (sigma[n] * scale)
            } else {
                0.0
            }
        })
        .collect();
    let ncols: usize = entries.iter().map(Vec::len).sum();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    b.reserve(k * m + 2 * nu, ncols + nu + 1, ncols * (m + 1) + 3 * nu);
    let mut row_scale = vec![0.0; k * m];
    for i in 0..k {
        for r in 0..m {
            if cap_row[i * m + r] == 0 {
                let c = instance.class_capacity(ServerId(i), ResourceId(r));
                row_scale[i * m + r] = 1.0 / c;
                cap_row[i * m + r] = b.add_row(-INF, 1.0).0;
            }
        }
    }
    let link: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
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
    // Each capacity row's smallest and largest coefficient: an LP solver
    // drops an entry far below the others (HiGHS: below 1e-12 absolute),
    // and a user whose use of a row vanishes may overfill it.
    let (mut row_lo, mut row_hi) = (vec![INF; k * m], vec![0.0f64; k * m]);
    for (n, list) in entries.iter().enumerate() {
        let d = &instance.users()[n].demand;
        let mut cols = Vec::with_capacity(list.len());
        for &i in list {
            scratch.clear();
            for r in 0..m {
                if d[r] > 0.0 {
                    let j = i.0 * m + r;
                    let v = d[r] * coef[n] * row_scale[j];
                    row_lo[j] = row_lo[j].min(v);
                    row_hi[j] = row_hi[j].max(v);
                    scratch.push((Row(cap_row[j]), v));
                }
            }
            scratch.push((link[n], 1.0));
            cols.push(b.add_col(0.0, 0.0, INF, scratch.iter().copied()));
        }
        xcols.push(cols);
    }
    // y'_n never exceeds the level of user n alone on every entry (its
    // cap, or the sum of gamma): a bound that never binds at an answer and
    // keeps every LP bounded.
    let y_upper: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                let most = alone[n];
                if instance.users()[n].tasks.is_some_and(|t| t <= most) {
                    most / coef[n]
                } else {
                    most * (1.0 + 1e-6) / coef[n]
                }
            } else {
                0.0
            }
        })
        .collect();
    let ycols: Vec<Col> = (0..nu)
        .map(|n| b.add_col(0.0, 0.0, y_upper[n], [(link[n], -1.0), (level[n], 1.0)]))
        .collect();
    let theta = b.add_col(
        1.0,
        0.0,
        INF,
        (0..nu).filter(|&n| runnable[n]).map(|n| (level[n], -1.0)),
    );
    let too_wide = (0..k * m)
        .find(|&j| row_hi[j] > 0.0 && (row_lo[j] < MIN_COEFFICIENT || row_lo[j] < row_hi[j] * MIN_COEFFICIENT))
        .map(|j| {
            format!(
                "max-min: the coefficients of capacity row {} on {} span {:.1e} to {:.1e} (users' weights times their shares per task are too far apart for a double-precision LP); not solved",
                instance.resources()[j % m],
                instance.servers()[j / m].name,
                row_lo[j],
                row_hi[j]
            )
        });
    MaxMinLp {
        too_wide,
        problem: b.build(),
        entries,
        runnable,
        xcols,
        ycols,
        y_upper,
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
        too_wide,
        problem,
        entries,
        runnable,
        xcols,
        ycols,
        y_upper,
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
    if let Some(why) = too_wide {
        out.status = Status::NumericalFailure;
        out.raw_status = why;
        return Ok(out);
    }
    let mut active: Vec<bool> = runnable.clone();
    let mut last = None;
    let weight = |n: usize| instance.users()[n].weight;
    // Columns are in level units (see `build`): y'_n is user n's level.
    let level_of = |x: &[f64], n: usize| x[ycols[n].0];
    while active.iter().any(|&a| a) {
        out.rounds += 1;
        let sol = lp.solve()?;
        if !out.record(&sol) {
            return Ok(out);
        }
        let t_star = sol.x[theta.0];
        out.first_level.get_or_insert(t_star / scale);
        let tol = settings.level_tolerance * t_star.max(1e-12);
        let held: f64 = (0..nu)
            .filter(|&n| runnable[n])
            .map(|n| weight(n) * if active[n] { t_star } else { out.levels[n] })
            .sum();
        let share_tol = settings.share_tolerance * held;
        let mut blocked: Vec<usize> = Vec::new();
        let mut undecided: Vec<usize> = Vec::new();
        // Duals decide only where they are exact (a vertex solution);
        // otherwise every active user goes to the growth LPs.
        let trust_duals = backend.vertex_duals();
        for n in (0..nu).filter(|&n| active[n]) {
            if trust_duals && sol.row_dual[level[n].0].abs() > settings.dual_tolerance {
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
                lp.set_cost(ycols[n], 1.0)?;
            }
            loop {
                let g = lp.solve()?;
                if !out.record(&g) {
                    return Ok(out);
                }
                let (free, stuck): (Vec<usize>, Vec<usize>) = undecided.iter().partition(|&&n| {
                    let gain = level_of(&g.x, n) - t_star;
                    gain > tol && weight(n) * gain > share_tol
                });
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
                (t_star * (1.0 - settings.freeze_relaxation)).min(y_upper[n]),
                y_upper[n],
            )?;
        }
        last = Some(sol);
    }
    let x = match last {
        Some(sol) => sol.x,
        // No user could run at all: everything is zero.
        None => vec![0.0; ncols],
    };
    // Snap: a user frozen at theta_r holds exactly theta_r (its cap when
    // capped). The LP leaves each level within its tolerances of the
    // target, and a user whose tasks barely touch any capacity row (weight
    // 1e-6 of another's) can sit 1e-5 above its round's level there, which
    // then reads as a different level. Scaling the user's row down frees
    // capacity; up, by at most 1e-6, it uses at most that fraction of the
    // user's own.
    out.tasks = (0..nu)
        .map(|n| {
            let mut row = vec![0.0; k];
            let have: f64 = xcols[n].iter().map(|c| x[c.0]).sum();
            let target = match out.freeze[n] {
                Freeze::Blocked => out.levels[n],
                Freeze::Capped => y_upper[n],
                Freeze::CannotRun => have,
            };
            // Down (which frees capacity) by up to 1e-3, up by up to 1e-6.
            let f = if have > 0.0 && (1.0 - 1e-3..=1.0 + 1e-6).contains(&(target / have)) {
                target / have
            } else {
                1.0
            };
            for (c, &i) in xcols[n].iter().zip(&entries[n]) {
                row[i.0] = coef[n] * x[c.0] * f;
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
