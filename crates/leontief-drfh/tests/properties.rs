//! Properties of DRF, DRFH and k-DF on generated instances, each checked
//! from the output alone by the independent code of `leontief-audit`.
//!
//! 256 cases per property by default (set PROPTEST_CASES for more), with a
//! fixed seed (set PROPTEST_RNG_SEED to explore others); failures are kept
//! in `tests/properties.proptest-regressions` and replayed first.

use leontief_audit::{self as audit, AuditTolerance};
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Allocation, Instance, Status};
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_drfh::{dominant_sigma, drf, drfh, kdf, kdf_sigma, naive_drf, nfc, tsf, tsf_sigma};
use leontief_highs::Highs;
use proptest::prelude::*;

fn tol() -> AuditTolerance {
    AuditTolerance::default()
}

/// Feasibility, placement and caps, and user_tasks = row sums.
fn assert_feasible(inst: &Instance, a: &Allocation, placement: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.status, Status::Optimal);
    for n in 0..a.tasks.users() {
        let s = a.tasks.user_total(n);
        prop_assert!((s - a.user_tasks[n]).abs() <= 1e-12 * s.abs().max(1.0));
    }
    let f = audit::feasibility(inst, &a.user_tasks, &a.tasks, placement, &tol());
    prop_assert!(f.ok, "{:?}", f.violations);
    Ok(())
}

/// Max-min optimality by one LP per user, and the grouped check agrees.
fn assert_max_min(
    inst: &Instance,
    sigma: &[f64],
    x: &[f64],
    placement: bool,
) -> Result<(), TestCaseError> {
    let h = Highs::default();
    let per_user = audit::max_min_per_user(&h, inst, sigma, x, placement, &tol()).unwrap();
    prop_assert!(per_user.ok, "per-user check: {:?}", per_user);
    let grouped = audit::max_min(&h, inst, sigma, x, placement, &tol()).unwrap();
    prop_assert!(grouped.ok, "grouped check: {:?}", grouped);
    Ok(())
}

fn close(a: &[f64], b: &[f64], rel: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= rel * x.abs().max(y.abs()).max(1.0))
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn drfh_is_feasible_max_min_and_pareto(inst in instance(Shape::default())) {
        let h = Highs::default();
        let a = drfh(&h, &inst, &MaxMinSettings::default()).unwrap();
        assert_feasible(&inst, &a, true)?;
        assert_max_min(&inst, &dominant_sigma(&inst), &a.user_tasks, true)?;
        let p = audit::pareto(&h, &inst, &a.user_tasks, true, &tol()).unwrap();
        prop_assert!(p.ok, "{:?}", p);
    }

    #[test]
    fn drfh_without_placement_is_envy_free(inst in instance(Shape { placement: false, ..Shape::default() })) {
        let a = drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
        let e = audit::envy(&inst, &a.tasks, false, &tol());
        prop_assert!(e.ok, "{:?}", e.worst);
    }

    #[test]
    fn drf_closed_form_is_max_min_on_the_pool_and_matches_the_lp(inst in instance(Shape::default())) {
        let a = drf(&inst);
        let pool = inst.pooled();
        let single: leontief_core::Tasks = a.user_tasks.iter().map(|&x| vec![x]).collect::<Vec<_>>().into();
        let f = audit::feasibility(&pool, &a.user_tasks, &single, false, &tol());
        prop_assert!(f.ok, "{:?}", f.violations);
        let sigma = dominant_sigma(&pool);
        assert_max_min(&pool, &sigma, &a.user_tasks, false)?;
        // The closed form against the LP operator on the same pool.
        let lp = lex_max_min(&Highs::default(), &pool, &sigma, true, &MaxMinSettings::default()).unwrap();
        let lp_x: Vec<f64> = lp.tasks.user_totals();
        prop_assert!(close(&a.user_tasks, &lp_x, 1e-6), "closed form {:?} vs LP {:?}", a.user_tasks, lp_x);
    }

    #[test]
    fn drfh_on_one_server_equals_drf(inst in instance(Shape { max_servers: 1, placement: false, ..Shape::default() })) {
        let a = drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
        let b = drf(&inst);
        prop_assert!(close(&a.user_tasks, &b.user_tasks, 1e-6), "drfh {:?} drf {:?}", a.user_tasks, b.user_tasks);
    }

    #[test]
    fn tsf_is_feasible_and_max_min_and_on_one_server_is_drf(
        inst in instance(Shape::default()),
        one in instance(Shape { max_servers: 1, placement: false, ..Shape::default() }),
    ) {
        let h = Highs::default();
        let a = tsf(&h, &inst, &MaxMinSettings::default()).unwrap();
        assert_feasible(&inst, &a, true)?;
        assert_max_min(&inst, &tsf_sigma(&inst), &a.user_tasks, true)?;
        // One server entry: y_n = gamma_n = 1 / mu_n, so TSF is DRF.
        let t = tsf(&h, &one, &MaxMinSettings::default()).unwrap();
        let d = drf(&one);
        prop_assert!(close(&t.user_tasks, &d.user_tasks, 1e-6), "tsf {:?} drf {:?}", t.user_tasks, d.user_tasks);
    }

    #[test]
    fn kdf_is_feasible_and_max_min(inst in instance(Shape::default()), k in 1usize..=3) {
        let a = kdf(&Highs::default(), &inst, k, &MaxMinSettings::default()).unwrap();
        assert_feasible(&inst, &a, true)?;
        assert_max_min(&inst, &kdf_sigma(&inst, k), &a.user_tasks, true)?;
    }

    #[test]
    fn kdf_with_k_1_is_drfh(inst in instance(Shape::default())) {
        let h = Highs::default();
        let a = kdf(&h, &inst, 1, &MaxMinSettings::default()).unwrap();
        let b = drfh(&h, &inst, &MaxMinSettings::default()).unwrap();
        prop_assert!(close(&a.user_tasks, &b.user_tasks, 1e-6), "kdf1 {:?} drfh {:?}", a.user_tasks, b.user_tasks);
    }

    #[test]
    fn per_server_drf_equals_drfh_on_identical_servers(
        inst in instance(Shape { identical_servers: true, caps: false, placement: false, ..Shape::default() })
    ) {
        let a = naive_drf(&inst);
        assert_feasible(&inst, &a, true)?;
        let b = drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
        prop_assert!(close(&a.user_tasks, &b.user_tasks, 1e-6), "naive {:?} drfh {:?}", a.user_tasks, b.user_tasks);
    }

    #[test]
    fn nfc_total_bounds_every_mechanism(inst in instance(Shape::default())) {
        let h = Highs::default();
        let best = nfc(&h, &inst).unwrap();
        assert_feasible(&inst, &best, true)?;
        let total = best.metrics.total_tasks;
        for a in [drfh(&h, &inst, &MaxMinSettings::default()).unwrap(), naive_drf(&inst)] {
            prop_assert!(a.metrics.total_tasks <= total * (1.0 + 1e-7) + 1e-9);
        }
    }

    #[test]
    fn the_max_min_check_rejects_a_perturbed_allocation(inst in instance(Shape { caps: false, ..Shape::default() })) {
        // The check must be able to fail: take 10% from the user with the
        // most tasks; it can then rise (everything it used is free again).
        let a = drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
        let share = &a.metrics.dominant_shares;
        let (top, &most) = share.iter().enumerate().max_by(|x, y| x.1.total_cmp(y.1)).unwrap();
        // 10% of its share must exceed the check's tolerance (1e-6 of a share).
        prop_assume!(most > 1e-4);
        let mut x = a.user_tasks.clone();
        x[top] *= 0.9;
        let c = audit::max_min(&Highs::default(), &inst, &dominant_sigma(&inst), &x, true, &tol()).unwrap();
        prop_assert!(!c.ok, "a perturbed allocation passed: {:?}", x);
        prop_assert!(c.witness.is_some());
    }
}
