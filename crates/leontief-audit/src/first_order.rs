//! First-order optimality of an allocation for a concave merit over the
//! allocation polytope (FDS, GFJ, p-norm, alpha-fair; the BBF
//! Eisenberg-Gale objective): the Frank-Wolfe gap by one LP.

use leontief_core::fairness::{gradient, merit, omega, Family};
use leontief_core::{Instance, ResourceId, ServerId};
use leontief_model::{BackendError, LpBackend, Problem, ProblemBuilder, Sense};

const INF: f64 = f64::INFINITY;

/// Why the gap could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum FirstOrderError {
    /// The LP did not end optimal.
    #[error("the Frank-Wolfe LP ended {0}")]
    Ended(String),
    /// The backend could not run.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// max sum_n cost(n) x_n over the allocation polytope: x_{n,i} columns
/// where user n can run, capacity rows per server and resource, caps.
fn polytope(instance: &Instance, cost: impl Fn(usize) -> f64) -> Problem {
    let (m, k) = (instance.num_resources(), instance.num_entries());
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let cap: Vec<_> = (0..k * m)
        .map(|j| {
            b.add_row(
                -INF,
                instance.class_capacity(ServerId(j / m), ResourceId(j % m)),
            )
        })
        .collect();
    let caps: Vec<_> = instance
        .users()
        .iter()
        .map(|u| u.tasks.map(|t| b.add_row(-INF, t)))
        .collect();
    for n in instance.user_ids() {
        let d = &instance.user(n).demand;
        let cap_row = caps[n.0];
        for i in instance.server_ids().filter(|&i| instance.can_run_on(n, i)) {
            let e = (0..m)
                .filter(|&r| d[r] > 0.0)
                .map(|r| (cap[i.0 * m + r], d[r]))
                .chain(cap_row.map(|row| (row, 1.0)));
            b.add_col(cost(n.0), 0.0, INF, e);
        }
    }
    b.build()
}

/// The Frank-Wolfe gap max_{x' feasible} grad M(x) . (x' - x), relative to
/// max(1, |M(x)|) (see the crate docs), by one LP on `backend`.
pub fn frank_wolfe_gap<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    x: &[f64],
    beta: f64,
    lambda: f64,
) -> Result<f64, FirstOrderError> {
    let trivial = beta == 1.0;
    // A user that can run nowhere (it demands a resource no server it may
    // use has) holds 0 whatever the allocation: it is left out of the
    // merit and the gradient (its omega may be infinite, its share 0 x inf).
    let runs: Vec<bool> = instance
        .user_ids()
        .map(|n| instance.server_ids().any(|i| instance.can_run_on(n, i)))
        .collect();
    let keep = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .zip(&runs)
            .filter(|(_, &r)| r)
            .map(|(v, _)| v)
            .collect()
    };
    let om_all = omega(instance, family);
    let w_all: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let (om, w, xr) = (keep(om_all), keep(w_all), keep(x.to_vec()));
    let g_runs = gradient(&om, &w, &xr, beta, lambda, trivial);
    let mut it = g_runs.into_iter();
    let g: Vec<f64> = runs
        .iter()
        .map(|&r| if r { it.next().unwrap_or(0.0) } else { 0.0 })
        .collect();
    if g.iter().any(|v| !v.is_finite()) {
        // A user at zero with an infinite marginal: not stationary unless
        // it cannot run at all.
        let stuck = instance.user_ids().any(|n| {
            !g[n.0].is_finite() && instance.server_ids().any(|i| instance.can_run_on(n, i))
        });
        return Ok(if stuck { INF } else { 0.0 });
    }
    let m = merit(&om, &w, &xr, beta, lambda, trivial);
    linear_gap(backend, instance, &g, x, m)
}

/// max_{x' feasible} g . (x' - x), one LP, relative to max(|m|, g . x)
/// (the merit, or the first-order value of the allocation when that is
/// larger): a ratio of two quantities in the same units, so the verdict
/// is the same for any scale of the weights or the tasks. The LP's costs
/// are g divided by its largest entry (HiGHS ended `unknown` on costs
/// 1e9 apart in size).
fn linear_gap<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    g: &[f64],
    x: &[f64],
    m: f64,
) -> Result<f64, FirstOrderError> {
    let top = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    if top == 0.0 {
        return Ok(0.0);
    }
    let p = polytope(instance, |n| g[n] / top);
    let s = backend.solve(p)?;
    if !s.status.has_solution() {
        return Err(FirstOrderError::Ended(s.status.to_string()));
    }
    let at_x: f64 = g.iter().zip(x).map(|(g, x)| g / top * x).sum();
    let scale = (m.abs() / top).max(at_x.abs()).max(f64::MIN_POSITIVE);
    Ok((s.objective - at_x).max(0.0) / scale)
}

/// The Frank-Wolfe gap for alpha = 1 (M = sum_n w_n log x_n up to a
/// constant), relative as in [`frank_wolfe_gap`].
pub fn frank_wolfe_gap_log<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    x: &[f64],
) -> Result<f64, FirstOrderError> {
    let w: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let runnable: Vec<bool> = instance
        .user_ids()
        .map(|n| instance.server_ids().any(|i| instance.can_run_on(n, i)))
        .collect();
    if instance.user_ids().any(|n| runnable[n.0] && x[n.0] <= 0.0) {
        return Ok(INF);
    }
    let g: Vec<f64> = (0..x.len())
        .map(|n| if runnable[n] { w[n] / x[n] } else { 0.0 })
        .collect();
    let m: f64 = (0..x.len())
        .filter(|&n| runnable[n])
        .map(|n| w[n] * x[n].ln())
        .sum();
    linear_gap(backend, instance, &g, x, m)
}
