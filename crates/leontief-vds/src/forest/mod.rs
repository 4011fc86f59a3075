//! The exact finish of PS-DSF: the fixed point of the water-filling
//! conditions on the structure of a Gauss-Seidel iterate, solved directly.
//!
//! When every user eligible on a server needs the resource that binds
//! there (r_i, the fullest one), the server has one water level T_i and
//! the PS-DSF conditions read, for the users below their caps:
//!
//! * X_n = x_n / w_n = gamma_{n,i} T_i where x_{n,i} > 0 (holders),
//!   X_n >= gamma_{n,i} T_i on every other eligible server;
//! * sum_n x_{n,i} D_{n,r_i} = c_{i,r_i}, every other resource within its
//!   capacity.
//!
//! With the holders fixed this is linear in (x, X, T). Generic equilibria
//! hold on a forest of the bipartite user-server graph (a cycle would tie
//! the levels by a product of gamma ratios), so the finish keeps the
//! maximum spanning forest of the iterate's holders (by x_{n,i} / x_n),
//! propagates the level ratios along each tree (X and T known up to one
//! scale per tree), and peels the trees leaf by leaf with every x_{n,i}
//! affine in that scale; the root's equation fixes it. O(E log E) for the E
//! holding pairs. Users at their caps keep the iterate's split (scaled to
//! the cap exactly) and count as fixed load on their servers.
//!
//! Equilibria are often not generic, though: where two users have the same
//! bottleneck resource on two servers, gamma factors (gamma_{n,i} = A_n
//! B_i) on that pair of servers and a cycle of holders is consistent; the
//! split along it is free (PS-DSF is not unique) and the forest's own split
//! may need x < 0. So the forest is corrected, round by round, until its
//! solve passes every check or the work budget runs out:
//!
//! * pivots: a free user below gamma T on a server of its own tree joins
//!   it, and the weakest edge of the tree path between them leaves (most
//!   violated first, from a lazy max-heap; the smaller side of the cut is
//!   re-rooted);
//! * drops: in each tree the most negative edge of the peel leaves;
//! * joins: a free user below gamma T on a server of another tree joins it
//!   (each tree in at most one join per round);
//! * rebinding: where another resource of a server overflows, it binds.
//! * the split LP: where every level holds (no pivot, no join left) but
//!   the forest's split runs negative, the split over all tied pairs comes
//!   from one LP warm-started on the forest (`split.rs`, at most
//!   [`MAX_SPLITS`] per finish); with two resources the levels are often
//!   right long before the drops and joins find a nonnegative forest.
//!
//! When the finish fails it can hand back, once, the nearest split at the
//! levels of its first round (an elastic LP): the sweeps restart from it
//! (`psdsf.rs`).
//!
//! The result is a candidate only: [`forest_finish`] checks the
//! inequalities (x >= 0, the non-holders' levels, the other resources'
//! capacities, capped users below the level) and the caller still runs the
//! independent Definition-4 certificate. When the structure cannot be put
//! right within the budget, or a server's users do not all need its binding
//! resource, it answers `None` and the sweeps go on.

use crate::split::{split, Levels};
use crate::Eligibility;
use leontief_core::{Instance, ResourceId, ServerId};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

mod finish;

pub(crate) use finish::forest_finish;

/// Relative tolerance of the finish's own checks.
const TOL: f64 = 1e-10;

/// Rounds (the pivots, then one batch of drops, joins or rebinds) one
/// finish may make before it leaves the iterate to the sweeps.
const MAX_ROUNDS: usize = 2000;

/// Split LPs (`split.rs`) one finish may run.
const MAX_SPLITS: usize = 2;

#[cfg(test)]
thread_local! {
    /// Tests turn the split LP off to show what it adds.
    static NO_SPLIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Union-find over the users and servers (path halving, union by size).
struct Dsu {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Dsu {
    fn new(n: usize) -> Self {
        Dsu {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut a: usize) -> usize {
        while self.parent[a] != a {
            self.parent[a] = self.parent[self.parent[a]];
            a = self.parent[a];
        }
        a
    }

    fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
        true
    }
}

/// A pair below the level inside its tree, ordered by its shortfall.
#[derive(Clone, Copy)]
struct Below {
    short: f64,
    n: usize,
    i: usize,
    g: f64,
}

impl PartialEq for Below {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Below {}

impl PartialOrd for Below {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Below {
    fn cmp(&self, other: &Self) -> Ordering {
        self.short
            .total_cmp(&other.short)
            .then(other.n.cmp(&self.n))
            .then(other.i.cmp(&self.i))
    }
}

/// A holding pair of the forest.
#[derive(Clone, Copy)]
struct Edge {
    user: usize,
    server: usize,
    gamma: f64,
    /// D_{n, r_i}: the user's demand of its server's binding resource.
    d: f64,
    /// x_{n,i} / x_n in the iterate (the pivots drop the weakest edge).
    share: f64,
}

/// The iterate's structure: who is capped, each server's binding resource
/// and the room it leaves, and the maximum spanning forest of the holders
/// with the level ratios along each tree.
struct Structure {
    nu: usize,
    capped: Vec<bool>,
    /// Binding resource per server (`usize::MAX`: no free user, no level).
    bind: Vec<usize>,
    /// Capacity of the binding resource left by the capped users.
    room: Vec<f64>,
    edges: Vec<Edge>,
    /// Forest adjacency (edge indices) of users 0..nu and servers
    /// nu..nu+k.
    adj: Vec<Vec<usize>>,
    /// Tree of each node (`usize::MAX`: in none).
    comp: Vec<usize>,
    /// The nodes of every tree, tree after tree, each breadth-first from
    /// its root (a user).
    order: Vec<usize>,
    /// Where each tree starts in `order`.
    tree_start: Vec<usize>,
    /// The edge to each node's parent (`usize::MAX` at roots).
    parent: Vec<usize>,
    /// Depth of each node in its tree.
    depth: Vec<usize>,
    /// X_n (users) and T_i (servers) relative to their tree's scale.
    value: Vec<f64>,
    /// Each server's first pair (the order of `Eligibility::on_server`).
    pstart: Vec<usize>,
    /// The capped users' split per pair, scaled to the cap (zero
    /// elsewhere).
    fixed: Vec<f64>,
    /// Their load per server and resource (k x m).
    fixed_use: Vec<f64>,
}

impl Structure {
    fn new(
        instance: &Instance,
        elig: &Eligibility,
        xp: &[f64],
        total: &[f64],
    ) -> Option<Structure> {
        let users = instance.users();
        let (nu, k, m) = (
            users.len(),
            instance.num_entries(),
            instance.num_resources(),
        );
        let pstart = elig.pair_starts();
        let capped: Vec<bool> = (0..nu)
            .map(|n| users[n].tasks.is_some_and(|t| total[n] >= t * (1.0 - 1e-9)))
            .collect();
        let mut fixed = vec![0.0; pstart[k]];
        let mut fixed_use = vec![0.0; k * m];
        for i in 0..k {
            for (q, &(n, _)) in elig.on_server[i].iter().enumerate() {
                if capped[n] {
                    let p = pstart[i] + q;
                    fixed[p] = xp[p] * users[n].tasks.unwrap_or(0.0) / total[n];
                    for r in 0..m {
                        fixed_use[i * m + r] += fixed[p] * users[n].demand[r];
                    }
                }
            }
        }
        let mut bind = vec![usize::MAX; k];
        let mut room = vec![0.0; k];
        for i in 0..k {
            let list = &elig.on_server[i];
            if !list.iter().any(|&(n, _)| !capped[n]) {
                continue;
            }
            let cap = instance.class_capacities(ServerId(i));
            let mut used = vec![0.0; m];
            for (q, &(n, _)) in list.iter().enumerate() {
                for r in 0..m {
                    used[r] += xp[pstart[i] + q] * users[n].demand[r];
                }
            }
            let best = (0..m)
                .filter(|&r| cap[r] > 0.0)
                .max_by(|&a, &b| (used[a] / cap[a]).total_cmp(&(used[b] / cap[b])))?;
            if list
                .iter()
                .any(|&(n, _)| !capped[n] && users[n].demand[best] <= 0.0)
            {
                return None;
            }
            bind[i] = best;
            room[i] = cap[best] - fixed_use[i * m + best];
        }
        // The free users' holding pairs, largest share of the user first.
        let mut cand: Vec<(f64, Edge)> = Vec::new();
        for i in 0..k {
            for (q, &(n, g)) in elig.on_server[i].iter().enumerate() {
                let v = xp[pstart[i] + q];
                if !capped[n] && v > 1e-12 * total[n] {
                    let d = users[n].demand[bind[i]];
                    let share = v / total[n];
                    cand.push((
                        share,
                        Edge {
                            user: n,
                            server: i,
                            gamma: g,
                            d,
                            share,
                        },
                    ));
                }
            }
        }
        cand.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut dsu = Dsu::new(nu + k);
        let edges: Vec<Edge> = cand
            .into_iter()
            .filter(|(_, e)| dsu.union(e.user, nu + e.server))
            .map(|(_, e)| e)
            .collect();
        let mut st = Structure {
            nu,
            capped,
            bind,
            room,
            edges,
            adj: Vec::new(),
            comp: Vec::new(),
            order: Vec::new(),
            tree_start: Vec::new(),
            parent: Vec::new(),
            depth: Vec::new(),
            value: Vec::new(),
            pstart,
            fixed,
            fixed_use,
        };
        st.build_trees(total, users, k);
        Some(st)
    }

    /// Adjacency, trees (breadth-first from a user root), parents, depths
    /// and the level ratios of the current edges; the roots take the
    /// iterate's X_n so the scales stay near 1.
    fn build_trees(&mut self, total: &[f64], users: &[leontief_core::User], k: usize) {
        let nu = self.nu;
        // Buffers are reused across rounds (a finish rebuilds many times).
        self.adj.resize_with(nu + k, Vec::new);
        self.adj.iter_mut().for_each(Vec::clear);
        for (j, e) in self.edges.iter().enumerate() {
            self.adj[e.user].push(j);
            self.adj[nu + e.server].push(j);
        }
        for v in [&mut self.comp, &mut self.parent] {
            v.clear();
            v.resize(nu + k, usize::MAX);
        }
        self.depth.clear();
        self.depth.resize(nu + k, 0);
        self.value.clear();
        self.value.resize(nu + k, 0.0);
        self.order.clear();
        self.tree_start.clear();
        let (edges, adj) = (&self.edges, &self.adj);
        for root in 0..nu {
            if self.comp[root] != usize::MAX || adj[root].is_empty() {
                continue;
            }
            let c = self.tree_start.len();
            let mut head = self.order.len();
            self.tree_start.push(head);
            self.order.push(root);
            self.comp[root] = c;
            self.value[root] = total[root] / users[root].weight;
            while head < self.order.len() {
                let v = self.order[head];
                head += 1;
                for &j in &adj[v] {
                    let e = edges[j];
                    let w = if v < nu { nu + e.server } else { e.user };
                    if self.comp[w] != usize::MAX {
                        continue;
                    }
                    self.comp[w] = c;
                    self.parent[w] = j;
                    self.depth[w] = self.depth[v] + 1;
                    self.value[w] = if v < nu {
                        self.value[v] / e.gamma
                    } else {
                        self.value[v] * e.gamma
                    };
                    self.order.push(w);
                }
            }
        }
    }

    /// Number of trees.
    fn num_trees(&self) -> usize {
        self.tree_start.len()
    }

    /// The nodes of tree `c`, breadth-first from its root.
    fn tree(&self, c: usize) -> &[usize] {
        let end = self
            .tree_start
            .get(c + 1)
            .copied()
            .unwrap_or(self.order.len());
        &self.order[self.tree_start[c]..end]
    }

    /// The other end of edge `j` from node `v`.
    fn across(&self, j: usize, v: usize) -> usize {
        let e = self.edges[j];
        if v < self.nu {
            self.nu + e.server
        } else {
            e.user
        }
    }

    /// How far a free user sits below gamma T on an eligible server of its
    /// own tree (relative), when it does by more than the tolerance.
    fn shortfall(&self, n: usize, i: usize, g: f64) -> Option<f64> {
        let c = self.comp[n];
        if self.capped[n] || c == usize::MAX || c != self.comp[self.nu + i] {
            return None;
        }
        let short = 1.0 - self.value[n] / (g * self.value[self.nu + i]);
        (short > TOL).then_some(short)
    }

    /// One pivot: the violated pair (n, i) joins the forest and the weakest
    /// edge (smallest share of its user in the iterate) on the tree path
    /// from n to i leaves, so the pair's ratio becomes exact. Incremental:
    /// one side of the cut is re-rooted at whichever of n, i it holds, hung
    /// from the other by the new edge, and its level
    /// ratios scaled by one factor. The smaller of the two sides of the cut
    /// is the one that moves (both are walked in step until one runs out),
    /// so a pivot costs O(smaller side), not O(forest). The trees'
    /// breadth-first orders are stale afterwards: `build_trees` before a
    /// peel. `moved` receives the re-rooted nodes (their levels changed).
    fn pivot(
        &mut self,
        n: usize,
        i: usize,
        g: f64,
        users: &[leontief_core::User],
        moved: &mut Vec<usize>,
    ) {
        let nu = self.nu;
        let (mut a, mut b) = (n, nu + i);
        let mut weakest = (f64::INFINITY, usize::MAX);
        while a != b {
            let v = if self.depth[a] >= self.depth[b] {
                &mut a
            } else {
                &mut b
            };
            let j = self.parent[*v];
            if self.edges[j].share <= weakest.0 {
                weakest = (self.edges[j].share, j);
            }
            *v = self.across(j, *v);
        }
        let j = weakest.1;
        let old = self.edges[j];
        let child = if self.parent[old.user] == j {
            old.user
        } else {
            nu + old.server
        };
        let above = self.across(j, child);
        for v in [old.user, nu + old.server] {
            self.adj[v].retain(|&x| x != j);
        }
        // Which side of the cut holds n (the subtree under `child`, or the
        // rest of the tree above it)?
        let mut up = n;
        while self.depth[up] > self.depth[child] {
            up = self.across(self.parent[up], up);
        }
        let n_below = up == child;
        // Walk both sides in step; the one that runs out first is the
        // smaller and moves.
        let (mut sa, mut sb) = (vec![(child, j)], vec![(above, j)]);
        let (mut ha, mut hb) = (0, 0);
        let below_smaller = loop {
            if ha == sa.len() {
                break true;
            }
            if hb == sb.len() {
                break false;
            }
            for (queue, head) in [(&mut sa, &mut ha), (&mut sb, &mut hb)] {
                let (v, from) = queue[*head];
                *head += 1;
                for &je in &self.adj[v] {
                    if je != from {
                        queue.push((self.across(je, v), je));
                    }
                }
            }
        };
        // q: the new edge's end on the moving side, p: on the staying side.
        let q_is_n = n_below == below_smaller;
        let (q, p) = if q_is_n { (n, nu + i) } else { (nu + i, n) };
        let want = if q_is_n {
            g * self.value[nu + i]
        } else {
            self.value[n] / g
        };
        let factor = want / self.value[q];
        self.edges[j] = Edge {
            user: n,
            server: i,
            gamma: g,
            d: users[n].demand[self.bind[i]],
            share: f64::INFINITY,
        };
        if !below_smaller {
            // The side above loses its root: the subtree's top becomes it.
            self.parent[child] = usize::MAX;
        }
        self.parent[q] = j;
        self.depth[q] = self.depth[p] + 1;
        self.value[q] = want;
        let queue = moved;
        queue.clear();
        queue.push(q);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            for t in 0..self.adj[v].len() {
                let je = self.adj[v][t];
                if je == self.parent[v] {
                    continue;
                }
                let w = self.across(je, v);
                self.parent[w] = je;
                self.depth[w] = self.depth[v] + 1;
                self.value[w] *= factor;
                queue.push(w);
            }
        }
        self.adj[n].push(j);
        self.adj[nu + i].push(j);
    }

    /// The pairs to join across trees, given each tree's scale: a free
    /// user in no tree joins its most attractive server, a levelled server
    /// in no tree its lowest user, and the free users most below gamma T on
    /// a server of another tree join it, most violated first, each tree in
    /// at most one join (so the forest stays a forest and the joins of one
    /// round do not interact).
    fn cross_joins(&self, elig: &Eligibility, scale: &[f64]) -> Vec<(usize, usize, f64)> {
        let nu = self.nu;
        let ntrees = self.num_trees();
        let level = |v: usize| {
            let c = self.comp[v];
            (c != usize::MAX).then(|| self.value[v] * scale[c])
        };
        let mut lonely_user: Vec<Option<(f64, usize, f64)>> = vec![None; nu];
        // (priority, user, server, gamma): lonely nodes first.
        let mut cand: Vec<(f64, usize, usize, f64)> = Vec::new();
        for (i, list) in elig.on_server.iter().enumerate() {
            if self.bind[i] == usize::MAX {
                continue;
            }
            let t = level(nu + i);
            let mut lowest: Option<(f64, usize, f64)> = None;
            for &(n, g) in list.iter().filter(|e| !self.capped[e.0]) {
                let x = level(n);
                let Some(t) = t else {
                    let v = x.unwrap_or(0.0) / g;
                    if !lowest.is_some_and(|l| l.0 <= v) {
                        lowest = Some((v, n, g));
                    }
                    continue;
                };
                match x {
                    None => {
                        let v = g * t;
                        if !lonely_user[n].is_some_and(|l| l.0 >= v) {
                            lonely_user[n] = Some((v, i, g));
                        }
                    }
                    Some(x) if self.comp[n] != self.comp[nu + i] => {
                        let short = 1.0 - x / (g * t);
                        if short > TOL {
                            cand.push((short, n, i, g));
                        }
                    }
                    Some(_) => {}
                }
            }
            if let Some((_, n, g)) = lowest {
                cand.push((f64::INFINITY, n, i, g));
            }
        }
        for (n, l) in lonely_user.iter().enumerate() {
            if let Some((_, i, g)) = *l {
                cand.push((f64::INFINITY, n, i, g));
            }
        }
        cand.sort_by(|a, b| b.0.total_cmp(&a.0));
        // Trees, and nodes in no tree, as the sets to keep apart.
        let key = |v: usize| {
            let c = self.comp[v];
            if c == usize::MAX {
                ntrees + v
            } else {
                c
            }
        };
        // Each tree (or lonely node) joins at most once per round.
        let mut used = vec![false; ntrees + self.comp.len()];
        cand.into_iter()
            .filter(|&(_, n, i, _)| {
                let (a, b) = (key(n), key(nu + i));
                let free = !used[a] && !used[b];
                if free {
                    used[a] = true;
                    used[b] = true;
                }
                free
            })
            .map(|(_, n, i, g)| (n, i, g))
            .collect()
    }

    /// Join the pair (n, i) to the forest (it merges two trees).
    fn add_edge(&mut self, n: usize, i: usize, g: f64, users: &[leontief_core::User]) {
        let d = users[n].demand[self.bind[i]];
        self.edges.push(Edge {
            user: n,
            server: i,
            gamma: g,
            d,
            share: f64::INFINITY,
        });
    }

    /// Server i's binding resource becomes r (its edges' demands and the
    /// room the capped users leave follow).
    fn rebind(&mut self, instance: &Instance, i: usize, r: usize) {
        let users = instance.users();
        let m = instance.num_resources();
        self.bind[i] = r;
        self.room[i] =
            instance.class_capacity(ServerId(i), ResourceId(r)) - self.fixed_use[i * m + r];
        for e in self.edges.iter_mut().filter(|e| e.server == i) {
            e.d = users[e.user].demand[r];
        }
    }

    /// Peel each tree leaf by leaf, every x_{n,i} affine in the tree's
    /// scale; the root's equation fixes the scale. The scales and the
    /// forest's x, or `None` when a root equation is singular.
    fn peel(&self, users: &[leontief_core::User]) -> Option<(Vec<f64>, Vec<f64>)> {
        let nu = self.nu;
        let ne = self.edges.len();
        let (mut xa, mut xb, mut x) = (vec![0.0; ne], vec![0.0; ne], vec![0.0; ne]);
        let mut scale = vec![0.0; self.num_trees()];
        for c in 0..self.num_trees() {
            let order = self.tree(c);
            for &v in order.iter().rev() {
                let (mut sa, mut sb) = (0.0, 0.0);
                for &j in &self.adj[v] {
                    if j != self.parent[v] {
                        let wgt = if v < nu { 1.0 } else { self.edges[j].d };
                        sa += wgt * xa[j];
                        sb += wgt * xb[j];
                    }
                }
                let j = self.parent[v];
                if j == usize::MAX {
                    // The root (a user): children = w X_root s.
                    let a = users[v].weight * self.value[v];
                    let den = sb - a;
                    if den.abs() <= 1e-12 * a.abs().max(sb.abs()) {
                        return None;
                    }
                    scale[c] = -sa / den;
                } else if v < nu {
                    xa[j] = -sa;
                    xb[j] = users[v].weight * self.value[v] - sb;
                } else {
                    let d = self.edges[j].d;
                    xa[j] = (self.room[v - nu] - sa) / d;
                    xb[j] = -sb / d;
                }
            }
            if !(scale[c].is_finite() && scale[c] > 0.0) {
                return None;
            }
            for &v in &order[1..] {
                let j = self.parent[v];
                x[j] = xa[j] + xb[j] * scale[c];
            }
        }
        Some((scale, x))
    }

    /// The allocation of the forest's x (and the capped users' split).
    fn allocation(&self, elig: &Eligibility, x: &[f64]) -> Vec<Vec<f64>> {
        let k = elig.on_server.len();
        let mut out = vec![vec![0.0; k]; self.nu];
        for (i, list) in elig.on_server.iter().enumerate() {
            for (q, &(n, _)) in list.iter().enumerate() {
                if self.capped[n] {
                    out[n][i] = self.fixed[self.pstart[i] + q];
                }
            }
        }
        for (e, &v) in self.edges.iter().zip(x) {
            out[e.user][e.server] = v.max(0.0);
        }
        out
    }
}

#[cfg(test)]
mod split_tests;
#[cfg(test)]
mod tests;
