//! The whole-task hierarchical schedulers: the paper's starvation example
//! (naive hierarchical DRF starves a queue's GPU user while its CPU user
//! holds the CPU; H-DRF does not), task by task from an empty cluster
//! they end within a few tasks of the exact static H-DRF answer, queue
//! limits hold, and guarantees are refused by field.

use leontief_core::strategies::{config, tree_instance, Shape};
use leontief_core::{Instance, RawQueue, RawServer};
use leontief_highs::Highs;
use leontief_sim::sim::{simulate, Cluster, Scheduler, SimResult, SimRunError, SimSettings};
use leontief_sim::workload::{Task, Workload};
use proptest::prelude::*;

/// Each user of `inst` submits `tasks[u]` tasks at time 0, running for
/// `duration[u]` seconds each, under the instance's queue tree.
fn workload(inst: &Instance, tasks: &[u64], duration: &[f64]) -> Workload {
    let raw = inst.to_raw();
    let mut list = Vec::new();
    for (n, u) in raw.users.iter().enumerate() {
        for _ in 0..tasks[n] {
            list.push(Task {
                user: n,
                job: n,
                submit: 0.0,
                duration: duration[n],
                demand: u.demand.clone(),
            });
        }
    }
    Workload {
        queues: raw.queues.clone().unwrap_or_default(),
        user_queue: raw.users.iter().map(|u| u.queue.clone()).collect(),
        resources: raw.resources.clone(),
        users: raw.users.iter().map(|u| u.name.clone()).collect(),
        weights: inst.users().iter().map(|u| u.weight).collect(),
        jobs: (0..raw.users.len() as u64).collect(),
        tasks: list,
        end: 1.0,
        notes: Vec::new(),
    }
}

fn run(
    cluster: &Cluster,
    w: &Workload,
    s: Scheduler,
    horizon: f64,
) -> Result<SimResult, SimRunError> {
    simulate(
        &Highs::default(),
        cluster,
        w,
        &SimSettings {
            scheduler: s,
            horizon: Some(horizon),
            sample_interval: Some(1.0),
        },
        &|_| {},
    )
}

/// The paper's example: n1 (GPU) beside n2 = {n2,1 (CPU), n2,2 (GPU)} on
/// 10 CPUs and 10 GPUs. n2,1's tasks hold the CPU for the whole run; the
/// GPU tasks of n1 and n2,2 finish every 10 and 7 seconds.
#[test]
fn naive_hierarchical_drf_starves_the_gpu_user_and_hdrf_does_not() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "gpu"],
            "servers": [{"name": "s", "capacity": [10, 10]}],
            "queues": [{"name": "n1"}, {"name": "n2"}],
            "users": [{"name": "n1", "demand": [0, 1], "queue": "n1"},
                      {"name": "n2,1", "demand": [1, 0], "queue": "n2"},
                      {"name": "n2,2", "demand": [0, 1], "queue": "n2"}]}"#,
    )
    .unwrap();
    let cluster = Cluster::from_instance(&inst);
    let w = workload(&inst, &[200, 20, 200], &[10.0, 1000.0, 7.0]);
    let h = run(&cluster, &w, Scheduler::HdrfFirstFit, 150.0).unwrap();
    let naive = run(&cluster, &w, Scheduler::HdrfNaiveFirstFit, 150.0).unwrap();
    // H-DRF: n2,2 holds half of the GPUs at every sample.
    for s in &h.shares {
        assert!((s[2] - 0.5).abs() < 1e-12, "{s:?}");
        assert!((s[0] - 0.5).abs() < 1e-12, "{s:?}");
    }
    assert_eq!(h.users[2].finished, 5 * (150 / 7));
    // Naive: n2 ranks by its CPU (all of it), so every GPU n2,2 frees goes
    // to n1: from its first finish on, n2,2 runs nothing.
    for (t, s) in naive.sample_times.iter().zip(&naive.shares) {
        if *t >= 7.0 {
            assert_eq!(s[2], 0.0, "t = {t}: {s:?}");
        }
    }
    assert!(naive.users[2].finished <= 5, "{:?}", naive.users[2]);
    assert_eq!(naive.users[2].waiting, 200 - naive.users[2].finished);
}

/// `inst` without guarantees, its servers pooled into one of 40 times the
/// total capacity (tasks are small beside it).
fn pooled(inst: &Instance) -> Instance {
    let mut raw = inst.to_raw();
    let total: Vec<f64> = inst.total_capacity().iter().map(|c| 40.0 * c).collect();
    raw.servers = vec![RawServer {
        name: "pool".into(),
        capacity: total,
        count: None,
    }];
    for u in &mut raw.users {
        u.tasks = None;
        u.servers = None;
    }
    if let Some(qs) = &mut raw.queues {
        for q in qs.iter_mut() {
            *q = RawQueue {
                guarantee: None,
                lending_limit: None,
                limit: q
                    .limit
                    .as_ref()
                    .map(|l| l.iter().map(|x| 40.0 * x).collect()),
                ..q.clone()
            };
        }
    }
    Instance::new(raw).unwrap()
}

/// True when queue `q` is `at` or above it.
fn under(inst: &Instance, mut at: Option<usize>, q: usize) -> bool {
    while let Some(p) = at {
        if p == q {
            return true;
        }
        at = inst.queues()[p].parent;
    }
    false
}

proptest! {
    #![proptest_config(config(128))]

    /// Task by task from an empty cluster, every task arriving at once
    /// and none finishing, each order ends near its exact static answer
    /// (H-DRF's near `hdrf`, the naive one near `hdrf-naive`): every
    /// user within 4 tasks of the largest demand of some resource it
    /// uses. Whole tasks stop up to a task short of the fluid filling's
    /// events, and users with smaller tasks take up what is left. Queue
    /// limits hold.
    #[test]
    fn task_by_task_ends_near_the_exact_static_answer(tree in tree_instance(Shape {
        placement: false,
        caps: false,
        ..Shape::default()
    })) {
        let inst = pooled(&tree);
        let cluster = Cluster::from_instance(&inst);
        let c = inst.total_capacity();
        let users = inst.users();
        let m = inst.num_resources();
        // More tasks than fit: every user can always take one more.
        let many: Vec<u64> = users.iter().map(|u| {
            u.demand.iter().zip(c).filter(|(d, _)| **d > 0.0)
                .map(|(d, c)| (c / d).ceil() as u64 + 1).min().unwrap()
        }).collect();
        let w = workload(&inst, &many, &vec![1e9; many.len()]);
        // Users whose tasks fit nowhere run nothing either way.
        let runs: Vec<usize> = (0..users.len())
            .filter(|&u| inst.mu(leontief_core::UserId(u)).is_finite())
            .collect();
        let biggest: Vec<f64> = (0..m)
            .map(|k| runs.iter().map(|&v| users[v].demand[k]).fold(0.0, f64::max))
            .collect();
        for (s, variant) in [
            (Scheduler::HdrfFirstFit, leontief_hier::Variant::Hdrf),
            (Scheduler::HdrfNaiveFirstFit, leontief_hier::Variant::Naive),
        ] {
            let r = run(&cluster, &w, s, 1.0).unwrap();
            let exact = leontief_hier::solve(&Highs::default(), &inst, variant).unwrap();
            for &u in &runs {
                let o = &r.users[u];
                let gap = (o.running as f64 - exact.user_tasks[u]).abs();
                let in_tasks = (0..m)
                    .filter(|&k| users[u].demand[k] > 0.0)
                    .map(|k| gap * users[u].demand[k] / biggest[k])
                    .fold(f64::INFINITY, f64::min);
                prop_assert!(in_tasks <= 4.0,
                    "{} user {u}: {} tasks task by task, {} exact (tasks {:?} vs {:?})",
                    s.name(), o.running, exact.user_tasks[u],
                    r.users.iter().map(|o| o.running).collect::<Vec<_>>(), exact.user_tasks);
            }
            for (q, queue) in inst.queues().iter().enumerate() {
                if let Some(l) = &queue.limit {
                    for (k, lk) in l.iter().enumerate() {
                        let used: f64 = inst.user_ids()
                            .filter(|&n| under(&inst, inst.user_queue(n), q))
                            .map(|n| r.users[n.0].running as f64 * users[n.0].demand[k])
                            .sum();
                        prop_assert!(used <= lk * (1.0 + 1e-9),
                            "{} queue {q} resource {k}: {used} > {lk}", s.name());
                    }
                }
            }
        }
    }
}

#[test]
fn guarantees_are_refused_by_field() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu"],
            "servers": [{"name": "s", "capacity": [10]}],
            "queues": [{"name": "a", "guarantee": [4]}],
            "users": [{"name": "u", "demand": [1], "queue": "a"}]}"#,
    )
    .unwrap();
    let w = workload(&inst, &[3], &[1.0]);
    for s in [Scheduler::HdrfFirstFit, Scheduler::HdrfNaiveFirstFit] {
        let e = run(&Cluster::from_instance(&inst), &w, s, 5.0).unwrap_err();
        assert!(e.to_string().starts_with("queues[0].guarantee "), "{e}");
    }
}
