//! The independent check attached to every answer.

use crate::families::ConicPoint;
use crate::mechanism::Mechanism;
use crate::options::VerifyMode;
use leontief_audit as audit;
use leontief_audit::verify::{Merit, Property, Shares};
use leontief_core::{Allocation, Instance, Verification};
use leontief_highs::Highs;

/// Check `a` against its mechanism's defining property.
pub fn verify(
    backend: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    a: &Allocation,
    mode: VerifyMode,
) -> anyhow::Result<Verification> {
    let max_min = |shares, pooled| Property::MaxMin { shares, pooled };
    let property = match mechanism {
        Mechanism::Drf => max_min(Shares::Dominant, true),
        Mechanism::Drfh => max_min(Shares::Dominant, false),
        Mechanism::Kdf { k } => max_min(Shares::KDominant(*k), false),
        Mechanism::Tsf => max_min(Shares::TaskShare, false),
        Mechanism::NaiveDrf => Property::PerServerMaxMin,
        Mechanism::Hdrf | Mechanism::Hdrfh => Property::Hierarchy { naive: false },
        Mechanism::HdrfNaive => Property::Hierarchy { naive: true },
        Mechanism::YarnFair | Mechanism::Kai | Mechanism::VolcanoProportion | Mechanism::Kueue => {
            Property::Scheduler
        }
        Mechanism::Nfc => Property::MaxTasks,
        Mechanism::FirstFit
        | Mechanism::BestFit { .. }
        | Mechanism::Slots { .. }
        | Mechanism::KdfOnline { .. } => Property::WholeTasks,
        Mechanism::BbfEg { .. } => Property::Bbf { ode: false },
        Mechanism::BbfOde { .. } => Property::Bbf { ode: true },
        Mechanism::Psdsf { .. } => Property::Psdsf,
        Mechanism::Vds { alpha, .. } if *alpha != 1.0 => Property::Vds { alpha: *alpha },
        Mechanism::Fds { .. }
        | Mechanism::Gfj { .. }
        | Mechanism::Pnorm { .. }
        | Mechanism::Vds { .. } => {
            let ConicPoint {
                family,
                beta,
                lambda,
                alpha_form,
            } = mechanism
                .conic()
                .ok_or_else(|| anyhow::anyhow!("{} is not a conic program", mechanism.name()))?;
            // The trivial case beta = 1 (not the alpha form) maximises S;
            // alpha = 1 is M = sum w log s.
            let merit = if beta == 1.0 && alpha_form {
                Merit::Log
            } else if beta == 1.0 {
                Merit::Family {
                    family,
                    beta: 1.0,
                    lambda: 0.0,
                }
            } else {
                Merit::Family {
                    family,
                    beta,
                    lambda,
                }
            };
            // Off region N the merit increases in every share, so its
            // maximiser is Pareto optimal.
            let pareto = alpha_form
                || matches!(
                    leontief_fds::classify(beta, lambda),
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
