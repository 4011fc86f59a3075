//! Properties of the hierarchical mechanisms on generated instances: a
//! flat tree is DRF / DRFH; queues of one user each are DRFH with the
//! queues' weights; every answer on a generated tree (weights,
//! guarantees, limits, caps, placement) passes the independent check of
//! `leontief-audit`.

use leontief_audit::hierarchy::check;
use leontief_core::strategies::{config, instance, tree_instance, Shape};
use leontief_core::{Instance, RawQueue, Status};
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_hier::{solve, Variant};
use leontief_highs::Highs;
use proptest::prelude::*;

fn close(a: &[f64], b: &[f64], rel: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= rel * x.abs().max(y.abs()).max(1.0))
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn a_flat_tree_is_drf_and_drfh(inst in instance(Shape::default())) {
        let h = Highs::default();
        let a = solve(&h, &inst, Variant::Hdrfh).unwrap();
        prop_assert_eq!(a.status, Status::Optimal);
        let d = leontief_drfh::drfh(&h, &inst, &MaxMinSettings::default()).unwrap();
        prop_assert!(close(a.levels.as_ref().unwrap(), d.levels.as_ref().unwrap(), 1e-6),
            "hdrfh {:?} drfh {:?}", a.levels, d.levels);
        let a = solve(&h, &inst, Variant::Hdrf).unwrap();
        let d = leontief_drfh::drf(&inst);
        prop_assert!(close(&a.user_tasks, &d.user_tasks, 1e-9), "hdrf {:?} drf {:?}", a.user_tasks, d.user_tasks);
    }

    #[test]
    fn one_user_queues_are_drfh_with_queue_weights(
        inst in instance(Shape::default()),
        weights in proptest::collection::vec(0.25f64..4.0, 5),
    ) {
        let h = Highs::default();
        let n = inst.num_users();
        let mut raw = inst.to_raw();
        raw.queues = Some((0..n).map(|q| RawQueue {
            name: format!("q{q}"), parent: None, weight: Some(weights[q]), guarantee: None, limit: None, lending_limit: None,
        }).collect());
        for (u, user) in raw.users.iter_mut().enumerate() {
            user.queue = Some(format!("q{u}"));
            user.weight = Some(weights[u]);
        }
        let tree = Instance::new(raw.clone()).unwrap();
        raw.queues = None;
        for user in raw.users.iter_mut() {
            user.queue = None;
        }
        let flat = Instance::new(raw).unwrap();
        let a = solve(&h, &tree, Variant::Hdrfh).unwrap();
        let d = leontief_drfh::drfh(&h, &flat, &MaxMinSettings::default()).unwrap();
        prop_assert!(close(&a.user_tasks, &d.user_tasks, 1e-6) || close(a.levels.as_ref().unwrap(), d.levels.as_ref().unwrap(), 1e-6),
            "hdrfh {:?} drfh {:?}", a.levels, d.levels);
    }

    #[test]
    fn every_tree_passes_the_independent_check(tree in tree_instance(Shape::default())) {
        let h = Highs::default();
        for (v, naive) in [(Variant::Hdrfh, false), (Variant::Hdrf, false), (Variant::Naive, true)] {
            let a = solve(&h, &tree, v).unwrap();
            prop_assert_eq!(a.status, Status::Optimal, "{:?}", v);
            let c = check(&h, &tree, &a, naive, true).unwrap();
            prop_assert!(c.ok, "{:?}: {}", v, c);
        }
    }
}

/// Placement by attribute (lists that are unions of a few groups of
/// servers): hdrfh fills on the groups pooled and places the answer group
/// by group. On generated trees with such lists its answer passes the
/// independent check, and with a flat tree it is DRFH's (the max-min
/// operator on every pair, `Columns::All`); most cases take that path.
#[test]
fn placement_by_attribute_fills_on_the_list_groups() {
    use leontief_core::generate::{family, Demands, Family, Placement};
    use leontief_drfh::maxmin::Columns;
    let h = Highs::default();
    let (mut taken, mut cases) = (0, 0);
    for seed in 1..=6u64 {
        for (m, values) in [(2, 2), (3, 3), (2, 4)] {
            let f = Family {
                demands: Demands::Lognormal,
                weights: seed % 2 == 0,
                caps: (seed % 3 == 0).then_some(0.3),
                placement: Placement::Attribute(values),
                queues: Some((6, 2)),
                ..Family::new(24, 60, m, seed)
            };
            let tree = family(&f);
            let a = solve(&h, &tree, Variant::Hdrfh).unwrap();
            assert_eq!(a.status, Status::Optimal, "seed {seed}, m {m}");
            let c = check(&h, &tree, &a, false, true).unwrap();
            assert!(c.ok, "seed {seed}, m {m}: {c}");
            cases += 1;
            let on_groups = a.notes.iter().any(|n| n.contains("groups of servers"));
            taken += usize::from(on_groups);
            assert_eq!(
                a.hierarchy.as_ref().unwrap().on_list_groups,
                on_groups,
                "seed {seed}, m {m}"
            );
            if on_groups {
                // Checked on the groups: with every server's capacity
                // doubled the same allocation leaves room, and the check
                // finds users that are not stuck.
                let mut raw = tree.to_raw();
                for s in &mut raw.servers {
                    for c in &mut s.capacity {
                        *c *= 2.0;
                    }
                }
                let bigger = leontief_core::Instance::new(raw).unwrap();
                let c = check(&h, &bigger, &a, false, true).unwrap();
                assert!(!c.ok, "seed {seed}, m {m}");
                let hc = c.hierarchy.as_ref().unwrap();
                assert!(!hc.not_stuck.is_empty(), "seed {seed}, m {m}: {c}");
            }
            let flat = family(&Family { queues: None, ..f });
            let a = solve(&h, &flat, Variant::Hdrfh).unwrap();
            let settings = MaxMinSettings {
                columns: Columns::All,
                ..MaxMinSettings::default()
            };
            let d = leontief_drfh::drfh(&h, &flat, &settings).unwrap();
            assert!(
                close(a.levels.as_ref().unwrap(), d.levels.as_ref().unwrap(), 1e-6),
                "seed {seed}, m {m}: hdrfh {:?} drfh {:?}",
                a.levels,
                d.levels
            );
        }
    }
    assert!(
        2 * taken >= cases,
        "the list groups answered {taken} of {cases}"
    );
}
