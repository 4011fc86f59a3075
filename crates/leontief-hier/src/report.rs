//! The allocation, the queues' outcomes and the explanations.

use crate::fill::Stop;
use crate::tree::Tree;
use crate::Variant;
use leontief_core::hierarchy::{HierarchyDetails, Phase, QueueOutcome};
use leontief_core::{Allocation, Instance, ResourceId, Status, Tasks, UserId};

/// Everything the filling found.
pub(crate) struct Report<'a> {
    pub instance: &'a Instance,
    pub tree: &'a Tree,
    pub mu: &'a [f64],
    pub variant: Variant,
    pub x: &'a [f64],
    pub stop: &'a [Option<Stop>],
    pub phases: Vec<Phase>,
    pub pooled: bool,
    /// `hdrfh` answered by the pooled filling, placed on the servers.
    pub on_pool: bool,
    /// The filling ran on the groups every placement list holds alike.
    pub on_list_groups: bool,
    pub lps: usize,
    pub seconds: f64,
}

impl Report<'_> {
    fn queue_name(&self, node: usize) -> &str {
        &self.instance.queues()[node - 1].name
    }

    /// Which resource fills each server `u` may use (its demanded
    /// resource with the highest load there), counted by resource.
    fn full_servers(&self, u: usize, load: &[Vec<f64>]) -> String {
        let i = self.instance;
        let d = &i.users()[u].demand;
        let mut count = vec![0usize; i.num_resources()];
        let mut total = 0;
        for e in i.runnable_entries(UserId(u), true) {
            let top = (0..d.len())
                .filter(|&r| d[r] > 0.0)
                .max_by(|&a, &b| load[e.0][a].total_cmp(&load[e.0][b]));
            if let Some(r) = top {
                count[r] += 1;
                total += 1;
            }
        }
        let mut parts: Vec<(usize, usize)> = count
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(r, &c)| (r, c))
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let said: Vec<String> = parts
            .iter()
            .map(|&(r, c)| format!("{} on {c} of them", i.resources()[r]))
            .collect();
        format!(
            "no server it may use has room for another task while every other user keeps its own (the fullest of its resources on its {total} server entries: {})",
            said.join(", ")
        )
    }

    fn user_sentence(&self, u: usize, level: f64, load: &[Vec<f64>], used: &[f64]) -> String {
        let i = self.instance;
        let r = |r: usize| i.resources()[r].as_str();
        let why = match &self.stop[u] {
            None => "the filling stopped early (see status)".to_string(),
            Some(Stop::CannotRun) => "it demands a resource no server it may use has".into(),
            Some(Stop::NotInStage) => "it took no part".into(),
            Some(Stop::Cap) => format!(
                "it reached its cap of {} tasks",
                i.users()[u].tasks.unwrap_or(f64::NAN)
            ),
            Some(Stop::Limit { node, resource }) => format!(
                "queue {} reached its limit of {}",
                self.queue_name(*node),
                r(*resource)
            ),
            Some(Stop::Capacity) if self.pooled => {
                let full: Vec<&str> = (0..i.num_resources())
                    .filter(|&q| {
                        i.users()[u].demand[q] > 0.0 && used[q] >= 0.999_999 * i.total_capacity()[q]
                    })
                    .map(r)
                    .collect();
                format!("the cluster's {} is used up", full.join(" and "))
            }
            Some(Stop::Capacity) => self.full_servers(u, load),
        };
        let queue = match self.tree.user_node[u] {
            0 => "under the root".to_string(),
            v => format!("in queue {}", self.queue_name(v)),
        };
        format!(
            "{} tasks {queue} (level {level:.6}); it stopped because {why}",
            fmt(self.x[u])
        )
    }

    fn queues(&self, x: &[f64]) -> Vec<QueueOutcome> {
        let i = self.instance;
        let m = i.num_resources();
        let usages = i.queue_usage(x);
        i.queues()
            .iter()
            .enumerate()
            .map(|(q, queue)| {
                let v = q + 1;
                let usage = usages[q].clone();
                let dominant_share = i.dominant_share_of(&usage);
                let limit_binds: Vec<String> = queue
                    .limit
                    .as_ref()
                    .map(|l| {
                        (0..m)
                            .filter(|&r| usage[r] >= l[r] * (1.0 - 1e-9))
                            .map(|r| i.resources()[r].clone())
                            .collect()
                    })
                    .unwrap_or_default();
                let guarantee_met = queue.guarantee.as_ref().map(|g| {
                    (0..m)
                        .map(|r| if g[r] > 0.0 { (usage[r] / g[r]).min(1.0) } else { 1.0 })
                        .collect::<Vec<f64>>()
                });
                let mut stops: Vec<String> = self.tree.users_under[v]
                    .iter()
                    .filter_map(|&u| self.stop[u].as_ref())
                    .map(|s| match s {
                        Stop::Cap => "task caps".to_string(),
                        Stop::Limit { node, resource } => format!(
                            "the limit of {} on {}",
                            self.queue_name(*node),
                            i.resources()[*resource]
                        ),
                        Stop::Capacity => "capacity".into(),
                        Stop::CannotRun => "users that cannot run".into(),
                        Stop::NotInStage => "nothing".into(),
                    })
                    .collect();
                stops.sort();
                stops.dedup();
                let explanation = if self.tree.users_under[v].is_empty() {
                    "it has no users".to_string()
                } else {
                    format!(
                        "its subtree holds a dominant share of {dominant_share:.6} (level {:.6} at weight {}); its users stopped on {}",
                        dominant_share / queue.weight,
                        queue.weight,
                        stops.join(", ")
                    )
                };
                QueueOutcome {
                    name: queue.name.clone(),
                    parent: queue.parent.map(|p| i.queues()[p].name.clone()),
                    weight: queue.weight,
                    usage,
                    dominant_share,
                    level: dominant_share / queue.weight,
                    users: self.tree.users_under[v].len(),
                    limit_binds,
                    guarantee_met,
                    explanation,
                }
            })
            .collect()
    }

    /// The allocation with its per-server `tasks` (or none when the split
    /// did not end optimal).
    pub fn allocation(self, tasks: Option<Tasks>, status: Status) -> Allocation {
        let i = self.instance;
        let name = self.variant.name();
        let mut a = match tasks {
            Some(t) => Allocation::new(i, name, status, t),
            None => Allocation::empty(i, name, status),
        };
        let x = a.user_tasks.clone();
        let levels: Vec<f64> = (0..i.num_users())
            .map(|u| {
                if x[u] > 0.0 {
                    x[u] * self.mu[u] / i.users()[u].weight
                } else {
                    0.0
                }
            })
            .collect();
        // Each entry's load of each resource (over servers; on the pool
        // the explanation names the used-up resources instead).
        let mut used_on = vec![vec![0.0; i.num_resources()]; i.num_entries()];
        if !self.pooled {
            for (u, e, x) in a.tasks.nonzeros() {
                for (r, used) in used_on[e].iter_mut().enumerate() {
                    *used += x * i.users()[u].demand[r];
                }
            }
        }
        let load: Vec<Vec<f64>> = i
            .server_ids()
            .filter(|_| !self.pooled)
            .map(|e| {
                (0..i.num_resources())
                    .map(|r| {
                        let c = i.class_capacity(e, ResourceId(r));
                        let used = used_on[e.0][r];
                        if c > 0.0 {
                            used / c
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        // The pool's use of each resource, once.
        let used: Vec<f64> = (0..i.num_resources())
            .map(|r| {
                i.users()
                    .iter()
                    .zip(self.x)
                    .map(|(u, &x)| u.demand[r] * x)
                    .sum()
            })
            .collect();
        a.explanation = (0..i.num_users())
            .map(|u| self.user_sentence(u, levels[u], &load, &used))
            .collect();
        a.objective = levels
            .iter()
            .zip(self.mu)
            .filter(|(_, m)| m.is_finite())
            .map(|(&l, _)| l)
            .reduce(f64::min);
        a.levels = Some(levels);
        a.solve_seconds = self.seconds;
        a.lps_solved = self.lps;
        if self.variant != Variant::Hdrfh && (i.num_entries() > 1 || i.servers()[0].count > 1) {
            a.pooled = true;
            a.notes.push(format!(
                "{name} pools the {} servers into one of capacity C (as drf); tasks[n][i] splits x_n across entries in proportion to their capacity of the user's dominant resource and need not be placeable: use hdrfh for a per-server allocation",
                i.num_physical_servers()
            ));
        }
        if self.variant != Variant::Hdrfh && i.has_placement() {
            a.notes.push(format!(
                "placement lists (users[].servers) do not apply to pooled {name} and were not used"
            ));
        }
        if !i.has_queues() {
            a.notes
                .push("the instance has no queues: every user is a child of the root".into());
        }
        if self.on_pool {
            a.notes.push("the H-DRF filling on the pooled capacity fits the servers as it is (placed by one LP): every user stopped on the pool is stopped on the servers, so it is the hdrfh answer".into());
        }
        a.hierarchy = Some(HierarchyDetails {
            queues: self.queues(&x),
            phases: self.phases,
            on_pool: self.on_pool,
            on_list_groups: self.on_list_groups,
        });
        a
    }
}

fn fmt(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}
