//! A vertex made exact to double-double precision: the bounded primal
//! simplex continued from a backend's final basis, with every value and
//! dual recomputed from the basis each step in double-double arithmetic
//! (about 32 digits; the basis solves in f64 refined on residuals summed
//! in double-double).
//!
//! HiGHS's bases on ill-conditioned LPs (the max-min rounds with sparse
//! placement lists) are optimal only within its 1e-9 tolerances; their
//! exact vertices are infeasible by up to 3e-8, and a slope of 3.6e7
//! turns that into percents in later rounds. Here the pivots that remain
//! are taken at tolerances near 1e-24.

use crate::backend::BasisStatus;
use crate::problem::{Problem, Sense};

/// A double-double number hi + lo, |lo| <= ulp(hi) / 2.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Dd {
    hi: f64,
    lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

impl Dd {
    /// The exact value of an f64.
    pub fn from(v: f64) -> Dd {
        Dd { hi: v, lo: 0.0 }
    }
    /// Rounded to the nearest f64.
    pub fn f64(self) -> f64 {
        self.hi + self.lo
    }
    fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        let (t, f) = two_sum(self.lo, o.lo);
        let (s, e) = quick_two_sum(s, e + t);
        let (hi, lo) = quick_two_sum(s, e + f);
        Dd { hi, lo }
    }
    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
    fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }
    fn mul_f(self, b: f64) -> Dd {
        let p = self.hi * b;
        let e = self.hi.mul_add(b, -p) + self.lo * b;
        let (hi, lo) = quick_two_sum(p, e);
        Dd { hi, lo }
    }
    fn div(self, o: Dd) -> Dd {
        let q1 = self.hi / o.hi;
        let r = self.sub(o.mul_f(q1));
        let q2 = r.hi / o.hi;
        let r = r.sub(o.mul_f(q2));
        let q3 = r.hi / o.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }.add(Dd::from(q3))
    }
    fn abs(self) -> Dd {
        if self.hi < 0.0 {
            self.neg()
        } else {
            self
        }
    }
    fn lt(self, o: Dd) -> bool {
        self.hi < o.hi || (self.hi == o.hi && self.lo < o.lo)
    }
}

/// The polished vertex.
#[derive(Debug, Clone)]
pub struct Polished {
    /// Primal values (rounded from double-double).
    pub x: Vec<f64>,
    /// Row duals, in the backend's sign convention for the problem's sense.
    pub row_dual: Vec<f64>,
    /// The objective.
    pub objective: f64,
    /// Pivots taken from the backend's basis.
    pub pivots: usize,
}

/// Why a polish gave up.
#[derive(Debug, Clone, PartialEq)]
pub enum PolishError {
    /// The statuses do not make a basis (count or a singular matrix).
    NotABasis(String),
    /// Phase 1 ended with infeasibility left (the largest violation of a
    /// bound by a basic variable).
    Infeasible(f64),
    /// An improving ray.
    Unbounded,
    /// More pivots than allowed.
    PivotLimit,
}

/// The basis: the matrix restricted to the rows whose activity is
/// nonbasic and the basic columns (the kernel) factorised densely in f64
/// when it was last rebuilt, the pivots since kept as eta columns
/// (product form), every solve refined in double-double against the
/// current basis's own columns.
struct Basis<'a> {
    p: &'a Problem,
    /// The basic variable at each position (0..n columns, n.. rows).
    at: Vec<usize>,
    /// The kernel of the basis when last factorised.
    k_rows: Vec<usize>,
    k_cols: Vec<usize>,
    /// Position of each kernel column's variable in `at` then, and the
    /// kernel row of each row (NONE if its activity was basic).
    k_col_pos: Vec<usize>,
    row_pos: Vec<usize>,
    /// Positions of the basic activities then, by row.
    slack_pos: Vec<usize>,
    lu: SparseLu,
    /// Pivots since: (position, B^{-1} a_q in f64).
    etas: Vec<(usize, Vec<f64>)>,
}

const NONE: usize = usize::MAX;

/// LU with partial pivoting (P K = L U) of a sparse square matrix held
/// dense, eliminating only where the pivot's row and column have
/// entries, its factors kept sparse: the kernels of these bases have a
/// few entries per column and fill in little.
struct SparseLu {
    /// Row `perm[i]` of K is row i of P K.
    perm: Vec<usize>,
    /// Below-diagonal entries of L, by column.
    l_cols: Vec<Vec<(usize, f64)>>,
    /// Above-diagonal entries of U, by column.
    u_cols: Vec<Vec<(usize, f64)>>,
    u_diag: Vec<f64>,
}

impl SparseLu {
    /// `a` column-major k x k; `None` when singular.
    fn new(mut a: Vec<f64>, k: usize) -> Option<SparseLu> {
        let mut perm: Vec<usize> = (0..k).collect();
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        for j in 0..k {
            let (mut p, mut best) = (j, 0.0f64);
            for i in j..k {
                let v = a[i + j * k].abs();
                if v > best {
                    (p, best) = (i, v);
                }
            }
            if best == 0.0 || !best.is_finite() {
                return None;
            }
            if p != j {
                for c in 0..k {
                    a.swap(j + c * k, p + c * k);
                }
                perm.swap(j, p);
            }
            let piv = a[j + j * k];
            rows.clear();
            for i in j + 1..k {
                if a[i + j * k] != 0.0 {
                    a[i + j * k] /= piv;
                    rows.push(i);
                }
            }
            cols.clear();
            for c in j + 1..k {
                if a[j + c * k] != 0.0 {
                    cols.push(c);
                }
            }
            for &c in &cols {
                let u = a[j + c * k];
                for &i in &rows {
                    a[i + c * k] -= a[i + j * k] * u;
                }
            }
        }
        let mut l_cols = vec![Vec::new(); k];
        let mut u_cols = vec![Vec::new(); k];
        let mut u_diag = vec![0.0; k];
        for j in 0..k {
            for i in 0..k {
                let v = a[i + j * k];
                if v != 0.0 {
                    match i.cmp(&j) {
                        std::cmp::Ordering::Greater => l_cols[j].push((i, v)),
                        std::cmp::Ordering::Less => u_cols[j].push((i, v)),
                        std::cmp::Ordering::Equal => u_diag[j] = v,
                    }
                }
            }
        }
        Some(SparseLu {
            perm,
            l_cols,
            u_cols,
            u_diag,
        })
    }

    /// K z = w, in place.
    fn solve(&self, w: &mut [f64]) {
        let b: Vec<f64> = self.perm.iter().map(|&r| w[r]).collect();
        w.copy_from_slice(&b);
        for j in 0..w.len() {
            let bj = w[j];
            if bj != 0.0 {
                for &(i, l) in &self.l_cols[j] {
                    w[i] -= l * bj;
                }
            }
        }
        for j in (0..w.len()).rev() {
            let zj = w[j] / self.u_diag[j];
            w[j] = zj;
            if zj != 0.0 {
                for &(i, u) in &self.u_cols[j] {
                    w[i] -= u * zj;
                }
            }
        }
    }

    /// K^T y = g (K^T = U^T L^T P).
    fn solve_t(&self, g: &[f64]) -> Vec<f64> {
        let k = g.len();
        let mut s = g.to_vec();
        for j in 0..k {
            let dot: f64 = self.u_cols[j].iter().map(|&(i, u)| u * s[i]).sum();
            s[j] = (s[j] - dot) / self.u_diag[j];
        }
        for i in (0..k).rev() {
            let dot: f64 = self.l_cols[i].iter().map(|&(r, l)| l * s[r]).sum();
            s[i] -= dot;
        }
        let mut y = vec![0.0; k];
        for (i, &r) in self.perm.iter().enumerate() {
            y[r] = s[i];
        }
        y
    }
}

/// Pivots kept as etas before the kernel is factorised again.
const REFACTOR: usize = 40;

impl<'a> Basis<'a> {
    fn new(p: &'a Problem, at: Vec<usize>) -> Option<Basis<'a>> {
        let (n, m) = (p.num_cols(), p.num_rows());
        let mut slack_pos = vec![NONE; m];
        let mut k_cols = Vec::new();
        let mut k_col_pos = Vec::new();
        for (pos, &v) in at.iter().enumerate() {
            if v >= n {
                slack_pos[v - n] = pos;
            } else {
                k_cols.push(v);
                k_col_pos.push(pos);
            }
        }
        let k_rows: Vec<usize> = (0..m).filter(|&i| slack_pos[i] == NONE).collect();
        if k_rows.len() != k_cols.len() {
            return None;
        }
        let k = k_rows.len();
        let mut row_pos = vec![NONE; m];
        for (a, &i) in k_rows.iter().enumerate() {
            row_pos[i] = a;
        }
        let mut mat = vec![0.0; k * k];
        for (b, &j) in k_cols.iter().enumerate() {
            for e in p.a_start[j]..p.a_start[j + 1] {
                let a = row_pos[p.a_index[e]];
                if a != NONE {
                    mat[a + b * k] = p.a_value[e];
                }
            }
        }
        let lu = SparseLu::new(mat, k)?;
        Some(Basis {
            p,
            at,
            k_rows,
            k_cols,
            k_col_pos,
            row_pos,
            slack_pos,
            lu,
            etas: Vec::new(),
        })
    }

    /// B0^{-1} w in f64 (w by row, the result by position).
    fn solve0(&self, w: &[f64]) -> Option<Vec<f64>> {
        let p = self.p;
        let mut zc: Vec<f64> = self.k_rows.iter().map(|&i| w[i]).collect();
        self.lu.solve(&mut zc);
        let mut z = vec![0.0; self.at.len()];
        let mut act = w.iter().map(|&v| -v).collect::<Vec<f64>>();
        for (b, &j) in self.k_cols.iter().enumerate() {
            z[self.k_col_pos[b]] = zc[b];
            for e in p.a_start[j]..p.a_start[j + 1] {
                act[p.a_index[e]] += p.a_value[e] * zc[b];
            }
        }
        for (i, &pos) in self.slack_pos.iter().enumerate() {
            if pos != NONE {
                z[pos] = act[i];
            }
        }
        Some(z)
    }

    /// B0^{-T} g in f64 (g by position, the result by row).
    fn solve0_t(&self, g: &[f64]) -> Option<Vec<f64>> {
        let p = self.p;
        let m = p.num_rows();
        let mut y = vec![0.0; m];
        for (i, &pos) in self.slack_pos.iter().enumerate() {
            if pos != NONE {
                y[i] = -g[pos];
            }
        }
        let k = self.k_rows.len();
        let mut rhs = vec![0.0; k];
        for (b, &j) in self.k_cols.iter().enumerate() {
            let mut v = g[self.k_col_pos[b]];
            for e in p.a_start[j]..p.a_start[j + 1] {
                let i = p.a_index[e];
                if self.row_pos[i] == NONE {
                    v -= p.a_value[e] * y[i];
                }
            }
            rhs[b] = v;
        }
        let yr = self.lu.solve_t(&rhs);
        for (a, &i) in self.k_rows.iter().enumerate() {
            y[i] = yr[a];
        }
        Some(y)
    }

    /// B^{-1} w in f64 (product form).
    fn ftran(&self, w: &[f64]) -> Option<Vec<f64>> {
        let mut z = self.solve0(w)?;
        for (pos, alpha) in &self.etas {
            let zp = z[*pos] / alpha[*pos];
            for (zi, ai) in z.iter_mut().zip(alpha) {
                *zi -= ai * zp;
            }
            z[*pos] = zp;
        }
        Some(z)
    }

    /// B^{-T} g in f64 (product form).
    fn btran(&self, g: &[f64]) -> Option<Vec<f64>> {
        let mut g = g.to_vec();
        for (pos, alpha) in self.etas.iter().rev() {
            // (E^T g)_p = g_p - (alpha . g - g_p) / alpha_p
            let dot: f64 = alpha.iter().zip(&g).map(|(a, b)| a * b).sum();
            g[*pos] -= (dot - g[*pos]) / alpha[*pos];
        }
        self.solve0_t(&g)
    }

    /// The column of variable v, as (row, value) pairs.
    fn column(&self, v: usize, mut f: impl FnMut(usize, f64)) {
        let (p, n) = (self.p, self.p.num_cols());
        if v < n {
            for e in p.a_start[v]..p.a_start[v + 1] {
                f(p.a_index[e], p.a_value[e]);
            }
        } else {
            f(v - n, -1.0);
        }
    }

    /// B z = w in double-double (w by row, z by position).
    fn solve(&self, w: &[Dd]) -> Option<Vec<Dd>> {
        let mut z = vec![Dd::default(); self.at.len()];
        for _ in 0..8 {
            let mut r = w.to_vec();
            for (pos, &v) in self.at.iter().enumerate() {
                let zp = z[pos];
                if zp.hi != 0.0 {
                    self.column(v, |i, a| r[i] = r[i].sub(zp.mul_f(a)));
                }
            }
            let rf: Vec<f64> = r.iter().map(|d| d.f64()).collect();
            if rf.iter().all(|&v| v == 0.0) {
                break;
            }
            let d = self.ftran(&rf)?;
            if d.iter().any(|v| !v.is_finite()) {
                return None;
            }
            for (zi, di) in z.iter_mut().zip(&d) {
                *zi = zi.add(Dd::from(*di));
            }
            let zmax = z.iter().map(|v| v.hi.abs()).fold(0.0, f64::max);
            let dmax = d.iter().map(|v| v.abs()).fold(0.0, f64::max);
            if dmax <= 1e-30 * zmax.max(1e-300) {
                break;
            }
        }
        Some(z)
    }

    /// B^T y = g in double-double (g by position, y by row).
    fn solve_t(&self, g: &[Dd]) -> Option<Vec<Dd>> {
        let m = self.p.num_rows();
        let mut y = vec![Dd::default(); m];
        for _ in 0..8 {
            let mut r = g.to_vec();
            for (pos, &v) in self.at.iter().enumerate() {
                let mut acc = r[pos];
                self.column(v, |i, a| {
                    if y[i].hi != 0.0 {
                        acc = acc.sub(y[i].mul_f(a));
                    }
                });
                r[pos] = acc;
            }
            let rf: Vec<f64> = r.iter().map(|d| d.f64()).collect();
            if rf.iter().all(|&v| v == 0.0) {
                break;
            }
            let d = self.btran(&rf)?;
            if d.iter().any(|v| !v.is_finite()) {
                return None;
            }
            for (yi, di) in y.iter_mut().zip(&d) {
                *yi = yi.add(Dd::from(*di));
            }
            let ymax = y.iter().map(|v| v.hi.abs()).fold(0.0, f64::max);
            let dmax = d.iter().map(|v| v.abs()).fold(0.0, f64::max);
            if dmax <= 1e-30 * ymax.max(1e-300) {
                break;
            }
        }
        Some(y)
    }
}

/// Continue the primal simplex from the basis `cols` / `rows` (statuses
/// as the backend reports them) on `p` to an optimal vertex exact to
/// double-double precision, taking at most `max_pivots` pivots.
pub fn polish(
    p: &Problem,
    cols: &[BasisStatus],
    rows: &[BasisStatus],
    max_pivots: usize,
) -> Result<Polished, PolishError> {
    let (n, m) = (p.num_cols(), p.num_rows());
    if cols.len() != n || rows.len() != m {
        return Err(PolishError::NotABasis("sizes".into()));
    }
    // Variables 0..n the columns, n..n+m the row activities r = A x.
    let lo: Vec<f64> = p.col_lower.iter().chain(&p.row_lower).copied().collect();
    let up: Vec<f64> = p.col_upper.iter().chain(&p.row_upper).copied().collect();
    let sign = if p.sense == Sense::Maximise {
        -1.0
    } else {
        1.0
    };
    // Minimise sign * c.
    let cost = |v: usize| if v < n { sign * p.col_cost[v] } else { 0.0 };
    let mut status: Vec<BasisStatus> = cols.iter().chain(rows).copied().collect();
    for v in 0..n + m {
        status[v] = match status[v] {
            BasisStatus::Basic => BasisStatus::Basic,
            s => match (lo[v].is_finite(), up[v].is_finite(), s) {
                (true, true, BasisStatus::Upper) => BasisStatus::Upper,
                (true, _, _) => BasisStatus::Lower,
                (false, true, _) => BasisStatus::Upper,
                (false, false, _) => BasisStatus::Zero,
            },
        };
    }
    let value_nb = |s: BasisStatus, v: usize| match s {
        BasisStatus::Lower => lo[v],
        BasisStatus::Upper => up[v],
        _ => 0.0,
    };
    let at: Vec<usize> = (0..n + m)
        .filter(|&v| status[v] == BasisStatus::Basic)
        .collect();
    if at.len() != m {
        return Err(PolishError::NotABasis(format!("{} basic of {m}", at.len())));
    }
    let mut basis = Basis::new(p, at).ok_or_else(|| PolishError::NotABasis("singular".into()))?;
    let mut pivots = 0;
    let mut degenerate = 0usize;
    loop {
        if basis.etas.len() >= REFACTOR {
            basis = Basis::new(p, basis.at.clone())
                .ok_or_else(|| PolishError::NotABasis(format!("singular after {pivots} pivots")))?;
        }
        // Primal: nonbasic at their bounds; B x_B = -N x_N.
        let mut x = vec![Dd::default(); n + m];
        let mut w = vec![Dd::default(); m];
        for v in 0..n + m {
            if status[v] != BasisStatus::Basic {
                let val = value_nb(status[v], v);
                x[v] = Dd::from(val);
                if val != 0.0 {
                    basis.column(v, |i, a| w[i] = w[i].sub(Dd::from(val).mul_f(a)));
                }
            }
        }
        let xb = basis
            .solve(&w)
            .ok_or_else(|| PolishError::NotABasis(format!("primal solve after {pivots} pivots")))?;
        for (pos, &v) in basis.at.iter().enumerate() {
            x[v] = xb[pos];
        }
        // Infeasibility of the basic variables.
        let tol = |b: f64| 1e-24 * b.abs().max(1.0);
        let below = |v: usize| lo[v].is_finite() && x[v].lt(Dd::from(lo[v] - tol(lo[v])));
        let above = |v: usize| up[v].is_finite() && Dd::from(up[v] + tol(up[v])).lt(x[v]);
        let basic = basis.at.clone();
        let phase1 = basic.iter().any(|&v| below(v) || above(v));
        let phase_cost = |v: usize| {
            if phase1 {
                if status[v] != BasisStatus::Basic {
                    0.0
                } else if below(v) {
                    -1.0
                } else if above(v) {
                    1.0
                } else {
                    0.0
                }
            } else {
                cost(v)
            }
        };
        // Duals: B^T y = c_B.
        let g: Vec<Dd> = basic.iter().map(|&v| Dd::from(phase_cost(v))).collect();
        let y = basis
            .solve_t(&g)
            .ok_or_else(|| PolishError::NotABasis(format!("dual solve after {pivots} pivots")))?;
        // Each reduced cost with the size of the terms it sums: it counts
        // only when it stands out of their rounding by far.
        let dj = |v: usize| -> (Dd, f64) {
            let c = phase_cost(v);
            let mut d = Dd::from(c);
            let mut size = c.abs();
            basis.column(v, |i, a| {
                let t = y[i].mul_f(a);
                size += t.hi.abs();
                d = d.sub(t);
            });
            (d, size)
        };
        let bland = degenerate > 50;
        let cscale = (0..n + m)
            .map(|v| phase_cost(v).abs())
            .fold(1e-300, f64::max);
        let mut enter: Option<(usize, f64, f64)> = None; // (var, direction, |d|)
        for v in 0..n + m {
            if status[v] == BasisStatus::Basic || lo[v] == up[v] {
                continue;
            }
            let (d, size) = dj(v);
            let d = d.f64();
            let dtol = 1e-20 * size + 1e-26 * cscale;
            let dir = match status[v] {
                BasisStatus::Lower if d < -dtol => 1.0,
                BasisStatus::Upper if d > dtol => -1.0,
                BasisStatus::Zero if d.abs() > dtol => -d.signum(),
                _ => continue,
            };
            let better = match enter {
                None => true,
                Some((_, _, best)) => !bland && d.abs() > best,
            };
            if better {
                enter = Some((v, dir, d.abs()));
            }
            if bland && enter.is_some() {
                break;
            }
        }
        let Some((q, dir, _)) = enter else {
            if phase1 {
                let worst = basic
                    .iter()
                    .map(|&v| {
                        let below_by = if lo[v].is_finite() {
                            lo[v] - x[v].f64()
                        } else {
                            0.0
                        };
                        let above_by = if up[v].is_finite() {
                            x[v].f64() - up[v]
                        } else {
                            0.0
                        };
                        below_by.max(above_by)
                    })
                    .fold(0.0, f64::max);
                return Err(PolishError::Infeasible(worst));
            }
            let objective: Dd = (0..n).fold(Dd::default(), |s, j| s.add(x[j].mul_f(p.col_cost[j])));
            return Ok(Polished {
                x: (0..n).map(|j| x[j].f64()).collect(),
                // For a maximisation the backend's duals are those of the
                // maximisation: minus ours.
                row_dual: y.iter().map(|v| sign * v.f64()).collect(),
                objective: objective.f64() + p.offset,
                pivots,
            });
        };
        if pivots == max_pivots {
            return Err(PolishError::PivotLimit);
        }
        // alpha = B^{-1} a_q (by position).
        let mut aq = vec![Dd::default(); m];
        basis.column(q, |i, a| aq[i] = Dd::from(a));
        let alpha = basis
            .solve(&aq)
            .ok_or_else(|| PolishError::NotABasis(format!("column solve after {pivots} pivots")))?;
        // Ratio test: basic v moves at rate -dir alpha_v per unit step.
        // Pivots below 1e-11 of the column's largest entry are skipped (a
        // basis through one would be singular to working precision).
        let amax = alpha.iter().map(|a| a.hi.abs()).fold(1e-300, f64::max);
        let mut best: Option<(Dd, usize, BasisStatus, f64)> = None; // (step, position, bound hit, |rate|)
        for (pos, &v) in basic.iter().enumerate() {
            let rate = alpha[pos].mul_f(-dir);
            let r = rate.f64();
            if r.abs() <= 1e-11 * amax {
                continue;
            }
            let (limit, hit) = if r < 0.0 {
                // Decreasing: to lo (or, above up in phase 1, to up).
                if phase1 && above(v) {
                    (up[v], BasisStatus::Upper)
                } else if lo[v].is_finite() && !(phase1 && below(v)) {
                    (lo[v], BasisStatus::Lower)
                } else {
                    continue;
                }
            } else if phase1 && below(v) {
                (lo[v], BasisStatus::Lower)
            } else if up[v].is_finite() && !(phase1 && above(v)) {
                (up[v], BasisStatus::Upper)
            } else {
                continue;
            };
            let mut step = Dd::from(limit).sub(x[v]).div(rate);
            if step.hi < 0.0 {
                step = Dd::default();
            }
            let replace = match &best {
                None => true,
                Some((s, _, _, ar)) => step.lt(*s) || (step == *s && r.abs() > *ar),
            };
            if replace {
                best = Some((step, pos, hit, r.abs()));
            }
        }
        let flip = if lo[q].is_finite() && up[q].is_finite() {
            Some(Dd::from(up[q]).sub(Dd::from(lo[q])))
        } else {
            None
        };
        pivots += 1;
        let flip_q = |status: &mut Vec<BasisStatus>| {
            status[q] = if status[q] == BasisStatus::Lower {
                BasisStatus::Upper
            } else {
                BasisStatus::Lower
            };
        };
        match (best, flip) {
            (Some((s, _, _, _)), Some(f)) if f.lt(s) => flip_q(&mut status),
            (None, Some(_)) => flip_q(&mut status),
            (Some((s, pos, hit, _)), _) => {
                if s.abs().hi == 0.0 {
                    degenerate += 1;
                } else {
                    degenerate = 0;
                }
                let v = basic[pos];
                status[q] = BasisStatus::Basic;
                status[v] = hit;
                let af: Vec<f64> = alpha.iter().map(|a| a.f64()).collect();
                basis.etas.push((pos, af));
                basis.at[pos] = q;
            }
            (None, None) => {
                return Err(if phase1 {
                    PolishError::Infeasible(f64::NAN)
                } else {
                    PolishError::Unbounded
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ProblemBuilder;

    #[test]
    fn double_double_keeps_the_digits_f64_drops() {
        let third = Dd::from(1.0).div(Dd::from(3.0));
        let back = third.mul_f(3.0).sub(Dd::from(1.0));
        assert!(back.f64().abs() < 1e-31, "{back:?}");
        let tiny = Dd::from(1.0).add(Dd::from(1e-20)).sub(Dd::from(1.0));
        assert_eq!(tiny.f64(), 1e-20);
    }

    /// max x + y, x + 2y <= 4, 3x + y <= 6 (x = 8/5, y = 6/5), from the
    /// all-slack basis: the pivots reach the vertex and its duals (1/5, 2/5).
    #[test]
    fn pivots_from_the_slack_basis_to_the_optimum() {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r1 = b.add_row(f64::NEG_INFINITY, 4.0);
        let r2 = b.add_row(f64::NEG_INFINITY, 6.0);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 1.0), (r2, 3.0)]);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 2.0), (r2, 1.0)]);
        let p = b.build();
        let cols = [BasisStatus::Lower; 2];
        let rows = [BasisStatus::Basic; 2];
        let s = polish(&p, &cols, &rows, 10).unwrap();
        assert!(
            (s.x[0] - 1.6).abs() < 1e-15 && (s.x[1] - 1.2).abs() < 1e-15,
            "{s:?}"
        );
        assert!((s.objective - 2.8).abs() < 1e-15, "{s:?}");
        assert!(
            (s.row_dual[0] - 0.4).abs() < 1e-15 && (s.row_dual[1] - 0.2).abs() < 1e-15,
            "{s:?}"
        );
    }

    /// An infeasible start (both columns basic at a point off its bounds)
    /// goes through phase 1.
    #[test]
    fn phase_one_from_an_infeasible_basis() {
        // min x + y, x + y >= 2, x - y = 0, 0 <= x, y <= 5.
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r1 = b.add_row(2.0, f64::INFINITY);
        let r2 = b.add_row(0.0, 0.0);
        b.add_col(1.0, 0.0, 5.0, [(r1, 1.0), (r2, 1.0)]);
        b.add_col(1.0, 0.0, 5.0, [(r1, 1.0), (r2, -1.0)]);
        let p = b.build();
        // x at its upper bound, r1 at 2: y = -3 and r2 = 8, both off.
        let cols = [BasisStatus::Upper, BasisStatus::Basic];
        let rows = [BasisStatus::Lower, BasisStatus::Basic];
        let s = polish(&p, &cols, &rows, 20).unwrap();
        assert!(
            (s.x[0] - 1.0).abs() < 1e-15 && (s.x[1] - 1.0).abs() < 1e-15,
            "{s:?}"
        );
    }
}
