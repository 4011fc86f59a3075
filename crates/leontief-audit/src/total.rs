//! The NFC certificate check: the maximum total of tasks proved by weak
//! duality, one pass over every pair, no LP.
//!
//! For prices `p_{i,r} >= 0` (per unit of resource r on entry i) and
//! `q_n >= 0` (per task of user n's cap T_n), let mu be the least price of
//! one task over every pair that can carry one:
//! `mu = min_{n,i} d_n . p_i + q_n`. For any feasible allocation x (each
//! entry within its capacity, each user within its cap):
//!
//! ```text
//!   mu sum_n X_n <= sum_{n,i} (d_n . p_i + q_n) x_{n,i}
//!               <= sum_{i,r} c_{i,r} p_{i,r} + sum_n T_n q_n =: C(p, q),
//! ```
//!
//! so `C(p, q) / mu` bounds every feasible total, and an allocation whose
//! total meets it is a maximum. Prices need not be exactly dual feasible:
//! dividing by mu makes them so, and the bound stays a proof. A positive
//! `q_n` on a user without a cap, or `mu <= 0`, proves nothing.
//!
//! A pair can carry a task when the user may run on the entry (placement)
//! and the entry has every resource the user demands. The check reads only
//! the instance, the allocation's task counts and the prices.

pub use leontief_core::checks::TotalCheck;
use leontief_core::{Instance, ServerId, TotalCertificate};

/// Check an NFC certificate against the total of `user_tasks`.
/// `placement`: honour `users[].servers`. `tolerance` bounds
/// `(bound - total) / bound`.
pub fn total_certificate(
    instance: &Instance,
    user_tasks: &[f64],
    certificate: &TotalCertificate,
    placement: bool,
    tolerance: f64,
) -> TotalCheck {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let total: f64 = user_tasks.iter().sum();
    let mut out = TotalCheck {
        ok: false,
        pairs: 0,
        total,
        bound: f64::INFINITY,
        least_task_price: 0.0,
        relative_gap: f64::INFINITY,
        violations: Vec::new(),
    };
    let prices = &certificate.prices;
    let q = &certificate.cap_prices;
    if user_tasks.len() != nu || q.len() != nu {
        out.violations
            .push("tasks or cap prices do not have one entry per user".into());
        return out;
    }
    if prices.len() != k || prices.iter().any(|row| row.len() != m) {
        out.violations
            .push(format!("prices are not one row of {m} per entry ({k})"));
        return out;
    }
    if prices
        .iter()
        .flatten()
        .chain(q)
        .any(|p| !p.is_finite() || *p < 0.0)
    {
        out.violations
            .push("a price is negative or not finite".into());
        return out;
    }
    let users = instance.users();
    let mut cost = 0.0;
    for (i, row) in prices.iter().enumerate() {
        for (c, p) in instance.class_capacities(ServerId(i)).iter().zip(row) {
            cost += c * p;
        }
    }
    for (n, u) in users.iter().enumerate() {
        match u.tasks {
            Some(t) => cost += t * q[n],
            None if q[n] > 0.0 => {
                out.violations.push(format!(
                    "users[{n}] has no task cap but a cap price of {}",
                    q[n]
                ));
                return out;
            }
            None => {}
        }
    }
    let carries = |d: &[f64], i: usize| {
        d.iter()
            .zip(instance.class_capacities(ServerId(i)))
            .all(|(&d, &c)| d == 0.0 || c > 0.0)
    };
    let mut mu = f64::INFINITY;
    let mut cheapest = None;
    for (n, u) in users.iter().enumerate() {
        let d = &u.demand;
        let mut visit = |i: usize| {
            if !carries(d, i) {
                return;
            }
            out.pairs += 1;
            let price = d.iter().zip(&prices[i]).map(|(d, p)| d * p).sum::<f64>() + q[n];
            if price < mu {
                mu = price;
                cheapest = Some((n, i));
            }
        };
        match (&u.servers, placement) {
            (Some(list), true) => list.iter().for_each(|i| visit(i.0)),
            _ => (0..k).for_each(&mut visit),
        }
    }
    if out.pairs == 0 {
        // Nothing can run: every feasible total is 0.
        out.bound = 0.0;
        out.least_task_price = f64::INFINITY;
        out.relative_gap = 0.0;
        out.ok = total == 0.0;
        return out;
    }
    out.least_task_price = mu;
    if mu <= 0.0 {
        let (n, i) = cheapest.expect("a pair was read");
        out.violations.push(format!(
            "users[{n}] on entry {i} pays nothing per task: the prices bound nothing"
        ));
        return out;
    }
    out.bound = cost / mu;
    out.relative_gap = if out.bound > 0.0 {
        (out.bound - total) / out.bound
    } else {
        0.0
    };
    out.ok = out.relative_gap <= tolerance;
    if !out.ok {
        out.violations.push(format!(
            "the prices bound the total by {} but the allocation has {total} (relative gap {})",
            out.bound, out.relative_gap
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_servers() -> Instance {
        Instance::from_json_str(
            r#"{
            "resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2], "tasks": 5}]
        }"#,
        )
        .unwrap()
    }

    fn cert(prices: Vec<Vec<f64>>, cap_prices: Vec<f64>) -> TotalCertificate {
        TotalCertificate {
            path: leontief_core::Path::Flat,
            pairs: 4,
            columns: 4,
            pricing_passes: 0,
            prices,
            cap_prices,
        }
    }

    #[test]
    fn weak_duality_bounds_and_proves_the_maximum() {
        let inst = two_servers();
        // s1: u1 alone, 10 tasks (its cpu binds), 5 per cpu. s2: u2 at its
        // cap of 5, u1 on the mem left, 1 task: 1 per mem, 0.8 per task
        // of u2's cap. Total 10 + 1 + 5 = 16; bound 2 * 5 + 2 * 1 + 5 * 0.8.
        let c = cert(vec![vec![5.0, 0.0], vec![0.0, 1.0]], vec![0.0, 0.8]);
        let check = total_certificate(&inst, &[11.0, 5.0], &c, true, 1e-9);
        assert!(check.ok, "{check:?}");
        assert!((check.bound - 16.0).abs() < 1e-12);
        assert_eq!(check.pairs, 4);
        // A total below the maximum is refused.
        let low = total_certificate(&inst, &[10.0, 5.0], &c, true, 1e-9);
        assert!(!low.ok);
        assert!((low.relative_gap - 1.0 / 16.0).abs() < 1e-12);
        // A perturbed price: u1 on s2 pays 0.9 a task, the bound grows to
        // 15.8 / 0.9 and the maximum is no longer proved.
        let soft = cert(vec![vec![5.0, 0.0], vec![0.0, 0.9]], vec![0.0, 0.8]);
        let check = total_certificate(&inst, &[11.0, 5.0], &soft, true, 1e-9);
        assert!(!check.ok);
        assert!((check.least_task_price - 0.9).abs() < 1e-12);
        // A cap price on a user without a cap proves nothing.
        let bad = cert(vec![vec![5.0, 0.0], vec![0.0, 1.0]], vec![0.5, 0.8]);
        assert!(!total_certificate(&inst, &[11.0, 5.0], &bad, true, 1e-9).ok);
        // Nor do negative prices or a wrong shape.
        let neg = cert(vec![vec![5.0, -1.0], vec![0.0, 1.0]], vec![0.0, 0.8]);
        assert!(!total_certificate(&inst, &[11.0, 5.0], &neg, true, 1e-9).ok);
        let short = cert(vec![vec![5.0, 0.0]], vec![0.0, 0.8]);
        assert!(!total_certificate(&inst, &[11.0, 5.0], &short, true, 1e-9).ok);
    }
}
