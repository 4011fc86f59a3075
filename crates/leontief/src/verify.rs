//! The independent check attached to every answer.

use crate::options::VerifyMode;
use crate::plan::Mech;
use leontief_audit as audit;
use leontief_audit::verify::{Merit, Property, Shares};
use leontief_core::{Allocation, Instance, Verification};
use leontief_drfh::Mechanism;
use leontief_highs::Highs;

/// Check `a` against its mechanism's defining property.
pub fn verify(
    backend: &Highs,
    instance: &Instance,
    mechanism: &Mech,
    a: &Allocation,
    mode: VerifyMode,
) -> anyhow::Result<Verification> {
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
        Mech::Bbf(kind) => Property::Bbf {
            ode: matches!(kind, crate::bbf::BbfKind::Ode { .. }),
        },
        Mech::Psdsf { .. } => Property::Psdsf,
        Mech::Vds { alpha, .. } => Property::Vds { alpha: *alpha },
        Mech::Conic {
            family,
            beta,
            lambda,
            alpha_form,
        } => {
            // The trivial case beta = 1 (not the alpha form) maximises S;
            // alpha = 1 is M = sum w log s.
            let merit = if *beta == 1.0 && *alpha_form {
                Merit::Log
            } else if *beta == 1.0 {
                Merit::Family {
                    family: *family,
                    beta: 1.0,
                    lambda: 0.0,
                }
            } else {
                Merit::Family {
                    family: *family,
                    beta: *beta,
                    lambda: *lambda,
                }
            };
            // Off region N the merit increases in every share, so its
            // maximiser is Pareto optimal.
            let pareto = *alpha_form
                || matches!(
                    leontief_fds::classify(*beta, *lambda),
                    Ok(leontief_fds::Classified::Trivial)
                        | Ok(leontief_fds::Classified::Region(
                            leontief_fds::Region::AlphaFair
                                | leontief_fds::Region::A
                                | leontief_fds::Region::B
                        ))
                );
            Property::FirstOrder { merit, pareto }
        }
    };
    Ok(audit::verify::verify(
        backend, instance, &property, a, mode,
    )?)
}
