//! The pooled path's candidate pairs with 2 resources
//! (`lp::pricing::bracketing`) on a GPU shape: every user without a GPU
//! lies along the direction of every server without one. Tied users and
//! entries must be spread over each other (different entries take
//! different tied users, different users different tied entries), not
//! all paired with the first of them; the pooled answer is still the
//! max-min answer, certified.

use leontief_core::Instance;
use leontief_drfh::dominant_sigma;
use leontief_drfh::lp::pricing::bracketing;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_highs::Highs;
use std::collections::HashSet;

/// `nu` users and `k` servers (no two alike); every fifth of each has a
/// GPU.
fn gpu_shape(nu: usize, k: usize) -> Instance {
    let servers: Vec<String> = (0..k)
        .map(|i| {
            let gpu = if i % 5 == 0 { 8 } else { 0 };
            format!(
                r#"{{"name": "s{i}", "capacity": [{}, {gpu}]}}"#,
                16.0 + ((i * 7) % 48) as f64 + i as f64 / 1024.0
            )
        })
        .collect();
    let users: Vec<String> = (0..nu)
        .map(|n| {
            let gpu = if n % 5 == 0 { 1 } else { 0 };
            format!(
                r#"{{"name": "u{n}", "demand": [{}, {gpu}]}}"#,
                0.5 + ((n * 13) % 17) as f64 / 4.0
            )
        })
        .collect();
    Instance::from_json_str(&format!(
        r#"{{"resources": ["cpu", "gpu"], "servers": [{}], "users": [{}]}}"#,
        servers.join(", "),
        users.join(", ")
    ))
    .unwrap()
}

#[test]
fn tied_users_and_entries_are_spread_over_each_other() {
    let (nu, k) = (40, 400);
    let inst = gpu_shape(nu, k);
    let lists = bracketing(&inst, &vec![true; nu], false, 1, 2);
    // The users without a GPU on the servers without one: each of them
    // has candidates there, and the servers they reach are many.
    let plain_users: Vec<usize> = (0..nu).filter(|n| n % 5 != 0).collect();
    let mut reached = HashSet::new();
    for &n in &plain_users {
        let on_plain: Vec<usize> = lists[n]
            .iter()
            .map(|i| i.0)
            .filter(|i| i % 5 != 0)
            .collect();
        assert!(!on_plain.is_empty(), "u{n} has no candidate without a GPU");
        reached.extend(on_plain);
    }
    assert!(
        reached.len() >= k / 2,
        "the users without a GPU reach {} of {} servers without one",
        reached.len(),
        k * 4 / 5
    );
    // No tied user takes most of the servers without a GPU.
    let most = plain_users
        .iter()
        .map(|&n| lists[n].iter().filter(|i| i.0 % 5 != 0).count())
        .max()
        .unwrap();
    assert!(most < k / 4, "one user is a candidate on {most} servers");
}

#[test]
fn the_gpu_shape_is_answered_on_the_pooled_path_and_certified() {
    let inst = gpu_shape(60, 600);
    let sigma = dominant_sigma(&inst);
    let o = lex_max_min(
        &Highs::default(),
        &inst,
        &sigma,
        true,
        &MaxMinSettings::default(),
    )
    .unwrap();
    assert_eq!(o.status, leontief_core::Status::Optimal);
    let rounds: Vec<_> = o.certificates.iter().map(|c| c.to_prices(2)).collect();
    let x = o.tasks.user_totals();
    let c = leontief_audit::max_min_certificate(
        &inst,
        &sigma,
        &x,
        &o.frozen_round,
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(c.ok, "{c:?}");
    assert!(o.path.is_pooled(), "{:?}", o.path);
    // Every pricing pass is recorded with its solve, its pricing and what
    // it added.
    assert_eq!(o.passes.len(), o.pricing_passes);
    assert!(o
        .passes
        .iter()
        .all(|p| p.solve_seconds >= 0.0 && p.pricing_seconds >= 0.0));
}

/// `with_room`: a user that runs on the GPU servers only draws at least
/// `room` times the servers its tasks fill, spread over them (never one
/// without a GPU); a user that runs everywhere draws nothing; a list
/// already long enough is kept as it is.
#[test]
fn users_on_part_of_the_entries_draw_room_for_their_tasks() {
    use leontief_core::ServerId;
    use leontief_drfh::lp::pricing::with_room;
    let (nu, k) = (10, 500);
    let inst = gpu_shape(nu, k);
    let active = vec![true; nu];
    // u0 (a GPU user, 0.5 CPU and 1 GPU a task) with 200 tasks: the 100
    // GPU servers hold 8 GPUs each, so its tasks fill 25 of them.
    let mut tasks = vec![0.0; nu];
    tasks[0] = 200.0;
    tasks[1] = 200.0;
    let mut lists: Vec<Vec<ServerId>> = vec![Vec::new(); nu];
    lists[5] = (0..60).map(|i| ServerId(5 * i)).collect();
    tasks[5] = 8.0;
    with_room(&inst, &active, false, &tasks, 2.0, &mut lists);
    assert!(lists[0].len() >= 50, "u0 drew {}", lists[0].len());
    assert!(
        lists[0].iter().all(|i| i.0 % 5 == 0),
        "u0 off the GPU servers"
    );
    // Spread: its entries reach across the servers, not the first 50.
    assert!(lists[0].iter().any(|i| i.0 >= k / 2), "u0 not spread");
    // u1 runs everywhere (no GPU): nothing drawn.
    assert!(lists[1].is_empty());
    // u5 needs about 2 servers' worth: its 60 stay as they are.
    assert_eq!(lists[5].len(), 60);
    for l in &lists {
        assert!(l.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
    }
}
