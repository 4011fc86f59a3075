//! The rounds continued on the live part alone, one connected component
//! at a time: the users not yet in a complete round, on the entries still
//! open to them (placement lists).
//!
//! Once [`crate::lp::closing`] has closed the entries of every complete
//! round's users to the users still rising, and no complete round's user
//! is eligible on an entry a live user may still use, the two parts share
//! nothing: the complete rounds' users keep their allocation, and the
//! rest of the lexicographic max-min is that of the live users on their
//! open entries alone. Live users that share no open entry, directly or
//! through others, do not interact either: each connected component is a
//! max-min problem of its own, solved as its own, smaller LP (and split
//! again as its rounds go on). A component's first round repeats the last
//! round's level if one of that round's users is in it (it freezes them
//! again, and any left to it), and is a higher level otherwise. The
//! components' rounds, merged by level, continue the run's, offset by the
//! rounds before.
//!
//! A component's certificates are over its own entries (prices 0
//! elsewhere). The audit's bound for a user runs over the entries its
//! closure rule leaves open, never more than the component's, and every
//! other user, on none of those entries, adds nothing to either side: the
//! component's own bound.

use leontief_core::{Instance, RawUser, ServerId, Status};

use crate::lp::build::MaxMinLp;
use crate::lp::closing::Closing;
use crate::outcome::{Freeze, MaxMinOutcome, RoundCertificate};

/// One connected component of the live users and their open entries, as
/// an instance of its own.
pub(crate) struct LivePart {
    /// The component as an instance (its users' lists: their open
    /// entries; their weights and caps).
    pub(crate) instance: Instance,
    /// Its users' indices in the whole instance.
    pub(crate) users: Vec<usize>,
    /// Its entries' indices in the whole instance.
    pub(crate) entries: Vec<ServerId>,
}

/// The root of `x` in a union-find forest (with path halving).
fn root(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// The live part after round `round` (the users still `active` or frozen
/// in that round), split into its connected components, largest first.
/// `None` when a complete round's user is eligible on an entry a live
/// user may use (the parts are not apart yet), or a live user has no
/// open entry.
pub(crate) fn parts(
    instance: &Instance,
    mm: &MaxMinLp,
    closing: &Closing,
    active: &[bool],
    frozen_round: &[usize],
    round: usize,
) -> Option<Vec<LivePart>> {
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let live: Vec<bool> = (0..nu)
        .map(|n| mm.runnable[n] && (active[n] || frozen_round[n] == round))
        .collect();
    let mut lists: Vec<Vec<ServerId>> = vec![Vec::new(); nu];
    // Per entry, the first live user on it: the union-find joins the rest.
    let mut first = vec![usize::MAX; k];
    let mut parent: Vec<usize> = (0..nu).collect();
    for n in (0..nu).filter(|&n| live[n]) {
        for &(i, c) in &mm.pairs[n] {
            if closing.is_closed(c) {
                continue;
            }
            if closing.users_on(i.0).iter().any(|&(j, _)| !live[j]) {
                return None;
            }
            lists[n].push(i);
            match first[i.0] {
                usize::MAX => first[i.0] = n,
                f => {
                    let (a, b) = (root(&mut parent, f), root(&mut parent, n));
                    parent[a] = b;
                }
            }
        }
        if lists[n].is_empty() {
            return None;
        }
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); nu];
    for n in (0..nu).filter(|&n| live[n]) {
        let r = root(&mut parent, n);
        members[r].push(n);
    }
    let mut groups: Vec<Vec<usize>> = members.into_iter().filter(|g| !g.is_empty()).collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
    groups
        .into_iter()
        .map(|users| part(instance, &lists, users))
        .collect()
}

/// The component of `users` (their open entries in `lists`) as an
/// instance.
fn part(instance: &Instance, lists: &[Vec<ServerId>], users: Vec<usize>) -> Option<LivePart> {
    let mut entries: Vec<ServerId> = users.iter().flat_map(|&n| lists[n].clone()).collect();
    entries.sort_unstable();
    entries.dedup();
    let servers = crate::lp::part::raw_servers(instance, &entries);
    let raw_users = users
        .iter()
        .map(|&n| {
            let u = &instance.users()[n];
            RawUser {
                queue: None,
                name: u.name.clone(),
                demand: u.demand.clone(),
                weight: Some(u.weight),
                tasks: u.tasks,
                servers: Some(
                    lists[n]
                        .iter()
                        .map(|i| instance.servers()[i.0].name.clone())
                        .collect(),
                ),
                rank_weights: None,
            }
        })
        .collect();
    let raw = crate::lp::part::part_of(instance, servers, raw_users);
    Some(LivePart {
        instance: Instance::new(raw).ok()?,
        users,
        entries,
    })
}

/// Put the components' answers `subs` (one per part) into `out`, already
/// finished at the last round's point (`k` entries of `m` resources):
/// their users' tasks, levels, freezes, rounds and certificates, the
/// components' rounds merged by level after the run's `round - 1`; their
/// solves counted, their statuses merged. A component stopped by a limit
/// before its first LP leaves the run's point, its users still active
/// there rising; one that failed without a point leaves none to the run.
pub(crate) fn merge(
    out: &mut MaxMinOutcome,
    parts: &[LivePart],
    subs: Vec<MaxMinOutcome>,
    round: usize,
    k: usize,
    m: usize,
) {
    let offset = round - 1;
    // The components' rounds, each at its users' lowest level, in order.
    let mut order: Vec<(f64, usize, usize)> = Vec::new();
    for (p, sub) in subs.iter().enumerate() {
        for r in 1..=sub.rounds {
            let level = sub
                .frozen_round
                .iter()
                .zip(&sub.levels)
                .filter(|&(&fr, _)| fr == r)
                .map(|(_, &l)| l)
                .fold(f64::INFINITY, f64::min);
            if level.is_finite() {
                order.push((level, p, r));
            }
        }
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut global: Vec<Vec<usize>> = subs.iter().map(|s| vec![0; s.rounds + 1]).collect();
    for (rank, &(_, p, r)) in order.iter().enumerate() {
        global[p][r] = offset + rank + 1;
    }
    out.certificates.retain(|c| c.round < round);
    let mut failed = false;
    for ((part, sub), global) in parts.iter().zip(subs).zip(&global) {
        let limit = matches!(sub.status, Status::TimeLimit | Status::IterationLimit);
        if sub.tasks.is_empty() {
            failed |= !limit;
            for &n in &part.users {
                if out.frozen_round[n] == 0 || out.frozen_round[n] >= round {
                    out.freeze[n] = Freeze::Rising;
                    out.frozen_round[n] = 0;
                }
            }
        } else {
            for (j, &n) in part.users.iter().enumerate() {
                let row = sub.tasks.row(j);
                out.tasks
                    .set_row(n, row.iter().map(|(e, x)| (part.entries[e].0, x)).collect());
                out.levels[n] = sub.levels[j];
                out.freeze[n] = sub.freeze[j];
                out.frozen_round[n] = global.get(sub.frozen_round[j]).copied().unwrap_or(0);
            }
            for c in sub.certificates {
                let mut prices = vec![0.0; k * m];
                for (e, &i) in part.entries.iter().enumerate() {
                    prices[i.0 * m..(i.0 + 1) * m].copy_from_slice(&c.prices[e * m..(e + 1) * m]);
                }
                out.certificates.push(RoundCertificate {
                    round: global[c.round],
                    prices,
                    users: c.users.iter().map(|&j| part.users[j]).collect(),
                });
            }
        }
        out.lps += sub.lps;
        out.growth_lps += sub.growth_lps;
        out.solve_seconds += sub.solve_seconds;
        out.build_seconds += sub.build_seconds;
        out.columns += sub.columns;
        out.closed_pairs += sub.closed_pairs;
        out.live_parts += 1 + sub.live_parts;
        let worst = out.status.worst(sub.status);
        if worst != out.status {
            out.raw_status = format!(
                "a live part after round {offset} ({} users): {}",
                part.users.len(),
                sub.raw_status
            );
        }
        out.status = worst;
    }
    out.rounds = offset + order.len();
    if failed {
        // Failed without a point: so does the run, as one that fails in a
        // round of its own.
        out.tasks = leontief_core::Tasks::default();
    }
    out.certificates.sort_by_key(|c| c.round);
}
