//! Pareto optimality: no allocation is as good for all and better for one.

use crate::polytope::{mu, polytope, protect, resolution_at, solve_within};
use crate::witness::{changes, placed};
use crate::AuditTolerance;
pub use leontief_core::checks::{Improvement, ParetoCheck};
use leontief_core::Instance;
use leontief_model::{BackendError, LoadedLp, LpBackend};

/// Pareto optimality: maximise the total keeping every user at its tasks.
pub fn pareto<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    x: &[f64],
    placement: bool,
    tol: &AuditTolerance,
) -> Result<ParetoCheck, BackendError> {
    let mut p = polytope(backend, instance, placement)?;
    for n in 0..x.len() {
        protect(&mut p, instance, x, n, true)?;
        p.lp.set_cost(p.y[n], mu(instance, n))?;
    }
    let s = solve_within(&mut p, tol.feasibility)?;
    if !s.status.has_solution() {
        return Ok(ParetoCheck {
            ok: false,
            total_gain: f64::NAN,
            failed_status: Some(format!("{} ({})", s.status, s.raw_status)),
            resolved: false,
            improvement: None,
        });
    }
    // Gains in dominant-share units (any positive weights detect a Pareto
    // improvement; shares make users of every size count alike).
    let total: f64 = (0..x.len()).map(|n| x[n] * mu(instance, n)).sum();
    let gain = s.objective - total;
    let ok = gain <= tol.rise;
    // A gain the LP's tolerances may have bought is not resolved; nor is
    // any where the exact LP fell back to floating point.
    let resolved = !ok
        && !p.inexact
        && (0..x.len()).any(|n| {
            (s.x[p.y[n].0] - x[n]) * mu(instance, n) > resolution_at(instance, n, p.slack)
        });
    let improvement = (!ok).then(|| Improvement {
        gainers: changes(instance, &p, x, &s.x, tol.rise / x.len().max(1) as f64),
        allocation: placed(instance, &p, &s.x),
    });
    Ok(ParetoCheck {
        ok,
        total_gain: gain.max(0.0),
        failed_status: None,
        resolved,
        improvement,
    })
}
