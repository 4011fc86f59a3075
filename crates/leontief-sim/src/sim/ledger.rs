//! What runs where: the ledger of running tasks, input checks, time keys.

use super::*;
use crate::workload::Workload;

pub(crate) const FIT_SLACK: f64 = 1e-9;

pub(crate) fn check_inputs(
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
        s if s.tree_rules().is_some() => {
            if let Some(q) = workload.queues.iter().position(|q| q.guarantee.is_some()) {
                return bad(
                    &format!("queues[{q}].guarantee"),
                    format!(
                        "is not handed out task by task by {}; use hdrfh (divisible tasks) for guarantees",
                        s.name()
                    ),
                );
            }
        }
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
pub(crate) struct Ledger {
    pub(crate) submitted: Vec<u64>,
    pub(crate) finished: Vec<u64>,
    pub(crate) unschedulable: Vec<u64>,
    pub(crate) job_tasks: Vec<u64>,
    pub(crate) job_done: Vec<u64>,
    pub(crate) job_submit: Vec<f64>,
    pub(crate) job_finish: Vec<f64>,
    pub(crate) used: Vec<f64>,
    pub(crate) dom: Vec<f64>,
    pub(crate) integral: Vec<f64>,
    pub(crate) last_t: f64,
    pub(crate) sample_times: Vec<f64>,
    pub(crate) utilisation: Vec<Vec<f64>>,
    pub(crate) shares: Vec<Vec<f64>>,
}

impl Ledger {
    pub(crate) fn new(workload: &Workload) -> Ledger {
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
    pub(crate) fn arrive(&mut self, t: &crate::workload::Task) {
        self.submitted[t.user] += 1;
        self.job_tasks[t.job] += 1;
        self.job_submit[t.job] = self.job_submit[t.job].min(t.submit);
    }
    pub(crate) fn finish(&mut self, t: &crate::workload::Task, time: f64) {
        self.finished[t.user] += 1;
        self.job_done[t.job] += 1;
        self.job_finish[t.job] = self.job_finish[t.job].max(time);
    }
    /// Integrate utilisation up to `t`.
    pub(crate) fn advance(&mut self, t: f64) {
        let dt = t - self.last_t;
        if dt > 0.0 {
            for (i, u) in self.integral.iter_mut().zip(&self.used) {
                *i += u * dt;
            }
            self.last_t = t;
        }
    }
    pub(crate) fn sample(&mut self, t: f64, pool: &[f64]) {
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
pub(crate) fn task_mu(d: &[f64], pool: &[f64]) -> f64 {
    d.iter()
        .zip(pool)
        .filter(|(_, c)| **c > 0.0)
        .map(|(x, c)| x / c)
        .fold(0.0, f64::max)
}

/// Next time among arrivals, the finish heap and the sample clock.
pub(crate) fn next_time(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Time key for heaps (times are >= 0, so the bits order like the values).
pub(crate) fn key(t: f64) -> u64 {
    t.max(0.0).to_bits()
}
