//! Hand-computed hierarchical allocations.

use leontief_core::Instance;
use leontief_hier::{solve, Variant};
use leontief_highs::Highs;

fn inst(json: &str) -> Instance {
    Instance::from_json_str(json).unwrap()
}

fn run(i: &Instance, v: Variant) -> Vec<f64> {
    let a = solve(&Highs::default(), i, v).unwrap();
    assert_eq!(
        a.status,
        leontief_core::Status::Optimal,
        "{:?}",
        a.backend_status
    );
    a.user_tasks
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-7 * (1.0 + y.abs()), "{a:?} != {b:?}");
    }
}

/// The blocking example of H-DRF (Sec. 4 of the paper; the Volcano design
/// note): after the CPU is used up at 1/3 each, the GPU users n3,2 and n4
/// share the rest equally.
const BLOCKING: &str = r#"{"resources": ["cpu", "gpu"],
  "servers": [{"name": "s", "capacity": [1, 1]}],
  "queues": [{"name": "n3"}],
  "users": [
    {"name": "n1", "demand": [1, 0]},
    {"name": "n2", "demand": [1, 0]},
    {"name": "n3,1", "demand": [1, 0], "queue": "n3"},
    {"name": "n3,2", "demand": [0, 1], "queue": "n3"},
    {"name": "n4", "demand": [0, 1]}]}"#;

#[test]
fn blocking_example() {
    let i = inst(BLOCKING);
    let third = 1.0 / 3.0;
    for v in [Variant::Hdrf, Variant::Hdrfh, Variant::Naive] {
        close(&run(&i, v), &[third, third, third, 0.5, 0.5]);
    }
}

/// Issue 49's worked case: one server (10, 10), two queues of one user
/// each, (1, 0.1) and (0.1, 1), at most 10 tasks: 100/11 tasks each.
#[test]
fn two_queues_complementary() {
    let i = inst(
        r#"{"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10, 10]}],
        "queues": [{"name": "A"}, {"name": "B"}],
        "users": [{"name": "a", "demand": [1, 0.1], "tasks": 10, "queue": "A"},
                  {"name": "b", "demand": [0.1, 1], "tasks": 10, "queue": "B"}]}"#,
    );
    close(&run(&i, Variant::Hdrf), &[100.0 / 11.0, 100.0 / 11.0]);
}

/// Weights split between queues, then within: A (weight 3) and B (weight
/// 1) on one resource of 8; A's two users split A's 6 equally.
#[test]
fn weights_at_two_levels() {
    let i = inst(
        r#"{"resources": ["cpu"], "servers": [{"name": "s", "capacity": [8]}],
        "queues": [{"name": "A", "weight": 3}, {"name": "B"}],
        "users": [{"name": "a1", "demand": [1], "queue": "A"},
                  {"name": "a2", "demand": [1], "queue": "A"},
                  {"name": "b", "demand": [1], "queue": "B", "weight": 5}]}"#,
    );
    close(&run(&i, Variant::Hdrf), &[3.0, 3.0, 2.0]);
}

/// A limit stops a queue; its siblings take the rest. A guarantee fills
/// first: B is guaranteed 6 CPUs of 10 at weight 1 against A's 1.
#[test]
fn limits_and_guarantees() {
    let limited = inst(
        r#"{"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10, 10]}],
        "queues": [{"name": "A", "limit": [2, 10]}, {"name": "B"}],
        "users": [{"name": "a", "demand": [1, 1], "queue": "A"},
                  {"name": "b", "demand": [1, 0.5], "queue": "B"}]}"#,
    );
    close(&run(&limited, Variant::Hdrf), &[2.0, 8.0]);
    let guaranteed = inst(
        r#"{"resources": ["cpu"], "servers": [{"name": "s", "capacity": [10]}],
        "queues": [{"name": "A"}, {"name": "B", "guarantee": [6]}],
        "users": [{"name": "a", "demand": [1], "queue": "A"},
                  {"name": "b", "demand": [1], "queue": "B"}]}"#,
    );
    close(&run(&guaranteed, Variant::Hdrf), &[4.0, 6.0]);
    let small = inst(
        r#"{"resources": ["cpu"], "servers": [{"name": "s", "capacity": [10]}],
        "queues": [{"name": "A"}, {"name": "B", "guarantee": [2]}],
        "users": [{"name": "a", "demand": [1], "queue": "A"},
                  {"name": "b", "demand": [1], "queue": "B"}]}"#,
    );
    close(&run(&small, Variant::Hdrf), &[5.0, 5.0]);
}

/// The check fails a tampered answer: tasks moved between users, a phase
/// that grows a user not at the lowest share, a stop claimed too early.
#[test]
fn the_check_catches_tampering() {
    use leontief_audit::hierarchy::check;
    let h = Highs::default();
    let i = inst(BLOCKING);
    let a = solve(&h, &i, Variant::Hdrf).unwrap();
    assert!(check(&h, &i, &a, false, true).unwrap().ok);
    // Less for n4, the rest of the GPU unused: a GPU user is not stuck.
    let mut b = a.clone();
    b.user_tasks[4] = 0.4;
    b.tasks.set_row(4, vec![(0, 0.4)]);
    let c = check(&h, &i, &b, false, true).unwrap();
    assert!(!c.ok);
    let hc = c.hierarchy.unwrap();
    assert!(
        hc.replay_error > 0.05 && hc.not_stuck.iter().any(|s| s.ends_with("at the end")),
        "{hc:?}"
    );
    // The second phase gives the GPU to n3,2 alone, with the same totals
    // printed: n3,2 is no longer at the lowest share there (n4 is lower).
    let mut b = a.clone();
    let t = b.hierarchy.as_mut().unwrap();
    t.phases[1].users = vec![3];
    t.phases[1].rates = vec![2.0];
    t.phases.push(leontief_core::hierarchy::Phase {
        stage: "fair".into(),
        length: 1.0 / 3.0,
        users: vec![4],
        rates: vec![0.5],
        event: "tampered".into(),
        blocked: vec![],
    });
    b.user_tasks = vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0, 1.0 / 3.0];
    b.tasks = b
        .user_tasks
        .iter()
        .map(|&x| vec![x])
        .collect::<Vec<_>>()
        .into();
    let c = check(&h, &i, &b, false, true).unwrap();
    assert!(!c.ok);
    assert!(!c.hierarchy.unwrap().not_lowest.is_empty());
    // n4 claimed stopped at the start, where it could grow.
    let mut b = a.clone();
    b.hierarchy.as_mut().unwrap().phases[0].blocked = vec![4];
    let c = check(&h, &i, &b, false, true).unwrap();
    assert!(!c.ok);
    assert!(c.hierarchy.unwrap().not_stuck[0].starts_with("n4 at the start of phase 1"));
}

/// Interchangeable servers are solved as classes and split back by count:
/// the same user totals as the instance written with `count`, verified on
/// the servers as listed.
#[test]
fn interchangeable_servers_as_classes() {
    let listed = inst(
        r#"{"resources": ["cpu", "mem"],
        "servers": [{"name": "a", "capacity": [2, 12]}, {"name": "b", "capacity": [2, 12]}, {"name": "c", "capacity": [12, 2]}],
        "queues": [{"name": "Q", "weight": 2}],
        "users": [{"name": "u1", "demand": [0.2, 1], "servers": ["a", "b"], "queue": "Q"},
                  {"name": "u2", "demand": [1, 0.2]},
                  {"name": "u3", "demand": [0.5, 0.5], "queue": "Q", "tasks": 3}]}"#,
    );
    let counted = inst(
        r#"{"resources": ["cpu", "mem"],
        "servers": [{"name": "a", "capacity": [2, 12], "count": 2}, {"name": "c", "capacity": [12, 2]}],
        "queues": [{"name": "Q", "weight": 2}],
        "users": [{"name": "u1", "demand": [0.2, 1], "servers": ["a"], "queue": "Q"},
                  {"name": "u2", "demand": [1, 0.2]},
                  {"name": "u3", "demand": [0.5, 0.5], "queue": "Q", "tasks": 3}]}"#,
    );
    let h = Highs::default();
    let a = solve(&h, &listed, Variant::Hdrfh).unwrap();
    assert!(
        a.notes.iter().any(|n| n.contains("solved as 2 classes")),
        "{:?}",
        a.notes
    );
    close(&a.user_tasks, &run(&counted, Variant::Hdrfh));
    assert_eq!(a.tasks[(0, 0)], a.tasks[(0, 1)]);
    // Why a user stopped, over servers: the resource that fills them.
    assert!(
        a.explanation[1].contains("the fullest of its resources on its"),
        "{:?}",
        a.explanation
    );
    let c = leontief_audit::hierarchy::check(&h, &listed, &a, false, true).unwrap();
    assert!(c.ok, "{c}");
}

/// On heterogeneous servers the pooled filling comes first: when its
/// answer fits the servers it is the hdrfh answer (`on_pool`), checked on
/// the pool for its stops and on the servers for its feasibility; an
/// allocation moved off the servers' capacity fails the check.
#[test]
fn a_pooled_answer_that_fits_the_servers_is_the_hdrfh_answer() {
    let i = inst(
        r#"{"resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [6, 2]}, {"name": "s2", "capacity": [2, 6]}],
        "queues": [{"name": "A"}, {"name": "B"}],
        "users": [{"name": "u1", "demand": [1, 0.1], "queue": "A"},
                  {"name": "u2", "demand": [0.1, 1], "queue": "B"}]}"#,
    );
    let h = Highs::default();
    let a = solve(&h, &i, Variant::Hdrfh).unwrap();
    assert!(a.hierarchy.as_ref().unwrap().on_pool, "{:?}", a.notes);
    assert!(!a.pooled);
    close(&a.user_tasks, &[8.0 / 1.1, 8.0 / 1.1]);
    let c = leontief_audit::hierarchy::check(&h, &i, &a, false, true).unwrap();
    assert!(c.ok, "{c}");
    let mut bad = a.clone();
    bad.tasks.set_row(0, vec![(0, a.user_tasks[0])]);
    bad.tasks.set_row(1, vec![(1, a.user_tasks[1])]);
    let c = leontief_audit::hierarchy::check(&h, &i, &bad, false, true).unwrap();
    assert!(!c.ok, "all of u1 on s1 is over its CPU");
}
