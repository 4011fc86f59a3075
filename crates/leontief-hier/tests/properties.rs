//! Properties of the hierarchical mechanisms on generated instances: a
//! flat tree is DRF / DRFH; queues of one user each are DRFH with the
//! queues' weights; every answer on a generated tree (weights,
//! guarantees, limits, caps, placement) passes the independent check of
//! `leontief-audit`.

use leontief_audit::hierarchy::check;
use leontief_core::strategies::{config, instance, Shape};
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

/// A queue tree over `base`'s users: `parents[q]` < q picks each queue's
/// parent (or the root), `home[u]` each user's queue (or the root),
/// weights, and per-queue guarantee / limit fractions of the cluster.
#[allow(clippy::type_complexity)]
fn with_tree(
    base: &Instance,
    parents: &[usize],
    weights: &[f64],
    home: &[usize],
    bounds: &[(Option<f64>, Option<f64>)],
) -> Instance {
    let mut raw = base.to_raw();
    let total = base.total_capacity();
    let nq = parents.len();
    let mut queues: Vec<RawQueue> = (0..nq)
        .map(|q| RawQueue {
            name: format!("q{q}"),
            parent: (q > 0 && parents[q] % (q + 1) < q)
                .then(|| format!("q{}", parents[q] % (q + 1))),
            weight: Some(weights[q]),
            guarantee: None,
            limit: None,
        })
        .collect();
    // Guarantees only on the root's children, at most 1/(2 nq) of the
    // cluster each (their sum stays under the capacity).
    for (q, (g, l)) in bounds.iter().enumerate().take(nq) {
        if let (Some(g), None) = (g, &queues[q].parent) {
            queues[q].guarantee = Some(total.iter().map(|c| c * g / (2.0 * nq as f64)).collect());
        }
        if let Some(l) = l {
            let floor = queues[q].guarantee.clone();
            queues[q].limit = Some(
                total
                    .iter()
                    .enumerate()
                    .map(|(r, c)| (c * l).max(floor.as_ref().map_or(0.0, |g| g[r])))
                    .collect(),
            );
        }
    }
    for (u, user) in raw.users.iter_mut().enumerate() {
        let h = home[u % home.len()] % (nq + 1);
        user.queue = (h < nq).then(|| format!("q{h}"));
    }
    raw.queues = Some(queues);
    Instance::new(raw).expect("a valid tree")
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
            name: format!("q{q}"), parent: None, weight: Some(weights[q]), guarantee: None, limit: None,
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
    fn every_tree_passes_the_independent_check(
        inst in instance(Shape::default()),
        parents in proptest::collection::vec(0usize..8, 1..5),
        weights in proptest::collection::vec(prop_oneof![2 => Just(1.0), 1 => 0.25f64..4.0], 5),
        home in proptest::collection::vec(0usize..8, 1..6),
        bounds in proptest::collection::vec(
            (prop_oneof![2 => Just(None), 1 => (0.2f64..1.0).prop_map(Some)],
             prop_oneof![2 => Just(None), 1 => (0.1f64..0.8).prop_map(Some)]), 5),
    ) {
        let h = Highs::default();
        let tree = with_tree(&inst, &parents, &weights, &home, &bounds);
        for (v, naive) in [(Variant::Hdrfh, false), (Variant::Hdrf, false), (Variant::Naive, true)] {
            let a = solve(&h, &tree, v).unwrap();
            prop_assert_eq!(a.status, Status::Optimal, "{:?}", v);
            let c = check(&h, &tree, &a, naive, true).unwrap();
            prop_assert!(c.ok, "{:?}: {}", v, c);
        }
    }
}
