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
use crate::workload::Workload;
use leontief_core::{Instance, RawInstance, RawServer, RawUser};
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_model::LpBackend;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// The servers of a simulated cluster, one entry per physical server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cluster {
    /// Resource names.
    pub resources: Vec<String>,
    /// Capacity of each physical server.
    pub servers: Vec<Vec<f64>>,
}

impl Cluster {
    /// The physical servers of `instance` (classes expanded, input order).
    pub fn from_instance(instance: &Instance) -> Cluster {
        Cluster {
            resources: instance.resources().to_vec(),
            servers: crate::expand_servers(instance)
                .into_iter()
                .map(|s| s.1)
                .collect(),
        }
    }

    /// `k` servers drawn with replacement from the distribution of Table I
    /// of 000 (the Google cell), deterministic for the seed.
    pub fn google_sample(k: usize, seed: u64) -> Cluster {
        let table = leontief_core::generate::GOOGLE_CELL;
        let total: u64 = table.iter().map(|c| c.0).sum();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let servers = (0..k)
            .map(|_| {
                let mut pick = rng.gen_range(0..total);
                for &(count, cpu, mem) in &table {
                    if pick < count {
                        return vec![cpu, mem];
                    }
                    pick -= count;
                }
                unreachable!("pick < total")
            })
            .collect();
        Cluster {
            resources: vec!["cpu".into(), "mem".into()],
            servers,
        }
    }

    /// Total capacity per resource.
    pub fn pool(&self) -> Vec<f64> {
        let m = self.resources.len();
        (0..m)
            .map(|r| self.servers.iter().map(|s| s[r]).sum())
            .collect()
    }

    /// Distinct capacity vectors and how many servers have each, in order
    /// of first appearance.
    pub fn classes(&self) -> Vec<(Vec<f64>, u64)> {
        let mut out: Vec<(Vec<f64>, u64)> = Vec::new();
        let mut index: std::collections::HashMap<Vec<u64>, usize> = Default::default();
        for s in &self.servers {
            let key: Vec<u64> = s.iter().map(|x| x.to_bits()).collect();
            match index.get(&key) {
                Some(&c) => out[c].1 += 1,
                None => {
                    index.insert(key, out.len());
                    out.push((s.clone(), 1));
                }
            }
        }
        out
    }
}

/// The scheduler of a simulation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Scheduler {
    /// First-Fit DRFH.
    FirstFit,
    /// Best-Fit DRFH with normalising resource `normaliser`.
    BestFit {
        /// r0 of eq. (9).
        normaliser: usize,
    },
    /// Slots: S slots per maximum server.
    Slots {
        /// S.
        slots: u32,
    },
    /// Exact DRFH, divisible tasks, recomputed at every event.
    Drfh,
}

impl Scheduler {
    /// Its name in configs and output.
    pub fn name(&self) -> &'static str {
        match self {
            Scheduler::FirstFit => "first-fit",
            Scheduler::BestFit { .. } => "best-fit",
            Scheduler::Slots { .. } => "slots",
            Scheduler::Drfh => "drfh",
        }
    }
}

/// What a simulation does besides the scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSettings {
    /// The scheduler.
    pub scheduler: Scheduler,
    /// End of the simulated window (seconds); default the workload's end.
    pub horizon: Option<f64>,
    /// Seconds between samples; default horizon / 500.
    pub sample_interval: Option<f64>,
}

/// A simulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimRunError {
    /// A setting or the inputs are inconsistent; names the field.
    #[error("{field} {reason}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// An exact DRFH solve did not return an allocation.
    #[error("exact DRFH at t = {time} s: {reason}")]
    Solve {
        /// Simulated time.
        time: f64,
        /// The status or error.
        reason: String,
    },
}

/// One user's tasks at the end of the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserOutcome {
    /// Name.
    pub name: String,
    /// Tasks that arrived by the horizon.
    pub submitted: u64,
    /// Finished by the horizon.
    pub finished: u64,
    /// Running at the horizon.
    pub running: u64,
    /// Waiting at the horizon.
    pub waiting: u64,
    /// Set aside: fit on no server.
    pub unschedulable: u64,
    /// finished / submitted (1 for a user that submitted nothing).
    pub completion_ratio: f64,
    /// The same ratio on the user's dedicated cloud, when computed
    /// ([`dedicated_clouds`]).
    pub dedicated_completion_ratio: Option<f64>,
}

/// One job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobOutcome {
    /// Job ID.
    pub id: u64,
    /// User index.
    pub user: usize,
    /// Tasks in the job (that arrived by the horizon).
    pub tasks: u64,
    /// First task's arrival.
    pub submit: f64,
    /// Last task's completion, if all finished.
    pub finish: Option<f64>,
    /// finish - submit.
    pub completion_time: Option<f64>,
}

/// Task conservation at the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// Arrived by the horizon.
    pub submitted: u64,
    /// Finished.
    pub finished: u64,
    /// Running.
    pub running: u64,
    /// Waiting.
    pub waiting: u64,
    /// Unschedulable.
    pub unschedulable: u64,
    /// submitted == finished + running + waiting + unschedulable.
    pub conserved: bool,
}

/// The outcome of [`simulate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    /// Scheduler and its parameter.
    pub scheduler: Scheduler,
    /// Resource names.
    pub resources: Vec<String>,
    /// Physical servers.
    pub servers: usize,
    /// Total capacity per resource.
    pub pool: Vec<f64>,
    /// End of the simulated window.
    pub horizon: f64,
    /// Sample times (seconds).
    pub sample_times: Vec<f64>,
    /// utilisation[k][r]: fraction of resource r in use at sample k.
    pub utilisation: Vec<Vec<f64>>,
    /// shares[k][n]: user n's global dominant share at sample k
    /// (unweighted, of the running tasks).
    pub shares: Vec<Vec<f64>>,
    /// Utilisation per resource averaged over [0, horizon] (exact integral).
    pub mean_utilisation: Vec<f64>,
    /// Per user.
    pub users: Vec<UserOutcome>,
    /// Per job.
    pub jobs: Vec<JobOutcome>,
    /// Conservation.
    pub totals: Totals,
    /// Largest overcommitment seen on any server and resource, as a
    /// fraction of its capacity (0 when capacities were never exceeded).
    pub max_overcommit: f64,
    /// Event times processed.
    pub events: u64,
    /// Tasks placed (whole-task schedulers) or exact DRFH solves.
    pub decisions: u64,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Notes (workload notes included).
    pub notes: Vec<String>,
}

const FIT_SLACK: f64 = 1e-9;

fn check_inputs(
    cluster: &Cluster,
    workload: &Workload,
    settings: &SimSettings,
) -> Result<(f64, f64), SimRunError> {
    let bad = |field: &str, reason: String| {
        Err(SimRunError::Invalid {
            field: field.into(),
            reason,
        })
    };
    if cluster.servers.is_empty() {
        return bad("cluster", "has no servers".into());
    }
    if cluster.resources != workload.resources {
        return bad(
            "workload",
            format!(
                "has resources {:?} but the cluster has {:?}",
                workload.resources, cluster.resources
            ),
        );
    }
    let horizon = settings.horizon.unwrap_or(workload.end);
    if !(horizon.is_finite() && horizon > 0.0) {
        return bad("horizon", format!("must be finite and > 0 (got {horizon})"));
    }
    let dt = settings.sample_interval.unwrap_or(horizon / 500.0);
    if !(dt.is_finite() && dt > 0.0) {
        return bad(
            "sample_interval",
            format!("must be finite and > 0 (got {dt})"),
        );
    }
    if horizon / dt > 1e6 {
        return bad(
            "sample_interval",
            format!("gives more than 10^6 samples over {horizon} s"),
        );
    }
    match settings.scheduler {
        Scheduler::BestFit { normaliser } if normaliser >= cluster.resources.len() => {
            return bad(
                "normaliser",
                format!("must name one of the {} resources", cluster.resources.len()),
            );
        }
        Scheduler::Slots { slots: 0 } => return bad("slots", "must be >= 1".into()),
        _ => {}
    }
    for (n, w) in workload.weights.iter().enumerate() {
        if !(w.is_finite() && *w > 0.0) {
            return bad(&format!("users[{n}].weight"), "must be > 0".into());
        }
    }
    Ok((horizon, dt))
}

/// Counters shared by both engines.
struct Ledger {
    submitted: Vec<u64>,
    finished: Vec<u64>,
    unschedulable: Vec<u64>,
    job_tasks: Vec<u64>,
    job_done: Vec<u64>,
    job_submit: Vec<f64>,
    job_finish: Vec<f64>,
    used: Vec<f64>,
    dom: Vec<f64>,
    integral: Vec<f64>,
    last_t: f64,
    sample_times: Vec<f64>,
    utilisation: Vec<Vec<f64>>,
    shares: Vec<Vec<f64>>,
}

impl Ledger {
    fn new(workload: &Workload) -> Ledger {
        let u = workload.users.len();
        let j = workload.jobs.len();
        let m = workload.resources.len();
        Ledger {
            submitted: vec![0; u],
            finished: vec![0; u],
            unschedulable: vec![0; u],
            job_tasks: vec![0; j],
            job_done: vec![0; j],
            job_submit: vec![f64::INFINITY; j],
            job_finish: vec![0.0; j],
            used: vec![0.0; m],
            dom: vec![0.0; u],
            integral: vec![0.0; m],
            last_t: 0.0,
            sample_times: Vec::new(),
            utilisation: Vec::new(),
            shares: Vec::new(),
        }
    }
    fn arrive(&mut self, t: &crate::workload::Task) {
        self.submitted[t.user] += 1;
        self.job_tasks[t.job] += 1;
        self.job_submit[t.job] = self.job_submit[t.job].min(t.submit);
    }
    fn finish(&mut self, t: &crate::workload::Task, time: f64) {
        self.finished[t.user] += 1;
        self.job_done[t.job] += 1;
        self.job_finish[t.job] = self.job_finish[t.job].max(time);
    }
    /// Integrate utilisation up to `t`.
    fn advance(&mut self, t: f64) {
        let dt = t - self.last_t;
        if dt > 0.0 {
            for (i, u) in self.integral.iter_mut().zip(&self.used) {
                *i += u * dt;
            }
            self.last_t = t;
        }
    }
    fn sample(&mut self, t: f64, pool: &[f64]) {
        self.sample_times.push(t);
        self.utilisation.push(
            self.used
                .iter()
                .zip(pool)
                .map(|(u, c)| if *c > 0.0 { (u / c).max(0.0) } else { 0.0 })
                .collect(),
        );
        self.shares
            .push(self.dom.iter().map(|s| s.max(0.0)).collect());
    }
}

/// Global dominant share of one task: max_r D_r / C_r over the pool.
fn task_mu(d: &[f64], pool: &[f64]) -> f64 {
    d.iter()
        .zip(pool)
        .filter(|(_, c)| **c > 0.0)
        .map(|(x, c)| x / c)
        .fold(0.0, f64::max)
}

/// Next time among arrivals, the finish heap and the sample clock.
fn next_time(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Time key for heaps (times are >= 0, so the bits order like the values).
fn key(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

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
        Scheduler::Drfh => fluid(
            backend,
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
        ),
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

/// The whole-task engine (see the module docs).
#[allow(clippy::too_many_arguments)]
fn whole(
    cluster: &Cluster,
    workload: &Workload,
    scheduler: Scheduler,
    horizon: f64,
    dt: f64,
    pool: &[f64],
    ledger: &mut Ledger,
    progress: &(dyn Fn(f64) + Sync),
) -> EngineOut {
    let nu = workload.users.len();
    let ns = cluster.servers.len();
    // Fitting units: the resources themselves, or one "slots" resource.
    let (mf, cap, fit): (usize, Vec<f64>, FitUnits) = match scheduler {
        Scheduler::Slots { slots } => {
            let m = cluster.resources.len();
            let max: Vec<f64> = (0..m)
                .map(|r| cluster.servers.iter().map(|s| s[r]).fold(0.0, f64::max))
                .collect();
            let slot: Vec<f64> = max.iter().map(|c| c / slots as f64).collect();
            let cap = cluster
                .servers
                .iter()
                .map(|s| {
                    (0..m)
                        .filter(|&r| slot[r] > 0.0)
                        .map(|r| (s[r] / slot[r] + 1e-9).floor())
                        .fold(f64::INFINITY, f64::min)
                })
                .collect();
            let fit = move |d: &[f64]| {
                vec![(0..d.len())
                    .filter(|&r| d[r] > 0.0)
                    .map(|r| {
                        if slot[r] > 0.0 {
                            (d[r] / slot[r] - 1e-9).ceil().max(1.0)
                        } else {
                            f64::INFINITY
                        }
                    })
                    .fold(1.0, f64::max)]
            };
            (1, cap, Box::new(fit))
        }
        _ => (
            cluster.resources.len(),
            cluster.servers.concat(),
            Box::new(|d: &[f64]| d.to_vec()),
        ),
    };
    let total_slots: f64 = cap.iter().sum();
    let mut rem = cap.clone();
    let slack: Vec<f64> = cap.iter().map(|c| c * FIT_SLACK).collect();
    let fits = |rem: &[f64], j: usize, d: &[f64]| {
        (0..mf).all(|r| d[r] <= rem[j * mf + r] + slack[j * mf + r])
    };
    // Distinct empty servers, to set aside tasks that can never fit.
    let distinct: Vec<usize> = {
        let mut seen = std::collections::HashSet::new();
        (0..ns)
            .filter(|&j| {
                seen.insert(
                    cap[j * mf..(j + 1) * mf]
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>(),
                )
            })
            .collect()
    };
    let tasks = &workload.tasks;
    let mut fit_of: Vec<Vec<f64>> = Vec::with_capacity(tasks.len());
    let mut placed_on = vec![u32::MAX; tasks.len()];
    let mut queue: Vec<VecDeque<usize>> = vec![VecDeque::new(); nu];
    let mut running = vec![0u64; nu];
    let mut share = vec![0.0f64; nu];
    let mut blocked = vec![false; nu];
    let mut blocked_list: Vec<usize> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    let mut freed: Vec<usize> = Vec::new();
    let mut finishes: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut ready: BTreeSet<(u64, usize)> = BTreeSet::new();
    let weight = &workload.weights;
    let order_share = |t: usize, f: &[f64]| -> f64 {
        match scheduler {
            Scheduler::Slots { .. } => f[0] / total_slots.max(1.0),
            _ => task_mu(&tasks[t].demand, pool),
        }
    };
    let mut next_arrival = 0usize;
    let mut next_sample = 0.0f64;
    let (mut events, mut decisions, mut max_over) = (0u64, 0u64, 0.0f64);
    let mut last_report = 0.0;
    loop {
        let arrival = tasks.get(next_arrival).map(|t| t.submit);
        let finish = finishes.peek().map(|Reverse((k, _))| f64::from_bits(*k));
        let Some(t) = next_time(arrival, finish).filter(|&t| t <= horizon) else {
            while next_sample <= horizon {
                ledger.sample(next_sample, pool);
                next_sample += dt;
            }
            break;
        };
        while next_sample < t {
            ledger.sample(next_sample, pool);
            next_sample += dt;
        }
        ledger.advance(t);
        events += 1;
        if t - last_report > horizon / 200.0 {
            progress(t);
            last_report = t;
        }
        // Finishes at t.
        while let Some(&Reverse((k, id))) = finishes.peek() {
            if f64::from_bits(k) > t {
                break;
            }
            finishes.pop();
            let task = &tasks[id];
            let j = placed_on[id] as usize;
            for r in 0..mf {
                rem[j * mf + r] += fit_of[id][r];
            }
            for (u, d) in ledger.used.iter_mut().zip(&task.demand) {
                *u -= d;
            }
            let n = task.user;
            running[n] -= 1;
            share[n] -= order_share(id, &fit_of[id]) / weight[n];
            ledger.dom[n] -= task_mu(&task.demand, pool);
            if running[n] == 0 {
                share[n] = 0.0;
                ledger.dom[n] = 0.0;
            }
            ledger.finish(task, t);
            freed.push(j);
        }
        // Arrivals at t.
        while next_arrival < tasks.len() && tasks[next_arrival].submit <= t {
            let id = next_arrival;
            next_arrival += 1;
            let task = &tasks[id];
            ledger.arrive(task);
            let f = fit(&task.demand);
            let possible = distinct.iter().any(|&j| fits(&cap, j, &f));
            fit_of.push(f);
            if !possible {
                ledger.unschedulable[task.user] += 1;
                continue;
            }
            let n = task.user;
            if queue[n].is_empty() && !blocked[n] {
                candidates.push(n);
            }
            queue[n].push_back(id);
        }
        // Waiting users whose first task now fits on a freed server.
        if !freed.is_empty() {
            freed.sort_unstable();
            freed.dedup();
            blocked_list.retain(|&n| {
                let head = *queue[n].front().expect("blocked users wait");
                if freed.iter().any(|&j| fits(&rem, j, &fit_of[head])) {
                    blocked[n] = false;
                    candidates.push(n);
                    false
                } else {
                    true
                }
            });
            freed.clear();
        }
        for n in candidates.drain(..) {
            ready.insert((key(share[n]), n));
        }
        while let Some(head) = ready.first().copied() {
            // Shares equal within 1e-12 relative are ties: the lowest index
            // wins (as in crate::greedy), so rounding in the running sums
            // never decides who goes next.
            let s = f64::from_bits(head.0);
            let n = ready
                .iter()
                .take_while(|(k, _)| f64::from_bits(*k) <= s + 1e-12 * s)
                .map(|e| e.1)
                .min()
                .expect("the head itself");
            ready.remove(&(key(share[n]), n));
            let id = *queue[n].front().expect("ready users wait");
            let f = &fit_of[id];
            let chosen = match scheduler {
                Scheduler::BestFit { normaliser } => {
                    best_fit(&tasks[id].demand, pool, normaliser, &rem, ns, mf, |j| {
                        fits(&rem, j, f)
                    })
                }
                _ => (0..ns).find(|&j| fits(&rem, j, f)),
            };
            let Some(j) = chosen else {
                blocked[n] = true;
                blocked_list.push(n);
                continue;
            };
            queue[n].pop_front();
            for r in 0..mf {
                rem[j * mf + r] -= f[r];
                let over = -rem[j * mf + r] / cap[j * mf + r].max(f64::MIN_POSITIVE);
                max_over = max_over.max(over);
            }
            for (u, d) in ledger.used.iter_mut().zip(&tasks[id].demand) {
                *u += d;
            }
            placed_on[id] = j as u32;
            running[n] += 1;
            share[n] += order_share(id, f) / weight[n];
            ledger.dom[n] += task_mu(&tasks[id].demand, pool);
            finishes.push(Reverse((key(t + tasks[id].duration), id)));
            decisions += 1;
            if !queue[n].is_empty() {
                ready.insert((key(share[n]), n));
            }
        }
    }
    progress(horizon);
    let waiting: Vec<u64> = queue.iter().map(|q| q.len() as u64).collect();
    (events, decisions, max_over, running, waiting)
}

/// Best-Fit: the server with the least H(i, l) of eq. (9) among those
/// where the task fits (ties: lowest index).
fn best_fit(
    d: &[f64],
    pool: &[f64],
    normaliser: usize,
    rem: &[f64],
    ns: usize,
    mf: usize,
    fits: impl Fn(usize) -> bool,
) -> Option<usize> {
    let r0 = if d[normaliser] > 0.0 {
        normaliser
    } else {
        // The task's dominant resource (first among equals).
        (0..d.len())
            .filter(|&r| pool[r] > 0.0)
            .fold((0, -1.0), |(br, bv), r| {
                let v = d[r] / pool[r];
                if v > bv {
                    (r, v)
                } else {
                    (br, bv)
                }
            })
            .0
    };
    let mut best: Option<(f64, usize)> = None;
    for j in 0..ns {
        if !fits(j) {
            continue;
        }
        let h = crate::fitness(d, &rem[j * mf..(j + 1) * mf], pool, r0);
        if best.is_none_or(|(bh, _)| h < bh) {
            best = Some((h, j));
        }
    }
    best.map(|b| b.1)
}

/// The exact DRFH engine, divisible tasks with processor sharing.
#[allow(clippy::too_many_arguments)]
fn fluid<B: LpBackend>(
    backend: &B,
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
    let settings = MaxMinSettings::default();
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
        let a = leontief_drfh::drfh(backend, &inst, &settings).map_err(|e| SimRunError::Solve {
            time: t,
            reason: e.to_string(),
        })?;
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

fn advance_clocks(
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
