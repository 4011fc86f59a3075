//! The event-driven progressive filling: from the current tasks, find
//! who can still grow, the direction the hierarchy's rules give, the
//! first event along it, step there, and again, until every user is
//! stuck.

use crate::capacity::{can_run, Capacity, FULL};
use crate::direction::{direction, name};
use crate::shares::{compute, Point, Rules};
use crate::tree::{Child, Tree};
use crate::HierError;
use leontief_core::hierarchy::Phase;
use leontief_core::{Instance, Status, UserId};

/// Why a user stopped growing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// It demands a resource no (eligible) server has.
    CannotRun,
    /// Not part of this stage (the guarantee stage: no guaranteed queue
    /// above it).
    NotInStage,
    /// At its task cap.
    Cap,
    /// A queue above it at its limit (or guarantee, in the guarantee
    /// stage) of a resource it demands.
    Limit {
        /// The node.
        node: usize,
        /// The resource.
        resource: usize,
    },
    /// The servers have no room for another of its tasks while every
    /// other user keeps its own.
    Capacity,
}

/// One stage of the filling.
pub(crate) struct Stage<'a> {
    /// `guarantee` or `fair`.
    pub name: &'static str,
    /// Each node's limit in this stage.
    pub limits: &'a [Option<Vec<f64>>],
    /// The users that take part.
    pub eligible: &'a [bool],
}

/// Where the filling ended.
pub(crate) struct Filled {
    /// The phases.
    pub phases: Vec<Phase>,
    /// Why each user stopped (`None`: the filling ended early).
    pub stop: Vec<Option<Stop>>,
    /// How it ended: optimal, or the status of the LP that stopped it,
    /// or the iteration limit.
    pub status: Status,
}

/// Resource usage of each node's subtree.
fn usage(instance: &Instance, tree: &Tree, x: &[f64], v: usize) -> Vec<f64> {
    let m = instance.num_resources();
    let mut out = vec![0.0; m];
    for &u in &tree.users_under[v] {
        for (o, &d) in out.iter_mut().zip(&instance.users()[u].demand) {
            *o += d * x[u];
        }
    }
    out
}

/// Fill from `x` (updated in place) until every user is stuck.
pub(crate) fn fill<B: leontief_model::LpBackend>(
    instance: &Instance,
    tree: &Tree,
    mu: &[f64],
    rules: Rules,
    capacity: &mut Capacity<B>,
    stage: &Stage,
    x: &mut [f64],
) -> Result<Filled, HierError> {
    let n = instance.num_users();
    let m = instance.num_resources();
    let pooled = matches!(capacity, Capacity::Pooled { .. });
    let mut stop: Vec<Option<Stop>> = vec![None; n];
    let mut phases: Vec<Phase> = Vec::new();
    let most = 50 * (n + tree.len() + m) + 1000;
    let mut status = Status::Optimal;
    for iteration in 0.. {
        if iteration >= most {
            status = Status::IterationLimit;
            break;
        }
        // Who stops here: the closed-form reasons first.
        let mut newly = Vec::new();
        let usages: Vec<Option<Vec<f64>>> = (0..tree.len())
            .map(|v| {
                stage.limits[v]
                    .as_ref()
                    .map(|_| usage(instance, tree, x, v))
            })
            .collect();
        for u in 0..n {
            if stop[u].is_some() {
                continue;
            }
            let user = &instance.users()[u];
            let why = if !stage.eligible[u] {
                Some(Stop::NotInStage)
            } else if !can_run(instance, UserId(u), pooled) {
                Some(Stop::CannotRun)
            } else if user.tasks.is_some_and(|c| x[u] >= c * (1.0 - 1e-12)) {
                Some(Stop::Cap)
            } else {
                tree.ancestors(u).find_map(|v| {
                    let lim = stage.limits[v].as_ref()?;
                    let used = usages[v].as_ref()?;
                    (0..m)
                        .find(|&r| user.demand[r] > 0.0 && used[r] >= lim[r] * (1.0 - FULL))
                        .map(|r| Stop::Limit {
                            node: v,
                            resource: r,
                        })
                })
            };
            if let Some(w) = why {
                stop[u] = Some(w);
                newly.push(u);
            }
        }
        let candidates: Vec<usize> = (0..n).filter(|&u| stop[u].is_none()).collect();
        if !candidates.is_empty() {
            match capacity.stuck(x, &candidates)? {
                None => {
                    status = capacity.status();
                    break;
                }
                Some(stuck) => {
                    for (&u, s) in candidates.iter().zip(stuck) {
                        if s {
                            stop[u] = Some(Stop::Capacity);
                            newly.push(u);
                        }
                    }
                }
            }
        }
        newly.sort_unstable();
        if stop.iter().all(Option::is_some) {
            break;
        }
        let blocked: Vec<bool> = stop.iter().map(Option::is_some).collect();
        let point = Point {
            instance,
            tree,
            mu,
            x,
            blocked: &blocked,
        };
        let shares = compute(&point, rules);
        let Some(mut dir) = direction(&point, &shares, rules.rescale) else {
            break;
        };
        // Only the direction matters: scaled so that its largest rate is
        // 1, the LPs see no coefficient of the weights' size (weights 1e4
        // apart made rates of 2e9 and a step LP that stopped at half the
        // capacity).
        let top = dir.rate.iter().copied().fold(0.0, f64::max);
        if top > 0.0 {
            for r in dir.rate.iter_mut() {
                *r /= top;
            }
            dir.until *= top;
        }
        let mut until = dir.until;
        let mut event = dir.event;
        let mut capped = None;
        for (u, &r) in dir.rate.iter().enumerate() {
            if let (true, Some(c)) = (r > 0.0, instance.users()[u].tasks) {
                let t = ((c - x[u]) / r).max(0.0);
                if t < until {
                    until = t;
                    event = format!("{} reached its task cap", name(&point, Child::Leaf(u)));
                    capped = Some(u);
                }
            }
        }
        for (v, lim) in stage.limits.iter().enumerate() {
            let (Some(lim), Some(used)) = (lim, &usages[v]) else {
                continue;
            };
            for r in 0..m {
                let grow: f64 = tree.users_under[v]
                    .iter()
                    .map(|&u| instance.users()[u].demand[r] * dir.rate[u])
                    .sum();
                if grow > 0.0 {
                    let t = ((lim[r] - used[r]) / grow).max(0.0);
                    if t < until {
                        until = t;
                        capped = None;
                        event = format!(
                            "queue {} reached its {} of {}",
                            instance.queues()[v - 1].name,
                            if stage.name == "guarantee" {
                                "guarantee"
                            } else {
                                "limit"
                            },
                            instance.resources()[r]
                        );
                    }
                }
            }
        }
        let Some(room) = capacity.step(x, &dir.rate, until)? else {
            status = capacity.status();
            break;
        };
        if room < until {
            until = room;
            capped = None;
            event = "the servers' capacity".into();
        }
        if !until.is_finite() {
            status = Status::Unbounded;
            break;
        }
        let growing: Vec<usize> = (0..n).filter(|&u| dir.rate[u] > 0.0).collect();
        for &u in &growing {
            x[u] += until * dir.rate[u];
        }
        if let Some(u) = capped {
            if let Some(c) = instance.users()[u].tasks {
                x[u] = c;
            }
        }
        if until == 0.0 && event == "the servers' capacity" {
            // No room at all along this direction, though each user alone
            // had some (a tolerance apart): they stop here.
            for &u in &growing {
                stop[u] = Some(Stop::Capacity);
            }
        }
        phases.push(Phase {
            stage: stage.name.into(),
            length: until,
            rates: growing.iter().map(|&u| dir.rate[u]).collect(),
            users: growing,
            event,
            blocked: newly,
        });
    }
    Ok(Filled {
        phases,
        stop,
        status,
    })
}
