//! Exchangeable servers (equal capacities, and every user's placement
//! list holds both or neither) are solved as classes: node pools listed
//! node by node, with placement by attribute, give the answer of the same
//! cluster written as classes, verified.

use leontief::{Instance, Mechanism, Options};
use rand::{Rng, SeedableRng};

/// `pools` node pools of `per_pool` nodes (one capacity each), users each
/// restricted to a random subset of the pools (an attribute such as a
/// GPU model), some with caps and weights; listed node by node, and the
/// same as classes.
fn cluster(seed: u64, pools: usize, per_pool: usize, users: usize) -> (Instance, Instance) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let caps: Vec<[f64; 3]> = (0..pools)
        .map(|p| {
            [
                rng.gen_range(8.0..96.0_f64).round(),
                rng.gen_range(32.0..512.0_f64).round(),
                if p % 2 == 0 {
                    rng.gen_range(1..9) as f64
                } else {
                    0.0
                },
            ]
        })
        .collect();
    let mut listed_servers = Vec::new();
    let mut class_servers = Vec::new();
    for (p, c) in caps.iter().enumerate() {
        for j in 0..per_pool {
            listed_servers.push(serde_json::json!({"name": format!("p{p}-n{j}"), "capacity": c}));
        }
        class_servers
            .push(serde_json::json!({"name": format!("p{p}"), "capacity": c, "count": per_pool}));
    }
    let mut listed_users = Vec::new();
    let mut class_users = Vec::new();
    for n in 0..users {
        let gpu = rng.gen_bool(0.4);
        let demand = [
            rng.gen_range(0.5..8.0_f64),
            rng.gen_range(1.0..32.0_f64),
            if gpu { rng.gen_range(1..3) as f64 } else { 0.0 },
        ];
        let allowed: Vec<usize> = (0..pools).filter(|_| rng.gen_bool(0.6)).collect();
        let allowed = if allowed.is_empty() {
            vec![n % pools]
        } else {
            allowed
        };
        let mut user = serde_json::json!({"name": format!("u{n}"), "demand": demand});
        if rng.gen_bool(0.3) {
            user["tasks"] = serde_json::json!(rng.gen_range(1..20));
        }
        if rng.gen_bool(0.3) {
            user["weight"] = serde_json::json!(rng.gen_range(1..4));
        }
        let mut listed = user.clone();
        listed["servers"] = serde_json::json!(allowed
            .iter()
            .flat_map(|&p| (0..per_pool).map(move |j| format!("p{p}-n{j}")))
            .collect::<Vec<_>>());
        let mut class = user;
        class["servers"] =
            serde_json::json!(allowed.iter().map(|p| format!("p{p}")).collect::<Vec<_>>());
        listed_users.push(listed);
        class_users.push(class);
    }
    let make = |servers, users| {
        Instance::from_json_str(
            &serde_json::json!({"resources": ["cpu", "mem", "gpu"], "servers": servers, "users": users})
                .to_string(),
        )
        .unwrap()
    };
    (
        make(listed_servers, listed_users),
        make(class_servers, class_users),
    )
}

#[test]
fn nfc_on_node_pools_is_the_total_of_its_classes() {
    for seed in 0..4u64 {
        let (listed, classes) = cluster(seed, 5, 12, 14);
        let a = leontief::solve(&listed, &Mechanism::Nfc, &Options::default()).unwrap();
        let b = leontief::solve(&classes, &Mechanism::Nfc, &Options::default()).unwrap();
        assert!(a.verification.as_ref().is_some_and(|v| v.ok), "seed {seed}");
        let (x, y) = (a.metrics.total_tasks, b.metrics.total_tasks);
        assert!(
            (x - y).abs() <= 1e-7 * x.max(1.0),
            "seed {seed}: {x} vs {y}"
        );
        assert_eq!(a.total_certificate.as_ref().unwrap().prices.len(), 60);
        assert!(
            a.notes.iter().any(|n| n.contains("solved as 5 classes")),
            "{:?}",
            a.notes
        );
    }
}

#[test]
fn node_pools_listed_node_by_node_are_solved_as_their_classes() {
    for seed in 0..4u64 {
        let (listed, classes) = cluster(seed, 5, 12, 14);
        for m in [Mechanism::Drfh, Mechanism::Tsf, Mechanism::Kdf { k: 2 }] {
            let a = leontief::solve(&listed, &m, &Options::default()).unwrap();
            let b = leontief::solve(&classes, &m, &Options::default()).unwrap();
            assert!(
                a.status.has_solution() && b.status.has_solution(),
                "{m} seed {seed}"
            );
            assert!(
                a.verification.as_ref().is_some_and(|v| v.ok),
                "{m} seed {seed}: {:?}",
                a.verification
            );
            for (n, (x, y)) in a.user_tasks.iter().zip(&b.user_tasks).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-7 * x.abs().max(y.abs()).max(1.0),
                    "{m} seed {seed} user {n}: {x} vs {y}"
                );
            }
            let c = a.certificate.as_ref().expect("a max-min certificate");
            assert_eq!(c.merged_classes, Some(5), "{m} seed {seed}");
            // Per node: a twelfth of its pool's use of every resource, and
            // each pool's users packed (at most users + 3 x 11 pairs).
            let mut used = vec![[0.0; 3]; 60];
            let mut pairs = [0usize; 5];
            let mut users_on = [0usize; 5];
            for (n, row) in a.tasks.to_dense().iter().enumerate() {
                let d = &listed.users()[n].demand;
                for p in 0..5 {
                    let on = row[p * 12..(p + 1) * 12]
                        .iter()
                        .filter(|&&x| x > 0.0)
                        .count();
                    pairs[p] += on;
                    users_on[p] += usize::from(on > 0);
                }
                for (i, &x) in row.iter().enumerate() {
                    for r in 0..3 {
                        used[i][r] += x * d[r];
                    }
                }
            }
            for p in 0..5 {
                assert!(pairs[p] <= users_on[p] + 3 * 11, "{m} seed {seed} pool {p}");
                for r in 0..3 {
                    let pool: f64 = used[p * 12..(p + 1) * 12].iter().map(|u| u[r]).sum();
                    for u in &used[p * 12..(p + 1) * 12] {
                        assert!(
                            (u[r] - pool / 12.0).abs() <= 1e-9 * pool.max(1.0),
                            "{m} seed {seed} pool {p} resource {r}"
                        );
                    }
                }
            }
        }
    }
}

/// PS-DSF on node pools: the class's allocation split evenly meets
/// Definition 4 on every listed node (the verification checks it there),
/// and equals the answer on the cluster written as classes (PS-DSF is not
/// unique, but both runs solve the same merged instance).
#[test]
fn psdsf_on_node_pools_is_its_classes_split_evenly() {
    for seed in 0..4u64 {
        let (listed, classes) = cluster(seed, 5, 12, 14);
        let m = Mechanism::Psdsf {
            select: leontief::PsdsfSelect::BestResponse,
        };
        let a = leontief::solve(&listed, &m, &Options::default()).unwrap();
        let b = leontief::solve(&classes, &m, &Options::default()).unwrap();
        assert!(
            a.verification.as_ref().is_some_and(|v| v.ok),
            "seed {seed}: {:?}",
            a.verification
        );
        for (x, y) in a.user_tasks.iter().zip(&b.user_tasks) {
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "seed {seed}: {x} vs {y}"
            );
        }
        assert!(a.notes.iter().any(|n| n.contains("solved as 5 classes")));
    }
}

/// alphaPF-VDS on node pools: an equilibrium of the classes (each class
/// one server) split evenly is an equilibrium of the listed nodes; the
/// verification recomputes the Nikaido-Isoda certificate there from the
/// printed prices (each member's log price scale raised by (alpha - 1)
/// ln(share)), and the users' tasks are those of the cluster written as
/// classes, members of a class holding equal tasks.
#[test]
fn vds_on_node_pools_is_its_classes_split_evenly() {
    for (seed, alpha) in [(0u64, 2.0), (1, 2.0), (2, 3.0), (3, 1.5)] {
        let (listed, classes) = cluster(seed, 5, 12, 14);
        let m = Mechanism::Vds {
            alpha,
            schedule: leontief::VdsSchedule::GaussSeidel,
        };
        let a = leontief::solve(&listed, &m, &Options::default()).unwrap();
        let b = leontief::solve(&classes, &m, &Options::default()).unwrap();
        assert_eq!(a.status, leontief::Status::Optimal, "seed {seed}");
        assert!(
            a.verification.as_ref().is_some_and(|v| v.ok),
            "seed {seed}: {:?}",
            a.verification
        );
        for (x, y) in a.user_tasks.iter().zip(&b.user_tasks) {
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "seed {seed}: {x} vs {y}"
            );
        }
        for row in &a.tasks.to_dense() {
            for pool in row.chunks(12) {
                assert!(pool
                    .iter()
                    .all(|&t| (t - pool[0]).abs() <= 1e-9 * pool[0].max(1.0)));
            }
        }
        assert!(a.notes.iter().any(|n| n.contains("solved as 5 classes")));
    }
}
