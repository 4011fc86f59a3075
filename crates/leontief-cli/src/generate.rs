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
    pub shape: Option<String>,
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
        shape,
    } = c;
    let (users, seed) = (*users, *seed);
    // A flag the generator does not use is an error, not ignored.
    let given = [
        ("--servers", servers.is_some()),
        ("--resources", resources.is_some()),
        ("--eligible", eligible.is_some()),
        ("--shape", shape.is_some()),
    ];
    let uses = |flag: &str| match kind.as_str() {
        "google-cell" => false,
        "heterogeneous" => flag != "--eligible" && flag != "--shape",
        "shaped" => flag != "--eligible",
        _ => flag != "--shape",
    };
    if let Some((flag, _)) = given.iter().find(|(f, g)| *g && !uses(f)) {
        return Err(bad_input(format!(
            "{flag} does not apply to generate {kind}"
        )));
    }
    let inst = if kind == "shaped" {
        leontief::generated_shaped(
            users,
            servers.unwrap_or(100),
            resources.unwrap_or(2),
            seed,
            shape.as_deref().unwrap_or(""),
        )?
    } else {
        leontief::generated(
            kind,
            users,
            servers.unwrap_or(100),
            resources.unwrap_or(2),
            seed,
            eligible.unwrap_or(10),
        )?
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&inst.to_raw()).context("serialising")?
    );
    Ok(())
}
