//! An interior-point finish for alphaPF-VDS's best responses
//! (docs/mechanisms.md, "Server-based mechanisms").
//!
//! The equilibrium is a nonlinear complementarity problem over every
//! eligible pair (n, i) and every priced resource (i, r) of a server
//! (in the sweeps' units: D_{n,r} / c_{i,r} per task, capacity 1, prices
//! lambda_{i,r} scaled by the server's e^ell_i):
//!
//! ```text
//!   x_{n,i} >= 0  _|_  w_{n,i} = alpha ln x_n + ln P_{n,i} - A_{n,i} >= 0
//!   lambda_{i,r} >= 0  _|_  s_{i,r} = 1 - sum_n D_{n,r} x_{n,i} / c_{i,r} >= 0
//!   x_n = sum_i x_{n,i},  P_{n,i} = sum_r lambda_{i,r} D_{n,r} / c_{i,r},
//!   A_{n,i} = alpha ln(w_n gamma_{n,i}^((alpha-1)/alpha)) - ell_i
//! ```
//!
//! (w_{n,i} >= 0: user n would not gain on server i at its prices; equal
//! to zero where it holds tasks: the KKT conditions of every server's best
//! response). A capped user has the cap's multiplier of each server's
//! response too: w_{n,i} = alpha ln x_n + ln P_{n,i} - A_{n,i} +
//! sigma_{n,i}, sigma_{n,i} >= 0 _|_ t_n - x_n >= 0 (on the central path
//! sigma_{n,i} (t_n - x_n) = mu makes them equal over a user's pairs: the
//! selection among the equilibria a cap leaves open, docs/mechanisms.md).
//! Within [`ACTIVE_ROOM`] of its cap a user is held there (its total
//! fixed, one free multiplier, its pairs' multipliers set equal): the room's complementarity, sigma / room in the
//! step, lost every digit of the price system near the cap, and the steps
//! stalled near 1e-7.
//!
//! Each step is a Newton step on the perturbed conditions (x w = mu,
//! lambda s = mu, sigma_{n,i} (t - x) = mu) with Mehrotra's predictor and
//! corrector, all variables moving together to 0.995 of the boundary
//! (the conditions are not monotone: the game is neither potential nor
//! monotone, so no convergence theorem covers this; the certificate
//! decides). The pairs and the users are eliminated in closed form: the
//! step's system is dense only in the L = sum_i |resources of i| prices,
//! each pair adding an m x m block on its server and each user a rank-one
//! term over the servers it may use (O(E m^2) for E pairs, plus L^3 / 3
//! for the LU of an L x L matrix: 300 at 1,000 x 100 with 3 resources).
//!
//! Nothing here is trusted: the caller keeps the answer only when it
//! passes the same certificate as the sweeps (Nikaido-Isoda bound and KKT
//! residual at the printed prices over every eligible pair).

use nalgebra::{DMatrix, DVector};

/// One server as the sweeps left it.
pub(crate) struct FinishServer<'a> {
    /// Eligible users.
    pub users: &'a [usize],
    /// D_{n,r} / c_{i,r}, users x `m` (the server's resources).
    pub r: &'a [f64],
    /// ln(w_n gamma_{n,i}^((alpha-1)/alpha)) per user.
    pub log_b: &'a [f64],
    /// ln of the server's price scale.
    pub ell: f64,
    /// Prices per normalised constraint (scaled units).
    pub lam: &'a [f64],
    /// Capacity per normalised constraint: 1 less the load of tasks held
    /// fixed outside the finish.
    pub room: &'a [f64],
}

/// Interior-point iterations at most.
const MAX_ITERATIONS: usize = 200;

/// Stop when every complementarity product and residual is within this
/// (relative to the user's total, the server's largest price, 1).
const TARGET: f64 = 1e-12;

/// Iterations whose best worst product or residual is not a tenth of
/// the best before them end the finish (checked from twice as many on:
/// the first steps from the sweeps' point often move little; comparing
/// single iterations, not the best, cut runs at 50 eligible each just as
/// they began to converge).
const STALL: usize = 25;

/// A stalled finish whose worst product or residual is within this still
/// hands its point to the certificate. (1e-6 was tried: on one instance
/// with caps the sweeps, restarted from such points every 50 sweeps,
/// never converged, where alone they take 1,590; the caller now also
/// refuses a point whose certificate does not hold.)
const HAND_BACK: f64 = 1e-10;

/// A capped user whose room under its cap is within this share of the
/// cap is held at the cap from then on (its total fixed, its cap
/// multiplier free; the certificate checks the answer as any other).
const ACTIVE_ROOM: f64 = 1e-4;

/// A price at most this fraction of its server's largest, on a resource
/// with at least this much room, is read out as zero.
const ZERO_PRICE: f64 = 1e-9;

/// Fraction of the step to the boundary.
const TO_BOUNDARY: f64 = 0.995;

/// What [`finish`] returns: tasks and prices per server (the layout of
/// `FinishServer::lam`).
pub(crate) struct Finished {
    pub tasks: Vec<Vec<f64>>,
    pub lam: Vec<Vec<f64>>,
}

/// The problem's fixed data, flattened: pairs server by server, prices
/// server by server.
struct Data<'a> {
    alpha: f64,
    servers: &'a [FinishServer<'a>],
    /// First pair and first price of each server (one more entry: the
    /// totals).
    pair_at: Vec<usize>,
    price_at: Vec<usize>,
    /// User of each pair.
    user: Vec<usize>,
    /// Server of each pair.
    server: Vec<usize>,
    /// Pairs of each user.
    of_user: Vec<Vec<usize>>,
    /// A_{n,i} per pair.
    a: Vec<f64>,
    /// The cap of each user.
    cap: Vec<Option<f64>>,
}

/// The iterate.
#[derive(Clone)]
struct Point {
    x: Vec<f64>,
    w: Vec<f64>,
    lam: Vec<f64>,
    s: Vec<f64>,
    /// Cap multipliers per pair (0 and unused for uncapped users).
    sigma: Vec<f64>,
    /// Capped users held at their caps (see [`ACTIVE_ROOM`]).
    active: Vec<bool>,
}

/// Residuals and derived quantities at a point.
struct Eval {
    total: Vec<f64>,
    /// P_{n,i} per pair.
    price: Vec<f64>,
    /// g - w + sigma per pair (zero at a solution).
    r_w: Vec<f64>,
    /// 1 - load - s per price.
    r_s: Vec<f64>,
}

/// A Newton direction.
struct Step {
    x: Vec<f64>,
    w: Vec<f64>,
    lam: Vec<f64>,
    s: Vec<f64>,
    sigma: Vec<f64>,
}

impl<'a> Data<'a> {
    fn new(alpha: f64, caps: &[Option<f64>], servers: &'a [FinishServer<'a>]) -> Self {
        let nu = caps.len();
        let (mut pair_at, mut price_at) = (vec![0], vec![0]);
        let (mut user, mut server, mut a) = (Vec::new(), Vec::new(), Vec::new());
        let mut of_user = vec![Vec::new(); nu];
        for (i, srv) in servers.iter().enumerate() {
            for (k, &n) in srv.users.iter().enumerate() {
                of_user[n].push(user.len());
                user.push(n);
                server.push(i);
                a.push(alpha * srv.log_b[k] - srv.ell);
            }
            pair_at.push(user.len());
            price_at.push(price_at.last().unwrap() + srv.lam.len());
        }
        Data {
            alpha,
            servers,
            pair_at,
            price_at,
            user,
            server,
            of_user,
            a,
            cap: caps.to_vec(),
        }
    }

    fn num_prices(&self) -> usize {
        *self.price_at.last().unwrap()
    }

    /// D / c of pair `p` (position `k` on server `s`) for resource `j`.
    fn rho(&self, s: usize, k: usize, j: usize) -> f64 {
        let m = self.servers[s].lam.len();
        self.servers[s].r[k * m + j]
    }

    fn eval(&self, pt: &Point) -> Eval {
        let nu = self.of_user.len();
        let mut total = vec![0.0; nu];
        for (p, &n) in self.user.iter().enumerate() {
            total[n] += pt.x[p];
        }
        let mut price = vec![0.0; self.user.len()];
        let mut r_w = vec![0.0; self.user.len()];
        let mut r_s = vec![0.0; self.num_prices()];
        for (s, srv) in self.servers.iter().enumerate() {
            let m = srv.lam.len();
            let l0 = self.price_at[s];
            let mut load = vec![0.0; m];
            for k in 0..srv.users.len() {
                let p = self.pair_at[s] + k;
                let n = self.user[p];
                let mut pp = 0.0;
                for j in 0..m {
                    let rho = self.rho(s, k, j);
                    pp += pt.lam[l0 + j] * rho;
                    load[j] += rho * pt.x[p];
                }
                price[p] = pp;
                let g = self.alpha * total[n].ln() + pp.ln() - self.a[p];
                r_w[p] = g + pt.sigma[p] - pt.w[p];
            }
            for j in 0..m {
                r_s[l0 + j] = srv.room[j] - load[j] - pt.s[l0 + j];
            }
        }
        Eval {
            total,
            price,
            r_w,
            r_s,
        }
    }

    /// The Newton direction for complementarity targets: x w -> `cx`,
    /// lambda s -> `cl`, sigma (t - x) -> `cu` (each the target minus the
    /// product, second-order terms included by the caller).
    fn direction(&self, pt: &Point, ev: &Eval, cx: &[f64], cl: &[f64], cu: &[f64]) -> Option<Step> {
        let alpha = self.alpha;
        let nu = self.of_user.len();
        let np = self.user.len();
        let nl = self.num_prices();
        // Pair: w dx + x dw = cx; dw - dg - dsigma = r_w, dg = alpha dU + q . dlam.
        // dx = a - D (alpha dU + q . dlam + dsigma), D = x / w, a = (cx - x r_w) / w.
        let d: Vec<f64> = (0..np).map(|p| pt.x[p] / pt.w[p]).collect();
        let a: Vec<f64> = (0..np)
            .map(|p| (cx[p] - pt.x[p] * ev.r_w[p]) / pt.w[p])
            .collect();
        // User n: X dU = sum dx. Capped, per pair: (t - X) dsigma - sigma X
        // dU = cu (dX = X dU), so dsigma = (cu + sigma X dU) / (t - X) =:
        // e + f dU. Then X dU = sum a - sum D (alpha dU + q . dlam) - sum D
        // (e + f dU): dU = (sum a - sum D e - sum D q . dlam) / (X + sum D
        // (alpha + f)).
        let mut big_w = vec![0.0; nu];
        let mut num = vec![0.0; nu];
        let mut e_u = vec![0.0; np];
        let mut f_u = vec![0.0; np];
        for n in 0..nu {
            let x = ev.total[n];
            if let Some(t) = self.cap[n] {
                let room = t - x;
                if pt.active[n] {
                    // Held at the cap: sum dx = room, and dsigma (one for
                    // all its pairs) takes the place of dU, with
                    // coefficient 1: dsigma = (sum a - room - sum D q .
                    // dlam) / sum D.
                    big_w[n] = self.of_user[n].iter().map(|&p| d[p]).sum();
                    num[n] = self.of_user[n].iter().map(|&p| a[p]).sum::<f64>() - room;
                    for &p in &self.of_user[n] {
                        f_u[p] = 1.0 - alpha;
                    }
                    continue;
                }
                for &p in &self.of_user[n] {
                    e_u[p] = cu[p] / room;
                    f_u[p] = pt.sigma[p] * x / room;
                }
            }
            let sdf: f64 = self.of_user[n]
                .iter()
                .map(|&p| d[p] * (alpha + f_u[p]))
                .sum();
            let sa: f64 = self.of_user[n].iter().map(|&p| a[p] - d[p] * e_u[p]).sum();
            big_w[n] = x + sdf;
            num[n] = sa;
        }
        // dU_n = (num_n - sum_{q of n} D_q q_q . dlam) / W_n, and
        // dx_p = a_p - D_p e_n - D_p (alpha + f_n) dU_n - D_p q_p . dlam.
        // Price (s, j): s dlam - lam dload = cl - lam r_s.
        let mut mat = DMatrix::<f64>::zeros(nl, nl);
        let mut rhs = DVector::<f64>::zeros(nl);
        for l in 0..nl {
            mat[(l, l)] = pt.s[l];
            rhs[l] = cl[l] - pt.lam[l] * ev.r_s[l];
        }
        // Constant part of dx and the in-server blocks.
        let mut x0 = vec![0.0; np];
        for (s, srv) in self.servers.iter().enumerate() {
            let m = srv.lam.len();
            let l0 = self.price_at[s];
            for k in 0..srv.users.len() {
                let p = self.pair_at[s] + k;
                let n = self.user[p];
                x0[p] = a[p] - d[p] * e_u[p] - d[p] * (alpha + f_u[p]) * num[n] / big_w[n];
                for j in 0..m {
                    let lr = pt.lam[l0 + j] * self.rho(s, k, j);
                    if lr == 0.0 {
                        continue;
                    }
                    rhs[l0 + j] += lr * x0[p];
                    for jj in 0..m {
                        mat[(l0 + j, l0 + jj)] += lr * d[p] * self.rho(s, k, jj) / ev.price[p];
                    }
                }
            }
        }
        // The users' rank-one terms: -(alpha + f) / W h v^T.
        let mut h: Vec<(usize, f64)> = Vec::new();
        let mut v: Vec<(usize, f64)> = Vec::new();
        for n in 0..nu {
            h.clear();
            v.clear();
            for &p in &self.of_user[n] {
                let s = self.server[p];
                let k = p - self.pair_at[s];
                let l0 = self.price_at[s];
                for j in 0..self.servers[s].lam.len() {
                    let rho = self.rho(s, k, j);
                    if rho != 0.0 {
                        h.push((l0 + j, pt.lam[l0 + j] * rho * d[p] * (alpha + f_u[p])));
                        v.push((l0 + j, d[p] * rho / ev.price[p]));
                    }
                }
            }
            let c = 1.0 / big_w[n];
            for &(i, hv) in &h {
                for &(j, vv) in &v {
                    mat[(i, j)] -= c * hv * vv;
                }
            }
        }
        if !mat.iter().all(|v| v.is_finite()) || !rhs.iter().all(|v| v.is_finite()) {
            return None;
        }
        let dlam = mat.lu().solve(&rhs)?;
        // Back: dU, dsigma, dx, dw, ds.
        let mut step = Step {
            x: vec![0.0; np],
            w: vec![0.0; np],
            lam: dlam.iter().copied().collect(),
            s: vec![0.0; nl],
            sigma: vec![0.0; np],
        };
        let qdl = |p: usize| -> f64 {
            let s = self.server[p];
            let k = p - self.pair_at[s];
            let l0 = self.price_at[s];
            (0..self.servers[s].lam.len())
                .map(|j| self.rho(s, k, j) * step.lam[l0 + j])
                .sum::<f64>()
                / ev.price[p]
        };
        let qd: Vec<f64> = (0..np).map(qdl).collect();
        let mut du = vec![0.0; nu];
        for n in 0..nu {
            let sdq: f64 = self.of_user[n].iter().map(|&p| d[p] * qd[p]).sum();
            du[n] = (num[n] - sdq) / big_w[n];
            if pt.active[n] {
                for &p in &self.of_user[n] {
                    step.sigma[p] = du[n];
                }
                du[n] = 0.0;
            } else if self.cap[n].is_some() {
                for &p in &self.of_user[n] {
                    step.sigma[p] = e_u[p] + f_u[p] * du[n];
                }
            }
        }
        for p in 0..np {
            let n = self.user[p];
            let dg = alpha * du[n] + qd[p];
            step.x[p] = a[p] - d[p] * (dg + step.sigma[p]);
            step.w[p] = ev.r_w[p] + dg + step.sigma[p];
        }
        for (s, srv) in self.servers.iter().enumerate() {
            let l0 = self.price_at[s];
            for j in 0..srv.lam.len() {
                let dload: f64 = (0..srv.users.len())
                    .map(|k| self.rho(s, k, j) * step.x[self.pair_at[s] + k])
                    .sum();
                step.s[l0 + j] = ev.r_s[l0 + j] - dload;
            }
        }
        Some(step)
    }
}

/// The largest step up to `t` that moves no entry of `v` along `dv` more
/// than [`TO_BOUNDARY`] of the way to zero.
fn max_step(v: &[f64], dv: &[f64], mut t: f64) -> f64 {
    for (a, b) in v.iter().zip(dv) {
        if *b < 0.0 {
            t = t.min(-TO_BOUNDARY * a / b);
        }
    }
    t
}

fn moved(v: &[f64], dv: &[f64], t: f64) -> Vec<f64> {
    v.iter().zip(dv).map(|(a, b)| a + t * b).collect()
}

/// The start: the sweeps' point pushed inside (every pair at least 1e-3
/// of its user's total over its pairs, every price at least 1e-3 of its
/// server's largest), each
/// multiplier its condition's value there (w = g + sigma, s = the slack)
/// but at least 1e-3, capped users 0.1% inside their caps. With
/// `take_up`, a user at its cap has its cap multiplier take up what it
/// would still gain on a pair; the flag returned says whether that
/// changed any pair.
fn start(
    data: &Data,
    caps: &[Option<f64>],
    servers: &[FinishServer],
    tasks: &[Vec<f64>],
    take_up: bool,
) -> (Point, bool) {
    let nu = caps.len();
    let np = data.user.len();
    let nl = data.num_prices();
    let mut x = vec![0.0; np];
    for (s, srv) in servers.iter().enumerate() {
        for (k, &n) in srv.users.iter().enumerate() {
            x[data.pair_at[s] + k] = tasks[n][s];
        }
    }
    let mut total = vec![0.0; nu];
    for p in 0..np {
        total[data.user[p]] += x[p];
    }
    for p in 0..np {
        let n = data.user[p];
        let floor = 1e-3 * total[n].max(1e-300) / data.of_user[n].len() as f64;
        x[p] = x[p].max(floor);
    }
    let mut lam = vec![0.0; nl];
    for (s, srv) in servers.iter().enumerate() {
        let top = srv.lam.iter().copied().fold(0.0, f64::max).max(1e-300);
        for (j, &l) in srv.lam.iter().enumerate() {
            lam[data.price_at[s] + j] = l.max(1e-3 * top);
        }
    }
    let mut pt = Point {
        x,
        w: vec![1.0; np],
        lam,
        s: vec![1.0; nl],
        sigma: vec![0.0; np],
        active: vec![false; nu],
    };
    let ev = data.eval(&pt);
    for p in 0..np {
        pt.w[p] = (ev.r_w[p] + pt.w[p]).max(1e-3);
    }
    for l in 0..nl {
        pt.s[l] = (ev.r_s[l] + pt.s[l]).max(1e-3);
    }
    let mut taken = false;
    for n in 0..nu {
        if let Some(t) = caps[n] {
            let at_cap = ev.total[n] >= t;
            if at_cap {
                let scale = 0.999 * t / ev.total[n];
                for &p in &data.of_user[n] {
                    pt.x[p] *= scale;
                }
            }
            for &p in &data.of_user[n] {
                pt.sigma[p] = 1e-3;
                // At its cap, the cap's multiplier takes up what the user
                // would still gain on a pair at these prices (g < 0), so
                // that the start's residual there is zero (with 1e-3 the
                // residual was up to 16 on the Alibaba classes and the
                // steps stayed short).
                let g = ev.r_w[p] + 1.0;
                if take_up && at_cap && g < 0.0 {
                    pt.sigma[p] = 2e-3 - g;
                    pt.w[p] = 2e-3;
                    taken = true;
                }
            }
        }
    }
    (pt, taken)
}

/// The interior-point finish from the sweeps' `tasks` and prices (see the
/// module docs); `None` when a step's system is singular, the iterations
/// run out or stall before the targets, or `deadline` passes.
pub(crate) fn finish(
    alpha: f64,
    caps: &[Option<f64>],
    servers: &[FinishServer],
    tasks: &[Vec<f64>],
    iterations: &mut usize,
    deadline: Option<std::time::Instant>,
) -> Option<Finished> {
    let data = Data::new(alpha, caps, servers);
    // From the sweeps' point as it is, and if that finish cannot end, once
    // more with the cap multipliers of users at their caps taking up what
    // they would still gain ([`start`]): on the Alibaba multigpu20
    // classes only the second ends, on the generated instances with caps
    // (tests/properties.rs) the first ends three times as often at the
    // first try.
    let (pt, _) = start(&data, caps, servers, tasks, false);
    if let Some(done) = run(&data, caps, pt, iterations, deadline) {
        return Some(done);
    }
    match start(&data, caps, servers, tasks, true) {
        (pt, true) => run(&data, caps, pt, iterations, deadline),
        // The same start: the same finish.
        (_, false) => None,
    }
}

/// The interior-point iterations of [`finish`] from `pt`.
fn run(
    data: &Data,
    caps: &[Option<f64>],
    mut pt: Point,
    iterations: &mut usize,
    deadline: Option<std::time::Instant>,
) -> Option<Finished> {
    let (nu, np, nl) = (caps.len(), data.user.len(), data.num_prices());
    let mut history = Vec::new();
    // The best point so far and its worst product or residual: what a
    // finish that cannot go on hands back when within [`HAND_BACK`] (near
    // the solution the step's system turns singular along the splits'
    // flat directions, and a step may lose digits the one before won).
    let mut best: Option<(f64, Finished)> = None;
    for _ in 0..MAX_ITERATIONS {
        // A run's time limit holds inside the finish too (an iteration is
        // 10-55 ms at 1,000 x 100).
        if crate::past(deadline) {
            return None;
        }
        *iterations += 1;
        let ev = data.eval(&pt);
        if !ev.r_w.iter().chain(&ev.r_s).all(|v| v.is_finite()) {
            return handed_back(best);
        }
        // Complementarity products, relative.
        let room = |n: usize| caps[n].map_or(0.0, |t| t - ev.total[n]);
        // A capped user this close to its cap is held there: its room's
        // complementarity, sigma / room, is where the steps lose their
        // digits (they stalled near 1e-7 without this).
        for n in 0..nu {
            if let Some(t) = caps[n] {
                if !pt.active[n] && room(n) <= ACTIVE_ROOM * t {
                    pt.active[n] = true;
                    // One multiplier for all its pairs from here on (the
                    // steps move them together): the cap's selection,
                    // which the certificate's cap split checks.
                    let pairs = &data.of_user[n];
                    if !pairs.is_empty() {
                        let mean =
                            pairs.iter().map(|&p| pt.sigma[p]).sum::<f64>() / pairs.len() as f64;
                        for &p in pairs {
                            pt.sigma[p] = mean;
                        }
                    }
                }
            }
        }
        let capped: Vec<usize> = (0..np)
            .filter(|&p| caps[data.user[p]].is_some() && !pt.active[data.user[p]])
            .collect();
        let held = (0..nu)
            .filter(|&n| pt.active[n])
            .map(|n| room(n).abs() / ev.total[n])
            .fold(0.0, f64::max);
        let gap_x = (0..np)
            .map(|p| pt.x[p] * pt.w[p] / ev.total[data.user[p]])
            .fold(0.0, f64::max);
        let gap_l = (0..nl).map(|l| pt.lam[l] * pt.s[l]).fold(0.0, f64::max);
        let gap_u = capped
            .iter()
            .map(|&p| pt.sigma[p] * room(data.user[p]) / ev.total[data.user[p]])
            .fold(0.0, f64::max);
        let infeas = ev
            .r_w
            .iter()
            .chain(&ev.r_s)
            .fold(held, |a, b| a.max(b.abs()));
        let worst = gap_x.max(gap_l).max(gap_u).max(infeas);
        if worst <= TARGET {
            return Some(read_out(data, &pt));
        }
        // Stalled: no tenfold progress in STALL iterations. A point within
        // HAND_BACK still goes to the certificate (held users creep the
        // last digits: 2e-12 after 60 iterations on one instance).
        if best.as_ref().is_none_or(|b| worst < b.0) {
            best = Some((worst, read_out(data, &pt)));
        }
        history.push(worst);
        let h = history.len();
        if h > 2 * STALL
            && history[h - STALL..]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                > 0.1
                    * history[..h - STALL]
                        .iter()
                        .copied()
                        .fold(f64::INFINITY, f64::min)
        {
            return handed_back(best);
        }
        let mu = (pt.x.iter().zip(&pt.w).map(|(a, b)| a * b).sum::<f64>()
            + pt.lam.iter().zip(&pt.s).map(|(a, b)| a * b).sum::<f64>()
            + capped
                .iter()
                .map(|&p| pt.sigma[p] * room(data.user[p]))
                .sum::<f64>())
            / (np + nl + capped.len()) as f64;
        // Predictor: targets zero.
        let cx: Vec<f64> = (0..np).map(|p| -pt.x[p] * pt.w[p]).collect();
        let cl: Vec<f64> = (0..nl).map(|l| -pt.lam[l] * pt.s[l]).collect();
        let cu: Vec<f64> = (0..np).map(|p| -pt.sigma[p] * room(data.user[p])).collect();
        let Some(aff) = data.direction(&pt, &ev, &cx, &cl, &cu) else {
            return handed_back(best);
        };
        let t_aff = step_length(&pt, &aff, data, &ev);
        let mu_aff = (pt
            .x
            .iter()
            .zip(&aff.x)
            .zip(pt.w.iter().zip(&aff.w))
            .map(|((x, dx), (w, dw))| (x + t_aff * dx) * (w + t_aff * dw))
            .sum::<f64>()
            + pt.lam
                .iter()
                .zip(&aff.lam)
                .zip(pt.s.iter().zip(&aff.s))
                .map(|((x, dx), (w, dw))| (x + t_aff * dx) * (w + t_aff * dw))
                .sum::<f64>()
            + capped
                .iter()
                .map(|&p| {
                    let n = data.user[p];
                    let dx: f64 = data.of_user[n].iter().map(|&q| aff.x[q]).sum();
                    (pt.sigma[p] + t_aff * aff.sigma[p]) * (room(n) - t_aff * dx)
                })
                .sum::<f64>())
            / (np + nl + capped.len()) as f64;
        let sigma = (mu_aff / mu).clamp(0.0, 1.0).powi(3);
        let target = sigma * mu;
        // Corrector: the target and the predictor's second-order terms.
        let cx: Vec<f64> = (0..np)
            .map(|p| target - pt.x[p] * pt.w[p] - aff.x[p] * aff.w[p])
            .collect();
        let cl: Vec<f64> = (0..nl)
            .map(|l| target - pt.lam[l] * pt.s[l] - aff.lam[l] * aff.s[l])
            .collect();
        let aff_dx: Vec<f64> = data
            .of_user
            .iter()
            .map(|ps| ps.iter().map(|&p| aff.x[p]).sum())
            .collect();
        let cu: Vec<f64> = (0..np)
            .map(|p| {
                let n = data.user[p];
                target - pt.sigma[p] * room(n) + aff.sigma[p] * aff_dx[n]
            })
            .collect();
        let Some(step) = data.direction(&pt, &ev, &cx, &cl, &cu) else {
            return handed_back(best);
        };
        let t = step_length(&pt, &step, data, &ev);
        pt.x = moved(&pt.x, &step.x, t);
        pt.w = moved(&pt.w, &step.w, t);
        pt.lam = moved(&pt.lam, &step.lam, t);
        pt.s = moved(&pt.s, &step.s, t);
        pt.sigma = moved(&pt.sigma, &step.sigma, t);
    }
    handed_back(best)
}

/// The best point of a finish that cannot go on, when within
/// [`HAND_BACK`] (the certificate decides).
fn handed_back(best: Option<(f64, Finished)>) -> Option<Finished> {
    best.filter(|b| b.0 <= HAND_BACK).map(|b| b.1)
}

/// The step length keeping every variable (and every capped user's room)
/// positive.
fn step_length(pt: &Point, step: &Step, data: &Data, ev: &Eval) -> f64 {
    let mut t = 1.0;
    t = max_step(&pt.x, &step.x, t);
    t = max_step(&pt.w, &step.w, t);
    t = max_step(&pt.lam, &step.lam, t);
    t = max_step(&pt.s, &step.s, t);
    for (n, cap) in data.cap.iter().enumerate() {
        if let (Some(c), false) = (cap, pt.active[n]) {
            for &p in &data.of_user[n] {
                t = max_step(&[pt.sigma[p]], &[step.sigma[p]], t);
            }
            let dx: f64 = data.of_user[n].iter().map(|&p| step.x[p]).sum();
            t = max_step(&[c - ev.total[n]], &[-dx], t);
        }
    }
    t
}

fn read_out(data: &Data, pt: &Point) -> Finished {
    let nu = data.of_user.len();
    let k = data.servers.len();
    let mut tasks = vec![vec![0.0; k]; nu];
    let mut lam = Vec::with_capacity(k);
    // A user held at its cap is read out at it: held within 1e-11, a
    // user whose marginal utility is far above its price made the
    // certificate's gap 1e-9 per server on the Alibaba classes.
    let mut total = vec![0.0; nu];
    for (p, &n) in data.user.iter().enumerate() {
        total[n] += pt.x[p];
    }
    let scale: Vec<f64> = (0..nu)
        .map(|n| match data.cap[n] {
            Some(t) if pt.active[n] && total[n] > 0.0 => t / total[n],
            _ => 1.0,
        })
        .collect();
    for (s, srv) in data.servers.iter().enumerate() {
        for k in 0..srv.users.len() {
            let p = data.pair_at[s] + k;
            tasks[data.user[p]][s] = pt.x[p] * scale[data.user[p]];
        }
        // A price the interior point only drove towards zero (its
        // resource has room) is zero: left at 1e-13, a user left out of
        // the finish holding tasks on that resource (its price there its
        // own zero) was counted as priced there by the certificate.
        let (a, b) = (data.price_at[s], data.price_at[s + 1]);
        let top = pt.lam[a..b].iter().copied().fold(0.0, f64::max);
        lam.push(
            (a..b)
                .map(|l| {
                    if pt.lam[l] <= ZERO_PRICE * top && pt.s[l] >= ZERO_PRICE {
                        0.0
                    } else {
                        pt.lam[l]
                    }
                })
                .collect(),
        );
    }
    Finished { tasks, lam }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start's multipliers are the conditions' values at the sweeps'
    /// point wherever those are at least 1e-3 (so a point that satisfies
    /// them starts with nothing to correct): w = g, s = the slack.
    #[test]
    fn the_start_takes_each_condition_at_its_value() {
        // Two servers, three users, two resources: users 0 and 1 on
        // server 0, users 1 and 2 on server 1.
        let users = [vec![0, 1], vec![1, 2]];
        let r = [vec![0.3, 0.1, 0.2, 0.2], vec![0.1, 0.4, 0.25, 0.05]];
        let log_b = [vec![0.1, -0.2], vec![0.3, 0.0]];
        let lam = [vec![1.0, 0.0], vec![0.4, 1.0]];
        let views: Vec<FinishServer> = (0..2)
            .map(|s| FinishServer {
                users: &users[s],
                r: &r[s],
                log_b: &log_b[s],
                ell: 0.5 * s as f64,
                lam: &lam[s],
                room: &[1.0, 1.0],
            })
            .collect();
        let caps = vec![None; 3];
        let tasks = vec![vec![1.0, 0.0], vec![0.5, 2.0], vec![0.0, 1.5]];
        let data = Data::new(2.0, &caps, &views);
        let (pt, _) = start(&data, &caps, &views, &tasks, false);
        let ev = data.eval(&pt);
        let (mut checked_w, mut checked_s) = (0, 0);
        for p in 0..data.user.len() {
            let g = ev.r_w[p] + pt.w[p];
            if g >= 1e-3 {
                assert!(
                    ev.r_w[p].abs() <= 1e-12 * g.abs().max(1.0),
                    "pair {p}: g {g}, w {}",
                    pt.w[p]
                );
                checked_w += 1;
            } else {
                assert_eq!(pt.w[p], 1e-3);
            }
        }
        for l in 0..data.num_prices() {
            let slack = ev.r_s[l] + pt.s[l];
            if slack >= 1e-3 {
                assert!(
                    ev.r_s[l].abs() <= 1e-12,
                    "price {l}: slack {slack}, s {}",
                    pt.s[l]
                );
                checked_s += 1;
            }
        }
        assert!(checked_w >= 1 && checked_s >= 1, "{checked_w} {checked_s}");
    }
}
