//! A simplex basis in product form: its kernel factorised when last
//! rebuilt, the pivots since as eta columns, every solve refined in
//! double-double.

use super::dd::Dd;
use super::lu::SparseLu;
use crate::problem::Problem;

/// The basis: the matrix restricted to the rows whose activity is
/// nonbasic and the basic columns (the kernel) factorised in f64
/// ([`SparseLu`]) when it was last rebuilt, the pivots since kept as eta columns
/// (product form), every solve refined in double-double against the
/// current basis's own columns.
pub(crate) struct Basis<'a> {
    p: &'a Problem,
    /// The basic variable at each position (0..n columns, n.. rows).
    pub(crate) at: Vec<usize>,
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
    /// Pivots since: B^{-1} a_q in f64 ([`Eta`]).
    pub(crate) etas: Vec<Eta>,
}

/// A pivot's column B^{-1} a_q: its entry at the pivot's position
/// apart, the others sparse (a few hundred of 14,661 at 1,000 x 10,000
/// with placement lists, which a dense eta swept whole in every solve).
pub(crate) struct Eta {
    pos: usize,
    pivot: f64,
    rest: Vec<(usize, f64)>,
}

const NONE: usize = usize::MAX;

/// Refinements of a solve at most.
const REFINEMENTS: usize = 8;

/// A refinement is done when its correction `dmax` is below 1e-30 of the
/// answer's largest entry `xmax`, or below 1e-18 of it and no smaller
/// than the one before (`last`): there it is the rounding of the
/// double-double residual amplified by the basis's condition (measured
/// at 1,000 x 10,000 with placement lists: corrections stalling at
/// 1e-21-1e-25 of the answer, which ran all eight refinements, half of
/// them for nothing). Larger corrections can grow for a step and then
/// converge (after a fresh factorisation at 300 x 3,000): stopped at
/// the first that did not shrink, values resolved only to 1e-9.
fn converged(dmax: f64, xmax: f64, last: &mut f64) -> bool {
    let xmax = xmax.max(1e-300);
    let done = dmax <= 1e-30 * xmax || (dmax <= 1e-18 * xmax && dmax >= *last);
    *last = dmax;
    done
}

/// Pivots kept as etas before the kernel is factorised again.
pub(crate) const REFACTOR: usize = 40;

impl<'a> Basis<'a> {
    pub(crate) fn new(p: &'a Problem, at: Vec<usize>) -> Option<Basis<'a>> {
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
        let mut row_pos = vec![NONE; m];
        for (a, &i) in k_rows.iter().enumerate() {
            row_pos[i] = a;
        }
        let mat: Vec<Vec<(usize, f64)>> = k_cols
            .iter()
            .map(|&j| {
                (p.a_start[j]..p.a_start[j + 1])
                    .filter(|&e| row_pos[p.a_index[e]] != NONE)
                    .map(|e| (row_pos[p.a_index[e]], p.a_value[e]))
                    .collect()
            })
            .collect();
        let lu = SparseLu::new(mat)?;
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

    /// Keep a pivot at position `pos` with column `alpha` = B^{-1} a_q.
    pub(crate) fn push_eta(&mut self, pos: usize, alpha: impl Iterator<Item = f64>) {
        let mut eta = Eta {
            pos,
            pivot: 0.0,
            rest: Vec::new(),
        };
        for (i, a) in alpha.enumerate() {
            if i == pos {
                eta.pivot = a;
            } else if a != 0.0 {
                eta.rest.push((i, a));
            }
        }
        self.etas.push(eta);
    }

    /// B^{-1} w in f64 (product form).
    fn ftran(&self, w: &[f64]) -> Option<Vec<f64>> {
        let mut z = self.solve0(w)?;
        for e in &self.etas {
            let zp = z[e.pos] / e.pivot;
            if zp != 0.0 {
                for &(i, a) in &e.rest {
                    z[i] -= a * zp;
                }
            }
            z[e.pos] = zp;
        }
        Some(z)
    }

    /// B^{-T} g in f64 (product form).
    fn btran(&self, g: &[f64]) -> Option<Vec<f64>> {
        let mut g = g.to_vec();
        for e in self.etas.iter().rev() {
            // (E^T g)_p = (g_p - sum_{i != p} alpha_i g_i) / alpha_p
            let dot: f64 = e.rest.iter().map(|&(i, a)| a * g[i]).sum();
            g[e.pos] = (g[e.pos] - dot) / e.pivot;
        }
        self.solve0_t(&g)
    }

    /// The column of variable v, as (row, value) pairs.
    pub(crate) fn column(&self, v: usize, mut f: impl FnMut(usize, f64)) {
        let (p, n) = (self.p, self.p.num_cols());
        if v < n {
            for e in p.a_start[v]..p.a_start[v + 1] {
                f(p.a_index[e], p.a_value[e]);
            }
        } else {
            f(v - n, -1.0);
        }
    }

    /// B z = w in double-double (w by row, z by position), refined from
    /// `z` (a previous basis's answer: one f64 solve of the residual
    /// where that basis differs by a degenerate pivot, against three from
    /// zero); with the size of the last correction, the answer's
    /// accuracy (an absolute bound on its entries' error, up to a small
    /// factor).
    pub(crate) fn solve(&self, w: &[Dd], mut z: Vec<Dd>) -> Option<(Vec<Dd>, f64)> {
        debug_assert_eq!(z.len(), self.at.len());
        let mut last = f64::INFINITY;
        let mut noise = 0.0;
        for _ in 0..REFINEMENTS {
            let mut r = w.to_vec();
            for (pos, &v) in self.at.iter().enumerate() {
                let zp = z[pos];
                if zp.hi != 0.0 {
                    self.column(v, |i, a| r[i] = r[i].sub(zp.mul_f(a)));
                }
            }
            let rf: Vec<f64> = r.iter().map(|d| d.f64()).collect();
            if rf.iter().all(|&v| v == 0.0) {
                noise = 0.0;
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
            noise = dmax;
            if converged(dmax, zmax, &mut last) {
                break;
            }
        }
        Some((z, noise))
    }

    /// B^T y = g in double-double (g by position, y by row), refined
    /// from `y` (as in [`Basis::solve`]).
    pub(crate) fn solve_t(&self, g: &[Dd], mut y: Vec<Dd>) -> Option<(Vec<Dd>, f64)> {
        debug_assert_eq!(y.len(), self.p.num_rows());
        let mut last = f64::INFINITY;
        let mut noise = 0.0;
        for _ in 0..REFINEMENTS {
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
                noise = 0.0;
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
            noise = dmax;
            if converged(dmax, ymax, &mut last) {
                break;
            }
        }
        Some((y, noise))
    }
}
