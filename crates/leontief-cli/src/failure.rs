//! A command's failure and its exit code (2 bad input, 1 could not run),
//! from the library's errors.

use crate::args::MECHANISMS;

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// Exit code: 2 bad input, 1 could not run.
    pub code: u8,
    /// What to print.
    pub message: String,
}

pub fn bad_input(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure {
            code: 1,
            message: format!("{e:#}"),
        }
    }
}

impl From<leontief::ParamError> for Failure {
    fn from(e: leontief::ParamError) -> Self {
        let mut message = e.render(true);
        if matches!(e, leontief::ParamError::UnknownMechanism(_)) {
            message = format!("{message}\n{}", MECHANISMS);
        }
        bad_input(message)
    }
}

impl From<leontief::Error> for Failure {
    fn from(e: leontief::Error) -> Self {
        match e {
            leontief::Error::Parameter(p) => p.into(),
            leontief::Error::Input(m) => bad_input(m),
            e @ leontief::Error::Backend(_) => Failure {
                code: 1,
                message: e.to_string(),
            },
            leontief::Error::Run(message) => Failure { code: 1, message },
        }
    }
}
