//! Newton polish of an interior-point answer on the KKT system of its
//! active set.

use crate::*;
use leontief_core::{Instance, ResourceId};

const INF: f64 = f64::INFINITY;

/// The objective whose stationarity the polish solves.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Objective {
    /// The merit M at (beta, lambda).
    Merit(f64, f64),
    /// sum_n w_n log s_n (alpha = 1).
    Log,
    /// S (beta = 1, trivial): linear, nothing to polish.
    Linear,
}

pub(crate) fn objective_gradient(obj: Objective, om: &[f64], w: &[f64], x: &[f64]) -> Vec<f64> {
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
pub(crate) fn polish(
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

pub(crate) fn polish_at(
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
