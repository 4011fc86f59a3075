//! Whether an outcome's round certificates prove its allocation, by the
//! weak-duality room `leontief-audit` checks, computed here on its own
//! (the audit crate stays independent of the operator).

use crate::outcome::MaxMinOutcome;
use crate::settings::BLOCKED_ROOM;
use leontief_core::{Instance, ServerId, UserId};
use rayon::prelude::*;

/// Capacity whose rise is round-off: the audit's `CAPACITY_ROUNDING`.
const CAPACITY_ROUNDING: f64 = 1e-12;

/// Whether the rounds' prices (`out.certificates`) prove `out`'s
/// allocation: the weak-duality room of each user a round proves, as the
/// audit's certificate check computes it, at most [`BLOCKED_ROOM`] of its
/// tasks (the audit allows 1e-6). For the paths whose allocation is not
/// the LP point the prices came from (the groups realise the pooled
/// rounds' levels) or whose prices are interior (the rounds on the block
/// interior point method with placement lists). The groups' LPs leave a
/// little capacity idle, and a round's proof charges all of it to each
/// of its users: 2e-10 of the CPU idle left each of 8,000 users room
/// 1.9e-6 (k-DF with a GPU on a fifth of the servers, 10,000 x 10,000, 2
/// resources, seed 2). Without placement lists each round's prices are
/// read once per distinct row of prices and resources held, so the check
/// costs O(N x distinct rows), not O(pairs); with them, O(pairs).
pub(crate) fn proved(
    out: &MaxMinOutcome,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
) -> bool {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let users = instance.users();
    let tasks: Vec<f64> = (0..nu).map(|n| out.tasks.user_total(n)).collect();
    let level = |n: usize| sigma[n] * tasks[n] / users[n].weight;
    let total = instance.total_capacity();
    let lists = placement && instance.has_placement();
    for c in &out.certificates {
        if c.prices.len() != k * m {
            return false;
        }
        let row = |i: usize| &c.prices[i * m..(i + 1) * m];
        let mut distinct: std::collections::HashMap<(Vec<u64>, Vec<bool>), usize> =
            Default::default();
        let mut cost = 0.0;
        for i in 0..k {
            let cap = instance.class_capacities(ServerId(i));
            cost += cap.iter().zip(row(i)).map(|(a, p)| a * p).sum::<f64>();
            let key = (
                row(i).iter().map(|p| p.to_bits()).collect(),
                cap.iter().map(|&a| a > 0.0).collect(),
            );
            distinct.entry(key).or_insert(i);
        }
        let reps: Vec<usize> = distinct.into_values().collect();
        // Each user's cheapest task and the entry it is cheapest on.
        let best: Vec<(f64, Option<usize>)> = (0..nu)
            .into_par_iter()
            .map(|n| {
                let d = &users[n].demand;
                let holds = |i: usize| {
                    d.iter()
                        .zip(instance.class_capacities(ServerId(i)))
                        .all(|(&x, &a)| x == 0.0 || a > 0.0)
                };
                let listed: Vec<usize> = if lists {
                    instance
                        .runnable_entries(UserId(n), placement)
                        .map(|i| i.0)
                        .filter(|&i| holds(i))
                        .collect()
                } else {
                    reps.iter().copied().filter(|&i| holds(i)).collect()
                };
                listed
                    .iter()
                    .map(|&i| {
                        (
                            d.iter().zip(row(i)).map(|(x, p)| x * p).sum::<f64>(),
                            Some(i),
                        )
                    })
                    .fold((f64::INFINITY, None), |a, b| if b.0 < a.0 { b } else { a })
            })
            .collect();
        let u = |n: usize| {
            if best[n].0.is_finite() {
                best[n].0
            } else {
                0.0
            }
        };
        let (mut held, mut later) = (0.0, 0.0);
        for n in (0..nu).filter(|&n| out.frozen_round[n] > 0) {
            if out.frozen_round[n] <= c.round {
                held += u(n) * tasks[n];
            } else {
                later += u(n) * users[n].weight / sigma[n];
            }
        }
        for &n in &c.users {
            let room = (cost - held - level(n) * later).max(0.0);
            let denominator = u(n) * tasks[n];
            let own_scale: f64 = best[n]
                .1
                .map_or(0.0, |i| total.iter().zip(row(i)).map(|(a, p)| a * p).sum());
            if !(denominator > 0.0
                && (room <= BLOCKED_ROOM * denominator || room <= CAPACITY_ROUNDING * own_scale))
            {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::proved;
    use crate::outcome::{MaxMinOutcome, RoundCertificate};
    use leontief_core::{Instance, RawInstance, RawServer, RawUser, Tasks};

    /// A user listed only on the dearer entry pays that entry's price:
    /// the round is proved with the lists, not without them (where the
    /// same user could move to the cheaper entry).
    #[test]
    fn a_listed_user_pays_the_price_of_its_own_entries() {
        let user = |name: &str, demand: f64, server: &str| RawUser {
            name: name.into(),
            demand: vec![demand],
            weight: None,
            tasks: None,
            servers: Some(vec![server.into()]),
            rank_weights: None,
            queue: None,
        };
        let server = |name: &str| RawServer {
            name: name.into(),
            capacity: vec![1.0],
            count: None,
        };
        let inst = Instance::new(RawInstance {
            name: None,
            description: None,
            resources: vec!["cpu".into()],
            servers: vec![server("dear"), server("cheap")],
            users: vec![user("a", 1.0, "dear"), user("b", 0.5, "cheap")],
            queues: None,
            quantum: None,
        })
        .expect("valid");
        let mut o = MaxMinOutcome::start(2, 2);
        o.tasks = Tasks::from_rows(2, vec![vec![(0, 1.0)], vec![(1, 2.0)]]);
        o.frozen_round = vec![1, 1];
        o.certificates = vec![RoundCertificate {
            round: 1,
            prices: vec![1.0, 0.5],
            users: vec![0, 1],
        }];
        let sigma = [1.0, 1.0];
        assert!(proved(&o, &inst, &sigma, true));
        assert!(!proved(&o, &inst, &sigma, false));
    }
}
