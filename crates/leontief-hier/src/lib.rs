//! Hierarchical multi-resource fairness over a queue tree.
//!
//! Users sit in a tree of queues (`"queues"` in the instance, each with a
//! weight, an optional guarantee and an optional limit per resource).
//! Three mechanisms share one exact, event-driven progressive filling:
//!
//! | mechanism | servers | rules |
//! |---|---|---|
//! | `hdrf` | pooled into one of capacity C | H-DRF (Bhattacharya et al., SoCC 2013) |
//! | `hdrfh` | every server, placement lists, per-server feasibility | H-DRF on global dominant shares (as DRFH) |
//! | `hdrf-naive` | pooled | every queue's share from its subtree's total |
//!
//! The filling (`fill`) starts at zero; between two events every
//! growing user's tasks rise linearly, so each phase is computed exactly:
//! its direction from the shares of every node (`shares`,
//! `direction`), its length from the first of the events (a sibling
//! catching up, a queue's largest resource changing, a cap, a limit, the
//! capacity (`capacity`)). With guarantees, a first stage fills only
//! the guaranteed queues, each up to its guarantee; the fair stage then
//! goes on from there. The trace of phases is printed and replayed by
//! the verification (`leontief-audit`).
//!
//! Schedulers that hand out whole tasks (the simulator's
//! `hdrf-first-fit`) walk the same shares task by task (`order`).
//!
//! Stages, each importing only those above it in this list: `tree`,
//! `shares`, `order`, `direction`, `capacity`, `fill`, `report`, this
//! file.

mod capacity;
mod direction;
mod fill;
mod order;
mod report;
mod shares;
mod tree;

pub use order::TaskOrder;
pub use shares::Rules;

use capacity::Capacity;
use fill::{fill, Stage};
use leontief_core::{Allocation, Instance, Status, Tasks};
use leontief_model::{BackendError, LpBackend};
use std::time::Instant;

/// Why a hierarchical mechanism could not run.
#[derive(Debug, thiserror::Error)]
pub enum HierError {
    /// The LP backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Which hierarchical mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// H-DRF on the pooled servers.
    Hdrf,
    /// H-DRF over heterogeneous servers (global dominant shares).
    Hdrfh,
    /// Naive hierarchical DRF on the pooled servers.
    Naive,
}

impl Variant {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Hdrf => "hdrf",
            Variant::Hdrfh => "hdrfh",
            Variant::Naive => "hdrf-naive",
        }
    }
    fn rules(self) -> Rules {
        match self {
            Variant::Naive => Rules::NAIVE,
            _ => Rules::HDRF,
        }
    }
}

/// The allocation of `variant` on `instance` (a flat tree when it has no
/// queues: `hdrf` is then DRF, `hdrfh` DRFH).
pub fn solve<B: LpBackend>(
    highs: &B,
    instance: &Instance,
    variant: Variant,
) -> Result<Allocation, HierError> {
    // Interchangeable servers (equal capacities, every placement list
    // holding all of them or none) as one class each: the feasible user
    // totals, hence the filling, are the same (docs/mechanisms.md,
    // "Interchangeable servers"); the class's tasks split back by count.
    if variant == Variant::Hdrfh && !instance.pools_exactly() {
        if let Some(merged) = leontief_drfh::merge::merge_identical(instance, true) {
            let a = solve_on(highs, &merged.instance, variant)?;
            return Ok(leontief_drfh::merge::split_allocation(instance, &merged, a));
        }
    }
    solve_on(highs, instance, variant)
}

/// What one filling found.
struct Filled {
    x: Vec<f64>,
    phases: Vec<leontief_core::hierarchy::Phase>,
    stop: Vec<Option<fill::Stop>>,
    status: Status,
}

/// The guarantee stage (when a queue has a guarantee), then the fair
/// stage, on `capacity`.
fn filling<B: LpBackend>(
    instance: &Instance,
    tree: &tree::Tree,
    mu: &[f64],
    variant: Variant,
    capacity: &mut Capacity<'_, B>,
) -> Result<Filled, HierError> {
    let n = instance.num_users();
    let queues = instance.queues();
    let mut x = vec![0.0; n];
    let mut phases = Vec::new();
    let mut status = Status::Optimal;
    if queues.iter().any(|q| q.guarantee.is_some()) {
        let mut limits: Vec<Option<Vec<f64>>> = vec![None];
        limits.extend(queues.iter().map(|q| match (&q.guarantee, &q.limit) {
            (Some(g), Some(l)) => Some(g.iter().zip(l).map(|(a, b)| a.min(*b)).collect()),
            (Some(g), None) => Some(g.clone()),
            (None, l) => l.clone(),
        }));
        let eligible: Vec<bool> = (0..n)
            .map(|u| {
                tree.ancestors(u)
                    .any(|v| v > 0 && queues[v - 1].guarantee.is_some())
            })
            .collect();
        let stage = Stage {
            name: "guarantee",
            limits: &limits,
            eligible: &eligible,
        };
        let f = fill(
            instance,
            tree,
            mu,
            variant.rules(),
            capacity,
            &stage,
            &mut x,
        )?;
        phases.extend(f.phases);
        status = f.status;
    }
    let mut stop = vec![None; n];
    if status == Status::Optimal {
        let mut limits: Vec<Option<Vec<f64>>> = vec![None];
        limits.extend(queues.iter().map(|q| q.limit.clone()));
        let eligible = vec![true; n];
        let stage = Stage {
            name: "fair",
            limits: &limits,
            eligible: &eligible,
        };
        let f = fill(
            instance,
            tree,
            mu,
            variant.rules(),
            capacity,
            &stage,
            &mut x,
        )?;
        phases.extend(f.phases);
        status = f.status;
        stop = f.stop;
    }
    Ok(Filled {
        x,
        phases,
        stop,
        status,
    })
}

fn solve_on<B: LpBackend>(
    highs: &B,
    instance: &Instance,
    variant: Variant,
) -> Result<Allocation, HierError> {
    let t0 = Instant::now();
    let tree = tree::Tree::new(instance);
    let mu = tree::task_shares(instance);
    let pooled = variant != Variant::Hdrfh || instance.pools_exactly();
    // hdrfh: the filling on the pool first. The servers' feasible totals
    // lie inside the pool's, so when its answer fits the servers, every
    // user stopped on the pool is stopped there too: it is the answer
    // (docs/mechanisms.md, "Hierarchical max-min over queues"). With
    // placement lists the pooled answer, which ignores them, seldom fits:
    // not tried (as the max-min operator's pooled path).
    if !pooled && !instance.has_placement() {
        let mut capacity: Capacity<'_, B> = Capacity::Pooled { instance };
        let f = filling(instance, &tree, &mu, variant, &mut capacity)?;
        if f.status == Status::Optimal {
            let (tasks, lps) = place(highs, instance, &f.x)?;
            if let Some(tasks) = tasks {
                let report = report::Report {
                    instance,
                    tree: &tree,
                    mu: &mu,
                    variant,
                    x: &f.x,
                    stop: &f.stop,
                    phases: f.phases,
                    pooled: true,
                    on_pool: true,
                    on_list_groups: false,
                    lps,
                    seconds: t0.elapsed().as_secs_f64(),
                };
                return Ok(report.allocation(Some(tasks), Status::Optimal));
            }
        }
    }
    // hdrfh with placement lists whose entries fall into a few groups
    // that every list holds alike (node pools, placement by attribute):
    // the filling on those groups pooled, a relaxation as the pool is,
    // placed group by group.
    if !pooled && instance.has_placement() {
        if let Some(a) = on_list_groups(highs, instance, &tree, &mu, variant, t0)? {
            return Ok(a);
        }
    }
    let mut capacity = if pooled {
        Capacity::Pooled { instance }
    } else {
        Capacity::Servers(Box::new(capacity::Servers::new(instance, highs)))
    };
    let f = filling(instance, &tree, &mu, variant, &mut capacity)?;
    let (x, phases, stop, mut status) = (f.x, f.phases, f.stop, f.status);
    let tasks = capacity.split(&x)?.map(Tasks::from);

    if status == Status::Optimal {
        status = capacity.status();
    }
    let report = report::Report {
        instance,
        tree: &tree,
        mu: &mu,
        variant,
        x: &x,
        stop: &stop,
        phases,
        pooled,
        on_pool: false,
        on_list_groups: false,
        lps: capacity.lps(),
        seconds: t0.elapsed().as_secs_f64(),
    };
    let mut a = report.allocation(tasks, status);
    a.backend_status = capacity.backend_status();
    Ok(a)
}

/// Groups of entries every placement list holds alike up to which hdrfh
/// fills on them pooled first (the max-min operator's threshold).
const LIST_GROUPS: usize = leontief_drfh::settings::POOLED_LIST_GROUPS;

/// The hdrfh answer from the filling on the groups of entries every
/// placement list holds alike, pooled (`None` where there are no such
/// groups, more than [`LIST_GROUPS`], or the answer does not fit the
/// servers). The servers' feasible totals lie inside the groups', so an
/// answer on the groups that fits the servers is the answer there, as on
/// the pool.
fn on_list_groups<B: LpBackend>(
    highs: &B,
    instance: &Instance,
    tree: &tree::Tree,
    mu: &[f64],
    variant: Variant,
    t0: Instant,
) -> Result<Option<Allocation>, HierError> {
    let Some(pools) = leontief_drfh::paths::merge::pool_by_lists(instance, LIST_GROUPS) else {
        return Ok(None);
    };
    let mut capacity: Capacity<'_, B> =
        Capacity::Servers(Box::new(capacity::Servers::new(&pools.instance, highs)));
    let f = filling(&pools.instance, tree, mu, variant, &mut capacity)?;
    if f.status != Status::Optimal || capacity.status() != Status::Optimal {
        return Ok(None);
    }
    let Some(shares) = capacity.split(&f.x)?.map(Tasks::from) else {
        return Ok(None);
    };
    let placed =
        leontief_drfh::paths::realise::realise_on_groups(highs, instance, &pools, &shares, &f.x)?;
    let Some(tasks) = placed.tasks else {
        return Ok(None);
    };
    let report = report::Report {
        instance,
        tree,
        mu,
        variant,
        x: &f.x,
        stop: &f.stop,
        phases: f.phases,
        pooled: false,
        on_pool: false,
        on_list_groups: true,
        lps: capacity.lps() + placed.lps,
        seconds: t0.elapsed().as_secs_f64(),
    };
    let mut a = report.allocation(Some(tasks), Status::Optimal);
    a.notes.push(format!(
        "the H-DRF filling on the {} groups of servers that every placement list holds alike, each pooled, fits the servers (placed group by group): the servers' feasible totals lie inside the groups', so it is the hdrfh answer",
        pools.instance.num_entries()
    ));
    Ok(Some(a))
}

/// Runnable user-entry pairs up to which the pooled answer is placed by
/// one LP over every pair (HiGHS), rather than by the max-min operator's
/// pooled path (candidate pairs grown by pricing): the operator's own
/// threshold for that path. Above it the priced LP was faster on every
/// generated shape tried (`benches/REPORT.md`).
const PLACE_FLAT_UP_TO: usize = leontief_drfh::settings::GENERATE_FROM;

/// The pooled answer `x` on the servers: its tasks per entry when every
/// user's total fits at once, and the LPs solved.
#[allow(clippy::type_complexity)]
fn place<B: LpBackend>(
    highs: &B,
    instance: &Instance,
    x: &[f64],
) -> Result<(Option<Tasks>, usize), HierError> {
    if instance.num_eligible_pairs() > PLACE_FLAT_UP_TO {
        let placed = leontief_drfh::paths::realise::realise(highs, instance, x)?;
        return Ok((placed.tasks, placed.lps));
    }
    let mut servers: Capacity<'_, B> =
        Capacity::Servers(Box::new(capacity::Servers::new(instance, highs)));
    let tasks = servers.split(x)?.map(Tasks::from).filter(|t| {
        x.iter().enumerate().all(|(n, &want)| {
            let got = t.user_total(n);
            (got - want).abs() <= 1e-9 * want.abs().max(1.0)
        })
    });
    Ok((tasks, servers.lps()))
}
