//! Properties of allocations on several servers with placement (004),
//! from the allocation alone: sharing incentive, the Definition-4 PS-DSF
//! conditions, the Definition-2 bottleneck.

pub use leontief_core::checks::{PsdsfCheck, PsdsfUserCheck};
use leontief_core::{Instance, ResourceId, ServerId, Tasks, UserId};
use serde::Serialize;

/// Result of [`sharing_incentive_check`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharingIncentiveCheck {
    /// Every user runs at least its equal-split tasks (relative tolerance).
    pub holds: bool,
    /// The worst relative shortfall (equal_split - has) / equal_split (0
    /// when it holds).
    pub worst_shortfall: f64,
    /// The user furthest below its equal split, when one is below.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Shortfall>,
}

/// A user that would run more tasks with its equal split of every server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shortfall {
    /// The user.
    pub user: String,
    /// Its tasks.
    pub has: f64,
    /// Its tasks with (w_n / sum w) of every server it may use (capped).
    pub equal_split: f64,
}

/// The tasks user `n` runs with (w_n / sum w) of every server it may use,
/// capped at its task limit.
pub fn equal_split(instance: &Instance, n: UserId) -> f64 {
    let wsum: f64 = instance.users().iter().map(|u| u.weight).sum();
    let g: f64 = instance.server_ids().map(|i| instance.gamma(n, i)).sum();
    let fair = instance.user(n).weight / wsum * g;
    // A user capped below its fair share only needs its cap.
    instance.user(n).tasks.map_or(fair, |t| fair.min(t))
}

/// Sharing incentive under placement: x_n >= (w_n / sum w) sum_{i in E_n}
/// gamma_{n,i}, with the worst user as witness.
pub fn sharing_incentive_check(
    instance: &Instance,
    x: &[f64],
    tolerance: f64,
) -> SharingIncentiveCheck {
    let mut worst = (0.0f64, None);
    for n in instance.user_ids() {
        let fair = equal_split(instance, n);
        let short = if fair > 0.0 {
            ((fair - x[n.0]) / fair).max(0.0)
        } else {
            0.0
        };
        if short > worst.0 {
            worst = (short, Some((n, fair)));
        }
    }
    SharingIncentiveCheck {
        holds: worst.0 <= tolerance,
        worst_shortfall: worst.0,
        witness: worst
            .1
            .filter(|_| worst.0 > tolerance)
            .map(|(n, fair)| Shortfall {
                user: instance.user(n).name.clone(),
                has: x[n.0],
                equal_split: fair,
            }),
    }
}

/// Sharing incentive under placement: x_n >= (w_n / sum w) sum_{i in E_n}
/// gamma_{n,i}. Returns the worst relative shortfall (0 when it holds).
pub fn sharing_incentive(instance: &Instance, x: &[f64]) -> f64 {
    sharing_incentive_check(instance, x, 0.0).worst_shortfall
}

/// The exact Definition-4 check: for every user n and eligible server i,
/// some resource r with D_{n,r} > 0 is saturated on i and every other user
/// m holding r on i has s_{m,i}/w_m <= s_{n,i}/w_n.
pub fn psdsf(instance: &Instance, tasks: &Tasks, tolerance: f64) -> PsdsfCheck {
    let users = instance.users();
    let (nu, m, k) = (
        users.len(),
        instance.num_resources(),
        instance.num_entries(),
    );
    let g: Vec<Vec<f64>> = instance
        .user_ids()
        .map(|n| {
            instance
                .server_ids()
                .map(|i| instance.gamma(n, i))
                .collect()
        })
        .collect();
    let x = tasks.user_totals();
    let mut used = vec![vec![0.0; m]; k];
    let mut infeasibility = 0.0f64;
    for n in 0..nu {
        for (i, v) in tasks.row(n) {
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
    // Per server and resource, the two largest levels among the users
    // holding it (with who has the largest): O(E m) instead of comparing
    // every pair.
    let mut top: Vec<Vec<(f64, usize, f64)>> =
        vec![vec![(f64::NEG_INFINITY, usize::MAX, f64::NEG_INFINITY); m]; k];
    for n in 0..nu {
        for i in tasks
            .row(n)
            .iter()
            .filter(|&(i, x)| x > 0.0 && g[n][i] > 0.0)
            .map(|(i, _)| i)
        {
            let l = level(n, i);
            for r in (0..m).filter(|&r| users[n].demand[r] > 0.0) {
                let t = &mut top[i][r];
                if l > t.0 {
                    *t = (l, n, t.0);
                } else if l > t.2 {
                    t.2 = l;
                }
            }
        }
    }
    let out: Vec<PsdsfUserCheck> = (0..nu)
        .map(|n| {
            // A user at its cap cannot rise: it needs no saturated resource.
            if users[n]
                .tasks
                .is_some_and(|t| x[n] >= t * (1.0 - tolerance))
            {
                return PsdsfUserCheck {
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
                        let (l1, who, l2) = top[i][r];
                        let other = if who == n { l2 } else { l1 };
                        if other.is_finite() {
                            ((other - mine) / other.max(1e-300)).max(0.0)
                        } else {
                            0.0
                        }
                    })
                    .fold(f64::INFINITY, f64::min);
                let v = if best.is_finite() { best } else { 1.0 };
                if v > worst.0 {
                    worst = (v, Some(i));
                }
            }
            PsdsfUserCheck {
                server: worst.1.map(|i| instance.servers()[i].name.clone()),
                violation: if worst.0 <= tolerance { 0.0 } else { worst.0 },
            }
        })
        .collect();
    let worst_violation = out.iter().fold(0.0f64, |a, u| a.max(u.violation));
    PsdsfCheck {
        tolerance,
        holds: worst_violation <= tolerance && infeasibility <= tolerance,
        users: out,
        worst_violation,
        infeasibility,
    }
}

/// A Definition-2 bottleneck: a resource rho with D_{n,rho} / c_{i,rho} >=
/// D_{n,r} / c_{i,r} for every server entry i, resource r and user n
/// eligible on i (gamma_{n,i} > 0). The first such resource, if any (with
/// a relative tolerance of 1e-12 on the comparisons).
pub fn bottleneck(instance: &Instance) -> Option<usize> {
    let m = instance.num_resources();
    let users = instance.users();
    (0..m).find(|&rho| {
        instance.server_ids().all(|i| {
            let i = i.0;
            instance
                .user_ids()
                .filter(|&n| {
                    let g = instance.gamma(n, ServerId(i));
                    g > 0.0 && g.is_finite()
                })
                .all(|n| {
                    let n = n.0;
                    let c = |r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
                    let d = &users[n].demand;
                    if d[rho] <= 0.0 {
                        return false;
                    }
                    let mine = d[rho] / c(rho);
                    (0..m).all(|r| d[r] <= 0.0 || d[r] / c(r) <= mine * (1.0 + 1e-12))
                })
        })
    })
}
