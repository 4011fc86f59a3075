//! Each user alone on its dedicated cloud (Fig. 8 of 000).

use super::*;
use crate::workload::Workload;
use leontief_model::LpBackend;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The dedicated-cloud comparison of Sec. IV-D and Fig. 8 of 000: each
/// user alone, with its own tasks, on k/U of the k servers (at least one)
/// drawn without replacement from the cluster (seeded per user), under the
/// same scheduler and horizon. Fills `dedicated_completion_ratio`. Users
/// that submitted nothing are skipped. `done` is called after each user.
pub fn dedicated_clouds<B: LpBackend + Sync>(
    backend: &B,
    cluster: &Cluster,
    workload: &Workload,
    settings: &SimSettings,
    result: &mut SimResult,
    seed: u64,
    done: &(dyn Fn() + Sync),
) -> Result<(), SimRunError> {
    use rayon::prelude::*;
    let active: Vec<usize> = (0..workload.users.len())
        .filter(|&n| result.users[n].submitted > 0)
        .collect();
    if active.is_empty() {
        return Ok(());
    }
    let per_user = (cluster.servers.len() / active.len()).max(1);
    let settings = SimSettings {
        horizon: Some(result.horizon),
        sample_interval: Some(result.horizon),
        ..settings.clone()
    };
    let ratios: Vec<Result<(usize, f64), SimRunError>> = active
        .par_iter()
        .map(|&n| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (n as u64).wrapping_mul(0x9e37_79b9));
            let picks = rand::seq::index::sample(&mut rng, cluster.servers.len(), per_user);
            let sub = Cluster {
                resources: cluster.resources.clone(),
                servers: picks
                    .into_iter()
                    .map(|j| cluster.servers[j].clone())
                    .collect(),
            };
            let mut jobs_map = std::collections::HashMap::new();
            let mut jobs = Vec::new();
            let tasks = workload
                .tasks
                .iter()
                .filter(|t| t.user == n)
                .map(|t| {
                    let job = *jobs_map.entry(t.job).or_insert_with(|| {
                        jobs.push(workload.jobs[t.job]);
                        jobs.len() - 1
                    });
                    crate::workload::Task {
                        user: 0,
                        job,
                        ..t.clone()
                    }
                })
                .collect();
            let alone = Workload {
                queues: Default::default(),
                user_queue: Default::default(),
                resources: workload.resources.clone(),
                users: vec![workload.users[n].clone()],
                weights: vec![1.0],
                jobs,
                tasks,
                end: workload.end,
                notes: Vec::new(),
            };
            let r = simulate(backend, &sub, &alone, &settings, &|_| {})?;
            done();
            Ok((n, r.users[0].completion_ratio))
        })
        .collect();
    for r in ratios {
        let (n, ratio) = r?;
        result.users[n].dedicated_completion_ratio = Some(ratio);
    }
    result.notes.push(format!(
        "dedicated clouds: each of the {} users with tasks alone on {per_user} of the {} servers (drawn without replacement, seed {seed}), same scheduler and horizon",
        active.len(),
        cluster.servers.len()
    ));
    Ok(())
}
