//! Feasibility of an allocation: capacities, placement, caps, signs, row sums.

use crate::AuditTolerance;
pub use leontief_core::checks::{Feasibility, Load};
use leontief_core::{Instance, ServerId, Tasks};

const INF: f64 = f64::INFINITY;

/// Check capacities, placement (`placement`: honour `users[].servers`),
/// caps, non-negativity and the row sums.
pub fn feasibility(
    instance: &Instance,
    user_tasks: &[f64],
    tasks: &Tasks,
    placement: bool,
    tol: &AuditTolerance,
) -> Feasibility {
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let mut v = Vec::new();
    let mut excess = 0.0f64;
    if user_tasks.len() != instance.num_users() || tasks.users() != instance.num_users() {
        v.push("wrong number of users".to_string());
        return Feasibility {
            ok: false,
            max_capacity_excess: INF,
            violations: v,
            fullest: None,
        };
    }
    if tasks.servers() != k || tasks.widest() > k {
        v.push(format!(
            "tasks has {} entries per user, expected {k}",
            tasks.servers().max(tasks.widest())
        ));
        return Feasibility {
            ok: false,
            max_capacity_excess: INF,
            violations: v,
            fullest: None,
        };
    }
    let mut used = vec![0.0; k * m];
    for n in instance.user_ids() {
        let u = instance.user(n);
        let row = tasks.row(n.0);
        let sum = tasks.user_total(n.0);
        let size: f64 = row.iter().map(|(_, x)| x.abs()).sum();
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
        for (i, x) in row {
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
    let mut fullest: Option<Load> = None;
    for i in instance.server_ids() {
        for r in instance.resource_ids() {
            let c = instance.class_capacity(i, r);
            let u = used[i.0 * m + r.0];
            let e = (u - c) / c.max(1e-300);
            if u > c * (1.0 + tol.feasibility) {
                v.push(format!(
                    "{} on {} is over capacity: {} > {}",
                    instance.resources()[r.0],
                    instance.servers()[i.0].name,
                    crate::verdicts::g(u),
                    crate::verdicts::g(c)
                ));
            }
            if u > 0.0 {
                excess = excess.max(e);
                let load = if c > 0.0 { u / c } else { INF };
                if fullest.as_ref().is_none_or(|f: &Load| load > f.load) {
                    fullest = Some(Load {
                        server: instance.servers()[i.0].name.clone(),
                        resource: instance.resources()[r.0].clone(),
                        used: u,
                        capacity: c,
                        load,
                    });
                }
            }
        }
    }
    v.truncate(20);
    Feasibility {
        ok: v.is_empty(),
        max_capacity_excess: excess.max(0.0),
        violations: v,
        fullest,
    }
}
