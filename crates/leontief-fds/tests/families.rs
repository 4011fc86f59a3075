//! FDS, GFJ and p-norm on generated instances: every answer is feasible and
//! carries a Frank-Wolfe gap below tolerance (checked by an LP on HiGHS from
//! the output alone); the identities of 002 hold; refusals name the
//! parameters and the reason.

use leontief_audit::{self as audit, AuditTolerance};
use leontief_clarabel::Clarabel;
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::Instance;
use leontief_fds::{
    classify, frank_wolfe_gap, frank_wolfe_gap_log, solve, solve_alpha, Classified, Family, Region,
};
use leontief_highs::Highs;
use proptest::prelude::*;

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (x - y).abs() <= tol * x.abs().max(y.abs()).max(1.0))
}

/// Instances where every user can run (a user that cannot run makes the
/// log objective -inf).
fn runnable(inst: &Instance) -> bool {
    inst.user_ids()
        .all(|n| inst.server_ids().any(|i| inst.can_run_on(n, i)))
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn answers_are_feasible_and_first_order_optimal(
        inst in instance(Shape { weights: false, ..Shape::default() }),
        which in 0usize..3,
        point in prop_oneof![
            Just((0.5, None)), Just((2.0, None)), Just((4.0, None)),
            Just((0.5, Some(2.0))), Just((0.25, Some(5.0))), Just((2.0, Some(-1.0))), Just((3.0, Some(-2.0)))
        ],
    ) {
        prop_assume!(runnable(&inst));
        let family = [Family::Fds, Family::Gfj, Family::PNorm(2.0)][which];
        let (beta, lambda) = (point.0, point.1.unwrap_or((1.0 - point.0) / point.0));
        let a = solve(&Clarabel::default(), &inst, family, beta, lambda).unwrap();
        prop_assert!(a.status.has_solution(), "{}", a.status);
        let f = audit::feasibility(&inst, &a.user_tasks, &a.tasks, true, &AuditTolerance::default());
        prop_assert!(f.ok, "{:?}", f.violations);
        let gap = frank_wolfe_gap(&Highs::default(), &inst, family, &a.user_tasks, beta, lambda).unwrap();
        prop_assert!(gap <= 1e-8, "Frank-Wolfe gap {gap} at beta {beta} lambda {lambda} for {:?}", family);
    }

    #[test]
    fn proportional_fairness_is_the_same_for_fds_and_gfj(inst in instance(Shape::default())) {
        prop_assume!(runnable(&inst));
        let c = Clarabel::default();
        let a = solve_alpha(&c, &inst, Family::Fds, 1.0).unwrap();
        let b = solve_alpha(&c, &inst, Family::Gfj, 1.0).unwrap();
        prop_assert!(close(&a.user_tasks, &b.user_tasks, 1e-8), "{:?} vs {:?}", a.user_tasks, b.user_tasks);
        // Answers are Newton-polished on the KKT system of their active set
        // (with dual feasibility on the columns left at zero); 1e-8 held on
        // 3 x 300 generated instances.
        let gap = frank_wolfe_gap_log(&Highs::default(), &inst, &a.user_tasks).unwrap();
        prop_assert!(gap <= 1e-8, "{gap}");
    }

    #[test]
    fn p_infinity_is_fds(inst in instance(Shape { weights: false, ..Shape::default() }), alpha in prop_oneof![Just(0.5), Just(2.0)]) {
        prop_assume!(runnable(&inst));
        let c = Clarabel::default();
        let a = solve_alpha(&c, &inst, Family::Fds, alpha).unwrap();
        let b = solve_alpha(&c, &inst, Family::PNorm(f64::INFINITY), alpha).unwrap();
        prop_assert!(close(&a.user_tasks, &b.user_tasks, 1e-8), "{:?} vs {:?}", a.user_tasks, b.user_tasks);
    }
}

#[test]
fn fds_approaches_drf_as_beta_grows() {
    // Sec. V instance of 002: DRF (3, 2); the FDS distance decays like 1/beta.
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [9, 18]}],
            "users": [{"name": "a", "demand": [1, 4]}, {"name": "b", "demand": [3, 1]}]}"#,
    )
    .unwrap();
    let c = Clarabel::default();
    let d: Vec<f64> = [2.0, 8.0, 32.0]
        .iter()
        .map(|&a| {
            let x = solve_alpha(&c, &inst, Family::Fds, a).unwrap().user_tasks;
            ((x[0] - 3.0).abs()).max((x[1] - 2.0).abs())
        })
        .collect();
    assert!(d[0] > d[1] && d[1] > d[2], "{d:?}");
    assert!(d[2] < 0.05, "{d:?}");
}

#[test]
fn regions_and_refusals() {
    assert_eq!(
        classify(0.5, 1.0).unwrap(),
        Classified::Region(Region::AlphaFair)
    );
    assert_eq!(classify(0.5, 2.0).unwrap(), Classified::Region(Region::A));
    assert_eq!(classify(3.0, -2.0).unwrap(), Classified::Region(Region::B));
    assert_eq!(classify(0.5, 0.1).unwrap(), Classified::Region(Region::N));
    assert_eq!(classify(2.0, -0.1).unwrap(), Classified::Region(Region::N));
    assert_eq!(classify(-1.0, 1.0).unwrap(), Classified::Region(Region::N));
    assert_eq!(classify(1.0, 3.0).unwrap(), Classified::Trivial);
    for (b, l, words) in [
        (0.5, 0.0, "scale-free"),
        (0.5, -1.0, "degenerate"),
        (2.0, 1.0, "degenerate"),
        (0.0, 1.0, "beta = 0"),
    ] {
        let e = classify(b, l).unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
        assert!(e.contains(&format!("--beta {b}")) || b == 0.0, "{e}");
    }
    let inst = Instance::from_json_str(
        r#"{"resources": ["a"], "servers": [{"name": "s", "capacity": [1]}], "users": [{"name": "u", "demand": [1]}]}"#,
    )
    .unwrap();
    let e = solve(&Clarabel::default(), &inst, Family::Gfj, 0.5, 0.1)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("region N") && e.contains("--beta 0.5 --lambda 0.1"),
        "{e}"
    );
}
