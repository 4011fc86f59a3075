//! Units, weight scales and orderings never change an answer.
//!
//! For every mechanism family, on generated instances (weights, caps,
//! placement, zero demands, classes): scaling one resource's capacities
//! and demands by 10^k (k in -12..=12), scaling every weight by 10^k and
//! permuting
//! users, servers and resources, on instances where one user's weight may
//! be up to 1e9 times (or 1e-9 of) the others', leave the allocation unchanged (within a
//! relative tolerance) or turn it into an explicit refusal; an answer that
//! is `optimal` and verified on both sides is never a different
//! allocation. 256 cases per family in CI (PROPTEST_CASES to change).

use leontief::{Mechanism, Options};
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Allocation, Instance, RawInstance, Status};
use proptest::prelude::*;

/// One transformation of an instance, and how to map an answer back.
#[derive(Debug, Clone)]
enum Change {
    /// Resource r's capacities and demands times 10^k.
    Resource(usize, i32),
    /// Every weight times 10^k.
    Weights(i32),
    /// Reverse the users, rotate the servers and the resources by one.
    Permute,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0usize..4, -12i32..=12).prop_map(|(r, k)| Change::Resource(r, k)),
        (-12i32..=12).prop_map(Change::Weights),
        Just(Change::Permute),
    ]
}

/// Instances of `shape` where, half the time, user 0's weight is
/// multiplied by 10^k, |k| <= 9: weights far apart.
fn spread(shape: Shape) -> impl Strategy<Value = Instance> {
    spread_up_to(shape, 9)
}

/// [`spread`] with |k| <= `decades`.
fn spread_up_to(shape: Shape, decades: i32) -> impl Strategy<Value = Instance> {
    // At 10^9 the other users' own weights can take the spread past the
    // largest an instance may have (1e9): such a draw keeps its weights.
    (instance(shape), prop_oneof![Just(0i32), -decades..=decades]).prop_map(|(inst, k)| {
        if k == 0 {
            return inst;
        }
        let mut raw = inst.to_raw();
        let u = &mut raw.users[0];
        u.weight = Some(u.weight.unwrap_or(1.0) * 10f64.powi(k));
        Instance::new(raw).unwrap_or(inst)
    })
}

/// The changed instance and, per user of it, the original user's index
/// (so answers can be compared user by user); `None` when the change does
/// not apply or leaves the instance invalid (a weight out of range).
fn apply(inst: &Instance, c: &Change) -> Option<(Instance, Vec<usize>)> {
    let mut raw: RawInstance = inst.to_raw();
    let nu = raw.users.len();
    let mut order: Vec<usize> = (0..nu).collect();
    match *c {
        Change::Resource(r, k) => {
            let m = raw.resources.len();
            let r = r % m;
            let f = 10f64.powi(k);
            for s in &mut raw.servers {
                s.capacity[r] *= f;
            }
            for u in &mut raw.users {
                u.demand[r] *= f;
            }
        }
        Change::Weights(k) => {
            for u in &mut raw.users {
                u.weight = Some(u.weight.unwrap_or(1.0) * 10f64.powi(k));
            }
        }
        Change::Permute => {
            raw.users.reverse();
            order.reverse();
            raw.servers.rotate_left(1);
            let m = raw.resources.len();
            raw.resources.rotate_left(1 % m);
            for s in &mut raw.servers {
                s.capacity.rotate_left(1 % m);
            }
            for u in &mut raw.users {
                u.demand.rotate_left(1 % m);
                if let Some(list) = &mut u.servers {
                    list.sort();
                }
            }
        }
    }
    Instance::new(raw).ok().map(|i| (i, order))
}

fn verified(a: &Allocation) -> bool {
    a.verification.as_ref().is_some_and(|v| v.ok)
}

/// Tasks user n could run alone on every entry it may use (the scale of
/// its allocation, for the comparison's tolerance floor).
fn alone(inst: &Instance, n: usize) -> f64 {
    let g: f64 = inst
        .server_ids()
        .map(|i| inst.gamma(leontief_core::UserId(n), i))
        .filter(|g| g.is_finite())
        .sum();
    g.min(
        inst.user(leontief_core::UserId(n))
            .tasks
            .unwrap_or(f64::INFINITY),
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// The per-user tasks are unique.
    Tasks,
    /// Only the total is unique (NFC).
    Total,
    /// Not unique at all (PS-DSF): only the verdicts are compared.
    Verdict,
}

/// Solve `spec` on the instance and its change; fail on an answer that
/// is optimal and verified on both sides yet different.
fn check_pair(
    inst: &Instance,
    c: &Change,
    spec: &str,
    compare: Compare,
    strict: bool,
) -> Result<(), TestCaseError> {
    let Some((changed, order)) = apply(inst, c) else {
        return Ok(());
    };
    let name = spec;
    let m: Mechanism = spec.parse().expect("a valid mechanism");
    let a = leontief::solve(inst, &m, &Options::default());
    let b = leontief::solve(&changed, &m, &Options::default());
    let (a, b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        // A refusal (bad input, exit 2) on either side is explicit.
        (Err(e), _) | (_, Err(e)) if e.is_bad_input() => return Ok(()),
        (Err(e), _) | (_, Err(e)) => {
            return Err(TestCaseError::fail(format!("{name}: could not run: {e}")))
        }
    };
    let both = a.status == Status::Optimal && b.status == Status::Optimal;
    if !(both && verified(&a) && verified(&b)) {
        // Nothing to compare unless both claim to be exact and checked.
        // Strict families must not even differ in that claim: optimal on
        // both sides and verified on one only means the solver moved.
        prop_assert!(
            !(strict && both && verified(&a) != verified(&b)),
            "{name} under {c:?}: verified on one side only\n{:?}\n{:?}",
            a.verification,
            b.verification
        );
        return Ok(());
    }
    match compare {
        Compare::Verdict => {}
        Compare::Total => {
            let (x, y) = (a.metrics.total_tasks, b.metrics.total_tasks);
            prop_assert!(
                (x - y).abs() <= 1e-6 * x.abs().max(y.abs()),
                "{name} under {c:?}: totals {x} vs {y}"
            );
        }
        Compare::Tasks => {
            for (j, &n) in order.iter().enumerate() {
                let (x, y) = (a.user_tasks[n], b.user_tasks[j]);
                // Strict families: per user, 1e-5. The others are certified
                // by a Frank-Wolfe gap of 1e-6 relative to the objective,
                // which bounds a user's error only to about its square
                // root, and measured 1.5e-5 apart under a weight change:
                // compared to 1e-4, or 2e-6 of the capacity in dominant
                // share units (the LP checks' resolution).
                let tol = if strict {
                    1e-5 * x.abs().max(y.abs()) + 1e-7 * alone(inst, n)
                } else {
                    1e-4 * x.abs().max(y.abs()) + 2e-6 / inst.mu(leontief_core::UserId(n))
                };
                prop_assert!(
                    (x - y).abs() <= tol,
                    "{name} under {c:?}: user {n} gets {x} but {y} after the change (both optimal and verified)\noriginal: {:?}\nchanged: {:?}",
                    a.user_tasks,
                    b.user_tasks
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn max_min_family_is_invariant(inst in spread(Shape::small()), c in change()) {
        check_pair(&inst, &c, "drfh", Compare::Tasks, true)?;
        check_pair(&inst, &c, "drf", Compare::Tasks, true)?;
        check_pair(&inst, &c, "tsf", Compare::Tasks, true)?;
        check_pair(&inst, &c, "kdf:k=2", Compare::Tasks, true)?;
        check_pair(&inst, &c, "hdrf", Compare::Tasks, true)?;
        check_pair(&inst, &c, "hdrfh", Compare::Tasks, true)?;
        // Per-server DRF spends task caps server by server in input order
        // (a user's cap left after earlier servers): server order is part
        // of its definition, so it is permuted only in users and resources.
        if !matches!(c, Change::Permute) || inst.users().iter().all(|u| u.tasks.is_none()) {
            check_pair(&inst, &c, "naive-drf", Compare::Tasks, true)?;
        }
        check_pair(&inst, &c, "nfc", Compare::Total, true)?;
    }

    // The production schedulers' share algorithms: their arithmetic is
    // relative to each resource's total (quanta are per resource in the
    // instance's units) and to the sum of the weights, so units and weight
    // scales change nothing, whole tasks included. Their orders are part
    // of their definitions (Kueue admits workloads first in, first out;
    // ties go to the earlier queue or user), so a permutation is another
    // input to them; Kueue reads weights in thousandths (a weight below
    // 0.001 is 0 there: it borrows last), so weight scales are too. YARN's
    // bisection starts its ratio at 1 in the instance's units and stops
    // after 25 steps, so its precision moves with units and weights (with
    // weights 1e7 apart from the totals, [10, 10] becomes [11, 8], as
    // YARN itself computes it): yarn-fair is left out.
    #[test]
    fn production_schedulers_are_invariant_in_units_and_weights(inst in spread(Shape::small()), c in change()) {
        match c {
            Change::Permute => {}
            Change::Weights(_) => {
                for spec in ["kai", "volcano-proportion"] {
                    check_pair(&inst, &c, spec, Compare::Tasks, true)?;
                }
            }
            Change::Resource(..) => {
                for spec in ["kai", "volcano-proportion", "kueue"] {
                    check_pair(&inst, &c, spec, Compare::Tasks, true)?;
                }
            }
        }
    }

    // Not strict (issue 14, open): with weights 1e6 apart the weighted
    // objective is dominated by the heavy users and Clarabel can leave a
    // light one short (20-40%) on one side of a change; the verification
    // (Pareto LP beside the Frank-Wolfe gap) refuses that answer, so no
    // two verified answers differ, but the solver itself still moves.
    #[test]
    fn fairness_efficiency_family_is_invariant(inst in spread(Shape::small()), c in change()) {
        check_pair(&inst, &c, "fds:alpha=2", Compare::Tasks, false)?;
        check_pair(&inst, &c, "gfj:alpha=0.5", Compare::Tasks, false)?;
    }

    #[test]
    fn bbf_family_is_invariant(inst in spread(Shape::small()), c in change()) {
        check_pair(&inst, &c, "bbf-eg", Compare::Tasks, true)?;
    }

    // Not strict: PS-DSF is not unique, so only verdicts compare, and
    // alphaPF-VDS best responses can stop short on one side (not verified
    // there). Weights up to 1e3 apart here; the 1e9 spread is below.
    #[test]
    fn server_based_family_is_invariant(inst in spread_up_to(Shape::small(), 3), c in change()) {
        check_pair(&inst, &c, "psdsf", Compare::Verdict, false)?;
        check_pair(&inst, &c, "vds:alpha=2", Compare::Tasks, false)?;
    }

    // With weights 1e9 apart. alphaPF-VDS's best responses once ran their
    // 10,000 sweeps here (7-19 s per solve, so the test was ignored); on
    // the shared price solver with its adaptive over-relaxation 259 of 263
    // pairs are certified on both sides and compared (8 s in all).
    #[test]
    fn server_based_family_is_invariant_with_weights_1e9_apart(inst in spread(Shape::small()), c in change()) {
        check_pair(&inst, &c, "psdsf", Compare::Verdict, false)?;
        check_pair(&inst, &c, "vds:alpha=2", Compare::Tasks, false)?;
    }
}
