//! Kueue's admission with fair sharing (KEP-1714 "Fair Sharing" and the
//! hierarchical cohorts of KEP-79; `pkg/cache/.../fair_sharing.go`,
//! kubernetes-sigs/kueue v0.9+): workloads are admitted whole, one at a
//! time; at every cohort the child whose dominant resource share, counted
//! with the candidate workload, is lowest goes first (ties: the earlier
//! workload), down to a ClusterQueue whose pending workloads go in order
//! of creation (BestEffortFIFO: one that does not fit is passed over).
//!
//! The instance's tree maps onto Kueue as follows: a queue holding users
//! and no queues is a ClusterQueue, its users' tasks its workloads (one
//! task each, in user order); a queue holding queues is a cohort, and a
//! user directly under a cohort (or the root) is a ClusterQueue of its
//! own with no quota. A queue's guarantee is its nominal quota (a cohort
//! without one has its children's); the root cohort's quota is the
//! cluster; a queue's limit caps its usage (nominal quota plus borrowing
//! limit); every quota is lendable. The dominant resource share of a
//! child is `max_r floor(1000 x borrowed_r / lendable_r)` divided by its
//! weight (in thousandths, truncated, as Kueue computes it), where
//! borrowed is its usage above its quota and lendable what its parent's
//! subtree can potentially get (the cluster, capped by every limit on the
//! parent's path: `calculateLendable` over `potentialAvailable`).

use crate::tree::{Child, Tree};
use crate::Outcome;
use leontief_core::Instance;
use leontief_model::Status;

/// The most workloads one run admits.
pub const MAX_ADMISSIONS: usize = 1_000_000;

/// The admission loop's state.
pub(crate) struct Kueue<'a> {
    tree: &'a Tree,
    total: &'a [f64],
    demand: Vec<&'a [f64]>,
    /// Each node's quota (nominal, or its children's), the root's the
    /// cluster.
    quota: Vec<Vec<f64>>,
    /// What each node's subtree can potentially get (Kueue's
    /// `calculateLendable` over `potentialAvailable`): the cluster, capped
    /// by every limit on the node's path to the root.
    lendable: Vec<Vec<f64>>,
    /// Queues with a lending limit, and the part of their quota they keep.
    keepers: Vec<(usize, Vec<f64>)>,
    /// Each node's usage.
    pub usage: Vec<Vec<f64>>,
    /// Each user's admitted tasks.
    pub tasks: Vec<f64>,
    /// Users that will never fit again (usage only grows).
    done: Vec<bool>,
    /// Whether a node is a ClusterQueue (holds no queues).
    is_cq: Vec<bool>,
}

impl<'a> Kueue<'a> {
    /// The empty state.
    pub fn new(tree: &'a Tree, total: &'a [f64], demand: Vec<&'a [f64]>) -> Kueue<'a> {
        let m = tree.m;
        let nodes = tree.len();
        let is_cq: Vec<bool> = (0..nodes)
            .map(|v| v != 0 && !tree.children[v].iter().any(|c| matches!(c, Child::Node(_))))
            .collect();
        let mut quota = vec![vec![0.0; m]; nodes];
        let mut order = tree.top_down();
        order.reverse();
        for v in order {
            quota[v] = if v == 0 {
                total.to_vec()
            } else if let Some(g) = &tree.guarantee[v] {
                g.clone()
            } else {
                let mut q = vec![0.0; m];
                for c in &tree.children[v] {
                    if let Child::Node(w) = *c {
                        for (a, b) in q.iter_mut().zip(&quota[w]) {
                            *a += b;
                        }
                    }
                }
                q
            };
        }
        // The queues that keep part of their quota (lendingLimit).
        let keepers: Vec<(usize, Vec<f64>)> = (1..nodes)
            .filter_map(|v| {
                let l = tree.lending[v].as_ref()?;
                let g = tree.guarantee[v].as_ref()?;
                Some((v, g.iter().zip(l).map(|(g, l)| (g - l).max(0.0)).collect()))
            })
            .collect();
        let mut lendable = vec![total.to_vec(); nodes];
        for v in tree.top_down() {
            if let Some(p) = tree.parent[v] {
                lendable[v] = lendable[p].clone();
            }
            if let Some(l) = &tree.limit[v] {
                for (a, b) in lendable[v].iter_mut().zip(l) {
                    *a = a.min(*b);
                }
            }
        }
        // What others keep is not lendable to a subtree outside them.
        for (v, row) in lendable.iter_mut().enumerate() {
            for (o, kept) in &keepers {
                if !tree.on_path(v, *o) && !tree.on_path(*o, v) {
                    for (a, b) in row.iter_mut().zip(kept) {
                        *a = (*a - b).max(0.0);
                    }
                }
            }
        }
        let done = (0..tree.user_node.len())
            .map(|u| tree.user_max_tasks[u] < 1.0)
            .collect();
        Kueue {
            tree,
            total,
            demand,
            quota,
            lendable,
            keepers,
            usage: vec![vec![0.0; m]; nodes],
            tasks: vec![0.0; tree.user_node.len()],
            done,
            is_cq,
        }
    }

    /// The dominant resource share of child `c` of `parent` with `extra`
    /// more usage, as Kueue computes it (thousandths, truncated).
    pub fn drs(&self, parent: usize, c: Child, extra: &[f64]) -> f64 {
        let lendable = &self.lendable[parent];
        match c {
            Child::Node(w) => drs_of(
                &self.usage[w],
                Some(&self.quota[w]),
                extra,
                lendable,
                self.tree.weight[w],
            ),
            Child::User(u) => {
                let usage: Vec<f64> = self.demand[u].iter().map(|&x| x * self.tasks[u]).collect();
                drs_of(&usage, None, extra, lendable, self.tree.user_weight[u])
            }
        }
    }

    /// Does one more task of user `u` fit (every limit on its path, and
    /// the cluster less what queues off its path keep unused under their
    /// lending limits)?
    fn fits(&self, u: usize) -> bool {
        let d = self.demand[u];
        let m = self.tree.m;
        let tol = |r: usize| self.total[r] * 1e-12;
        let home = self.tree.user_node[u];
        let mut kept = vec![0.0; m];
        for (o, keep) in &self.keepers {
            if !self.tree.on_path(*o, home) {
                for r in 0..m {
                    kept[r] += (keep[r] - self.usage[*o][r]).max(0.0);
                }
            }
        }
        if (0..m).any(|r| self.usage[0][r] + d[r] + kept[r] > self.total[r] + tol(r)) {
            return false;
        }
        let mut at = Some(self.tree.user_node[u]);
        while let Some(v) = at {
            let cap: Option<&[f64]> = if v == 0 {
                Some(self.total)
            } else {
                self.tree.limit[v].as_deref()
            };
            if let Some(cap) = cap {
                if (0..m).any(|r| self.usage[v][r] + d[r] > cap[r] + tol(r)) {
                    return false;
                }
            }
            at = self.tree.parent[v];
        }
        true
    }

    /// The next workload of ClusterQueue `v` (BestEffortFIFO).
    fn head(&mut self, v: usize) -> Option<usize> {
        for &c in &self.tree.children[v] {
            if let Child::User(u) = c {
                if self.done[u] {
                    continue;
                }
                if self.fits(u) {
                    return Some(u);
                }
                self.done[u] = true;
            }
        }
        None
    }

    /// The winner of cohort `v`'s tournament: a user, and its key there.
    fn best(&mut self, v: usize) -> Option<usize> {
        let mut winner: Option<(f64, usize)> = None;
        let kids = self.tree.children[v].clone();
        for c in kids {
            let candidate = match c {
                Child::Node(w) if self.is_cq[w] => self.head(w),
                Child::Node(w) => self.best(w),
                Child::User(u) => {
                    if self.done[u] {
                        None
                    } else if self.fits(u) {
                        Some(u)
                    } else {
                        self.done[u] = true;
                        None
                    }
                }
            };
            let Some(u) = candidate else { continue };
            let key = self.drs(v, c, self.demand[u]);
            let better = match winner {
                None => true,
                Some((k, w)) => key < k || (key == k && u < w),
            };
            if better {
                winner = Some((key, u));
            }
        }
        winner.map(|(_, u)| u)
    }

    /// Admit until nothing fits or [`MAX_ADMISSIONS`]: the admissions,
    /// and whether the loop ran to its end.
    pub fn run(&mut self) -> (usize, bool) {
        let mut steps = 0;
        while steps < MAX_ADMISSIONS {
            let Some(u) = self.best(0) else {
                return (steps, true);
            };
            let d = self.demand[u];
            let mut at = Some(self.tree.user_node[u]);
            while let Some(v) = at {
                for (a, &b) in self.usage[v].iter_mut().zip(d) {
                    *a += b;
                }
                at = self.tree.parent[v];
            }
            self.tasks[u] += 1.0;
            if self.tasks[u] + 1.0 > self.tree.user_max_tasks[u] {
                self.done[u] = true;
            }
            steps += 1;
        }
        (steps, self.best(0).is_none())
    }
}

/// Run the admissions on `instance`.
pub(crate) fn outcome(instance: &Instance, tree: &Tree) -> Outcome {
    let m = tree.m;
    let demand: Vec<&[f64]> = instance
        .users()
        .iter()
        .map(|u| u.demand.as_slice())
        .collect();
    let mut k = Kueue::new(tree, instance.total_capacity(), demand.clone());
    let (admitted, finished) = k.run();
    let mut notes = Vec::new();
    let status = if finished {
        Status::Optimal
    } else {
        notes.push(format!(
            "stopped after admitting {MAX_ADMISSIONS} workloads (the most one run admits)"
        ));
        Status::IterationLimit
    };
    let zero = vec![0.0; m];
    let mut drs = vec![0.0; tree.len()];
    for (v, d) in drs.iter_mut().enumerate().skip(1) {
        *d = k.drs(tree.parent[v].unwrap_or(0), Child::Node(v), &zero);
    }
    let user_share = (0..k.tasks.len())
        .map(|u| demand[u].iter().map(|&dr| dr * k.tasks[u]).collect())
        .collect();
    Outcome {
        node_share: k.usage.clone(),
        user_share,
        bound: vec![None; k.tasks.len()],
        tasks: k.tasks.clone(),
        status,
        notes,
        steps: Some(admitted),
        drs: Some(drs),
    }
}

/// `max_r floor(1000 (usage_r + extra_r - quota_r)^+ / lendable_r)`, then
/// times 1000 over the weight in thousandths, truncated (infinite for a
/// weight below a thousandth).
pub fn drs_of(
    usage: &[f64],
    quota: Option<&[f64]>,
    extra: &[f64],
    lendable: &[f64],
    weight: f64,
) -> f64 {
    let mut drs: f64 = 0.0;
    for r in 0..usage.len() {
        let q = quota.map_or(0.0, |q| q[r]);
        let borrowed = usage[r] + extra[r] - q;
        if borrowed > 0.0 && lendable[r] > 0.0 {
            drs = drs.max((1000.0 * borrowed / lendable[r]).floor());
        }
    }
    if drs == 0.0 {
        return 0.0;
    }
    let milli = (weight * 1000.0).round();
    if milli <= 0.0 {
        return f64::INFINITY;
    }
    (drs * 1000.0 / milli).floor()
}
