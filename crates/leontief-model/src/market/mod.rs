//! The price dual of a separable concave allocation: one projected-Newton
//! solver shared by bbf-eg (and through it FDS/GFJ's separable regions) and
//! alphaPF-VDS's best responses.
//!
//! Buyers k = 1..E each take a total x_k in [lo_k, hi_k] (hi_k may be
//! infinite) of a bundle that uses r_{k,j} of resource j per unit; resource
//! j has capacity 1 (rows are normalised by the caller). Buyer k's utility
//! is
//!
//! ```text
//!   u_k(x) = b_k^alpha x^(1-alpha) / (1-alpha) + d_k x      (b_k log x + d_k x at alpha = 1)
//! ```
//!
//! and the program is max sum_k u_k(x_k) s.t. sum_k r_{k,j} (x_k - lo_k) <= 1.
//! Eisenberg-Gale on a pool is lo = 0, b^alpha = e (the entitlement), d = 0;
//! FDS's separable regions add the linear term d; a VDS server's best
//! response has lo = the user's tasks on the other servers and d = 0. Its
//! dual lives in the m prices lambda >= 0:
//!
//! ```text
//!   g(lambda) = sum_j lambda_j + sum_k psi_k(p_k),    p_k = r_k . lambda - d_k,
//!   psi_k(p) = max_{x in [lo_k, hi_k]} [b^alpha x^(1-alpha)/(1-alpha) - p (x - lo_k)]   (minus a constant),
//!   x_k(p) = clamp(b_k p^(-1/alpha), lo_k, hi_k),
//! ```
//!
//! convex and C^1 where every uncapped buyer's net price p_k is positive;
//! grad_j g = 1 - sum_k r_{k,j} (x_k - lo_k). [`Market::descend`] is a
//! projected Newton method on g with an Armijo search along the projected
//! arc (Bertsekas's epsilon-active set), O(E m^2) per step;
//! [`Market::finish`] is Newton on the active set (usage = 1 on the priced
//! resources, the set corrected until the KKT conditions hold);
//! [`Market::solve`] is the first, then the second if the first stopped
//! short. psi is written relative to its value at a bound so that no term
//! exceeds the price scale whatever alpha (callers scale b so that prices
//! are near 1: VDS overflows at alpha = 30 without it).
//!
//! The callers keep what is theirs: bbf-eg's start, its certificate (the
//! duality gap with the absolute g) and its polish of pools with linear
//! terms (it keeps the users priced at their linear value as unknowns);
//! VDS's per-server price scale and its warm starts across sweeps.

use nalgebra::{DMatrix, DVector};

const INF: f64 = f64::INFINITY;

/// From this many resources on, [`gram`] is a matrix product.
const GEMM_FROM: usize = 16;

/// Steps of [`Market::descend`] within [`Market::solve`].
const DESCENT_STEPS: usize = 500;

/// The buyers of one separable program (see the module docs).
#[derive(Debug, Clone)]
pub struct Market<'a> {
    alpha: f64,
    m: usize,
    /// r_{k,j}, row-major E x m.
    r: &'a [f64],
    /// b_k at alpha = 1 (empty otherwise).
    b: Vec<f64>,
    /// ln b_k.
    ln_b: Vec<f64>,
    /// lo_k.
    lo: Vec<f64>,
    /// hi_k (INF without a cap).
    hi: Vec<f64>,
    /// d_k (empty: all zero).
    shift: Vec<f64>,
    /// Per buyer, the net prices (b_k / z)^alpha at which z = lo_k and
    /// z = hi_k are the best totals (0 where z is 0 or infinite): fixed for
    /// the program, so each evaluation of g costs one log and one exp per
    /// buyer, not up to a dozen (they were 65% of VDS's time).
    p_lo: Vec<f64>,
    p_hi: Vec<f64>,
    /// Per buyer at alpha != 1 (empty at 1), the constant terms of psi:
    /// its value at x = lo, and hi p_hi / (alpha - 1); then alpha /
    /// (alpha - 1). A division per buyer and evaluation of g otherwise.
    psi_at_lo: Vec<f64>,
    psi_top: Vec<f64>,
    alpha_ratio: f64,
}

impl<'a> Market<'a> {
    /// The program with exponent `alpha > 0`, `m` resources, rows `r`
    /// (E x m, row-major), ln b_k, bounds and linear terms `shift` (empty
    /// for none).
    ///
    /// ```
    /// use leontief_model::market::Market;
    /// // Two Eisenberg-Gale buyers with entitlements 1/2 on one resource,
    /// // one using 1 per unit, the other 2: both spend 1/2, price 1.
    /// let r = [1.0, 2.0];
    /// let ln_b = vec![0.5f64.ln(); 2];
    /// let market = Market::new(1.0, 1, &r, ln_b, vec![0.0; 2], vec![f64::INFINITY; 2], Vec::new());
    /// let (mut lam, mut x) = (vec![0.3], vec![0.0; 2]);
    /// let (_, ok) = market.solve(&mut lam, &mut x, 1e-12);
    /// assert!(ok && (lam[0] - 1.0).abs() < 1e-9);
    /// assert!((x[0] - 0.5).abs() < 1e-9 && (x[1] - 0.25).abs() < 1e-9);
    /// ```
    pub fn new(
        alpha: f64,
        m: usize,
        r: &'a [f64],
        ln_b: Vec<f64>,
        lo: Vec<f64>,
        hi: Vec<f64>,
        shift: Vec<f64>,
    ) -> Self {
        let pz = |lb: f64, z: f64| (alpha * (lb - z.ln())).exp();
        let p_lo: Vec<f64> = ln_b
            .iter()
            .zip(&lo)
            .map(|(&lb, &z)| if z > 0.0 { pz(lb, z) } else { 0.0 })
            .collect();
        let p_hi: Vec<f64> = ln_b
            .iter()
            .zip(&hi)
            .map(|(&lb, &z)| {
                if z.is_finite() && z > 0.0 {
                    pz(lb, z)
                } else {
                    0.0
                }
            })
            .collect();
        let (mut psi_at_lo, mut psi_top) = (Vec::new(), Vec::new());
        if alpha != 1.0 {
            for k in 0..ln_b.len() {
                let (lo, hi) = (lo[k], hi[k]);
                let top = if hi.is_finite() { hi * p_hi[k] } else { 0.0 };
                psi_at_lo.push((top - lo * p_lo[k]) / (alpha - 1.0));
                psi_top.push(top / (alpha - 1.0));
            }
        }
        Market {
            alpha,
            m,
            r,
            // b_k itself is read at alpha = 1 only (one exp per buyer
            // and response otherwise spent on nothing).
            b: if alpha == 1.0 {
                ln_b.iter().map(|lb| lb.exp()).collect()
            } else {
                Vec::new()
            },
            ln_b,
            lo,
            hi,
            shift,
            p_lo,
            p_hi,
            psi_at_lo,
            psi_top,
            alpha_ratio: alpha / (alpha - 1.0),
        }
    }

    /// Buyers.
    pub fn buyers(&self) -> usize {
        self.ln_b.len()
    }

    /// lo_k.
    pub fn lower(&self) -> &[f64] {
        &self.lo
    }

    fn shift(&self, k: usize) -> f64 {
        self.shift.get(k).copied().unwrap_or(0.0)
    }

    /// Buyer k's net price p_k = r_k . lambda - d_k.
    #[inline]
    pub fn price(&self, k: usize, lam: &[f64]) -> f64 {
        let row = &self.r[k * self.m..(k + 1) * self.m];
        row.iter().zip(lam).map(|(a, b)| a * b).sum::<f64>() - self.shift(k)
    }

    /// x_k(p), buyer k's best total at net price p.
    #[inline(always)]
    pub fn x_of(&self, k: usize, p: f64) -> f64 {
        if p <= 0.0 || p <= self.p_hi[k] {
            return self.hi[k];
        }
        if self.lo[k] > 0.0 && p >= self.p_lo[k] {
            return self.lo[k];
        }
        // No exp or log where the bounds or alpha = 1 spare them (they were
        // most of a step of the pool's dual).
        let x = if self.alpha == 1.0 {
            self.b[k] / p
        } else {
            (self.ln_b[k] - p.ln() / self.alpha).exp()
        };
        x.clamp(self.lo[k], self.hi[k])
    }

    /// psi_k(p) = max_{x in [lo, hi]} [u(x) - d x - p (x - lo)] minus a constant.
    pub fn psi(&self, k: usize, p: f64) -> f64 {
        self.psi_x(k, p).0
    }

    /// (psi_k(p), x_k(p)): the total of [`Market::x_of`] bit for bit, from
    /// the one exp and log that psi takes inside the bounds (a descent step
    /// reads the totals at the point its line search accepted instead of
    /// computing them again).
    fn psi_x(&self, k: usize, p: f64) -> (f64, f64) {
        let bound = || self.x_of(k, p);
        let (a, lo, hi) = (self.alpha, self.lo[k], self.hi[k]);
        if p <= 0.0 && hi.is_infinite() {
            // The user would take infinitely much: outside the domain the
            // search may visit (g is finite there for alpha > 1, but its
            // gradient is not, and the minimiser is never there).
            return (INF, bound());
        }
        if a == 1.0 {
            // u = b log x.
            let b = self.b[k];
            if p <= 0.0 {
                let psi = if hi.is_finite() {
                    b * hi.ln() - p * (hi - lo)
                } else {
                    INF
                };
                return (psi, bound());
            }
            let x = (b / p).clamp(lo, hi);
            return (b * x.ln() - p * (x - lo), bound());
        }
        // P(z) = (b/z)^alpha, the price at which z is the best total.
        let (p_lo, p_hi) = (self.p_lo[k], self.p_hi[k]);
        if p <= 0.0 {
            // hi is finite here; a negative net price (a linear term worth
            // more than the bundle costs) still takes hi.
            return (-p * (hi - lo), bound());
        }
        if hi.is_finite() && p <= p_hi {
            return (-p * (hi - lo), bound());
        }
        if lo > 0.0 && p >= p_lo {
            // (hi p_hi - lo p_lo) / (alpha - 1).
            return (self.psi_at_lo[k], bound());
        }
        let x = self.x_of(k, p);
        // hi p_hi / (alpha - 1) - alpha / (alpha - 1) p x + lo p.
        (self.psi_top[k] - self.alpha_ratio * p * x + lo * p, x)
    }

    /// g(lambda), up to a constant.
    pub fn value(&self, lam: &[f64]) -> f64 {
        let e = self.ln_b.len();
        lam.iter().sum::<f64>() + (0..e).map(|k| self.psi(k, self.price(k, lam))).sum::<f64>()
    }

    /// [`Market::value`], and the buyers' totals at `lam` into `x` (the
    /// same bits as [`Market::gradient`] writes).
    fn value_x(&self, lam: &[f64], x: &mut [f64]) -> f64 {
        let e = self.ln_b.len();
        lam.iter().sum::<f64>()
            + (0..e)
                .map(|k| {
                    let (psi, xk) = self.psi_x(k, self.price(k, lam));
                    x[k] = xk;
                    psi
                })
                .sum::<f64>()
    }

    /// grad g = 1 - usage, and the buyers' totals into `x`.
    pub fn gradient(&self, lam: &[f64], x: &mut [f64]) -> Vec<f64> {
        for (k, xk) in x.iter_mut().enumerate().take(self.ln_b.len()) {
            *xk = self.x_of(k, self.price(k, lam));
        }
        self.usage_gap(x)
    }

    /// grad g = 1 - usage from the buyers' totals `x`.
    fn usage_gap(&self, x: &[f64]) -> Vec<f64> {
        let mut g = vec![1.0; self.m];
        for k in 0..self.ln_b.len() {
            let y = x[k] - self.lo[k];
            if y != 0.0 {
                let row = &self.r[k * self.m..(k + 1) * self.m];
                for (gr, a) in g.iter_mut().zip(row) {
                    *gr -= a * y;
                }
            }
        }
        g
    }

    /// The Hessian of g on the resources `idx`: the sum over the buyers
    /// strictly inside their bounds (net price positive) of
    /// r r^T x / (alpha p) ([`gram`]).
    /// `q` holds the buyers' net prices ([`Market::prices`]).
    fn curvature(&self, q: &[f64], x: &[f64], idx: &[usize]) -> DMatrix<f64> {
        let weights = (0..self.buyers()).filter_map(|u| {
            let p = q[u];
            (p > 0.0 && x[u] > self.lo[u] && x[u] < self.hi[u])
                .then(|| (u, x[u] / (self.alpha * p)))
        });
        gram(self.r, self.m, idx, weights)
    }

    /// Every buyer's net price at `lam`.
    fn prices(&self, lam: &[f64]) -> Vec<f64> {
        (0..self.buyers()).map(|k| self.price(k, lam)).collect()
    }

    /// The projected-gradient residual: an overloaded resource (g < 0)
    /// counts fully whatever its price; an underused one only as far as
    /// its price, relative to the largest, could still fall (relative: at
    /// alpha = 32 every price of a pool is 1e-14, and an absolute measure
    /// called resources 6% and 26% short of full converged).
    pub fn residual(lam: &[f64], g: &[f64]) -> f64 {
        let top = lam.iter().copied().fold(0.0, f64::max);
        lam.iter()
            .zip(g)
            .map(|(&l, &gr)| {
                if gr < 0.0 {
                    -gr
                } else if l > 0.0 {
                    gr.min(l / top)
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max)
    }

    /// Projected Newton from `lam`, then (if it stopped short) the
    /// active-set finish; returns (steps, reached tolerance).
    pub fn solve(&self, lam: &mut [f64], x: &mut [f64], tol: f64) -> (usize, bool) {
        let (steps, ok) = self.descend(lam, x, tol, DESCENT_STEPS);
        if ok {
            return (steps, true);
        }
        let (more, ok) = self.finish(lam, x, tol);
        (steps + more, ok)
    }

    /// Newton on the active set, as bbf-eg's polish: with the priced
    /// resources fixed as the active set, solve usage_r(lam) = 1 for them
    /// (prices of the others 0; Newton with backtracking on the largest
    /// residual), then let the most negative price leave or the most
    /// overloaded resource join, until the projected-gradient residual is
    /// within `tol`. Found necessary by exploration: the descent could stop
    /// with a priced resource 2e-5 short of full (its line search at the
    /// resolution of g), the same short response at every sweep, 10,000
    /// sweeps and `iteration_limit`. `lam` and `x` change only on success.
    pub fn finish(&self, lam: &mut [f64], x: &mut [f64], tol: f64) -> (usize, bool) {
        let (m, e) = (self.m, self.ln_b.len());
        let mut active: Vec<bool> = lam.iter().map(|&l| l > 0.0).collect();
        let mut cur = lam.to_vec();
        let mut xs = vec![0.0; e];
        let mut steps = 0;
        let worst = |g: &[f64], idx: &[usize]| idx.iter().map(|&r| g[r].abs()).fold(0.0, f64::max);
        for _round in 0..2 * m + 2 {
            for r in 0..m {
                if !active[r] {
                    cur[r] = 0.0;
                }
            }
            let idx: Vec<usize> = (0..m).filter(|&r| active[r]).collect();
            let mut g = self.gradient(&cur, &mut xs);
            if g.iter().any(|v| !v.is_finite()) {
                return (steps, false);
            }
            for _ in 0..60 {
                let now = worst(&g, &idx);
                if now <= 0.1 * tol || idx.is_empty() {
                    break;
                }
                steps += 1;
                // dg/dlam = sum over interior users of r r^T x / (alpha p).
                let k = idx.len();
                let h = self.curvature(&self.prices(&cur), &xs, &idx);
                let rhs = DVector::from_iterator(k, idx.iter().map(|&r| -g[r]));
                let Some(mut d) = crate::linalg::min_norm_solve(h.clone(), &rhs, 1e-14) else {
                    return (steps, false);
                };
                // No interior user on a resource (all at a bound: every
                // user already holding its tasks elsewhere at this price,
                // or at its cap): no curvature says how far to move, so
                // halve an underused resource's price, double an
                // overloaded one's; the backtracking does the rest.
                let hmax = (0..k).map(|a| h[(a, a)]).fold(0.0, f64::max);
                for (a, &r) in idx.iter().enumerate() {
                    if h[(a, a)] <= 1e-12 * hmax {
                        d[a] = if g[r] > 0.0 { -0.5 * cur[r] } else { cur[r] };
                    }
                }
                let mut t = 1.0;
                let mut moved = false;
                let (mut trial, mut xt) = (cur.clone(), vec![0.0; e]);
                while t > 1e-12 {
                    trial.copy_from_slice(&cur);
                    for (a, &r) in idx.iter().enumerate() {
                        trial[r] += t * d[a];
                    }
                    // The step no longer moves a price: every shorter one
                    // is the same point, refused like this one.
                    if idx.iter().all(|&r| trial[r].to_bits() == cur[r].to_bits()) {
                        break;
                    }
                    let gt = self.gradient(&trial, &mut xt);
                    if gt.iter().all(|v| v.is_finite()) && worst(&gt, &idx) < (1.0 - 1e-4 * t) * now
                    {
                        std::mem::swap(&mut cur, &mut trial);
                        g = gt;
                        std::mem::swap(&mut xs, &mut xt);
                        moved = true;
                        break;
                    }
                    t *= 0.5;
                }
                if !moved {
                    break;
                }
            }
            let neg = idx
                .iter()
                .copied()
                .filter(|&r| cur[r] < 0.0)
                .min_by(|&a, &b2| cur[a].total_cmp(&cur[b2]));
            let over = (0..m)
                .filter(|&r| !active[r] && g[r] < -tol)
                .min_by(|&a, &b2| g[a].total_cmp(&g[b2]));
            // A priced resource Newton could not fill (every user of it at
            // a bound: no curvature in its direction) is not binding.
            let slack = idx
                .iter()
                .copied()
                .filter(|&r| g[r] > tol)
                .max_by(|&a, &b2| g[a].total_cmp(&g[b2]));
            match (neg.or(slack), over) {
                (Some(r), _) => active[r] = false,
                (None, Some(r)) => {
                    active[r] = true;
                    cur[r] = 1e-9 * cur.iter().copied().fold(0.0, f64::max).max(1e-300);
                }
                (None, None) => {
                    if Self::residual(&cur, &g) <= tol {
                        lam.copy_from_slice(&cur);
                        x.copy_from_slice(&xs);
                        return (steps, true);
                    }
                    return (steps, false);
                }
            }
        }
        (steps, false)
    }

    /// Projected Newton from `lam`, at most `max_steps` steps; returns
    /// (steps, reached tolerance), with `x` the totals at the final `lam`.
    pub fn descend(
        &self,
        lam: &mut [f64],
        x: &mut [f64],
        tol: f64,
        max_steps: usize,
    ) -> (usize, bool) {
        let m = self.m;
        let e = self.ln_b.len();
        let mut steps = 0;
        // The buyers' totals at `lam`, from the value that accepted it (the
        // gradient's totals, bit for bit, without their exp and log again).
        let mut at_lam = vec![0.0; e];
        let mut f = self.value_x(lam, &mut at_lam);
        if !f.is_finite() {
            // alpha = 1 with an uncapped user priced at zero.
            for l in lam.iter_mut() {
                *l = l.max(1e-3);
            }
            f = self.value_x(lam, &mut at_lam);
        }
        let mut at_trial = vec![0.0; e];
        for _ in 0..max_steps {
            x[..e].copy_from_slice(&at_lam);
            let g = self.usage_gap(x);
            let res = Self::residual(lam, &g);
            if res <= tol {
                return (steps, true);
            }
            steps += 1;
            // The buyers' net prices, once per step (the Hessian, its
            // diagonal and the zero test below all read them).
            let q = self.prices(lam);
            // The Hessian's diagonal, and the curvature every user would
            // have if interior: a scale for the prices no interior user
            // pins (g is piecewise linear there, and its own Hessian says
            // nothing). The full Hessian is built below on the free prices
            // only (at 100 resources a third of them end at zero).
            let mut hdiag = vec![0.0; m];
            let mut model = vec![0.0; m];
            for k in 0..e {
                let p = q[k];
                if p > 0.0 && x[k].is_finite() {
                    let c = x[k] / (self.alpha * p);
                    let interior = x[k] > self.lo[k] && x[k] < self.hi[k];
                    for r in 0..m {
                        let v = c * self.r[k * m + r].powi(2);
                        model[r] += v;
                        if interior {
                            hdiag[r] += v;
                        }
                    }
                }
            }
            let diag_max = (0..m)
                .map(|a| hdiag[a].max(model[a]))
                .fold(0.0, f64::max)
                .max(1e-300);
            let diag = |r: usize| hdiag[r].max(model[r]).max(1e-12 * diag_max);
            // epsilon-active set (in Newton-scaled units): prices at or
            // near zero that the gradient pushes down, where zero stays in
            // the domain (every uncapped user keeps a positive price).
            let proj: f64 = (0..m)
                .map(|r| (lam[r] - (lam[r] - g[r] / diag(r)).max(0.0)).abs() * diag(r).sqrt())
                .fold(0.0, f64::max);
            // Prices that can fall to zero alone and keep every uncapped
            // user priced (one pass over the users).
            let mut zeroable = vec![true; m];
            for k in (0..e).filter(|&k| self.hi[k].is_infinite()) {
                let row = &self.r[k * m..(k + 1) * m];
                for r in 0..m {
                    if row[r] != 0.0 && q[k] - row[r] * lam[r] <= 0.0 {
                        zeroable[r] = false;
                    }
                }
            }
            let mut fixed: Vec<bool> = (0..m)
                .map(|r| {
                    g[r] > 0.0
                        && lam[r] * diag(r).sqrt() <= proj.min(1e-3)
                        && (lam[r] == 0.0 || zeroable[r])
                })
                .collect();
            // Jointly: zeroing every fixed price must leave each uncapped
            // user priced; otherwise only the prices already at zero stay.
            // (Nothing to ask when no price is fixed, or of a capped user.)
            let priced = !fixed.contains(&true)
                || (0..e).all(|k| {
                    if self.hi[k].is_finite() {
                        return true;
                    }
                    let row = &self.r[k * m..(k + 1) * m];
                    let kept: f64 = (0..m).filter(|&r| !fixed[r]).map(|r| row[r] * lam[r]).sum();
                    kept - self.shift(k) > 0.0
                });
            if !priced {
                for r in 0..m {
                    fixed[r] &= lam[r] == 0.0;
                }
            }
            let free: Vec<usize> = (0..m).filter(|&r| !fixed[r]).collect();
            let nf = free.len();
            let h = self.curvature(&q, x, &free);
            let mut d = vec![0.0; m];
            let gf = DVector::from_iterator(nf, free.iter().map(|&r| g[r]));
            let mut reg = 1e-14;
            let dir = loop {
                let mut hr = h.clone();
                for a in 0..nf {
                    hr[(a, a)] += reg * diag_max + 1e-14 * diag(free[a]);
                }
                if let Some(ch) = hr.cholesky() {
                    break ch.solve(&gf);
                }
                reg *= 100.0;
                if reg > 1.0 {
                    break DVector::from_iterator(nf, (0..nf).map(|a| gf[a] / diag(free[a])));
                }
            };
            for (a, &r) in free.iter().enumerate() {
                d[r] = dir[a];
            }
            for r in (0..m).filter(|&r| fixed[r]) {
                d[r] = g[r] / diag(r);
            }
            // No curvature at all (every buyer at a bound, and those at hi
            // with a negative net price: a linear term worth more than the
            // bundle costs) overflows the step: take the gradient instead,
            // which the bound below scales.
            if d.iter().any(|v| !v.is_finite()) {
                d.copy_from_slice(&g);
            }
            // Where no user is interior the Hessian vanishes (g is
            // piecewise linear there) and the step above is unbounded:
            // keep any price within a factor e^10 per step (a positive
            // rescaling keeps it a descent direction; Armijo does the rest).
            let lam_mean = lam.iter().sum::<f64>() / m as f64;
            // (Fixed prices only fall to zero: they need no bound.)
            let tau = (0..m)
                .filter(|&r| !fixed[r])
                .map(|r| d[r].abs() / lam[r].max(lam_mean).max(1e-300))
                .fold(0.0, f64::max);
            if tau > 10.0 {
                d.iter_mut().for_each(|v| *v *= 10.0 / tau);
            }
            // Armijo along the projected arc. A positive free price that
            // falls and could not reach zero alone without leaving an
            // uncapped user unpriced moves multiplicatively (lam
            // e^(-s d / lam): the same first-order step, but it never leaves
            // the domain, which the flat dual of a large alpha would
            // otherwise make it do at every step); every other price moves
            // on the straight projected path, so prices bound for zero get
            // there in one step (the multiplicative path alone took bbf-eg
            // 18 steps at 10,000 users and 100 resources, against 10).
            let curved = |r: usize| !fixed[r] && lam[r] > 0.0 && d[r] > 0.0 && !zeroable[r];
            let path = |s: f64, r: usize| {
                if curved(r) {
                    // At most e^-30 per step: a price far below the others
                    // would otherwise underflow to a denormal and stall.
                    lam[r] * (-(s * d[r] / lam[r]).min(30.0)).exp()
                } else {
                    (lam[r] - s * d[r]).max(0.0)
                }
            };
            let mut s = 1.0;
            let mut s_fail = 2.0;
            let mut accepted = false;
            let mut trial = vec![0.0; m];
            for _ in 0..80 {
                for r in 0..m {
                    trial[r] = path(s, r);
                }
                let ft = self.value_x(&trial, &mut at_trial);
                let decrease: f64 = (0..m)
                    .map(|r| {
                        if fixed[r] {
                            g[r] * (lam[r] - trial[r])
                        } else {
                            s * g[r] * d[r]
                        }
                    })
                    .sum();
                if ft.is_finite() && f - ft >= 1e-4 * decrease {
                    f = ft;
                    accepted = true;
                    break;
                }
                if decrease <= 8.0 * f64::EPSILON * f.abs() {
                    // Below the resolution of g: shorter steps cannot
                    // separate either (that cost 80 values a step).
                    break;
                }
                // Backtrack to the minimiser of the quadratic through f,
                // the first-order decrease and ft (Nocedal and Wright's
                // interpolation), within [s/10, s/2]: a step overshooting
                // by 1e6 (a kink: users entering their bounds, where the
                // one-sided Hessian is far too small) costs a few values,
                // not twenty halvings.
                let curv = (ft - f + decrease) / (s * s);
                let next = if ft.is_finite() && curv > 0.0 && decrease > 0.0 {
                    (decrease / s / (2.0 * curv)).clamp(0.1 * s, 0.5 * s)
                } else {
                    0.5 * s
                };
                s_fail = s;
                s = next;
            }
            if accepted && s < 0.25 {
                // A shortened step means a kink ahead (a user entering or
                // leaving its bounds, where the one-sided Hessian is far too
                // small): minimise along the path exactly, by bisection on
                // the sign of the directional derivative over [s, the last step refused].
                let slope_at = |t: f64, buf: &mut Vec<f64>, xb: &mut [f64]| {
                    for r in 0..m {
                        buf[r] = path(t, r);
                    }
                    let gt = self.gradient(buf, xb);
                    (0..m)
                        .map(|r| {
                            let dl = if curved(r) {
                                -d[r] * buf[r] / lam[r]
                            } else if buf[r] > 0.0 {
                                -d[r]
                            } else {
                                0.0
                            };
                            gt[r] * dl
                        })
                        .sum::<f64>()
                };
                let mut buf = vec![0.0; m];
                let mut xb = vec![0.0; e];
                let (mut a, mut bnd) = (s, s_fail);
                let mut sa = slope_at(a, &mut buf, &mut xb);
                if sa < 0.0 {
                    // Regula falsi with the Illinois rule on the slope
                    // (piecewise smooth: a few evaluations where plain
                    // bisection took 32, each a gradient; 60 halvings once
                    // cost 3/4 of the gradients of a 10,000-user pool's
                    // solve), halving where the far end's slope is not
                    // finite, to 1e-9 of the bracket.
                    let mut sb = slope_at(bnd, &mut buf, &mut xb);
                    let mut side = 0i8;
                    for _ in 0..40 {
                        if bnd - a <= 1e-9 * s {
                            break;
                        }
                        let mid = if sb.is_finite() && sb > sa {
                            let t = a - sa * (bnd - a) / (sb - sa);
                            t.clamp(a + 1e-3 * (bnd - a), bnd - 1e-3 * (bnd - a))
                        } else {
                            0.5 * (a + bnd)
                        };
                        let sm = slope_at(mid, &mut buf, &mut xb);
                        if sm < 0.0 {
                            a = mid;
                            sa = sm;
                            if side == -1 {
                                sb *= 0.5;
                            }
                            side = -1;
                        } else {
                            bnd = mid;
                            sb = sm;
                            if side == 1 {
                                sa *= 0.5;
                            }
                            side = 1;
                        }
                    }
                    for r in 0..m {
                        buf[r] = path(a, r);
                    }
                    let fa = self.value_x(&buf, &mut xb);
                    if fa.is_finite() && fa <= f {
                        f = fa;
                        trial.copy_from_slice(&buf);
                        at_trial.copy_from_slice(&xb);
                    }
                }
            }
            if !accepted {
                // At rounding level the values no longer separate: take the
                // full step if it lowers the KKT residual.
                for r in 0..m {
                    trial[r] = path(1.0, r);
                }
                let mut xt = vec![0.0; e];
                let gt = self.gradient(&trial, &mut xt);
                if Self::residual(&trial, &gt) < res {
                    lam.copy_from_slice(&trial);
                    f = self.value_x(lam, &mut at_lam);
                    continue;
                }
                // `x` holds the totals at `lam` (set at the step's start).
                return (steps, false);
            }
            lam.copy_from_slice(&trial);
            at_lam.copy_from_slice(&at_trial);
        }
        x[..e].copy_from_slice(&at_lam);
        let g = self.usage_gap(x);
        (steps, Self::residual(lam, &g) <= tol)
    }
}

/// sum_k c_k r_k r_k^T on the columns `idx` of the row-major rows `r`
/// (m per row), over the (k, c_k) of `weights`; symmetric. The rows are
/// gathered and the upper triangle accumulated row-major (contiguous, so
/// it vectorises: at 10,000 buyers and 100 resources this is most of a
/// Newton step, and strided writes into a column-major matrix made it 3x
/// slower).
pub fn gram(
    r: &[f64],
    m: usize,
    idx: &[usize],
    weights: impl IntoIterator<Item = (usize, f64)>,
) -> DMatrix<f64> {
    let k = idx.len();
    if k >= GEMM_FROM {
        // W^T W with W = diag(sqrt c) R[:, idx]: a matrix product (blocked
        // and vectorised by nalgebra), 3x faster at 100 resources than the
        // rank-one updates below despite computing both triangles.
        let mut data = Vec::new();
        let mut rows = 0;
        for (u, c) in weights {
            let full = &r[u * m..(u + 1) * m];
            let sc = c.sqrt();
            data.extend(idx.iter().map(|&j| sc * full[j]));
            rows += 1;
        }
        // Row-major rows x k is column-major k x rows: W^T.
        let wt = DMatrix::from_vec(k, rows, data);
        return &wt * wt.transpose();
    }
    let mut upper = vec![0.0; k * k];
    let mut row = vec![0.0; k];
    for (u, c) in weights {
        let full = &r[u * m..(u + 1) * m];
        for (ra, &j) in row.iter_mut().zip(idx) {
            *ra = full[j];
        }
        for a in 0..k {
            let ca = c * row[a];
            if ca == 0.0 {
                continue;
            }
            for (h, &rb) in upper[a * k + a..(a + 1) * k].iter_mut().zip(&row[a..]) {
                *h += ca * rb;
            }
        }
    }
    DMatrix::from_fn(k, k, |a, b| upper[a.min(b) * k + a.max(b)])
}

#[cfg(test)]
mod tests;
