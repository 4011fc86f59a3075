//! Where (beta, lambda) lies: the regions of the plane, and the refusals.

use leontief_model::BackendError;

/// Where (beta, lambda) lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Region {
    /// lambda = (1-beta)/beta.
    AlphaFair,
    /// 0 < beta < 1, lambda > (1-beta)/beta.
    A,
    /// beta > 1, lambda < (1-beta)/beta.
    B,
    /// Not quasi-concave in general.
    N,
}

/// A parameter choice leontief refuses, or a region not built yet.
#[derive(Debug, thiserror::Error)]
pub enum FdsError {
    /// Refused parameters, with the reason.
    #[error("{0}")]
    Refused(String),
    /// The backend could not run.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The largest |beta| (and alpha) solved: see [`classify`].
pub const MAX_BETA: f64 = 50.0;

/// Classify (beta, lambda); refuse the degenerate, scale-free and invalid
/// choices with the reason. beta = 1 is [`Classified::Trivial`].
pub fn classify(beta: f64, lambda: f64) -> Result<Classified, FdsError> {
    if !beta.is_finite() || !lambda.is_finite() {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda {lambda}: both must be finite"
        )));
    }
    if beta == 0.0 {
        return Err(FdsError::Refused(
            "--beta 0: f_{beta,lambda} is undefined at beta = 0 (it divides by beta)".into(),
        ));
    }
    if beta.abs() > MAX_BETA {
        return Err(FdsError::Refused(format!(
            "--beta {beta}: |beta| must be at most {MAX_BETA}: beyond it the terms s^(1-beta) of users whose shares differ by a factor of 10 span more than floating point holds and no solver here is reliable (at beta = 100 Clarabel reported a wrong answer as optimal); as beta grows the alpha-fair line tends to max-min fairness: --mechanism drfh for fds"
        )));
    }
    if beta == 1.0 {
        return Ok(Classified::Trivial);
    }
    if lambda == 0.0 {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda 0 is scale-free: f is constant along rays, so its maximisers form a ray and none is singled out"
        )));
    }
    let sgn = if beta < 1.0 { 1.0 } else { -1.0 };
    if sgn * lambda < 0.0 {
        return Err(FdsError::Refused(format!(
            "--beta {beta} --lambda {lambda} is degenerate: sgn(1-beta) lambda < 0, so f grows without bound as the allocation shrinks to 0 and has no maximiser"
        )));
    }
    let line = (1.0 - beta) / beta;
    let region = if (lambda - line).abs() <= 1e-12 * line.abs().max(1.0) {
        Region::AlphaFair
    } else if beta > 0.0 && beta < 1.0 && lambda > line {
        Region::A
    } else if beta > 1.0 && lambda < line {
        Region::B
    } else {
        Region::N
    };
    Ok(Classified::Region(region))
}

/// The outcome of [`classify`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classified {
    /// beta = 1.
    Trivial,
    /// A region.
    Region(Region),
}
