//! Why a mechanism of this crate could not run.

use leontief_model::BackendError;

/// A mechanism could not run.
#[derive(Debug, thiserror::Error)]
pub enum DrfhError {
    /// The backend could not run.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A mechanism parameter is out of range.
    #[error("parameter {name} {reason}")]
    InvalidParameter {
        /// Parameter name (as on the command line).
        name: String,
        /// What is wrong.
        reason: String,
    },
}
