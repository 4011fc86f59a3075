//! Every algorithm on generated queue trees (weights, guarantees, limits,
//! caps, zero demands, resources nobody has) passes the independent check
//! of `leontief-audit`, with and without a quantum; a tree of one queue
//! per user with equal weights gives every algorithm the same whole-task
//! answer on one resource.

use leontief_audit::schedulers::check;
use leontief_core::strategies::{config, tree_instance, Shape};
use leontief_core::Instance;
use leontief_sched::{run, Scheduler};
use proptest::prelude::*;

const ALL: [Scheduler; 4] = [
    Scheduler::YarnFair,
    Scheduler::Kai,
    Scheduler::VolcanoProportion,
    Scheduler::Kueue,
];

fn with_quantum(inst: &Instance, fraction: f64) -> Instance {
    let mut raw = inst.to_raw();
    raw.quantum = Some(
        inst.total_capacity()
            .iter()
            .map(|&c| if c > 0.0 { c * fraction } else { 1.0 })
            .collect(),
    );
    Instance::new(raw).unwrap()
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn every_tree_passes_the_independent_check(
        tree in tree_instance(Shape::default()),
        quantum in prop_oneof![Just(None), (0.001f64..0.05).prop_map(Some)],
    ) {
        let tree = match quantum {
            Some(f) => with_quantum(&tree, f),
            None => tree,
        };
        for s in ALL {
            let a = run(&tree, s).unwrap();
            let v = check(&tree, &a);
            prop_assert!(v.ok, "{}: {}", s.name(), v);
            prop_assert!(a.user_tasks.iter().all(|x| x.fract() == 0.0));
        }
    }

    #[test]
    fn one_resource_equal_queues_agree(
        demands in proptest::collection::vec(0.05f64..1.0, 2..5),
        capacity in 2.0f64..20.0,
    ) {
        // One resource, one queue of weight 1 per user, nobody capped:
        // YARN, KAI and Volcano split the resource evenly, so each user
        // runs floor((C/N) / d) tasks (YARN may hand back one task where
        // its bisection overshoots by a hair).
        let n = demands.len();
        let users: Vec<String> = demands.iter().enumerate().map(|(u, d)| {
            format!(r#"{{"name":"u{u}","demand":[{d}],"queue":"q{u}"}}"#)
        }).collect();
        let queues: Vec<String> = (0..n).map(|q| format!(r#"{{"name":"q{q}"}}"#)).collect();
        let json = format!(
            r#"{{"resources":["cpu"],"servers":[{{"name":"s","capacity":[{capacity}]}}],"queues":[{}],"users":[{}]}}"#,
            queues.join(","), users.join(",")
        );
        let inst = Instance::from_json_str(&json).unwrap();
        for s in [Scheduler::YarnFair, Scheduler::Kai, Scheduler::VolcanoProportion] {
            let a = run(&inst, s).unwrap();
            for (u, d) in demands.iter().enumerate() {
                let want = (capacity / n as f64 / d + 1e-9).floor();
                let got = a.user_tasks[u];
                prop_assert!(got == want || got + 1.0 == want, "{}: user {} got {} want {}", s.name(), u, got, want);
            }
        }
    }
}
