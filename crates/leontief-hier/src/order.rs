//! The order of a queue tree for schedulers that hand out whole tasks:
//! which user gets the next task (the paper's progressive filling, one
//! task at a time, as Mesos and Volcano run it).
//!
//! From the root, the scheduler walks to the open child with the lowest
//! share (ties, within 1e-12 relative: the first child) until it reaches
//! a user. Shares are
//! those of `shares` over the users' running tasks: a user's vector is
//! the sum of its running tasks' demands, its share that vector's global
//! dominant share over its weight; a user is open when its next task
//! could be placed. Under H-DRF's rules a queue whose CPU user holds all
//! the CPU still ranks by its GPU user when only GPU is contested; under
//! the naive rules it ranks by the CPU, and its GPU user starves
//! (docs/reproduction.md, the starvation example).

use crate::shares::{over, share_of, Leaves, Rules};
use crate::tree::{Child, Tree};
use leontief_core::Instance;

/// A queue tree over fixed users, ordered task by task.
#[derive(Debug, Clone)]
pub struct TaskOrder {
    tree: Tree,
    total: Vec<f64>,
    user_weight: Vec<f64>,
    /// Each node's limit (the root's `None`).
    limit: Vec<Option<Vec<f64>>>,
    rules: Rules,
}

impl TaskOrder {
    /// The tree, weights and limits of `instance` (its queues and users;
    /// demands and servers other than the total capacity are not used).
    pub fn new(instance: &Instance, rules: Rules) -> TaskOrder {
        let tree = Tree::new(instance);
        let mut limit = vec![None];
        limit.extend(instance.queues().iter().map(|q| q.limit.clone()));
        TaskOrder {
            tree,
            total: instance.total_capacity().to_vec(),
            user_weight: instance.users().iter().map(|u| u.weight).collect(),
            limit,
            rules,
        }
    }

    /// The user to serve next, given each user's running use (`usage[u]`,
    /// one entry per resource) and which users could take their next
    /// task (`open[u]`, whose next task needs resource r where
    /// `wants(u, r)`): `None` when no user is open.
    pub fn next(
        &self,
        usage: &[Vec<f64>],
        open: &[bool],
        wants: &dyn Fn(usize, usize) -> bool,
    ) -> Option<usize> {
        let none = vec![false; self.total.len()];
        let sigma: Vec<f64> = usage
            .iter()
            .zip(&self.user_weight)
            .map(|(v, w)| share_of(v, &self.total, &none, *w))
            .collect();
        let vector = |u: usize| usage[u].clone();
        let is_open = |u: usize| open[u];
        let wanted = |u: usize, r: usize| open[u] && wants(u, r);
        let leaves = Leaves {
            vector: &vector,
            sigma,
            open: &is_open,
            wants: &wanted,
        };
        let s = over(&self.tree, &self.total, &leaves, self.rules);
        let mut at = 0usize;
        loop {
            let mut best: Option<(f64, Child)> = None;
            for &c in &self.tree.children[at] {
                let (share, is) = match c {
                    Child::Node(v) => (s.sigma[v], s.open[v]),
                    Child::Leaf(u) => (s.user_sigma[u], open[u]),
                };
                // Shares equal within 1e-12 relative are ties (the first
                // child wins), so rounding in the sums never decides.
                if is && best.is_none_or(|(b, _)| share < b - 1e-12 * b) {
                    best = Some((share, c));
                }
            }
            match best?.1 {
                Child::Leaf(u) => return Some(u),
                Child::Node(v) => at = v,
            }
        }
    }

    /// Nodes of the tree (the root and every queue).
    pub fn nodes(&self) -> usize {
        self.tree.len()
    }

    /// Add `sign` times `demand` to the use of every queue above user `u`
    /// (`node_usage[v]`, one entry per node and resource).
    pub fn charge(&self, node_usage: &mut [Vec<f64>], u: usize, demand: &[f64], sign: f64) {
        for v in self.tree.ancestors(u) {
            for (a, d) in node_usage[v].iter_mut().zip(demand) {
                *a += sign * d;
            }
        }
    }

    /// True when `extra` more for user `u` keeps every queue above it
    /// within its limit (`slack`: the tolerance as a fraction of each
    /// limit), given every queue's use as kept by [`TaskOrder::charge`].
    pub fn within_limits(
        &self,
        node_usage: &[Vec<f64>],
        u: usize,
        extra: &[f64],
        slack: f64,
    ) -> bool {
        self.tree.ancestors(u).all(|v| match &self.limit[v] {
            None => true,
            Some(l) => l
                .iter()
                .zip(&node_usage[v])
                .zip(extra)
                .all(|((&lr, &used), &e)| e <= 0.0 || used + e <= lr * (1.0 + slack)),
        })
    }
}
