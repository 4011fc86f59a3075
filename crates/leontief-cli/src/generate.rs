//! `leontief generate`: a seeded instance as JSON.

use crate::failure::{bad_input, Failure};
use anyhow::Context;

/// The command's arguments.
pub(crate) struct GenerateCmd {
    pub kind: String,
    pub users: usize,
    pub servers: Option<usize>,
    pub resources: Option<usize>,
    pub seed: u64,
    pub eligible: Option<usize>,
}

/// Write the generated instance to stdout.
pub(crate) fn cmd(c: &GenerateCmd) -> Result<(), Failure> {
    let GenerateCmd {
        kind,
        users,
        servers,
        resources,
        seed,
        eligible,
    } = c;
    let (users, seed) = (*users, *seed);
    // A flag the generator does not use is an error, not ignored.
    let given = [
        ("--servers", servers.is_some()),
        ("--resources", resources.is_some()),
        ("--eligible", eligible.is_some()),
    ];
    let uses = |flag: &str| match kind.as_str() {
        "google-cell" => false,
        "heterogeneous" => flag != "--eligible",
        _ => true,
    };
    if let Some((flag, _)) = given.iter().find(|(f, g)| *g && !uses(f)) {
        return Err(bad_input(format!(
            "{flag} does not apply to generate {kind}"
        )));
    }
    let servers = servers.unwrap_or(100);
    let resources = resources.unwrap_or(2);
    let eligible = eligible.unwrap_or(10);
    let inst = match kind.as_str() {
        "google-cell" => leontief_core::generate::google_cell(users, seed),
        "heterogeneous" => {
            if servers == 0 || resources == 0 || users == 0 {
                return Err(bad_input("--users, --servers and --resources must be >= 1"));
            }
            leontief_core::generate::heterogeneous(users, servers, resources, seed)
        }
        "placement" => {
            if servers == 0 || resources == 0 || users == 0 || eligible == 0 {
                return Err(bad_input(
                    "--users, --servers, --resources and --eligible must be >= 1",
                ));
            }
            if eligible > servers {
                return Err(bad_input(format!(
                    "--eligible {eligible}: a user cannot be eligible on more than the {servers} servers"
                )));
            }
            leontief_core::generate::placement(users, servers, resources, eligible, seed)
        }
        _ => {
            return Err(bad_input(format!(
                "unknown generator {kind} (google-cell, heterogeneous, placement)"
            )))
        }
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&inst.to_raw()).context("serialising")?
    );
    Ok(())
}
