//! The allocation every mechanism returns, its JSON form (the contract of
//! `docs/instance-format.md`) and the metrics every output carries.

use crate::ids::{ResourceId, ServerId, UserId};
use crate::instance::Instance;
use crate::tasks::Tasks;
use crate::verification::Verification;
use leontief_model::Status;
use serde::Serialize;

/// Metrics reported for every allocation (Sec. VI of 000, Sec. V of 001).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// G_n = x_n mu_n, each user's global dominant share.
    pub dominant_shares: Vec<f64>,
    /// G_n / w_n, the weighted (normalised) dominant shares.
    pub normalised_shares: Vec<f64>,
    /// Used fraction of each resource over all servers (0 where C_r = 0).
    pub utilisation: Vec<f64>,
    /// Used fraction of each resource on each server entry
    /// (`[entry][resource]`, 0 where the entry has none of it).
    pub server_utilisation: Vec<Vec<f64>>,
    /// NTT: total tasks, sum_n x_n.
    pub total_tasks: f64,
    /// AUR: unused capacity of each resource, C_r - used_r (absolute units).
    pub unused_capacity: Vec<f64>,
    /// Jain's index of the normalised dominant shares,
    /// (sum s)^2 / (N sum s^2); 1 when all are equal (and when all are 0).
    pub jain_index: f64,
    /// Largest violation of a capacity (absolute, 0 when feasible).
    pub max_capacity_violation: f64,
}

/// The dual certificate of a max-min allocation: per round, prices per
/// unit of each resource on each server entry that prove, by weak duality,
/// that the users listed cannot rise above their round's level without
/// pushing another user below its own. `leontief-audit`'s
/// `max_min_certificate` checks it in one pass over every runnable pair.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxMinCertificate {
    /// How the answer was found, printed as its name: `pooled` (the
    /// pooled levels, realised on a sparse set of pairs), `flat` (every
    /// pair), `generated` (column generation), `capped`, `patterns`.
    pub path: crate::Path,
    /// Runnable user-entry pairs.
    pub pairs: usize,
    /// Pair columns the LP held at the end.
    pub columns: usize,
    /// Pricing passes over every runnable pair.
    pub pricing_passes: usize,
    /// Each pricing pass: the solve before it, the pass, the columns it
    /// added (empty when no pass ran).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PricingPass>,
    /// When identical server entries were merged before solving: the
    /// classes solved (`pairs` and `columns` count classes, not entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_classes: Option<usize>,
    /// When the pooled levels were realised group by group (`path`
    /// `pooled`, many users on many entries): the groups of entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<usize>,
    /// One entry per round that froze a user by its resources.
    pub rounds: Vec<RoundPrices>,
}

/// One pricing pass of column generation, in the order run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PricingPass {
    /// Seconds of the LP solve whose duals the pass priced with.
    pub solve_seconds: f64,
    /// Seconds pricing every pair left out.
    pub pricing_seconds: f64,
    /// Columns (pairs, or patterns on the pattern master) it added.
    pub columns: usize,
}

/// The dual certificate of a maximum total (NFC): prices per unit of each
/// resource on each server entry, and per task of each user's cap. For
/// any feasible allocation x and mu = the least price of one task over
/// every pair that can carry one (`d_n . p_i + q_n`), weak duality gives
/// `sum_n X_n <= (sum_{i,r} c_{i,r} p_{i,r} + sum_n T_n q_n) / mu`;
/// `leontief-audit`'s `total_certificate` checks in one pass over every
/// pair that this bound meets the allocation's total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TotalCertificate {
    /// How the answer was found, printed as its name: `flat` (every pair
    /// in one LP) or `generated` (column generation from a sparse seed).
    pub path: crate::Path,
    /// User-entry pairs that can carry a task.
    pub pairs: usize,
    /// Pair columns the LP held at the end.
    pub columns: usize,
    /// Pricing passes over every pair.
    pub pricing_passes: usize,
    /// `prices[i][r] >= 0`: price per unit of resource r on entry i, in
    /// the instance's units.
    pub prices: Vec<Vec<f64>>,
    /// `cap_prices[n] >= 0`: price per task of user n's cap (0 for a user
    /// without one).
    pub cap_prices: Vec<f64>,
}

/// One round of a [`MaxMinCertificate`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct RoundPrices {
    /// The round (1-based, as in `frozen_round`).
    pub round: usize,
    /// The users (indices) these prices certify.
    pub users: Vec<usize>,
    /// `prices[i][r] >= 0`: price per unit of resource r on entry i, in
    /// the instance's units.
    pub prices: Vec<Vec<f64>>,
}

/// A certificate round as printed: `prices` one row per entry (the dense
/// layout), or, with `entries`, one row per listed entry and 0 for every
/// other (the sparse layout).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct PrintedRound {
    /// The round (1-based).
    pub round: usize,
    /// The users (indices) the prices certify.
    pub users: Vec<usize>,
    /// Per entry (or per listed entry), per resource.
    pub prices: Vec<Vec<f64>>,
    /// The sparse layout: the entries `prices` are for.
    #[serde(default)]
    pub entries: Option<Vec<usize>>,
}

impl PrintedRound {
    /// The round with one row of `m` prices per entry of `k`; the error
    /// names the field (relative to the round) that does not fit.
    pub fn into_dense(self, k: usize, m: usize) -> Result<RoundPrices, String> {
        let prices = match self.entries {
            None => self.prices,
            Some(entries) => {
                if entries.len() != self.prices.len() {
                    return Err(format!(
                        "entries has {} indices and prices {} rows: they must be as long",
                        entries.len(),
                        self.prices.len()
                    ));
                }
                let mut dense = vec![vec![0.0; m]; k];
                for (j, (i, row)) in entries.into_iter().zip(self.prices).enumerate() {
                    if i >= k {
                        return Err(format!("entries[{j}] is {i}, the instance has {k} entries"));
                    }
                    dense[i] = row;
                }
                dense
            }
        };
        Ok(RoundPrices {
            round: self.round,
            users: self.users,
            prices,
        })
    }
}

/// The sparse layout of `tasks`: its nonzero entries, row by row (COO:
/// `tasks[user[j]][server[j]] = tasks_value[j]`, every other entry 0).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SparseTasks {
    /// Rows of the dense matrix (users).
    pub users: usize,
    /// Columns of the dense matrix (server entries).
    pub servers: usize,
    /// Row of each entry (user index), ascending.
    pub user: Vec<usize>,
    /// Column of each entry (server entry index), ascending within a row.
    pub server: Vec<usize>,
    /// The values, all nonzero.
    pub tasks: Vec<f64>,
}

impl SparseTasks {
    /// The nonzero entries of `tasks`, row by row.
    pub fn from_tasks(tasks: &Tasks) -> SparseTasks {
        let mut s = SparseTasks {
            users: tasks.users(),
            servers: tasks.servers(),
            user: Vec::with_capacity(tasks.nonzero_count()),
            server: Vec::with_capacity(tasks.nonzero_count()),
            tasks: Vec::with_capacity(tasks.nonzero_count()),
        };
        for (n, i, v) in tasks.nonzeros() {
            s.user.push(n);
            s.server.push(i);
            s.tasks.push(v);
        }
        s
    }

    /// The entries as [`Tasks`]; `None` when an index is out of range or
    /// the arrays differ in length.
    pub fn to_tasks(&self) -> Option<Tasks> {
        if self.user.len() != self.tasks.len() || self.server.len() != self.tasks.len() {
            return None;
        }
        let mut rows = vec![Vec::new(); self.users];
        for ((&n, &i), &v) in self.user.iter().zip(&self.server).zip(&self.tasks) {
            if i >= self.servers {
                return None;
            }
            rows.get_mut(n)?.push((i, v));
        }
        Some(Tasks::from_rows(self.servers, rows))
    }

    /// The dense matrix (`users` rows of `servers` entries); `None` when an
    /// index is out of range or the arrays differ in length.
    pub fn to_dense(&self) -> Option<Vec<Vec<f64>>> {
        if self.user.len() != self.tasks.len() || self.server.len() != self.tasks.len() {
            return None;
        }
        let mut d = vec![vec![0.0; self.servers]; self.users];
        for ((&n, &i), &v) in self.user.iter().zip(&self.server).zip(&self.tasks) {
            *d.get_mut(n)?.get_mut(i)? = v;
        }
        Some(d)
    }
}

/// An allocation and everything reported with it.
#[derive(Debug, Clone, Serialize)]
pub struct Allocation {
    /// Mechanism name as on the command line.
    pub mechanism: String,
    /// The lossless outcome (the worst over all solves the mechanism made).
    pub status: Status,
    /// The backend's own status for the solve that decided `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend_status: Option<String>,
    /// x_n, tasks of each user (input order).
    pub user_tasks: Vec<f64>,
    /// x_{n,i}, tasks of user n on server entry i (class totals), held
    /// sparsely; serialised as the dense matrix.
    pub tasks: Tasks,
    /// Mechanism objective: the max-min level of the first round, or the
    /// NFC total; `None` when there is no solution.
    pub objective: Option<f64>,
    /// Seconds spent building models.
    pub build_seconds: f64,
    /// Seconds spent in solver calls (or the closed form).
    pub solve_seconds: f64,
    /// Number of LPs solved (0 for closed forms).
    pub lps_solved: usize,
    /// Metrics of the allocation.
    pub metrics: Metrics,
    /// Max-min mechanisms: each user's final level s_n / w_n.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<f64>>,
    /// Max-min mechanisms: the round (1-based) in which each user froze
    /// (0: it could not run at all and was fixed at zero before round 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frozen_round: Option<Vec<usize>>,
    /// Why each user got what it got, in one sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub explanation: Vec<String>,
    /// True when the servers were pooled into one (DRF's all-in-one model).
    pub pooled: bool,
    /// Remarks a reader must see (pooling, ignored fields, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Heuristics: the distance to the matching exact mechanism;
    /// fairness-efficiency families: percent fairness against DRFH,
    /// percent efficiency against NFC and leftover capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap: Option<crate::details::Gap>,
    /// BBF mechanisms: the bottleneck set, the resource prices (Fisher-market
    /// equilibrium prices for Eisenberg-Gale), the solver's certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbf: Option<crate::details::BbfDetails>,
    /// Hierarchical mechanisms: every queue's outcome and the filling's
    /// trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<crate::hierarchy::HierarchyDetails>,
    /// Production schedulers' share algorithms: each queue's and user's
    /// share and the tasks run inside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<crate::schedulers::SchedulerDetails>,
    /// Max-min mechanisms solved by an LP: the dual certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<MaxMinCertificate>,
    /// NFC: the dual certificate of the maximum total.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_certificate: Option<TotalCertificate>,
    /// The independent check of the mechanism's defining property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
}

impl Allocation {
    /// An allocation with the metrics filled in from `tasks`.
    pub fn new(
        instance: &Instance,
        mechanism: &str,
        status: Status,
        tasks: impl Into<Tasks>,
    ) -> Self {
        let tasks: Tasks = tasks.into();
        let user_tasks = tasks.user_totals();
        let metrics = Metrics::compute(instance, &tasks);
        Allocation {
            mechanism: mechanism.to_string(),
            status,
            backend_status: None,
            user_tasks,
            tasks,
            objective: None,
            build_seconds: 0.0,
            solve_seconds: 0.0,
            lps_solved: 0,
            metrics,
            levels: None,
            frozen_round: None,
            explanation: Vec::new(),
            pooled: false,
            notes: Vec::new(),
            gap: None,
            bbf: None,
            hierarchy: None,
            scheduler: None,
            certificate: None,
            total_certificate: None,
            verification: None,
        }
    }

    /// An allocation with no solution (every task 0), carrying `status`.
    pub fn empty(instance: &Instance, mechanism: &str, status: Status) -> Self {
        let tasks = Tasks::zeros(instance.num_users(), instance.num_entries());
        Allocation::new(instance, mechanism, status, tasks)
    }
}

#[cfg(test)]
mod sparse_tests {
    use super::SparseTasks;
    use crate::tasks::Tasks;

    #[test]
    fn sparse_round_trips_and_keeps_only_nonzeros() {
        let dense = vec![vec![0.0, 1.5, 0.0], vec![2.0, 0.0, 0.25]];
        let s = SparseTasks::from_tasks(&Tasks::from(dense.clone()));
        assert_eq!(s.user, vec![0, 1, 1]);
        assert_eq!(s.server, vec![1, 0, 2]);
        assert_eq!(s.to_dense().unwrap(), dense);
        assert_eq!(s.to_tasks().unwrap().to_dense(), dense);
        let mut bad = s.clone();
        bad.server[0] = 3;
        assert!(bad.to_dense().is_none());
        assert!(bad.to_tasks().is_none());
    }
}

impl Metrics {
    /// The smallest weighted (normalised) dominant share: the max-min
    /// level, and the numerator of percent fairness (Sec. V of 002).
    pub fn min_normalised_share(&self) -> f64 {
        self.normalised_shares
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    /// Metrics of the allocation `tasks[n][i]` on `instance`.
    pub fn compute(instance: &Instance, tasks: &Tasks) -> Metrics {
        let m = instance.num_resources();
        let k = instance.num_entries();
        let mut used = vec![vec![0.0; m]; k];
        let mut user_tasks = Vec::with_capacity(tasks.users());
        for (n, row) in tasks.rows().enumerate() {
            let d = &instance.user(UserId(n)).demand;
            for (i, x) in row {
                for r in 0..m {
                    used[i][r] += x * d[r];
                }
            }
            user_tasks.push(tasks.user_total(n));
        }
        let mut total_used = vec![0.0; m];
        let mut violation = 0.0f64;
        let server_utilisation = (0..k)
            .map(|i| {
                (0..m)
                    .map(|r| {
                        let c = instance.class_capacity(ServerId(i), ResourceId(r));
                        total_used[r] += used[i][r];
                        violation = violation.max(used[i][r] - c);
                        if c > 0.0 {
                            used[i][r] / c
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        let cap = instance.total_capacity();
        let dominant_shares: Vec<f64> = instance
            .user_ids()
            .map(|n| {
                let mu = instance.mu(n);
                if user_tasks[n.0] == 0.0 {
                    0.0
                } else {
                    user_tasks[n.0] * mu
                }
            })
            .collect();
        let normalised_shares: Vec<f64> = dominant_shares
            .iter()
            .zip(instance.users())
            .map(|(g, u)| g / u.weight)
            .collect();
        Metrics {
            jain_index: jain(&normalised_shares),
            dominant_shares,
            normalised_shares,
            utilisation: (0..m)
                .map(|r| {
                    if cap[r] > 0.0 {
                        total_used[r] / cap[r]
                    } else {
                        0.0
                    }
                })
                .collect(),
            server_utilisation,
            total_tasks: user_tasks.iter().sum(),
            unused_capacity: (0..m).map(|r| cap[r] - total_used[r]).collect(),
            max_capacity_violation: violation.max(0.0),
        }
    }
}

/// Jain's fairness index (sum s)^2 / (N sum s^2), 1 for an empty or all-zero
/// vector.
pub fn jain(s: &[f64]) -> f64 {
    let sum: f64 = s.iter().sum();
    let sq: f64 = s.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (s.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-15);
        assert_eq!(jain(&[0.0, 0.0]), 1.0);
    }

    #[test]
    fn metrics_of_fig1_allocation() {
        let inst = Instance::from_json_str(
            r#"{"resources":["cpu","mem"],
                "servers":[{"name":"s1","capacity":[2,12]},{"name":"s2","capacity":[12,2]}],
                "users":[{"name":"u1","demand":[0.2,1]},{"name":"u2","demand":[1,0.2]}]}"#,
        )
        .unwrap();
        let a = Allocation::new(
            &inst,
            "x",
            Status::Optimal,
            vec![vec![10.0, 0.0], vec![0.0, 10.0]],
        );
        assert_eq!(a.user_tasks, vec![10.0, 10.0]);
        // mu = 1/14 for both: G = 10/14.
        assert!((a.metrics.dominant_shares[0] - 10.0 / 14.0).abs() < 1e-15);
        assert!((a.metrics.utilisation[0] - 12.0 / 14.0).abs() < 1e-15);
        assert!((a.metrics.server_utilisation[0][1] - 10.0 / 12.0).abs() < 1e-15);
        assert_eq!(a.metrics.total_tasks, 20.0);
        assert!((a.metrics.unused_capacity[0] - 2.0).abs() < 1e-12);
        assert_eq!(a.metrics.max_capacity_violation, 0.0);
        assert!((a.metrics.jain_index - 1.0).abs() < 1e-15);
    }
}
