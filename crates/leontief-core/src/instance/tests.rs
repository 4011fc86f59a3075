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

/// The instance as the tracked parse reads it (`RawInstance`, then
/// [`Instance::new`]), the errors as text.
fn tracked(text: &str) -> Result<Instance, String> {
    let raw: RawInstance = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Instance::new(raw).map_err(|e| e.to_string())
}

#[test]
fn the_borrowed_parse_reads_every_example_as_the_tracked_one() {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples");
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name.ends_with(".expected.json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let want = tracked(&text);
        let got = Instance::from_json_str(&text).map_err(|e| e.to_string());
        assert_eq!(got.is_ok(), want.is_ok(), "{name}");
        if let (Ok(g), Ok(w)) = (&got, &want) {
            assert_eq!(g, w, "{name}");
        }
        read += 1;
    }
    assert!(
        read >= 10,
        "only {read} examples read from {}",
        dir.display()
    );
}

#[test]
fn the_borrowed_parse_reads_generated_placement_lists_as_the_tracked_one() {
    for seed in 1..=3 {
        let i = crate::generate::placement(30, 40, 6, 7, seed);
        let text = serde_json::to_string(&i.to_raw()).unwrap();
        assert!(text.contains("\"servers\":[\"s"), "lists written");
        assert_eq!(Instance::from_json_str(&text).unwrap(), i);
        assert_eq!(tracked(&text).unwrap(), i);
    }
}

#[test]
fn listed_names_with_escapes_are_read() {
    let servers =
        r#"{"name": "a\"b", "capacity": [4, 2]}, {"name": "c\u0064", "capacity": [2, 1]}"#;
    let listed = r#"{"name": "u", "demand": [1, 1], "servers": ["cd", "a\"b"]}"#;
    let i = inst(servers, listed);
    assert_eq!(i.servers()[0].name, "a\"b");
    assert_eq!(i.num_eligible_pairs(), 2);
}

#[test]
fn bad_lists_and_fields_are_named_on_either_parse() {
    let base = |users: &str| {
        format!(
            r#"{{"resources": ["cpu", "mem"], "servers": [{{"name": "s", "capacity": [4, 2]}}, {{"name": "t", "capacity": [2, 1]}}], "users": [{users}]}}"#
        )
    };
    let twice = base(r#"{"name": "u", "demand": [1, 1], "servers": ["t", "s", "t"]}"#);
    assert_eq!(
        problems(Instance::from_json_str(&twice)),
        ["users[0].servers[2] names server \"t\" twice"]
    );
    let unknown = base(r#"{"name": "u", "demand": [1, 1], "servers": ["s", "x"]}"#);
    assert_eq!(
        problems(Instance::from_json_str(&unknown)),
        ["users[0].servers[1] names unknown server \"x\""]
    );
    let misspelt = base(r#"{"name": "u", "demand": [1, 1], "servers": ["s"], "weigth": 2}"#);
    let e = Instance::from_json_str(&misspelt).unwrap_err().to_string();
    assert!(e.contains("users[0]") && e.contains("weigth"), "{e}");
    let not_a_name = base(r#"{"name": "u", "demand": [1, 1], "servers": ["s", 3]}"#);
    let e = Instance::from_json_str(&not_a_name)
        .unwrap_err()
        .to_string();
    assert!(e.contains("users[0].servers[1]"), "{e}");
    let trailing = format!("{} {{}}", base(r#"{"name": "u", "demand": [1, 1]}"#));
    let e = Instance::from_json_str(&trailing).unwrap_err().to_string();
    assert!(e.contains("trailing"), "{e}");
}
