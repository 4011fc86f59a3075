//! The queue tree as the schedulers see it: node 0 is the root, queue `q`
//! of the instance is node `q + 1`; every node's guarantee, limit, weight
//! and request (what its users' tasks ask for), and each user's request.

use leontief_core::Instance;

/// A child of a node, in the order the schedulers break ties in (queues in
/// input order, then users in input order: the order of creation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    /// A queue (a node).
    Node(usize),
    /// A user (by input index).
    User(usize),
}

/// The tree of one instance.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// Resources.
    pub m: usize,
    /// Each node's parent (`None` for the root).
    pub parent: Vec<Option<usize>>,
    /// Each node's weight (the root's is 1).
    pub weight: Vec<f64>,
    /// Each node's guarantee (`None`: none).
    pub guarantee: Vec<Option<Vec<f64>>>,
    /// Each node's limit (`None`: none).
    pub limit: Vec<Option<Vec<f64>>>,
    /// Each node's lending limit (`None`: all of its guarantee lends).
    pub lending: Vec<Option<Vec<f64>>>,
    /// Each node's children: queues first, then users.
    pub children: Vec<Vec<Child>>,
    /// The node each user hangs from.
    pub user_node: Vec<usize>,
    /// Most whole tasks each user can run: its cap, or as many as the
    /// pooled cluster holds, rounded down.
    pub user_max_tasks: Vec<f64>,
    /// Each user's request per resource (`user_max_tasks` x demand).
    pub user_request: Vec<Vec<f64>>,
    /// Each node's request: its subtree's users' requests added up.
    pub request: Vec<Vec<f64>>,
    /// Each user's weight.
    pub user_weight: Vec<f64>,
}

impl Tree {
    /// The tree of `instance` (a flat root over every user without queues).
    pub fn new(instance: &Instance) -> Tree {
        let m = instance.num_resources();
        let queues = instance.queues();
        let nodes = queues.len() + 1;
        let mut parent = vec![None; nodes];
        let mut weight = vec![1.0; nodes];
        let mut guarantee = vec![None; nodes];
        let mut limit = vec![None; nodes];
        let mut lending = vec![None; nodes];
        let mut children = vec![Vec::new(); nodes];
        for (q, queue) in queues.iter().enumerate() {
            let p = queue.parent.map_or(0, |p| p + 1);
            parent[q + 1] = Some(p);
            weight[q + 1] = queue.weight;
            guarantee[q + 1] = queue.guarantee.clone();
            limit[q + 1] = queue.limit.clone();
            lending[q + 1] = queue.lending_limit.clone();
            children[p].push(Child::Node(q + 1));
        }
        let total = instance.total_capacity();
        let mut user_node = Vec::with_capacity(instance.num_users());
        let mut user_max_tasks = Vec::with_capacity(instance.num_users());
        let mut user_request = Vec::with_capacity(instance.num_users());
        let mut user_weight = Vec::with_capacity(instance.num_users());
        let mut request = vec![vec![0.0; m]; nodes];
        for n in instance.user_ids() {
            let u = instance.user(n);
            let node = instance.user_queue(n).map_or(0, |q| q + 1);
            children[node].push(Child::User(n.0));
            user_node.push(node);
            let fits = u
                .demand
                .iter()
                .zip(total)
                .filter(|(&d, _)| d > 0.0)
                .map(|(&d, &c)| c / d)
                .fold(f64::INFINITY, f64::min);
            let most = u.tasks.map_or(fits, |t| t.min(fits)).floor();
            let req: Vec<f64> = u.demand.iter().map(|&d| d * most).collect();
            let mut at = Some(node);
            while let Some(v) = at {
                for (a, &b) in request[v].iter_mut().zip(&req) {
                    *a += b;
                }
                at = parent[v];
            }
            user_max_tasks.push(most);
            user_request.push(req);
            user_weight.push(u.weight);
        }
        Tree {
            m,
            parent,
            weight,
            guarantee,
            limit,
            lending,
            children,
            user_node,
            user_max_tasks,
            user_request,
            request,
            user_weight,
        }
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// A child's weight.
    pub fn weight_of(&self, c: Child) -> f64 {
        match c {
            Child::Node(v) => self.weight[v],
            Child::User(u) => self.user_weight[u],
        }
    }

    /// A child's request of resource `r`.
    pub fn request_of(&self, c: Child, r: usize) -> f64 {
        match c {
            Child::Node(v) => self.request[v][r],
            Child::User(u) => self.user_request[u][r],
        }
    }

    /// A child's guarantee of resource `r` (0 for users and queues without
    /// one).
    pub fn guarantee_of(&self, c: Child, r: usize) -> f64 {
        match c {
            Child::Node(v) => self.guarantee[v].as_ref().map_or(0.0, |g| g[r]),
            Child::User(_) => 0.0,
        }
    }

    /// A child's limit of resource `r` (`None`: none).
    pub fn limit_of(&self, c: Child, r: usize) -> Option<f64> {
        match c {
            Child::Node(v) => self.limit[v].as_ref().map(|l| l[r]),
            Child::User(_) => None,
        }
    }

    /// Is `a` node `v` itself or one of its ancestors?
    pub fn on_path(&self, a: usize, v: usize) -> bool {
        std::iter::successors(Some(v), |&w| self.parent[w]).any(|w| w == a)
    }

    /// Nodes ordered parents before children (the root first).
    pub fn top_down(&self) -> Vec<usize> {
        let mut order = vec![0];
        let mut i = 0;
        while i < order.len() {
            let v = order[i];
            for c in &self.children[v] {
                if let Child::Node(w) = *c {
                    order.push(w);
                }
            }
            i += 1;
        }
        order
    }
}

/// Every node's and user's amount of each resource, top down: the root
/// holds `root`, and `split(children, r, amount)` divides a node's amount
/// of resource r among its children (in the children's order).
pub(crate) fn split_down(
    tree: &Tree,
    root: Vec<f64>,
    mut split: impl FnMut(&[Child], usize, f64) -> Vec<f64>,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let m = tree.m;
    let mut node = vec![vec![0.0; m]; tree.len()];
    let mut user = vec![vec![0.0; m]; tree.user_node.len()];
    node[0] = root;
    for v in tree.top_down() {
        let kids = &tree.children[v];
        for r in 0..m {
            let shares = split(kids, r, node[v][r]);
            for (&c, s) in kids.iter().zip(shares) {
                match c {
                    Child::Node(w) => node[w][r] = s,
                    Child::User(u) => user[u][r] = s,
                }
            }
        }
    }
    (node, user)
}

/// `x` rounded down to whole multiples of `quantum` (unchanged without
/// one).
pub(crate) fn round_down(x: f64, quantum: Option<f64>) -> f64 {
    match quantum {
        Some(q) => (x / q).floor() * q,
        None => x,
    }
}
