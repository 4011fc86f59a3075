//! Regions A and B on one server entry (or proportional entries): the
//! dual, warm-started along a sweep.

use crate::*;
use leontief_core::{Allocation, Instance};
use std::time::Instant;

/// Regions A and B on one server entry by the dual: the maximiser of M is
/// the maximiser of the separable concave program
/// rho U + S = sum_n [rho w_n s_n^(1-beta)/(1-beta) + s_n] for the rho at
/// which rho = (1-beta) S / (beta kappa U) (compare the gradients; rho > 0
/// in both regions), so a secant iteration on log rho, each step one
/// projected-Newton solve on the m prices. `None` where it does not apply
/// or does not converge (the caller falls back to the cone program).
pub fn solve_region_dual(
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
) -> Option<Allocation> {
    RegionSolver::new(instance, family)?.solve(instance, beta, lambda)
}

/// Regions A and B by the dual, for sweeps: the pool, omega, the weights
/// and the scaled unit shares (the linear terms, the same for every
/// (beta, lambda)) are built once, and each point starts from the previous
/// point's rho and prices (the prices sit near the linear program's duals,
/// which do not depend on beta). [`solve_region_dual`] is one use of it.
pub struct RegionSolver {
    base: leontief_bbf::Pool,
    om: Vec<f64>,
    w: Vec<f64>,
    /// omega_n x_n per pool unit of x, divided by (the largest share a user
    /// reaches alone) / N.
    unit_share: Vec<f64>,
    family: Family,
    /// The last certified point's log rho and prices.
    warm: Option<(f64, Vec<f64>)>,
}

impl RegionSolver {
    /// `None` where the dual does not apply (entries that are not
    /// proportional, placement lists, a user demanding a resource no
    /// entry has, nobody able to run).
    pub fn new(instance: &Instance, family: Family) -> Option<RegionSolver> {
        if !instance.pools_exactly() {
            return None;
        }
        let base = leontief_bbf::Pool::new(instance).ok()?;
        let om = omega(instance, family);
        let w: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
        let nu = base.num_users();
        // Shares divided by a common constant (the largest share a user
        // reaches alone, over N): M changes by a constant, the maximiser
        // does not, and rho U and S stay commensurate whatever beta is.
        let mut unit_share: Vec<f64> = (0..nu).map(|n| om[n] * base.unit[n]).collect();
        let scale = (0..nu)
            .map(|n| {
                let most = base.row(n).iter().copied().fold(0.0, f64::max);
                let alone = if most > 0.0 {
                    (1.0 / most).min(base.ub[n])
                } else {
                    0.0
                };
                unit_share[n] * alone
            })
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if scale.is_nan() || scale <= 0.0 {
            return None;
        }
        // ... divided by N as well: a typical user's share is then about 1.
        for u in &mut unit_share {
            *u /= scale / nu as f64;
        }
        Some(RegionSolver {
            base,
            om,
            w,
            unit_share,
            family,
            warm: None,
        })
    }

    /// The maximiser at (beta, lambda) in region A or B; `None` where the
    /// dual does not apply or does not certify (the caller falls back to
    /// the cone program).
    pub fn solve(&mut self, instance: &Instance, beta: f64, lambda: f64) -> Option<Allocation> {
        let t0 = Instant::now();
        let kappa = lambda - (1.0 - beta) / beta;
        let coef = (1.0 - beta) / (beta * kappa);
        if !(coef > 0.0 && coef.is_finite()) {
            return None;
        }
        let (base, om, w, unit_share) = (&self.base, &self.om, &self.w, &self.unit_share);
        let nu = base.num_users();
        let c: Vec<f64> = (0..nu)
            .map(|n| w[n] * unit_share[n].powf(1.0 - beta))
            .collect();
        let warm_start = self.warm.clone();
        // Prices of the last certified solve: the next rho starts from them
        // (the users of the linear program's basis pin the prices near
        // their linear values whatever rho is, so they move little between
        // steps).
        let last_prices: std::cell::RefCell<Option<Vec<f64>>> =
            std::cell::RefCell::new(warm_start.as_ref().map(|w| w.1.clone()));
        let pool_at = |rho: f64| {
            let mut pool = base.clone();
            pool.alpha = beta;
            pool.e = c.iter().map(|&c| rho * c).collect();
            pool.lin = unit_share.clone();
            pool
        };
        let certified =
            |o: &leontief_bbf::eg::EgOutcome| o.status == leontief_core::Status::Optimal;
        // One separable solve at rho: (x in pool units, status, U, S).
        let solve_at = |rho: f64| -> Option<(Vec<f64>, leontief_core::Status, f64, f64)> {
            let pool = pool_at(rho);
            let warm = last_prices.borrow().clone();
            let mut o = leontief_bbf::eg::solve_dual_from(&pool, warm.as_deref()).ok()?;
            if !certified(&o) && warm.is_some() {
                o = leontief_bbf::eg::solve_dual(&pool).ok()?;
            }
            if !certified(&o) {
                // Continuation: where the linear terms dominate (small rho,
                // large beta) the descent stalls far from the optimum; at a
                // larger rho the power terms dominate and it does not.
                // Solve there and walk rho down, each step warm-started.
                if let Some(z) = continuation(rho, &pool_at, &certified) {
                    o = z;
                }
            }
            if certified(&o) {
                *last_prices.borrow_mut() = Some(o.prices.clone());
            }
            let s: Vec<f64> = o.x.iter().zip(unit_share).map(|(x, u)| x * u).collect();
            let u: f64 = s.iter().zip(w).map(|(s, w)| w * s.powf(1.0 - beta)).sum();
            let big: f64 = s.iter().sum();
            Some((o.x, o.status, u, big))
        };
        let g = |t: f64| -> Option<(f64, Vec<f64>, leontief_core::Status)> {
            let (x, st, u, big) = solve_at(t.exp())?;
            // A failed inner solve gives no usable U and S: the secant would
            // wander off (rho = 1e37 and beyond); give up at once instead.
            if st == leontief_core::Status::NumericalFailure {
                return None;
            }
            if !(u > 0.0 && big > 0.0 && u.is_finite()) {
                return None;
            }
            Some((t - (coef * big / u).ln(), x, st))
        };
        // Secant on G(t) = t - log F(e^t), started by one fixed-point step,
        // safeguarded: steps of at most 3 in t (a factor 20 in rho) until a
        // sign change brackets the root, then bisection whenever the secant
        // leaves the bracket (at beta = 10 the plain secant jumped from rho =
        // 63 to 4.6e12).
        let clamp = |t0: f64, t1: f64| t0 + (t1 - t0).clamp(-3.0, 3.0);
        let mut t_prev = warm_start.as_ref().map_or(0.0, |w| w.0);
        let (mut g_prev, _, _) = g(t_prev)?;
        let mut t = clamp(t_prev, t_prev - g_prev);
        let mut bracket: (Option<f64>, Option<f64>) = (None, None); // (G < 0, G > 0)
        let note = |t: f64, gt: f64, b: &mut (Option<f64>, Option<f64>)| {
            if gt < 0.0 {
                b.0 = Some(t);
            } else {
                b.1 = Some(t);
            }
        };
        note(t_prev, g_prev, &mut bracket);
        let mut steps = 0;
        let (x, status) = loop {
            steps += 1;
            let (gt, x, st) = g(t)?;
            if gt.abs() < 1e-13 || steps >= 60 {
                if gt.abs() >= 1e-9 {
                    return None;
                }
                break (x, st);
            }
            note(t, gt, &mut bracket);
            let slope = (gt - g_prev) / (t - t_prev);
            let secant = if slope.is_finite() && slope.abs() > 1e-300 {
                t - gt / slope
            } else {
                t - gt
            };
            let next = match bracket {
                (Some(lo), Some(hi)) => {
                    let (a, b) = (lo.min(hi), lo.max(hi));
                    if secant > a && secant < b {
                        secant
                    } else {
                        0.5 * (a + b)
                    }
                }
                _ => clamp(t, secant),
            };
            t_prev = t;
            g_prev = gt;
            t = next;
        };
        if status != leontief_core::Status::Optimal {
            return None;
        }
        let prices = last_prices.borrow().clone();
        let unresolved = prices
            .as_deref()
            .and_then(|p| unresolved_split(&pool_at(t.exp()), &x, p));
        let status = if unresolved.is_some() {
            leontief_core::Status::ReducedAccuracy
        } else {
            status
        };
        let mut a = Allocation::new(
            instance,
            self.family.name(),
            status,
            base.split(instance, &x),
        );
        if let Some((users, acc)) = unresolved {
            a.notes.push(format!(
                "{users} users have a marginal power utility below rounding of their linear value (rho c_n x_n^-beta / d_n < 1e-7), more than the {} priced resources can fix through the loads: how their tasks split among them is determined only to about {acc:.0e} (relative); the merit is flat along that split to rounding, so the Frank-Wolfe gap cannot see it",
                prices.as_deref().map_or(0, |p| p.iter().filter(|&&v| v > 0.0).count())
            ));
        }
        a.solve_seconds = t0.elapsed().as_secs_f64();
        a.backend_status = Some(format!(
            "dual: {steps} secant steps on rho, each a projected-Newton solve on the prices"
        ));
        a.notes.push(format!(
            "region {}; method: the separable program rho U + S ({}), rho = {:.12e} by a secant iteration ({steps} steps), each solved by projected Newton on the {} resource prices and polished",
            if beta < 1.0 { "a" } else { "b" },
            entries_note(instance),
            t.exp(),
            instance.num_resources()
        ));
        a.objective = Some(merit(om, w, &a.user_tasks, beta, lambda, false));
        if warm_start.is_some() {
            a.notes
                .push("warm-started from the previous point's rho and prices".into());
        }
        self.warm = prices.map(|p| (t, p));
        Some(a)
    }
}
