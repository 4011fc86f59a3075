//! Bottleneck-based fairness (003) from an allocation alone: condition
//! (2) on the pooled model, and the Eisenberg-Gale duality gap of printed
//! prices.

pub use leontief_core::checks::{BbfCheck, UserCheck};
use leontief_core::Instance;

/// Condition (2) of BBF on fractions `x` of a pooled model: requests
/// `r` (row-major N x m, r_{n,j} per unit of x_n as a fraction of the
/// pooled capacity), entitlements `e`, bounds `ub` (1 for capped users,
/// infinite otherwise), resource names.
pub fn condition2(
    resources: &[String],
    r: &[f64],
    e: &[f64],
    ub: &[f64],
    x: &[f64],
    tolerance: f64,
) -> BbfCheck {
    let m = resources.len();
    let req = |n: usize, j: usize| r[n * m + j];
    let mut loads = vec![0.0; m];
    for (n, &xn) in x.iter().enumerate() {
        if xn != 0.0 {
            for (j, l) in loads.iter_mut().enumerate() {
                *l += xn * req(n, j);
            }
        }
    }
    let jset: Vec<usize> = (0..m).filter(|&j| loads[j] >= 1.0 - tolerance).collect();
    let mut infeasibility = loads.iter().fold(0.0f64, |a, &l| a.max(l - 1.0));
    let users: Vec<UserCheck> = (0..e.len())
        .map(|n| {
            infeasibility = infeasibility.max(x[n] - ub[n]).max(-x[n]);
            let full = ub[n].is_finite() && x[n] >= ub[n] - tolerance;
            let best = jset
                .iter()
                .filter(|&&j| req(n, j) > 0.0)
                .map(|&j| (j, x[n] * req(n, j)))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            let margin = best.map_or(-e[n], |(_, v)| v - e[n]);
            UserCheck {
                full,
                witness: best.map(|(j, _)| resources[j].clone()),
                margin,
                violation: if full { 0.0 } else { (-margin).max(0.0) },
            }
        })
        .collect();
    let worst_violation = users.iter().fold(0.0f64, |a, u| a.max(u.violation));
    BbfCheck {
        tolerance,
        bottlenecks: jset.iter().map(|&j| resources[j].clone()).collect(),
        bottleneck_ids: jset,
        loads,
        holds: worst_violation <= tolerance && infeasibility <= tolerance,
        users,
        worst_violation,
        infeasibility,
    }
}

/// The pooled model of BBF (003) written out from the instance: every
/// server pooled into one of capacity C, r_{n,j} = T_n D_{n,j} / C_j
/// (T_n the cap, or 1), e_n = w_n / sum w, and x_n in [0, 1] for capped
/// users. `None` when a user demands a resource of total capacity 0.
pub struct Pooled {
    /// Resource names.
    pub resources: Vec<String>,
    /// r_{n,j}, row-major.
    pub r: Vec<f64>,
    /// e_n.
    pub e: Vec<f64>,
    /// Bound of x_n.
    pub ub: Vec<f64>,
    /// Tasks per unit of x_n.
    pub unit: Vec<f64>,
}

impl Pooled {
    /// The pooled model of `instance`.
    pub fn new(instance: &Instance) -> Option<Pooled> {
        let cap = instance.total_capacity();
        let wsum: f64 = instance.users().iter().map(|u| u.weight).sum();
        let mut p = Pooled {
            resources: instance.resources().to_vec(),
            r: Vec::new(),
            e: Vec::new(),
            ub: Vec::new(),
            unit: Vec::new(),
        };
        for u in instance.users() {
            let t = u.tasks.unwrap_or(1.0);
            for (j, &d) in u.demand.iter().enumerate() {
                if d > 0.0 && cap[j] <= 0.0 {
                    return None;
                }
                p.r.push(if d > 0.0 { t * d / cap[j] } else { 0.0 });
            }
            p.e.push(u.weight / wsum);
            p.ub.push(if u.tasks.is_some() {
                1.0
            } else {
                f64::INFINITY
            });
            p.unit.push(t);
        }
        Some(p)
    }
}

/// g(p) - sum_n e_n log x_n, written out from the instance (weights, caps,
/// demands, capacities) rather than through the pool: for any p >= 0,
/// g(p) = sum_j p_j + sum_n max_{0 < y <= ub_n} (e_n log y - q_n y) bounds
/// the Eisenberg-Gale optimum from above.
pub fn duality_gap(instance: &Instance, tasks: &[f64], p: &[f64]) -> f64 {
    let cap = instance.total_capacity();
    let wsum: f64 = instance.users().iter().map(|u| u.weight).sum();
    let mut g: f64 = p.iter().sum();
    let mut f = 0.0;
    for (u, &t) in instance.users().iter().zip(tasks) {
        let e = u.weight / wsum;
        let unit = u.tasks.unwrap_or(1.0);
        let q: f64 = (0..p.len())
            .filter(|&j| u.demand[j] > 0.0)
            .map(|j| unit * u.demand[j] / cap[j] * p[j])
            .sum();
        let ub = if u.tasks.is_some() {
            1.0
        } else {
            f64::INFINITY
        };
        g += if q > 0.0 && e / q <= ub {
            e * (e / q).ln() - e
        } else if ub.is_finite() {
            -q
        } else {
            f64::INFINITY
        };
        f += e * (t / unit).ln();
    }
    g - f
}
