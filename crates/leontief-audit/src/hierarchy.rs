//! The check of a hierarchical allocation (`hdrf`, `hdrfh`, `hdrf-naive`)
//! from its printed trace, by code of its own: the shares of every queue
//! are recomputed here (recursively over the queue tree) from the rules of
//! docs/mechanisms.md, and every "stuck" is decided by arithmetic on the
//! pool or by an LP over the servers, never by the solver's own code.
//!
//! An `hdrfh` answer found by the filling on the pool and placed on the
//! servers (`on_pool`) has its stops checked on the pool (stuck there is
//! stuck on the servers, whose feasible totals lie inside the pool's)
//! and its feasibility on the servers; one found on the groups every
//! placement list holds alike (`on_list_groups`), on those groups as
//! this crate merges them (`list_groups`).
//!
//! Checked: feasibility (on the pool for pooled mechanisms); every
//! queue's usage within its limit; the phases replay to the printed tasks;
//! in every phase, at its start and at its end, each growing user's path
//! from the root passes only through children at the lowest share among
//! their open siblings; every
//! user the trace says stopped at a phase start could not grow there
//! (task cap, a queue's limit or guarantee in the guarantee stage, no
//! guaranteed queue above it in that stage, or no room while every other
//! user keeps its tasks); and at the end every user is stuck so.

use crate::polytope::{mu, polytope, solve};
use crate::AuditTolerance;
use leontief_core::verification::HierarchyCheck;
use leontief_core::{Allocation, Instance, Tasks, UserId, Verification};
use leontief_model::{BackendError, LoadedLp, LpBackend};

/// The relative tolerance of the lowest-share test.
const LOWEST: f64 = 1e-6;
/// How much of its tasks a user kept at its place may give up in the
/// "can another grow" LP.
const KEEP: f64 = 1e-9;
/// Most entries listed per failing test.
const LISTED: usize = 10;

/// One stage's rules: each queue's limit, and who takes part.
struct StageRules {
    limit: Vec<Option<Vec<f64>>>,
    eligible: Vec<bool>,
}

fn stage_rules(instance: &Instance, stage: &str) -> StageRules {
    let qs = instance.queues();
    let guarantee = stage == "guarantee";
    let limit = qs
        .iter()
        .map(|q| match (guarantee, &q.guarantee, &q.limit) {
            (true, Some(g), Some(l)) => Some(g.iter().zip(l).map(|(a, b)| a.min(*b)).collect()),
            (true, Some(g), None) => Some(g.clone()),
            (_, _, l) => l.clone(),
        })
        .collect();
    let eligible = instance
        .user_ids()
        .map(|n| {
            !guarantee || {
                let mut q = instance.user_queue(n);
                let mut found = false;
                while let Some(i) = q {
                    found |= qs[i].guarantee.is_some();
                    q = qs[i].parent;
                }
                found
            }
        })
        .collect();
    StageRules { limit, eligible }
}

/// Usage of every queue's subtree.
fn queue_usage(instance: &Instance, x: &[f64]) -> Vec<Vec<f64>> {
    let qs = instance.queues();
    let m = instance.num_resources();
    let mut out = vec![vec![0.0; m]; qs.len()];
    for n in instance.user_ids() {
        let mut q = instance.user_queue(n);
        while let Some(i) = q {
            for (o, &d) in out[i].iter_mut().zip(&instance.user(n).demand) {
                *o += d * x[n.0];
            }
            q = qs[i].parent;
        }
    }
    out
}

/// The hierarchical shares at one point: per queue (share, open), per
/// user share.
struct Point {
    queue_share: Vec<f64>,
    queue_open: Vec<bool>,
    user_share: Vec<f64>,
}

fn shares(instance: &Instance, x: &[f64], blocked: &[bool], naive: bool) -> Point {
    let qs = instance.queues();
    let total = instance.total_capacity();
    let m = instance.num_resources();
    let ignored: Vec<bool> = (0..m)
        .map(|r| {
            !naive
                && !instance
                    .user_ids()
                    .any(|n| !blocked[n.0] && instance.user(n).demand[r] > 0.0)
        })
        .collect();
    let user_share: Vec<f64> = instance
        .user_ids()
        .map(|n| x[n.0] * mu(instance, n.0) / instance.user(n).weight)
        .collect();
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); qs.len()];
    for (i, q) in qs.iter().enumerate() {
        if let Some(p) = q.parent {
            kids[p].push(i);
        }
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); qs.len()];
    for n in instance.user_ids() {
        if let Some(q) = instance.user_queue(n) {
            members[q].push(n.0);
        }
    }
    struct Walk<'a> {
        instance: &'a Instance,
        x: &'a [f64],
        blocked: &'a [bool],
        kids: &'a [Vec<usize>],
        members: &'a [Vec<usize>],
        ignored: &'a [bool],
        total: &'a [f64],
        naive: bool,
        user_share: &'a [f64],
        share: Vec<f64>,
        open: Vec<bool>,
    }
    // Returns queue i's vector.
    fn walk(w: &mut Walk, i: usize) -> Vec<f64> {
        let m = w.total.len();
        // (share, vector, open) of every child.
        let mut children: Vec<(f64, Vec<f64>, bool)> = Vec::new();
        for &c in &w.kids[i].clone() {
            let v = walk(w, c);
            children.push((w.share[c], v, w.open[c]));
        }
        for &n in &w.members[i] {
            let d = &w.instance.users()[n].demand;
            children.push((
                w.user_share[n],
                d.iter().map(|&d| d * w.x[n]).collect(),
                !w.blocked[n],
            ));
        }
        let low = children
            .iter()
            .filter(|c| c.2)
            .map(|c| c.0)
            .fold(f64::INFINITY, f64::min);
        let mut v = vec![0.0; m];
        for (s, cv, open) in &children {
            let scale = if !w.naive && *open && *s > low {
                low / s
            } else {
                1.0
            };
            for r in 0..m {
                v[r] += scale * cv[r];
            }
        }
        let mut top = 0.0f64;
        for r in 0..m {
            if !w.ignored[r] && w.total[r] > 0.0 {
                top = top.max(v[r] / w.total[r]);
            }
        }
        w.share[i] = top / w.instance.queues()[i].weight;
        w.open[i] = children.iter().any(|c| c.2);
        v
    }
    let mut w = Walk {
        instance,
        x,
        blocked,
        kids: &kids,
        members: &members,
        ignored: &ignored,
        total,
        naive,
        user_share: &user_share,
        share: vec![0.0; qs.len()],
        open: vec![false; qs.len()],
    };
    for (i, q) in qs.iter().enumerate() {
        if q.parent.is_none() {
            walk(&mut w, i);
        }
    }
    Point {
        queue_share: w.share,
        queue_open: w.open,
        user_share,
    }
}

/// Is user `n`'s path from the root through lowest-share children only?
fn lowest(instance: &Instance, p: &Point, blocked: &[bool], n: usize) -> bool {
    let qs = instance.queues();
    // Children of a parent (None: the root): (share, open).
    let siblings = |parent: Option<usize>| -> Vec<(f64, bool)> {
        let mut v: Vec<(f64, bool)> = qs
            .iter()
            .enumerate()
            .filter(|(_, q)| q.parent == parent)
            .map(|(i, _)| (p.queue_share[i], p.queue_open[i]))
            .collect();
        v.extend(
            instance
                .user_ids()
                .filter(|&u| instance.user_queue(u) == parent)
                .map(|u| (p.user_share[u.0], !blocked[u.0])),
        );
        v
    };
    let ok = |parent: Option<usize>, share: f64, open: bool| -> bool {
        let low = siblings(parent)
            .iter()
            .filter(|s| s.1)
            .map(|s| s.0)
            .fold(f64::INFINITY, f64::min);
        open && share <= low * (1.0 + LOWEST) + 1e-12
    };
    let mut at = instance.user_queue(UserId(n));
    if !ok(at, p.user_share[n], !blocked[n]) {
        return false;
    }
    while let Some(i) = at {
        if !ok(qs[i].parent, p.queue_share[i], p.queue_open[i]) {
            return false;
        }
        at = qs[i].parent;
    }
    true
}

/// The LPs of the "stuck" tests: on the pool (`placement` false) or the
/// servers.
struct Lps<'a, B> {
    backend: &'a B,
    instance: &'a Instance,
    placement: bool,
    solved: usize,
}

/// The users of `users` that are not stuck at `x` under `rules`: those
/// with no closed-form reason (not in the stage, cannot run, at the cap,
/// a queue above at its limit or guarantee of a resource they demand)
/// that rise in one LP maximising their dominant shares while every user
/// keeps its tasks (to KEEP). Any user able to rise alone makes that
/// optimum rise, so an LP that raises nobody proves them all stuck.
/// Undecided (no LP solution): all of them.
fn not_stuck<B: LpBackend>(
    lp: &mut Lps<B>,
    rules: &StageRules,
    usage: &[Vec<f64>],
    x: &[f64],
    users: &[usize],
) -> Result<Vec<usize>, BackendError> {
    let (backend, instance, placement) = (lp.backend, lp.instance, lp.placement);
    let tol = AuditTolerance::default();
    let qs = instance.queues();
    let open: Vec<usize> = users
        .iter()
        .copied()
        .filter(|&n| {
            let user = instance.user(UserId(n));
            if !rules.eligible[n] || mu(instance, n) == 0.0 {
                return false;
            }
            if user
                .tasks
                .is_some_and(|c| x[n] >= c * (1.0 - tol.feasibility))
            {
                return false;
            }
            let mut at = instance.user_queue(UserId(n));
            while let Some(i) = at {
                if let Some(l) = &rules.limit[i] {
                    if (0..l.len()).any(|r| {
                        user.demand[r] > 0.0 && usage[i][r] >= l[r] * (1.0 - tol.feasibility)
                    }) {
                        return false;
                    }
                }
                at = qs[i].parent;
            }
            true
        })
        .collect();
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let mut p = polytope(backend, instance, placement)?;
    for (m, &xm) in x.iter().enumerate() {
        let cap = instance.users()[m].tasks.unwrap_or(f64::INFINITY);
        p.lp.set_col_bounds(p.y[m], (xm * (1.0 - KEEP)).min(cap), cap)?;
    }
    for &n in &open {
        p.lp.set_cost(p.y[n], mu(instance, n))?;
    }
    let s = solve(&mut p)?;
    lp.solved += 1;
    if !s.status.has_solution() {
        return Ok(open);
    }
    Ok(open
        .into_iter()
        .filter(|&n| (s.x[p.y[n].0] - x[n]) * mu(instance, n) > tol.rise)
        .collect())
}

/// Check `a`, printed by a hierarchical mechanism (`naive`: the naive
/// rules).
///
/// `full` false: feasibility only (`--verify never`), not verified.
pub fn check<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    a: &Allocation,
    naive: bool,
    full: bool,
) -> Result<Verification, BackendError> {
    let tol = AuditTolerance::default();
    let Some(h) = a.hierarchy.as_ref() else {
        return Ok(Verification::not_verified("no hierarchy trace printed"));
    };
    if !a.status.has_solution() {
        return Ok(crate::verify::nothing_to_check(a));
    }
    // Stops are decided on the pool for pooled mechanisms, and for an
    // hdrfh answer the filling found on the pool (`on_pool`): the
    // servers' feasible totals lie inside the pool's, so a user stuck on
    // the pool is stuck on the servers; the allocation itself is checked
    // on the servers below.
    // An hdrfh answer found on the groups every placement list holds
    // alike has its stops checked on those groups, merged here.
    let (checked_on, placement) = if a.pooled || h.on_pool {
        (instance.pooled(), false)
    } else if let Some(groups) = h
        .on_list_groups
        .then(|| crate::list_groups::pooled_by_lists(instance))
        .flatten()
    {
        (groups, true)
    } else {
        (instance.clone(), true)
    };
    let feas = if a.pooled {
        let single = Tasks::from_rows(1, a.user_tasks.iter().map(|&x| vec![(0, x)]).collect());
        crate::feasibility(&checked_on, &a.user_tasks, &single, false, &tol)
    } else {
        crate::feasibility(instance, &a.user_tasks, &a.tasks, true, &tol)
    };
    if !full {
        return Ok(Verification {
            ok: false,
            checked: Some("feasibility only".into()),
            reason: Some("verification not asked for (--verify never)".into()),
            feasibility: Some(feas),
            ..Verification::default()
        });
    }
    let n = instance.num_users();
    let final_usage = queue_usage(instance, &a.user_tasks);
    let limits_held = instance.queues().iter().zip(&final_usage).all(|(q, u)| {
        q.limit.as_ref().is_none_or(|l| {
            l.iter()
                .zip(u)
                .all(|(&l, &u)| u <= l * (1.0 + tol.feasibility) + 1e-12)
        })
    });
    let mut out = HierarchyCheck {
        limits_held,
        ..HierarchyCheck::default()
    };
    let mut lps = Lps {
        backend,
        instance: &checked_on,
        placement,
        solved: 0,
    };
    let mut x = vec![0.0; n];
    let mut blocked = vec![false; n];
    let mut stage = String::new();
    let mut rules = stage_rules(instance, "fair");
    for phase in &h.phases {
        if phase.stage != stage {
            stage = phase.stage.clone();
            rules = stage_rules(instance, &stage);
            blocked = vec![false; n];
        }
        let usage = queue_usage(instance, &x);
        let claimed: Vec<usize> = phase.blocked.iter().copied().filter(|&u| u < n).collect();
        for &u in &claimed {
            blocked[u] = true;
        }
        for u in not_stuck(&mut lps, &rules, &usage, &x, &claimed)? {
            if out.not_stuck.len() < LISTED {
                out.not_stuck.push(format!(
                    "{} at the start of phase {} ({})",
                    instance.users()[u].name,
                    out.phases + 1,
                    stage
                ));
            }
        }
        let p = shares(instance, &x, &blocked, naive);
        for &u in &phase.users {
            if u < n && !lowest(instance, &p, &blocked, u) && out.not_lowest.len() < LISTED {
                out.not_lowest.push(format!(
                    "{} in phase {} ({})",
                    instance.users()[u].name,
                    out.phases + 1,
                    stage
                ));
            }
        }
        for (&u, &r) in phase.users.iter().zip(&phase.rates) {
            if u < n {
                x[u] += phase.length * r;
            }
        }
        // Growth keeps the growing users lowest up to the phase's end (a
        // faster sibling, or one grown alone, leaves the others behind).
        let p = shares(instance, &x, &blocked, naive);
        for &u in &phase.users {
            if u < n && !lowest(instance, &p, &blocked, u) && out.not_lowest.len() < LISTED {
                out.not_lowest.push(format!(
                    "{} at the end of phase {} ({})",
                    instance.users()[u].name,
                    out.phases + 1,
                    stage
                ));
            }
        }
        out.phases += 1;
    }
    out.replay_error = x
        .iter()
        .zip(&a.user_tasks)
        .map(|(r, t)| (r - t).abs() / t.abs().max(1.0))
        .fold(0.0, f64::max);
    let rules = stage_rules(instance, "fair");
    let everyone: Vec<usize> = (0..n).collect();
    for u in not_stuck(&mut lps, &rules, &final_usage, &a.user_tasks, &everyone)? {
        if out.not_stuck.len() < LISTED {
            out.not_stuck
                .push(format!("{} at the end", instance.users()[u].name));
        }
    }
    out.lps = lps.solved;
    let ok = feas.ok
        && out.limits_held
        && out.replay_error <= 1e-6
        && out.not_lowest.is_empty()
        && out.not_stuck.is_empty();
    Ok(Verification {
        ok,
        property: Some(format!(
            "{} progressive filling over the queue tree: feasible; limits held; the printed phases replay to the tasks; each phase grows only users whose queue path is at the lowest share among open siblings, from its start to its end; every stop claimed, and every user at the end, is stuck (cap, queue limit or guarantee, or no room while the others keep their tasks){}",
            if naive { "naive hierarchical DRF" } else { "H-DRF" },
            if h.on_pool && !a.pooled {
                " on the pooled capacity, which implies it on the servers (the allocation is feasible on the servers)"
            } else if h.on_list_groups && !a.pooled {
                " on the groups of servers every placement list holds alike, each pooled, which implies it on the servers (the allocation is feasible on the servers)"
            } else {
                ""
            }
        )),
        feasibility: Some(feas),
        hierarchy: Some(out),
        ..Verification::default()
    })
}
