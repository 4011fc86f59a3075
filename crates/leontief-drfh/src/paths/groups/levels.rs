//! The users at their pooled levels: their tasks, each resource's use,
//! and the users nearest each resource alone.

use leontief_core::Instance;

/// Pure users' use of each resource ([`pure_users`]) at the pooled
/// levels, per unit of its total. Measured at 1,000 x 10,000 with 6
/// resources, seed 1, no verification: 1% (with [`PURE_MOST`]) 2.6 s on
/// the generator's shape, 37.8 s with weights and caps; 2% 6.7 s and
/// 41.4 s; none 28 s and 156 s.
const PURE_USE: f64 = 0.01;

/// Pure users per resource at the most: with two demand shapes
/// (`demand=bimodal`) many users tie, and 1% of a resource took many of
/// them onto every group (group LPs 0.03 -> 1 s each). 4: 1.1 / 3.7 / 58.7 s
/// (bimodal, generator's shape, caps); 8: 1.4 / 2.6 / 37.8 s.
pub(super) const PURE_MOST: usize = 8;

/// User `n`'s tasks at its pooled level (none where it runs none).
pub(super) fn tasks_at(instance: &Instance, sigma: &[f64], level: &[f64], n: usize) -> f64 {
    if level[n] > 0.0 && sigma[n] > 0.0 {
        level[n] * instance.users()[n].weight / sigma[n]
    } else {
        0.0
    }
}

/// Each resource's use at the pooled `level`s, per unit of its total.
pub(super) fn used_at(instance: &Instance, sigma: &[f64], level: &[f64]) -> Vec<f64> {
    let total = instance.total_capacity();
    let mut used = vec![0.0; total.len()];
    for (n, u) in instance.users().iter().enumerate() {
        let tasks = tasks_at(instance, sigma, level, n);
        for (a, d) in used.iter_mut().zip(&u.demand) {
            *a += tasks * d;
        }
    }
    used.iter()
        .zip(total)
        .map(|(&u, &t)| if t > 0.0 { u / t } else { 0.0 })
        .collect()
}

/// The users nearest each resource alone: per resource, the active users
/// by the share of that resource in their demand (per unit of total
/// capacity), most first, until their use of it at the pooled `level`s
/// reaches [`PURE_USE`] of its total, [`PURE_MOST`] at the most.
///
/// With 6 resources, 1,000 x 10,000, the generator's shape (seed 1), 12 of
/// 715 entries of a group stayed short in step 2: rich in the resource the
/// levels fill and poor in three others. With every user of the group
/// allowed up to twice its share they stayed short; with the 24 users
/// nearest each resource alone added, the group filled them. Such users
/// now may use every group, and step 1 spreads them where they are needed:
/// all 14 groups realise their shares, 28 -> 2.6 s.
///
/// Only where the entries outnumber twice the users (each user is in two
/// groups, so a group then has fewer users than entries). With 10,000
/// users on 10,000 entries (groups of 100 entries, about 200 users each),
/// the same rules made every 6-resource shape measured slower: few huge
/// tasks 86 -> 123 s, the lognormal shape 57 -> 102 s, weights and caps
/// 109 -> more than 150 s.
pub(super) fn pure_users(instance: &Instance, sigma: &[f64], level: &[f64]) -> Vec<bool> {
    let total = instance.total_capacity();
    let users = instance.users();
    let mut out = vec![false; users.len()];
    let active: Vec<usize> = (0..users.len())
        .filter(|&n| tasks_at(instance, sigma, level, n) > 0.0)
        .collect();
    for r in (0..total.len()).filter(|&r| total[r] > 0.0) {
        let share = |n: usize| {
            let d = &users[n].demand;
            let sum: f64 = d
                .iter()
                .zip(total)
                .map(|(&x, &t)| if t > 0.0 { x / t } else { 0.0 })
                .sum();
            if sum > 0.0 {
                d[r] / total[r] / sum
            } else {
                0.0
            }
        };
        let mut order: Vec<(f64, usize)> = active
            .iter()
            .map(|&n| (share(n), n))
            .filter(|e| e.0 > 0.0)
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut taken = 0.0;
        for (_, n) in order.into_iter().take(PURE_MOST) {
            if taken >= PURE_USE {
                break;
            }
            out[n] = true;
            taken += tasks_at(instance, sigma, level, n) * users[n].demand[r] / total[r];
        }
    }
    out
}
