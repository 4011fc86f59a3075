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

fn queued(queues: &str, users: &str) -> Result<Instance, InstanceError> {
    Instance::from_json_str(&format!(
        r#"{{"resources": ["cpu", "mem"], "servers": [{{"name": "s", "capacity": [10, 10]}}], "users": [{users}], "queues": [{queues}]}}"#
    ))
}

fn problems(r: Result<Instance, InstanceError>) -> Vec<String> {
    r.expect_err("the instance is refused")
        .issues()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn queues_are_read_and_round_trip() {
    let i = queued(
        r#"{"name": "A", "weight": 2, "guarantee": [4, 4], "limit": [8, 8]}, {"name": "A1", "parent": "A"}"#,
        r#"{"name": "u", "demand": [1, 1], "queue": "A1"}, {"name": "v", "demand": [1, 2]}"#,
    )
    .unwrap();
    assert_eq!(i.queues().len(), 2);
    assert_eq!(i.queues()[1].parent, Some(0));
    assert_eq!(i.queues()[0].weight, 2.0);
    assert_eq!(i.user_queue(UserId(0)), Some(1));
    assert_eq!(i.user_queue(UserId(1)), None);
    assert_eq!(Instance::new(i.to_raw()).unwrap(), i);
    // Units: guarantees and limits scale with their resource.
    let r = i.rescaled(&[2.0, 0.5]);
    assert_eq!(r.queues()[0].limit.as_deref(), Some(&[16.0, 4.0][..]));
}

#[test]
fn bad_queues_are_named() {
    let p = problems(queued(
        r#"{"name": "A", "parent": "B"}, {"name": "B", "parent": "A"}"#,
        r#"{"name": "u", "demand": [1, 1], "queue": "A"}"#,
    ));
    assert!(
        p.iter()
            .any(|s| s.starts_with("queues[0].parent makes a cycle")),
        "{p:?}"
    );
    let p = problems(queued(
        r#"{"name": "A", "parent": "Z"}, {"name": "A"}"#,
        r#"{"name": "u", "demand": [1, 1], "queue": "Q"}"#,
    ));
    assert!(
        p.contains(&"queues[0].parent names unknown queue \"Z\"".to_string()),
        "{p:?}"
    );
    assert!(p.iter().any(|s| s.starts_with("queues[1].name")), "{p:?}");
    assert!(
        p.contains(&"users[0].queue names unknown queue \"Q\"".to_string()),
        "{p:?}"
    );
    let p = problems(queued(
        r#"{"name": "A", "guarantee": [5, 1], "limit": [4, 2], "weight": -1}, {"name": "B", "limit": [1, NaN]}"#,
        r#"{"name": "u", "demand": [1, 1]}"#,
    ));
    // NaN is not JSON: the parse names where.
    assert!(!p.is_empty());
    let p = problems(queued(
        r#"{"name": "A", "guarantee": [5, 1], "limit": [4, 2], "weight": -1}, {"name": "B", "limit": [1, -2]}"#,
        r#"{"name": "u", "demand": [1, 1]}"#,
    ));
    assert!(
        p.iter()
            .any(|s| s.starts_with("queues[0].guarantee[0] (5) is above queues[0].limit[0] (4)")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|s| s.starts_with("queues[0].weight must be > 0")),
        "{p:?}"
    );
    assert!(
        p.contains(&"queues[1].limit[1] is negative (-2)".to_string()),
        "{p:?}"
    );
    // Siblings guaranteed more than their parent, or the root's children
    // more than the cluster.
    let p = problems(queued(
        r#"{"name": "A", "guarantee": [4, 4]}, {"name": "A1", "parent": "A", "guarantee": [3, 0]}, {"name": "A2", "parent": "A", "guarantee": [2, 0]}, {"name": "B", "guarantee": [0, 7]}"#,
        r#"{"name": "u", "demand": [1, 1]}"#,
    ));
    assert!(
        p.iter()
            .any(|s| s
                .starts_with("queues[0].guarantee the children of \"A\" are guaranteed 5 of cpu")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|s| s.starts_with("queues the root's children are guaranteed 11 of mem")),
        "{p:?}"
    );
}
