//! Seeded instances by kind, with their sizes checked: what `leontief
//! generate` and `pyleontief.generate` both call.

use crate::error::Error;
use crate::mechanism::ParamError;
use leontief_core::{generate, Instance};

/// The most users, or servers, a generated instance has.
pub const MAX_GENERATED_SIZE: usize = 1_000_000;
/// The most user-server pairs (users x servers; placement: users x
/// eligible) a generated instance has: 10^9, ten times the largest
/// instance the benches solve.
pub const MAX_GENERATED_PAIRS: usize = 1_000_000_000;
/// The most resources a generated instance has.
pub const MAX_GENERATED_RESOURCES: usize = 64;

fn in_range(parameter: &'static str, v: usize, most: usize) -> Result<(), Error> {
    let reason = if v == 0 {
        "must be >= 1".to_string()
    } else if v > most {
        format!("must be at most {most}")
    } else {
        return Ok(());
    };
    Err(ParamError::Invalid {
        parameter,
        value: v.to_string(),
        reason,
    }
    .into())
}

fn at_least_one(parameter: &'static str, v: usize) -> Result<(), Error> {
    in_range(parameter, v, usize::MAX)
}

fn pairs_in_range(users: usize, per_user: usize) -> Result<(), Error> {
    match users.checked_mul(per_user) {
        Some(p) if p <= MAX_GENERATED_PAIRS => Ok(()),
        _ => Err(ParamError::Invalid {
            parameter: "users",
            value: users.to_string(),
            reason: format!(
                "{users} users x {per_user} servers each is above {MAX_GENERATED_PAIRS} user-server pairs"
            ),
        }
        .into()),
    }
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
        "google-cell" => {
            in_range("users", users, MAX_GENERATED_SIZE)?;
            Ok(generate::google_cell(users, seed))
        }
        "heterogeneous" | "placement" => {
            in_range("users", users, MAX_GENERATED_SIZE)?;
            in_range("servers", servers, MAX_GENERATED_SIZE)?;
            in_range("resources", resources, MAX_GENERATED_RESOURCES)?;
            if kind == "heterogeneous" {
                pairs_in_range(users, servers)?;
                return Ok(generate::heterogeneous(users, servers, resources, seed));
            }
            at_least_one("eligible", eligible)?;
            pairs_in_range(users, eligible)?;
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
        "shaped" => generated_shaped(users, servers, resources, seed, ""),
        other => Err(Error::Input(format!(
            "unknown generator {other} (google-cell, heterogeneous, placement, shaped)"
        ))),
    }
}

/// `shaped`: the shapes users meet beyond `heterogeneous`
/// ([`generate::Family`]: capacity spread, demand tails, a GPU-like
/// resource most servers lack, weights, caps, placement by attribute or
/// at random), read from `shape` (`capacity=pools:4,gpu=0.2,...`; see
/// [`generate::Family::from_spec`]) over `users` x `servers` x
/// `resources`. A bad spec is refused naming its key.
pub fn generated_shaped(
    users: usize,
    servers: usize,
    resources: usize,
    seed: u64,
    shape: &str,
) -> Result<Instance, Error> {
    in_range("users", users, MAX_GENERATED_SIZE)?;
    in_range("servers", servers, MAX_GENERATED_SIZE)?;
    in_range("resources", resources, MAX_GENERATED_RESOURCES)?;
    pairs_in_range(users, servers)?;
    let family = generate::Family::new(users, servers, resources, seed)
        .from_spec(shape)
        .map_err(|reason| ParamError::Invalid {
            parameter: "shape",
            value: shape.to_string(),
            reason,
        })?;
    Ok(generate::family(&family))
}
