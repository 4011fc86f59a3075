//! Step 1: each group merged into a few sub-pools, every user's share of
//! each group it may use found on them at its pooled level.

use super::deal::{deal, deal_users};
use super::levels::{pure_users, tasks_at, used_at};
use super::second_step::{on_groups, FEW_SHORT_RESOURCES};
use crate::lp::part::{part_of, raw_user};
use crate::lp::pricing::angle;
use crate::outcome::{MaxMinOutcome, Path};
use crate::paths::pooled::{at_levels, Pooled, Spent};
use crate::settings::DENSE_BLOCK_USERS;
use leontief_core::{Instance, RawServer, ServerId, Tasks};
use leontief_model::{BackendError, LpBackend, Status};
use std::time::Instant;

/// Groups a user may use in step 1 beyond its own when two left pricing
/// to place it in others.
const MORE_GROUPS: usize = 2;

/// The share of each resource's room at the pooled levels that step 1
/// leaves unused on every group (with more than
/// [`FEW_SHORT_RESOURCES`] resources and more entries than twice the
/// users). With weights and caps on half the users (1,000 x 10,000, 6
/// resources, seed 1), step 1 gave a group users that filled 99.97% of
/// two resources besides the one the levels fill, and the group could not
/// pack them: with 0.5, 41 -> 34 s (2% pure use) and 69 -> 27 s (20 pure
/// users per resource); other shapes within noise. Not used with 2-4
/// resources: there it made weights and caps slower (5.5 -> 9.2 s, m = 4).
const SLACK_KEPT: f64 = 0.5;

/// [`realise`](super::realise) on groups of `entries` entries, each
/// group's first step on `sub_pools` servers.
pub(super) fn realise_on<B: LpBackend>(
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
        None,
        level,
        base,
        level_tolerance,
        &members,
        &first,
        t0,
    )
}
