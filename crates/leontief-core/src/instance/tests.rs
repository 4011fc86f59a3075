use super::*;

fn inst(servers: &str, users: &str) -> Instance {
    Instance::from_json_str(&format!(
        r#"{{"resources": ["cpu", "mem"], "servers": [{servers}], "users": [{users}]}}"#
    ))
    .unwrap()
}

#[test]
fn eligible_pairs_count_placement_lists() {
    let servers = r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 1]}, {"name": "v", "capacity": [1, 1]}"#;
    let free = r#"{"name": "a", "demand": [1, 1]}"#;
    let listed = r#"{"name": "b", "demand": [1, 1], "servers": ["t"]}"#;
    assert_eq!(inst(servers, free).num_eligible_pairs(), 3);
    assert_eq!(
        inst(servers, &format!("{free}, {listed}")).num_eligible_pairs(),
        4
    );
    assert_eq!(inst(servers, listed).num_eligible_pairs(), 1);
    // Runnable: the list (or every entry) where the demand fits.
    let i = inst(
        r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [0, 1]}, {"name": "v", "capacity": [1, 1]}"#,
        r#"{"name": "a", "demand": [1, 1]}, {"name": "b", "demand": [1, 1], "servers": ["t", "v"]}, {"name": "c", "demand": [0, 1], "servers": ["t"]}"#,
    );
    let ids = |n: usize, p: bool| -> Vec<usize> {
        i.runnable_entries(UserId(n), p).map(|s| s.0).collect()
    };
    assert_eq!(ids(0, true), vec![0, 2]);
    assert_eq!(ids(1, true), vec![2]);
    assert_eq!(ids(1, false), vec![0, 2]);
    assert_eq!(ids(2, true), vec![1]);
    for n in 0..3 {
        for p in [true, false] {
            let scan: Vec<usize> = i
                .server_ids()
                .filter(|&s| {
                    (!p || i.eligible(UserId(n), s))
                        && i.users()[n]
                            .demand
                            .iter()
                            .zip(i.class_capacities(s))
                            .all(|(&d, &c)| d == 0.0 || c > 0.0)
                })
                .map(|s| s.0)
                .collect();
            assert_eq!(ids(n, p), scan);
        }
    }
}

#[test]
fn proportional_entries_pool_exactly_and_others_do_not() {
    let u = r#"{"name": "a", "demand": [1, 1]}"#;
    // One entry, classes with counts, and proportional capacities.
    assert!(inst(r#"{"name": "s", "capacity": [4, 2]}"#, u).pools_exactly());
    assert!(inst(
        r#"{"name": "s", "capacity": [4, 2], "count": 3}, {"name": "t", "capacity": [2, 1]}"#,
        u
    )
    .pools_exactly());
    // Not proportional: per-server rows bind differently from the pool.
    assert!(!inst(
        r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 2]}"#,
        u
    )
    .pools_exactly());
    // Placement lists: never.
    assert!(!inst(
        r#"{"name": "s", "capacity": [4, 2]}, {"name": "t", "capacity": [2, 1]}"#,
        r#"{"name": "a", "demand": [1, 1], "servers": ["s"]}"#
    )
    .pools_exactly());
}
