//! The sparse LU of a basis's kernel.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A pivot is chosen among the entries of its column at least this
/// fraction of the column's largest (threshold partial pivoting).
const THRESHOLD: f64 = 0.1;

/// LU of a sparse square matrix K by right-looking elimination held
/// sparse throughout: at each step the active column with the fewest
/// entries, in it the row with the fewest among the entries within
/// [`THRESHOLD`] of the column's largest (Markowitz with threshold
/// pivoting). The kernels of these bases have a few entries per column
/// and fill in little; nothing k x k is ever held (at 1,000 users x
/// 10,000 servers with placement lists a kernel has thousands of rows).
pub(crate) struct SparseLu {
    /// Step s eliminated column `piv_col[s]` by row `piv_row[s]`.
    piv_row: Vec<usize>,
    piv_col: Vec<usize>,
    /// Multipliers of step s: (row, l) for each row it eliminated from.
    l: Vec<Vec<(usize, f64)>>,
    /// Pivot row of step s: its diagonal, then (column, value) for the
    /// columns eliminated after s.
    u_diag: Vec<f64>,
    u: Vec<Vec<(usize, f64)>>,
}

impl SparseLu {
    /// `cols[j]`: the entries (row, value) of column j of the k x k
    /// matrix, rows distinct; `None` when it is singular.
    pub(crate) fn new(mut cols: Vec<Vec<(usize, f64)>>) -> Option<SparseLu> {
        let k = cols.len();
        cols.iter_mut().for_each(|c| c.retain(|&(_, v)| v != 0.0));
        // Row r's columns (may name columns since eliminated, or whose
        // entry cancelled: checked when read).
        let mut row_cols: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (j, c) in cols.iter().enumerate() {
            for &(r, _) in c {
                row_cols[r].push(j);
            }
        }
        let mut col_done = vec![false; k];
        let mut row_done = vec![false; k];
        let mut heap: BinaryHeap<Reverse<(usize, usize)>> = cols
            .iter()
            .enumerate()
            .map(|(j, c)| Reverse((c.len(), j)))
            .collect();
        let mut lu = SparseLu {
            piv_row: Vec::with_capacity(k),
            piv_col: Vec::with_capacity(k),
            l: Vec::with_capacity(k),
            u_diag: Vec::with_capacity(k),
            u: Vec::with_capacity(k),
        };
        let mut pivot_row: Vec<(usize, f64)> = Vec::new();
        while lu.piv_col.len() < k {
            let Reverse((count, j)) = heap.pop()?;
            if col_done[j] || count != cols[j].len() {
                continue;
            }
            let big = cols[j].iter().map(|&(_, v)| v.abs()).fold(0.0, f64::max);
            if big == 0.0 || !big.is_finite() {
                return None;
            }
            let (pi, &(i, piv)) = cols[j]
                .iter()
                .enumerate()
                .filter(|(_, &(_, v))| v.abs() >= THRESHOLD * big)
                .min_by_key(|(_, &(r, _))| row_cols[r].len())?;
            col_done[j] = true;
            row_done[i] = true;
            // The pivot row's other active entries, taken out of their
            // columns.
            pivot_row.clear();
            for &c in &row_cols[i] {
                if col_done[c] {
                    continue;
                }
                if let Some(e) = cols[c].iter().position(|&(r, _)| r == i) {
                    pivot_row.push((c, cols[c][e].1));
                    cols[c].swap_remove(e);
                    heap.push(Reverse((cols[c].len(), c)));
                }
            }
            let mut col_j = std::mem::take(&mut cols[j]);
            col_j.swap_remove(pi);
            let mut mult = Vec::with_capacity(col_j.len());
            for &(r, v) in &col_j {
                let l = v / piv;
                mult.push((r, l));
                for &(c, u) in &pivot_row {
                    let d = l * u;
                    match cols[c].iter_mut().find(|(rr, _)| *rr == r) {
                        Some(e) => e.1 -= d,
                        None => {
                            cols[c].push((r, -d));
                            row_cols[r].push(c);
                            heap.push(Reverse((cols[c].len(), c)));
                        }
                    }
                }
            }
            lu.piv_row.push(i);
            lu.piv_col.push(j);
            lu.l.push(mult);
            lu.u_diag.push(piv);
            lu.u.push(pivot_row.clone());
        }
        debug_assert!(row_done.iter().all(|&d| d));
        Some(lu)
    }

    /// K z = w, in place (w by row, z by column).
    pub(crate) fn solve(&self, w: &mut [f64]) {
        for (s, mult) in self.l.iter().enumerate() {
            let ys = w[self.piv_row[s]];
            if ys != 0.0 {
                for &(r, l) in mult {
                    w[r] -= l * ys;
                }
            }
        }
        // y_s sits at w[piv_row[s]]; z is written by column.
        let mut z = vec![0.0; w.len()];
        for s in (0..self.l.len()).rev() {
            let mut v = w[self.piv_row[s]];
            for &(c, u) in &self.u[s] {
                v -= u * z[c];
            }
            z[self.piv_col[s]] = v / self.u_diag[s];
        }
        w.copy_from_slice(&z);
    }

    /// K^T y = g (g by column, y by row).
    pub(crate) fn solve_t(&self, g: &[f64]) -> Vec<f64> {
        let k = g.len();
        let mut acc = g.to_vec();
        let mut t = vec![0.0; k];
        for s in 0..k {
            let ts = acc[self.piv_col[s]] / self.u_diag[s];
            t[s] = ts;
            if ts != 0.0 {
                for &(c, u) in &self.u[s] {
                    acc[c] -= u * ts;
                }
            }
        }
        let mut y = vec![0.0; k];
        for s in (0..k).rev() {
            let mut v = t[s];
            for &(r, l) in &self.l[s] {
                v -= l * y[r];
            }
            y[self.piv_row[s]] = v;
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::SparseLu;

    fn random_sparse(k: usize, seed: u64) -> Vec<Vec<(usize, f64)>> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as f64 / (1u64 << 31) as f64
        };
        // A permuted diagonal plus a few off-diagonal entries per column.
        (0..k)
            .map(|j| {
                let mut c = vec![((j * 7 + 3) % k, 1.0 + next())];
                for _ in 0..2 {
                    let r = (next() * k as f64) as usize % k;
                    if c.iter().all(|&(rr, _)| rr != r) {
                        c.push((r, next() - 0.5));
                    }
                }
                c
            })
            .collect()
    }

    fn mul(cols: &[Vec<(usize, f64)>], z: &[f64]) -> Vec<f64> {
        let mut w = vec![0.0; cols.len()];
        for (j, c) in cols.iter().enumerate() {
            for &(r, v) in c {
                w[r] += v * z[j];
            }
        }
        w
    }

    #[test]
    fn solves_and_transposed_solves_recover_the_vector() {
        for seed in 1..20 {
            let k = 50 + seed as usize * 7;
            let cols = random_sparse(k, seed);
            let lu = SparseLu::new(cols.clone()).expect("nonsingular");
            let z: Vec<f64> = (0..k).map(|i| (i as f64 * 0.37).sin()).collect();
            let mut w = mul(&cols, &z);
            lu.solve(&mut w);
            let err = w
                .iter()
                .zip(&z)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-8, "seed {seed}: {err}");
            // K^T y = g: g_j = column j . y.
            let y: Vec<f64> = (0..k).map(|i| (i as f64 * 0.11).cos()).collect();
            let g: Vec<f64> = cols
                .iter()
                .map(|c| c.iter().map(|&(r, v)| v * y[r]).sum())
                .collect();
            let got = lu.solve_t(&g);
            let err = got
                .iter()
                .zip(&y)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-8, "seed {seed}: {err}");
        }
    }

    #[test]
    fn a_singular_matrix_is_refused() {
        let cols = vec![vec![(0, 1.0), (1, 2.0)], vec![(0, 2.0), (1, 4.0)]];
        assert!(SparseLu::new(cols).is_none());
        assert!(SparseLu::new(vec![vec![(0, 1.0)], vec![]]).is_none());
    }
}
