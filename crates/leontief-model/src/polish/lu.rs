//! The sparse-aware LU of a basis's kernel.

/// LU with partial pivoting (P K = L U) of a sparse square matrix held
/// dense, eliminating only where the pivot's row and column have
/// entries, its factors kept sparse: the kernels of these bases have a
/// few entries per column and fill in little.
pub(crate) struct SparseLu {
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
    pub(crate) fn new(mut a: Vec<f64>, k: usize) -> Option<SparseLu> {
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
    pub(crate) fn solve(&self, w: &mut [f64]) {
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
    pub(crate) fn solve_t(&self, g: &[f64]) -> Vec<f64> {
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
