//! The groups path's parts on small instances.

use super::deal::{auto, deal_users, HEAVY_GROUPS, HEAVY_SHARE};
use super::levels::{pure_users, PURE_MOST};
use crate::lp::idle::fill_idle;
use crate::lp::proof::proved;
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
