//! What a scheduler engineer acts on: why each user below its task cap
//! waits (the full resource on each node it may use, or the node that
//! still has room), and each node's fullest resource and who sits there.
//!
//! A server entry with `count` > 1 is read as one pool: its room is the
//! class capacity less what its tasks use.

use leontief_core::{Instance, ServerId, Tasks, UserId};
use serde::Serialize;

/// Entries named per pending user at most.
const NODES_NAMED: usize = 5;

/// A task count below the cap by more than this is pending work.
const SHORT: f64 = 1e-6;

/// A user running fewer tasks than its cap, and why.
#[derive(Debug, Clone, Serialize)]
pub struct PendingUser {
    /// The user.
    pub user: String,
    /// Tasks it runs.
    pub tasks: f64,
    /// Its cap (the tasks it asked for).
    pub cap: f64,
    /// In words: the node with room (the scheduler could place a task
    /// there), or the resource that is full on every node it may use.
    pub reason: String,
    /// Tasks of this user one more server could still take, at most (over
    /// the servers it may use).
    pub most_room: f64,
    /// The servers it may use, fullest for it first (up to 5): what blocks
    /// a task there.
    pub blocked_on: Vec<Blocked>,
}

/// What keeps one more task of a user off one server.
#[derive(Debug, Clone, Serialize)]
pub struct Blocked {
    /// The server.
    pub server: String,
    /// The resource with the least room for the user's task.
    pub resource: String,
    /// Its free amount there.
    pub free: f64,
    /// The user's task needs this much of it.
    pub needed: f64,
    /// Tasks of the user that fit there (free / needed over the resources).
    pub room: f64,
}

/// One server's load.
#[derive(Debug, Clone, Serialize)]
pub struct NodeLine {
    /// The server.
    pub server: String,
    /// Its fullest resource.
    pub fullest: String,
    /// That resource's load, in percent of capacity.
    pub load_percent: f64,
    /// Users with tasks there, most tasks first: (user, tasks).
    pub users: Vec<(String, f64)>,
}

/// Free capacity per entry and resource.
fn free(instance: &Instance, tasks: &Tasks) -> Vec<Vec<f64>> {
    let mut used = vec![vec![0.0; instance.num_resources()]; instance.num_entries()];
    for (n, i, x) in tasks.nonzeros() {
        for (u, d) in used[i].iter_mut().zip(&instance.user(UserId(n)).demand) {
            *u += x * d;
        }
    }
    instance
        .server_ids()
        .map(|i| {
            instance
                .resource_ids()
                .map(|r| instance.class_capacity(i, r) - used[i.0][r.0])
                .collect()
        })
        .collect()
}

fn blocked(instance: &Instance, n: UserId, i: ServerId, free: &[f64]) -> Option<Blocked> {
    let d = &instance.user(n).demand;
    let (r, room) = instance
        .resource_ids()
        .filter(|r| d[r.0] > 0.0)
        .map(|r| (r, (free[r.0] / d[r.0]).max(0.0)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(Blocked {
        server: instance.servers()[i.0].name.clone(),
        resource: instance.resources()[r.0].clone(),
        free: free[r.0],
        needed: d[r.0],
        room,
    })
}

/// Every user below its cap, with the reason it waits (instance order).
pub fn pending(instance: &Instance, tasks: &Tasks) -> Vec<PendingUser> {
    let free = free(instance, tasks);
    let mut out = Vec::new();
    for n in instance.user_ids() {
        let Some(cap) = instance.user(n).tasks else {
            continue;
        };
        let x: f64 = tasks.user_total(n.0);
        if x >= cap - SHORT {
            continue;
        }
        let mut blocks: Vec<Blocked> = instance
            .server_ids()
            .filter(|&i| instance.eligible(n, i))
            .filter_map(|i| blocked(instance, n, i, &free[i.0]))
            .collect();
        blocks.sort_by(|a, b| b.room.total_cmp(&a.room));
        let most_room = blocks.first().map_or(0.0, |b| b.room);
        let reason = match blocks.first() {
            None => "no server it may use".to_string(),
            Some(b) if b.room >= 1.0 - SHORT => format!(
                "{} has room for {} of its tasks: the scheduler could place one",
                b.server,
                fmt(b.room.floor())
            ),
            Some(b) if b.room > SHORT => format!(
                "no server it may use has room for a whole task (most: {} of a task on {}, short of {})",
                fmt(b.room),
                b.server,
                b.resource
            ),
            Some(_) => {
                let mut by_resource: Vec<(String, usize)> = Vec::new();
                for b in &blocks {
                    match by_resource.iter_mut().find(|(r, _)| *r == b.resource) {
                        Some(e) => e.1 += 1,
                        None => by_resource.push((b.resource.clone(), 1)),
                    }
                }
                let parts: Vec<String> = by_resource
                    .iter()
                    .map(|(r, c)| format!("{r} on {c}"))
                    .collect();
                format!(
                    "every server it may use ({}) is full: {}",
                    blocks.len(),
                    parts.join(", ")
                )
            }
        };
        blocks.truncate(NODES_NAMED);
        out.push(PendingUser {
            user: instance.user(n).name.clone(),
            tasks: x,
            cap,
            reason,
            most_room,
            blocked_on: blocks,
        });
    }
    out
}

/// Every server's fullest resource and its users (instance order).
pub fn nodes(instance: &Instance, tasks: &Tasks) -> Vec<NodeLine> {
    let free = free(instance, tasks);
    // Per entry, its users and their tasks there (instance order).
    let mut holders: Vec<Vec<(String, f64)>> = vec![Vec::new(); instance.num_entries()];
    for (n, i, x) in tasks.nonzeros() {
        holders[i].push((instance.users()[n].name.clone(), x));
    }
    instance
        .server_ids()
        .map(|i| {
            let (r, load) = instance
                .resource_ids()
                .filter(|&r| instance.class_capacity(i, r) > 0.0)
                .map(|r| {
                    let c = instance.class_capacity(i, r);
                    (r, 100.0 * (c - free[i.0][r.0]) / c)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((leontief_core::ResourceId(0), 0.0));
            let mut users = std::mem::take(&mut holders[i.0]);
            users.sort_by(|a, b| b.1.total_cmp(&a.1));
            NodeLine {
                server: instance.servers()[i.0].name.clone(),
                fullest: instance.resources()[r.0].clone(),
                load_percent: load,
                users,
            }
        })
        .collect()
}

fn fmt(v: f64) -> String {
    crate::verdicts::g(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons() {
        let instance = Instance::from_json_str(
            r#"{"resources": ["cpu", "mem"],
                "servers": [{"name": "a", "capacity": [4, 8]}, {"name": "b", "capacity": [4, 8]},
                            {"name": "c", "capacity": [4, 8]}],
                "users": [{"name": "full", "demand": [2, 1], "tasks": 5, "servers": ["a", "b"]},
                          {"name": "room", "demand": [1, 1], "tasks": 2},
                          {"name": "done", "demand": [1, 1], "tasks": 1},
                          {"name": "free", "demand": [1, 1]}]}"#,
        )
        .unwrap();
        let tasks = Tasks::from(vec![
            vec![2.0, 2.0, 0.0],
            vec![0.0, 0.0, 1.0],
            vec![0.0, 0.0, 1.0],
            vec![0.0, 0.0, 0.0],
        ]);
        let p = pending(&instance, &tasks);
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].user, "full");
        assert_eq!(p[0].reason, "every server it may use (2) is full: cpu on 2");
        assert_eq!(p[0].blocked_on[0].free, 0.0);
        assert_eq!(p[1].user, "room");
        assert_eq!(
            p[1].reason,
            "c has room for 2 of its tasks: the scheduler could place one"
        );
        let v = nodes(&instance, &tasks);
        assert_eq!(v[0].fullest, "cpu");
        assert_eq!(v[0].load_percent, 100.0);
        assert_eq!(v[2].users, [("room".into(), 1.0), ("done".into(), 1.0)]);
    }
}
