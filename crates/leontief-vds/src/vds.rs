//! alphaPF-VDS [R] for alpha >= 1 as a game among servers (docs/mechanisms.md,
//! "Server-based mechanisms"): server i maximises
//!
//! ```text
//!   U_i = sum_{n eligible on i} w_n^alpha s_{n,i}^(1-alpha) / (1-alpha),   s_{n,i} = x_n / gamma_{n,i}
//! ```
//!
//! (w_n log s_{n,i} at alpha = 1) over its own capacity polytope, the
//! users' tasks on the other servers o_n fixed. With b_n = w_n
//! gamma_{n,i}^((alpha-1)/alpha) the utility is b_n^alpha x^(1-alpha) /
//! (1-alpha) of the user's total x = o_n + y_n, so the server's best
//! response is a separable concave program over y in its m-resource
//! polytope, solved exactly on its dual:
//!
//! ```text
//!   g(lambda) = sum_r lambda_r + sum_n psi_n(p_n),   p_n = sum_r lambda_r D_{n,r} / c_{i,r},
//!   x_n(p) = clamp(b_n p^(-1/alpha), o_n, o_n + room_n)
//! ```
//!
//! (psi_n the conjugate of the user's utility on [o_n, o_n + room_n], up to
//! a constant; written so that no term exceeds the price scale, whatever
//! alpha), by the projected Newton method bbf-eg's dual shares
//! ([`leontief_model::market`]: the response is its buyers with lower
//! bounds o_n), O(E m^2) per step for the E eligible users. A
//! per-server scale e^ell on the prices (fixed at the first response and
//! kept across sweeps for warm starts) keeps them near 1: without it
//! w^alpha gamma^(alpha-1) overflows at alpha = 30.
//!
//! The servers respond in turn (Gauss-Seidel) or all at once with damping
//! (Jacobi, the distributed form) until the certificate holds and either
//! the change in x_n or the certificate's KKT residual is below
//! tolerance ([`VdsSettings::tolerance`]). The certificate
//! ([`vds_certificate`]) is computed from (x, prices) alone: by weak
//! duality, g_i(lambda_i) bounds server i's best-response value for any
//! lambda_i >= 0, so sum_i [g_i(lambda_i) - U_i(x)] bounds the
//! Nikaido-Isoda gap from above; it is printed relative to each server's
//! spending sum_r lambda_{i,r} c_{i,r} (the first-order value of the whole
//! server, invariant to the utility's scale).

use crate::vds_finish::{finish, FinishServer};
use crate::Eligibility;
pub use leontief_audit::equilibrium::VdsCertificate;
use leontief_core::{Instance, ResourceId, ServerId, Tasks};
use leontief_model::market::Market;

const INF: f64 = f64::INFINITY;

/// The audit's certificate of an alphaPF-VDS point
/// ([`leontief_audit::equilibrium::vds_certificate`]) for an allocation
/// held densely (`tasks[n][i]`), as this crate's solvers hold it.
pub fn vds_certificate(
    instance: &Instance,
    alpha: f64,
    tasks: &[Vec<f64>],
    prices: &[Vec<f64>],
    log_scale: &[f64],
    tolerance: f64,
) -> VdsCertificate {
    let tasks = Tasks::from_dense(tasks, instance.num_entries());
    leontief_audit::equilibrium::vds_certificate(
        instance, alpha, &tasks, prices, log_scale, tolerance,
    )
}

/// Sweeps per block of the adaptive over-relaxation of Gauss-Seidel (see
/// [`VdsSettings::over_relax`]).
const RELAX_BLOCK: usize = 50;

/// The largest over-relaxation factor (1.95 was slower than 1.9 at 300 x
/// 50, alpha = 3: 2,569 sweeps against 1,365).
const MAX_OVER_RELAXATION: f64 = 1.9;

/// How to run the best responses.
#[derive(Debug, Clone, Copy)]
pub struct VdsSettings {
    /// alpha >= 1, finite.
    pub alpha: f64,
    /// `Some(theta)`: damped Jacobi (every server responds to the same x,
    /// x <- (1 - theta) x + theta BR(x)); `None`: Gauss-Seidel.
    pub jacobi: Option<f64>,
    /// Sweeps over the servers at most.
    pub max_sweeps: usize,
    /// The certificate's tolerance: stop when it holds (Nikaido-Isoda
    /// bound and infeasibility within this, KKT residual within its square
    /// root) and either a sweep changes no x_n by more than 1e-12 of the
    /// largest or the KKT residual is within this too.
    pub tolerance: f64,
    /// Stop at the first sweep that starts after this instant (the
    /// outcome says `timed_out`). Default none.
    pub deadline: Option<std::time::Instant>,
    /// Over-relax Gauss-Seidel adaptively (default on; Jacobi is damped
    /// instead): each server's new tasks are x + omega (BR(x) - x)
    /// (negatives at 0), omega 1 at first and raised every
    /// `RELAX_BLOCK` sweeps from the observed rate lambda of the change
    /// (Hageman and Young's estimate: rho_J = (lambda + omega - 1) /
    /// (omega sqrt(lambda)), omega = 2 / (1 + sqrt(1 - rho_J^2)), at most
    /// `MAX_OVER_RELAXATION`, never lowered). A fixed point of the best
    /// responses is one of the relaxed sweeps, and the certificate
    /// decides as before. Fixed factors were fragile: at 1,000 x 100 with
    /// 10 eligible, alpha = 3, omega 1.9 converged in 2,280 sweeps and
    /// 1.8 not in 10,000 (docs/design/server-based.md).
    pub over_relax: bool,
    /// Try the interior-point finish (`vds_finish.rs`) every
    /// [`FINISH_EVERY`] sweeps (default on; Gauss-Seidel and Jacobi alike;
    /// up to [`FINISH_MAX_PRICES`] priced resources in all): the
    /// equilibrium's complementarity conditions over every eligible pair,
    /// from the sweeps' point. Its answer ends the run only when the
    /// certificate holds with the KKT residual within the tolerance;
    /// otherwise the sweeps go on, from its point if it reached one whose
    /// certificate holds.
    pub finish: bool,
}

/// Sweeps between two tries of the interior-point finish (doubled after
/// each try that gives no point whose certificate holds, and after each
/// restart from a finish's point but the first: on instances with caps
/// where the finish stalls, 15-31 tries cost 5-17 s at 1,000 x 100 where
/// the sweeps alone take 2-8 s).
pub const FINISH_EVERY: usize = 50;

/// The interior-point finish runs only where the servers' priced
/// resources (the size of its dense step system) are at most this many:
/// each iteration is an LU of that size. At 1,000 users, 10 eligible
/// each, 2 resources, alpha = 3: 300 servers (600 prices) 1.2 s against
/// 10.9 s for the sweeps alone; 500 (1,000 prices) 6.6 s against 7.8 s;
/// 1,000 servers (2,000 prices) not ended in 120 s against 3.5 s.
pub const FINISH_MAX_PRICES: usize = 800;

impl Default for VdsSettings {
    fn default() -> Self {
        VdsSettings {
            alpha: 2.0,
            jacobi: None,
            max_sweeps: 10_000,
            tolerance: 1e-9,
            deadline: None,
            over_relax: true,
            finish: true,
        }
    }
}

/// What [`vds`] returns.
#[derive(Debug, Clone)]
pub struct VdsOutcome {
    /// x_{n,i}.
    pub tasks: Vec<Vec<f64>>,
    /// Per server entry, prices per unit of each resource in the server's
    /// scaled units (multiply by e^ell_i for the utility's units).
    pub prices: Vec<Vec<f64>>,
    /// ell_i, the log of each server's price scale.
    pub log_scale: Vec<f64>,
    /// Sweeps run.
    pub sweeps: usize,
    /// The change of x_n and the certificate are within tolerance.
    pub converged: bool,
    /// Projected-Newton steps over all best responses.
    pub newton_steps: usize,
    /// Best responses whose dual did not reach its tolerance (the sweep
    /// went on with the best point found).
    pub inexact_responses: usize,
    /// The certificate of the final point.
    pub certificate: VdsCertificate,
    /// Stopped by [`VdsSettings::deadline`] before converging.
    pub timed_out: bool,
    /// The over-relaxation factor of the last sweep (1: plain).
    pub over_relaxation: f64,
    /// Interior-point finishes tried.
    pub finishes_tried: usize,
    /// Interior-point iterations over all finishes.
    pub finish_iterations: usize,
    /// The answer is the interior-point finish's (certified like the
    /// sweeps'); false when the sweeps ended the run, also from a
    /// finish's point.
    pub finished: bool,
}

/// One server's data for repeated best responses.
struct ServerData {
    /// Resources with positive capacity used by an eligible user.
    res: Vec<usize>,
    cap: Vec<f64>,
    /// Eligible users.
    users: Vec<usize>,
    /// D / c, E x |res|.
    r: Vec<f64>,
    /// log of w_n gamma^((alpha-1)/alpha).
    log_b: Vec<f64>,
    /// Price scale (log), set at the first response.
    ell: Option<f64>,
    /// Warm-start prices (normalised constraints, scaled units).
    lam: Vec<f64>,
}

impl ServerData {
    fn new(instance: &Instance, i: usize, list: &[(usize, f64)], alpha: f64) -> Self {
        let users = instance.users();
        let m = instance.num_resources();
        let c = |r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
        let res: Vec<usize> = (0..m)
            .filter(|&r| c(r) > 0.0 && list.iter().any(|&(n, _)| users[n].demand[r] > 0.0))
            .collect();
        let mut r = Vec::with_capacity(list.len() * res.len());
        for &(n, _) in list {
            for &j in &res {
                r.push(users[n].demand[j] / c(j));
            }
        }
        ServerData {
            cap: res.iter().map(|&j| c(j)).collect(),
            lam: vec![1.0; res.len()],
            res,
            users: list.iter().map(|&(n, _)| n).collect(),
            r,
            log_b: list
                .iter()
                .map(|&(n, g)| users[n].weight.ln() + (alpha - 1.0) / alpha * g.ln())
                .collect(),
            ell: None,
        }
    }

    /// The best response to `total` (x_n over all servers) and `mine`
    /// (x_{n,i}); writes x_{n,i} into `out` (indexed like `users`).
    fn respond(
        &mut self,
        instance: &Instance,
        alpha: f64,
        total: &[f64],
        mine: &[f64],
        shift: &[f64],
        out: &mut [f64],
    ) -> (usize, bool) {
        let e = self.users.len();
        let m = self.res.len();
        if e == 0 {
            return (0, true);
        }
        let lo: Vec<f64> = (0..e)
            .map(|k| (total[self.users[k]] - mine[k]).max(0.0))
            .collect();
        let hi: Vec<f64> = (0..e)
            .map(|k| {
                instance.users()[self.users[k]]
                    .tasks
                    .map_or(INF, |t| t.max(lo[k]))
            })
            .collect();
        // Everything fits at the caps: no price.
        if hi.iter().all(|h| h.is_finite()) {
            let mut used = vec![0.0; m];
            for k in 0..e {
                for (j, u) in used.iter_mut().enumerate() {
                    *u += self.r[k * m + j] * (hi[k] - lo[k]);
                }
            }
            if used.iter().all(|&u| u <= 1.0) {
                self.lam = vec![0.0; m];
                self.ell.get_or_insert(0.0);
                for k in 0..e {
                    out[k] = hi[k] - lo[k];
                }
                return (0, true);
            }
        }
        let ell = match self.ell {
            Some(l) if self.lam.iter().any(|&v| v > 0.0) => l,
            _ => {
                let l = self.initial_scale(alpha, &lo, &hi);
                self.lam = vec![1.0; m];
                self.ell = Some(l);
                l
            }
        };
        let ln_b: Vec<f64> = self
            .log_b
            .iter()
            .zip(&self.users)
            .map(|(lb, &n)| lb + shift[n] - ell / alpha)
            .collect();
        let resp = Market::new(alpha, m, &self.r, ln_b, lo, hi, Vec::new());
        let lo = resp.lower();
        let mut x = vec![0.0; e];
        let mut lam = self.lam.clone();
        let (steps, ok) = resp.solve(&mut lam, &mut x, 1e-13);
        // Re-centre the scale so the next response starts near 1 (the
        // response itself does not change: lam / kappa with e^ell kappa).
        let top = lam.iter().copied().fold(0.0, f64::max);
        if top > 0.0 && top.is_finite() {
            self.ell = Some(ell + top.ln());
            lam.iter_mut().for_each(|l| *l /= top);
        }
        self.lam = lam;
        for k in 0..e {
            out[k] = (x[k] - lo[k]).max(0.0);
        }
        // A response whose dual stopped short may overfill a resource:
        // scale it back into the capacity (never print an infeasible point).
        // Not for rounding (loads within 1e-12 of 1): scaling every user of
        // the resource by 1 + 3.5e-14 pulled a capped user that far below
        // its cap at every sweep, and at alpha = 3 its huge marginal
        // utility made that a Nikaido-Isoda gap of 1.4e-9 (10,000 sweeps,
        // `iteration_limit`).
        let over: Vec<f64> = (0..m)
            .map(|j| {
                let load = (0..e).map(|k| self.r[k * m + j] * out[k]).sum::<f64>();
                if load <= 1.0 + 1e-12 {
                    1.0
                } else {
                    load
                }
            })
            .collect();
        for k in 0..e {
            let worst = (0..m)
                .filter(|&j| self.r[k * m + j] > 0.0)
                .map(|j| over[j])
                .fold(1.0, f64::max);
            out[k] /= worst;
        }
        (steps, ok)
    }

    /// ell such that uniform prices e^ell (in unscaled units) just fill
    /// the fullest resource: prices near 1 after scaling.
    fn initial_scale(&self, alpha: f64, lo: &[f64], hi: &[f64]) -> f64 {
        let m = self.res.len();
        let e = self.users.len();
        let ln_rowsum: Vec<f64> = (0..e)
            .map(|k| self.r[k * m..(k + 1) * m].iter().sum::<f64>().ln())
            .collect();
        let usage = |ell: f64| {
            let mut u = vec![0.0; m];
            for k in 0..e {
                let x = ((self.log_b[k] - (ell + ln_rowsum[k]) / alpha).exp()).clamp(lo[k], hi[k]);
                for j in 0..m {
                    u[j] += self.r[k * m + j] * (x - lo[k]);
                }
            }
            u.into_iter().fold(0.0, f64::max)
        };
        let (mut a, mut b) = (-1.0, 1.0);
        while usage(a) <= 1.0 && a > -1e4 {
            a *= 2.0;
        }
        while usage(b) > 1.0 && b < 1e4 {
            b *= 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (a + b);
            let before = (a, b);
            if usage(mid) > 1.0 {
                a = mid;
            } else {
                b = mid;
            }
            // Adjacent doubles: every further halving repeats this one.
            if (a, b) == before {
                break;
            }
        }
        b
    }
}

/// alphaPF-VDS by best responses among servers (see the module docs).
///
/// ```
/// use leontief_vds::{vds, VdsSettings};
/// let instance = leontief_core::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// let o = vds(&instance, &VdsSettings { alpha: 2.0, ..VdsSettings::default() });
/// assert!(o.certificate.holds, "{:?}", o.certificate);
/// ```
pub fn vds(instance: &Instance, settings: &VdsSettings) -> VdsOutcome {
    vds_from(instance, settings, None)
}

/// [`vds`] with the sweeps starting from `start` (x_{n,i}, e.g. the
/// answer of a run at a looser tolerance) instead of from zero.
pub fn vds_from(
    instance: &Instance,
    settings: &VdsSettings,
    start: Option<&[Vec<f64>]>,
) -> VdsOutcome {
    let alpha = settings.alpha;
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let elig = Eligibility::new(instance);
    let mut data: Vec<ServerData> = (0..k)
        .map(|i| ServerData::new(instance, i, &elig.on_server[i], alpha))
        .collect();
    let mut tasks = match start {
        Some(s) if s.len() == nu && s.iter().all(|r| r.len() == k) => s.to_vec(),
        _ => vec![vec![0.0; k]; nu],
    };
    let mut total: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    let mut sweeps = 0;
    let mut newton_steps = 0;
    let mut inexact = 0;
    let mut converged = false;
    let mut certificate = None;
    let mut mine = Vec::new();
    let mut out = Vec::new();
    // Start: each user alone on a fair slice (so no total is zero).
    let mut timed_out = false;
    let relax = settings.over_relax && settings.jacobi.is_none();
    let capped = instance.users().iter().any(|u| u.tasks.is_some());
    // With task caps the sweeps first run over-relaxed as if the caps left
    // no choice; when everything but the certificate's cap split holds,
    // they start again from zero selecting (see [`cap_shifts`]),
    // unrelaxed. From a given start (a selected point, as a class solve
    // tightened) they select from the first sweep: plain sweeps drift off
    // it along the other equilibria (cap split 0.66 from 2e-13).
    let mut selecting = capped && start.is_some();
    let mut omega = 1.0f64;
    // The relative change of every sweep, for the rate estimate.
    let mut changes: Vec<f64> = Vec::new();
    let (mut next_finish, mut finishes_tried, mut finished) = (FINISH_EVERY, 0, false);
    // Failed tries so far: each doubles the sweeps to the next one.
    let mut failed_finishes = 0u32;
    let mut restarted = false;
    let finish_fits = data.iter().map(|d| d.res.len()).sum::<usize>() <= FINISH_MAX_PRICES;
    let mut finish_iterations = 0;
    // ln theta_n per user (see [`cap_shifts`]); 0 for the uncapped.
    let mut shift = vec![0.0; nu];
    while sweeps < settings.max_sweeps {
        if crate::past(settings.deadline) {
            timed_out = true;
            break;
        }
        sweeps += 1;
        let mut change = 0.0f64;
        let before = total.clone();
        // Jacobi responds to the sweep's start; Gauss-Seidel in place.
        let mut next = if settings.jacobi.is_some() {
            tasks.clone()
        } else {
            Vec::new()
        };
        for (i, d) in data.iter_mut().enumerate() {
            mine.clear();
            mine.extend(d.users.iter().map(|&n| tasks[n][i]));
            out.resize(d.users.len(), 0.0);
            let (s, ok) = d.respond(instance, alpha, &total, &mine, &shift, &mut out);
            newton_steps += s;
            inexact += usize::from(!ok);
            for (kk, &n) in d.users.iter().enumerate() {
                match settings.jacobi {
                    None => {
                        let v = if omega != 1.0 {
                            (tasks[n][i] + omega * (out[kk] - tasks[n][i])).max(0.0)
                        } else {
                            out[kk]
                        };
                        total[n] += v - tasks[n][i];
                        tasks[n][i] = v;
                    }
                    Some(theta) => {
                        next[n][i] = (1.0 - theta) * tasks[n][i] + theta * out[kk];
                    }
                }
            }
        }
        if settings.jacobi.is_some() {
            tasks = next;
        }
        if selecting {
            cap_shifts(instance, alpha, &data, &tasks, &total, &mut shift);
        }
        for n in 0..nu {
            total[n] = tasks[n].iter().sum();
            change = change.max((total[n] - before[n]).abs());
        }
        let scale = total.iter().copied().fold(0.0, f64::max).max(1e-300);
        changes.push(change / scale);
        if relax && !selecting && sweeps % RELAX_BLOCK == 0 && sweeps >= 2 * RELAX_BLOCK {
            omega = relaxed(omega, &changes);
        }
        // The certificate (a pass over every user and server) every 10
        // sweeps once the change is small enough for it to be near holding
        // (it cost a tenth of a run at 1,000 x 100 when checked from the
        // start), and at every sweep that changes nothing.
        if change <= 1e-12 * scale || (sweeps % 10 == 0 && change <= 1e-6 * scale) {
            let prices = price_table(instance, &data);
            let ell: Vec<f64> = data.iter().map(|d| d.ell.unwrap_or(0.0)).collect();
            let c = vds_certificate(instance, alpha, &tasks, &prices, &ell, settings.tolerance);
            // Converged: certified, and either the sweep changed nothing
            // (1e-12) or every user's total is within the tolerance of
            // every server's best response at the printed prices (the
            // certificate's KKT residual, which `holds` asks only to its
            // square root), and capped users are that close to the
            // selection (the cap split, likewise). The second ends runs whose totals still creep
            // along a flat direction while the certificate has long held
            // (2 resources: NI bound 3e-11 for thousands of sweeps).
            let settled = change <= 1e-12 * scale
                || (c.kkt_residual <= settings.tolerance && c.cap_split <= settings.tolerance);
            let holds = c.holds;
            // Everything but the cap split holds: an equilibrium, not yet
            // the selected one. Selecting from it, the factors diverged
            // over-relaxed (KKT 0.2-0.5 after 10,000 sweeps at 120 x 30
            // with caps) and unrelaxed too on the Alibaba multigpu20
            // classes (cap split 3e-3 after 10,000); from zero, unrelaxed,
            // they reach it (docs/design/server-based.md).
            let unselected = !holds
                && capped
                && c.nikaido_isoda_gap <= settings.tolerance
                && c.kkt_residual <= settings.tolerance.sqrt()
                && c.infeasibility <= settings.tolerance;
            certificate = Some(c);
            if holds && settled {
                converged = true;
                break;
            }
            if unselected && !selecting {
                selecting = true;
                omega = 1.0;
                changes.clear();
                for row in tasks.iter_mut() {
                    row.iter_mut().for_each(|v| *v = 0.0);
                }
                total.iter_mut().for_each(|v| *v = 0.0);
                data = (0..k)
                    .map(|i| ServerData::new(instance, i, &elig.on_server[i], alpha))
                    .collect();
                next_finish = sweeps + FINISH_EVERY;
                failed_finishes = 0;
                restarted = false;
                continue;
            }
        }
        if settings.finish && finish_fits && sweeps >= next_finish {
            finishes_tried += 1;
            match try_finish(
                instance,
                settings,
                &mut data,
                &mut tasks,
                &mut finish_iterations,
            ) {
                Finish::Certified(c) => {
                    certificate = Some(c);
                    converged = true;
                    finished = true;
                    break;
                }
                Finish::Restart => {
                    for n in 0..nu {
                        total[n] = tasks[n].iter().sum();
                    }
                    // The sweeps get longer from each such point before the
                    // next try replaces it (at 50 eligible each, 2
                    // resources, seed 2, every try gave KKT 3e-7 and the
                    // next one came before the sweeps had cleaned it up:
                    // 7 tries).
                    if restarted {
                        failed_finishes = (failed_finishes + 1).min(8);
                    }
                    restarted = true;
                }
                Finish::Failed => failed_finishes = (failed_finishes + 1).min(8),
            }
            next_finish = sweeps + (FINISH_EVERY << failed_finishes);
        }
    }
    let prices = price_table(instance, &data);
    let log_scale: Vec<f64> = data.iter().map(|d| d.ell.unwrap_or(0.0)).collect();
    let certificate = match certificate {
        Some(c) if converged => c,
        _ => vds_certificate(
            instance,
            alpha,
            &tasks,
            &prices,
            &log_scale,
            settings.tolerance,
        ),
    };
    VdsOutcome {
        tasks,
        prices,
        log_scale,
        sweeps,
        converged,
        newton_steps,
        inexact_responses: inexact,
        certificate,
        timed_out,
        over_relaxation: omega,
        finishes_tried,
        finish_iterations,
        finished,
    }
}

/// The interior-point finish from the sweeps' point (`vds_finish.rs`):
/// when it reaches a point, that point replaces the tasks and the servers'
/// prices, and it ends the run if it passes the certificate with the KKT
/// residual within the tolerance.
fn try_finish(
    instance: &Instance,
    settings: &VdsSettings,
    data: &mut [ServerData],
    tasks: &mut Vec<Vec<f64>>,
    iterations: &mut usize,
) -> Finish {
    let Some(part) = FinishPart::new(instance, data, tasks) else {
        return Finish::Failed;
    };
    let servers: Vec<FinishServer> = part.servers.iter().map(PartServer::view).collect();
    let Some(done) = finish(
        settings.alpha,
        &part.caps,
        &servers,
        &part.tasks,
        iterations,
        settings.deadline,
    ) else {
        return Finish::Failed;
    };
    let mut next = part.base;
    // Servers without a pair in the part keep the sweeps' prices.
    let mut lams: Vec<Vec<f64>> = data.iter().map(|d| d.lam.clone()).collect();
    for (s, (srv, lam)) in part.servers.iter().zip(done.lam).enumerate() {
        for &n in &srv.users {
            next[n][srv.server] = done.tasks[n][s];
        }
        lams[srv.server] = lam;
    }
    let prices: Vec<Vec<f64>> = data
        .iter()
        .zip(&lams)
        .map(|(d, lam)| price_row(instance, d, lam))
        .collect();
    let ell: Vec<f64> = data.iter().map(|d| d.ell.unwrap_or(0.0)).collect();
    let c = vds_certificate(
        instance,
        settings.alpha,
        &next,
        &prices,
        &ell,
        settings.tolerance,
    );
    if !c.holds {
        return Finish::Failed;
    }
    let certified = c.kkt_residual <= settings.tolerance;
    for (d, lam) in data.iter_mut().zip(lams) {
        d.lam = lam;
    }
    *tasks = next;
    if certified {
        Finish::Certified(c)
    } else {
        Finish::Restart
    }
}

/// What the finish solves. A capped user holding tasks on a server that
/// prices nothing it needs is left out: there it would take any amount
/// (in the finish's conditions, alpha ln x_n + ln P_{n,i} - A_{n,i} +
/// sigma >= 0, ln 0), and on the Alibaba multigpu20 classes every step
/// was 1e-306 long. The selection (docs/mechanisms.md) puts such a user's
/// tasks on those servers first, so its tasks on the priced ones move
/// there as far as their room goes before it is left out, and the
/// servers keep its load as that much less room. Pairs that price nothing
/// for a user left in (it holds no tasks there) are left out too.
struct FinishPart {
    servers: Vec<PartServer>,
    /// Caps (none for the users left out: they hold no pair here).
    caps: Vec<Option<f64>>,
    /// x_{n,i} on the servers of the part, in its order.
    tasks: Vec<Vec<f64>>,
    /// Every user's tasks on every server after the moves above: the
    /// finish's answer replaces those of the part's pairs.
    base: Vec<Vec<f64>>,
}

/// One server of a [`FinishPart`].
struct PartServer {
    /// Its index among all servers.
    server: usize,
    users: Vec<usize>,
    r: Vec<f64>,
    log_b: Vec<f64>,
    ell: f64,
    lam: Vec<f64>,
    /// 1 less the load of the users left out, per resource.
    room: Vec<f64>,
}

impl PartServer {
    fn view(&self) -> FinishServer<'_> {
        FinishServer {
            users: &self.users,
            r: &self.r,
            log_b: &self.log_b,
            ell: self.ell,
            lam: &self.lam,
            room: &self.room,
        }
    }
}

impl FinishPart {
    /// None when the users left out fill a resource of a server with a
    /// pair left in (no interior point).
    fn new(instance: &Instance, data: &[ServerData], tasks: &[Vec<f64>]) -> Option<Self> {
        let users = instance.users();
        // Whether user k of server i pays nothing there.
        let free = |d: &ServerData, k: usize| {
            let m = d.res.len();
            (0..m).all(|j| d.lam[j] * d.r[k * m + j] <= 0.0)
        };
        // Each user's pairs: (server, its position there).
        let mut pairs: Vec<Vec<(usize, usize)>> = vec![Vec::new(); users.len()];
        let mut out = vec![false; users.len()];
        for (i, d) in data.iter().enumerate() {
            for (k, &n) in d.users.iter().enumerate() {
                pairs[n].push((i, k));
                if users[n].tasks.is_some() && tasks[n][i] > 0.0 && free(d, k) {
                    out[n] = true;
                }
            }
        }
        let mut base = tasks.to_vec();
        let mut slack: Vec<Vec<f64>> = data
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let m = d.res.len();
                let mut s = vec![1.0; m];
                for (k, &n) in d.users.iter().enumerate() {
                    for (j, v) in s.iter_mut().enumerate() {
                        *v -= d.r[k * m + j] * base[n][i];
                    }
                }
                s
            })
            .collect();
        for n in (0..users.len()).filter(|&n| out[n]) {
            let priced: f64 = pairs[n]
                .iter()
                .filter(|&&(i, k)| !free(&data[i], k))
                .map(|&(i, _)| base[n][i])
                .sum();
            let mut moved = 0.0;
            for &(i, k) in &pairs[n] {
                let d = &data[i];
                if moved >= priced {
                    break;
                }
                if !free(d, k) {
                    continue;
                }
                let m = d.res.len();
                let row = &d.r[k * m..(k + 1) * m];
                let step = tasks_that_fit(row, |j| slack[i][j]).min(priced - moved);
                if step > 0.0 && step.is_finite() {
                    base[n][i] += step;
                    for j in 0..m {
                        slack[i][j] -= row[j] * step;
                    }
                    moved += step;
                }
            }
            if moved > 0.0 {
                let keep = ((priced - moved) / priced).max(0.0);
                for &(i, k) in &pairs[n] {
                    let d = &data[i];
                    if !free(d, k) {
                        let m = d.res.len();
                        let cut = base[n][i] * (1.0 - keep);
                        for j in 0..m {
                            slack[i][j] += d.r[k * m + j] * cut;
                        }
                        base[n][i] -= cut;
                    }
                }
            }
        }
        let mut servers = Vec::new();
        for (i, d) in data.iter().enumerate() {
            let m = d.res.len();
            let mut srv = PartServer {
                server: i,
                users: Vec::new(),
                r: Vec::new(),
                log_b: Vec::new(),
                ell: d.ell.unwrap_or(0.0),
                lam: d.lam.clone(),
                room: vec![1.0; m],
            };
            for (k, &n) in d.users.iter().enumerate() {
                let row = &d.r[k * m..(k + 1) * m];
                if out[n] {
                    for (room, a) in srv.room.iter_mut().zip(row) {
                        *room -= a * base[n][i];
                    }
                } else if !free(d, k) {
                    srv.users.push(n);
                    srv.r.extend_from_slice(row);
                    srv.log_b.push(d.log_b[k]);
                }
            }
            if srv.users.is_empty() {
                continue;
            }
            if srv.room.iter().any(|&v| v <= 0.0) {
                return None;
            }
            servers.push(srv);
        }
        let caps = users
            .iter()
            .zip(&out)
            .map(|(u, &o)| if o { None } else { u.tasks })
            .collect();
        let tasks = base
            .iter()
            .map(|row| servers.iter().map(|s| row[s.server]).collect())
            .collect();
        Some(FinishPart {
            servers,
            caps,
            tasks,
            base,
        })
    }
}

/// Tasks of a bundle `row` (per unit of each normalised resource) that
/// fit in `room(j)` of each resource it needs (infinite if it needs
/// none).
fn tasks_that_fit(row: &[f64], room: impl Fn(usize) -> f64) -> f64 {
    (0..row.len())
        .filter(|&j| row[j] > 0.0)
        .map(|j| room(j).max(0.0) / row[j])
        .fold(INF, f64::min)
}

/// How a try of the finish ended.
enum Finish {
    /// Certified: the run ends.
    Certified(VdsCertificate),
    /// A point whose certificate holds but whose KKT residual is above the
    /// tolerance (the interior point leaves pairs whose tasks and gains
    /// are both small: 1e-8 to 6e-8 at 1,000 x 100 where the tolerance is
    /// 1e-9): the sweeps go on from it (10-20 more sweeps there).
    Restart,
    /// No answer, or one whose certificate does not hold; nothing
    /// changed.
    Failed,
}

/// The over-relaxation factor after a block of sweeps whose relative
/// changes end `changes` (see [`VdsSettings::over_relax`]). A safeguard
/// that lowered omega where a block's change rose fourfold was tried and
/// removed: the change of these sweeps rises and falls by that much on
/// its way, and lowering omega cost convergence (1,000 x 100 x 10, seed
/// 1: not converged in 10,000 sweeps; without it 5,456).
fn relaxed(omega: f64, changes: &[f64]) -> f64 {
    let t = changes.len();
    let (now, before) = (changes[t - 1], changes[t - 1 - RELAX_BLOCK]);
    let lambda = (now / before).powf(1.0 / RELAX_BLOCK as f64);
    let rho = (lambda + omega - 1.0) / (omega * lambda.sqrt());
    if !(lambda > 0.0 && lambda < 1.0 && rho < 1.0) {
        return omega;
    }
    let w = (2.0 / (1.0 + (1.0 - rho * rho).sqrt())).min(MAX_OVER_RELAXATION);
    w.max(omega)
}

/// Certify a given point (from another method, e.g. the one cone program
/// of the separable case): each server's best-response prices against the
/// others at `tasks` (the tasks themselves are kept), then
/// [`vds_certificate`]. Returns (prices, log scales, certificate).
pub fn certify_point(
    instance: &Instance,
    alpha: f64,
    tasks: &[Vec<f64>],
    tolerance: f64,
) -> (Vec<Vec<f64>>, Vec<f64>, VdsCertificate) {
    let k = instance.num_entries();
    let elig = Eligibility::new(instance);
    let total: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    let mut data: Vec<ServerData> = (0..k)
        .map(|i| ServerData::new(instance, i, &elig.on_server[i], alpha))
        .collect();
    let zeros = vec![0.0; instance.num_users()];
    for (i, d) in data.iter_mut().enumerate() {
        let mine: Vec<f64> = d.users.iter().map(|&n| tasks[n][i]).collect();
        let mut out = vec![0.0; d.users.len()];
        d.respond(instance, alpha, &total, &mine, &zeros, &mut out);
    }
    let prices = price_table(instance, &data);
    let ell: Vec<f64> = data.iter().map(|d| d.ell.unwrap_or(0.0)).collect();
    let c = vds_certificate(instance, alpha, tasks, &prices, &ell, tolerance);
    (prices, ell, c)
}

/// The least share of its cap a user at its cap asks of the priced
/// servers while the servers that price nothing it needs have room for
/// all of it (see [`cap_shifts`]), as ln: e^-40.
const UNPRICED_SHIFT: f64 = 40.0;

/// The selection among the equilibria that task caps leave open
/// (docs/mechanisms.md): a capped user at its cap holds tasks only where
/// its marginal utility per unit of price is the highest of its eligible
/// servers. Each server's best response alone cannot see that (its cap
/// room is whatever the servers before it left), so once the sweeps have
/// reached an equilibrium whose cap split is off, every server scales the
/// user's b_n by a common theta_n <= 1 (`shift` = ln theta_n), set after
/// each sweep from the servers' prices. For a user at its cap, theta_n =
/// t_n / max_i b_{n,i} P_{n,i}^(-1/alpha), the cap over the largest total
/// a server would give the user uncapped (1 where that is below the cap):
/// only the best servers then ask for the whole cap; the others ask for
/// less and give nothing once the user's tasks elsewhere reach it. Below
/// its cap theta_n rises by t_n / x_n (at most to 1). Two kinds of server
/// are not in that maximum:
///
/// * where nothing the user needs is priced, the user belongs first: the
///   priced servers ask for the cap less the tasks those servers still
///   have room for, theta_n = (t_n - room_n) / max (at least
///   e^-`UNPRICED_SHIFT` t_n / max). Lowering theta_n by e^-40 whenever
///   such a server had room at all (more than 1e-9 of a resource) moved
///   the whole cap at once, and a server near full flickered in and out
///   of that test (the cap split jumped to 3.5e-3 every 140 sweeps on the
///   Alibaba multigpu20 classes); halving theta_n left half the cap on a
///   priced server;
/// * where no other eligible user needs the priced resources the user
///   needs, the price is the user's own (its cap room and the capacity
///   bind together, and any price up to its marginal utility fits): it
///   says nothing of theta_n, and counting it drove theta_n to 0 while
///   the user sat below its cap.
///
/// The hard cap stays in every response, and the certificate's cap split
/// checks the outcome.
fn cap_shifts(
    instance: &Instance,
    alpha: f64,
    data: &[ServerData],
    tasks: &[Vec<f64>],
    total: &[f64],
    shift: &mut [f64],
) {
    let users = instance.users();
    let mut top = vec![f64::NEG_INFINITY; users.len()];
    // Tasks of each user that would still fit on servers pricing nothing
    // it needs.
    let mut room = vec![0.0f64; users.len()];
    for (i, d) in data.iter().enumerate() {
        let m = d.res.len();
        let Some(ell) = d.ell else { continue };
        // Per resource: load, and eligible users that need it.
        let mut load = vec![0.0; m];
        let mut needers = vec![0usize; m];
        for (k, &n) in d.users.iter().enumerate() {
            let x = tasks[n][i];
            for j in 0..m {
                load[j] += d.r[k * m + j] * x;
                needers[j] += usize::from(d.r[k * m + j] > 0.0);
            }
        }
        // Computed at the first capped user that needs them.
        let mut bounds: Option<Vec<HolderBound>> = None;
        for (k, &n) in d.users.iter().enumerate() {
            if users[n].tasks.is_none() {
                continue;
            }
            let needs = |j: usize| d.r[k * m + j] > 0.0;
            let shared = (0..m).any(|j| needs(j) && d.lam[j] > 0.0 && needers[j] > 1);
            let p: f64 = (0..m).map(|j| d.lam[j] * d.r[k * m + j]).sum();
            let degenerate = if p > 0.0 {
                0.0
            } else {
                let bounds = bounds
                    .get_or_insert_with(|| holders_bounds(d, alpha, ell, &load, tasks, total, i));
                largest_price(d, k, bounds)
            };
            if p > 0.0 && shared {
                top[n] = top[n].max(d.log_b[k] - ell / alpha - p.ln() / alpha);
            } else if degenerate > 0.0 {
                top[n] = top[n].max(d.log_b[k] - ell / alpha - degenerate.ln() / alpha);
            } else if p <= 0.0 {
                room[n] += tasks_that_fit(&d.r[k * m..(k + 1) * m], |j| 1.0 - load[j]);
            }
        }
    }
    for (n, u) in users.iter().enumerate() {
        let Some(t) = u.tasks else { continue };
        shift[n] = if t <= 0.0 {
            0.0
        } else if total[n] < t * (1.0 - 1e-9) {
            // Below its cap: theta_n rises by the missing share (at once
            // to 1, the factors and the tasks went round in cycles).
            if total[n] > 0.0 {
                (shift[n] + (t / total[n]).ln()).min(0.0)
            } else {
                0.0
            }
        } else if top[n].is_finite() {
            // The priced servers ask for the cap less what the unpriced
            // ones still have room for.
            let want = (t - room[n]).max(t * (-UNPRICED_SHIFT).exp());
            (want.ln() - top[n]).min(0.0)
        } else {
            0.0
        };
    }
}

/// The two lowest bounds on a full resource's price and the holders
/// that set them ([`holders_bounds`]); `None` for a resource with room.
type HolderBound = Option<[(f64, usize); 2]>;

/// Per resource of server `d` full (load within 1e-9 of capacity), the
/// two lowest u'_o / r_{o,j} over the users o holding tasks there and
/// needing it, with their indices in `d.users` (`(INF, usize::MAX)` where
/// fewer; `None` for a resource with room): any price of the resource that
/// keeps each holder's KKT conditions is at most these.
fn holders_bounds(
    d: &ServerData,
    alpha: f64,
    ell: f64,
    load: &[f64],
    tasks: &[Vec<f64>],
    total: &[f64],
    i: usize,
) -> Vec<HolderBound> {
    let m = d.res.len();
    let mut bounds: Vec<HolderBound> = load
        .iter()
        .map(|&l| (l >= 1.0 - 1e-9).then_some([(f64::INFINITY, usize::MAX); 2]))
        .collect();
    if bounds.iter().all(Option::is_none) {
        return bounds;
    }
    for (o, &u) in d.users.iter().enumerate() {
        if tasks[u][i] <= 0.0 || total[u] <= 0.0 {
            continue;
        }
        let marginal = alpha * (d.log_b[o] - total[u].ln()) - ell;
        for (j, b) in bounds.iter_mut().enumerate() {
            let r = d.r[o * m + j];
            let Some(b) = b.as_mut().filter(|_| r > 0.0) else {
                continue;
            };
            let v = (marginal - r.ln()).exp();
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

/// The largest price per task of server `d`'s user `k` that the other
/// users holding tasks there allow, over the resources it needs that are
/// full while priced at 0 (`bounds`, [`holders_bounds`]): any price up to
/// u'_o / r_{o,j} of every other holder o needing resource j holds the KKT
/// conditions there, and the user's tasks are not free to rise on such a
/// server, so for the selection it is priced (as the certificate's cap
/// split counts it). 0 where no such resource is full, or where a full
/// one is needed by no other holder (the price is the user's own).
fn largest_price(d: &ServerData, k: usize, bounds: &[HolderBound]) -> f64 {
    let m = d.res.len();
    let mut price = 0.0;
    for (j, b) in bounds.iter().enumerate() {
        let need = d.r[k * m + j];
        let Some([first, second]) = b.filter(|_| need > 0.0) else {
            continue;
        };
        let up = if first.1 != k { first.0 } else { second.0 };
        if !up.is_finite() {
            return 0.0;
        }
        price += need * up;
    }
    price
}

/// Prices per unit of each resource (scaled units), zero for resources the
/// server lacks or nobody eligible uses.
fn price_table(instance: &Instance, data: &[ServerData]) -> Vec<Vec<f64>> {
    data.iter()
        .map(|d| price_row(instance, d, &d.lam))
        .collect()
}

/// One server's row of [`price_table`] at prices `lam` (per normalised
/// constraint, the layout of `ServerData::lam`).
fn price_row(instance: &Instance, d: &ServerData, lam: &[f64]) -> Vec<f64> {
    let mut p = vec![0.0; instance.num_resources()];
    for (j, &r) in d.res.iter().enumerate() {
        p[r] = lam[j] / d.cap[j];
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The finish keeps a run's time limit: with the deadline passed it
    /// returns at once, and the run says `timed_out`; without one, the
    /// same instance ends by it, certified.
    #[test]
    fn the_finish_keeps_the_time_limit() {
        let inst = leontief_core::generate::placement(60, 20, 2, 5, 1);
        let settings = VdsSettings {
            alpha: 3.0,
            ..VdsSettings::default()
        };
        let free = vds(&inst, &settings);
        assert!(free.converged && free.finishes_tried >= 1, "{free:?}");
        let elig = Eligibility::new(&inst);
        let data: Vec<ServerData> = (0..inst.num_entries())
            .map(|i| ServerData::new(&inst, i, &elig.on_server[i], 3.0))
            .collect();
        let part = FinishPart::new(&inst, &data, &free.tasks).expect("room on every server");
        let servers: Vec<FinishServer> = part.servers.iter().map(PartServer::view).collect();
        let mut iterations = 0;
        let past = Some(std::time::Instant::now());
        assert!(finish(
            3.0,
            &part.caps,
            &servers,
            &part.tasks,
            &mut iterations,
            past
        )
        .is_none());
        assert_eq!(iterations, 0);
        let late = vds(
            &inst,
            &VdsSettings {
                deadline: past,
                ..settings
            },
        );
        assert!(late.timed_out && !late.converged);
    }

    /// Found by exploration (alpha = 10): a falling price was allowed a
    /// step of e^(-10 mean / lam), underflowed to a denormal, and the
    /// server's dual stopped there every sweep.
    #[test]
    fn a_falling_price_never_underflows() {
        let inst = Instance::from_json_str(
            r#"{"resources":["r0","r1","r2"],"servers":[{"name":"s0","capacity":[2.4543456898576026,5.509926016797458,7.3421388859250944],"count":2},{"name":"s1","capacity":[3.884486631246318,4.2714067329106635,7.250349801795995]},{"name":"s2","capacity":[0.0,3.5688489681837066,7.151610726143622],"count":2}],"users":[{"name":"u0","demand":[0.8056503945198683,1.620884206148442,0.0],"servers":["s0"]},{"name":"u1","demand":[0.0,0.1449374125005845,1.7393459658608337],"servers":["s0","s2"]},{"name":"u2","demand":[0.9911510535109914,0.0,0.0],"servers":["s0","s2"]},{"name":"u3","demand":[1.8545329158154698,1.9619176224351105,0.5271093206936902],"weight":0.8570207186382068}]}"#,
        )
        .unwrap();
        let o = vds(
            &inst,
            &VdsSettings {
                alpha: 10.0,
                ..VdsSettings::default()
            },
        );
        assert!(o.converged && o.certificate.holds, "{:?}", o.certificate);
        assert_eq!(o.inexact_responses, 0);
    }
}
