//! The queue tree of an instance (`"queues"`, `users[].queue`): how the
//! hierarchical mechanisms (`hdrf`, `hdrfh`) group users, and its rules.

use super::{Issue, MAX_VALUE, MIN_VALUE};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The most queues an instance holds.
pub const MAX_QUEUES: usize = 100_000;
/// The deepest a queue may sit (a child of the root has depth 1).
pub const MAX_QUEUE_DEPTH: usize = 64;

/// A queue as written in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawQueue {
    /// Unique name.
    pub name: String,
    /// The parent queue's name; absent or null: a child of the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Weight among its siblings (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Absolute amount of each resource the queue's subtree is guaranteed
    /// (as far as its users can use it); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<Vec<f64>>,
    /// Absolute amount of each resource the queue's subtree may use at
    /// most; absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Vec<f64>>,
    /// The most of its guarantee other queues may use while it does not
    /// (Kueue's lendingLimit; read by `kueue`); absent: all of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<Vec<f64>>,
}

/// A queue of a validated instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Queue {
    /// Name.
    pub name: String,
    /// The parent queue (an index into the instance's queues); `None`:
    /// a child of the root.
    pub parent: Option<usize>,
    /// Weight (> 0).
    pub weight: f64,
    /// Guaranteed amount per resource, `None` for none.
    pub guarantee: Option<Vec<f64>>,
    /// Most per resource, `None` for no limit.
    pub limit: Option<Vec<f64>>,
    /// The most of its guarantee others may use while it does not,
    /// `None`: all of it.
    pub lending_limit: Option<Vec<f64>>,
}

impl Queue {
    /// Back to JSON, parent by name.
    pub(crate) fn to_raw(&self, queues: &[Queue]) -> RawQueue {
        RawQueue {
            name: self.name.clone(),
            parent: self.parent.map(|p| queues[p].name.clone()),
            weight: (self.weight != 1.0).then_some(self.weight),
            guarantee: self.guarantee.clone(),
            limit: self.limit.clone(),
            lending_limit: self.lending_limit.clone(),
        }
    }
}

fn push(issues: &mut Vec<Issue>, at: impl Into<String>, reason: impl Into<String>) {
    issues.push(Issue {
        at: at.into(),
        reason: reason.into(),
    });
}

/// A per-resource amount: m finite numbers >= 0 (zero allowed: a limit
/// of 0 keeps the queue off that resource).
fn amounts(issues: &mut Vec<Issue>, at: &str, v: &[f64], m: usize) -> bool {
    if v.len() != m {
        push(
            issues,
            at,
            format!("has {} entries, expected {m} (one per resource)", v.len()),
        );
        return false;
    }
    let mut ok = true;
    for (r, &x) in v.iter().enumerate() {
        if !x.is_finite() {
            push(
                issues,
                format!("{at}[{r}]"),
                format!("is not a finite number ({x})"),
            );
            ok = false;
        } else if x < 0.0 {
            push(issues, format!("{at}[{r}]"), format!("is negative ({x})"));
            ok = false;
        } else if x != 0.0 && !(MIN_VALUE..=MAX_VALUE).contains(&x) {
            push(
                issues,
                format!("{at}[{r}]"),
                format!("is {x:e}, outside the representable range [{MIN_VALUE:e}, {MAX_VALUE:e}]"),
            );
            ok = false;
        }
    }
    ok
}

/// Validate the queues and the users' `queue` fields: the queues in input
/// order and each user's queue index, or every issue found.
pub(crate) fn validate(
    raw: &[RawQueue],
    user_queue: &[Option<&str>],
    resources: &[String],
    total_capacity: &[f64],
    issues: &mut Vec<Issue>,
) -> (Vec<Queue>, Vec<Option<usize>>) {
    let m = resources.len();
    let before = issues.len();
    if raw.len() > MAX_QUEUES {
        push(
            issues,
            "queues",
            format!(
                "holds {} queues, above {MAX_QUEUES}, the most an instance holds",
                raw.len()
            ),
        );
        return (Vec::new(), Vec::new());
    }
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(raw.len());
    for (i, q) in raw.iter().enumerate() {
        if q.name.is_empty() {
            push(issues, format!("queues[{i}].name"), "is empty");
        } else if let Some(j) = index.insert(q.name.as_str(), i) {
            push(
                issues,
                format!("queues[{i}].name"),
                format!("\"{}\" is also the name of queues[{j}]", q.name),
            );
        }
    }
    let mut parent = vec![None; raw.len()];
    for (i, q) in raw.iter().enumerate() {
        if let Some(p) = &q.parent {
            match index.get(p.as_str()) {
                None => push(
                    issues,
                    format!("queues[{i}].parent"),
                    format!("names unknown queue \"{p}\""),
                ),
                Some(&j) if j == i => push(
                    issues,
                    format!("queues[{i}].parent"),
                    format!("is the queue itself (\"{p}\")"),
                ),
                Some(&j) => parent[i] = Some(j),
            }
        }
        if let Some(w) = q.weight {
            if !w.is_finite() {
                push(
                    issues,
                    format!("queues[{i}].weight"),
                    format!("is not a finite number ({w})"),
                );
            } else if w <= 0.0 {
                push(
                    issues,
                    format!("queues[{i}].weight"),
                    format!("must be > 0 (got {w})"),
                );
            } else if !(MIN_VALUE..=MAX_VALUE).contains(&w) {
                push(
                    issues,
                    format!("queues[{i}].weight"),
                    format!("is {w:e}, outside [{MIN_VALUE:e}, {MAX_VALUE:e}]"),
                );
            }
        }
        let g_ok = q
            .guarantee
            .as_ref()
            .is_none_or(|g| amounts(issues, &format!("queues[{i}].guarantee"), g, m));
        let l_ok = q
            .limit
            .as_ref()
            .is_none_or(|l| amounts(issues, &format!("queues[{i}].limit"), l, m));
        if let Some(ll) = &q.lending_limit {
            let at = format!("queues[{i}].lending_limit");
            if amounts(issues, &at, ll, m) && g_ok {
                match &q.guarantee {
                    None => push(issues, at, "needs a guarantee to lend from"),
                    Some(g) => {
                        for r in 0..m {
                            if ll[r] > g[r] {
                                push(
                                    issues,
                                    format!("{at}[{r}]"),
                                    format!(
                                        "({}) is above queues[{i}].guarantee[{r}] ({}) for {}",
                                        ll[r], g[r], resources[r]
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
        if let (Some(g), Some(l), true, true) = (&q.guarantee, &q.limit, g_ok, l_ok) {
            for r in 0..m {
                if g[r] > l[r] {
                    push(
                        issues,
                        format!("queues[{i}].guarantee[{r}]"),
                        format!(
                            "({}) is above queues[{i}].limit[{r}] ({}) for {}",
                            g[r], l[r], resources[r]
                        ),
                    );
                }
            }
        }
    }
    // Cycles and depth: walk up from every queue.
    for i in 0..raw.len() {
        let mut at = i;
        let mut depth = 1;
        while let Some(p) = parent[at] {
            depth += 1;
            at = p;
            if at == i || depth > raw.len() {
                push(
                    issues,
                    format!("queues[{i}].parent"),
                    format!("makes a cycle through \"{}\"", raw[i].name),
                );
                break;
            }
            if depth > MAX_QUEUE_DEPTH {
                push(
                    issues,
                    format!("queues[{i}]"),
                    format!(
                        "sits deeper than {MAX_QUEUE_DEPTH} levels, the deepest a queue may sit"
                    ),
                );
                break;
            }
        }
    }
    let mut users = Vec::with_capacity(user_queue.len());
    for (n, q) in user_queue.iter().enumerate() {
        users.push(match q {
            None => None,
            Some(name) => match index.get(name) {
                Some(&i) => Some(i),
                None => {
                    push(
                        issues,
                        format!("users[{n}].queue"),
                        format!("names unknown queue \"{name}\""),
                    );
                    None
                }
            },
        });
    }
    if issues.len() > before {
        return (Vec::new(), Vec::new());
    }
    // Guarantees of siblings add up to at most their parent's (the root's:
    // the cluster's capacity).
    let mut sums: HashMap<Option<usize>, Vec<f64>> = HashMap::new();
    for q in raw.iter().zip(&parent) {
        if let (Some(g), p) = (&q.0.guarantee, *q.1) {
            let s = sums.entry(p).or_insert_with(|| vec![0.0; m]);
            for r in 0..m {
                s[r] += g[r];
            }
        }
    }
    let mut keys: Vec<_> = sums.keys().copied().collect();
    keys.sort();
    for p in keys {
        let s = &sums[&p];
        let (at, cap, whose): (String, Vec<f64>, String) = match p {
            None => (
                "queues".into(),
                total_capacity.to_vec(),
                "the cluster's capacity".into(),
            ),
            Some(j) => match &raw[j].guarantee {
                Some(g) => (
                    format!("queues[{j}].guarantee"),
                    g.clone(),
                    format!("queues[{j}].guarantee"),
                ),
                None => continue,
            },
        };
        for r in 0..m {
            if s[r] > cap[r] * (1.0 + 1e-12) {
                let children = match p {
                    None => "the root's children".to_string(),
                    Some(j) => format!("the children of \"{}\"", raw[j].name),
                };
                push(
                    issues,
                    at.clone(),
                    format!(
                        "{children} are guaranteed {} of {} in all, above {whose} ({})",
                        s[r], resources[r], cap[r]
                    ),
                );
            }
        }
    }
    let queues = raw
        .iter()
        .zip(parent)
        .map(|(q, parent)| Queue {
            name: q.name.clone(),
            parent,
            weight: q.weight.unwrap_or(1.0),
            guarantee: q.guarantee.clone(),
            limit: q.limit.clone(),
            lending_limit: q.lending_limit.clone(),
        })
        .collect();
    (queues, users)
}
