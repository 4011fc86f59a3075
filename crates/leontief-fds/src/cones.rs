//! The cone programs on Clarabel: power and exponential cones for the
//! line and regions A and B, shares rescaled for conditioning.

use crate::*;
use leontief_core::{Allocation, Instance, ServerId};
use leontief_model::{ConeKind, LoadedLp, LpBackend, Row, Sense};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// The alpha-fair line as the cone program on Clarabel, whatever the
/// instance (what [`solve_alpha`] falls back to).
pub fn solve_alpha_conic<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    solve_program(
        backend,
        instance,
        family,
        alpha,
        (1.0 - alpha) / alpha,
        Some(Region::AlphaFair),
        None,
    )
}

/// `fixed_total`: the inner problem of the region-N search, the line's
/// program at alpha = beta with S fixed (no polish: the polish solves the
/// unconstrained KKT system).
pub(crate) fn solve_program<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
) -> Result<Allocation, FdsError> {
    let om = omega(instance, family);
    solve_program_slope(
        backend,
        instance,
        family,
        om,
        beta,
        lambda,
        region,
        fixed_total,
    )
    .map(|r| r.0)
}

/// The alpha-fair program max sum_n w_n u_alpha(omega_n x_n) with the
/// scales `om` given (one per user) instead of a family's: what
/// alphaPF-VDS solves when gamma is separable on the eligibility graph
/// (omega_n = 1 / (w_n a_n)). Same cone program, polish and certificate
/// as the line.
pub fn solve_alpha_scaled<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    om: Vec<f64>,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    solve_program_slope(
        backend,
        instance,
        Family::Gfj,
        om,
        alpha,
        (1.0 - alpha) / alpha,
        Some(Region::AlphaFair),
        None,
    )
    .map(|r| r.0)
}

/// [`solve_program`] with the scales `om` given, and with `fixed_total`
/// also d phi / d S at the answer, phi = sum_n w_n s_n^(1-beta) the line
/// program's value in unscaled shares, from the dual of the row that fixes
/// S.
///
/// Shares enter the cone program divided by a common scale (the largest
/// share a user reaches alone is 1). Clarabel's path depends on it: a
/// region-N slice of a 3-user instance ended `numerical_failure`
/// (InsufficientProgress, the iterates running off towards an
/// infeasibility certificate) for every S in a window with that scale and
/// was solved with it halved or doubled. So a numerical failure is
/// retried with the scale halved, then doubled, and the output says so.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_program_slope<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    om: Vec<f64>,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
) -> Result<(Allocation, Option<f64>), FdsError> {
    let mut first: Option<(Allocation, Option<f64>)> = None;
    for rescale in [1.0, 0.5, 2.0] {
        let (mut a, slope) = solve_program_rescaled(
            backend,
            instance,
            family,
            om.clone(),
            beta,
            lambda,
            region,
            fixed_total,
            rescale,
        )?;
        if a.status != leontief_core::Status::NumericalFailure {
            if rescale != 1.0 {
                a.notes.push(format!(
                    "the cone program ended numerical_failure with the shares scaled so that the largest a user reaches alone is 1; solved with that scale times {rescale}"
                ));
            }
            return Ok((a, slope));
        }
        first.get_or_insert((a, slope));
    }
    Ok(first.expect("at least one attempt"))
}

/// One attempt of [`solve_program_slope`] with the common share scale
/// multiplied by `rescale`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn solve_program_rescaled<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    om: Vec<f64>,
    beta: f64,
    lambda: f64,
    region: Option<Region>,
    fixed_total: Option<f64>,
    rescale: f64,
) -> Result<(Allocation, Option<f64>), FdsError> {
    let t0 = Instant::now();
    let nu = instance.num_users();
    // Common scale: the largest share a user reaches alone is 1.
    let alone: Vec<f64> = instance
        .user_ids()
        .map(|n| {
            let g: f64 = instance.server_ids().map(|i| instance.gamma(n, i)).sum();
            om[n.0] * g.min(instance.user(n).tasks.unwrap_or(INF))
        })
        .collect();
    let scale = alone
        .iter()
        .copied()
        .filter(|a| a.is_finite() && *a > 0.0)
        .fold(0.0, f64::max);
    if scale == 0.0 {
        return Err(FdsError::Refused(
            "no user can run anywhere: every allocation is zero".into(),
        ));
    }
    let scale = scale * rescale;
    let w: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let runnable: Vec<bool> = (0..nu)
        .map(|n| alone[n] > 0.0 && alone[n].is_finite())
        .collect();
    let mut poly = polytope(instance, Sense::Maximise);
    let xcols = std::mem::take(&mut poly.cols);
    let mut b = poly.b;
    let om_s: Vec<f64> = om.iter().map(|o| o / scale).collect();
    // Cone blocks: rows first, then the columns that use them.
    let method: &str;
    let mut s_rows: Vec<Option<Row>> = vec![None; nu]; // rows holding -s~_n
    let mut total_s_row: Option<Row> = None; // row holding -S~
    match region {
        None => {
            method = "beta = 1 is trivial: f = N S^lambda, so leontief maximises S (an LP)";
        }
        Some(Region::AlphaFair) => {
            let alpha = beta;
            for n in (0..nu).filter(|&n| runnable[n]) {
                if alpha < 0.0 {
                    // (t, 1, s~) in K_pow(1/(1-alpha)): t >= s~^(1-alpha)
                    // (1 - alpha > 1; the region-N inner problem only).
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(
                        r0,
                        3,
                        ConeKind::Power {
                            alpha: 1.0 / (1.0 - alpha),
                        },
                    );
                    s_rows[n] = Some(r2);
                    b.add_col(-w[n], -INF, INF, [(r0, -1.0)]);
                } else if alpha < 1.0 {
                    // (s~, 1, t) in K_pow(1-alpha): t <= s~^(1-alpha).
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 - alpha });
                    s_rows[n] = Some(r0);
                    b.add_col(w[n] / (1.0 - alpha), -INF, INF, [(r2, -1.0)]);
                } else if alpha > 1.0 {
                    // (t, s~, 1) in K_pow(1/alpha): t >= s~^(1-alpha).
                    let r0 = b.add_row(-INF, 0.0);
                    let r1 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 / alpha });
                    s_rows[n] = Some(r1);
                    b.add_col(-w[n] / (alpha - 1.0), -INF, INF, [(r0, -1.0)]);
                } else {
                    // (u, 1, s~) in K_exp: u <= log s~.
                    let r0 = b.add_row(-INF, 0.0);
                    b.add_row(-INF, 1.0);
                    let r2 = b.add_row(-INF, 0.0);
                    b.add_cone(r0, 3, ConeKind::Exponential);
                    s_rows[n] = Some(r2);
                    b.add_col(w[n], -INF, INF, [(r0, -1.0)]);
                }
            }
            method = if alpha < 1.0 {
                "alpha-fair line: max sum w s^(1-alpha)/(1-alpha), power cones"
            } else if alpha > 1.0 {
                "alpha-fair line: min sum w s^(1-alpha)/(alpha-1), power cones"
            } else {
                "alpha = 1, proportional fairness: max sum w log s, exponential cones"
            };
        }
        Some(Region::A) => {
            let theta = 1.0 / (beta * (1.0 + lambda));
            let mut ts = Vec::new();
            for n in (0..nu).filter(|&n| runnable[n]) {
                let r0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let r2 = b.add_row(-INF, 0.0);
                b.add_cone(r0, 3, ConeKind::Power { alpha: 1.0 - beta });
                s_rows[n] = Some(r0);
                ts.push((n, r2));
            }
            // z <= U^theta S^(1-theta): (U, S, z) in K_pow(theta).
            let u0 = b.add_row(-INF, 0.0);
            let u1 = b.add_row(-INF, 0.0);
            let u2 = b.add_row(-INF, 0.0);
            b.add_cone(u0, 3, ConeKind::Power { alpha: theta });
            total_s_row = Some(u1);
            for (n, r2) in ts {
                b.add_col(0.0, -INF, INF, [(r2, -1.0), (u0, -w[n])]);
            }
            b.add_col(1.0, -INF, INF, [(u2, -1.0)]);
            method = "region A: max z, z <= U^theta S^(1-theta), power cones";
        }
        Some(Region::B) => {
            let kappa = lambda - (1.0 - beta) / beta;
            let lin = b.add_row(-INF, 1.0); // sum w v <= 1
            let mut per = Vec::new();
            for n in (0..nu).filter(|&n| runnable[n]) {
                // y <= log s~: (y, 1, s~) in K_exp.
                let a0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let a2 = b.add_row(-INF, 0.0);
                b.add_cone(a0, 3, ConeKind::Exponential);
                s_rows[n] = Some(a2);
                // v >= exp((1-beta) y - z): ((1-beta) y - z, 1, v) in K_exp.
                let c0 = b.add_row(-INF, 0.0);
                b.add_row(-INF, 1.0);
                let c2 = b.add_row(-INF, 0.0);
                b.add_cone(c0, 3, ConeKind::Exponential);
                per.push((n, a0, c0, c2));
            }
            // b <= log S~: (b, 1, S~) in K_exp.
            let d0 = b.add_row(-INF, 0.0);
            b.add_row(-INF, 1.0);
            let d2 = b.add_row(-INF, 0.0);
            b.add_cone(d0, 3, ConeKind::Exponential);
            total_s_row = Some(d2);
            let c0s: Vec<(Row, f64)> = per.iter().map(|p| (p.2, 1.0)).collect();
            for &(n, a0, c0, c2) in &per {
                b.add_col(0.0, -INF, INF, [(a0, -1.0), (c0, -(1.0 - beta))]);
                b.add_col(0.0, 0.0, INF, [(lin, w[n]), (c2, -1.0)]);
            }
            b.add_col(-1.0 / beta, -INF, INF, c0s);
            b.add_col(-kappa, -INF, INF, [(d0, -1.0)]);
            method = "region B: min z/beta + kappa b with exponential cones (log-sum-exp of (1-beta) log s)";
        }
        Some(Region::N) => unreachable!("refused above"),
    }
    if let Some(total) = fixed_total {
        // S~ = total / scale, as a row holding -S~.
        assert!(total_s_row.is_none(), "fixed S only on the alpha-fair line");
        total_s_row = Some(b.add_row(-total / scale, -total / scale));
    }
    let problem = {
        // Attach the share coefficients to the x columns: rebuild columns
        // in one pass with their cone-row entries.
        let mut p = b.build();
        add_share_entries(&mut p, &xcols, &om_s, &s_rows, total_s_row);
        if region.is_none() {
            for n in 0..nu {
                for &(_, c) in &xcols[n] {
                    p.col_cost[c.0] = om_s[n];
                }
            }
        }
        p
    };
    let build = t0.elapsed().as_secs_f64();
    let sol = backend.load(problem)?.solve()?;
    // phi = scale^(1-beta) U~ with U~ = f V (V the program's objective:
    // f = 1 - alpha, or -1 for alpha < 0), and the row holds -S / scale.
    let slope = match (fixed_total, total_s_row) {
        (Some(_), Some(row)) if sol.status.has_solution() && !sol.row_dual.is_empty() => {
            let f = if beta < 0.0 { -1.0 } else { 1.0 - beta };
            // (The backend's dual convention, col_dual = c - A^T y, gives
            // y = -dV/d(bound) here; checked against finite differences in
            // region_n's tests.)
            Some(-scale.powf(1.0 - beta) * f * sol.row_dual[row.0] / scale)
        }
        _ => None,
    };
    let k = instance.num_entries();
    let mut a = if sol.status.has_solution() {
        let mut tasks = vec![vec![0.0; k]; nu];
        for n in 0..nu {
            for &(i, c) in &xcols[n] {
                tasks[n][i.0] = sol.x[c.0].max(0.0);
            }
        }
        Allocation::new(instance, family.name(), sol.status, tasks)
    } else {
        Allocation::empty(instance, family.name(), sol.status)
    };
    if a.status.has_solution() && fixed_total.is_none() {
        let obj = match region {
            None => Objective::Linear,
            Some(Region::AlphaFair) if beta == 1.0 => Objective::Log,
            Some(_) => Objective::Merit(beta, lambda),
        };
        if let Some(x) = polish(instance, &om, obj, &a.tasks.to_dense()) {
            let status = a.status;
            a = Allocation::new(instance, family.name(), status, x);
            a.notes
                .push("Newton-polished on the KKT system of the active set".into());
        } else if !matches!(obj, Objective::Linear) {
            // Interior-point accuracy is not the exactness `optimal`
            // promises (the fuzzer found such answers 1e-5 off, their
            // Frank-Wolfe check failing): say so in the status.
            if a.status == leontief_core::Status::Optimal {
                a.status = leontief_core::Status::ReducedAccuracy;
            }
            a.notes.push("not polished (the active-set Newton step did not certify): interior-point accuracy, about 1e-5 relative, so the status is reduced_accuracy".into());
        }
    }
    a.backend_status = Some(sol.raw_status.clone());
    a.build_seconds = build;
    a.solve_seconds = sol.seconds;
    a.notes.push(format!(
        "region {}; method: {method}",
        match region {
            None => "trivial (beta = 1)".to_string(),
            Some(r) => serde_json::to_value(r)
                .map(|v| v.as_str().unwrap_or("?").to_string())
                .unwrap_or_default(),
        }
    ));
    if instance.users().iter().any(|u| u.weight != 1.0) {
        a.notes
            .push("weights enter as U = sum_n w_n s_n^(1-beta) (the paper has none)".into());
    }
    if a.status.has_solution() {
        a.objective = Some(merit(
            &om,
            &w,
            &a.user_tasks,
            beta,
            lambda,
            region.is_none(),
        ));
    }
    Ok((a, slope))
}

/// Put the share coefficients -omega~_n on the x columns in the rows that
/// hold -s~_n, and on every x column in the row holding -S~. Columns are
/// rebuilt in one pass (entries stay sorted: those rows come after the
/// capacity and cap rows the columns already use).
pub(crate) fn add_share_entries(
    p: &mut leontief_model::Problem,
    xcols: &[Vec<(ServerId, leontief_model::Col)>],
    om_s: &[f64],
    s_rows: &[Option<Row>],
    total: Option<Row>,
) {
    let mut extra: Vec<Vec<(usize, f64)>> = vec![Vec::new(); p.num_cols()];
    for (n, cols) in xcols.iter().enumerate() {
        for &(_, c) in cols {
            if let Some(r) = s_rows[n] {
                extra[c.0].push((r.0, -om_s[n]));
            }
            if let Some(r) = total {
                extra[c.0].push((r.0, -om_s[n]));
            }
            extra[c.0].sort_by_key(|e| e.0);
        }
    }
    let mut start = Vec::with_capacity(p.num_cols() + 1);
    let mut index = Vec::with_capacity(p.a_index.len());
    let mut value = Vec::with_capacity(p.a_value.len());
    start.push(0);
    for j in 0..p.num_cols() {
        let mut col: Vec<(usize, f64)> = (p.a_start[j]..p.a_start[j + 1])
            .map(|k| (p.a_index[k], p.a_value[k]))
            .collect();
        col.extend(extra[j].iter().copied());
        col.sort_by_key(|e| e.0);
        for (r, v) in col {
            index.push(r);
            value.push(v);
        }
        start.push(index.len());
    }
    p.a_start = start;
    p.a_index = index;
    p.a_value = value;
}
