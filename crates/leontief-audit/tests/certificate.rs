//! The certificate check's round-off allowance: prices far apart across
//! entries must not excuse a real rise on the cheap ones, and the case
//! the allowance exists for (a user whose task takes a sliver of the
//! blocking resource) must still be proved. Float and exact checks alike.

use leontief_audit::exact::exact_certificate;
use leontief_audit::max_min_certificate;
use leontief_core::{Instance, RoundPrices};

/// One round of prices `prices` for every user, frozen in round 1, with
/// shares `sigma x`: the float check's violations (empty when it holds)
/// and the exact check's verdict.
fn check(
    inst: &Instance,
    sigma: &[f64],
    tasks: &[Vec<f64>],
    prices: Vec<Vec<f64>>,
    placement: bool,
    tolerance: f64,
) -> (Option<Vec<String>>, bool) {
    let frozen = vec![1; tasks.len()];
    let rounds = vec![RoundPrices {
        round: 1,
        users: (0..tasks.len()).collect(),
        prices,
    }];
    both(inst, sigma, tasks, &frozen, &rounds, placement, tolerance)
}

/// The float and the exact check of `rounds`: the float check's
/// violations (`None` when it holds) and the exact verdict.
fn both(
    inst: &Instance,
    sigma: &[f64],
    tasks: &[Vec<f64>],
    frozen: &[usize],
    rounds: &[RoundPrices],
    placement: bool,
    tolerance: f64,
) -> (Option<Vec<String>>, bool) {
    let user_tasks: Vec<f64> = tasks.iter().map(|row| row.iter().sum()).collect();
    let tasks = &leontief_core::Tasks::from(tasks.to_vec());
    let float = max_min_certificate(
        inst,
        sigma,
        &user_tasks,
        frozen,
        rounds,
        placement,
        1e-7,
        tolerance,
    );
    let exact = exact_certificate(
        inst,
        false,
        sigma,
        tasks,
        &user_tasks,
        frozen,
        rounds,
        placement,
        1e-7,
        tolerance,
    );
    ((!float.ok).then_some(float.violations), exact.ok)
}

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
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 0.5]];
    let (float, exact) = check(
        &inst,
        &[1.0, 2.0],
        &tasks,
        vec![vec![1e13], vec![1.0]],
        true,
        1e-6,
    );
    let violations = float.expect("the float check refuses it");
    assert!(
        violations.iter().any(|v| v.contains("u2")),
        "{violations:?}"
    );
    assert!(!exact);
    // The honest answer: u2 at 1 task, both servers full, prices 1 and 1
    // prove both users.
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    let (float, exact) = check(
        &inst,
        &[1.0, 1.0],
        &tasks,
        vec![vec![1.0], vec![1.0]],
        true,
        1e-6,
    );
    assert_eq!(float, None);
    assert!(exact);
}

/// Prices of zero bound nobody: a round whose prices are all zero proves
/// no user (the room and its round-off allowance were both zero and read
/// as proved by the float check), even where the answer is right.
#[test]
fn zero_prices_prove_nobody() {
    let inst = two_servers();
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    let (float, exact) = check(
        &inst,
        &[1.0, 1.0],
        &tasks,
        vec![vec![0.0], vec![0.0]],
        true,
        1e-6,
    );
    let violations = float.expect("the float check refuses it");
    assert!(
        violations
            .iter()
            .any(|v| v.contains("u1") && v.contains("no priced task")),
        "{violations:?}"
    );
    assert!(!exact);
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
    // Both at level x (shares sigma = 1): x + 1e-11 x = 1 in memory, one
    // ulp below the exact fill (the room that rounding leaves).
    let x: f64 = 1.0 / (1.0 + 1e-11);
    let x = f64::from_bits(x.to_bits() - 1);
    let (float, exact) = check(
        &inst,
        &[1.0, 1.0],
        &[vec![x], vec![x]],
        vec![vec![0.0, 1.0]],
        false,
        1e-12,
    );
    assert_eq!(float, None);
    assert!(exact);
}

/// Two rounds' certificates, float and exact checks: violations of the
/// float check (empty when it holds) and the exact verdict.
fn check_rounds(
    inst: &Instance,
    sigma: &[f64],
    tasks: &[Vec<f64>],
    frozen: &[usize],
    rounds: &[RoundPrices],
) -> (Vec<String>, bool) {
    let (violations, exact) = both(inst, sigma, tasks, frozen, rounds, true, 1e-6);
    (violations.unwrap_or_default(), exact)
}

/// Two servers of two resources, s1 (capacity 1) and s2 (capacity 10);
/// u1 may run on s1 only, u2 anywhere; both demand one of each. The
/// answer: u1 fills s1 (level 1, round 1), u2 fills s2 (level 10, round
/// 2). `cap`: u1's task cap.
fn small_and_large(cap: Option<f64>) -> Instance {
    let cap = cap.map_or(String::new(), |c| format!(r#", "tasks": {c}"#));
    Instance::from_json_str(&format!(
        r#"{{"resources": ["cpu", "mem"],
            "servers": [{{"name": "s1", "capacity": [1, 1]}}, {{"name": "s2", "capacity": [10, 10]}}],
            "users": [{{"name": "u1", "demand": [1, 1], "servers": ["s1"]{cap}}},
                      {{"name": "u2", "demand": [1, 1]}}]}}"#
    ))
    .unwrap()
}

/// Round 2's prices price s1 at 0: over every pair u2 could take s1 for
/// free, and the bound proves nothing; but u1 ends below its cap and
/// lower than u2 on s1, so the lexicographic max-min keeps u2 off s1 (the
/// closure rule), and over the pairs it leaves open the same prices prove
/// u2. With u1 at its cap (u1 could not use more of s1), the rule does
/// not apply and the same prices are refused; so is u2 holding 1% less.
#[test]
fn a_round_is_proved_on_the_entries_a_lower_user_closes() {
    let tasks = vec![vec![1.0, 0.0], vec![0.0, 10.0]];
    let frozen = [1, 2];
    let rounds = [
        RoundPrices {
            round: 1,
            users: vec![0],
            prices: vec![vec![1.0, 0.0], vec![0.0, 0.0]],
        },
        RoundPrices {
            round: 2,
            users: vec![1],
            prices: vec![vec![0.0, 0.0], vec![0.1, 0.0]],
        },
    ];
    let sigma = [1.0, 1.0];
    let (violations, exact) =
        check_rounds(&small_and_large(None), &sigma, &tasks, &frozen, &rounds);
    assert!(violations.is_empty(), "{violations:?}");
    assert!(exact);
    let (violations, exact) = check_rounds(
        &small_and_large(Some(1.0)),
        &sigma,
        &tasks,
        &frozen,
        &rounds,
    );
    assert!(
        violations.iter().any(|v| v.contains("round 2")),
        "{violations:?}"
    );
    assert!(!exact);
    let less = vec![vec![1.0, 0.0], vec![0.0, 9.9]];
    let (violations, exact) = check_rounds(&small_and_large(None), &sigma, &less, &frozen, &rounds);
    assert!(!violations.is_empty());
    assert!(!exact);
}
