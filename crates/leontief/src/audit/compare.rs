//! The distance from an audited allocation to an exact mechanism's answer
//! on the same instance.

use crate::{Mechanism, Solution};
use leontief_core::{Instance, UserId};
use serde::Serialize;

/// How many users `lost_most` lists.
const LOST_MOST: usize = 5;

/// The audited allocation against one mechanism.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The mechanism (spec string).
    pub mechanism: String,
    /// Its solve status.
    pub status: String,
    /// Its answer was verified.
    pub verified: bool,
    /// 100 x the smallest weighted dominant share (mu_n x_n / w_n) of the
    /// audited allocation over the mechanism's, both over the users the
    /// mechanism serves (the worst-off user, relative); `None` when the
    /// mechanism serves nobody.
    pub fairness_percent: Option<f64>,
    /// 100 x the total dominant share (sum mu_n x_n) of the audited
    /// allocation over the mechanism's; `None` when the mechanism's is 0.
    pub efficiency_percent: Option<f64>,
    /// Per user: its tasks, the mechanism's, the ratio.
    pub users: Vec<Ratio>,
    /// The users with the smallest ratio below 1, smallest first (at most
    /// 5).
    pub lost_most: Vec<Ratio>,
    /// Per queue (instances with queues): its subtree's dominant share
    /// against the mechanism's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueRatio>,
    /// Why there is no distance (the audited allocation is infeasible).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One queue's dominant share against a mechanism's.
#[derive(Debug, Clone, Serialize)]
pub struct QueueRatio {
    /// The queue.
    pub queue: String,
    /// Its subtree's dominant share in the audited allocation.
    pub dominant_share: f64,
    /// Under the mechanism.
    pub mechanism_dominant_share: f64,
    /// The first over the second (`None` when the mechanism gives none).
    pub ratio: Option<f64>,
}

/// One user's tasks against a mechanism's.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The user.
    pub user: String,
    /// Its tasks in the audited allocation.
    pub tasks: f64,
    /// Its tasks under the mechanism.
    pub mechanism_tasks: f64,
    /// tasks / mechanism_tasks (`None` when the mechanism gives none).
    pub ratio: Option<f64>,
}

fn level(instance: &Instance, n: usize, x: f64) -> f64 {
    if x == 0.0 {
        0.0
    } else {
        instance.mu(UserId(n)) * x / instance.users()[n].weight
    }
}

fn share(instance: &Instance, x: &[f64]) -> f64 {
    (0..x.len())
        .filter(|&n| x[n] != 0.0)
        .map(|n| instance.mu(UserId(n)) * x[n])
        .sum()
}

/// Compare `x` (tasks per user) with `solution`, the answer of `mechanism`.
/// `feasible`: the audit found `x` feasible; an infeasible allocation
/// gets no fairness or efficiency percent (more than the capacity can
/// give is no measure of either).
pub fn compare(
    instance: &Instance,
    x: &[f64],
    feasible: bool,
    mechanism: &Mechanism,
    solution: &Solution,
) -> Comparison {
    let has = solution.status.has_solution();
    let theirs: Vec<f64> = if has {
        solution.user_tasks.clone()
    } else {
        vec![0.0; x.len()]
    };
    // Over the users the mechanism serves (one it gives nothing, e.g.
    // demanding a resource no server has, says nothing of fairness).
    let min_level = |v: &[f64]| {
        (0..v.len())
            .filter(|&n| theirs[n] > 0.0)
            .map(|n| level(instance, n, v[n]))
            .fold(f64::INFINITY, f64::min)
    };
    let percent =
        |a: f64, b: f64| (feasible && has && b > 0.0 && b.is_finite()).then(|| 100.0 * a / b);
    let users: Vec<Ratio> = instance
        .users()
        .iter()
        .enumerate()
        .map(|(n, u)| Ratio {
            user: u.name.clone(),
            tasks: x[n],
            mechanism_tasks: theirs[n],
            ratio: (has && theirs[n] > 0.0).then(|| x[n] / theirs[n]),
        })
        .collect();
    let mut lost: Vec<Ratio> = users
        .iter()
        .filter(|r| r.ratio.is_some_and(|q| q < 1.0 - 1e-9))
        .cloned()
        .collect();
    lost.sort_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)));
    lost.truncate(LOST_MOST);
    let mine = instance.queue_usage(x);
    let other = instance.queue_usage(&theirs);
    let queues = instance
        .queues()
        .iter()
        .enumerate()
        .map(|(q, queue)| {
            let a = instance.dominant_share_of(&mine[q]);
            let b = instance.dominant_share_of(&other[q]);
            QueueRatio {
                queue: queue.name.clone(),
                dominant_share: a,
                mechanism_dominant_share: b,
                ratio: (has && b > 0.0).then(|| a / b),
            }
        })
        .collect();
    Comparison {
        mechanism: mechanism.to_string(),
        status: solution.status.to_string(),
        verified: solution.verification.as_ref().is_some_and(|v| v.ok),
        fairness_percent: percent(min_level(x), min_level(&theirs)),
        efficiency_percent: percent(share(instance, x), share(instance, &theirs)),
        users,
        lost_most: lost,
        queues,
        note: (!feasible).then(|| {
            "the audited allocation is infeasible: no fairness or efficiency percent".to_string()
        }),
    }
}
