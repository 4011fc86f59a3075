//! Separability of gamma on the eligibility graph (the checks of an
//! allocation live in leontief-audit).

use crate::Eligibility;
use leontief_core::Instance;

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
    use crate::bottleneck;

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
