//! The check of a production scheduler's share algorithm (`yarn-fair`,
//! `kai`, `volcano-proportion`, `kueue`) by code of its own.
//!
//! YARN's and KAI's per-resource splits are recomputed exactly: every
//! split of a parent's printed share among its children is a weighted
//! water-filling (YARN: clamped to each child's min and max share; KAI:
//! over quota after the deserved quotas), solved here by its breakpoints
//! rather than by the schedulers' bisection or rounds. A printed share
//! passes when it lies within the scheduler's own rounding of the exact
//! one: YARN truncates each share to a whole quantum and stops its
//! bisection where the truncated shares first cover the total (up to one
//! quantum per child); KAI rounds each round's part down and hands the
//! fractions out one quantum each (up to one quantum per round, and there
//! are at most one more rounds than children). Volcano's deserved vectors
//! couple the resources (a queue leaves the rounds only when every
//! resource is met), so its rounds are written again here and compared.
//! Tasks are then recomputed from the shares. For `kueue` the check is
//! that every limit and the cluster hold, that no user could be admitted
//! one more task (the loop ends when nothing fits), and the printed usage.

use leontief_core::schedulers::SchedulerDetails;
use leontief_core::verification::SchedulerCheck;
use leontief_core::{Allocation, Instance, Status, Verification};

/// Most entries listed per failing test.
const LISTED: usize = 10;
/// Relative allowance (of the resource's total) where nothing is rounded.
const REL: f64 = 1e-6;

/// Bisection steps of YARN's `ComputeFairShares` (its source's constant).
const YARN_STEPS: i32 = 25;

/// How far YARN's bisection can stop from the exact water level, in one
/// child's share: it bisects the weight-to-resource ratio R on [0, R0],
/// R0 the first power of two from 1 with every share at least the total
/// (at most twice the exact level, and at least 1 in the instance's
/// units), for 25 steps, so R is within R0 / 2^25 and a share within its
/// weight times that. The exact level is read off the exact split: a
/// child strictly inside its clamps sits at weight x level.
fn bisection_stop(w: &[f64], exact: &[f64], lo: &[f64], hi: &[f64]) -> f64 {
    let inside = (0..w.len())
        .filter(|&j| w[j] > 0.0 && exact[j] > lo[j] && exact[j] < hi[j])
        .map(|j| exact[j] / w[j])
        .fold(0.0f64, f64::max);
    let clamped = (0..w.len())
        .filter(|&j| w[j] > 0.0 && hi[j].is_finite())
        .map(|j| hi[j] / w[j])
        .fold(0.0f64, f64::max);
    let level = if inside > 0.0 { inside } else { clamped };
    let r0 = (2.0 * level).max(1.0);
    let w_max = w.iter().copied().fold(0.0f64, f64::max);
    // A hair over, for the rounding of the shares themselves.
    w_max * r0 * 2f64.powi(-YARN_STEPS) * (1.0 + 1e-9)
}

/// `sum_j clamp(w_j R, lo_j, hi_j) = total`, solved exactly for R by its
/// breakpoints; every child at `hi` when their sum is within `total`, at
/// `lo` when theirs exceeds it.
pub fn water_fill(total: f64, w: &[f64], lo: &[f64], hi: &[f64]) -> Vec<f64> {
    let n = w.len();
    let at = |r: f64| -> Vec<f64> {
        (0..n)
            .map(|j| (w[j] * r).max(lo[j]).min(hi[j].max(lo[j])))
            .collect()
    };
    let f = |r: f64| -> f64 { at(r).iter().sum() };
    let hi_sum: f64 = (0..n).map(|j| hi[j].max(lo[j])).sum();
    if hi_sum <= total {
        return at(f64::INFINITY);
    }
    if f(0.0) >= total {
        return at(0.0);
    }
    let mut points: Vec<f64> = (0..n)
        .flat_map(|j| [lo[j] / w[j], hi[j] / w[j]])
        .filter(|b| b.is_finite() && *b > 0.0)
        .collect();
    points.sort_by(f64::total_cmp);
    points.dedup();
    let mut left = 0.0;
    let mut next = None;
    for &b in &points {
        if f(b) >= total {
            next = Some(b);
            break;
        }
        left = b;
    }
    // f is linear between two breakpoints: interpolate on the segment
    // (past the last one only the unclamped children grow, and f there
    // is linear up to any point).
    let right = next.unwrap_or_else(|| 2.0 * left.max(1.0) + total);
    let (fl, fr) = (f(left), f(right));
    if fr <= fl {
        return at(left);
    }
    at(left + (total - fl) * (right - left) / (fr - fl))
}

/// The tree of the instance, read here on its own: node 0 the root, queue
/// q node q + 1; children queues first, then users, in input order.
struct View {
    kids: Vec<Vec<(bool, usize)>>,
    most: Vec<f64>,
    user_request: Vec<Vec<f64>>,
    request: Vec<Vec<f64>>,
}

fn view(instance: &Instance) -> View {
    let qs = instance.queues();
    let nodes = qs.len() + 1;
    let m = instance.num_resources();
    let total = instance.total_capacity();
    let mut parent = vec![None; nodes];
    let mut kids = vec![Vec::new(); nodes];
    for (q, queue) in qs.iter().enumerate() {
        let p = queue.parent.map_or(0, |p| p + 1);
        parent[q + 1] = Some(p);
        kids[p].push((true, q + 1));
    }
    let mut most = Vec::new();
    let mut user_request = Vec::new();
    let mut request = vec![vec![0.0; m]; nodes];
    for n in instance.user_ids() {
        let u = instance.user(n);
        let node = instance.user_queue(n).map_or(0, |q| q + 1);
        kids[node].push((false, n.0));
        let mut fit = f64::INFINITY;
        for r in 0..m {
            if u.demand[r] > 0.0 {
                fit = fit.min(total[r] / u.demand[r]);
            }
        }
        let k = u.tasks.map_or(fit, |t| t.min(fit)).floor();
        let req: Vec<f64> = u.demand.iter().map(|d| d * k).collect();
        let mut at = Some(node);
        while let Some(v) = at {
            for r in 0..m {
                request[v][r] += req[r];
            }
            at = parent[v];
        }
        most.push(k);
        user_request.push(req);
    }
    View {
        kids,
        most,
        user_request,
        request,
    }
}

/// Check `a` (a `yarn-fair`, `kai`, `volcano-proportion` or `kueue`
/// allocation) by recomputing its shares.
pub fn check(instance: &Instance, a: &Allocation) -> Verification {
    let Some(d) = a.scheduler.as_ref() else {
        return Verification::not_verified("no scheduler block printed");
    };
    let v = view(instance);
    let m = instance.num_resources();
    let total = instance.total_capacity();
    let x = &a.user_tasks;
    let mut out = SchedulerCheck {
        algorithm: d.algorithm.clone(),
        ..Default::default()
    };
    if d.users.len() != instance.num_users() || d.queues.len() != instance.queues().len() {
        return Verification::not_verified(
            "the scheduler block does not list every user and queue",
        );
    }
    // Whole tasks, caps, the cluster, every limit.
    let mut within = x.iter().all(|&t| t >= 0.0 && t.fract() == 0.0);
    let mut used = vec![0.0; m];
    for n in instance.user_ids() {
        let u = instance.user(n);
        within &= u.tasks.is_none_or(|c| x[n.0] <= c);
        for r in 0..m {
            used[r] += u.demand[r] * x[n.0];
        }
    }
    within &= (0..m).all(|r| used[r] <= total[r] * (1.0 + 1e-9));
    let usage = instance.queue_usage(x);
    for (q, queue) in instance.queues().iter().enumerate() {
        if let Some(l) = &queue.limit {
            within &= (0..m).all(|r| usage[q][r] <= l[r] * (1.0 + 1e-9) + total[r] * 1e-12);
        }
    }
    out.whole_and_within = within;
    let share_of = |node: usize| -> Vec<f64> {
        if node == 0 {
            total.to_vec()
        } else {
            d.queues[node - 1].share.clone()
        }
    };
    match d.algorithm.as_str() {
        "yarn-fair" | "kai" => per_resource(instance, &v, d, &share_of, &mut out),
        "volcano-proportion" => volcano(instance, &v, d, &mut out),
        "kueue" => kueue(instance, &v, d, &mut out),
        other => {
            return Verification::not_verified(format!("unknown scheduler algorithm {other}"));
        }
    }
    // Tasks inside shares (per-resource algorithms).
    if matches!(d.algorithm.as_str(), "yarn-fair" | "kai") {
        let trimmed = a.notes.iter().any(|s| s.contains("taken back"));
        for n in instance.user_ids() {
            let dem = &instance.user(n).demand;
            let mut k = v.most[n.0];
            for r in 0..m {
                if dem[r] > 0.0 {
                    k = k.min((d.users[n.0].share[r] / dem[r] + 1e-9).floor());
                }
            }
            let bad = if trimmed { x[n.0] > k } else { x[n.0] != k };
            if bad && out.tasks_mismatched.len() < LISTED {
                out.tasks_mismatched.push(format!(
                    "{}: {} tasks, its share admits {k}",
                    instance.user(n).name,
                    x[n.0]
                ));
            }
        }
    }
    let limited = matches!(a.status, Status::IterationLimit);
    let ok = out.whole_and_within
        && out.mismatched.is_empty()
        && (out.tasks_mismatched.is_empty() || limited)
        && a.status.has_solution();
    let property = format!(
        "{}'s own algorithm: {}; whole tasks within every limit and the cluster",
        d.algorithm, out.method
    );
    Verification {
        ok,
        property: Some(property),
        scheduler: Some(out),
        ..Verification::default()
    }
}

/// Record one share comparison.
fn compare(
    out: &mut SchedulerCheck,
    what: impl FnOnce() -> String,
    printed: f64,
    exact: f64,
    allowance: f64,
) {
    out.shares_checked += 1;
    let err = (printed - exact).abs() / allowance;
    out.worst_share_error = out.worst_share_error.max(err);
    if err > 1.0 && out.mismatched.len() < LISTED {
        out.mismatched.push(format!(
            "{}: printed {printed}, recomputed {exact} (allowance {allowance})",
            what()
        ));
    }
}

fn per_resource(
    instance: &Instance,
    v: &View,
    d: &SchedulerDetails,
    share_of: &dyn Fn(usize) -> Vec<f64>,
    out: &mut SchedulerCheck,
) {
    let yarn = d.algorithm == "yarn-fair";
    out.method = if yarn {
        "every split recomputed as the exact weighted water-filling clamped to [guarantee, min(limit, request)], allowing one quantum per child (truncation) or 1e-6 of the resource's total, plus the bisection's stop (25 steps from the first power of two at or above the level: the largest weight times that over 2^25)"
    } else {
        "every split recomputed as the deserved quotas, then the exact weighted water-filling of the rest up to each child's request (a lone child takes all), allowing one quantum per round (children + 1 rounds at most) or 1e-6 of the resource's total"
    }
    .into();
    let m = instance.num_resources();
    let total = instance.total_capacity();
    let qs = instance.queues();
    let users = instance.users();
    let quantum = d.quantum.as_deref();
    for node in 0..v.kids.len() {
        let kids = &v.kids[node];
        if kids.is_empty() {
            continue;
        }
        let parent_share = share_of(node);
        for r in 0..m {
            let unit = quantum.map(|q| q[r]);
            let round = |x: f64| unit.map_or(x, |q| (x / q + 1e-9).floor() * q);
            let mut w = Vec::new();
            let mut lo = Vec::new();
            let mut hi = Vec::new();
            let mut printed = Vec::new();
            for &(is_queue, j) in kids {
                let (weight, guarantee, limit, request, p) = if is_queue {
                    let q = &qs[j - 1];
                    (
                        q.weight,
                        q.guarantee.as_ref().map_or(0.0, |g| g[r]),
                        q.limit.as_ref().map(|l| l[r]),
                        v.request[j][r],
                        d.queues[j - 1].share[r],
                    )
                } else {
                    (
                        users[j].weight,
                        0.0,
                        None,
                        v.user_request[j][r],
                        d.users[j].share[r],
                    )
                };
                w.push(weight);
                printed.push(p);
                if yarn {
                    let max = round(limit.unwrap_or(f64::INFINITY).min(request));
                    lo.push(round(guarantee.min(max)));
                    hi.push(max);
                } else {
                    let requestable = limit.map_or(request, |l| l.min(request));
                    lo.push(guarantee.min(requestable));
                    hi.push(requestable);
                }
            }
            let exact = if yarn {
                let active: Vec<usize> = (0..kids.len()).filter(|&j| hi[j] > 0.0).collect();
                let mut e = vec![0.0; kids.len()];
                let sub = |xs: &[f64]| -> Vec<f64> { active.iter().map(|&j| xs[j]).collect() };
                let filled = water_fill(round(parent_share[r]), &sub(&w), &sub(&lo), &sub(&hi));
                for (k, &j) in active.iter().enumerate() {
                    e[j] = filled[k];
                }
                e
            } else {
                let deserved: f64 = lo.iter().sum();
                let rest = (parent_share[r] - deserved).max(0.0);
                if kids.len() == 1 {
                    vec![lo[0] + rest]
                } else {
                    let room: Vec<f64> = (0..kids.len()).map(|j| hi[j] - lo[j]).collect();
                    let zeros = vec![0.0; kids.len()];
                    let over = water_fill(rest, &w, &zeros, &room);
                    (0..kids.len()).map(|j| lo[j] + over[j]).collect()
                }
            };
            let per_child = kids.len() as f64;
            let allowance = match unit {
                Some(q) if yarn => q * per_child.max(1.0),
                Some(q) => q * (per_child + 1.0),
                None => REL * total[r].max(f64::MIN_POSITIVE),
            }
            .max(REL * total[r])
                + if yarn {
                    bisection_stop(&w, &exact, &lo, &hi)
                } else {
                    0.0
                };
            for (k, &(is_queue, j)) in kids.iter().enumerate() {
                let label = || {
                    let who = if is_queue {
                        format!("queue {}", qs[j - 1].name)
                    } else {
                        format!("user {}", users[j].name)
                    };
                    format!("{who}, {}", instance.resources()[r])
                };
                compare(out, label, printed[k], exact[k], allowance);
            }
        }
    }
}

fn volcano(instance: &Instance, v: &View, d: &SchedulerDetails, out: &mut SchedulerCheck) {
    out.method = "every flat queue's deserved vector recomputed by the proportion plugin's rounds written independently (each round the weight's part of what remains, capped by request and real capability: the cluster less the other queues' guarantees, and the tightest limit on the queue's path; raised to the guarantee), allowing 1e-6 of the resource's total; inside a queue, no user with tasks left has room for one more (in its deserved vector and under every limit on its path)".into();
    let m = instance.num_resources();
    let total = instance.total_capacity();
    let qs = instance.queues();
    let users = instance.users();
    let flat: Vec<usize> = (0..v.kids.len())
        .filter(|&n| v.kids[n].iter().any(|&(q, _)| !q))
        .collect();
    let own_request = |n: usize| -> Vec<f64> {
        let mut req = vec![0.0; m];
        for &(q, j) in &v.kids[n] {
            if !q {
                for r in 0..m {
                    req[r] += v.user_request[j][r];
                }
            }
        }
        req
    };
    let guarantee = |n: usize, r: usize| -> f64 {
        if n == 0 {
            0.0
        } else {
            qs[n - 1].guarantee.as_ref().map_or(0.0, |g| g[r])
        }
    };
    // The rounds, written here on their own: per round every queue not
    // met adds its weight's part of what remained at the round's start,
    // capped by its real capability and request, then raised to its
    // guarantee; met when its request fits or nothing changed.
    let g: Vec<Vec<f64>> = flat
        .iter()
        .map(|&n| (0..m).map(|r| guarantee(n, r)).collect())
        .collect();
    let g_total: Vec<f64> = (0..m).map(|r| g.iter().map(|x| x[r]).sum()).collect();
    let w: Vec<f64> = flat
        .iter()
        .map(|&n| if n == 0 { 1.0 } else { qs[n - 1].weight })
        .collect();
    let req: Vec<Vec<f64>> = flat.iter().map(|&n| own_request(n)).collect();
    let cap: Vec<Vec<f64>> = flat
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            (0..m)
                .map(|r| {
                    let real = total[r] - g_total[r] + g[k][r];
                    // The tightest limit on the queue's path.
                    let mut limit: Option<f64> = None;
                    let mut at = (n > 0).then(|| n - 1);
                    while let Some(q) = at {
                        if let Some(l) = &qs[q].limit {
                            limit = Some(limit.map_or(l[r], |x| x.min(l[r])));
                        }
                        at = qs[q].parent;
                    }
                    limit.map_or(real, |l| real.min(l))
                })
                .collect()
        })
        .collect();
    let mut recomputed = vec![vec![0.0; m]; flat.len()];
    let mut met = vec![false; flat.len()];
    let mut rem = total.to_vec();
    for _ in 0..10_000 {
        let weight: f64 = (0..flat.len()).filter(|&k| !met[k]).map(|k| w[k]).sum();
        if weight <= 0.0 {
            break;
        }
        let start = rem.clone();
        for k in 0..flat.len() {
            if met[k] {
                continue;
            }
            let before = recomputed[k].clone();
            let mut next: Vec<f64> = (0..m)
                .map(|r| {
                    (before[r] + start[r] * w[k] / weight)
                        .min(cap[k][r])
                        .min(req[k][r])
                })
                .collect();
            if (0..m).all(|r| req[k][r] <= next[r] + total[r] * 1e-12) || next == before {
                met[k] = true;
            }
            for r in 0..m {
                next[r] = next[r].max(g[k][r]);
                rem[r] -= next[r] - before[r];
            }
            recomputed[k] = next;
        }
        if (0..m).all(|r| rem[r] <= total[r] * 1e-9) || rem == start {
            break;
        }
    }
    for r in 0..m {
        for (k, &n) in flat.iter().enumerate() {
            let e = recomputed[k][r];
            let printed = if n == 0 {
                // The default queue's deserved vector is not printed (it
                // is not a queue of the instance): its users' usage must
                // fit in the recomputed one.
                let mut used = 0.0;
                for &(q, j) in &v.kids[0] {
                    if !q {
                        used += users[j].demand[r] * d.users[j].tasks;
                    }
                }
                if used > e + REL * total[r] && out.mismatched.len() < LISTED {
                    out.mismatched.push(format!(
                        "the default queue uses {used} of {}, above its deserved {e}",
                        instance.resources()[r]
                    ));
                }
                continue;
            } else {
                d.queues[n - 1].share[r]
            };
            let label = || format!("queue {}, {}", qs[n - 1].name, instance.resources()[r]);
            compare(out, label, printed, e, REL * total[r]);
        }
    }
    // Inside every queue: within its deserved vector, and nobody with
    // tasks left fits one more (in it and under every limit on its path).
    let x: Vec<f64> = d.users.iter().map(|u| u.tasks).collect();
    let queue_usage = instance.queue_usage(&x);
    for (k, &n) in flat.iter().enumerate() {
        let deserved: Vec<f64> = if n == 0 {
            recomputed[k].clone()
        } else {
            d.queues[n - 1].share.clone()
        };
        let mut used = vec![0.0; m];
        for &(q, j) in &v.kids[n] {
            if !q {
                for r in 0..m {
                    used[r] += users[j].demand[r] * d.users[j].tasks;
                }
            }
        }
        if (0..m).any(|r| used[r] > deserved[r] + total[r] * 1e-6)
            && out.tasks_mismatched.len() < LISTED
        {
            out.tasks_mismatched.push(format!(
                "the users of {} use more than its deserved vector",
                if n == 0 {
                    "the default queue"
                } else {
                    qs[n - 1].name.as_str()
                }
            ));
        }
        for &(q, j) in &v.kids[n] {
            if q || d.users[j].tasks + 1.0 > v.most[j] {
                continue;
            }
            // A task the fill's own slack (1e-6 of the total) would have
            // admitted counts as room only beyond twice that slack.
            let mut room =
                (0..m).all(|r| used[r] + users[j].demand[r] <= deserved[r] - total[r] * 2e-6);
            let mut at = instance.user_queue(leontief_core::UserId(j));
            while let Some(q) = at {
                if let Some(l) = &qs[q].limit {
                    room &= (0..m)
                        .all(|r| queue_usage[q][r] + users[j].demand[r] <= l[r] - total[r] * 2e-6);
                }
                at = qs[q].parent;
            }
            if room && out.tasks_mismatched.len() < LISTED {
                out.tasks_mismatched.push(format!(
                    "{}: one more task fits its queue's deserved vector and every limit",
                    users[j].name
                ));
            }
        }
    }
}

fn kueue(instance: &Instance, v: &View, d: &SchedulerDetails, out: &mut SchedulerCheck) {
    out.method = "every limit and the cluster hold; no user with tasks left can be admitted one more (every limit on its path, and the cluster less what queues off its path keep unused under their lending limits); each queue's printed usage is its users' tasks times their demands".into();
    let m = instance.num_resources();
    let total = instance.total_capacity();
    let qs = instance.queues();
    let users = instance.users();
    let x: Vec<f64> = d.users.iter().map(|u| u.tasks).collect();
    let usage = instance.queue_usage(&x);
    let mut root = vec![0.0; m];
    for (j, u) in users.iter().enumerate() {
        for r in 0..m {
            root[r] += u.demand[r] * x[j];
        }
    }
    for (q, queue) in qs.iter().enumerate() {
        for r in 0..m {
            let label = || format!("queue {} usage, {}", queue.name, instance.resources()[r]);
            compare(
                out,
                label,
                d.queues[q].share[r],
                usage[q][r],
                REL * total[r],
            );
        }
    }
    for (j, u) in users.iter().enumerate() {
        if x[j] + 1.0 > v.most[j] {
            continue;
        }
        // What queues off the user's path keep unused under their
        // lending limits is not the user's to take.
        let home = instance.user_queue(leontief_core::UserId(j));
        let on_path = |o: usize| std::iter::successors(home, |&q| qs[q].parent).any(|q| q == o);
        let mut kept = vec![0.0; m];
        for (o, queue) in qs.iter().enumerate() {
            if let (Some(g), Some(l)) = (&queue.guarantee, &queue.lending_limit) {
                if !on_path(o) {
                    for r in 0..m {
                        kept[r] += ((g[r] - l[r]).max(0.0) - usage[o][r]).max(0.0);
                    }
                }
            }
        }
        let mut fits = (0..m).all(|r| root[r] + u.demand[r] + kept[r] <= total[r] * (1.0 + 1e-12));
        let mut at = home;
        while let Some(q) = at {
            if let Some(l) = &qs[q].limit {
                fits &= (0..m).all(|r| usage[q][r] + u.demand[r] <= l[r] + total[r] * 1e-12);
            }
            at = qs[q].parent;
        }
        if fits && out.tasks_mismatched.len() < LISTED {
            out.tasks_mismatched.push(format!(
                "{}: one more task fits every limit and the cluster",
                u.name
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::water_fill;

    #[test]
    fn water_filling_meets_the_total_with_clamps() {
        let inf = f64::INFINITY;
        let x = water_fill(10.0, &[1.0, 1.0], &[0.0, 0.0], &[1.0, inf]);
        assert_eq!(x, vec![1.0, 9.0]);
        let x = water_fill(10.0, &[1.0, 2.0], &[0.0, 0.0], &[inf, inf]);
        assert!((x[0] - 10.0 / 3.0).abs() < 1e-12 && (x[1] - 20.0 / 3.0).abs() < 1e-12);
        let x = water_fill(10.0, &[1.0, 1.0], &[8.0, 0.0], &[inf, inf]);
        assert_eq!(x, vec![8.0, 2.0]);
        let x = water_fill(10.0, &[1.0, 1.0], &[0.0, 0.0], &[2.0, 3.0]);
        assert_eq!(x, vec![2.0, 3.0]);
    }
}
