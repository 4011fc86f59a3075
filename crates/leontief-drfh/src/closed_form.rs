//! The operator on a single pool of resources, in closed form.

use crate::outcome::Freeze;

const INF: f64 = f64::INFINITY;

/// Closed-form progressive filling on one pool of capacity `capacity`.
///
/// `sigma[n]` as for `lex_max_min` (non-positive or infinite: the user
/// cannot run); `caps[n]` the task caps (`INF` for none). Returns the task
/// counts, levels, freeze rounds and reasons.
pub fn progressive_filling(
    demand: &[&[f64]],
    weight: &[f64],
    caps: &[f64],
    sigma: &[f64],
    capacity: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<usize>, Vec<Freeze>) {
    let (nu, m) = (demand.len(), capacity.len());
    let mut x = vec![0.0; nu];
    let mut level = vec![0.0; nu];
    let mut round = vec![0usize; nu];
    let mut why = vec![Freeze::CannotRun; nu];
    // A user runs if sigma is usable and every resource it needs exists.
    let mut active: Vec<bool> = (0..nu)
        .map(|n| {
            sigma[n].is_finite()
                && sigma[n] > 0.0
                && demand[n]
                    .iter()
                    .zip(capacity)
                    .all(|(&d, &c)| d == 0.0 || c > 0.0)
        })
        .collect();
    let mut frozen_use = vec![0.0; m];
    let mut theta = 0.0;
    let mut r_count = 0;
    while active.iter().any(|&a| a) {
        r_count += 1;
        // Consumption per unit of theta by the active users.
        let mut rate = vec![0.0; m];
        for n in (0..nu).filter(|&n| active[n]) {
            let c = weight[n] / sigma[n];
            for r in 0..m {
                rate[r] += demand[n][r] * c;
            }
        }
        // theta at which each resource saturates / each cap binds.
        let mut t_next = INF;
        for r in 0..m {
            if rate[r] > 0.0 {
                t_next = t_next.min((capacity[r] - frozen_use[r]) / rate[r]);
            }
        }
        for n in (0..nu).filter(|&n| active[n]) {
            t_next = t_next.min(caps[n] * sigma[n] / weight[n]);
        }
        theta = t_next.max(theta);
        let mut use_now = frozen_use.clone();
        for n in (0..nu).filter(|&n| active[n]) {
            x[n] = (weight[n] * theta / sigma[n]).min(caps[n]);
            for r in 0..m {
                use_now[r] += demand[n][r] * x[n];
            }
        }
        let saturated: Vec<bool> = (0..m)
            .map(|r| rate[r] > 0.0 && use_now[r] >= capacity[r] * (1.0 - 1e-12))
            .collect();
        let mut any = false;
        for n in 0..nu {
            if !active[n] {
                continue;
            }
            let capped = x[n] >= caps[n] * (1.0 - 1e-12);
            let touches = (0..m).any(|r| saturated[r] && demand[n][r] > 0.0);
            if capped || touches {
                active[n] = false;
                any = true;
                round[n] = r_count;
                why[n] = if capped {
                    Freeze::Capped
                } else {
                    Freeze::Blocked
                };
                level[n] = x[n] * sigma[n] / weight[n];
                for r in 0..m {
                    frozen_use[r] += demand[n][r] * x[n];
                }
            }
        }
        if !any {
            // Rounding left no binding event; freeze everyone at theta.
            for n in 0..nu {
                if !active[n] {
                    continue;
                }
                active[n] = false;
                round[n] = r_count;
                why[n] = Freeze::Blocked;
                level[n] = x[n] * sigma[n] / weight[n];
            }
        }
    }
    (x, level, round, why)
}
