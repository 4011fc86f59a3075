//! What can go wrong before or while a mechanism runs. A solver status
//! (optimal, infeasible, time limit, ...) is not an error: it is in the
//! [`Solution`](crate::Solution). `Err` means the mechanism could not run.

use crate::mechanism::ParamError;

/// Why a call could not produce an answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A mechanism parameter is missing, out of range, or does not apply.
    #[error(transparent)]
    Parameter(#[from] ParamError),
    /// The instance (or another input) is not acceptable for this call,
    /// e.g. more than a heuristic's task limit; the message names what.
    #[error("{0}")]
    Input(String),
    /// A solver back end failed (a native call, a problem too large for
    /// its index type, a cone kind it does not take).
    #[error("the solver could not run: {0}")]
    Backend(#[from] leontief_model::BackendError),
    /// The machine or a step around the solvers could not run (I/O, a
    /// reference solve, the audit's own checks).
    #[error("{0}")]
    Run(String),
}

impl Error {
    /// True for bad input (nothing was solved); false when a run failed.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::Parameter(_) | Error::Input(_))
    }
}

impl From<anyhow::Error> for Error {
    fn from(e: anyhow::Error) -> Self {
        Error::Run(format!("{e:#}"))
    }
}

/// Bad input with a message.
pub(crate) fn bad_input(message: impl Into<String>) -> Error {
    Error::Input(message.into())
}

/// A setting a back end refuses, as the parameter of the call it came
/// from (`field` as the back end names it).
pub(crate) fn refused_setting(parameter: &'static str, value: String, reason: String) -> Error {
    Error::Parameter(ParamError::Invalid {
        parameter,
        value,
        reason,
    })
}

/// A failed run with a message.
pub(crate) fn could_not_run(message: impl Into<String>) -> Error {
    Error::Run(message.into())
}
