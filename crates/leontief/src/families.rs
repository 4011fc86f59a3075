//! What a [`Mechanism`]'s parameters become at its family crate's entry
//! point, where they are not the same values: the conic family's
//! (beta, lambda) point, the Best-Fit normaliser's index, the online
//! k-DF policy. The dispatch matches on [`Mechanism`] itself.

use crate::error::Error;
use crate::mechanism::{Fairness, Mechanism, OnFull, ParamError};
use leontief_core::Instance;

/// A member of the fairness-efficiency family on the conic layer
/// (`leontief-fds`): FDS, GFJ or p-norm at (beta, lambda).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ConicPoint {
    /// FDS, GFJ or p-norm.
    pub(crate) family: leontief_fds::Family,
    /// beta (= alpha on the line).
    pub(crate) beta: f64,
    /// lambda.
    pub(crate) lambda: f64,
    /// Given as alpha (the alpha-fair form, which includes alpha = 1).
    pub(crate) alpha_form: bool,
}

impl ConicPoint {
    /// `family` at the point `f` names.
    pub(crate) fn of(family: leontief_fds::Family, f: &Fairness) -> ConicPoint {
        let (beta, lambda) = f.beta_lambda();
        ConicPoint {
            family,
            beta,
            lambda,
            alpha_form: matches!(f, Fairness::Alpha(_)),
        }
    }

    /// alphaPF-VDS at alpha = 1: gamma drops out of every server's
    /// utility, and the equilibrium is the proportional-fairness optimum
    /// (GFJ at alpha 1).
    pub(crate) fn vds_alpha_one() -> ConicPoint {
        ConicPoint {
            family: leontief_fds::Family::Gfj,
            beta: 1.0,
            lambda: 0.0,
            alpha_form: true,
        }
    }
}

impl Mechanism {
    /// The conic program this mechanism solves, if it is one: FDS, GFJ,
    /// p-norm, and alphaPF-VDS at alpha = 1.
    pub(crate) fn conic(&self) -> Option<ConicPoint> {
        use leontief_fds::Family;
        match self {
            Mechanism::Fds { fairness } => Some(ConicPoint::of(Family::Fds, fairness)),
            Mechanism::Gfj { fairness } => Some(ConicPoint::of(Family::Gfj, fairness)),
            Mechanism::Pnorm { p, fairness } => Some(ConicPoint::of(Family::PNorm(*p), fairness)),
            Mechanism::Vds { alpha, .. } if *alpha == 1.0 => Some(ConicPoint::vds_alpha_one()),
            _ => None,
        }
    }

    /// Best-Fit's normalising resource by index (`None`: the first);
    /// refused, naming it, when `instance` has no resource of that name.
    pub(crate) fn normaliser_index(
        name: Option<&str>,
        instance: &Instance,
    ) -> Result<usize, Error> {
        let Some(name) = name else {
            return Ok(0);
        };
        Ok(instance
            .resources()
            .iter()
            .position(|x| x == name)
            .ok_or_else(|| ParamError::Invalid {
                parameter: "normaliser",
                value: name.to_string(),
                reason: format!(
                    "is not a resource of the instance ({})",
                    instance.resources().join(", ")
                ),
            })?)
    }

    /// Online k-DF's policy for a task that does not fit.
    pub(crate) fn on_full(on_full: &OnFull) -> leontief_sim::OnFull {
        match on_full {
            OnFull::Stop => leontief_sim::OnFull::Stop,
            OnFull::Skip => leontief_sim::OnFull::Skip,
        }
    }
}
