//! The share algorithms production schedulers run, on the leontief
//! instance's queue tree, so that their allocations can be measured
//! against the exact hierarchical answer (`hdrf`).
//!
//! Each algorithm follows its scheduler's source (cited in its module and
//! in `docs/schedulers.md`): [`Scheduler::YarnFair`] (YARN Fair
//! Scheduler's per-resource fair shares), [`Scheduler::Kai`] (KAI
//! Scheduler's per-resource division), [`Scheduler::VolcanoProportion`]
//! (Volcano's proportion plugin) and [`Scheduler::Kueue`] (Kueue's
//! admission with fair sharing). All four work on the pooled cluster, as
//! the schedulers' share computations do (node placement is the node
//! scheduler's business), and give whole tasks. Their answers are
//! heuristics: the defining property of each is its own algorithm, which
//! `leontief-audit` recomputes independently.
#![deny(missing_docs)]

mod explain;
pub mod kai;
pub mod kueue;
pub mod tasks;
mod tree;
pub mod volcano;
pub mod yarn;

use leontief_core::schedulers::{QueueShare, SchedulerDetails, UserShare};
use leontief_core::{Allocation, Instance};
use leontief_model::Status;
use std::time::Instant;
use tree::Tree;

/// The most tasks `volcano-proportion` places one at a time in one run.
pub const MAX_PLACEMENTS: usize = 10_000_000;

/// A production scheduler's share algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// YARN Fair Scheduler's fair shares, per resource.
    YarnFair,
    /// KAI Scheduler's resource division, per resource.
    Kai,
    /// Volcano's proportion plugin.
    VolcanoProportion,
    /// Kueue's admission with fair sharing.
    Kueue,
}

impl Scheduler {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::YarnFair => "yarn-fair",
            Scheduler::Kai => "kai",
            Scheduler::VolcanoProportion => "volcano-proportion",
            Scheduler::Kueue => "kueue",
        }
    }

    /// The source followed.
    pub fn source(self) -> &'static str {
        match self {
            Scheduler::YarnFair => "apache/hadoop, hadoop-yarn-server-resourcemanager, scheduler/fair/policies/ComputeFairShares.java (Hadoop 3.x: computeSharesInternal, 25 bisection steps, (long) truncation)",
            Scheduler::Kai => "NVIDIA/KAI-Scheduler, pkg/scheduler/plugins/proportion/resource_division/resource_division.go (SetResourcesShare: deserved, then divideUpToFairShare and divideRemainingResource)",
            Scheduler::VolcanoProportion => "volcano-sh/volcano, pkg/scheduler/plugins/proportion/proportion.go (OnSessionOpen's deserved loop; AllocatableFn) with the drf plugin's job order",
            Scheduler::Kueue => "kubernetes-sigs/kueue, KEP-1714 Fair Sharing and KEP-79 hierarchical cohorts (dominant resource share, fair-sharing tournament, BestEffortFIFO)",
        }
    }
}

/// The algorithms could not run.
#[derive(Debug, thiserror::Error)]
pub enum SchedError {
    /// An input the algorithm cannot take.
    #[error("{0}")]
    InvalidInput(String),
}

/// What one algorithm found, before it becomes an allocation.
pub(crate) struct Outcome {
    /// Each node's share (node 0 the root).
    pub node_share: Vec<Vec<f64>>,
    /// Each user's share.
    pub user_share: Vec<Vec<f64>>,
    /// Each user's whole tasks.
    pub tasks: Vec<f64>,
    /// The resource whose share stops each user, where one does.
    pub bound: Vec<Option<usize>>,
    /// `Optimal`, or the limit that stopped the algorithm.
    pub status: Status,
    /// Remarks for the output.
    pub notes: Vec<String>,
    /// Rounds or admissions.
    pub steps: Option<usize>,
    /// Kueue: each node's dominant resource share at the end.
    pub drs: Option<Vec<f64>>,
}

/// Run `scheduler` on `instance`: a pooled allocation of whole tasks with
/// every queue's and user's share (`scheduler` block).
pub fn run(instance: &Instance, scheduler: Scheduler) -> Result<Allocation, SchedError> {
    let t0 = Instant::now();
    let tree = Tree::new(instance);
    let mut o = match scheduler {
        Scheduler::YarnFair | Scheduler::Kai => per_resource(instance, &tree, scheduler),
        Scheduler::VolcanoProportion => volcano::run(instance, &tree),
        Scheduler::Kueue => kueue::outcome(instance, &tree),
    };
    let demand: Vec<&[f64]> = instance
        .users()
        .iter()
        .map(|u| u.demand.as_slice())
        .collect();
    let taken = tasks::trim_to_capacity(&mut o.tasks, &demand, instance.total_capacity());
    if taken > 0.0 {
        o.notes.push(format!(
            "the shares add up to more than the cluster (a bisection's last step, or a lone child's whole remainder): {taken} tasks that do not fit were taken back from the last users holding the short resource"
        ));
    }
    let taken = trim_to_limits(&tree, &mut o.tasks, &demand);
    if taken > 0.0 {
        o.notes.push(format!(
            "a queue's share exceeds its limit (the scheduler enforces limits when it places tasks): {taken} tasks above a limit were taken back from the last users of the queue holding the resource"
        ));
    }
    let seconds = t0.elapsed().as_secs_f64();
    let x = &o.tasks;
    let mut a = Allocation::new(
        instance,
        scheduler.name(),
        o.status,
        instance.split_pooled(x),
    );
    // The split over the entries need not add back to whole numbers in
    // floating point; the tasks per user are the algorithm's.
    a.user_tasks.clone_from(x);
    a.solve_seconds = seconds;
    a.pooled = true;
    a.notes.push(format!(
        "{} is a production scheduler's share algorithm, a heuristic: its answer is checked against its own algorithm, and its distance to the exact hierarchical allocation (hdrf) is in gap; shares are computed on the pooled cluster, as the scheduler does, and tasks are whole",
        scheduler.name()
    ));
    a.notes.extend(o.notes.iter().cloned());
    if instance.has_placement() {
        a.notes
            .push("placement lists (users[].servers) do not apply to a pooled share algorithm and were not used".into());
    }
    let usage = instance.queue_usage(x);
    let queues = instance
        .queues()
        .iter()
        .enumerate()
        .map(|(q, queue)| QueueShare {
            name: queue.name.clone(),
            share: o.node_share[q + 1].clone(),
            usage: usage[q].clone(),
            tasks: (0..x.len())
                .filter(|&u| tree.on_path(q + 1, tree.user_node[u]))
                .map(|u| x[u])
                .sum(),
            request: tree.request[q + 1].clone(),
            drs: o.drs.as_ref().map(|d| d[q + 1]),
        })
        .collect();
    let resources = instance.resources();
    let users = (0..x.len())
        .map(|u| UserShare {
            share: o.user_share[u].clone(),
            tasks: x[u],
            bound: o.bound[u].map(|r| resources[r].clone()),
        })
        .collect();
    a.explanation = explain::users(instance, &tree, &o, scheduler);
    a.scheduler = Some(SchedulerDetails {
        algorithm: scheduler.name().into(),
        source: scheduler.source().into(),
        quantum: instance.quantum().map(<[f64]>::to_vec),
        queues,
        users,
        steps: o.steps,
    });
    Ok(a)
}

/// YARN's or KAI's per-resource shares, and the whole tasks inside them.
fn per_resource(instance: &Instance, tree: &Tree, scheduler: Scheduler) -> Outcome {
    let total = instance.total_capacity();
    let quantum = instance.quantum();
    let (node_share, user_share) = if scheduler == Scheduler::YarnFair {
        yarn::fair_shares(tree, total, quantum)
    } else {
        kai::fair_shares(tree, total, quantum)
    };
    let (tasks, bound) = user_share
        .iter()
        .enumerate()
        .map(|(u, s)| tasks::tasks_in_share(s, &instance.users()[u].demand, tree.user_max_tasks[u]))
        .unzip();
    Outcome {
        node_share,
        user_share,
        tasks,
        bound,
        status: Status::Optimal,
        notes: Vec::new(),
        steps: None,
        drs: None,
    }
}

/// Take back, from the last users of each queue (deepest queues first),
/// the tasks that put the queue above its limit; the tasks taken back.
fn trim_to_limits(tree: &Tree, x: &mut [f64], demand: &[&[f64]]) -> f64 {
    let mut order = tree.top_down();
    order.reverse();
    let mut taken = 0.0;
    for v in order {
        let Some(limit) = tree.limit[v].as_ref() else {
            continue;
        };
        let under: Vec<usize> = (0..x.len())
            .filter(|&u| {
                std::iter::successors(Some(tree.user_node[u]), |&w| tree.parent[w]).any(|w| w == v)
            })
            .collect();
        let sub: Vec<&[f64]> = under.iter().map(|&u| demand[u]).collect();
        let mut xs: Vec<f64> = under.iter().map(|&u| x[u]).collect();
        taken += tasks::trim_to_capacity(&mut xs, &sub, limit);
        for (&u, t) in under.iter().zip(xs) {
            x[u] = t;
        }
    }
    taken
}
