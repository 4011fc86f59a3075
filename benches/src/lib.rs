//! Shared pieces of the benches: the instance families and memory readings.

use leontief_core::{generate, Instance};

/// The two server families of the DRFH benches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The Google cell of Table I (10 classes, 12,583 servers), whatever k.
    GoogleCell,
    /// k servers, no two alike.
    Heterogeneous,
}

/// The instance of `family` with `users` users and `servers` servers
/// (seed 1).
pub fn instance(family: Family, users: usize, servers: usize) -> Instance {
    match family {
        Family::GoogleCell => generate::google_cell(users, 1),
        Family::Heterogeneous => generate::heterogeneous(users, servers, 2, 1),
    }
}

/// Peak resident memory of this process so far, in bytes (Linux VmHWM).
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Current resident memory, in bytes (Linux VmRSS).
pub fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Bytes held by a problem's arrays.
pub fn problem_bytes(p: &leontief_model::Problem) -> u64 {
    let f = std::mem::size_of::<f64>() as u64;
    let u = std::mem::size_of::<usize>() as u64;
    (p.col_cost.len() as u64 * 3 + p.row_lower.len() as u64 * 2 + p.a_value.len() as u64) * f
        + (p.a_index.len() as u64 + p.a_start.len() as u64) * u
}

/// The Google cell with `users` users whose seeded demands are divided so
/// that about `tasks` whole tasks fit (each task's mean global dominant
/// share becomes 1 / tasks).
pub fn scaled_cell(users: usize, tasks: f64) -> Instance {
    let g = generate::google_cell(users, 1);
    let mean_mu: f64 = g.user_ids().map(|n| g.mu(n)).sum::<f64>() / users as f64;
    let factor = (tasks * mean_mu).max(1.0);
    let mut raw = g.to_raw();
    for u in &mut raw.users {
        for d in &mut u.demand {
            *d /= factor;
        }
    }
    Instance::new(raw).expect("scaled demands stay valid")
}

/// A simulated day on `cluster`: about `events` / 3 tasks (three
/// task_events each: SUBMIT, SCHEDULE, FINISH) from 1,000 users, jobs of
/// 1 to 200 tasks (log-uniform), per-task demands log-uniform in
/// [0.02, 0.3] of the largest server, running times 5 min to 4 h, arrivals
/// over the whole day (seed 1).
pub fn day_workload(
    cluster: &leontief_sim::sim::Cluster,
    events: f64,
) -> leontief_sim::workload::Workload {
    let tasks = (events / 3.0).round();
    // log-uniform on [1, 201): about 200 / ln 201 = 37.7 tasks per job.
    let spec = leontief_sim::workload::SyntheticSpec {
        users: 1000,
        jobs: (tasks / 37.7).round().max(1.0) as usize,
        arrival_window: 86_400.0,
        horizon: 86_400.0,
        max_tasks: 200,
        duration: [300.0, 14_400.0],
        demand: [0.02, 0.3],
        seed: 1,
    };
    spec.generate(&cluster.resources).expect("a valid spec")
}
