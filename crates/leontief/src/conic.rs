//! The fairness-efficiency families (FDS, GFJ, p-norm; 002) as `leontief
//! solve` runs them: in the solver's units, with the numerically hard
//! inputs taken apart before Clarabel sees them.
//!
//! * Weights are scaled by a power of two (the maximiser does not change).
//! * Users that can run nowhere are set aside and given 0: their share
//!   scale omega is infinite (they demand a resource no server has), and
//!   left in the cone program they pulled the others 1e-5 off their
//!   optimum (found by the fuzzer).
//! * On the alpha-fair line with weights more than 1e3 apart, the weights
//!   are split between the objective and the shares (see
//!   [`per_user_scales`]).
//!
//! The printed objective is recomputed for the weights as given, over the
//! users that run.

use crate::error::{bad_input, Error};
use crate::families::ConicPoint;
use leontief_core::{Allocation, Instance};
use leontief_highs::Highs;

/// Solve `family` at (beta, lambda) (`alpha_form`: the alpha-fair member
/// alpha = beta, which includes alpha = 1).
pub(crate) fn solve(
    highs: &Highs,
    instance: &Instance,
    point: ConicPoint,
) -> Result<Allocation, Error> {
    let ConicPoint {
        family,
        beta,
        lambda,
        alpha_form,
    } = point;
    let runs: Vec<bool> = instance
        .user_ids()
        .map(|n| instance.server_ids().any(|i| instance.can_run_on(n, i)))
        .collect();
    if runs.iter().all(|&r| !r) {
        // Every allocation is zero: the solver says so.
        return solve_running(highs, instance, family, beta, lambda, alpha_form);
    }
    let mut a = if runs.iter().all(|&r| r) {
        solve_running(highs, instance, family, beta, lambda, alpha_form)?
    } else {
        let mut raw = instance.to_raw();
        raw.users = raw
            .users
            .into_iter()
            .zip(&runs)
            .filter(|(_, &r)| r)
            .map(|(u, _)| u)
            .collect();
        let sub = Instance::new(raw).map_err(|e| bad_input(e.to_string()))?;
        let part = solve_running(highs, &sub, family, beta, lambda, alpha_form)?;
        let mut rows = part.tasks.rows();
        let tasks = leontief_core::Tasks::from_rows(
            instance.num_entries(),
            runs.iter()
                .map(|&r| {
                    if r {
                        rows.next()
                            .map(leontief_core::tasks::Row::to_vec)
                            .unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
        );
        let mut a = Allocation::new(instance, &part.mechanism, part.status, tasks);
        a.backend_status = part.backend_status;
        a.objective = part.objective;
        a.build_seconds = part.build_seconds;
        a.solve_seconds = part.solve_seconds;
        a.lps_solved = part.lps_solved;
        a.pooled = part.pooled;
        a.notes = part.notes;
        a.gap = part.gap;
        a.bbf = part.bbf;
        a.notes.push(format!(
            "{} users can run nowhere (each demands a resource no server it may use has): 0 tasks, solved without them",
            runs.iter().filter(|&&r| !r).count()
        ));
        a
    };
    // Normalised shares divide by the weights as given.
    a.metrics = leontief_core::Metrics::compute(instance, &a.tasks);
    if a.objective.is_some() {
        let pick = |v: Vec<f64>| -> Vec<f64> {
            v.into_iter()
                .zip(&runs)
                .filter(|(_, &r)| r)
                .map(|(v, _)| v)
                .collect()
        };
        let w = pick(instance.users().iter().map(|u| u.weight).collect());
        let om = pick(leontief_fds::omega(instance, family));
        let x = pick(a.user_tasks.clone());
        let trivial = beta == 1.0 && !alpha_form;
        a.objective = Some(leontief_fds::merit(&om, &w, &x, beta, lambda, trivial));
    }
    Ok(a)
}

/// The solve proper, on users that can all run.
fn solve_running(
    highs: &Highs,
    instance: &Instance,
    family: leontief_fds::Family,
    beta: f64,
    lambda: f64,
    alpha_form: bool,
) -> Result<Allocation, Error> {
    let clarabel = crate::options::clarabel(highs)?;
    let (reweighted, _) = instance.weights_normalised();
    let on_line = alpha_form
        || matches!(
            leontief_fds::classify(beta, lambda),
            Ok(leontief_fds::Classified::Region(
                leontief_fds::Region::AlphaFair
            ))
        );
    let r = if let Some((unit, om)) = on_line
        .then(|| per_user_scales(&reweighted, family, beta))
        .flatten()
    {
        leontief_fds::solve_alpha_scaled(&clarabel, &unit, om, beta).map(|mut a| {
            a.mechanism = family.name().into();
            a.notes.push(format!(
                "weights {:.0e} apart: solved as max sum_n c_n u_alpha(omega_n x_n / c_n), c_n = w_n^(1/alpha) (the same program), so the solver's tolerances are about the same fraction of every user's share",
                spread(&reweighted)
            ));
            a
        })
    } else if alpha_form {
        leontief_fds::solve_alpha(&clarabel, &reweighted, family, beta)
    } else {
        leontief_fds::solve(&clarabel, &reweighted, family, beta, lambda)
    };
    r.map_err(|e| match e {
        leontief_fds::FdsError::Refused(m) => bad_input(m),
        leontief_fds::FdsError::Backend(b) => Error::from(b),
    })
}

/// Largest weight over smallest.
fn spread(instance: &Instance) -> f64 {
    let w = instance.users().iter().map(|u| u.weight);
    w.clone().fold(0.0, f64::max) / w.fold(f64::INFINITY, f64::min)
}

/// For the alpha-fair line with weights more than 1e3 apart: the same
/// program with the weights split between the objective and the shares,
/// sum_n w_n u_alpha(omega_n x_n) = sum_n w_n^(1/alpha) u_alpha(omega_n x_n
/// / w_n^(1/alpha)) (u_alpha(c s) = c^(1-alpha) u_alpha(s)). At the
/// optimum s_n grows like w_n^(1/alpha), so the scaled shares are of one
/// size and the weights' spread R becomes R^(1/alpha) in each place: the
/// weighted program let Clarabel leave a user of weight 1 next to one of
/// 1e6 at 60% of its optimum, unseen by an objective-relative tolerance.
/// Returns the reweighted instance and the share scales; `None` for
/// alpha <= 1, one pool, or weights within 1e3.
fn per_user_scales(
    instance: &Instance,
    family: leontief_fds::Family,
    alpha: f64,
) -> Option<(Instance, Vec<f64>)> {
    // One server entry (or proportional ones) goes to the price-space
    // dual, exact per user already; below alpha = 1 the scales spread as
    // R^(1/alpha), wider than the weights.
    if spread(instance) <= 1e3 || alpha <= 1.0 || instance.pools_exactly() {
        return None;
    }
    let c: Vec<f64> = instance
        .users()
        .iter()
        .map(|u| u.weight.powf(1.0 / alpha))
        .collect();
    let om: Vec<f64> = leontief_fds::omega(instance, family)
        .iter()
        .zip(&c)
        .map(|(o, c)| o / c)
        .collect();
    let mut raw = instance.to_raw();
    for (u, c) in raw.users.iter_mut().zip(&c) {
        u.weight = Some(*c);
    }
    Some((Instance::new(raw).ok()?, om))
}
