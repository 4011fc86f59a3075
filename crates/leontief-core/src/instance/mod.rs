//! Instances in the v1 JSON format (`docs/instance-format.md`), and
//! their validation.
//!
//! Parsing goes through [`RawInstance`] (exactly the JSON, unknown fields
//! rejected so that a misspelt `weigth` is never silently ignored) and then
//! [`Instance::new`], which checks every rule of the format and reports
//! *all* problems, each with the path of the offending entry
//! (`users[3].demand[1] is negative (-0.5)`). A text is first read with
//! the users' placement lists borrowed from it (`parse`), the same fields
//! and rules, and only a text that fails is parsed again with paths.

use crate::ids::{ResourceId, ServerId, UserId};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

mod parse;
mod queues;
mod validate;

pub use queues::{Queue, RawQueue, MAX_QUEUES, MAX_QUEUE_DEPTH};

/// The instance exactly as written in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstance {
    /// Optional instance name (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Optional description (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Resource names.
    pub resources: Vec<String>,
    /// Server entries.
    pub servers: Vec<RawServer>,
    /// Users.
    pub users: Vec<RawUser>,
    /// The queue tree of the hierarchical mechanisms (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<Vec<RawQueue>>,
    /// The unit each resource is counted in by the production schedulers'
    /// share algorithms that round (`yarn-fair`, `kai`), in the instance's
    /// units (absent: no rounding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Vec<f64>>,
}

/// A server entry as written in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    /// Unique name.
    pub name: String,
    /// Capacity of one server, per resource.
    pub capacity: Vec<f64>,
    /// Number of identical servers in this class (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// A user as written in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawUser {
    /// Unique name.
    pub name: String,
    /// Per-task demand, per resource.
    pub demand: Vec<f64>,
    /// Weight / entitlement (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Task cap (absent or null: unbounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<f64>,
    /// Eligible server names (absent or null: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Vec<String>>,
    /// k-DF per-rank weights w_{n,1}, w_{n,2}, ... (extension; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_weights: Option<Vec<f64>>,
    /// The queue the user belongs to, by name (absent: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

/// One problem found in an instance: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON path of the offending entry, e.g. `users[3].demand[1]`.
    pub at: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{} {}", self.at, self.reason)
        }
    }
}

/// Why an instance could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The text is not JSON of the instance's shape.
    #[error("{}", fmt_parse(.at, .reason))]
    Parse {
        /// JSON path where parsing failed (empty for the document itself).
        at: String,
        /// serde's message.
        reason: String,
    },
    /// The JSON has the right shape but breaks the format's rules.
    #[error("invalid instance:\n{}", fmt_issues(.0))]
    Invalid(Vec<Issue>),
}

fn fmt_parse(at: &str, reason: &str) -> String {
    if at.is_empty() || at == "." {
        format!("invalid instance JSON: {reason}")
    } else {
        format!("invalid instance JSON at {at}: {reason}")
    }
}

fn fmt_issues(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| format!("  {i}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl InstanceError {
    /// Every issue, for a parse error the single one.
    pub fn issues(&self) -> Vec<Issue> {
        match self {
            InstanceError::Io { path, source } => vec![Issue {
                at: String::new(),
                reason: format!("cannot read {path}: {source}"),
            }],
            InstanceError::Parse { at, reason } => vec![Issue {
                at: at.clone(),
                reason: reason.clone(),
            }],
            InstanceError::Invalid(v) => v.clone(),
        }
    }
}

/// A server entry of a validated instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// Name.
    pub name: String,
    /// Capacity of one server.
    pub capacity: Vec<f64>,
    /// Number of identical servers (>= 1).
    pub count: u64,
}

/// A user of a validated instance.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    /// Name.
    pub name: String,
    /// Per-task demand.
    pub demand: Vec<f64>,
    /// Weight (> 0).
    pub weight: f64,
    /// Task cap, `None` for unbounded.
    pub tasks: Option<f64>,
    /// Eligible server entries, `None` for all (sorted, no repeats).
    pub servers: Option<Vec<ServerId>>,
    /// k-DF per-rank weights (default all 1).
    pub rank_weights: Option<Vec<f64>>,
}

/// A validated instance: every rule of the format holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    name: Option<String>,
    resources: Vec<String>,
    servers: Vec<Server>,
    users: Vec<User>,
    /// `class_capacity[i * m + r] = count_i * capacity_{i,r}`.
    class_capacity: Vec<f64>,
    total_capacity: Vec<f64>,
    /// The queue tree (empty: none).
    queues: Vec<Queue>,
    /// `quantum`, when given.
    quantum: Option<Vec<f64>>,
    /// Each user's queue (`None`: a child of the root).
    user_queue: Vec<Option<usize>>,
}

/// The smallest positive number an instance may hold (capacities,
/// demands, weights, caps, rank weights): below it, products and ratios of
/// two such numbers could leave the range of normal floating-point numbers.
pub const MIN_VALUE: f64 = 1e-150;
/// The largest number an instance may hold.
pub const MAX_VALUE: f64 = 1e150;
/// The smallest demand relative to the largest server capacity of its
/// resource, and the reciprocal of the largest (see [`Instance::new`]).
pub const MIN_TASK_FRACTION: f64 = 1e-12;
/// How far apart two users' weights may be (see [`Instance::new`]): 1e9,
/// the spread every max-min mechanism answers exactly (weights exactly
/// 1e12 apart ended `numerical_failure`).
pub const MAX_WEIGHT_RATIO: f64 = 1e9;
/// The most physical servers an instance holds, every `count` added up
/// (and so the largest `count`): 10^12. Beyond it a capacity row of
/// count x capacity leaves what the LP solvers keep (HiGHS refuses matrix
/// values above 1e15; a class of 2^53 servers ended exit 1).
pub const MAX_COUNT: u64 = 1_000_000_000_000;

impl Instance {
    /// The instance on other server entries, `servers`, with every user
    /// and queue as they are: entry i of this instance is entry
    /// `entry_of[i]` of `servers`, and each user's list names the entries
    /// its servers map to (without repeats); `entry_of` `None` drops the
    /// lists. What merging entries (classes, pooled groups) builds.
    pub fn to_raw_on(&self, servers: Vec<RawServer>, entry_of: Option<&[usize]>) -> RawInstance {
        let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
        self.raw_with(servers, |list| {
            let of = entry_of?;
            let mut named: Vec<usize> = list.iter().map(|i| of[i.0]).collect();
            named.sort_unstable();
            named.dedup();
            Some(named.into_iter().map(|e| names[e].clone()).collect())
        })
    }

    /// Back to the JSON shape (for generators and round trips).
    pub fn to_raw(&self) -> RawInstance {
        let servers = self
            .servers
            .iter()
            .map(|s| RawServer {
                name: s.name.clone(),
                capacity: s.capacity.clone(),
                count: (s.count != 1).then_some(s.count),
            })
            .collect();
        self.raw_with(servers, |ids| {
            Some(
                ids.iter()
                    .map(|&i| self.servers[i.0].name.clone())
                    .collect(),
            )
        })
    }

    /// The JSON shape on `servers`, each user's placement list written by
    /// `list` (`None` drops it).
    fn raw_with(
        &self,
        servers: Vec<RawServer>,
        list: impl Fn(&[ServerId]) -> Option<Vec<String>>,
    ) -> RawInstance {
        let users = self
            .users
            .iter()
            .enumerate()
            .map(|(n, u)| RawUser {
                name: u.name.clone(),
                demand: u.demand.clone(),
                weight: (u.weight != 1.0).then_some(u.weight),
                tasks: u.tasks,
                servers: u.servers.as_deref().and_then(&list),
                rank_weights: u.rank_weights.clone(),
                queue: self.user_queue[n].map(|q| self.queues[q].name.clone()),
            })
            .collect();
        RawInstance {
            name: self.name.clone(),
            description: None,
            resources: self.resources.clone(),
            servers,
            users,
            queues: self.raw_queues(),
            quantum: self.quantum.clone(),
        }
    }

    /// The unit each resource is counted in by the schedulers' share
    /// algorithms that round (`None`: no rounding).
    pub fn quantum(&self) -> Option<&[f64]> {
        self.quantum.as_deref()
    }

    /// The queue tree (empty when the instance has none).
    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }
    /// The queue tree as written in JSON (`None` without one).
    pub fn raw_queues(&self) -> Option<Vec<RawQueue>> {
        (!self.queues.is_empty())
            .then(|| self.queues.iter().map(|q| q.to_raw(&self.queues)).collect())
    }
    /// The name of user `n`'s queue (`None`: the root).
    pub fn user_queue_name(&self, n: UserId) -> Option<String> {
        self.user_queue[n.0].map(|q| self.queues[q].name.clone())
    }
    /// The queue of user `n` (`None`: a child of the root).
    pub fn user_queue(&self, n: UserId) -> Option<usize> {
        self.user_queue[n.0]
    }
    /// True when the instance has a queue tree.
    pub fn has_queues(&self) -> bool {
        !self.queues.is_empty()
    }
    /// Each queue's use of each resource (its subtree's users' tasks `x`
    /// times their demands).
    pub fn queue_usage(&self, x: &[f64]) -> Vec<Vec<f64>> {
        let m = self.resources.len();
        let mut out = vec![vec![0.0; m]; self.queues.len()];
        for (n, u) in self.users.iter().enumerate() {
            let mut q = self.user_queue[n];
            while let Some(i) = q {
                for (o, &d) in out[i].iter_mut().zip(&u.demand) {
                    *o += d * x[n];
                }
                q = self.queues[i].parent;
            }
        }
        out
    }
    /// The dominant share of a resource vector: max_r v_r / C_r.
    pub fn dominant_share_of(&self, v: &[f64]) -> f64 {
        v.iter()
            .zip(&self.total_capacity)
            .filter(|(_, &c)| c > 0.0)
            .map(|(&a, &c)| a / c)
            .fold(0.0, f64::max)
    }

    /// Optional name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Resource names.
    #[inline]
    pub fn resources(&self) -> &[String] {
        &self.resources
    }
    /// Server entries.
    #[inline]
    pub fn servers(&self) -> &[Server] {
        &self.servers
    }
    /// Users.
    #[inline]
    pub fn users(&self) -> &[User] {
        &self.users
    }
    /// m, the number of resources.
    #[inline]
    pub fn num_resources(&self) -> usize {
        self.resources.len()
    }
    /// k, the number of server entries (classes count once).
    #[inline]
    pub fn num_entries(&self) -> usize {
        self.servers.len()
    }
    /// Total number of physical servers (sum of counts).
    pub fn num_physical_servers(&self) -> u64 {
        self.servers
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.count))
    }
    /// N, the number of users.
    #[inline]
    pub fn num_users(&self) -> usize {
        self.users.len()
    }
    /// All user ids.
    pub fn user_ids(&self) -> impl Iterator<Item = UserId> {
        (0..self.users.len()).map(UserId)
    }
    /// All server entry ids.
    pub fn server_ids(&self) -> impl Iterator<Item = ServerId> {
        (0..self.servers.len()).map(ServerId)
    }
    /// All resource ids.
    pub fn resource_ids(&self) -> impl Iterator<Item = ResourceId> {
        (0..self.resources.len()).map(ResourceId)
    }
    /// The user.
    #[inline]
    pub fn user(&self, n: UserId) -> &User {
        &self.users[n.0]
    }
    /// Capacity of resource `r` on server entry `i` times its count, c_{i,r}.
    #[inline]
    pub fn class_capacity(&self, i: ServerId, r: ResourceId) -> f64 {
        self.class_capacity[i.0 * self.resources.len() + r.0]
    }
    /// The class capacities of entry `i`, one per resource.
    #[inline]
    pub fn class_capacities(&self, i: ServerId) -> &[f64] {
        let m = self.resources.len();
        &self.class_capacity[i.0 * m..(i.0 + 1) * m]
    }
    /// C_r, the capacity of each resource over all servers.
    #[inline]
    pub fn total_capacity(&self) -> &[f64] {
        &self.total_capacity
    }
    /// True when user `n` may be placed on entry `i` (placement only).
    #[inline]
    pub fn eligible(&self, n: UserId, i: ServerId) -> bool {
        match &self.users[n.0].servers {
            None => true,
            Some(list) => list.binary_search(&i).is_ok(),
        }
    }
    /// True when user `n` may run on entry `i`: eligible, and the entry has
    /// every resource the user demands.
    #[inline]
    pub fn can_run_on(&self, n: UserId, i: ServerId) -> bool {
        self.eligible(n, i)
            && self.users[n.0]
                .demand
                .iter()
                .zip(self.class_capacities(i))
                .all(|(&d, &c)| d == 0.0 || c > 0.0)
    }
    /// gamma_{n,i}: tasks user `n` could run monopolising entry `i` (0 where
    /// it may not run).
    #[inline]
    pub fn gamma(&self, n: UserId, i: ServerId) -> f64 {
        if !self.eligible(n, i) {
            return 0.0;
        }
        self.users[n.0]
            .demand
            .iter()
            .zip(self.class_capacities(i))
            .filter(|(&d, _)| d > 0.0)
            .map(|(&d, &c)| c / d)
            .fold(f64::INFINITY, f64::min)
    }
    /// mu_n = max_r D_{n,r} / C_r, the global dominant share of one task
    /// (`inf` if the user demands a resource no server has).
    pub fn mu(&self, n: UserId) -> f64 {
        self.users[n.0]
            .demand
            .iter()
            .zip(&self.total_capacity)
            .filter(|(&d, _)| d > 0.0)
            .map(|(&d, &c)| if c > 0.0 { d / c } else { f64::INFINITY })
            .fold(0.0, f64::max)
    }
    /// The resource attaining mu_n (the global dominant resource; the first
    /// one on ties).
    pub fn dominant_resource(&self, n: UserId) -> ResourceId {
        let mut best = (ResourceId(0), -1.0);
        for (r, (&d, &c)) in self.users[n.0]
            .demand
            .iter()
            .zip(&self.total_capacity)
            .enumerate()
        {
            let s = if d == 0.0 {
                0.0
            } else if c > 0.0 {
                d / c
            } else {
                f64::INFINITY
            };
            if s > best.1 {
                best = (ResourceId(r), s);
            }
        }
        best.0
    }
    /// True when some user has a placement list.
    pub fn has_placement(&self) -> bool {
        self.users.iter().any(|u| u.servers.is_some())
    }
    /// The entries user `n` can run on, in order: those of its placement
    /// list (all entries without one, or when `placement` is false) whose
    /// class has every resource the user demands. Reads only the list
    /// where there is one, not every entry.
    pub fn runnable_entries(
        &self,
        n: UserId,
        placement: bool,
    ) -> impl Iterator<Item = ServerId> + '_ {
        let u = &self.users[n.0];
        let listed = u.servers.as_deref().filter(|_| placement);
        let all = listed
            .is_none()
            .then(|| self.server_ids())
            .into_iter()
            .flatten();
        listed
            .into_iter()
            .flatten()
            .copied()
            .chain(all)
            .filter(move |&i| {
                u.demand
                    .iter()
                    .zip(self.class_capacities(i))
                    .all(|(&d, &c)| d == 0.0 || c > 0.0)
            })
    }
    /// User-server pairs the placement lists allow (every entry for a user
    /// without a list): the columns of a flat LP over the instance, hence
    /// what sizes the checks that build one. N x K without lists.
    pub fn num_eligible_pairs(&self) -> usize {
        let k = self.num_entries();
        self.users
            .iter()
            .map(|u| u.servers.as_ref().map_or(k, Vec::len))
            .sum()
    }
    /// True when pooling every entry into one server of capacity C loses
    /// nothing: no placement lists and every entry's capacities
    /// proportional to C (c_i = t_i C, to 1e-12 relative; one entry
    /// always). Then any pooled allocation splits exactly, x_{n,i} = x_n
    /// t_i, as [`Instance::split_pooled`] does.
    pub fn pools_exactly(&self) -> bool {
        if self.has_placement() {
            return false;
        }
        if self.num_entries() == 1 {
            return true;
        }
        (0..self.num_entries()).all(|i| {
            let c = self.class_capacities(ServerId(i));
            let share: Vec<f64> = c
                .iter()
                .zip(&self.total_capacity)
                .filter(|(_, &t)| t > 0.0)
                .map(|(&c, &t)| c / t)
                .collect();
            let lo = share.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = share.iter().copied().fold(0.0, f64::max);
            share.is_empty() || hi - lo <= 1e-12 * hi
        })
    }
    /// Per-entry tasks for pooled totals `x` (one per user): x_n split over
    /// the entries in proportion to each entry's capacity of the user's
    /// dominant resource (pooled mechanisms do not place tasks; their
    /// outputs say so).
    pub fn split_pooled(&self, x: &[f64]) -> Vec<Vec<f64>> {
        let k = self.num_entries();
        self.user_ids()
            .map(|n| {
                if k == 1 {
                    return vec![x[n.0]];
                }
                let r = self.dominant_resource(n);
                let total = self.total_capacity[r.0];
                (0..k)
                    .map(|i| {
                        if total > 0.0 {
                            x[n.0] * self.class_capacity(ServerId(i), r) / total
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The same instance in other units: every capacity and demand of
    /// resource r multiplied by `resource_factor[r]` (see
    /// [`crate::scaling`], which picks powers of two so that nothing is
    /// rounded).
    pub(crate) fn rescaled(&self, resource_factor: &[f64]) -> Instance {
        let m = self.resources.len();
        let mut out = self.clone();
        for s in &mut out.servers {
            for (c, f) in s.capacity.iter_mut().zip(resource_factor) {
                *c *= f;
            }
        }
        for (j, c) in out.class_capacity.iter_mut().enumerate() {
            *c *= resource_factor[j % m];
        }
        for (c, f) in out.total_capacity.iter_mut().zip(resource_factor) {
            *c *= f;
        }
        for u in &mut out.users {
            for (d, f) in u.demand.iter_mut().zip(resource_factor) {
                *d *= f;
            }
        }
        for (a, f) in out.quantum.iter_mut().flatten().zip(resource_factor) {
            *a *= f;
        }
        for q in &mut out.queues {
            for v in [
                q.guarantee.as_mut(),
                q.limit.as_mut(),
                q.lending_limit.as_mut(),
            ]
            .into_iter()
            .flatten()
            {
                for (a, f) in v.iter_mut().zip(resource_factor) {
                    *a *= f;
                }
            }
        }
        out
    }

    /// The same instance with every weight multiplied by `factor`.
    pub(crate) fn reweighted(&self, factor: f64) -> Instance {
        let mut out = self.clone();
        for u in &mut out.users {
            u.weight *= factor;
        }
        out
    }

    /// The same instance with every server entry pooled into one of
    /// capacity C (placement lists dropped: there is one server).
    pub fn pooled(&self) -> Instance {
        let mut raw = self.to_raw();
        raw.servers = vec![RawServer {
            name: "pool".into(),
            capacity: self.total_capacity.clone(),
            count: None,
        }];
        for u in &mut raw.users {
            u.servers = None;
        }
        Instance::new(raw).expect("pooling a valid instance is valid")
    }
}

#[cfg(test)]
mod tests;
