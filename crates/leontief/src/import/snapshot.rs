//! What every importer shares: tasks read from a snapshot (each with its
//! user key, its demand, and the server it runs on, if any) grouped into
//! users, and the instance and allocation they make.

use crate::error::{bad_input, Error};
use leontief_core::{RawInstance, RawServer, RawUser};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What to do when the tasks of one user request different vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merge {
    /// Refuse, naming the user and two differing tasks.
    #[default]
    Refuse,
    /// One user per distinct request vector (`name#2`, `name#3`, ...).
    Split,
    /// One user whose task demands the largest request of each resource
    /// (its tasks may then not fit where they run: the audit says so).
    Max,
}

impl std::str::FromStr for Merge {
    type Err = Error;
    fn from_str(s: &str) -> Result<Merge, Error> {
        match s {
            "refuse" => Ok(Merge::Refuse),
            "split" => Ok(Merge::Split),
            "max" => Ok(Merge::Max),
            _ => Err(bad_input(format!(
                "merge \"{s}\": use refuse, split or max"
            ))),
        }
    }
}

/// What an import read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportSummary {
    /// Servers (nodes, machines).
    pub servers: usize,
    /// Users.
    pub users: usize,
    /// Tasks (pods) running on a server: the allocation.
    pub placed: usize,
    /// Tasks waiting for a server (they count in their user's cap).
    pub pending: usize,
    /// Tasks (or servers) left out, by reason.
    pub left_out: BTreeMap<String, usize>,
    /// Up to 20 of them (`name: reason`).
    pub examples: Vec<String>,
    /// The resources and their units.
    pub resources: Vec<String>,
    /// What the import took in a way a reader must know (fields not
    /// modelled, objects implied).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ImportSummary {
    /// Count `name` as left out for `why`.
    pub(crate) fn leave_out(&mut self, name: &str, why: &str) {
        *self.left_out.entry(why.to_string()).or_insert(0) += 1;
        if self.examples.len() < 20 {
            self.examples.push(format!("{name}: {why}"));
        }
    }
}

/// An imported snapshot.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The instance (servers: nodes or machines; users: workloads).
    pub instance: RawInstance,
    /// Tasks per user and server.
    pub tasks: Vec<Vec<f64>>,
    /// What was read.
    pub summary: ImportSummary,
}

/// One task of a snapshot.
pub(crate) struct Item {
    /// The task's name (for messages).
    pub name: String,
    /// Its user's key.
    pub key: String,
    /// Its request, per resource.
    pub demand: Vec<f64>,
    /// The server it runs on (index), or none (pending).
    pub server: Option<usize>,
    /// The servers it may run on (indices, ascending), or `None`: any.
    pub eligible: Option<Vec<usize>>,
}

/// The servers and resources of a snapshot, before its users.
pub(crate) struct Snapshot {
    name: String,
    resources: Vec<String>,
    servers: Vec<RawServer>,
    /// Where each server comes from in the input, for messages.
    origins: Vec<String>,
    pub summary: ImportSummary,
}

/// One user: its name, its demand, its tasks.
type Group = (String, Vec<f64>, Vec<usize>);

impl Snapshot {
    pub fn new(
        name: &str,
        resources: Vec<String>,
        servers: Vec<RawServer>,
        summary: ImportSummary,
    ) -> Snapshot {
        Snapshot {
            name: name.to_string(),
            origins: servers
                .iter()
                .enumerate()
                .map(|(i, s)| format!("servers[{i}] ({})", s.name))
                .collect(),
            resources,
            servers,
            summary,
        }
    }

    /// Where each server comes from in the input (one per server), for
    /// the messages of [`validated`].
    pub fn with_origins(mut self, origins: Vec<String>) -> Snapshot {
        debug_assert_eq!(origins.len(), self.servers.len());
        self.origins = origins;
        self
    }

    /// Users from `items` (in order of first appearance), each capped at
    /// its number of tasks unless `uncapped`, each allowed the servers any
    /// of its tasks may use (all when one may use any); the allocation
    /// counts the placed tasks per server.
    pub fn build(
        mut self,
        items: Vec<Item>,
        merge: Merge,
        uncapped: bool,
    ) -> Result<Imported, Error> {
        let users = group(&items, merge)?;
        let mut tasks = vec![vec![0.0; self.servers.len()]; users.len()];
        let mut raw = Vec::with_capacity(users.len());
        for (u, (name, demand, members)) in users.into_iter().enumerate() {
            let mut allowed = Some(vec![false; self.servers.len()]);
            for &p in &members {
                match &items[p].eligible {
                    Some(e) => {
                        if let Some(a) = allowed.as_mut() {
                            e.iter().for_each(|&i| a[i] = true);
                        }
                    }
                    None => allowed = None,
                }
                match items[p].server {
                    Some(i) => {
                        tasks[u][i] += 1.0;
                        self.summary.placed += 1;
                    }
                    None => self.summary.pending += 1,
                }
            }
            raw.push(RawUser {
                queue: None,
                name,
                demand,
                weight: None,
                tasks: (!uncapped).then_some(members.len() as f64),
                servers: allowed.filter(|a| !a.iter().all(|&x| x)).map(|a| {
                    a.iter()
                        .zip(&self.servers)
                        .filter(|(&x, _)| x)
                        .map(|(_, s)| s.name.clone())
                        .collect()
                }),
                rank_weights: None,
            });
        }
        self.summary.servers = self.servers.len();
        self.summary.users = raw.len();
        if self.summary.resources.is_empty() {
            self.summary.resources = self.resources.clone();
        }
        let origins = std::mem::take(&mut self.origins);
        validated(
            Imported {
                instance: RawInstance {
                    queues: None,
                    quantum: None,
                    name: Some(self.name),
                    description: None,
                    resources: self.resources,
                    servers: self.servers,
                    users: raw,
                },
                tasks,
                summary: self.summary,
            },
            &|i| origins[i].clone(),
        )
    }
}

/// `imported` if its instance is valid; otherwise bad input with every
/// issue named where it comes from in the input: a server's at
/// `server_origin` (the node, the CSV line), a user's as the tasks
/// grouped into it, and a resource by name (`capacity[1]` is memory).
pub(crate) fn validated(
    imported: Imported,
    server_origin: &dyn Fn(usize) -> String,
) -> Result<Imported, Error> {
    let raw = &imported.instance;
    let Err(e) = leontief_core::Instance::new(raw.clone()) else {
        return Ok(imported);
    };
    let resource = |field: &str, rest: &str| -> String {
        // "capacity[1]" / "demand[1]" -> "capacity of memory"
        let Some(open) = rest.find('[') else {
            return rest.to_string();
        };
        let r: Option<usize> = rest[open + 1..].trim_end_matches(']').parse().ok();
        match r.and_then(|r| raw.resources.get(r)) {
            Some(name) => format!("{field} of {name}"),
            None => rest.to_string(),
        }
    };
    let located: Vec<String> = e
        .issues()
        .into_iter()
        .map(|issue| {
            let index = |prefix: &str| -> Option<(usize, String)> {
                let rest = issue.at.strip_prefix(prefix)?;
                let close = rest.find(']')?;
                let n = rest[..close].parse().ok()?;
                Some((n, rest[close + 1..].trim_start_matches('.').to_string()))
            };
            let field = |rest: &str| -> String {
                for f in ["capacity", "demand"] {
                    if rest.starts_with(f) {
                        return resource(f, rest);
                    }
                }
                rest.to_string()
            };
            if let Some((i, rest)) = index("servers[").filter(|(i, _)| *i < raw.servers.len()) {
                format!("{}: {} {}", server_origin(i), field(&rest), issue.reason)
            } else if let Some((n, rest)) = index("users[").filter(|(n, _)| *n < raw.users.len()) {
                format!(
                    "the tasks grouped as user \"{}\": {} {}",
                    raw.users[n].name,
                    field(&rest),
                    issue.reason
                )
            } else {
                issue.to_string()
            }
        })
        .collect();
    Err(bad_input(format!(
        "the imported snapshot is not a valid instance: {}",
        located.join("; ")
    )))
}

fn group(items: &[Item], merge: Merge) -> Result<Vec<Group>, Error> {
    let mut users: Vec<Group> = Vec::new();
    let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
    let same = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
    };
    for (p, item) in items.iter().enumerate() {
        let ids = by_key.entry(item.key.as_str()).or_default();
        if let Some(&u) = ids.iter().find(|&&u| same(&users[u].1, &item.demand)) {
            users[u].2.push(p);
            continue;
        }
        match (merge, ids.first()) {
            (_, None) | (Merge::Split, Some(_)) => {}
            (Merge::Refuse, Some(&u)) => {
                let first = &items[users[u].2[0]];
                return Err(bad_input(format!(
                    "user {}: {} requests {:?} but {} requests {:?}; choose --group-by or --merge split|max",
                    item.key, first.name, first.demand, item.name, item.demand
                )));
            }
            (Merge::Max, Some(&u)) => {
                for (d, &v) in users[u].1.iter_mut().zip(&item.demand) {
                    *d = d.max(v);
                }
                users[u].2.push(p);
                continue;
            }
        }
        let name = if ids.is_empty() {
            item.key.clone()
        } else {
            format!("{}#{}", item.key, ids.len() + 1)
        };
        ids.push(users.len());
        users.push((name, item.demand.clone(), vec![p]));
    }
    Ok(users)
}
