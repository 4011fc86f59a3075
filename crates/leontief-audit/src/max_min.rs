//! Weighted lexicographic max-min optimality, with the user that can rise.

use crate::polytope::{mu, polytope, protect, resolution_at, solve_within};
use crate::witness::{placed, placed_dense, Change, Placed};
use crate::AuditTolerance;
pub use leontief_core::checks::{MaxMinCheck, Witness};
use leontief_core::{Instance, Tasks};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend};
use serde::Serialize;

fn levels(instance: &Instance, sigma: &[f64], x: &[f64]) -> Vec<f64> {
    instance
        .user_ids()
        // A user with no tasks is at level 0, even where sigma is infinite
        // (it demands a resource no server has).
        .map(|n| {
            if x[n.0] == 0.0 {
                0.0
            } else {
                sigma[n.0] * x[n.0] / instance.user(n).weight
            }
        })
        .collect()
}

/// Grouped max-min check (see the crate docs): one LP per group of users
/// whose levels `sigma_n x_n / w_n` tie within `tol.rise`.
pub fn max_min<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    x: &[f64],
    placement: bool,
    tol: &AuditTolerance,
) -> Result<MaxMinCheck, BackendError> {
    let lv = levels(instance, sigma, x);
    let mut order: Vec<usize> = (0..lv.len()).collect();
    order.sort_by(|&a, &b| lv[a].total_cmp(&lv[b]));
    let mut p = polytope(backend, instance, placement)?;
    let mut out = MaxMinCheck {
        ok: true,
        lps: 0,
        witness: None,
        failed_status: None,
    };
    let mut start = 0;
    while start < order.len() {
        let base = lv[order[start]];
        let mut end = start + 1;
        while end < order.len() && lv[order[end]] <= base * (1.0 + tol.rise) {
            end += 1;
        }
        let group = &order[start..end];
        for &n in group {
            protect(&mut p, instance, x, n, true)?;
            // Gains in share units, as the verdict measures them.
            p.lp.set_cost(p.y[n], mu(instance, n).max(1e-300))?;
        }
        let s = solve_within(&mut p, tol.feasibility)?;
        out.lps += 1;
        if !s.status.has_solution() {
            out.ok = false;
            out.failed_status = Some(format!("{} ({})", s.status, s.raw_status));
            return Ok(out);
        }
        worst_rise(
            instance,
            x,
            group.iter().copied(),
            (&s.x, !p.inexact, p.slack),
            &p.y,
            tol,
            &mut out,
        );
        for &n in group {
            p.lp.set_cost(p.y[n], 0.0)?;
        }
        start = end;
    }
    Ok(out)
}

/// Record every user of `users` whose reachable tasks exceed its tasks by
/// more than `tol.rise` in dominant-share units ((reach - x_n) mu_n): the
/// scale on which an allocation is accurate (a share of capacity), so a
/// user holding few tasks is not flagged for gaining solver round-off.
/// A rise is resolved only when the solution `sol` is `resolvable` (not a
/// floating-point fallback where the LP was to be exact) and beyond what
/// the LP's tolerances allow for the user's demand.
fn worst_rise(
    instance: &Instance,
    x: &[f64],
    users: impl Iterator<Item = usize>,
    (sol, resolvable, slack): (&[f64], bool, f64),
    y: &[Col],
    tol: &AuditTolerance,
    out: &mut MaxMinCheck,
) {
    for n in users {
        let reach = sol[y[n].0];
        let gain = (reach - x[n]) * mu(instance, n);
        if gain > tol.rise {
            out.ok = false;
            let resolved = resolvable && gain > resolution_at(instance, n, slack);
            // A resolved witness beats any unresolved one.
            let better = out
                .witness
                .as_ref()
                .is_none_or(|w| (resolved, gain) > (w.resolved, w.share_gain));
            if better {
                out.witness = Some(Witness {
                    user: instance.users()[n].name.clone(),
                    has: x[n],
                    can_reach: reach,
                    share_gain: gain,
                    resolved,
                });
            }
        }
    }
}

/// The same property with one LP per user: maximise x_n keeping every user
/// whose level is at most n's at its tasks.
pub fn max_min_per_user<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    x: &[f64],
    placement: bool,
    tol: &AuditTolerance,
) -> Result<MaxMinCheck, BackendError> {
    let lv = levels(instance, sigma, x);
    let mut p = polytope(backend, instance, placement)?;
    let mut out = MaxMinCheck {
        ok: true,
        lps: 0,
        witness: None,
        failed_status: None,
    };
    for n in 0..lv.len() {
        for j in 0..lv.len() {
            let on = j != n && lv[j] <= lv[n] * (1.0 + tol.rise);
            protect(&mut p, instance, x, j, on)?;
        }
        p.lp.set_cost(p.y[n], 1.0)?;
        let s = solve_within(&mut p, tol.feasibility)?;
        out.lps += 1;
        p.lp.set_cost(p.y[n], 0.0)?;
        if !s.status.has_solution() {
            out.ok = false;
            out.failed_status = Some(format!("{} ({})", s.status, s.raw_status));
            return Ok(out);
        }
        worst_rise(
            instance,
            x,
            [n].into_iter(),
            (&s.x, !p.inexact, p.slack),
            &p.y,
            tol,
            &mut out,
        );
    }
    Ok(out)
}

/// Who pays for a rise: the witness of a failed max-min check, made
/// concrete.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rise {
    /// The user that rises, from its tasks to the witness's.
    pub user: Change,
    /// The users that lose tasks so it can (every one at a level above the
    /// riser's, before and after), largest loss in dominant shares first;
    /// every user not listed keeps at least its tasks. Empty when the
    /// riser can rise at nobody's expense (the allocation is then not
    /// Pareto optimal either).
    pub payers: Vec<Change>,
    /// The witness allocation (nonzero entries).
    pub allocation: Vec<Placed>,
}

/// The witnessed rise of `witness.user`, made concrete (at most two LPs):
/// * if it can rise while every other user keeps its tasks, the largest
///   such rise (nobody pays);
/// * otherwise the allocation `w` of the largest rise that keeps every
///   user whose level is no larger at its tasks, the others losing as
///   little dominant share as they can, taken only part of the way, to
///   `tasks + theta (w - tasks)` with the largest theta <= 1 at which no
///   payer's level falls below the riser's: a rise the max-min order
///   prefers, in which the riser stays the worst-off of those involved.
///
/// `None` if an LP does not solve.
pub fn rise<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    tasks: &Tasks,
    placement: bool,
    witness: &Witness,
) -> Result<Option<Rise>, BackendError> {
    let Some(n) = instance.users().iter().position(|u| u.name == witness.user) else {
        return Ok(None);
    };
    let x: Vec<f64> = tasks.user_totals();
    let lv = levels(instance, sigma, &x);
    let cap = instance.users()[n].tasks.unwrap_or(f64::INFINITY);
    let tol = AuditTolerance::default();
    // Nobody pays: every other user keeps its tasks.
    let mut p = polytope(backend, instance, placement)?;
    for m in 0..x.len() {
        if m != n {
            protect(&mut p, instance, &x, m, true)?;
        }
    }
    p.lp.set_cost(p.y[n], 1.0)?;
    let s = solve_within(&mut p, tol.feasibility)?;
    if !s.status.has_solution() {
        return Ok(None);
    }
    if (s.x[p.y[n].0] - x[n]) * mu(instance, n) > tol.rise {
        return Ok(Some(Rise {
            user: Change {
                user: witness.user.clone(),
                has: x[n],
                gets: s.x[p.y[n].0],
            },
            payers: Vec::new(),
            allocation: placed(instance, &p, &s.x),
        }));
    }
    let mut p = polytope(backend, instance, placement)?;
    let target = witness.can_reach - 1e-6 * (witness.can_reach - witness.has);
    for m in 0..x.len() {
        if m == n {
            p.lp.set_col_bounds(p.y[m], target.min(cap), cap)?;
        } else if lv[m] <= lv[n] * (1.0 + 1e-6) {
            protect(&mut p, instance, &x, m, true)?;
        } else {
            // Above the riser: may lose, never gain (so what it loses is
            // the price of the rise, not a reshuffle).
            p.lp.set_col_bounds(p.y[m], 0.0, x[m].max(0.0))?;
            p.lp.set_cost(p.y[m], mu(instance, m))?;
        }
    }
    let s = solve_within(&mut p, tol.feasibility)?;
    if !s.status.has_solution() {
        return Ok(None);
    }
    let w: Vec<f64> = p.y.iter().map(|c| s.x[c.0]).collect();
    let w_lv = levels(instance, sigma, &w);
    // The largest theta with lv_m(theta) >= lv_n(theta) for every payer.
    let mut theta = 1.0f64;
    // (Protected users may give up their rounding room; they are no payers.)
    let above = |m: usize| m != n && lv[m] > lv[n] * (1.0 + 1e-6);
    for m in (0..x.len()).filter(|&m| above(m) && w[m] < x[m]) {
        let closing = (w_lv[n] - lv[n]) - (w_lv[m] - lv[m]);
        if closing > 0.0 {
            theta = theta.min((lv[m] - lv[n]) / closing);
        }
    }
    let mix = |a: f64, b: f64| a + theta * (b - a);
    // Entries the LP has no column for keep (1 - theta) of their tasks.
    let on_lp: std::collections::HashSet<(usize, usize)> =
        p.pairs.iter().map(|&(u, i, _)| (u, i)).collect();
    let mut mixed = tasks.clone();
    mixed.map_values(|u, i, t| {
        if on_lp.contains(&(u, i)) {
            t
        } else {
            t * (1.0 - theta)
        }
    });
    for &(u, i, c) in &p.pairs {
        mixed.set(u, i, mix(tasks.get(u, i), s.x[c.0]));
    }
    let y = mixed.user_totals();
    let change = |m: usize| Change {
        user: instance.users()[m].name.clone(),
        has: x[m],
        gets: y[m],
    };
    let mut payers: Vec<(f64, Change)> = (0..x.len())
        .filter(|&m| above(m) && (x[m] - y[m]) * mu(instance, m) > 1e-12)
        .map(|m| ((x[m] - y[m]) * mu(instance, m), change(m)))
        .collect();
    payers.sort_by(|a, b| b.0.total_cmp(&a.0));
    let allocation = placed_dense(instance, &mixed);
    Ok(Some(Rise {
        user: change(n),
        payers: payers.into_iter().map(|(_, c)| c).collect(),
        allocation,
    }))
}
