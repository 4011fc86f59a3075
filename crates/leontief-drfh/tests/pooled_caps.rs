//! Users frozen at their task caps by the pooled filling do not turn the
//! pooled-first path away. Their pooled level is their cap, the same
//! number as the LP's bound on their level up to rounding; one ulp over
//! sent a 60 x 400 instance with caps to the general path: 229 flat LPs
//! and 118 s, against 2 LPs and 0.14 s on the pooled path, the same
//! answer to 1.3e-13.
//!
//! On generated instances with weights and caps: wherever the flat LP's
//! levels are the pooled ones (the pooled path's answer exists), the
//! pooled path gives it, with the same tasks per user.

use leontief_core::{generate, Instance};
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, Columns, MaxMinSettings};
use leontief_highs::Highs;

fn instance(seed: u64) -> Instance {
    let (n, k, m) = (
        12 + (seed % 5) as usize,
        30 + (seed % 4) as usize * 10,
        2 + (seed % 2) as usize,
    );
    let base = generate::heterogeneous(n, k, m, seed);
    let total = base.total_capacity().to_vec();
    let mut raw = base.to_raw();
    for (j, u) in raw.users.iter_mut().enumerate() {
        u.weight = Some([1.0, 2.0, 3.0][j % 3]);
        if j % 3 == 1 {
            // A cap that binds in the pooled filling: a fraction of the
            // user's tasks alone on the pool.
            let alone = u
                .demand
                .iter()
                .zip(&total)
                .filter(|(d, _)| **d > 0.0)
                .map(|(d, c)| c / d)
                .fold(f64::INFINITY, f64::min);
            u.tasks = Some(alone * [0.005, 0.01, 0.02][j % 3] * (1.0 + seed as f64 / 97.0));
        }
    }
    Instance::new(raw).expect("valid")
}

#[test]
fn capped_users_keep_the_pooled_path() {
    let (mut reachable, mut capped) = (0, 0);
    for seed in 1..=24u64 {
        let inst = instance(seed);
        let sigma = dominant_sigma(&inst);
        let run = |columns| {
            let settings = MaxMinSettings {
                columns,
                ..Default::default()
            };
            lex_max_min(&Highs::default(), &inst, &sigma, true, &settings).expect("runs")
        };
        // The pooled levels: DRF's progressive filling on the pool (the
        // same shares, weights and caps).
        let pooled = leontief_drfh::drf(&inst).tasks.user_totals();
        let flat = run(Columns::All);
        let flat_tasks = flat.tasks.user_totals();
        let at_pooled = flat_tasks
            .iter()
            .zip(&pooled)
            .all(|(a, b)| (a - b).abs() <= 1e-7 * b.abs().max(1e-12));
        if !at_pooled {
            continue;
        }
        reachable += 1;
        capped += usize::from(
            inst.users()
                .iter()
                .zip(&pooled)
                .any(|(u, x)| u.tasks.is_some_and(|t| *x >= t * (1.0 - 1e-12))),
        );
        let generated = run(Columns::Generated);
        assert!(
            generated.path.is_pooled(),
            "seed {seed}: the pooled levels are the flat LP's, but the pooled path gave way"
        );
        for (n, (a, b)) in generated
            .tasks
            .user_totals()
            .iter()
            .zip(&flat_tasks)
            .enumerate()
        {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1e-12),
                "seed {seed}, user {n}: {a} against {b}"
            );
        }
    }
    // Not vacuous: most seeds reach the pooled levels, with capped users.
    assert!(
        reachable >= 12 && capped >= 12,
        "{reachable} reachable, {capped} with caps"
    );
}

/// With task caps and more than 4 resources the pooled bound goes to the
/// one LP at once (`leontief_drfh::settings::one_lp_at_once`), not group
/// by group: under `Columns::Auto`, on 300 users and 400 entries (where
/// the groups apply), the answer comes from the one LP, optimal, within
/// every cap and certified by the audit's check; without the caps the
/// same instance takes the groups.
#[test]
fn with_caps_and_six_resources_the_one_lp_runs_at_once() {
    use leontief_audit::max_min_certificate;
    use leontief_core::RoundPrices;
    for caps in [true, false] {
        let inst = generate::family(&generate::Family {
            weights: true,
            caps: caps.then_some(0.5),
            ..generate::Family::new(300, 400, 6, 1)
        });
        let sigma = dominant_sigma(&inst);
        let o = lex_max_min(
            &Highs::default(),
            &inst,
            &sigma,
            true,
            &MaxMinSettings::default(),
        )
        .expect("runs");
        assert_eq!(o.status, leontief_core::Status::Optimal, "caps {caps}");
        assert_eq!(
            o.path.groups().is_none(),
            caps,
            "caps {caps}: path {:?}",
            o.path
        );
        let x = o.tasks.user_totals();
        for (n, u) in inst.users().iter().enumerate() {
            assert!(
                u.tasks.is_none_or(|t| x[n] <= t * (1.0 + 1e-9)),
                "user {n} over its cap"
            );
        }
        let rounds: Vec<RoundPrices> = o.certificates.iter().map(|c| c.to_prices(6)).collect();
        let check = max_min_certificate(
            &inst,
            &sigma,
            &x,
            &o.frozen_round,
            &rounds,
            false,
            1e-7,
            1e-6,
        );
        assert!(check.ok, "caps {caps}: path {:?}", o.path);
    }
}
