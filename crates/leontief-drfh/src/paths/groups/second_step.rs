//! Step 2: each group's users realise their shares on the group's own
//! entries; a group that falls short is solved again with the next
//! cluster of groups.

use super::deal::auto;
use crate::lp::build::build;
use crate::lp::finish::finish;
use crate::lp::idle::fill_idle;
use crate::lp::part::{part_of, raw_servers, raw_user};
use crate::lp::proof::proved;
use crate::outcome::{MaxMinOutcome, Path};
use crate::paths::pooled::{at_levels, candidates, Pooled, Spent};
use leontief_core::{Instance, ServerId, Tasks};
use leontief_model::{BackendError, LpBackend, Status};
use rayon::prelude::*;
use std::time::Instant;

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
///
/// [`pure_users`]: super::levels::pure_users
/// [`SLACK_KEPT`]: super::first_step::SLACK_KEPT
pub(super) const FEW_SHORT_RESOURCES: usize = 4;

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

/// The groups path on a part of the instance (`super::realise`): the
/// entries dealt into groups of `entries`, each user at its pooled
/// `level` (`base`: the part's pooled rounds).
pub(super) type Regroup<B> = fn(
    &B,
    &Instance,
    &[f64],
    &[f64],
    &MaxMinOutcome,
    f64,
    usize,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError>;

/// Realise on the entries of the groups in `cluster` the tasks step 1
/// gave their users there (`shares[n][g]`); `None` when it falls short.
/// `regroup`: where the groups are those the placement lists hold alike,
/// the groups path, run again within a cluster that no list divides.
#[allow(clippy::too_many_arguments)]
fn on_entries<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    regroup: Option<Regroup<B>>,
    members: &[Vec<ServerId>],
    shares: &Tasks,
    cluster: &[usize],
    level_tolerance: f64,
) -> Result<Result<Part, Spent>, BackendError> {
    let placement = regroup.is_some();
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
    // one level deep: inside, step 2 is given no `regroup`.
    let mut spent = Spent::default();
    if let Some(again) = regroup.filter(|_| !sub.has_placement()) {
        if let Some(size) = auto(sub.num_entries(), users.len()) {
            match again(backend, &sub, &sig, &want, &start, level_tolerance, size)? {
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

/// Step 2 of [`realise`](super::realise) and of
/// [`realise_on_lists`](super::realise_on_lists) (see there).
#[allow(clippy::too_many_arguments)]
pub(super) fn on_groups<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    regroup: Option<Regroup<B>>,
    level: &[f64],
    base: &MaxMinOutcome,
    level_tolerance: f64,
    members: &[Vec<ServerId>],
    first: &MaxMinOutcome,
    t0: Instant,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let placement = regroup.is_some();
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
            regroup,
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
