//! The Eisenberg-Gale program of a [`Pool`]:
//!
//! ```text
//!   maximise sum_n e_n log x_n   s.t.   sum_n x_n r_{n,j} <= 1 (all j),   0 <= x_n <= ub_n
//! ```
//!
//! Its optimum is BBF and unique in x (Gutman and Nisan; 003 Sec. 5). It is
//! solved as a cone program (u_n <= log x_n as (u_n, 1, x_n) in the
//! exponential cone) on the given conic backend, then polished by Newton on
//! the dual, which lives in the m resource prices:
//!
//! ```text
//!   g(p) = sum_j p_j + sum_n h_n(q_n),   q_n = sum_j r_{n,j} p_j,
//!   h_n(q) = max_{0 < x <= ub_n} (e_n log x - q x)
//!          = e_n log(e_n / q) - e_n   if e_n / q <= ub_n,   -q ub_n otherwise,
//! ```
//!
//! convex and C^1 in p >= 0, with x_n(p) = min(ub_n, e_n / q_n). On the set
//! J of resources priced by the interior-point answer, Newton solves
//! grad g = 0, that is sum_n r_{n,j} x_n(p) = 1 for j in J, with p = 0
//! off J (an m-dimensional system whatever N is: O(N |J|^2) per step); the
//! active set is corrected (a negative price leaves J, an overloaded
//! resource joins it) until the KKT conditions hold.
//!
//! The certificate printed with every answer is computed from (x, p) alone:
//! primal feasibility, the KKT residuals, and the duality gap
//! g(p^+) - sum_n e_n log x_n >= 0, which bounds the distance of the
//! objective to the optimum for any p.

use crate::{BbfError, Pool};
use leontief_model::market::{gram, Market};
use leontief_model::{ConeKind, LpBackend, ProblemBuilder, Sense, Status};
use nalgebra::{DMatrix, DVector};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// The Eisenberg-Gale answer.
#[derive(Debug, Clone)]
pub struct EgOutcome {
    /// The backend's status (the polish does not change it).
    pub status: Status,
    /// The backend's own status, verbatim.
    pub raw_status: String,
    /// x_n (pool units).
    pub x: Vec<f64>,
    /// Resource prices p_j (the Fisher-market equilibrium prices).
    pub prices: Vec<f64>,
    /// True when the Newton polish certified its answer.
    pub polished: bool,
    /// The certificate of (x, p).
    pub certificate: Certificate,
    /// Seconds building the cone program.
    pub build_seconds: f64,
    /// Seconds in the conic backend.
    pub solve_seconds: f64,
    /// Seconds in the polish.
    pub polish_seconds: f64,
    /// Interior-point iterations.
    pub iterations: u64,
    /// Newton steps of the polish.
    pub newton_steps: usize,
}

/// KKT residuals and duality gap of (x, p), from (x, p) alone.
pub use leontief_core::details::EgCertificate as Certificate;

/// u_n(x) = e log x (alpha = 1) or e x^(1-alpha) / (1-alpha), plus d x.
fn utility(e: f64, alpha: f64, d: f64, x: f64) -> f64 {
    let u = if alpha == 1.0 {
        e * x.ln()
    } else {
        e * x.powf(1.0 - alpha) / (1.0 - alpha)
    };
    u + d * x
}

/// The best response min(ub, (e/(q-d))^(1/alpha)) to the price q of a
/// bundle (ub where the bundle is worth more than it costs at any size).
fn best(e: f64, alpha: f64, d: f64, q: f64, ub: f64) -> f64 {
    let net = q - d;
    if net > 0.0 {
        let x = if alpha == 1.0 {
            e / net
        } else {
            (e / net).powf(1.0 / alpha)
        };
        x.min(ub)
    } else {
        ub
    }
}

/// sum_n u_n(x_n) (sum_n e_n log x_n for Eisenberg-Gale).
pub fn objective(pool: &Pool, x: &[f64]) -> f64 {
    x.iter()
        .zip(&pool.e)
        .enumerate()
        .map(|(n, (&x, &e))| utility(e, pool.alpha, pool.lin(n), x))
        .sum()
}

/// The dual function g at p^+ (negative prices taken as 0):
/// sum_j p_j + sum_n max_{0 < x <= ub_n} (u_n(x) - q_n x), an upper bound
/// on the optimum.
pub fn dual_value(pool: &Pool, p: &[f64]) -> f64 {
    let p: Vec<f64> = p.iter().map(|v| v.max(0.0)).collect();
    let mut g: f64 = p.iter().sum();
    for n in 0..pool.num_users() {
        let q: f64 = pool.row(n).iter().zip(&p).map(|(r, p)| r * p).sum();
        let x = best(pool.e[n], pool.alpha, pool.lin(n), q, pool.ub[n]);
        // A bundle that costs nothing (an uncapped user priced at zero):
        // +inf for alpha <= 1; for alpha > 1 the supremum is finite but not
        // attained, and such prices are never optimal, so the descent is
        // kept away from them the same way.
        g += if x.is_finite() {
            utility(pool.e[n], pool.alpha, pool.lin(n), x) - q * x
        } else {
            INF
        };
    }
    g
}

/// The certificate of (x, p).
pub fn certify(pool: &Pool, x: &[f64], p: &[f64]) -> Certificate {
    let loads = pool.loads(x);
    let mut primal = loads.iter().fold(0.0f64, |a, &l| a.max(l - 1.0));
    let mut stat = 0.0f64;
    for n in 0..pool.num_users() {
        primal = primal.max(x[n] - pool.ub[n]).max(-x[n]);
        let q: f64 = pool.row(n).iter().zip(p).map(|(r, p)| r * p).sum();
        let marginal = pool.e[n] * x[n].powf(-pool.alpha) + pool.lin(n);
        let at_bound = pool.ub[n].is_finite() && x[n] >= pool.ub[n] * (1.0 - 1e-12);
        let s = if at_bound {
            (q - marginal).max(0.0)
        } else {
            (marginal - q).abs()
        };
        stat = stat.max(s / marginal);
    }
    let obj = objective(pool, x);
    Certificate {
        primal_infeasibility: primal,
        negative_price: p.iter().fold(0.0f64, |a, &v| a.max(-v)),
        complementarity: p
            .iter()
            .zip(&loads)
            .fold(0.0f64, |a, (p, l)| a.max(p.abs() * (1.0 - l).abs())),
        stationarity: stat,
        duality_gap: dual_value(pool, p) - obj,
        objective: obj,
        spending: p.iter().map(|v| v.max(0.0)).sum(),
    }
}

/// Solve the Eisenberg-Gale program on a conic backend (Clarabel) and
/// polish the answer.
///
/// ```
/// use leontief_bbf::{eg, Pool};
/// // The 4 x 4 cyclic example of 003 Sec. 6: x_n = 1/3, every price 1/4.
/// let r = vec![
///     vec![1.0, 1.0, 0.0, 1.0],
///     vec![1.0, 1.0, 1.0, 0.0],
///     vec![0.0, 1.0, 1.0, 1.0],
///     vec![1.0, 0.0, 1.0, 1.0],
/// ];
/// let pool = Pool::from_requests(&r, &[1.0; 4], &[true; 4]);
/// let o = eg::solve(&leontief_clarabel::Clarabel::default(), &pool).unwrap();
/// assert!(o.x.iter().all(|x| (x - 1.0 / 3.0).abs() < 1e-9));
/// assert!(o.prices.iter().all(|p| (p - 0.25).abs() < 1e-9));
/// ```
pub fn solve<B: LpBackend>(backend: &B, pool: &Pool) -> Result<EgOutcome, BbfError> {
    let t0 = Instant::now();
    let (nu, m) = (pool.num_users(), pool.num_resources());
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let used: Vec<bool> = (0..m)
        .map(|j| (0..nu).any(|n| pool.req(n, j) > 0.0))
        .collect();
    let res_rows: Vec<Option<leontief_model::Row>> = (0..m)
        .map(|j| used[j].then(|| b.add_row(-INF, 1.0)))
        .collect();
    let mut cone_rows = Vec::with_capacity(nu);
    for _ in 0..nu {
        // (u, 1, x) in K_exp: u <= log x.
        let r0 = b.add_row(-INF, 0.0);
        b.add_row(-INF, 1.0);
        let r2 = b.add_row(-INF, 0.0);
        b.add_cone(r0, 3, ConeKind::Exponential);
        cone_rows.push((r0, r2));
    }
    let mut xcols = Vec::with_capacity(nu);
    for n in 0..nu {
        let (r0, r2) = cone_rows[n];
        let entries = (0..m)
            .filter_map(|j| res_rows[j].map(|row| (row, pool.req(n, j))))
            .filter(|e| e.1 > 0.0)
            .chain([(r2, -1.0)]);
        xcols.push(b.add_col(0.0, 0.0, pool.ub[n], entries));
        b.add_col(pool.e[n], -INF, INF, [(r0, -1.0)]);
    }
    let build_seconds = t0.elapsed().as_secs_f64();
    let sol = backend.solve(b.build())?;
    let mut out = EgOutcome {
        status: sol.status,
        raw_status: sol.raw_status.clone(),
        x: vec![0.0; nu],
        prices: vec![0.0; m],
        polished: false,
        certificate: certify(pool, &vec![0.0; nu], &vec![0.0; m]),
        build_seconds,
        solve_seconds: sol.seconds,
        polish_seconds: 0.0,
        iterations: sol.iterations,
        newton_steps: 0,
    };
    if !sol.status.has_solution() {
        // The cone program gave no answer (a numerical failure on badly
        // scaled data, a limit): the dual decides, and says so.
        let mut d = solve_dual(pool)?;
        d.raw_status = format!(
            "Clarabel: {} ({}); answered by the dual: {}",
            sol.status, sol.raw_status, d.raw_status
        );
        d.build_seconds = build_seconds;
        d.solve_seconds += sol.seconds;
        return Ok(d);
    }
    let x0: Vec<f64> = xcols
        .iter()
        .zip(&pool.ub)
        .map(|(c, &ub)| sol.x[c.0].clamp(0.0, ub))
        .collect();
    let p0: Vec<f64> = (0..m)
        .map(|j| res_rows[j].map_or(0.0, |row| sol.row_dual[row.0].abs()))
        .collect();
    let t1 = Instant::now();
    let mut polished = polish(pool, &x0, &p0);
    if polished.is_none() {
        // The interior point was too rough for the active set: descend on
        // the dual from its prices (made positive) and polish again.
        let floor = p0.iter().copied().fold(0.0, f64::max).max(1.0) * 1e-6;
        let used = used_resources(pool);
        let start: Vec<f64> = (0..m)
            .map(|j| if used[j] { p0[j].max(floor) } else { 0.0 })
            .collect();
        let (p, _, _, early) = dual_descent(pool, start);
        polished = early.or_else(|| {
            let (x, _) = primal_of(pool, &p);
            polish(pool, &x, &p)
        });
    }
    out.polish_seconds = t1.elapsed().as_secs_f64();
    match polished {
        Some(pz) => {
            out.x = pz.x;
            out.prices = pz.p;
            out.polished = true;
            out.newton_steps = pz.steps;
        }
        None => {
            out.x = x0;
            out.prices = p0;
        }
    }
    out.certificate = certify(pool, &out.x, &out.prices);
    Ok(out)
}

/// Solve the Eisenberg-Gale program by projected Newton on its dual
/// (m prices, whatever N is), then [`polish`]. For large instances, where
/// the cone program's KKT system (N exponential cones coupled by m dense
/// rows) is slow: O(N m^2) per step.
///
/// g is convex on p >= 0 and +inf where an uncapped user's bundle costs 0,
/// so starting from positive prices and backtracking on g keeps every
/// iterate inside. The descent is the projected Newton method that
/// alphaPF-VDS's best responses use too ([`leontief_model::market`]: the
/// pool is its buyers with b^alpha = e_n, x_n in [0, ub_n] and the linear
/// terms d_n); the polish that certifies is this module's.
pub fn solve_dual(pool: &Pool) -> Result<EgOutcome, BbfError> {
    solve_dual_from(pool, None)
}

/// [`solve_dual`] started from `warm` prices (a neighbouring problem's,
/// in a sweep) instead of uniform ones; prices of used resources that are
/// not positive are replaced by the uniform start's.
pub fn solve_dual_from(pool: &Pool, warm: Option<&[f64]>) -> Result<EgOutcome, BbfError> {
    let t0 = Instant::now();
    let m = pool.num_resources();
    let used = used_resources(pool);
    let nused = used.iter().filter(|&&u| u).count().max(1) as f64;
    let mut start: Vec<f64> = used
        .iter()
        .enumerate()
        .map(|(j, &u)| match (u, warm.map(|w| w[j])) {
            (false, _) => 0.0,
            (true, Some(v)) if v.is_finite() && v > 0.0 => v,
            (true, _) => 1.0 / nused,
        })
        .collect();
    let (_, q0) = primal_of(pool, &start);
    // From warm prices (a neighbouring optimum) the polish alone usually
    // certifies (a few Newton steps on the active set); the descent runs
    // only when it does not. Warm prices must price every uncapped bundle
    // above its linear value, as they are: scaling them up by even 1e-6
    // moves the basis users' bundles (priced within 1e-10 of their linear
    // value) far off and empties the polish's active set.
    let valid = (0..pool.num_users()).all(|n| pool.ub[n].is_finite() || q0[n] > pool.lin(n));
    let early = match warm {
        Some(_) if valid => {
            let (x, _) = primal_of(pool, &start);
            polish_from(pool, &x, &start, true)
        }
        _ => None,
    };
    // With linear terms, every uncapped bundle must cost more than its
    // linear value (else the dual is +inf there): scale the descent's
    // start up (from warm prices only just enough).
    let margin = if warm.is_some() { 1.0 + 1e-6 } else { 2.0 };
    let factor = (0..pool.num_users())
        .filter(|&n| pool.ub[n].is_infinite() && q0[n] > 0.0)
        .map(|n| margin * pool.lin(n) / q0[n])
        .fold(1.0, f64::max);
    for v in &mut start {
        *v *= factor;
    }
    let (p, iterations, converged, early) = match early {
        Some(z) => (z.p.clone(), 0, true, Some(z)),
        None => dual_descent(pool, start),
    };
    debug_assert_eq!(p.len(), m);
    let (x, _) = primal_of(pool, &p);
    let solve_seconds = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let polished = match early {
        Some(z) => Some(z),
        None => polish(pool, &x, &p),
    };
    let polish_seconds = t1.elapsed().as_secs_f64();
    let (x, p, ok, steps) = match polished {
        Some(z) => (z.x, z.p, true, z.steps),
        None => (x, p, false, 0),
    };
    let certificate = certify(pool, &x, &p);
    let status = if ok || (converged && certificate.worst() < 1e-9) {
        Status::Optimal
    } else if certificate.worst() < 1e-5 {
        Status::ReducedAccuracy
    } else {
        Status::NumericalFailure
    };
    Ok(EgOutcome {
        status,
        raw_status: format!(
            "dual projected Newton: {} after {iterations} iterations",
            if converged { "converged" } else { "stopped" }
        ),
        x,
        prices: p,
        polished: ok,
        certificate,
        build_seconds: 0.0,
        solve_seconds,
        polish_seconds,
        iterations,
        newton_steps: steps,
    })
}

fn used_resources(pool: &Pool) -> Vec<bool> {
    (0..pool.num_resources())
        .map(|j| (0..pool.num_users()).any(|n| pool.req(n, j) > 0.0))
        .collect()
}

/// The pool as buyers of [`leontief_model::market`]: b^alpha = e_n,
/// x_n in [0, ub_n], linear terms d_n.
fn market(pool: &Pool) -> Market<'_> {
    let nu = pool.num_users();
    Market::new(
        pool.alpha,
        pool.num_resources(),
        &pool.r,
        pool.e.iter().map(|e| e.ln() / pool.alpha).collect(),
        vec![0.0; nu],
        pool.ub.clone(),
        pool.lin.clone(),
    )
}

/// The shared projected Newton ([`Market::descend`]) on g from `start`
/// (prices of used resources must be positive so every uncapped user's
/// bundle has a positive cost), at most 200 steps. Returns the prices, the
/// steps, whether the KKT residual fell below 1e-11, and a polished answer
/// if the descent handed over to the polish early.
///
/// With linear terms the descent can stall with the loads well short of
/// 1: the users of the linear program's basis have their bundles priced
/// at their linear value to the last digits (at beta = 5 and 10,000 users
/// (q_n - d_n) / q_n reaches 1e-14) and each step only moves that
/// difference. Once such users appear, the descent tries the polish with
/// the priced resources active (it keeps those users' x_n as unknowns)
/// between runs of 2, 4, 8, ... steps (a failed attempt costs up to 15
/// Newton steps), and the first certified answer ends the descent.
type Descent = (Vec<f64>, u64, bool, Option<Polished>);
fn dual_descent(pool: &Pool, start: Vec<f64>) -> Descent {
    const STEPS: usize = 200;
    let market = market(pool);
    let mut p = start;
    let mut x = vec![0.0; pool.num_users()];
    let (mut steps, mut chunk) = (0, 2);
    while steps < STEPS {
        if !pool.lin.is_empty() {
            let (xp, q) = primal_of(pool, &p);
            let stalling = (0..pool.num_users()).any(|n| {
                pool.lin(n) > 0.0 && xp[n] < pool.ub[n] && q[n] - pool.lin(n) < 1e-8 * q[n]
            });
            if stalling {
                if let Some(z) = polish_from(pool, &xp, &p, true) {
                    return (p, steps as u64, true, Some(z));
                }
            }
        }
        let run = chunk.min(STEPS - steps);
        let (taken, ok) = market.descend(&mut p, &mut x, 1e-11, run);
        steps += taken;
        if ok {
            return (p, steps as u64, true, None);
        }
        if taken < run {
            // The search found no decrease: at the resolution of g.
            break;
        }
        chunk *= 2;
    }
    // The shared active-set finish (a resource that only capped users
    // load leaves the active set at once, where the descent walks its
    // price down geometrically).
    let (more, ok) = market.finish(&mut p, &mut x, 1e-11);
    (p, (steps + more) as u64, ok, None)
}

/// A polished primal-dual pair.
#[derive(Debug, Clone)]
pub struct Polished {
    /// x_n(p).
    pub x: Vec<f64>,
    /// Prices.
    pub p: Vec<f64>,
    /// Newton steps taken.
    pub steps: usize,
}

/// x_n(p) = min(ub_n, (e_n / q_n)^(1/alpha)) with q_n = r_n . p.
fn primal_of(pool: &Pool, p: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let nu = pool.num_users();
    let mut x = Vec::with_capacity(nu);
    let mut q = Vec::with_capacity(nu);
    for n in 0..nu {
        let qn: f64 = pool.row(n).iter().zip(p).map(|(r, p)| r * p).sum();
        x.push(best(pool.e[n], pool.alpha, pool.lin(n), qn, pool.ub[n]));
        q.push(qn);
    }
    (x, q)
}

/// Newton on the dual over an active set started from the interior-point
/// answer (x0, p0), corrected until the KKT conditions hold to 1e-12.
/// Returns `None` if no active set certifies (the caller keeps the
/// interior-point answer and says so).
///
/// With linear terms (`lin`), a user whose bundle price q_n barely exceeds
/// its linear value d_n takes x_n(p) = (e_n / (q_n - d_n))^(1/alpha) from a
/// difference that cancels: at 10,000 users the few users of the linear
/// program's basis have (q_n - d_n) / q_n ~ 1e-10, so x_n(p) is known to
/// ~1e-6 only and no price vector brings the loads to 1e-12. Those users
/// keep x_n as an unknown of the Newton system (a primal-dual step: their
/// stationarity e_n x_n^-alpha + d_n = q_n is an equation, their x_n
/// enters the loads directly), so the loads fix their x_n to full
/// accuracy; every other user stays a function of the prices.
pub fn polish(pool: &Pool, x0: &[f64], p0: &[f64]) -> Option<Polished> {
    polish_from(pool, x0, p0, false)
}

/// [`polish`]; with `by_price` (an attempt from a descent point or warm
/// prices, whose loads may still be short of 1) the resources priced at p0
/// (above 1e-9 of the largest price) start in the active set as well as
/// the loaded ones, and each Newton solve gets 15 steps instead of 60 (a
/// start close enough converges in a few; the caller descends further
/// otherwise).
fn polish_from(pool: &Pool, x0: &[f64], p0: &[f64], by_price: bool) -> Option<Polished> {
    let max_steps = if by_price { 15 } else { 60 };
    let m = pool.num_resources();
    let loads = pool.loads(x0);
    let pmax = p0.iter().copied().fold(0.0, f64::max);
    let mut active: Vec<bool> = (0..m)
        .map(|j| {
            (loads[j] >= 1.0 - 1e-6 || (by_price && p0[j] > 1e-9 * pmax))
                && (0..pool.num_users()).any(|n| pool.req(n, j) > 0.0)
        })
        .collect();
    let mut steps = 0;
    let mut p: Vec<f64> = (0..m)
        .map(|j| if active[j] { p0[j].max(1e-12) } else { 0.0 })
        .collect();
    let (_, q0) = primal_of(pool, &p);
    // From a descent point, users still on their way to the cancellation
    // join the unknowns too: x_n(p) would need many damped steps to get there.
    let within = if by_price { 1e-1 } else { 1e-4 };
    let mut big = cancelling(pool, &q0, x0, &[], within);
    for _round in 0..2 * m + 2 + pool.num_users().min(8) {
        let (pz, xz, k) = newton(pool, &active, p.clone(), &big, max_steps)?;
        steps += k;
        p = pz;
        let x = with_unknowns(pool, &p, &big, &xz);
        if x.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // A user solved as an unknown above its cap is capped instead.
        if let Some(b) = (0..big.len()).find(|&b| x[big[b].0] > pool.ub[big[b].0]) {
            big.remove(b);
            continue;
        }
        let loads = pool.loads(&x);
        // Most negative price leaves; most overloaded resource joins.
        let neg = (0..m)
            .filter(|&j| active[j] && p[j] < -1e-14)
            .min_by(|&a, &b| p[a].total_cmp(&p[b]));
        let over = (0..m)
            .filter(|&j| !active[j] && loads[j] > 1.0 + 1e-12)
            .max_by(|&a, &b| loads[a].total_cmp(&loads[b]));
        match (neg, over) {
            (None, None) => {
                let p = dual_feasible(pool, p.iter().map(|v| v.max(0.0)).collect());
                let x = with_unknowns(pool, &p, &big, &xz);
                let c = certify(pool, &x, &p);
                return (c.worst() < 1e-9).then_some(Polished { x, p, steps });
            }
            (Some(j), _) => {
                active[j] = false;
                p[j] = 0.0;
            }
            (None, Some(j)) => {
                active[j] = true;
                p[j] = 1e-9;
            }
        }
        // Users that came near the cancellation on the way join the unknowns.
        let (_, q) = primal_of(pool, &p);
        let kept: Vec<usize> = big.iter().map(|&(n, _)| n).collect();
        let mut more = cancelling(pool, &q, &x, &kept, within);
        for (b, &(n, _)) in big.iter().enumerate() {
            more.push((n, xz[b]));
        }
        big = more;
    }
    None
}

/// `p` scaled up by the least 1 + delta (delta = 1e-15, 1e-14, ...,
/// 1e-10) that prices every uncapped bundle above its linear value, or `p`
/// itself if it already does. The unknowns' stationarity q_n = d_n + e_n
/// x_n^-alpha can hold to the last bit with q_n - d_n below the rounding
/// of q_n (beta = 5 at 10,000 users: (q_n - d_n) / q_n ~ 1e-15), and then
/// a computed q_n <= d_n makes g(p) = +inf: the scaled prices are a dual
/// point where g is finite, and within 1e-10 of p.
fn dual_feasible(pool: &Pool, p: Vec<f64>) -> Vec<f64> {
    let ok = |p: &[f64]| {
        let (_, q) = primal_of(pool, p);
        (0..pool.num_users()).all(|n| pool.ub[n].is_finite() || q[n] > pool.lin(n))
    };
    if ok(&p) {
        return p;
    }
    (10..=15)
        .rev()
        .map(|k| {
            let f = 1.0 + 10f64.powi(-k);
            p.iter().map(|v| v * f).collect::<Vec<f64>>()
        })
        .find(|t| ok(t))
        .unwrap_or(p)
}

/// The users below their cap whose x_n(p) cancels ((q_n - d_n) < `within`
/// q_n with a linear term d_n > 0), other than `skip`, with their current
/// x_n as the start of the unknown (the Newton system stays dense in them:
/// at most 200, the most cancelling first).
fn cancelling(pool: &Pool, q: &[f64], x: &[f64], skip: &[usize], within: f64) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64, f64)> = (0..pool.num_users())
        .filter(|&n| pool.lin(n) > 0.0 && q[n] > 0.0 && !skip.contains(&n))
        .filter(|&n| x[n].is_finite() && x[n] > 0.0 && x[n] < pool.ub[n])
        .map(|n| (n, (q[n] - pool.lin(n)) / q[n], x[n]))
        .filter(|&(_, rel, _)| rel < within)
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v.truncate(200);
    v.into_iter().map(|(n, _, x)| (n, x)).collect()
}

/// x_n(p) for every user, with the unknowns' own values in place.
fn with_unknowns(pool: &Pool, p: &[f64], big: &[(usize, f64)], xb: &[f64]) -> Vec<f64> {
    let (mut x, _) = primal_of(pool, p);
    for (b, &(n, _)) in big.iter().enumerate() {
        x[n] = xb[b];
    }
    x
}

/// The dual's Hessian on the resources `idx`: sum over the users below
/// their bound (and with a positive bundle cost) of e_n / q_n^2 r_n r_n^T,
/// leaving out the users `skip` (the polish's unknowns). O(N |idx|^2);
/// symmetric.
fn curvature_without(
    pool: &Pool,
    x: &[f64],
    q: &[f64],
    idx: &[usize],
    skip: &[(usize, f64)],
) -> DMatrix<f64> {
    // -dx_n/dq_n = x_n / (alpha q_n) (= e_n / q_n^2 at alpha = 1).
    let weights = (0..pool.num_users()).filter_map(|n| {
        let net = q[n] - pool.lin(n);
        let interior = !q[n].is_nan() && net > 0.0 && x[n] < pool.ub[n];
        (interior && !skip.iter().any(|&(s, _)| s == n)).then(|| (n, x[n] / (pool.alpha * net)))
    });
    gram(&pool.r, pool.num_resources(), idx, weights)
}

/// Newton on F_j(p, x_B) = sum_n r_{n,j} x_n - 1 = 0 for active j (x_n =
/// x_n(p) off B, the unknown x_B on it) and, for the users B of `big`,
/// G_n = (e_n x_n^-alpha + d_n - q_n) / s_n = 0 (s_n the bundle price at
/// the start, a fixed scale); p = 0 off the active set; backtracking on
/// ||(F, G)||. Returns the prices, x_B and the number of steps.
fn newton(
    pool: &Pool,
    active: &[bool],
    mut p: Vec<f64>,
    big: &[(usize, f64)],
    max_steps: usize,
) -> Option<(Vec<f64>, Vec<f64>, usize)> {
    let idx: Vec<usize> = (0..active.len()).filter(|&j| active[j]).collect();
    let (k, nb) = (idx.len(), big.len());
    let mut xb: Vec<f64> = big.iter().map(|&(_, x)| x).collect();
    if k == 0 && nb == 0 {
        return Some((p, xb, 0));
    }
    let (_, q0) = primal_of(pool, &p);
    let scale: Vec<f64> = big.iter().map(|&(n, _)| q0[n].abs().max(1e-300)).collect();
    type Point = (DVector<f64>, Vec<f64>, Vec<f64>);
    let resid = |p: &[f64], xb: &[f64]| -> Option<Point> {
        if xb.iter().any(|&v| !(v > 0.0 && v.is_finite())) {
            return None;
        }
        let (mut x, q) = primal_of(pool, p);
        for (b, &(n, _)) in big.iter().enumerate() {
            x[n] = xb[b];
        }
        // An uncapped user priced at zero has no finite demand: not a
        // usable point.
        if x.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let loads = pool.loads(&x);
        let f = DVector::from_fn(k + nb, |a, _| {
            if a < k {
                loads[idx[a]] - 1.0
            } else {
                let (n, _) = big[a - k];
                (pool.e[n] * x[n].powf(-pool.alpha) + pool.lin(n) - q[n]) / scale[a - k]
            }
        });
        Some((f, x, q))
    };
    let (mut f, mut x, mut q) = resid(&p, &xb)?;
    for step in 0..max_steps {
        if f.amax() < 1e-14 {
            return Some((p, xb, step));
        }
        // dF_a/dp_c = -sum_{n free, not in B} r_{n,a} r_{n,c} x_n / (alpha (q_n - d_n));
        // dF_a/dx_b = r_{b,a}; dG_b/dp_c = -r_{b,c} / s_b;
        // dG_b/dx_b = -alpha e_b x_b^(-alpha-1) / s_b.
        let h = curvature_without(pool, &x, &q, &idx, big);
        let mut jac = DMatrix::<f64>::zeros(k + nb, k + nb);
        for a in 0..k {
            for c in 0..k {
                jac[(a, c)] = -h[(a, c)];
            }
        }
        for (b, &(n, _)) in big.iter().enumerate() {
            let row = pool.row(n);
            for (a, &j) in idx.iter().enumerate() {
                jac[(a, k + b)] = row[j];
                jac[(k + b, a)] = -row[j] / scale[b];
            }
            jac[(k + b, k + b)] = -pool.alpha * pool.e[n] * x[n].powf(-pool.alpha - 1.0) / scale[b];
        }
        let d = leontief_model::linalg::min_norm_solve(jac, &(-&f), 1e-15)?;
        let norm0 = f.norm();
        let mut t = 1.0;
        loop {
            let mut trial = p.clone();
            for (a, &j) in idx.iter().enumerate() {
                trial[j] += t * d[a];
            }
            let trial_xb: Vec<f64> = (0..nb).map(|b| xb[b] + t * d[k + b]).collect();
            if let Some((ft, xt, qt)) = resid(&trial, &trial_xb) {
                if ft.norm() < (1.0 - 1e-4 * t) * norm0 || ft.amax() < 1e-14 {
                    p = trial;
                    xb = trial_xb;
                    f = ft;
                    x = xt;
                    q = qt;
                    break;
                }
            }
            t *= 0.5;
            if t < 1e-12 {
                // No progress: the active set is wrong or the point is
                // as good as the arithmetic allows.
                return (f.amax() < 1e-12).then_some((p, xb, step));
            }
        }
    }
    (f.amax() < 1e-12).then_some((p, xb, max_steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irrational_prices_of_mechanisms_md() {
        // Requests (1,3), (2,1), (3,2), unit capacities, equal entitlements,
        // uncapped: prices (-3 + sqrt 39)/2, (9 - sqrt 39)/2 (scaled by
        // e = 1/3 here, since mechanisms.md states them for e = 1).
        let pool = Pool::from_requests(
            &[vec![1.0, 3.0], vec![2.0, 1.0], vec![3.0, 2.0]],
            &[1.0; 3],
            &[false; 3],
        );
        // Start from a rough guess: both resources priced.
        let p = polish(&pool, &[0.1, 0.3, 0.1], &[0.2, 0.1]).expect("certified");
        let s = 39f64.sqrt();
        let want = [(-3.0 + s) / 2.0 / 3.0, (9.0 - s) / 2.0 / 3.0];
        // The dual optimum is unique here: compare up to scale first.
        let ratio = p.p[0] / p.p[1];
        assert!(
            (ratio - want[0] / want[1]).abs() < 1e-10,
            "{:?} vs {want:?}",
            p.p
        );
        let c = certify(&pool, &p.x, &p.p);
        assert!(c.worst() < 1e-12, "{c:?}");
    }
}
