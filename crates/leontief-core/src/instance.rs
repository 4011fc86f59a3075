//! Instances in the v1 JSON format (`docs/instance-format.md`), and
//! their validation.
//!
//! Parsing goes through [`RawInstance`] (exactly the JSON, unknown fields
//! rejected so that a misspelt `weigth` is never silently ignored) and then
//! [`Instance::new`], which checks every rule of the format and reports
//! *all* problems, each with the path of the offending entry
//! (`users[3].demand[1] is negative (-0.5)`).

use crate::ids::{ResourceId, ServerId, UserId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

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

fn in_range(x: f64) -> bool {
    (MIN_VALUE..=MAX_VALUE).contains(&x)
}

fn out_of_range(x: f64) -> String {
    format!(
        "is {x:e}, outside the representable range [{MIN_VALUE:e}, {MAX_VALUE:e}] (positive values; change the unit of this resource or weight)"
    )
}

struct Checker {
    issues: Vec<Issue>,
}

impl Checker {
    fn fail(&mut self, at: impl Into<String>, reason: impl Into<String>) {
        self.issues.push(Issue {
            at: at.into(),
            reason: reason.into(),
        });
    }

    /// A vector of m finite non-negative numbers, not all zero.
    fn vector(&mut self, at: &str, v: &[f64], m: usize, what: &str) {
        if v.len() != m {
            self.fail(
                at,
                format!("has {} entries, expected {m} (one per resource)", v.len()),
            );
            return;
        }
        let mut bad = false;
        for (r, &x) in v.iter().enumerate() {
            if !x.is_finite() {
                self.fail(
                    format!("{at}[{r}]"),
                    format!("is not a finite number ({x})"),
                );
                bad = true;
            } else if x < 0.0 {
                self.fail(format!("{at}[{r}]"), format!("is negative ({x})"));
                bad = true;
            } else if x != 0.0 && !in_range(x) {
                self.fail(format!("{at}[{r}]"), out_of_range(x));
                bad = true;
            }
        }
        if !bad && v.iter().all(|&x| x == 0.0) {
            self.fail(
                at,
                format!("is all zero: a {what} must be positive on some resource"),
            );
        }
    }

    fn positive(&mut self, at: String, x: f64) {
        if !x.is_finite() {
            self.fail(at, format!("is not a finite number ({x})"));
        } else if x <= 0.0 {
            self.fail(at, format!("must be > 0 (got {x})"));
        } else if !in_range(x) {
            self.fail(at, out_of_range(x));
        }
    }

    fn unique_names<'a>(
        &mut self,
        field: &str,
        names: impl Iterator<Item = &'a str>,
        suffix: &str,
    ) -> HashMap<&'a str, usize> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, name) in names.enumerate() {
            if name.is_empty() {
                self.fail(format!("{field}[{i}]{suffix}"), "is empty");
            } else if let Some(&j) = seen.get(name) {
                self.fail(
                    format!("{field}[{i}]{suffix}"),
                    format!("duplicates {field}[{j}]{suffix} (\"{name}\")"),
                );
            } else {
                seen.insert(name, i);
            }
        }
        seen
    }
}

impl Instance {
    /// Validate a raw instance, reporting every issue found.
    pub fn new(raw: RawInstance) -> Result<Instance, InstanceError> {
        let mut c = Checker { issues: Vec::new() };
        let m = raw.resources.len();
        if m == 0 {
            c.fail("resources", "is empty: at least one resource is needed");
        }
        c.unique_names("resources", raw.resources.iter().map(String::as_str), "");
        if raw.servers.is_empty() {
            c.fail("servers", "is empty: at least one server is needed");
        }
        let server_index = c.unique_names(
            "servers",
            raw.servers.iter().map(|s| s.name.as_str()),
            ".name",
        );
        for (i, s) in raw.servers.iter().enumerate() {
            c.vector(
                &format!("servers[{i}].capacity"),
                &s.capacity,
                m,
                "capacity",
            );
            if let Some(count) = s.count {
                if count == 0 {
                    c.fail(format!("servers[{i}].count"), "must be >= 1 (got 0)");
                } else if count > MAX_COUNT {
                    c.fail(
                        format!("servers[{i}].count"),
                        format!("is {count}, above {MAX_COUNT}, the most physical servers an instance holds"),
                    );
                } else if s.capacity.iter().any(|&x| !(x * count as f64).is_finite()) {
                    c.fail(
                        format!("servers[{i}].count"),
                        format!("times the capacity overflows ({count} servers)"),
                    );
                }
            }
        }
        let physical = raw
            .servers
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.count.unwrap_or(1)));
        if physical > MAX_COUNT
            && raw
                .servers
                .iter()
                .all(|s| s.count.unwrap_or(1) <= MAX_COUNT)
        {
            c.fail(
                "servers",
                format!("hold {physical} physical servers (counts added up), above {MAX_COUNT}, the most an instance holds"),
            );
        }
        if raw.users.is_empty() {
            c.fail("users", "is empty: at least one user is needed");
        }
        c.unique_names("users", raw.users.iter().map(|u| u.name.as_str()), ".name");
        let mut user_servers = Vec::with_capacity(raw.users.len());
        for (n, u) in raw.users.iter().enumerate() {
            c.vector(&format!("users[{n}].demand"), &u.demand, m, "demand");
            if let Some(w) = u.weight {
                c.positive(format!("users[{n}].weight"), w);
            }
            if let Some(t) = u.tasks {
                c.positive(format!("users[{n}].tasks"), t);
            }
            if let Some(rw) = &u.rank_weights {
                if rw.is_empty() {
                    c.fail(
                        format!("users[{n}].rank_weights"),
                        "is empty (omit it for all 1)",
                    );
                }
                for (l, &w) in rw.iter().enumerate() {
                    c.positive(format!("users[{n}].rank_weights[{l}]"), w);
                }
            }
            let list = match &u.servers {
                None => None,
                Some(names) => {
                    if names.is_empty() {
                        c.fail(
                            format!("users[{n}].servers"),
                            "is empty: a user must be allowed on some server (omit the field for all)",
                        );
                    }
                    let mut ids: Vec<ServerId> = Vec::with_capacity(names.len());
                    // Listed already (a set: lists of thousands of names).
                    let mut seen: std::collections::HashSet<usize> =
                        std::collections::HashSet::with_capacity(names.len());
                    for (j, name) in names.iter().enumerate() {
                        match server_index.get(name.as_str()) {
                            None => c.fail(
                                format!("users[{n}].servers[{j}]"),
                                format!("names unknown server \"{name}\""),
                            ),
                            Some(&i) => {
                                if !seen.insert(i) {
                                    c.fail(
                                        format!("users[{n}].servers[{j}]"),
                                        format!("names server \"{name}\" twice"),
                                    );
                                } else {
                                    ids.push(ServerId(i));
                                }
                            }
                        }
                    }
                    ids.sort();
                    Some(ids)
                }
            };
            user_servers.push(list);
        }
        // A task must be at least MIN_TASK_FRACTION of the largest server's
        // capacity of each resource it demands: smaller, one server holds
        // more than 1e12 tasks, and LP coefficients fall below what the
        // solvers keep (a demand of 0.1 next to a capacity of 9e15 made a
        // verification LP unbounded).
        // The same against the whole cluster (every server, `count` times):
        // at most 1e12 tasks of a user fit in all, so that pooling the
        // servers into one (DRF, BBF) keeps a valid instance.
        if c.issues.is_empty() {
            for r in 0..m {
                let top = raw
                    .servers
                    .iter()
                    .map(|s| s.capacity[r])
                    .fold(0.0, f64::max);
                let total: f64 = raw
                    .servers
                    .iter()
                    .map(|s| s.capacity[r] * s.count.unwrap_or(1) as f64)
                    .sum();
                for (n, u) in raw.users.iter().enumerate() {
                    let d = u.demand[r];
                    if d > 0.0 && top > 0.0 && d < MIN_TASK_FRACTION * top {
                        c.fail(
                            format!("users[{n}].demand[{r}]"),
                            format!(
                                "is {d:e}, {:e} of the largest capacity of {} ({top:e}); a task must be at least {MIN_TASK_FRACTION:e} of it (more than 1e12 tasks per server): measure the resource in a larger unit for this user's tasks",
                                d / top,
                                raw.resources[r]
                            ),
                        );
                    } else if d > 0.0 && d < MIN_TASK_FRACTION * total {
                        c.fail(
                            format!("users[{n}].demand[{r}]"),
                            format!(
                                "is {d:e}, {:e} of the total capacity of {} over every server ({total:e}, counts included); a task must be at least {MIN_TASK_FRACTION:e} of it (more than 1e12 tasks in the cluster)",
                                d / total,
                                raw.resources[r]
                            ),
                        );
                    } else if d > 0.0 && top > 0.0 && d * MIN_TASK_FRACTION > top {
                        c.fail(
                            format!("users[{n}].demand[{r}]"),
                            format!(
                                "is {d:e}, {:e} times the largest capacity of {} ({top:e}); a task may be at most {:e} times it (less than 1e-12 of a task per server)",
                                d / top,
                                raw.resources[r],
                                1.0 / MIN_TASK_FRACTION
                            ),
                        );
                    }
                }
            }
        }
        // Weights at most MAX_WEIGHT_RATIO apart: a user's level is its share
        // over its weight, and the LPs cannot tell apart shares 1e12 times
        // smaller than another user's (weights 9e15 apart gave a drfh answer
        // 2.5% over capacity).
        if c.issues.is_empty() {
            let w = |u: &RawUser| u.weight.unwrap_or(1.0);
            let top = raw.users.iter().map(w).fold(0.0, f64::max);
            for (n, u) in raw.users.iter().enumerate() {
                if w(u) * MAX_WEIGHT_RATIO < top {
                    c.fail(
                        format!("users[{n}].weight"),
                        format!(
                            "is {:e}, more than {MAX_WEIGHT_RATIO:e} times below the largest weight ({top:e}); weights may be at most that far apart",
                            w(u)
                        ),
                    );
                }
            }
        }
        if !c.issues.is_empty() {
            return Err(InstanceError::Invalid(c.issues));
        }
        let servers: Vec<Server> = raw
            .servers
            .into_iter()
            .map(|s| Server {
                name: s.name,
                capacity: s.capacity,
                count: s.count.unwrap_or(1),
            })
            .collect();
        let mut class_capacity = Vec::with_capacity(servers.len() * m);
        let mut total_capacity = vec![0.0; m];
        for s in &servers {
            for r in 0..m {
                let cap = s.capacity[r] * s.count as f64;
                class_capacity.push(cap);
                total_capacity[r] += cap;
            }
        }
        let users = raw
            .users
            .into_iter()
            .zip(user_servers)
            .map(|(u, servers)| User {
                name: u.name,
                demand: u.demand,
                weight: u.weight.unwrap_or(1.0),
                tasks: u.tasks,
                servers,
                rank_weights: u.rank_weights,
            })
            .collect();
        Ok(Instance {
            name: raw.name,
            resources: raw.resources,
            servers,
            users,
            class_capacity,
            total_capacity,
        })
    }

    /// Parse and validate JSON text.
    pub fn from_json_str(text: &str) -> Result<Instance, InstanceError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let raw: RawInstance =
            serde_path_to_error::deserialize(&mut *de).map_err(|e| InstanceError::Parse {
                at: json_path(e.path()),
                reason: e.inner().to_string(),
            })?;
        // Anything after the instance (a second object, stray text) is an
        // error, never silently dropped.
        de.end().map_err(|e| InstanceError::Parse {
            at: String::new(),
            reason: format!("trailing data after the instance: {e}"),
        })?;
        Instance::new(raw)
    }

    /// Read, parse and validate a JSON file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Instance, InstanceError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| InstanceError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Instance::from_json_str(&text)
    }

    /// Back to the JSON shape (for generators and round trips).
    pub fn to_raw(&self) -> RawInstance {
        RawInstance {
            name: self.name.clone(),
            description: None,
            resources: self.resources.clone(),
            servers: self
                .servers
                .iter()
                .map(|s| RawServer {
                    name: s.name.clone(),
                    capacity: s.capacity.clone(),
                    count: (s.count != 1).then_some(s.count),
                })
                .collect(),
            users: self
                .users
                .iter()
                .map(|u| RawUser {
                    name: u.name.clone(),
                    demand: u.demand.clone(),
                    weight: (u.weight != 1.0).then_some(u.weight),
                    tasks: u.tasks,
                    servers: u.servers.as_ref().map(|ids| {
                        ids.iter()
                            .map(|&i| self.servers[i.0].name.clone())
                            .collect()
                    }),
                    rank_weights: u.rank_weights.clone(),
                })
                .collect(),
        }
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

fn json_path(p: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in p.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(servers: &str, users: &str) -> Instance {
        Instance::from_json_str(&format!(
            r#"{{"resources": ["cpu", "mem"], "servers": [{servers}], "users": [{users}]}}"#
        ))
        .unwrap()
    }

    #[test]
    fn eligible_pairs_count_placement_lists() {
        let servers = r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 1]}, {"name": "v", "capacity": [1, 1]}"#;
        let free = r#"{"name": "a", "demand": [1, 1]}"#;
        let listed = r#"{"name": "b", "demand": [1, 1], "servers": ["t"]}"#;
        assert_eq!(inst(servers, free).num_eligible_pairs(), 3);
        assert_eq!(
            inst(servers, &format!("{free}, {listed}")).num_eligible_pairs(),
            4
        );
        assert_eq!(inst(servers, listed).num_eligible_pairs(), 1);
        // Runnable: the list (or every entry) where the demand fits.
        let i = inst(
            r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [0, 1]}, {"name": "v", "capacity": [1, 1]}"#,
            r#"{"name": "a", "demand": [1, 1]}, {"name": "b", "demand": [1, 1], "servers": ["t", "v"]}, {"name": "c", "demand": [0, 1], "servers": ["t"]}"#,
        );
        let ids = |n: usize, p: bool| -> Vec<usize> {
            i.runnable_entries(UserId(n), p).map(|s| s.0).collect()
        };
        assert_eq!(ids(0, true), vec![0, 2]);
        assert_eq!(ids(1, true), vec![2]);
        assert_eq!(ids(1, false), vec![0, 2]);
        assert_eq!(ids(2, true), vec![1]);
        for n in 0..3 {
            for p in [true, false] {
                let scan: Vec<usize> = i
                    .server_ids()
                    .filter(|&s| {
                        (!p || i.eligible(UserId(n), s))
                            && i.users()[n]
                                .demand
                                .iter()
                                .zip(i.class_capacities(s))
                                .all(|(&d, &c)| d == 0.0 || c > 0.0)
                    })
                    .map(|s| s.0)
                    .collect();
                assert_eq!(ids(n, p), scan);
            }
        }
    }

    #[test]
    fn proportional_entries_pool_exactly_and_others_do_not() {
        let u = r#"{"name": "a", "demand": [1, 1]}"#;
        // One entry, classes with counts, and proportional capacities.
        assert!(inst(r#"{"name": "s", "capacity": [4, 2]}"#, u).pools_exactly());
        assert!(inst(
            r#"{"name": "s", "capacity": [4, 2], "count": 3}, {"name": "t", "capacity": [2, 1]}"#,
            u
        )
        .pools_exactly());
        // Not proportional: per-server rows bind differently from the pool.
        assert!(!inst(
            r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 2]}"#,
            u
        )
        .pools_exactly());
        // Placement lists: never.
        assert!(!inst(
            r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 1]}"#,
            r#"{"name": "a", "demand": [1, 1], "servers": ["s"]}"#
        )
        .pools_exactly());
    }
}
