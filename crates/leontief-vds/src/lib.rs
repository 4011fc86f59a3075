//! Server-based mechanisms with placement constraints (004), as restated in
//! `docs/mechanisms.md`, "Server-based mechanisms".
//!
//! * gamma_{n,i} = min_{r: D_{n,r} > 0} c_{i,r} / D_{n,r} for n eligible on
//!   i (0 otherwise): the tasks n could run monopolising server entry i (a
//!   class of `count` servers is one entry of `count` times the capacity).
//! * virtual dominant share s_{n,i} = x_n / gamma_{n,i};
//! * **PS-DSF** (Definition 4) by Gauss-Seidel best responses: server i
//!   water-fills x_{n,i}(t) = max(0, t w_n gamma_{n,i} - o_n), o_n the
//!   user's tasks elsewhere, up to its saturation breakpoints (each
//!   breakpoint saturates a resource and freezes the users needing it), and
//!   the servers take turns until nothing moves; the answer carries the
//!   exact Definition-4 [`certificate`]. PS-DSF is not unique in general:
//!   this is the best-response point from zero (the selection rule is in
//!   every output).
//!
//! (TSF and DRFH with placement live on the max-min operator of
//! `leontief-drfh`; alphaPF-VDS at alpha = 1 is the proportional-fairness
//! cone program of `leontief-fds`.)
#![deny(missing_docs)]

use leontief_core::{Instance, ResourceId, ServerId, UserId};
use serde::Serialize;

/// gamma_{n,i} for every user and server entry.
pub fn gamma(instance: &Instance) -> Vec<Vec<f64>> {
    instance
        .user_ids()
        .map(|n| {
            instance
                .server_ids()
                .map(|i| instance.gamma(n, i))
                .collect()
        })
        .collect()
}

/// One user's worst Definition-4 check.
#[derive(Debug, Clone, Serialize)]
pub struct UserCertificate {
    /// The server entry where the check is tightest (name).
    pub server: Option<String>,
    /// How far it fails there (0 when it holds on every eligible server):
    /// relative excess of the largest competing s_{m,i}/w_m over
    /// s_{n,i}/w_n on the best saturated resource, or 1 when no resource
    /// the user needs is saturated on that server.
    pub violation: f64,
}

/// The Definition-4 certificate of an allocation.
#[derive(Debug, Clone, Serialize)]
pub struct Certificate {
    /// Tolerance on saturation and on share comparisons (relative).
    pub tolerance: f64,
    /// Per user.
    pub users: Vec<UserCertificate>,
    /// max over users.
    pub worst_violation: f64,
    /// The largest capacity or cap overrun (relative), and placement.
    pub infeasibility: f64,
    /// Both within the tolerance.
    pub holds: bool,
}

/// The exact Definition-4 check: for every user n and eligible server i,
/// some resource r with D_{n,r} > 0 is saturated on i and every other user
/// m holding r on i has s_{m,i}/w_m <= s_{n,i}/w_n.
pub fn certificate(instance: &Instance, tasks: &[Vec<f64>], tolerance: f64) -> Certificate {
    let users = instance.users();
    let (nu, m, k) = (
        users.len(),
        instance.num_resources(),
        instance.num_entries(),
    );
    let g = gamma(instance);
    let x: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    let mut used = vec![vec![0.0; m]; k];
    let mut infeasibility = 0.0f64;
    for n in 0..nu {
        for i in 0..k {
            let v = tasks[n][i];
            if v != 0.0 && !instance.can_run_on(UserId(n), ServerId(i)) {
                infeasibility = infeasibility.max(v.abs());
            }
            infeasibility = infeasibility.max(-v);
            for r in 0..m {
                used[i][r] += v * users[n].demand[r];
            }
        }
        if let Some(t) = users[n].tasks {
            infeasibility = infeasibility.max((x[n] - t) / t.max(1e-300));
        }
    }
    for i in 0..k {
        for r in 0..m {
            let c = instance.class_capacity(ServerId(i), ResourceId(r));
            if used[i][r] > c {
                infeasibility = infeasibility.max((used[i][r] - c) / c.max(1e-300));
            }
        }
    }
    let level = |n: usize, i: usize| x[n] / g[n][i] / users[n].weight;
    let out: Vec<UserCertificate> = (0..nu)
        .map(|n| {
            // A user at its cap cannot rise: it needs no saturated resource.
            if users[n]
                .tasks
                .is_some_and(|t| x[n] >= t * (1.0 - tolerance))
            {
                return UserCertificate {
                    server: None,
                    violation: 0.0,
                };
            }
            let mut worst: (f64, Option<usize>) = (0.0, None);
            for i in (0..k).filter(|&i| g[n][i] > 0.0) {
                let mine = level(n, i);
                let best = (0..m)
                    .filter(|&r| users[n].demand[r] > 0.0)
                    .filter(|&r| {
                        let c = instance.class_capacity(ServerId(i), ResourceId(r));
                        used[i][r] >= c * (1.0 - tolerance)
                    })
                    .map(|r| {
                        (0..nu)
                            .filter(|&o| o != n && tasks[o][i] * users[o].demand[r] > 0.0)
                            .map(|o| (level(o, i) - mine) / mine.max(1e-300))
                            .fold(0.0f64, f64::max)
                    })
                    .fold(f64::INFINITY, f64::min);
                let v = if best.is_finite() { best } else { 1.0 };
                if v > worst.0 {
                    worst = (v, Some(i));
                }
            }
            UserCertificate {
                server: worst.1.map(|i| instance.servers()[i].name.clone()),
                violation: if worst.0 <= tolerance { 0.0 } else { worst.0 },
            }
        })
        .collect();
    let worst_violation = out.iter().fold(0.0f64, |a, u| a.max(u.violation));
    Certificate {
        tolerance,
        holds: worst_violation <= tolerance && infeasibility <= tolerance,
        users: out,
        worst_violation,
        infeasibility,
    }
}

/// What [`psdsf`] returns.
#[derive(Debug, Clone)]
pub struct PsdsfOutcome {
    /// x_{n,i}.
    pub tasks: Vec<Vec<f64>>,
    /// Gauss-Seidel sweeps over the servers.
    pub sweeps: usize,
    /// True when a sweep changed nothing (to 1e-13 relative).
    pub converged: bool,
}

/// Server i's water-filling best response given the users' tasks elsewhere
/// `other` and their caps: x_{n,i}(t) = max(0, t w_n gamma_{n,i} - o_n),
/// raised until every user is frozen by a saturated resource (or its cap).
fn best_response(instance: &Instance, g: &[Vec<f64>], i: usize, other: &[f64]) -> Vec<f64> {
    let users = instance.users();
    let (nu, m) = (users.len(), instance.num_resources());
    let cap: Vec<f64> = (0..m)
        .map(|r| instance.class_capacity(ServerId(i), ResourceId(r)))
        .collect();
    let a: Vec<f64> = (0..nu).map(|n| users[n].weight * g[n][i]).collect();
    // Remaining room under each user's cap.
    let room: Vec<f64> = (0..nu)
        .map(|n| {
            users[n]
                .tasks
                .map_or(f64::INFINITY, |t| (t - other[n]).max(0.0))
        })
        .collect();
    let mut x = vec![0.0; nu];
    let mut active: Vec<bool> = (0..nu).map(|n| a[n] > 0.0 && room[n] > 0.0).collect();
    let mut fixed = vec![0.0; m];
    // Breakpoints: user n starts at b_n = o_n / a_n and stops at its cap.
    let at = |n: usize, t: f64| (t * a[n] - other[n]).clamp(0.0, room[n]);
    while active.iter().any(|&v| v) {
        // The largest t at which every resource still fits, by bisection on
        // the piecewise-linear usage (exact to the last bit of t).
        let fits = |t: f64| {
            (0..m).all(|r| {
                let u: f64 = fixed[r]
                    + (0..nu)
                        .filter(|&n| active[n])
                        .map(|n| users[n].demand[r] * at(n, t))
                        .sum::<f64>();
                u <= cap[r] * (1.0 + 1e-15)
            })
        };
        // Upper end: where every active user reaches its cap or, failing
        // that, a level that overfills some resource.
        let mut hi = (0..nu)
            .filter(|&n| active[n])
            .map(|n| (other[n] + room[n].min(1e300)) / a[n])
            .fold(0.0f64, f64::max)
            .max(1e-300);
        let mut lo = 0.0;
        if fits(hi) {
            // Every active user reaches its cap.
            let idx: Vec<usize> = (0..nu).filter(|&n| active[n]).collect();
            for n in idx {
                x[n] = at(n, hi);
                active[n] = false;
            }
            break;
        }
        while hi > lo * (1.0 + 1e-15) + 1e-300 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let t = lo;
        // Resources saturated at t (within rounding) freeze their users;
        // users at their cap freeze too.
        let usage: Vec<f64> = (0..m)
            .map(|r| {
                fixed[r]
                    + (0..nu)
                        .filter(|&n| active[n])
                        .map(|n| users[n].demand[r] * at(n, t))
                        .sum::<f64>()
            })
            .collect();
        let saturated: Vec<bool> = (0..m)
            .map(|r| cap[r] > 0.0 && usage[r] >= cap[r] * (1.0 - 1e-12))
            .collect();
        let mut froze = false;
        for n in 0..nu {
            if !active[n] {
                continue;
            }
            let blocked = (0..m).any(|r| saturated[r] && users[n].demand[r] > 0.0);
            let capped = at(n, t) >= room[n];
            if blocked || capped {
                x[n] = at(n, t);
                active[n] = false;
                froze = true;
                for r in 0..m {
                    fixed[r] += users[n].demand[r] * x[n];
                }
            }
        }
        if !froze {
            // Rounding left no resource quite saturated: freeze the users of
            // the fullest one.
            let r = (0..m)
                .filter(|&r| cap[r] > 0.0)
                .max_by(|&p, &q| (usage[p] / cap[p]).total_cmp(&(usage[q] / cap[q])))
                .expect("a resource");
            let idx: Vec<usize> = (0..nu)
                .filter(|&n| active[n] && users[n].demand[r] > 0.0)
                .collect();
            for n in idx {
                x[n] = at(n, t);
                active[n] = false;
                for s in 0..m {
                    fixed[s] += users[n].demand[s] * x[n];
                }
            }
        }
    }
    x
}

/// PS-DSF by Gauss-Seidel best responses from zero (see the crate docs).
pub fn psdsf(instance: &Instance, max_sweeps: usize) -> PsdsfOutcome {
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let g = gamma(instance);
    let mut tasks = vec![vec![0.0; k]; nu];
    let mut sweeps = 0;
    let mut converged = false;
    while sweeps < max_sweeps {
        sweeps += 1;
        let mut change = 0.0f64;
        let mut scale = 0.0f64;
        for i in 0..k {
            let other: Vec<f64> = (0..nu)
                .map(|n| tasks[n].iter().sum::<f64>() - tasks[n][i])
                .collect();
            let x = best_response(instance, &g, i, &other);
            for n in 0..nu {
                change = change.max((x[n] - tasks[n][i]).abs());
                scale = scale.max(x[n].abs());
                tasks[n][i] = x[n];
            }
        }
        if change <= 1e-13 * scale.max(1e-300) {
            converged = true;
            break;
        }
    }
    PsdsfOutcome {
        tasks,
        sweeps,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig1(d4: [f64; 3]) -> Instance {
        Instance::from_json_str(&format!(
            r#"{{"resources": ["cpu", "ram", "disk"],
                "servers": [{{"name": "s1", "capacity": [12, 4, 75]}}, {{"name": "s2", "capacity": [8, 16, 0]}}],
                "users": [{{"name": "u1", "demand": [1, 1, 5]}}, {{"name": "u2", "demand": [1, 0.3333333333333333, 5]}},
                          {{"name": "u3", "demand": [0.25, 1, 0]}}, {{"name": "u4", "demand": [{}, {}, {}]}}]}}"#,
            d4[0], d4[1], d4[2]
        ))
        .unwrap()
    }

    #[test]
    fn fig1_and_its_variant() {
        for (d4, want) in [
            ([0.5, 1.0, 0.0], [2.0, 6.0, 8.0, 8.0]),
            ([1.0, 0.5, 0.0], [2.0, 6.0, 32.0 / 3.0, 16.0 / 3.0]),
        ] {
            let inst = fig1(d4);
            let o = psdsf(&inst, 10_000);
            assert!(o.converged);
            let x: Vec<f64> = o.tasks.iter().map(|r| r.iter().sum()).collect();
            for (a, b) in x.iter().zip(want) {
                assert!((a - b).abs() < 1e-9, "{x:?} vs {want:?}");
            }
            let c = certificate(&inst, &o.tasks, 1e-9);
            assert!(c.holds, "{c:?}");
        }
    }

    #[test]
    fn the_certificate_rejects_a_perturbed_allocation() {
        let inst = fig1([0.5, 1.0, 0.0]);
        let mut t = psdsf(&inst, 10_000).tasks;
        // Move a little of u3 from s2 to nothing: s2's RAM is no longer
        // saturated, so u3 (and u4) could rise there.
        t[2][1] *= 0.99;
        let c = certificate(&inst, &t, 1e-9);
        assert!(!c.holds);
    }
}
