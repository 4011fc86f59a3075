//! How the groups are dealt: the entries into groups of one kind, and
//! each user to its own group and the others it may use in step 1.

use crate::lp::pricing::angle;
use crate::settings::{GROUP_ENTRIES, USERS_PER_GROUP};
use leontief_core::{Instance, ServerId};

/// The most of a group's capacity in a resource that one user's use at
/// its level takes in step 1's lists: a user past it may use as many
/// groups as bring it under ([`deal_users`]).
pub(super) const HEAVY_SHARE: f64 = 0.02;

/// The fewest groups at which [`HEAVY_SHARE`] applies. With fewer, larger
/// groups (the sizes where [`auto`] makes a group of more than
/// [`GROUP_ENTRIES`] entries to give it enough users) a heavy user spread
/// over several groups is in a large part of them: k-DF, 6 resources,
/// 2,000 x 5,000 (27 groups), 345 of 2,000 users spread, 90 s against
/// 13.8 s dealt two groups each.
pub(super) const HEAVY_GROUPS: usize = 50;

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
pub(super) fn auto(entries: usize, runnable_users: usize) -> Option<usize> {
    let per_users = (entries * USERS_PER_GROUP).div_ceil(2 * runnable_users.max(1));
    let size = GROUP_ENTRIES.max(per_users);
    (entries >= 4 * size).then_some(size)
}

/// Kinds of entries (by the resources they hold) up to which the path
/// applies: a GPU on some servers makes two.
pub(super) const MAX_KINDS: usize = 8;

/// The groups of entries: each group holds entries of one kind only (the
/// same resources present), so a user runnable on a merged group is
/// runnable on each of its entries. Per kind, `len / entries` groups
/// rounded up, its entries sorted by the angle of their capacity (per
/// unit of total capacity) from the first resource and dealt in turn.
/// `None` where there are more than [`MAX_KINDS`] kinds or fewer than
/// two groups of `entries`.
pub(super) fn deal(instance: &Instance, entries: usize) -> Option<Vec<Vec<ServerId>>> {
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
pub(super) fn deal_users(
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
