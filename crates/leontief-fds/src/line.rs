//! The alpha-fair line on one server entry (or proportional entries):
//! projected Newton on the resource prices, warm-started from point to
//! point along a sweep.

use crate::*;
use leontief_core::{Allocation, Instance};
use std::time::Instant;

/// The alpha-fair line on one server entry by projected Newton on the m
/// resource prices (`leontief_bbf::eg::solve_dual` with utilities
/// w_n (omega_n x_n)^(1-alpha)/(1-alpha), or w_n log x_n at alpha = 1):
/// O(N m^2) per step whatever N is, Newton-polished and certified by the
/// duality gap. `None` where it does not apply (entries that are not
/// proportional, placement lists, a user demanding a resource no entry
/// has).
pub fn solve_alpha_dual(instance: &Instance, family: Family, alpha: f64) -> Option<Allocation> {
    LineSolver::new(instance, family)?.solve(instance, alpha)
}

/// The alpha-fair line on one server entry, for sweeps: the pool (the
/// users' requests per unit and caps), omega and the weights are built
/// once, and each point starts the projected Newton from the previous
/// point's prices (rescaled with the coefficients). `solve_alpha_dual` is
/// one use of it.
pub struct LineSolver {
    pool: leontief_bbf::Pool,
    om: Vec<f64>,
    w: Vec<f64>,
    family: Family,
    /// The previous point's prices, in unscaled coefficient units.
    warm: Option<Vec<f64>>,
}

impl LineSolver {
    /// `None` where the dual does not apply (entries that are not
    /// proportional, placement lists, a user demanding a resource no
    /// entry has).
    pub fn new(instance: &Instance, family: Family) -> Option<LineSolver> {
        if !instance.pools_exactly() {
            return None;
        }
        Some(LineSolver {
            pool: leontief_bbf::Pool::new(instance).ok()?,
            om: omega(instance, family),
            w: instance.users().iter().map(|u| u.weight).collect(),
            family,
            warm: None,
        })
    }

    /// The member at `alpha` (> 0), warm-started after the first call.
    pub fn solve(&mut self, instance: &Instance, alpha: f64) -> Option<Allocation> {
        let t0 = Instant::now();
        let pool = &mut self.pool;
        for n in 0..pool.num_users() {
            let w = self.w[n];
            pool.e[n] = if alpha == 1.0 {
                w
            } else {
                w * (self.om[n] * pool.unit[n]).powf(1.0 - alpha)
            };
        }
        // Scale the coefficients so the largest is 1 (the maximiser does
        // not change; prices and the dual stay well scaled for any alpha).
        let top = pool.e.iter().copied().fold(0.0, f64::max);
        if !(top.is_finite() && top > 0.0) {
            return None;
        }
        for e in &mut pool.e {
            *e /= top;
        }
        pool.alpha = alpha;
        let warm: Option<Vec<f64>> = self
            .warm
            .as_ref()
            .map(|p| p.iter().map(|v| v / top).collect());
        let o = leontief_bbf::eg::solve_dual_from(pool, warm.as_deref()).ok()?;
        if o.status == leontief_core::Status::Optimal {
            self.warm = Some(o.prices.iter().map(|v| v * top).collect());
        }
        let family = self.family;
        let mut a = Allocation::new(
            instance,
            family.name(),
            o.status,
            pool.split(instance, &o.x),
        );
        a.backend_status = Some(o.raw_status.clone());
        a.solve_seconds = t0.elapsed().as_secs_f64();
        a.notes.push(format!(
            "region alpha-fair; method: projected Newton on the {} resource prices ({}){}, polished by {} Newton steps on the active set; duality gap {:.1e}",
            instance.num_resources(),
            entries_note(instance),
            if warm.is_some() { ", warm-started from the previous point" } else { "" },
            o.newton_steps,
            o.certificate.duality_gap
        ));
        a.objective = Some(merit(
            &self.om,
            &self.w,
            &a.user_tasks,
            alpha,
            (1.0 - alpha) / alpha,
            false,
        ));
        Some(a)
    }
}

/// The separable dual at `rho` by continuation from a larger rho (10^k rho,
/// k = 1..8, the first certified from a cold start), walking rho down by
/// factors of 10 (cut to their square root when a warm step fails, down to
/// 1.01): each step starts from the previous prices. `None` if no start
/// certifies or the walk stalls.
pub(crate) fn continuation(
    rho: f64,
    pool_at: &dyn Fn(f64) -> leontief_bbf::Pool,
    certified: &dyn Fn(&leontief_bbf::eg::EgOutcome) -> bool,
) -> Option<leontief_bbf::eg::EgOutcome> {
    let (mut at, mut prices) = (1..=8).find_map(|k| {
        let hi = rho * 10f64.powi(k);
        let o = leontief_bbf::eg::solve_dual(&pool_at(hi)).ok()?;
        certified(&o).then_some((hi, o.prices))
    })?;
    let mut factor = 10.0f64;
    while factor > 1.01 {
        let next = (at / factor).max(rho);
        match leontief_bbf::eg::solve_dual_from(&pool_at(next), Some(&prices)) {
            Ok(o) if certified(&o) => {
                if next <= rho {
                    return Some(o);
                }
                at = next;
                prices = o.prices;
            }
            _ => factor = factor.sqrt(),
        }
    }
    None
}

/// Where the separable program cannot pin an allocation down: the users
/// below their cap whose bundle price exceeds their linear value by less
/// than 1e-7 of it take x_n from e_n x_n^-beta = q_n - d_n, a difference
/// known to ~1e-16 q_n, so x_n to ~1e-16 / (beta (q_n - d_n) / q_n). The
/// loads fix as many of them as there are priced resources; if more remain,
/// returns (how many such users, the accuracy of the worst one left).
pub(crate) fn unresolved_split(
    pool: &leontief_bbf::Pool,
    x: &[f64],
    p: &[f64],
) -> Option<(usize, f64)> {
    let priced = p.iter().filter(|&&v| v > 0.0).count();
    let mut acc: Vec<f64> = (0..pool.num_users())
        .filter(|&n| pool.lin(n) > 0.0 && x[n] < pool.ub[n] * (1.0 - 1e-12))
        .filter_map(|n| {
            let q: f64 = pool.row(n).iter().zip(p).map(|(r, p)| r * p).sum();
            let rel = (q - pool.lin(n)) / q;
            (q > 0.0 && rel < 1e-7)
                .then(|| f64::EPSILON / (pool.alpha * rel.max(f64::MIN_POSITIVE)))
        })
        .collect();
    if acc.len() <= priced {
        return None;
    }
    acc.sort_by(|a, b| b.total_cmp(a));
    // The loads fix `priced` of them (the least accurate first, the most
    // favourable reading); the rest are as accurate as their stationarity.
    let worst_left = acc[priced];
    (worst_left > 1e-9).then_some((acc.len(), worst_left))
}
