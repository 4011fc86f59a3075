//! The simulator: tasks are conserved, servers never over-committed, runs
//! are deterministic for a seed; with every task arriving at once and
//! running past the horizon, each whole-task scheduler makes exactly the
//! static heuristic's decisions; the exact DRFH engine gives the DRFH
//! shares and, alone on a roomy cluster, finishes each task after exactly
//! its running time.

use leontief_core::strategies::{config, instance, Shape};
use leontief_core::Instance;
use leontief_highs::Highs;
use leontief_sim::sim::{dedicated_clouds, simulate, Cluster, Scheduler, SimResult, SimSettings};
use leontief_sim::workload::{SyntheticSpec, Task, Workload};
use leontief_sim::{run, Heuristic};
use proptest::prelude::*;

fn settings(scheduler: Scheduler) -> SimSettings {
    SimSettings {
        scheduler,
        horizon: None,
        sample_interval: None,
    }
}

fn check_accounting(r: &SimResult) {
    let t = &r.totals;
    assert!(t.conserved, "{t:?}");
    assert_eq!(
        t.submitted,
        t.finished + t.running + t.waiting + t.unschedulable,
        "{t:?}"
    );
    assert!(
        r.max_overcommit <= 1e-9,
        "over-committed by {}",
        r.max_overcommit
    );
    for u in &r.utilisation {
        for x in u {
            assert!(*x <= 1.0 + 1e-9 && *x >= 0.0, "utilisation {x}");
        }
    }
    for x in &r.mean_utilisation {
        assert!(*x <= 1.0 + 1e-9 && *x >= 0.0, "mean utilisation {x}");
    }
    for j in &r.jobs {
        if let Some(c) = j.completion_time {
            assert!(c >= 0.0 && j.finish.unwrap() <= r.horizon + 1e-9, "{j:?}");
        }
    }
}

const SCHEDULERS: [Scheduler; 7] = [
    Scheduler::FirstFit,
    Scheduler::HdrfFirstFit,
    Scheduler::HdrfNaiveFirstFit,
    Scheduler::BestFit { normaliser: 0 },
    Scheduler::BestFit { normaliser: 1 },
    Scheduler::Slots { slots: 14 },
    Scheduler::Drfh,
];

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn tasks_are_conserved_and_servers_never_overcommitted(
        seed in 0u64..1_000,
        servers in 1usize..30,
        users in 1usize..8,
    ) {
        let cluster = Cluster::google_sample(servers, seed);
        let spec = SyntheticSpec {
            users,
            jobs: 12,
            arrival_window: 600.0,
            horizon: 1_200.0,
            max_tasks: 20,
            duration: [10.0, 900.0],
            demand: [0.01, 0.3],
            seed,
        };
        let w = spec.generate(&cluster.resources).unwrap();
        for s in SCHEDULERS {
            let r = simulate(&Highs::default(), &cluster, &w, &settings(s), &|_| {}).unwrap();
            check_accounting(&r);
            let again = simulate(&Highs::default(), &cluster, &w, &settings(s), &|_| {}).unwrap();
            prop_assert_eq!(&r.users, &again.users);
            prop_assert_eq!(&r.utilisation, &again.utilisation);
        }
    }

    #[test]
    fn all_at_once_the_simulator_decides_like_the_static_heuristics(
        inst in instance(Shape { placement: false, ..Shape::default() }),
        scale in prop::sample::select(vec![3.0, 10.0]),
    ) {
        let inst = roomy(&inst, scale);
        let capped = with_caps(&inst, 25);
        let w = all_at_once(&capped, 25);
        let cluster = Cluster::from_instance(&capped);
        let cases = [
            (Scheduler::FirstFit, Heuristic::FirstFit),
            // Without queues the tree is the root over every user.
            (Scheduler::HdrfFirstFit, Heuristic::FirstFit),
            (Scheduler::HdrfNaiveFirstFit, Heuristic::FirstFit),
            (Scheduler::BestFit { normaliser: 0 }, Heuristic::BestFit { normaliser: 0 }),
            (Scheduler::Slots { slots: 7 }, Heuristic::Slots { slots: 7 }),
        ];
        for (s, h) in cases {
            let r = simulate(&Highs::default(), &cluster, &w, &SimSettings {
                scheduler: s,
                horizon: Some(1.0),
                sample_interval: Some(1.0),
            }, &|_| {}).unwrap();
            check_accounting(&r);
            let a = run(&capped, &h).unwrap();
            for n in capped.user_ids() {
                prop_assert_eq!(
                    r.users[n.0].running as f64,
                    a.user_tasks[n.0],
                    "{} user {}: simulator {:?}, static {:?}",
                    s.name(), n.0, r.users, a.user_tasks
                );
            }
        }
    }
}

fn roomy(inst: &Instance, factor: f64) -> Instance {
    let mut raw = inst.to_raw();
    for s in &mut raw.servers {
        for c in &mut s.capacity {
            *c *= factor;
        }
    }
    Instance::new(raw).unwrap()
}

/// Every user's cap made whole and explicit (`default` where it has none,
/// at least 1).
fn with_caps(inst: &Instance, default: u64) -> Instance {
    let mut raw = inst.to_raw();
    for u in &mut raw.users {
        u.tasks = Some(
            u.tasks
                .map_or(default as f64, |t| (t + 1e-9).floor().max(1.0)),
        );
    }
    Instance::new(raw).unwrap()
}

/// Each user submits its (capped) tasks at time 0, running for ever.
fn all_at_once(inst: &Instance, default: u64) -> Workload {
    let mut tasks = Vec::new();
    for n in inst.user_ids() {
        let u = inst.user(n);
        let k = u.tasks.map_or(default, |t| (t + 1e-9).floor() as u64);
        for _ in 0..k {
            tasks.push(Task {
                user: n.0,
                job: n.0,
                submit: 0.0,
                duration: 1e9,
                demand: u.demand.clone(),
            });
        }
    }
    tasks.sort_by(|a, b| a.submit.total_cmp(&b.submit));
    Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: inst.resources().to_vec(),
        users: inst.users().iter().map(|u| u.name.clone()).collect(),
        weights: inst.users().iter().map(|u| u.weight).collect(),
        jobs: (0..inst.num_users() as u64).collect(),
        tasks,
        end: 1.0,
        notes: Vec::new(),
    }
}

fn fig1() -> Instance {
    Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1], "tasks": 100},
                      {"name": "u2", "demand": [1, 0.2], "tasks": 100}]}"#,
    )
    .unwrap()
}

#[test]
fn exact_drfh_holds_the_fig1_shares_while_both_users_wait() {
    let inst = fig1();
    let cluster = Cluster::from_instance(&inst);
    let w = all_at_once(&inst, 100);
    let r = simulate(
        &Highs::default(),
        &cluster,
        &w,
        &SimSettings {
            scheduler: Scheduler::Drfh,
            horizon: Some(10.0),
            sample_interval: Some(1.0),
        },
        &|_| {},
    )
    .unwrap();
    check_accounting(&r);
    for s in &r.shares {
        for x in s {
            assert!((x - 5.0 / 7.0).abs() < 1e-7, "{s:?}");
        }
    }
    // Whole tasks: Best-Fit also reaches 10 each here (Fig. 3 of 000).
    let b = simulate(
        &Highs::default(),
        &cluster,
        &w,
        &SimSettings {
            scheduler: Scheduler::BestFit { normaliser: 0 },
            horizon: Some(10.0),
            sample_interval: Some(1.0),
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(b.users[0].running, 10);
    assert_eq!(b.users[1].running, 10);
}

#[test]
fn exact_drfh_alone_on_a_roomy_cluster_runs_every_task_for_its_duration() {
    let cluster = Cluster::google_sample(50, 3);
    let tasks: Vec<Task> = (0..20)
        .map(|i| Task {
            user: 0,
            job: i % 4,
            submit: (i / 4) as f64 * 10.0,
            duration: 5.0 + i as f64,
            demand: vec![0.05, 0.02],
        })
        .collect();
    let w = Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: cluster.resources.clone(),
        users: vec!["solo".into()],
        weights: vec![1.0],
        jobs: vec![10, 11, 12, 13],
        tasks,
        end: 200.0,
        notes: Vec::new(),
    };
    for s in SCHEDULERS {
        let r = simulate(&Highs::default(), &cluster, &w, &settings(s), &|_| {}).unwrap();
        check_accounting(&r);
        assert_eq!(r.totals.finished, 20, "{}", s.name());
        for j in &r.jobs {
            // Job j holds tasks j, j + 4, ..., j + 16: the last arrives at 40
            // and runs 5 + j + 16 seconds.
            let k = (j.id - 10) as f64;
            let expected = 40.0 + 5.0 + k + 16.0;
            assert!(
                (j.finish.unwrap() - expected).abs() < 1e-6,
                "{} {j:?} expected finish {expected}",
                s.name()
            );
        }
    }
}

#[test]
fn a_task_larger_than_every_server_is_set_aside_not_blocking() {
    let cluster = Cluster::google_sample(5, 1);
    let mk = |submit: f64, d: f64| Task {
        user: 0,
        job: 0,
        submit,
        duration: 1.0,
        demand: vec![d, d],
    };
    let w = Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: cluster.resources.clone(),
        users: vec!["u".into()],
        weights: vec![1.0],
        jobs: vec![1],
        tasks: vec![mk(0.0, 2.0), mk(0.0, 0.1), mk(1.0, 0.1)],
        end: 10.0,
        notes: Vec::new(),
    };
    for s in SCHEDULERS {
        let r = simulate(&Highs::default(), &cluster, &w, &settings(s), &|_| {}).unwrap();
        check_accounting(&r);
        assert_eq!(
            (r.totals.unschedulable, r.totals.finished),
            (1, 2),
            "{}",
            s.name()
        );
        assert!(r.jobs[0].completion_time.is_none());
        assert!(r.notes.iter().any(|n| n.contains("unschedulable")));
    }
}

#[test]
fn dedicated_clouds_fill_every_active_user() {
    let cluster = Cluster::google_sample(40, 2);
    let spec = SyntheticSpec {
        users: 4,
        jobs: 10,
        ..Default::default()
    };
    let w = spec.generate(&cluster.resources).unwrap();
    let s = settings(Scheduler::BestFit { normaliser: 0 });
    let mut r = simulate(&Highs::default(), &cluster, &w, &s, &|_| {}).unwrap();
    dedicated_clouds(&Highs::default(), &cluster, &w, &s, &mut r, 7, &|| {}).unwrap();
    for u in &r.users {
        assert_eq!(
            u.dedicated_completion_ratio.is_some(),
            u.submitted > 0,
            "{u:?}"
        );
        if let Some(x) = u.dedicated_completion_ratio {
            assert!((0.0..=1.0).contains(&x));
        }
    }
}

#[test]
fn bad_settings_name_the_field() {
    let cluster = Cluster::google_sample(3, 1);
    let w = SyntheticSpec::default()
        .generate(&cluster.resources)
        .unwrap();
    let run = |s: SimSettings| {
        simulate(&Highs::default(), &cluster, &w, &s, &|_| {})
            .unwrap_err()
            .to_string()
    };
    let e = run(SimSettings {
        horizon: Some(-1.0),
        ..settings(Scheduler::FirstFit)
    });
    assert!(e.starts_with("horizon"), "{e}");
    let e = run(SimSettings {
        sample_interval: Some(0.0),
        ..settings(Scheduler::FirstFit)
    });
    assert!(e.starts_with("sample_interval"), "{e}");
    let e = run(settings(Scheduler::Slots { slots: 0 }));
    assert!(e.starts_with("slots"), "{e}");
    let e = run(settings(Scheduler::BestFit { normaliser: 2 }));
    assert!(e.starts_with("normaliser"), "{e}");
    let three = SyntheticSpec::default()
        .generate(&["a".into(), "b".into(), "c".into()])
        .unwrap();
    let e = simulate(
        &Highs::default(),
        &cluster,
        &three,
        &settings(Scheduler::FirstFit),
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("workload has resources"), "{e}");
}
