//! The Alibaba GPU trace's pod list as a simulator workload: each task
//! arrives at its `creation_time` and, once placed, runs for
//! `deletion_time - scheduled_time` seconds (to the end of the trace's
//! window when it was never deleted); requests as `import alibaba-gpu`
//! reads them (cpu in cores, memory in MiB, gpu in GPUs or a fraction of
//! one); users by task shape or by QoS class and shape.
//!
//! Tasks never scheduled in the trace (no running time to replay) are left
//! out and counted in the workload's notes. The simulator has no
//! placement lists: a task's `gpu_spec` (GPU models) is not honoured, and
//! the notes say how many tasks had one.

use super::alibaba::{AlibabaGroup, Requests, Table};
use crate::error::{bad_input, Error};
use leontief_sim::workload::{Task, Workload};
use std::collections::HashMap;
use std::io::Read;

/// Read the pod list `pods` (named `pods_file` in messages) as a workload.
pub fn alibaba_workload(
    pods: impl Read,
    pods_file: &str,
    group_by: AlibabaGroup,
) -> Result<Workload, Error> {
    let pt = Table::read(pods, pods_file)?;
    if pt.column("sn").is_some() {
        return Err(bad_input(format!(
            "{pods_file} looks like a node list (it has sn): a workload is a pod list"
        )));
    }
    let request = Requests::find(&pt)?;
    let (created, scheduled, deleted) = (
        pt.required("creation_time")?,
        pt.required("scheduled_time")?,
        pt.required("deletion_time")?,
    );
    let (name_c, spec_c, qos_c) = (pt.column("name"), pt.column("gpu_spec"), pt.column("qos"));
    // The window: up to the last time the list names.
    let mut end = 0.0f64;
    let mut rows = Vec::with_capacity(pt.rows.len());
    for j in 0..pt.rows.len() {
        let line = j + 2;
        let c = pt.time(j, Some(created), "creation_time")?.ok_or_else(|| {
            bad_input(format!(
                "{pods_file} line {line} column creation_time: empty (every task arrives at some time)"
            ))
        })?;
        let s = pt.time(j, Some(scheduled), "scheduled_time")?;
        let d = pt.time(j, Some(deleted), "deletion_time")?;
        if let (Some(s), Some(d)) = (s, d) {
            if d < s {
                return Err(bad_input(format!(
                    "{pods_file} line {line} column deletion_time: {d} is before scheduled_time {s}"
                )));
            }
        }
        if let Some(s) = s {
            if s < c {
                return Err(bad_input(format!(
                    "{pods_file} line {line} column scheduled_time: {s} is before creation_time {c}"
                )));
            }
        }
        end = end.max(c).max(s.unwrap_or(0.0)).max(d.unwrap_or(0.0));
        let demand = request.of(&pt, j)?;
        rows.push((j, c, s, d, demand));
    }
    let mut users: Vec<String> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut tasks = Vec::with_capacity(rows.len());
    let (mut unscheduled, mut empty, mut models) = (0usize, 0usize, 0usize);
    for (j, c, s, d, demand) in rows {
        let Some(s) = s else {
            unscheduled += 1;
            continue;
        };
        if demand.iter().all(|&v| v == 0.0) {
            empty += 1;
            continue;
        }
        let spec = pt.text(j, spec_c);
        if !spec.is_empty() && demand[2] > 0.0 {
            models += 1;
        }
        let shape = format!("cpu{}-mem{}-gpu{}", demand[0], demand[1], demand[2]);
        let key = match group_by {
            AlibabaGroup::Shape => shape,
            AlibabaGroup::Qos => format!("{}/{shape}", pt.text(j, qos_c)),
            AlibabaGroup::None => pt.text(j, name_c).to_string(),
        };
        let user = *by_key.entry(key.clone()).or_insert_with(|| {
            users.push(key);
            users.len() - 1
        });
        tasks.push(Task {
            user,
            job: user,
            submit: c,
            duration: d.unwrap_or(end) - s,
            demand,
        });
    }
    tasks.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.job.cmp(&b.job)));
    let mut notes = Vec::new();
    if unscheduled > 0 {
        notes.push(format!(
            "{unscheduled} tasks never scheduled in the trace (no running time) left out"
        ));
    }
    if empty > 0 {
        notes.push(format!("{empty} tasks requesting nothing left out"));
    }
    if models > 0 {
        notes.push(format!(
            "{models} tasks name GPU models (gpu_spec); the simulator places them on any node with room"
        ));
    }
    Ok(Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: vec!["cpu".into(), "memory".into(), "gpu".into()],
        weights: vec![1.0; users.len()],
        jobs: (0..users.len() as u64).collect(),
        users,
        tasks,
        end,
        notes,
    })
}
