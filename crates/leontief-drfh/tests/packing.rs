//! Interchangeable entries solved as classes and packed back: every
//! member carries exactly its count's share of its class's use, the
//! answer lists at most `users + m (members - 1)` pairs per class, and it
//! stays feasible and certified.
//!
//! 64 cases per property (PROPTEST_CASES for more), fixed seed.

use leontief_audit::{feasibility, max_min_certificate, AuditTolerance};
use leontief_core::strategies::config;
use leontief_core::{generate, Instance, RoundPrices};
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_drfh::merge::merge_identical;
use leontief_drfh::{dominant_sigma, kdf_sigma};
use leontief_highs::Highs;
use proptest::prelude::*;

fn shaped(users: usize, servers: usize, m: usize, seed: u64, spec: &str) -> Instance {
    let family = generate::Family::new(users, servers, m, seed)
        .from_spec(spec)
        .expect("a valid spec");
    generate::family(&family)
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn each_member_carries_its_share_of_its_class(
        seed in 1u64..10_000,
        m in 2usize..=6,
        users in 10usize..80,
        servers in 20usize..150,
        spec in prop::sample::select(vec![
            "capacity=pools:4",
            "capacity=google",
            "capacity=pools:3,gpu=0.3",
            "capacity=pools:6,placement=attribute:3",
            "capacity=google,demand=bimodal,weights,caps=0.3",
        ]),
        k_two in any::<bool>(),
    ) {
        // The Google configurations hold CPU and memory; further resources
        // are drawn per server and leave no two alike.
        let m = if spec.contains("google") { 2 } else { m };
        let inst = shaped(users, servers, m, seed, spec);
        let sigma = if k_two { kdf_sigma(&inst, 2) } else { dominant_sigma(&inst) };
        let o = lex_max_min(&Highs::default(), &inst, &sigma, true, &MaxMinSettings::default())
            .expect("runs");
        let merged = merge_identical(&inst, true).expect("the shapes have classes");
        prop_assert_eq!(o.merged_classes, Some(merged.instance.num_entries()));

        let totals = o.tasks.user_totals();
        let tol = AuditTolerance { feasibility: 1e-9, ..Default::default() };
        let f = feasibility(&inst, &totals, &o.tasks, true, &tol);
        prop_assert!(f.ok, "{:?}", f.violations);

        // Each entry's use, and its class's.
        let classes = merged.instance.num_entries();
        let mut used = vec![vec![0.0; m]; inst.num_entries()];
        let mut class_used = vec![vec![0.0; m]; classes];
        let mut pairs = 0;
        let mut class_users = vec![std::collections::BTreeSet::new(); classes];
        for (n, row) in o.tasks.rows().enumerate() {
            for (i, x) in row {
                pairs += 1;
                class_users[merged.class_of[i]].insert(n);
                for r in 0..m {
                    let u = x * inst.users()[n].demand[r];
                    used[i][r] += u;
                    class_used[merged.class_of[i]][r] += u;
                }
            }
        }
        for (i, &c) in merged.class_of.iter().enumerate() {
            for r in 0..m {
                let want = merged.share[i] * class_used[c][r];
                prop_assert!(
                    (used[i][r] - want).abs() <= 1e-9 * class_used[c][r] + 1e-12,
                    "entry {} resource {}: {} against {}", i, r, used[i][r], want
                );
            }
        }
        let mut members = vec![0usize; classes];
        for &c in &merged.class_of {
            members[c] += 1;
        }
        let bound: usize = (0..classes)
            .map(|c| class_users[c].len() + m * (members[c] - 1))
            .sum();
        prop_assert!(pairs <= bound, "{} pairs, at most {} expected", pairs, bound);

        let rounds: Vec<RoundPrices> = o.certificates.iter().map(|c| c.to_prices(m)).collect();
        let cert = max_min_certificate(&inst, &sigma, &totals, &o.frozen_round, &rounds, true, 1e-7, 1e-6);
        prop_assert!(cert.ok, "certificate refused: {:?}", cert);
    }
}
