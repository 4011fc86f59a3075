//! From the LP's point to the allocation: snap each user to its level,
//! repair the rounding over capacity, and the allocation of rounds
//! stopped early.

use crate::lp::build::MaxMinLp;
use crate::outcome::{Freeze, MaxMinOutcome};
use leontief_core::{Instance, ServerId, Status, Tasks};

/// Scale down the tasks on any entry whose use exceeds a capacity: the
/// LP meets each capacity row to its feasibility tolerance (1e-7 of the
/// capacity) and the snap may add up to 1e-6, so an answer can sit that
/// far over (measured: 1.3e-7 at 1,000 x 10,000, seed 2). Scaling the
/// entry's users by capacity / use (at least 1 - 1e-6) makes it exact.
pub(crate) fn repair(tasks: &mut Tasks, instance: &Instance) {
    let m = instance.num_resources();
    let used = used(tasks, instance);
    let factor: Vec<f64> = (0..instance.num_entries())
        .map(|i| {
            let c = instance.class_capacities(ServerId(i));
            (0..m)
                .filter(|&r| used[i * m + r] > c[r])
                .map(|r| c[r] / used[i * m + r])
                .fold(1.0, f64::min)
        })
        .collect();
    if factor.iter().all(|&f| f == 1.0) {
        return;
    }
    tasks.map_values(|_, i, x| x * factor[i]);
}

/// Each entry's use of each resource (entry-major, `entries x m`).
pub(crate) fn used(tasks: &Tasks, instance: &Instance) -> Vec<f64> {
    let m = instance.num_resources();
    let mut used = vec![0.0; instance.num_entries() * m];
    for (n, row) in tasks.rows().enumerate() {
        let d = &instance.users()[n].demand;
        for (i, x) in row {
            if x > 0.0 {
                for r in 0..m {
                    used[i * m + r] += d[r] * x;
                }
            }
        }
    }
    used
}

/// Fill `out.tasks` and the final levels from the LP's columns `x`.
///
/// Snap: a user frozen at theta_r holds exactly theta_r (its cap when
/// capped). The LP leaves each level within its tolerances of the
/// target, and a user whose tasks barely touch any capacity row (weight
/// 1e-6 of another's) can sit 1e-5 above its round's level there, which
/// then reads as a different level. Scaling the user's row down frees
/// capacity; up, by at most 1e-6, it uses at most that fraction of the
/// user's own.
pub(crate) fn finish(
    out: &mut MaxMinOutcome,
    mm: &MaxMinLp,
    x: &[f64],
    instance: &Instance,
    sigma: &[f64],
) {
    let (k, nu) = (instance.num_entries(), instance.num_users());
    let (coef, y_upper, runnable) = (&mm.coef, &mm.y_upper, &mm.runnable);
    let rows = (0..nu)
        .map(|n| {
            let have: f64 = mm.pairs[n].iter().map(|(_, c)| x[c.0]).sum();
            let target = match out.freeze[n] {
                Freeze::Blocked => out.levels[n],
                Freeze::Capped => y_upper[n],
                Freeze::CannotRun | Freeze::Rising => have,
            };
            // Down (which frees capacity) by up to 1e-3, up by up to 1e-6.
            let f = if have > 0.0 && (1.0 - 1e-3..=1.0 + 1e-6).contains(&(target / have)) {
                target / have
            } else {
                1.0
            };
            mm.pairs[n]
                .iter()
                .map(|&(i, c)| (i.0, coef[n] * x[c.0] * f))
                .collect()
        })
        .collect();
    out.tasks = Tasks::from_rows(k, rows);
    repair(&mut out.tasks, instance);
    for n in 0..nu {
        out.levels[n] = if runnable[n] {
            out.tasks.user_total(n) * sigma[n] / instance.users()[n].weight
        } else {
            0.0
        };
    }
}

/// The rounds' end: certificates name only the users they prove blocked
/// (capped users are proved by their cap), then [`finish`] at `x`.
pub(crate) fn wrap_up(
    out: &mut MaxMinOutcome,
    mm: &MaxMinLp,
    x: &[f64],
    instance: &Instance,
    sigma: &[f64],
) {
    for c in &mut out.certificates {
        c.users.retain(|&n| out.freeze[n] == Freeze::Blocked);
    }
    out.certificates.retain(|c| !c.users.is_empty());
    finish(out, mm, x, instance, sigma);
}

/// The rounds stopped early. When a limit stopped them (status
/// `time_limit`, from the rounds' deadline or an LP's own limit, or
/// `iteration_limit`, from [`MaxMinSettings::round_limit`] or an LP's own
/// limit), the allocation is `point`, the last level LP solved: every frozen user
/// at its level (feasible within the LP's tolerances, then repaired like
/// a finished run's), every user still rising ([`Freeze::Rising`]) at
/// least at that round's level. Nothing is filled for any other stop, or
/// before a round was solved.
pub(crate) fn stopped(
    out: &mut MaxMinOutcome,
    mm: &MaxMinLp,
    point: Option<&leontief_model::Solution>,
    active: &[bool],
    num_cols: usize,
    instance: &Instance,
    sigma: &[f64],
) {
    let limit = matches!(out.status, Status::TimeLimit | Status::IterationLimit);
    let Some(point) = point.filter(|_| limit) else {
        return;
    };
    let frozen = active
        .iter()
        .zip(&mm.runnable)
        .filter(|&(&a, &r)| r && !a)
        .count();
    let rising = active.iter().filter(|&&a| a).count();
    for (n, _) in active.iter().enumerate().filter(|&(_, &a)| a) {
        out.freeze[n] = Freeze::Rising;
    }
    // Columns priced in after `point` was solved hold 0 there.
    let mut x = point.x.clone();
    x.resize(num_cols.max(x.len()), 0.0);
    let level = out
        .levels
        .iter()
        .zip(&out.frozen_round)
        .filter(|&(_, &r)| r > 0)
        .map(|(&l, _)| l)
        .fold(0.0, f64::max);
    finish(out, mm, &x, instance, sigma);
    out.raw_status = format!(
        "{}; the allocation is the last round's point: {frozen} users frozen at their rounds' levels (final), {rising} still rising (at least at the level {:.6} of the last round frozen, not yet their own)",
        out.raw_status,
        level / mm.scale
    );
}
