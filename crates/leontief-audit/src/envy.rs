//! Envy-freeness on per-server bundles, scaled by the weights.

use crate::polytope::mu;
use crate::AuditTolerance;
use leontief_core::{Instance, Tasks};
use serde::Serialize;

const INF: f64 = f64::INFINITY;

/// Result of [`envy`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvyCheck {
    /// Nobody envies anybody by more than the tolerance (in dominant
    /// shares).
    pub ok: bool,
    /// The worst envy: (envious user, envied user, tasks it could run with
    /// the other's bundle scaled by w_envious / w_envied, tasks it has).
    pub worst: Option<(String, String, f64, f64)>,
    /// The worst relative excess (could - has) / max(could, has) over all
    /// pairs, users at their cap left out (0 when envy-free).
    pub worst_relative: f64,
}

/// Envy-freeness on per-server bundles: user n with user m's bundle on the
/// servers n may use could run sum_i min_r x_{m,i} D_{m,r} / D_{n,r} tasks
/// (capped at T_n), scaled by w_n / w_m. One pass over the holders of each
/// server (O(sum over users of the holders where it may run)).
pub fn envy(
    instance: &Instance,
    tasks: &Tasks,
    placement: bool,
    tol: &AuditTolerance,
) -> EnvyCheck {
    let users = instance.users();
    let (nu, k) = (users.len(), instance.num_entries());
    let x = tasks.user_totals();
    // Per entry, its holders and their tasks there.
    let mut holders: Vec<Vec<(usize, f64)>> = vec![Vec::new(); k];
    for (m, i, v) in tasks.nonzeros() {
        if v > 0.0 {
            holders[i].push((m, v));
        }
    }
    let mut worst: Option<(String, String, f64, f64)> = None;
    let mut worst_gain = 0.0;
    let mut worst_relative = 0.0f64;
    let mut with = vec![0.0; nu];
    for n in instance.user_ids() {
        let dn = &users[n.0].demand;
        with.iter_mut().for_each(|v| *v = 0.0);
        for i in instance.server_ids() {
            if placement && !instance.eligible(n, i) {
                continue;
            }
            for &(m, held) in holders[i.0].iter().filter(|&&(m, _)| m != n.0) {
                with[m] += dn
                    .iter()
                    .zip(&users[m].demand)
                    .filter(|(&a, _)| a > 0.0)
                    .map(|(&a, &b)| held * b / a)
                    .fold(INF, f64::min);
            }
        }
        let has = x[n.0];
        let at_cap = users[n.0].tasks.is_some_and(|t| has >= t * (1.0 - 1e-9));
        for m in (0..nu).filter(|&m| m != n.0 && with[m] > 0.0) {
            let scaled = with[m] * users[n.0].weight / users[m].weight;
            if !at_cap {
                worst_relative = worst_relative.max((scaled - has) / scaled.max(has).max(1e-300));
            }
            let could = scaled.min(users[n.0].tasks.unwrap_or(INF));
            let gain = (could - has) * mu(instance, n.0);
            if gain > tol.rise && gain > worst_gain {
                worst_gain = gain;
                worst = Some((users[n.0].name.clone(), users[m].name.clone(), could, has));
            }
        }
    }
    EnvyCheck {
        ok: worst.is_none(),
        worst,
        worst_relative,
    }
}
