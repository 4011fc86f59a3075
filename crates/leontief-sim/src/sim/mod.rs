//! A discrete-event simulator of a cluster shared by users whose jobs of
//! tasks arrive over time (Sec. VI of 000).
//!
//! **Whole-task schedulers** (First-Fit DRFH, Best-Fit DRFH, Slots). Each
//! user keeps its waiting tasks in arrival order. Whenever something
//! happens (tasks arrive or finish), the scheduler repeatedly serves the
//! user with the lowest weighted share whose first waiting task fits on
//! some server, and places that task by its rule; a user whose first task
//! fits nowhere waits (head of line) until capacity is freed. The share is
//! the global dominant share of the running tasks, sum of max_r D_r / C_r,
//! divided by the weight (the DRFH heuristics), or the slots held divided by
//! the weight (Slots: each maximum server cut into S slots, a task takes
//! the slots its largest need requires, as in [`crate::run`]). A task
//! that fits on no server even when the cluster is empty is set aside as
//! `unschedulable` when it arrives, so it never blocks its user.
//!
//! **The queue tree, task by task** (`hdrf-first-fit`,
//! `hdrf-naive-first-fit`). The same engine, but the user served next is
//! found by walking the workload's queue tree from the root to the open
//! child with the lowest share ([`leontief_hier::TaskOrder`]: H-DRF's
//! rescaled shares over the contested resources, or the naive subtree
//! totals), over the running tasks' resources; a user is open when its
//! first waiting task fits somewhere and keeps every queue above it
//! within its limit. Each decision recomputes the tree's shares (users x
//! resources work). Guarantees are refused: they are not handed out task
//! by task.
//!
//! Only servers whose capacity grew can make a waiting task fit, so after
//! each event the waiting users are re-examined against the freed servers
//! alone; placement scans every server (First-Fit: the first that fits;
//! Best-Fit: the least H of eq. (9), as in [`crate::greedy`]).
//!
//! **Exact DRFH** ("the DRFH allocation at all times", divisible tasks).
//! Between events each user n runs its k_n outstanding tasks with
//! processor sharing: the DRFH allocation gives it x_n tasks' worth of
//! resources (at most k_n), every outstanding task progresses at rate
//! x_n / k_n, and the user's demand vector is the mean of its outstanding
//! tasks' demands (exact under processor sharing: the resources in use are
//! sum_t (x_n / k_n) D_t = x_n mean(D)). The allocation is recomputed by
//! the LP operator of leontief-drfh (servers with equal capacities as one
//! class) whenever a task arrives or completes.
//!
//! **Accounting.** Every task that arrived by the horizon ends finished,
//! running, waiting or unschedulable (`Totals::conserved`); utilisation and
//! shares are sampled every `sample_interval` seconds, and the utilisation
//! is also integrated exactly over [0, horizon] (`mean_utilisation`, the
//! figure of Table II). A job's completion time runs from its first task's
//! arrival to its last task's completion, for jobs whose tasks all finished.

mod dedicated;
mod fluid;
mod ledger;
mod types;
mod whole;

pub use dedicated::*;
pub(crate) use fluid::*;
pub(crate) use ledger::*;
pub use types::*;
pub(crate) use whole::*;

use crate::workload::Workload;
use leontief_model::LpBackend;

/// Run one simulation. `progress` is called now and then with the
/// simulated time (for a progress bar).
pub fn simulate<B: LpBackend>(
    backend: &B,
    cluster: &Cluster,
    workload: &Workload,
    settings: &SimSettings,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<SimResult, SimRunError> {
    let (horizon, dt) = check_inputs(cluster, workload, settings)?;
    let wall = std::time::Instant::now();
    let pool = cluster.pool();
    let mut ledger = Ledger::new(workload);
    let (events, decisions, max_overcommit, running, waiting) = match settings.scheduler {
        Scheduler::Drfh
        | Scheduler::Hdrfh
        | Scheduler::YarnFair
        | Scheduler::Kai
        | Scheduler::VolcanoProportion
        | Scheduler::Kueue => fluid(
            backend,
            &settings.scheduler,
            cluster,
            workload,
            horizon,
            dt,
            &pool,
            &mut ledger,
            progress,
        )?,
        s => whole(
            cluster,
            workload,
            s,
            horizon,
            dt,
            &pool,
            &mut ledger,
            progress,
        )?,
    };
    ledger.advance(horizon);
    let users: Vec<UserOutcome> = (0..workload.users.len())
        .map(|n| UserOutcome {
            name: workload.users[n].clone(),
            submitted: ledger.submitted[n],
            finished: ledger.finished[n],
            running: running[n],
            waiting: waiting[n],
            unschedulable: ledger.unschedulable[n],
            completion_ratio: if ledger.submitted[n] > 0 {
                ledger.finished[n] as f64 / ledger.submitted[n] as f64
            } else {
                1.0
            },
            dedicated_completion_ratio: None,
        })
        .collect();
    let sum = |f: &dyn Fn(&UserOutcome) -> u64| users.iter().map(f).sum::<u64>();
    let totals = Totals {
        submitted: sum(&|u| u.submitted),
        finished: sum(&|u| u.finished),
        running: sum(&|u| u.running),
        waiting: sum(&|u| u.waiting),
        unschedulable: sum(&|u| u.unschedulable),
        conserved: users
            .iter()
            .all(|u| u.submitted == u.finished + u.running + u.waiting + u.unschedulable),
    };
    let mut job_user = vec![0usize; workload.jobs.len()];
    let mut job_size = vec![0u64; workload.jobs.len()];
    for t in &workload.tasks {
        job_user[t.job] = t.user;
        job_size[t.job] += 1;
    }
    let jobs = (0..workload.jobs.len())
        .filter(|&j| ledger.job_tasks[j] > 0)
        .map(|j| {
            let done =
                ledger.job_done[j] == ledger.job_tasks[j] && ledger.job_tasks[j] == job_size[j];
            JobOutcome {
                id: workload.jobs[j],
                user: job_user[j],
                tasks: ledger.job_tasks[j],
                submit: ledger.job_submit[j],
                finish: done.then_some(ledger.job_finish[j]),
                completion_time: done.then(|| ledger.job_finish[j] - ledger.job_submit[j]),
            }
        })
        .collect();
    let mut notes = workload.notes.clone();
    if totals.unschedulable > 0 {
        notes.push(format!(
            "{} tasks fit on no server of the cluster even when it is empty: set aside as unschedulable",
            totals.unschedulable
        ));
    }
    Ok(SimResult {
        scheduler: settings.scheduler,
        resources: cluster.resources.clone(),
        servers: cluster.servers.len(),
        mean_utilisation: ledger
            .integral
            .iter()
            .zip(&pool)
            .map(|(i, c)| if *c > 0.0 { i / (c * horizon) } else { 0.0 })
            .collect(),
        pool,
        horizon,
        sample_times: ledger.sample_times,
        utilisation: ledger.utilisation,
        shares: ledger.shares,
        users,
        jobs,
        totals,
        max_overcommit,
        events,
        decisions,
        wall_seconds: wall.elapsed().as_secs_f64(),
        notes,
    })
}

type EngineOut = (u64, u64, f64, Vec<u64>, Vec<u64>);

/// A task's demand in the fitting units (its resources, or its slots).
type FitUnits = Box<dyn Fn(&[f64]) -> Vec<f64>>;
