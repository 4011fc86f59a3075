//! `leontief import`: a real cluster snapshot as an instance and its
//! allocation.

use crate::args::KubernetesArgs;
use crate::failure::{bad_input, Failure};
use anyhow::Context;
use leontief::audit::AllocationFormat;
use leontief::import::{allocation_csv, kubernetes as read, KubernetesOptions};
use std::path::Path;

fn read_file(p: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(p).map_err(|e| bad_input(format!("{}: {e}", p.display())))
}

pub(crate) fn kubernetes(args: &KubernetesArgs) -> Result<(), Failure> {
    let options = KubernetesOptions {
        group_by: args.group_by.parse()?,
        merge: args.merge.parse()?,
        resources: args.resources.as_ref().map(|r| {
            r.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        }),
        uncapped: args.uncapped,
    };
    let nodes = read_file(&args.nodes)?;
    let pods = read_file(&args.pods)?;
    let imported = read(&nodes, &pods, &options)?;
    // The instance must be one leontief accepts (an empty cluster, a
    // node without allocatable...): say so here, not at the audit.
    leontief::Instance::new(imported.instance.clone())
        .map_err(|e| bad_input(format!("the snapshot is not a valid instance: {e}")))?;
    let instance = serde_json::to_string_pretty(&imported.instance).context("serialising")?;
    std::fs::write(&args.instance, instance + "\n")
        .with_context(|| format!("writing {}", args.instance.display()))?;
    let allocation = match AllocationFormat::from_path(&args.allocation) {
        AllocationFormat::Csv => allocation_csv(&imported.instance, &imported.tasks),
        AllocationFormat::Json => {
            serde_json::to_string(&serde_json::json!({ "tasks": imported.tasks }))
                .context("serialising")?
                + "\n"
        }
    };
    std::fs::write(&args.allocation, allocation)
        .with_context(|| format!("writing {}", args.allocation.display()))?;
    println!(
        "{}",
        serde_json::to_string_pretty(&imported.summary).context("serialising")?
    );
    Ok(())
}
