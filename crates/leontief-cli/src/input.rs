//! Reading what the commands take: instances, mechanisms, the HiGHS back
//! end of the commands that call mechanism crates directly.

use crate::args::MechParams;
use crate::failure::{bad_input, Failure};
use leontief_core::{Instance, InstanceError};
use std::path::PathBuf;

pub(crate) fn load(path: &PathBuf) -> Result<Instance, Failure> {
    Instance::from_path(path).map_err(|e| match e {
        InstanceError::Io { .. } => bad_input(e.to_string()),
        _ => bad_input(format!("{}: {e}", path.display())),
    })
}

/// The mechanism named as on the command line, with its flags.
pub fn mechanism(name: &str, params: &MechParams) -> Result<leontief::Mechanism, Failure> {
    Ok(leontief::Mechanism::from_params(
        name,
        &params.to_params()?,
    )?)
}

/// HiGHS with default settings, for the commands that call the mechanism
/// crates directly (simulate, the reproductions).
pub(crate) fn backend() -> Result<leontief_highs::Highs, Failure> {
    leontief_highs::Highs::new(leontief_highs::HighsSettings::default())
        .map_err(|e| bad_input(e.to_string()))
}
