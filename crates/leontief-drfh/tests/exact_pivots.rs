//! `MaxMinSettings::exact_pivots`: every round's LP made exact from
//! HiGHS's basis gives the rounds and levels HiGHS gives where HiGHS is
//! accurate (well-conditioned placement instances), with no LP left
//! without a solution.

use leontief_core::generate;
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_highs::Highs;

#[test]
fn exact_pivots_give_the_rounds_highs_gives_where_it_is_accurate() {
    for (seed, m) in [(1, 2), (2, 2), (3, 3)] {
        let inst = generate::placement(30, 300, m, 5, seed);
        let sigma = dominant_sigma(&inst);
        let run = |exact_pivots: bool| {
            let settings = MaxMinSettings {
                exact_pivots: Some(exact_pivots),
                ..MaxMinSettings::default()
            };
            lex_max_min(&Highs::default(), &inst, &sigma, true, &settings).unwrap()
        };
        let (plain, exact) = (run(false), run(true));
        assert!(exact.status.has_solution(), "seed {seed}: {}", exact.status);
        assert_eq!(exact.frozen_round, plain.frozen_round, "seed {seed}");
        for n in 0..inst.num_users() {
            let (a, b) = (exact.levels[n], plain.levels[n]);
            assert!(
                (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
                "seed {seed} user {n}: {a} exact, {b} HiGHS"
            );
        }
    }
}
