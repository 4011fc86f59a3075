//! NFC's two paths (the flat LP, column generation) against each other,
//! and the dual certificate each prints, checked by `leontief-audit`'s
//! one-pass weak-duality check.
//!
//! 256 cases per property (PROPTEST_CASES for more), fixed seed; failures
//! are kept in `tests/nfc.proptest-regressions`.

use leontief_audit::{feasibility, total_certificate, AuditTolerance};
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{generate, Allocation, Instance, RawInstance, Status};
use leontief_drfh::nfc::{nfc_with, NfcPath};
use leontief_highs::Highs;
use proptest::prelude::*;

fn solve(inst: &Instance, path: NfcPath) -> Allocation {
    nfc_with(&Highs::default(), inst, path).unwrap()
}

/// The certificate's verdict on `user_tasks`.
fn certified(inst: &Instance, a: &Allocation, user_tasks: &[f64], tolerance: f64) -> bool {
    let c = a
        .total_certificate
        .as_ref()
        .expect("an optimal NFC prints a certificate");
    total_certificate(inst, user_tasks, c, true, tolerance).ok
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(config(256))]

    /// Weights, caps, placement, zero demands, resources nobody demands:
    /// both paths reach the same total, feasibly, and both certificates
    /// prove it; one user holding 1% less of one pair is refused.
    #[test]
    fn generated_path_matches_the_flat_lp_and_both_certify(
        inst in instance(Shape { max_users: 8, max_servers: 5, ..Shape::default() }),
    ) {
        let flat = solve(&inst, NfcPath::Flat);
        let generated = solve(&inst, NfcPath::Generated);
        prop_assert_eq!(flat.status, generated.status);
        if flat.status != Status::Optimal {
            return Ok(());
        }
        let (tf, tg) = (flat.metrics.total_tasks, generated.metrics.total_tasks);
        prop_assert!(close(tf, tg, 1e-7), "flat {} generated {}", tf, tg);
        for a in [&flat, &generated] {
            let f = feasibility(&inst, &a.user_tasks, &a.tasks, true, &AuditTolerance::default());
            prop_assert!(f.ok, "{:?}", f.violations);
            prop_assert!(certified(&inst, a, &a.user_tasks, 1e-6), "{:?}", a.total_certificate);
            if let Some(n) = (0..inst.num_users()).find(|&n| a.user_tasks[n] > 1e-3 * tf.max(1e-300)) {
                let mut less = a.user_tasks.clone();
                less[n] *= 0.99;
                prop_assert!(!certified(&inst, a, &less, 1e-6));
            }
        }
    }
}

/// Heterogeneous instances of the benchmark's shape, 2 to 4 resources,
/// with placement, and with caps on a third of the users: both paths
/// agree, the generated one certifies, and a raised price is refused.
#[test]
fn heterogeneous_instances_agree_and_certify() {
    for (m, seed, eligible, caps) in [
        (2, 1, None, false),
        (3, 2, None, false),
        (4, 3, None, false),
        (2, 1, Some(5), false),
        (2, 2, None, true),
        (3, 1, Some(20), true),
    ] {
        let mut inst = match eligible {
            None => generate::heterogeneous(40, 300, m, seed),
            Some(e) => generate::placement(40, 300, m, e, seed),
        };
        if caps {
            // A third of the users capped at a few tasks: the best users
            // fill up and the prices of their caps enter the certificate.
            let mut raw: RawInstance = inst.to_raw();
            for u in raw.users.iter_mut().step_by(3) {
                u.tasks = Some(3.0);
            }
            inst = Instance::new(raw).unwrap();
        }
        let what = format!("m {m} seed {seed} eligible {eligible:?} caps {caps}");
        let flat = solve(&inst, NfcPath::Flat);
        let generated = solve(&inst, NfcPath::Generated);
        assert_eq!(generated.status, Status::Optimal, "{what}");
        let cert = generated.total_certificate.as_ref().unwrap();
        assert_eq!(cert.path, leontief_core::Path::Generated);
        assert!(
            cert.columns < cert.pairs,
            "{what}: {} of {}",
            cert.columns,
            cert.pairs
        );
        assert!(
            close(
                flat.metrics.total_tasks,
                generated.metrics.total_tasks,
                1e-8
            ),
            "{what}: {} vs {}",
            flat.metrics.total_tasks,
            generated.metrics.total_tasks
        );
        let x = &generated.user_tasks;
        assert!(certified(&inst, &generated, x, 1e-9), "{what}");
        if caps {
            assert!(cert.cap_prices.iter().any(|&q| q > 0.0), "{what}");
        }
        // Raise one price of one entry by the largest price: the bound
        // grows and no longer meets the total.
        let mut bad = generated.clone();
        let c = bad.total_certificate.as_mut().unwrap();
        let top = c.prices.iter().flatten().copied().fold(0.0, f64::max);
        c.prices[0][0] += top;
        assert!(!certified(&inst, &bad, x, 1e-9), "{what}");
    }
}

/// The grid's shape with caps (`weights,caps=0.5`: half the users
/// capped at a few tasks, lognormal demands, 3 and 6 resources), where
/// the capped users of small demand are no entry's pick and enter by
/// their own picks: the generated path reaches the flat LP's total, and
/// its certificate proves it.
#[test]
fn capped_users_of_small_demand_enter_by_their_own_picks() {
    for (m, seed) in [(3, 1), (6, 2), (6, 3)] {
        let family = generate::Family::new(60, 400, m, seed)
            .from_spec("demand=lognormal,weights,caps=0.5")
            .expect("a shape");
        let inst = generate::family(&family);
        let what = format!("60 x 400, {m} resources, seed {seed}");
        let flat = solve(&inst, NfcPath::Flat);
        let generated = solve(&inst, NfcPath::Generated);
        assert_eq!(flat.status, Status::Optimal, "{what}");
        assert_eq!(generated.status, Status::Optimal, "{what}");
        let (tf, tg) = (flat.metrics.total_tasks, generated.metrics.total_tasks);
        assert!(close(tf, tg, 1e-8), "{what}: {tf} vs {tg}");
        let cert = generated.total_certificate.as_ref().unwrap();
        assert!(cert.cap_prices.iter().any(|&q| q > 0.0), "{what}");
        assert!(
            certified(&inst, &generated, &generated.user_tasks, 1e-9),
            "{what}"
        );
        let f = feasibility(
            &inst,
            &generated.user_tasks,
            &generated.tasks,
            true,
            &AuditTolerance::default(),
        );
        assert!(f.ok, "{what}: {:?}", f.violations);
    }
}

/// The flat path prints its LP residuals and a certificate; Fig. 1 of
/// 000 has the unique total 20.
#[test]
fn flat_path_prints_residuals_and_a_certificate() {
    let inst = Instance::from_json_str(
        r#"{
        "resources": ["cpu", "mem"],
        "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
        "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
    }"#,
    )
    .unwrap();
    for path in [NfcPath::Flat, NfcPath::Generated] {
        let a = solve(&inst, path);
        assert!((a.objective.unwrap() - 20.0).abs() < 1e-9, "{path:?}");
        assert!(certified(&inst, &a, &a.user_tasks, 1e-9), "{path:?}");
    }
    let flat = solve(&inst, NfcPath::Flat);
    assert!(flat.verification.unwrap().optimality.unwrap().ok);
}

/// The total alone merges identical entries first: the Google cell with
/// every class listed as separate servers has the total of its classes,
/// and that total is NFC's own on the listed instance.
#[test]
fn total_alone_of_listed_servers_is_the_classes_total() {
    let cell = generate::google_cell(60, 2);
    let mut raw = cell.to_raw();
    let mut listed = Vec::new();
    for s in &raw.servers {
        for j in 0..3 {
            let mut one = s.clone();
            one.name = format!("{}-{j}", s.name);
            listed.push(one);
        }
    }
    raw.servers = listed;
    let listed = Instance::new(raw).unwrap();
    let backend = Highs::default();
    let of_classes = leontief_drfh::nfc::nfc_total(&backend, &cell)
        .unwrap()
        .unwrap();
    let of_listed = leontief_drfh::nfc::nfc_total(&backend, &listed)
        .unwrap()
        .unwrap();
    let full = solve(&listed, NfcPath::Flat);
    assert_eq!(full.status, Status::Optimal);
    // Three times each class's servers: three times its total.
    assert!(
        close(of_listed, 3.0 * of_classes, 1e-9),
        "{of_listed} against 3 x {of_classes}"
    );
    assert!(
        close(of_listed, full.metrics.total_tasks, 1e-9),
        "{of_listed} against {}",
        full.metrics.total_tasks
    );
}
