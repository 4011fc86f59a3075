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
    // Per capped user: its best target over its eligible servers, and
    // (tasks, target) on each server holding its tasks (the split check).
    let mut best = vec![0.0f64; users.len()];
    let mut room = vec![0.0f64; users.len()];
    // Per server and resource, the first two eligible users needing it
    // (enough to tell whether anyone but a given user does).
    let mut needed: Vec<Vec<Vec<usize>>> = vec![vec![Vec::new(); m]; k];
    if users.iter().any(|u| u.tasks.is_some()) {
        for (i, row) in needed.iter_mut().enumerate() {
            for n in 0..users.len() {
                if instance.gamma(leontief_core::UserId(n), ServerId(i)) <= 0.0 {
                    continue;
                }
                for (r, list) in row.iter_mut().enumerate() {
                    if users[n].demand[r] > 0.0 && list.len() < 2 {
                        list.push(n);
                    }
                }
            }
        }
    }
    let mut held: Vec<Vec<(f64, f64)>> = vec![Vec::new(); users.len()];
    // Per server, the users holding tasks there (for the largest price a
    // full resource printed at 0 can carry, [`largest_price`]).
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); k];
    if users.iter().any(|u| u.tasks.is_some()) {
        for (n, i, v) in tasks.nonzeros() {
            if v > 0.0 {
                holders[i].push(n);
            }
        }
    }
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
        // Computed at the first capped user that needs them.
        let mut bounds: Option<Vec<HolderBound>> = None;
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
            // The total the server would give the user were it uncapped:
            // infinite where nothing it needs is priced (its tasks there
            // cost nobody anything), and the best a user can move to only
            // where such a server also has room for more of them.
            let free = if p > 0.0 {
                (lb - p.ln() / alpha).exp()
            } else {
                INF
            };
            if users[n].tasks.is_some() {
                // Its own price: no other user eligible here needs a priced
                // resource it needs (its tasks here keep nobody out).
                let own = (0..m).all(|r| {
                    users[n].demand[r] <= 0.0
                        || prices[i][r] <= 0.0
                        || !needed[i][r].iter().any(|&o| o != n)
                });
                // Nothing it needs priced, but a resource it needs full:
                // that price is degenerate (any price up to what the
                // other holders of the resource pay for it holds the
                // KKT conditions), and the user's tasks there are not
                // free to rise. As a server it could move to, its target
                // there is taken at the largest such price, the least it
                // can be (its own tasks there count as on a best server,
                // as before).
                let degenerate = if p > 0.0 {
                    0.0
                } else {
                    let bounds = bounds.get_or_insert_with(|| {
                        holders_bounds(instance, i, used, &holders[i], &x, alpha, ell, tolerance)
                    });
                    largest_price(&users[n].demand, n, bounds)
                };
                if p > 0.0 {
                    if !own {
                        best[n] = best[n].max(free);
                    }
                } else if degenerate > 0.0 {
                    best[n] = best[n].max((lb - degenerate.ln() / alpha).exp());
                } else {
                    // Tasks of the user that would still fit here.
                    room[n] += (0..m)
                        .filter(|&r| users[n].demand[r] > 0.0)
                        .map(|r| (c(r) - used[r]).max(0.0) / users[n].demand[r])
                        .fold(INF, f64::min);
                }
                let mine = tasks.get(n, i);
                if mine > 0.0 {
                    held[n].push((mine, if own { INF } else { free }));
                }
            }
            let z = if p > 0.0 { free.clamp(lo, hi) } else { hi };
            if x[n] <= 0.0 || !z.is_finite() {
                // Zero utility (alpha >= 1: minus infinity) or an unpriced
                // uncapped user: nothing is certified on this server.
                gap = INF;
                kkt = INF;
                continue;
            }
            // The KKT residual with complementarity kept: a resource with
            // room (beyond the square root of the tolerance) prices
            // nothing at an equilibrium, however small its printed price.
            // The gap sees such a price only against the server's whole
            // spending: at alpha = 30 a resource used by one user was left
            // 2% idle at a price far below the others', certified.
            let p_kept: f64 = (0..m)
                .filter(|&r| used[r] >= c(r) * (1.0 - tolerance.sqrt()))
                .map(|r| prices[i][r].max(0.0) * users[n].demand[r])
                .sum();
            let z_kept = if p_kept >= p {
                z
            } else if p_kept > 0.0 {
                (lb - p_kept.ln() / alpha).exp().clamp(lo, hi)
            } else {
                hi
            };
            kkt = kkt.max((z_kept - x[n]).abs() / x[n]);
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
    let cap_split = (0..users.len())
        .map(|n| split_shortfall(x[n], best[n], room[n], &held[n]))
        .fold(0.0, f64::max);
    VdsCertificate {
        tolerance,
        holds: ni <= tolerance
            && kkt <= tolerance.sqrt()
            && cap_split <= tolerance.sqrt()
            && infeasibility <= tolerance,
        servers,
        nikaido_isoda_gap: ni,
        kkt_residual: kkt,
        cap_split,
        infeasibility,
    }
}

/// The two lowest bounds on a full resource's price and the holders
/// that set them ([`holders_bounds`]); `None` for a resource with room.
type HolderBound = Option<[(f64, usize); 2]>;

/// Per resource of server `i` full within the square root of `tolerance`,
/// the two lowest u'_o / D_{o,r} over the users o holding tasks there and
/// needing r, with those users (`(INF, usize::MAX)` where fewer; `None`
/// for a resource with room): any
/// price of r that keeps the KKT conditions of each holder o (its
/// marginal utility pays at least for its demand) is at most these.
#[allow(clippy::too_many_arguments)]
fn holders_bounds(
    instance: &Instance,
    i: usize,
    used: &[f64],
    holders: &[usize],
    x: &[f64],
    alpha: f64,
    ell: f64,
    tolerance: f64,
) -> Vec<HolderBound> {
    let users = instance.users();
    let c = |r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
    let mut bounds: Vec<HolderBound> = (0..used.len())
        .map(|r| (used[r] >= c(r) * (1.0 - tolerance.sqrt())).then_some([(INF, usize::MAX); 2]))
        .collect();
    if bounds.iter().all(Option::is_none) {
        return bounds;
    }
    for &o in holders {
        if x[o] <= 0.0 {
            continue;
        }
        let g = instance.gamma(leontief_core::UserId(o), ServerId(i));
        let lb = users[o].weight.ln() + (alpha - 1.0) / alpha * g.ln() - ell / alpha;
        let marginal = (alpha * (lb - x[o].ln())).exp();
        for (r, b) in bounds.iter_mut().enumerate() {
            let dr = users[o].demand[r];
            let Some(b) = b.as_mut().filter(|_| dr > 0.0) else {
                continue;
            };
            let v = marginal / dr;
            if v < b[0].0 {
                b[1] = b[0];
                b[0] = (v, o);
            } else if v < b[1].0 {
                b[1] = (v, o);
            }
        }
    }
    bounds
}

/// The largest price per task of user `n` on a server that the KKT
/// conditions of the other users holding tasks there allow, over the
/// resources `n` needs that are full there (`bounds`, [`holders_bounds`]):
/// each such resource r is priced at most u'_o / D_{o,r} by every other
/// holder o needing it. 0 where no resource `n` needs is full, or where
/// some full one is held by no other user needing it (its price is then
/// `n`'s own, as the split check counts it).
fn largest_price(demand: &[f64], n: usize, bounds: &[HolderBound]) -> f64 {
    let mut price = 0.0;
    for (r, &d) in demand.iter().enumerate() {
        let Some([first, second]) = bounds[r].filter(|_| d > 0.0) else {
            continue;
        };
        let up = if first.1 != n { first.0 } else { second.0 };
        if !up.is_finite() {
            return 0.0;
        }
        price += d * up;
    }
    price
}

/// The selection among a capped user's equilibria (docs/mechanisms.md,
/// alphaPF-VDS with task caps): at its cap, a user's tasks sit only on the
/// servers where its marginal utility per unit of price is the highest of
/// its eligible servers, equivalently where the total the server would
/// give it uncapped (`free`, b p^(-1/alpha); infinite where nothing it
/// needs is priced, or where the price is its own) is the largest. Returns
/// the share of its tasks that could sit better: on priced servers below
/// the best priced one (`best`), each weighted by how far below
/// (1 - free / best), plus those on priced servers that the servers
/// pricing nothing it needs still have room for (`room`, in tasks). 0
/// for a user that holds nothing. Below its cap the KKT residual already
/// asks free = x_n where it holds tasks and free <= x_n elsewhere, and
/// leaves no room unpriced, so this is within that residual.
fn split_shortfall(total: f64, best: f64, room: f64, held: &[(f64, f64)]) -> f64 {
    if total <= 0.0 {
        return 0.0;
    }
    // Shares on priced servers (own ones and unpriced ones count as best).
    let priced = || {
        held.iter()
            .filter(|h| h.1.is_finite())
            .map(move |&(mine, free)| (mine / total, free))
    };
    let below: f64 = if best > 0.0 {
        priced()
            .map(|(share, free)| share * (1.0 - free / best).clamp(0.0, 1.0))
            .sum()
    } else {
        0.0
    };
    let movable: f64 = priced().map(|h| h.0).sum();
    below + movable.min(room / total)
}
