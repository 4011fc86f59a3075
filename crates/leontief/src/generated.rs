//! Seeded instances by kind, with their sizes checked: what `leontief
//! generate` and `pyleontief.generate` both call.

use crate::error::Error;
use crate::mechanism::ParamError;
use leontief_core::{generate, Instance};

fn at_least_one(parameter: &'static str, v: usize) -> Result<(), Error> {
    if v == 0 {
        return Err(ParamError::Invalid {
            parameter,
            value: "0".into(),
            reason: "must be >= 1".into(),
        }
        .into());
    }
    Ok(())
}

/// A seeded instance: `google-cell` (Table I of 000; `users` only),
/// `heterogeneous` (`servers`, `resources`) or `placement` (with
/// `eligible` random servers per user, at most `servers`).
pub fn generated(
    kind: &str,
    users: usize,
    servers: usize,
    resources: usize,
    seed: u64,
    eligible: usize,
) -> Result<Instance, Error> {
    match kind {
        "google-cell" => Ok(generate::google_cell(users, seed)),
        "heterogeneous" | "placement" => {
            at_least_one("users", users)?;
            at_least_one("servers", servers)?;
            at_least_one("resources", resources)?;
            if kind == "heterogeneous" {
                return Ok(generate::heterogeneous(users, servers, resources, seed));
            }
            at_least_one("eligible", eligible)?;
            if eligible > servers {
                return Err(ParamError::Invalid {
                    parameter: "eligible",
                    value: eligible.to_string(),
                    reason: format!("a user cannot be eligible on more than the {servers} servers"),
                }
                .into());
            }
            Ok(generate::placement(
                users, servers, resources, eligible, seed,
            ))
        }
        other => Err(Error::Input(format!(
            "unknown generator {other} (google-cell, heterogeneous, placement)"
        ))),
    }
}
