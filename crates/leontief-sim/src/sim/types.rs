//! The simulator's inputs and outputs: cluster, scheduler, settings,
//! per-user, per-job and total outcomes.

use leontief_core::Instance;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

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
    /// Whole tasks handed out along the workload's queue tree by H-DRF's
    /// shares of the running tasks (the paper's task-by-task scheduler),
    /// placed First-Fit.
    HdrfFirstFit,
    /// The same with the naive hierarchical shares (every queue's share
    /// from its subtree's total use).
    HdrfNaiveFirstFit,
    /// Exact DRFH, divisible tasks, recomputed at every event.
    Drfh,
    /// Exact hierarchical DRFH over the workload's queue tree (H-DRF
    /// with global dominant shares), divisible tasks, recomputed at every
    /// event.
    Hdrfh,
    /// YARN Fair Scheduler's shares over the workload's queue tree on the
    /// pooled cluster, whole tasks, recomputed at every event.
    YarnFair,
    /// KAI Scheduler's division, likewise.
    Kai,
    /// Volcano's proportion plugin, likewise.
    VolcanoProportion,
    /// Kueue's fair-sharing admission, likewise.
    Kueue,
}

impl Scheduler {
    /// Its name in configs and output.
    pub fn name(&self) -> &'static str {
        match self {
            Scheduler::FirstFit => "first-fit",
            Scheduler::BestFit { .. } => "best-fit",
            Scheduler::Slots { .. } => "slots",
            Scheduler::HdrfFirstFit => "hdrf-first-fit",
            Scheduler::HdrfNaiveFirstFit => "hdrf-naive-first-fit",
            Scheduler::Drfh => "drfh",
            Scheduler::Hdrfh => "hdrfh",
            Scheduler::YarnFair => "yarn-fair",
            Scheduler::Kai => "kai",
            Scheduler::VolcanoProportion => "volcano-proportion",
            Scheduler::Kueue => "kueue",
        }
    }

    /// The hierarchical rules of a whole-task tree scheduler, if it is one.
    pub fn tree_rules(&self) -> Option<leontief_hier::Rules> {
        match self {
            Scheduler::HdrfFirstFit => Some(leontief_hier::Rules::HDRF),
            Scheduler::HdrfNaiveFirstFit => Some(leontief_hier::Rules::NAIVE),
            _ => None,
        }
    }

    /// The production scheduler's share algorithm this runs, if it is one.
    pub fn share(&self) -> Option<leontief_sched::Scheduler> {
        match self {
            Scheduler::YarnFair => Some(leontief_sched::Scheduler::YarnFair),
            Scheduler::Kai => Some(leontief_sched::Scheduler::Kai),
            Scheduler::VolcanoProportion => Some(leontief_sched::Scheduler::VolcanoProportion),
            Scheduler::Kueue => Some(leontief_sched::Scheduler::Kueue),
            _ => None,
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
    /// (`dedicated_clouds`).
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

/// The outcome of `simulate`.
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
    /// `utilisation[k][r]`: fraction of resource r in use at sample k.
    pub utilisation: Vec<Vec<f64>>,
    /// `shares[k][n]`: user n's global dominant share at sample k
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
