//! The finish itself: the structure of an iterate solved, checked, and
//! its allocation returned (see the module docs of `crate::forest`).

use super::*;

/// The exact finish on the structure of a sweeps' iterate (see the module
/// docs): the allocation, when a solve on that structure passes its own
/// checks.
///
/// `xp` holds x_{n,i} per eligible pair in the order of
/// `Eligibility::on_server`, `total` each user's x_n. `budget` bounds the
/// work (pairs pushed on the pivots' heap, and the pairs scanned by each
/// round); past it the finish gives up. With `restart`, the first round
/// whose levels fail leaves there the elastic split at those levels, per
/// pair in `xp`'s layout (the sweeps' restart point).
pub(crate) fn forest_finish(
    instance: &Instance,
    elig: &Eligibility,
    xp: &[f64],
    total: &[f64],
    budget: usize,
    mut restart: Option<&mut Option<Vec<f64>>>,
) -> Option<Vec<Vec<f64>>> {
    let users = instance.users();
    let k = instance.num_entries();
    let mut st = Structure::new(instance, elig, xp, total)?;
    let mut moved = Vec::new();
    let mut on_user: Vec<Vec<(usize, f64)>> = vec![Vec::new(); st.nu];
    for (i, list) in elig.on_server.iter().enumerate() {
        for &(n, g) in list {
            on_user[n].push((i, g));
        }
    }
    let pairs: usize = on_user.iter().map(Vec::len).sum();
    let mut work = 0usize;
    let (mut splits, mut restart_tried) = (0usize, false);
    for _ in 0..MAX_ROUNDS {
        work += pairs;
        // Pivots on the pairs below the level inside their trees, most
        // violated first, from a lazy max-heap: a pivot changes only
        // the levels of the subtree it moves, so only the pairs touching
        // it are pushed again; a popped entry is re-evaluated first.
        let mut heap: BinaryHeap<Below> = BinaryHeap::new();
        for (i, list) in elig.on_server.iter().enumerate() {
            for &(n, g) in list {
                if let Some(short) = st.shortfall(n, i, g) {
                    heap.push(Below { short, n, i, g });
                }
            }
        }
        while let Some(b) = heap.pop() {
            let Some(short) = st.shortfall(b.n, b.i, b.g) else {
                continue;
            };
            if short < b.short * (1.0 - 1e-12) {
                heap.push(Below { short, ..b });
                continue;
            }
            if work > budget {
                return None;
            }
            st.pivot(b.n, b.i, b.g, users, &mut moved);
            work += moved.len();
            for &v in &moved {
                if v < st.nu {
                    work += on_user[v].len();
                    for &(i, g) in &on_user[v] {
                        if let Some(short) = st.shortfall(v, i, g) {
                            heap.push(Below { short, n: v, i, g });
                        }
                    }
                } else {
                    let i = v - st.nu;
                    work += elig.on_server[i].len();
                    for &(n, g) in &elig.on_server[i] {
                        if let Some(short) = st.shortfall(n, i, g) {
                            heap.push(Below { short, n, i, g });
                        }
                    }
                }
            }
        }
        st.build_trees(total, users, k);
        let (scale, x) = st.peel(users)?;
        // Edges the forest would run negative leave: in each tree the most
        // negative one (relative to its user's tasks); the trees that split
        // are re-solved before anything else moves (dropping every negative
        // edge at once, or one in all, was measured worse: docs/design/server-based.md).
        let rel = |j: usize| {
            let e = st.edges[j];
            x[j] / (st.value[e.user] * scale[st.comp[e.user]] * users[e.user].weight)
        };
        let mut neg: Vec<usize> = (0..st.edges.len()).filter(|&j| rel(j) < -TOL).collect();
        // The joins (a scan of every pair) only where something reads them.
        let restart_open = restart.is_some() && !restart_tried;
        let joins = (neg.is_empty() || splits < MAX_SPLITS || restart_open)
            .then(|| st.cross_joins(elig, &scale));
        let joins_empty = joins.as_ref().is_some_and(Vec::is_empty);
        let want_split = !neg.is_empty() && joins_empty && splits < MAX_SPLITS;
        #[cfg(test)]
        let want_split = want_split && !NO_SPLIT.with(|c| c.get());
        let want_restart = restart_open && (!neg.is_empty() || !joins_empty);
        if want_split || want_restart {
            let forest: Vec<(usize, usize)> = st.edges.iter().map(|e| (e.user, e.server)).collect();
            let level: Vec<f64> = (0..st.value.len())
                .map(|v| match st.comp[v] {
                    usize::MAX => 0.0,
                    c => st.value[v] * scale[c],
                })
                .collect();
            let lv = Levels {
                capped: &st.capped,
                bind: &st.bind,
                comp: &st.comp,
                level: &level,
                forest: &forest,
            };
            // Every level holds but the forest's split runs negative: the LP
            // on all the ties; failing that (or with a join left), the
            // nearest split at these levels for the restart.
            let found =
                split(instance, elig, xp, total, &lv, want_split, want_restart).unwrap_or_default();
            splits += usize::from(want_split);
            if found.exact.is_some() {
                return found.exact;
            }
            if let Some(slot) = restart.as_deref_mut().filter(|_| want_restart) {
                restart_tried = true;
                *slot = found.elastic;
            }
        }
        if !neg.is_empty() {
            neg.sort_unstable_by(|&a, &b| rel(a).total_cmp(&rel(b)));
            let mut seen = vec![false; st.num_trees()];
            neg.retain(|&j| !std::mem::replace(&mut seen[st.comp[st.edges[j].user]], true));
            neg.sort_unstable_by(|a, b| b.cmp(a));
            for j in neg {
                st.edges.swap_remove(j);
            }
            st.build_trees(total, users, k);
            continue;
        }
        let joins = joins.unwrap_or_else(|| st.cross_joins(elig, &scale));
        if !joins.is_empty() {
            for (n, i, g) in joins {
                st.add_edge(n, i, g, users);
            }
            st.build_trees(total, users, k);
            continue;
        }
        let over = overfull(instance, elig, &st, &x);
        if !over.is_empty() {
            for (i, r) in over {
                st.rebind(instance, i, r);
            }
            continue;
        }
        let out = st.allocation(elig, &x);
        let scale_of = |c: usize| scale[c];
        return inequalities_hold(instance, elig, &st, &scale_of, &out).then_some(out);
    }
    None
}

/// Per server, the most overfull resource other than the binding one
/// (server, resource), where one is over its capacity: it binds instead.
fn overfull(
    instance: &Instance,
    elig: &Eligibility,
    st: &Structure,
    x: &[f64],
) -> Vec<(usize, usize)> {
    let users = instance.users();
    let m = instance.num_resources();
    // Usage per server and resource: the capped users' fixed load and the
    // forest's x (as the allocation would hold it, negatives at zero).
    let mut used = st.fixed_use.clone();
    for (e, &v) in st.edges.iter().zip(x) {
        let d = &users[e.user].demand;
        for r in 0..m {
            used[e.server * m + r] += v.max(0.0) * d[r];
        }
    }
    let mut all = Vec::new();
    for (i, list) in elig.on_server.iter().enumerate() {
        if st.bind[i] == usize::MAX {
            continue;
        }
        let cap = instance.class_capacities(ServerId(i));
        let mut worst: Option<(f64, usize)> = None;
        for r in (0..m).filter(|&r| r != st.bind[i] && cap[r] > 0.0) {
            let over = used[i * m + r] / cap[r] - 1.0;
            // Every free user here must need the new binding resource.
            if over > TOL
                && !worst.is_some_and(|w| w.0 >= over)
                && list
                    .iter()
                    .all(|&(n, _)| st.capped[n] || users[n].demand[r] > 0.0)
            {
                worst = Some((over, r));
            }
        }
        if let Some((_, r)) = worst {
            all.push((i, r));
        }
    }
    all
}

/// The candidate's inequalities (see the module docs), at levels
/// value * scale of the node's tree.
fn inequalities_hold(
    instance: &Instance,
    elig: &Eligibility,
    st: &Structure,
    scale: &dyn Fn(usize) -> f64,
    out: &[Vec<f64>],
) -> bool {
    let users = instance.users();
    let (nu, m) = (st.nu, instance.num_resources());
    // A free user or a levelled server in no tree has no level: no answer.
    let in_tree = |v: usize| st.comp[v] != usize::MAX;
    let lonely_user = elig
        .on_server
        .iter()
        .flatten()
        .any(|&(n, _)| !st.capped[n] && !in_tree(n));
    let lonely_server = (0..st.bind.len()).any(|i| st.bind[i] != usize::MAX && !in_tree(nu + i));
    if lonely_user || lonely_server {
        return false;
    }
    let level = |v: usize| st.value[v] * scale(st.comp[v]);
    for n in (0..nu).filter(|&n| !st.capped[n] && in_tree(n)) {
        if let Some(t) = users[n].tasks {
            if level(n) * users[n].weight > t * (1.0 + TOL) {
                return false;
            }
        }
    }
    let mut used = vec![0.0; m];
    for (i, list) in elig.on_server.iter().enumerate() {
        used.iter_mut().for_each(|u| *u = 0.0);
        for &(n, g) in list {
            for r in 0..m {
                used[r] += out[n][i] * users[n].demand[r];
            }
            if st.bind[i] == usize::MAX {
                continue;
            }
            let t = level(nu + i);
            if st.capped[n] {
                let xn = users[n].tasks.unwrap_or(0.0) / users[n].weight;
                if out[n][i] > 0.0 && xn > g * t * (1.0 + TOL) {
                    return false;
                }
            } else if level(n) < g * t * (1.0 - TOL) {
                return false;
            }
        }
        for r in 0..m {
            if used[r] > instance.class_capacity(ServerId(i), ResourceId(r)) * (1.0 + TOL) {
                return false;
            }
        }
    }
    true
}
