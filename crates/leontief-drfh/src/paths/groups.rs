//! The pooled levels realised group by group, on many entries.
//!
//! The pooled-first path ([`crate::paths::pooled`]) asks one LP for a per-server
//! allocation that gives every user its pooled level. With 10,000 users
//! on 10,000 entries that LP's feasible set has no interior (the pooled
//! levels saturate a resource on every entry), and interior point
//! methods spend most of their time in its last iterations.
//!
//! The same question splits in two levels:
//!
//! 1. The entries are dealt into groups of about [`GROUP_ENTRIES`], in
//!    turn along their direction (each group a sample of every
//!    direction), each group of one kind of entry (the same resources
//!    present: a GPU on some servers makes two kinds), and each group is
//!    merged into [`SUB_POOLS`] servers ([`SUB_POOLS_DENSE`] past
//!    [`DENSE_BLOCK_USERS`] users, and [`SUB_POOLS`] again where those
//!    fall short), its entries sorted by direction
//!    and cut into runs (one server per group would know only the group's
//!    total: with caps on half the users, 9 of 14 groups could not
//!    realise what such a step gave them). On those few servers the same LP
//!    (`crate::paths::pooled::at_levels`, on Clarabel; past
//!    [`DENSE_BLOCK_USERS`] with Clarabel's choice of LDL, a supernodal
//!    one where the factor holds a dense block) finds each user's tasks
//!    per group (summed over its servers) with every user at its pooled
//!    level. Each user may use (every server of) two
//!    of the groups that hold every resource it demands: its own (the
//!    users, sorted by direction, dealt in turn; where the groups hold
//!    different resources, the group with the most room left in what the
//!    user demands, see [`deal_users`]) and one more drawn by a
//!    fixed hash, so every group receives a sample of
//!    every direction and the users link the groups into one well
//!    connected graph along which capacity moves. A user whose use at its
//!    level would take more than [`HEAVY_SHARE`] of a group's capacity in
//!    a resource (k-DF's levels give users whose tasks are small in their
//!    two largest shares up to 70% of a group) may use as many groups as
//!    bring it under, so that no group's step 2 hinges on packing a few
//!    such users (where there are at least `HEAVY_GROUPS` groups). When
//!    two groups leave
//!    pricing to add servers of others (the interior point then spreads
//!    a group's spare room over every user priced there, crowding its
//!    step 2), the step runs again with `MORE_GROUPS` more groups for
//!    each user that pricing placed outside its own, and the answer whose
//!    most crowded group has fewer users is kept. With more than
//!    [`FEW_SHORT_RESOURCES`] resources and more entries than twice the
//!    users, two more rules: the users nearest
//!    each resource alone ([`pure_users`]) may use every group (an entry
//!    rich in the resource the levels fill and poor in several others can
//!    be filled only by such users, and a group dealt none of them cannot
//!    fill it, whatever its shares), and step 1 runs first on groups that
//!    keep [`SLACK_KEPT`] of each resource's room at the pooled levels, so
//!    that no group is given users that fill three or four resources at
//!    once.
//! 2. Each group then realises its users' tasks on its own entries: one
//!    LP per group, with about 2 N / G users on [`GROUP_ENTRIES`] entries
//!    (the block interior point method or Clarabel), in parallel.
//!
//!
//! Merging entries only enlarges the feasible set, so step 1 is a
//! relaxation; when every group realises its share in step 2, the union
//! is a per-server allocation with every user at its pooled level, which
//! *is* the max-min answer, certified by the pooled prices like the
//! one-LP path's (the certificate check then reads every pair). Without
//! placement lists the path checks that the prices prove it, each
//! round's room as the audit computes it ([`proved`]), and gives up where
//! they do not. When a
//! group falls short (a group's users cannot fill its entries exactly)
//! the one-LP path runs as before: the split costs time, never
//! exactness. A group that falls short is first solved again together
//! with the next cluster of groups, up to `MAX_MERGED` groups, never all
//! of them nor `MERGED_USERS_MOST` of the users (that LP is about the
//! one-LP path's), and with placement lists and more than 4 resources
//! not when most groups fall short.

use crate::lp::build::build;
use crate::lp::finish::finish;
use crate::lp::idle::fill_idle;
use crate::lp::part::{part_of, raw_servers, raw_user};
use crate::lp::pricing::angle;
use crate::lp::proof::proved;
use crate::outcome::{MaxMinOutcome, Path};
use crate::paths::pooled::{at_levels, candidates, Bound, Pooled, Spent};
use crate::settings::{
    Columns, DENSE_BLOCK_USERS, GROUP_ENTRIES, SUB_POOLS, SUB_POOLS_DENSE, USERS_PER_GROUP,
};
use leontief_core::{Instance, RawServer, ServerId, Tasks};
use leontief_model::{BackendError, LpBackend, Status};
use rayon::prelude::*;
use std::time::Instant;

/// Groups a user may use in step 1 beyond its own when two left pricing
/// to place it in others.
const MORE_GROUPS: usize = 2;

/// The most of a group's capacity in a resource that one user's use at
/// its level takes in step 1's lists: a user past it may use as many
/// groups as bring it under ([`deal_users`]).
const HEAVY_SHARE: f64 = 0.02;

/// The fewest groups at which [`HEAVY_SHARE`] applies. With fewer, larger
/// groups (the sizes where [`auto`] makes a group of more than
/// [`GROUP_ENTRIES`] entries to give it enough users) a heavy user spread
/// over several groups is in a large part of them: k-DF, 6 resources,
/// 2,000 x 5,000 (27 groups), 345 of 2,000 users spread, 90 s against
/// 13.8 s dealt two groups each.
const HEAVY_GROUPS: usize = 50;

/// At most one cluster in this many short, with at most
/// [`FEW_SHORT_RESOURCES`] resources: each short cluster is joined with a
/// cluster that realised its share rather than with its neighbour.
/// Measured at 1,000 x 10,000 (release, end to end): weights and caps on
/// half the users, 4 resources, seed 2, 3 of 14 groups short, two of
/// them neighbours whose join fell short again (4.0 s) before a third
/// group joined them: 9.9 -> 5.2 s. With 6 resources the same rule made
/// the merged clusters larger and slower: GPU on a fifth, seed 1, 40 ->
/// 99 s; seed 2, 25.1 -> 32.2 s (with many short); the generator's own
/// shape, seed 1, 28-32 -> 80.9 s.
const FEW_SHORT: usize = 3;

/// Resources up to which [`FEW_SHORT`] applies; above it, where the
/// entries outnumber twice the users, [`pure_users`] and [`SLACK_KEPT`].
const FEW_SHORT_RESOURCES: usize = 4;

/// Pure users' use of each resource ([`pure_users`]) at the pooled
/// levels, per unit of its total. Measured at 1,000 x 10,000 with 6
/// resources, seed 1, no verification: 1% (with [`PURE_MOST`]) 2.6 s on
/// the generator's shape, 37.8 s with weights and caps; 2% 6.7 s and
/// 41.4 s; none 28 s and 156 s.
const PURE_USE: f64 = 0.01;

/// Pure users per resource at the most: with two demand shapes
/// (`demand=bimodal`) many users tie, and 1% of a resource took many of
/// them onto every group (group LPs 0.03 -> 1 s each). 4: 1.1 / 3.7 / 58.7 s
/// (bimodal, generator's shape, caps); 8: 1.4 / 2.6 / 37.8 s.
const PURE_MOST: usize = 8;

/// The share of each resource's room at the pooled levels that step 1
/// leaves unused on every group (with more than [`FEW_SHORT_RESOURCES`]
/// resources and more entries than twice the users). With weights and caps on half the users (1,000 x 10,000,
/// 6 resources, seed 1), step 1 gave a group users that filled 99.97% of
/// two resources besides the one the levels fill, and the group could not
/// pack them: with 0.5, 41 -> 34 s (2% pure use) and 69 -> 27 s (20 pure
/// users per resource); other shapes within noise. Not used with 2-4
/// resources: there it made weights and caps slower (5.5 -> 9.2 s, m = 4).
const SLACK_KEPT: f64 = 0.5;

/// Groups solved together at the most before the path gives up.
const MAX_MERGED: usize = 8;

/// The share of the users with tasks on the groups that a merged
/// cluster may hold: past it the path gives up and the one LP runs. With
/// placement by attribute and 6 resources (2,000 x 5,000, seed 2), three
/// of four list groups merged (1,635 of 2,000 users) fell short after
/// 60 s before the one LP (56 s) found the answer: 178 -> 114 s. Two of
/// four merged (552 of 1,000 users, 1,000 x 10,000, seed 3) realised
/// their shares in 11.6 s.
const MERGED_USERS_MOST: f64 = 0.75;

/// One cluster of groups realised on its entries.
struct Part {
    /// Its users (indices into the instance).
    users: Vec<usize>,
    /// Its entries.
    entries: Vec<ServerId>,
    /// The answer on them (`tasks[j][e]`: `users[j]` on `entries[e]`).
    outcome: MaxMinOutcome,
}

/// Realise on the entries of the groups in `cluster` the tasks step 1
/// gave their users there (`shares[n][g]`); `None` when it falls short.
#[allow(clippy::too_many_arguments)]
fn on_entries<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    members: &[Vec<ServerId>],
    shares: &Tasks,
    cluster: &[usize],
    level_tolerance: f64,
) -> Result<Result<Part, Spent>, BackendError> {
    let nu = instance.num_users();
    let share = |n: usize| cluster.iter().map(|&g| shares.get(n, g)).sum::<f64>();
    let users: Vec<usize> = (0..nu).filter(|&n| share(n) > 0.0).collect();
    let mut entries: Vec<ServerId> = cluster.iter().flat_map(|&g| members[g].clone()).collect();
    entries.sort();
    if users.is_empty() {
        return Ok(Ok(Part {
            users,
            entries,
            outcome: MaxMinOutcome::start(0, 0),
        }));
    }
    let servers = raw_servers(instance, &entries);
    // With placement lists, each user's list within the cluster (a
    // cluster of several groups holds entries a user may not use).
    let lists = placement && instance.has_placement();
    let users_raw = users.iter().map(|&n| {
        let mut u = raw_user(instance, n, false);
        if let (true, Some(list)) = (lists, &instance.users()[n].servers) {
            let named: Vec<String> = entries
                .iter()
                .filter(|i| list.binary_search(i).is_ok())
                .map(|i| instance.servers()[i.0].name.clone())
                .collect();
            if named.len() < entries.len() {
                u.servers = Some(named);
            }
        }
        u
    });
    let raw = part_of(instance, servers, users_raw.collect());
    let Ok(sub) = Instance::new(raw) else {
        return Ok(Err(Spent::default()));
    };
    let sig: Vec<f64> = users.iter().map(|&n| sigma[n]).collect();
    let want: Vec<f64> = users
        .iter()
        .map(|&n| share(n) * sigma[n] / instance.users()[n].weight)
        .collect();
    let mut start = MaxMinOutcome::start(users.len(), 0);
    start.frozen_round = vec![1; users.len()];
    start.freeze = vec![crate::outcome::Freeze::Blocked; users.len()];
    start.rounds = 1;
    start.path = Path::Pooled;
    // A group of the lists path that no list divides, on many entries:
    // the groups' two steps again within it (one LP over 2,500 users on
    // 3,100 entries with 4 resources took 20-40 s at 10^8 pairs). Only
    // one level deep: inside, `placement` is off.
    let mut spent = Spent::default();
    if placement && !sub.has_placement() {
        if let Some(size) = auto(sub.num_entries(), users.len()) {
            match realise(backend, &sub, &sig, &want, &start, level_tolerance, size)? {
                Ok(o) if o.status == Status::Optimal => {
                    return Ok(Ok(Part {
                        users,
                        entries,
                        outcome: o,
                    }));
                }
                Ok(o) => spent = Spent::of(&o),
                Err(s) => spent = s,
            }
        }
    }
    let all = vec![true; users.len()];
    let cands = candidates(&sub, &all, lists);
    // Up to Clarabel's users, the block interior point method, then the
    // caller's backend where it does not converge (at 1,000 x 10,000
    // with GPUs on a fifth of the servers and 3 resources, Clarabel ended
    // `AlmostSolved` on a GPU group, and the groups merged until the one
    // LP ran: 134 s against 1.8 s). Past them, Clarabel first: a group's
    // few entries are all its factorisation fills in (20,000 x 500 with
    // 2 resources: five groups of about 8,000 users on 100 entries,
    // 4.9 s end to end against 29 s on HiGHS's interior point); the
    // caller's backend where it does not end optimal.
    let mut found = None;
    if users.len() > crate::settings::clarabel_max_users(sub.num_resources()) {
        let direct = crate::solvers::direct::Direct::new(backend.time_limit())?;
        let got = at_levels(
            &direct,
            &sub,
            &sig,
            lists,
            &cands,
            &want,
            start.clone(),
            level_tolerance,
            true,
            false,
        )?;
        match got {
            Pooled::Realised(o) if o.path == Path::Pooled && o.status == Status::Optimal => {
                found = Some(Pooled::Realised(o));
            }
            other => spent = spent.and(other.spent()),
        }
    }
    let found = match found {
        Some(f) => f,
        None => at_levels(
            backend,
            &sub,
            &sig,
            lists,
            &cands,
            &want,
            start,
            level_tolerance,
            true,
            false,
        )?,
    };
    Ok(match found {
        Pooled::Realised(mut o) if o.path == Path::Pooled && o.status == Status::Optimal => {
            spent.charge(&mut o);
            Ok(Part {
                users,
                entries,
                outcome: *o,
            })
        }
        other => Err(other.spent().and(spent)),
    })
}

/// The group size [`crate::settings::Columns::Auto`] takes, if it takes
/// the group path: groups of [`GROUP_ENTRIES`] entries, or more where
/// that would leave fewer than about [`USERS_PER_GROUP`] users to a group
/// (each user is in two), and four groups at least.
///
/// Measured (release, 2 cores, end to end, seed 1 unless said), the one
/// LP (Clarabel up to 1,500 users, HiGHS's interior point above) against
/// groups:
///
/// | instance | 2 resources | 3 resources | 4 resources |
/// |---|---|---|---|
/// | 300 x 3,000 (4 groups of 750) | | 0.50 -> 0.37 s | 1.30 -> 0.74 s |
/// | 1,000 x 10,000 (14 groups of 750) | 4.0 -> 1.9 s | 9.3 -> 2.5 s (seed 2) | 12.2 -> 3.1 s (seed 2) |
/// | 3,000 x 3,000 (30 groups of 100) | | | 70 -> 2.6 s |
///
/// With groups of 100 at 1,000 x 10,000 (20 users a group) groups fell
/// short and merged until the one LP ran: 81.6 s with 3 resources.
fn auto(entries: usize, runnable_users: usize) -> Option<usize> {
    let per_users = (entries * USERS_PER_GROUP).div_ceil(2 * runnable_users.max(1));
    let size = GROUP_ENTRIES.max(per_users);
    (entries >= 4 * size).then_some(size)
}

/// Kinds of entries (by the resources they hold) up to which the path
/// applies: a GPU on some servers makes two.
const MAX_KINDS: usize = 8;

/// The groups of entries: each group holds entries of one kind only (the
/// same resources present), so a user runnable on a merged group is
/// runnable on each of its entries. Per kind, `len / entries` groups
/// rounded up, its entries sorted by the angle of their capacity (per
/// unit of total capacity) from the first resource and dealt in turn.
/// `None` where there are more than [`MAX_KINDS`] kinds or fewer than
/// two groups of `entries`.
fn deal(instance: &Instance, entries: usize) -> Option<Vec<Vec<ServerId>>> {
    let total = instance.total_capacity();
    let mut kinds: std::collections::BTreeMap<Vec<bool>, Vec<ServerId>> = Default::default();
    for i in instance.server_ids() {
        let held = instance
            .class_capacities(i)
            .iter()
            .map(|&c| c > 0.0)
            .collect();
        kinds.entry(held).or_default().push(i);
        if kinds.len() > MAX_KINDS {
            return None;
        }
    }
    let mut out = Vec::new();
    for list in kinds.into_values() {
        let groups = list.len().div_ceil(entries.max(1));
        let group = dealt(
            list.iter()
                .map(|&i| angle(instance.class_capacities(i), total))
                .collect(),
            groups,
        );
        let mut mine = vec![Vec::new(); groups];
        for (&i, g) in list.iter().zip(group) {
            mine[g].push(i);
        }
        out.extend(mine);
    }
    (out.len() >= 2 && instance.num_entries() >= 2 * entries).then_some(out)
}

/// Each active user's two groups (none for the others): its own, and
/// one more of the groups holding every resource it demands, drawn by a
/// fixed hash (the users link the groups into one well connected graph
/// along which capacity moves). `held[g]`: the resources group `g`
/// holds; `capacity[g]` its capacity; `tasks[n]` user n's tasks at its
/// pooled level.
///
/// Where every group holds the same resources, the users are sorted by
/// the angle of their demand (per unit of total capacity) from the first
/// resource and dealt in turn over the groups (each group a sample of
/// every direction). Where they differ (a GPU on some servers), the
/// users with the fewest groups go first, and each takes for its own the
/// group with the most room left in the resources it demands (the
/// least, over those, of room over capacity), its use at its level then
/// taken from that room: the users without a GPU demand fill the GPU
/// groups' other resources only as far as the GPU users leave them.
/// (k-DF with a GPU on a fifth of the servers, 10,000 x 10,000: dealt in
/// turn, the users without one left the GPU groups short of CPU with 2
/// resources; dealt only over the groups without a GPU, they left the
/// GPU groups' CPU and memory idle with 3. Either way step 1 priced
/// more than 8,000 users, Clarabel's interior point spread each over
/// every group it was priced into, and step 2 ran LPs of 8,000-10,000
/// users per group: more than 400 s with 2 resources and 42.6 s with 3,
/// against 7.9 s and 19.0 s dealt by room.)
fn deal_users(
    instance: &Instance,
    active: &[bool],
    pure: &[bool],
    held: &[Vec<bool>],
    capacity: &[Vec<f64>],
    tasks: &[f64],
    more: usize,
) -> Vec<Vec<ServerId>> {
    let total = instance.total_capacity();
    let users = instance.users();
    let fits_of = |n: usize| -> Vec<usize> {
        let d = &users[n].demand;
        (0..held.len())
            .filter(|&g| d.iter().zip(&held[g]).all(|(&x, &h)| x == 0.0 || h))
            .collect()
    };
    let alike = held.iter().all(|h| h == &held[0]);
    let mut order: Vec<usize> = (0..users.len()).filter(|&n| active[n]).collect();
    let keys: Vec<f64> = users.iter().map(|u| angle(&u.demand, total)).collect();
    let fewest: Vec<usize> = if alike {
        Vec::new()
    } else {
        (0..users.len()).map(|n| fits_of(n).len()).collect()
    };
    order.sort_by(|&a, &b| {
        let by_groups = if alike {
            std::cmp::Ordering::Equal
        } else {
            fewest[a].cmp(&fewest[b])
        };
        by_groups.then(keys[a].total_cmp(&keys[b])).then(a.cmp(&b))
    });
    // The groups a user's use at its level spreads over: enough that it
    // takes at most HEAVY_SHARE of a group's capacity in each resource
    // (the average over the groups it fits), where there are at least
    // HEAVY_GROUPS groups.
    let spread = held.len() >= HEAVY_GROUPS;
    let heavy = |n: usize, fits: &[usize]| -> usize {
        if !spread {
            return 1;
        }
        let d = &users[n].demand;
        let most = (0..d.len())
            .filter(|&r| d[r] > 0.0)
            .map(|r| {
                let cap: f64 = fits.iter().map(|&g| capacity[g][r]).sum::<f64>();
                if cap > 0.0 {
                    d[r] * tasks[n] * fits.len() as f64 / cap
                } else {
                    0.0
                }
            })
            .fold(0.0, f64::max);
        ((most / HEAVY_SHARE).ceil() as usize).clamp(1, fits.len().max(1))
    };
    let mut room: Vec<Vec<f64>> = capacity.to_vec();
    let mut turn: std::collections::HashMap<Vec<usize>, usize> = Default::default();
    let mut out = vec![Vec::new(); users.len()];
    for n in order {
        let d = &users[n].demand;
        let fits = fits_of(n);
        if fits.is_empty() {
            continue;
        }
        if pure[n] {
            out[n] = fits.into_iter().map(ServerId).collect();
            continue;
        }
        let len = fits.len();
        let own = if alike {
            let t = turn.entry(fits.clone()).or_insert(0);
            let own = *t % len;
            *t += 1;
            own
        } else {
            let left = |g: usize| {
                d.iter()
                    .zip(&room[g])
                    .zip(&capacity[g])
                    .filter(|((&x, _), &c)| x > 0.0 && c > 0.0)
                    .map(|((_, &r), &c)| r / c)
                    .fold(f64::INFINITY, f64::min)
            };
            let own = (0..len)
                .max_by(|&a, &b| left(fits[a]).total_cmp(&left(fits[b])).then(b.cmp(&a)))
                .unwrap_or(0);
            for (r, &x) in room[fits[own]].iter_mut().zip(d) {
                *r -= x * tasks[n];
            }
            own
        };
        let mut l = vec![ServerId(fits[own])];
        let mut h = n as u64;
        for _ in 0..(more.max(heavy(n, &fits) - 1)).min(len - 1) {
            // A fixed hash per draw; a group drawn twice is drawn again.
            loop {
                let hv = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                h = hv.wrapping_add(1);
                let g = ServerId(fits[(own + 1 + ((hv >> 11) % (len as u64 - 1)) as usize) % len]);
                if !l.contains(&g) {
                    l.push(g);
                    break;
                }
            }
        }
        l.sort();
        out[n] = l;
    }
    out
}

/// The group of each item: the items with a key (not NaN) sorted by it
/// (ties by index) and dealt to `groups` groups in turn.
fn dealt(keys: Vec<f64>, groups: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).filter(|&j| !keys[j].is_nan()).collect();
    order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]).then(a.cmp(&b)));
    let mut out = vec![usize::MAX; keys.len()];
    for (pos, &j) in order.iter().enumerate() {
        out[j] = pos % groups;
    }
    out
}

/// User `n`'s tasks at its pooled level (none where it runs none).
fn tasks_at(instance: &Instance, sigma: &[f64], level: &[f64], n: usize) -> f64 {
    if level[n] > 0.0 && sigma[n] > 0.0 {
        level[n] * instance.users()[n].weight / sigma[n]
    } else {
        0.0
    }
}

/// Each resource's use at the pooled `level`s, per unit of its total.
fn used_at(instance: &Instance, sigma: &[f64], level: &[f64]) -> Vec<f64> {
    let total = instance.total_capacity();
    let mut used = vec![0.0; total.len()];
    for (n, u) in instance.users().iter().enumerate() {
        let tasks = tasks_at(instance, sigma, level, n);
        for (a, d) in used.iter_mut().zip(&u.demand) {
            *a += tasks * d;
        }
    }
    used.iter()
        .zip(total)
        .map(|(&u, &t)| if t > 0.0 { u / t } else { 0.0 })
        .collect()
}

/// The users nearest each resource alone: per resource, the active users
/// by the share of that resource in their demand (per unit of total
/// capacity), most first, until their use of it at the pooled `level`s
/// reaches [`PURE_USE`] of its total, [`PURE_MOST`] at the most.
///
/// With 6 resources, 1,000 x 10,000, the generator's shape (seed 1), 12 of
/// 715 entries of a group stayed short in step 2: rich in the resource the
/// levels fill and poor in three others. With every user of the group
/// allowed up to twice its share they stayed short; with the 24 users
/// nearest each resource alone added, the group filled them. Such users
/// now may use every group, and step 1 spreads them where they are needed:
/// all 14 groups realise their shares, 28 -> 2.6 s.
///
/// Only where the entries outnumber twice the users (each user is in two
/// groups, so a group then has fewer users than entries). With 10,000
/// users on 10,000 entries (groups of 100 entries, about 200 users each),
/// the same rules made every 6-resource shape measured slower: few huge
/// tasks 86 -> 123 s, the lognormal shape 57 -> 102 s, weights and caps
/// 109 -> more than 150 s.
fn pure_users(instance: &Instance, sigma: &[f64], level: &[f64]) -> Vec<bool> {
    let total = instance.total_capacity();
    let users = instance.users();
    let mut out = vec![false; users.len()];
    let active: Vec<usize> = (0..users.len())
        .filter(|&n| tasks_at(instance, sigma, level, n) > 0.0)
        .collect();
    for r in (0..total.len()).filter(|&r| total[r] > 0.0) {
        let share = |n: usize| {
            let d = &users[n].demand;
            let sum: f64 = d
                .iter()
                .zip(total)
                .map(|(&x, &t)| if t > 0.0 { x / t } else { 0.0 })
                .sum();
            if sum > 0.0 {
                d[r] / total[r] / sum
            } else {
                0.0
            }
        };
        let mut order: Vec<(f64, usize)> = active
            .iter()
            .map(|&n| (share(n), n))
            .filter(|e| e.0 > 0.0)
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut taken = 0.0;
        for (_, n) in order.into_iter().take(PURE_MOST) {
            if taken >= PURE_USE {
                break;
            }
            out[n] = true;
            taken += tasks_at(instance, sigma, level, n) * users[n].demand[r] / total[r];
        }
    }
    out
}

/// The pooled levels of `bound` realised group by group, where the
/// instance takes that path (`columns`: [`Columns::Auto`] by [`auto`],
/// or [`Columns::Grouped`]; no placement lists, at most [`MAX_KINDS`]
/// kinds of entries). `Err` with what it solved when it does not realise them
/// (nothing where the path does not apply).
pub(crate) fn try_groups<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    bound: &Bound,
    level_tolerance: f64,
    columns: Columns,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let runnable_users = bound.runnable.iter().filter(|&&r| r).count();
    let group_entries = match columns {
        Columns::Auto => auto(instance.num_entries(), runnable_users),
        Columns::Grouped(entries) => Some(entries),
        _ => None,
    };
    let Some(entries) =
        group_entries.filter(|&e| e >= 1 && !(placement && instance.has_placement()))
    else {
        return Ok(Err(Spent::default()));
    };
    let mut found = realise(
        backend,
        instance,
        sigma,
        &bound.level,
        &bound.base,
        level_tolerance,
        entries,
    )?;
    if let Ok(out) = &mut found {
        out.first_level = bound.first;
    }
    Ok(found)
}

/// Realise the pooled `level`s (`base`: the pooled filling's rounds and
/// certificates) group by group; `None` when a step falls short or a
/// solve does not end optimal (the caller then runs the one LP). Past
/// [`DENSE_BLOCK_USERS`] users the first step runs on
/// [`SUB_POOLS_DENSE`] sub-pools per group, and where that falls short
/// (coarser sub-pools can leave more round-off idle than the users'
/// levels may absorb) on [`SUB_POOLS`] again.
fn realise<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    level: &[f64],
    base: &MaxMinOutcome,
    level_tolerance: f64,
    entries: usize,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let active_users = level.iter().filter(|&&l| l > 0.0).count();
    if active_users <= DENSE_BLOCK_USERS {
        let on = (entries, SUB_POOLS);
        return realise_on(backend, instance, sigma, level, base, level_tolerance, on);
    }
    let on = (entries, SUB_POOLS_DENSE);
    match realise_on(backend, instance, sigma, level, base, level_tolerance, on)? {
        Ok(out) => Ok(Ok(out)),
        Err(spent) => {
            let on = (entries, SUB_POOLS);
            let again = realise_on(backend, instance, sigma, level, base, level_tolerance, on)?;
            Ok(match again {
                Ok(mut out) => {
                    spent.charge(&mut out);
                    Ok(out)
                }
                Err(more) => Err(spent.and(more)),
            })
        }
    }
}

/// [`realise`] on groups of `entries` entries, each group's first step
/// on `sub_pools` servers.
fn realise_on<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    level: &[f64],
    base: &MaxMinOutcome,
    level_tolerance: f64,
    (entries, sub_pools): (usize, usize),
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let t0 = Instant::now();
    let nu = instance.num_users();
    let Some(members) = deal(instance, entries) else {
        return Ok(Err(Spent::default()));
    };
    // Step 1: each group as `sub_pools` servers, its entries sorted by
    // the angle of their capacity and cut into that many runs.
    let total = instance.total_capacity();
    // The rules for many resources, where a group's users are fewer than
    // its entries (see [`pure_users`]).
    let active_users = level.iter().filter(|&&l| l > 0.0).count();
    let many =
        instance.num_resources() > FEW_SHORT_RESOURCES && instance.num_entries() > 2 * active_users;
    let mut servers: Vec<RawServer> = Vec::new();
    // The step-1 servers of each group.
    let mut pools_of: Vec<Vec<usize>> = Vec::with_capacity(members.len());
    for (g, list) in members.iter().enumerate() {
        let mut sorted = list.clone();
        let key = |i: ServerId| angle(instance.class_capacities(i), total);
        sorted.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
        let runs = sub_pools.clamp(1, sorted.len().max(1));
        let mut mine = Vec::with_capacity(runs);
        for k in 0..runs {
            let run = &sorted[k * sorted.len() / runs..(k + 1) * sorted.len() / runs];
            let mut c = vec![0.0; instance.num_resources()];
            for &i in run {
                for (a, b) in c.iter_mut().zip(instance.class_capacities(i)) {
                    *a += b;
                }
            }
            mine.push(servers.len());
            servers.push(RawServer {
                name: format!("group {g} pool {k}"),
                capacity: c,
                count: None,
            });
        }
        pools_of.push(mine);
    }
    let held: Vec<Vec<bool>> = pools_of
        .iter()
        .map(|pools| {
            servers[pools[0]]
                .capacity
                .iter()
                .map(|&c| c > 0.0)
                .collect()
        })
        .collect();
    let step_servers = servers.len();
    // The step-1 instance, each resource's capacity times `kept`.
    let merged_at = |kept: &[f64]| {
        let mut servers = servers.clone();
        for s in &mut servers {
            for (a, k) in s.capacity.iter_mut().zip(kept) {
                *a *= k;
            }
        }
        let users_raw = (0..nu).map(|n| raw_user(instance, n, true)).collect();
        Instance::new(part_of(instance, servers, users_raw)).ok()
    };
    let Some(merged) = merged_at(&vec![1.0; total.len()]) else {
        return Ok(Err(Spent::default()));
    };
    // With many resources (`many`), step 1 first on groups that keep
    // [`SLACK_KEPT`] of each resource's room.
    let roomy = many
        .then(|| {
            let kept: Vec<f64> = used_at(instance, sigma, level)
                .iter()
                .map(|&u| 1.0 - SLACK_KEPT * (1.0 - u).max(0.0))
                .collect();
            merged_at(&kept)
        })
        .flatten();
    let active: Vec<bool> = level.iter().map(|&l| l > 0.0).collect();
    let pure = if many {
        pure_users(instance, sigma, level)
    } else {
        vec![false; nu]
    };
    // Each user's candidate groups (see [`deal_users`]). (The sector
    // candidates of the one-LP path gave a group at an extreme direction
    // 9,902 of 10,000 users: each user's only group in that sector.)
    let group_capacity: Vec<Vec<f64>> = pools_of
        .iter()
        .map(|pools| {
            let mut c = vec![0.0; instance.num_resources()];
            for &p in pools {
                for (a, b) in c.iter_mut().zip(&servers[p].capacity) {
                    *a += b;
                }
            }
            c
        })
        .collect();
    let tasks: Vec<f64> = (0..nu)
        .map(|n| tasks_at(instance, sigma, level, n))
        .collect();
    let lists_of = |more: usize| -> Vec<Vec<ServerId>> {
        deal_users(
            instance,
            &active,
            &pure,
            &held,
            &group_capacity,
            &tasks,
            more,
        )
        .into_iter()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|g| pools_of[g.0].iter().map(|&p| ServerId(p)))
                .collect()
        })
        .collect()
    };
    // On Clarabel whatever the number of users: the few groups' capacity
    // rows are all its factorisation fills in. Past [`DENSE_BLOCK_USERS`]
    // (10,000 users on 400 servers at 10,000 x 10,000) that block is
    // dense, and Clarabel chooses its LDL by the fill (`dense_block`).
    let direct = if active_users > DENSE_BLOCK_USERS {
        crate::solvers::direct::Direct::dense_block(backend.time_limit())?
    } else {
        crate::solvers::direct::Direct::new(backend.time_limit())?
    };
    let step1 = |merged: &Instance,
                 lists: &[Vec<ServerId>]|
     -> Result<Result<Box<MaxMinOutcome>, Spent>, BackendError> {
        let found = at_levels(
            &direct,
            merged,
            sigma,
            false,
            lists,
            level,
            base.clone(),
            level_tolerance,
            true,
            true,
        )?;
        // Step 1 only splits each user's share among the groups; step 2
        // realises the shares and proves them. So a point Clarabel ends
        // with at reduced accuracy serves too: a group it gives too much
        // falls short in step 2 and merges. (TSF with weights and caps at
        // 10,000 x 10,000, 6 resources, seed 3: step 1 ended at reduced
        // accuracy, and the one LP on HiGHS's interior point had not
        // ended after 400 s; with that point, 52 groups short and merged,
        // 36-47 s, `optimal` and verified.)
        Ok(match found {
            Pooled::Realised(o)
                if o.path == Path::Pooled
                    && matches!(o.status, Status::Optimal | Status::ReducedAccuracy) =>
            {
                Ok(o)
            }
            other => Err(other.spent()),
        })
    };
    // User n holds tasks outside its own groups (pricing found them short).
    let outside = |o: &MaxMinOutcome, lists: &[Vec<ServerId>], n: usize| {
        o.tasks
            .row(n)
            .iter()
            .any(|(p, x)| x > 0.0 && lists[n].binary_search(&ServerId(p)).is_err())
    };
    let lists = lists_of(1);
    // Step 1 on the roomy groups, or where they cannot hold the levels, on
    // the groups as they are (the LPs of the first try counted).
    let mut on = &merged;
    let mut tried = Spent::default();
    let mut roomy_first = None;
    if let Some(roomy) = &roomy {
        match step1(roomy, &lists)? {
            Ok(o) => {
                on = roomy;
                roomy_first = Some(o);
            }
            Err(spent) => tried = spent,
        }
    }
    let mut first = match roomy_first {
        Some(o) => o,
        None => match step1(on, &lists)? {
            Ok(mut o) => {
                tried.charge(&mut o);
                o
            }
            // Short with one group beyond each user's own: every user
            // given [`MORE_GROUPS`] before the one LP over every entry
            // (k-DF with a GPU on a fifth of the servers, 2 resources,
            // 1,000 x 5,000, seed 2: 9.8 s by the one LP, 4.0 s so).
            Err(spent) => match step1(on, &lists_of(MORE_GROUPS))? {
                Ok(mut o) => {
                    tried = tried.and(spent);
                    tried.charge(&mut o);
                    o
                }
                Err(more) => return Ok(Err(spent.and(tried).and(more))),
            },
        },
    };
    let mut group_of = vec![0usize; step_servers];
    for (g, pools) in pools_of.iter().enumerate() {
        for &p in pools {
            group_of[p] = g;
        }
    }
    // The most users with a share of one group (step 2's largest LP).
    let crowd = |o: &MaxMinOutcome| {
        let mut users = vec![0usize; members.len()];
        for n in 0..nu {
            let mut seen: Vec<usize> = o
                .tasks
                .row(n)
                .iter()
                .filter(|e| e.1 > 0.0)
                .map(|e| group_of[e.0])
                .collect();
            seen.sort_unstable();
            seen.dedup();
            seen.into_iter().for_each(|g| users[g] += 1);
        }
        users.into_iter().max().unwrap_or(0)
    };
    let priced: Vec<usize> = (0..nu).filter(|&n| outside(&first, &lists, n)).collect();
    if !priced.is_empty() {
        // The users priced outside their groups get more of them; the
        // answer not kept still counts in the LPs and seconds.
        let more = lists_of(MORE_GROUPS);
        let mut wider = lists.clone();
        for &n in &priced {
            wider[n].clone_from(&more[n]);
        }
        let (lps, seconds) = match step1(on, &wider)? {
            Ok(mut o) => {
                if crowd(&o) < crowd(&first) {
                    std::mem::swap(&mut first, &mut o);
                }
                (o.lps, o.solve_seconds)
            }
            Err(spent) => (spent.lps, spent.seconds),
        };
        first.lps += lps;
        first.solve_seconds += seconds;
    }
    // Each user's share of each group: the sum over the group's pools.
    if step_servers > members.len() {
        let rows = (0..nu)
            .map(|n| {
                let mut row: Vec<(usize, f64)> = Vec::new();
                for (p, x) in first.tasks.row(n).iter() {
                    let g = group_of[p];
                    match row.iter_mut().find(|e| e.0 == g) {
                        Some(e) => e.1 += x,
                        None => row.push((g, x)),
                    }
                }
                row.sort_by_key(|e| e.0);
                row
            })
            .collect();
        first.tasks = Tasks::from_rows(members.len(), rows);
    }
    on_groups(
        backend,
        instance,
        sigma,
        false,
        level,
        base,
        level_tolerance,
        &members,
        &first,
        t0,
    )
}

/// The pooled levels realised on the entries of groups already given
/// their users' tasks: `members` the entries of each group, `first` the
/// answer on the groups (its tasks each user's share of each group).
/// With placement lists (`placement`) the groups are those the lists
/// hold alike ([`crate::paths::merge::pool_by_lists`]): every user with a
/// share of a group may use all of its entries; in a cluster of several
/// groups, each user keeps to its list.
pub(crate) fn realise_on_lists<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    bound: &Bound,
    members: &[Vec<ServerId>],
    first: &MaxMinOutcome,
    level_tolerance: f64,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let mut found = on_groups(
        backend,
        instance,
        sigma,
        true,
        &bound.level,
        &bound.base,
        level_tolerance,
        members,
        first,
        bound.t0,
    )?;
    if let Ok(out) = &mut found {
        out.first_level = bound.first;
    }
    Ok(found)
}

/// Step 2 of [`realise`] and of [`realise_on_lists`] (see there).
#[allow(clippy::too_many_arguments)]
fn on_groups<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    level: &[f64],
    base: &MaxMinOutcome,
    level_tolerance: f64,
    members: &[Vec<ServerId>],
    first: &MaxMinOutcome,
    t0: Instant,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let nu = instance.num_users();
    let groups = members.len();
    // Each group's users on its entries; a group that falls short is
    // solved again together with the next cluster, and so on.
    let shares = &first.tasks;
    let t2 = Instant::now();
    let solve = |c: &Vec<usize>| {
        on_entries(
            backend,
            instance,
            sigma,
            placement,
            members,
            shares,
            c,
            level_tolerance,
        )
    };
    // The LPs of parts not kept (a failed group, merged and solved
    // again), and all step 2 and step 1 solved when the path gives up.
    let mut discarded = 0;
    let mut keep = |solved: Vec<Result<Part, Spent>>| -> Vec<Option<Part>> {
        solved
            .into_iter()
            .map(|r| r.map_err(|s| discarded += s.lps).ok())
            .collect()
    };
    let all_users = (0..nu).filter(|&n| shares.user_total(n) > 0.0).count();
    let mut clusters: Vec<Vec<usize>> = (0..groups).map(|g| vec![g]).collect();
    let mut parts = keep(clusters.par_iter().map(solve).collect::<Result<_, _>>()?);
    let given_up = |parts: &[Option<Part>], discarded: usize| Spent {
        lps: first.lps + discarded + parts.iter().flatten().map(|p| p.outcome.lps).sum::<usize>(),
        seconds: first.solve_seconds + t2.elapsed().as_secs_f64(),
    };
    while parts.iter().any(Option::is_none) {
        let len = clusters.len();
        if len < 2 {
            return Ok(Err(given_up(&parts, discarded)));
        }
        let mut next_clusters = Vec::new();
        let mut next_parts = Vec::new();
        let mut taken = vec![false; len];
        // With placement lists and more than FEW_SHORT_RESOURCES
        // resources, most list groups short: the bound is out of reach
        // (fragmentation within the groups), and the one LP runs sooner.
        // Placement by attribute, 6 resources, 1,000 x 10,000, seed 1:
        // three of four list groups short, the two pairs merged short
        // again (32 and 40 s): 146 -> 115 s.
        let short = parts.iter().filter(|p| p.is_none()).count();
        if placement && instance.num_resources() > FEW_SHORT_RESOURCES && 2 * short > len {
            return Ok(Err(given_up(&parts, discarded)));
        }
        let few_short = instance.num_resources() <= FEW_SHORT_RESOURCES && FEW_SHORT * short <= len;
        for c in 0..len {
            if taken[c] || parts[c].is_some() {
                continue;
            }
            // With few clusters short, the next one that realised its
            // share (two short neighbours joined fall short again);
            // with many, the next.
            let d = (1..len)
                .map(|j| (c + j) % len)
                .find(|&d| few_short && !taken[d] && parts[d].is_some())
                .unwrap_or((c + 1) % len);
            taken[c] = true;
            let mut joined = clusters[c].clone();
            if !taken[d] {
                taken[d] = true;
                joined.extend_from_slice(&clusters[d]);
            }
            next_clusters.push(joined);
            next_parts.push(None);
        }
        // A cluster of nearly all the users (every group among them) is
        // about the one LP the caller runs next (that one with more
        // candidates, and the one round where it falls short).
        let users_in = |c: &[usize]| {
            (0..nu)
                .filter(|&n| c.iter().any(|&g| shares.get(n, g) > 0.0))
                .count()
        };
        if next_clusters.iter().any(|c| {
            c.len() > MAX_MERGED || users_in(c) as f64 > MERGED_USERS_MOST * all_users as f64
        }) {
            return Ok(Err(given_up(&parts, discarded)));
        }
        let solved = keep(
            next_clusters
                .par_iter()
                .map(solve)
                .collect::<Result<_, _>>()?,
        );
        for c in (0..len).filter(|&c| !taken[c]) {
            next_clusters.push(std::mem::take(&mut clusters[c]));
            next_parts.push(parts[c].take());
        }
        for (slot, p) in next_parts.iter_mut().zip(solved) {
            *slot = p;
        }
        clusters = next_clusters;
        parts = next_parts;
    }
    // Step 2's wall time counts as solving (its solves run in parallel:
    // their own seconds add up to more).
    let step2 = t2.elapsed().as_secs_f64();
    // The union on the whole instance: each user's entries with tasks.
    let mut lists: Vec<Vec<ServerId>> = vec![Vec::new(); nu];
    let mut tasks: Vec<Vec<(ServerId, f64)>> = vec![Vec::new(); nu];
    let spent = given_up(&parts, discarded);
    let mut out = MaxMinOutcome {
        lps: first.lps + discarded,
        solve_seconds: first.solve_seconds + step2,
        pricing_passes: first.pricing_passes,
        pricing_seconds: first.pricing_seconds,
        passes: first.passes.clone(),
        ..base.clone()
    };
    for part in parts.into_iter().flatten() {
        let o = &part.outcome;
        out.lps += o.lps;
        out.pricing_passes += o.pricing_passes;
        out.pricing_seconds += o.pricing_seconds;
        out.passes.extend_from_slice(&o.passes);
        for (j, &n) in part.users.iter().enumerate() {
            for (e, x) in o.tasks.row(j) {
                if x > 0.0 {
                    lists[n].push(part.entries[e]);
                    tasks[n].push((part.entries[e], x));
                }
            }
        }
    }
    for l in &mut lists {
        l.sort();
    }
    let mm = build(instance, sigma, placement, Some(&lists));
    if mm.too_wide.is_some() {
        return Ok(Err(spent));
    }
    let mut x = vec![0.0; mm.problem.num_cols()];
    for n in 0..nu {
        for &(i, v) in &tasks[n] {
            if let Ok(j) = mm.pairs[n].binary_search_by(|p| p.0.cmp(&i)) {
                x[mm.pairs[n][j].1 .0] = v / mm.coef[n];
            }
        }
    }
    out.levels = (0..nu).map(|n| level[n] * mm.scale).collect();
    // The groups' LPs ask each user at least its share; where a group has
    // room one may leave a user more (a user alone on its listed entry,
    // capped at 0.5 tasks, was given 5.9; a capped user with shares of
    // two groups, more than its cap in all). Down to its level: that only
    // frees capacity.
    for n in 0..nu {
        let have: f64 = mm.pairs[n].iter().map(|&(_, c)| x[c.0]).sum();
        if mm.runnable[n] && have > out.levels[n] {
            let f = out.levels[n] / have;
            for &(_, c) in &mm.pairs[n] {
                x[c.0] *= f;
            }
        }
    }
    // Every user at its level to the LPs' tolerance (the snap in
    // [`finish`] moves it by its rounding only).
    let short = (0..nu).any(|n| {
        let have: f64 = mm.pairs[n].iter().map(|&(_, c)| x[c.0]).sum();
        mm.runnable[n] && have < out.levels[n] * (1.0 - 1e-8)
    });
    if short {
        return Ok(Err(spent));
    }
    out.pairs = mm.total_pairs;
    out.columns = lists.iter().map(Vec::len).sum();
    out.path = Path::Grouped(groups);
    out.raw_status = "Optimal".into();
    finish(&mut out, &mm, &x, instance, sigma);
    // Round-off idle capacity charged to a crowded round's users: given
    // to users that can take it, and checked again.
    if !placement
        && !proved(&out, instance, sigma, false)
        && (fill_idle(&mut out, instance, sigma) == 0 || !proved(&out, instance, sigma, false))
    {
        return Ok(Err(spent));
    }
    out.build_seconds = t0.elapsed().as_secs_f64() - out.solve_seconds;
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::{auto, deal_users, proved, pure_users, HEAVY_GROUPS, HEAVY_SHARE, PURE_MOST};
    use crate::lp::idle::fill_idle;
    use crate::outcome::{Freeze, MaxMinOutcome, RoundCertificate};
    use crate::settings::BLOCKED_ROOM;
    use leontief_core::{Instance, RawInstance, RawServer, RawUser};
    use leontief_core::{ServerId, Tasks};

    /// An instance of `resources` on `servers`, user j (named `u{j}`)
    /// demanding `demands[j]`, nothing else set.
    fn instance(resources: &[&str], servers: Vec<RawServer>, demands: Vec<Vec<f64>>) -> Instance {
        Instance::new(RawInstance {
            name: None,
            description: None,
            resources: resources.iter().map(|r| r.to_string()).collect(),
            servers,
            users: demands
                .into_iter()
                .enumerate()
                .map(|(j, demand)| RawUser {
                    name: format!("u{j}"),
                    demand,
                    weight: None,
                    tasks: None,
                    servers: None,
                    rank_weights: None,
                    queue: None,
                })
                .collect(),
            queues: None,
            quantum: None,
        })
        .expect("valid")
    }

    /// Three users each near one resource alone, twelve balanced ones, on
    /// 10 of each resource in all.
    fn three_pure_twelve_balanced() -> Instance {
        let mut users = vec![
            vec![1.0, 0.1, 0.1],
            vec![0.1, 1.0, 0.1],
            vec![0.1, 0.1, 1.0],
        ];
        users.extend(std::iter::repeat_n(vec![0.5, 0.5, 0.5], 12));
        let servers = vec![RawServer {
            name: "s".into(),
            capacity: vec![5.0, 5.0, 5.0],
            count: Some(2),
        }];
        instance(&["a", "b", "c"], servers, users)
    }

    /// Levels at which every user runs `tasks` tasks (sigma 1: the level
    /// is the task count).
    fn pure_at(inst: &Instance, tasks: f64) -> Vec<bool> {
        let n = inst.num_users();
        pure_users(inst, &vec![1.0; n], &vec![tasks; n])
    }

    /// Each pure user alone takes 2% of its resource at 0.2 tasks: one
    /// user per resource, the one nearest it.
    #[test]
    fn the_user_nearest_each_resource_alone_is_pure() {
        let inst = three_pure_twelve_balanced();
        let pure = pure_at(&inst, 0.2);
        let chosen: Vec<usize> = (0..15).filter(|&n| pure[n]).collect();
        assert_eq!(chosen, vec![0, 1, 2]);
    }

    /// At 0.01 tasks a user takes 0.05-0.1% of a resource, and the twelve
    /// balanced users would not reach 1% of it: per resource, the user
    /// nearest it and then the balanced ones (tied, by index) until
    /// [`PURE_MOST`] in all; the last five balanced users are not pure.
    #[test]
    fn pure_users_stop_at_the_most_per_resource() {
        let inst = three_pure_twelve_balanced();
        let pure = pure_at(&inst, 0.01);
        assert_eq!(PURE_MOST, 8);
        let chosen: Vec<usize> = (0..15).filter(|&n| pure[n]).collect();
        assert_eq!(chosen, (0..10).collect::<Vec<_>>());
        // No user active: none pure.
        assert!(pure_at(&inst, 0.0).iter().all(|&p| !p));
    }

    /// Two resources, the second (a GPU) held by two of eight groups of
    /// 4 CPUs and (where held) 1 GPU; the first `cpu_users` users demand
    /// no GPU, the four after them do, 0.05 tasks each at their levels
    /// (at most 1% of a group, so none is spread as heavy).
    fn gpu_dealing(cpu_users: usize, more: usize) -> (Vec<Vec<ServerId>>, [usize; 2]) {
        let gpu_groups = [2usize, 5];
        let held: Vec<Vec<bool>> = (0..8)
            .map(|g| vec![true, gpu_groups.contains(&g)])
            .collect();
        let capacity: Vec<Vec<f64>> = held
            .iter()
            .map(|h| vec![4.0, if h[1] { 1.0 } else { 0.0 }])
            .collect();
        let nu = cpu_users + 4;
        let demands = (0..nu)
            .map(|j| {
                vec![
                    0.1 + 0.01 * j as f64,
                    if j >= cpu_users { 0.2 } else { 0.0 },
                ]
            })
            .collect();
        let servers = vec![RawServer {
            name: "s".into(),
            capacity: vec![4.0, 1.0],
            count: Some(8),
        }];
        let inst = instance(&["cpu", "gpu"], servers, demands);
        let dealt = deal_users(
            &inst,
            &vec![true; nu],
            &vec![false; nu],
            &held,
            &capacity,
            &vec![0.05; nu],
            more,
        );
        (dealt, gpu_groups)
    }

    /// Where the groups hold different resources, each user's own group
    /// is the one with the most room left in what it demands: the GPU
    /// users first (two to each GPU group), then the six users without a
    /// GPU demand one to each group without a GPU (the GPU groups' CPU
    /// already has less room), and the second group of a GPU user also
    /// holds a GPU. With 30 users without a GPU demand, the GPU groups'
    /// CPU takes some of them too.
    #[test]
    fn users_take_the_group_with_the_most_room_in_what_they_demand() {
        let (own, gpu_groups) = gpu_dealing(6, 0);
        for (n, groups) in own.iter().enumerate() {
            assert_eq!(groups.len(), 1, "user {n}: {groups:?}");
            let gpu = gpu_groups.contains(&groups[0].0);
            assert_eq!(gpu, n >= 6, "user {n} dealt group {}", groups[0].0);
        }
        let mut cpu: Vec<usize> = own[..6].iter().map(|g| g[0].0).collect();
        cpu.sort_unstable();
        assert_eq!(cpu, vec![0, 1, 3, 4, 6, 7]);
        let on_gpu = |g: &[ServerId]| gpu_groups.contains(&g[0].0);
        assert_eq!(own[6..].iter().filter(|g| on_gpu(g)).count(), 4);
        let (two, _) = gpu_dealing(6, 1);
        for (n, groups) in two.iter().enumerate() {
            assert_eq!(groups.len(), 2, "user {n}: {groups:?}");
            assert!(groups.contains(&own[n][0]), "user {n}: {groups:?}");
            if n >= 6 {
                assert!(groups.iter().all(|g| gpu_groups.contains(&g.0)));
            }
        }
        let (many, _) = gpu_dealing(30, 0);
        let cpu_on_gpu = many[..30].iter().filter(|g| on_gpu(g)).count();
        assert!(cpu_on_gpu > 0 && cpu_on_gpu < 30 * 2 / 8, "{cpu_on_gpu}");
    }

    /// [`HEAVY_GROUPS`] groups of 10 CPU each: a user whose use at its
    /// level is 0.5% of a group keeps its two groups; one at 9% (ceil(9 /
    /// 2) = 5 groups to bring each under [`HEAVY_SHARE`]) gets five, all
    /// distinct; one at 200% gets every group. `more` = 2 still gives the
    /// light user three. With ten groups, fewer than [`HEAVY_GROUPS`],
    /// every user keeps two.
    #[test]
    fn a_heavy_user_is_spread_over_enough_groups() {
        let tasks = [0.05, 0.9, 20.0];
        let dealt = |groups: usize, more: usize| -> Vec<usize> {
            let held = vec![vec![true]; groups];
            let capacity = vec![vec![10.0]; groups];
            let servers = vec![RawServer {
                name: "s".into(),
                capacity: vec![10.0],
                count: Some(groups as u64),
            }];
            let inst = instance(&["cpu"], servers, vec![vec![1.0]; 3]);
            let lists = deal_users(
                &inst,
                &[true; 3],
                &[false; 3],
                &held,
                &capacity,
                &tasks,
                more,
            );
            for l in &lists {
                assert!(l.windows(2).all(|w| w[0] < w[1]), "{l:?}");
            }
            lists.iter().map(Vec::len).collect()
        };
        let g = HEAVY_GROUPS;
        assert_eq!(dealt(g, 1), vec![2, 5, g]);
        assert!(tasks[1] / 10.0 / 5.0 <= HEAVY_SHARE);
        assert_eq!(dealt(g, 2), vec![3, 5, g]);
        assert_eq!(dealt(10, 1), vec![2, 2, 2]);
    }

    /// Two users of one resource on two entries of capacity 1, one round
    /// priced 1 on both: the prices prove the users at 1 task each, not
    /// at 0.999999 (2e-6 of the capacity idle, room 2e-6 of each user's
    /// tasks, past [`BLOCKED_ROOM`]).
    /// A GPU server whose CPU the two GPU users fill with its GPU 5e-8
    /// idle, and a CPU server 8e-8 idle: neither round proved until the
    /// GPU-heavy user takes the GPU (the CPU-heavy one making room) and
    /// the CPU-only user the CPU.
    #[test]
    fn idle_capacity_given_to_users_that_can_take_it_proves_the_rounds() {
        let servers = vec![
            RawServer {
                name: "gpu".into(),
                capacity: vec![1.0, 1.0],
                count: None,
            },
            RawServer {
                name: "cpu".into(),
                capacity: vec![1.0, 0.0],
                count: None,
            },
        ];
        let demands = vec![vec![0.1, 1.0], vec![1.0, 0.1], vec![1.0, 0.0]];
        let inst = instance(&["cpu", "gpu"], servers, demands.clone());
        let (gpu_idle, cpu_idle) = (5e-8, 8e-8);
        let x0 = (0.9 - gpu_idle) / 0.99;
        let x1 = 1.0 - 0.1 * x0;
        let mut o = MaxMinOutcome::start(3, 2);
        o.tasks = Tasks::from_rows(
            2,
            vec![vec![(0, x0)], vec![(0, x1)], vec![(1, 1.0 - cpu_idle)]],
        );
        o.freeze = vec![Freeze::Blocked; 3];
        o.frozen_round = vec![1, 1, 2];
        o.levels = o.tasks.user_totals();
        o.certificates = vec![
            RoundCertificate {
                round: 1,
                prices: vec![0.0, 1.0, 0.0, 0.0],
                users: vec![0, 1],
            },
            RoundCertificate {
                round: 2,
                prices: vec![1.0, 0.0, 1.0, 0.0],
                users: vec![2],
            },
        ];
        let sigma = [1.0; 3];
        let before = o.tasks.user_totals();
        assert!(!proved(&o, &inst, &sigma, false));
        assert!(fill_idle(&mut o, &inst, &sigma) > 0);
        assert!(proved(&o, &inst, &sigma, false));
        // Within capacity, the levels moved by their round-off only.
        for (i, cap) in [[1.0, 1.0], [1.0, 0.0]].iter().enumerate() {
            for r in 0..2 {
                let use_r: f64 = (0..3).map(|n| demands[n][r] * o.tasks.get(n, i)).sum();
                assert!(
                    use_r <= cap[r],
                    "entry {i} resource {r}: {use_r} > {}",
                    cap[r]
                );
                assert!(cap[r] - use_r <= 1e-12, "entry {i} resource {r} idle");
            }
        }
        for (n, b) in before.iter().enumerate() {
            assert!((o.tasks.user_total(n) - b).abs() <= 1e-7 * b);
            assert_eq!(o.levels[n], o.tasks.user_total(n));
        }
    }

    /// Idle capacity more than a user's levels may absorb: one entry of
    /// capacity 1 with 1e-4 idle, four users at 0.2499 tasks each in one
    /// round. Each taker rises by at most 1e-7 of its tasks (the users
    /// of a round share one level to 1e-6 in the verification), the rest
    /// stays idle, and the round stays unproved.
    #[test]
    fn idle_capacity_raises_no_user_past_its_share_of_round_off() {
        let servers = vec![RawServer {
            name: "s".into(),
            capacity: vec![1.0],
            count: None,
        }];
        let inst = instance(&["cpu"], servers, vec![vec![1.0]; 4]);
        let mut o = MaxMinOutcome::start(4, 1);
        o.tasks = Tasks::from_rows(1, (0..4).map(|_| vec![(0, 0.2499)]).collect());
        o.freeze = vec![Freeze::Blocked; 4];
        o.frozen_round = vec![1; 4];
        o.levels = o.tasks.user_totals();
        o.certificates = vec![RoundCertificate {
            round: 1,
            prices: vec![1.0],
            users: vec![0, 1, 2, 3],
        }];
        let sigma = [1.0; 4];
        assert!(!proved(&o, &inst, &sigma, false));
        assert!(fill_idle(&mut o, &inst, &sigma) > 0);
        let totals = o.tasks.user_totals();
        for t in &totals {
            assert!(
                *t >= 0.2499 && *t <= 0.2499 * (1.0 + 1e-7) * (1.0 + 1e-15),
                "{t}"
            );
        }
        let spread = totals.iter().cloned().fold(0.0, f64::max)
            / totals.iter().cloned().fold(f64::INFINITY, f64::min)
            - 1.0;
        assert!(spread <= 1e-7, "{spread}");
        assert!(!proved(&o, &inst, &sigma, false));
    }

    #[test]
    fn idle_capacity_leaves_the_round_unproved() {
        let servers = (0..2)
            .map(|i| RawServer {
                name: format!("s{i}"),
                capacity: vec![1.0],
                count: None,
            })
            .collect();
        let inst = instance(&["cpu"], servers, vec![vec![1.0]; 2]);
        let at = |x: f64| {
            let mut o = MaxMinOutcome::start(2, 2);
            o.tasks = Tasks::from_rows(2, vec![vec![(0, x)], vec![(1, x)]]);
            o.frozen_round = vec![1, 1];
            o.certificates = vec![RoundCertificate {
                round: 1,
                prices: vec![1.0, 1.0],
                users: vec![0, 1],
            }];
            o
        };
        assert_eq!(BLOCKED_ROOM, 5e-7);
        assert!(proved(&at(1.0), &inst, &[1.0, 1.0], false));
        assert!(proved(&at(1.0 - 1e-7), &inst, &[1.0, 1.0], false));
        assert!(!proved(&at(1.0 - 1e-6), &inst, &[1.0, 1.0], false));
    }

    /// Groups of 100 with many users; larger groups where users are
    /// fewer (about 150 a group); none below four groups.
    #[test]
    fn group_sizes() {
        assert_eq!(auto(10_000, 10_000), Some(100));
        assert_eq!(auto(3_000, 3_000), Some(100));
        assert_eq!(auto(10_000, 1_000), Some(750));
        assert_eq!(auto(3_000, 300), Some(750));
        assert_eq!(auto(1_000, 100), None);
        assert_eq!(auto(2_000, 200), None);
        assert_eq!(auto(300, 10_000), None);
        assert_eq!(auto(10_000, 0), None);
    }
}
