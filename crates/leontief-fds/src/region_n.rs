//! Region N: the global one-dimensional search over S.
//!
//! In region N the merit M = c1 log U + c2 log S (c1 = sgn(1-beta)/beta,
//! c2 = sgn(1-beta) kappa) is neither concave nor quasi-concave and can have
//! two local maxima (mechanisms.md). For a fixed total share S = sigma the
//! best allocation maximises U when c1 > 0 and minimises it when c1 < 0;
//! in both cases that inner problem is convex (U is concave for
//! 0 < beta < 1 and convex for beta > 1 or beta < 0), it is the alpha-fair
//! line's cone program at alpha = beta with one more row, and its value
//! phi(sigma) is concave in sigma (c1 > 0) or convex (c1 < 0): the value
//! function of a convex program whose right-hand side moves linearly.
//!
//! So M*(sigma) = c1 log phi(sigma) + c2 log sigma, and the search
//! maximises it over (0, S_max] by branch and bound on intervals with
//! **certified envelopes**, from evaluated points alone:
//!
//! * a chord of a concave phi, extended beyond its end points, lies above
//!   phi; of a convex phi, below it. On [sigma_i, sigma_{i+1}] the chords of
//!   the neighbouring pairs bound phi from the right side (above for
//!   c1 > 0, below for c1 < 0), so c1 log phi is bounded above; and
//!   c2 log sigma <= max(c2 log sigma_i, c2 log sigma_{i+1});
//! * without the capacity rows, extremising U on {sum s = sigma, s >= 0}
//!   gives H sigma^(1-beta) with H = (sum_n w_n^(1/beta))^beta (Hoelder),
//!   an upper bound of phi for 0 < beta < 1 and a lower bound otherwise,
//!   hence M*(sigma) <= c1 log H + sgn(1-beta) lambda log sigma, which is
//!   increasing in sigma in region N: it disposes of the neighbourhood of
//!   0, where M* tends to -infinity.
//!
//! An interval whose bound is within the tolerance of the best value found
//! is closed; the others are bisected. The answer is the best evaluated
//! point, then Newton-polished on the KKT system of the active set (a local
//! step inside the global optimum's basin), kept only if its merit is no
//! lower. The certified gap (largest open bound minus the best value) is in
//! the output: within the inner solver's accuracy (Clarabel, about 1e-8),
//! no allocation has a larger merit.

use crate::{merit, omega, solve_program, solve_program_slope, Family, FdsError, Region};
use leontief_core::{Allocation, Instance, Status};
use leontief_model::LpBackend;

/// A point of the search.
#[derive(Debug, Clone)]
struct Point {
    sigma: f64,
    phi: f64,
    /// d phi / d sigma from the dual of the row fixing S (None if absent).
    slope: Option<f64>,
    merit: f64,
    tasks: Option<Vec<Vec<f64>>>,
}

/// What the search did, for the output.
pub use leontief_core::details::RegionNSearch as SearchReport;

/// Tolerance on the merit (relative to max(1, |M|)).
const TOL: f64 = 1e-9;
/// A certified gap up to this (relative) is `optimal`: the inner cone
/// programs are accurate to about 1e-8.
const ACCEPT: f64 = 1e-7;
/// Most inner solves.
const MAX_EVALUATIONS: usize = 400;

/// Solve region N globally.
pub fn solve<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
) -> Result<Allocation, FdsError> {
    let om = omega(instance, family);
    let w: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let sgn = if beta < 1.0 { 1.0 } else { -1.0 };
    let kappa = lambda - (1.0 - beta) / beta;
    let (c1, c2) = (sgn / beta, sgn * kappa);
    // The largest S: the trivial program (maximise S).
    let top = solve_program(backend, instance, family, 1.0, 0.0, None, None)?;
    if !top.status.has_solution() {
        return Ok(top);
    }
    let sigma_max: f64 = top.user_tasks.iter().zip(&om).map(|(x, o)| x * o).sum();
    let runnable: Vec<usize> = (0..om.len())
        .filter(|&n| {
            instance
                .server_ids()
                .any(|i| instance.can_run_on(leontief_core::UserId(n), i))
        })
        .collect();
    if sigma_max <= 0.0 || runnable.is_empty() {
        return Err(FdsError::Refused(
            "no user can run anywhere: every allocation is zero".into(),
        ));
    }
    let h = runnable
        .iter()
        .map(|&n| w[n].powf(1.0 / beta))
        .sum::<f64>()
        .powf(beta);
    let holder = |b: f64| c1 * h.ln() + sgn * lambda * b.ln();
    let worst_status = std::cell::Cell::new(Status::Optimal);
    let evaluations = std::cell::Cell::new(0usize);
    let eval = |sigma: f64| -> Result<Point, FdsError> {
        evaluations.set(evaluations.get() + 1);
        let (a, slope) = solve_program_slope(
            backend,
            instance,
            family,
            om.clone(),
            beta,
            (1.0 - beta) / beta,
            Some(Region::AlphaFair),
            Some(sigma),
        )?;
        worst_status.set(worst_status.get().worst(a.status));
        // Only answers to full accuracy bound anything (an "almost solved"
        // slice, as at S = S_max where it is a face, can be far off).
        if a.status != Status::Optimal {
            return Ok(Point {
                sigma,
                phi: f64::NAN,
                slope: None,
                merit: f64::NEG_INFINITY,
                tasks: None,
            });
        }
        let phi: f64 = runnable
            .iter()
            .map(|&n| w[n] * (om[n] * a.user_tasks[n]).powf(1.0 - beta))
            .sum();
        Ok(Point {
            sigma,
            phi,
            slope,
            merit: c1 * phi.ln() + c2 * sigma.ln(),
            tasks: Some(a.tasks.to_dense()),
        })
    };
    // The concave case knows phi(0) = 0 (U = 0 at s = 0 when 1 - beta > 0).
    let mut pts: Vec<Point> = Vec::new();
    if c1 > 0.0 {
        pts.push(Point {
            sigma: 0.0,
            phi: 0.0,
            slope: None,
            merit: f64::NEG_INFINITY,
            tasks: None,
        });
    }
    const GRID: usize = 16;
    for k in 1..=GRID {
        let sigma = sigma_max * k as f64 / GRID as f64;
        pts.push(eval(sigma)?);
    }
    // (upper bound, interval) for every interval; usize::MAX is the
    // stretch (0, first point) of the convex case, bounded by Hoelder alone.
    let bounds = |pts: &[Point]| -> Vec<(f64, usize)> {
        let mut out = Vec::new();
        if c1 < 0.0 {
            out.push((holder(pts[0].sigma), usize::MAX));
        }
        for i in 0..pts.len() - 1 {
            out.push((
                interval_bound(pts, i, c1, c2).min(holder(pts[i + 1].sigma)),
                i,
            ));
        }
        out
    };
    while evaluations.get() < MAX_EVALUATIONS {
        let best = pts
            .iter()
            .map(|p| p.merit)
            .fold(f64::NEG_INFINITY, f64::max);
        let tol = TOL * best.abs().max(1.0);
        // Bound every interval; also the stretch (0, first point) in the
        // convex case, by the Hoelder bound alone.
        let mut open: Vec<(f64, usize)> = Vec::new();
        for (ub, i) in bounds(&pts) {
            let width = if i == usize::MAX {
                pts[0].sigma
            } else {
                pts[i + 1].sigma - pts[i].sigma
            };
            if ub > best + tol && width > 1e-13 * sigma_max {
                open.push((ub, i));
            }
        }
        if open.is_empty() {
            break;
        }
        // Bisect the most promising intervals (a few per round).
        open.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut new = Vec::new();
        for &(_, i) in open.iter().take(4) {
            let (a, b) = if i == usize::MAX {
                (0.0, pts[0].sigma)
            } else {
                (pts[i].sigma, pts[i + 1].sigma)
            };
            new.push(0.5 * (a + b));
        }
        for sigma in new {
            let p = eval(sigma)?;
            let at = pts.partition_point(|q| q.sigma < sigma);
            pts.insert(at, p);
        }
    }
    let best = pts
        .iter()
        .filter(|p| p.tasks.is_some())
        .max_by(|a, b| a.merit.total_cmp(&b.merit))
        .ok_or_else(|| {
            FdsError::Refused(format!(
                "region N search: no inner program solved (status {})",
                worst_status.get()
            ))
        })?
        .clone();
    let (evaluations, worst_status) = (evaluations.get(), worst_status.get());
    // The bounds use only inner programs answered to full accuracy (a
    // failed point leaves its neighbours bounded by the other points'
    // tangents and chords), so a closed search certifies whatever failed.
    let inner_failures = pts
        .iter()
        .filter(|p| p.tasks.is_none() && p.sigma > 0.0)
        .count();
    let mut a = Allocation::new(
        instance,
        family.name(),
        Status::Optimal,
        best.tasks.clone().unwrap(),
    );
    // The local polish, inside the global optimum's basin; kept if no
    // worse (it also reaches optima at S = S_max, where the slices fail).
    let mut value = best.merit;
    if let Some(x) = crate::polish(
        instance,
        &om,
        crate::Objective::Merit(beta, lambda),
        &a.tasks.to_dense(),
    ) {
        let b = Allocation::new(instance, family.name(), Status::Optimal, x);
        let m = merit(&om, &w, &b.user_tasks, beta, lambda, false);
        if m >= best.merit - 1e-12 * best.merit.abs().max(1.0) {
            a = b;
            value = value.max(m);
            a.notes
                .push("Newton-polished on the KKT system of the active set".into());
        }
    }
    // The certificate: no interval's bound exceeds the answer by more than
    // the gap.
    let certified_gap = bounds(&pts)
        .iter()
        .map(|(ub, _)| ub - value)
        .fold(f64::NEG_INFINITY, f64::max);
    a.status = if certified_gap <= ACCEPT * value.abs().max(1.0) {
        Status::Optimal
    } else {
        Status::ReducedAccuracy
    };
    a.objective = Some(merit(&om, &w, &a.user_tasks, beta, lambda, false));
    let report = SearchReport {
        evaluations,
        inner_failures,
        worst_inner_status: worst_status,
        certified_gap,
        sigma: best.sigma,
        sigma_max,
        profile: pts
            .iter()
            .filter(|p| p.tasks.is_some())
            .map(|p| (p.sigma, p.merit))
            .collect(),
    };
    a.notes.push(format!(
        "region N; method: global search over S = sum of shares in (0, {:.6}]: {} inner cone programs (line program at alpha = beta with S fixed), certified envelopes (chords of the {} value function and the Hoelder bound); best S = {:.9}, certified gap {:.1e}",
        sigma_max,
        evaluations,
        if c1 > 0.0 { "concave" } else { "convex" },
        best.sigma,
        certified_gap.max(0.0)
    ));
    a.gap = Some(leontief_core::details::Gap {
        region_n_search: Some(report),
        ..Default::default()
    });
    Ok(a)
}

/// Upper bound of c1 log phi + c2 log sigma on [sigma_i, sigma_{i+1}] from
/// the chords of the neighbouring pairs (see the module docs).
fn interval_bound(pts: &[Point], i: usize, c1: f64, c2: f64) -> f64 {
    let (a, b) = (pts[i].sigma, pts[i + 1].sigma);
    if a <= 0.0 {
        // Next to 0 the Hoelder bound decides.
        return f64::INFINITY;
    }
    let line = |p: &Point, q: &Point| -> Option<(f64, f64)> {
        if !(p.phi.is_finite() && q.phi.is_finite()) || q.sigma <= p.sigma {
            return None;
        }
        let slope = (q.phi - p.phi) / (q.sigma - p.sigma);
        Some((slope, p.phi - slope * p.sigma))
    };
    let left = if i >= 1 {
        line(&pts[i - 1], &pts[i])
    } else {
        None
    };
    let right = if i + 2 < pts.len() {
        line(&pts[i + 1], &pts[i + 2])
    } else {
        None
    };
    // Tangents at both ends (from the duals), loosened by a relative 1e-6
    // of their slope for the dual's inaccuracy: for a concave phi they lie
    // above it everywhere, for a convex one below.
    let loosen = if c1 > 0.0 { 1.0 } else { -1.0 };
    let tangent = |p: &Point, towards: f64| -> Option<(f64, f64)> {
        let s = p.slope?;
        if !p.phi.is_finite() {
            return None;
        }
        // On the side of `towards` the loosened tangent is s + or - eps.
        let eps = 1e-6 * s.abs().max(1e-12);
        let s = s + loosen * eps * (towards - p.sigma).signum();
        Some((s, p.phi - s * p.sigma))
    };
    let lines: Vec<(f64, f64)> = left
        .into_iter()
        .chain(right)
        .chain(tangent(&pts[i], b))
        .chain(tangent(&pts[i + 1], a))
        .collect();
    if lines.is_empty() {
        return f64::INFINITY;
    }
    // E(sigma): min of the lines (upper envelope of a concave phi) or max
    // (lower envelope of a convex one). f = c1 log E + c2 log sigma is
    // smooth on each piece of E, so its maximum over [a, b] is at an end,
    // a crossing of two lines, or a stationary point of c1 log(s sigma + c)
    // + c2 log sigma, sigma = -c2 c / (s (c1 + c2)).
    let mut cand = vec![a, b];
    for (k, &(s1, i1)) in lines.iter().enumerate() {
        for &(s2, i2) in &lines[k + 1..] {
            if s1 != s2 {
                cand.push((i2 - i1) / (s1 - s2));
            }
        }
        if s1 != 0.0 && c1 + c2 != 0.0 {
            cand.push(-c2 * i1 / (s1 * (c1 + c2)));
        }
    }
    let envelope = |x: f64| -> f64 {
        let vals = lines.iter().map(|(s, c)| s * x + c);
        if c1 > 0.0 {
            vals.fold(f64::INFINITY, f64::min)
        } else {
            vals.fold(f64::NEG_INFINITY, f64::max)
        }
    };
    cand.into_iter()
        .filter(|&x| x >= a && x <= b && x > 0.0)
        .map(|x| {
            let e = envelope(x);
            if e <= 0.0 {
                // No bound on log phi from this envelope (phi > 0).
                f64::INFINITY
            } else {
                c1 * e.ln() + c2 * x.ln()
            }
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dual_slope_is_the_derivative_of_phi() {
        let dir = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
        )
        .join("../../datasets/paper-examples");
        let clarabel = leontief_clarabel::Clarabel::default();
        for (case, beta) in [
            ("joewong-prop3-below-b0.5-l0.1", 0.5),
            ("joewong-prop3-below-b2-l-0.1", 2.0),
            ("joewong-prop3-below-b0.5-l0.1", -0.5),
        ] {
            let inst = Instance::from_path(dir.join(format!("{case}.json"))).unwrap();
            let om = omega(&inst, Family::Gfj);
            let phi_at = |sigma: f64| {
                let (a, slope) = solve_program_slope(
                    &clarabel,
                    &inst,
                    Family::Gfj,
                    omega(&inst, Family::Gfj),
                    beta,
                    (1.0 - beta) / beta,
                    Some(Region::AlphaFair),
                    Some(sigma),
                )
                .unwrap();
                let phi: f64 = a
                    .user_tasks
                    .iter()
                    .zip(&om)
                    .map(|(x, o)| (o * x).powf(1.0 - beta))
                    .sum();
                (phi, slope.unwrap())
            };
            for sigma in [1.5, 3.0, 10.0] {
                let h = 1e-4;
                let (p1, _) = phi_at(sigma + h);
                let (p0, _) = phi_at(sigma - h);
                let (_, s) = phi_at(sigma);
                let fd = (p1 - p0) / (2.0 * h);
                assert!(
                    (s - fd).abs() <= 1e-4 * fd.abs().max(1.0),
                    "{case} beta {beta} sigma {sigma}: dual {s} vs differences {fd}"
                );
            }
        }
    }
}
