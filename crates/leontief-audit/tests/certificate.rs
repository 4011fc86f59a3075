//! The certificate check's round-off allowance: prices far apart across
//! entries must not excuse a real rise on the cheap ones, and the case
//! the allowance exists for (a user whose task takes a sliver of the
//! blocking resource) must still be proved. Float and exact checks alike.

use leontief_audit::exact::exact_certificate;
use leontief_audit::max_min_certificate;
use leontief_core::{Instance, RoundPrices};

/// Two servers of one resource, capacity 1 each; u1 may run on s1 only,
/// u2 anywhere.
fn two_servers() -> Instance {
    Instance::from_json_str(
        r#"{"resources": ["cpu"],
            "servers": [{"name": "s1", "capacity": [1]}, {"name": "s2", "capacity": [1]}],
            "users": [{"name": "u1", "demand": [1], "servers": ["s1"]},
                      {"name": "u2", "demand": [1]}]}"#,
    )
    .unwrap()
}

/// u1 fills s1, u2 holds half of s2 (s2 half empty: u2 could double). The
/// shares make both levels 1 (sigma 1 and 2). Prices 1e13 on s1 and 1 on
/// s2 leave room 0.5 for u2: 1 of its own priced tasks, but within 1e-12
/// of the priced capacity C(p) = 1e13 + 1, which the allowance read as
/// round-off before.
#[test]
fn prices_far_apart_do_not_excuse_a_half_empty_server() {
    let inst = two_servers();
    let sigma = [1.0, 2.0];
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 0.5]];
    let user_tasks = [1.0, 0.5];
    let rounds = vec![RoundPrices {
        round: 1,
        users: vec![0, 1],
        prices: vec![vec![1e13], vec![1.0]],
    }];
    let float = max_min_certificate(
        &inst,
        &sigma,
        &user_tasks,
        &[1, 1],
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(!float.ok, "{float:?}");
    assert!(
        float.violations.iter().any(|v| v.contains("u2")),
        "{float:?}"
    );
    let exact = exact_certificate(
        &inst,
        false,
        &sigma,
        &tasks,
        &user_tasks,
        &[1, 1],
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(!exact.ok, "{exact:?}");
    // The honest certificate: s2 is not full, so its price is 0 and u2 is
    // proved by nothing; with u2 at 1 task both servers are full and
    // prices 1 and 1 prove both users.
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    let user_tasks = [1.0, 1.0];
    let sigma = [1.0, 1.0];
    let rounds = vec![RoundPrices {
        round: 1,
        users: vec![0, 1],
        prices: vec![vec![1.0], vec![1.0]],
    }];
    let float = max_min_certificate(
        &inst,
        &sigma,
        &user_tasks,
        &[1, 1],
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(float.ok, "{float:?}");
    let exact = exact_certificate(
        &inst,
        false,
        &sigma,
        &tasks,
        &user_tasks,
        &[1, 1],
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(exact.ok, "{exact:?}");
}

/// The case the allowance is for: one server [10 cpu, 1 mem]; u1's task
/// takes [1, 1], u2's [1, 1e-11] (a sliver of memory, the blocking
/// resource; cpu is plentiful). Memory is full to the last bit the
/// printed task counts can say; the room left by their rounding, relative
/// to u2's tiny priced tasks, is large, but it is far below 1e-12 of the
/// memory valued at u2's own prices: proved.
#[test]
fn a_sliver_of_the_blocking_resource_is_still_proved() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [10, 1]}],
            "users": [{"name": "u1", "demand": [1, 1]},
                      {"name": "u2", "demand": [1, 1e-11]}]}"#,
    )
    .unwrap();
    // Both at level x (shares sigma = 1): x + 1e-11 x = 1 in memory.
    let x: f64 = 1.0 / (1.0 + 1e-11);
    // One ulp below the exact fill: the room that rounding leaves.
    let x = f64::from_bits(x.to_bits() - 1);
    let sigma = [1.0, 1.0];
    let tasks = vec![vec![x], vec![x]];
    let user_tasks = [x, x];
    let rounds = vec![RoundPrices {
        round: 1,
        users: vec![0, 1],
        prices: vec![vec![0.0, 1.0]],
    }];
    let float = max_min_certificate(
        &inst,
        &sigma,
        &user_tasks,
        &[1, 1],
        &rounds,
        false,
        1e-7,
        1e-12,
    );
    assert!(float.ok, "{float:?}");
    let exact = exact_certificate(
        &inst,
        false,
        &sigma,
        &tasks,
        &user_tasks,
        &[1, 1],
        &rounds,
        false,
        1e-7,
        1e-12,
    );
    assert!(exact.ok, "{exact:?}");
}
