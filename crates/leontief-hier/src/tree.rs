//! The queue tree as the filling walks it: node 0 is the root, queue `q`
//! of the instance is node `q + 1`, users are leaves.

use leontief_core::{Instance, UserId};

/// A child of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// An inner node (a queue).
    Node(usize),
    /// A leaf (a user, by input index).
    Leaf(usize),
}

/// The tree of one instance.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// Weight of each node (the root's is 1).
    pub weight: Vec<f64>,
    /// Each node's children, queues first, then users, in input order.
    pub children: Vec<Vec<Child>>,
    /// Each node's parent (`None` for the root).
    pub parent: Vec<Option<usize>>,
    /// The node each user hangs from.
    pub user_node: Vec<usize>,
    /// Nodes ordered children before parents (the root last).
    pub bottom_up: Vec<usize>,
    /// The users in each node's subtree.
    pub users_under: Vec<Vec<usize>>,
}

impl Tree {
    /// The tree of `instance` (a flat root over every user when it has no
    /// queues).
    pub fn new(instance: &Instance) -> Tree {
        let queues = instance.queues();
        let nodes = queues.len() + 1;
        let mut weight = vec![1.0; nodes];
        let mut parent = vec![None; nodes];
        let mut children = vec![Vec::new(); nodes];
        for (q, queue) in queues.iter().enumerate() {
            weight[q + 1] = queue.weight;
            let p = queue.parent.map_or(0, |p| p + 1);
            parent[q + 1] = Some(p);
            children[p].push(Child::Node(q + 1));
        }
        let user_node: Vec<usize> = instance
            .user_ids()
            .map(|n| instance.user_queue(n).map_or(0, |q| q + 1))
            .collect();
        for (u, &node) in user_node.iter().enumerate() {
            children[node].push(Child::Leaf(u));
        }
        let mut depth = vec![0usize; nodes];
        for v in 1..nodes {
            let mut d = 0;
            let mut at = v;
            while let Some(p) = parent[at] {
                d += 1;
                at = p;
            }
            depth[v] = d;
        }
        let mut bottom_up: Vec<usize> = (0..nodes).collect();
        bottom_up.sort_by_key(|&v| std::cmp::Reverse(depth[v]));
        let mut users_under = vec![Vec::new(); nodes];
        for (u, &node) in user_node.iter().enumerate() {
            let mut at = Some(node);
            while let Some(v) = at {
                users_under[v].push(u);
                at = parent[v];
            }
        }
        Tree {
            weight,
            children,
            parent,
            user_node,
            bottom_up,
            users_under,
        }
    }

    /// The nodes above user `u`, nearest first, the root last.
    pub fn ancestors(&self, u: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(self.user_node[u]), move |&v| self.parent[v])
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.weight.len()
    }
}

/// `mu_n`: the global dominant share of one task of every user (`inf`
/// where it demands a resource no server has).
pub(crate) fn task_shares(instance: &Instance) -> Vec<f64> {
    instance
        .user_ids()
        .map(|n: UserId| instance.mu(n))
        .collect()
}
