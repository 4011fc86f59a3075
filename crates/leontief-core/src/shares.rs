//! The share of one task each max-min mechanism equalises (sigma_n): the
//! definitions the solvers and the independent checks both read.

use crate::Instance;

/// 1 / y_n for every user, y_n = sum_i gamma'_{n,i}: the tasks it could run
/// monopolising every server, placement ignored (TSF's share of one task).
/// A user that can run nowhere gets 0 (it is fixed at zero).
pub fn tsf_sigma(instance: &Instance) -> Vec<f64> {
    instance
        .user_ids()
        .map(|n| {
            let d = &instance.user(n).demand;
            let y: f64 = instance
                .server_ids()
                .map(|i| {
                    d.iter()
                        .zip(instance.class_capacities(i))
                        .filter(|(&d, _)| d > 0.0)
                        .map(|(&d, &c)| c / d)
                        .fold(f64::INFINITY, f64::min)
                })
                .sum();
            if y > 0.0 && y.is_finite() {
                1.0 / y
            } else {
                0.0
            }
        })
        .collect()
}

/// mu_n for every user (the DRFH / DRF share of one task).
pub fn dominant_sigma(instance: &Instance) -> Vec<f64> {
    instance.user_ids().map(|n| instance.mu(n)).collect()
}

/// The k-dominant weighted share of one task for every user:
/// prod_{l <= k} w_{n,l} d_{n,(l)} over the user's positive ratios
/// d_{n,r} = D_{n,r} / C_r, largest first (fewer than k positive ratios:
/// all of them). Rank weights default to 1; a user's list shorter than the
/// ranks used is padded with 1.
pub fn kdf_sigma(instance: &Instance, k: usize) -> Vec<f64> {
    let cap = instance.total_capacity();
    instance
        .users()
        .iter()
        .map(|u| {
            let mut d: Vec<f64> = u
                .demand
                .iter()
                .zip(cap)
                .filter(|(&x, _)| x > 0.0)
                .map(|(&x, &c)| if c > 0.0 { x / c } else { f64::INFINITY })
                .collect();
            d.sort_by(|a, b| b.total_cmp(a));
            d.iter()
                .take(k)
                .enumerate()
                .map(|(l, &v)| {
                    let w = u
                        .rank_weights
                        .as_ref()
                        .and_then(|rw| rw.get(l))
                        .copied()
                        .unwrap_or(1.0);
                    w * v
                })
                .product()
        })
        .collect()
}
