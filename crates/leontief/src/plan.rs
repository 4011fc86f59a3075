//! The solver-side form of a [`Mechanism`]: which code path runs it.

use crate::error::Error;
use crate::mechanism::{Fairness, Mechanism, OnFull, ParamError, PsdsfSelect, VdsSchedule};
use crate::{bbf::BbfKind, mechanism::OdeVariable};
use leontief_core::Instance;
use leontief_drfh::Mechanism as Exact;
use leontief_sim::Heuristic;

/// A mechanism of any family, as the dispatch runs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mech {
    /// An exact mechanism of the max-min family.
    Exact(Exact),
    /// A whole-task heuristic.
    Heuristic(Heuristic),
    /// A fairness-efficiency family member on the conic layer.
    Conic {
        /// FDS, GFJ or p-norm.
        family: leontief_fds::Family,
        /// beta (= alpha on the line).
        beta: f64,
        /// lambda.
        lambda: f64,
        /// Given as alpha (the alpha-fair form, which includes alpha = 1).
        alpha_form: bool,
    },
    /// Bottleneck-based fairness.
    Bbf(BbfKind),
    /// PS-DSF (004) by best responses, with the Definition-4 certificate;
    /// `max_tasks`: the member with most tasks (MILP).
    Psdsf {
        /// select max-tasks.
        max_tasks: bool,
        /// False with select sweeps (no exact finish).
        exact_finish: bool,
    },
    /// alphaPF-VDS (004) for alpha > 1 (alpha = 1 is `Conic`).
    Vds {
        /// alpha > 1.
        alpha: f64,
        /// Damped Jacobi instead of Gauss-Seidel.
        jacobi: Option<f64>,
    },
}

fn conic(family: leontief_fds::Family, f: &Fairness) -> Mech {
    let (beta, lambda) = f.beta_lambda();
    Mech::Conic {
        family,
        beta,
        lambda,
        alpha_form: matches!(f, Fairness::Alpha(_)),
    }
}

/// How `m` runs on `instance` (the Best-Fit normaliser resolved against
/// its resources).
pub(crate) fn plan(m: &Mechanism, instance: &Instance) -> Result<Mech, Error> {
    m.validate()?;
    Ok(match m {
        Mechanism::Drf => Mech::Exact(Exact::Drf),
        Mechanism::Drfh => Mech::Exact(Exact::Drfh),
        Mechanism::Kdf { k } => Mech::Exact(Exact::Kdf { k: *k }),
        Mechanism::NaiveDrf => Mech::Exact(Exact::NaiveDrf),
        Mechanism::Nfc => Mech::Exact(Exact::Nfc),
        Mechanism::Tsf => Mech::Exact(Exact::Tsf),
        Mechanism::FirstFit => Mech::Heuristic(Heuristic::FirstFit),
        Mechanism::BestFit { normaliser } => {
            let normaliser = match normaliser {
                None => 0,
                Some(name) => instance
                    .resources()
                    .iter()
                    .position(|x| x == name)
                    .ok_or_else(|| ParamError::Invalid {
                        parameter: "normaliser",
                        value: name.clone(),
                        reason: format!(
                            "is not a resource of the instance ({})",
                            instance.resources().join(", ")
                        ),
                    })?,
            };
            Mech::Heuristic(Heuristic::BestFit { normaliser })
        }
        Mechanism::Slots { slots } => Mech::Heuristic(Heuristic::Slots { slots: *slots }),
        Mechanism::KdfOnline { k, on_full } => Mech::Heuristic(Heuristic::KdfOnline {
            k: *k,
            on_full: match on_full {
                OnFull::Stop => leontief_sim::OnFull::Stop,
                OnFull::Skip => leontief_sim::OnFull::Skip,
            },
        }),
        Mechanism::Fds { fairness } => conic(leontief_fds::Family::Fds, fairness),
        Mechanism::Gfj { fairness } => conic(leontief_fds::Family::Gfj, fairness),
        Mechanism::Pnorm { p, fairness } => conic(leontief_fds::Family::PNorm(*p), fairness),
        Mechanism::BbfEg { method } => Mech::Bbf(BbfKind::Eg { method: *method }),
        Mechanism::BbfOde { by, trajectory } => Mech::Bbf(BbfKind::Ode {
            by_t: *by == OdeVariable::T,
            trajectory: trajectory.clone(),
        }),
        Mechanism::Psdsf { select } => Mech::Psdsf {
            max_tasks: *select == PsdsfSelect::MaxTasks,
            exact_finish: *select != PsdsfSelect::Sweeps,
        },
        // alpha = 1: gamma drops out of every server's utility, and the
        // equilibrium is the proportional-fairness optimum (GFJ, alpha 1).
        Mechanism::Vds { alpha, .. } if *alpha == 1.0 => Mech::Conic {
            family: leontief_fds::Family::Gfj,
            beta: 1.0,
            lambda: 0.0,
            alpha_form: true,
        },
        Mechanism::Vds { alpha, schedule } => Mech::Vds {
            alpha: *alpha,
            jacobi: match schedule {
                VdsSchedule::GaussSeidel => None,
                VdsSchedule::Jacobi(t) => Some(*t),
            },
        },
    })
}
