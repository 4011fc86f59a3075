//! `leontief import`: a real cluster snapshot as an instance and its
//! allocation.

use crate::args::{AlibabaGpuArgs, GoogleTraceArgs, KubernetesArgs, KueueArgs, YarnArgs};
use crate::failure::{bad_input, Failure};
use anyhow::Context;
use leontief::audit::AllocationFormat;
use leontief::import::{
    alibaba_gpu as read_alibaba, allocation_csv, google_trace as read_trace, kubernetes as read,
    AlibabaOptions, Imported, KubernetesOptions, TraceOptions,
};
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
    check_outputs(&args.instance, &args.allocation)?;
    let nodes = read_file(&args.nodes)?;
    let pods = read_file(&args.pods)?;
    let imported = read(&nodes, &pods, &options)?;
    write(&imported, &args.instance, &args.allocation)
}

fn open(p: &Path) -> Result<std::io::BufReader<std::fs::File>, Failure> {
    std::fs::File::open(p)
        .map(std::io::BufReader::new)
        .map_err(|e| bad_input(format!("{}: {e}", p.display())))
}

pub(crate) fn google_trace(args: &GoogleTraceArgs) -> Result<(), Failure> {
    let options = TraceOptions {
        at: args.at,
        group_by: args.group_by.parse()?,
        merge: args.merge.parse()?,
        uncapped: args.uncapped,
    };
    check_outputs(&args.instance, &args.allocation)?;
    let imported = read_trace(
        open(&args.task_events)?,
        &args.task_events.display().to_string(),
        open(&args.machines)?,
        &args.machines.display().to_string(),
        &options,
    )?;
    write(&imported, &args.instance, &args.allocation)
}

pub(crate) fn alibaba_gpu(args: &AlibabaGpuArgs) -> Result<(), Failure> {
    crate::output::check_file("--instance", &args.instance)?;
    if args.at.is_some_and(|t| !t.is_finite()) {
        return Err(bad_input("--at must be a finite number of seconds"));
    }
    let queues_by_qos = match args.queues.as_str() {
        "none" => false,
        "qos" => true,
        other => return Err(bad_input(format!("--queues {other}: use none or qos"))),
    };
    let options = AlibabaOptions {
        at: args.at,
        group_by: args.group_by.parse()?,
        queues_by_qos,
    };
    let imported = read_alibaba(
        open(&args.nodes)?,
        &args.nodes.display().to_string(),
        open(&args.pods)?,
        &args.pods.display().to_string(),
        &options,
    )?;
    write_instance(&imported, &args.instance)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&imported.summary).context("serialising")?
    );
    Ok(())
}

pub(crate) fn kueue(args: &KueueArgs) -> Result<(), Failure> {
    check_outputs(&args.instance, &args.allocation)?;
    let local = args.local_queues.as_deref().map(read_file).transpose()?;
    let imported = leontief::import::kueue(
        &read_file(&args.cluster_queues)?,
        &read_file(&args.cohorts)?,
        &read_file(&args.workloads)?,
        local.as_deref(),
    )?;
    write(&imported, &args.instance, &args.allocation)
}

pub(crate) fn yarn(args: &YarnArgs) -> Result<(), Failure> {
    check_outputs(&args.instance, &args.allocation)?;
    let cluster = match (&args.metrics, &args.capacity) {
        (Some(p), _) => leontief::import::cluster_metrics(&read_file(p)?)?,
        (None, Some(c)) => {
            let parts: Vec<f64> = c
                .split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad_input(format!("--capacity {c}: give MB,VCORES")))?;
            match parts.as_slice() {
                [mb, vc] if *mb > 0.0 && *vc > 0.0 && mb.is_finite() && vc.is_finite() => {
                    [*mb, *vc]
                }
                _ => {
                    return Err(bad_input(format!(
                        "--capacity {c}: give MB,VCORES, both > 0"
                    )))
                }
            }
        }
        (None, None) => {
            return Err(bad_input(
                "give --metrics METRICS.json or --capacity MB,VCORES",
            ))
        }
    };
    let imported = leontief::import::yarn(
        &read_file(&args.allocation_file)?,
        &read_file(&args.apps)?,
        cluster,
    )?;
    write(&imported, &args.instance, &args.allocation)
}

fn check_outputs(instance: &Path, allocation: &Path) -> Result<(), Failure> {
    crate::output::check_file("--instance", instance)?;
    crate::output::check_file("--allocation", allocation)
}

/// Write the instance and the allocation; print the summary.
fn write(imported: &Imported, instance: &Path, allocation: &Path) -> Result<(), Failure> {
    // The instance must be one leontief accepts (an empty cluster, a
    // node without allocatable...): say so here, not at the audit.
    write_instance(imported, instance)?;
    let text = match AllocationFormat::from_path(allocation) {
        AllocationFormat::Csv => allocation_csv(&imported.instance, &imported.tasks),
        AllocationFormat::Json => {
            serde_json::to_string(&serde_json::json!({ "tasks": imported.tasks }))
                .context("serialising")?
                + "\n"
        }
    };
    crate::output::write("--allocation", allocation, &text)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&imported.summary).context("serialising")?
    );
    Ok(())
}

/// Write the instance, after checking that leontief accepts it (an empty
/// cluster, a node without allocatable...: said here, not at the audit).
fn write_instance(imported: &Imported, instance: &Path) -> Result<(), Failure> {
    leontief::Instance::new(imported.instance.clone())
        .map_err(|e| bad_input(format!("the snapshot is not a valid instance: {e}")))?;
    let text = serde_json::to_string_pretty(&imported.instance).context("serialising")?;
    crate::output::write("--instance", instance, &(text + "\n"))
}
