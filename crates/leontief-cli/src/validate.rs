//! `leontief validate`: check an instance and print what it holds.

use crate::failure::Failure;
use crate::input::load;
use anyhow::Context;
use std::path::PathBuf;

/// Print the instance's summary, or fail with every error.
pub(crate) fn cmd(instance: &PathBuf) -> Result<(), Failure> {
    let inst = load(instance)?;
    let summary = serde_json::json!({
        "valid": true,
        "users": inst.num_users(),
        "server_entries": inst.num_entries(),
        "servers": inst.num_physical_servers(),
        "classes": inst.servers().iter().filter(|s| s.count > 1).count(),
        "resources": inst.resources(),
        "total_capacity": inst.total_capacity(),
        "weighted_users": inst.users().iter().filter(|u| u.weight != 1.0).count(),
        "capped_users": inst.users().iter().filter(|u| u.tasks.is_some()).count(),
        "users_with_placement": inst.users().iter().filter(|u| u.servers.is_some()).count(),
        "resources_nobody_demands": inst.resource_ids()
            .filter(|&r| inst.users().iter().all(|u| u.demand[r.0] == 0.0))
            .map(|r| inst.resources()[r.0].clone()).collect::<Vec<_>>(),
        "users_who_cannot_run": inst.user_ids()
            .filter(|&n| !inst.server_ids().any(|i| inst.can_run_on(n, i)))
            .map(|n| inst.user(n).name.clone()).collect::<Vec<_>>(),
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&summary).context("serialising")?
    );
    Ok(())
}
