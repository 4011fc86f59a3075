//! One LP of a round, solved to an answer: column generation, exact
//! pivots, a second opinion for a growth LP HiGHS leaves undecided, and
//! relaxed frozen bounds as the last resort.

use crate::lp::build::{row_blocks, MaxMinLp};
use crate::lp::colgen::solve_priced;
use crate::outcome::MaxMinOutcome;
use crate::settings::{BLOCK_OPINION_USERS, RELAX_RETRIES};
use leontief_core::{Instance, Status};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend};
use std::time::Instant;

/// Set column `col`'s upper bound, keeping its lower one.
pub(crate) fn set_upper<L: LoadedLp>(lp: &mut L, col: Col, upper: f64) -> Result<(), BackendError> {
    let lower = lp.problem().col_lower[col.0];
    lp.set_col_bounds(col, lower, upper)
}

/// The users frozen so far and their level columns.
pub(crate) struct Frozen<'a> {
    pub(crate) active: &'a [bool],
    pub(crate) runnable: &'a [bool],
    pub(crate) ycols: &'a [Col],
    pub(crate) y_upper: &'a [f64],
}

/// [`solve_priced`]; when it leaves no solution and `retry`, relax the
/// frozen users' bounds (and theta, fixed at `fixed.1` in a growth LP) by
/// each of [`RELAX_RETRIES`] in turn and solve again. `None` when every
/// try failed (its status is in `out`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_retrying<L: LoadedLp>(
    lp: &mut L,
    mm: &mut MaxMinLp,
    generate: bool,
    instance: &Instance,
    placement: bool,
    out: &mut MaxMinOutcome,
    frozen: &Frozen,
    retry: bool,
    fixed: Option<(Col, f64)>,
    second_opinion: bool,
    time_limit: Option<f64>,
    deadline: Option<Instant>,
    exact_pivots: bool,
) -> Result<Option<leontief_model::Solution>, BackendError> {
    let mut attempt = 0;
    // Each solve within what is left of the run's time, not the whole
    // limit its own (an LP of 152 s was seen in a 900 s run).
    let limit_to_deadline = |lp: &mut L| -> Result<(), BackendError> {
        match deadline {
            Some(d) => lp.limit_time(d.saturating_duration_since(Instant::now()).as_secs_f64()),
            None => Ok(()),
        }
    };
    loop {
        let before = (out.status, out.raw_status.clone());
        limit_to_deadline(lp)?;
        let got = solve_priced(lp, mm, generate, instance, placement, out, None)?;
        if exact_pivots && !generate {
            if let Some(sol) = polished(lp, out, &before, deadline) {
                return Ok(Some(sol));
            }
        }
        if let Some(sol) = got {
            return Ok(Some(sol));
        }
        if attempt == 0 && second_opinion {
            // A growth LP HiGHS leaves without a solution: first by simplex
            // without presolve from where it ended (under `Auto`, LPs of
            // 10^4 columns run interior point and crossover, and presolve
            // ends some saturated LPs `Unknown`, as in the audit's
            // polytope; the LP stays on simplex from then on).
            (out.status, out.raw_status) = before.clone();
            lp.prefer_warm_simplex()?;
            limit_to_deadline(lp)?;
            if let Some(sol) = solve_priced(lp, mm, generate, instance, placement, out, None)? {
                return Ok(Some(sol));
            }
            // Then, before any relaxation, Clarabel solves it as loaded
            // (see [`RELAX_RETRIES`]); its verdicts, like every other,
            // reach the answer only through the independent verification.
            // Clarabel's sparse LDL fills in a dense block over the users
            // (sparse placement lists join them all), so from
            // [`BLOCK_OPINION_USERS`] the block interior point method,
            // whose dense part is that block, gives the opinion.
            let users = frozen.runnable.iter().filter(|&&r| r).count();
            // Within what is left of the run's time, not a whole limit
            // of its own (a 60 s run took 79 s).
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64());
            // With nothing left (Clarabel refuses a limit of 0 s), the
            // deadline check below ends the rounds.
            if !left.is_some_and(|s| s < 1e-3) {
                let time_limit = match (time_limit, left) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                let second = if users >= BLOCK_OPINION_USERS {
                    let blocks = row_blocks(mm, instance.num_resources(), lp.problem().num_rows());
                    crate::solvers::block_ipm::BlockIpm::new(Some(blocks), time_limit)
                        .solve(lp.problem().clone())?
                } else {
                    crate::solvers::direct::Direct::new(time_limit)?.solve(lp.problem().clone())?
                };
                if second.status.has_solution() {
                    let failed = std::mem::take(&mut out.raw_status);
                    out.status = before.0.worst(second.status);
                    out.raw_status = if before.1.is_empty() || before.1 == "Optimal" {
                        format!(
                            "a growth LP HiGHS ended {failed} was decided by Clarabel ({})",
                            second.status.as_str()
                        )
                    } else {
                        before.1.clone()
                    };
                    out.lps += 1;
                    out.solve_seconds += second.seconds;
                    return Ok(Some(second));
                }
            }
        }
        if deadline.is_some_and(|d| Instant::now() > d) {
            // The run's time limit ran out between tries (a relaxed retry
            // by simplex took 57 s at 1,000 x 10,000).
            let failed = std::mem::take(&mut out.raw_status);
            out.status = Status::TimeLimit;
            out.raw_status = format!(
                "max-min: the time limit ran out in round {} while retrying an LP that ended {failed} ({} LPs)",
                out.rounds, out.lps
            );
            return Ok(None);
        }
        if !retry || attempt == RELAX_RETRIES.len() {
            return Ok(None);
        }
        (out.status, out.raw_status) = before;
        let f = RELAX_RETRIES[attempt];
        relax_frozen(
            lp,
            frozen.active,
            frozen.runnable,
            &out.levels,
            frozen.ycols,
            frozen.y_upper,
            f,
        )?;
        if let Some((theta, t_star)) = fixed {
            let t = t_star * (1.0 - f);
            lp.set_col_bounds(theta, t, t)?;
        }
        attempt += 1;
    }
}

/// [`MaxMinSettings::exact_pivots`]: the LP just solved, made exact to
/// double-double precision from HiGHS's final basis (also when HiGHS
/// ended without a solution or with unscaled infeasibilities: the status
/// recorded for that solve is undone). `None` when the backend has no
/// basis or the pivots fail or pass the run's `deadline` (a polish of
/// 14 s took a 240 s run to 252 s).
fn polished<L: LoadedLp>(
    lp: &mut L,
    out: &mut MaxMinOutcome,
    before: &(Status, String),
    deadline: Option<Instant>,
) -> Option<leontief_model::Solution> {
    /// Pivots allowed from HiGHS's basis (measured: up to 42 per LP on the
    /// placement grid; at 1,000 x 10,000 with 10 eligible most LPs need
    /// 0-100, a few 200-2,000, at about 6 ms a pivot (7 ms before the
    /// refinements started from the last pivot's values); those past it
    /// fall back to HiGHS's answer after about 12 s. Some that needed
    /// more than 5,000 are a cycle (`leontief_model::polish`).
    const MAX_PIVOTS: usize = 2_000;
    let exact = leontief_model::polish::polish_loaded(lp, MAX_PIVOTS, deadline)?;
    // Exact, whatever HiGHS's own status for it said.
    (out.status, out.raw_status) = before.clone();
    if out.raw_status.is_empty() {
        out.raw_status = "Optimal (every LP made exact from HiGHS's basis)".into();
    }
    out.solve_seconds += exact.seconds;
    Some(exact)
}

/// Lower every frozen user's level bound to `(1 - f)` of its level.
fn relax_frozen<L: LoadedLp>(
    lp: &mut L,
    active: &[bool],
    runnable: &[bool],
    levels: &[f64],
    ycols: &[Col],
    y_upper: &[f64],
    f: f64,
) -> Result<(), BackendError> {
    for n in (0..active.len()).filter(|&n| runnable[n] && !active[n]) {
        lp.set_col_bounds(
            ycols[n],
            (levels[n] * (1.0 - f)).min(y_upper[n]),
            y_upper[n],
        )?;
    }
    Ok(())
}
