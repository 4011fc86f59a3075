//! The fairness-efficiency families of Joe-Wong, Sen, Lan and Chiang (002)
//! as cone programs (`docs/mechanisms.md`, "Fairness-efficiency families").
//!
//! Shares s_n = omega_n x_n with omega_n = mu_n (FDS), 1 (GFJ) or
//! ||gamma_n||_p with gamma_{n,r} = D_{n,r} / C_r (the p-norm family (19);
//! p = inf is FDS). With U = sum_n w_n s_n^(1-beta) (weights default 1, as
//! in the paper), S = sum_n s_n and kappa = lambda - (1-beta)/beta, the
//! merit M = sgn(1-beta) [(1/beta) log U + kappa log S] is maximised over
//! the allocations (per-server capacity rows, caps, placement):
//!
//! | region | (beta, lambda) | program |
//! |---|---|---|
//! | alpha-fair line | lambda = (1-beta)/beta, alpha = beta | max sum w_n s_n^(1-alpha)/(1-alpha): on one server entry (or proportional entries, pooled exactly) by projected Newton on the resource prices ([`solve_alpha_dual`]); otherwise power cones (t <= s^(1-alpha) for alpha < 1, t >= s^(1-alpha) for alpha > 1); alpha = 1: max sum w_n log s_n, exponential cones |
//! | A | 0 < beta < 1, lambda > (1-beta)/beta | on one server entry (or proportional entries) the dual ([`solve_region_dual`]); otherwise max z, z <= U^theta S^(1-theta), theta = 1/(beta (1+lambda)); power cones |
//! | B | beta > 1, lambda < (1-beta)/beta | on one server entry (or proportional entries) the dual ([`solve_region_dual`]); otherwise min z/beta + kappa b, y_n <= log s_n, sum w_n exp((1-beta) y_n - z) <= 1, b <= log S; exponential cones |
//! | N | the rest of the non-degenerate plane | not concave: global 1-D search over S with certified envelopes ([`region_n`]) |
//! | degenerate | sgn(1-beta) lambda < 0 | no maximiser: refused |
//! | scale-free | lambda = 0 | maximisers form a ray: refused |
//! | trivial | beta = 1 | f = N S^lambda: maximise S (an LP), said in the output |
//!
//! Shares are divided by one common constant (the largest share a user
//! reaches alone) so they lie in (0, 1]: M changes by a constant, the
//! maximiser does not, and the cones stay well scaled.
//!
//! Every answer carries a certificate computed from the allocation alone:
//! the Frank-Wolfe gap max_{x' feasible} grad M(x) . (x' - x), one LP. Where
//! M is concave (the line, region A) it bounds M* - M(x); in region B it is
//! the stationarity (KKT) residual of a program that is convex in log s.
#![deny(missing_docs)]

pub mod region_n;

pub use leontief_audit::first_order::{frank_wolfe_gap, frank_wolfe_gap_log};
pub use leontief_core::fairness::{gradient, merit, omega, Family};
use leontief_core::{Allocation, Instance, ResourceId, ServerId};
use leontief_model::{BackendError, ConeKind, LoadedLp, LpBackend, ProblemBuilder, Row, Sense};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// Where (beta, lambda) lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Region {
    /// lambda = (1-beta)/beta.
    AlphaFair,
    /// 0 < beta < 1, lambda > (1-beta)/beta.
    A,
    /// beta > 1, lambda < (1-beta)/beta.
    B,
    /// Not quasi-concave in general.
    N,
}

/// A parameter choice leontief refuses, or a region not built yet.
#[derive(Debug, thiserror::Error)]
pub enum FdsError {
    /// Refused parameters, with the reason.
    #[error("{0}")]
    Refused(String),
    /// The backend could not run.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The largest |beta| (and alpha) solved: see [`classify`].
pub const MAX_BETA: f64 = 50.0;

/// Classify (beta, lambda); refuse the degenerate, scale-free and invalid
/// choices with the reason. beta = 1 is [`Classified::Trivial`].
pub fn classify(beta: f64, lambda: f64) -> Result<Classified, FdsError> {
    if !beta.is_finite() || !lambda.is_finite() {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda {lambda}: both must be finite"
        )));
    }
    if beta == 0.0 {
        return Err(FdsError::Refused(
            "--beta 0: f_{beta,lambda} is undefined at beta = 0 (it divides by beta)".into(),
        ));
    }
    if beta.abs() > MAX_BETA {
        return Err(FdsError::Refused(format!(
            "--beta {beta}: |beta| must be at most {MAX_BETA}: beyond it the terms s^(1-beta) of users whose shares differ by a factor of 10 span more than floating point holds and no solver here is reliable (at beta = 100 Clarabel reported a wrong answer as optimal); as beta grows the alpha-fair line tends to max-min fairness: --mechanism drfh for fds"
        )));
    }
    if beta == 1.0 {
        return Ok(Classified::Trivial);
    }
    if lambda == 0.0 {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda 0 is scale-free: f is constant along rays, so its maximisers form a ray and none is singled out"
        )));
    }
    let sgn = if beta < 1.0 { 1.0 } else { -1.0 };
    if sgn * lambda < 0.0 {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda {lambda} is degenerate: sgn(1-beta) lambda < 0, so f grows without bound as the allocation shrinks to 0 and has no maximiser"
        )));
    }
    let line = (1.0 - beta) / beta;
    let region = if (lambda - line).abs() <= 1e-12 * line.abs().max(1.0) {
        Region::AlphaFair
    } else if beta > 0.0 && beta < 1.0 && lambda > line {
        Region::A
    } else if beta > 1.0 && lambda < line {
        Region::B
    } else {
        Region::N
    };
    Ok(Classified::Region(region))
}

/// The outcome of [`classify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// beta = 1.
    Trivial,
    /// A region.
    Region(Region),
}

/// The allocation polytope: x_{n,i} columns, capacity rows, caps.
struct Poly {
    b: ProblemBuilder,
    cols: Vec<Vec<(ServerId, leontief_model::Col)>>,
}

fn polytope(instance: &Instance, sense: Sense) -> Poly {
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let mut b = ProblemBuilder::new(sense);
    let cap: Vec<Row> = (0..k * m)
        .map(|j| {
            b.add_row(
                -INF,
                instance.class_capacity(ServerId(j / m), ResourceId(j % m)),
            )
        })
        .collect();
    let caps: Vec<Option<Row>> = instance
        .users()
        .iter()
        .map(|u| u.tasks.map(|t| b.add_row(-INF, t)))
        .collect();
    Poly {
        b,
        cols: Vec::new(),
    }
    .with_columns(instance, &cap, &caps)
}

impl Poly {
    fn with_columns(mut self, instance: &Instance, cap: &[Row], caps: &[Option<Row>]) -> Poly {
        let m = instance.num_resources();
        for n in instance.user_ids() {
            let d = &instance.user(n).demand;
            let mut mine = Vec::new();
            for i in instance.server_ids().filter(|&i| instance.can_run_on(n, i)) {
                let e = (0..m)
                    .filter(|&r| d[r] > 0.0)
                    .map(|r| (cap[i.0 * m + r], d[r]))
                    .chain(caps[n.0].map(|row| (row, 1.0)));
                mine.push((i, self.b.add_col(0.0, 0.0, INF, e)));
            }
            self.cols.push(mine);
        }
        self
    }
}

/// Solve the family at (beta, lambda) on a conic backend (Clarabel).
pub fn solve<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
) -> Result<Allocation, FdsError> {
    let region = match classify(beta, lambda)? {
        Classified::Trivial => None,
        Classified::Region(Region::N) => {
            return region_n::solve(backend, instance, family, beta, lambda)
        }
        Classified::Region(Region::AlphaFair) => {
            return solve_alpha(backend, instance, family, beta)
        }
        Classified::Region(r @ (Region::A | Region::B)) => {
            if let Some(a) = solve_region_dual(instance, family, beta, lambda) {
                return Ok(a);
            }
            Some(r)
        }
    };
    solve_program(backend, instance, family, beta, lambda, region, None)
}

/// The alpha-fair member (beta = alpha, lambda = (1-alpha)/alpha), alpha >
/// 0; alpha = 1 is proportional fairness, max sum w_n log s_n (the limit of
/// the line as beta -> 1, which beta = 1 itself is not).
pub fn solve_alpha<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    if !alpha.is_finite() || alpha <= 0.0 {
        return Err(FdsError::Refused(format!(
            "--alpha {alpha}: must be finite and > 0"
        )));
    }
    if alpha > MAX_BETA {
        return Err(FdsError::Refused(format!(
            "--alpha {alpha}: must be at most {MAX_BETA}: beyond it the terms s^(1-alpha) of users whose shares differ by a factor of 10 span more than floating point holds and no solver here is reliable (at alpha = 100 Clarabel reported a wrong answer as optimal); as alpha grows the alpha-fair allocation tends to max-min fairness: --mechanism drfh for fds"
        )));
    }
    // One server entry: the m-dimensional dual (as bbf-eg); the cone
    // program where it does not apply or does not reach `optimal`.
    if let Some(a) = solve_alpha_dual(instance, family, alpha) {
        if a.status == leontief_core::Status::Optimal {
            return Ok(a);
        }
    }
    solve_alpha_conic(backend, instance, family, alpha)
}

/// How the dual saw the servers: one entry, or proportional entries pooled
/// exactly (c_i = t_i C: any pooled allocation splits as x_{n,i} = x_n t_i).
fn entries_note(instance: &Instance) -> String {
    match instance.num_entries() {
        1 => "one server entry".into(),
        k => format!(
            "{k} server entries with proportional capacities, pooled exactly; tasks split in proportion to capacity"
        ),
    }
}

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
fn continuation(
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
fn unresolved_split(pool: &leontief_bbf::Pool, x: &[f64], p: &[f64]) -> Option<(usize, f64)> {
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

/// The alpha-fair line as the cone program on Clarabel, whatever the
/// instance (what [`solve_alpha`] falls back to).
pub fn solve_alpha_conic<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    solve_program(
        backend,
        instance,
        family,
        alpha,
        (1.0 - alpha) / alpha,
        Some(Region::AlphaFair),
        None,
    )
}

/// `fixed_total`: the inner problem of the region-N search, the line's
/// program at alpha = beta with S fixed (no polish: the polish solves the
/// unconstrained KKT system).
fn solve_program<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
) -> Result<Allocation, FdsError> {
    let om = omega(instance, family);
    solve_program_slope(
        backend,
        instance,
        family,
        om,
        beta,
        lambda,
        region,
        fixed_total,
    )
    .map(|r| r.0)
}

/// The alpha-fair program max sum_n w_n u_alpha(omega_n x_n) with the
/// scales `om` given (one per user) instead of a family's: what
/// alphaPF-VDS solves when gamma is separable on the eligibility graph
/// (omega_n = 1 / (w_n a_n)). Same cone program, polish and certificate
/// as the line.
pub fn solve_alpha_scaled<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    om: Vec<f64>,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    solve_program_slope(
        backend,
        instance,
        Family::Gfj,
        om,
        alpha,
        (1.0 - alpha) / alpha,
        Some(Region::AlphaFair),
        None,
    )
    .map(|r| r.0)
}

/// [`solve_program`] with the scales `om` given, and with `fixed_total`
/// also d phi / d S at the answer, phi = sum_n w_n s_n^(1-beta) the line
/// program's value in unscaled shares, from the dual of the row that fixes
/// S.
///
/// Shares enter the cone program divided by a common scale (the largest
/// share a user reaches alone is 1). Clarabel's path depends on it: a
/// region-N slice of a 3-user instance ended `numerical_failure`
/// (InsufficientProgress, the iterates running off towards an
/// infeasibility certificate) for every S in a window with that scale and
/// was solved with it halved or doubled. So a numerical failure is
/// retried with the scale halved, then doubled, and the output says so.
#[allow(clippy::too_many_arguments)]
fn solve_program_slope<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    om: Vec<f64>,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
) -> Result<(Allocation, Option<f64>), FdsError> {
    let mut first: Option<(Allocation, Option<f64>)> = None;
    for rescale in [1.0, 0.5, 2.0] {
        let (mut a, slope) = solve_program_rescaled(
            backend,
            instance,
            family,
            om.clone(),
            beta,
            lambda,
            region,
            fixed_total,
            rescale,
        )?;
        if a.status != leontief_core::Status::NumericalFailure {
            if rescale != 1.0 {
                a.notes.push(format!(
                    "the cone program ended numerical_failure with the shares scaled so that the largest a user reaches alone is 1; solved with that scale times {rescale}"
                ));
            }
            return Ok((a, slope));
        }
        first.get_or_insert((a, slope));
    }
    Ok(first.expect("at least one attempt"))
}

/// One attempt of [`solve_program_slope`] with the common share scale
/// multiplied by `rescale`.
#[allow(clippy::too_many_arguments)]
fn solve_program_rescaled<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    om: Vec<f64>,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
    rescale: f64,
) -> Result<(Allocation, Option<f64>), FdsError> {
    let t0 = Instant::now();
    let nu = instance.num_users();
    // Common scale: the largest share a user reaches alone is 1.
    let alone: Vec<f64> = instance
        .user_ids()
        .map(|n| {
            let g: f64 = instance.server_ids().map(|i| instance.gamma(n, i)).sum();
            om[n.0] * g.min(instance.user(n).tasks.unwrap_or(INF))
        })
        .collect();
    let scale = alone
        .iter()
        .copied()
        .filter(|a| a.is_finite() && *a > 0.0)
        .fold(0.0, f64::max);
    if scale == 0.0 {
        return Err(FdsError::Refused(
            "no user can run anywhere: every allocation is zero".into(),
        ));
    }
    let scale = scale * rescale;
    let w: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let runnable: Vec<bool> = (0..nu)
        .map(|n| alone[n] > 0.0 && alone[n].is_finite())
        .collect();
    let mut poly = polytope(instance, Sense::Maximise);
    let xcols = std::mem::take(&mut poly.cols);
    let mut b = poly.b;
    let om_s: Vec<f64> = om.iter().map(|o| o / scale).collect();
    // Cone blocks: rows first, then the columns that use them.
    let method: &str;
    let mut s_rows: Vec<Option<Row>> = vec![None; nu]; // rows holding -s~_n
    let mut total_s_row: Option<Row> = None; // row holding -S~
    match region {
        None => {
            method = "beta = 1 is trivial: f = N S^lambda, so leontief maximises S (an LP)";
        }
        Some(Region::AlphaFair) => {
            let alpha = beta;
            for n in (0..nu).filter(|&n| runnable[n]) {
                if alpha < 0.0 {
                    // (t, 1, s~) in K_pow(1/(1-alpha)): t >= s~^(1-alpha)
                    // (1 - alpha > 1; the region-N inner problem only).
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(
                        r0,
                        3,
                        ConeKind::Power {
                            alpha: 1.0 / (1.0 - alpha),
                        },
                    );
                    s_rows[n] = Some(r2);
                    b.add_col(-w[n], -INF, INF, [(r0, -1.0)]);
                } else if alpha < 1.0 {
                    // (s~, 1, t) in K_pow(1-alpha): t <= s~^(1-alpha).
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 - alpha });
                    s_rows[n] = Some(r0);
                    b.add_col(w[n] / (1.0 - alpha), -INF, INF, [(r2, -1.0)]);
                } else if alpha > 1.0 {
                    // (t, s~, 1) in K_pow(1/alpha): t >= s~^(1-alpha).
                    let r0 = b.add_row(-INF, 0.0);
                    let r1 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 / alpha });
                    s_rows[n] = Some(r1);
                    b.add_col(-w[n] / (alpha - 1.0), -INF, INF, [(r0, -1.0)]);
                } else {
                    // (u, 1, s~) in K_exp: u <= log s~.
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(r0, 3, ConeKind::Exponential);
                    s_rows[n] = Some(r2);
                    b.add_col(w[n], -INF, INF, [(r0, -1.0)]);
                }
            }
            method = if alpha < 1.0 {
                "alpha-fair line: max sum w s^(1-alpha)/(1-alpha), power cones"
            } else if alpha > 1.0 {
                "alpha-fair line: min sum w s^(1-alpha)/(alpha-1), power cones"
            } else {
                "alpha = 1, proportional fairness: max sum w log s, exponential cones"
            };
        }
        Some(Region::A) => {
            let theta = 1.0 / (beta * (1.0 + lambda));
            let mut ts = Vec::new();
            for n in (0..nu).filter(|&n| runnable[n]) {
                let r0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let r2 = b.add_row(-INF, 0.0);
                b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 - beta });
                s_rows[n] = Some(r0);
                ts.push((n, r2));
            }
            // z <= U^theta S^(1-theta): (U, S, z) in K_pow(theta).
            let u0 = b.add_row(-INF, 0.0);
            let u1 = b.add_row(-INF, 0.0);
            let u2 = b.add_row(-INF, 0.0);
            b.add_cone(u0, 3, ConeKind::Power { alpha: theta });
            total_s_row = Some(u1);
            for (n, r2) in ts {
                b.add_col(0.0, -INF, INF, [(r2, -1.0), (u0, -w[n])]);
            }
            b.add_col(1.0, -INF, INF, [(u2, -1.0)]);
            method = "region A: max z, z <= U^theta S^(1-theta), power cones";
        }
        Some(Region::B) => {
            let kappa = lambda - (1.0 - beta) / beta;
            let lin = b.add_row(-INF, 1.0); // sum w v <= 1
            let mut per = Vec::new();
            for n in (0..nu).filter(|&n| runnable[n]) {
                // y <= log s~: (y, 1, s~) in K_exp.
                let a0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let a2 = b.add_row(-INF, 0.0);
                b.add_cone(a0, 3, ConeKind::Exponential);
                s_rows[n] = Some(a2);
                // v >= exp((1-beta) y - z): ((1-beta) y - z, 1, v) in K_exp.
                let c0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let c2 = b.add_row(-INF, 0.0);
                b.add_cone(c0, 3, ConeKind::Exponential);
                per.push((n, a0, c0, c2));
            }
            // b <= log S~: (b, 1, S~) in K_exp.
            let d0 = b.add_row(-INF, 0.0);
            b.add_row(-INF, 1.0);
            let d2 = b.add_row(-INF, 0.0);
            b.add_cone(d0, 3, ConeKind::Exponential);
            total_s_row = Some(d2);
            let c0s: Vec<(Row, f64)> = per.iter().map(|p| (p.2, 1.0)).collect();
            for &(n, a0, c0, c2) in &per {
                b.add_col(0.0, -INF, INF, [(a0, -1.0), (c0, -(1.0 - beta))]);
                b.add_col(0.0, 0.0, INF, [(lin, w[n]), (c2, -1.0)]);
            }
            b.add_col(-1.0 / beta, -INF, INF, c0s);
            b.add_col(-kappa, -INF, INF, [(d0, -1.0)]);
            method = "region B: min z/beta + kappa b with exponential cones (log-sum-exp of (1-beta) log s)";
        }
        Some(Region::N) => unreachable!("refused above"),
    }
    if let Some(total) = fixed_total {
        // S~ = total / scale, as a row holding -S~.
        assert!(total_s_row.is_none(), "fixed S only on the alpha-fair line");
        total_s_row = Some(b.add_row(-total / scale, -total / scale));
    }
    let problem = {
        // Attach the share coefficients to the x columns: rebuild columns
        // in one pass with their cone-row entries.
        let mut p = b.build();
        add_share_entries(&mut p, &xcols, &om_s, &s_rows, total_s_row);
        if region.is_none() {
            for n in 0..nu {
                for &(_, c) in &xcols[n] {
                    p.col_cost[c.0] = om_s[n];
                }
            }
        }
        p
    };
    let build = t0.elapsed().as_secs_f64();
    let sol = backend.load(problem)?.solve()?;
    // phi = scale^(1-beta) U~ with U~ = f V (V the program's objective:
    // f = 1 - alpha, or -1 for alpha < 0), and the row holds -S / scale.
    let slope = match (fixed_total, total_s_row) {
        (Some(_), Some(row)) if sol.status.has_solution() && !sol.row_dual.is_empty() => {
            let f = if beta < 0.0 { -1.0 } else { 1.0 - beta };
            // (The backend's dual convention, col_dual = c - A^T y, gives
            // y = -dV/d(bound) here; checked against finite differences in
            // region_n's tests.)
            Some(-scale.powf(1.0 - beta) * f * sol.row_dual[row.0] / scale)
        }
        _ => None,
    };
    let k = instance.num_entries();
    let mut a = if sol.status.has_solution() {
        let mut tasks = vec![vec![0.0; k]; nu];
        for n in 0..nu {
            for &(i, c) in &xcols[n] {
                tasks[n][i.0] = sol.x[c.0].max(0.0);
            }
        }
        Allocation::new(instance, family.name(), sol.status, tasks)
    } else {
        Allocation::empty(instance, family.name(), sol.status)
    };
    if a.status.has_solution() && fixed_total.is_none() {
        let obj = match region {
            None => Objective::Linear,
            Some(Region::AlphaFair) if beta == 1.0 => Objective::Log,
            Some(_) => Objective::Merit(beta, lambda),
        };
        if let Some(x) = polish(instance, &om, obj, &a.tasks) {
            let status = a.status;
            a = Allocation::new(instance, family.name(), status, x);
            a.notes
                .push("Newton-polished on the KKT system of the active set".into());
        } else if !matches!(obj, Objective::Linear) {
            // Interior-point accuracy is not the exactness `optimal`
            // promises (the fuzzer found such answers 1e-5 off, their
            // Frank-Wolfe check failing): say so in the status.
            if a.status == leontief_core::Status::Optimal {
                a.status = leontief_core::Status::ReducedAccuracy;
            }
            a.notes.push("not polished (the active-set Newton step did not certify): interior-point accuracy, about 1e-5 relative, so the status is reduced_accuracy".into());
        }
    }
    a.backend_status = Some(sol.raw_status.clone());
    a.build_seconds = build;
    a.solve_seconds = sol.seconds;
    a.notes.push(format!(
        "region {}; method: {method}",
        match region {
            None => "trivial (beta = 1)".to_string(),
            Some(r) => serde_json::to_value(r)
                .map(|v| v.as_str().unwrap_or("?").to_string())
                .unwrap_or_default(),
        }
    ));
    if instance.users().iter().any(|u| u.weight != 1.0) {
        a.notes
            .push("weights enter as U = sum_n w_n s_n^(1-beta) (the paper has none)".into());
    }
    if a.status.has_solution() {
        a.objective = Some(merit(
            &om,
            &w,
            &a.user_tasks,
            beta,
            lambda,
            region.is_none(),
        ));
    }
    Ok((a, slope))
}

/// Put the share coefficients -omega~_n on the x columns in the rows that
/// hold -s~_n, and on every x column in the row holding -S~. Columns are
/// rebuilt in one pass (entries stay sorted: those rows come after the
/// capacity and cap rows the columns already use).
fn add_share_entries(
    p: &mut leontief_model::Problem,
    xcols: &[Vec<(ServerId, leontief_model::Col)>],
    om_s: &[f64],
    s_rows: &[Option<Row>],
    total: Option<Row>,
) {
    let mut extra: Vec<Vec<(usize, f64)>> = vec![Vec::new(); p.num_cols()];
    for (n, cols) in xcols.iter().enumerate() {
        for &(_, c) in cols {
            if let Some(r) = s_rows[n] {
                extra[c.0].push((r.0, -om_s[n]));
            }
            if let Some(r) = total {
                extra[c.0].push((r.0, -om_s[n]));
            }
            extra[c.0].sort_by_key(|e| e.0);
        }
    }
    let mut start = Vec::with_capacity(p.num_cols() + 1);
    let mut index = Vec::with_capacity(p.a_index.len());
    let mut value = Vec::with_capacity(p.a_value.len());
    start.push(0);
    for j in 0..p.num_cols() {
        let mut col: Vec<(usize, f64)> = (p.a_start[j]..p.a_start[j + 1])
            .map(|k| (p.a_index[k], p.a_value[k]))
            .collect();
        col.extend(extra[j].iter().copied());
        col.sort_by_key(|e| e.0);
        for (r, v) in col {
            index.push(r);
            value.push(v);
        }
        start.push(index.len());
    }
    p.a_start = start;
    p.a_index = index;
    p.a_value = value;
}

/// The objective whose stationarity the polish solves.
#[derive(Debug, Clone, Copy)]
enum Objective {
    /// The merit M at (beta, lambda).
    Merit(f64, f64),
    /// sum_n w_n log s_n (alpha = 1).
    Log,
    /// S (beta = 1, trivial): linear, nothing to polish.
    Linear,
}

fn objective_gradient(obj: Objective, om: &[f64], w: &[f64], x: &[f64]) -> Vec<f64> {
    match obj {
        Objective::Merit(b, l) => gradient(om, w, x, b, l, false),
        Objective::Log => x.iter().zip(w).map(|(x, w)| w / x).collect(),
        Objective::Linear => om.to_vec(),
    }
}

/// Newton polish of an interior-point answer on the KKT system of its
/// active set, for any number of servers.
///
/// From the interior-point answer take the positive columns x_c (c = (n, i),
/// x_{n,i} > 1e-7 x_n) and the tight rows rho (capacity rows (i, r) and cap
/// rows, activity >= (1 - 1e-6) bound). Solve
///
/// ```text
///   grad_n M(X) - sum_{rho tight} a_{rho,c} p_rho = 0   for every positive c
///   (sum_c a_{rho,c} x_c - b_rho) / b_rho = 0           for every tight rho
/// ```
///
/// (X the user totals) by Newton with minimum-norm steps (SVD), since the
/// split over servers is not unique. The Jacobian of the gradient in X comes
/// from central differences of the analytic gradient. The polished point is
/// kept only if it is feasible for every row, non-negative, has p >= 0 and
/// a residual below 1e-10; otherwise the answer is left as is. Returns the
/// polished x_{n,i}, or `None`.
fn polish(
    instance: &Instance,
    om: &[f64],
    obj: Objective,
    tasks: &[Vec<f64>],
) -> Option<Vec<Vec<f64>>> {
    if matches!(obj, Objective::Linear) {
        return None;
    }
    // The interior point leaves small positive values on columns that are 0
    // at the optimum: try looser thresholds for "positive" and "tight" until
    // one active set certifies.
    [1e-7, 1e-5, 1e-3]
        .iter()
        .find_map(|&th| polish_at(instance, om, obj, tasks, th))
}

fn polish_at(
    instance: &Instance,
    om: &[f64],
    obj: Objective,
    tasks: &[Vec<f64>],
    threshold: f64,
) -> Option<Vec<Vec<f64>>> {
    use nalgebra::{DMatrix, DVector};
    let users = instance.users();
    let (nu, m) = (users.len(), instance.num_resources());
    let w: Vec<f64> = users.iter().map(|u| u.weight).collect();
    let totals: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    // Positive columns.
    let cols: Vec<(usize, usize)> = (0..nu)
        .flat_map(|n| {
            let t = totals[n];
            tasks[n]
                .iter()
                .enumerate()
                .filter(move |(_, &x)| x > threshold * t.max(1e-300))
                .map(move |(i, _)| (n, i))
        })
        .collect();
    // The dense KKT system below is for small active sets: bail out before
    // building its rows (dense in the columns: gigabytes at 50,000).
    if cols.len() > 600 {
        return None;
    }
    // Tight rows: (a_{rho,c} for each positive column, bound); which are
    // capacity rows (entry, resource, index) and cap rows (user, index).
    let mut rows: Vec<(Vec<f64>, f64)> = Vec::new();
    let mut tight_cap: Vec<(usize, usize, usize)> = Vec::new();
    let mut tight_user: Vec<(usize, usize)> = Vec::new();
    for i in instance.server_ids() {
        for r in 0..m {
            let c = instance.class_capacity(i, ResourceId(r));
            let used: f64 = (0..nu).map(|n| users[n].demand[r] * tasks[n][i.0]).sum();
            if c > 0.0 && used >= c * (1.0 - 10.0 * threshold) {
                rows.push((
                    cols.iter()
                        .map(|&(n, ci)| if ci == i.0 { users[n].demand[r] } else { 0.0 })
                        .collect(),
                    c,
                ));
                tight_cap.push((i.0, r, rows.len() - 1));
            }
        }
    }
    for n in 0..nu {
        if let Some(t) = users[n].tasks {
            if totals[n] >= t * (1.0 - 10.0 * threshold) {
                rows.push((
                    cols.iter()
                        .map(|&(cn, _)| if cn == n { 1.0 } else { 0.0 })
                        .collect(),
                    t,
                ));
                tight_user.push((n, rows.len() - 1));
            }
        }
    }
    let (nc, nr) = (cols.len(), rows.len());
    if nc == 0 || nc + nr > 600 {
        return None;
    }
    let grad = |x: &[f64]| -> Vec<f64> {
        let mut tot = vec![0.0; nu];
        for (k, &(n, _)) in cols.iter().enumerate() {
            tot[n] += x[k];
        }
        objective_gradient(obj, om, &w, &tot)
    };
    let residual = |x: &[f64], p: &[f64]| -> DVector<f64> {
        let g = grad(x);
        DVector::from_fn(nc + nr, |k, _| {
            if k < nc {
                g[cols[k].0] - (0..nr).map(|j| rows[j].0[k] * p[j]).sum::<f64>()
            } else {
                let (a, b) = &rows[k - nc];
                (a.iter().zip(x).map(|(a, x)| a * x).sum::<f64>() - b) / b
            }
        })
    };
    let mut x: Vec<f64> = cols.iter().map(|&(n, i)| tasks[n][i]).collect();
    let mut p = vec![0.0; nr];
    if nr > 0 {
        // Initial prices: least squares of grad = A^T p on the positive columns.
        let g = grad(&x);
        let a = DMatrix::from_fn(nc, nr, |k, j| rows[j].0[k]);
        let rhs = DVector::from_fn(nc, |k, _| g[cols[k].0]);
        let sol = leontief_model::linalg::min_norm_solve(a, &rhs, 1e-14)?;
        p.copy_from_slice(sol.as_slice());
    }
    for _ in 0..40 {
        let f = residual(&x, &p);
        if f.amax() < 1e-13 {
            break;
        }
        let mut jac = DMatrix::zeros(nc + nr, nc + nr);
        for c in 0..nc {
            let h = 1e-6 * x[c].abs().max(1e-9);
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[c] += h;
            xm[c] -= h;
            let col = (residual(&xp, &p) - residual(&xm, &p)) / (2.0 * h);
            jac.set_column(c, &col);
        }
        for j in 0..nr {
            for c in 0..nc {
                jac[(c, nc + j)] = -rows[j].0[c];
            }
        }
        let step = leontief_model::linalg::min_norm_solve(jac, &(-f), 1e-14)?;
        let mut t = 1.0;
        while (0..nc).any(|c| x[c] + t * step[c] <= 0.0) {
            t *= 0.5;
            if t < 1e-8 {
                return None;
            }
        }
        for c in 0..nc {
            x[c] += t * step[c];
        }
        for j in 0..nr {
            p[j] += t * step[nc + j];
        }
    }
    if residual(&x, &p).amax() >= 1e-10 || p.iter().any(|&v| v < -1e-12) {
        return None;
    }
    let mut out = vec![vec![0.0; instance.num_entries()]; nu];
    for (k, &(n, i)) in cols.iter().enumerate() {
        out[n][i] = x[k];
    }
    // Dual feasibility on the columns left at 0: no runnable column may
    // have a positive reduced cost grad_n - sum_rho a_{rho,(n,i)} p_rho.
    let g = grad(&x);
    let gscale = g.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(1e-300);
    for n in 0..nu {
        for i in instance
            .server_ids()
            .filter(|&i| instance.can_run_on(leontief_core::UserId(n), i))
        {
            if cols.contains(&(n, i.0)) {
                continue;
            }
            let priced: f64 = tight_cap
                .iter()
                .filter(|&&(ci, _, _)| ci == i.0)
                .map(|&(_, r, j)| users[n].demand[r] * p[j])
                .sum::<f64>()
                + tight_user
                    .iter()
                    .filter(|&&(u, _)| u == n)
                    .map(|&(_, j)| p[j])
                    .sum::<f64>();
            if g[n] - priced > 1e-9 * gscale {
                return None;
            }
        }
    }
    // Every row, tight or not, must hold.
    for i in instance.server_ids() {
        for r in 0..m {
            let used: f64 = (0..nu).map(|n| users[n].demand[r] * out[n][i.0]).sum();
            if used > instance.class_capacity(i, ResourceId(r)) * (1.0 + 1e-12) + 1e-15 {
                return None;
            }
        }
    }
    for n in 0..nu {
        if out[n].iter().sum::<f64>() > users[n].tasks.unwrap_or(INF) * (1.0 + 1e-12) {
            return None;
        }
    }
    Some(out)
}
