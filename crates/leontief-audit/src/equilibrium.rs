//! The alphaPF-VDS equilibrium (004) from an allocation and the printed
//! server prices alone: per server, a weak-duality bound on its
//! best-response improvement (the Nikaido-Isoda gap) and the KKT residual.

pub use leontief_core::checks::{ServerCertificate, VdsCertificate};
use leontief_core::{Instance, ResourceId, ServerId, Tasks};

const INF: f64 = f64::INFINITY;

/// The certificate of an alphaPF-VDS point from the allocation and the
/// printed prices alone (see the module docs): per server the relative
/// Nikaido-Isoda bound and the KKT residual, and feasibility.
pub fn vds_certificate(
    instance: &Instance,
    alpha: f64,
    tasks: &Tasks,
    prices: &[Vec<f64>],
    log_scale: &[f64],
    tolerance: f64,
) -> VdsCertificate {
    let users = instance.users();
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let x: Vec<f64> = tasks.user_totals();
    let mut infeasibility = 0.0f64;
    for (n, row) in tasks.rows().enumerate() {
        for (i, v) in row {
            infeasibility = infeasibility.max(-v);
            if v != 0.0 && instance.gamma(leontief_core::UserId(n), ServerId(i)) <= 0.0 {
                infeasibility = infeasibility.max(v.abs());
            }
        }
        if let Some(t) = users[n].tasks {
            infeasibility = infeasibility.max((x[n] - t) / t.max(1e-300));
        }
    }
    let mut used_on = vec![vec![0.0; m]; k];
    for (n, i, v) in tasks.nonzeros() {
        for r in 0..m {
            used_on[i][r] += v * users[n].demand[r];
        }
    }
    let mut servers = Vec::with_capacity(k);
    for (i, used) in used_on.iter().enumerate() {
        let c = |r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
        for r in 0..m {
            if used[r] > c(r) {
                infeasibility = infeasibility.max((used[r] - c(r)) / c(r).max(1e-300));
            }
            infeasibility = infeasibility.max(-prices[i][r]);
        }
        let spend: f64 = (0..m).map(|r| prices[i][r].max(0.0) * c(r)).sum();
        let mut gap: f64 = (0..m)
            .map(|r| prices[i][r].max(0.0) * (c(r) - used[r]))
            .sum();
        let mut kkt = 0.0f64;
        let mut worth = 0.0f64;
        let ell = log_scale[i];
        for n in 0..users.len() {
            let g = instance.gamma(leontief_core::UserId(n), ServerId(i));
            if g <= 0.0 {
                continue;
            }
            let lo = (x[n] - tasks.get(n, i)).max(0.0);
            let hi = users[n].tasks.map_or(INF, |t| t.max(lo));
            if hi <= 0.0 {
                continue;
            }
            let lb = users[n].weight.ln() + (alpha - 1.0) / alpha * g.ln() - ell / alpha;
            let p: f64 = (0..m)
                .map(|r| prices[i][r].max(0.0) * users[n].demand[r])
                .sum();
            let z = if p > 0.0 {
                (lb - p.ln() / alpha).exp().clamp(lo, hi)
            } else {
                hi
            };
            if x[n] <= 0.0 || !z.is_finite() {
                // Zero utility (alpha >= 1: minus infinity) or an unpriced
                // uncapped user: nothing is certified on this server.
                gap = INF;
                kkt = INF;
                continue;
            }
            kkt = kkt.max((z - x[n]).abs() / x[n]);
            // u(z) - u(x) - p (z - x) >= 0, u(v) = b^alpha v^(1-alpha)/(1-alpha),
            // as u(x) ((z/x)^(1-alpha) - 1) / (1-alpha) with expm1 and ln_1p:
            // the difference of u(z) and u(x) themselves loses everything
            // when z is within rounding of x and u is large (alpha = 10,
            // u ~ 1e10: a 1-ulp step of x gave a gap of 1e-5 and 10,000
            // sweeps ending `iteration_limit`).
            // A user whose best response is its cap and who sits within
            // rounding of it (8 ulps: x_n is a sum over servers, and
            // lo + (cap - lo) need not give the cap back) is at its cap:
            // at alpha = 10 its marginal utility can be 1e5 times the
            // price, and that 1-ulp step alone made a relative gap of 0.1
            // (10,000 sweeps, `iteration_limit`, on a two-user instance).
            let z = if z >= hi && hi - x[n] <= 8.0 * f64::EPSILON * hi {
                x[n]
            } else {
                z
            };
            let rel_step = ((z - x[n]) / x[n]).ln_1p();
            // x u'(x) = b^alpha x^(1-alpha): what the user would pay for its
            // tasks at its marginal utility.
            let ux = x[n] * (alpha * (lb - x[n].ln())).exp();
            worth += ux;
            let du = if alpha == 1.0 {
                lb.exp() * rel_step
            } else {
                ux * ((1.0 - alpha) * rel_step).exp_m1() / (1.0 - alpha)
            };
            gap += (du - p * (z - x[n])).max(0.0);
        }
        // Relative to the value of the server's resources at its prices;
        // with nothing priced (no resource binds: every user at its cap),
        // to what its users' tasks are worth at their marginal utility,
        // the same units (alpha = 10 makes that 1e10, and a user 1 ulp
        // below its cap an absolute gap of 2e-6).
        let rel = if spend > 0.0 {
            gap / spend
        } else if worth > 0.0 && worth.is_finite() {
            gap / worth
        } else {
            gap
        };
        servers.push(ServerCertificate {
            server: instance.servers()[i].name.clone(),
            gap: rel,
            kkt,
        });
    }
    let ni = servers.iter().map(|s| s.gap).sum::<f64>();
    let kkt = servers.iter().map(|s| s.kkt).fold(0.0, f64::max);
    VdsCertificate {
        tolerance,
        holds: ni <= tolerance && kkt <= tolerance.sqrt() && infeasibility <= tolerance,
        servers,
        nikaido_isoda_gap: ni,
        kkt_residual: kkt,
        infeasibility,
    }
}
