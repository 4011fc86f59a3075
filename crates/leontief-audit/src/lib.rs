//! Property checks on any allocation, independent of how it was computed.
//!
//! Each check reads only the instance and the allocation's task counts and
//! builds its own LPs (never the mechanism's), so a bug in a mechanism
//! cannot certify itself. Every failed check carries a witness.
//!
//! * [`feasibility`]: capacities, placement, caps, non-negativity, and
//!   `user_tasks[n] = sum_i tasks[n][i]`.
//! * [`max_min`]: weighted lexicographic max-min optimality for shares
//!   `s_n = sigma_n x_n`: no user can rise while every user whose level is no
//!   larger keeps its tasks. One LP per group of tied levels (the sum of the
//!   group's levels is maximised; if it cannot grow, no member can);
//!   [`max_min_per_user`] is the one-LP-per-user form of the same check.
//! * [`pareto`]: no feasible allocation gives everybody at least as much and
//!   the total more (one LP).
//! * [`max_min_certificate`]: the same max-min property (and Pareto
//!   optimality) proved from the solver's dual prices by weak duality, in
//!   one pass over every runnable pair per round, without an LP.
//! * [`envy`]: no user could run more tasks with another's per-server
//!   bundle, scaled by the weights (no LP).
#![deny(missing_docs)]

pub mod bbf;
mod certificate;
pub mod equilibrium;
pub mod first_order;
pub mod placement;
pub mod verify;
pub use certificate::{max_min_certificate, CertificateCheck};

use leontief_core::{Instance, ResourceId, ServerId};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend, ProblemBuilder, Row, Sense};
use serde::Serialize;

const INF: f64 = f64::INFINITY;

/// Tolerances of the checks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AuditTolerance {
    /// Relative tolerance on capacities and task counts. Default 1e-7.
    pub feasibility: f64,
    /// A user "rises" (or envies, or a Pareto improvement exists) when the
    /// gain exceeds this in global dominant-share units (tasks times mu_n,
    /// summed over users for Pareto). Default 1e-6.
    pub rise: f64,
}

impl Default for AuditTolerance {
    fn default() -> Self {
        AuditTolerance {
            feasibility: 1e-7,
            rise: 1e-6,
        }
    }
}

/// Result of [`feasibility`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feasibility {
    /// All rules hold.
    pub ok: bool,
    /// Largest capacity excess relative to the capacity (0 when feasible).
    pub max_capacity_excess: f64,
    /// Human-readable violations (at most 20).
    pub violations: Vec<String>,
}

/// Check capacities, placement (`placement`: honour `users[].servers`),
/// caps, non-negativity and the row sums.
pub fn feasibility(
    instance: &Instance,
    user_tasks: &[f64],
    tasks: &[Vec<f64>],
    placement: bool,
    tol: &AuditTolerance,
) -> Feasibility {
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let mut v = Vec::new();
    let mut excess = 0.0f64;
    if user_tasks.len() != instance.num_users() || tasks.len() != instance.num_users() {
        v.push("wrong number of users".to_string());
        return Feasibility {
            ok: false,
            max_capacity_excess: INF,
            violations: v,
        };
    }
    let mut used = vec![0.0; k * m];
    for n in instance.user_ids() {
        let u = instance.user(n);
        let row = &tasks[n.0];
        if row.len() != k {
            v.push(format!(
                "tasks[{}] has {} entries, expected {k}",
                n.0,
                row.len()
            ));
            continue;
        }
        let sum: f64 = row.iter().sum();
        let size: f64 = row.iter().map(|x| x.abs()).sum();
        // Every comparison is relative to the quantities compared: no
        // absolute slack, so the verdict is the same in any units.
        if (sum - user_tasks[n.0]).abs() > tol.feasibility * size.max(user_tasks[n.0].abs()) {
            v.push(format!(
                "user_tasks[{}] = {} but tasks[{}] sums to {sum}",
                n.0, user_tasks[n.0], n.0
            ));
        }
        if let Some(t) = u.tasks {
            if sum > t * (1.0 + tol.feasibility) {
                v.push(format!("{} runs {sum} tasks, above its cap {t}", u.name));
            }
        }
        for (i, &x) in row.iter().enumerate() {
            if x.is_nan() {
                v.push(format!("tasks[{}][{i}] is not a number", n.0));
            } else if x < -tol.feasibility * size {
                v.push(format!("tasks[{}][{i}] is negative ({x})", n.0));
            }
            if x > tol.feasibility * size && placement && !instance.eligible(n, ServerId(i)) {
                v.push(format!(
                    "{} runs {x} tasks on {}, outside its servers",
                    u.name,
                    instance.servers()[i].name
                ));
            }
            if x > 0.0 {
                for r in 0..m {
                    used[i * m + r] += x * u.demand[r];
                }
            }
        }
    }
    for i in instance.server_ids() {
        for r in instance.resource_ids() {
            let c = instance.class_capacity(i, r);
            let u = used[i.0 * m + r.0];
            let e = (u - c) / c.max(1e-300);
            if u > c * (1.0 + tol.feasibility) {
                v.push(format!(
                    "{} on {} is over capacity: {u} > {c}",
                    instance.resources()[r.0],
                    instance.servers()[i.0].name
                ));
            }
            if u > 0.0 {
                excess = excess.max(e);
            }
        }
    }
    v.truncate(20);
    Feasibility {
        ok: v.is_empty(),
        max_capacity_excess: excess.max(0.0),
        violations: v,
    }
}

/// The polytope of feasible allocations as an LP: columns x_{n,i}, one
/// total column y_n per user (bounds set by each check), capacity rows.
struct Polytope<L: LoadedLp> {
    lp: L,
    y: Vec<Col>,
}

fn polytope<B: LpBackend>(
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
    let link: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
    for n in instance.user_ids() {
        let d = &instance.user(n).demand;
        for i in instance.server_ids() {
            let ok = if placement {
                instance.can_run_on(n, i)
            } else {
                d.iter()
                    .zip(instance.class_capacities(i))
                    .all(|(&dr, &c)| dr == 0.0 || c > 0.0)
            };
            if ok {
                let e = (0..m)
                    .filter(|&r| d[r] > 0.0)
                    .map(|r| {
                        let c = capacity(i.0 * m + r);
                        (cap[i.0 * m + r], if c > 0.0 { d[r] / c } else { d[r] })
                    })
                    .chain([(link[n.0], 1.0)]);
                b.add_col(0.0, 0.0, INF, e);
            }
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
    Ok(Polytope {
        lp: backend.load(b.build())?,
        y,
    })
}

/// A user that can do better than the allocation gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Witness {
    /// The user.
    pub user: String,
    /// Its tasks in the allocation.
    pub has: f64,
    /// Tasks it can reach while the protected users keep theirs.
    pub can_reach: f64,
    /// The gain in global dominant share, (can_reach - has) mu_n.
    pub share_gain: f64,
}

/// Result of [`max_min`] and [`max_min_per_user`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxMinCheck {
    /// The property holds (and every LP solved).
    pub ok: bool,
    /// LPs solved.
    pub lps: usize,
    /// The user that rises most (in share units), if any rises.
    pub witness: Option<Witness>,
    /// A solve that did not end optimal, if any (the check is then not ok).
    pub failed_status: Option<String>,
}

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

fn protect<L: LoadedLp>(
    p: &mut Polytope<L>,
    instance: &Instance,
    x: &[f64],
    n: usize,
    on: bool,
) -> Result<(), BackendError> {
    let cap = instance.users()[n].tasks.unwrap_or(INF);
    // Protected users may give up 1e-9 / N of their tasks (room for the
    // rounding of a solver's output); summed over all users that frees at
    // most about 1e-9 of one user's tasks, far below the rise tolerance.
    let relax = 1e-9 / instance.num_users() as f64;
    let lo = if on {
        (x[n] * (1.0 - relax)).max(0.0).min(cap)
    } else {
        0.0
    };
    p.lp.set_col_bounds(p.y[n], lo, cap)
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
        let s = p.lp.solve()?;
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
            &s.x,
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

/// mu_n, the global dominant share of one task of user n (0 if it demands
/// a resource no server has: it cannot run, so it cannot gain).
fn mu(instance: &Instance, n: usize) -> f64 {
    let m = instance.mu(leontief_core::UserId(n));
    if m.is_finite() {
        m
    } else {
        0.0
    }
}

/// Record every user of `users` whose reachable tasks exceed its tasks by
/// more than `tol.rise` in dominant-share units ((reach - x_n) mu_n): the
/// scale on which an allocation is accurate (a share of capacity), so a
/// user holding few tasks is not flagged for gaining solver round-off.
fn worst_rise(
    instance: &Instance,
    x: &[f64],
    users: impl Iterator<Item = usize>,
    sol: &[f64],
    y: &[Col],
    tol: &AuditTolerance,
    out: &mut MaxMinCheck,
) {
    for n in users {
        let reach = sol[y[n].0];
        let gain = (reach - x[n]) * mu(instance, n);
        if gain > tol.rise {
            out.ok = false;
            if out.witness.as_ref().is_none_or(|w| gain > w.share_gain) {
                out.witness = Some(Witness {
                    user: instance.users()[n].name.clone(),
                    has: x[n],
                    can_reach: reach,
                    share_gain: gain,
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
        let s = p.lp.solve()?;
        out.lps += 1;
        p.lp.set_cost(p.y[n], 0.0)?;
        if !s.status.has_solution() {
            out.ok = false;
            out.failed_status = Some(format!("{} ({})", s.status, s.raw_status));
            return Ok(out);
        }
        worst_rise(instance, x, [n].into_iter(), &s.x, &p.y, tol, &mut out);
    }
    Ok(out)
}

/// Result of [`pareto`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoCheck {
    /// No Pareto improvement exists.
    pub ok: bool,
    /// Largest gain in the sum of dominant shares with nobody worse off.
    pub total_gain: f64,
    /// A solve that did not end optimal, if any.
    pub failed_status: Option<String>,
}

/// Pareto optimality: maximise the total keeping every user at its tasks.
pub fn pareto<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    x: &[f64],
    placement: bool,
    tol: &AuditTolerance,
) -> Result<ParetoCheck, BackendError> {
    let mut p = polytope(backend, instance, placement)?;
    for n in 0..x.len() {
        protect(&mut p, instance, x, n, true)?;
        p.lp.set_cost(p.y[n], mu(instance, n))?;
    }
    let s = p.lp.solve()?;
    if !s.status.has_solution() {
        return Ok(ParetoCheck {
            ok: false,
            total_gain: f64::NAN,
            failed_status: Some(format!("{} ({})", s.status, s.raw_status)),
        });
    }
    // Gains in dominant-share units (any positive weights detect a Pareto
    // improvement; shares make users of every size count alike).
    let total: f64 = (0..x.len()).map(|n| x[n] * mu(instance, n)).sum();
    let gain = s.objective - total;
    Ok(ParetoCheck {
        ok: gain <= tol.rise,
        total_gain: gain.max(0.0),
        failed_status: None,
    })
}

/// Result of [`envy`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvyCheck {
    /// Nobody envies anybody by more than the tolerance (in dominant
    /// shares).
    pub ok: bool,
    /// The worst envy: (envious user, envied user, tasks it could run with
    /// the other's bundle scaled by w_envious / w_envied, tasks it has).
    pub worst: Option<(String, String, f64, f64)>,
    /// The worst relative excess (could - has) / max(could, has) over all
    /// pairs, users at their cap left out (0 when envy-free).
    pub worst_relative: f64,
}

/// Envy-freeness on per-server bundles: user n with user m's bundle on the
/// servers n may use could run sum_i min_r x_{m,i} D_{m,r} / D_{n,r} tasks
/// (capped at T_n), scaled by w_n / w_m. One pass over the holders of each
/// server (O(sum over users of the holders where it may run)).
pub fn envy(
    instance: &Instance,
    tasks: &[Vec<f64>],
    placement: bool,
    tol: &AuditTolerance,
) -> EnvyCheck {
    let users = instance.users();
    let (nu, k) = (users.len(), instance.num_entries());
    let x: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (m, row) in tasks.iter().enumerate() {
        for (i, &v) in row.iter().enumerate() {
            if v > 0.0 {
                holders[i].push(m);
            }
        }
    }
    let mut worst: Option<(String, String, f64, f64)> = None;
    let mut worst_gain = 0.0;
    let mut worst_relative = 0.0f64;
    let mut with = vec![0.0; nu];
    for n in instance.user_ids() {
        let dn = &users[n.0].demand;
        with.iter_mut().for_each(|v| *v = 0.0);
        for i in instance.server_ids() {
            if placement && !instance.eligible(n, i) {
                continue;
            }
            for &m in holders[i.0].iter().filter(|&&m| m != n.0) {
                with[m] += dn
                    .iter()
                    .zip(&users[m].demand)
                    .filter(|(&a, _)| a > 0.0)
                    .map(|(&a, &b)| tasks[m][i.0] * b / a)
                    .fold(INF, f64::min);
            }
        }
        let has = x[n.0];
        let at_cap = users[n.0].tasks.is_some_and(|t| has >= t * (1.0 - 1e-9));
        for m in (0..nu).filter(|&m| m != n.0 && with[m] > 0.0) {
            let scaled = with[m] * users[n.0].weight / users[m].weight;
            if !at_cap {
                worst_relative = worst_relative.max((scaled - has) / scaled.max(has).max(1e-300));
            }
            let could = scaled.min(users[n.0].tasks.unwrap_or(INF));
            let gain = (could - has) * mu(instance, n.0);
            if gain > tol.rise && gain > worst_gain {
                worst_gain = gain;
                worst = Some((users[n.0].name.clone(), users[m].name.clone(), could, has));
            }
        }
    }
    EnvyCheck {
        ok: worst.is_none(),
        worst,
        worst_relative,
    }
}
