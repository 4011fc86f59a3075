//! Capped growth LPs (`MaxMinSettings::growth_cap`) give the rounds of
//! the uncapped ones, with fewer LPs: placement lists of 10 servers out of
//! 1,000 per user, where one growth LP per freed handful of users made
//! about 15 LPs a round.

use leontief_core::generate;
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_highs::Highs;

#[test]
fn capped_growth_gives_the_same_rounds_with_fewer_lps() {
    for seed in [1, 2] {
        let inst = generate::placement(100, 1000, 2, 10, seed);
        let sigma = dominant_sigma(&inst);
        let run = |growth_cap: f64| {
            // Growth LPs in every round with undecided users (deferring
            // them to the next level LP would leave few to compare), in
            // one LP (each live part's first round repeats the last
            // round's growth LPs, capped or not: 129 against 161 for
            // seed 1, against 53 and 139 in one LP).
            let settings = MaxMinSettings {
                growth_cap,
                defer_growth: false,
                live_parts: false,
                ..MaxMinSettings::default()
            };
            lex_max_min(&Highs::default(), &inst, &sigma, true, &settings).unwrap()
        };
        let (capped, plain) = (run(MaxMinSettings::default().growth_cap), run(0.0));
        assert_eq!(capped.frozen_round, plain.frozen_round, "seed {seed}");
        for n in 0..inst.num_users() {
            let (a, b) = (capped.levels[n], plain.levels[n]);
            assert!(
                (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
                "seed {seed} user {n}: {a} capped, {b} not"
            );
        }
        assert!(
            capped.growth_lps * 2 < plain.growth_lps,
            "seed {seed}: {} growth LPs capped, {} not",
            capped.growth_lps,
            plain.growth_lps
        );
    }
}
