//! `--mechanism psdsf` and `--mechanism vds --alpha A > 1` (004), and
//! their verification: the Definition-4 certificate or the Nikaido-Isoda /
//! KKT certificate recomputed from the printed allocation and prices, the
//! multi-server sharing-incentive and envy checks, and, when the instance
//! has a Definition-2 bottleneck, the weighted max-min on it (the LP
//! operator on HiGHS).

use crate::error::{bad_input, Error};
use leontief_core::{Allocation, Instance, Status};
use leontief_highs::Highs;
use std::time::Instant;

/// PS-DSF: the best-response point, or the member with most tasks.
pub(crate) fn psdsf(
    highs: &Highs,
    instance: &Instance,
    max_tasks: bool,
    exact_finish: bool,
) -> Result<Allocation, Error> {
    let t0 = Instant::now();
    if max_tasks {
        let rows = leontief_vds::comparisons(instance);
        if rows > leontief_vds::MAX_TASKS_LIMIT {
            return Err(bad_input(format!(
                "--select max-tasks: the MILP would need {rows} comparison rows (pairs of users sharing a resource on a server); the limit is {} (it grows as users^2 x servers x resources): use --select best-response",
                leontief_vds::MAX_TASKS_LIMIT
            )));
        }
        let o = leontief_vds::max_tasks(highs, instance)?;
        let mut a = if o.status.has_solution() {
            Allocation::new(instance, "psdsf", o.status, o.tasks)
        } else {
            Allocation::empty(instance, "psdsf", o.status)
        };
        a.solve_seconds = t0.elapsed().as_secs_f64();
        a.lps_solved = 2;
        a.backend_status = Some(o.raw_status);
        a.notes.push(format!(
            "selection rule max-tasks: the PS-DSF allocation with the most total tasks, an exact MILP on HiGHS over Definition 4 ({} binaries, {} comparison rows), then the LP with its pattern fixed for a clean vertex",
            o.binaries, o.comparisons
        ));
        return Ok(a);
    }
    // Interchangeable servers as classes: a PS-DSF allocation of the
    // class, split evenly, is one of its members (docs/mechanisms.md).
    if let Some(merged) = leontief_drfh::merge::merge_identical(instance, true) {
        let a = psdsf(highs, &merged.instance, false, exact_finish)?;
        return Ok(leontief_drfh::merge::split_allocation(instance, &merged, a));
    }
    let o = leontief_vds::psdsf_with(
        instance,
        &leontief_vds::PsdsfSettings {
            exact_finish,
            // `--select sweeps` is the plain best responses' own limit.
            over_relax: exact_finish,
            deadline: crate::options::deadline(highs, t0),
            ..leontief_vds::PsdsfSettings::default()
        },
    );
    let status = if o.converged {
        Status::Optimal
    } else if o.timed_out {
        Status::TimeLimit
    } else {
        Status::IterationLimit
    };
    let mut a = Allocation::new(instance, "psdsf", status, o.tasks);
    a.solve_seconds = t0.elapsed().as_secs_f64();
    a.backend_status = Some(format!(
        "Gauss-Seidel water-filling best responses{}: {} sweeps, {}",
        if o.over_relaxation != 1.0 {
            format!(" (over-relaxed, omega {})", o.over_relaxation)
        } else {
            String::new()
        },
        o.sweeps,
        if o.exact_finish {
            format!(
                "ended by the exact forest finish on its try {}{} (it passed Definition 4)",
                o.finishes_tried,
                match o.restarts {
                    0 => String::new(),
                    r => format!(", after {r} restarts from a finish's levels"),
                }
            )
        } else if o.converged {
            format!(
                "converged (no change to 1e-13; {} finishes tried)",
                o.finishes_tried
            )
        } else if o.timed_out {
            "time limit (--time-limit)".to_string()
        } else {
            "iteration limit".to_string()
        }
    ));
    a.notes.push(if exact_finish {
        "PS-DSF is not unique in general: selection rule best-response: the Gauss-Seidel best responses from zero, ended by an exact solve on the structure they reached (levels per server, holders on a forest, the split over tied servers by an LP) once that solve passes Definition 4, and restarted from that solve's levels when it does not; where several PS-DSF allocations share that structure (a consistent cycle of holders) it may differ from the sweeps' own limit (--select sweeps), and --select max-tasks gives the member with most tasks; the Definition-4 certificate is under verification".to_string()
    } else {
        "PS-DSF is not unique in general: selection rule sweeps: the limit of the Gauss-Seidel best responses from zero (--select best-response ends them early by an exact solve; --select max-tasks gives the member with most tasks); the Definition-4 certificate is under verification".to_string()
    });
    Ok(a)
}

/// alphaPF-VDS for alpha > 1.
pub(crate) fn vds(
    highs: &Highs,
    instance: &Instance,
    alpha: f64,
    jacobi: Option<f64>,
) -> Result<Allocation, Error> {
    vds_to(highs, instance, alpha, jacobi, VDS_TOLERANCE, None)
}

/// The certificate's tolerance on the listed servers (the verification's).
const VDS_TOLERANCE: f64 = 1e-9;

/// The tightest tolerance a class solve is asked for.
const CLASS_TOLERANCE_FLOOR: f64 = 1e-13;

/// The equilibrium certificate in the allocation holds.
fn holds(a: &Allocation) -> bool {
    a.gap
        .as_ref()
        .and_then(|g| g.equilibrium.as_ref())
        .is_some_and(|e| e.equilibrium)
}

fn vds_to(
    highs: &Highs,
    instance: &Instance,
    alpha: f64,
    jacobi: Option<f64>,
    tolerance: f64,
    start: Option<&[Vec<f64>]>,
) -> Result<Allocation, Error> {
    let t0 = Instant::now();
    // Interchangeable servers as classes (Gauss-Seidel; the damped Jacobi
    // form is the servers' own distributed dynamics and runs as listed):
    // an equilibrium of the classes, each one server, split evenly, is an
    // equilibrium of the listed servers (docs/mechanisms.md).
    if jacobi.is_none() {
        if let Some(merged) = leontief_drfh::merge::merge_identical(instance, true) {
            let a = vds_to(highs, &merged.instance, alpha, None, tolerance, None)?;
            let first = a.tasks.to_dense();
            let first_said = a.backend_status.clone().unwrap_or_default();
            let mut split = split_equilibrium(instance, &merged, a, alpha, tolerance);
            split.solve_seconds = t0.elapsed().as_secs_f64();
            if !split.status.has_solution() || holds(&split) {
                return Ok(split);
            }
            // A member's relative gap is up to its class's over its count
            // share (the same best-response gain against a share of the
            // class's spending): once more, that much tighter (to 1e-13).
            let mut spread = vec![0.0f64; merged.instance.num_entries()];
            for (&c, &s) in merged.class_of.iter().zip(&merged.share) {
                spread[c] += 1.0 / s;
            }
            let widest = spread.iter().copied().fold(1.0, f64::max);
            let tight = (tolerance / widest).max(CLASS_TOLERANCE_FLOOR);
            // From the first answer: with task caps, sweeps from zero can
            // reach an equilibrium other than the selected one first.
            let a = vds_to(highs, &merged.instance, alpha, None, tight, Some(&first))?;
            let mut again = split_equilibrium(instance, &merged, a, alpha, tolerance);
            // Both class solves are this call's: the time is theirs and
            // the first one's sweeps are said.
            again.solve_seconds = t0.elapsed().as_secs_f64();
            if again.status.has_solution() && holds(&again) {
                again.notes.push(format!(
                    "the class solve at {tolerance:.0e} ({first_said}), split over the {} listed servers, was not within {tolerance:.0e} there; this answer is the class solve again at {tight:.1e} from that answer",
                    instance.num_entries()
                ));
                return Ok(again);
            }
            split.solve_seconds = t0.elapsed().as_secs_f64();
            split.status = split.status.worst(Status::ReducedAccuracy);
            split.notes.push(format!(
                "solved on {} classes of interchangeable servers: split over the {} listed servers, the equilibrium certificate is not within {tolerance:.0e} (see the gap), and the class solve at {tight:.1e} ended {}",
                merged.instance.num_entries(),
                instance.num_entries(),
                again.status
            ));
            return Ok(split);
        }
    }
    // gamma separable on the eligibility graph: the servers share one
    // potential, and the equilibrium is the one power-cone program.
    let mut why_not_separable = None;
    if jacobi.is_none() {
        if let Some(sep) = leontief_vds::separable(instance) {
            match separable(highs, instance, alpha, &sep, t0) {
                Ok(a) => return Ok(a),
                Err(why) => why_not_separable = Some(why),
            }
        }
    }
    let o = leontief_vds::vds_from(
        instance,
        &leontief_vds::VdsSettings {
            alpha,
            jacobi,
            deadline: crate::options::deadline(highs, t0),
            tolerance,
            ..leontief_vds::VdsSettings::default()
        },
        start,
    );
    let status = if o.converged {
        Status::Optimal
    } else if o.timed_out {
        Status::TimeLimit
    } else {
        Status::IterationLimit
    };
    let path = match jacobi {
        None => "gauss-seidel best responses".to_string(),
        Some(t) => format!("damped jacobi best responses (theta = {t})"),
    };
    let mut a = Allocation::new(instance, "vds", status, o.tasks.clone());
    a.solve_seconds = t0.elapsed().as_secs_f64();
    a.backend_status = Some(format!(
        "{path}{}: {} sweeps, {} Newton steps on the server duals, {}{}",
        if o.over_relaxation != 1.0 {
            format!(" (over-relaxed, omega {:.3} at the end)", o.over_relaxation)
        } else {
            String::new()
        },
        o.sweeps,
        o.newton_steps,
        if o.finishes_tried > 0 {
            format!(
                "{} interior-point finishes tried ({} iterations{}), ",
                o.finishes_tried,
                o.finish_iterations,
                if o.finished {
                    "; the last one's point is the answer"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        },
        if o.converged {
            "converged (certificate within tolerance, change or KKT residual settled)"
        } else if o.timed_out {
            "time limit (--time-limit): NOT an equilibrium within tolerance"
        } else {
            "iteration limit: NOT an equilibrium within tolerance"
        }
    ));
    a.notes.push(format!(
        "alphaPF-VDS at alpha = {alpha}: an equilibrium of the game among servers (each maximises sum_n w_n^alpha s_(n,i)^(1-alpha)/(1-alpha) over its own capacity), not an optimum; in general the game is neither potential nor monotone and no convergence theorem is known (the certificate below says whether this point is one)"
    ));
    if let Some(why) = why_not_separable {
        a.notes.push(format!("gamma is separable, but the one cone program did not give a certified equilibrium ({why}): best responses instead"));
    }
    if o.inexact_responses > 0 {
        a.notes.push(format!(
            "{} best responses stopped short of their dual tolerance (the sweep went on from the best point found)",
            o.inexact_responses
        ));
    }
    if instance.users().iter().any(|u| u.tasks.is_some()) {
        a.notes.push("task caps: a cap binds a user's tasks on all servers at once, so the game has many equilibria; this is the selected one, where a capped user at its cap holds tasks only on the servers where its marginal utility per unit of price is highest (the certificate's cap_split checks it; docs/mechanisms.md)".into());
    }
    a.gap = Some(equilibrium_block(
        &path,
        o.sweeps,
        &o.prices,
        &o.log_scale,
        &o.certificate,
    ));
    Ok(a)
}

/// A class equilibrium on the listed servers: tasks split by count share,
/// each member's prices those of its class with the log scale raised by
/// (alpha - 1) ln(share) (its gamma is share times the class's, so its
/// utility's prices are share^(alpha - 1) times the class's), and the
/// certificate recomputed on the listed servers.
fn split_equilibrium(
    instance: &Instance,
    merged: &leontief_drfh::merge::Merged,
    a: Allocation,
    alpha: f64,
    tolerance: f64,
) -> Allocation {
    let totals = a.tasks.user_totals();
    let mut a = leontief_drfh::merge::split_allocation(instance, merged, a);
    // Each user's total as the class solve had it, to the last bit where
    // the sum allows: a user at its cap must read as at its cap (the
    // certificate allows 8 ulps; a split over hundreds of servers rounds
    // further), or its marginal utility, far above the price there,
    // counts against every server it uses.
    for (n, &target) in totals.iter().enumerate() {
        let entries: Vec<usize> = a.tasks.row(n).iter().map(|(i, _)| i).collect();
        let mut row: Vec<f64> = a.tasks.row(n).iter().map(|(_, x)| x).collect();
        let Some(last) = row.iter().rposition(|&v| v != 0.0) else {
            continue;
        };
        let rest: f64 = row[..last].iter().chain(&row[last + 1..]).sum();
        row[last] = (target - rest).max(0.0);
        for _ in 0..4 {
            let sum: f64 = row.iter().sum();
            if sum == target {
                break;
            }
            row[last] = if sum > target {
                row[last].next_down().max(0.0)
            } else {
                row[last].next_up()
            };
        }
        a.tasks.set_row(n, entries.into_iter().zip(row).collect());
    }
    a.metrics = leontief_core::Metrics::compute(instance, &a.tasks);
    if let Some(e) = a.gap.as_mut().and_then(|g| g.equilibrium.as_mut()) {
        let prices: Vec<Vec<f64>> = merged
            .class_of
            .iter()
            .map(|&c| e.server_prices[c].clone())
            .collect();
        let scale: Vec<f64> = merged
            .class_of
            .iter()
            .zip(&merged.share)
            .map(|(&c, &s)| e.server_log_price_scale[c] + (alpha - 1.0) * s.ln())
            .collect();
        let c = leontief_audit::equilibrium::vds_certificate(
            instance, alpha, &a.tasks, &prices, &scale, tolerance,
        );
        e.nikaido_isoda_gap = c.nikaido_isoda_gap;
        e.kkt_residual = c.kkt_residual;
        e.cap_split = c.cap_split;
        e.equilibrium = c.holds;
        e.server_prices = prices;
        e.server_log_price_scale = scale;
    }
    a
}

fn separable(
    highs: &Highs,
    instance: &Instance,
    alpha: f64,
    sep: &leontief_vds::Separable,
    t0: Instant,
) -> Result<Allocation, String> {
    let om: Vec<f64> = instance
        .users()
        .iter()
        .zip(&sep.a)
        .map(|(u, &a)| if a > 0.0 { 1.0 / (u.weight * a) } else { 1.0 })
        .collect();
    let clarabel = crate::options::clarabel(highs).map_err(|e| e.to_string())?;
    let mut a = leontief_fds::solve_alpha_scaled(&clarabel, instance, om, alpha)
        .map_err(|e| e.to_string())?;
    if a.status != Status::Optimal {
        return Err(format!("Clarabel ended {}", a.status));
    }
    let (prices, ell, cert) =
        leontief_vds::certify_point(instance, alpha, &a.tasks.to_dense(), 1e-9);
    if !cert.holds {
        return Err(format!(
            "its certificate: gap {:.1e}, KKT residual {:.1e}",
            cert.nikaido_isoda_gap, cert.kkt_residual
        ));
    }
    a.mechanism = "vds".into();
    a.solve_seconds = t0.elapsed().as_secs_f64();
    a.objective = None;
    a.notes.retain(|n| !n.starts_with("region"));
    a.notes.push(format!(
        "alphaPF-VDS at alpha = {alpha}: gamma is separable on the eligibility graph (gamma_(n,i) = a_n b_i), so every server maximises the same potential sum_n w_n u_alpha(x_n / (w_n a_n)) up to a factor, and the equilibrium is its maximum over all servers jointly: one power-cone program on Clarabel (path separable); prices from each server's best response at the answer"
    ));
    a.gap = Some(equilibrium_block(
        "separable: one power-cone program",
        0,
        &prices,
        &ell,
        &cert,
    ));
    Ok(a)
}

fn equilibrium_block(
    path: &str,
    sweeps: usize,
    prices: &[Vec<f64>],
    log_scale: &[f64],
    c: &leontief_vds::VdsCertificate,
) -> leontief_core::details::Gap {
    leontief_core::details::Gap {
        equilibrium: Some(leontief_core::details::Equilibrium {
            path: path.to_string(),
            sweeps,
            nikaido_isoda_gap: c.nikaido_isoda_gap,
            kkt_residual: c.kkt_residual,
            cap_split: c.cap_split,
            equilibrium: c.holds,
            server_prices: prices.to_vec(),
            server_log_price_scale: log_scale.to_vec(),
            prices_note: "per server entry, per unit of each resource, in the server's scaled units: the utility's prices are e^scale times these".into(),
        }),
        ..Default::default()
    }
}
