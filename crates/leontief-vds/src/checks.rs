//! Checks of an allocation on several servers with placement (004), from
//! the allocation alone: sharing incentive, envy, the Definition-2
//! bottleneck, and separability of gamma on the eligibility graph.

use crate::Eligibility;
use leontief_core::{Instance, ResourceId, ServerId};

/// Sharing incentive under placement: x_n >= (w_n / sum w) sum_{i in E_n}
/// gamma_{n,i}. Returns the worst relative shortfall (0 when it holds).
pub fn sharing_incentive(instance: &Instance, x: &[f64]) -> f64 {
    let wsum: f64 = instance.users().iter().map(|u| u.weight).sum();
    instance
        .user_ids()
        .map(|n| {
            let g: f64 = instance.server_ids().map(|i| instance.gamma(n, i)).sum();
            let mut fair = instance.user(n).weight / wsum * g;
            // A user capped below its fair share only needs its cap.
            if let Some(t) = instance.user(n).tasks {
                fair = fair.min(t);
            }
            if fair > 0.0 {
                ((fair - x[n.0]) / fair).max(0.0)
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// Weighted envy under placement: the tasks n could run with m's bundles on
/// the servers n may use, scaled by w_n / w_m, against x_n; the worst
/// relative excess over all pairs (0 when the allocation is envy-free). A
/// user at its cap envies nobody.
pub fn envy(instance: &Instance, tasks: &[Vec<f64>]) -> f64 {
    let users = instance.users();
    let (nu, k) = (users.len(), instance.num_entries());
    let x: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    // Who holds tasks where: O(sum over eligible pairs of holders).
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); k];
    for (m, row) in tasks.iter().enumerate() {
        for (i, &v) in row.iter().enumerate() {
            if v > 0.0 {
                holders[i].push(m);
            }
        }
    }
    let mut with = vec![0.0; nu];
    let mut worst = 0.0f64;
    for n in instance.user_ids() {
        if users[n.0].tasks.is_some_and(|t| x[n.0] >= t * (1.0 - 1e-9)) {
            continue;
        }
        with.iter_mut().for_each(|v| *v = 0.0);
        for i in instance.server_ids().filter(|&i| instance.can_run_on(n, i)) {
            for &m in holders[i.0].iter().filter(|&&m| m != n.0) {
                with[m] += users[n.0]
                    .demand
                    .iter()
                    .zip(&users[m].demand)
                    .filter(|(&dn, _)| dn > 0.0)
                    .map(|(&dn, &dm)| tasks[m][i.0] * dm / dn)
                    .fold(f64::INFINITY, f64::min);
            }
        }
        for m in (0..nu).filter(|&m| m != n.0 && with[m] > 0.0) {
            let w = with[m] * users[n.0].weight / users[m].weight;
            worst = worst.max((w - x[n.0]) / w.max(x[n.0]).max(1e-300));
        }
    }
    worst
}

/// A Definition-2 bottleneck: a resource rho with D_{n,rho} / c_{i,rho} >=
/// D_{n,r} / c_{i,r} for every server entry i, resource r and user n
/// eligible on i (gamma_{n,i} > 0). The first such resource, if any (with
/// a relative tolerance of 1e-12 on the comparisons).
pub fn bottleneck(instance: &Instance) -> Option<usize> {
    let m = instance.num_resources();
    let elig = Eligibility::new(instance);
    let users = instance.users();
    (0..m).find(|&rho| {
        elig.on_server.iter().enumerate().all(|(i, list)| {
            list.iter().all(|&(n, _)| {
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

/// gamma_{n,i} = a_n b_i on every eligible pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Separable {
    /// a_n per user (1 for the first user of each connected component; 0
    /// for users eligible nowhere).
    pub a: Vec<f64>,
    /// b_i per server entry.
    pub b: Vec<f64>,
}

/// Whether gamma is separable on the eligibility graph (gamma_{n,i} = a_n
/// b_i wherever gamma_{n,i} > 0, to 1e-12 relative): one server,
/// proportional servers, a Definition-2 bottleneck, one eligible server
/// per user. Found by propagating a_n and b_i over each connected component
/// of the bipartite graph and checking every edge.
pub fn separable(instance: &Instance) -> Option<Separable> {
    let elig = Eligibility::new(instance);
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let mut on_user: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nu];
    for (i, list) in elig.on_server.iter().enumerate() {
        for &(n, g) in list {
            on_user[n].push((i, g));
        }
    }
    let mut a = vec![0.0; nu];
    let mut b = vec![0.0; k];
    let mut stack = Vec::new();
    for root in 0..nu {
        if a[root] > 0.0 || on_user[root].is_empty() {
            continue;
        }
        a[root] = 1.0;
        stack.push((true, root));
        while let Some((is_user, v)) = stack.pop() {
            if is_user {
                for &(i, g) in &on_user[v] {
                    let want = g / a[v];
                    if b[i] == 0.0 {
                        b[i] = want;
                        stack.push((false, i));
                    } else if (b[i] - want).abs() > 1e-12 * want {
                        return None;
                    }
                }
            } else {
                for &(n, g) in &elig.on_server[v] {
                    let want = g / b[v];
                    if a[n] == 0.0 {
                        a[n] = want;
                        stack.push((true, n));
                    } else if (a[n] - want).abs() > 1e-12 * want {
                        return None;
                    }
                }
            }
        }
    }
    Some(Separable { a, b })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig1_has_ram_as_bottleneck_and_its_variant_has_none() {
        let fig1 = |d4: &str| {
            Instance::from_json_str(&format!(
                r#"{{"resources": ["cpu", "ram", "disk"],
                "servers": [{{"name": "s1", "capacity": [12, 4, 75]}}, {{"name": "s2", "capacity": [8, 16, 0]}}],
                "users": [{{"name": "u1", "demand": [1, 1, 5]}}, {{"name": "u2", "demand": [1, 0.3333333333333333, 5]}},
                          {{"name": "u3", "demand": [0.25, 1, 0]}}, {{"name": "u4", "demand": {d4}}}]}}"#
            ))
            .unwrap()
        };
        let a = fig1("[0.5, 1, 0]");
        assert_eq!(bottleneck(&a), Some(1));
        assert!(separable(&a).is_some());
        let b = fig1("[1, 0.5, 0]");
        assert_eq!(bottleneck(&b), None);
        assert!(separable(&b).is_none());
    }

    #[test]
    fn one_server_is_separable() {
        let inst = Instance::from_json_str(
            r#"{"resources": ["cpu", "ram"], "servers": [{"name": "s", "capacity": [9, 18]}],
                "users": [{"name": "a", "demand": [1, 4]}, {"name": "b", "demand": [3, 1]}]}"#,
        )
        .unwrap();
        let s = separable(&inst).unwrap();
        assert!((s.a[1] * s.b[0] - 3.0).abs() < 1e-12);
        assert!((s.a[0] * s.b[0] - 4.5).abs() < 1e-12);
    }
}
