//! One test body, every backend that solves LPs: DRFH on HiGHS and on
//! Clarabel must agree, and each answer must pass the max-min check.

use leontief_audit::{self as audit, AuditTolerance};
use leontief_clarabel::Clarabel;
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Instance, Status};
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_drfh::{dominant_sigma, drfh};
use leontief_highs::Highs;
use leontief_model::LpBackend;
use proptest::prelude::*;

/// DRFH on `backend`, certified by the independent check (on HiGHS).
fn certified_drfh<B: LpBackend>(backend: &B, inst: &Instance) -> Vec<f64> {
    let a = drfh(backend, inst, &MaxMinSettings::default()).unwrap();
    assert!(
        matches!(a.status, Status::Optimal | Status::ReducedAccuracy),
        "{}: {}",
        backend.name(),
        a.status
    );
    let c = audit::max_min(
        &Highs::default(),
        inst,
        &dominant_sigma(inst),
        &a.user_tasks,
        true,
        &AuditTolerance::default(),
    )
    .unwrap();
    assert!(c.ok, "{}: {c:?}", backend.name());
    a.user_tasks
}

#[test]
fn fig1_on_both_backends() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1], "weight": 2}, {"name": "u2", "demand": [1, 0.2], "tasks": 7}]}"#,
    )
    .unwrap();
    let h = certified_drfh(&Highs::default(), &inst);
    let c = certified_drfh(&Clarabel::default(), &inst);
    for (a, b) in h.iter().zip(&c) {
        assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{h:?} vs {c:?}");
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn highs_and_clarabel_agree(inst in instance(Shape::default())) {
        let h = certified_drfh(&Highs::default(), &inst);
        let c = certified_drfh(&Clarabel::default(), &inst);
        for (a, b) in h.iter().zip(&c) {
            prop_assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "{:?} vs {:?}", h, c);
        }
    }
}
