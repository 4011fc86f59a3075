//! Rounds stopped by a limit (`MaxMinSettings::round_limit`, and the
//! run's time limit through the same code) leave the last round's point:
//! feasible, the users frozen so far at the levels the finished run gives
//! them (the lowest levels of the answer), every other user at least at
//! the last of those levels.

use leontief_core::{generate, ResourceId, Status, UserId};
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, Freeze, MaxMinSettings};
use leontief_highs::Highs;

#[test]
fn stopped_rounds_leave_a_feasible_point_with_the_lowest_levels_exact() {
    for seed in [1, 2, 3] {
        let inst = generate::placement(30, 300, 2, 5, seed);
        let sigma = dominant_sigma(&inst);
        let run = |round_limit: Option<usize>| {
            let settings = MaxMinSettings {
                round_limit,
                ..MaxMinSettings::default()
            };
            lex_max_min(&Highs::default(), &inst, &sigma, true, &settings).unwrap()
        };
        let full = run(None);
        assert!(full.status.has_solution(), "seed {seed}: {}", full.status);
        let limit = 3;
        assert!(
            full.rounds > limit,
            "seed {seed}: {} rounds, the test wants more than {limit}",
            full.rounds
        );
        let part = run(Some(limit));
        assert_eq!(part.status, Status::IterationLimit, "seed {seed}");
        assert!(
            part.raw_status.contains("round limit of 3")
                && part.raw_status.contains("the last round's point"),
            "{}",
            part.raw_status
        );
        assert_eq!(part.rounds, limit, "seed {seed}");
        assert_eq!(part.tasks.users(), inst.num_users(), "seed {seed}");

        // Feasible: placement, signs and every capacity.
        for i in inst.server_ids() {
            for r in (0..inst.num_resources()).map(ResourceId) {
                let used: f64 = inst
                    .user_ids()
                    .map(|n| part.tasks[(n.0, i.0)] * inst.user(n).demand[r.0])
                    .sum();
                let cap = inst.class_capacity(i, r);
                assert!(
                    used <= cap * (1.0 + 1e-9) + 1e-12,
                    "seed {seed}: {used} of {cap} on entry {} resource {}",
                    i.0,
                    r.0
                );
            }
        }
        for n in inst.user_ids() {
            for i in inst.server_ids() {
                let x = part.tasks[(n.0, i.0)];
                assert!(x >= 0.0, "seed {seed}: negative tasks");
                assert!(
                    x == 0.0 || inst.eligible(n, i),
                    "seed {seed}: user {} on entry {} it may not use",
                    n.0,
                    i.0
                );
            }
        }

        // The users frozen so far: the same rounds and levels as the
        // finished run; the others at least at the last of those levels.
        let frozen: Vec<UserId> = inst
            .user_ids()
            .filter(|n| part.frozen_round[n.0] > 0)
            .collect();
        assert!(!frozen.is_empty(), "seed {seed}: nobody froze");
        let mut last = 0.0f64;
        for &n in &frozen {
            let (a, b) = (part.levels[n.0], full.levels[n.0]);
            assert_eq!(
                part.frozen_round[n.0], full.frozen_round[n.0],
                "seed {seed} user {}",
                n.0
            );
            assert!(
                (a - b).abs() <= 1e-6 * b.abs(),
                "seed {seed} user {}: {a} stopped, {b} finished",
                n.0
            );
            last = last.max(a);
        }
        let rising: Vec<UserId> = inst
            .user_ids()
            .filter(|n| part.freeze[n.0] == Freeze::Rising)
            .collect();
        assert!(!rising.is_empty(), "seed {seed}: nobody still rising");
        for &n in &rising {
            assert_eq!(part.frozen_round[n.0], 0, "seed {seed}");
            assert!(full.frozen_round[n.0] > limit, "seed {seed} user {}", n.0);
            assert!(
                part.levels[n.0] >= last * (1.0 - 1e-7),
                "seed {seed} user {}: level {} below the last frozen level {last}",
                n.0,
                part.levels[n.0]
            );
        }
        assert_eq!(frozen.len() + rising.len(), inst.num_users(), "seed {seed}");
    }
}
