//! The audit's own tests: each property on hand-made allocations of small
//! instances, holding where the allocation has it and failing, with a
//! witness, where a perturbation breaks it. No mechanism code runs here.

use leontief_audit::bbf::{condition2, Pooled};
use leontief_audit::verify::{verify, Merit, Property, Shares, VerifyMode};
use leontief_audit::{envy, feasibility, placement, AuditTolerance};
use leontief_core::fairness::Family;
use leontief_core::verification::FrankWolfe;
use leontief_core::{Allocation, Instance, Status, Tasks, Verification};
use leontief_highs::Highs;

/// Fig. 1 of 000: two servers [2, 12] and [12, 2]; u1 [0.2, 1], u2 [1, 0.2].
/// DRFH gives 10 tasks each, u1 on s1 and u2 on s2.
fn fig1() -> Instance {
    Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]}"#,
    )
    .unwrap()
}

fn allocation(inst: &Instance, tasks: Vec<Vec<f64>>) -> Allocation {
    Allocation::new(inst, "test", Status::Optimal, tasks)
}

fn ok(v: &Verification) -> bool {
    v.ok
}

const DRFH: Property = Property::MaxMin {
    shares: Shares::Dominant,
    pooled: false,
};

#[test]
fn the_drfh_answer_is_max_min_and_a_lower_user_is_not() {
    let inst = fig1();
    let h = Highs::default();
    let good = allocation(&inst, vec![vec![10.0, 0.0], vec![0.0, 10.0]]);
    let v = verify(&h, &inst, &DRFH, &good, VerifyMode::Always).unwrap();
    assert!(ok(&v), "{v}");
    let low = allocation(&inst, vec![vec![9.0, 0.0], vec![0.0, 10.0]]);
    let v = verify(&h, &inst, &DRFH, &low, VerifyMode::Always).unwrap();
    assert!(!ok(&v), "{v}");
    let flat = v.max_min.as_ref().and_then(|m| m.checked()).unwrap();
    assert_eq!(flat.witness.as_ref().unwrap().user, "u1", "{v}");
}

/// A max-min run stopped by a limit leaves the last round's point: its
/// feasibility is checked and reported, the property is not claimed; an
/// allocation with no tasks at all has nothing to check.
#[test]
fn a_partial_allocation_gets_its_feasibility_checked_and_no_verdict() {
    let inst = fig1();
    let h = Highs::default();
    for status in [Status::TimeLimit, Status::IterationLimit] {
        let part = Allocation::new(&inst, "drfh", status, vec![vec![9.0, 0.0], vec![0.0, 9.0]]);
        let v = verify(&h, &inst, &DRFH, &part, VerifyMode::Always).unwrap();
        assert!(!v.ok, "{v}");
        assert!(
            v.reason.as_deref().unwrap().contains("partial allocation"),
            "{v}"
        );
        assert!(v.feasibility.as_ref().unwrap().ok, "{v}");
        assert!(v.max_min.is_none() && v.certificate.is_none(), "{v}");
        let over = Allocation::new(&inst, "drfh", status, vec![vec![11.0, 0.0], vec![0.0, 9.0]]);
        let v = verify(&h, &inst, &DRFH, &over, VerifyMode::Always).unwrap();
        assert!(!v.ok && !v.feasibility.as_ref().unwrap().ok, "{v}");
        let none = Allocation::new(&inst, "drfh", status, vec![vec![0.0, 0.0], vec![0.0, 0.0]]);
        let v = verify(&h, &inst, &DRFH, &none, VerifyMode::Always).unwrap();
        assert!(v.feasibility.is_none(), "{v}");
        assert!(
            v.reason
                .as_deref()
                .unwrap()
                .contains("no solution to check"),
            "{v}"
        );
    }
}

#[test]
fn over_capacity_and_fractional_tasks_are_refused() {
    let inst = fig1();
    let tol = AuditTolerance::default();
    let over = Tasks::from(vec![vec![11.0, 0.0], vec![0.0, 10.0]]);
    let f = feasibility(&inst, &[11.0, 10.0], &over, true, &tol);
    assert!(!f.ok && f.max_capacity_excess > 0.09, "{f:?}");
    let h = Highs::default();
    let whole = allocation(&inst, vec![vec![10.0, 0.0], vec![0.0, 10.0]]);
    let v = verify(&h, &inst, &Property::WholeTasks, &whole, VerifyMode::Auto).unwrap();
    assert!(ok(&v), "{v}");
    let half = allocation(&inst, vec![vec![9.5, 0.0], vec![0.0, 10.0]]);
    let v = verify(&h, &inst, &Property::WholeTasks, &half, VerifyMode::Auto).unwrap();
    assert!(
        !ok(&v) && v.fractional.as_ref().unwrap()[0] == "tasks[0][0] = 9.5",
        "{v}"
    );
}

#[test]
fn envy_is_found_with_its_witness() {
    let inst = fig1();
    let tol = AuditTolerance::default();
    let fair = envy(
        &inst,
        &Tasks::from(vec![vec![10.0, 0.0], vec![0.0, 10.0]]),
        true,
        &tol,
    );
    assert!(fair.ok && fair.worst_relative == 0.0, "{fair:?}");
    // u1 on s2 with u2's 10 tasks there could run min(10/0.2, 2/1) = 2.
    let poor = envy(
        &inst,
        &Tasks::from(vec![vec![1.0, 0.0], vec![0.0, 10.0]]),
        true,
        &tol,
    );
    let (who, whom, could, has) = poor.worst.clone().expect("u1 envies u2");
    assert_eq!((who.as_str(), whom.as_str()), ("u1", "u2"));
    assert!((could - 2.0).abs() < 1e-12 && has == 1.0, "{poor:?}");
    assert!((poor.worst_relative - 0.5).abs() < 1e-12);
}

#[test]
fn psdsf_definition_4_needs_a_saturated_resource() {
    let inst = fig1();
    let c = placement::psdsf(
        &inst,
        &Tasks::from(vec![vec![10.0, 0.0], vec![0.0, 10.0]]),
        1e-9,
    );
    assert!(c.holds, "{c:?}");
    // Nothing is saturated on s1 for u1 any more.
    let c = placement::psdsf(
        &inst,
        &Tasks::from(vec![vec![5.0, 0.0], vec![0.0, 10.0]]),
        1e-9,
    );
    assert!(!c.holds && c.users[0].violation == 1.0, "{c:?}");
    assert_eq!(placement::sharing_incentive(&inst, &[10.0, 10.0]), 0.0);
    assert!(placement::sharing_incentive(&inst, &[1.0, 10.0]) > 0.5);
}

#[test]
fn bbf_condition_2_on_the_cyclic_example() {
    // 003 Sec. 6: r = rows of the 4 x 4 cyclic matrix, equal entitlements.
    let names: Vec<String> = (1..=4).map(|j| format!("r{j}")).collect();
    let r = [
        [1.0, 1.0, 0.0, 1.0],
        [1.0, 1.0, 1.0, 0.0],
        [0.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0, 1.0],
    ]
    .concat();
    let (e, ub) = ([0.25; 4], [1.0; 4]);
    let c = condition2(&names, &r, &e, &ub, &[1.0 / 3.0; 4], 1e-12);
    assert!(c.holds && c.bottlenecks.len() == 4, "{c:?}");
    let c = condition2(&names, &r, &e, &ub, &[0.2; 4], 1e-12);
    assert!(
        !c.holds && (c.worst_violation - 0.25).abs() < 1e-15,
        "{c:?}"
    );
    let c = condition2(&names, &r, &e, &ub, &[0.4; 4], 1e-12);
    assert!(!c.holds && c.infeasibility > 0.1, "{c:?}");
    // The pooled model of an instance: fig1 pools to [14, 14].
    let p = Pooled::new(&fig1()).unwrap();
    assert_eq!(p.r, vec![0.2 / 14.0, 1.0 / 14.0, 1.0 / 14.0, 0.2 / 14.0]);
    assert_eq!(p.e, vec![0.5, 0.5]);
}

#[test]
fn first_order_gap_is_zero_at_the_optimum_and_positive_below() {
    let inst = fig1();
    let h = Highs::default();
    let merit = Property::FirstOrder {
        merit: Merit::Log,
        pareto: true,
    };
    let best = allocation(&inst, vec![vec![10.0, 0.0], vec![0.0, 10.0]]);
    let v = verify(&h, &inst, &merit, &best, VerifyMode::Auto).unwrap();
    assert!(ok(&v), "{v}");
    let half = allocation(&inst, vec![vec![5.0, 0.0], vec![0.0, 5.0]]);
    let v = verify(&h, &inst, &merit, &half, VerifyMode::Auto).unwrap();
    assert!(
        !ok(&v) && matches!(v.frank_wolfe_gap, Some(FrankWolfe::Gap(g)) if g > 0.1),
        "{v}"
    );
    let fds = Property::FirstOrder {
        merit: Merit::Family {
            family: Family::Fds,
            beta: 2.0,
            lambda: -0.5,
        },
        pareto: true,
    };
    let v = verify(&h, &inst, &fds, &best, VerifyMode::Auto).unwrap();
    assert!(ok(&v), "{v}");
}

#[test]
fn nothing_is_verified_without_a_solution() {
    let inst = fig1();
    let a = Allocation::empty(&inst, "test", Status::Infeasible);
    for p in [DRFH, Property::Psdsf, Property::Bbf { ode: false }] {
        let v = verify(&Highs::default(), &inst, &p, &a, VerifyMode::Auto).unwrap();
        assert!(!ok(&v), "{p:?}: {v}");
    }
}
