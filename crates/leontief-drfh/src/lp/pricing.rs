//! Column generation for the max-min operator: which user-entry pairs
//! enter the LP, and the pricing pass that proves the others cannot.
//!
//! Every LP of the operator's sequence (the level LP and the growth LPs)
//! has the same rows; only bounds and costs change. A column x'_{n,i} (user
//! n on entry i, level units) has cost 0, coefficient 1 in n's link row and
//! `a_{n,i,r} = D_{n,r} coef_n / c_{i,r}` in the capacity row of (i, r).
//! With row duals `y` (the backend convention, `col_dual = c - A^T y`, a
//! maximisation), its reduced cost is
//!
//! ```text
//!   rc_{n,i} = u_n - sum_r a_{n,i,r} y_{i,r},    u_n = -y_link(n)
//! ```
//!
//! and the restricted LP's optimum is the full LP's optimum exactly when no
//! pair left out has `rc > 0` (beyond the pricing tolerance): the pass
//! below checks every runnable pair in O(N K m), in parallel over users,
//! without storing any per-pair array.
//!
//! Each pass adds, per user, its `per_user` most attractive pairs, and per
//! entry its most attractive pair, so the LP grows by at most N + K columns
//! per pass however many pairs price in (adding every attractive pair is
//! what made plain column generation keep 45% of all pairs: the issue's
//! measurement at 100 x 300).

use leontief_core::{Instance, ServerId, UserId};
use rayon::prelude::*;
use std::collections::HashMap;

/// Calls `f(i)` for every entry user `n` may run on: eligible (when
/// `placement`) and having every resource it demands. Walks the user's
/// eligible list where it has one, all entries otherwise.
pub fn for_each_runnable(
    instance: &Instance,
    n: UserId,
    placement: bool,
    mut f: impl FnMut(ServerId),
) {
    let u = instance.user(n);
    let fits = |i: ServerId| {
        u.demand
            .iter()
            .zip(instance.class_capacities(i))
            .all(|(&d, &c)| d == 0.0 || c > 0.0)
    };
    match (&u.servers, placement) {
        (Some(list), true) => {
            for &i in list {
                if fits(i) {
                    f(i)
                }
            }
        }
        _ => {
            for i in instance.server_ids() {
                if fits(i) {
                    f(i)
                }
            }
        }
    }
}

/// True when user `n` may run on entry `i`: eligible (when `placement`)
/// and the entry has every resource the user demands.
fn runs_on(instance: &Instance, n: usize, i: ServerId, placement: bool) -> bool {
    if placement {
        instance.can_run_on(UserId(n), i)
    } else {
        instance
            .user(UserId(n))
            .demand
            .iter()
            .zip(instance.class_capacities(i))
            .all(|(&d, &c)| d == 0.0 || c > 0.0)
    }
}

/// The pairs to start from: per user its `per_user` entries of least
/// `sum_r D_{n,r} / c_{i,r}` (the entries it fills least per task), and per
/// entry the user whose demand spreads most evenly over the entry's
/// resources (largest `sum_r x_r / max_r x_r`, `x_r = D_{n,r} / c_{i,r}`:
/// the user that wastes least of it), among the users `entry_pick(n, i)`
/// admits. Sorted, without repeats, per user.
pub fn seed(
    instance: &Instance,
    active: &[bool],
    placement: bool,
    per_user: usize,
    entry_pick: &(dyn Fn(usize, ServerId) -> bool + Sync),
) -> Vec<Vec<ServerId>> {
    let k = instance.num_entries();
    let cost = |n: UserId, i: ServerId| -> (f64, f64) {
        let (mut sum, mut max) = (0.0, 0.0f64);
        for (&d, &c) in instance
            .user(n)
            .demand
            .iter()
            .zip(instance.class_capacities(i))
        {
            if d > 0.0 {
                let x = d / c;
                sum += x;
                max = max.max(x);
            }
        }
        (sum, if max > 0.0 { sum / max } else { 0.0 })
    };
    // Per user: best entries; per entry: best user (by a parallel fold).
    let (mut pairs, best): SeedAcc = (0..instance.num_users())
        .into_par_iter()
        .fold(
            || (Vec::new(), vec![(f64::NEG_INFINITY, usize::MAX); k]),
            |(mut lists, mut best), n| {
                let mut top: Vec<(f64, ServerId)> = Vec::with_capacity(per_user + 1);
                if active[n] {
                    for_each_runnable(instance, UserId(n), placement, |i| {
                        let (sum, spread) = cost(UserId(n), i);
                        if spread > best[i.0].0 && entry_pick(n, i) {
                            best[i.0] = (spread, n);
                        }
                        push_top(&mut top, per_user, sum, i);
                    });
                }
                let mut l: Vec<ServerId> = top.into_iter().map(|(_, i)| i).collect();
                l.sort();
                lists.push((n, l));
                (lists, best)
            },
        )
        .reduce(
            || (Vec::new(), vec![(f64::NEG_INFINITY, usize::MAX); k]),
            |(mut la, mut ba), (lb, bb)| {
                la.extend(lb);
                for (a, b) in ba.iter_mut().zip(bb) {
                    if b.0 > a.0 {
                        *a = b;
                    }
                }
                (la, ba)
            },
        );
    pairs.sort_by_key(|(n, _)| *n);
    let mut lists: Vec<Vec<ServerId>> = pairs.into_iter().map(|(_, v)| v).collect();
    for (i, &(_, n)) in best.iter().enumerate() {
        if n != usize::MAX {
            let l = &mut lists[n];
            if let Err(at) = l.binary_search(&ServerId(i)) {
                l.insert(at, ServerId(i));
            }
        }
    }
    lists
}

/// Per-user lists and per-entry best user of [`seed`]'s fold.
type SeedAcc = (Vec<(usize, Vec<ServerId>)>, Vec<(f64, usize)>);

/// Keep the `cap` smallest keys in `top` (unsorted beyond that).
fn push_top(top: &mut Vec<(f64, ServerId)>, cap: usize, key: f64, i: ServerId) {
    if top.len() < cap {
        top.push((key, i));
    } else if let Some(worst) = top
        .iter_mut()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|w| key < w.0)
    {
        *worst = (key, i);
    }
}

/// One pricing pass's answer.
#[derive(Debug, Default)]
pub struct Priced {
    /// Pairs to add, per user (entries not yet in the LP).
    pub add: Vec<Vec<ServerId>>,
    /// The largest reduced cost over every runnable pair left out.
    pub worst: f64,
    /// Pairs priced.
    pub pairs: usize,
}

/// Price every runnable pair of every user in `users` (those with a level
/// column in the LP) with the duals `u` (per user) and `y` (per capacity
/// row, `row_of(i, r)`: `None` where the row does not exist, which cannot
/// happen for a demanded resource of a runnable pair). `present(n, i)`
/// says whether the pair is in the LP already. Returns the pairs whose
/// reduced cost exceeds `tolerance`, at most `per_user` per user (the most
/// attractive) plus the `per_entry` most attractive per entry among the
/// users `entry_pick(n, i)` admits. Every pair that pays is in reach of
/// its user's picks, so the pass is empty only when no pair pays.
#[allow(clippy::too_many_arguments)]
pub fn price(
    instance: &Instance,
    placement: bool,
    users: &[bool],
    coef: &[f64],
    u: &[f64],
    y_per_unit: &[f64],
    present: &(dyn Fn(usize, ServerId) -> bool + Sync),
    tolerance: f64,
    per_user: usize,
    per_entry: usize,
    entry_pick: &(dyn Fn(usize, ServerId) -> bool + Sync),
) -> Priced {
    let (k, m) = (instance.num_entries(), instance.num_resources());
    let e = per_entry.max(1);
    type Acc = (Vec<(usize, Vec<ServerId>)>, Vec<(f64, usize)>, f64, usize);
    let empty = || -> Acc {
        (
            Vec::new(),
            vec![(0.0, usize::MAX); k * e],
            f64::NEG_INFINITY,
            0,
        )
    };
    let (lists, best, worst, pairs) = (0..instance.num_users())
        .into_par_iter()
        .fold(empty, |(mut lists, mut best, mut worst, mut pairs), n| {
            if !users[n] {
                return (lists, best, worst, pairs);
            }
            let d = &instance.user(UserId(n)).demand;
            let mut top: Vec<(f64, ServerId)> = Vec::new();
            for_each_runnable(instance, UserId(n), placement, |i| {
                pairs += 1;
                let yi = &y_per_unit[i.0 * m..(i.0 + 1) * m];
                let mut c = 0.0;
                for r in 0..m {
                    c += d[r] * yi[r];
                }
                let rc = u[n] - coef[n] * c;
                if rc > tolerance && !present(n, i) {
                    worst = worst.max(rc);
                    if entry_pick(n, i) {
                        keep_best(&mut best[i.0 * e..(i.0 + 1) * e], (rc, n));
                    }
                    push_top(&mut top, per_user, -rc, i);
                }
            });
            if !top.is_empty() {
                lists.push((n, top.into_iter().map(|(_, i)| i).collect()));
            }
            (lists, best, worst, pairs)
        })
        .reduce(empty, |(mut la, mut ba, wa, pa), (lb, bb, wb, pb)| {
            la.extend(lb);
            for (a, b) in ba.chunks_exact_mut(e).zip(bb.chunks_exact(e)) {
                for &x in b.iter().filter(|x| x.1 != usize::MAX) {
                    keep_best(a, x);
                }
            }
            (la, ba, wa.max(wb), pa + pb)
        });
    let mut add = vec![Vec::new(); instance.num_users()];
    for (n, l) in lists {
        add[n] = l;
    }
    for (j, &(_, n)) in best.iter().enumerate() {
        let i = ServerId(j / e);
        if n != usize::MAX && !add[n].contains(&i) {
            add[n].push(i);
        }
    }
    Priced {
        add,
        worst: worst.max(0.0),
        pairs,
    }
}

/// Put `x` (reduced cost, user) among `best`, an entry's most attractive
/// users so far (empty slots hold user `usize::MAX`), if it beats the
/// least of them: a larger reduced cost, or the same one and a smaller
/// user, so that the picks do not depend on how the users were split
/// between threads.
fn keep_best(best: &mut [(f64, usize)], x: (f64, usize)) {
    let beats = |a: (f64, usize), b: (f64, usize)| {
        b.1 == usize::MAX || a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    };
    let Some(worst) = best
        .iter_mut()
        .reduce(|w, b| if beats(*w, *b) { b } else { w })
    else {
        return;
    };
    if beats(x, *worst) {
        *worst = x;
    }
}

/// Each user's cheapest level unit under prices `y_per_unit` (per unit of
/// each resource on each entry, entry-major): `coef_n min_i d_n . y_i`
/// over every entry user n may run on (0 for users not in `users`). One
/// pass over every runnable pair, in parallel over users.
pub fn cheapest(
    instance: &Instance,
    placement: bool,
    users: &[bool],
    coef: &[f64],
    y_per_unit: &[f64],
) -> Vec<f64> {
    let m = instance.num_resources();
    (0..instance.num_users())
        .into_par_iter()
        .map(|n| {
            if !users[n] {
                return 0.0;
            }
            let d = &instance.user(UserId(n)).demand;
            let mut best = f64::INFINITY;
            for_each_runnable(instance, UserId(n), placement, |i| {
                let yi = &y_per_unit[i.0 * m..(i.0 + 1) * m];
                let c: f64 = d.iter().zip(yi).map(|(d, y)| d * y).sum();
                best = best.min(c);
            });
            if best.is_finite() {
                coef[n] * best
            } else {
                0.0
            }
        })
        .collect()
}

/// The angle of `v`, per unit of `total`, from the first resource to the
/// others.
pub(crate) fn angle(v: &[f64], total: &[f64]) -> f64 {
    let w: Vec<f64> = v
        .iter()
        .zip(total)
        .map(|(&x, &c)| if c > 0.0 { x / c } else { 0.0 })
        .collect();
    let rest = w[1..].iter().map(|x| x * x).sum::<f64>().sqrt();
    rest.atan2(w[0])
}

/// Candidate pairs that bracket each entry: users sorted by the direction
/// of their demand (the angle from the first resource to the others, per
/// unit of total capacity), each entry paired with the `near` users
/// either side of its capacity's direction and `spread` users drawn
/// evenly from each side (an entry filled on every resource mixes users
/// from both sides of its direction, and users more extreme than any
/// entry must reach across: the flat optimum at 100 x 1,000 fills the
/// most CPU-rich server with the 3rd and the 78th of 100 users).
/// Users (or entries) along exactly the same direction (every user
/// without a GPU against every server without one) are spread over the
/// entries (users) by index instead of all meeting the first of them.
/// Deterministic. Sorted, without repeats, per user.
pub fn bracketing(
    instance: &Instance,
    active: &[bool],
    placement: bool,
    near: usize,
    spread: usize,
) -> Vec<Vec<ServerId>> {
    let nu = instance.num_users();
    let total = instance.total_capacity();
    let angle = |v: &[f64]| angle(v, total);
    let mut users: Vec<(f64, usize)> = (0..nu)
        .filter(|&n| active[n])
        .map(|n| (angle(&instance.users()[n].demand), n))
        .collect();
    users.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![Vec::new(); nu];
    if users.is_empty() || instance.num_resources() == 0 {
        return out;
    }
    let len = users.len();
    for i in instance.server_ids() {
        let a = angle(instance.class_capacities(i));
        let at = users.partition_point(|u| u.0 < a);
        let tied = users.partition_point(|u| u.0 <= a) - at;
        let mut pick = |j: usize| {
            let n = users[j].1;
            if runs_on(instance, n, i, placement) {
                out[n].push(i);
            }
        };
        if tied > 1 {
            // Many users along the entry's own direction (every user
            // without a GPU, on every entry without one): different
            // entries take different ones of them.
            for t in 0..2 * near {
                pick(at + (i.0 * 7919 + t) % tied);
            }
            for j in at.saturating_sub(near)..at {
                pick(j);
            }
            for j in at + tied..(at + tied + near).min(len) {
                pick(j);
            }
        } else {
            for j in at.saturating_sub(near)..(at + near).min(len) {
                pick(j);
            }
        }
        // Evenly spread over each side, offset by the entry's index so
        // entries reach different users.
        for s in 0..spread {
            if at > 0 {
                let j = (s * at / spread + i.0 * 7919) % at;
                pick(j);
            }
            if at < len {
                let j = at + (s * (len - at) / spread + i.0 * 7919) % (len - at);
                pick(j);
            }
        }
    }
    // And symmetrically per user (more users than entries: 1,000 x 100
    // took 14 pricing passes with per-entry candidates alone): the
    // entries nearest its direction either side, and spread over each.
    let mut by_angle: Vec<(f64, ServerId)> = instance
        .server_ids()
        .map(|i| (angle(instance.class_capacities(i)), i))
        .collect();
    by_angle.sort_by(|a, b| a.0.total_cmp(&b.0));
    let k = by_angle.len();
    for &(a, n) in &users {
        let at = by_angle.partition_point(|e| e.0 < a);
        let tied = by_angle.partition_point(|e| e.0 <= a) - at;
        let w = near.max(1);
        let mut picks: Vec<usize> = if tied > 1 {
            // Many entries along the user's direction: different users
            // take different ones of them.
            (0..2 * w)
                .map(|t| at + (n * 7919 + t) % tied)
                .chain(at.saturating_sub(w)..at)
                .chain(at + tied..(at + tied + w).min(k))
                .collect()
        } else {
            (at.saturating_sub(w)..(at + w).min(k)).collect()
        };
        for s in 0..spread {
            if at > 0 {
                picks.push((s * at / spread + n * 7919) % at);
            }
            if at < k {
                picks.push(at + (s * (k - at) / spread + n * 7919) % (k - at));
            }
        }
        for j in picks {
            let i = by_angle[j].1;
            if runs_on(instance, n, i, placement) {
                out[n].push(i);
            }
        }
    }
    for l in &mut out {
        l.sort();
        l.dedup();
    }
    out
}

/// Candidate pairs around each entry's direction in every sector:
/// demands and capacities per unit of total capacity,
/// scaled to sum 1; a user lies in the sector of the signs of (its
/// direction - the entry's), 2^m - 2 sectors around the entry; per sector
/// the `near` closest users (L1) and `spread` users by a fixed hash of
/// (user, entry). An entry full on every resource mixes users whose
/// directions surround its own, often far apart: the flat optimum at
/// 100 x 1,000 fills the most CPU-rich server with the 3rd and the 78th
/// of 100 users in angle order, so users drawn across each sector serve
/// better than the nearest ones (measured in [`crate::paths::pooled`]). Sorted,
/// without repeats, per user.
pub fn sectors(
    instance: &Instance,
    active: &[bool],
    placement: bool,
    near: usize,
    spread: usize,
) -> Vec<Vec<ServerId>> {
    let (m, nu) = (instance.num_resources(), instance.num_users());
    let total = instance.total_capacity();
    let simplex = |v: &[f64]| -> Vec<f64> {
        let w: Vec<f64> = v
            .iter()
            .zip(total)
            .map(|(&x, &c)| if c > 0.0 { x / c } else { 0.0 })
            .collect();
        let s: f64 = w.iter().sum();
        w.into_iter()
            .map(|x| if s > 0.0 { x / s } else { 0.0 })
            .collect()
    };
    let users: Vec<Vec<f64>> = instance
        .users()
        .iter()
        .map(|u| simplex(&u.demand))
        .collect();
    let on_entry = UsersOn::new(instance, active, placement);
    let picked: Vec<Vec<usize>> = (0..instance.num_entries())
        .into_par_iter()
        .map(|i| {
            let i = ServerId(i);
            let cap = instance.class_capacities(i);
            let q = simplex(cap);
            let mut close: HashMap<usize, Vec<(f64, usize)>> = HashMap::new();
            let mut hashed: HashMap<usize, Vec<(u64, usize)>> = HashMap::new();
            for n in on_entry.users(instance, i) {
                let (mut mask, mut dist) = (0usize, 0.0);
                for r in 0..m {
                    let v = users[n][r] - q[r];
                    if v > 0.0 {
                        mask |= 1 << r.min(63);
                    }
                    dist += v.abs();
                }
                let c = close.entry(mask).or_default();
                push_small(c, near, dist, n);
                let h = (n as u64 ^ (i.0 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_mul(0xBF58_476D_1CE4_E5B9);
                let e = hashed.entry(mask).or_default();
                push_small(e, spread, h, n);
            }
            let mut out: Vec<usize> = close
                .into_values()
                .flatten()
                .map(|(_, n)| n)
                .chain(hashed.into_values().flatten().map(|(_, n)| n))
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect();
    let mut lists = vec![Vec::new(); nu];
    for (i, users) in picked.into_iter().enumerate() {
        for n in users {
            lists[n].push(ServerId(i));
        }
    }
    // And symmetrically per user, as `bracketing` does: per sector around
    // the user's direction, the `near` closest entries and `spread` by a
    // fixed hash of (entry, user). A few more columns (N (2^m - 2)), and
    // the pricing passes went: 3 resources at 10^7 pairs in 34-35 s
    // without a pass, against 50 s (1 pass) and 148 s (2 passes).
    let entries: Vec<Vec<f64>> = instance
        .server_ids()
        .map(|i| simplex(instance.class_capacities(i)))
        .collect();
    let own: Vec<Vec<ServerId>> = (0..nu)
        .into_par_iter()
        .map(|n| {
            if !active[n] {
                return Vec::new();
            }
            let mut close: HashMap<usize, Vec<(f64, usize)>> = HashMap::new();
            let mut hashed: HashMap<usize, Vec<(u64, usize)>> = HashMap::new();
            // A user that runs on few of the entries (it needs a resource
            // most lack) draws more of them.
            let mut runnable: Vec<usize> = Vec::new();
            for_each_runnable(instance, UserId(n), placement, |i| runnable.push(i.0));
            let spread = spread
                * entries
                    .len()
                    .checked_div(runnable.len())
                    .map_or(1, |f| f.clamp(1, SCARCE_MAX));
            for &i in &runnable {
                let q = &entries[i];
                let (mut mask, mut dist) = (0usize, 0.0);
                for r in 0..m {
                    let v = q[r] - users[n][r];
                    if v > 0.0 {
                        mask |= 1 << r.min(63);
                    }
                    dist += v.abs();
                }
                push_small(close.entry(mask).or_default(), near, dist, i);
                let h = (i as u64 ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .wrapping_mul(0xBF58_476D_1CE4_E5B9);
                push_small(hashed.entry(mask).or_default(), spread, h, i);
            }
            close
                .into_values()
                .flatten()
                .map(|(_, i)| ServerId(i))
                .chain(hashed.into_values().flatten().map(|(_, i)| ServerId(i)))
                .collect()
        })
        .collect();
    for (l, extra) in lists.iter_mut().zip(own) {
        l.extend(extra);
        l.sort();
        l.dedup();
    }
    lists
}

/// Room for users that run on part of the entries only (a resource most
/// entries lack, placement lists): each such user's list grows to at
/// least `room` times the number of its entries its `tasks` would fill
/// (the largest of its demands over the mean capacity of those entries),
/// drawn evenly over them from an offset of its own. Such a user's
/// candidates from directions alone hold a few of its entries, and its
/// total can need hundreds: each pricing pass adds a few.
pub fn with_room(
    instance: &Instance,
    active: &[bool],
    placement: bool,
    tasks: &[f64],
    room: f64,
    lists: &mut [Vec<ServerId>],
) {
    let (k, m) = (instance.num_entries(), instance.num_resources());
    let extra: Vec<Vec<ServerId>> = (0..instance.num_users())
        .into_par_iter()
        .map(|n| {
            if !active[n] || tasks[n].is_nan() || tasks[n] <= 0.0 {
                return Vec::new();
            }
            let mut runnable = Vec::new();
            let mut cap = vec![0.0; m];
            for_each_runnable(instance, UserId(n), placement, |i| {
                runnable.push(i);
                for (c, &x) in cap.iter_mut().zip(instance.class_capacities(i)) {
                    *c += x;
                }
            });
            if runnable.is_empty() || runnable.len() >= k {
                return Vec::new();
            }
            let d = &instance.user(UserId(n)).demand;
            let fills = (0..m)
                .filter(|&r| d[r] > 0.0 && cap[r] > 0.0)
                .map(|r| tasks[n] * d[r] * runnable.len() as f64 / cap[r])
                .fold(0.0, f64::max);
            let want = ((room * fills).ceil() as usize).min(runnable.len());
            if want <= lists[n].len() {
                return Vec::new();
            }
            let step = runnable.len() as f64 / want as f64;
            let offset = (n.wrapping_mul(7919)) % runnable.len();
            (0..want)
                .map(|j| runnable[(offset + (j as f64 * step) as usize) % runnable.len()])
                .collect()
        })
        .collect();
    for (l, e) in lists.iter_mut().zip(extra) {
        if !e.is_empty() {
            l.extend(e);
            l.sort();
            l.dedup();
        }
    }
}

/// The active users that run on each entry, in increasing order: from
/// the users' eligible lists where placement gives them (one pass over
/// the runnable pairs, not a search per user and entry), else found per
/// entry.
struct UsersOn<'a> {
    active: &'a [bool],
    placement: bool,
    /// Per entry, where its users start in `users` (one past the last at
    /// the end); empty when the users are found per entry.
    start: Vec<usize>,
    users: Vec<u32>,
}

impl<'a> UsersOn<'a> {
    fn new(instance: &Instance, active: &'a [bool], placement: bool) -> UsersOn<'a> {
        let listed = placement
            && instance.num_users() <= u32::MAX as usize
            && instance.users().iter().any(|u| u.servers.is_some());
        let (mut start, mut users) = (Vec::new(), Vec::new());
        if listed {
            let k = instance.num_entries();
            start = vec![0usize; k + 1];
            let each = |f: &mut dyn FnMut(usize, ServerId)| {
                for n in (0..instance.num_users()).filter(|&n| active[n]) {
                    for_each_runnable(instance, UserId(n), placement, |i| f(n, i));
                }
            };
            each(&mut |_, i| start[i.0 + 1] += 1);
            for i in 0..k {
                start[i + 1] += start[i];
            }
            let mut next = start.clone();
            users = vec![0u32; start[k]];
            each(&mut |n, i| {
                users[next[i.0]] = n as u32;
                next[i.0] += 1;
            });
        }
        UsersOn {
            active,
            placement,
            start,
            users,
        }
    }

    /// The active users that run on entry `i`, in increasing order.
    fn users<'b>(
        &'b self,
        instance: &'b Instance,
        i: ServerId,
    ) -> Box<dyn Iterator<Item = usize> + 'b> {
        if self.start.is_empty() {
            Box::new(
                (0..instance.num_users())
                    .filter(move |&n| self.active[n] && runs_on(instance, n, i, self.placement)),
            )
        } else {
            Box::new(
                self.users[self.start[i.0]..self.start[i.0 + 1]]
                    .iter()
                    .map(|&n| n as usize),
            )
        }
    }
}

/// At most this many times `spread` entries per sector for a user that
/// runs on few entries ([`sectors`]).
const SCARCE_MAX: usize = 8;

/// Keep the `cap` smallest keys in `v`.
fn push_small<K: PartialOrd + Copy>(v: &mut Vec<(K, usize)>, cap: usize, key: K, n: usize) {
    if cap == 0 {
        return;
    }
    if v.len() < cap {
        v.push((key, n));
    } else if let Some(w) = v
        .iter_mut()
        .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal))
        .filter(|w| key < w.0)
    {
        *w = (key, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leontief_core::generate;

    /// Placement lists on a third of the servers, some users inactive, and
    /// a GPU-like resource most servers lack.
    fn listed(seed: u64) -> Instance {
        let family = generate::Family::new(30, 60, 4, seed)
            .from_spec("gpu=0.2,placement=attribute:3")
            .expect("a valid spec");
        generate::family(&family)
    }

    #[test]
    fn the_users_on_an_entry_are_those_that_run_there() {
        for seed in 1..=4 {
            let inst = listed(seed);
            let active: Vec<bool> = (0..inst.num_users()).map(|n| n % 4 != 1).collect();
            for placement in [true, false] {
                let on = UsersOn::new(&inst, &active, placement);
                assert_eq!(on.start.is_empty(), !placement);
                for i in inst.server_ids() {
                    let want: Vec<usize> = (0..inst.num_users())
                        .filter(|&n| active[n] && runs_on(&inst, n, i, placement))
                        .collect();
                    let got: Vec<usize> = on.users(&inst, i).collect();
                    assert_eq!(
                        got, want,
                        "seed {seed}, placement {placement}, entry {}",
                        i.0
                    );
                }
            }
        }
    }

    #[test]
    fn each_entry_is_offered_its_most_attractive_users() {
        for (seed, per_entry) in [(1, 1), (2, 3), (3, 4), (4, 8)] {
            let inst = listed(seed);
            let (nu, k, m) = (inst.num_users(), inst.num_entries(), inst.num_resources());
            // Prices that leave many pairs attractive.
            let u: Vec<f64> = (0..nu).map(|n| 1.0 + (n % 3) as f64).collect();
            let y: Vec<f64> = (0..k * m).map(|j| ((j * 7) % 5) as f64 * 0.5).collect();
            let coef = vec![1.0; nu];
            let users = vec![true; nu];
            let present = |n: usize, i: ServerId| (n + i.0).is_multiple_of(5);
            let pick = |n: usize, _: ServerId| n % 7 != 3;
            let priced = price(
                &inst, true, &users, &coef, &u, &y, &present, 1e-9, 0, per_entry, &pick,
            );
            for i in inst.server_ids() {
                let d = |n: usize| -> f64 {
                    let dn = &inst.user(UserId(n)).demand;
                    (0..m).map(|r| dn[r] * y[i.0 * m + r]).sum()
                };
                let mut want: Vec<(f64, usize)> = (0..nu)
                    .filter(|&n| inst.can_run_on(UserId(n), i) && !present(n, i) && pick(n, i))
                    .map(|n| (u[n] - coef[n] * d(n), n))
                    .filter(|&(rc, _)| rc > 1e-9)
                    .collect();
                want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                want.truncate(per_entry);
                let mut got: Vec<usize> = (0..nu).filter(|&n| priced.add[n].contains(&i)).collect();
                let mut want: Vec<usize> = want.into_iter().map(|(_, n)| n).collect();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(
                    got, want,
                    "seed {seed}, {per_entry} per entry, entry {}",
                    i.0
                );
            }
        }
    }
}
