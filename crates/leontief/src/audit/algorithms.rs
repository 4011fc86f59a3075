//! The schedulers' share algorithms side by side with the exact
//! hierarchical answer on one instance (`leontief audit INSTANCE
//! --against hdrf,yarn-fair,kai,volcano-proportion,kueue`): per queue each
//! algorithm's share and usable tasks beside the exact answer, the
//! distance (percent fairness and efficiency), the queues that lose most
//! and why, and the properties each violates with a witness.

use super::compare::compare;
use crate::error::Error;
use crate::{Mechanism, Options, Solution, VerifyMode};
use leontief_audit::judge::{judge, Verdict};
use leontief_core::{Instance, UserId};
use serde::Serialize;

/// Queues listed in `lost_most`.
const LOST_MOST: usize = 5;

/// The comparison.
#[derive(Debug, Clone, Serialize)]
pub struct AlgorithmsReport {
    /// The exact reference (`hdrf`, or `hdrfh` when asked for).
    pub reference: Algorithm,
    /// Every other mechanism asked for, in order.
    pub algorithms: Vec<Algorithm>,
    /// What the comparison could not do, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// One mechanism's answer, per queue, with its distance to the reference
/// and the properties it violates.
#[derive(Debug, Clone, Serialize)]
pub struct Algorithm {
    /// The mechanism (spec string).
    pub mechanism: String,
    /// Its status.
    pub status: String,
    /// Its answer passed its own verification.
    pub verified: bool,
    /// 100 x its smallest weighted dominant share over the reference's
    /// (the reference itself: `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairness_percent: Option<f64>,
    /// 100 x its total dominant share over the reference's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency_percent: Option<f64>,
    /// Total tasks.
    pub total_tasks: f64,
    /// Per queue, in input order.
    pub queues: Vec<QueueLine>,
    /// The queues furthest below the reference (at most 5), with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_most: Vec<QueueLoss>,
    /// Sharing incentive relative to guarantees, envy-freeness and Pareto
    /// optimality, each with its witness.
    pub properties: Vec<Property>,
}

/// One queue under one mechanism.
#[derive(Debug, Clone, Serialize)]
pub struct QueueLine {
    /// The queue.
    pub queue: String,
    /// The share the algorithm gave it per resource (schedulers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<Vec<f64>>,
    /// What its subtree's tasks use, per resource.
    pub usage: Vec<f64>,
    /// Its subtree's tasks.
    pub tasks: f64,
    /// The dominant share of `usage`.
    pub dominant_share: f64,
    /// The reference's dominant share for this queue.
    pub reference_dominant_share: f64,
    /// The first over the second (`None` when the reference gives none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

/// A queue that lost, and why.
#[derive(Debug, Clone, Serialize)]
pub struct QueueLoss {
    /// The queue.
    pub queue: String,
    /// Its dominant share over the reference's.
    pub ratio: f64,
    /// Why, in one sentence.
    pub why: String,
}

/// One property of one answer.
#[derive(Debug, Clone, Serialize)]
pub struct Property {
    /// The property.
    pub property: String,
    /// Holds, fails, or `None`: not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holds: Option<bool>,
    /// The witness, or why it was not checked.
    pub detail: String,
}

/// Compare `mechanisms` on `instance`: the first exact hierarchical one
/// (`hdrf` or `hdrfh`) is the reference (`hdrf` when none is listed).
pub fn compare_algorithms(
    instance: &Instance,
    mechanisms: &[Mechanism],
    mode: VerifyMode,
    time_limit: Option<f64>,
) -> Result<AlgorithmsReport, Error> {
    let run = Options {
        verify: mode,
        time_limit,
        ..Options::default()
    };
    let reference_mechanism = mechanisms
        .iter()
        .find(|m| matches!(m, Mechanism::Hdrf | Mechanism::Hdrfh))
        .cloned()
        .unwrap_or(Mechanism::Hdrf);
    let reference = crate::solve(instance, &reference_mechanism, &run)?;
    let highs = run.backend()?;
    let mut notes = Vec::new();
    if !instance.has_queues() {
        notes.push("the instance has no queues: every user sits under the root, and the per-queue tables are empty".into());
    }
    let line = |m: &Mechanism, s: &Solution, is_reference: bool| -> Result<Algorithm, Error> {
        // Pooled answers are judged on the pooled instance (one column).
        let (inst, tasks) = if s.pooled {
            let p = instance.pooled();
            let t = leontief_core::Tasks::from_rows(
                1,
                s.user_tasks.iter().map(|&x| vec![(0, x)]).collect(),
            );
            (p, t)
        } else {
            (instance.clone(), s.tasks.clone())
        };
        let j = judge(&highs, &inst, &tasks, mode, None).map_err(|e| Error::Run(e.to_string()))?;
        let c = compare(
            instance,
            &s.user_tasks,
            j.feasibility.ok,
            &reference_mechanism,
            &reference,
        );
        let mine = instance.queue_usage(&s.user_tasks);
        let theirs = instance.queue_usage(&reference.user_tasks);
        let queue_tasks = queue_tasks(instance, &s.user_tasks);
        let queues: Vec<QueueLine> = instance
            .queues()
            .iter()
            .enumerate()
            .map(|(q, queue)| {
                let a = instance.dominant_share_of(&mine[q]);
                let b = instance.dominant_share_of(&theirs[q]);
                QueueLine {
                    queue: queue.name.clone(),
                    share: s.scheduler.as_ref().map(|d| d.queues[q].share.clone()),
                    usage: mine[q].clone(),
                    tasks: queue_tasks[q],
                    dominant_share: a,
                    reference_dominant_share: b,
                    ratio: (b > 0.0).then(|| a / b),
                }
            })
            .collect();
        let mut lost: Vec<(usize, f64)> = queues
            .iter()
            .enumerate()
            .filter_map(|(q, l)| l.ratio.filter(|&r| r < 1.0 - 1e-9).map(|r| (q, r)))
            .collect();
        lost.sort_by(|a, b| a.1.total_cmp(&b.1));
        lost.truncate(LOST_MOST);
        let lost_most = lost
            .into_iter()
            .map(|(q, ratio)| QueueLoss {
                queue: queues[q].queue.clone(),
                ratio,
                why: why(instance, s, q, &queues[q]),
            })
            .collect();
        let mut properties = vec![guarantees(instance, &s.user_tasks)];
        for v in &j.summary {
            if matches!(
                v.property,
                "sharing incentive" | "envy-freeness" | "Pareto optimality"
            ) {
                properties.push(from_verdict(v));
            }
        }
        Ok(Algorithm {
            mechanism: m.to_string(),
            status: s.status.to_string(),
            verified: s.verification.as_ref().is_some_and(|v| v.ok),
            fairness_percent: (!is_reference).then_some(c.fairness_percent).flatten(),
            efficiency_percent: (!is_reference).then_some(c.efficiency_percent).flatten(),
            total_tasks: s.user_tasks.iter().sum(),
            queues,
            lost_most,
            properties,
        })
    };
    let reference_line = line(&reference_mechanism, &reference, true)?;
    let mut algorithms = Vec::new();
    for m in mechanisms.iter().filter(|m| **m != reference_mechanism) {
        let s = crate::solve(instance, m, &run)?;
        algorithms.push(line(m, &s, false)?);
    }
    Ok(AlgorithmsReport {
        reference: reference_line,
        algorithms,
        notes,
    })
}

fn from_verdict(v: &Verdict) -> Property {
    Property {
        property: v.property.to_string(),
        holds: v.holds,
        detail: v.detail.clone(),
    }
}

/// Each queue's subtree's tasks.
fn queue_tasks(instance: &Instance, x: &[f64]) -> Vec<f64> {
    let qs = instance.queues();
    let mut out = vec![0.0; qs.len()];
    for n in instance.user_ids() {
        let mut at = instance.user_queue(n);
        while let Some(q) = at {
            out[q] += x[n.0];
            at = qs[q].parent;
        }
    }
    out
}

/// Sharing incentive relative to guarantees: every queue holds its
/// guarantee, as far as its users can use it (no user below it could run
/// one more task that keeps the queue within its guarantee).
fn guarantees(instance: &Instance, x: &[f64]) -> Property {
    let qs = instance.queues();
    let usage = instance.queue_usage(x);
    let total = instance.total_capacity();
    let mut any = false;
    for (q, queue) in qs.iter().enumerate() {
        let Some(g) = &queue.guarantee else { continue };
        any = true;
        for n in instance.user_ids() {
            let u = instance.user(n);
            if u.tasks.is_some_and(|t| x[n.0] + 1.0 > t) {
                continue;
            }
            let below = under(instance, n, q);
            let fits = (0..g.len()).all(|r| usage[q][r] + u.demand[r] <= g[r] + total[r] * 1e-9);
            if below && fits {
                return Property {
                    property: "sharing incentive (guarantees)".into(),
                    holds: Some(false),
                    detail: format!(
                        "queue {} uses {} of its guarantee {} while its user {} ({} tasks) could run one more task inside it",
                        queue.name,
                        fmt_vec(&usage[q]),
                        fmt_vec(g),
                        u.name,
                        x[n.0]
                    ),
                };
            }
        }
    }
    Property {
        property: "sharing incentive (guarantees)".into(),
        holds: any.then_some(true),
        detail: if any {
            "every queue holds its guarantee as far as its users can use it".into()
        } else {
            "no queue has a guarantee".into()
        },
    }
}

fn fmt_vec(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| leontief_audit::verdicts::g(*x)).collect();
    format!("[{}]", parts.join(", "))
}

/// Why queue `q` got less under `s` than under the reference.
fn why(instance: &Instance, s: &Solution, q: usize, line: &QueueLine) -> String {
    let resources = instance.resources();
    let Some(d) = s.scheduler.as_ref() else {
        return "a different allocation rule".into();
    };
    let share = &d.queues[q].share;
    // The resource of the queue's share that goes most unused.
    let idle = share
        .iter()
        .zip(&line.usage)
        .enumerate()
        .filter(|(_, (&sh, _))| sh > 0.0)
        .map(|(r, (&sh, &u))| (r, 1.0 - u / sh))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let idle_text = match idle {
        Some((r, f)) if f > 0.01 => format!(
            "{:.1}% of its {} share goes unused: the per-resource split ignores that its tasks need the resources together",
            100.0 * f,
            resources[r]
        ),
        _ => "it uses its whole share".into(),
    };
    let mine: Vec<UserId> = instance
        .user_ids()
        .filter(|&n| under(instance, n, q))
        .collect();
    let starved = mine.iter().filter(|n| d.users[n.0].tasks == 0.0).count();
    match d.algorithm.as_str() {
        "kueue" => {
            let fifo = if starved > 0 && starved < mine.len() {
                format!(
                    "; inside a ClusterQueue workloads go first come first served: {starved} of its {} users got nothing",
                    mine.len()
                )
            } else {
                String::new()
            };
            format!(
                "admitted in dominant-resource-share order (its share ended at {} per mille of what it may borrow); nothing more of it fits a limit or the cluster{fifo}",
                d.queues[q].drs.unwrap_or(0.0)
            )
        }
        "volcano-proportion" => format!("its deserved vector: {idle_text}"),
        _ => {
            // Tasks the users' shares fit, against the whole ones run.
            let fit: f64 = mine
                .iter()
                .map(|&n| {
                    let dem = &instance.user(n).demand;
                    (0..dem.len())
                        .filter(|&r| dem[r] > 0.0)
                        .map(|r| d.users[n.0].share[r] / dem[r])
                        .fold(f64::INFINITY, f64::min)
                })
                .filter(|f| f.is_finite())
                .sum();
            let rounded = if d.quantum.is_some() {
                ", shares rounded down to whole quanta"
            } else {
                ""
            };
            format!(
                "its users' shares fit {} tasks, {} whole ones run{rounded}; {idle_text}",
                leontief_audit::verdicts::g(fit),
                leontief_audit::verdicts::g(line.tasks)
            )
        }
    }
}

/// Is user `n` in queue `q`'s subtree?
fn under(instance: &Instance, n: UserId, q: usize) -> bool {
    let mut at = instance.user_queue(n);
    while let Some(p) = at {
        if p == q {
            return true;
        }
        at = instance.queues()[p].parent;
    }
    false
}
