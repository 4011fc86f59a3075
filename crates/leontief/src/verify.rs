//! The independent check attached to every answer.

use crate::options::VerifyMode;
use crate::plan::Mech;
use leontief_audit::verify::{Property, Shares};
use leontief_audit::{self as audit, AuditTolerance};
use leontief_core::{Allocation, Instance};
use leontief_drfh::Mechanism;
use leontief_highs::Highs;
use serde_json::{json, Value};

pub(crate) use leontief_audit::verify::nothing_to_check;

/// Check `a` against its mechanism's defining property.
pub fn verify(
    backend: &Highs,
    instance: &Instance,
    mechanism: &Mech,
    a: &Allocation,
    mode: VerifyMode,
) -> anyhow::Result<Value> {
    let property = match mechanism {
        Mech::Exact(m) => match m {
            Mechanism::Drf => Property::MaxMin {
                shares: Shares::Dominant,
                pooled: true,
            },
            Mechanism::Drfh => Property::MaxMin {
                shares: Shares::Dominant,
                pooled: false,
            },
            Mechanism::Kdf { k } => Property::MaxMin {
                shares: Shares::KDominant(*k),
                pooled: false,
            },
            Mechanism::Tsf => Property::MaxMin {
                shares: Shares::TaskShare,
                pooled: false,
            },
            Mechanism::NaiveDrf => Property::PerServerMaxMin,
            Mechanism::Nfc => Property::MaxTasks,
        },
        Mech::Heuristic(_) => Property::WholeTasks,
        Mech::Bbf(_) => return crate::bbf::verify(backend, instance, a, mode),
        Mech::Psdsf { .. } => Property::Psdsf,
        Mech::Vds { alpha, .. } => Property::Vds { alpha: *alpha },
        Mech::Conic {
            family,
            beta,
            lambda,
            alpha_form,
        } => {
            if !a.status.has_solution() {
                return Ok(nothing_to_check(a));
            }
            let feas = audit::feasibility(
                instance,
                &a.user_tasks,
                &a.tasks,
                true,
                &AuditTolerance::default(),
            );
            // The trivial case beta = 1 (not the alpha form) maximises S.
            let (b, l) = if *beta == 1.0 && !*alpha_form {
                (1.0, 0.0)
            } else {
                (*beta, *lambda)
            };
            let gap = if *beta == 1.0 && *alpha_form {
                // alpha = 1: M = sum w log s; grad_n = w_n / x_n.
                leontief_fds::frank_wolfe_gap_log(backend, instance, &a.user_tasks)
            } else {
                leontief_fds::frank_wolfe_gap(backend, instance, *family, &a.user_tasks, b, l)
            };
            let property = "first-order optimality: Frank-Wolfe gap max_{x' feasible} grad M(x).(x'-x), relative to max(|M|, grad M(x).x) (an LP on HiGHS from the output alone); Pareto optimality off region N";
            // Off region N the merit increases in every share, so its
            // maximiser is Pareto optimal: an LP that sees a light user
            // the objective-relative gap cannot (weights 1e6 apart).
            let monotone = *alpha_form
                || matches!(
                    leontief_fds::classify(*beta, *lambda),
                    Ok(leontief_fds::Classified::Trivial)
                        | Ok(leontief_fds::Classified::Region(
                            leontief_fds::Region::AlphaFair
                                | leontief_fds::Region::A
                                | leontief_fds::Region::B
                        ))
                );
            let pareto = if monotone {
                Some(audit::pareto(
                    backend,
                    instance,
                    &a.user_tasks,
                    true,
                    &AuditTolerance::default(),
                )?)
            } else {
                None
            };
            let pareto_ok = pareto.as_ref().is_none_or(|p| p.ok);
            return Ok(match gap {
                Ok(gap) => json!({
                    "property": property,
                    "feasibility": feas,
                    "frank_wolfe_gap": gap,
                    "pareto": pareto,
                    "ok": feas.ok && gap <= 1e-6 && pareto_ok,
                }),
                // The check could not be made: not verified, and why.
                Err(e) => json!({
                    "property": property,
                    "feasibility": feas,
                    "frank_wolfe_gap": null,
                    "reason": format!("not checked: {e}"),
                    "ok": false,
                }),
            });
        }
    };
    Ok(audit::verify::verify(
        backend, instance, &property, a, mode,
    )?)
}
