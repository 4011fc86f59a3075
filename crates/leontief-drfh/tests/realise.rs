//! `paths::realise`: user totals placed on the servers by the pooled
//! path's LP, or refused when they do not fit.

use leontief_core::Instance;
use leontief_drfh::paths::realise::realise;
use leontief_highs::Highs;

fn inst(json: &str) -> Instance {
    Instance::from_json_str(json).unwrap()
}

const TWO: &str = r#"{"resources": ["cpu", "mem"],
    "servers": [{"name": "s1", "capacity": [6, 2]}, {"name": "s2", "capacity": [2, 6]}],
    "users": [{"name": "u1", "demand": [1, 0.1]}, {"name": "u2", "demand": [0.1, 1]}]}"#;

#[test]
fn totals_that_fit_are_placed_within_every_capacity() {
    let i = inst(TWO);
    let x = [8.0 / 1.1, 8.0 / 1.1];
    let placed = realise(&Highs::default(), &i, &x).unwrap();
    let tasks = placed
        .tasks
        .expect("the pooled DRF answer fits these servers");
    for (n, want) in x.into_iter().enumerate() {
        let got = tasks.user_total(n);
        assert!((got - want).abs() <= 1e-9 * want, "{got} {want}");
    }
    for (e, s) in i.servers().iter().enumerate() {
        for r in 0..2 {
            let used: f64 = (0..2).map(|u| tasks[(u, e)] * i.users()[u].demand[r]).sum();
            assert!(
                used <= s.capacity[r] * (1.0 + 1e-9),
                "server {e} resource {r}: {used}"
            );
        }
    }
}

#[test]
fn totals_that_do_not_fit_are_refused() {
    // u1 may run only on s2 (2 CPUs): 3 tasks of 1 CPU do not fit there,
    // though the pool holds them.
    let i = inst(
        r#"{"resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [6, 2]}, {"name": "s2", "capacity": [2, 6]}],
        "users": [{"name": "u1", "demand": [1, 0.1], "servers": ["s2"]}, {"name": "u2", "demand": [0.1, 1]}]}"#,
    );
    let placed = realise(&Highs::default(), &i, &[3.0, 1.0]).unwrap();
    assert!(placed.tasks.is_none());
}
