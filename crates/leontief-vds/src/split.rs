//! The split LP of the PS-DSF finish: with the levels fixed, a nonnegative
//! split of every user's tasks over the servers that tie it, from one
//! warm-started LP on HiGHS.
//!
//! With two resources the forest alone rarely finishes (`forest.rs`): a
//! user's gamma on a server is c_{i,r} / D_{n,r} for the resource r it
//! needs most there, so wherever two users need the same resource most on
//! two servers their gammas have the same ratio, and at the equilibrium
//! whole groups of users are indifferent between whole groups of servers.
//! At 1,000 x 1,000 with 50 eligible servers each (seed 2) the converged
//! sweeps tie 9,899 pairs among 2,000 nodes in 4 trees: about 7,900
//! consistent cycles, along which the split is free. The forest's own split
//! (one spanning tree of them) then runs negative on some 300 edges even
//! when every level is right, and the drops and joins that correct it
//! cycle until the budget ends (docs/design/server-based.md).
//!
//! So when the forest's levels hold everywhere (no pivot, no join left) but
//! its split runs negative, the finish asks this LP for the split instead:
//!
//! ```text
//!   f_{n,i} >= 0 on every pair the levels tie (within the finish's
//!   tolerance) and on the pairs a capped user holds where its level is
//!   not above the server's;
//!   sum_i f_{n,i} = 1 per user              (x_{n,i} = f_{n,i} u_n, u_n = w_n X_n, or the cap),
//!   sum_n f_{n,i} u_n D_{n,r} / c_{i,r} = 1 on each server's binding resource, <= 1 on the others.
//! ```
//!
//! Any feasible point is a PS-DSF allocation with these levels; the caller
//! still runs the independent Definition-4 certificate on it. The LP starts
//! from the forest's basis (its edges, each capped user's largest pair,
//! one user row per tree: the trees' equations are dependent once the
//! levels are fixed), so HiGHS's dual simplex only pivots the negative
//! edges out: 400-550 iterations, 0.02-0.05 s, where a cold start took
//! 0.4-0.9 s (0.4 of them presolve's search for the dependent rows). Pairs
//! outside the forest cost 1, which keeps the start dual feasible.
//!
//! The elastic form lets each capacity row miss (at a cost of 100 per
//! unit) and gives, when the levels are not yet right, the nearest split
//! at those levels: the point the sweeps restart from (`psdsf.rs`). Its
//! columns are added to the exact LP once that ends infeasible, and the
//! dual simplex goes on from where it stopped (0.05-0.14 s when solved
//! apart, from the forest's basis).

use crate::Eligibility;
use leontief_core::{Instance, ResourceId, ServerId};
use leontief_highs::{Algorithm, Highs, HighsSettings};
use leontief_model::{LoadedLp, LpBackend, NewCol, ProblemBuilder, Sense, Status};

/// Relative tolerance on the levels (the forest finish's own).
const TOL: f64 = 1e-10;

/// Cost per unit an elastic capacity row misses by.
const MISS: f64 = 100.0;

/// What the forest finish hands the LP.
pub(crate) struct Levels<'a> {
    /// Users at their task cap (their split is free, their total fixed).
    pub capped: &'a [bool],
    /// Each server's binding resource (`usize::MAX`: no free user there).
    pub bind: &'a [usize],
    /// The tree of each node (users, then servers; `usize::MAX`: none).
    pub comp: &'a [usize],
    /// X_n per user and T_i per server, absolute.
    pub level: &'a [f64],
    /// The forest's edges (user, server): the starting basis.
    pub forest: &'a [(usize, usize)],
}

/// What [`split`] found.
#[derive(Default)]
pub(crate) struct Splits {
    /// A nonnegative split with every row held (dense tasks): a PS-DSF
    /// allocation candidate.
    pub exact: Option<Vec<Vec<f64>>>,
    /// The nearest split when the rows may miss (asked for, and the exact
    /// one is not there), per eligible pair in the order of
    /// `Eligibility::on_server` (the sweeps' layout: no dense copy).
    pub elastic: Option<Vec<f64>>,
}

/// The split LP of the module docs: the exact split when `exact` is asked
/// and the levels hold (none when it is infeasible, HiGHS could not run or
/// its iterations ran out), then, with `elastic` and no exact split, the
/// nearest one. `None` where nothing could be set up.
pub(crate) fn split(
    instance: &Instance,
    elig: &Eligibility,
    xp: &[f64],
    total: &[f64],
    lv: &Levels,
    exact: bool,
    elastic: bool,
) -> Option<Splits> {
    let users = instance.users();
    let (nu, k, m) = (
        users.len(),
        instance.num_entries(),
        instance.num_resources(),
    );
    let mut exact = exact;
    let pstart = elig.pair_starts();
    let (comp, level) = (lv.comp, lv.level);
    let in_tree = |v: usize| comp[v] != usize::MAX;
    // Every free user and every levelled server has a level.
    let mut eligible = vec![false; nu];
    elig.on_server
        .iter()
        .flatten()
        .for_each(|e| eligible[e.0] = true);
    if (0..nu).any(|n| !lv.capped[n] && eligible[n] && !in_tree(n))
        || (0..k).any(|i| lv.bind[i] != usize::MAX && !in_tree(nu + i))
    {
        return None;
    }
    {
        let over_cap = (0..nu).any(|n| {
            !lv.capped[n]
                && in_tree(n)
                && users[n]
                    .tasks
                    .is_some_and(|t| users[n].weight * level[n] > t * (1.0 + TOL))
        });
        // A free user over its cap: no exact split at these levels.
        exact &= !over_cap;
    }
    let unit: Vec<f64> = (0..nu)
        .map(|n| {
            if lv.capped[n] {
                users[n].tasks.unwrap_or(0.0)
            } else {
                users[n].weight * level[n]
            }
        })
        .collect();
    // The pairs: ties of free users (forest edges first in the basis),
    // capped users where they may hold.
    let forest: std::collections::HashSet<(usize, usize)> = lv.forest.iter().copied().collect();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    // Each pair's place in the sweeps' layout.
    let mut place: Vec<usize> = Vec::new();
    let mut best: Vec<Option<(f64, usize)>> = vec![None; nu];
    for (i, list) in elig.on_server.iter().enumerate() {
        let levelled = lv.bind[i] != usize::MAX;
        for (q, &(n, g)) in list.iter().enumerate() {
            if lv.capped[n] {
                let v = xp[pstart[i] + q];
                let xn = users[n].tasks.unwrap_or(0.0) / users[n].weight;
                if v <= 1e-12 * total[n]
                    || (levelled && xn > g * level[nu + i] * (1.0 + TOL))
                    || unit[n] <= 0.0
                {
                    continue;
                }
                if !best[n].is_some_and(|b| b.0 >= v) {
                    best[n] = Some((v, pairs.len()));
                }
                pairs.push((n, i));
                place.push(pstart[i] + q);
                continue;
            }
            if !levelled || !in_tree(n) {
                continue;
            }
            let ratio = g * level[nu + i] / level[n];
            if ratio > 1.0 + TOL {
                // A level that does not hold: no exact split.
                exact = false;
            }
            if ratio >= 1.0 - TOL || forest.contains(&(n, i)) {
                pairs.push((n, i));
                place.push(pstart[i] + q);
            }
        }
    }
    if (0..nu).any(|n| lv.capped[n] && unit[n] > 0.0 && best[n].is_none()) {
        return None;
    }
    if !exact && !elastic {
        return Some(Splits::default());
    }
    // Rows: users with pairs, then every capacity (scaled by it).
    let inf = f64::INFINITY;
    let mut b = ProblemBuilder::new(Sense::Minimise);
    let mut user_row = vec![None; nu];
    for &(n, _) in &pairs {
        if user_row[n].is_none() {
            user_row[n] = Some(b.add_row(1.0, 1.0));
        }
    }
    let cap_of = |i: usize, r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
    let cap_row: Vec<_> = (0..k * m)
        .map(|j| {
            let (i, r) = (j / m, j % m);
            let hi = if cap_of(i, r) > 0.0 { 1.0 } else { 0.0 };
            let lo = if lv.bind[i] == r { hi } else { -inf };
            b.add_row(lo, hi)
        })
        .collect();
    let mut col_basic = Vec::with_capacity(pairs.len());
    for (c, &(n, i)) in pairs.iter().enumerate() {
        let d = &users[n].demand;
        let mut e: Vec<_> = (0..m)
            .filter(|&r| d[r] > 0.0)
            .map(|r| {
                let cap = cap_of(i, r);
                let v = if cap > 0.0 {
                    d[r] * unit[n] / cap
                } else {
                    d[r]
                };
                (cap_row[i * m + r], v)
            })
            .collect();
        e.push((user_row[n]?, 1.0));
        let basic = forest.contains(&(n, i)) || best[n].is_some_and(|b| b.1 == c);
        b.add_col(if basic { 0.0 } else { 1.0 }, 0.0, inf, e);
        col_basic.push(basic);
    }
    // Basic rows: the inequalities, the empty rows and one user per tree.
    let problem = b.build();
    let mut filled = vec![false; problem.num_rows()];
    for &r in &problem.a_index {
        filled[r] = true;
    }
    let mut row_basic: Vec<bool> = (0..problem.num_rows())
        .map(|r| problem.row_lower[r] != problem.row_upper[r] || !filled[r])
        .collect();
    let mut root_taken = vec![false; nu + k];
    for n in (0..nu).filter(|&n| !lv.capped[n] && in_tree(n)) {
        if let Some(row) = user_row[n] {
            if !std::mem::replace(&mut root_taken[comp[n]], true) {
                row_basic[row.0] = true;
            }
        }
    }
    // An iteration limit, not a time limit, so that every machine ends
    // (and restarts) the same way: a few times the rows (the warm solves
    // take 15-900 iterations at 3,000 rows).
    let settings = HighsSettings {
        algorithm: Algorithm::Simplex,
        presolve: false,
        iteration_limit: Some(u32::try_from(4 * problem.num_rows() + 1000).unwrap_or(u32::MAX)),
        ..HighsSettings::default()
    };
    let highs = Highs::new(settings).ok()?;
    let mut lp = highs.load(problem).ok()?;
    lp.set_basic(&col_basic, &row_basic).ok()?;
    let dense = |x: &[f64]| {
        let mut out = vec![vec![0.0; k]; nu];
        for (c, &(n, i)) in pairs.iter().enumerate() {
            out[n][i] = x[c].max(0.0) * unit[n];
        }
        out
    };
    let mut found = Splits::default();
    if exact {
        let sol = lp.solve().ok()?;
        if sol.status == Status::Optimal {
            found.exact = Some(dense(&sol.x));
            return Some(found);
        }
    }
    if elastic {
        // Each capacity row may miss, at a cost; the simplex goes on from
        // its basis.
        let mut miss = Vec::new();
        for i in 0..k {
            for r in 0..m {
                let signs: &[f64] = if lv.bind[i] == r {
                    &[1.0, -1.0]
                } else {
                    &[-1.0]
                };
                for &sign in signs {
                    miss.push(NewCol {
                        cost: MISS,
                        lower: 0.0,
                        upper: inf,
                        entries: vec![(cap_row[i * m + r], sign)],
                    });
                }
            }
        }
        lp.add_cols(&miss).ok()?;
        let sol = lp.solve().ok()?;
        if sol.status == Status::Optimal {
            let mut flat = vec![0.0; xp.len()];
            for (c, &(n, _)) in pairs.iter().enumerate() {
                flat[place[c]] = sol.x[c].max(0.0) * unit[n];
            }
            found.elastic = Some(flat);
        }
    }
    Some(found)
}
