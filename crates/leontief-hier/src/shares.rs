//! The hierarchical shares of every node at one point of the filling.
//!
//! A user's share is its global dominant share over its weight. A
//! queue's share comes from a resource vector built from its children
//! (H-DRF, Bhattacharya et al. 2013): the children that can still grow
//! count as if they all stood at the lowest share among them (each one's
//! vector rescaled to it), the blocked children as they are; the share is
//! the vector's largest fraction of the cluster over the resources still
//! contested, over the queue's weight. The naive rules count every child
//! as it is, over every resource.

use crate::tree::{Child, Tree};
use leontief_core::Instance;

/// Which hierarchical rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Rescale the growing children to the lowest among them.
    pub rescale: bool,
    /// Leave out of inner shares the resources no growing user demands.
    pub ignore_saturated: bool,
}

impl Rules {
    /// H-DRF's rules.
    pub const HDRF: Rules = Rules {
        rescale: true,
        ignore_saturated: true,
    };
    /// Naive hierarchical DRF: every subtree's total over every resource.
    pub const NAIVE: Rules = Rules {
        rescale: false,
        ignore_saturated: false,
    };
}

/// The shares of every node.
#[derive(Debug, Clone)]
pub(crate) struct Shares {
    /// Each node's share (the root's is unused).
    pub sigma: Vec<f64>,
    /// Each node's resource vector.
    pub vector: Vec<Vec<f64>>,
    /// True when some user below the node can grow.
    pub open: Vec<bool>,
    /// Each user's share.
    pub user_sigma: Vec<f64>,
    /// The resources left out of inner shares.
    pub ignored: Vec<bool>,
}

/// Where the filling stands.
pub(crate) struct Point<'a> {
    pub instance: &'a Instance,
    pub tree: &'a Tree,
    pub mu: &'a [f64],
    pub x: &'a [f64],
    pub blocked: &'a [bool],
}

impl Shares {
    /// A child's share, vector and openness.
    pub fn child(&self, p: &Point, c: Child) -> (f64, Vec<f64>, bool) {
        match c {
            Child::Node(v) => (self.sigma[v], self.vector[v].clone(), self.open[v]),
            Child::Leaf(u) => {
                let d = &p.instance.users()[u].demand;
                (
                    self.user_sigma[u],
                    d.iter().map(|&d| d * p.x[u]).collect(),
                    !p.blocked[u],
                )
            }
        }
    }
}

/// `max_r v_r / C_r` over the resources not ignored, over `weight`.
pub(crate) fn share_of(v: &[f64], total: &[f64], ignored: &[bool], weight: f64) -> f64 {
    v.iter()
        .zip(total)
        .zip(ignored)
        .filter(|((_, &c), &i)| !i && c > 0.0)
        .map(|((&v, &c), _)| v / c)
        .fold(0.0, f64::max)
        / weight
}

/// What the tree needs of its leaves: each user's resource vector and
/// share, whether it can grow, and whether it demands a resource.
pub(crate) struct Leaves<'a> {
    /// User u's resource vector.
    pub vector: &'a dyn Fn(usize) -> Vec<f64>,
    /// User u's share (over its weight).
    pub sigma: Vec<f64>,
    /// True when user u can grow.
    pub open: &'a dyn Fn(usize) -> bool,
    /// True when user u demands resource r.
    pub wants: &'a dyn Fn(usize, usize) -> bool,
}

/// The shares at `p` under `rules`.
pub(crate) fn compute(p: &Point, rules: Rules) -> Shares {
    let users = p.instance.users();
    let sigma: Vec<f64> = (0..users.len())
        .map(|u| {
            if p.x[u] == 0.0 {
                0.0
            } else {
                p.x[u] * p.mu[u] / users[u].weight
            }
        })
        .collect();
    let vector = |u: usize| users[u].demand.iter().map(|&d| d * p.x[u]).collect();
    let open = |u: usize| !p.blocked[u];
    let wants = |u: usize, r: usize| users[u].demand[r] > 0.0;
    let leaves = Leaves {
        vector: &vector,
        sigma,
        open: &open,
        wants: &wants,
    };
    over(p.tree, p.instance.total_capacity(), &leaves, rules)
}

/// Every node's share over `total` from its leaves, bottom-up.
pub(crate) fn over(tree: &Tree, total: &[f64], leaves: &Leaves, rules: Rules) -> Shares {
    let m = total.len();
    let users = leaves.sigma.len();
    let mut ignored = vec![false; m];
    if rules.ignore_saturated {
        for (r, flag) in ignored.iter_mut().enumerate() {
            *flag = !(0..users).any(|u| (leaves.open)(u) && (leaves.wants)(u, r));
        }
    }
    let nodes = tree.len();
    let mut s = Shares {
        sigma: vec![0.0; nodes],
        vector: vec![vec![0.0; m]; nodes],
        open: vec![false; nodes],
        user_sigma: leaves.sigma.clone(),
        ignored,
    };
    for &v in &tree.bottom_up {
        let kids: Vec<(f64, Vec<f64>, bool)> = tree.children[v]
            .iter()
            .map(|&c| match c {
                Child::Node(w) => (s.sigma[w], s.vector[w].clone(), s.open[w]),
                Child::Leaf(u) => (s.user_sigma[u], (leaves.vector)(u), (leaves.open)(u)),
            })
            .collect();
        let open = kids.iter().any(|k| k.2);
        let low = kids
            .iter()
            .filter(|k| k.2)
            .map(|k| k.0)
            .fold(f64::INFINITY, f64::min);
        let mut vec = vec![0.0; m];
        for (sigma, kv, kid_open) in &kids {
            let f = if rules.rescale && *kid_open && *sigma > low {
                low / sigma
            } else {
                1.0
            };
            for (a, b) in vec.iter_mut().zip(kv) {
                *a += f * b;
            }
        }
        s.sigma[v] = share_of(&vec, total, &s.ignored, tree.weight[v]);
        s.vector[v] = vec;
        s.open[v] = open;
    }
    s
}
