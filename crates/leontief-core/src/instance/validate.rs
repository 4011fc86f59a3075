//! Reading an instance: parsed as written ([`RawInstance`]), then every
//! rule of the format checked, each problem reported with its path.

use super::*;
use rustc_hash::FxHashMap;

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
    ) -> FxHashMap<&'a str, usize> {
        // Fx, not SipHash: 10^8 listed pairs look a name up each.
        let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
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
    pub fn new(mut raw: RawInstance) -> Result<Instance, InstanceError> {
        let lists: Vec<Option<Vec<String>>> =
            raw.users.iter_mut().map(|u| u.servers.take()).collect();
        Instance::build(raw, &lists)
    }

    /// [`Instance::new`] with the users' server lists (`raw`'s ignored)
    /// given apart, as owned or borrowed names.
    fn build<S: AsRef<str>>(
        raw: RawInstance,
        lists: &[Option<Vec<S>>],
    ) -> Result<Instance, InstanceError> {
        let mut c = Checker { issues: Vec::new() };
        let m = raw.resources.len();
        if m == 0 {
            c.fail("resources", "is empty: at least one resource is needed");
        }
        c.unique_names("resources", raw.resources.iter().map(String::as_str), "");
        if raw.servers.is_empty() {
            c.fail("servers", "is empty: at least one server is needed");
        }
        if let Some(q) = &raw.quantum {
            if q.len() != m {
                c.fail(
                    "quantum",
                    format!("has {} entries, expected {m} (one per resource)", q.len()),
                );
            }
            for (r, &x) in q.iter().enumerate() {
                if !(x.is_finite() && x > 0.0) {
                    c.fail(
                        format!("quantum[{r}]"),
                        format!("must be a finite number > 0 (got {x})"),
                    );
                } else if !(MIN_VALUE..=MAX_VALUE).contains(&x) {
                    c.fail(
                        format!("quantum[{r}]"),
                        format!("is {x:e}, outside the representable range [{MIN_VALUE:e}, {MAX_VALUE:e}]"),
                    );
                }
            }
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
        // The last user whose list named each server entry.
        let mut listed_by = vec![usize::MAX; raw.servers.len()];
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
            let list = match &lists[n] {
                None => None,
                Some(names) => {
                    if names.is_empty() {
                        c.fail(
                            format!("users[{n}].servers"),
                            "is empty: a user must be allowed on some server (omit the field for all)",
                        );
                    }
                    let mut ids: Vec<ServerId> = Vec::with_capacity(names.len());
                    for (j, name) in names.iter().enumerate() {
                        let name = name.as_ref();
                        match server_index.get(name) {
                            None => c.fail(
                                format!("users[{n}].servers[{j}]"),
                                format!("names unknown server \"{name}\""),
                            ),
                            Some(&i) => {
                                // Listed already by this user.
                                if std::mem::replace(&mut listed_by[i], n) == n {
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
        let (queues, user_queue) = if c.issues.is_empty() {
            let total: Vec<f64> = (0..m)
                .map(|r| {
                    raw.servers
                        .iter()
                        .map(|s| s.capacity[r] * s.count.unwrap_or(1) as f64)
                        .sum()
                })
                .collect();
            let named: Vec<Option<&str>> = raw.users.iter().map(|u| u.queue.as_deref()).collect();
            queues::validate(
                raw.queues.as_deref().unwrap_or(&[]),
                &named,
                &raw.resources,
                &total,
                &mut c.issues,
            )
        } else {
            (Vec::new(), Vec::new())
        };
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
            queues,
            user_queue,
            quantum: raw.quantum,
        })
    }

    /// Parse and validate JSON text.
    pub fn from_json_str(text: &str) -> Result<Instance, InstanceError> {
        // The plain parse first, the lists borrowed (`parse`): tracking
        // the path costs a tenth of the parse of 10^8 listed pairs. A text
        // it rejects is parsed again, tracked, for the error's path.
        if let Some((raw, lists)) = super::parse::borrowed(text) {
            return Instance::build(raw, &lists);
        }
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
