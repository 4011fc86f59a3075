//! Hand-solved instances with their edge-case twins, and the scale family.

use leontief_core::{Instance, RawInstance, RawServer, RawUser, Status};
use leontief_drfh::maxmin::{Freeze, MaxMinSettings};
use leontief_drfh::{drf, drfh, kdf, naive_drf, nfc, tsf};
use leontief_highs::Highs;

fn inst(json: &str) -> Instance {
    Instance::from_json_str(json).unwrap()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

const FIG1: &str = r#"{"resources": ["cpu", "mem"],
  "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
  "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]}"#;

#[test]
fn fig1_drfh_places_each_user_on_its_server() {
    let a = drfh(&Highs::default(), &inst(FIG1), &MaxMinSettings::default()).unwrap();
    assert_eq!(a.status, Status::Optimal);
    assert_close(&a.user_tasks, &[10.0, 10.0], 1e-9);
    assert!((a.objective.unwrap() - 5.0 / 7.0).abs() < 1e-9);
    assert_eq!(a.frozen_round, Some(vec![1, 1]));
}

#[test]
fn a_resource_nobody_demands_changes_nothing() {
    let twin = inst(
        r#"{"resources": ["cpu", "gpu", "mem"],
        "servers": [{"name": "s1", "capacity": [2, 4, 12]}, {"name": "s2", "capacity": [12, 0, 2]}],
        "users": [{"name": "u1", "demand": [0.2, 0, 1]}, {"name": "u2", "demand": [1, 0, 0.2]}]}"#,
    );
    let h = Highs::default();
    let s = MaxMinSettings::default();
    let solve = |name: &str, i: &Instance| match name {
        "drf" => drf(i),
        "drfh" => drfh(&h, i, &s).unwrap(),
        "kdf" => kdf(&h, i, 2, &s).unwrap(),
        "naive-drf" => naive_drf(i),
        "nfc" => nfc(&h, i).unwrap(),
        _ => tsf(&h, i, &s).unwrap(),
    };
    for m in ["drf", "drfh", "kdf", "naive-drf", "nfc", "tsf"] {
        let a = solve(m, &twin);
        let b = solve(m, &inst(FIG1));
        assert_close(&a.user_tasks, &b.user_tasks, 1e-9);
        assert_eq!(a.metrics.utilisation[1], 0.0, "{m}");
    }
}

#[test]
fn a_user_whose_servers_lack_a_resource_gets_zero_and_says_why() {
    let i = inst(
        r#"{"resources": ["cpu", "mem", "gpu"],
        "servers": [{"name": "s1", "capacity": [2, 12, 1]}, {"name": "s2", "capacity": [12, 2, 0]}],
        "users": [{"name": "u1", "demand": [0.2, 1, 0]}, {"name": "u2", "demand": [1, 0.2, 0]},
                  {"name": "u3", "demand": [1, 1, 0.5], "servers": ["s2"]}]}"#,
    );
    let a = drfh(&Highs::default(), &i, &MaxMinSettings::default()).unwrap();
    assert_close(&a.user_tasks, &[10.0, 10.0, 0.0], 1e-9);
    assert_eq!(a.frozen_round.as_ref().unwrap()[2], 0);
    assert!(a.explanation[2].contains("gpu"), "{}", a.explanation[2]);
    // Without the placement list it runs on s1 and everyone shares.
    let free = inst(
        &serde_json::to_string(&{
            let mut r = i.to_raw();
            r.users[2].servers = None;
            r
        })
        .unwrap(),
    );
    let b = drfh(&Highs::default(), &free, &MaxMinSettings::default()).unwrap();
    assert!(b.user_tasks[2] > 0.1);
}

#[test]
fn a_binding_task_cap_frees_capacity_for_the_others() {
    // Fig. 1 with u1 capped at 4 tasks: u1 is frozen at its cap in round 1
    // and u2 rises to 11.2 (the reference value of the drfh-fig1-tasks case).
    let i = inst(
        r#"{"resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
        "users": [{"name": "u1", "demand": [0.2, 1], "tasks": 4}, {"name": "u2", "demand": [1, 0.2]}]}"#,
    );
    let h = Highs::default();
    let a = drfh(&h, &i, &MaxMinSettings::default()).unwrap();
    assert_close(&a.user_tasks, &[4.0, 11.2], 1e-8);
    assert!(
        a.explanation[0].contains("task cap"),
        "{}",
        a.explanation[0]
    );
    let o = leontief_drfh::maxmin::lex_max_min(
        &h,
        &i,
        &leontief_drfh::dominant_sigma(&i),
        true,
        &MaxMinSettings::default(),
    )
    .unwrap();
    assert_eq!(o.freeze[0], Freeze::Capped);
    assert_eq!(o.freeze[1], Freeze::Blocked);
    assert_eq!(o.frozen_round, vec![1, 2]);
}

#[test]
fn weights_scale_levels() {
    // One server (10, 10), two identical users, weights 1 and 3: 1:3 split.
    let i = inst(
        r#"{"resources": ["a", "b"], "servers": [{"name": "s", "capacity": [10, 10]}],
        "users": [{"name": "u1", "demand": [1, 1]}, {"name": "u2", "demand": [1, 1], "weight": 3}]}"#,
    );
    let h = Highs::default();
    assert_close(&drf(&i).user_tasks, &[2.5, 7.5], 1e-12);
    assert_close(
        &drfh(&h, &i, &MaxMinSettings::default()).unwrap().user_tasks,
        &[2.5, 7.5],
        1e-9,
    );
    assert_close(
        &kdf(&h, &i, 2, &MaxMinSettings::default())
            .unwrap()
            .user_tasks,
        &[2.5, 7.5],
        1e-12,
    );
}

#[test]
fn kdf_rank_weights_are_honoured() {
    // 2-DF example (001, Sec. I-A) with user 1's second rank weighted 2:
    // sigma_1 = 0.2 * (2 * 0.04) = 0.016, sigma_2 = 0.001, so x2 = 16 x1 and
    // cpu 40 x1 + 8 * 16 x1 = 200: x1 = 200/168.
    let i = inst(
        r#"{"resources": ["r1", "r2", "r3"], "servers": [{"name": "s", "capacity": [200, 200, 200]}],
        "users": [{"name": "u1", "demand": [40, 8, 8], "rank_weights": [1, 2]}, {"name": "u2", "demand": [8, 5, 1]}]}"#,
    );
    let a = kdf(&Highs::default(), &i, 2, &MaxMinSettings::default()).unwrap();
    assert_close(&a.user_tasks, &[200.0 / 168.0, 16.0 * 200.0 / 168.0], 1e-12);
}

#[test]
fn kdf_refuses_k_zero() {
    let e = kdf(
        &Highs::default(),
        &inst(FIG1),
        0,
        &MaxMinSettings::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--k"), "{e}");
}

#[test]
fn drf_on_several_servers_says_it_pools() {
    let a = drf(&inst(FIG1));
    assert!(a.pooled);
    assert!(a.notes.iter().any(|n| n.contains("pools")));
    // Pooled: (14, 14) capacity, DRF gives 70/6 each... both mu = 1/14:
    // 0.2x + x = 14 => x = 35/3.
    assert_close(&a.user_tasks, &[35.0 / 3.0, 35.0 / 3.0], 1e-12);
}

#[test]
fn naive_drf_reproduces_fig2_per_server() {
    let a = naive_drf(&inst(FIG1));
    assert_eq!(a.tasks.to_dense(), vec![vec![5.0, 1.0], vec![1.0, 5.0]]);
}

#[test]
fn nfc_reports_the_unique_total_with_a_certificate() {
    let a = nfc(&Highs::default(), &inst(FIG1)).unwrap();
    assert!((a.objective.unwrap() - 20.0).abs() < 1e-9);
    assert!(a.verification.as_ref().unwrap().ok);
}

fn identical(n_entries: usize, count: Option<u64>) -> Instance {
    let raw = RawInstance {
        queues: None,
        quantum: None,
        name: None,
        description: None,
        resources: vec!["cpu".into(), "mem".into(), "disk".into()],
        servers: (0..n_entries)
            .map(|i| RawServer {
                name: format!("s{i}"),
                capacity: vec![1.0, 2.0, 0.5],
                count,
            })
            .collect(),
        users: [[0.01, 0.05, 0.0], [0.03, 0.01, 0.001], [0.02, 0.02, 0.002]]
            .iter()
            .enumerate()
            .map(|(n, d)| RawUser {
                queue: None,
                name: format!("u{n}"),
                demand: d.to_vec(),
                weight: Some(1.0 + n as f64),
                tasks: (n == 0).then_some(1e5),
                servers: None,
                rank_weights: None,
            })
            .collect(),
    };
    Instance::new(raw).unwrap()
}

#[test]
fn ten_thousand_identical_servers_as_a_class_as_entries_and_pooled_agree() {
    let h = Highs::default();
    let s = MaxMinSettings::default();
    let class = drfh(&h, &identical(1, Some(10_000)), &s).unwrap();
    let entries = drfh(&h, &identical(10_000, None), &s).unwrap();
    let pooled = drf(&identical(1, Some(10_000)));
    assert_eq!(class.status, Status::Optimal);
    assert_eq!(entries.status, Status::Optimal);
    assert_close(&class.user_tasks, &pooled.user_tasks, 1e-7);
    assert_close(&entries.user_tasks, &pooled.user_tasks, 1e-7);
    // The class stays one block: one entry in `tasks`, its total.
    assert_eq!(class.tasks.servers(), 1);
    assert_eq!(entries.tasks.servers(), 10_000);
}

#[test]
fn interior_point_and_simplex_agree_and_both_certify() {
    // 20 users on 600 distinct servers: 12,000 columns, so Auto runs IPM.
    use leontief_highs::{Algorithm, HighsSettings};
    let i = leontief_core::generate::heterogeneous(20, 600, 2, 7);
    let s = MaxMinSettings::default();
    let sigma = leontief_drfh::dominant_sigma(&i);
    let mut results = Vec::new();
    for algorithm in [
        Algorithm::Auto,
        Algorithm::Simplex,
        Algorithm::InteriorPoint,
    ] {
        let h = Highs::new(HighsSettings {
            algorithm,
            ..Default::default()
        })
        .unwrap();
        let a = drfh(&h, &i, &s).unwrap();
        assert_eq!(a.status, Status::Optimal, "{algorithm:?}");
        let c = leontief_audit::max_min(&h, &i, &sigma, &a.user_tasks, true, &Default::default())
            .unwrap();
        assert!(c.ok, "{algorithm:?}: {c:?}");
        results.push(a.user_tasks);
    }
    assert_close(&results[0], &results[1], 1e-7);
    assert_close(&results[2], &results[1], 1e-7);
}

/// Two resources saturated to 1e-16 across two placement-restricted
/// users (found by the k-DF property test): HiGHS's presolve called the
/// per-user max-min check's LP infeasible, so a right answer failed its
/// check; the check now solves such an LP again without presolve.
#[test]
fn a_saturated_kdf_answer_passes_the_per_user_check() {
    let i = inst(
        r#"{"resources": ["r0","r1","r2"],
        "servers": [{"name":"s0","capacity":[5.478123993251894, 6.025291830035078, 6.186621665432965],"count":2},
                    {"name":"s1","capacity":[3.502787169059053, 4.712653475930898, 7.224549117518557],"count":2}],
        "users": [{"name":"u0","demand":[0.1,0.0,0.0],"servers":["s0"]},
                  {"name":"u1","demand":[0.0,0.757288957287433,1.539944193425495],"weight":1.7319418623839833},
                  {"name":"u2","demand":[0.1,0.0,0.0]},
                  {"name":"u3","demand":[0.7867918516408288,0.0,0.9165540240767774],"weight":0.25},
                  {"name":"u4","demand":[0.0,1.075637421799231,0.0],"servers":["s1"]}]}"#,
    );
    let h = Highs::default();
    let a = kdf(&h, &i, 3, &MaxMinSettings::default()).unwrap();
    assert_eq!(a.status, Status::Optimal);
    let sigma = leontief_drfh::kdf_sigma(&i, 3);
    let tol = leontief_audit::AuditTolerance::default();
    let per_user =
        leontief_audit::max_min_per_user(&h, &i, &sigma, &a.user_tasks, true, &tol).unwrap();
    assert!(per_user.ok, "{per_user:?}");
    let grouped = leontief_audit::max_min(&h, &i, &sigma, &a.user_tasks, true, &tol).unwrap();
    assert!(grouped.ok, "{grouped:?}");
}
