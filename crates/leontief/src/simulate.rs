//! The trace-driven simulator of leontief-sim (000 Sec. VI), from a JSON
//! config.
//!
//! The config is JSON (paths relative to the config's folder):
//!
//! ```json
//! {
//!   "cluster": {"google": {"servers": 2000, "seed": 1}},
//!   "workload": {"trace": "google-synthetic-task-events.csv"},
//!   "scheduler": "best-fit",
//!   "horizon": 7200,
//!   "sample_interval": 30,
//!   "dedicated": true
//! }
//! ```
//!
//! * `cluster`: `{"google": {"servers": K, "seed": S}}` (K servers drawn
//!   from Table I of 000), `{"instance": "file.json"}` (its servers) or
//!   `{"alibaba_gpu": "openb_node_list_all_node.csv"}` (the Alibaba GPU
//!   trace's nodes: cpu in cores, memory in MiB, gpu in GPUs);
//! * `workload`: `{"trace": "task_events.csv"}` (Google cluster-data 2011
//!   schema), `{"alibaba_gpu": "openb_pod_list_default.csv"}` (arrival at
//!   `creation_time`, running `deletion_time - scheduled_time`; users by
//!   task shape: [`crate::import::alibaba_workload`]), `{"synthetic":
//!   {...}}` (fields of `SyntheticSpec`, all optional) or `{"users":
//!   [{"name", "demand", "weight"?, "jobs": [{"submit", "tasks",
//!   "duration"}]}]}`;
//! * `scheduler`: first-fit, best-fit (with `normaliser`, a resource
//!   name), slots (with `slots`), drfh (exact, divisible tasks), hdrfh
//!   (exact hierarchical DRFH over `queues`, divisible tasks),
//!   hdrf-first-fit and hdrf-naive-first-fit (whole tasks handed out one
//!   at a time along `queues` by H-DRF's or the naive shares of the
//!   running tasks, placed First-Fit; limits held, guarantees refused),
//!   or a production scheduler's share algorithm over `queues`
//!   (yarn-fair, kai, volcano-proportion, kueue: the pooled cluster,
//!   whole tasks, docs/schedulers.md), recomputed at every event;
//! * `queues` (the instance format's queue list) and `user_queues`
//!   (`{"user name": "queue"}`, default the root): the tree the
//!   hierarchical schedulers and the share algorithms share the cluster
//!   by;
//! * `horizon`, `sample_interval` (seconds), `dedicated` (also run each
//!   user on its dedicated cloud, Fig. 8), `dedicated_seed`, `weights`
//!   (`{"user name": w}`: weighted shares order the users; default 1).

use crate::error::{bad_input, could_not_run, Error};
use leontief_core::{Instance, InstanceError};
use leontief_highs::Highs;
use leontief_sim::sim::{self, Cluster, Scheduler, SimResult, SimRunError, SimSettings};
use leontief_sim::workload::{self, ExplicitUser, SyntheticSpec, Workload};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    cluster: ClusterSpec,
    workload: WorkloadSpec,
    #[serde(default = "default_scheduler")]
    scheduler: String,
    slots: Option<u32>,
    normaliser: Option<String>,
    horizon: Option<f64>,
    sample_interval: Option<f64>,
    #[serde(default)]
    dedicated: bool,
    #[serde(default = "one")]
    dedicated_seed: u64,
    /// Weights by user name (default 1), for any workload.
    #[serde(default)]
    weights: std::collections::BTreeMap<String, f64>,
    /// The queue tree the hdrfh scheduler shares the cluster by (the
    /// instance format's `queues`).
    #[serde(default)]
    queues: Vec<leontief_core::RawQueue>,
    /// Each user's queue by user name (default: the root).
    #[serde(default)]
    user_queues: std::collections::BTreeMap<String, String>,
}

fn default_scheduler() -> String {
    "best-fit".into()
}

fn one() -> u64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum ClusterSpec {
    Google { servers: usize, seed: u64 },
    Instance(PathBuf),
    AlibabaGpu(PathBuf),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum WorkloadSpec {
    Trace(PathBuf),
    AlibabaGpu(PathBuf),
    Synthetic(SyntheticSpec),
    Users(Vec<ExplicitUser>),
}

/// A loaded config: cluster, workload and settings.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The cluster.
    pub cluster: Cluster,
    /// The workload.
    pub workload: Workload,
    /// The settings.
    pub settings: SimSettings,
    /// Run the dedicated clouds too.
    pub dedicated: bool,
    /// Their seed.
    pub dedicated_seed: u64,
}

fn parse_scheduler(
    name: &str,
    slots: Option<u32>,
    normaliser: Option<&str>,
    resources: &[String],
) -> Result<Scheduler, Error> {
    if slots.is_some() && name != "slots" {
        return Err(bad_input(format!("slots does not apply to {name}")));
    }
    if normaliser.is_some() && name != "best-fit" {
        return Err(bad_input(format!("normaliser does not apply to {name}")));
    }
    Ok(match name {
        "first-fit" => Scheduler::FirstFit,
        "best-fit" => Scheduler::BestFit {
            normaliser: match normaliser {
                None => 0,
                Some(r) => resources.iter().position(|x| x == r).ok_or_else(|| {
                    bad_input(format!(
                        "normaliser {r} is not a resource of the cluster ({})",
                        resources.join(", ")
                    ))
                })?,
            },
        },
        "slots" => match slots {
            None => {
                return Err(bad_input(
                    "scheduler slots needs slots S (slots per maximum server)",
                ))
            }
            Some(0) => return Err(bad_input("slots must be >= 1 (got 0)")),
            Some(s) => Scheduler::Slots { slots: s },
        },
        "drfh" => Scheduler::Drfh,
        "hdrfh" => Scheduler::Hdrfh,
        "hdrf-first-fit" => Scheduler::HdrfFirstFit,
        "hdrf-naive-first-fit" => Scheduler::HdrfNaiveFirstFit,
        "yarn-fair" => Scheduler::YarnFair,
        "kai" => Scheduler::Kai,
        "volcano-proportion" => Scheduler::VolcanoProportion,
        "kueue" => Scheduler::Kueue,
        other => {
            return Err(bad_input(format!(
                "scheduler {other}: use first-fit, best-fit, slots, drfh, hdrfh, hdrf-first-fit, hdrf-naive-first-fit, yarn-fair, kai, volcano-proportion or kueue"
            )))
        }
    })
}

/// The most servers a simulated Google cluster may have (each is a record
/// in memory; 10^7 is ten Google cells of the largest kind).
pub const MAX_SERVERS: usize = 10_000_000;

/// What a caller may set over the config's own values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// The scheduler's name.
    pub scheduler: Option<String>,
    /// Slots (the slots scheduler).
    pub slots: Option<u32>,
    /// The horizon, seconds.
    pub horizon: Option<f64>,
    /// Run the dedicated clouds too.
    pub dedicated: bool,
}

/// Read and check a simulation config (paths in it are relative to its
/// folder), with `overrides` over its values.
pub fn load_config(config: &Path, overrides: &Overrides) -> Result<Simulation, Error> {
    let text = std::fs::read_to_string(config)
        .map_err(|e| bad_input(format!("{}: {e}", config.display())))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let c: Config = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        bad_input(format!(
            "{}: {} ({})",
            config.display(),
            e.inner(),
            e.path()
        ))
    })?;
    de.end().map_err(|e| {
        bad_input(format!(
            "{}: trailing data after the config: {e}",
            config.display()
        ))
    })?;
    let dir = config.parent().unwrap_or(Path::new("."));
    let cluster = match c.cluster {
        ClusterSpec::Google { servers, seed } => {
            if servers == 0 {
                return Err(bad_input("cluster.google.servers must be >= 1"));
            }
            if servers > MAX_SERVERS {
                return Err(bad_input(format!(
                    "cluster.google.servers is {servers}, above {MAX_SERVERS}, the most one simulation holds"
                )));
            }
            Cluster::google_sample(servers, seed)
        }
        ClusterSpec::Instance(p) => {
            let path = dir.join(p);
            let inst = Instance::from_path(&path).map_err(|e| match e {
                InstanceError::Io { .. } => bad_input(e.to_string()),
                _ => bad_input(format!("{}: {e}", path.display())),
            })?;
            let servers = inst.num_physical_servers();
            if servers > MAX_SERVERS as u64 {
                return Err(bad_input(format!(
                    "cluster.instance {}: {servers} physical servers (counts included), above {MAX_SERVERS}, the most one simulation holds",
                    path.display()
                )));
            }
            Cluster::from_instance(&inst)
        }
        ClusterSpec::AlibabaGpu(p) => {
            let path = dir.join(p);
            let file = std::fs::File::open(&path)
                .map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
            let (servers, _) = crate::import::read_nodes(
                std::io::BufReader::new(file),
                &path.display().to_string(),
            )?;
            if servers.len() > MAX_SERVERS {
                return Err(bad_input(format!(
                    "cluster.alibaba_gpu {}: {} nodes, above {MAX_SERVERS}, the most one simulation holds",
                    path.display(),
                    servers.len()
                )));
            }
            Cluster {
                resources: vec!["cpu".into(), "memory".into(), "gpu".into()],
                servers: servers.into_iter().map(|s| s.capacity).collect(),
            }
        }
    };
    let workload = match c.workload {
        WorkloadSpec::Trace(p) => workload::read_task_events(&dir.join(p)),
        WorkloadSpec::AlibabaGpu(p) => {
            let path = dir.join(p);
            let file = std::fs::File::open(&path)
                .map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
            let w = crate::import::alibaba_workload(
                std::io::BufReader::new(file),
                &path.display().to_string(),
                crate::import::AlibabaGroup::Shape,
            )?;
            if w.resources != cluster.resources {
                return Err(bad_input(format!(
                    "workload.alibaba_gpu: its resources {:?} are not the cluster's {:?} (use cluster.alibaba_gpu)",
                    w.resources, cluster.resources
                )));
            }
            Ok(w)
        }
        WorkloadSpec::Synthetic(s) => s.generate(&cluster.resources),
        WorkloadSpec::Users(u) => workload::explicit(&cluster.resources, &u),
    }
    .map_err(|e| bad_input(e.to_string()))?;
    let mut workload = workload;
    let user_index = |field: &str, user: &str| {
        workload
            .users
            .iter()
            .position(|u| u == user)
            .ok_or_else(|| {
                bad_input(format!(
                    "{field}.{user}: no user of that name in the workload"
                ))
            })
    };
    let mut weights = Vec::with_capacity(c.weights.len());
    for (user, w) in &c.weights {
        weights.push((user_index("weights", user)?, user, *w));
    }
    let mut queued = Vec::with_capacity(c.user_queues.len());
    for (user, q) in &c.user_queues {
        queued.push((user_index("user_queues", user)?, q.clone()));
    }
    for (n, user, w) in weights {
        if !(w.is_finite() && w > 0.0) {
            return Err(bad_input(format!(
                "weights.{user} must be finite and > 0 (got {w})"
            )));
        }
        workload.weights[n] = w;
    }
    if !c.user_queues.is_empty() || !c.queues.is_empty() {
        workload.user_queue = vec![None; workload.users.len()];
        for (n, q) in queued {
            workload.user_queue[n] = Some(q);
        }
        workload.queues = c.queues.clone();
        // The tree's rules (names, parents, cycles, guarantees within the
        // cluster) checked once, on the cluster with every user.
        let m = cluster.resources.len();
        let pool = cluster.pool();
        let raw = leontief_core::RawInstance {
            name: None,
            description: None,
            resources: cluster.resources.clone(),
            servers: vec![leontief_core::RawServer {
                name: "pool".into(),
                capacity: pool
                    .iter()
                    .map(|&c| if c > 0.0 { c } else { 1.0 })
                    .collect(),
                count: None,
            }],
            users: workload
                .users
                .iter()
                .zip(&workload.user_queue)
                .map(|(u, q)| leontief_core::RawUser {
                    name: u.clone(),
                    demand: vec![1.0; m],
                    weight: None,
                    tasks: None,
                    servers: None,
                    rank_weights: None,
                    queue: q.clone(),
                })
                .collect(),
            queues: Some(c.queues.clone()),
            quantum: None,
        };
        if let Err(e) = Instance::new(raw) {
            let issues: Vec<String> = e
                .issues()
                .iter()
                .filter(|i| i.at.starts_with("queues") || i.reason.contains("queue"))
                .map(|i| {
                    // users[n].queue in the workload's user order: by name.
                    match i.at.strip_prefix("users[").and_then(|r| r.split_once(']')) {
                        Some((n, rest)) => {
                            let n: usize = n.parse().unwrap_or(0);
                            format!("user_queues.{}{rest} {}", workload.users[n], i.reason)
                        }
                        None => i.to_string(),
                    }
                })
                .collect();
            if !issues.is_empty() {
                return Err(bad_input(issues.join("; ")));
            }
        }
    }
    let name = overrides.scheduler.as_deref().unwrap_or(&c.scheduler);
    let slots = overrides.slots.or(c.slots);
    let scheduler = parse_scheduler(name, slots, c.normaliser.as_deref(), &cluster.resources)?;
    Ok(Simulation {
        settings: SimSettings {
            scheduler,
            horizon: overrides.horizon.or(c.horizon),
            sample_interval: c.sample_interval,
        },
        cluster,
        workload,
        dedicated: overrides.dedicated || c.dedicated,
        dedicated_seed: c.dedicated_seed,
    })
}

fn run_error(e: SimRunError) -> Error {
    match e {
        SimRunError::Invalid { .. } => bad_input(e.to_string()),
        SimRunError::Solve { .. } => could_not_run(e.to_string()),
    }
}

/// Run one simulation with `settings` (the config's, or changed: another
/// scheduler, slots); with `dedicated`, each user on its dedicated cloud
/// too (Fig. 8 of 000). `clock` is called with the simulated time, `user`
/// once per dedicated cloud done.
pub fn simulate(
    s: &Simulation,
    settings: &SimSettings,
    dedicated: bool,
    clock: &(dyn Fn(f64) + Sync),
    user: &(dyn Fn() + Sync),
) -> Result<SimResult, Error> {
    let highs = Highs::new(leontief_highs::HighsSettings::default())
        .map_err(|e| bad_input(e.to_string()))?;
    let mut r =
        sim::simulate(&highs, &s.cluster, &s.workload, settings, clock).map_err(run_error)?;
    if dedicated {
        sim::dedicated_clouds(
            &highs,
            &s.cluster,
            &s.workload,
            settings,
            &mut r,
            s.dedicated_seed,
            user,
        )
        .map_err(run_error)?;
    }
    Ok(r)
}
