//! The fluid engine: exact DRFH (or hierarchical DRFH over the
//! workload's queues, or a production scheduler's share algorithm over
//! them) at every event, processor sharing.

use super::*;
use crate::workload::Workload;
use leontief_core::{Instance, RawInstance, RawServer, RawUser};
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_model::LpBackend;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The fluid engine for `scheduler` (drfh, hdrfh, or a scheduler's share
/// algorithm), processor sharing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fluid<B: LpBackend>(
    backend: &B,
    scheduler: &Scheduler,
    cluster: &Cluster,
    workload: &Workload,
    horizon: f64,
    dt: f64,
    pool: &[f64],
    ledger: &mut Ledger,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<EngineOut, SimRunError> {
    let nu = workload.users.len();
    let m = cluster.resources.len();
    let classes = cluster.classes();
    let hierarchical = *scheduler != Scheduler::Drfh;
    let tasks = &workload.tasks;
    // Per user: outstanding tasks by virtual finish time, virtual clock,
    // demand sum, allocation x_n.
    let mut out: Vec<BinaryHeap<Reverse<(u64, usize)>>> = vec![BinaryHeap::new(); nu];
    let mut vclock = vec![0.0f64; nu];
    let mut dsum = vec![vec![0.0f64; m]; nu];
    let mut x = vec![0.0f64; nu];
    let max_server: Vec<f64> = (0..m)
        .map(|r| cluster.servers.iter().map(|s| s[r]).fold(0.0, f64::max))
        .collect();
    let mut next_arrival = 0usize;
    let mut next_sample = 0.0f64;
    let mut now = 0.0f64;
    let (mut events, mut solves) = (0u64, 0u64);
    let mut last_report = 0.0;
    // Only the task counts are read: no per-user explanations.
    let settings = MaxMinSettings {
        explain: false,
        ..MaxMinSettings::default()
    };
    loop {
        // Next completion: per user, the least virtual finish.
        let mut completion: Option<f64> = None;
        for n in 0..nu {
            if let (Some(Reverse((f, _))), true) = (out[n].peek(), x[n] > 0.0) {
                let rate = x[n] / out[n].len() as f64;
                let t = now + (f64::from_bits(*f) - vclock[n]).max(0.0) / rate;
                completion = next_time(completion, Some(t));
            }
        }
        let arrival = tasks.get(next_arrival).map(|t| t.submit);
        let Some(t) = next_time(arrival, completion).filter(|&t| t <= horizon) else {
            while next_sample <= horizon {
                ledger.sample(next_sample, pool);
                next_sample += dt;
            }
            advance_clocks(&mut vclock, &x, &out, horizon - now);
            break;
        };
        while next_sample < t {
            ledger.sample(next_sample, pool);
            next_sample += dt;
        }
        ledger.advance(t);
        advance_clocks(&mut vclock, &x, &out, t - now);
        now = t;
        events += 1;
        if t - last_report > horizon / 200.0 {
            progress(t);
            last_report = t;
        }
        // Completions: virtual finish reached (to rounding).
        for n in 0..nu {
            while let Some(&Reverse((f, id))) = out[n].peek() {
                let f = f64::from_bits(f);
                if f > vclock[n] + 1e-9 * f.abs().max(1.0) {
                    break;
                }
                out[n].pop();
                for (s, d) in dsum[n].iter_mut().zip(&tasks[id].demand) {
                    *s -= d;
                }
                ledger.finish(&tasks[id], t);
            }
            if out[n].is_empty() {
                dsum[n].iter_mut().for_each(|s| *s = 0.0);
                x[n] = 0.0;
            }
        }
        while next_arrival < tasks.len() && tasks[next_arrival].submit <= t {
            let id = next_arrival;
            next_arrival += 1;
            let task = &tasks[id];
            ledger.arrive(task);
            let n = task.user;
            if task
                .demand
                .iter()
                .zip(&max_server)
                .any(|(d, c)| *d > c * (1.0 + FIT_SLACK))
            {
                // Divisible tasks still need one server to hold a task.
                ledger.unschedulable[n] += 1;
                continue;
            }
            for (s, d) in dsum[n].iter_mut().zip(&task.demand) {
                *s += d;
            }
            out[n].push(Reverse((key(vclock[n] + task.duration), id)));
        }
        // The DRFH allocation of the users with outstanding tasks.
        let active: Vec<usize> = (0..nu).filter(|&n| !out[n].is_empty()).collect();
        x.iter_mut().for_each(|v| *v = 0.0);
        ledger.used.iter_mut().for_each(|u| *u = 0.0);
        ledger.dom.iter_mut().for_each(|d| *d = 0.0);
        if active.is_empty() {
            continue;
        }
        let raw = RawInstance {
            queues: (hierarchical && !workload.queues.is_empty()).then(|| workload.queues.clone()),
            quantum: None,
            name: None,
            description: None,
            resources: cluster.resources.clone(),
            servers: classes
                .iter()
                .enumerate()
                .map(|(c, (cap, count))| RawServer {
                    name: format!("c{c}"),
                    capacity: cap.clone(),
                    count: Some(*count),
                })
                .collect(),
            users: active
                .iter()
                .map(|&n| {
                    let k = out[n].len() as f64;
                    RawUser {
                        queue: workload
                            .user_queue
                            .get(n)
                            .cloned()
                            .flatten()
                            .filter(|_| hierarchical),
                        name: workload.users[n].clone(),
                        demand: dsum[n].iter().map(|s| (s / k).max(0.0)).collect(),
                        weight: Some(workload.weights[n]),
                        tasks: Some(k),
                        servers: None,
                        rank_weights: None,
                    }
                })
                .collect(),
        };
        let inst = Instance::new(raw).map_err(|e| SimRunError::Solve {
            time: t,
            reason: e.to_string(),
        })?;
        let a = if let Some(s) = scheduler.share() {
            leontief_sched::run(&inst, s).map_err(|e| SimRunError::Solve {
                time: t,
                reason: e.to_string(),
            })?
        } else if hierarchical {
            leontief_hier::solve(backend, &inst, leontief_hier::Variant::Hdrfh).map_err(|e| {
                SimRunError::Solve {
                    time: t,
                    reason: e.to_string(),
                }
            })?
        } else {
            leontief_drfh::drfh(backend, &inst, &settings).map_err(|e| SimRunError::Solve {
                time: t,
                reason: e.to_string(),
            })?
        };
        solves += 1;
        if !a.status.has_solution() {
            return Err(SimRunError::Solve {
                time: t,
                reason: format!("status {}", a.status),
            });
        }
        for (k, &n) in active.iter().enumerate() {
            x[n] = a.user_tasks[k].clamp(0.0, out[n].len() as f64);
            let kf = out[n].len() as f64;
            for (u, s) in ledger.used.iter_mut().zip(&dsum[n]) {
                *u += x[n] * s / kf;
            }
            ledger.dom[n] = x[n] * task_mu(&inst.users()[k].demand, pool);
        }
    }
    progress(horizon);
    let running: Vec<u64> = (0..nu)
        .map(|n| if x[n] > 0.0 { out[n].len() as u64 } else { 0 })
        .collect();
    let waiting: Vec<u64> = (0..nu)
        .map(|n| if x[n] > 0.0 { 0 } else { out[n].len() as u64 })
        .collect();
    let over = ledger
        .used
        .iter()
        .zip(pool)
        .map(|(u, c)| ((u - c) / c).max(0.0))
        .fold(0.0, f64::max);
    Ok((events, solves, over, running, waiting))
}

pub(crate) fn advance_clocks(
    vclock: &mut [f64],
    x: &[f64],
    out: &[BinaryHeap<Reverse<(u64, usize)>>],
    dt: f64,
) {
    if dt <= 0.0 {
        return;
    }
    for n in 0..vclock.len() {
        if x[n] > 0.0 && !out[n].is_empty() {
            vclock[n] += dt * x[n] / out[n].len() as f64;
        }
    }
}
